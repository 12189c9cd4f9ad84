"""In-memory backend of the data-access layer: numpy arrays and scipy
sparse matrices, the code paths the estimators always ran."""

import numpy as np
import scipy.sparse as sp

from .._clipping import clip_scalars, example_norms
from .._sums import Columns, column_sums, row_dots, total
from ..mechanisms import poisson_batches

# Index of the intercept's coordinate in greedy coordinate descent.
INTERCEPT = -1


class InMemoryLinearRows:
    """Clipped gradient sums of a linear model over rows held in memory.

    See :func:`skdpopt._data.linear_rows`.  With ``clip_norm``, the bound on
    each ``|r_i|``, ``clip_norm / ||(x_i, 1)||``, is computed once, in
    float64 and without overflow: one n-vector, the only per-row quantity
    kept.  A row of norm 0 contributes nothing whatever its bound, and one
    of infinite norm gets 0; bounds stay finite so that ``bound * x_ij`` is
    never ``inf * 0``.
    """

    in_memory = True

    def __init__(self, X, y, loss, *, clip_norm=None, limit=None,
                 fit_intercept=True):
        self.X = X
        self.y = y
        self.loss = loss
        self.n_samples, self.n_features = X.shape
        if clip_norm is None:
            self.limits = float(limit)
        else:
            limits = example_norms(X, float(fit_intercept))
            np.divide(clip_norm, limits, out=limits, where=limits > 0)
            np.minimum(limits, np.finfo(np.float64).max, out=limits)
            self.limits = limits

    def gradient_sum(self, coef, intercept, rows=None):
        """``sum_i r_i x_i`` and ``sum_i r_i`` over ``rows`` (None: all),
        with each ``r_i`` clipped (NaN -> 0)."""
        # take: the same rows as fancy indexing, several times faster on
        # the small batches of DP-SGD.
        if rows is None:
            X_batch = self.X
        elif type(self.X) is np.ndarray and type(rows) is np.ndarray:
            X_batch = self.X.take(rows, axis=0)
        else:  # a sparse matrix, or a slice of rows (Dask's staged batches)
            X_batch = self.X[rows]
        y_batch = self.y if rows is None else self.y[rows]
        limits = self.limits
        if rows is not None and np.ndim(limits):
            limits = limits[rows]
        residual = self.loss.derivative(row_dots(X_batch, coef) + intercept, y_batch)
        scaled = clip_scalars(np.asarray(residual, dtype=np.float64).ravel(), limits)
        # Sums in float64 whatever X's dtype (see skdpopt._sums).
        return column_sums(X_batch, scaled), total(scaled)

    def poisson_sampler(self, rng, sampling_rate, n_steps, block):
        """Poisson batches of rows for steps ``0 .. n_steps - 1``.

        Batches for ``block`` steps are drawn at a time, from ``rng``, when
        the first of them is asked for.
        """
        return _InMemoryPoissonSampler(self, rng, sampling_rate, n_steps, block)


class _InMemoryPoissonSampler:
    def __init__(self, data, rng, sampling_rate, n_steps, block):
        self.data, self.rng = data, rng
        self.sampling_rate, self.n_steps, self.block = sampling_rate, n_steps, block

    def batch(self, t):
        """``(source, rows)``: step t's rows, for ``source.gradient_sum``."""
        i = t % self.block
        if i == 0:
            self.rows, self.offsets = poisson_batches(
                self.rng, self.data.n_samples, self.sampling_rate,
                min(self.block, self.n_steps - t))
        return self.data, self.rows[self.offsets[i]:self.offsets[i + 1]]


def grid_counts(values, grid):
    """``#{i : values[i, j] < grid[k]}`` for every column j and candidate k
    (a 1-D ``values`` is one column and gives a 1-D answer).

    Vectorised: each value's position in the grid (a binary search), then
    one histogram of positions per column and a cumulative sum.  Values are
    only compared with candidates, so no value can overflow; NaN counts as
    infinite.
    """
    values = np.nan_to_num(np.asarray(values, dtype=np.float64), nan=np.inf)
    columns = values[:, None] if values.ndim == 1 else values
    n_columns, m = columns.shape[1], len(grid)
    # x < grid[k] exactly when k >= #{candidates <= x}.
    position = np.searchsorted(grid, columns, side="right")
    offsets = np.arange(n_columns) * (m + 1)
    hist = np.bincount((position + offsets).ravel(),
                       minlength=n_columns * (m + 1)).reshape(n_columns, m + 1)
    below = np.cumsum(hist, axis=1)[:, :m]
    return below[0] if values.ndim == 1 else below


