"""Clipping data to public bounds, the way sensitivity is bounded.

The bounds are never computed from the data: they are constructor
parameters, or (per row) a public clip norm over the row's own norm.  The
input is never modified; dense and sparse inputs keep their format.  Norms
and clipped values stay finite for any finite input, however large
(docs/privacy/dpsgd.md, "Extreme records and floating point").
"""

import numpy as np
import scipy.sparse as sp


def clip_features(X, bound):
    """X with every entry clipped to ``[-bound, bound]``.

    ``bound`` is one float for every column, or an array of shape
    (n_features,) with one bound per column.  A copy when some entry is out
    of bounds; X itself (never written to) when all are inside, which
    spares a copy of a large pre-scaled input.  Sparse input stays sparse
    (zeros are inside the bounds).
    """
    if np.ndim(bound):
        return _clip_columns(X, np.asarray(bound, dtype=float))
    values = X.data if sp.issparse(X) else X
    # min/max reduce without a temporary array the size of X.
    if values.size == 0 or (values.min() >= -bound and values.max() <= bound):
        return X
    if sp.issparse(X):
        X = X.copy()
        np.clip(X.data, -bound, bound, out=X.data)
        return X
    return np.clip(X, -bound, bound)


def _clip_columns(X, bounds):
    """:func:`clip_features` with one bound per column (in X's dtype)."""
    if X.shape[0] == 0:
        return X
    bounds = _rounded_down(bounds, X.dtype)
    if sp.issparse(X):
        # The column of each stored entry: its index in CSR, its run in CSC.
        X = X.tocsr() if X.format not in ("csr", "csc") else X
        if X.format == "csr":
            columns = X.indices
        else:
            columns = np.repeat(np.arange(X.shape[1]), np.diff(X.indptr))
        limit = bounds[columns]
        if np.all((X.data >= -limit) & (X.data <= limit)):
            return X
        X = X.copy()
        np.clip(X.data, -limit, limit, out=X.data)
        return X
    # Per-column reductions: no temporary array the size of X.
    if np.all(X.min(axis=0) >= -bounds) and np.all(X.max(axis=0) <= bounds):
        return X
    return np.clip(X, -bounds, bounds)


def clip_blocks(X, blocks, bounds):
    """X with each row's part in every block scaled into the l2 ball of the
    block's bound.

    ``blocks`` numbers the columns' blocks (contiguous, non-decreasing,
    from 0; see :func:`skdpopt._declared.declared_blocks`) and ``bounds``
    holds one bound per column; a block's bound is the largest of its
    columns'.  After it, a row's part in block b has l2 norm at most
    ``B_b`` whatever the records, so a block's gradient has the l2
    sensitivity of one column's (``docs/privacy/dplasso.md``).  A one-hot
    block (one entry of at most ``B_b`` per row) is left as it is.  X
    itself when no row exceeds; sparse input stays sparse.
    """
    blocks = np.asarray(blocks)
    starts = np.flatnonzero(np.r_[True, np.diff(blocks) != 0])
    limits = np.maximum.reduceat(np.asarray(bounds, dtype=float), starts)
    if X.shape[0] == 0 or starts.size == X.shape[1]:
        return X
    if sp.issparse(X):
        # Duplicate entries summed first: a row's norm is of its values.
        rows_first = X.tocsr(copy=True)
        rows_first.sum_duplicates()
        rows = np.repeat(np.arange(X.shape[0]), np.diff(rows_first.indptr))
        block = blocks[rows_first.indices]
        key = rows * starts.size + block
        _, where = np.unique(key, return_inverse=True)
        norms = np.sqrt(np.bincount(where, weights=rows_first.data.astype(float) ** 2))
        factor = _shrink(norms[where], limits[block])
        if np.all(factor == 1.0) and rows_first.nnz == X.nnz:
            return X  # in its own format
        clipped = rows_first.astype(np.float64)
        clipped.data *= factor
        return clipped.asformat(X.format)
    values = np.asarray(X, dtype=float)
    norms = np.sqrt(np.add.reduceat(values * values, starts, axis=1))
    factor = _shrink(norms, limits)
    if np.all(factor == 1.0):
        return X
    return values * factor[:, blocks]


def _shrink(norms, limits):
    """1 where a norm is within its limit, else the factor that brings it
    just inside (a scaled row's norm may round up by a few ulps)."""
    inside = limits * (1.0 - 8.0 * np.finfo(float).eps)
    return np.where(norms <= limits, 1.0, inside / np.maximum(norms, 1e-300))


def _rounded_down(bounds, dtype):
    """``bounds`` in ``dtype`` (a float dtype), never above their value: a
    clip to them stays within the public bounds."""
    if not np.issubdtype(dtype, np.floating):
        return bounds
    cast = bounds.astype(dtype)
    return np.where(cast > bounds, np.nextafter(cast, cast.dtype.type(0)), cast)


def clip_targets(y, bound):
    """Copy of y clipped to ``[-bound, bound]``."""
    return np.clip(np.asarray(y, dtype=float), -bound, bound)


