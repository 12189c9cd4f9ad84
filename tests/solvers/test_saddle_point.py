"""The saddle-point solver: draws, bookkeeping, and convergence on games
whose solution is known."""

import numpy as np
import scipy.sparse as sp

from skdpopt.losses import LogLoss
from skdpopt.solvers.mirror_descent import VertexSet
from skdpopt.solvers.saddle_point import (
    group_linear_model_oracle,
    saddle_point_mirror_descent,
)


def test_matching_pennies_converges_to_the_uniform_equilibrium():
    """Bilinear game min_x max_y x^T A y with A = [[1, -1], [-1, 1]] over
    two simplices: the unique equilibrium is (1/2, 1/2) for both, so the
    averages of the draws must approach it."""
    A = np.array([[1.0, -1.0], [-1.0, 1.0]])

    def oracle(t, x_drawn, y_drawn):
        x_bar = np.bincount(x_drawn, minlength=2) / len(x_drawn)
        y_bar = np.bincount(y_drawn, minlength=2) / len(y_drawn)
        return np.arange(2), A @ y_bar, A.T @ x_bar

    T, K = 4000, 8
    result = saddle_point_mirror_descent(
        oracle,
        2,
        2,
        n_steps=T,
        n_draws=K,
        x_step_size=0.05,
        y_step_size=0.05,
        rng=np.random.default_rng(0),
    )
    x = np.bincount(result.x_vertices.ravel(), minlength=2) / (T * K)
    y = np.bincount(result.y_vertices.ravel(), minlength=2) / (T * K)
    # Regret bound of entropic descent: gap <= log 2 / (tau T) + tau / 2
    # ~ 0.03; the draws' sampling error is ~1/sqrt(T K) = 0.006.
    assert np.abs(x - 0.5).max() < 0.05
    assert np.abs(y - 0.5).max() < 0.05


def test_intercept_game_reaches_the_minimax_not_the_average():
    """Intercept-only model c; group 0 (80% of rows) is 90% positive,
    group 1 is 40% positive.  Group losses ``L0 = 0.9 l(c) + 0.1 l(-c)``
    and ``L1 = 0.4 l(c) + 0.6 l(-c)``, l(c) = log(1 + exp(-c)).  Weighing
    the groups equally (a frozen adversary) gives sigma(c) = 0.65,
    c = 0.62; the worst-group solution is c = 0 where L0 = L1, and there
    the adversary's weights must cancel the gradients,
    ``-0.4 y0 + 0.1 y1 = 0``, so y1 = 0.8."""
    rng = np.random.default_rng(1)
    n, T, K = 20000, 2000, 10
    groups = (rng.random(n) < 0.2).astype(int)
    X = np.zeros((n, 1))
    positive = rng.random(n) < np.where(groups == 0, 0.9, 0.4)
    y = np.where(positive, 1.0, -1.0)
    vertex_set = VertexSet.l1_ball(2, 2.0)
    batches = np.array_split(rng.permutation(n), T)

    def run(y_step):
        oracle = group_linear_model_oracle(
            X,
            y,
            groups,
            np.array([0.8, 0.2]),
            LogLoss(),
            vertex_set,
            batches,
            intercept_value=1.0,
        )
        result = saddle_point_mirror_descent(
            oracle,
            vertex_set.n_vertices,
            2,
            n_steps=T,
            n_draws=K,
            x_step_size=0.05,
            y_step_size=y_step,
            rng=np.random.default_rng(3),
        )
        intercept = vertex_set.point(result.x_vertices.ravel())[1]
        share = np.bincount(result.y_vertices.ravel(), minlength=2) / (T * K)
        return result, intercept, share

    result, intercept, share = run(0.2)
    assert result.x_vertices.shape == result.y_vertices.shape == (T, K)
    # Thresholds half-way between the two outcomes (0 vs 0.62, 0.8 vs 0.5).
    assert abs(intercept) < 0.31
    assert share[1] > 0.65
    _, frozen_intercept, frozen_share = run(0.0)
    assert frozen_intercept > 0.31 and frozen_share[1] < 0.65


