"""Entropic (multiplicative-weights) mirror descent over the vertices of a
polytope, with iterates released by sampling vertices.

The polytopes of the l1 geometry are convex hulls of few kinds of vertices:
the l1 ball of radius R in R^D is the hull of the 2D vertices ``+-R e_j``,
the scaled simplex that of the D vertices ``R e_j``.  A point is described
by barycentric weights over the vertices, and entropic mirror descent
updates those weights multiplicatively: ``x_{t+1} ∝ x_t exp(-tau g_t)``.

Private algorithms built on it (González, Guzmán and Paquette 2024) never
release the weights, only vertices drawn from them: drawing vertex k with
probability ``x_k``, whose logarithm moves by a bounded amount when one
record changes, is an exponential mechanism.  The pieces here are shared
by those algorithms:

* :class:`VertexSet` maps vertices to (feature, value) and a gradient over
  features to a gradient over vertices;
* :class:`EntropicIterates` holds the weights, updates them lazily (a sparse
  gradient costs time in its non-zeros, not in the number of vertices) and
  keeps the anytime online-to-batch average ``w_t = (x_1 + ... + x_t) / t``
  just as lazily;
* :func:`draw_vertices` draws i.i.d. vertices from a weight vector;
* :func:`vertex_sampling_mirror_descent` is Algorithm 5 of González, Guzmán
  and Paquette (2024) (private stochastic convex optimisation over the polytope), and
  :func:`linear_model_gradient` the stochastic gradient oracle of a linear
  model (logistic regression, ...) for it, on dense or CSR batches;
* :func:`vertex_sampling_logistic` is DPLogisticSimplex's mirror-descent
  solver: the log-odds of the released class totals as the intercept's
  offset, Algorithm 5, then the scale of the released direction and the
  intercept by noisy Newton steps (:mod:`skdpopt.solvers.noisy_newton`).

Nothing here validates input or decides a step size or a noise scale: the
plan (:mod:`skdpopt.plans.logistic_simplex`) calibrates ``tau`` from the
number of draws the run makes and their sensitivity, and the noise of the
class totals and of the Newton statistics.
"""

import time
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from .._clipping import clip_features, clip_scalars
from .._sums import column_sums, row_dots, total, touched_column_sums
from ..losses import ClassWeighted, LogLoss
from ..mechanisms import proportional_draws
from .noisy_newton import noisy_newton_logistic
from .problems import LinearResult


