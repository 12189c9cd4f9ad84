"""Noisy, clipped, Poisson-subsampled SGD for linear models (DP-SGD).

One step: draw a Poisson sample of the rows, clip each example's gradient
(with respect to coefficients and intercept together) to L2 norm C, sum,
add ``N(0, (noise_multiplier * C)^2 I)``, divide by the expected batch size
``q n`` (public, unlike the realised size), add the L2 penalty's gradient
and take a step.  Full batch (q = 1) is NoisyGD.  With ``single_pass`` each
row contributes its gradient only the first time it is sampled (later draws
of it add nothing, so those steps are partly or wholly noise-only), as in
the linear-time algorithm of "Private stochastic convex optimization:
efficient algorithms for non-smooth objectives" (arXiv:2002.09609, 2020),
which the estimators run for ``log 2 / q`` steps, until about half of the
rows have been seen.

For a linear model the gradient of example i is ``r_i (x_i, 1)`` with
``r_i = dloss(p_i, y_i)``, so its norm is ``|r_i| ||(x_i, 1)||``:
clipping rescales ``r_i``, to ``[-C / ||(x_i, 1)||, C / ||(x_i, 1)||]``, and
per-example gradient vectors never exist.  The norms are computed once, in
float64 and without overflow; a row whose norm exceeds the float64 maximum,
and a residual that is NaN (``inf - inf`` in the prediction of an extreme
row), contribute the zero vector (docs/privacy/dpsgd.md).
"""

import time

import numpy as np

from .._data import linear_rows
from ..mechanisms import gaussian_noise
from .problems import LinearResult

# Noise and batches for up to this many steps are drawn at once, to amortise
# call overhead; fewer steps when the model is wide or the batches large, so
# that each block stays under _NOISE_BLOCK_VALUES values (32 MB) instead of
# growing with n_features or n_samples.
_BLOCK_STEPS = 256
_NOISE_BLOCK_VALUES = 2**22


# An extreme row can overflow a prediction (clipping then handles it); the
# floating-point warning would say so, outside the privacy guarantee.
@np.errstate(over="ignore", invalid="ignore")
def noisy_sgd(problem, plan, rng, *, verbose=0):
    """Run DP-SGD on a linear model.

    Parameters
    ----------
    problem : skdpopt.solvers.problems.LinearProblem
        ``X`` and ``y`` (read through :mod:`skdpopt._data`, a Dask array
        block by block; labels in {-1, +1} for classification losses),
        ``loss`` (from :mod:`skdpopt.losses`), ``clip_norm`` C (per-example
        gradient norm bound), ``alpha`` (L2 penalty strength: its gradient
        ``alpha * coef`` is data-free), ``fit_intercept`` and ``radius``
        (if set, coefficients are projected onto the L2 ball of this
        radius).
    plan : DPSGDPlan
        Reads ``sampling_rate`` q in (0, 1], ``n_steps`` T,
        ``noise_multiplier`` (noise std over C; 0 runs without privacy),
        ``step_size(t)``, ``average_start`` (step from which iterates are
        averaged into the output; None for the last iterate),
        ``single_pass`` (use each row's gradient at most once) and
        ``n_epochs`` (for progress messages only).
    rng : numpy.random.Generator
    verbose : int, default=0

    Returns
    -------
    LinearResult
    """
    sampling_rate, n_steps = plan.sampling_rate, plan.n_steps
    clip_norm, alpha = problem.clip_norm, problem.alpha
    fit_intercept, radius = problem.fit_intercept, problem.radius
    single_pass, average_start = plan.single_pass, plan.average_start
    data = linear_rows(problem.X, problem.y, problem.loss, clip_norm=clip_norm,
                       fit_intercept=fit_intercept)
    if single_pass and not data.in_memory:
        raise ValueError("single_pass sampling needs the rows in memory (it "
                         "tracks which rows were seen); use 'poisson' or 'full'")
    n_samples, n_features = data.n_samples, data.n_features
    full_batch = sampling_rate >= 1.0
    denominator = sampling_rate * n_samples
    noise_std = plan.noise_multiplier * clip_norm
    dim = n_features + int(fit_intercept)

    coef = np.zeros(n_features)
    intercept = 0.0
    coef_sum = np.zeros(n_features)
    intercept_sum = 0.0
    n_averaged = 0
    seen = np.zeros(n_samples, dtype=bool) if single_pass else None
    start = time.perf_counter()

    # Noise and batches are drawn a block of steps at a time (see
    # _BLOCK_STEPS); the batches' rows are skipped for full batches.
    rows_per_step = 0 if full_batch else sampling_rate * n_samples
    block = max(1, min(_BLOCK_STEPS, _NOISE_BLOCK_VALUES // dim,
                       int(_NOISE_BLOCK_VALUES // max(rows_per_step, 1.0))))
    sampler = (None if full_batch
               else data.poisson_sampler(rng, sampling_rate, n_steps, block))
    for t in range(n_steps):
        i = t % block
        if i == 0 and not full_batch:
            noise = gaussian_noise(rng, noise_std, (min(block, n_steps - t), dim))
        source, rows = (data, None) if full_batch else sampler.batch(t)
        if single_pass:
            rows = np.arange(n_samples) if rows is None else rows
            rows = rows[~seen[rows]]
            seen[rows] = True
        # The clipped gradients' sum: r_i (x_i, 1) clipped to norm C by
        # clipping r_i (NaN -> 0).
        grad_coef, grad_intercept = source.gradient_sum(coef, intercept, rows)
        if i == 0 and full_batch:
            # Full batches draw nothing but noise: drawn once the first sum
            # is in, so that a fit whose first pass over the data fails has
            # drawn nothing, and is withdrawn from the ledgers (the stream
            # of draws is the same).
            noise = gaussian_noise(rng, noise_std, (min(block, n_steps - t), dim))
        step_noise = noise[i]
        eta = plan.step_size(t)
        # The step on the coefficients: eta / (q n) times the noisy sum.
        grad_coef += step_noise[:n_features]
        grad_coef *= eta / denominator
        if alpha:
            grad_coef += (eta * alpha) * coef
        coef -= grad_coef
        if fit_intercept:
            intercept -= eta * (grad_intercept + step_noise[n_features]) / denominator
        if radius is not None:
            norm = np.linalg.norm(coef)
            if norm > radius:
                coef *= radius / norm
        if average_start is not None and t >= average_start:
            coef_sum += coef
            intercept_sum += intercept
            n_averaged += 1
        if verbose:
            epoch = (t + 1) * plan.n_epochs // n_steps
            if epoch > t * plan.n_epochs // n_steps:
                print(
                    f"-- Epoch {epoch}\n"
                    f"Norm: {np.linalg.norm(coef):.2f}, Bias: {intercept:.6f}, "
                    f"T: {t + 1}, Elapsed: {time.perf_counter() - start:.2f} s"
                )

    if n_averaged:
        coef, intercept = coef_sum / n_averaged, intercept_sum / n_averaged
    return LinearResult(coef=coef, intercept=float(intercept))
