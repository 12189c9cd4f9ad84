"""In-memory backend of the data-access layer: numpy arrays and scipy
sparse matrices, the code paths the estimators always ran."""

from functools import lru_cache

import numpy as np
import scipy.sparse as sp

from .._clipping import clip_scalars, clip_scalars_and_sum, example_norms
from .._sums import (
    ROWS_PER_BLOCK,
    VALUES_PER_BLOCK,
    Columns,
    column_sums,
    row_dots,
    total,
)
from ..mechanisms import poisson_batches

_FLOAT64 = np.dtype(np.float64)
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
                 fit_intercept=True, sample_weight=None):
        self.X = X
        self.y = y
        self.loss = loss
        self.sample_weight = sample_weight
        self.n_samples, self.n_features = X.shape
        if clip_norm is None:
            self.limits = float(limit)
        else:
            limits = example_norms(X, float(fit_intercept))
            np.divide(clip_norm, limits, out=limits, where=limits > 0)
            np.minimum(limits, np.finfo(np.float64).max, out=limits)
            self.limits = limits

    @classmethod
    def of_rows(cls, X, y, limits, loss):
        """Rows gathered with their per-row bounds (a sample's), as they are."""
        rows = cls.__new__(cls)
        rows.X, rows.y, rows.limits, rows.loss = X, y, limits, loss
        rows.sample_weight = None  # weights are refused on Dask
        rows.n_samples, rows.n_features = X.shape
        return rows

    def gradient_sum(self, coef, intercept, rows=None):
        """``sum_i r_i x_i`` and ``sum_i r_i`` over ``rows`` (None: all),
        with each ``r_i`` (weighted, if the rows have weights) clipped
        (NaN -> 0)."""
        # take: the same rows as fancy indexing, several times faster on
        # the small batches of DP-SGD.
        if rows is None:
            X_batch = self.X
        elif type(self.X) is np.ndarray and type(rows) is np.ndarray:
            X_batch = self.X.take(rows, axis=0)
        else:  # a sparse matrix, or a slice of rows (gathered batches)
            X_batch = self.X[rows]
        y_batch = self.y if rows is None else self.y[rows]
        limits = self.limits
        if rows is not None and type(limits) is np.ndarray:
            limits = limits[rows]
        n_rows, n_columns = X_batch.shape
        # The per-step arithmetic of DP-SGD on a batch of a few hundred
        # rows, in as few numpy calls as it needs: one float64 block is
        # summed in one pass (what column_sums and total do with it);
        # np.dot is the same BLAS call as @, with less overhead.
        one_block = (type(X_batch) is np.ndarray and X_batch.dtype == _FLOAT64
                     and n_rows <= ROWS_PER_BLOCK
                     and n_rows * n_columns <= VALUES_PER_BLOCK)
        prediction = (np.dot(X_batch, coef) if one_block and type(coef) is np.ndarray
                      and coef.dtype == _FLOAT64 else row_dots(X_batch, coef))
        prediction += intercept
        residual = np.asarray(self.loss.derivative(prediction, y_batch),
                              dtype=np.float64).ravel()
        if self.sample_weight is not None:
            weight = self.sample_weight
            residual *= weight if rows is None else weight[rows]
        scaled, scaled_sum = clip_scalars_and_sum(residual, limits)
        if one_block:
            return np.dot(scaled, X_batch), scaled_sum
        # Sums in float64 whatever X's dtype (see skdpopt._sums).
        return column_sums(X_batch, scaled), total(scaled)

    def poisson_sampler(self, rng, sampling_rate, n_steps, block):
        """Poisson batches of rows for steps ``0 .. n_steps - 1``.

        Batches for ``block`` steps are drawn at a time, from ``rng``, when
        the first of them is asked for.
        """
        return _InMemoryPoissonSampler(self, rng, sampling_rate, n_steps, block)


