"""Noisy gradient descent-ascent for the worst-group logistic loss.

The saddle point ``min_w max_q sum_g q_g F_g(w)`` of a linear model ``w``
(coefficients and intercept, in the l2 ball of radius R) against group
weights ``q`` in the capped simplex ``{q in simplex : q_g <= kappa p_g}``
(p: the released group proportions).  Each step, at the current ``w``:

* the model player releases the sum over rows of ``a_i g_i`` plus
  ``N(0, (2 C_w s)^2 I)``, where row i's gradient ``sigma_i (x_i, b)`` has
  its coefficients' part clipped to norm C and its intercept's part
  ``sigma_i b`` (at most b) kept whole, so ``||g_i|| <= C_w = sqrt(C^2 +
  b^2)``; ``a_i = r_g / max_h r_h`` and ``r_g = q_g / p_g`` is the
  adversary's weight of row i's group relative to its share: every
  ``a_i`` lies in [0, 1], so replacing one row moves the sum by at most
  ``2 C_w`` whatever the weights (a Gaussian mechanism of noise
  multiplier s), and ``max_h r_h / n`` times the noisy sum estimates the
  gradient of ``sum_g q_g F_g``.  The intercept's gradient is never
  clipped, so at a fixed point the predicted and observed positives agree
  (weighted by group): clipping moves the coefficients, not the
  calibration;
* the adversary releases each group's sum of losses, clipped to
  ``[0, l_max]`` and centred at ``l_max / 2``, plus ``N(0, (l_max s_L)^2)``
  per group: one row moving between groups changes two sums by at most
  ``l_max / 2`` each, one row staying changes one sum by at most
  ``l_max``, so the vector moves by at most ``l_max`` in l2;
* the model takes a projected gradient step, the adversary an
  exponentiated step on the noisy group means followed by the KL projection
  onto the capped simplex.

The fitted model is the average of the iterates of the last half of the
run, and the group weights likewise.  Per-example gradients never exist:
for a linear model the gradient of row i is ``d_i (x_i, b)`` with a scalar
``d_i``, so clipping rescales ``d_i``.
"""

import numpy as np
import scipy.sparse as sp

from .._bounds import private_bounds
from .._sums import column_sums, group_sums, row_dots, total
from ..mechanisms import gaussian_noise
from .problems import WorstGroupResult


def project_capped_simplex(weights, caps):
    """KL projection of positive ``weights`` onto ``{q in simplex : q <= caps}``.

    The projection is ``min(caps, lambda * weights)`` with lambda set so that
    the entries sum to one (water filling from the largest ratio
    ``weights / caps``).  Requires ``caps.sum() >= 1``.

    Parameters
    ----------
    weights : ndarray of shape (m,)
        Positive, not necessarily normalised.
    caps : ndarray of shape (m,)

    Returns
    -------
    ndarray of shape (m,)
    """
    q = weights / weights.sum()
    capped = np.zeros(len(q), dtype=bool)
    # Each pass caps at least one more entry; m passes at most (m groups,
    # never rows).
    for _ in range(len(q)):
        free = ~capped
        if not free.any():  # caps summing to one (kappa = 1): q = caps
            return caps / caps.sum()
        scale = (1.0 - caps[capped].sum()) / q[free].sum()
        candidate = np.where(capped, caps, q * scale)
        over = free & (candidate > caps)
        if not over.any():
            return candidate
        capped |= over
    return np.minimum(caps, candidate)


def project_l2_ball(w, radius):
    """``w`` scaled into the l2 ball of the given radius."""
    norm = np.linalg.norm(w)
    return w if norm <= radius else w * (radius / norm)


def row_norms(X, b=0.0):
    """Norms of the rows ``(x_i, b)`` (``x_i`` alone for b = 0), in float64.

    The features are clipped to a public bound before this, so the squares
    cannot overflow; float32 input is upcast first.
    """
    if sp.issparse(X):
        data = X.data.astype(np.float64)
        squares = np.bincount(np.repeat(np.arange(X.shape[0]), np.diff(X.indptr)),
                              weights=data * data, minlength=X.shape[0])
    else:
        X64 = np.asarray(X, dtype=np.float64)
        squares = np.einsum("ij,ij->i", X64, X64)
    return np.sqrt(squares + b * b)


def release_row_norm(problem, draws, rng):
    """The released upper quantile of the rows' norms ``||x_i||`` (the
    plan's ``draws``, for ``clip_norm="auto"``); None without draws.

    Parameters
    ----------
    problem : skdpopt.solvers.problems.GroupProblem
        Its rows, clipped to the public feature bound.
    draws : BoundDraws or None
    rng : numpy.random.Generator

    Returns
    -------
    float or None
    """
    if draws is None:
        return None
    return float(private_bounds([row_norms(problem.X)], draws, rng)[0, 0])


