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
from dataclasses import dataclass, field, replace
from functools import partial

import numpy as np

from .._data import linear_rows
from ..geometry import project_polytope
from ..mechanisms import gaussian_noise
from .problems import LinearResult

# Noise and batches for up to this many steps are drawn at once, to amortise
# call overhead; fewer steps when the model is wide or the batches large, so
# that each block stays under _NOISE_BLOCK_VALUES values (32 MB) instead of
# growing with n_features or n_samples.
_BLOCK_STEPS = 256
_NOISE_BLOCK_VALUES = 2**22


@dataclass
class Walk:
    """The iterate, its running average, and the epochs it completed since
    they were last reported (``(epoch, norm, bias, step)``)."""

    coef: np.ndarray
    intercept: float = 0.0
    coef_sum: np.ndarray = None
    intercept_sum: float = 0.0
    n_averaged: int = 0
    epochs: list = field(default_factory=list)


@dataclass(frozen=True)
class StepRule:
    """The public constants of a step: everything but the gradient's sum,
    its noise and the step size."""

    n_features: int
    fit_intercept: bool
    denominator: float
    alpha: float
    radius: float
    average_start: int
    n_steps: int
    n_epochs: int
    projection: object = None


def take_step(walk, rule, grad_coef, grad_intercept, noise, eta, t):
    """Step t from the clipped gradients' sum and its noise (in place).

    Called under the callers' ``np.errstate(over="ignore",
    invalid="ignore")``: an extreme row can overflow a prediction (clipping
    then handles it); the floating-point warning would say so, outside the
    privacy guarantee.
    """
    n_features = rule.n_features
    coef = walk.coef
    # The step on the coefficients: eta / (q n) times the noisy sum.
    grad_coef += noise[:n_features]
    grad_coef *= eta / rule.denominator
    if rule.alpha:
        grad_coef += (eta * rule.alpha) * coef
    coef -= grad_coef
    if rule.fit_intercept:
        walk.intercept -= eta * (grad_intercept + noise[n_features]) / rule.denominator
    if rule.radius is not None:
        norm = np.linalg.norm(coef)
        if norm > rule.radius:
            coef *= rule.radius / norm
    if rule.projection is not None:  # back onto a polytope (public)
        coef[:] = rule.projection(coef)
    if rule.average_start is not None and t >= rule.average_start:
        walk.coef_sum += coef
        walk.intercept_sum += walk.intercept
        walk.n_averaged += 1
    epoch = (t + 1) * rule.n_epochs // rule.n_steps
    if epoch > t * rule.n_epochs // rule.n_steps:
        walk.epochs.append((epoch, float(np.linalg.norm(coef)), walk.intercept, t + 1))


@np.errstate(over="ignore", invalid="ignore")
def sampled_steps(walk, batches, rule, noise, etas, start):
    """Steps ``start .. start + len(etas) - 1`` on sampled batches.

    ``batches`` gives each step's ``(source, rows)``, in order.  Run
    wherever the batches are: the fit's process, or the Dask worker that
    gathers them (then ``walk`` travels, a few numbers).
    """
    for i, (source, rows) in enumerate(batches):
        # The clipped gradients' sum: r_i (x_i, 1) clipped to norm C by
        # clipping r_i (NaN -> 0).
        grad_coef, grad_intercept = source.gradient_sum(walk.coef, walk.intercept,
                                                        rows)
        take_step(walk, rule, grad_coef, grad_intercept, noise[i], etas[i],
                  start + i)
    return walk


class _Noise:
    """The steps' noise, drawn ``block`` steps at a time, in step order."""

    def __init__(self, rng, std, n_steps, block, dim):
        self.rng, self.std, self.n_steps = rng, std, n_steps
        self.block, self.dim = block, dim
        self.drawn, self.rows = 0, np.empty((0, dim))

    def draw_block(self):
        t = self.drawn
        self.rows = gaussian_noise(self.rng, self.std,
                                   (min(self.block, self.n_steps - t), self.dim))
        self.first, self.drawn = t, t + len(self.rows)

    def steps(self, start, stop):
        """Noise rows of steps ``start .. stop - 1`` (asked for in order)."""
        parts = []
        while start < stop:
            if start >= self.drawn:
                self.draw_block()
            end = min(stop, self.drawn)
            parts.append(self.rows[start - self.first:end - self.first])
            start = end
        return parts[0] if len(parts) == 1 else np.concatenate(parts)


