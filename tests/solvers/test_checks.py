"""The fit checks and the clip check: their statistics and their noise."""

import numpy as np
import pytest
import scipy.sparse as sp

from skdpopt._clipping import clipped_share
from skdpopt.plans.checks import plan_clip_check, plan_fit_check, plan_regression_check
from skdpopt.solvers.checks import (
    log_likelihood_gains,
    release_clip_check,
    release_fit_check,
    release_squared_error_check,
    squared_error_gains,
)


# The model's and the prior's zero probabilities are part of the cases.
@np.errstate(divide="ignore")
def test_gains_are_the_true_class_log_likelihood_over_the_prior_clipped():
    log_proba = np.log(np.array([[0.9, 0.1], [0.2, 0.8], [0.5, 0.5], [1.0, 0.0]]))
    targets = [np.array([-1.0, 1.0, 1.0, 1.0])]
    log_prior = np.log([0.5, 0.5])
    gains = log_likelihood_gains(log_proba, targets, log_prior, bound=0.5)
    expected = np.clip(np.log([0.9 / 0.5, 0.8 / 0.5, 1.0, 0.0 / 0.5]), -0.5, 0.5)
    np.testing.assert_allclose(gains, expected)
    # One-vs-rest targets pick the row's class; NaN (log 0 - log 0) counts 0.
    multi = np.log(np.array([[0.7, 0.2, 0.1], [0.0, 0.0, 1.0]]))
    per_class = [np.array([1.0, -1.0]), np.array([-1.0, -1.0]), np.array([-1.0, 1.0])]
    prior = np.log([0.5, 0.0, 0.5])
    gains = log_likelihood_gains(multi, per_class, prior, bound=1.0)
    np.testing.assert_allclose(gains, [np.log(1.4), np.log(2.0)])


def test_every_gain_lies_in_the_bound_whatever_the_model():
    rng = np.random.default_rng(0)
    with np.errstate(divide="ignore"):
        log_proba = np.log(rng.dirichlet([0.05, 0.05, 0.05], size=500))
    targets = [np.where(rng.integers(0, 3, 500) == k, 1.0, -1.0) for k in range(3)]
    gains = log_likelihood_gains(log_proba, targets, np.log([0.2, 0.3, 0.5]), 0.1)
    assert np.all(np.abs(gains) <= 0.1) and np.all(np.isfinite(gains))


def test_fit_check_noise_and_weights():
    log_proba = np.log(np.full((4, 2), 0.5))
    targets = [np.array([1.0, 1.0, -1.0, -1.0])]
    exact = release_fit_check(log_proba + [0.0, 0.1], targets, np.log([0.5, 0.5]),
                              np.array([1.0, 0.5, 0.0, 0.0]), plan_fit_check(0.0),
                              np.random.default_rng(0))
    assert exact == pytest.approx(1.5 * 0.1)
    plan = plan_fit_check(3.0)
    assert plan.noise_scale == pytest.approx(3.0 * 2 * plan.bound)
    draws = [release_fit_check(log_proba, targets, np.log([0.5, 0.5]), None, plan,
                               np.random.default_rng(seed)) for seed in range(4000)]
    # Zero gains plus N(0, 0.6^2): the sample std of 4000 draws is within
    # 5% of 0.6 (its standard error is 0.6 / sqrt(2 * 4000) = 1.1%).
    assert np.std(draws) == pytest.approx(plan.noise_scale, rel=0.05)


def test_clipped_share_counts_values_outside_the_bound_per_row():
    X = np.array([[0.0, 2.0, -3.0, 0.5], [1.0, -1.0, 0.0, np.inf], [0.0] * 4])
    np.testing.assert_allclose(clipped_share(X, 1.0), [0.5, 0.25, 0.0])
    np.testing.assert_allclose(clipped_share(sp.csr_matrix(X), 1.0), [0.5, 0.25, 0.0])
    np.testing.assert_allclose(clipped_share(X.astype(np.float32), 1.0),
                               [0.5, 0.25, 0.0])


