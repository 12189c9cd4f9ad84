"""Vertex-sampling mirror descent: lazy updates are exact, draws have the
right law, a replaced record moves each draw's distribution by no more than
the privacy analysis says, and sparse batches cost their non-zeros."""

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.special import logsumexp
from scipy.stats import chi2

import skdpopt.solvers.mirror_descent as mirror_descent
from skdpopt.geometry import vertex_coordinates
from skdpopt.losses import LogLoss
from skdpopt.plans.logistic_simplex import count_vertex_draws, refresh_steps
from skdpopt.solvers.mirror_descent import (
    EntropicIterates,
    VertexSet,
    draw_vertices,
    linear_model_gradient,
    vertex_sampling_mirror_descent,
)


def dense_iterates(gradients, step_size, m):
    """Brute force: every iterate x_1..x_{T+1} in full."""
    log_x = np.zeros(m)
    iterates = [np.full(m, 1.0 / m)]
    for vertices, values in gradients:
        log_x[vertices] -= step_size * values
        iterates.append(np.exp(log_x - logsumexp(log_x)))
    return np.array(iterates)


def random_sparse_gradients(rng, m, steps, scale):
    out = []
    for _ in range(steps):
        vertices = rng.choice(m, size=rng.integers(1, 8), replace=False)
        out.append((vertices, scale * rng.normal(size=len(vertices))))
    return out


@pytest.mark.parametrize("scale", [0.01, 1.0, 50.0])
@pytest.mark.parametrize("read_every", [1, 7, 1000])
def test_lazy_iterates_and_average_match_brute_force(scale, read_every):
    # scale 50 with step 0.5 moves log weights by ~25 per step: the weights
    # span hundreds of orders of magnitude, which forces flushes.
    rng = np.random.default_rng(0)
    m, steps = 40, 200
    gradients = random_sparse_gradients(rng, m, steps, scale)
    expected = dense_iterates(gradients, 0.5, m)
    lazy = EntropicIterates(m, steps)
    for t, (vertices, values) in enumerate(gradients, start=1):
        lazy.step(vertices, values, 0.5)
        if t % read_every == 0 or t == steps:
            np.testing.assert_allclose(lazy.current(), expected[t], rtol=1e-10,
                                       atol=1e-300)
            np.testing.assert_allclose(lazy.average(), expected[: t + 1].mean(axis=0),
                                       rtol=1e-10, atol=1e-300)


@pytest.mark.parametrize("scale", [0.01, 1.0])
def test_average_without_the_start_matches_brute_force(scale):
    rng = np.random.default_rng(1)
    m, steps = 40, 50
    gradients = random_sparse_gradients(rng, m, steps, scale)
    expected = dense_iterates(gradients, 0.5, m)
    lazy = EntropicIterates(m, steps)
    for vertices, values in gradients:
        lazy.step(vertices, values, 0.5)
    np.testing.assert_allclose(lazy.average(include_start=False),
                               expected[1:].mean(axis=0), rtol=1e-8, atol=1e-12)


def test_output_is_drawn_without_the_uniform_start():
    """One step with a huge gradient against vertex 0: x_2 puts no mass on
    it, so the output (drawn from x_2 alone) never contains it, where a draw
    from w_2 = (x_1 + x_2) / 2 would, one time in eight."""
    def gradient(t, vertices):
        return np.array([0]), np.array([1e6])

    vertices = vertex_sampling_mirror_descent(
        gradient, 4, n_steps=1, n_draws=2000, refreshes=refresh_steps(1, 1),
        step_size=1.0, rng=np.random.default_rng(0))
    assert not np.any(vertices == 0)


def test_step_touches_only_the_given_vertices():
    lazy = EntropicIterates(10**6, 3)
    before = lazy._scaled.copy()
    lazy.step(np.array([3, 999_999]), np.array([1.0, -1.0]), 0.1)
    changed = np.flatnonzero(lazy._scaled != before)
    np.testing.assert_array_equal(changed, [3, 999_999])


