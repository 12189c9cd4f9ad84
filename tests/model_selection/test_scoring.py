"""Bounded per-row scores: every row's value stays in [0, bound], so one
replaced row moves a mean score by at most bound / n."""

import numpy as np
import pytest

from skdpopt.model_selection._scoring import LOG_LOSS_BOUND, SCORES, resolve_score


class Fixed:
    """A fitted model that predicts what it is given."""

    classes_ = np.array([0, 1, 2])

    def __init__(self, prediction, proba=None):
        self.prediction, self.proba = prediction, proba

    def predict(self, X):
        return self.prediction

    def predict_proba(self, X):
        return self.proba


EXTREMES = np.array([0.0, 1e300, -1e300, np.inf, -np.inf, np.nan, 3.0])


@pytest.mark.parametrize("name", ["neg_mean_squared_error", "neg_mean_absolute_error"])
@pytest.mark.parametrize("value_range", [None, (-2.0, 5.0)])
def test_regression_rows_stay_within_their_bound(name, value_range):
    score = SCORES[name]
    bound = 4.0
    y = np.array([1.0, -1e300, 1e300, 2.0, 0.0, 1.0, np.inf])
    rows = score.per_row(Fixed(EXTREMES), None, y, bound, value_range)
    assert np.all((rows >= 0) & (rows <= bound))
    # Replacing any one row (here: by the worst and the best value) moves
    # the mean by at most bound / n.
    for i in range(len(y)):
        for replacement in (-1e300, np.nan, y[i] + 1.0):
            other = y.copy()
            other[i] = replacement
            moved = score.per_row(Fixed(EXTREMES), None, other, bound, value_range)
            assert abs(score.mean(moved) - score.mean(rows)) <= bound / len(y) + 1e-15


def test_log_loss_rows_are_clipped_and_unknown_labels_cost_the_bound():
    score = SCORES["neg_log_loss"]
    proba = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.5, 0.5, 0.0],
                      [np.nan, 0.5, 0.5]])
    rows = score.per_row(Fixed(None, proba), None, np.array([1, 1, 0, 7]),
                         LOG_LOSS_BOUND, None)
    np.testing.assert_allclose(rows, [LOG_LOSS_BOUND, 0.0, np.log(2), LOG_LOSS_BOUND])


def test_accuracy_counts_hits_and_takes_a_column_of_labels():
    rows = SCORES["accuracy"].per_row(Fixed(np.array([0, 1, 1])), None,
                                      np.array([[0], [1], [0]]), 1.0)
    np.testing.assert_array_equal(rows, [1.0, 1.0, 0.0])
    assert SCORES["accuracy"].mean(rows) == pytest.approx(2 / 3)
    assert SCORES["neg_mean_absolute_error"].mean(np.array([1.0, 3.0])) == -2.0


def test_defaults_and_refusals():
    assert resolve_score(None, None, "classifier") == (SCORES["neg_log_loss"],
                                                       LOG_LOSS_BOUND)
    assert resolve_score(None, None, "classifier", has_proba=False) == (
        SCORES["accuracy"], 1.0)
    assert resolve_score(None, None, "regressor") == (
        SCORES["neg_mean_squared_error"], "auto")
    assert resolve_score("neg_log_loss", 2.0, "classifier")[1] == 2.0
    with pytest.raises(ValueError, match="regressor"):
        resolve_score("accuracy", None, "regressor")
    with pytest.raises(ValueError, match="regression scores"):
        resolve_score("neg_log_loss", "auto", "classifier")
    with pytest.raises(ValueError, match="classifier or a regressor"):
        resolve_score(None, None, None)