@dataclass(frozen=True)
class VertexSet:
    """Vertices ``+R e_j`` for every feature j and ``-R e_j`` for some.

    Vertex ``j`` (``0 <= j < n_features``) is ``+R e_j``; the negative
    vertices ``-R e_j`` of the features flagged in ``signed`` follow, in
    feature order.  With every feature signed this is the l1 ball and the
    layout of :func:`skdpopt.geometry.vertex_coordinates`; with none it is
    the scaled simplex.

    Parameters
    ----------
    n_features : int
    radius : float
    signed : ndarray of bool of shape (n_features,)
        Features that also have the vertex ``-R e_j``.
    """

    n_features: int
    radius: float
    signed: np.ndarray

    @classmethod
    def l1_ball(cls, n_features, radius):
        """All 2 n_features vertices ``+-R e_j``."""
        return cls(n_features, float(radius), np.ones(n_features, dtype=bool))

    @classmethod
    def simplex(cls, n_features, radius, signed_features=()):
        """The vertices ``R e_j``, plus ``-R e_j`` for ``signed_features``."""
        signed = np.zeros(n_features, dtype=bool)
        signed[list(signed_features)] = True
        return cls(n_features, float(radius), signed)

    def __post_init__(self):
        signed = np.asarray(self.signed, dtype=bool)
        object.__setattr__(self, "signed", signed)
        # Lookups used at every step, built once: O(D) here, O(1) per vertex.
        negative = np.full(self.n_features, -1, dtype=np.int64)
        signed_features = np.flatnonzero(signed)
        negative[signed_features] = self.n_features + np.arange(len(signed_features))
        object.__setattr__(self, "_negative_vertex", negative)
        object.__setattr__(self, "_signed_features", signed_features)

    @property
    def n_vertices(self):
        return self.n_features + len(self._signed_features)

    def coordinates(self, vertices):
        """Feature and value of each vertex: vertex k is ``values[k] e_features[k]``."""
        vertices = np.asarray(vertices, dtype=np.int64)
        negative = vertices >= self.n_features
        features = vertices.copy()
        features[negative] = self._signed_features[vertices[negative] - self.n_features]
        values = np.where(negative, -self.radius, self.radius)
        return features, values

    def point(self, vertices):
        """The average of the given vertices, as a dense vector in R^D."""
        features, values = self.coordinates(vertices)
        point = np.zeros(self.n_features)
        np.add.at(point, features, values / len(features))
        return point

    def sparse_point(self, vertices):
        """The average of the given vertices as (features, values), O(K)."""
        features, values = self.coordinates(vertices)
        unique, inverse = np.unique(features, return_inverse=True)
        return unique, np.bincount(inverse, weights=values / len(features))

    def vertex_gradient(self, features, feature_gradient):
        """Gradient over vertex weights from the gradient over coordinates.

        The loss of the point ``sum_k lambda_k v_k`` has partial derivative
        ``<v_k, grad>`` in ``lambda_k``: ``R grad_j`` for ``+R e_j`` and
        ``-R grad_j`` for ``-R e_j``.

        Parameters
        ----------
        features : ndarray of int
            The coordinates where the gradient may be non-zero (distinct).
        feature_gradient : ndarray of float
            The gradient at those coordinates.

        Returns
        -------
        vertices, values : ndarray
        """
        features = np.asarray(features, dtype=np.int64)
        plus = self.radius * np.asarray(feature_gradient, dtype=float)
        negative = self._negative_vertex[features]
        has_negative = negative >= 0
        return (np.concatenate([features, negative[has_negative]]),
                np.concatenate([plus, -plus[has_negative]]))


