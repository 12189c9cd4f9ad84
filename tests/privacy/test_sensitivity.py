"""Every release moves by at most its declared sensitivity.

The harness (``harness.py``) fits each case of ``sensitivity_cases.py``
(one per release of every plan) on both datasets of neighbouring pairs
and compares the released pre-noise statistics with their declared
sensitivities.  The pairs come from hypothesis strategies (derandomized)
and fixed adversarial examples; the long runs of equal residuals that
break float32 sums need 132,769 rows and are explicit tests here, as are
the planted bugs the harness must catch.
"""

import numpy as np
import pytest
from harness import (
    Pair,
    PairSpec,
    Side,
    as_format,
    assert_sound,
    build_feature_pair,
    check,
    table_pairs,
)
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from sensitivity_cases import (
    CASES,
    GROUPS,
    LASSO_CASES,
    LASSO_FIRST_STEP,
    MINIMAX_CASES,
    SCALER_CASES,
    SGD_CASES,
    SGD_FIRST_STEP,
    SYNTHETIC_CASES,
    TARGET_CASES,
)

import skdpopt._bounds
import skdpopt._data.inmemory
import skdpopt._domain
import skdpopt.lasso
import skdpopt.solvers.checks
import skdpopt.solvers.clipping
import skdpopt.solvers.targets
from skdpopt._clipping import clip_scalars
from skdpopt.solvers.query_release import MarginalWorkload

# Deterministic (derandomized, no example database) and small, so that the
# whole harness runs in the default suite; every case also runs its fixed
# adversarial examples (one row, the dtype's extremes).
EXAMPLES = settings(max_examples=8, deadline=None, derandomize=True,
                    database=None, suppress_health_check=list(HealthCheck))


@pytest.mark.parametrize("case", [c.param() for c in CASES])
def test_release_moves_within_its_declared_sensitivity(case):
    def run(pair, probe_seed):
        assert_sound(case, pair, probe_seed)

    for pair in case.data.fixed():
        run = example(pair=pair, probe_seed=0)(run)
    EXAMPLES(given(pair=case.data.strategy, probe_seed=st.integers(0, 2**16))(run))()


# -- long runs of equal residuals ---------------------------------------------

def equal_residual_runs(fmt="csr", dtype=np.float32):
    """One ones-column; at w = 0 the residuals (and DP-SGD's loss
    derivatives) are -y: 32,769 of +1, then 100,000 of -0.0015.  The
    neighbour turns the first +1 into -1.  Summed in float32 row by row,
    the small residuals vanish below 2^15 times the unit roundoff (the
    partial sum 32,769) but not after the change (32,767): the sum moves
    by about 197, not 2."""
    n_plus, n_small = 32_769, 100_000
    X = np.ones((n_plus + n_small, 1), dtype=dtype)
    y = np.concatenate([-np.ones(n_plus), np.full(n_small, 0.0015)])
    y_out = y.copy()
    y_out[0] = 1.0
    chunks = n_plus + n_small // 2
    return Pair(Side(as_format(X, fmt, chunks), y), Side(as_format(X, fmt, chunks),
                                                         y_out),
                f"equal residual runs, {np.dtype(dtype).name} {fmt}")


@pytest.mark.parametrize("fmt", ["csr", "dense", "dask"])
def test_lasso_float32_equal_residual_runs(fmt):
    # Summed row by row in float32 (scipy's sparse product did), the
    # summed gradient moved by 197 here.
    assert_sound(LASSO_FIRST_STEP, equal_residual_runs(fmt))


@pytest.mark.parametrize("fmt", ["csr", "dense", "dask"])
def test_lasso_float64_equal_residual_runs(fmt):
    assert_sound(LASSO_FIRST_STEP, equal_residual_runs(fmt, np.float64))


@pytest.mark.parametrize("fmt", ["csr", "dense", "dask"])
def test_sgd_float32_equal_residual_runs(fmt):
    assert_sound(SGD_FIRST_STEP, equal_residual_runs(fmt))


# -- planted bugs: the harness must report them -------------------------------

def _case(cases, prefix):
    return next(c for c in cases if c.name.startswith(prefix))


def _outside_pair():
    """Rows far outside every public bound (1e3), small enough that no
    product overflows: a missing clip shows as a large move, not as an
    overflow."""
    return build_feature_pair(PairSpec(n=8, d=2, magnitudes=(1e3,),
                                       replacement="zero", k=2,
                                       targets="real", target_move=0.0))