def test_draws_follow_the_probabilities():
    """Pearson's chi-square over 6 cells; the 1e-4 quantile of chi2(5)
    bounds a correct sampler's statistic except with probability 1e-4."""
    p = np.array([0.4, 0.25, 0.2, 0.1, 0.05, 0.0])
    n = 20_000
    draws = draw_vertices(np.random.default_rng(1), p * 7.0, n)  # unnormalised
    counts = np.bincount(draws, minlength=len(p))
    assert counts[-1] == 0  # zero weight is never drawn
    expected = n * p[:-1]
    statistic = np.sum((counts[:-1] - expected) ** 2 / expected)
    assert statistic < chi2.ppf(1 - 1e-4, df=len(p) - 2)


def test_average_draws_follow_the_average():
    """Draws made by the solver come from the running average w_t, not the
    last iterate: after one step with a huge gradient on vertex 0, x_2 puts
    no mass on vertex 0 but w_2 = (x_1 + x_2) / 2 puts 1 / (2 m) there."""
    m, n = 4, 40_000
    lazy = EntropicIterates(m, 1)
    lazy.step(np.array([0]), np.array([1e6]), 1.0)
    draws = draw_vertices(np.random.default_rng(2), lazy.average(), n)
    share = np.mean(draws == 0)
    # Binomial(n, 1/8): 5 standard deviations.
    assert abs(share - 1 / 8) < 5 * np.sqrt((1 / 8) * (7 / 8) / n)


# ---------------------------------------------------------------------------
# The privacy argument, checked numerically


def neighbouring_averages(rng, m, steps, changed_step, step_size, change):
    """Averages w_{T+1} of two runs whose gradients differ only at one step,
    by at most ``change`` per coordinate (a replaced record in that batch)."""
    gradients = [rng.uniform(-1, 1, m) * rng.exponential(3.0) for _ in range(steps)]
    other = [g.copy() for g in gradients]
    other[changed_step] += change * rng.choice([-1.0, 1.0], m) * rng.uniform(0.5, 1, m)
    everything = np.arange(m)
    runs = []
    for seq in (gradients, other):
        it = dense_iterates([(everything, g) for g in seq], step_size, m)
        runs.append(it.mean(axis=0))
    return runs


@pytest.mark.parametrize("seed", range(20))
def test_draw_from_the_average_is_dp_and_zcdp_as_documented(seed):
    """docs/privacy/dplogisticsimplex.md: with per-coordinate gradient change
    at most c in one step and Delta = tau c, a draw from the average is
    2 Delta-DP and (Delta^2 / 2)-zCDP (Renyi divergence <= alpha Delta^2 / 2)."""
    rng = np.random.default_rng(seed)
    m, steps, tau, change = 6, 12, 0.7, 0.5
    delta_score = tau * change
    w, w_prime = neighbouring_averages(rng, m, steps, rng.integers(steps), tau,
                                       change)
    log_ratio = np.log(w) - np.log(w_prime)
    assert np.abs(log_ratio).max() <= 2 * delta_score + 1e-12
    for alpha in (1.5, 2.0, 4.0, 16.0):
        renyi = logsumexp(alpha * np.log(w) + (1 - alpha) * np.log(w_prime)) / (
            alpha - 1)
        assert renyi <= alpha * delta_score**2 / 2 + 1e-12


