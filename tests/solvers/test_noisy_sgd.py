"""The DP-SGD solver: clipping, sampling and the single-pass rule."""

import tracemalloc

import numpy as np
from scipy import stats

from skdpopt.accounting import EpsilonDeltaEvent
from skdpopt.losses import SquaredError
from skdpopt.plans.sgd import DPSGDPlan
from skdpopt.solvers.noisy_sgd import noisy_sgd
from skdpopt.solvers.problems import LinearProblem


def run(X, y, loss=None, *, clip_norm=1.0, alpha=0.0, fit_intercept=True,
        radius=None, **overrides):
    """One DP-SGD run with a hand-made plan (constant step 1 by default)."""
    plan = dict(sampling_rate=1.0, n_steps=1, n_epochs=1, n_problems=1,
                noise_multiplier=0.0, average_start=None, single_pass=False,
                learning_rate="constant", eta0=1.0)
    plan.update(overrides)
    problem = LinearProblem(X, y, fit_intercept, loss=loss or SquaredError(),
                            clip_norm=clip_norm, alpha=alpha, radius=radius)
    return noisy_sgd(problem, DPSGDPlan(np.inf, 0.0, EpsilonDeltaEvent(np.inf, 0.0),
                                        **plan), np.random.default_rng(0))


def test_one_full_batch_step_is_the_mean_clipped_gradient():
    rng = np.random.default_rng(0)
    X = rng.normal(scale=2.0, size=(50, 3))
    y = rng.normal(scale=3.0, size=50)
    result = run(X, y, clip_norm=0.7)
    # Naive reference: per-example gradients of (w, b) at zero, clipped.
    grads = np.column_stack([X, np.ones(50)]) * (0.0 - y)[:, None]
    norms = np.linalg.norm(grads, axis=1, keepdims=True)
    clipped = grads * np.minimum(1.0, 0.7 / norms)
    expected = -clipped.mean(axis=0)
    np.testing.assert_allclose(result.coef, expected[:3])
    np.testing.assert_allclose(result.intercept, expected[3])


def test_noise_has_the_calibrated_scale():
    k = 150
    X = np.zeros((100, k))
    y = np.zeros(100)
    steps = 200
    result = run(X, y, n_steps=steps, noise_multiplier=2.0, clip_norm=0.5,
                 fit_intercept=False,
                 eta0=1.0)
    # With zero data the iterate is minus the sum of the noises divided by
    # n: each coordinate ~ N(0, steps (2 * 0.5 / 100)^2), and the mean
    # square over k coordinates is that variance times chi2_k / k.
    # Accepting [1/2, 2] of it fails with probability
    # chi2.sf(2k, k) + chi2.cdf(k/2, k) = 4.6e-8, and passes half the noise
    # (mean square 1/4 of it) with chi2.sf(2k, k) = 4.5e-12, double the
    # noise with chi2.cdf(k/2, k) = 4.6e-8.
    variance = steps * (2.0 * 0.5 / 100) ** 2
    assert 0.5 <= np.mean(result.coef**2) / variance <= 2.0
    assert stats.chi2.sf(2 * k, k) + stats.chi2.cdf(k / 2, k) < 1e-7


class RecordingLoss(SquaredError):
    """Squared error that records the targets it is asked about (row ids)."""

    def __init__(self):
        self.seen = []

    def derivative(self, p, y):
        self.seen.extend(np.asarray(y).tolist())
        return np.zeros_like(p)


def test_single_pass_uses_each_row_at_most_once():
    n = 300
    loss = RecordingLoss()
    run(np.ones((n, 2)), np.arange(n, dtype=float), loss=loss, sampling_rate=0.05,
        n_steps=60, single_pass=True)
    assert len(loss.seen) == len(set(loss.seen))
    # 60 steps at rate 0.05 see about 1 - 0.95^60 = 95% of the rows.
    assert len(loss.seen) > 0.8 * n


def test_poisson_steps_resample_rows():
    n = 300
    loss = RecordingLoss()
    run(np.ones((n, 2)), np.arange(n, dtype=float), loss=loss, sampling_rate=0.05,
        n_steps=60)
    assert len(loss.seen) > len(set(loss.seen))


def test_projection_keeps_coefficients_in_the_ball():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(200, 5))
    y = X @ np.full(5, 10.0)
    result = run(X, y, n_steps=50, radius=0.5, clip_norm=10.0)
    assert np.linalg.norm(result.coef) <= 0.5 + 1e-12


def test_averaging_returns_the_mean_iterate():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(100, 2))
    y = X @ [1.0, -1.0]
    last = run(X, y, n_steps=3, eta0=0.5)
    averaged = run(X, y, n_steps=3, average_start=0, eta0=0.5)
    iterates = [run(X, y, n_steps=k, eta0=0.5).coef for k in (1, 2, 3)]
    np.testing.assert_allclose(averaged.coef, np.mean(iterates, axis=0))
    np.testing.assert_allclose(last.coef, iterates[-1])


def test_memory_stays_near_one_batch():
    """No n-by-d matrix of per-example gradients: one n-vector plus batches."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200_000, 50))
    y = X[:, 0].copy()
    settings = dict(sampling_rate=256 / 200_000, n_steps=100, noise_multiplier=1.0)
    run(X[:20_000], y[:20_000], **settings)  # warm up imports and caches
    tracemalloc.start()
    run(X, y, **settings)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    # X is 80 MB; the example norms are one n-vector (1.6 MB) and a batch of
    # 256 rows is 0.1 MB: allow 2.5 MB, a thirtieth of X.
    assert peak < 2.5e6


def test_extreme_rows_contribute_clipped_or_zero_gradients():
    # Row 0's norm is finite but its square overflows: it contributes its
    # gradient clipped to norm C exactly.  Row 1's norm exceeds the float64
    # maximum: it contributes the zero vector (the fixed rule).
    rng = np.random.default_rng(1)
    X = rng.normal(size=(40, 3))
    y = rng.normal(size=40)
    X[0] = [1e300, -1e300, 0.0]
    X[1] = [1.5e308, -1.5e308, 1.5e308]
    result = run(X, y, clip_norm=0.5)
    # Naive reference for the ordinary rows, then the two extreme ones.
    ordinary = np.column_stack([X, np.ones(40)])
    ordinary[:2] = 0.0
    grads = ordinary * (0.0 - y)[:, None]
    norms = np.maximum(np.linalg.norm(grads, axis=1, keepdims=True), 1e-300)
    clipped = grads * np.minimum(1.0, 0.5 / norms)
    clipped[0] = 0.5 * np.sign(-y[0]) * np.array([1.0, -1.0, 0.0, 0.0]) / np.sqrt(2.0)
    expected = -clipped.mean(axis=0)
    np.testing.assert_allclose(result.coef, expected[:3], rtol=1e-12)
    np.testing.assert_allclose(result.intercept, expected[3], rtol=1e-12)


def test_overflowed_predictions_stay_finite():
    # Large steps drive the coefficients past 1.8, so that the extreme row's
    # prediction is inf - inf = NaN: its residual then counts as zero.
    rng = np.random.default_rng(2)
    X = rng.normal(size=(100, 2))
    y = rng.normal(size=100)
    X[0] = [1e308, -1e308]
    for sampling_rate in (1.0, 0.5):
        result = run(X, y, n_steps=30, sampling_rate=sampling_rate,
                     noise_multiplier=1.0,
                     eta0=500.0)
        assert np.abs(result.coef).max() > 2.0  # the overflow did happen
        assert np.all(np.isfinite(result.coef)) and np.isfinite(result.intercept)
