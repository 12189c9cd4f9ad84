"""Private stochastic mirror descent for a saddle point over two polytopes
(González, Guzmán and Paquette 2024, Algorithm 1).

The problem is ``min over x in X max over y in Y of E[f(x, y; z)]`` where
both X and Y are convex hulls of few vertices (the l1 ball for the model,
the simplex of groups for the adversary).  Each player keeps barycentric
weights over its vertices and updates them multiplicatively (entropic
mirror descent); after every step K vertices are drawn from each player's
new weights, the next stochastic gradients are evaluated at the averages of
the drawn vertices on a fresh batch (the first at the uniform start's
mean), and the output is the average of all the drawn vertices.  Only
drawn vertices are ever released: each draw from weights whose logarithms
move by a bounded amount when one record changes is an exponential
mechanism (:mod:`skdpopt.solvers.mirror_descent`).

:func:`vertex_sampling` runs it for worst-group linear classification
(the gradient oracle :func:`group_linear_model_oracle`), with the schedule,
step sizes and score sensitivity of its plan
(:class:`skdpopt.plans.minimax_vertex.VertexStage`).
"""

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from .._sums import column_sums, group_sums, row_dots, total
from ..losses import LogLoss
from .mirror_descent import EntropicIterates, VertexSet, draw_vertices
from .problems import WorstGroupResult


@dataclass
class SaddlePointResult:
    """Output of :func:`saddle_point_mirror_descent`.

    Attributes
    ----------
    x_vertices : ndarray of int of shape (n_steps, K)
        The model player's vertices drawn from ``x_2, ..., x_{T+1}``.
    y_vertices : ndarray of int of shape (n_steps, K)
        The adversary's vertices drawn from ``y_2, ..., y_{T+1}``.
    x_step_sizes : ndarray of shape (n_steps,)
        tau_x at each step.
    """

    x_vertices: np.ndarray
    y_vertices: np.ndarray
    x_step_sizes: np.ndarray


def saddle_point_mirror_descent(
    oracle,
    n_x_vertices,
    n_y_vertices,
    *,
    n_steps,
    n_draws,
    x_step_size,
    y_step_size,
    rng,
):
    """Algorithm 1 of González, Guzmán and Paquette (2024), with vertex
    sampling for both players.

    Step 1 evaluates the gradients at the mean of the uniform starting
    weights (every vertex once: a public point, so no draw is needed).
    For t = 2..T, K vertices are drawn i.i.d. from each player's current
    weights ``x_t`` and ``y_t`` and the stochastic gradients on batch t are
    evaluated at the averages of the drawn vertices.  Every step updates
    ``x_{t+1} ∝ x_t exp(-tau_x g_x)`` (descent) and
    ``y_{t+1} ∝ y_t exp(+tau_y g_y)`` (ascent); K more vertices are drawn
    from ``x_{T+1}`` and ``y_{T+1}``, so that the last batch counts too.
    The output is made of the draws from ``x_2 .. x_{T+1}``, the iterates
    the data produced; the paper also averages draws from the uniform
    ``x_1``, which carry no information.

    Parameters
    ----------
    oracle : callable
        ``oracle(t, x_drawn, y_drawn)`` returns
        ``(x_vertex_indices, x_gradient, y_gradient)``: the sparse gradient
        over the x vertices and the dense gradient over the y vertices, on
        batch t (0-based), at the averages of the vertices ``x_drawn`` and
        ``y_drawn``.  Each batch must be used once.
    n_x_vertices, n_y_vertices : int
    n_steps : int
        T.
    n_draws : int
        K, vertices drawn per player per step.
    x_step_size : float or callable
        tau_x, or ``x_step_size(y_drawn)`` giving step t's tau_x from the
        adversary's vertices of that step (released draws, or every group
        once at step 1, so a step size chosen from them costs no privacy;
        the estimator uses this to scale the step with the weight the draws
        put on small groups).
    y_step_size : float
        tau_y.
    rng : numpy.random.Generator

    Returns
    -------
    SaddlePointResult
    """
    x_iterates = EntropicIterates(n_x_vertices, n_steps)
    y_log = np.zeros(n_y_vertices)
    x_drawn = np.empty((n_steps, n_draws), dtype=np.int64)
    y_drawn = np.empty((n_steps, n_draws), dtype=np.int64)
    x_steps = np.empty(n_steps)
    # The uniform start's mean: every vertex once.
    x_point, y_point = np.arange(n_x_vertices), np.arange(n_y_vertices)
    for t in range(n_steps):
        x_vertices, x_gradient, y_gradient = oracle(t, x_point, y_point)
        x_steps[t] = x_step_size(y_point) if callable(x_step_size) else x_step_size
        x_iterates.step(x_vertices, x_gradient, x_steps[t])
        y_log += y_step_size * np.asarray(y_gradient, dtype=float)
        # Both draws are exponential mechanisms, scores log x_{t+1}, log y_{t+1}.
        x_drawn[t] = x_point = draw_vertices(rng, x_iterates.current(), n_draws)
        y_drawn[t] = y_point = draw_vertices(
            rng, np.exp(y_log - y_log.max()), n_draws
        )
    return SaddlePointResult(x_vertices=x_drawn, y_vertices=y_drawn,
                             x_step_sizes=x_steps)


def make_batches(n_samples, n_steps, per_pass, rng):
    """Row indices of each step's batch: successive random partitions of
    the rows into ``per_pass`` batches, T batches in all.  With privacy
    ``per_pass = T``: one partition, every row in one batch."""
    batches = []
    while len(batches) < n_steps:
        batches.extend(np.array_split(rng.permutation(n_samples), per_pass))
    return batches[:n_steps]


