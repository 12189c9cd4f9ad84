"""The sensitivity harness: released pre-noise statistics on neighbours.

A release is sound only if its pre-noise statistic moves, between two
datasets that differ in one record (replace-one), by at most the
sensitivity its noise is calibrated for.  The harness checks exactly that,
as computed, on adversarial pairs: a case (``sensitivity_cases.py``) fits
the estimator on each dataset of a pair and reads the statistic at the
narrowest seam where it can be seen without changing what the fit does:

* the data-access object or oracle the solver is handed (a clipped
  least-squares problem, a gradient oracle, the rows of a linear model),
  captured by a *spy* that records what the estimator passes and returns
  it unchanged, and then evaluated at the same public probe points
  (iterates, residual bounds, batches) on both datasets: adaptive
  composition fixes the earlier releases, so the probes stand for them;
* the fitted output of a run whose plan was replaced by one without noise
  (``zero_noise``, as the audits replace plans), where the output is the
  statistic itself (a first DP-SGD step, the noisy moments of a scaler);
* the scores handed to the exponential mechanism, or the counts they are
  made of.

No solver is patched: a spy calls the original and returns its result.

Each statistic comes with its declared sensitivity (from the plan or the
fitted, public parameters) and the norm it is declared in.  A statistic
that exists on one dataset and not on the other, or changes shape, is a
violation too (the release's support would tell the datasets apart).

Rounding: a float64 running sum of n terms, each at most L in size, is
off by at most about ``n * eps * (n L)`` (each addition rounds by at most
eps times a partial sum of size at most n L), so two such sums differ from
the exact ones by at most ``2 n^2 eps L``; the bound of a sum is ``2 L`` or
more, so a relative slack of ``n^2 eps`` (plus 1e-12 for the few
non-summed operations) covers float64 accumulation and nothing else: the
float32 accumulation this harness exists to catch is off by ``n * 6e-8``
relative, more than a million times larger.
"""

import contextlib
import dataclasses
import warnings
from dataclasses import dataclass, field

import hypothesis.strategies as st
import numpy as np
import pytest
import scipy.sparse as sp

EPS64 = np.finfo(np.float64).eps
# Largest magnitude drawn per dtype: near the float32 maximum, and 1e300.
HUGE = {np.float32: 1e38, np.float64: 1e300}


# -- statistics and the check -------------------------------------------------

@dataclass
class Statistic:
    """One released pre-noise statistic, observed on one dataset.

    Attributes
    ----------
    value : ndarray
    bound : float
        Declared replace-one sensitivity.
    norm : {"l2", "l1", "linf"}
        The norm the sensitivity is declared in.
    """

    value: np.ndarray
    bound: float
    norm: str = "l2"

    def __post_init__(self):
        self.value = np.atleast_1d(np.asarray(self.value, dtype=np.float64))
        self.bound = float(self.bound)


@dataclass
class Violation:
    """A statistic that moved by more than its declared sensitivity."""

    key: str
    moved: float
    bound: float
    norm: str

    def __str__(self):
        return (f"{self.key}: moved {self.moved:.6g} in {self.norm} against the "
                f"declared {self.bound:.6g}")


def distance(a, b, norm):
    """``||a - b||`` in ``norm``; equal infinities count as no move.

    ``"range"`` is the length of the smallest interval holding every
    coordinate's change and 0 (what a bounded-range argument needs).
    """
    with np.errstate(invalid="ignore", over="ignore"):
        diff = np.where(a == b, 0.0, a - b)
    if diff.size == 0:
        return 0.0
    if norm == "range":
        return float(max(diff.max(), 0.0) - min(diff.min(), 0.0))
    diff = np.abs(diff)
    if norm == "linf":
        return float(diff.max())
    if norm == "l1":
        return float(diff.sum())
    scale = diff.max()
    if not np.isfinite(scale) or scale == 0:
        return float(scale)
    return float(scale * np.sqrt(np.sum((diff / scale) ** 2)))


