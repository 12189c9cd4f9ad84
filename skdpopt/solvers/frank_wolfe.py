"""Private Frank-Wolfe over the l1 ball or the scaled simplex.

Talwar, Thakurta and Zhang (2015): at step t the linear minimisation over
the polytope's vertices ``v`` of ``<v, grad F(w_t)>`` is replaced by a
private selection, here the exponential mechanism drawing vertex v with
probability proportional to ``exp(-score_scale * <v, grad F(w_t)>)``, and
the iterate moves towards it with step ``2 / (t + 2)``.  Iterates stay
inside the polytope and have at most t non-zeros after t steps.

The solver does not decide ``score_scale``: with per-example gradients whose
coordinates change by at most ``G`` between neighbouring datasets (so
``<v, grad F>`` changes by at most ``R G / n``), each draw is an
exponential mechanism with score sensitivity ``score_scale * R G / n``,
which the plan calibrates.  :func:`frank_wolfe_logistic` (DPLogisticSimplex)
and :func:`frank_wolfe_lasso` (DPLasso) run it on their objectives.
"""

import numpy as np

from .._data import least_squares_problem, linear_rows
from ..geometry import vertex_coordinates
from ..losses import LogLoss
from ..mechanisms import exponential_mechanism
from .problems import LinearResult


def private_frank_wolfe(gradient, n_features, *, radius, n_steps, score_scale, rng,
                        constraint="l1_ball", coef_init=None):
    """Minimise a smooth objective over a polytope by private Frank-Wolfe.

    Parameters
    ----------
    gradient : callable
        ``gradient(coef)`` returns the objective's gradient, shape
        (n_features,), at ``coef``.
    n_features : int
    radius : float
        Radius R of the l1 ball (or total mass of the simplex).
    n_steps : int
    score_scale : float
        Inverse temperature of the exponential mechanism; ``inf`` selects
        the exact minimising vertex (no privacy).
    rng : numpy.random.Generator
    constraint : {"l1_ball", "simplex"}, default="l1_ball"
    coef_init : ndarray of shape (n_features,), default=None
        Starting point inside the polytope (default: 0 for the ball, the
        first vertex for the simplex).

    Returns
    -------
    LinearResult
        ``coef`` the final iterate (its last coordinates those the caller
        added for an intercept), ``intercept`` 0, ``selected`` the vertex
        chosen at each step.
    """
    if coef_init is not None:
        coef = np.array(coef_init, dtype=float)
    else:
        coef = np.zeros(n_features)
        if constraint == "simplex":
            coef[0] = radius
    selected = np.empty(n_steps, dtype=np.int64)
    for t in range(n_steps):
        grad = gradient(coef)
        # <v, grad> for each vertex: +R g_j, then -R g_j for the ball.
        linear = radius * (grad if constraint == "simplex"
                           else np.concatenate([grad, -grad]))
        if np.isinf(score_scale):
            choice = int(np.argmin(linear))
        else:
            choice = exponential_mechanism(rng, -linear, scale=1.0 / score_scale)
        selected[t] = choice
        feature, value = vertex_coordinates(choice, n_features, radius, constraint)
        step = 2.0 / (t + 2.0)
        coef *= 1.0 - step
        coef[feature] += step * value
    return LinearResult(coef=coef, intercept=0.0, selected=selected)


def frank_wolfe_logistic(problem, plan, rng):
    """Private Frank-Wolfe on the logistic loss over the l1 ball or simplex.

    The intercept is one more coordinate whose feature is the constant b:
    of either sign, so over the simplex it is two coordinates, ``+b`` and
    ``-b``.  Each loss derivative is clipped to 1 (NaN to 0): with features
    clipped to b, every per-example gradient coordinate lies in [-b, b].

    Parameters
    ----------
    problem : skdpopt.solvers.problems.LinearProblem
        ``X`` clipped to ``feature_bound`` (read through :mod:`skdpopt._data`),
        ``y`` the +-1 targets, ``radius``, ``constraint``, ``fit_intercept``,
        and ``weighting`` (class and sample weights in [0, 1]; None:
        unweighted).
    plan : SimplexFrankWolfePlan
        Reads ``n_steps`` and ``step_size`` (the draws' inverse temperature).
    rng : numpy.random.Generator

    Returns
    -------
    LinearResult
    """
    n_samples, n_features = problem.X.shape
    b = problem.feature_bound
    extra = []
    if problem.fit_intercept:
        extra = [b] if problem.constraint == "l1_ball" else [b, -b]
    extra = np.array(extra)
    weighting = problem.weighting
    rows = linear_rows(
        problem.X, problem.y, LogLoss() if weighting is None else weighting.loss,
        limit=1.0, sample_weight=None if weighting is None else weighting.sample_weight)

    def gradient(point):
        total, count = rows.gradient_sum(point[:n_features],
                                         extra @ point[n_features:])
        return np.concatenate([total, extra * count]) / n_samples

    result = private_frank_wolfe(
        gradient, n_features + len(extra), radius=problem.radius,
        n_steps=plan.n_steps, score_scale=plan.step_size, rng=rng,
        constraint=problem.constraint)
    return LinearResult(result.coef[:n_features],
                        float(extra @ result.coef[n_features:]))


def frank_wolfe_lasso(problem, plan, rng):
    """Private Frank-Wolfe on the clipped least squares over the l1 ball.

    The intercept is one more coordinate whose feature is the constant b
    (the intercept is ``b`` times it).

    Parameters
    ----------
    problem : skdpopt.solvers.problems.LinearProblem
        ``X`` and ``y`` clipped to ``feature_bound`` and the target bound,
        ``radius``, ``fit_intercept``, and a warm start (``coef_init``,
        ``intercept_init``), used when it lies in the ball.
    plan : LassoFrankWolfePlan
        Reads ``n_steps``, ``residual_bound`` and ``score_scale``.
    rng : numpy.random.Generator

    Returns
    -------
    LinearResult
    """
    n_features = problem.X.shape[1]
    bound, radius = problem.feature_bound, problem.radius
    data = least_squares_problem(problem.X, problem.y, bound, plan.residual_bound)
    dim = n_features + int(problem.fit_intercept)

    def gradient(point):
        data.reset(point[:n_features],
                   bound * point[n_features] if problem.fit_intercept else 0.0)
        grad, grad_intercept = data.gradient()
        return np.append(grad, grad_intercept) if problem.fit_intercept else grad

    start = None
    if problem.coef_init is not None:
        start = np.append(problem.coef_init, problem.intercept_init / bound)[:dim]
        if np.abs(start).sum() > radius:
            start = None
    result = private_frank_wolfe(gradient, dim, radius=radius, n_steps=plan.n_steps,
                                 score_scale=plan.score_scale, rng=rng,
                                 coef_init=start)
    intercept = (bound * float(result.coef[n_features]) if problem.fit_intercept
                 else 0.0)
    return LinearResult(result.coef[:n_features], intercept, result.selected)
