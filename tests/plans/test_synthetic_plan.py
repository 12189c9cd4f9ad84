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
@pytest.mark.parametrize("n_bound_draws", [0, 4])
def test_plan_spends_at_most_the_request(epsilon, delta, n_bound_draws):
    plan = plan_synthetic(n_samples=1000, n_columns=6, n_queries=41, n_one_way=6,
                          n_bound_draws=n_bound_draws,
                          l2_sensitivity_times_n=np.sqrt(2.0),
                          epsilon=epsilon, delta=delta)
    spent = plan.spent()
    assert 0.97 * epsilon <= spent.epsilon <= epsilon
    assert plan.n_rounds == default_rounds(6, epsilon, 41)


def test_event_tree_matches_the_parameters():
    """The tree, rebuilt by hand from the plan's scales, spends the same."""
    plan = plan_synthetic(n_samples=2000, n_columns=5, n_queries=25, n_one_way=5,
                          n_bound_draws=2, l2_sensitivity_times_n=np.sqrt(2.0),
                          epsilon=1.0, delta=1e-6, max_iter=7,
                          preprocessor_epsilon=0.1)
    by_hand = Accountant()
    by_hand.compose(ExponentialMechanism(plan.bounds_epsilon / 2), 2)
    by_hand.compose(GaussianMechanism(plan.one_way_noise_multiplier), 5)
    by_hand.compose(ExponentialMechanism(plan.selection_epsilon / 2), 7)
    by_hand.compose(GaussianMechanism(plan.round_noise_multiplier), 7)
    assert np.isclose(by_hand.epsilon(1e-6), plan.spent().epsilon, rtol=1e-6)
    assert np.isclose(plan.round_noise_std,
                      np.sqrt(2.0) / 2000 * plan.round_noise_multiplier)


def test_no_privacy_plan():
    plan = plan_synthetic(n_samples=100, n_columns=3, n_queries=7, n_one_way=3,
                          n_bound_draws=0, l2_sensitivity_times_n=np.sqrt(2.0),
                          epsilon=np.inf, delta=1e-5)
    assert plan.round_noise_std == 0 and plan.selection_epsilon == np.inf
    assert plan.spent().epsilon == np.inf
    assert plan.n_rounds == 7