def violations(observed_in, observed_out, n_samples):
    """Every statistic of one pair that moved too far (empty when sound).

    Parameters
    ----------
    observed_in, observed_out : dict of str to Statistic
        What a case observed on each dataset of the pair.
    n_samples : int
        Rows of the datasets (public), for the rounding slack.

    Returns
    -------
    list of Violation
    """
    slack = n_samples * n_samples * EPS64 + 1e-12
    found = []
    for key in sorted(set(observed_in) | set(observed_out)):
        a, b = observed_in.get(key), observed_out.get(key)
        if a is None or b is None or a.value.shape != b.value.shape:
            found.append(Violation(f"{key} (released on one dataset only, or "
                                   "with another shape)", np.inf, 0.0, "support"))
            continue
        if a.bound != b.bound or a.norm != b.norm:
            found.append(Violation(f"{key} (declared sensitivity differs between "
                                   f"neighbours: {a.bound} and {b.bound})",
                                   np.inf, 0.0, a.norm))
            continue
        moved = distance(a.value, b.value, a.norm)
        if not moved <= a.bound * (1.0 + slack):  # NaN is a violation
            found.append(Violation(key, moved, a.bound, a.norm))
    return found


def check(case, pair, probe_seed=0):
    """Run ``case`` on both datasets of ``pair``; the violations found."""
    observed, errors = [], []
    for side in (pair.data_in, pair.data_out):
        try:
            observed.append(case.observe(side, np.random.default_rng(probe_seed)))
            errors.append(None)
        except Exception as exc:  # noqa: BLE001 (compared across the pair)
            observed.append({})
            errors.append(exc)
    if errors[0] is not None and errors[1] is not None:
        raise errors[0]  # the case itself fails: not a finding about the pair
    if errors[0] is not None or errors[1] is not None:
        error = errors[0] or errors[1]
        return [Violation(f"the fit raised on one dataset only ({type(error).__name__}"
                          f": {error})", np.inf, 0.0, "support")]
    if not (observed[0] or observed[1]):
        raise AssertionError(f"{case.name} observed no statistic: it checks nothing")
    return violations(*observed, pair.n_samples)


def assert_sound(case, pair, probe_seed=0):
    found = check(case, pair, probe_seed)
    assert not found, (f"{case.name} on {pair.description}:\n"
                       + "\n".join(str(v) for v in found))


# -- seams -------------------------------------------------------------------

@dataclass
class Call:
    args: tuple
    kwargs: dict
    result: object


@dataclass
class Spy:
    """What a spied function was called with and returned, in order."""

    calls: list = field(default_factory=list)

    @property
    def first(self):
        return self.calls[0]


def spy(patch, owner, name, then=None):
    """Record every call of ``owner.name`` (a module function or a method);
    the original runs unchanged and its result is returned as is.

    ``then(call)``, if given, runs right after each call (to evaluate a
    captured object before the fit moves on and reuses its buffers).
    """
    original = getattr(owner, name)
    record = Spy()

    def spied(*args, **kwargs):
        result = original(*args, **kwargs)
        call = Call(args, kwargs, result)
        record.calls.append(call)
        if then is not None:
            then(call)
        return result

    patch.setattr(owner, name, spied)
    return record


def zero_noise(patch, module, plan_function, **fields):
    """Make ``module.plan_function`` return its plan with ``fields``
    replaced (noise scales set to 0): the plan is replaced, the solver
    is not touched, and the event (so the claim) stays as planned.

    Returns the list of the plans as they were made (their noise scales
    say what sensitivity the noise was calibrated for)."""
    original = getattr(module, plan_function)
    made = []

    def planned(**kwargs):
        plan = original(**kwargs)
        made.append(plan)
        return dataclasses.replace(plan, **fields)

    patch.setattr(module, plan_function, planned)
    return made


@contextlib.contextmanager
def observing():
    """A monkeypatch context for spies and plans, with the utility and
    delta warnings of tiny fits silenced and Dask run in-process."""
    with pytest.MonkeyPatch.context() as patch, warnings.catch_warnings():
        from skdpopt.exceptions import UtilityWarning

        warnings.simplefilter("ignore", UtilityWarning)
        warnings.filterwarnings("ignore", message="delta=")
        try:
            import dask
        except ImportError:  # pragma: no cover
            yield patch
            return
        with dask.config.set(scheduler="synchronous"):
            yield patch


# -- probes: public points at which a captured statistic is evaluated -------

