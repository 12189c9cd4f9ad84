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
  model (logistic regression, ...) for it, on dense or CSR batches.

Nothing here validates input or decides a step size: the estimator
calibrates ``tau`` with :mod:`skdpopt.accounting` from the number of draws
the run makes (:func:`count_vertex_draws`) and their sensitivity.
"""

import time
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from .._clipping import clip_scalars
from ..mechanisms import proportional_draws


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

    @property
    def negative_vertex(self):
        """Index of ``-R e_j`` for each feature j, -1 where there is none."""
        return self._negative_vertex

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

    def current_log(self):
        """log x_t, accurate even for vanishing weights."""
        self._flush()
        return self._log_weights - self._shift - np.log(self._total)

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


def draw_vertices(rng, probabilities, size):
    """Draw ``size`` i.i.d. indices with the given probabilities.

    :func:`skdpopt.mechanisms.proportional_draws`: inverse-CDF sampling,
    the exponential mechanism with scores ``log(probabilities)``.

    Parameters
    ----------
    rng : numpy.random.Generator
    probabilities : ndarray of shape (m,)
        Non-negative weights (normalised or not).
    size : int

    Returns
    -------
    ndarray of int of shape (size,)
    """
    return proportional_draws(rng, probabilities, size)


def refresh_steps(n_steps, refresh_every):
    """Steps (1-based) at which Algorithm 5 draws fresh vertices.

    Every step during the first ``q`` steps, then every q-th step.
    """
    t = np.arange(1, n_steps + 1)
    return t[(t <= refresh_every) | (t % refresh_every == 0)]


def count_vertex_draws(n_steps, n_draws, refresh_every):
    """Number of data-dependent vertex draws of :func:`vertex_sampling_mirror_descent`.

    K draws at every refresh step except the first (at step 1 the average
    is the uniform starting point, which depends on no data), and K for the
    output.  Never more than the ``T K / q + q K + K`` of González, Guzmán
    and Paquette (2024).
    """
    refreshes = refresh_steps(n_steps, refresh_every)
    return n_draws * (int(np.count_nonzero(refreshes > 1)) + 1)


@dataclass
class MirrorDescentResult:
    """Output of :func:`vertex_sampling_mirror_descent`.

    Attributes
    ----------
    vertices : ndarray of int of shape (K,)
        The released vertices; the output point is their average.
    average : ndarray of shape (n_vertices,)
        The final average weights the output was drawn from (not private:
        for diagnostics and tests only).
    n_steps : int
        Steps taken.
    n_draws : int
        Vertex draws whose distribution depended on the data, each an
        exponential mechanism (see the module docstring).
    """

    vertices: np.ndarray
    average: np.ndarray
    n_steps: int
    n_draws: int


def vertex_sampling_mirror_descent(gradient, n_vertices, *, n_steps, n_draws,
                                   refresh_every, step_size, rng,
                                   initial_log_weights=None, verbose=0):
    """Private stochastic mirror descent with vertex sampling.

    Algorithm 5 of González, Guzmán and Paquette (2024).

    For t = 1..T: ``w_t`` is the average of the iterates ``x_1..x_t``; at
    refresh steps (every step while t <= q, then every q-th step) K vertices
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
    refresh_every : int
        q.
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
    MirrorDescentResult
    """
    iterates = EntropicIterates(n_vertices, n_steps, initial_log_weights)
    refreshes = set(refresh_steps(n_steps, refresh_every).tolist())
    sampled = None
    released = 0
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
    average = iterates.average(include_start=False)
    output = draw_vertices(rng, average, n_draws)
    released += n_draws
    return MirrorDescentResult(vertices=output, average=average, n_steps=n_steps,
                               n_draws=released)


def linear_model_gradient(
    X, y, loss, vertex_set, batches, intercept_value=None, feature_bound=None
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
            prediction = X_batch @ point[:n_features]
            if intercept_value is not None:
                prediction = prediction + intercept_value * point[n_features]
            residual = clip_scalars(
                loss.derivative(np.asarray(prediction).ravel(), y[rows]),
                loss.lipschitz)
        residual /= len(rows)
        if sparse:
            X_batch = X_batch.tocsr()
            weighted = X_batch.data * np.repeat(residual, np.diff(X_batch.indptr))
            features, inverse = np.unique(X_batch.indices, return_inverse=True)
            feature_gradient = np.bincount(inverse, weights=weighted,
                                           minlength=len(features))
        else:
            features = np.arange(n_features)
            feature_gradient = X_batch.T @ residual
        if intercept_value is not None:
            features = np.append(features, n_features)
            feature_gradient = np.append(feature_gradient,
                                         intercept_value * residual.sum())
        return vertex_set.vertex_gradient(features, feature_gradient)

    return gradient
