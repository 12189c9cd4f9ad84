"""Private greedy coordinate descent: sensitivities hold on neighbouring
datasets, the exact solver reaches the Lasso optimum, the selection follows
the exponential mechanism, and the run releases what its plan accounts."""

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.special import ndtr
from sklearn.linear_model import Lasso

import skdpopt.solvers.greedy_cd as greedy_cd
from skdpopt._data import ClippedLeastSquares
from skdpopt.accounting import EpsilonDeltaEvent, leaves, repeat
from skdpopt.plans.lasso import ACTIVATION_MARGIN, GreedyCDPlan, greedy_cd_step_event
from skdpopt.solvers.greedy_cd import INTERCEPT, private_greedy_cd, selection_scores
from skdpopt.solvers.problems import LinearProblem

BOUND, RESIDUAL_BOUND = 0.7, 1.5


def lasso_objective(X, y, coef, intercept, alpha):
    return 0.5 * np.mean((y - X @ coef - intercept) ** 2) + alpha * np.abs(coef).sum()


def run(X, y, *, alpha, n_steps, fit_intercept, bound=1.0, residual_bound=1.0,
        rng=None, selection="exponential", selection_epsilon=np.inf,
        gradient_noise="gaussian", gradient_noise_multiplier=0.0,
        curvature_noise_multiplier=None, residual_noise_multiplier=None):
    """One run with a hand-made plan of the given per-step parameters."""
    plan = GreedyCDPlan(
        np.inf, 0.0, EpsilonDeltaEvent(np.inf, 0.0), n_steps=n_steps,
        selection=selection, gradient_noise=gradient_noise,
        selection_epsilon=selection_epsilon,
        gradient_noise_multiplier=gradient_noise_multiplier,
        curvature_noise_multiplier=curvature_noise_multiplier,
        residual_noise_multiplier=residual_noise_multiplier,
        activation_margin=ACTIVATION_MARGIN)
    problem = LinearProblem(X, y, fit_intercept, alpha=alpha, feature_bound=bound,
                            residual_bound=residual_bound)
    return private_greedy_cd(problem, plan, rng or np.random.default_rng(0))


def exact_run(X, y, alpha, n_steps, curvature=0.0, residual_bound=10.0):
    return run(X, y, alpha=alpha, n_steps=n_steps, fit_intercept=True,
               residual_bound=residual_bound, curvature_noise_multiplier=curvature)


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
    result = exact_run(sp.csr_matrix(X) if sparse else X, y, alpha, 300)
    reference = Lasso(alpha=alpha, tol=1e-10).fit(X, y)
    best = lasso_objective(X, y, reference.coef_, reference.intercept_, alpha)
    reached = lasso_objective(X, y, result.coef, result.intercept, alpha)
    assert reached - best <= 1e-6 * best
    np.testing.assert_allclose(result.coef, reference.coef_, atol=1e-3)


def test_public_curvature_bound_converges_too():
    rng = np.random.default_rng(2)
    X = rng.uniform(-1, 1, size=(300, 10))
    y = X[:, 0] - 0.5 * X[:, 1]
    result = exact_run(X, y, 0.01, 200, curvature=None)
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
        result = run(X, y, alpha=0.0, n_steps=1, fit_intercept=False, rng=rng,
                     selection_epsilon=eps0)
        counts[result.selected[0]] += 1
    expected = draws * weights / weights.sum()
    # Binomial counts: 5 standard deviations.
    sd = np.sqrt(expected * (1 - weights / weights.sum()))
    assert np.all(np.abs(counts - expected) < 5 * sd)


def _count_releases(monkeypatch):
    """Count the noise draws and selections a run makes, by kind."""
    counts = {"selection": 0, "gaussian": 0, "laplace": 0}

    def counting(name, function):
        def counted(*args, **kwargs):
            counts[name] += 1
            return function(*args, **kwargs)
        return counted

    for attribute, name in (("exponential_mechanism", "selection"),
                            ("report_noisy_max", "selection"),
                            ("gaussian_noise", "gaussian"),
                            ("laplace_noise", "laplace")):
        monkeypatch.setattr(greedy_cd, attribute,
                            counting(name, getattr(greedy_cd, attribute)))
    return counts


def _planned(step_parameters, n_steps):
    """(kind, count) of the plan's event for these per-step parameters."""
    planned = {"selection": 0, "gaussian": 0, "laplace": 0}
    event = repeat(greedy_cd_step_event(**step_parameters), n_steps)
    for leaf, count in leaves(event):
        kind = type(leaf).__name__
        if kind in ("ExponentialMechanism", "PureDPMechanism"):
            planned["selection"] += count
        elif kind == "GaussianMechanism":
            planned["gaussian"] += count
        else:
            planned["laplace"] += count
    return planned


