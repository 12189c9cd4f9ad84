"""The few aggregates the private solvers read from the training data.

A private fit touches its rows only through sums over them: the sum of
clipped per-example gradients of a linear model (over all rows, or over a
Poisson sample of them), column statistics of greedy coordinate descent,
and marginal counts.  Everything else (noise, selection, updates,
accounting) works on small arrays in the calling process.

Two backends give these aggregates.  In memory (numpy and scipy arrays),
the code paths the estimators always used.  Dask (``dask.array.Array``),
each aggregate a map over row blocks followed by a sum, so that a fit
never holds more than one block of rows per worker, plus a Poisson
sample's rows.  Dask is imported only when a Dask collection is passed:
it stays an optional dependency, and no solver imports it.
"""

import sys

import numpy as np

from .._clipping import clip_features, clip_targets
from .inmemory import (
    ClippedLeastSquares,
    InMemoryLinearRows,
    grid_counts,
    marginal_counts_inmemory,
)

__all__ = [
    "ClippedLeastSquares",
    "clip_rows",
    "clip_values",
    "clipped_total",
    "counts_below",
    "dask_records",
    "is_dask_collection",
    "least_squares_problem",
    "linear_rows",
    "map_rows",
    "marginal_counts",
    "vector_total",
]


def is_dask_collection(obj):
    """Whether ``obj`` is a Dask collection, without importing Dask.

    An object can only be a Dask collection if Dask was imported already,
    so in-memory fits never pay for the import.
    """
    if "dask" not in sys.modules:
        return False
    import dask

    return dask.is_dask_collection(obj)


def _dask_backend():
    from . import dask_backend

    return dask_backend


def linear_rows(X, y, loss, *, clip_norm=None, limit=None, fit_intercept=True,
                sample_weight=None):
    """The rows of a linear model's data, for its clipped gradient sums.

    Example i's gradient is ``r_i (x_i, 1)`` with ``r_i`` the loss
    derivative at its prediction (times the row's weight, if any); it is
    clipped by clipping ``r_i``, either to the per-row bound ``clip_norm /
    ||(x_i, 1)||`` (gradient norm at most ``clip_norm``) or to the shared
    ``limit`` (features already bounded).  A NaN ``r_i`` counts as 0.

    Parameters
    ----------
    X : ndarray, sparse matrix or dask.array.Array of shape (n_samples, n_features)
    y : ndarray or dask.array.Array of shape (n_samples,)
    loss : object
        A loss from :mod:`skdpopt.losses` (its ``derivative`` is used).
    clip_norm : float, default=None
    limit : float, default=None
        Exactly one of ``clip_norm`` and ``limit`` is given.
    fit_intercept : bool, default=True
        Whether the intercept's constant 1 counts in the row norm.
    sample_weight : ndarray of shape (n_samples,) or None, default=None
        Weights in [0, 1] multiplying each derivative before the clip (in
        memory only; the estimators refuse weights on Dask collections).

    Returns
    -------
    InMemoryLinearRows or DaskLinearRows
        With ``gradient_sum(coef, intercept, rows=None)`` and
        ``poisson_sampler(rng, sampling_rate, n_steps, block)``.
    """
    if (clip_norm is None) == (limit is None):
        raise ValueError("give exactly one of clip_norm and limit")
    if is_dask_collection(X):
        if sample_weight is not None:
            raise TypeError("sample weights are not supported on Dask collections")
        return _dask_backend().DaskLinearRows(
            X, y, loss, clip_norm=clip_norm, limit=limit,
            fit_intercept=fit_intercept)
    return InMemoryLinearRows(X, y, loss, clip_norm=clip_norm, limit=limit,
                              fit_intercept=fit_intercept,
                              sample_weight=sample_weight)


def least_squares_problem(X, y, feature_bound, residual_bound):
    """Clipped least squares over X and y, for greedy CD and Frank-Wolfe.

    Returns a :class:`ClippedLeastSquares` (in memory) or its Dask
    counterpart, with the same methods: ``reset``, ``move``,
    ``mean_square_residual``, ``gradient`` and ``curvature``.
    """
    if is_dask_collection(X):
        return _dask_backend().DaskClippedLeastSquares(
            X, y, feature_bound, residual_bound)
    return ClippedLeastSquares(X, y, feature_bound, residual_bound)


def clip_rows(X, bound):
    """X with every entry clipped to ``[-bound, bound]`` (lazily for Dask);
    ``bound`` a float, or an array with one bound per column."""
    if is_dask_collection(X):
        if np.ndim(bound):
            # Each block must hold every column for the bounds to line up.
            X = X.rechunk({1: -1})
            return X.map_blocks(clip_features, bound, dtype=X.dtype)
        return X.map_blocks(clip_features, bound, dtype=X.dtype)
    return clip_features(X, bound)


def clip_values(y, bound):
    """Float64 copy of y clipped to ``[-bound, bound]`` (lazily for Dask)."""
    if is_dask_collection(y):
        return y.map_blocks(clip_targets, bound, dtype=np.float64)
    return clip_targets(y, bound)


def clipped_total(values, low, high):
    """``sum_i clip(values[i], low, high)`` in float64 (block by block and
    compensated, see :mod:`skdpopt._sums`; a map over row blocks and a sum
    of their totals on Dask arrays).

    Parameters
    ----------
    values : ndarray or dask.array.Array of shape (n_samples,)
    low, high : float
        Public (or released) bounds, ``low <= high``.

    Returns
    -------
    float
    """
    if is_dask_collection(values):
        return _dask_backend().clipped_total(values, low, high)
    return _clipped_total_block(values, low, high)


