"""Worst-group metrics, alone and as scorers."""

import numpy as np
import pytest
import sklearn
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score, log_loss, make_scorer
from sklearn.model_selection import cross_val_score

from skdpopt.metrics import worst_group_accuracy, worst_group_log_loss


def test_worst_group_accuracy_is_the_minimum_over_groups():
    y_true = np.array([0, 1, 1, 0, 1, 1])
    y_pred = np.array([0, 1, 0, 0, 0, 0])
    groups = np.array(["a", "a", "b", "b", "c", "c"])
    # a: 1.0, b: 0.5, c: 0.0
    assert worst_group_accuracy(y_true, y_pred, sensitive_features=groups) == 0.0
    assert (
        worst_group_accuracy(y_true[:4], y_pred[:4], sensitive_features=groups[:4])
        == 0.5
    )


def test_worst_group_log_loss_is_the_maximum_over_groups():
    rng = np.random.default_rng(0)
    y_true = rng.integers(0, 2, 200)
    proba = rng.uniform(0.05, 0.95, 200)
    groups = rng.integers(0, 3, 200)
    expected = max(
        log_loss(y_true[groups == g], proba[groups == g], labels=[0, 1])
        for g in range(3)
    )
    got = worst_group_log_loss(y_true, proba, sensitive_features=groups)
    assert got == pytest.approx(expected)
    two_columns = np.column_stack([1 - proba, proba])
    assert worst_group_log_loss(
        y_true, two_columns, sensitive_features=groups
    ) == pytest.approx(expected)


def test_intersectional_groups_from_two_columns():
    y_true = np.array([1, 1, 1, 1])
    y_pred = np.array([1, 0, 1, 1])
    columns = np.array([["f", "x"], ["f", "y"], ["m", "x"], ["m", "y"]])
    assert worst_group_accuracy(y_true, y_pred, sensitive_features=columns) == 0.0
    assert worst_group_accuracy(y_true, y_pred, sensitive_features=columns[:, 1]) == 0.5


def test_one_group_is_the_plain_metric():
    rng = np.random.default_rng(1)
    y_true, y_pred = rng.integers(0, 2, 50), rng.integers(0, 2, 50)
    assert worst_group_accuracy(
        y_true, y_pred, sensitive_features=np.zeros(50)
    ) == accuracy_score(y_true, y_pred)


def test_misaligned_groups_rejected():
    with pytest.raises(ValueError, match="rows"):
        worst_group_accuracy([0, 1], [0, 1], sensitive_features=["a"])


def test_as_scorers_with_routing():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(300, 3))
    y = (X[:, 0] > 0).astype(int)
    groups = rng.integers(0, 2, 300)
    with sklearn.config_context(enable_metadata_routing=True):
        accuracy = make_scorer(worst_group_accuracy).set_score_request(
            sensitive_features=True
        )
        loss = make_scorer(
            worst_group_log_loss,
            greater_is_better=False,
            response_method="predict_proba",
        ).set_score_request(sensitive_features=True)
        for scorer in (accuracy, loss):
            scores = cross_val_score(
                LogisticRegression(),
                X,
                y,
                cv=3,
                scoring=scorer,
                params={"sensitive_features": groups},
            )
            assert scores.shape == (3,) and np.all(np.isfinite(scores))
    model = LogisticRegression().fit(X, y)
    direct = worst_group_accuracy(y, model.predict(X), sensitive_features=groups)
    with sklearn.config_context(enable_metadata_routing=True):
        assert accuracy(model, X, y, sensitive_features=groups) == direct