def test_run_releases_what_the_plan_accounts(monkeypatch):
    """Every step: a residual scale, a selection and a gradient; a curvature
    on feature steps only (the intercept's is public), which the plan counts
    on every step, the most there can be."""
    rng = np.random.default_rng(4)
    X = rng.uniform(-1, 1, size=(200, 5))
    y = np.clip(rng.uniform(-1, 1, size=200) + 0.8, -1, 1)
    counts = _count_releases(monkeypatch)
    step = dict(selection="exponential", gradient_noise="gaussian",
                selection_epsilon=4.0, gradient_noise_multiplier=2.0,
                curvature_noise_multiplier=3.0, residual_noise_multiplier=5.0)
    result = run(X, y, alpha=0.01, n_steps=40, fit_intercept=True, rng=rng, **step)
    intercept_steps = int(np.sum(result.selected == INTERCEPT))
    assert intercept_steps > 0  # the offset makes the intercept worth a step
    planned = _planned(step, 40)
    assert counts["selection"] == planned["selection"] == 40
    # Gaussian: residual scale and gradient every step, curvature on the
    # feature steps; the plan counts the curvature on all 40.
    assert counts["gaussian"] == 3 * 40 - intercept_steps
    assert planned["gaussian"] == 3 * 40
    assert np.count_nonzero(result.coef) <= 40 - intercept_steps


def test_laplace_variant_releases_pure_mechanisms(monkeypatch):
    rng = np.random.default_rng(5)
    X = rng.uniform(-1, 1, size=(100, 4))
    counts = _count_releases(monkeypatch)
    step = dict(selection="laplace", gradient_noise="laplace",
                selection_epsilon=0.5, gradient_noise_multiplier=4.0,
                curvature_noise_multiplier=None, residual_noise_multiplier=None)
    result = run(X, X[:, 0], alpha=0.0, n_steps=7, fit_intercept=False, rng=rng,
                 **step)
    assert counts == _planned(step, 7) == {"selection": 7, "gaussian": 0,
                                           "laplace": 7}
    assert np.all((result.selected >= 0) & (result.selected < 4))


def test_signed_scores_keep_the_order_below_the_threshold():
    """At zero the score is |g| - alpha, negative inside the subdifferential:
    a coordinate just below alpha outranks one far below it (the clamped
    score max(|g| - alpha, 0) would tie them at 0)."""
    grad = np.array([0.009, 0.001, -0.03, 0.02])
    coef = np.array([0.0, 0.0, 0.0, 0.5])
    scores = selection_scores(grad, coef, 0.01, 2.0)
    np.testing.assert_allclose(scores, [-0.0005, -0.0045, 0.01, 0.015])


def test_adaptive_residual_bound_follows_the_residual_scale(monkeypatch):
    """Without noise the bound settles at twice the root mean square of the
    clipped residuals (below the public bound), and the fit still solves
    the problem whose residuals it barely clips."""
    rng = np.random.default_rng(6)
    n, p = 2000, 8
    X = rng.uniform(-1, 1, size=(n, p))
    y = X[:, 0] * 0.6 - 0.4 * X[:, 1] + 0.05 * rng.normal(size=n)
    made = []

    def keeping(*args):
        made.append(ClippedLeastSquares(*args))
        return made[-1]

    monkeypatch.setattr(greedy_cd, "least_squares_problem", keeping)
    result = run(X, y, alpha=0.001, n_steps=60, fit_intercept=True, rng=rng,
                 curvature_noise_multiplier=0.0, residual_noise_multiplier=0.0)
    (problem,) = made
    rms = np.sqrt(problem.mean_square_residual())
    assert 0.05 < problem.residual_bound < 0.2  # was 1.0
    assert problem.residual_bound == pytest.approx(2 * rms, rel=0.2)
    np.testing.assert_allclose(result.coef[:2], [0.6, -0.4], atol=0.01)


def test_activation_margin_keeps_noise_selected_coordinates_at_zero():
    """Coordinates with no signal, forced into the selection, enter the
    model only when their noisy gradient clears alpha by two noise scales:
    well under 5% of the time instead of about a third (P(|Z| > 1)) with
    the plain prox."""
    rng = np.random.default_rng(7)
    n = 1000
    X = rng.choice([-1.0, 1.0], size=(n, 200))
    y = 0.01 * rng.normal(size=n)
    # Gradient noise std 5 * 2 / n = 0.01 = alpha; selection uniform.
    result = run(X, y, alpha=0.01, n_steps=200, fit_intercept=False, rng=rng,
                 selection_epsilon=1e-12, gradient_noise_multiplier=5.0)
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


