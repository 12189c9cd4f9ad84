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