def _clipped_total_block(values, low, high):
    from .._sums import total

    return total(np.clip(np.asarray(values, dtype=np.float64), low, high))


def map_rows(function, X, n_columns=None, dtype=np.float64):
    """``function(X)``, computed block by block when X is a Dask array.

    Parameters
    ----------
    function : callable
        Maps an in-memory block of rows to one value per row (or a row of
        ``n_columns`` values).
    X : array-like or dask.array.Array
    n_columns : int or None, default=None
        None: ``function`` returns shape (n_rows,); otherwise
        (n_rows, n_columns).
    dtype : dtype, default=float64

    Returns
    -------
    ndarray, or a lazy dask.array.Array for Dask input
    """
    if not is_dask_collection(X):
        return function(X)
    return _dask_backend().map_rows(function, X, n_columns, dtype)


def vector_total(values):
    """Float64 sum of a vector of per-row terms (a Dask array block by
    block, the blocks' sums added exactly)."""
    if is_dask_collection(values):
        return _dask_backend().vector_total(values)
    from .._sums import total

    return total(values)


def dask_records(X):
    """A Dask array or DataFrame's records, read block by block
    (:class:`~.dask_records.DaskRecords`): for the fits that read records
    column by column."""
    from .dask_records import DaskRecords

    return DaskRecords(X)


def counts_below(values, grid):
    """``#{i : values[i, j] < c}`` for each column j and each candidate c of a
    public grid (NaN counted as infinite): all that a private bound of a
    column or of a per-record statistic reads.

    Parameters
    ----------
    values : ndarray or dask.array.Array of shape (n_samples,) or \
(n_samples, n_columns)
    grid : ndarray of shape (n_candidates,), sorted

    Returns
    -------
    ndarray of int of shape (n_candidates,) or (n_columns, n_candidates)
    """
    if is_dask_collection(values):
        return _dask_backend().counts_below(values, grid)
    return grid_counts(values, grid)


def marginal_counts(codes, cardinalities, attributes):
    """Counts of each combination of values of each attribute set.

    Parameters
    ----------
    codes : ndarray or dask.array.Array of int, shape (n_samples, n_columns)
        Each column's values encoded as ``0 .. cardinalities[j] - 1``.
    cardinalities : sequence of int
        The public domain: number of values of each column.
    attributes : sequence of tuple of int
        Column sets whose marginals to count.

    Returns
    -------
    list of ndarray of int64
        For each attribute set, an array of shape
        ``[cardinalities[j] for j in attributes[k]]``.

    Raises
    ------
    ValueError
        If a code lies outside its column's declared domain (without saying
        which row or value).
    """
    cardinalities = tuple(int(c) for c in cardinalities)
    attributes = [tuple(int(j) for j in a) for a in attributes]
    if is_dask_collection(codes):
        return _dask_backend().marginal_counts(codes, cardinalities, attributes)
    return marginal_counts_inmemory(np.asarray(codes), cardinalities, attributes)


# What fits on Dask collections, for the error of those that do not.
DASK_SUPPORTED = (
    "DPSGDRegressor and DPSGDClassifier (sampling='full' or 'poisson'), "
    "DPLasso, DPLogisticSimplex(solver='frank_wolfe') and DPSyntheticData"
)


def validate_dask_training_data(estimator, X, y, *, classification=False,
                                classes=None):
    """Validate a Dask training set lazily (see ``dask_backend``).

    Returns ``(X, y, classes)``: Dask arrays chunked by rows, and for
    classifiers the label set (declared, or read with a warning).
    """
    return _dask_backend().validate_training_data(
        estimator, X, y, classification=classification, classes=classes)


def dask_one_vs_rest_signs(y, classes):
    """Lazy +-1 targets of each one-vs-rest problem of a Dask label array."""
    return _dask_backend().one_vs_rest_signs(y, classes)


def refuse_dask(estimator, X, y=None, reason=None):
    """Raise TypeError if X or y is a Dask collection.

    Estimators and solvers that read rows other than through the aggregates
    of this module call it, so that a Dask collection is refused with an
    explanation instead of being gathered into memory.
    """
    if not (is_dask_collection(X) or is_dask_collection(y)):
        return
    name = type(estimator).__name__
    because = f" {reason}" if reason else ""
    raise TypeError(
        f"{name} does not fit on Dask collections{because}. Fits on Dask "
        f"arrays are supported by {DASK_SUPPORTED}; compute the data into "
        "memory (X.compute()) to use this one."
    )


def refuse_auto_bounds(estimator, names):
    """Raise ValueError if one of the named parameters is "auto" on Dask data.

    The private "auto" bounds release a quantile of a per-row statistic
    computed in memory; on Dask collections the bounds must be public
    numbers.
    """
    auto = [name for name in names
            if isinstance(getattr(estimator, name), str)
            and getattr(estimator, name) == "auto"]
    if auto:
        given = ", ".join(f"{name}=<a public number>" for name in auto)
        raise ValueError(
            f"{type(estimator).__name__} on Dask collections needs public "
            f"bounds: pass {given}. The private 'auto' bounds read a per-row "
            "statistic of the whole dataset in memory."
        )
