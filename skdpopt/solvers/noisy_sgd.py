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
from dataclasses import dataclass
from functools import partial

import numpy as np

from .._data import linear_rows
from ..accounting import SubsampledGaussianMechanism
from ..geometry import project_polytope
from ..mechanisms import gaussian_noise
from .problems import LinearResult

# Step size of DP-SGD over the polytope (DPSGDClassifier's default eta0).
SGD_STEP = 0.5

# Noise and batches for up to this many steps are drawn at once, to amortise
# call overhead; fewer steps when the model is wide or the batches large, so
# that each block stays under _NOISE_BLOCK_VALUES values (32 MB) instead of
# growing with n_features or n_samples.
_BLOCK_STEPS = 256
_NOISE_BLOCK_VALUES = 2**22


@dataclass
class NoisySGDResult:
    """Output of :func:`noisy_sgd`.

    Attributes
    ----------
    coef : ndarray of shape (n_features,)
    intercept : float
    n_steps : int
        Number of noisy steps taken.
    mechanism : SubsampledGaussianMechanism
        What each step released; the run composes it ``n_steps`` times.
    """

    coef: np.ndarray
    intercept: float
    n_steps: int
    mechanism: SubsampledGaussianMechanism


def learning_rate_schedule(kind, eta0, power_t):
    """Step size as a function of the step number t = 0, 1, ...

    Parameters
    ----------
    kind : {"constant", "invscaling"}
    eta0 : float
    power_t : float

    Returns
    -------
    callable
    """
    if kind == "constant":
        return lambda t: eta0
    if kind == "invscaling":
        return lambda t: eta0 / (t + 1.0) ** power_t
    raise ValueError(f"unknown learning rate schedule {kind!r}")


# An extreme row can overflow a prediction (clipping then handles it); the
# floating-point warning would say so, outside the privacy guarantee.
@np.errstate(over="ignore", invalid="ignore")
def noisy_sgd(
    X,
    y,
    loss,
    *,
    sampling_rate,
    n_steps,
    clip_norm,
    noise_multiplier,
    learning_rate,
    alpha,
    fit_intercept,
    average_start,
    radius,
    single_pass,
    rng,
    n_epochs,
    intercept_init=0.0,
    sample_weight=None,
    weight_scale=1.0,
    projection=None,
    verbose=0,
):
    """Run DP-SGD on a linear model.

    Parameters
    ----------
    X : ndarray, CSR matrix or dask.array.Array of shape (n_samples, n_features)
        Rows are read through :mod:`skdpopt._data` (a Dask array block by
        block).
    y : ndarray or dask.array.Array of shape (n_samples,)
        Targets (labels in {-1, +1} for classification losses).
    loss : object
        A loss from :mod:`skdpopt.losses`.
    sampling_rate : float
        Poisson sampling rate q in (0, 1].
    n_steps : int
        Number of steps T.
    clip_norm : float
        Per-example gradient norm bound C.
    noise_multiplier : float
        Noise std over C; 0 runs without privacy.
    learning_rate : callable
        Step size as a function of the step number.
    alpha : float
        L2 penalty strength (its gradient ``alpha * coef`` is data-free).
    fit_intercept : bool
    average_start : int or None
        Step from which iterates are averaged into the output; ``None`` for
        the last iterate.
    radius : float or None
        If set, coefficients are projected onto the L2 ball of this radius.
    single_pass : bool
        Use each row's gradient at most once.
    rng : numpy.random.Generator
    n_epochs : int
        Number of epochs the steps make up; used for progress messages only.
    intercept_init : float, default=0.0
        Starting intercept (public, or released before the run).
    sample_weight : ndarray of shape (n_samples,) or None, default=None
        Row weights in [0, 1], multiplying each derivative before the clip
        (the sensitivity stays that of unweighted rows).
    weight_scale : float, default=1.0
        What the weights were divided by to lie in [0, 1] (the largest
        weight a row can carry): the noisy gradient is multiplied by it, so
        the steps are those of the weighted objective, noise included.
    projection : callable or None, default=None
        Maps the coefficients back onto a constraint set after each step
        (after the ``radius`` projection, if any).
    verbose : int, default=0

    Returns
    -------
    NoisySGDResult
    """
    data = linear_rows(X, y, loss, clip_norm=clip_norm, fit_intercept=fit_intercept,
                       sample_weight=sample_weight)
    if single_pass and not data.in_memory:
        raise ValueError("single_pass sampling needs the rows in memory (it "
                         "tracks which rows were seen); use 'poisson' or 'full'")
    n_samples, n_features = data.n_samples, data.n_features
    full_batch = sampling_rate >= 1.0
    denominator = sampling_rate * n_samples / weight_scale
    noise_std = noise_multiplier * clip_norm
    dim = n_features + int(fit_intercept)

    coef = np.zeros(n_features)
    intercept = float(intercept_init) if fit_intercept else 0.0
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
        eta = learning_rate(t)
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
        if projection is not None:
            coef = projection(coef)
        if average_start is not None and t >= average_start:
            coef_sum += coef
            intercept_sum += intercept
            n_averaged += 1
        if verbose:
            epoch = (t + 1) * n_epochs // n_steps
            if epoch > t * n_epochs // n_steps:
                print(
                    f"-- Epoch {epoch}\n"
                    f"Norm: {np.linalg.norm(coef):.2f}, Bias: {intercept:.6f}, "
                    f"T: {t + 1}, Elapsed: {time.perf_counter() - start:.2f} s"
                )

    if n_averaged:
        coef, intercept = coef_sum / n_averaged, intercept_sum / n_averaged
    return NoisySGDResult(
        coef=coef,
        intercept=float(intercept),
        n_steps=n_steps,
        mechanism=SubsampledGaussianMechanism(
            min(sampling_rate, 1.0), noise_multiplier),
    )