def test_oracle_gradients_match_a_direct_computation():
    rng = np.random.default_rng(2)
    n, d = 60, 4
    X = rng.uniform(-1, 1, (n, d))
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    groups = rng.integers(0, 3, n)
    p = np.array([0.5, 0.3, 0.2])
    vertex_set = VertexSet.l1_ball(d + 1, 2.0)
    batches = [np.arange(n)]
    x_drawn, y_drawn = np.array([0, 6, 3]), np.array([2, 2, 0])
    oracle = group_linear_model_oracle(
        X,
        y,
        groups,
        p,
        LogLoss(),
        vertex_set,
        batches,
        intercept_value=1.0,
        loss_center=0.3,
    )
    vertices, gx, gy = oracle(0, x_drawn, y_drawn)
    point = vertex_set.point(x_drawn)
    margin = X @ point[:d] + point[d]
    loss = np.logaddexp(0, -y * margin)
    w = 1.0 / (n * p[groups])
    expected_gy = np.array([np.sum(((loss - 0.3) * w)[groups == g]) for g in range(3)])
    np.testing.assert_allclose(gy, expected_gy)
    y_bar = np.array([1 / 3, 0, 2 / 3])
    dloss = -y / (1 + np.exp(y * margin))
    feature_grad = np.append(
        X.T @ (dloss * w * y_bar[groups]), np.sum(dloss * w * y_bar[groups])
    )
    dense = np.zeros(vertex_set.n_vertices)
    dense[vertices] = gx
    np.testing.assert_allclose(dense[: d + 1], 2.0 * feature_grad)
    np.testing.assert_allclose(dense[d + 1 :], -2.0 * feature_grad)
    # Sparse input gives the same gradient on the features it touches.
    oracle_sparse = group_linear_model_oracle(
        sp.csr_matrix(X),
        y,
        groups,
        p,
        LogLoss(),
        vertex_set,
        batches,
        intercept_value=1.0,
        loss_center=0.3,
    )
    v2, gx2, gy2 = oracle_sparse(0, x_drawn, y_drawn)
    dense2 = np.zeros(vertex_set.n_vertices)
    dense2[v2] = gx2
    np.testing.assert_allclose(dense2, dense)
    np.testing.assert_allclose(gy2, gy)


def test_first_step_at_the_start_mean_and_last_draws_after_the_last_update():
    """Step 1's gradient point is every vertex once (the uniform start's
    mean, public); step t > 1 gets the draws made after step t - 1; the last
    row of draws comes from x_{T+1}, so the last batch counts."""
    T, K, m, G = 5, 4, 6, 3
    seen = []

    def oracle(t, x_drawn, y_drawn):
        seen.append((t, np.array(x_drawn), np.array(y_drawn)))
        # Only the last step's gradient moves the weights: all onto vertex 2.
        gradient = np.zeros(m)
        if t == T - 1:
            gradient[2] = -50.0  # weight 1 - 5 e^-50 on vertex 2
        return np.arange(m), gradient, np.zeros(G)

    result = saddle_point_mirror_descent(
        oracle,
        m,
        G,
        n_steps=T,
        n_draws=K,
        x_step_size=1.0,
        y_step_size=1.0,
        rng=np.random.default_rng(0),
    )
    assert [t for t, _, _ in seen] == list(range(T))
    np.testing.assert_array_equal(seen[0][1], np.arange(m))
    np.testing.assert_array_equal(seen[0][2], np.arange(G))
    for t in range(1, T):
        np.testing.assert_array_equal(seen[t][1], result.x_vertices[t - 1])
        np.testing.assert_array_equal(seen[t][2], result.y_vertices[t - 1])
    assert result.x_vertices.shape == result.y_vertices.shape == (T, K)
    np.testing.assert_array_equal(result.x_vertices[-1], 2)
    # Before the last update the weights were uniform: P(all K draws of
    # the T - 1 earlier rows on vertex 2) = 6^-16.
    assert np.any(result.x_vertices[:-1] != 2)