def test_catches_planted_float32_accumulation(monkeypatch):
    """DP-SGD's gradient sum accumulated in the data's float32."""
    def float32_sum(self, coef, intercept, rows=None):
        X = self.X if rows is None else self.X[rows]
        y = self.y if rows is None else self.y[rows]
        limits = self.limits if rows is None or not np.ndim(self.limits) else (
            self.limits[rows])
        residual = self.loss.derivative(X @ coef + intercept, y)
        scaled = clip_scalars(np.asarray(residual, dtype=np.float64).ravel(),
                              limits).astype(np.float32)
        return np.asarray(X.T @ scaled).ravel(), float(scaled.sum(dtype=np.float32))

    pair = equal_residual_runs()
    assert not check(SGD_FIRST_STEP, pair)
    monkeypatch.setattr(skdpopt._data.inmemory.InMemoryLinearRows, "gradient_sum",
                        float32_sum)
    found = check(SGD_FIRST_STEP, pair)
    assert found and all(v.moved > 100 for v in found), found


def test_catches_planted_float32_least_squares_gradient(monkeypatch):
    """DPLasso's coordinate gradients summed in the data's float32 (how
    scipy's sparse product summed them until sums moved to float64)."""
    def float32_gradient(self):
        r = self.clipped_residual()
        product = self.X.T @ r.astype(self.X.dtype, copy=False)
        return (np.asarray(product, dtype=float).ravel() / self.n_samples,
                self.feature_bound * r.mean())

    pair = equal_residual_runs()
    assert not check(LASSO_FIRST_STEP, pair)
    monkeypatch.setattr(skdpopt._data.inmemory.ClippedLeastSquares, "gradient",
                        float32_gradient)
    found = check(LASSO_FIRST_STEP, pair)
    assert found and all(v.moved > 100 for v in found), found


def test_catches_planted_missing_feature_clip(monkeypatch):
    """DPLasso's features not clipped to the public feature bound."""
    case, pair = LASSO_CASES[0], _outside_pair()
    assert not check(case, pair)
    monkeypatch.setattr(skdpopt.lasso, "clip_rows", lambda X, bound: X)
    assert any("gradients" in v.key for v in check(case, pair))


def test_catches_planted_unclipped_group_fit_check(monkeypatch):
    """DPMinimaxClassifier's group fit check summing the rows' gains
    without their clip (a far row's gain is then unbounded)."""
    case = next(c for c in MINIMAX_CASES if "group fit check" in c.name
                and "vertex" in c.name)
    pair = build_feature_pair(PairSpec(n=12, d=2, magnitudes=(1e3,),
                                       replacement="zero", k=2,
                                       targets=[0.0, 1.0], groups=GROUPS))
    assert not check(case, pair)
    original = skdpopt.solvers.checks.log_likelihood_gains
    monkeypatch.setattr(
        skdpopt.solvers.checks, "log_likelihood_gains",
        lambda log_proba, targets, log_prior, bound: original(
            log_proba, targets, log_prior, np.inf))
    assert any("group fit check" in v.key for v in check(case, pair))


def test_catches_planted_unclipped_target_sums(monkeypatch):
    """The target's location summed without its clip."""
    case, pair = TARGET_CASES[0], _outside_pair()
    assert not check(case, pair)
    monkeypatch.setattr(skdpopt.solvers.targets, "clipped_total",
                        lambda y, low, high: float(np.sum(y)))
    assert any("clipped sum" in v.key for v in check(case, pair))


def test_catches_planted_clip_check_counting_values(monkeypatch):
    """The clip check counting the far values rather than the far rows (a
    row can hold d of them)."""
    case, pair = TARGET_CASES[2], _outside_pair()
    assert not check(case, pair)
    monkeypatch.setattr(skdpopt.solvers.clipping, "map_rows",
                        lambda function, X: np.abs(np.asarray(X)).ravel())
    assert any("far rows" in v.key for v in check(case, pair))


def test_catches_planted_unclipped_target(monkeypatch):
    """DPLasso's residual computed as the clipped prediction minus the
    target: the target's part of the residual escapes the clip."""
    def clipped_prediction_minus_target(self):
        prediction = clip_scalars(self.residual + self.y, self.residual_bound)
        return prediction - self.y

    case, pair = LASSO_CASES[1], _outside_pair()
    assert not check(case, pair)
    monkeypatch.setattr(skdpopt._data.inmemory.ClippedLeastSquares,
                        "clipped_residual", clipped_prediction_minus_target)
    assert any("gradients" in v.key for v in check(case, pair))


