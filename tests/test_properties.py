"""Properties every estimator keeps for any valid parameters (hypothesis).

* ``privacy_spent_`` never exceeds the request and lands within a few
  percent of it;
* calibration is monotone: more epsilon, less noise;
* a fixed ``random_state`` reproduces a fit bit for bit;
* ``clone`` and ``get_params``/``set_params`` round-trip.

How close is "a few percent": every estimator calibrates with
``skdpopt.accounting.calibrate``, which stops at the first parameter
whose epsilon lies in ``[(1 - rtol) * target, target]`` with
``rtol = 0.02``, and the recorded ``privacy_spent_`` is the same
accountant's answer for the same run.  So
every estimator must land within 2% of the request, with one documented
exception: DPLasso with ``curvature="private"`` plans a curvature release
per step but makes none on the steps that pick the intercept (its
curvature is public), so it then spends less than planned; it is held to
2% only when no step picked the intercept.  And an estimator whose step
size is capped at its non-private (regret-optimal) value may not need the
whole budget (DPMinimaxClassifier at a large epsilon for its size): when
its score sensitivity equals that of the same fit at ``epsilon=inf``, only
the upper bound is asserted.
"""

import hypothesis.strategies as st
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from sklearn.base import clone
from test_bad_input import ESTIMATOR_ADAPTERS

from skdpopt import DPLogisticSimplex, DPSGDClassifier, DPSGDRegressor, DPSyntheticData
from skdpopt.accounting import (
    NoiseBracket,
    SubsampledGaussianMechanism,
    calibrate,
    clt_noise_multiplier,
    repeat,
)
from skdpopt.solvers.greedy_cd import INTERCEPT

RTOL = 0.02  # calibrate's accepted shortfall (see the module docstring)
FEW = settings(
    max_examples=10,
    deadline=None,
    derandomize=True,  # the suite must not be flaky across runs
    suppress_health_check=[HealthCheck.too_slow],
)


def calibrate_noise_multiplier(epsilon, delta, sampling_rate, steps):
    """DP-SGD's calibration: ``steps`` Poisson-subsampled Gaussian steps."""
    return calibrate(
        lambda s: repeat(SubsampledGaussianMechanism(sampling_rate, s), steps),
        epsilon, delta,
        NoiseBracket(clt_noise_multiplier(epsilon, delta, sampling_rate, steps)))


def make(adapter, **params):
    return adapter.make().set_params(**adapter.any_budget_params, **params)


adapters = pytest.mark.parametrize(
    "adapter", ESTIMATOR_ADAPTERS, ids=[a.name for a in ESTIMATOR_ADAPTERS]
)


@st.composite
def budgets(draw):
    """A problem size and a valid private request for it."""
    n = draw(st.integers(100, 600))
    d = draw(st.integers(1, 6))
    epsilon = draw(st.floats(0.05, 20.0))
    # delta well below 1/n, as the estimators advise.
    log_delta = draw(st.floats(-10.0, np.log10(0.1 / n)))
    return n, d, epsilon, 10.0**log_delta


@adapters
@FEW
@given(budget=budgets(), seed=st.integers(0, 2**16))
def test_spent_is_within_a_few_percent_below_the_request(adapter, budget, seed):
    n, d, epsilon, delta = budget
    X, y, kwargs = adapter.data(n=n, d=d, seed=seed)
    est = make(adapter, epsilon=epsilon, delta=delta, random_state=seed)
    est.fit(X, y, **kwargs)
    spent = est.privacy_spent_
    assert spent.delta == delta
    assert spent.epsilon <= epsilon
    skipped_releases = getattr(est, "curvature", None) == "private" and np.any(
        est.selected_ == INTERCEPT
    )
    if not (skipped_releases or at_non_private_step(est, X, y, kwargs)):
        assert spent.epsilon >= (1 - RTOL) * epsilon


def at_non_private_step(est, X, y, kwargs):
    """Whether the fit already uses the step it would take without privacy."""
    if not hasattr(est, "score_sensitivity_"):
        return False
    params = {"epsilon": np.inf}
    if hasattr(est, "solver_"):  # "auto" may pick another solver at inf
        params["solver"] = est.solver_
    free = clone(est).set_params(**params).fit(X, y, **kwargs)
    return free.score_sensitivity_ == est.score_sensitivity_


@FEW
@given(
    epsilon=st.floats(0.05, 50.0),
    factor=st.floats(1.05, 10.0),
    log_delta=st.floats(-10.0, -4.0),
    rate=st.floats(1e-3, 1.0),
    steps=st.integers(1, 2000),
)
def test_noise_calibration_is_monotone(epsilon, factor, log_delta, rate, steps):
    # Calibration is exact only to rtol, so monotonicity is promised for
    # targets more than 1 / (1 - rtol) apart: then the larger target's
    # epsilon, >= (1 - rtol) * larger, exceeds the smaller target's.
    delta = 10.0**log_delta
    low, low_eps = calibrate_noise_multiplier(epsilon, delta, rate, steps)
    high, high_eps = calibrate_noise_multiplier(epsilon * factor, delta, rate, steps)
    assert high < low
    assert low_eps <= epsilon and high_eps <= epsilon * factor