def vertex_sampling(problem, plan, rng):
    """Worst-group logistic regression over the l1 ball by vertex sampling.

    The model player's polytope is the l1 ball ``||w||_1 + |c| <= R`` over
    the features and, with an intercept, one more coordinate c whose
    feature is the constant b (the intercept is ``c b``); the adversary's
    is the simplex of the groups.

    Parameters
    ----------
    problem : skdpopt.solvers.problems.GroupProblem
    plan : VertexStage
        Reads ``n_steps`` T, ``n_draws`` K, ``batches_per_pass``,
        ``radius`` R, ``proportions``, ``loss_center``, ``x_step`` (the
        model's step from the adversary's draws) and ``y_step``.
    rng : numpy.random.Generator
        Draws the batches (a data-independent partition), then the vertices.

    Returns
    -------
    WorstGroupResult
        The average of the model's drawn vertices; the adversary's weights
        are the frequencies of its drawn groups.
    """
    n_samples, n_features = problem.X.shape
    has_intercept = problem.intercept_value is not None
    vertex_set = VertexSet.l1_ball(n_features + int(has_intercept), plan.radius)
    batches = make_batches(n_samples, plan.n_steps, plan.batches_per_pass, rng)
    oracle = group_linear_model_oracle(
        problem.X, problem.target, problem.codes, plan.proportions, LogLoss(),
        vertex_set, batches, intercept_value=problem.intercept_value,
        loss_center=plan.loss_center)
    result = saddle_point_mirror_descent(
        oracle, vertex_set.n_vertices, problem.n_groups, n_steps=plan.n_steps,
        n_draws=plan.n_draws, x_step_size=plan.x_step, y_step_size=plan.y_step,
        rng=rng)
    point = vertex_set.point(result.x_vertices.ravel())
    intercept = point[n_features] * problem.intercept_value if has_intercept else 0.0
    weights = (np.bincount(result.y_vertices.ravel(), minlength=problem.n_groups)
               / result.y_vertices.size)
    return WorstGroupResult(point[:n_features], float(intercept), weights,
                            result.x_step_sizes)


def group_linear_model_oracle(
    X,
    y,
    groups,
    proportions,
    loss,
    vertex_set,
    batches,
    intercept_value=None,
    loss_center=0.0,
):
    """Gradients of ``sum_g y_g F_g(x)`` for a linear model, per batch.

    ``F_g`` is group g's mean loss, estimated on a batch of B rows without
    dividing by the batch's (data-dependent) group count:
    ``F_g ≈ sum over batch rows i in g of (loss_i - c) / (B p_g)`` with the
    group proportions ``p_g`` given (public or privately estimated), an
    unbiased estimate of ``F_g - c`` when ``p_g`` is exact.  Subtracting
    the public constant c from every group's loss leaves the game unchanged
    and halves the adversary's sensitivity when c is the middle of the loss
    range.  The model player's gradient weights row i by
    ``ybar_{g_i} / (B p_{g_i})``, ``ybar`` the average of the drawn groups.

    Parameters
    ----------
    X : ndarray or CSR matrix of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,)
        Targets in {-1, 1}.
    groups : ndarray of int of shape (n_samples,)
        Group codes in ``range(n_groups)``.
    proportions : ndarray of shape (n_groups,)
        ``p_g`` > 0.
    loss : object
        A loss from :mod:`skdpopt.losses`.
    vertex_set : VertexSet
        The model's polytope over ``n_features`` (+1 with an intercept)
        coordinates.
    batches : list of ndarray of int
    intercept_value : float or None
        The intercept coordinate's constant feature; ``None`` for none.
    loss_center : float, default=0.0
        c above.

    Returns
    -------
    callable
        ``oracle(t, x_drawn, y_drawn)`` as
        :func:`saddle_point_mirror_descent` expects.
    """
    n_features = X.shape[1]
    n_groups = len(proportions)
    sparse = sp.issparse(X)
    proportions = np.asarray(proportions, dtype=float)

    def oracle(t, x_drawn, y_drawn):
        point = vertex_set.point(x_drawn)
        y_bar = np.bincount(y_drawn, minlength=n_groups) / len(y_drawn)
        rows = batches[t]
        X_batch, g_batch = X[rows], groups[rows]
        prediction = row_dots(X_batch, point[:n_features])
        if intercept_value is not None:
            prediction = prediction + intercept_value * point[n_features]
        scale = 1.0 / (len(rows) * proportions[g_batch])
        # Adversary: per-group centred mean losses.
        values = (loss.value(prediction, y[rows]) - loss_center) * scale
        # Sums in float64, in blocks of rows (see skdpopt._sums).
        y_gradient = group_sums(g_batch, values, n_groups)
        # Model: row weights ybar_g / (B p_g).
        residual = loss.derivative(prediction, y[rows]) * scale * y_bar[g_batch]
        feature_gradient = column_sums(X_batch, residual)
        features = np.arange(n_features)
        if sparse:
            # Only the features the batch touches can be non-zero.
            features = np.unique(X_batch.indices)
            feature_gradient = feature_gradient[features]
        if intercept_value is not None:
            features = np.append(features, n_features)
            feature_gradient = np.append(
                feature_gradient, intercept_value * total(residual)
            )
        x_vertices, x_gradient = vertex_set.vertex_gradient(features, feature_gradient)
        return x_vertices, x_gradient, y_gradient

    return oracle