def marginal_counts_inmemory(codes, cardinalities, attributes):
    """:func:`skdpopt._data.marginal_counts` on an in-memory array."""
    codes = np.asarray(codes)
    if codes.size and (codes.min() < 0 or np.any(
            codes.max(axis=0) >= np.asarray(cardinalities))):
        raise ValueError(
            "some values lie outside the declared domain (codes must be in "
            "0 .. cardinality - 1 for each column)."
        )
    counts = []
    for attribute in attributes:
        shape = tuple(cardinalities[j] for j in attribute)
        if not attribute:
            counts.append(np.array(codes.shape[0], dtype=np.int64))
            continue
        flat = np.ravel_multi_index(tuple(codes[:, j] for j in attribute), shape)
        counts.append(np.bincount(flat, minlength=int(np.prod(shape)))
                      .astype(np.int64).reshape(shape))
    return counts


class ClippedLeastSquares:
    """Residuals and gradients of the clipped least-squares loss.

    Holds the data once (dense ndarray or CSC matrix, so that a column costs
    its non-zeros) and the residual ``z = X w + b - y`` of the current
    iterate, updated in O(n) (dense) or O(nnz_j) (sparse) per coordinate
    move; the full gradient is one matrix-vector product, O(nnz).

    Parameters
    ----------
    X : ndarray or scipy.sparse matrix of shape (n_samples, n_features)
        Features, already clipped to ``[-feature_bound, feature_bound]``.
    y : ndarray of shape (n_samples,)
        Targets, already clipped to the public target bound.
    feature_bound : float
    residual_bound : float
    """

    def __init__(self, X, y, feature_bound, residual_bound):
        if sp.issparse(X):
            X = sp.csc_matrix(X)
            X.sort_indices()
        self.X = X
        self.y = np.asarray(y, dtype=float)
        self.n_samples, self.n_features = X.shape
        self.feature_bound = float(feature_bound)
        self.residual_bound = float(residual_bound)
        self.residual = -self.y.copy()
        self._columns = Columns(X)  # its sums in float64 (see skdpopt._sums)
        self._column_squares = None

    def reset(self, coef, intercept):
        """Set the residual to that of ``(coef, intercept)``."""
        self.residual = row_dots(self.X, coef)
        self.residual += intercept - self.y

    def clipped_residual(self):
        # A NaN residual (an overflowed prediction) counts as 0, inside [-C, C].
        return clip_scalars(self.residual.copy(), self.residual_bound)

    def mean_square_residual(self):
        """``(1/n) sum_i clip(r_i)^2``: each term lies in ``[0, C^2]``."""
        r = self.clipped_residual()
        return total(r * r) / self.n_samples

    def gradient(self):
        """Gradient of the average clipped loss: coefficients, intercept.

        The intercept's entry is for the coordinate whose feature is the
        constant ``feature_bound`` (intercept = feature_bound * coordinate).
        """
        r = self.clipped_residual()
        # In float64 whatever X's dtype, a block of X at a time: a float32
        # sum rounds in a data-dependent order and breaks the sensitivity.
        grad = self._columns.sums(r) / self.n_samples
        return grad, self.feature_bound * total(r) / self.n_samples

    def column(self, j):
        """Row indices (or None for all rows) and values of column j."""
        if sp.issparse(self.X):
            start, end = self.X.indptr[j], self.X.indptr[j + 1]
            return self.X.indices[start:end], self.X.data[start:end]
        return None, self.X[:, j]

    def move(self, j, delta):
        """Add ``delta`` to coefficient j (``INTERCEPT``: to the intercept)."""
        if j == INTERCEPT:
            self.residual += delta
            return
        rows, values = self.column(j)
        if rows is None:
            self.residual += delta * values
        else:
            self.residual[rows] += delta * values

    def curvature(self, j):
        """``(1/n) sum_i x_ij^2``, an upper bound on coordinate j's smoothness."""
        if self._column_squares is None:
            # One pass over X (in float64) beats a strided column read per step.
            self._column_squares = self._columns.squares() / self.n_samples
        return float(self._column_squares[j])