def test_log_weight_of_the_average_can_move_by_more_than_delta():
    """Why the per-draw bound needs the mixture argument of the privacy page:
    the average's log weights are not a score of sensitivity Delta.

    The replaced record (step 1) tilts every later iterate by exp(delta_k),
    delta_k in [-Delta, Delta], then renormalises.  Any later iterates are
    reachable (gradients are free apart from their bound), so take x_2 on
    vertex 2 (delta = -Delta) with a little on vertex 0 (delta = +Delta),
    and x_3 on vertex 3 (+Delta) with a little on vertex 1 (-Delta): the log
    ratios of vertices 0 and 1 approach +2 Delta and -2 Delta."""
    m, Delta = 1000, 0.1
    tilt = np.zeros(m)
    tilt[:4] = Delta * np.array([1.0, -1.0, -1.0, 1.0])
    x1 = np.full(m, 1.0 / m)  # before the replaced record: unchanged
    x2 = np.full(m, 1e-30)
    x2[[0, 2]] = [0.05, 0.95]
    x3 = np.full(m, 1e-30)
    x3[[1, 3]] = [0.05, 0.95]
    later = [x2 / x2.sum(), x3 / x3.sum()]
    tilted = [x * np.exp(tilt) / np.sum(x * np.exp(tilt)) for x in later]
    w = np.mean([x1, *later], axis=0)
    w_prime = np.mean([x1, *tilted], axis=0)
    log_ratio = np.log(w_prime) - np.log(w)
    spread = log_ratio.max() - log_ratio.min()
    assert spread > 3 * Delta  # a score of sensitivity Delta spreads <= 2 Delta
    assert np.abs(log_ratio).max() <= 2 * Delta + 1e-12  # still 2 Delta-DP
    for alpha in (1.5, 2.0, 8.0):
        renyi = logsumexp(alpha * np.log(w_prime) + (1 - alpha) * np.log(w)) / (
            alpha - 1)
        assert renyi <= alpha * Delta**2 / 2


# ---------------------------------------------------------------------------
# Vertex sets and the linear-model oracle


def test_l1_ball_layout_matches_geometry():
    vs = VertexSet.l1_ball(5, 2.0)
    features, values = vs.coordinates(np.arange(vs.n_vertices))
    ref_features, ref_values = vertex_coordinates(np.arange(10), 5, 2.0)
    np.testing.assert_array_equal(features, ref_features)
    np.testing.assert_array_equal(values, ref_values)


def test_simplex_with_signed_intercept():
    vs = VertexSet.simplex(4, 3.0, signed_features=[3])
    assert vs.n_vertices == 5
    features, values = vs.coordinates(np.arange(5))
    np.testing.assert_array_equal(features, [0, 1, 2, 3, 3])
    np.testing.assert_array_equal(values, [3, 3, 3, 3, -3])
    np.testing.assert_allclose(vs.point([0, 0, 4, 1]), [1.5, 0.75, 0, -0.75])


def vertex_matrix(vs):
    features, values = vs.coordinates(np.arange(vs.n_vertices))
    matrix = np.zeros((vs.n_vertices, vs.n_features))
    matrix[np.arange(vs.n_vertices), features] = values
    return matrix


@pytest.mark.parametrize("constraint", ["l1_ball", "simplex"])
def test_linear_model_gradient_is_the_vertex_weight_gradient(constraint):
    """Against the chain rule written densely: d loss / d lambda_k =
    mean_i dloss(p_i) <v_k, (x_i, b)>."""
    rng = np.random.default_rng(3)
    n, d, b = 30, 8, 0.7
    X = rng.normal(size=(n, d)) * (rng.random((n, d)) < 0.3)
    y = rng.choice([-1.0, 1.0], n)
    vs = (VertexSet.l1_ball(d + 1, 2.0) if constraint == "l1_ball"
          else VertexSet.simplex(d + 1, 2.0, [d]))
    batches = [np.arange(0, 12), np.arange(12, 30)]
    sampled = rng.integers(0, vs.n_vertices, 5)
    point = vs.point(sampled)
    X_aug = np.column_stack([X, np.full(n, b)])
    rows = batches[1]
    residual = LogLoss().derivative(X_aug[rows] @ point, y[rows])
    expected = vertex_matrix(vs) @ (X_aug[rows].T @ residual) / len(rows)
    for data in (X, sp.csr_matrix(X)):
        oracle = linear_model_gradient(data, y, LogLoss(), vs, batches, b)
        vertices, values = oracle(1, sampled)
        dense = np.zeros(vs.n_vertices)
        dense[vertices] = values
        np.testing.assert_allclose(dense, expected, rtol=1e-12, atol=1e-15)
        assert len(np.unique(vertices)) == len(vertices)