def test_clip_check_sum_moves_by_at_most_one_per_record():
    """Replacing one row by any other moves the exact sum by at most 1."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 7)) * 2
    base = release_clip_check(X, 1.0, plan_clip_check(0.0), rng)
    for row in (np.full(7, 1e300), np.zeros(7), -X[3], np.full(7, np.nan)):
        other = X.copy()
        other[3] = row
        assert abs(release_clip_check(other, 1.0, plan_clip_check(0.0), rng)
                   - base) <= 1.0 + 1e-12


def test_squared_error_gains_are_the_gain_over_zero_clipped():
    targets = np.array([1.0, 1.0, -0.5, 0.2, 3.0])
    predictions = np.array([0.5, 3.0, -0.5, 0.0, np.nan])
    # t^2 - (t - f)^2: 0.75, -3, 0.25, 0; NaN counts 0.
    np.testing.assert_allclose(
        squared_error_gains(predictions, targets, bound=1.0),
        [0.75, -1.0, 0.25, 0.0, 0.0])
    np.testing.assert_allclose(
        squared_error_gains(predictions, targets, bound=0.1),
        [0.1, -0.1, 0.1, 0.0, 0.0])


def test_squared_error_gains_stay_finite_and_exact_for_extreme_values():
    """The clips keep every product finite and change no clipped gain: a
    prediction beyond 2 TARGET_CLIP + 1 loses more than 1 on every target
    within TARGET_CLIP, so its gain is -bound either way."""
    targets = np.array([1e300, -1e300, 1e300, 0.3, 2.0, 1e6])
    predictions = np.array([1e300, 1e300, -np.inf, np.inf, 3e6, 2e6 + 2])
    gains = squared_error_gains(predictions, targets, bound=0.1)
    assert np.all(np.isfinite(gains)) and np.all(np.abs(gains) <= 0.1)
    # A target beyond TARGET_CLIP counts as clipped there: the prediction
    # 1e300 then loses (the first row), as every other extreme one does.
    np.testing.assert_allclose(gains, [-0.1, -0.1, -0.1, -0.1, -0.1, -0.1])
    rng = np.random.default_rng(2)
    t = rng.normal(size=2000) * 10.0 ** rng.uniform(-3, 3, size=2000)
    f = rng.normal(size=2000) * 10.0 ** rng.uniform(-3, 3, size=2000)
    exact = np.clip(t**2 - (t - f) ** 2, -0.3, 0.3)
    np.testing.assert_allclose(squared_error_gains(f, t, 0.3), exact, atol=1e-12)


def test_squared_error_gains_over_a_constant_are_the_gains_of_the_shifted_problem():
    rng = np.random.default_rng(4)
    t, f = rng.normal(size=50), rng.normal(size=50)
    # (t - c)^2 - (t - f)^2, clipped.
    exact = np.clip((t - 0.3) ** 2 - (t - f) ** 2, -0.2, 0.2)
    np.testing.assert_allclose(squared_error_gains(f, t, 0.2, constant=0.3), exact,
                               atol=1e-12)
    np.testing.assert_allclose(squared_error_gains(f, t, 0.2, constant=0.3),
                               squared_error_gains(f - 0.3, t - 0.3, 0.2))


def test_squared_error_check_sums_move_by_at_most_their_sensitivities():
    """Without noise the check returns the two sums of clipped gains; one
    record moves each by at most 2 bound, whatever the constant (the
    released mean is an earlier release), and the clipped target sum by
    2 mean_bound."""
    rng = np.random.default_rng(3)
    t, f = rng.normal(size=200), rng.normal(size=200) * 0.5
    plan = plan_regression_check(0.0)
    over_location, over_mean = release_squared_error_check(f, t, plan, rng)
    mean = np.clip(np.clip(t, -plan.mean_bound, plan.mean_bound).mean(),
                   -plan.mean_bound, plan.mean_bound)
    assert over_location == pytest.approx(squared_error_gains(f, t, plan.bound).sum())
    assert over_mean == pytest.approx(
        squared_error_gains(f, t, plan.bound, constant=mean).sum())
    for value, prediction in ((1e300, -1e300), (0.0, 0.0), (-t[5], np.nan),
                              (np.inf, 0.0)):
        t2, f2 = t.copy(), f.copy()
        t2[5], f2[5] = value, prediction
        for c in (0.0, mean, -plan.mean_bound):
            moved = (squared_error_gains(f2, t2, plan.bound, constant=c).sum()
                     - squared_error_gains(f, t, plan.bound, constant=c).sum())
            assert abs(moved) <= 2 * plan.bound + 1e-12
        clipped = np.clip(t2, -plan.mean_bound, plan.mean_bound).sum()
        assert abs(clipped - np.clip(t, -plan.mean_bound, plan.mean_bound).sum()) \
            <= 2 * plan.mean_bound + 1e-12
    noisy = plan_regression_check(2.0)
    draws = [release_squared_error_check(np.zeros(4), np.ones(4), noisy,
                                         np.random.default_rng(seed))[0]
             for seed in range(4000)]
    # Zero gains over the location plus N(0, (sqrt(3) 2 * 0.2)^2): the sample
    # std within 5% (its standard error is 1.1%).
    assert noisy.noise_scale == pytest.approx(np.sqrt(3) * 2.0 * 2 * noisy.bound)
    assert np.std(draws) == pytest.approx(noisy.noise_scale, rel=0.05)


def test_a_model_better_than_the_location_but_not_the_mean_fails_the_check():
    """A skewed target: the released location (0) sits in the bulk, the
    mean above it.  A model that predicts the location plus a weak
    signal gains over the location, on most rows, and loses to the mean:
    no noise, so the verdict is exact."""
    rng = np.random.default_rng(5)
    n = 5000
    t = np.where(rng.random(n) < 0.15, 0.8, 0.0) + 0.05 * rng.normal(size=n)
    x = rng.normal(size=n)
    t = t + 0.02 * x
    f = 0.02 * x
    plan = plan_regression_check(0.0)
    over_location, over_mean = release_squared_error_check(f, t, plan, rng)
    assert over_location > 0 > over_mean
    # Its squared error is indeed above the mean's.
    assert np.sum((t - f) ** 2) > np.sum((t - t.mean()) ** 2)
    noisy = plan_regression_check(1.0)
    assert not noisy.clearly_better(over_location, over_mean, n)


def test_regression_check_margins():
    """The verdict: both released sums above FIT_CHECK_SPREADS spreads, the
    gain over the mean also above the lift its noise gives."""
    from skdpopt.plans.checks import FIT_CHECK_SPREADS

    plan = plan_regression_check(10.0)
    margin = FIT_CHECK_SPREADS * plan.spread
    lift = plan.mean_spread ** 2 / 100
    assert plan.clearly_better(margin * 1.01, margin + lift * 1.01, 100)
    assert not plan.clearly_better(margin * 0.99, margin + lift * 2, 100)
    assert not plan.clearly_better(margin * 2, margin + lift * 0.99, 100)
    # No privacy: nothing is checked.
    assert plan_regression_check(0.0).clearly_better(-1.0, -1.0, 100)