class Segment:
    """Steps ``start .. stop - 1`` of a Poisson sampler.

    ``run(function, state, *args)`` calls ``function(state, batches,
    *args)`` where the segment's batches are, ``batches`` giving each
    step's ``(source, rows)`` in order (for ``source.gradient_sum``; a
    batch is valid until the next one is asked for), and returns its
    result, or a handle to it that the next segment's ``run`` takes as its
    state and the sampler's ``result`` turns into the value.
    """

    def __init__(self, start, stop, run):
        self.start, self.stop, self._run = start, stop, run

    def run(self, function, state, *args):
        return self._run(self, function, state, *args)


class _InMemoryPoissonSampler:
    def __init__(self, data, rng, sampling_rate, n_steps, block):
        self.data, self.rng = data, rng
        self.sampling_rate, self.n_steps, self.block = sampling_rate, n_steps, block

    def segments(self):
        """Segments of ``block`` steps; each draws its batches from the
        generator when it runs."""
        for start in range(0, self.n_steps, self.block):
            yield Segment(start, min(start + self.block, self.n_steps), self._run)

    def _run(self, segment, function, state, *args):
        rows, offsets = poisson_batches(self.rng, self.data.n_samples,
                                        self.sampling_rate,
                                        segment.stop - segment.start)
        batches = ((self.data, rows[offsets[i]:offsets[i + 1]])
                   for i in range(len(offsets) - 1))
        return function(state, batches, *args)

    @staticmethod
    def result(state):
        return state

    def batch(self, t):
        """``(source, rows)``: step t's rows, for ``source.gradient_sum``."""
        i = t % self.block
        if i == 0:
            self.rows, self.offsets = poisson_batches(
                self.rng, self.data.n_samples, self.sampling_rate,
                min(self.block, self.n_steps - t))
        return self.data, self.rows[self.offsets[i]:self.offsets[i + 1]]


def _as_records(a):
    """A C-contiguous 2-d array as a 1-d array of its rows (one void each),
    so that moving rows costs a memcpy each (twice as fast as 2-d indexing)."""
    return a.view(np.dtype((np.void, a.dtype.itemsize * a.shape[1]))).ravel()


def merge_by_step(pieces, buffers=None):
    """One chunk's pieces (one per block, in block order), grouped by step.

    Step s's rows are block 0's rows of step s, then block 1's, and so on.
    Each piece is scattered once into its final place: no sort, one copy.
    ``buffers``, a dict, keeps the output arrays for the next call with the
    same dict (fresh memory costs page faults), grown when too small.

    Returns ``(X_rows, y_rows, limits, offsets)``; step s of the chunk is
    ``offsets[s]:offsets[s + 1]``.
    """
    first = pieces[0][0]
    merged, places = step_layout([p[3] for p in pieces], first.shape[1:],
                                 first.dtype, pieces[0][1].dtype, buffers)
    for piece, where in zip(pieces, places, strict=True):
        place_rows(merged, where, *piece[:3])
    return merged


def place_rows(merged, where, X_rows, y_rows, limits):
    """Rows, their targets and bounds, to positions ``where`` of the
    arrays ``merged`` (``(X, y, limits, ...)``, see :func:`step_layout`)."""
    if X_rows.flags.c_contiguous:
        np.put(_as_records(merged[0]), where, _as_records(X_rows))
    else:
        merged[0][where] = X_rows
    np.put(merged[1], where, y_rows)
    np.put(merged[2], where, limits)


