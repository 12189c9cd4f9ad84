"""Utility diagnostics: ratios from public quantities, and the warning."""

import warnings

import numpy as np
import pytest

from skdpopt import UtilityWarning
from skdpopt._diagnostics import (
    group_check_margin,
    noisy_mean_ratio,
    noisy_sum_ratio,
    warn_if_noise_dominates,
    worst_mixture,
)
from skdpopt.plans.sgd import plan_dpsgd


def _dpsgd_ratio(n_samples, epsilon, n_params=10):
    plan = plan_dpsgd(n_samples=n_samples, n_problems=1, epsilon=epsilon,
                      delta=min(1e-5, 0.1 / n_samples), sampling="poisson",
                      batch_size="auto", max_iter=5, average=True)
    return noisy_sum_ratio(noise_multiplier=plan.noise_multiplier,
                           n_steps=plan.n_steps,
                           expected_batch=plan.sampling_rate * n_samples,
                           n_params=n_params)


def test_sum_ratio_matches_a_simulated_run():
    # Aligned clipped terms of norm 1 and the planned noise: the summed
    # noise's norm over the summed signal is the ratio (the norm of a
    # 400-dimensional Gaussian vector is within 4% of sqrt(400) with
    # probability above 0.99).
    rng = np.random.default_rng(0)
    s, steps, batch, d = 3.0, 50, 20.0, 400
    noise = rng.normal(0.0, s, size=(steps, d)).sum(axis=0) / batch
    measured = np.linalg.norm(noise) / steps
    assert measured == pytest.approx(
        noisy_sum_ratio(noise_multiplier=s, n_steps=steps, expected_batch=batch,
                        n_params=d), rel=0.04)


def test_ratio_falls_with_rows_and_epsilon():
    assert _dpsgd_ratio(500, 1e-4) > 1.0        # the useless fit of epsilon 1e-4
    assert _dpsgd_ratio(50_000, 1.0) < 0.1
    assert _dpsgd_ratio(5_000, 1.0) < _dpsgd_ratio(500, 1.0)
    assert _dpsgd_ratio(5_000, 1.0) < _dpsgd_ratio(5_000, 0.1)
    assert noisy_sum_ratio(noise_multiplier=0.0, n_steps=1, expected_batch=1,
                           n_params=1) == 0.0


def test_mean_ratio():
    assert noisy_mean_ratio(noise_std=100.0, n_samples=100, half_range=0.5) == 1.0
    assert noisy_mean_ratio(noise_std=0.0, n_samples=1, half_range=1.0) == 0.0


def test_warning_names_the_levers_and_only_public_numbers():
    with pytest.warns(UtilityWarning, match="more epsilon, more rows") as record:
        assert warn_if_noise_dominates("DPSGDRegressor", 12.5)
    assert "12.5 times" in str(record[0].message)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UtilityWarning)
        assert not warn_if_noise_dominates("DPSGDRegressor", 0.5)


def test_warnings_point_at_the_users_line_once_per_search():
    """A UtilityWarning raised in the clones of a GridSearchCV points at
    the line that called the search (not at scikit-learn's), so Python's
    default filter shows it once for the whole search, not once per clone;
    a direct fit points at its own line."""
    from sklearn.model_selection import GridSearchCV

    from skdpopt import DPSGDRegressor

    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    y = X[:, 0]
    tiny = DPSGDRegressor(epsilon=1e-4, random_state=0)
    search = GridSearchCV(tiny, {"eta0": [0.1, 0.5]}, cv=3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        search.fit(X, y); line = __import__("inspect").currentframe().f_lineno  # noqa: E702
    utility = [str(w.message) for w in caught if w.category is UtilityWarning]
    # The six fold fits (200 rows each) warn alike, the refit (300 rows)
    # with its own numbers: each message is shown once.
    assert utility and len(utility) == len(set(utility))
    assert {(w.filename, w.lineno) for w in caught
            if w.category is UtilityWarning} == {(__file__, line)}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tiny.fit(X, y); line = __import__("inspect").currentframe().f_lineno  # noqa: E702
    assert {(w.filename, w.lineno) for w in caught
            if w.category is UtilityWarning} == {(__file__, line)}


# -- the worst-group fit check's rule (docs/privacy/dpminimax.md) ------------


def _check_plan(noise, scale):
    from skdpopt.plans.checks import FitCheckPlan
    return FitCheckPlan(noise, scale, 0.1, None)


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("kappa", [1.0, 1.7, 3.0, np.inf])
def test_worst_mixture_solves_its_linear_programme(seed, kappa):
    """The greedy fill against scipy's LP over the capped simplex."""
    from scipy.optimize import linprog

    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.ones(4))
    sums = rng.normal(size=4)
    bounds = [(0.0, min(kappa * pg, 1.0)) for pg in p]
    lp = linprog(sums / p, A_eq=np.ones((1, 4)), b_eq=[1.0], bounds=bounds)
    assert worst_mixture(sums, p, kappa) == pytest.approx(lp.fun, abs=1e-9)


