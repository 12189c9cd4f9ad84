"""Privacy plans of DPMinimaxClassifier: which solver, and its plan.

Both fits have two stages.  The first releases the group counts (unless
the proportions are public: priors, or one group); the second runs the
solver with settings chosen from the released (or public) proportions.
The plan is made from public quantities alone (n, d, the number of
groups, epsilon, delta, the hyperparameters); a stage also from released
proportions, which are public once released.  The derivations are in
``docs/privacy/dpminimax.md``; how the constants were chosen is in
``docs/design/minimax.md``.

:func:`plan_minimax` picks the solver (:func:`choose_solver`) and plans
it: gradient descent-ascent in :mod:`skdpopt.plans.minimax_gda`, vertex
sampling in :mod:`skdpopt.plans.minimax_vertex`; both end with the
releases of :mod:`skdpopt.plans.minimax_checks`.
"""

import math

import numpy as np

from .minimax_gda import plan_minimax_gda
from .minimax_vertex import plan_minimax_vertex

# -- choosing the solver (docs/design/minimax.md#choosing-the-solver) ---------

# Vertex sampling's error grows with log(d), gradient descent-ascent's with
# sqrt(d) / (n mu): "auto" picks vertex sampling above this sqrt(d) per row
# and unit of epsilon.
AUTO_SQRT_D_PER_ROW = 0.004
# Without privacy gradient descent-ascent solves the problem over the l2
# ball, whose models overfit once d is a sizeable fraction of n: vertex
# sampling above this d per row.
AUTO_D_PER_ROW = 0.007


def choose_solver(n_samples, n_features, n_groups, epsilon, delta):
    """``"gda"`` or ``"vertex_sampling"`` from public quantities.

    Parameters
    ----------
    n_samples, n_features, n_groups : int
        Public sizes (``n_features`` counts the intercept).
    epsilon, delta : float

    Returns
    -------
    str
        ``"vertex_sampling"`` for pure differential privacy (``delta=0``,
        which Gaussian noise cannot give), where the dimension is large
        against the rows and the budget (``sqrt(d) > AUTO_SQRT_D_PER_ROW n
        epsilon``) and, without privacy, where ``d > AUTO_D_PER_ROW n``;
        ``"gda"`` otherwise.
    """
    if np.isinf(epsilon):
        return "vertex_sampling" if n_features > AUTO_D_PER_ROW * n_samples else "gda"
    if delta <= 0:
        return "vertex_sampling"
    if math.sqrt(n_features) > AUTO_SQRT_D_PER_ROW * n_samples * epsilon:
        return "vertex_sampling"
    return "gda"


def plan_minimax(*, n_samples, n_features, n_groups, epsilon, delta, solver,
                 proportions, count_budget_share, clip_norm, loss_bound, radius,
                 feature_bound, fit_intercept, max_iter, n_vertices):
    """Plan a DPMinimaxClassifier fit from public quantities only.

    Parameters
    ----------
    n_samples : int
    n_features : int
        Coordinates of the model, the intercept's included.
    n_groups : int
        Number of groups (public: declared, or read with a warning).
    epsilon, delta : float
    solver : {"auto", "gda", "vertex_sampling"}
    proportions : ndarray of shape (n_groups,) or None
        Public group proportions (priors, or the one group); None when the
        fit counts the groups (privately, unless ``epsilon`` is infinite).
    count_budget_share, clip_norm, loss_bound, radius, feature_bound,
    fit_intercept, max_iter, n_vertices
        The estimator's hyperparameters of the same names.

    Returns
    -------
    MinimaxGDAPlan or MinimaxVertexPlan
    """
    if solver == "auto":
        solver = choose_solver(n_samples, n_features, n_groups, epsilon, delta)
    elif solver == "gda" and not np.isinf(epsilon) and delta <= 0:
        raise ValueError(
            "solver='gda' needs delta > 0 (its releases are Gaussian); use "
            "solver='vertex_sampling' for pure differential privacy.")
    if solver == "gda":
        return plan_minimax_gda(
            n_samples=n_samples, n_features=n_features, n_groups=n_groups,
            epsilon=epsilon, delta=delta, counts_public=proportions is not None,
            clip_norm=clip_norm, loss_bound=loss_bound, radius=radius,
            intercept_value=feature_bound if fit_intercept else 0.0,
            max_iter=max_iter)
    return plan_minimax_vertex(
        n_samples=n_samples, n_features=n_features, epsilon=epsilon,
        delta=delta, proportions=proportions,
        count_budget_share=count_budget_share, radius=radius,
        feature_bound=feature_bound, max_iter=max_iter, n_vertices=n_vertices,
        calibrate=fit_intercept)
