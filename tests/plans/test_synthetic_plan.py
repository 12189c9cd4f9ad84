"""DPSyntheticData's plan: made without data, spends at most the request."""

import inspect

import numpy as np
import pytest

from skdpopt.accounting import Accountant, ExponentialMechanism, GaussianMechanism
from skdpopt.plans.synthetic import default_rounds, plan_synthetic


def test_plan_takes_no_data():
    params = set(inspect.signature(plan_synthetic).parameters)
    assert not params & {"X", "y", "codes", "data", "columns"}


@pytest.mark.parametrize("epsilon", [0.1, 1.0, 10.0])
@pytest.mark.parametrize("delta", [1e-9, 1e-5])
@pytest.mark.parametrize("n_bounded, preprocessor_epsilon",
                         [(0, None), (2, None), (2, 0.05)])
def test_plan_spends_at_most_the_request(epsilon, delta, n_bounded,
                                         preprocessor_epsilon):
    plan = plan_synthetic(n_samples=1000, n_columns=6, n_queries=41, n_one_way=6,
                          n_bounded=n_bounded, l2_sensitivity_times_n=np.sqrt(2.0),
                          epsilon=epsilon, delta=delta,
                          preprocessor_epsilon=preprocessor_epsilon)
    spent = plan.spent()
    assert 0.97 * epsilon <= spent.epsilon <= epsilon
    assert plan.n_rounds == default_rounds(6, epsilon, 41)
    if n_bounded:
        assert plan.bounds.event.count == 3 * n_bounded


def test_default_bounds_share_is_what_finds_the_data_within_its_limits():
    """Without preprocessor_epsilon the bounds take the zCDP share whose
    draws are just reliable, within [MIN_BOUNDS_SHARE, MAX_BOUNDS_SHARE]."""
    from skdpopt.plans.bounds import median_cell_is_reliable
    from skdpopt.plans.synthetic import MAX_BOUNDS_SHARE, MIN_BOUNDS_SHARE

    common = dict(n_columns=6, n_queries=41, n_one_way=6, n_bounded=2,
                  l2_sensitivity_times_n=np.sqrt(2.0), delta=1e-9)
    few = plan_synthetic(n_samples=2000, epsilon=0.5, **common)
    many = plan_synthetic(n_samples=10**6, epsilon=0.5, **common)
    # Enough rows: the floor share, and the draws are reliable.
    assert median_cell_is_reliable(10**6, many.bounds.score_sensitivity)
    # Fewer rows: a larger share (the share is computed on the classical
    # zCDP conversion, which the calibrated budget exceeds: the draws are
    # then at least reliable).
    assert median_cell_is_reliable(2000, few.bounds.score_sensitivity)
    assert few.bounds.score_sensitivity > 1.2 * many.bounds.score_sensitivity
    assert 0 < MIN_BOUNDS_SHARE < MAX_BOUNDS_SHARE < 1


def test_event_tree_matches_the_parameters():
    """The tree, rebuilt by hand from the plan's scales, spends the same."""
    plan = plan_synthetic(n_samples=2000, n_columns=5, n_queries=25, n_one_way=5,
                          n_bounded=1, l2_sensitivity_times_n=np.sqrt(2.0),
                          epsilon=1.0, delta=1e-6, max_iter=7,
                          preprocessor_epsilon=0.1)
    by_hand = Accountant()
    by_hand.compose(ExponentialMechanism(plan.bounds.score_sensitivity), 3)
    by_hand.compose(GaussianMechanism(plan.one_way_noise_multiplier), 5)
    by_hand.compose(ExponentialMechanism(plan.selection_epsilon / 2), 7)
    by_hand.compose(GaussianMechanism(plan.round_noise_multiplier), 7)
    assert np.isclose(by_hand.epsilon(1e-6), plan.spent().epsilon, rtol=1e-6)
    assert np.isclose(plan.round_noise_std,
                      np.sqrt(2.0) / 2000 * plan.round_noise_multiplier)


def test_no_privacy_plan():
    plan = plan_synthetic(n_samples=100, n_columns=3, n_queries=7, n_one_way=3,
                          n_bounded=0, l2_sensitivity_times_n=np.sqrt(2.0),
                          epsilon=np.inf, delta=1e-5)
    assert plan.round_noise_std == 0 and plan.selection_epsilon == np.inf
    assert plan.spent().epsilon == np.inf
    assert plan.n_rounds == 7
