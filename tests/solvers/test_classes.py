"""The class totals and the intercept's calibration."""

import numpy as np
import pytest
from scipy.special import expit

from skdpopt.losses import LogLoss, ModifiedHuber
from skdpopt.plans.classes import plan_class_totals
from skdpopt.solvers.checks import log_likelihood_gains
from skdpopt.solvers.classes import (
    ClassWeighting,
    calibrate_intercept,
    class_totals,
    probability_sum,
    release_class_totals,
)


def test_totals_of_a_binary_and_a_multiclass_problem():
    labels = np.array([0, 1, 1, 2, 2, 2])
    weights = np.array([1.0, 0.5, 0.5, 2.0, 1.0, 0.0])
    binary = [np.where(labels > 0, 1.0, -1.0)]
    np.testing.assert_array_equal(class_totals(binary), [1, 5])
    np.testing.assert_allclose(class_totals(binary, weights), [1.0, 4.0])
    per_class = [np.where(labels == k, 1.0, -1.0) for k in range(3)]
    np.testing.assert_array_equal(class_totals(per_class), [1, 2, 3])
    np.testing.assert_allclose(class_totals(per_class, weights), [1.0, 1.0, 3.0])


def test_released_totals_are_the_totals_plus_the_plans_noise_floored():
    targets = [np.where(np.arange(1000) < 30, 1.0, -1.0)]
    exact = plan_class_totals(2, 0.0)
    np.testing.assert_array_equal(
        release_class_totals(targets, None, exact, np.random.default_rng(0)),
        [970, 30])
    noisy = plan_class_totals(2, 5.0, weight_bound=2.0)
    draws = np.array([release_class_totals(targets, None, noisy,
                                           np.random.default_rng(seed))
                      for seed in range(2000)])
    assert draws.min() >= noisy.floor
    # Gaussian noise of std 5 sqrt(2) 2 = 14.1 per total (the floor, 28.3,
    # cuts only the lower tail of the small class): the mean of 2000 draws
    # of the large class is within 4 standard errors (0.32 each) of 970.
    assert noisy.noise_scale == pytest.approx(5.0 * np.sqrt(2) * 2.0)
    assert abs(draws[:, 0].mean() - 970) < 4 * noisy.noise_scale / np.sqrt(2000)


def test_probability_sum_keeps_every_term_in_the_unit_interval():
    scores = np.array([np.inf, -np.inf, np.nan, 0.0, 1e308])
    total = probability_sum(scores, 1e308, LogLoss())
    # inf -> 1, -inf -> 0, NaN -> 0, 0 + 1e308 -> 1, 1e308 + 1e308 = inf -> 1
    assert total == 3.0
    weights = np.array([0.5, 1.0, 1.0, 0.25, 0.0])
    assert probability_sum(scores, 0.0, LogLoss(), weights) == 0.5 + 0.125


@pytest.mark.parametrize("loss", [LogLoss(), ModifiedHuber()])
def test_calibration_without_noise_matches_the_share(loss):
    """Without noise the iteration's fixed point is the intercept at which
    the mean predicted probability equals the share."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(5000, 3))
    coef = np.array([1.0, -0.5, 0.2])
    intercept = calibrate_intercept(X, coef, 0.0, loss, None, share=0.07,
                                    total=5000.0, n_steps=50, noise_std=0.0,
                                    rng=rng)
    mean = loss.probability(X @ coef + intercept).mean()
    assert mean == pytest.approx(0.07, abs=1e-6)


def test_three_log_loss_steps_come_close_from_far():
    """The default three steps from an intercept 3 too low: each step is
    exact for equal scores, so on scores of spread 1 the mean probability
    lands within a tenth of the share (measured: about 1%)."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(20000, 2))
    coef = np.array([0.8, 0.6])
    target = np.log(0.05 / 0.95)
    intercept = calibrate_intercept(X, coef, target - 3.0, LogLoss(), None,
                                    share=0.05, total=20000.0, n_steps=3,
                                    noise_std=0.0, rng=rng)
    mean = expit(X @ coef + intercept).mean()
    assert abs(mean - 0.05) < 0.005


def test_weighted_calibration_uses_the_weighted_mean():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(4000, 2))
    weights = rng.uniform(0, 1, size=4000)
    coef = np.array([1.0, 1.0])
    intercept = calibrate_intercept(X, coef, 0.0, LogLoss(), weights, share=0.2,
                                    total=weights.sum(), n_steps=50,
                                    noise_std=0.0, rng=rng)
    p = expit(X @ coef + intercept)
    assert (weights * p).sum() / weights.sum() == pytest.approx(0.2, abs=1e-6)


def test_fit_check_weights_balance_the_classes_from_the_released_totals():
    # Each class's weights sum to the smallest released total, whatever
    # its size; the rows' sample weights multiply them.
    y = np.array([1] * 9 + [-1])
    totals = np.array([1.0, 9.0])
    weighting = ClassWeighting([], totals, np.ones(2))
    weights = weighting.check_weights([y])
    assert weights[y < 0].sum() == pytest.approx(1.0)
    assert weights[y > 0].sum() == pytest.approx(1.0)
    assert weights.max() == 1.0
    sample_weight = np.linspace(0.1, 1.0, 10)
    weighted = ClassWeighting([], totals, np.ones(2), sample_weight)
    np.testing.assert_allclose(weighted.check_weights([y]), weights * sample_weight)
    # Multiclass: one target per class.
    labels = np.array([0, 0, 0, 1, 2, 2])
    targets = [np.where(labels == k, 1, -1) for k in range(3)]
    multi = ClassWeighting([], np.array([3.0, 1.0, 2.0]), np.ones(3))
    np.testing.assert_allclose(multi.check_weights(targets),
                               [1 / 3] * 3 + [1.0] + [0.5] * 2)


def test_the_balanced_fit_check_is_negative_for_an_overconfident_model():
    # The failure it fixes: 8% negatives, a model that predicts 0.96 for
    # every row where the prior is 0.92.  Unbalanced, the clipped gains
    # (+log(0.96/0.92) = 0.043 on each common row, -0.1 clipped from
    # log(0.04/0.08) on each rare one) sum to a positive value; balanced,
    # to a negative one.
    y = np.array([1] * 92 + [-1] * 8)
    log_prior = np.log([0.08, 0.92])
    log_proba = np.tile(np.log([0.04, 0.96]), (100, 1))
    weighting = ClassWeighting([], np.array([8.0, 92.0]), np.ones(2))
    gains = log_likelihood_gains(log_proba, [y], log_prior, 0.1)
    assert gains.sum() > 0
    assert (gains * weighting.check_weights([y])).sum() < 0
