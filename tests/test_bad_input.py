"""Every public estimator against bad input, as one matrix.

Each case either fits correctly (finite model, ``privacy_spent_`` within the
request) or raises ``ValueError``/``TypeError`` whose message names the
offending parameter.  A fit that raises leaves the estimator as it was
(``skdpopt._base.keep_fit_on_error``): an old fit stays usable and
unchanged, an unfitted estimator stays unfitted.

To cover a new estimator, add one ``Adapter`` to ``ESTIMATOR_ADAPTERS``.
DPSyntheticData, which takes no ``y`` and has no coefficients, has its own
block at the end, over the same inputs.
"""

import re
import warnings
from dataclasses import dataclass, field

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import NotFittedError
from sklearn.utils.validation import check_is_fitted

from skdpopt import (
    DPLasso,
    DPLogisticSimplex,
    DPMinimaxClassifier,
    DPSGDClassifier,
    DPSGDRegressor,
    DPSyntheticData,
)

N_SAMPLES, N_FEATURES = 240, 3


@dataclass
class Adapter:
    """How to build, feed and fit one estimator in the matrix.

    Attributes
    ----------
    make : callable
        Returns an estimator with small, fast settings and a fixed seed.
    task : {"regression", "classification"}
    iteration_params : list of str
        Parameters that count iterations (must be positive ints).
    gaussian : bool
        Whether the default settings need ``delta > 0``.
    sensitive : bool
        Whether ``fit`` takes ``sensitive_features`` (one group per row).
    any_budget_params : dict
        Parameters under which a fit of ``data()`` succeeds at any budget
        the property tests draw (tests/test_properties.py).
    """

    make: object
    task: str
    iteration_params: list = field(default_factory=list)
    gaussian: bool = True
    sensitive: bool = False
    any_budget_params: dict = field(default_factory=dict)

    @property
    def name(self):
        return type(self.make()).__name__

    def data(self, n=N_SAMPLES, d=N_FEATURES, seed=0):
        """(X, y, fit keyword arguments) of a small clean problem."""
        rng = np.random.default_rng(seed)
        X = rng.uniform(-1.0, 1.0, size=(n, d))
        signal = X @ np.linspace(1.0, -0.5, d)
        if self.task == "regression":
            y = signal + 0.1 * rng.normal(size=n)
        else:
            y = np.where(signal > np.median(signal), 1, 0)
        kwargs = {}
        if self.sensitive:
            kwargs["sensitive_features"] = np.where(np.arange(n) % 2 == 0, "a", "b")
        return X, y, kwargs


ESTIMATOR_ADAPTERS = [
    Adapter(
        lambda: DPSGDRegressor(max_iter=1, delta=1e-6, random_state=0),
        "regression",
        ["max_iter", "batch_size"],
    ),
    Adapter(
        lambda: DPSGDClassifier(max_iter=1, delta=1e-6, random_state=0),
        "classification",
        ["max_iter", "batch_size"],
    ),
    Adapter(
        lambda: DPLasso(alpha=1.0, max_iter=5, delta=1e-6, random_state=0),
        "regression",
        ["max_iter"],
    ),
    Adapter(
        lambda: DPLogisticSimplex(delta=1e-6, random_state=0),
        "classification",
        ["max_iter", "n_vertices", "refresh_every"],
        gaussian=False,
    ),
    Adapter(
        lambda: DPMinimaxClassifier(delta=1e-6, random_state=0),
        "classification",
        ["max_iter", "n_vertices"],
        gaussian=False,
        sensitive=True,
        # Noisy group counts at a tiny budget can fall below min_group_size;
        # public priors skip them.
        any_budget_params={"group_priors": {"a": 0.5, "b": 0.5}},
    ),
]
ADAPTER_IDS = [a.name for a in ESTIMATOR_ADAPTERS]
adapters = pytest.mark.parametrize("adapter", ESTIMATOR_ADAPTERS, ids=ADAPTER_IDS)