@pytest.mark.parametrize(
    "make, attribute, grows",
    [
        (
            lambda: DPSGDRegressor(max_iter=2, random_state=0),
            "noise_multiplier_",
            False,
        ),
        (
            lambda: DPSGDClassifier(max_iter=2, random_state=0),
            "noise_multiplier_",
            False,
        ),
        # The exponential mechanism's step size scales its scores: larger is
        # less noise.  The schedule is fixed (it otherwise depends on epsilon).
        (
            lambda: DPLogisticSimplex(
                solver="mirror_descent", max_iter=20, n_vertices=5,
                refresh_every=4, random_state=0
            ),
            "step_size_",
            True,
        ),
    ],
    ids=["DPSGDRegressor", "DPSGDClassifier", "DPLogisticSimplex"],
)
@FEW
@given(epsilon=st.floats(0.1, 10.0), factor=st.floats(1.05, 10.0))
def test_estimator_noise_is_monotone_in_epsilon(
    make, attribute, grows, epsilon, factor
):
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(400, 3))
    y = X[:, 0] if isinstance(make(), DPSGDRegressor) else (X[:, 0] > 0).astype(int)
    small = make().set_params(epsilon=epsilon, delta=1e-6).fit(X, y)
    large = make().set_params(epsilon=epsilon * factor, delta=1e-6).fit(X, y)
    a, b = getattr(small, attribute), getattr(large, attribute)
    assert (b > a) if grows else (b < a)


@adapters
@FEW
@given(budget=budgets(), seed=st.integers(0, 2**16))
def test_fixed_random_state_reproduces_the_fit(adapter, budget, seed):
    n, d, epsilon, delta = budget
    X, y, kwargs = adapter.data(n=n, d=d, seed=seed)
    params = {"epsilon": epsilon, "delta": delta, "random_state": seed}
    first = make(adapter, **params).fit(X, y, **kwargs)
    second = make(adapter, **params).fit(X, y, **kwargs)
    np.testing.assert_array_equal(first.coef_, second.coef_, strict=True)
    np.testing.assert_array_equal(first.intercept_, second.intercept_, strict=True)
    assert first.privacy_spent_ == second.privacy_spent_


@adapters
@FEW
@given(budget=budgets(), seed=st.integers(0, 2**16))
def test_clone_and_params_round_trip(adapter, budget, seed):
    _, _, epsilon, delta = budget
    est = make(adapter, epsilon=epsilon, delta=delta, random_state=seed)
    params = est.get_params()
    assert clone(est).get_params() == params
    assert type(clone(est)) is type(est)
    # set_params with get_params changes nothing, and get_params reads back
    # what set_params wrote.
    again = adapter.make().set_params(**params)
    assert again.get_params() == params
    assert est.set_params(**params).get_params() == params
    # A clone of a fitted estimator is unfitted and fits to the same model.
    X, y, kwargs = adapter.data(seed=seed)
    est.fit(X, y, **kwargs)
    copy = clone(est)
    assert not [k for k in vars(copy) if k.endswith("_")]
    np.testing.assert_array_equal(copy.fit(X, y, **kwargs).coef_, est.coef_)


# -- DPSyntheticData (no y, no coefficients: its own block) ------------------

def _synthetic_records(n, d, seed):
    return np.random.default_rng(seed).integers(0, 4, size=(n, max(d, 2))).astype(float)


@FEW
@given(budget=budgets(), seed=st.integers(0, 2**16))
def test_synthetic_spent_is_within_a_few_percent_below_the_request(budget, seed):
    n, d, epsilon, delta = budget
    est = DPSyntheticData(epsilon=epsilon, delta=delta, n_bins=3, random_state=seed)
    est.fit(_synthetic_records(n, d, seed))
    spent = est.privacy_spent_
    assert spent.delta == delta
    assert (1 - RTOL) * epsilon <= spent.epsilon <= epsilon


@FEW
@given(epsilon=st.floats(0.1, 10.0), factor=st.floats(1.05, 10.0))
def test_synthetic_noise_is_monotone_in_epsilon(epsilon, factor):
    X = _synthetic_records(400, 3, 0)
    # The number of rounds grows with epsilon by default: fix it.
    small = DPSyntheticData(epsilon=epsilon, n_bins=3, max_iter=3).fit(X)
    large = DPSyntheticData(epsilon=epsilon * factor, n_bins=3, max_iter=3).fit(X)
    assert large.noise_std_ < small.noise_std_


@FEW
@given(budget=budgets(), seed=st.integers(0, 2**16))
def test_synthetic_fixed_random_state_reproduces_the_fit(budget, seed):
    n, d, epsilon, delta = budget
    X = _synthetic_records(n, d, seed)
    params = {"epsilon": epsilon, "delta": delta, "n_bins": 3, "random_state": seed}
    first = DPSyntheticData(**params).fit(X)
    second = DPSyntheticData(**params).fit(X)
    np.testing.assert_array_equal(first.histogram_, second.histogram_, strict=True)
    np.testing.assert_array_equal(first.sample(random_state=1),
                                  second.sample(random_state=1))
    assert first.privacy_spent_ == second.privacy_spent_


@FEW
@given(budget=budgets(), seed=st.integers(0, 2**16))
def test_synthetic_clone_and_params_round_trip(budget, seed):
    _, _, epsilon, delta = budget
    est = DPSyntheticData(epsilon=epsilon, delta=delta, n_bins=3, random_state=seed)
    params = est.get_params()
    assert clone(est).get_params() == params
    assert DPSyntheticData().set_params(**params).get_params() == params
    X = _synthetic_records(300, 3, seed)
    est.fit(X)
    copy = clone(est)
    assert not [k for k in vars(copy) if k.endswith("_")]
    np.testing.assert_array_equal(copy.fit(X).histogram_, est.histogram_)