def _report(walk, start):
    """Print the epochs the walk completed since the last report."""
    for epoch, norm, bias, t in walk.epochs:
        print(f"-- Epoch {epoch}\n"
              f"Norm: {norm:.2f}, Bias: {bias:.6f}, "
              f"T: {t}, Elapsed: {time.perf_counter() - start:.2f} s")
    walk.epochs.clear()


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
        radius); ``weighting`` (a classifier's class and sample weights,
        :class:`skdpopt.solvers.classes.WeightedProblem`: its loss, its
        rows' weights in [0, 1] and its starting intercept replace ``loss``
        and ``intercept_init``) or ``intercept_init``.
    plan : DPSGDPlan
        Reads ``sampling_rate`` q in (0, 1], ``n_steps`` T,
        ``noise_multiplier`` (noise std over C; 0 runs without privacy),
        ``step_size(t)``, ``average_start`` (step from which iterates are
        averaged into the output; None for the last iterate),
        ``single_pass`` (use each row's gradient at most once) and
        ``n_epochs`` (for progress messages only); with a weighting,
        ``calibration_steps`` and ``calibration_noise`` (the intercept's
        calibration after the run).
    rng : numpy.random.Generator
    verbose : int, default=0

    Returns
    -------
    LinearResult
    """
    return _run(problem, plan, rng, verbose=verbose)


@np.errstate(over="ignore", invalid="ignore")
def _run(problem, plan, rng, *, projection=None, verbose=0):
    sampling_rate, n_steps = plan.sampling_rate, plan.n_steps
    clip_norm, fit_intercept = problem.clip_norm, problem.fit_intercept
    weighting = problem.weighting
    loss = weighting.loss if weighting is not None else problem.loss
    sample_weight = weighting.sample_weight if weighting is not None else None
    # Row weights in [0, 1] multiply each derivative before the clip (the
    # sensitivity stays that of unweighted rows); the noisy sum is then
    # multiplied back by what they were divided by, so the steps are those
    # of the weighted objective, noise included.
    weight_scale = weighting.weights.scale if weighting is not None else 1.0
    intercept_init = (weighting.intercept_init() if weighting is not None
                      else problem.intercept_init)
    if weighting is not None and weighting.step_scale != 1.0:
        # A step set from released class totals (post-processing).
        plan = replace(plan, eta0=plan.eta0 * weighting.step_scale)
    data = linear_rows(problem.X, problem.y, loss, clip_norm=clip_norm,
                       fit_intercept=fit_intercept, sample_weight=sample_weight)
    if plan.single_pass and not data.in_memory:
        raise ValueError("single_pass sampling needs the rows in memory (it "
                         "tracks which rows were seen); use 'poisson' or 'full'")
    n_samples, n_features = data.n_samples, data.n_features
    full_batch = sampling_rate >= 1.0
    dim = n_features + int(fit_intercept)
    rule = StepRule(n_features, fit_intercept,
                    sampling_rate * n_samples / weight_scale, problem.alpha,
                    problem.radius, plan.average_start, n_steps, plan.n_epochs,
                    projection)
    walk = Walk(np.zeros(n_features),
                intercept=float(intercept_init) if fit_intercept else 0.0,
                coef_sum=np.zeros(n_features))
    start = time.perf_counter()

    # Noise and batches are drawn a block of steps at a time (see
    # _BLOCK_STEPS); the batches' rows are skipped for full batches.
    rows_per_step = 0 if full_batch else sampling_rate * n_samples
    block = max(1, min(_BLOCK_STEPS, _NOISE_BLOCK_VALUES // dim,
                       int(_NOISE_BLOCK_VALUES // max(rows_per_step, 1.0))))
    noise_std = plan.noise_multiplier * clip_norm
    if full_batch or plan.single_pass:
        _one_step_at_a_time(data, plan, rule, walk, rng, block, noise_std,
                            start if verbose else None)
    else:
        # Poisson batches, a segment of steps at a time, run where the
        # sampler holds them (a segment's noise is drawn before its
        # batches, as the in-memory sampler always drew them).
        sampler = data.poisson_sampler(rng, sampling_rate, n_steps, block)
        noise = _Noise(rng, noise_std, n_steps, block, dim)
        for segment in sampler.segments():
            steps = range(segment.start, segment.stop)
            walk = segment.run(sampled_steps, walk, rule,
                               noise.steps(segment.start, segment.stop),
                               [plan.step_size(t) for t in steps], segment.start)
            if verbose:
                walk = sampler.result(walk)
                _report(walk, start)
        walk = sampler.result(walk)

    coef, intercept = walk.coef, float(walk.intercept)
    if walk.n_averaged:
        coef = walk.coef_sum / walk.n_averaged
        intercept = float(walk.intercept_sum / walk.n_averaged)
    if weighting is not None and plan.calibration_steps:
        intercept = weighting.calibrated_intercept(problem.X, coef, intercept,
                                                   plan, rng)
    return LinearResult(coef=coef, intercept=intercept)


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
    projection = partial(project_polytope, radius=problem.radius,
                         constraint=problem.constraint)
    # The radius is the polytope's, not an l2 ball's.
    return _run(replace(problem, radius=None), plan, rng,
                projection=projection, verbose=verbose)


def _one_step_at_a_time(data, plan, rule, walk, rng, block, noise_std,
                        verbose_start):
    """Full batches (a pass per step), or single-pass sampling (in memory:
    each row's gradient at most once)."""
    n_steps, n_samples = plan.n_steps, data.n_samples
    dim = rule.n_features + int(rule.fit_intercept)
    full_batch = plan.sampling_rate >= 1.0
    seen = np.zeros(n_samples, dtype=bool) if plan.single_pass else None
    sampler = (None if full_batch else
               data.poisson_sampler(rng, plan.sampling_rate, n_steps, block))
    for t in range(n_steps):
        i = t % block
        if i == 0 and not full_batch:
            noise = gaussian_noise(rng, noise_std, (min(block, n_steps - t), dim))
        source, rows = (data, None) if full_batch else sampler.batch(t)
        if seen is not None:
            rows = np.arange(n_samples) if rows is None else rows
            rows = rows[~seen[rows]]
            seen[rows] = True
        grad_coef, grad_intercept = source.gradient_sum(walk.coef, walk.intercept,
                                                        rows)
        if i == 0 and full_batch:
            # Full batches draw nothing but noise: drawn once the first sum
            # is in, so that a fit whose first pass over the data fails has
            # drawn nothing, and is withdrawn from the ledgers (the stream
            # of draws is the same).
            noise = gaussian_noise(rng, noise_std, (min(block, n_steps - t), dim))
        take_step(walk, rule, grad_coef, grad_intercept, noise[i],
                  plan.step_size(t), t)
        if verbose_start is not None:
            _report(walk, verbose_start)