class EntropicIterates:
    """Multiplicative-weights iterates over m vertices, updated lazily.

    Starts from the uniform weights ``x_1``; :meth:`step` applies
    ``x_{t+1} ∝ x_t exp(-tau g_t)``.  A step whose gradient is non-zero on
    s vertices costs O(s): only those weights change, plus the scalar
    normaliser.  The anytime online-to-batch average
    ``w_t = (x_1 + ... + x_t) / t`` is kept lazily too: each vertex
    remembers when its weight last changed, and the iterates since then
    contribute ``exp(u_k) * sum_i 1 / Z_i`` to it, where ``1 / Z_i`` (the
    normalisers) are summed per step.  Reading the current iterate or the
    average costs O(m), and so does an occasional flush that banks every
    vertex's share and restarts those sums, whenever the normaliser has
    moved by more than a factor 1e3 since the last one (so that differences
    of the sums lose at most about three digits).

    Parameters
    ----------
    n_vertices : int
    max_steps : int
        Largest number of steps that will be taken.
    initial_log_weights : ndarray of shape (n_vertices,), default=None
        Unnormalised log weights of ``x_1`` (a data-independent prior);
        ``None`` for uniform weights.
    """

    # Flush when the normaliser has moved by more than this factor.
    _MAX_RATIO = 1e3

    def __init__(self, n_vertices, max_steps, initial_log_weights=None):
        m = int(n_vertices)
        self.n_vertices = m
        self.t = 1  # the current iterate is x_t
        if initial_log_weights is None:
            self._log_weights = np.zeros(m)
        else:
            self._log_weights = np.array(initial_log_weights, dtype=float)
        self._shift = self._log_weights.max()
        self._scaled = np.exp(self._log_weights - self._shift)
        self._total = self._scaled.sum()  # x_t = _scaled / _total
        # x_1, for averages that leave it out: a scalar when uniform.
        self._start = (1.0 / m if initial_log_weights is None
                       else self._scaled / self._total)
        # _inverse_sums[i] - _inverse_sums[j] = 1 / Z_{j+1} + ... + 1 / Z_i.
        self._inverse_sums = np.zeros(int(max_steps) + 2)
        self._inverse_sums[1] = 1.0 / self._total
        # The iterates x_1 .. x_{_last[k]} are summed into _folded[k].
        self._last = np.zeros(m, dtype=np.int64)
        self._folded = np.zeros(m)
        self._total_range = [self._total, self._total]

    def step(self, vertices, gradient, step_size):
        """Take one multiplicative step with a sparse gradient.

        Parameters
        ----------
        vertices : ndarray of int
            Distinct vertices where the gradient is non-zero.
        gradient : ndarray of float
            The gradient at those vertices.
        step_size : float
            tau.
        """
        t = self.t
        if t + 1 >= len(self._inverse_sums):
            raise RuntimeError("more steps than max_steps")
        vertices = np.asarray(vertices, dtype=np.int64)
        sums = self._inverse_sums
        old = self._scaled[vertices]
        # Bank the iterates up to x_t before their weight changes.
        self._folded[vertices] += old * (sums[t] - sums[self._last[vertices]])
        self._last[vertices] = t
        self._log_weights[vertices] -= step_size * np.asarray(gradient, dtype=float)
        new = np.exp(self._log_weights[vertices] - self._shift)
        self._scaled[vertices] = new
        self._total += new.sum() - old.sum()
        low, high = self._total_range
        low, high = min(low, self._total), max(high, self._total)
        self._total_range = [low, high]
        if (high > self._MAX_RATIO * low or not np.isfinite(self._total)
                or self._total <= 0):
            self._flush()
        self.t = t + 1
        sums[t + 1] = sums[t] + 1.0 / self._total

    def _flush(self):
        """Bank every vertex's share of x_1..x_t and renormalise exactly."""
        t = self.t
        sums = self._inverse_sums
        self._folded += self._scaled * (sums[t] - sums[self._last])
        self._last[:] = t
        sums[t] = 0.0
        # Rescale so that the weights sum to one, recomputing from the logs.
        self._shift = self._log_weights.max()
        np.exp(self._log_weights - self._shift, out=self._scaled)
        total = self._scaled.sum()
        self._shift += np.log(total)
        self._scaled /= total
        self._total = self._scaled.sum()
        self._total_range = [self._total, self._total]

    def current(self):
        """The current iterate x_t (probabilities over the vertices)."""
        self._flush()
        return self._scaled / self._total

    def average(self, include_start=True):
        """The anytime average ``w_t = (x_1 + ... + x_t) / t``.

        With ``include_start=False`` (and t > 1), the average of the
        iterates the data produced, ``(x_2 + ... + x_t) / (t - 1)``.
        """
        self._flush()
        if include_start or self.t == 1:
            average = self._folded / self.t
        else:
            # Rounding can leave tiny negatives where x_1 dominated.
            average = np.maximum(self._folded - self._start, 0.0)
        # Rounding aside this already sums to 1; make it exact.
        return average / average.sum()


# I.i.d. vertex draws from a weight vector: the exponential mechanism with
# scores log(weights), drawn by inverse CDF.
draw_vertices = proportional_draws