def test_worst_mixture_spans_pooled_to_every_group():
    """kappa = 1: the pooled per-row gain; kappa = 1 / p_min: the worst
    group's."""
    p = np.array([0.6, 0.3, 0.1])
    sums = np.array([6.0, 1.0, -0.2])
    assert worst_mixture(sums, p, 1.0) == pytest.approx(sums.sum())
    assert worst_mixture(sums, p, 10.0) == pytest.approx(-2.0)


@pytest.mark.parametrize("noise", ["gaussian", "laplace"])
@pytest.mark.parametrize("n_groups", [1, 3])
def test_group_check_margin_is_the_one_sided_quantile(noise, n_groups):
    """P(noise > margin) = norm.sf(2) / n_groups, from the distributions'
    closed forms (one group, Gaussian: the classifiers' two deviations)."""
    from scipy.stats import laplace, norm

    plan = _check_plan(noise, 3.0)
    t = group_check_margin(plan, n_groups, 2.0)
    tail = norm.sf(t / 3.0) if noise == "gaussian" else laplace.sf(t / 3.0)
    assert tail == pytest.approx(norm.sf(2.0) / n_groups, rel=1e-9)
    if noise == "gaussian" and n_groups == 1:
        assert t == pytest.approx(2.0 * 3.0)


@pytest.mark.parametrize("noise", ["gaussian", "laplace"])
def test_group_rule_level_at_its_boundaries(noise):
    """Simulated releases of three groups (kappa 2).  Gains whose worst
    mixture is 0 (the model no better than the prior on some capped
    mixture) must go quiet at most alpha = norm.sf(2) (0.0228) of the
    time; gains with every group at twice the margin must warn at most
    alpha of the time (docs/privacy/dpminimax.md).  20,000 draws: the
    binomial standard deviation at 0.0228 is about 0.0011, so the bound
    alpha + 0.005 (4.5 standard deviations) fails a correct rule with
    probability below 1e-5 and a rule at twice the level almost surely."""
    rng = np.random.default_rng(0)
    plan = _check_plan(noise, 2.0)
    p, kappa, alpha = np.array([0.7, 0.2, 0.1]), 2.0, norm_sf_2()
    t = group_check_margin(plan, 3, 2.0)
    draw = (rng.normal(0, 2.0, (20_000, 3)) if noise == "gaussian"
            else rng.laplace(0, 2.0, (20_000, 3)))
    # The worst capped mixture fills group 3 to 0.2, group 2 to 0.4 and
    # group 1 with the rest: 2 (-0.2) + 2 (0) + (0.4 / 0.7) 0.7 = 0.
    boundary = np.array([0.7, 0.0, -0.2])
    assert worst_mixture(boundary, p, kappa) == pytest.approx(0.0)

    def quiet(gains):
        return np.mean([worst_mixture(g - t, p, kappa) > 0
                        for g in gains + draw])

    assert quiet(boundary) <= alpha + 0.005
    assert 1.0 - quiet(np.full(3, 2.0 * t)) <= alpha + 0.005


def norm_sf_2():
    from scipy.stats import norm
    return float(norm.sf(2.0))


def test_worst_mixture_of_infinite_sums_is_not_positive():
    """A non-finite sum (never released by an honest check, whose terms
    are clipped) must not read as a gain: -inf stays -inf, +inf beside
    -inf is NaN (not positive); a group the mixture leaves out adds
    nothing."""
    p = np.array([0.5, 0.3, 0.2])
    assert worst_mixture(np.array([-np.inf, 1.0, 1.0]), p, 1.5) == -np.inf
    assert not worst_mixture(np.array([-np.inf, 1.0, np.inf]), p, 1.0) > 0
    # kappa 2: 0.4 on the third group (-1 / 0.2), 0.6 on the second (-1 / 0.3).
    assert worst_mixture(np.array([np.inf, -1.0, -1.0]), p, 2.0) == pytest.approx(-4.0)
