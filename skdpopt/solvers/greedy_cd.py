"""Private greedy coordinate descent for the Lasso (DP-GCD, proximal variant).

Mangold, Bellet, Salmon and Tommasi (2023): each step privately selects
the coordinate whose proximal-gradient step promises the most, releases a
noisy gradient of that one coordinate, and applies the soft-threshold
proximal map.  Iterates start at 0 and, since T is small, stay sparse.

The objective is scikit-learn's Lasso with the residual clipped, i.e. the
average of ``huber(x_i . w + b - y_i)`` (quadratic within
``residual_bound``, linear beyond) plus ``alpha ||w||_1``.  When every
residual lies within the bound it is exactly ``1/(2n) ||y - Xw - b||^2 +
alpha ||w||_1``.  With features in ``[-B, B]`` (``feature_bound``) and the
clipped residual in ``[-C, C]`` (``residual_bound``), each example's
coordinate gradient ``x_ij clip(r_i)`` lies in ``[-B C, B C]`` and the
coordinate smoothness is at most ``B^2``, whatever the data: these are the
public constants ``L_j = B C`` and ``M_j = B^2``.

The bound may differ between columns (column j clipped to ``[-B_j, B_j]``,
every ``B_j`` public): then ``L_j = B_j C`` and ``M_j = B_j^2``.  The
selection compares the scores over ``B_j`` (the Gauss-Southwell-Lipschitz
rule of Nutini et al. 2015: the guaranteed decrease of a step on j is
``g_j^2 / (2 M_j)``), which gives every score the same sensitivity, and
each release's noise scales with its own column's sensitivity: the
privacy parameters are those of one shared bound.

The intercept, when fitted, is one more coordinate whose feature is the
constant ``B`` (the largest ``B_j``; the intercept's step does not depend
on it): it has the same constants as such a feature, competes in the same
selection (unpenalised) and costs nothing extra.

Columns may come in blocks (``problem.blocks``: the columns one
``OneHotEncoder`` writes for one input column, declared by the pipeline).
Each row's part in a block lies in the l2 ball of the block's bound
``B_b`` (:func:`skdpopt._clipping.clip_blocks`), so the block's gradient
vector has the l2 sensitivity ``2 B_b C / n`` of one column's: a step
selects a block, releases its whole gradient (and curvatures) with the
noise of one column's, and moves every coordinate of it, each by its own
proximal step.  A one-hot block's columns never share a row, so these
steps are the exact coordinate steps taken at once.  A block's score is
the l2 norm of its columns' distances to their subdifferentials (the
largest signed score when all are zero), 1-Lipschitz in the gradient over
``B_b``: the selection's sensitivity is unchanged.

Optionally the residual bound adapts: each step first releases the mean
squared clipped residual of the current iterate and clips at twice an
upper confidence bound on its root (never above the public bound).  The
sensitivities scale with the bound in force, so a smaller one means less
noise for the same budget, at the price of clipping a few residuals (as
DP-SGD's clip norm does).

The solver decides no noise: it takes the per-step privacy parameters in
units of the sensitivities (a pure epsilon for the selection, noise
multipliers for the releases) from the plan
(:class:`skdpopt.plans.lasso.GreedyCDPlan`, which describes the same
releases as events) and computes the sensitivities from the public
bounds.  Sensitivities under
replace-one, with ``C`` the residual bound in force at the step (derived in
``docs/privacy/dplasso.md``):

* mean squared clipped residual (optional): ``C^2 / n``;
* selection scores (signed distance to the subdifferential, over ``B_j``):
  ``2 C / n``;
* coordinate gradient ``g_j``: ``2 B_j C / n`` (a block's, in l2:
  ``2 B_b C / n``);
* coordinate curvature ``(1/n) sum_i x_ij^2`` (optional): ``B_j^2 / n`` (a
  block's vector of them, in l2: ``sqrt(2) B_b^2 / n``).
"""

import time

import numpy as np
from scipy.special import chdtri, ndtr

from .._data import least_squares_problem
from ..geometry import soft_threshold
from ..mechanisms import (
    exponential_mechanism,
    gaussian_noise,
    laplace_noise,
    report_noisy_max,
)
from .problems import LinearResult

# Index reported in ``selected`` for a step on the intercept.
INTERCEPT = -1

# A block's steps: no coordinate's step noise beyond the residual bound
# over this many times the block's bound (rare levels have curvatures near
# 0, and dividing their noisy gradient by it would blow the noise up).
BLOCK_STEP_NOISE = 4.0

