"""Scores with a public bound per row: what a private search compares.

A candidate's score is the mean over the validation rows of a per-row
value in ``[0, bound]`` (a hit, or a clipped loss), so replacing one row
moves it by at most ``bound / n_validation``: that is the sensitivity the
search's plan calibrates the score's noise to.
"""

from dataclasses import dataclass

import numpy as np

# A row's log loss counts at most as a probability of 1/20 on its label:
# rows a model gets that wrong add the same penalty, and the bound (the
# noise's scale) stays a few times the loss of an uninformative model.
LOG_LOSS_BOUND = float(np.log(20.0))


@dataclass(frozen=True)
class RowScore:
    """A score that averages a bounded per-row value.

    Attributes
    ----------
    name : str
        The scikit-learn scorer of the same name (unclipped) is what
        ``score`` uses on data the user passes.
    task : {"classifier", "regressor"}
    greater_is_better : bool
        Whether the per-row value is a gain (a hit) or a loss.
    default_bound : float or "auto"
        ``"auto"``: the bound comes from the targets' private range.
    response : str
        The estimator's method the score reads.
    """

    name: str
    task: str
    greater_is_better: bool
    default_bound: object
    response: str

    def per_row(self, estimator, X, y, bound, value_range=None):
        """Each row's value, in ``[0, bound]`` (NaN predictions count as
        ``bound``: a row's value never leaves the interval).

        Parameters
        ----------
        estimator : fitted estimator
        X, y : validation rows
        bound : float
            The public (or released) bound.
        value_range : (float, float) or None
            Released range of the targets: targets and predictions are
            clipped to it (regression with an "auto" bound).

        Returns
        -------
        ndarray of shape (n_rows,)
        """
        y = np.asarray(y)
        if y.ndim == 2 and y.shape[1] == 1:
            y = y.ravel()  # a column, as scikit-learn accepts it (with a warning)
        if self.name == "accuracy":
            return (np.asarray(estimator.predict(X)) == y).astype(np.float64)
        if self.name == "neg_log_loss":
            return _clipped_log_loss(estimator, X, y, bound)
        prediction = np.asarray(estimator.predict(X), dtype=np.float64)
        target = y.astype(np.float64)
        if value_range is not None:
            low, high = value_range
            prediction, target = (np.clip(prediction, low, high),
                                  np.clip(target, low, high))
        with np.errstate(over="ignore", invalid="ignore"):
            error = np.abs(target - prediction)
            if self.name == "neg_mean_squared_error":
                error = error * error
        return np.where(np.isnan(error), bound, np.minimum(error, bound))

    def mean(self, values):
        """The score of per-row values: their mean, negated for a loss."""
        mean = float(np.mean(values))
        return mean if self.greater_is_better else -mean


def _clipped_log_loss(estimator, X, y, bound):
    proba = np.asarray(estimator.predict_proba(X), dtype=np.float64)
    classes = np.asarray(estimator.classes_)
    index = np.clip(np.searchsorted(classes, y), 0, len(classes) - 1)
    known = classes[index] == y
    p = np.where(known, proba[np.arange(len(y)), index], 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        loss = -np.log(p)
    return np.where(np.isnan(loss), bound, np.minimum(loss, bound))


SCORES = {
    "accuracy": RowScore("accuracy", "classifier", True, 1.0, "predict"),
    "neg_log_loss": RowScore("neg_log_loss", "classifier", False, LOG_LOSS_BOUND,
                             "predict_proba"),
    "neg_mean_squared_error": RowScore("neg_mean_squared_error", "regressor",
                                       False, "auto", "predict"),
    "neg_mean_absolute_error": RowScore("neg_mean_absolute_error", "regressor",
                                        False, "auto", "predict"),
}

# None's meaning.  A classifier is compared by its log loss where it has
# probabilities: private models of imbalanced classes often all predict
# the majority class, so their accuracies tie and the choice is the
# noise's (chosen on the benchmark panel's design half).
DEFAULT_SCORES = {"classifier": "neg_log_loss", "regressor": "neg_mean_squared_error"}


def resolve_score(scoring, score_bound, estimator_type, has_proba=True):
    """The row score and its bound for a search's parameters.

    Parameters
    ----------
    scoring : str or None
        A key of :data:`SCORES`; None: the log loss for a classifier with
        ``predict_proba`` (accuracy without), squared error for a regressor.
    score_bound : float, "auto" or None
        None: the score's default.  Accuracy's bound is 1.
    estimator_type : {"classifier", "regressor"} or None
    has_proba : bool, default=True
        Whether the estimator has ``predict_proba``.

    Returns
    -------
    score : RowScore
    bound : float or "auto"
    """
    if scoring is None:
        if estimator_type not in DEFAULT_SCORES:
            raise ValueError(
                "scoring=None needs a classifier or a regressor; pass scoring= "
                f"one of {sorted(SCORES)}.")
        scoring = DEFAULT_SCORES[estimator_type]
        if scoring == "neg_log_loss" and not has_proba:
            scoring = "accuracy"
    score = SCORES[scoring]
    if estimator_type is not None and estimator_type != score.task:
        raise ValueError(
            f"scoring={scoring!r} scores a {score.task}, but the estimator is a "
            f"{estimator_type}.")
    if score_bound is None:
        return score, score.default_bound
    if scoring == "accuracy" and score_bound != 1:
        raise ValueError("score_bound must be None or 1 for accuracy (a hit "
                         f"counts 1), got {score_bound!r}.")
    if score_bound == "auto" and score.task != "regressor":
        raise ValueError(f"score_bound='auto' is for regression scores, not "
                         f"{scoring!r}; give a number or None.")
    return score, score_bound