def probe_vectors(rng, dim, count=3):
    """Public iterates: 0, a moderate one, and one whose predictions
    overflow (1e200), where a NaN must not escape the clip."""
    points = [np.zeros(dim)]
    for _ in range(count - 2):
        points.append(rng.normal(size=dim) * 10.0 ** rng.uniform(-2, 2))
    points.append(np.where(rng.random(dim) < 0.5, -1.0, 1.0) * 1e200)
    return points


def probe_l1_ball(rng, dim, radius, count=3):
    """Points of the l1 ball of ``radius``: its centre, a vertex, an interior point."""
    vertex = np.zeros(dim)
    vertex[rng.integers(dim)] = radius * rng.choice([-1.0, 1.0])
    inner = rng.normal(size=dim)
    inner *= radius * rng.uniform(0, 1) / max(np.abs(inner).sum(), 1e-300)
    return [np.zeros(dim), vertex, inner][:count]


# -- neighbouring datasets ----------------------------------------------------

@dataclass
class Side:
    """One dataset of a pair, in the format a case fits on."""

    X: object
    y: object = None
    groups: object = None
    meta: dict = field(default_factory=dict)

    @property
    def n_samples(self):
        return self.X.shape[0]


@dataclass
class Pair:
    data_in: Side
    data_out: Side
    description: str

    @property
    def n_samples(self):
        return self.data_in.n_samples