def step_layout(counts, row_shape, dtype, y_dtype=np.float64, buffers=None):
    """Where each block's rows of a chunk go when grouped by step.

    ``counts``: each block's rows per step, in block order.  Returns the
    output arrays ``(X_rows, y_rows, limits, offsets)`` (rows not yet
    written; step s is ``offsets[s]:offsets[s + 1]``) and, per block, the
    positions of its rows (in their order: grouped by step) in them.
    ``buffers`` as in :func:`merge_by_step`.
    """
    counts = np.array(counts, dtype=np.int64)  # (blocks, steps)
    offsets = np.zeros(counts.shape[1] + 1, dtype=np.int64)
    np.cumsum(counts.sum(axis=0), out=offsets[1:])
    # Where block k's rows of step s start in the merged arrays.
    starts = offsets[:-1] + np.cumsum(counts, axis=0) - counts
    m = int(offsets[-1])
    shapes = {"X": tuple(row_shape), "y": (), "limits": ()}
    dtypes = {"X": dtype, "y": y_dtype, "limits": np.float64}
    buffers = {} if buffers is None else buffers
    for name, shape in shapes.items():
        held = buffers.get(name)
        if held is None or len(held) < m or held.dtype != dtypes[name]:
            buffers[name] = np.empty((m + m // 16,) + shape, dtype=dtypes[name])
    places = []
    for start_k, counts_k in zip(starts, counts, strict=True):
        local = np.cumsum(counts_k) - counts_k  # where its steps start in the piece
        places.append(np.repeat(start_k - local, counts_k)
                      + np.arange(counts_k.sum()))
    return (*(buffers[name][:m] for name in shapes), offsets), places


# grid_positions reads a value's position among the candidates off the top
# _BUCKET_BITS bits of its float64 pattern (sign, exponent and 4 bits of
# mantissa: buckets a factor 2^(1/16) wide) where each bucket holds at most
# one candidate, as on the geometric grids of private bounds; arrays
# shorter than _MIN_BUCKETED values use a binary search.
_BUCKET_BITS = 16
_BUCKET_SHIFT = 64 - _BUCKET_BITS
_MIN_BUCKETED = 4096
_SIGN_MASK = np.int64(0x7FFFFFFFFFFFFFFF)


def _ordered_keys(values):
    """float64 values as int64 keys in the same order (-0.0 just below 0.0)."""
    bits = values.view(np.int64)
    return bits ^ ((bits >> 63) & _SIGN_MASK)


def _bucket(values):
    return (_ordered_keys(values) >> _BUCKET_SHIFT) + (1 << (_BUCKET_BITS - 1))


@lru_cache(maxsize=8)
def _bucket_bounds(grid_bytes):
    """For each bucket, ``#{candidates <= v}`` at its least and its largest
    value v, or None where some bucket holds two candidates or more."""
    grid = np.frombuffer(grid_bytes, dtype=np.float64)
    if np.any(np.diff(_bucket(grid)) == 0):
        return None
    ends = _ordered_keys(np.array([-np.inf, np.inf]))
    start = (np.arange(1 << _BUCKET_BITS, dtype=np.int64)
             - (1 << (_BUCKET_BITS - 1))) << _BUCKET_SHIFT
    first = np.clip(start, *ends)
    last = np.clip(start | ((1 << _BUCKET_SHIFT) - 1), *ends)
    # Back from keys to floats (the map is its own inverse).
    low, high = (np.searchsorted(grid, _ordered_keys(keys).view(np.float64),
                                 side="right") for keys in (first, last))
    return low, high - low


def grid_positions(grid, values):
    """``np.searchsorted(grid, values, side="right")`` for a sorted float64
    grid and NaN-free float64 values, the same integers, faster on long
    arrays: a value's bucket gives its position, or (where the bucket holds
    a candidate) one comparison with that candidate does."""
    bounds = (_bucket_bounds(grid.tobytes()) if values.size >= _MIN_BUCKETED
              else None)
    if bounds is None:
        return np.searchsorted(grid, values, side="right")
    low, width = bounds
    bucket = _bucket(values)
    position = low[bucket]
    # width 1: the bucket's one candidate, grid[position], is above its
    # least value; is it at most v?
    holds = width[bucket] == 1
    position += holds & (grid[np.minimum(position, len(grid) - 1)] <= values)
    return position


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
    position = grid_positions(np.asarray(grid, dtype=np.float64), columns)
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


