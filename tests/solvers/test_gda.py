"""The gradient descent-ascent solver: sensitivities, projections, optimum."""

import numpy as np
import pytest
import scipy.sparse as sp

from skdpopt.plans.minimax_gda import GDAStage
from skdpopt.solvers.gda import (
    noisy_gda,
    project_capped_simplex,
    release_row_norm,
    row_norms,
    step_sums,
)
from skdpopt.solvers.problems import GroupProblem


def _data(rng, n=60, d=4, n_groups=3):
    X = rng.uniform(-1, 1, size=(n, d))
    target = rng.choice([-1.0, 1.0], size=n)
    codes = rng.integers(0, n_groups, size=n)
    return X, target, codes


@pytest.mark.parametrize("seed", range(20))
def test_replace_one_moves_the_sums_within_their_sensitivities(seed):
    """One row replaced, its group changed or not, at any model and any
    group weights in [0, 1]: the gradient sum moves by at most
    2 sqrt(C^2 + b^2) (the coefficients' part clipped to C, the intercept's
    at most b) and the loss sums by at most l_max (both in l2)."""
    rng = np.random.default_rng(seed)
    X, target, codes = _data(rng)
    X2, target2, codes2 = X.copy(), target.copy(), codes.copy()
    i = rng.integers(len(target))
    # The replacement: at the bounds, with the other label, in another
    # group (or the same one for odd seeds).
    X2[i] = rng.choice([-1.0, 1.0], size=X.shape[1])
    target2[i] = -target[i]
    codes2[i] = codes[i] if seed % 2 else (codes[i] + 1) % 3
    w = rng.normal(scale=3.0, size=X.shape[1] + 1)
    weight = rng.uniform(0, 1, size=3)
    weight[rng.integers(3)] = 1.0
    clip, bound, b = 0.7, 1.5, 0.8
    sums = [step_sums(A, t, c, w, weight, row_norms(A), clip_norm=clip,
                      loss_bound=bound, intercept_value=b)
            for A, t, c in ((X, target, codes), (X2, target2, codes2))]
    assert (np.linalg.norm(sums[0][0] - sums[1][0])
            <= 2 * np.hypot(clip, b) * (1 + 1e-12))
    assert np.linalg.norm(sums[0][1] - sums[1][1]) <= bound * (1 + 1e-12)


def test_the_group_move_reaches_the_loss_bound_over_sqrt_two():
    """A row moving groups with its loss at either bound changes two sums
    by l_max / 2 each: the centring halves the sqrt(2) l_max of raw sums."""
    X = np.zeros((2, 1))
    target = np.array([1.0, 1.0])
    w = np.array([0.0, -50.0])  # loss 50 on every row: clipped to l_max
    bound = 2.0
    weight = np.ones(2)
    norms = row_norms(X)
    a = step_sums(X, target, np.array([0, 1]), w, weight, norms, clip_norm=1.0,
                  loss_bound=bound, intercept_value=1.0)[1]
    b = step_sums(X, target, np.array([1, 1]), w, weight, norms, clip_norm=1.0,
                  loss_bound=bound, intercept_value=1.0)[1]
    assert np.linalg.norm(a - b) == pytest.approx(bound / np.sqrt(2))


def test_sparse_norms_and_sums_match_dense():
    rng = np.random.default_rng(0)
    X, target, codes = _data(rng)
    X[X < 0.3] = 0.0
    w = rng.normal(size=X.shape[1] + 1)
    dense = step_sums(X, target, codes, w, np.ones(3), row_norms(X),
                      clip_norm=1.0, loss_bound=2.0, intercept_value=1.0)
    S = sp.csr_matrix(X)
    sparse = step_sums(S, target, codes, w, np.ones(3), row_norms(S),
                       clip_norm=1.0, loss_bound=2.0, intercept_value=1.0)
    np.testing.assert_allclose(dense[0], sparse[0])
    np.testing.assert_allclose(dense[1], sparse[1])