def as_format(X, fmt, chunks=None):
    """X as a dense array, a CSR matrix or a Dask array."""
    if fmt == "csr":
        return sp.csr_matrix(X)
    if fmt == "dask":
        import dask.array as da

        n = X.shape[0]
        return da.from_array(X, chunks=(chunks or max(1, (n + 1) // 2), X.shape[1]))
    return X


_MAGNITUDES = ("zero", 1e-3, 1.0, 1e3, 1e30, "huge")


def _entries(rng, shape, magnitudes, huge):
    scales = np.array([0.0 if m == "zero" else huge if m == "huge" else m
                       for m in magnitudes])
    chosen = scales[rng.integers(len(scales), size=shape)]
    signs = np.where(rng.random(shape) < 0.5, -1.0, 1.0)
    return signs * chosen * rng.uniform(0.5, 1.0, size=shape)


@dataclass
class PairSpec:
    """Everything that makes one neighbouring pair of feature matrices."""

    n: int
    d: int
    dtype: type = np.float64
    fmt: str = "dense"
    magnitudes: tuple = (1.0,)
    layout: str = "random"
    replacement: str = "extreme"
    k: int = 0
    seed: int = 0
    targets: object = None
    target_move: object = 1e300
    label_edges: tuple = (0, -1)
    groups: object = None
    group_edges: tuple = (0, -1)
    chunks: int = None


def build_feature_pair(spec):
    """The :class:`Pair` a :class:`PairSpec` describes (see :func:`feature_pairs`)."""
    n, d, k = spec.n, spec.d, spec.k
    rng = np.random.default_rng(spec.seed)
    huge = HUGE[spec.dtype]
    X = _entries(rng, (n, d), spec.magnitudes, huge)
    if spec.layout == "constant column":
        X[:, rng.integers(d)] = X[0, 0]
    elif spec.layout == "duplicate columns" and d > 1:
        X[:, 1:] = X[:, :1]
    elif spec.layout == "equal rows":
        X[:] = X[0]
    elif spec.layout == "sparse":
        X[rng.random((n, d)) < 0.6] = 0.0
    row = {
        "extreme": np.where(rng.random(d) < 0.5, -huge, huge),
        "negated": -X[k],
        "zero": np.zeros(d),
        "copy": X[(k + 1) % n],
        "fresh": _entries(rng, (d,), _MAGNITUDES, huge),
    }[spec.replacement]
    X_out = X.copy()
    X_out[k] = row
    X, X_out = X.astype(spec.dtype), X_out.astype(spec.dtype)
    y_in = y_out = g_in = g_out = None
    if isinstance(spec.targets, str) and spec.targets == "real":
        y_in = _entries(rng, (n,), spec.magnitudes, 1e300)
        y_out = y_in.copy()
        y_out[k] = -y_in[k] if spec.target_move == "negated" else spec.target_move
    elif spec.targets is not None:
        labels = np.empty(len(spec.targets), dtype=object)
        labels[:] = list(spec.targets)
        codes = rng.integers(len(labels), size=n)
        codes_out = codes.copy()
        codes[k], codes_out[k] = (e % len(labels) for e in spec.label_edges)
        y_in, y_out = labels[codes], labels[codes_out]
        if all(isinstance(v, (int, float)) for v in labels):
            y_in, y_out = y_in.astype(float), y_out.astype(float)
    if spec.groups is not None:
        groups = np.empty(len(spec.groups), dtype=object)
        groups[:] = list(spec.groups)
        # Every group keeps a row besides the replaced one (min_rows must
        # allow it): a group without rows is refused, on one side only.
        codes = rng.integers(len(groups), size=n)
        others = [i for i in range(n) if i != k]
        codes[others[:len(groups)]] = np.arange(min(len(groups), len(others)))
        codes_out = codes.copy()
        codes[k], codes_out[k] = (e % len(groups) for e in spec.group_edges)
        g_in, g_out = groups[codes], groups[codes_out]
    description = (f"n={n}, d={d}, {np.dtype(spec.dtype).name} {spec.fmt}, "
                   f"magnitudes {list(spec.magnitudes)}, {spec.layout}, row {k} "
                   f"{spec.replacement}, seed {spec.seed}")
    meta = {"row": k}
    return Pair(Side(as_format(X, spec.fmt, spec.chunks), y_in, g_in, meta),
                Side(as_format(X_out, spec.fmt, spec.chunks), y_out, g_out, meta),
                description)


_EDGES = [(0, -1), (-1, 0), (0, 0)]


@st.composite
def feature_pairs(draw, *, formats=("dense",), dtypes=(np.float64,), min_rows=1,
                  max_rows=24, max_features=4, targets=None, groups=None):
    """Neighbouring feature matrices (and targets, groups), adversarial.

    Float32 and float64; dense, CSR or Dask; entries from 0 to the dtype's
    largest safe magnitude (1e300, or 1e38 in float32), with constant,
    duplicate or all-equal columns, one row allowed; the replaced row is
    extreme, negated, zeroed, a copy of another row, or fresh.

    Parameters
    ----------
    targets : None, "real", or a list of labels
        Real targets (up to 1e300), or labels from a declared set, the
        replaced row's label moving between its edges.
    groups : None or list
        Declared groups; the replaced row moves between the edges.
    """
    n = draw(st.integers(min_rows, max_rows))
    fmt = draw(st.sampled_from(formats))
    spec = PairSpec(
        n=n,
        d=draw(st.integers(1, max_features)),
        dtype=draw(st.sampled_from(dtypes)),
        fmt=fmt,
        magnitudes=tuple(draw(st.lists(st.sampled_from(_MAGNITUDES), min_size=1,
                                       max_size=3, unique=True))),
        layout=draw(st.sampled_from(["random", "constant column",
                                     "duplicate columns", "equal rows",
                                     "sparse"])),
        replacement=draw(st.sampled_from(["extreme", "negated", "zero", "copy",
                                          "fresh"])),
        k=draw(st.integers(0, n - 1)),
        seed=draw(st.integers(0, 2**32 - 1)),
        targets=targets,
        target_move=draw(st.sampled_from([1e300, -1e300, 0.0, "negated", 1.0])),
        label_edges=draw(st.sampled_from(_EDGES)),
        groups=groups,
        group_edges=draw(st.sampled_from(_EDGES)),
        chunks=draw(st.integers(1, n)) if fmt == "dask" else None,
    )
    return build_feature_pair(spec)


def fixed_feature_pairs(*, formats=("dense",), dtypes=(np.float64,), min_rows=1,
                        targets=None, groups=None, **_):
    """The adversarial fixed cases every feature case is checked on, besides
    hypothesis's draws: one row moved from moderate to the largest
    magnitude, and many rows at the dtype's extremes with one of them
    negated, in each dtype and the first and last format."""
    pairs = []
    for dtype in dtypes:
        for fmt in dict.fromkeys((formats[0], formats[-1])):
            common = dict(dtype=dtype, fmt=fmt, targets=targets, groups=groups,
                          chunks=1 if fmt == "dask" else None)
            if min_rows <= 1:
                pairs.append(build_feature_pair(PairSpec(
                    n=1, d=1, magnitudes=(1e3,), **common)))
            pairs.append(build_feature_pair(PairSpec(
                n=max(min_rows, 12), d=3, magnitudes=("huge", 1.0, "zero"),
                layout="duplicate columns", replacement="negated", k=3, seed=1,
                target_move=-1e300, label_edges=(-1, 0), **common)))
    return pairs


CATEGORIES = ("low", "mid", "high")


@st.composite
def table_pairs(draw, *, kinds=("categories", "cardinality", "bounded", "numeric"),
                min_columns=2, max_columns=4, min_rows=2, max_rows=24):
    """Neighbouring tables of DPSyntheticData: declared categories (with a
    declared missing value or not), integer codes of a cardinality, numeric
    columns with public bounds (values far outside them too) or without.
    The replaced record moves every column to an edge of its domain.

    The side's ``meta`` holds ``domain`` and ``bounds`` (one entry per
    column) for the estimator.
    """
    n = draw(st.integers(min_rows, max_rows))
    d = draw(st.integers(min_columns, max_columns))
    columns = draw(st.lists(st.sampled_from(kinds), min_size=d, max_size=d))
    k = draw(st.integers(0, n - 1))
    magnitudes = draw(st.lists(st.sampled_from(_MAGNITUDES), min_size=1,
                               max_size=3, unique=True))
    flip = draw(st.booleans())
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    data_in = np.empty((n, d), dtype=object)
    domain, bounds = [], []
    for j, kind in enumerate(columns):
        if kind == "categories":
            values = list(CATEGORIES) + ([np.nan] if rng.random() < 0.5 else [])
            column = np.empty(n, dtype=object)
            column[:] = [values[i] for i in rng.integers(len(values), size=n)]
            edges = (values[0], values[-1])
            domain.append(values)
            bounds.append(None)
        elif kind == "cardinality":
            column = rng.integers(3, size=n).astype(object)
            edges = (0, 2)
            domain.append(3)
            bounds.append(None)
        else:
            column = _entries(rng, (n,), magnitudes, 1e300).astype(object)
            edges = (-1e300, 1e300)
            domain.append(None)
            bounds.append((-1.0, 2.0) if kind == "bounded" else None)
        data_in[:, j] = column
        data_in[k, j] = edges[int(flip)]
    data_out = data_in.copy()
    for j, kind in enumerate(columns):
        if kind == "categories":
            edges = (domain[j][0], domain[j][-1])
        elif kind == "cardinality":
            edges = (0, 2)
        else:
            edges = (-1e300, 1e300)
        data_out[k, j] = edges[1 - int(flip)]
    meta = {"domain": domain, "bounds": bounds}
    description = f"n={n}, columns {columns}, row {k} to the other edge"
    return Pair(Side(data_in, meta=meta), Side(data_out, meta=meta), description)


@st.composite
def frame_pairs(draw, *, categories=CATEGORIES, **kwargs):
    """:func:`feature_pairs` with real targets as DataFrames, plus a
    categorical column "c" of declared ``categories``, whose replaced
    record moves to the other edge."""
    import pandas as pd

    pair = draw(feature_pairs(targets="real", **kwargs))
    n = pair.n_samples
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    k = pair.data_in.meta["row"]  # the same record moves in every column
    codes = rng.integers(len(categories), size=n)
    codes_out = codes.copy()
    codes[k], codes_out[k] = 0, len(categories) - 1
    sides = []
    for side, chosen in ((pair.data_in, codes), (pair.data_out, codes_out)):
        X = np.asarray(side.X, dtype=np.float64)
        frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(X.shape[1])])
        frame["c"] = np.array(categories, dtype=object)[chosen]
        sides.append(Side(frame, side.y))
    return Pair(*sides, description=f"{pair.description}; category row {k}")


@dataclass
class Datasets:
    """The neighbouring pairs a case is checked on: hypothesis's
    ``strategy`` and the adversarial ``fixed()`` examples."""

    strategy: object
    fixed: object = list


def features(**kwargs):
    """:func:`feature_pairs` and :func:`fixed_feature_pairs` alike."""
    return Datasets(feature_pairs(**kwargs), lambda: fixed_feature_pairs(**kwargs))


def tables(**kwargs):
    return Datasets(table_pairs(**kwargs))


def frames(**kwargs):
    return Datasets(frame_pairs(**kwargs))