def test_catches_planted_missing_gradient_clip(monkeypatch):
    """DP-SGD's per-example loss derivatives not clipped."""
    case, pair = SGD_CASES[0], _outside_pair()
    assert not check(case, pair)
    monkeypatch.setattr(skdpopt._data.inmemory, "clip_scalars_and_sum",
                        lambda values, limit: (values, float(values.sum())))
    assert check(case, pair)


def test_catches_planted_row_norm_without_the_intercept(monkeypatch):
    """DP-SGD's clip bound computed from ``||x_i||`` instead of
    ``||(x_i, 1)||``: a row of small features carries a large intercept
    gradient."""
    original = skdpopt._data.inmemory.example_norms
    case = SGD_CASES[0]
    pair = build_feature_pair(PairSpec(n=6, d=2, magnitudes=(1e-3,),
                                       replacement="copy", targets="real",
                                       target_move=1e300))
    assert not check(case, pair)
    monkeypatch.setattr(skdpopt._data.inmemory, "example_norms",
                        lambda X, offset=0.0: original(X, 0.0))
    assert check(case, pair)


def test_catches_planted_unclipped_moments(monkeypatch):
    """The scaler's values not clipped to the bounds before the sums."""
    case = _case(SCALER_CASES, "DPStandardScaler: clipped moments")
    pair = _outside_pair()
    assert not check(case, pair)
    # Mapped to [-1, 1] over the bounds, but not clipped to them.
    monkeypatch.setattr(skdpopt._bounds, "clip_to_unit",
                        lambda X, low, high: (np.asarray(X, dtype=float) - low)
                        / (high - low) * 2.0 - 1.0)
    assert check(case, pair)


def test_catches_planted_two_sided_location_distance(monkeypatch):
    """The location draw's distance read from both ends of a cell at once,
    ``|B_k - n/2| + |B_(k+1) - n/2|``: a record moved across the cell moves
    both counts, and the distance by 2."""
    case = _case(SCALER_CASES, "DPStandardScaler: location draw")
    pair = _outside_pair()
    assert not check(case, pair)
    monkeypatch.setattr(
        skdpopt._bounds, "_median_cell_distance",
        lambda below, n: (np.abs(below[:, :-1] - n / 2.0)
                          + np.abs(below[:, 1:] - n / 2.0)))
    assert check(case, pair)


def test_catches_planted_understated_marginal_sensitivity(monkeypatch):
    """A marginal's l2 sensitivity written as 1/n instead of sqrt(2)/n."""
    case = _case(SYNTHETIC_CASES, "DPSyntheticData: marginal")
    found = []

    @settings(max_examples=5, derandomize=True, database=None, deadline=None)
    @given(pair=table_pairs(kinds=("categories", "cardinality")))
    def run(pair):
        assert not check(case, pair)
        with monkeypatch.context() as patch:
            patch.setattr(MarginalWorkload, "l2_sensitivity_times_n", 1.0)
            found.extend(check(case, pair))

    run()
    assert any("measurement" in v.key for v in found)


def test_catches_planted_value_outside_its_bins(monkeypatch):
    """A numeric value above its public bounds coded past the last bin
    instead of into it: the fit fails on one neighbour only."""
    original = skdpopt._domain.encode_column

    def unclipped_codes(column, values):
        if not column.is_numeric:
            return original(column, values)
        values = np.asarray(values, dtype=np.float64)
        return np.searchsorted(column.edges, values, side="right") - 1

    case = _case(SYNTHETIC_CASES, "DPSyntheticData: marginal")
    columns = np.array([[0.5, "low"], [1.0, "mid"], [1.5, "high"]], dtype=object)
    moved = columns.copy()
    moved[0, 0] = 1e300
    meta = {"domain": [None, ["low", "mid", "high"]], "bounds": [(0.0, 2.0), None]}
    pair = Pair(Side(columns, meta=meta), Side(moved, meta=meta), "value above")
    assert not check(case, pair)
    monkeypatch.setattr(skdpopt._domain, "encode_column", unclipped_codes)
    found = check(case, pair)
    assert found and found[0].norm == "support", found