def vertex_sampling_mirror_descent(gradient, n_vertices, *, n_steps, n_draws,
                                   refreshes, step_size, rng,
                                   initial_log_weights=None, verbose=0):
    """Private stochastic mirror descent with vertex sampling.

    Algorithm 5 of González, Guzmán and Paquette (2024).

    For t = 1..T: ``w_t`` is the average of the iterates ``x_1..x_t``; at
    refresh steps (the paper's: every step while t <= q, then every q-th
    step; :func:`skdpopt.plans.logistic_simplex.refresh_steps`) K vertices
    are drawn i.i.d. from ``w_t`` and the gradient point becomes their
    average (otherwise the previous one is kept); the stochastic gradient at
    that point on the t-th batch updates ``x_{t+1} ∝ x_t exp(-tau g_t)``.
    The output is the average of K vertices drawn from the average of the
    iterates the data produced, ``(x_2 + ... + x_{T+1}) / T``.  The paper
    draws it from ``w_T``, which never uses the last batch and keeps the
    uniform start ``x_1`` at weight 1/T: at the T = 1 to 3 that a tight
    budget affords, that makes half or more of the output uniform noise.
    Any data-independent mixture of iterates has the same privacy bound
    (docs/privacy/dplogisticsimplex.md), so the accounting is unchanged.

    Parameters
    ----------
    gradient : callable
        ``gradient(t, vertices)`` returns ``(vertex_indices, values)``, the
        sparse stochastic gradient over vertex weights on batch t (0-based)
        at the average of ``vertices``.  Each batch must be used once.
    n_vertices : int
    n_steps : int
        T.
    n_draws : int
        K, vertices drawn at each refresh and for the output.
    refreshes : array-like of int
        The steps (1-based) at which K vertices are drawn.
    step_size : float
        tau.
    rng : numpy.random.Generator
    initial_log_weights : ndarray of shape (n_vertices,), default=None
        Log weights of the starting point ``x_1`` (data-independent); seed
        001 starts from uniform weights (``None``).  Mirror descent's regret
        then depends on ``KL(u || x_1)`` instead of ``log m``.
    verbose : int, default=0
        Print progress about ten times per run.

    Returns
    -------
    ndarray of int of shape (K,)
        The released vertices; the output point is their average.
    """
    iterates = EntropicIterates(n_vertices, n_steps, initial_log_weights)
    refreshes = set(np.asarray(refreshes).tolist())
    sampled = None
    released = 0  # data-dependent draws, for progress messages
    start = time.perf_counter()
    report_every = max(1, n_steps // 10)
    for t in range(1, n_steps + 1):
        if t in refreshes:
            sampled = draw_vertices(rng, iterates.average(), n_draws)
            if iterates.t > 1:  # the starting point reveals nothing
                released += n_draws
        vertices, values = gradient(t - 1, sampled)
        iterates.step(vertices, values, step_size)
        if verbose and t % report_every == 0:
            print(f"-- Step {t}/{n_steps}, vertices drawn: {released}, "
                  f"elapsed: {time.perf_counter() - start:.2f} s")
    # The output leaves out the data-free start x_1 (see the docstring).
    return draw_vertices(rng, iterates.average(include_start=False), n_draws)


def linear_model_gradient(
    X, y, loss, vertex_set, batches, intercept_value=None, feature_bound=None,
    sample_weight=None,
):
    """Stochastic gradient oracle of a linear model for the vertex solvers.

    The model predicts ``<coef, x> + intercept_value * c`` where ``(coef, c)``
    is a point of the polytope ``vertex_set`` over the features of X plus,
    when ``intercept_value`` is given, one last coordinate c whose feature is
    the constant ``intercept_value``.  The gradient on a batch is the mean
    of ``dloss(p_i, y_i) (x_i, intercept_value)`` over its rows, and is
    non-zero only on the features the batch touches: a CSR batch costs time
    in its non-zeros and the sampled point's K vertices, never in the
    number of features.

    Parameters
    ----------
    X : ndarray or CSR matrix of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,)
    loss : object
        A loss from :mod:`skdpopt.losses`.
    vertex_set : VertexSet
        Over ``n_features`` (+1 with an intercept) coordinates.
    batches : list of ndarray of int
        Rows of each batch.
    intercept_value : float or None
    feature_bound : float or None, default=None
        If given, each batch's entries are clipped to
        ``[-feature_bound, feature_bound]`` as it is read: the same gradients
        as clipping X first, without a clipped copy of the whole of X.
    sample_weight : ndarray of shape (n_samples,) or None, default=None
        Row weights in [0, 1], multiplying each clipped derivative (the
        sensitivity stays that of unweighted rows).

    Returns
    -------
    callable
        ``gradient(t, vertices)`` as :func:`vertex_sampling_mirror_descent`
        expects.
    """
    n_features = X.shape[1]
    sparse = sp.issparse(X)
    point = np.zeros(vertex_set.n_features)
    state = {"vertices": None, "support": np.empty(0, dtype=np.int64)}

    def gradient(t, vertices):
        if vertices is not state["vertices"]:
            # O(K): clear the previous point's support, write the new one.
            point[state["support"]] = 0.0
            support, values = vertex_set.sparse_point(vertices)
            point[support] = values
            state["vertices"], state["support"] = vertices, support
        rows = batches[t]
        X_batch = X[rows]  # fancy indexing: a fresh copy, safe to clip in place
        if feature_bound is not None:
            values = X_batch.data if sparse else X_batch
            np.clip(values, -feature_bound, feature_bound, out=values)
        # Clipping at the loss's Lipschitz bound changes nothing but maps a
        # NaN (an overflowed prediction) to 0, inside the bound; the overflow
        # warning would say that an extreme record exists.
        with np.errstate(over="ignore", invalid="ignore"):
            prediction = row_dots(X_batch, point[:n_features])
            if intercept_value is not None:
                prediction = prediction + intercept_value * point[n_features]
            residual = clip_scalars(
                loss.derivative(np.asarray(prediction).ravel(), y[rows]),
                loss.lipschitz)
        if sample_weight is not None:
            residual *= sample_weight[rows]
        residual /= len(rows)
        # Sums in float64, in blocks of rows (see skdpopt._sums); sparse,
        # over the features the batch touches only.
        if sparse:
            features, feature_gradient = touched_column_sums(X_batch.tocsr(),
                                                             residual)
        else:
            features = np.arange(n_features)
            feature_gradient = column_sums(X_batch, residual)
        if intercept_value is not None:
            features = np.append(features, n_features)
            feature_gradient = np.append(feature_gradient,
                                         intercept_value * total(residual))
        return vertex_set.vertex_gradient(features, feature_gradient)

    return gradient


def vertex_sampling_logistic(problem, plan, rng, *, verbose=0):
    """DPLogisticSimplex's fit of one binary problem.

    The weights live in the l1 ball (or simplex) over the features only;
    the intercept is outside it.  With an intercept, the log-odds of the
    problem's share of positives from the released class totals is the
    offset at which mirror descent evaluates its gradients (so that the
    first draws look for features that explain the labels beyond their
    base rate); after Algorithm 5 has released a direction u (the average
    of the drawn vertices), noisy Newton steps fit ``coef = a u / ||u||_1``
    with ``0 <= a <= R`` and the intercept (:func:`_refit`).

    Parameters
    ----------
    problem : skdpopt.solvers.problems.LinearProblem
        ``X`` (entries are clipped to ``feature_bound`` as they are read),
        ``y`` the +-1 targets, ``radius``, ``constraint``,
        ``feature_bound``, ``fit_intercept`` and ``weighting`` (released
        share, class and sample weights; None: unweighted, offset 0).
    plan : MirrorDescentPlan
        Reads ``n_steps``, ``n_vertices``, ``refresh_steps()``,
        ``step_size``, ``noise``, ``refit_steps``, ``refit_start``,
        ``refit_gradient_noise`` and ``refit_hessian_noise``.
    rng : numpy.random.Generator
    verbose : int, default=0

    Returns
    -------
    LinearResult
    """
    X, target, weighting = problem.X, problem.y, problem.weighting
    n_samples, n_features = X.shape
    if problem.constraint == "l1_ball":
        vertex_set = VertexSet.l1_ball(n_features, problem.radius)
    else:
        vertex_set = VertexSet.simplex(n_features, problem.radius)
    offset, loss, sample_weight = 0.0, _OffsetLogLoss(0.0), None
    if weighting is not None:
        offset = weighting.intercept_init()
        loss = _OffsetLogLoss(offset)
        if weighting.class_weighted:
            loss = ClassWeighted(loss, weighting.weights.positive,
                                 weighting.weights.negative)
        sample_weight = weighting.sample_weight
    batches = np.array_split(rng.permutation(n_samples), plan.n_steps)
    gradient = linear_model_gradient(X, target, loss, vertex_set, batches,
                                     feature_bound=problem.feature_bound,
                                     sample_weight=sample_weight)
    vertices = vertex_sampling_mirror_descent(
        _first_step_at_origin(gradient), vertex_set.n_vertices,
        n_steps=plan.n_steps, n_draws=plan.n_vertices,
        refreshes=plan.refresh_steps(), step_size=plan.step_size, rng=rng,
        verbose=verbose)
    row_weights = None if weighting is None else weighting.row_weights()
    return _refit(problem, vertex_set.point(vertices), offset, row_weights,
                  plan, rng)


def _refit(problem, direction, offset, row_weights, plan, rng):
    """Fit ``coef = a u / ||u||_1`` and the intercept by noisy Newton steps.

    u is the released direction.  The model's scores ``<u, x> / (||u||_1
    b)`` lie in [-1, 1] for clipped rows, so the two-parameter logistic
    regression on ``z = b (score, 1)`` has the public sensitivities the
    plan's noise is calibrated for (row weights in [0, 1] keep them).  The
    scale a stays in ``[0, R]``: the draws chose the direction's signs, and
    the noisy Newton steps may not flip them (a flip would come from their
    noise at least as often as from the data); the intercept is free.  The
    model stays in the polytope with at most K non-zeros.
    """
    X, b, R = problem.X, problem.feature_bound, problem.radius
    n_samples = X.shape[0]
    l1_norm = np.abs(direction).sum()
    support = np.flatnonzero(direction)
    scores = np.zeros(n_samples)
    if l1_norm > 0:
        columns = clip_features(X[:, support], b)
        scores = row_dots(columns, direction[support]) / (l1_norm * b)
    features = [scores] + ([np.ones(n_samples)] if problem.fit_intercept else [])
    Z = b * np.column_stack(features)
    n_params = Z.shape[1]
    # Start part of the way between ignoring the direction and the full
    # scale the polytope allows it.
    scale = plan.refit_start * R if l1_norm > 0 else 0.0
    start = [scale] + ([offset / b] if problem.fit_intercept else [])
    theta = noisy_newton_logistic(
        Z, problem.y, radius=R, n_steps=plan.refit_steps,
        gradient_noise=plan.refit_gradient_noise,
        hessian_noise=plan.refit_hessian_noise, rng=rng, start=start,
        nonnegative=np.arange(n_params) == 0, noise=plan.noise,
        bounded=np.arange(n_params) == 0, sample_weight=row_weights)
    coef = (direction * (theta[0] / l1_norm) if l1_norm > 0
            else np.zeros_like(direction))
    intercept = theta[1] * b if problem.fit_intercept else 0.0
    return LinearResult(coef, float(intercept))


@dataclass(frozen=True)
class _OffsetLogLoss(LogLoss):
    """The log loss of ``p + offset``: the model's intercept held fixed."""

    offset: float = 0.0

    def derivative(self, p, y):
        return super().derivative(p + self.offset, y)


def _first_step_at_origin(gradient):
    """The oracle, with the first step's gradient taken at the origin.

    Step 1's vertices are drawn from the uniform start, whose mean is the
    origin for the l1 ball: evaluating there instead of at K random
    vertices (weight R / K each) spends nothing and removes the noise of
    that data-free draw from the first gradient.
    """
    origin = np.empty(0, dtype=np.int64)

    def first_at_origin(t, vertices):
        return gradient(t, origin if t == 0 else vertices)

    return first_at_origin
