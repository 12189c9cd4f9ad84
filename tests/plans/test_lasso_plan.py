"""The DPLasso plan: public inputs only, spends at most the request, no
noise without privacy."""

import inspect

import numpy as np
import pytest

from skdpopt.accounting import EpsilonDeltaEvent
from skdpopt.plans.lasso import GreedyCDPlan, LassoFrankWolfePlan, plan_lasso

SETTINGS = {"selection": "exponential", "gradient_noise": "gaussian",
            "curvature": "private", "residual_bound": "auto",
            "feature_bound": 1.0, "target_bound": 1.0, "radius": 1.0}


def test_plan_takes_no_data():
    params = set(inspect.signature(plan_lasso).parameters)
    assert not params & {"X", "y", "data", "sample_weight"}


@pytest.mark.parametrize("solver, options", [
    ("greedy_cd", {}),
    ("greedy_cd", {"selection": "laplace", "gradient_noise": "laplace",
                   "curvature": "bound", "residual_bound": 1.0}),
    ("frank_wolfe", {}),
])
def test_plans_spend_at_most_epsilon_over_a_grid(solver, options):
    settings = {**SETTINGS, **options}
    pure = options.get("residual_bound") == 1.0 or solver == "frank_wolfe"
    for n in (100, 10_000):
        for epsilon in (0.1, 1.0, 8.0):
            for delta in ((0.0, 1e-8) if pure else (1e-8, 1e-3)):
                for max_iter in (1, 20, 200):
                    plan = plan_lasso(n_samples=n, n_features=7, epsilon=epsilon,
                                      delta=delta, solver=solver,
                                      max_iter=max_iter, **settings)
                    spent = plan.spent().epsilon
                    assert 0.97 * epsilon <= spent <= epsilon, (
                        n, epsilon, delta, max_iter)


def test_no_privacy_plan_has_no_noise_and_infinite_spend():
    for solver, kind in (("greedy_cd", GreedyCDPlan),
                         ("frank_wolfe", LassoFrankWolfePlan)):
        plan = plan_lasso(n_samples=100, n_features=3, epsilon=np.inf,
                          delta=1e-5, solver=solver, max_iter=4, **SETTINGS)
        assert isinstance(plan, kind)
        assert plan.event == EpsilonDeltaEvent(np.inf, 0.0)
        assert plan.spent().epsilon == np.inf


def test_gaussian_noise_with_delta_zero_is_refused():
    with pytest.raises(ValueError, match="delta"):
        plan_lasso(n_samples=100, n_features=3, epsilon=1.0, delta=0.0,
                   solver="greedy_cd", max_iter=4, **SETTINGS)


def test_public_feature_bound_follows_the_public_ratio():
    """1 up to n epsilon / p = 100, 2 from 1,000 and without privacy,
    log-linear and increasing in between; public inputs only."""
    from skdpopt.plans.lasso import (
        PUBLIC_BOUND_HIGH,
        PUBLIC_BOUND_LOW,
        PUBLIC_RATIO_HIGH,
        PUBLIC_RATIO_LOW,
        public_feature_bound,
    )

    assert (PUBLIC_BOUND_LOW, PUBLIC_BOUND_HIGH) == (1.0, 2.0)
    assert public_feature_bound(1000, 10, PUBLIC_RATIO_LOW / 100) == 1.0
    assert public_feature_bound(10, 10, 1e-3) == 1.0
    assert public_feature_bound(1000, 10, PUBLIC_RATIO_HIGH / 100) == 2.0
    assert public_feature_bound(10**6, 1, 10.0) == 2.0
    assert public_feature_bound(5, 100, np.inf) == 2.0
    # Half-way in log ratio: half-way in bound.
    middle = np.sqrt(PUBLIC_RATIO_LOW * PUBLIC_RATIO_HIGH)
    assert public_feature_bound(1000, 10, middle / 100) == pytest.approx(1.5)
    ratios = np.geomspace(10, 10**4, 50)
    bounds = [public_feature_bound(1000, 10, r / 100) for r in ratios]
    assert np.all(np.diff(bounds) >= 0)


def test_resolved_feature_bound():
    from skdpopt.plans.lasso import public_feature_bound, resolve_feature_bound

    shape = dict(n_samples=5000, n_features=3, epsilon=1.0)
    rule = public_feature_bound(5000, 3, 1.0)
    assert resolve_feature_bound("auto", solver="greedy_cd", **shape) == "auto"
    assert resolve_feature_bound(2, solver="greedy_cd", **shape) == 2.0
    np.testing.assert_array_equal(
        resolve_feature_bound("public", solver="greedy_cd", **shape), [rule] * 3)
    declared = np.array([np.nan, 1.0, 0.5])
    np.testing.assert_array_equal(
        resolve_feature_bound("public", solver="greedy_cd", declared=declared,
                              **shape), [rule, 1.0, 0.5])
    # Declared bounds of another width are not this data's: the rule.
    np.testing.assert_array_equal(
        resolve_feature_bound("public", solver="greedy_cd",
                              declared=np.ones(4), **shape), [rule] * 3)
    # Frank-Wolfe takes one bound: the largest, a bound of every column.
    assert resolve_feature_bound("public", solver="frank_wolfe",
                                 declared=declared, **shape) == rule
    with pytest.raises(ValueError, match="frank_wolfe"):
        resolve_feature_bound([1.0, 2.0, 3.0], solver="frank_wolfe", **shape)


def test_step_blocks_keep_blocks_of_three_columns_or_more():
    from skdpopt.plans.lasso import MIN_BLOCK_COLUMNS, step_blocks

    assert MIN_BLOCK_COLUMNS == 3
    np.testing.assert_array_equal(
        step_blocks(np.array([0, 1, 1, 2, 2, 2, 3, 3, 3, 3])),
        [0, 1, 2, 3, 3, 3, 4, 4, 4, 4])
    assert step_blocks(np.array([0, 1, 1, 2])) is None
    assert step_blocks(np.arange(4)) is None
