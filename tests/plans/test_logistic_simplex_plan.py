"""The DPLogisticSimplex plan: public inputs only, spends at most the
request, counts every release."""

import inspect

import numpy as np
import pytest

from skdpopt.accounting import EpsilonDeltaEvent
from skdpopt.plans.logistic_simplex import (
    AUTO_SQRT_D_PER_ROW,
    REFIT_STEPS,
    choose_solver,
    count_vertex_draws,
    mirror_descent_schedule,
    plan_logistic_simplex,
    resolve_solver,
)


def test_plan_takes_no_data():
    params = set(inspect.signature(plan_logistic_simplex).parameters)
    assert not params & {"X", "y", "data", "sample_weight"}


@pytest.mark.parametrize("solver", ["mirror_descent", "frank_wolfe", "sgd"])
def test_plans_spend_at_most_epsilon_over_a_grid(solver):
    for n in (200, 20_000):
        for epsilon in (0.1, 1.0, 8.0):
            # DP-SGD's Gaussian noise needs delta > 0.
            for delta in (0.0, 1e-8, 1e-4) if solver != "sgd" else (1e-8, 1e-4):
                for n_problems, fit_intercept, constraint in (
                        (1, True, "l1_ball"), (3, False, "simplex")):
                    plan = plan_logistic_simplex(
                        n_samples=n, n_features=50, n_problems=n_problems,
                        epsilon=epsilon, delta=delta, solver=solver,
                        constraint=constraint, radius=10.0, feature_bound=1.0,
                        fit_intercept=fit_intercept, max_iter=None,
                        n_vertices=None, refresh_every=None)
                    spent = plan.spent().epsilon
                    assert 0.97 * epsilon <= spent <= epsilon, (
                        n, epsilon, delta, n_problems)


def test_plan_counts_every_release_of_every_problem():
    plan = plan_logistic_simplex(
        n_samples=5000, n_features=40, n_problems=3, epsilon=1.0, delta=1e-8,
        solver="mirror_descent", constraint="l1_ball", radius=10.0,
        feature_bound=1.0, fit_intercept=True, max_iter=None, n_vertices=None,
        refresh_every=None)
    per_problem = count_vertex_draws(plan.n_steps, plan.n_vertices,
                                     plan.refresh_every)
    assert plan.n_draws == 3 * per_problem
    # The clip check, one release of the three class totals, each
    # problem's Newton statistics, the fit check.
    assert plan.n_statistics == 2 + 3 * 2 * REFIT_STEPS + 1
    assert plan.class_totals.n_classes == 3
    assert plan.batch_size == 5000 // plan.n_steps


def test_no_privacy_plan_has_no_noise_and_infinite_spend():
    for solver in ("mirror_descent", "frank_wolfe", "sgd"):
        plan = plan_logistic_simplex(
            n_samples=500, n_features=5, n_problems=1, epsilon=np.inf,
            delta=1e-5, solver=solver, constraint="l1_ball", radius=1.0,
            feature_bound=1.0, fit_intercept=True, max_iter=None,
            n_vertices=None, refresh_every=None)
        assert plan.event == EpsilonDeltaEvent(np.inf, 0.0)
        assert plan.spent().epsilon == np.inf


def test_too_many_steps_are_refused():
    with pytest.raises(ValueError, match="max_iter"):
        plan_logistic_simplex(
            n_samples=50, n_features=5, n_problems=1, epsilon=1.0, delta=1e-5,
            solver="mirror_descent", constraint="l1_ball", radius=1.0,
            feature_bound=1.0, fit_intercept=True, max_iter=51,
            n_vertices=None, refresh_every=None)


def test_auto_solver_follows_the_dimension_against_n_epsilon():
    """Mirror descent where sqrt(d) > AUTO_SQRT_D_PER_ROW n epsilon (and
    for pure DP), DP-SGD over the polytope otherwise and without privacy."""
    threshold = AUTO_SQRT_D_PER_ROW * 10_000 * 1.0
    below, above = int(0.9 * threshold) ** 2, int(1.1 * threshold) ** 2
    assert choose_solver(10_000, below, 1.0, 1e-8) == "sgd"
    assert choose_solver(10_000, above, 1.0, 1e-8) == "mirror_descent"
    assert choose_solver(10_000, 5, 1.0, 0.0) == "mirror_descent"
    assert choose_solver(10_000, 10**7, np.inf, 1e-8) == "sgd"


def test_resolved_solver_is_the_named_one_or_the_auto_pick_that_reads_dask():
    """An explicit solver is kept; "auto" is choose_solver's pick, except
    that mirror descent becomes Frank-Wolfe on a Dask collection (which
    mirror descent cannot read)."""
    wide = 10**7
    assert resolve_solver("sgd", 10_000, wide, 1.0, 1e-8, on_dask=True) == "sgd"
    assert resolve_solver("auto", 10_000, wide, 1.0, 1e-8,
                          on_dask=False) == "mirror_descent"
    assert resolve_solver("auto", 10_000, wide, 1.0, 1e-8,
                          on_dask=True) == "frank_wolfe"
    assert resolve_solver("auto", 10_000, 5, 1.0, 1e-8, on_dask=True) == "sgd"


@pytest.mark.parametrize("solver", ["mirror_descent", "frank_wolfe", "sgd"])
def test_every_solver_releases_the_class_totals_and_the_fit_check(solver):
    """The totals (the intercept's start, "balanced" weights, the fit
    check's prior) are released once for all classes, with the
    sensitivity of a weighted histogram (sqrt(2) W in l2), and the fit
    check's sum with sensitivity 2 * bound."""
    common = dict(n_samples=5000, n_features=40, n_problems=3, epsilon=1.0,
                  delta=1e-8, solver=solver, constraint="l1_ball", radius=10.0,
                  feature_bound=1.0, max_iter=None, n_vertices=None,
                  refresh_every=None)
    balanced = plan_logistic_simplex(**common, fit_intercept=False,
                                     weight_bound=4.0)
    totals = balanced.class_totals
    assert totals.n_classes == 3 and totals.noise == "gaussian"
    multiplier = totals.event.noise_multiplier
    assert totals.noise_scale == pytest.approx(multiplier * np.sqrt(2) * 4.0)
    check = balanced.fit_check
    assert check.noise_scale == pytest.approx(
        check.event.noise_multiplier * 2 * check.bound)
    assert 0.97 <= balanced.spent().epsilon <= 1.0


def test_pure_dp_schedule_of_one_row():
    # A pure-DP fit is planned as delta = 1 / n^2, which for one row would
    # be 1 and make log(1 / delta) zero.
    n_steps, refresh_every, n_draws = mirror_descent_schedule(1, 4, 1.0, 0.0)
    assert n_steps == 1 and refresh_every >= 1 and n_draws >= 1