# Adaptive residual bound: clip at this multiple of the residuals' root mean
# square (upper confidence bound), and never below this fraction of the
# public bound.
RESIDUAL_SCALE_MULTIPLE = 2.0
RESIDUAL_FLOOR = 0.01


def selection_scores(grad, coef, alpha, feature_bound):
    """Greedy scores: signed distance from 0 to the subdifferential, over
    ``sqrt(M_j)`` (``feature_bound``: a float, or one bound per column).

    ``|g_j + alpha sign(w_j)|`` off zero (the distance from 0 to the
    subdifferential ``g_j + alpha sign(w_j)``) and ``|g_j| - alpha`` at zero,
    where the subdifferential is ``[g_j - alpha, g_j + alpha]``: its
    distance from 0 when 0 is outside, minus how deep 0 lies inside
    otherwise.  Unlike ``max(|g_j| - alpha, 0)`` this keeps the order of the
    coordinates below the threshold, so a weak coordinate just above it
    stands out from the many far below instead of tying with them at 0.  A
    1-Lipschitz function of ``g_j``, so the score's sensitivity is that of
    ``g_j`` over its column's ``feature_bound``: the same for every column.
    """
    at_zero = np.abs(grad) - alpha
    off_zero = np.abs(grad + alpha * np.sign(coef))
    return np.where(coef == 0, at_zero, off_zero) / feature_bound


def block_scores(scores, starts):
    """Each block's score from its columns' :func:`selection_scores`.

    The l2 norm of the columns' positive parts (their distances to the
    subdifferentials) where one is positive, else the largest score (how
    close the block's best column is to leaving zero).  Continuous and
    1-Lipschitz in the scores' l2 norm, so a block's score has the
    sensitivity of one column's; a block of one column keeps its score.
    """
    if starts.size == scores.size:
        return scores
    positive = np.maximum(scores, 0.0)
    norms = np.sqrt(np.add.reduceat(positive * positive, starts))
    return np.where(norms > 0.0, norms, np.maximum.reduceat(scores, starts))


