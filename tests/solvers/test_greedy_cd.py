"""Private greedy coordinate descent: sensitivities hold on neighbouring
datasets, the exact solver reaches the Lasso optimum, the selection follows
the exponential mechanism, and the run reports what it released."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.linear_model import Lasso

from skdpopt.accounting import (
    ExponentialMechanism,
    GaussianMechanism,
    LaplaceMechanism,
    PureDPMechanism,
)
from skdpopt.solvers.greedy_cd import (
    INTERCEPT,
    ClippedLeastSquares,
    private_greedy_cd,
    selection_scores,
)

BOUND, RESIDUAL_BOUND = 0.7, 1.5


def lasso_objective(X, y, coef, intercept, alpha):
    return 0.5 * np.mean((y - X @ coef - intercept) ** 2) + alpha * np.abs(coef).sum()


def exact_run(problem, alpha, n_steps, **kwargs):
    return private_greedy_cd(
        problem, alpha=alpha, n_steps=n_steps, fit_intercept=True,
        selection="exponential", selection_epsilon=np.inf,
        gradient_noise="gaussian", gradient_noise_multiplier=0.0,
        curvature_noise_multiplier=kwargs.pop("curvature", 0.0),
        rng=np.random.default_rng(0), **kwargs)


def test_sensitivities_hold_on_worst_case_neighbours():
    """Replace one record by extreme ones: every released quantity moves by at
    most its stated sensitivity (2C/n scores, 2BC/n gradients, B^2/n
    curvatures, C^2/n mean squared clipped residuals), at iterates of any
    size."""
    rng = np.random.default_rng(0)
    n, p = 50, 6
    X = rng.uniform(-BOUND, BOUND, size=(n, p))
    y = rng.uniform(-1, 1, size=n)
    worst = 0.0
    for trial in range(200):
        coef = rng.normal(scale=3.0, size=p) * (rng.random(p) < 0.5)
        intercept = rng.normal()
        alpha = rng.uniform(0, 0.5)
        X2, y2 = X.copy(), y.copy()
        i = trial % n
        X2[i] = rng.choice([-BOUND, BOUND], size=p)
        y2[i] = rng.choice([-1.0, 1.0])
        outputs = []
        for data, target in ((X, y), (X2, y2)):
            problem = ClippedLeastSquares(data, target, BOUND, RESIDUAL_BOUND)
            problem.reset(coef, intercept)
            grad, grad_b = problem.gradient()
            scores = selection_scores(grad, coef, alpha, BOUND)
            curv = [problem.curvature(j) for j in range(p)]
            outputs.append((np.append(grad, grad_b), scores, np.array(curv),
                            problem.mean_square_residual()))
        (g1, s1, c1, q1), (g2, s2, c2, q2) = outputs
        tol = 1e-12
        assert abs(q1 - q2) <= RESIDUAL_BOUND**2 / n + tol
        assert np.abs(g1 - g2).max() <= 2 * BOUND * RESIDUAL_BOUND / n + tol
        assert np.abs(s1 - s2).max() <= 2 * RESIDUAL_BOUND / n + tol
        assert np.abs(c1 - c2).max() <= BOUND**2 / n + tol
        worst = max(worst, np.abs(g1 - g2).max() / (2 * BOUND * RESIDUAL_BOUND / n))
    # The bound is nearly attained, so it is not loose by a factor.
    assert worst > 0.5


@pytest.mark.parametrize("sparse", [False, True])
def test_exact_solver_reaches_the_lasso_optimum(sparse):
    rng = np.random.default_rng(1)
    n, p, alpha = 400, 30, 0.01
    X = rng.uniform(-1, 1, size=(n, p)) * (rng.random((n, p)) < 0.5)
    y = 0.3 + X[:, :4] @ [0.5, -0.4, 0.3, 0.2] + 0.05 * rng.normal(size=n)
    problem = ClippedLeastSquares(sp.csr_matrix(X) if sparse else X, y, 1.0, 10.0)
    result = exact_run(problem, alpha, 300)
    reference = Lasso(alpha=alpha, tol=1e-10).fit(X, y)
    best = lasso_objective(X, y, reference.coef_, reference.intercept_, alpha)
    reached = lasso_objective(X, y, result.coef, result.intercept, alpha)
    assert reached - best <= 1e-6 * best
    np.testing.assert_allclose(result.coef, reference.coef_, atol=1e-3)


def test_public_curvature_bound_converges_too():
    rng = np.random.default_rng(2)
    X = rng.uniform(-1, 1, size=(300, 10))
    y = X[:, 0] - 0.5 * X[:, 1]
    problem = ClippedLeastSquares(X, y, 1.0, 10.0)
    result = exact_run(problem, 0.01, 200, curvature=None)
    reference = Lasso(alpha=0.01, tol=1e-10).fit(X, y)
    np.testing.assert_allclose(result.coef, reference.coef_, atol=1e-3)


def test_selection_frequencies_follow_the_exponential_mechanism():
    """One step from 0: coordinate j is drawn with probability proportional
    to exp(eps/2 * score_j / (2C/n))."""
    n = 10
    X = np.zeros((n, 3))
    X[:, 0], X[:5, 1] = 1.0, 1.0
    y = np.full(n, -0.2)
    problem = ClippedLeastSquares(X, y, 1.0, 1.0)
    grad, _ = problem.gradient()
    scores = selection_scores(grad, np.zeros(3), 0.0, 1.0)  # 0.2, 0.1, 0
    eps0 = 2.0
    weights = np.exp(0.5 * eps0 * scores / (2.0 / n))
    counts = np.zeros(3)
    rng = np.random.default_rng(3)
    draws = 3000
    for _ in range(draws):
        result = private_greedy_cd(
            problem, alpha=0.0, n_steps=1, fit_intercept=False,
            selection="exponential", selection_epsilon=eps0,
            gradient_noise="gaussian", gradient_noise_multiplier=0.0,
            curvature_noise_multiplier=None, rng=rng)
        counts[result.selected[0]] += 1
    expected = draws * weights / weights.sum()
    # Binomial counts: 5 standard deviations.
    sd = np.sqrt(expected * (1 - weights / weights.sum()))
    assert np.all(np.abs(counts - expected) < 5 * sd)


def test_run_reports_every_release():
    rng = np.random.default_rng(4)
    X = rng.uniform(-1, 1, size=(200, 5))
    y = rng.uniform(-1, 1, size=200) + 0.8
    problem = ClippedLeastSquares(X, np.clip(y, -1, 1), 1.0, 1.0)
    result = private_greedy_cd(
        problem, alpha=0.01, n_steps=40, fit_intercept=True,
        selection="exponential", selection_epsilon=4.0,
        gradient_noise="gaussian", gradient_noise_multiplier=2.0,
        curvature_noise_multiplier=3.0, residual_noise_multiplier=5.0, rng=rng)
    events = dict(result.mechanisms)
    intercept_steps = int(np.sum(result.selected == INTERCEPT))
    assert intercept_steps > 0  # the offset makes the intercept worth a step
    assert events[ExponentialMechanism(2.0)] == 40
    assert events[GaussianMechanism(2.0)] == 40
    assert events[GaussianMechanism(5.0)] == 40  # residual scale, every step
    # Curvature is released on feature steps only (the intercept's is public).
    assert events[GaussianMechanism(3.0)] == 40 - intercept_steps
    assert np.count_nonzero(result.coef) <= 40 - intercept_steps


def test_laplace_variant_reports_pure_mechanisms():
    rng = np.random.default_rng(5)
    X = rng.uniform(-1, 1, size=(100, 4))
    problem = ClippedLeastSquares(X, X[:, 0], 1.0, 1.0)
    result = private_greedy_cd(
        problem, alpha=0.0, n_steps=7, fit_intercept=False,
        selection="laplace", selection_epsilon=0.5,
        gradient_noise="laplace", gradient_noise_multiplier=4.0,
        curvature_noise_multiplier=None, rng=rng)
    assert result.mechanisms == [(PureDPMechanism(0.5), 7),
                                 (LaplaceMechanism(0.25), 7)]
    assert np.all((result.selected >= 0) & (result.selected < 4))


def test_signed_scores_keep_the_order_below_the_threshold():
    """At zero the score is |g| - alpha, negative inside the subdifferential:
    a coordinate just below alpha outranks one far below it (the clamped
    score max(|g| - alpha, 0) would tie them at 0)."""
    grad = np.array([0.009, 0.001, -0.03, 0.02])
    coef = np.array([0.0, 0.0, 0.0, 0.5])
    scores = selection_scores(grad, coef, 0.01, 2.0)
    np.testing.assert_allclose(scores, [-0.0005, -0.0045, 0.01, 0.015])


def test_adaptive_residual_bound_follows_the_residual_scale():
    """Without noise the bound settles at twice the root mean square of the
    clipped residuals (below the public bound), and the fit still solves
    the problem whose residuals it barely clips."""
    rng = np.random.default_rng(6)
    n, p = 2000, 8
    X = rng.uniform(-1, 1, size=(n, p))
    y = X[:, 0] * 0.6 - 0.4 * X[:, 1] + 0.05 * rng.normal(size=n)
    problem = ClippedLeastSquares(X, y, 1.0, 1.0)
    result = private_greedy_cd(
        problem, alpha=0.001, n_steps=60, fit_intercept=True,
        selection="exponential", selection_epsilon=np.inf,
        gradient_noise="gaussian", gradient_noise_multiplier=0.0,
        curvature_noise_multiplier=0.0, residual_noise_multiplier=0.0, rng=rng)
    rms = np.sqrt(problem.mean_square_residual())
    assert 0.05 < problem.residual_bound < 0.2  # was 1.0
    assert problem.residual_bound == pytest.approx(2 * rms, rel=0.2)
    np.testing.assert_allclose(result.coef[:2], [0.6, -0.4], atol=0.01)
    assert result.mechanisms[-1] == (GaussianMechanism(0.0), 60)


def test_activation_margin_keeps_noise_selected_coordinates_at_zero():
    """Coordinates with no signal, forced into the selection, enter the
    model only when their noisy gradient clears alpha by two noise scales:
    well under 5% of the time instead of about a third (P(|Z| > 1)) with
    the plain prox."""
    rng = np.random.default_rng(7)
    n = 1000
    X = rng.choice([-1.0, 1.0], size=(n, 200))
    y = 0.01 * rng.normal(size=n)
    problem = ClippedLeastSquares(X, y, 1.0, 1.0)
    # Gradient noise std 5 * 2 / n = 0.01 = alpha; selection uniform.
    result = private_greedy_cd(
        problem, alpha=0.01, n_steps=200, fit_intercept=False,
        selection="exponential", selection_epsilon=1e-12,
        gradient_noise="gaussian", gradient_noise_multiplier=5.0,
        curvature_noise_multiplier=None, rng=rng)
    entered = np.count_nonzero(result.coef) / len(np.unique(result.selected))
    # P(|N(0, 1)| > 3) = 0.0027 plus the true gradients' share: well under 0.05.
    assert entered < 0.05


def test_nan_residual_counts_as_zero():
    # A residual that is not a number (inf - inf in a prediction) contributes
    # 0, inside [-C, C]: the gradient and the mean square stay finite.
    rng = np.random.default_rng(0)
    X = rng.uniform(-BOUND, BOUND, size=(20, 3))
    problem = ClippedLeastSquares(X, rng.uniform(-1, 1, 20), BOUND, RESIDUAL_BOUND)
    problem.residual[:3] = [np.nan, np.inf, -np.inf]
    clipped = problem.clipped_residual()
    np.testing.assert_array_equal(clipped[:3], [0.0, RESIDUAL_BOUND, -RESIDUAL_BOUND])
    assert np.isnan(problem.residual[0])  # the state itself is left alone
    grad, grad_intercept = problem.gradient()
    assert np.all(np.isfinite(grad)) and np.isfinite(grad_intercept)
    assert np.isfinite(problem.mean_square_residual())