def test_adapted_residual_bound_settles_at_its_fixed_point():
    """Without noise the residual bound on Gaussian residuals settles where
    c = 2 sqrt(E min(r^2, c^2)), about 1.90 standard deviations (the figure
    docs/privacy/dplasso.md quotes).  E[r^2; |r| < c] for a standard normal
    r is P(chi2_3 < c^2), hence the closed form below; with 10^6 residuals
    the mean square's sampling error (sd about 1e-3) moves c by less than
    0.01."""
    from scipy import optimize, stats

    from skdpopt.solvers.greedy_cd import _adapted_residual_bound

    def mean_square(c):
        return stats.chi2.cdf(c * c, 3) + c * c * 2 * stats.norm.sf(c)

    fixed_point = optimize.brentq(lambda c: c - 2 * np.sqrt(mean_square(c)), 1, 3)
    assert round(fixed_point, 2) == 1.90

    class Residuals:
        def __init__(self, r, bound):
            self.r, self.residual_bound, self.n_samples = r, bound, len(r)

        def mean_square_residual(self):
            return float(np.mean(np.minimum(self.r**2, self.residual_bound**2)))

    r = np.random.default_rng(0).normal(size=10**6)
    bound = 50.0
    for _ in range(30):
        bound = _adapted_residual_bound(Residuals(r, bound), 0.0, 50.0,
                                        np.random.default_rng(1))
    assert abs(bound - fixed_point) < 0.01


# -- one-hot blocks ------------------------------------------------------------

def _one_hot_rows(rng, n, levels):
    X = np.zeros((n, levels))
    X[np.arange(n), rng.integers(0, levels, n)] = 1.0
    return X


def test_block_releases_hold_their_sensitivities_on_worst_case_neighbours():
    """A block's rows clipped into its l2 ball: replacing one record moves
    the block's gradient by at most 2 B C / n in l2, its score by 2 C / n
    and its curvature vector by sqrt(2) B^2 / n in l2, whatever the new
    record (one-hot or not) and the iterate."""
    from skdpopt._clipping import clip_blocks

    rng = np.random.default_rng(0)
    n, levels = 60, 8
    blocks = np.r_[0, np.ones(levels, dtype=int)]
    bounds = np.full(levels + 1, BOUND)
    X = np.c_[rng.uniform(-BOUND, BOUND, n), BOUND * _one_hot_rows(rng, n, levels)]
    y = rng.uniform(-1, 1, size=n)
    starts = np.array([0, 1])
    worst = 0.0
    for trial in range(200):
        coef = rng.normal(scale=3.0, size=levels + 1) * (rng.random(levels + 1) < 0.5)
        alpha = rng.uniform(0, 0.5)
        X2, y2 = X.copy(), y.copy()
        i = trial % n
        X2[i] = rng.choice([-BOUND, BOUND], size=levels + 1)  # far from one-hot
        y2[i] = rng.choice([-1.0, 1.0])
        outputs = []
        for data, target in ((X, y), (X2, y2)):
            data = clip_blocks(data, blocks, bounds)
            problem = ClippedLeastSquares(data, target, BOUND, RESIDUAL_BOUND)
            problem.reset(coef, 0.0)
            grad, _ = problem.gradient()
            scores = greedy_cd.block_scores(
                selection_scores(grad, coef, alpha, BOUND), starts)
            curv = np.array([problem.curvature(j) for j in range(1, levels + 1)])
            outputs.append((grad[1:], scores, curv))
        (g1, s1, c1), (g2, s2, c2) = outputs
        tol = 1e-12
        assert np.linalg.norm(g1 - g2) <= 2 * BOUND * RESIDUAL_BOUND / n + tol
        assert np.abs(s1 - s2).max() <= 2 * RESIDUAL_BOUND / n + tol
        assert np.linalg.norm(c1 - c2) <= np.sqrt(2) * BOUND**2 / n + tol
        worst = max(worst, np.linalg.norm(g1 - g2) / (2 * BOUND * RESIDUAL_BOUND / n))
    assert worst > 0.5


def test_block_scores_are_one_lipschitz_and_keep_a_single_columns_score():
    rng = np.random.default_rng(1)
    starts = np.array([0, 1, 4])
    for _ in range(500):
        a, b = rng.normal(size=(2, 9)) * rng.choice([0.01, 1.0])
        sa, sb = greedy_cd.block_scores(a, starts), greedy_cd.block_scores(b, starts)
        for k, (lo, hi) in enumerate(zip(starts, [1, 4, 9], strict=True)):
            assert abs(sa[k] - sb[k]) <= np.linalg.norm(a[lo:hi] - b[lo:hi]) + 1e-12
        assert sa[0] == a[0]
    # All below the threshold: the block's best column's score.
    assert greedy_cd.block_scores(np.array([-0.5, -0.1, -0.3]), np.array([0])) == -0.1