def test_the_intercept_gradient_is_not_clipped():
    """The intercept's coordinate of the gradient sum is the unclipped
    ``-b sum_i a_i y_i sigma_i`` whatever C: clipping never moves the
    calibration, and the worst case sqrt(C^2 + b^2) is reached."""
    rng = np.random.default_rng(3)
    X, target, codes = _data(rng)
    w = rng.normal(scale=3.0, size=X.shape[1] + 1)
    weight = rng.uniform(0, 1, size=3)
    margin = target * (X @ w[:-1] + 0.5 * w[-1])
    sigma = 1.0 / (1.0 + np.exp(margin))
    expected = 0.5 * np.sum(-target * sigma * weight[codes])
    for clip in (1e-3, 0.3, np.inf):
        grad = step_sums(X, target, codes, w, weight, row_norms(X),
                         clip_norm=clip, loss_bound=1.0, intercept_value=0.5)[0]
        assert grad[-1] == pytest.approx(expected, rel=1e-12)
    # One row whose features' part is clipped to C and whose sigma is ~1:
    # its gradient's norm is sqrt(C^2 + b^2).
    one = step_sums(np.ones((1, 4)), np.array([1.0]), np.array([0]),
                    np.array([0.0, 0.0, 0.0, 0.0, -60.0]), np.ones(1),
                    row_norms(np.ones((1, 4))), clip_norm=0.3, loss_bound=1.0,
                    intercept_value=0.5)[0]
    assert np.linalg.norm(one) == pytest.approx(np.hypot(0.3, 0.5), rel=1e-9)


def test_capped_projection_is_the_kl_projection():
    rng = np.random.default_rng(1)
    for _ in range(50):
        m = rng.integers(2, 7)
        p = rng.dirichlet(np.ones(m))
        caps = rng.uniform(1.0, 4.0) * p
        u = rng.exponential(size=m)
        q = project_capped_simplex(u, caps)
        assert q.sum() == pytest.approx(1.0)
        assert np.all(q <= caps * (1 + 1e-12))
        # KKT of min KL(q || u): q = min(cap, lambda u) for one lambda.
        free = q < caps * (1 - 1e-9)
        if free.any():
            lam = (q[free] / u[free]).mean()
            np.testing.assert_allclose(q[free] / u[free], lam, rtol=1e-9)
            assert np.all(lam * u[~free] >= caps[~free] * (1 - 1e-9))


def test_capped_projection_with_caps_summing_to_one_is_the_caps():
    """kappa = 1: the only point of the capped simplex is p (no 0 / 0)."""
    p = np.array([0.5, 0.3, 0.2])
    for u in (np.array([5.0, 1.0, 1.0]), np.array([1.0, 1.0, 9.0]), p):
        np.testing.assert_allclose(project_capped_simplex(u, p.copy()), p)


def test_without_noise_reaches_the_worst_group_optimum():
    """Two groups whose best models disagree: the minimax model equalises
    their losses, the average-loss model does not."""
    rng = np.random.default_rng(0)
    n = 4000
    codes = (rng.random(n) < 0.1).astype(int)
    X = rng.uniform(-1, 1, size=(n, 1))
    logit = np.where(codes == 0, 3 * X[:, 0], -3 * X[:, 0] + 1.0)
    target = np.where(rng.random(n) < 1 / (1 + np.exp(-logit)), 1.0, -1.0)
    counts = np.bincount(codes).astype(float)
    p = counts / n
    common = dict(proportions=p, group_sizes=counts, n_steps=400, clip_norm=np.inf,
                  weight_decay=0.0, noise_multiplier=0.0, loss_bound=np.inf,
                  loss_noise_multiplier=0.0, radius=10.0, step_size=0.5,
                  group_step_size=3.0)
    problem = GroupProblem(X, target, codes, 2, intercept_value=1.0)
    rng = np.random.default_rng(0)
    minimax = noisy_gda(problem, GDAStage(kappa=1 / p.min(), **common), rng)
    erm = noisy_gda(problem, GDAStage(kappa=1.0, **common), rng)

    def group_losses(result):
        z = target * (X[:, 0] * result.coef[0] + result.intercept)
        loss = np.logaddexp(0, -z)
        return np.array([loss[codes == g].mean() for g in (0, 1)])

    # A grid search over (w, b) gives the exact minimax.
    grid_w, grid_b = np.meshgrid(np.linspace(-3, 3, 121), np.linspace(-2, 2, 81))
    z = target[:, None] * (X[:, :1] * grid_w.ravel() + grid_b.ravel())
    loss = np.logaddexp(0, -z)
    worst = np.maximum(loss[codes == 0].mean(0), loss[codes == 1].mean(0)).min()
    assert group_losses(minimax).max() <= worst + 0.005
    assert group_losses(erm).max() > worst + 0.05
    assert minimax.group_weights[1] > 0.3  # the small group is weighed up
    np.testing.assert_allclose(erm.group_weights, p, rtol=1e-9)


def test_row_norm_without_draws_is_none_and_draws_nothing():
    """A public clip norm: no release, and the generator is untouched (the
    fit's later draws are those of a fit without the row-norm stage)."""
    rng = np.random.default_rng(0)
    X, target, codes = _data(rng)
    problem = GroupProblem(X, target, codes, 3, None)
    state = rng.bit_generator.state
    assert release_row_norm(problem, None, rng) is None
    assert rng.bit_generator.state == state
