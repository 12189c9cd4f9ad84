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
* coordinate gradient ``g_j``: ``2 B_j C / n``;
* coordinate curvature ``(1/n) sum_i x_ij^2`` (optional): ``B_j^2 / n``.
"""

import time

import numpy as np

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
        (the public clip of the residuals) and a warm start
        (``coef_init``, ``intercept_init``).
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
        With ``selected``, the coordinate chosen at each step
        (``INTERCEPT`` = -1 for the intercept).
    """
    alpha, n_steps, fit_intercept = problem.alpha, plan.n_steps, problem.fit_intercept
    selection, selection_epsilon = plan.selection, plan.selection_epsilon
    gradient_noise_multiplier = plan.gradient_noise_multiplier
    curvature_noise_multiplier = plan.curvature_noise_multiplier
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

    coef = np.zeros(p) if coef_init is None else np.array(coef_init, dtype=float)
    intercept = float(intercept_init)
    data.reset(coef, intercept)
    selected = np.empty(n_steps, dtype=np.int64)
    # Running sums of the released curvatures of each visited column.
    curvature_sums, curvature_counts = {}, {}
    start = time.perf_counter()

    for t in range(n_steps):
        if residual_noise_multiplier is not None:
            data.residual_bound = _adapted_residual_bound(
                data, residual_noise_multiplier, public_residual_bound, rng)
        score_sensitivity = 2.0 * data.residual_bound / n
        grad, grad_intercept = data.gradient()
        scores = selection_scores(grad, coef, alpha, bounds)
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
        j = INTERCEPT if choice == p else choice
        selected[t] = j

        exact = grad_intercept if j == INTERCEPT else grad[j]
        # The chosen coordinate's own sensitivity, 2 B_j C / n.
        column_bound = bound if j == INTERCEPT else bounds[j]
        gradient_std = (gradient_noise_multiplier * column_bound
                        * score_sensitivity)
        if plan.gradient_noise == "gaussian":
            noisy = exact + gaussian_noise(rng, gradient_std, 1)[0]
        else:
            noisy = exact + laplace_noise(rng, gradient_std, 1)[0]

        if j == INTERCEPT:
            # The constant feature's curvature is exactly bound^2.
            delta = -noisy / smoothness
            intercept += bound * delta
            data.move(INTERCEPT, bound * delta)
        else:
            step_curvature = column_bound * column_bound  # M_j
            if curvature_noise_multiplier is not None:
                # Sensitivity of (1/n) sum_i x_ij^2: B_j^2 / n.
                curvature_std = curvature_noise_multiplier * (step_curvature / n)
                released = data.curvature(j) + gaussian_noise(
                    rng, curvature_std, 1)[0]
                curvature_sums[j] = curvature_sums.get(j, 0.0) + released
                curvature_counts[j] = curvature_counts.get(j, 0) + 1
                step_curvature = _curvature_upper_bound(
                    curvature_sums[j], curvature_counts[j], curvature_std,
                    step_curvature)
            new = soft_threshold(coef[j] - noisy / step_curvature,
                                 alpha / step_curvature)
            margin = plan.activation_margin * gradient_std
            if coef[j] == 0 and abs(noisy) <= alpha + margin:
                new = 0.0
            data.move(j, new - coef[j])
            coef[j] = new
        if verbose and ((t + 1) % max(1, n_steps // 10) == 0 or t + 1 == n_steps):
            print(f"-- Step {t + 1}/{n_steps}: non-zeros {np.count_nonzero(coef)}, "
                  f"intercept {intercept:.6f}, "
                  f"elapsed {time.perf_counter() - start:.2f} s")

    return LinearResult(coef=coef, intercept=intercept, selected=selected)


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
    """Mean of a column's released curvatures plus two standard errors.

    An over-estimate only shortens the step; the public bound caps it, and
    a floor of ``ceiling / 100`` keeps a pure-noise estimate from asking
    for an enormous step.
    """
    estimate = total / count + 2.0 * std / np.sqrt(count)
    return float(np.clip(estimate, 0.01 * ceiling, ceiling))