def example_norms(X, offset=0.0):
    """L2 norm of each row with ``offset`` appended, ``||(x_i, offset)||``.

    Computed in float64 whatever X's dtype (a float32 square overflows at
    about 1.8e19), and without overflow or underflow: rows whose plain sum
    of squares is not safely representable are recomputed scaled by their
    largest entry.  The result is ``inf`` only for a row whose norm itself
    exceeds the float64 maximum.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n_samples, n_features)
    offset : float, default=0.0
        A constant extra entry of every row (1 for an intercept).

    Returns
    -------
    ndarray of shape (n_samples,), float64
    """
    sparse = sp.issparse(X)
    if sparse:
        X = sp.csr_matrix(X)
        X64 = X if X.dtype == np.float64 else X.astype(np.float64)
        squares = np.asarray(X64.multiply(X64).sum(axis=1), dtype=float).ravel()
    else:
        # einsum casts blocks on the fly: no float64 copy of float32 X.
        squares = np.einsum("ij,ij->i", X, X, dtype=np.float64)
    with np.errstate(over="ignore"):
        squares += offset * offset
    # Squares of entries above ~1.3e154 overflow; those below ~1e-154 lose
    # precision as subnormals.  Only such rows take the scaled path.
    unsafe = ~((squares > _SMALLEST_SAFE_SQUARE) & (squares < _LARGEST_SAFE_SQUARE))
    norms = np.sqrt(squares, out=squares)
    if unsafe.any():
        rows = X[np.flatnonzero(unsafe)] if sparse else X[unsafe]
        norms[unsafe] = _scaled_norms(rows, abs(offset))
    return norms


# Bounds on a sum of squares inside which it was computed without overflow
# or loss of precision to subnormals (with room for up to 2**20 terms).
_SMALLEST_SAFE_SQUARE = np.finfo(np.float64).tiny / np.finfo(np.float64).eps
_LARGEST_SAFE_SQUARE = np.finfo(np.float64).max / 2**20


def _scaled_norms(rows, offset):
    """``||(x_i, offset)||`` of a few rows, each scaled by its largest entry."""
    if sp.issparse(rows):
        rows = sp.csr_matrix(rows, dtype=np.float64)
        scale = np.maximum(abs(rows).max(axis=1).toarray().ravel(), offset)
        safe = np.where(scale > 0, scale, 1.0)
        scaled = sp.diags(1.0 / safe) @ rows  # stays sparse
        sums = np.asarray(scaled.multiply(scaled).sum(axis=1)).ravel()
    else:
        rows = np.asarray(rows, dtype=np.float64)
        scale = np.abs(rows).max(axis=1, initial=offset)
        safe = np.where(scale > 0, scale, 1.0)
        scaled = rows / safe[:, None]
        sums = np.einsum("ij,ij->i", scaled, scaled)
    sums += (offset / safe) ** 2
    with np.errstate(over="ignore"):
        return scale * np.sqrt(sums)


def clip_scalars(values, limit):
    """Clip ``values`` to ``[-limit, limit]`` in place; NaN becomes 0.

    The per-example factor of a linear model's gradient (a residual, a loss
    derivative) is clipped this way.  A NaN factor (from ``inf - inf`` in a
    prediction overflowed by an extreme record) is replaced by 0: a fixed
    rule, which does not look at the data, and whose result lies inside the
    clipping interval, so the sensitivity argument is unchanged.  Infinite
    factors clip to the bounds like any other large value.

    Parameters
    ----------
    values : ndarray of float64
        Written to.
    limit : float or ndarray
        Non-negative bound, per entry or shared.

    Returns
    -------
    ndarray
        ``values``.
    """
    return clip_scalars_and_sum(values, limit)[0]


def clip_scalars_and_sum(values, limit):
    """:func:`clip_scalars`, and the clipped values' sum (``values.sum()``,
    which the NaN check computes anyway).

    Parameters
    ----------
    values : 1-D ndarray of float64
        Written to.
    limit : float or ndarray
        Non-negative bound, per entry or shared.

    Returns
    -------
    values : ndarray
    total : float
    """
    # In place, without temporaries (np.clip, or a negated copy of limit,
    # are several times slower on large arrays): max(v, -L) = -min(-v, L).
    # minimum propagates NaN.
    np.minimum(values, limit, out=values)
    np.negative(values, out=values)
    np.minimum(values, limit, out=values)
    np.negative(values, out=values)
    # A sum is NaN if some entry is (or, rarely, if it overflows): only
    # then look for the NaN entries.
    total = float(values.sum())
    if total != total:
        values[np.isnan(values)] = 0.0
        total = float(values.sum())
    return values, total


# Rows per block where a per-row statistic needs a scaled copy.
_ROW_BLOCK = 4096


def row_abs_max(X, bound=None):
    """``max_j |x_ij|`` of every row, dense or sparse, without overflow;
    with an array ``bound`` of shape (n_features,), ``max_j |x_ij| / bound_j``
    (how far each row reaches in units of its columns' bounds)."""
    if bound is not None and np.ndim(bound):
        scale = 1.0 / np.asarray(bound, dtype=float)
        if not sp.issparse(X):
            # A block of rows at a time: no float64 copy of X whole.
            X = np.asarray(X)
            reach = np.zeros(X.shape[0])
            for start in range(0, X.shape[0], _ROW_BLOCK):
                rows = slice(start, start + _ROW_BLOCK)
                if X.shape[1]:
                    reach[rows] = (np.abs(X[rows]) * scale).max(axis=1)
            return reach
        X = sp.csr_matrix(X) @ sp.diags(scale)
    if sp.issparse(X):
        return np.asarray(abs(X).max(axis=1).todense()).ravel()
    X = np.asarray(X)
    if X.shape[1] == 0:
        return np.zeros(X.shape[0])
    return np.abs(X).max(axis=1)


def clipped_share(X, bound):
    """Each row's share of entries outside ``[-bound, bound]``, in [0, 1].

    Non-finite entries count as outside.  Sparse rows count their stored
    entries (zeros are inside).

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n_samples, n_features)
    bound : float

    Returns
    -------
    ndarray of shape (n_samples,)
    """
    n_features = max(X.shape[1], 1)
    if sp.issparse(X):
        X = sp.csr_matrix(X)
        rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))
        outside = ~(np.abs(X.data) <= bound)
        return np.bincount(rows[outside], minlength=X.shape[0]) / n_features
    return np.count_nonzero(~(np.abs(X) <= bound), axis=1) / n_features
