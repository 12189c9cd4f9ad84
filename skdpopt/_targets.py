"""The linear estimators' training data: validated rows and targets, class
labels to the +-1 targets of one binary problem per class, and sample
weights within their public bound."""

import numpy as np
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import _check_sample_weight

from ._base import validate_training_data
from ._data import (
    dask_one_vs_rest_signs,
    is_dask_collection,
    validate_dask_training_data,
)
from ._validation import resolve_classes


def one_vs_rest_signs(estimator, y, declared):
    """Encode class labels as +-1 targets, one-vs-rest beyond two classes.

    Parameters
    ----------
    estimator : estimator
        The classifier (named in warnings).
    y : ndarray of shape (n_samples,)
        Class labels, already checked for finiteness and length.
    declared : array-like or None
        The public label set (``classes=``); ``None`` reads it from ``y``
        with a :class:`~skdpopt.exceptions.PrivacyLeakWarning`.

    Returns
    -------
    classes : ndarray of shape (n_classes,)
        The sorted label set (it becomes ``classes_``).
    targets : list of ndarray of shape (n_samples,)
        One target vector for two classes (+1 for ``classes[1]``), otherwise
        one per class (+1 for that class, -1 for the rest).

    Raises
    ------
    ValueError
        If ``y`` is not a classification target or has a single class.
    """
    check_classification_targets(y)
    classes, codes = resolve_classes(estimator, y, declared)
    if len(classes) < 2:
        raise ValueError(
            "The number of classes has to be greater than one; got 1 class."
        )
    # Two classes make one problem: its positive class is the second label.
    positives = [1] if len(classes) == 2 else range(len(classes))
    return classes, [np.where(codes == k, 1.0, -1.0) for k in positives]


def classifier_data(estimator, X, y, *, on_dask):
    """Validated training data of a linear classifier and its +-1 targets.

    Parameters
    ----------
    estimator : estimator
        The classifier; its ``classes`` parameter declares the label set.
    X, y : array-like or Dask collections
    on_dask : bool
        Whether the fit reads X through the Dask backend (validated lazily).

    Returns
    -------
    X : ndarray, sparse matrix or Dask array
    classes : ndarray
    targets : list
        One +-1 target vector per binary problem (see
        :func:`one_vs_rest_signs`).
    """
    if not on_dask:
        X, y = validate_training_data(
            estimator, X, y, accept_sparse="csr", dtype=[np.float64, np.float32])
        classes, targets = one_vs_rest_signs(estimator, y, estimator.classes)
        return X, classes, targets
    X, y, classes = validate_dask_training_data(
        estimator, X, y, classification=True, classes=estimator.classes)
    return X, classes, dask_one_vs_rest_signs(y, classes)


def regressor_data(estimator, X, y, *, on_dask):
    """Validated training data of DPLasso: dense, CSR or CSC rows in
    float64 or float32, numeric targets.

    Parameters
    ----------
    estimator : estimator
        Named in messages.
    X, y : array-like or Dask collections
    on_dask : bool
        Whether the fit reads X through the Dask backend (validated lazily).

    Returns
    -------
    X : ndarray, sparse matrix or Dask array
    y : ndarray or Dask array
    """
    if not on_dask:
        return validate_training_data(
            estimator, X, y, accept_sparse=["csr", "csc"], y_numeric=True,
            dtype=[np.float64, np.float32])
    X, y, _ = validate_dask_training_data(estimator, X, y)
    return X, y


def check_sample_weight(estimator, sample_weight, X, bound):
    """Validated sample weights, all in ``[0, bound]`` (a public bound).

    Parameters
    ----------
    estimator : estimator
        Named in messages.
    sample_weight : array-like of shape (n_samples,) or None
    X : array-like or dask.array.Array
        The training features (their number of rows).
    bound : float
        The estimator's ``sample_weight_bound``.

    Returns
    -------
    ndarray of float64 or None

    Raises
    ------
    TypeError
        For weights with Dask input (the Dask backend reads no weights).
    ValueError
        For weights of the wrong shape, not finite, negative or above
        ``bound``.  Weights are refused, not clipped: a weight cut to the
        bound would change the objective asked for.  The messages name no
        weight and no count.
    """
    if sample_weight is None:
        return None
    name = type(estimator).__name__
    if is_dask_collection(X) or is_dask_collection(sample_weight):
        raise TypeError(
            f"{name} takes no sample_weight with Dask collections: compute "
            "the data into memory (X.compute()) to weight its rows.")
    sample_weight = _check_sample_weight(sample_weight, X, dtype=np.float64,
                                         ensure_non_negative=True)
    if sample_weight.max(initial=0.0) > bound:
        raise ValueError(
            f"{name}: some sample weights exceed sample_weight_bound={bound}. "
            "The bound is public and scales the noise (the sensitivity grows "
            "with the largest weight a row may carry): raise it to the "
            "largest weight your weighting scheme can give, or rescale the "
            "weights.")
    return sample_weight