def step_sums(X, target, codes, w, group_weight, norms, *, clip_norm,
              loss_bound, intercept_value):
    """What one step releases, before noise.

    Parameters
    ----------
    X, target, codes : as in :class:`~skdpopt.solvers.problems.GroupProblem`
    w : ndarray of shape (n_features + has_intercept,)
        The current model (the intercept's coordinate last).
    group_weight : ndarray of shape (n_groups,)
        ``a_g = r_g / max_h r_h``, in [0, 1].
    norms : ndarray of shape (n_samples,)
        :func:`row_norms` of the features (without the intercept's b).
    clip_norm, loss_bound : float
        C and l_max (``inf``: no clipping).
    intercept_value : float or None

    Returns
    -------
    gradient_sum : ndarray of shape (n_features + has_intercept,)
        ``sum_i a_{g_i} g_i``, the coefficients' part of each row's
        gradient clipped to C, the intercept's kept: moves by at most ``2
        sqrt(C^2 + b^2)`` in l2 when one row is replaced (its group may
        change).
    loss_sums : ndarray of shape (n_groups,)
        Per group, the sum of ``min(loss_i, l_max) - l_max / 2``: moves by
        at most ``l_max`` in l2 when one row is replaced.
    """
    n_features = X.shape[1]
    has_intercept = intercept_value is not None
    b = float(intercept_value) if has_intercept else 0.0
    margin = target * (row_dots(X, w[:n_features])
                       + (w[-1] * b if has_intercept else 0.0))
    # d loss / d prediction = -y sigma(-y z); the coefficients' part of the
    # row's gradient has norm |sigma| ||x||.
    # One exponential per row gives both the loss log(1 + exp(-m)) and
    # sigma(-m), without overflow (np.logaddexp is several times slower).
    e = np.exp(-np.abs(margin))
    sigma = np.where(margin >= 0, e, 1.0) / (1.0 + e)
    loss_all = np.maximum(-margin, 0.0) + np.log1p(e)
    grad_norm = sigma * norms
    with np.errstate(divide="ignore", invalid="ignore"):
        factor = np.where(grad_norm > clip_norm, clip_norm / grad_norm, 1.0)
    d = -target * sigma * group_weight[codes]
    gradient = np.empty(len(w))
    # Sums in float64, in blocks of rows (see skdpopt._sums).
    gradient[:n_features] = column_sums(X, d * factor)
    if has_intercept:
        gradient[-1] = b * total(d)
    half = 0.5 * loss_bound if np.isfinite(loss_bound) else 0.0
    loss = np.minimum(loss_all, loss_bound) - half
    return gradient, group_sums(codes, loss, len(group_weight))


def noisy_gda(problem, plan, rng):
    """Run noisy gradient descent-ascent (see the module docstring).

    Parameters
    ----------
    problem : skdpopt.solvers.problems.GroupProblem
        Features clipped to the public bound, +-1 targets, group codes and
        the intercept's constant feature b (or None).
    plan : GDAStage
        Reads ``proportions`` p and ``group_sizes`` (released or public),
        ``kappa`` (cap on ``q_g / p_g``, at least 1), ``n_steps``,
        ``clip_norm`` C (of the coefficients' part), ``noise_multiplier``
        s (the model's noise std is ``2 sqrt(C^2 + b^2) s``; 0: no noise),
        ``weight_decay``, ``loss_bound`` l_max (each row's loss is
        clipped to ``[0, l_max]``), ``loss_noise_multiplier`` s_L (each
        group's loss-sum noise std is ``l_max s_L``), ``radius`` R (the l2
        ball holding ``(coef, intercept / b)``) and the step sizes
        ``step_size`` and ``group_step_size``.
    rng : numpy.random.Generator

    Returns
    -------
    WorstGroupResult
        The averages of the last half of the iterates.
    """
    X, target, codes = problem.X, problem.target, problem.codes
    intercept_value = problem.intercept_value
    proportions, kappa, n_steps = plan.proportions, plan.kappa, plan.n_steps
    clip_norm, loss_bound = plan.clip_norm, plan.loss_bound
    n_samples, n_features = X.shape
    n_groups = len(proportions)
    has_intercept = intercept_value is not None
    b = float(intercept_value) if has_intercept else 0.0
    norms = row_norms(X)
    caps = kappa * proportions
    w = np.zeros(n_features + int(has_intercept))
    q = proportions.copy()
    keep_from = n_steps // 2  # average the last half
    w_sum, q_sum = np.zeros_like(w), np.zeros(n_groups)
    # Without privacy nothing is clipped (bounds of inf) and nothing added.
    model_std = (2.0 * np.hypot(clip_norm, b) * plan.noise_multiplier
                 if plan.noise_multiplier else 0.0)
    # kappa = 1 pins q at p: the adversary releases nothing (the plan gave
    # its share to the model).
    adversary = kappa > 1.0
    loss_std = (loss_bound * plan.loss_noise_multiplier
                if adversary and plan.loss_noise_multiplier else 0.0)
    half_bound = 0.5 * loss_bound if np.isfinite(loss_bound) else 0.0
    for t in range(n_steps):
        ratio = q / proportions
        top = ratio.max()
        grad, sums = step_sums(X, target, codes, w, ratio / top, norms,
                               clip_norm=clip_norm, loss_bound=loss_bound,
                               intercept_value=intercept_value)
        grad += gaussian_noise(rng, model_std, w.shape)
        grad *= top / n_samples
        grad[:n_features] += plan.weight_decay * top * w[:n_features]
        # Simultaneous updates from the same iterate.
        w = project_l2_ball(w - plan.step_size * grad, plan.radius)
        if adversary:
            sums += gaussian_noise(rng, loss_std, n_groups)
            group_loss = sums / plan.group_sizes + half_bound
            log_q = np.log(q) + plan.group_step_size * (group_loss
                                                        - group_loss.max())
            q = project_capped_simplex(np.exp(log_q - log_q.max()), caps)
            q = np.maximum(q, 1e-300)  # keep log(q) finite
        if t >= keep_from:
            w_sum += w
            q_sum += q
    count = n_steps - keep_from
    w_bar = w_sum / count
    intercept = w_bar[-1] * b if has_intercept else 0.0
    return WorstGroupResult(w_bar[:n_features], float(intercept), q_sum / count)