def test_one_hot_block_is_fitted_in_a_step():
    """Without noise, a step on a one-hot block moves every level to its
    optimum at once (the levels never share a row), where the columns one
    at a time need a step per level."""
    rng = np.random.default_rng(2)
    n, levels = 2000, 20
    X = _one_hot_rows(rng, n, levels)
    effects = rng.normal(size=levels)
    y = X @ effects * 0.3
    blocks = np.zeros(levels, dtype=int)
    plan = GreedyCDPlan(
        np.inf, 0.0, EpsilonDeltaEvent(np.inf, 0.0), n_steps=1,
        selection="exponential", gradient_noise="gaussian",
        selection_epsilon=np.inf, gradient_noise_multiplier=0.0,
        curvature_noise_multiplier=0.0, activation_margin=ACTIVATION_MARGIN)
    result = private_greedy_cd(
        LinearProblem(X, y, False, alpha=0.0, feature_bound=1.0,
                      residual_bound=10.0, blocks=blocks),
        plan, np.random.default_rng(0))
    np.testing.assert_allclose(result.coef, 0.3 * effects, atol=1e-9)
    assert result.selected.tolist() == [0]
    one_at_a_time = private_greedy_cd(
        LinearProblem(X, y, False, alpha=0.0, feature_bound=1.0,
                      residual_bound=10.0), plan, np.random.default_rng(0))
    assert np.count_nonzero(one_at_a_time.coef) == 1


def test_block_step_releases_one_gradient_and_one_curvature(monkeypatch):
    """A block step is one Gaussian release of the block's gradient, at the
    plan's multiplier times 2 B C / n, and one of its curvatures, at the
    multiplier times sqrt(2) B^2 / n, whatever the block's size: the plan's
    event.  A column's step keeps its own scales."""
    rng = np.random.default_rng(3)
    n, levels, bound, residual_bound = 300, 12, 0.8, 5.0
    X = np.c_[rng.uniform(-bound, bound, n), bound * _one_hot_rows(rng, n, levels)]
    y = X[:, 1:] @ rng.normal(size=levels) + X[:, 0]
    calls = []
    original = greedy_cd.gaussian_noise
    monkeypatch.setattr(greedy_cd, "gaussian_noise", lambda r, std, size: (
        calls.append((size, std)) or original(r, std, size)))
    plan = GreedyCDPlan(
        np.inf, 0.0, EpsilonDeltaEvent(np.inf, 0.0), n_steps=6,
        selection="exponential", gradient_noise="gaussian",
        selection_epsilon=8.0, gradient_noise_multiplier=1.5,
        curvature_noise_multiplier=2.5, activation_margin=ACTIVATION_MARGIN)
    blocks = np.r_[0, np.ones(levels, dtype=int)]
    result = private_greedy_cd(
        LinearProblem(X, y, False, alpha=0.0, feature_bound=bound,
                      residual_bound=residual_bound, blocks=blocks), plan, rng)
    assert len(calls) == 2 * 6  # a gradient and a curvature per step
    gradient_std = 1.5 * 2 * bound * residual_bound / n
    for step, column in enumerate(result.selected):
        (g_size, g_std), (c_size, c_std) = calls[2 * step], calls[2 * step + 1]
        size = 1 if column == 0 else levels
        spread = 1.0 if column == 0 else np.sqrt(2.0)
        assert (g_size, c_size) == (size, size)
        assert g_std == pytest.approx(gradient_std)
        assert c_std == pytest.approx(2.5 * spread * bound**2 / n)
    assert set(result.selected.tolist()) == {0, 1}


def test_a_block_of_pure_noise_stays_at_zero():
    """The gate: a block whose levels carry no signal leaves zero on noise
    alone as often as one column does, though a few of its columns clear
    the per-column margin at nearly every step; a block with signal
    enters, and a block of one column gets the per-column rule."""
    rng = np.random.default_rng(4)
    size, std, trials = 50, 1.0, 2000
    noise = rng.normal(scale=std, size=(trials, size))
    entered = np.mean([greedy_cd.block_enters(z, std, ACTIVATION_MARGIN)
                       for z in noise])
    per_column = np.mean(np.any(np.abs(noise) > ACTIVATION_MARGIN * std, axis=1))
    assert per_column > 0.8
    # As often as one column clears the margin: 4.6%, within 3 binomial
    # standard deviations (1.4%) over 2,000 trials.
    single = 2 * ndtr(-ACTIVATION_MARGIN)
    assert abs(entered - single) < 3 * np.sqrt(single * (1 - single) / trials)
    # Levels at 1.2 noise scales each: the squared norm's mean 122 and
    # standard deviation about 20 put the threshold (67) 2.7 deviations
    # below it (99.6%).
    signal = noise + 1.2 * std
    assert np.mean([greedy_cd.block_enters(z, std, ACTIVATION_MARGIN)
                    for z in signal]) > 0.95
    for z in (1.9, 2.1):
        assert greedy_cd.block_enters(np.array([z]), 1.0, 2.0) == (z > 2.0)