def fit_strictly(est, X, y, **kwargs):
    """Fit with every RuntimeWarning (overflow, invalid value) as an error."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        return est.fit(X, y, **kwargs)


def assert_fitted_correctly(est, X, epsilon=None):
    coef = np.asarray(est.coef_)
    assert np.all(np.isfinite(coef)) and np.all(np.isfinite(est.intercept_))
    spent = est.privacy_spent_
    assert spent.epsilon <= (est.epsilon if epsilon is None else epsilon)
    assert spent.delta <= est.delta
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        prediction = est.predict(X)
    assert prediction.shape == (X.shape[0],)


def fits_or_names(adapter, est, X, y, pattern, **kwargs):
    """Either a correct fit, or an error whose message matches ``pattern``."""
    try:
        fit_strictly(est, X, y, **kwargs)
    except (ValueError, TypeError) as exc:
        assert re.search(pattern, str(exc)), str(exc)
        return False
    assert_fitted_correctly(est, X)
    return True


# --------------------------------------------------------------------------
# Non-finite values


@adapters
@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf])
def test_non_finite_X(adapter, value):
    X, y, kwargs = adapter.data()
    X[5, 1] = value
    with pytest.raises(ValueError, match=r"\bX\b.*(NaN|infinity)"):
        adapter.make().fit(X, y, **kwargs)


@adapters
@pytest.mark.parametrize("value", [np.nan, np.inf])
def test_non_finite_y(adapter, value):
    X, y, kwargs = adapter.data()
    y = y.astype(float)
    y[5] = value
    with pytest.raises(ValueError, match=r"\by\b"):
        adapter.make().fit(X, y, **kwargs)


@pytest.mark.parametrize(
    "adapter", [a for a in ESTIMATOR_ADAPTERS if a.sensitive], ids=lambda a: a.name
)
@pytest.mark.parametrize("value", [np.nan, None])
def test_missing_sensitive_features(adapter, value):
    X, y, kwargs = adapter.data()
    groups = kwargs["sensitive_features"].astype(object)
    groups[7] = value
    with pytest.raises(ValueError, match="sensitive_features"):
        adapter.make().fit(X, y, sensitive_features=groups)


@pytest.mark.parametrize(
    "adapter", [a for a in ESTIMATOR_ADAPTERS if a.sensitive], ids=lambda a: a.name
)
def test_infinite_sensitive_feature_is_a_label(adapter):
    # Group labels are categories: inf is an odd label but a valid one.
    X, y, _ = adapter.data()
    groups = np.where(np.arange(len(y)) % 2 == 0, 1.0, np.inf)
    est = fit_strictly(adapter.make(), X, y, sensitive_features=groups)
    assert_fitted_correctly(est, X)
    assert len(est.groups_) == 2


@pytest.mark.parametrize(
    "adapter", [a for a in ESTIMATOR_ADAPTERS if a.sensitive], ids=lambda a: a.name
)
def test_sensitive_features_of_wrong_length(adapter):
    X, y, kwargs = adapter.data()
    with pytest.raises(ValueError, match="sensitive_features"):
        adapter.make().fit(X, y, sensitive_features=kwargs["sensitive_features"][:-1])


# --------------------------------------------------------------------------
# Shapes


@adapters
def test_empty_X(adapter):
    X, y, kwargs = adapter.data()
    kwargs = {k: v[:0] for k, v in kwargs.items()}
    with pytest.raises(ValueError, match=r"\bX\b"):
        adapter.make().fit(X[:0], y[:0], **kwargs)


@adapters
def test_no_columns(adapter):
    X, y, kwargs = adapter.data()
    with pytest.raises(ValueError, match=r"0 feature"):
        adapter.make().fit(X[:, :0], y, **kwargs)


@adapters
def test_one_row(adapter):
    X, y, kwargs = adapter.data()
    kwargs = {k: v[:1] for k, v in kwargs.items()}
    # A classifier needs two classes; a schedule may need more rows than
    # steps.  Either way the message says why.
    fits_or_names(
        adapter,
        adapter.make(),
        X[:1],
        y[:1],
        r"class|n_samples|max_iter|group|sample",
        **kwargs,
    )


@adapters
def test_one_column(adapter):
    X, y, kwargs = adapter.data(d=1)
    est = fit_strictly(adapter.make(), X, y, **kwargs)
    assert_fitted_correctly(est, X)


@adapters
def test_constant_column(adapter):
    X, y, kwargs = adapter.data()
    X = np.column_stack([X, np.full(len(X), 0.5)])
    est = fit_strictly(adapter.make(), X, y, **kwargs)
    assert_fitted_correctly(est, X)


@adapters
def test_y_of_wrong_length(adapter):
    X, y, kwargs = adapter.data()
    with pytest.raises(ValueError, match=r"y has \d+ entries but X has \d+ rows"):
        adapter.make().fit(X, y[:-1], **kwargs)


# --------------------------------------------------------------------------
# Extreme and non-numeric values


@adapters
@pytest.mark.parametrize("where", ["all", "one_row"])
def test_huge_features_change_neither_validity_nor_privacy(adapter, where):
    X, y, kwargs = adapter.data()
    reference = fit_strictly(adapter.make(), X, y, **kwargs)
    huge = X.copy()
    if where == "all":
        huge *= 1e300
    else:
        huge[3] = 1e300 * np.sign(huge[3] + 0.5)
    est = fit_strictly(adapter.make(), huge, y, **kwargs)
    assert_fitted_correctly(est, huge)
    # Sensitivity comes from public bounds, never from the data's scale.
    assert est.privacy_spent_ == reference.privacy_spent_


@adapters
def test_string_X(adapter):
    X, y, kwargs = adapter.data()
    strings = np.where(X > 0, "high", "low")
    with pytest.raises(ValueError, match=r"X must be numeric"):
        adapter.make().fit(strings, y, **kwargs)


@adapters
def test_object_X_of_numbers_fits_like_floats(adapter):
    X, y, kwargs = adapter.data()
    expected = fit_strictly(adapter.make(), X, y, **kwargs)
    est = fit_strictly(adapter.make(), X.astype(object), y, **kwargs)
    np.testing.assert_array_equal(est.coef_, expected.coef_)


@pytest.mark.parametrize(
    "adapter",
    [a for a in ESTIMATOR_ADAPTERS if a.task == "regression"],
    ids=lambda a: a.name,
)
def test_string_y_for_regression(adapter):
    X, y, kwargs = adapter.data()
    with pytest.raises(ValueError, match=r"\by\b"):
        adapter.make().fit(X, np.where(y > 0, "up", "down"), **kwargs)


@adapters
@pytest.mark.parametrize("fmt", ["csr", "csc", "coo"])
def test_sparse_X(adapter, fmt):
    # Every estimator takes sparse X (converted to the format it uses); the
    # fit must equal the dense one.
    X, y, kwargs = adapter.data()
    dense = fit_strictly(adapter.make(), X, y, **kwargs)
    sparse = getattr(sp, f"{fmt}_matrix")(X)
    est = fit_strictly(adapter.make(), sparse, y, **kwargs)
    np.testing.assert_allclose(est.coef_, dense.coef_, rtol=1e-10, atol=1e-12)
    assert est.privacy_spent_ == dense.privacy_spent_


# --------------------------------------------------------------------------
# Privacy and iteration parameters


@adapters
@pytest.mark.parametrize(
    "epsilon", [0.0, -1.0, np.nan, -np.inf, "1.0", None, 1e7, 1e300]
)
def test_bad_epsilon(adapter, epsilon):
    X, y, kwargs = adapter.data()
    with pytest.raises((ValueError, TypeError), match="'epsilon' parameter"):
        adapter.make().set_params(epsilon=epsilon).fit(X, y, **kwargs)


@adapters
@pytest.mark.parametrize("delta", [-1e-6, 1.0, 2.0, np.nan])
def test_bad_delta(adapter, delta):
    X, y, kwargs = adapter.data()
    with pytest.raises((ValueError, TypeError), match="'delta' parameter"):
        adapter.make().set_params(delta=delta).fit(X, y, **kwargs)


@adapters
def test_delta_zero(adapter):
    X, y, kwargs = adapter.data()
    est = adapter.make().set_params(delta=0.0)
    if adapter.gaussian:
        with pytest.raises(ValueError, match="delta must be > 0"):
            est.fit(X, y, **kwargs)
    else:
        fit_strictly(est, X, y, **kwargs)
        assert_fitted_correctly(est, X)
        assert est.privacy_spent_.delta == 0.0


@pytest.mark.parametrize(
    "adapter, param",
    [(a, p) for a in ESTIMATOR_ADAPTERS for p in a.iteration_params],
    ids=[f"{a.name}-{p}" for a in ESTIMATOR_ADAPTERS for p in a.iteration_params],
)
@pytest.mark.parametrize("value", [2.5, 0, -3, "5", np.nan])
def test_bad_iteration_count(adapter, param, value):
    X, y, kwargs = adapter.data()
    with pytest.raises((ValueError, TypeError), match=f"'{param}' parameter"):
        adapter.make().set_params(**{param: value}).fit(X, y, **kwargs)


@pytest.mark.parametrize(
    "adapter, param",
    [(a, p) for a in ESTIMATOR_ADAPTERS for p in a.iteration_params],
    ids=[f"{a.name}-{p}" for a in ESTIMATOR_ADAPTERS for p in a.iteration_params],
)
def test_numpy_integer_iteration_count(adapter, param):
    X, y, kwargs = adapter.data()
    est = adapter.make().set_params(**{param: np.int64(4)})
    fits_or_names(adapter, est, X, y, param, **kwargs)


# --------------------------------------------------------------------------
# No half-fitted state


def _failing_fits(adapter):
    """Calls that fail at different stages of ``fit``."""
    X, y, kwargs = adapter.data(seed=1)
    nan_X = X.copy()
    nan_X[0, 0] = np.nan
    wide = np.column_stack([X, X])  # would reset n_features_in_ if kept
    one_class = np.zeros_like(y) if adapter.task == "classification" else None
    cases = [
        ("non-finite X", lambda e: e.fit(nan_X, y, **kwargs)),
        ("wrong-length y", lambda e: e.fit(wide, y[:-1], **kwargs)),
        ("bad epsilon", lambda e: e.set_params(epsilon=-1).fit(wide, y, **kwargs)),
    ]
    if one_class is not None:
        cases.append(("one class", lambda e: e.fit(wide, one_class, **kwargs)))
    if adapter.gaussian:
        cases.append(
            ("delta 0", lambda e: e.set_params(delta=0.0).fit(wide, y, **kwargs))
        )
    if adapter.sensitive:
        cases.append(
            (
                "short groups",
                lambda e: e.fit(
                    wide, y, sensitive_features=kwargs["sensitive_features"][:-1]
                ),
            )
        )
    return cases


@adapters
def test_failed_fit_keeps_the_previous_fit(adapter):
    X, y, kwargs = adapter.data()
    for label, failing in _failing_fits(adapter):
        est = fit_strictly(adapter.make(), X, y, **kwargs)
        before = {k: v for k, v in vars(est).items() if k.endswith("_")}
        prediction = est.predict(X)
        with pytest.raises((ValueError, TypeError)):
            failing(est)
        after = {k: v for k, v in vars(est).items() if k.endswith("_")}
        assert after.keys() == before.keys(), label
        for key, value in before.items():
            assert after[key] is value, (label, key)
        np.testing.assert_array_equal(est.predict(X), prediction, err_msg=label)


@adapters
def test_failed_first_fit_leaves_the_estimator_unfitted(adapter):
    X, y, kwargs = adapter.data()
    for label, failing in _failing_fits(adapter):
        est = adapter.make()
        with pytest.raises((ValueError, TypeError)):
            failing(est)
        with pytest.raises(NotFittedError):
            check_is_fitted(est)
        assert not [k for k in vars(est) if k.endswith("_")], label


@adapters
@pytest.mark.parametrize("epsilon", [1e3, 1e6])
def test_huge_epsilon(adapter, epsilon):
    # Calibration at a huge budget once failed to bracket its starting guess.
    X, y, kwargs = adapter.data()
    est = adapter.make().set_params(epsilon=epsilon)
    fit_strictly(est, X, y, **kwargs)
    assert_fitted_correctly(est, X)


# -- DPSyntheticData: the same matrix for a generator of records -------------

def _synthetic():
    return DPSyntheticData(n_bins=3, random_state=0)


def _records(n=N_SAMPLES, d=N_FEATURES):
    return np.random.default_rng(0).integers(0, 3, size=(n, d)).astype(float)


def assert_synthetic_fitted(est, X):
    assert np.all(np.isfinite(est.histogram_))
    assert est.histogram_.sum() == pytest.approx(1.0)
    assert est.privacy_spent_.epsilon <= est.epsilon
    assert est.privacy_spent_.delta <= est.delta
    assert est.sample(5).shape == (5, X.shape[1])


@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf])
def test_synthetic_non_finite_X(value):
    X = _records()
    X[3, 1] = value
    with pytest.raises(ValueError, match="NaN|infinity|infinite"):
        _synthetic().fit(X)


@pytest.mark.parametrize(
    "X, pattern",
    [
        (np.zeros((0, 3)), "0 sample"),
        (np.zeros((10, 0)), "0 feature"),
        (np.zeros((1, 3)), "2 samples"),
        (np.zeros((10, 1)), "2 columns"),
    ],
    ids=["empty", "no columns", "one row", "one column"],
)
def test_synthetic_too_small(X, pattern):
    with pytest.raises(ValueError, match=pattern):
        _synthetic().fit(X)


def test_synthetic_constant_column_fits():
    # Rejecting a constant column would reveal that it is constant.
    X = _records()
    X[:, 1] = 5.0
    assert_synthetic_fitted(_synthetic().fit(X), X)


@pytest.mark.parametrize("where", ["all", "one_row"])
def test_synthetic_huge_values_change_neither_validity_nor_privacy(where):
    X = _records()
    if where == "all":
        X[:, 0] *= 1e300
    else:
        X[0, 0] = 1e300
    est = _synthetic()
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        est.fit(X)
    assert_synthetic_fitted(est, X)
    reference = _synthetic().fit(_records())
    assert est.privacy_spent_ == reference.privacy_spent_


def test_synthetic_text_without_domain_names_domain():
    X = np.array([["a", "b", "c"]] * 20, dtype=object)
    with pytest.raises(ValueError, match="domain"):
        _synthetic().fit(X)


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo"])
def test_synthetic_sparse_X_is_refused(fmt):
    with pytest.raises(TypeError, match="[Ss]parse"):
        _synthetic().fit(sp.csr_matrix(_records()).asformat(fmt))


@pytest.mark.parametrize(
    "param, value",
    [("epsilon", v) for v in (0.0, -1.0, np.nan, "1.0", None, 1e7, 1e300)]
    + [("delta", v) for v in (-1e-6, 1.0, 2.0, np.nan, 0.0)]
    + [("max_iter", v) for v in (2.5, 0, -3, "5", np.nan)],
)
def test_synthetic_bad_parameter_is_named(param, value):
    with pytest.raises((ValueError, TypeError), match=param):
        _synthetic().set_params(**{param: value}).fit(_records())


def test_synthetic_numpy_integer_max_iter():
    est = _synthetic().set_params(max_iter=np.int64(3)).fit(_records())
    assert est.n_iter_ == 3


def test_synthetic_failed_fit_keeps_the_previous_fit():
    X = _records()
    est = _synthetic().fit(X)
    before = {k: v for k, v in vars(est).items() if k.endswith("_")}
    bad = X.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError):
        est.fit(bad)
    after = {k: v for k, v in vars(est).items() if k.endswith("_")}
    assert after.keys() == before.keys()
    assert all(after[k] is v for k, v in before.items())


def test_synthetic_failed_first_fit_leaves_it_unfitted():
    est = _synthetic().set_params(delta=0.0)
    with pytest.raises(ValueError):
        est.fit(_records())
    with pytest.raises(NotFittedError):
        check_is_fitted(est)


@pytest.mark.parametrize("epsilon", [1e3, 1e6])
def test_synthetic_huge_epsilon(epsilon):
    X = _records()
    est = _synthetic().set_params(epsilon=epsilon).fit(X)
    assert_synthetic_fitted(est, X)