def polytope_sgd_logistic(problem, plan, rng, *, verbose=0):
    """DP-SGD on the logistic loss over the l1 ball or the simplex
    (DPLogisticSimplex's ``solver="sgd"``).

    The rows are clipped to the feature bound b, each example's gradient
    to norm ``SGD_CLIP b`` (:mod:`skdpopt.plans.logistic_simplex`), and the
    coefficients are projected back onto the polytope after every step;
    the intercept stays outside it.  The weighting (class totals, class and
    sample weights) starts the intercept, which is calibrated after the
    run (:func:`skdpopt.solvers.classes.calibrate_intercept`).

    Parameters
    ----------
    problem : skdpopt.solvers.problems.LinearProblem
        ``X`` already clipped to ``feature_bound``, ``y`` the +-1 targets,
        ``radius``, ``constraint``, ``fit_intercept``, ``clip_norm`` and
        ``weighting`` (a :class:`skdpopt.solvers.classes.WeightedProblem`).
    plan : DPSGDPlan
    rng : numpy.random.Generator
    verbose : int, default=0

    Returns
    -------
    LinearResult
    """
    weighting = problem.weighting
    result = noisy_sgd(
        problem.X, problem.y, weighting.loss, sampling_rate=plan.sampling_rate,
        n_steps=plan.n_steps, clip_norm=problem.clip_norm,
        noise_multiplier=plan.noise_multiplier,
        learning_rate=learning_rate_schedule("constant", SGD_STEP, 0.0),
        alpha=0.0, fit_intercept=problem.fit_intercept,
        average_start=plan.average_start, radius=None, single_pass=False,
        rng=rng, n_epochs=plan.n_epochs,
        projection=partial(project_polytope, radius=problem.radius,
                           constraint=problem.constraint),
        verbose=verbose, **weighting.solver_args())
    intercept = result.intercept
    if plan.calibration_steps:
        intercept = weighting.calibrated_intercept(problem.X, result.coef,
                                                   intercept, plan, rng)
    return LinearResult(result.coef, float(intercept))
