"""The regressors' fit check: a fit no better than the mean warns, a good
fit stays quiet (DPLasso and DPSGDRegressor share it)."""

import warnings

import numpy as np
import pytest

from skdpopt import DPLasso, DPSGDRegressor
from skdpopt.plans.checks import REGRESSION_CHECK_BOUND


def _check_warnings(model, X, y):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model.fit(X, y)
    return [w for w in caught if "not clearly better" in str(w.message)]


@pytest.mark.parametrize("cls", [DPLasso, DPSGDRegressor])
def test_a_target_independent_of_the_features_warns(cls):
    """3,000 rows, epsilon 1: each sum of gains has noise of standard
    deviation 2 bound z sqrt(3), z about 35 (2% of the budget, split over
    the check's three releases), about 12.  A model fitted to noise gains,
    in sample, about (features + 1) var(t) <= 6 * 0.2 = 1.2 over the mean
    (least squares' optimism; the targets' variance in squared scales is
    below 0.2 for a normal target scaled by its 0.99 quantile of
    |y - location|), and DP noise only lowers it: the gain over the mean
    alone misses with probability at most 1 - Phi(2 - 1.2 / 12) = 0.03 (its
    margin's lift only adds to the margin), and 2 or more misses among 8
    fits have probability below C(8, 2) 0.03^2 = 0.03; fixed seeds make
    the test deterministic."""
    misses = 0
    for seed in range(8):
        rng = np.random.default_rng(seed)
        X = rng.normal(size=(3000, 5))
        y = 7.0 + 2.0 * rng.normal(size=3000)
        caught = _check_warnings(cls(delta=1e-6, random_state=seed), X, y)
        misses += not caught
        for w in caught:
            # The caller's line, and no data value in the message.
            assert w.filename == __file__
            assert "7" not in str(w.message).split("Levers")[0]
    assert misses <= 1


@pytest.mark.parametrize("cls", [DPLasso, DPSGDRegressor])
def test_a_good_fit_stays_quiet(cls):
    """R^2 about 0.9 on 3,000 rows: most rows gain more than the bound
    over either constant, so each sum is near 3,000 * 0.1 = 300 against a
    threshold of 2 noise standard deviations (about 24) plus the mean's
    lift (mean_spread^2 / n = (2 * 0.5 * 35 sqrt(3))^2 / 3000, about 1.2):
    a warning is a 20-sigma event."""
    for seed in range(3):
        rng = np.random.default_rng(seed)
        X = rng.uniform(-1, 1, size=(3000, 5))
        y = X @ [1.0, -1.0, 0.5, 0.0, 0.0] + 0.3 * rng.normal(size=3000) + 7.0
        model = cls(delta=1e-6, random_state=seed)
        assert not _check_warnings(model, X, y)
        assert model.privacy_plan_.fit_check.bound == REGRESSION_CHECK_BOUND


def test_no_check_without_a_released_location():
    """A public target bound or scale, or no intercept: no location to
    compare with, so no check is planned (and none of the budget spent)."""
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(500, 3)), rng.normal(size=500)
    for model in (DPLasso(target_bound=3.0), DPLasso(fit_intercept=False),
                  DPSGDRegressor(target_scale=1.0),
                  DPSGDRegressor(fit_intercept=False)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model.set_params(random_state=0).fit(X, y)
        assert model.privacy_plan_.fit_check is None


@pytest.mark.parametrize("cls", [DPLasso, DPSGDRegressor])
def test_the_check_does_not_copy_a_float32_X_whole(cls):
    """The check's predictions are float64 products of a float32 X: taken
    block by block, the fit's peak traced memory stays below the size of a
    float64 copy of X (a whole-array product alone would reach it)."""
    import tracemalloc

    rng = np.random.default_rng(0)
    X = (rng.normal(size=(100_000, 50)) / 8).astype(np.float32)
    y = X[:, 0] + rng.normal(size=X.shape[0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tracemalloc.start()
        model = cls(epsilon=1.0, delta=1e-6, random_state=0).fit(X, y)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    assert model.privacy_plan_.fit_check.noise is not None
    assert peak < 2 * X.nbytes