def test_sparse_oracle_touches_only_the_batch_features():
    """Per-step cost in the batch's non-zeros: the gradient it returns lives
    on the batch's columns (and the intercept), whatever d is."""
    d = 10**7
    X = sp.csr_matrix((np.ones(4), ([0, 0, 1, 2], [5, 9_000_000, 5, 77])),
                      shape=(3, d))
    vs = VertexSet.l1_ball(d + 1, 1.0)
    oracle = linear_model_gradient(X, np.array([1.0, -1.0, 1.0]), LogLoss(), vs,
                                   [np.arange(3)], 1.0)
    vertices, _ = oracle(0, np.array([0, 1]))
    features, _ = vs.coordinates(vertices)
    assert set(features) == {5, 77, 9_000_000, d}


# ---------------------------------------------------------------------------
# The solver


@pytest.mark.parametrize("steps, q", [(1, 1), (10, 1), (10, 3), (50, 7), (49, 7)])
def test_draws_from_the_data_are_those_the_plan_counts(steps, q, monkeypatch):
    """Every draw but the first (from the uniform start, which no data has
    touched) is an exponential mechanism the plan must account for."""
    K = 4
    m = 6
    calls = []

    def counting(rng, probabilities, size):
        calls.append(np.allclose(probabilities, 1.0 / m))
        return draw_vertices(rng, probabilities, size)

    monkeypatch.setattr(mirror_descent, "draw_vertices", counting)
    # A gradient that moves every weight, so that no later draw is uniform.
    vertex_sampling_mirror_descent(
        lambda t, v: (np.arange(m), np.arange(m, dtype=float)), m, n_steps=steps,
        n_draws=K, refreshes=refresh_steps(steps, q), step_size=0.1,
        rng=np.random.default_rng(0))
    assert calls[0] and not any(calls[1:])
    assert K * (len(calls) - 1) == count_vertex_draws(steps, K, q)
    # The paper's count T K / q + q K + K bounds it.
    assert count_vertex_draws(steps, K, q) <= steps * K / q + q * K + K
    refreshes = refresh_steps(steps, q)
    assert np.all((refreshes <= q) | (refreshes % q == 0))


def test_solver_finds_the_best_vertex_of_a_linear_loss():
    """Linear loss <c, lambda>: the optimum is the vertex with the smallest
    c; with a large step the average concentrates there."""
    m = 50
    c = np.linspace(1.0, 2.0, m)
    c[17] = 0.0
    vertices = vertex_sampling_mirror_descent(
        lambda t, v: (np.arange(m), c), m, n_steps=200, n_draws=30,
        refreshes=refresh_steps(200, 10), step_size=1.0,
        rng=np.random.default_rng(4))
    assert np.mean(vertices == 17) > 0.7


def test_overflowed_prediction_contributes_zero():
    # Row 0's prediction is (2e308 + 2e308) - (2e308 + 2e308) = inf - inf:
    # its loss derivative is NaN and counts as 0, so the gradient is that of
    # the other rows.
    X = np.array([[1e308, 1e308, -1e308, -1e308],
                  [0.5, 0.25, 0.0, 1.0],
                  [-0.5, 1.0, 0.3, 0.0]])
    y = np.array([1.0, -1.0, 1.0])
    vs = VertexSet.l1_ball(4, 8.0)
    sampled = np.array([0, 1, 2, 3])  # +8 e_j for each j: the point (2, 2, 2, 2)
    oracle = linear_model_gradient(X, y, LogLoss(), vs, [np.arange(3)])
    vertices, values = oracle(0, sampled)
    assert np.all(np.isfinite(values))
    reference = linear_model_gradient(X[1:], y[1:], LogLoss(), vs, [np.arange(2)])
    _, expected = reference(0, sampled)
    np.testing.assert_allclose(values, expected * 2 / 3, rtol=1e-12)
