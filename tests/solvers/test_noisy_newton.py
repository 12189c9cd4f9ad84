"""Noisy Newton steps: the statistics move by no more than their stated
sensitivities, the noise-free steps reach the constrained optimum, and the
iterates stay in the l1 ball and the trust region."""

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.special import expit

from skdpopt.plans.logistic_simplex import hessian_sensitivity_bounds
from skdpopt.solvers.noisy_newton import (
    MAX_STEP,
    noisy_newton_logistic,
)


def statistics(Z, y, theta):
    """Mean gradient and upper-triangle Hessian, written out directly."""
    margin = y * (Z @ theta)
    gradient = (-y * expit(-margin)) @ Z / len(y)
    weights = expit(margin) * expit(-margin)
    hessian = np.einsum("i,ij,ik->jk", weights, Z, Z) / len(y)
    return gradient, hessian[np.triu_indices(Z.shape[1])]


@pytest.mark.parametrize("n_params", [1, 2, 3])
def test_statistics_move_within_the_sensitivity_bounds(n_params):
    """Replace one row by an extreme one, at many points: each gradient
    coordinate moves by at most 2 c / n, each Hessian entry by at most its
    bound / n.  At a fixed point the logistic gradient of one row spans
    only about c (not 2c), so about half the gradient bound is reachable;
    the checks below show the bounds are not looser than that."""
    rng = np.random.default_rng(0)
    n, c = 50, 0.7
    worst_gradient, worst_hessian = 0.0, np.zeros(n_params * (n_params + 1) // 2)
    bounds = hessian_sensitivity_bounds(n_params, c) / n
    for _ in range(2000):
        Z = rng.uniform(-c, c, size=(n, n_params))
        y = rng.choice([-1.0, 1.0], size=n)
        theta = rng.normal(scale=3.0, size=n_params)
        neighbour_Z, neighbour_y = Z.copy(), y.copy()
        neighbour_Z[0] = c * rng.choice([-1.0, 1.0], size=n_params)
        neighbour_y[0] = -y[0]
        g, h = statistics(Z, y, theta)
        g2, h2 = statistics(neighbour_Z, neighbour_y, theta)
        worst_gradient = max(worst_gradient, np.abs(g - g2).max())
        worst_hessian = np.maximum(worst_hessian, np.abs(h - h2))
    assert worst_gradient <= 2 * c / n * (1 + 1e-12)
    assert np.all(worst_hessian <= bounds * (1 + 1e-12))
    assert worst_gradient > 0.45 * 2 * c / n
    assert np.all(worst_hessian > 0.45 * bounds)


def constrained_optimum(Z, y, radius):
    """Logistic regression over the l1 ball by a generic solver (split
    theta = u - v with u, v >= 0 and sum(u + v) <= radius)."""
    p = Z.shape[1]

    def loss(w):
        theta = w[:p] - w[p:]
        return np.mean(np.logaddexp(0.0, -y * (Z @ theta)))

    result = minimize(loss, np.zeros(2 * p), method="SLSQP",
                      bounds=[(0, None)] * (2 * p),
                      constraints=[{"type": "ineq",
                                    "fun": lambda w: radius - w.sum()}],
                      options={"ftol": 1e-14, "maxiter": 500})
    return result.x[:p] - result.x[p:]


@pytest.mark.parametrize("radius", [10.0, 1.0])
def test_without_noise_it_reaches_the_constrained_optimum(radius):
    rng = np.random.default_rng(1)
    n = 2000
    s = rng.uniform(-1, 1, n)
    Z = np.column_stack([s, np.ones(n)])
    y = np.where(rng.random(n) < expit(2.0 * s - 0.5), 1.0, -1.0)
    result = noisy_newton_logistic(Z, y, radius=radius, n_steps=30,
                                   gradient_noise=0.0, hessian_noise=0.0,
                                   rng=rng)
    np.testing.assert_allclose(result, constrained_optimum(Z, y, radius),
                               atol=1e-4)


def test_iterates_stay_feasible_and_steps_stay_in_the_trust_region():
    rng = np.random.default_rng(2)
    n = 300
    Z = np.column_stack([rng.uniform(-1, 1, n), np.ones(n)])
    y = rng.choice([-1.0, 1.0], size=n)
    start = np.array([3.0, -1.0])
    for n_steps in (1, 2):
        result = noisy_newton_logistic(
            Z, y, radius=5.0, n_steps=n_steps, gradient_noise=10.0,
            hessian_noise=0.01, rng=np.random.default_rng(n_steps),
            start=start, nonnegative=np.array([True, False]))
        assert np.abs(result).sum() <= 5.0 + 1e-12
        assert result[0] >= 0.0
        # Huge gradient noise: each step is clipped to the trust region.
        assert np.abs(result - start).max() <= n_steps * MAX_STEP + 1e-12


def test_noise_is_added_with_the_given_scales():
    """With a single step from the optimum of a noise-free problem, the
    step is H^-1 times the gradient noise: its spread matches the scale."""
    rng = np.random.default_rng(3)
    n = 5000
    Z = np.column_stack([rng.uniform(-1, 1, n), np.ones(n)])
    y = np.where(rng.random(n) < expit(Z[:, 0]), 1.0, -1.0)
    optimum = noisy_newton_logistic(Z, y, radius=10.0, n_steps=20,
                                    gradient_noise=0.0, hessian_noise=0.0,
                                    rng=rng)
    _, h = statistics(Z, y, optimum)
    hessian = np.array([[h[0], h[1]], [h[1], h[2]]])
    steps = np.array([
        noisy_newton_logistic(Z, y, radius=10.0, n_steps=1, gradient_noise=1e-3,
                              hessian_noise=0.0, rng=np.random.default_rng(k),
                              start=optimum) - optimum
        for k in range(400)])
    # The gradient noise recovered from the steps: H step ~ N(0, 1e-6 I).
    noise = steps @ hessian
    assert np.std(noise[:, 0]) == pytest.approx(1e-3, rel=0.15)
    assert np.std(noise[:, 1]) == pytest.approx(1e-3, rel=0.15)
