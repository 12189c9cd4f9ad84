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

The gradient oracle for worst-group linear classification is
:func:`group_linear_model_oracle`; step sizes and their privacy come from
the estimator (:class:`skdpopt.DPMinimaxClassifier`).
"""

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from .._sums import column_sums, group_sums, row_dots, total
from .mirror_descent import EntropicIterates, draw_vertices


@dataclass
class SaddlePointResult:
    """Output of :func:`saddle_point_mirror_descent`.

    Attributes
    ----------
    x_vertices : ndarray of int of shape (n_steps, K)
        The model player's vertices drawn from ``x_2, ..., x_{T+1}``.
    y_vertices : ndarray of int of shape (n_steps, K)
        The adversary's vertices drawn from ``y_2, ..., y_{T+1}``.
    n_steps : int
    n_draws : int
        Draws per player, all data-dependent: ``K T``.
    x_step_sizes : ndarray of shape (n_steps,)
        tau_x at each step.
    """

    x_vertices: np.ndarray
    y_vertices: np.ndarray
    n_steps: int
    n_draws: int
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
    return SaddlePointResult(
        x_vertices=x_drawn,
        y_vertices=y_drawn,
        n_steps=n_steps,
        n_draws=n_draws * n_steps,
        x_step_sizes=x_steps,
    )


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
