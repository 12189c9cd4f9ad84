"""Sums over rows that feed a release, accumulated in float64 whatever the
data's dtype, with bounded memory.

A sensitivity is a bound on how much an exact sum moves when one record
is replaced; the computed sum rounds, and how it rounds depends on the
data.  In float32 a column of 32,769 residuals of +1 followed by 100,000
of -0.0015 sums to 32,769 (each small term is below half a unit in the
last place of the running sum and vanishes), while changing the first +1
to -1 lets every small term count: the computed sum moves by 197 against
a sensitivity of 2.  Float64 only moves the threshold: a sequential float64
sum over n rows can lose terms below ``2^-53 n C`` (C the bound of one
term), which at a billion rows is again a multiple of the sensitivity.

So every sum here

* converts its terms to float64 a block of rows at a time (a float32 X is
  never copied whole: a block holds at most ``VALUES_PER_BLOCK`` values);
* adds at most ``ROWS_PER_BLOCK`` rows in one float64 pass (BLAS, a
  bincount, a pairwise numpy sum), so that a block's partial sum is within
  about ``ROWS_PER_BLOCK^2 2^-53 C = 2^-29 C`` of exact;
* adds the blocks' partial sums with compensated (Neumaier) summation,
  within about ``2^-52`` of the total (a CSC matrix's columns: a float64
  sum of their blocks' partials, within ``n / ROWS_PER_BLOCK`` roundings).

A record changes one block's partial sum and leaves the others as they
were, so the computed sum moves by the record's exact effect plus a
fraction far below ``2^-20`` of the sensitivity for any realistic number
of rows.  Blocks of 4,096 rows also keep BLAS single-threaded and in cache:
on a float32 X of 10^6 x 50 the float64 sum costs about what the float32
one did.
"""

import math

import numpy as np
import scipy.sparse as sp

# Rows added in one float64 pass, and float64 values converted at a time
# (2 MB).
ROWS_PER_BLOCK = 2**12
VALUES_PER_BLOCK = 2**18

__all__ = ["Columns", "column_sums", "column_squares", "gram", "group_sums",
           "row_blocks", "row_dots", "sum_parts", "total", "touched_column_sums"]


class _Compensated:
    """Neumaier summation of arrays of one shape."""

    def __init__(self, shape):
        self.sum = np.zeros(shape)
        self.correction = np.zeros(shape)

    def add(self, value):
        value = np.asarray(value, dtype=np.float64)
        total = self.sum + value
        with np.errstate(invalid="ignore", over="ignore"):
            lost = np.where(np.abs(self.sum) >= np.abs(value),
                            (self.sum - total) + value, (value - total) + self.sum)
        # An infinite term (never one of clipped data) makes the sum inf,
        # not NaN.
        self.correction += np.where(np.isfinite(lost), lost, 0.0)
        self.sum = total

    def result(self):
        return self.sum + self.correction


def sum_parts(parts):
    """Compensated sum of a sequence of equally shaped arrays (the partial
    sums of a Dask array's row blocks, say)."""
    parts = list(parts)
    if not parts:
        raise ValueError("no parts to sum")
    accumulator = _Compensated(np.shape(parts[0]))
    for part in parts:
        accumulator.add(part)
    return accumulator.result()


