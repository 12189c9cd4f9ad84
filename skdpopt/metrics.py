"""Worst-group metrics: how a model does on the group it serves worst.

Both functions take ``sensitive_features`` (the name fairlearn uses), so
that ``sklearn.metrics.make_scorer`` turns them into scorers to which
metadata routing forwards the groups::

    scorer = make_scorer(worst_group_accuracy).set_score_request(
        sensitive_features=True)
"""

import numpy as np
from sklearn.metrics import accuracy_score, log_loss

from ._validation import encode_groups  # the estimators' group rules

__all__ = ["worst_group_accuracy", "worst_group_log_loss"]


def worst_group_accuracy(y_true, y_pred, *, sensitive_features):
    """Smallest accuracy over the groups.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True labels.
    y_pred : array-like of shape (n_samples,)
        Predicted labels.
    sensitive_features : array-like of shape (n_samples,) or \
(n_samples, n_columns)
        Group of each row; several columns form intersectional groups.

    Returns
    -------
    float
        ``min over groups g of accuracy(y_true[g], y_pred[g])``.

    Examples
    --------
    >>> from skdpopt.metrics import worst_group_accuracy
    >>> worst_group_accuracy([0, 1, 1, 0], [0, 1, 0, 0],
    ...                      sensitive_features=["a", "a", "b", "b"])
    0.5
    """
    y_true, y_pred = np.asarray(y_true), np.asarray(y_pred)
    _, codes = encode_groups(sensitive_features, len(y_true))
    return float(
        min(
            accuracy_score(y_true[codes == g], y_pred[codes == g])
            for g in np.unique(codes)
        )
    )


def worst_group_log_loss(y_true, y_proba, *, sensitive_features, labels=None):
    """Largest mean log loss over the groups.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True labels.
    y_proba : array-like of shape (n_samples,) or (n_samples, n_classes)
        Predicted probabilities, as ``predict_proba`` returns them (or the
        positive class's for a binary problem).
    sensitive_features : array-like of shape (n_samples,) or \
(n_samples, n_columns)
        Group of each row; several columns form intersectional groups.
    labels : array-like, default=None
        All class labels, for groups in which some class is absent;
        ``None`` takes those of ``y_true``.

    Returns
    -------
    float
        ``max over groups g of log_loss(y_true[g], y_proba[g])``.  As a
        scorer, pass ``greater_is_better=False, response_method="predict_proba"``
        to ``make_scorer``.

    Examples
    --------
    >>> from skdpopt.metrics import worst_group_log_loss
    >>> round(worst_group_log_loss([0, 1, 1, 0], [0.1, 0.9, 0.4, 0.2],
    ...                            sensitive_features=["a", "a", "b", "b"]), 3)
    0.57
    """
    y_true, y_proba = np.asarray(y_true), np.asarray(y_proba, dtype=float)
    _, codes = encode_groups(sensitive_features, len(y_true))
    labels = np.unique(y_true) if labels is None else labels
    return float(
        max(
            log_loss(y_true[codes == g], y_proba[codes == g], labels=labels)
            for g in np.unique(codes)
        )
    )