def private_greedy_cd(problem, plan, rng, *, verbose=0):
    """Minimise the clipped Lasso objective by private greedy coordinate descent.

    Parameters
    ----------
    problem : skdpopt.solvers.problems.LinearProblem
        ``X`` and ``y`` (clipped to ``feature_bound`` and the target bound;
        read through :func:`skdpopt._data.least_squares_problem`), ``alpha``
        (the l1 penalty), ``fit_intercept`` (whether the intercept is a
        candidate coordinate), ``feature_bound`` B (a float, or an array
        of one bound ``B_j`` per column), ``residual_bound`` C
        (the public clip of the residuals), a warm start
        (``coef_init``, ``intercept_init``) and ``blocks`` (None: every
        column a block of its own).
    plan : GreedyCDPlan
        Reads ``n_steps`` T; ``selection`` ("exponential": the exponential
        mechanism, Gumbel-max; "laplace": report-noisy-max) and
        ``selection_epsilon``, the pure epsilon of one selection (``inf``:
        exact argmax; the exponential mechanism has score sensitivity
        ``selection_epsilon / 2`` in log-weight units, report-noisy-max
        Laplace scale ``2 * sensitivity / selection_epsilon``);
        ``gradient_noise`` ("gaussian" or "laplace") and
        ``gradient_noise_multiplier`` (noise over the coordinate
        gradient's sensitivity; 0 adds none); ``curvature_noise_multiplier``
        (None: steps with the public bound ``M_j = B^2``; otherwise each
        feature step also releases the chosen column's ``(1/n) sum_i
        x_ij^2`` with Gaussian noise of this many sensitivities and steps
        with an upper confidence bound on it); ``residual_noise_multiplier``
        (None: clips residuals at C throughout; otherwise each step first
        releases the mean squared clipped residual with Gaussian noise of
        this many sensitivities and clips the step's residuals at
        ``RESIDUAL_SCALE_MULTIPLE`` times the root of an upper confidence
        bound on it, within ``[RESIDUAL_FLOOR, 1]`` times C); and
        ``activation_margin`` (a coordinate at zero leaves it only if its
        noisy gradient clears ``alpha`` by this many gradient noise
        scales: post-processing).
    rng : numpy.random.Generator
    verbose : int, default=0

    Returns
    -------
    LinearResult
        With ``selected``, the coordinate chosen at each step (a block's
        first column; ``INTERCEPT`` = -1 for the intercept).
    """
    alpha, n_steps, fit_intercept = problem.alpha, plan.n_steps, problem.fit_intercept
    selection, selection_epsilon = plan.selection, plan.selection_epsilon
    gradient_noise_multiplier = plan.gradient_noise_multiplier
    residual_noise_multiplier = plan.residual_noise_multiplier
    coef_init, intercept_init = problem.coef_init, problem.intercept_init
    # Per-column bounds B_j; the intercept's constant feature is the largest.
    bounds = np.broadcast_to(np.asarray(problem.feature_bound, dtype=float),
                             (problem.X.shape[1],))
    bound = float(np.max(problem.feature_bound))
    data = least_squares_problem(problem.X, problem.y, bound,
                                 problem.residual_bound)
    n, p = data.n_samples, data.n_features
    smoothness = bound * bound
    public_residual_bound = data.residual_bound
    # Blocks: their first columns, and each block's bound B_b (the largest
    # of its columns'), in which every column's score is measured.
    blocks = np.arange(p) if problem.blocks is None else np.asarray(problem.blocks)
    starts = np.flatnonzero(np.r_[True, np.diff(blocks) != 0])
    ends = np.r_[starts[1:], p]
    block_bounds = np.maximum.reduceat(bounds, starts) if p else bounds
    score_bounds = block_bounds[blocks]

    coef = np.zeros(p) if coef_init is None else np.array(coef_init, dtype=float)
    intercept = float(intercept_init)
    data.reset(coef, intercept)
    selected = np.empty(n_steps, dtype=np.int64)
    # Running sums of the released curvatures of each visited column.
    curvature_sums, curvature_counts = np.zeros(p), np.zeros(p)
    start = time.perf_counter()

    for t in range(n_steps):
        if residual_noise_multiplier is not None:
            data.residual_bound = _adapted_residual_bound(
                data, residual_noise_multiplier, public_residual_bound, rng)
        score_sensitivity = 2.0 * data.residual_bound / n
        grad, grad_intercept = data.gradient()
        scores = block_scores(selection_scores(grad, coef, alpha, score_bounds),
                              starts)
        if fit_intercept:
            scores = np.append(scores, abs(grad_intercept) / bound)
        if np.isinf(selection_epsilon):
            choice = int(np.argmax(scores))
        elif selection == "exponential":
            # Log-weights scores / scale move by at most epsilon / 2.
            scale = 2.0 * score_sensitivity / selection_epsilon
            choice = exponential_mechanism(rng, scores, scale=scale)
        else:
            scale = 2.0 * score_sensitivity / selection_epsilon
            choice = report_noisy_max(rng, scores, scale)

        if choice == starts.size:
            selected[t] = INTERCEPT
            exact = grad_intercept
            # The constant feature's sensitivity, 2 B C / n.
            gradient_std = gradient_noise_multiplier * bound * score_sensitivity
            noisy = exact + _noise(plan, rng, gradient_std, 1)[0]
            # The constant feature's curvature is exactly bound^2.
            delta = -noisy / smoothness
            intercept += bound * delta
            data.move(INTERCEPT, bound * delta)
        else:
            columns = np.arange(starts[choice], ends[choice])
            selected[t] = columns[0]
            # The block's own sensitivity in l2, 2 B_b C / n (a column's,
            # 2 B_j C / n, for a block of one).
            block_bound = (bounds[columns[0]] if columns.size == 1
                           else block_bounds[choice])
            _step_on_columns(data, coef, columns, grad[columns], alpha, plan,
                             rng, block_bound=block_bound,
                             ceilings=bounds[columns] ** 2,
                             score_sensitivity=score_sensitivity,
                             curvatures=(curvature_sums, curvature_counts))
        if verbose and ((t + 1) % max(1, n_steps // 10) == 0 or t + 1 == n_steps):
            print(f"-- Step {t + 1}/{n_steps}: non-zeros {np.count_nonzero(coef)}, "
                  f"intercept {intercept:.6f}, "
                  f"elapsed {time.perf_counter() - start:.2f} s")

    return LinearResult(coef=coef, intercept=intercept, selected=selected)


def _step_on_columns(data, coef, columns, grad, alpha, plan, rng, *,
                     block_bound, ceilings, score_sensitivity, curvatures):
    """One step on a column or a block: release its gradient (and
    curvatures), then move each coordinate by its proximal step.

    ``coef`` and the running curvature sums and counts (``curvatures``)
    are updated in place, ``data``'s residuals with them.  ``ceilings``
    holds the columns' public curvature bounds ``M_j = B_j^2``.
    """
    gradient_std = plan.gradient_noise_multiplier * block_bound * score_sensitivity
    noisy = grad + _noise(plan, rng, gradient_std, columns.size)
    if columns.size > 1 and not np.any(coef[columns]) and not \
            block_enters(noisy, gradient_std, plan.activation_margin):
        noisy = np.zeros(columns.size)  # the block stays at zero
    step_curvature = ceilings
    if plan.curvature_noise_multiplier is not None:
        # Sensitivity of (1/n) sum_i x_ij^2: B_j^2 / n for a column,
        # sqrt(2) B_b^2 / n in l2 for a block's vector of them.
        spread = 1.0 if columns.size == 1 else np.sqrt(2.0)
        curvature_std = (plan.curvature_noise_multiplier * spread
                         * block_bound ** 2 / data.n_samples)
        released = np.array([data.curvature(j) for j in columns]) \
            + gaussian_noise(rng, curvature_std, columns.size)
        sums, counts = curvatures
        sums[columns] += released
        counts[columns] += 1
        step_curvature = _curvature_upper_bound(
            sums[columns], counts[columns], curvature_std, step_curvature)
    if columns.size > 1:
        # A block's levels can be rare (curvature near 0, where a column of
        # a standardised feature is not): no step's noise beyond
        # C / (BLOCK_STEP_NOISE B_b), a fraction of the largest move its
        # feature can make in the clipped residuals (post-processing of
        # public values).
        step_curvature = np.maximum(
            step_curvature,
            BLOCK_STEP_NOISE * gradient_std * block_bound / data.residual_bound)
    new = soft_threshold(coef[columns] - noisy / step_curvature,
                         alpha / step_curvature)
    margin = plan.activation_margin * gradient_std
    new = np.where((coef[columns] == 0) & (np.abs(noisy) <= alpha + margin),
                   0.0, new)
    for j, value in zip(columns, new, strict=True):
        if value != coef[j]:
            data.move(j, value - coef[j])
            coef[j] = value


def block_enters(noisy, std, margin):
    """Whether a block at zero may leave it: the squared norm of its noisy
    gradient, in noise variances, clears the chi-square quantile that noise
    alone exceeds as often as one column's noise clears ``margin``.

    Without it, a block of many weak levels enters on noise: a few of its
    columns clear the per-column margin by chance at nearly every step.  A
    block of one column gets the per-column rule.  Post-processing of the
    released gradient.
    """
    tail = 2.0 * ndtr(-margin)
    return float(noisy @ noisy) > chdtri(noisy.size, tail) * std * std


def _noise(plan, rng, std, size):
    """The plan's gradient noise: Gaussian, or Laplace (one column only:
    a block's Laplace noise would need its l1 sensitivity)."""
    if plan.gradient_noise == "gaussian":
        return gaussian_noise(rng, std, size)
    return laplace_noise(rng, std, size)


def _adapted_residual_bound(data, noise_multiplier, public_bound, rng):
    """Release the mean squared clipped residual and return the next bound.

    The statistic averages terms in ``[0, C^2]`` (C the bound in force), so
    its sensitivity is ``C^2 / n``.  The new bound is
    ``RESIDUAL_SCALE_MULTIPLE`` times the root of the release plus two
    noise standard deviations (an over-estimate only loosens the clip),
    within ``[RESIDUAL_FLOOR, 1]`` times the public bound.
    """
    current = data.residual_bound
    std = noise_multiplier * current * current / data.n_samples
    released = data.mean_square_residual() + gaussian_noise(rng, std, 1)[0]
    scale = np.sqrt(max(released + 2.0 * std, 0.0))
    return float(np.clip(RESIDUAL_SCALE_MULTIPLE * scale,
                         RESIDUAL_FLOOR * public_bound, public_bound))


def _curvature_upper_bound(total, count, std, ceiling):
    """Mean of each column's released curvatures plus two standard errors.

    An over-estimate only shortens the step; the public bound caps it, and
    a floor of ``ceiling / 100`` keeps a pure-noise estimate from asking
    for an enormous step.  Arrays: one entry per column of the step.
    """
    estimate = total / count + 2.0 * std / np.sqrt(count)
    return np.clip(estimate, 0.01 * ceiling, ceiling)