def row_blocks(n_rows, n_columns):
    """``(start, end)`` of row blocks of at most ROWS_PER_BLOCK rows and
    about VALUES_PER_BLOCK values: a caller that computes its own terms
    (clipping, say) sums them block by block, then adds the blocks'
    sums with :func:`sum_parts`."""
    rows = max(1, min(ROWS_PER_BLOCK, VALUES_PER_BLOCK // max(n_columns, 1)))
    return [(start, min(start + rows, n_rows)) for start in range(0, n_rows, rows)]


def _sparserow_blocks(indptr):
    """Row blocks of a CSR matrix: at most ROWS_PER_BLOCK rows and about
    VALUES_PER_BLOCK stored values (a longer row is a block of its own)."""
    n_rows = len(indptr) - 1
    blocks, start = [], 0
    while start < n_rows:
        by_values = int(np.searchsorted(indptr, indptr[start] + VALUES_PER_BLOCK,
                                        side="right")) - 1
        end = min(start + ROWS_PER_BLOCK, max(by_values, start + 1), n_rows)
        blocks.append((start, end))
        start = end
    return blocks


def _as_float64(block):
    return np.asarray(block, dtype=np.float64)


class _CSCBlocks:
    """The (column, row block) runs of a CSC matrix with sorted indices,
    for column sums that add at most ROWS_PER_BLOCK rows in one pass.
    Computed once per matrix: a solver sums the same columns at every step.
    """

    def __init__(self, X):
        if not X.has_sorted_indices:
            X = X.sorted_indices()
        self.X = X
        indptr = X.indptr
        self.spans = []  # (first, last, low, high, starts, columns)
        first, n_columns = 0, X.shape[1]
        while first < n_columns:
            # Columns whose stored values fill about VALUES_PER_BLOCK.
            last = int(np.searchsorted(indptr, indptr[first] + VALUES_PER_BLOCK,
                                       side="right")) - 1
            last = min(max(last, first + 1), n_columns)
            low, high = int(indptr[first]), int(indptr[last])
            if high > low:
                block = X.indices[low:high] // ROWS_PER_BLOCK
                change = np.empty(high - low, dtype=bool)
                change[0] = True
                np.not_equal(block[1:], block[:-1], out=change[1:])
                column_starts = indptr[first:last] - low
                change[column_starts[column_starts < high - low]] = True
                starts = np.flatnonzero(change)
                columns = np.searchsorted(indptr[first:last + 1] - low, starts,
                                          side="right") - 1
                self.spans.append((first, last, low, high, starts, columns))
            first = last

    def sums(self, terms):
        """Column sums of ``terms(data, rows)`` (float64 values)."""
        X = self.X
        out = np.zeros(X.shape[1])
        for first, last, low, high, starts, columns in self.spans:
            values = terms(X.data[low:high], X.indices[low:high])
            partial = np.add.reduceat(values, starts)
            out[first:last] = np.bincount(columns, weights=partial,
                                          minlength=last - first)
        return out


class Columns:
    """Column sums of one matrix, for many weight vectors.

    ``Columns(X).sums(w)`` is :func:`column_sums` ``(X, w)``; a CSC matrix's
    block structure is computed once, when the object is made.

    Parameters
    ----------
    X : ndarray or scipy.sparse matrix of shape (n_samples, n_features)
    """

    def __init__(self, X):
        self.X = X
        self._csc = (_CSCBlocks(X) if sp.issparse(X) and X.format == "csc"
                     else None)

    def sums(self, weights=None):
        """``X.T @ weights`` (``None``: column sums) in float64.

        Parameters
        ----------
        weights : array-like of shape (n_samples,) or None

        Returns
        -------
        ndarray of shape (n_features,)
        """
        if self._csc is None:
            return column_sums(self.X, weights)
        if weights is None:
            return self._csc.sums(lambda data, rows: _as_float64(data))
        weights = np.asarray(weights, dtype=np.float64).ravel()
        return self._csc.sums(lambda data, rows: _as_float64(data) * weights[rows])

    def squares(self):
        """``sum_i X[i, j] ** 2`` for each column j, in float64.

        Returns
        -------
        ndarray of shape (n_features,)
        """
        if self._csc is None:
            return column_squares(self.X)
        return self._csc.sums(lambda data, rows: _as_float64(data) ** 2)


def column_sums(X, weights=None):
    """``X.T @ weights`` (``weights=None``: column sums), in float64.

    Parameters
    ----------
    X : ndarray or scipy.sparse matrix of shape (n_samples, n_features)
        Any dtype; never converted whole.
    weights : array-like of shape (n_samples,) or None

    Returns
    -------
    ndarray of shape (n_features,)
    """
    n_rows, n_columns = X.shape
    if (type(X) is np.ndarray and X.dtype == np.float64 and n_rows <= ROWS_PER_BLOCK
            and n_rows * n_columns <= VALUES_PER_BLOCK
            and type(weights) is np.ndarray and weights.dtype == np.float64):
        # One float64 block (a DP-SGD batch): what the compensated sum of
        # one part is, without its overhead.
        return X.T @ weights.ravel()
    if weights is not None:
        weights = np.asarray(weights, dtype=np.float64).ravel()
    if sp.issparse(X):
        if X.format == "csc":
            return Columns(X).sums(weights)
        X = X.tocsr() if X.format != "csr" else X
        return _csr_sums(X, weights, X.indices, n_columns)
    X = np.asarray(X)
    total = _Compensated(n_columns)
    for start, end in row_blocks(n_rows, n_columns):
        block = _as_float64(X[start:end])
        total.add(block.sum(axis=0) if weights is None
                  else block.T @ weights[start:end])
    return total.result()


def _csr_sums(X, weights, index, n_out, square=False):
    """``bincount(index, X.data * weights of each value's row)`` (or of
    ``X.data ** 2``) over a CSR matrix's row blocks, in float64, the blocks
    added with compensation."""
    total = _Compensated(n_out)
    for start, end in _sparserow_blocks(X.indptr):
        low, high = X.indptr[start], X.indptr[end]
        values = _as_float64(X.data[low:high])
        if square:
            values = values * values
        if weights is not None:
            values = values * np.repeat(weights[start:end],
                                        np.diff(X.indptr[start:end + 1]))
        total.add(np.bincount(index[low:high], weights=values, minlength=n_out))
    return total.result()


def touched_column_sums(X, weights):
    """The columns a CSR matrix stores values in, and their weighted sums.

    :func:`column_sums` restricted to those columns, in memory and time
    proportional to the stored values rather than to the number of columns
    (a batch of a bag of words touches few of its columns).

    Parameters
    ----------
    X : scipy.sparse CSR matrix of shape (n_samples, n_features)
    weights : array-like of shape (n_samples,)

    Returns
    -------
    columns : ndarray of int
        Sorted, distinct.
    sums : ndarray of shape (len(columns),)
    """
    weights = np.asarray(weights, dtype=np.float64).ravel()
    columns, index = np.unique(X.indices, return_inverse=True)
    return columns, _csr_sums(X, weights, index.ravel(), len(columns))


def column_squares(X):
    """``sum_i X[i, j] ** 2`` for each column j, in float64.

    Parameters
    ----------
    X : ndarray or scipy.sparse matrix of shape (n_samples, n_features)

    Returns
    -------
    ndarray of shape (n_features,)
    """
    if sp.issparse(X) and X.format == "csc":
        return Columns(X).squares()
    if sp.issparse(X):
        X = X.tocsr() if X.format != "csr" else X
        return _csr_sums(X, None, X.indices, X.shape[1], square=True)
    X = np.asarray(X)
    total = _Compensated(X.shape[1])
    for start, end in row_blocks(*X.shape):
        block = _as_float64(X[start:end])
        total.add(np.einsum("ij,ij->j", block, block))
    return total.result()


def gram(Z, weights):
    """``sum_i weights[i] z_i z_i^T``, in float64 (Z dense).

    Parameters
    ----------
    Z : ndarray of shape (n_samples, n_params)
    weights : ndarray of shape (n_samples,)

    Returns
    -------
    ndarray of shape (n_params, n_params)
    """
    Z = np.asarray(Z)
    weights = np.asarray(weights, dtype=np.float64).ravel()
    total = _Compensated((Z.shape[1], Z.shape[1]))
    for start, end in row_blocks(*Z.shape):
        block = _as_float64(Z[start:end])
        total.add((block.T * weights[start:end]) @ block)
    return total.result()


def group_sums(codes, values, n_groups):
    """``sum_{i : codes[i] = g} values[i]`` for each group g, in float64.

    Parameters
    ----------
    codes : ndarray of int of shape (n_samples,)
    values : ndarray of shape (n_samples,)
    n_groups : int

    Returns
    -------
    ndarray of shape (n_groups,)
    """
    codes = np.asarray(codes)
    values = np.asarray(values)
    total = _Compensated(n_groups)
    for start, end in row_blocks(len(codes), 1):
        total.add(np.bincount(codes[start:end],
                              weights=_as_float64(values[start:end]),
                              minlength=n_groups))
    return total.result()


def total(values):
    """The sum of a vector, in float64 (pairwise within blocks, the blocks'
    sums added exactly)."""
    values = np.asarray(values).ravel()
    if len(values) <= ROWS_PER_BLOCK:  # one block: fsum of one term is it
        return float(np.add.reduce(values, dtype=np.float64))
    return math.fsum(float(np.sum(values[start:end], dtype=np.float64))
                     for start, end in row_blocks(len(values), 1))


def row_dots(X, coef):
    """``X @ coef`` in float64, converting a block of X at a time.

    Each row's value is one dot product of ``n_features`` terms; unlike the
    sums above, it is computed per record (and clipped after), so its
    rounding does not enter a sensitivity.  The blocks only keep a float32
    X from being copied whole to float64.

    Parameters
    ----------
    X : ndarray or scipy.sparse matrix of shape (n_samples, n_features)
    coef : ndarray of shape (n_features,)

    Returns
    -------
    ndarray of shape (n_samples,)
    """
    if (type(X) is np.ndarray and X.dtype == np.float64
            and type(coef) is np.ndarray and coef.dtype == np.float64):
        return X @ coef.ravel()
    coef = np.asarray(coef, dtype=np.float64).ravel()
    if X.dtype == np.float64:
        return np.asarray(X @ coef, dtype=np.float64).ravel()
    if sp.issparse(X):
        if X.format == "csc":
            # Blocks of columns holding about max(VALUES_PER_BLOCK, n)
            # values: each block's product costs O(n) to add, so the whole
            # costs O(nnz + n), in about n float64 values at a time.
            n_rows, n_columns = X.shape
            per_block = max(VALUES_PER_BLOCK, n_rows)
            out, first = np.zeros(n_rows), 0
            while first < n_columns:
                last = int(np.searchsorted(X.indptr, X.indptr[first] + per_block,
                                           side="right")) - 1
                last = min(max(last, first + 1), n_columns)
                low, high = X.indptr[first], X.indptr[last]
                block = sp.csc_matrix(
                    (_as_float64(X.data[low:high]), X.indices[low:high],
                     X.indptr[first:last + 1] - low), shape=(n_rows, last - first))
                out += block @ coef[first:last]
                first = last
            return out
        X = X.tocsr() if X.format != "csr" else X
        blocks = _sparserow_blocks(X.indptr)
    else:
        blocks = row_blocks(*X.shape)
    out = np.empty(X.shape[0])
    for start, end in blocks:
        out[start:end] = np.asarray(X[start:end] @ coef).ravel()
    return out
