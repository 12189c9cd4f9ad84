"""No message carries a private value: the leak-message matrix.

A secret string (``SECRET``, a category, label or group value, or text in
a numeric column) and a secret count (``COUNT`` offending rows, a number
nothing public equals) are planted in every input path of every public
estimator, transformer and the private pipeline.  Whatever the fit does
(it refuses the input, here), neither may appear in its error (nor in the
exceptions chained to it), its warnings, its verbose lines or its repr;
and an input check must run before any budget is charged, so a ledger
around the failed fit records nothing.

Values the user declared public (``classes=``, ``groups=``, a domain's
categories, column names) may be named; the data's own values may not.
"""

import contextlib
import io
import re
import warnings
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import pytest
from sklearn.compose import ColumnTransformer, make_column_selector
from sklearn.preprocessing import OneHotEncoder

from skdpopt import (
    DPLasso,
    DPLogisticSimplex,
    DPMinimaxClassifier,
    DPMinMaxScaler,
    DPSGDClassifier,
    DPSGDRegressor,
    DPStandardScaler,
    DPSyntheticData,
    PrivacyLedger,
    make_private_pipeline,
)

# The small fits of the matrix are rightly called useless.
pytestmark = pytest.mark.filterwarnings("ignore::skdpopt.exceptions.UtilityWarning")

SECRET = "SECRET-7f3a"
SECRET_NUMBER = 271828.125  # a value of the data, printed by no message
COUNT = 37  # offending rows: not n, not any public parameter
N_ROWS, N_FEATURES = 200, 3
# The count as a number of its own, also written 37.0 (not the digits of
# 0.374 or 137, nor a noisy count such as 37.4).
COUNT_PATTERN = re.compile(rf"(?<![\d.]){COUNT}(?:\.0+)?(?!\d|\.\d)")
SHARE_PATTERN = re.compile(r"0\.185|18\.5")  # COUNT / N_ROWS
LABELS = ("no", "yes")
GROUPS = ("a", "b")
CATEGORIES = ("low", "high")


def _rows():
    """The offending rows: COUNT of them, spread out."""
    return np.linspace(0, N_ROWS - 1, COUNT).astype(int)


def _clean(task):
    """A small clean dataset for a task: X, y, fit keyword arguments."""
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(N_ROWS, N_FEATURES))
    if task == "regression":
        y = X @ [1.0, -0.5, 0.25]
    elif task in ("classification", "groups"):
        y = np.array(LABELS, dtype=object)[(X[:, 0] > 0).astype(int)]
    else:
        y = None
    kwargs = {}
    if task == "groups":
        groups = np.empty(N_ROWS, dtype=object)
        groups[:] = [GROUPS[i % 2] for i in range(N_ROWS)]
        kwargs["sensitive_features"] = groups
    return X, y, kwargs


# -- estimators ---------------------------------------------------------------

@dataclass
class Estimator:
    """One public class in the matrix, with small settings."""

    name: str
    make: Callable
    task: str
    verbose: bool = True

    def fit(self, est, X, y, kwargs):
        if self.task in ("table", "transform"):
            return est.fit(X)
        return est.fit(X, y, **kwargs)


ESTIMATORS = [
    Estimator("DPSGDRegressor", lambda: DPSGDRegressor(max_iter=1, random_state=0,
                                                       verbose=1), "regression"),
    Estimator("DPSGDClassifier", lambda: DPSGDClassifier(
        max_iter=1, classes=list(LABELS), random_state=0, verbose=1),
        "classification"),
    Estimator("DPLasso", lambda: DPLasso(max_iter=2, random_state=0, verbose=1),
              "regression"),
    Estimator("DPLogisticSimplex", lambda: DPLogisticSimplex(
        classes=list(LABELS), random_state=0, verbose=1), "classification"),
    Estimator("DPMinimaxClassifier", lambda: DPMinimaxClassifier(
        classes=list(LABELS), groups=list(GROUPS), min_group_size=1,
        random_state=0, verbose=1), "groups"),
    Estimator("DPSyntheticData", lambda: DPSyntheticData(
        max_iter=1, random_state=0, verbose=1), "table"),
    Estimator("DPStandardScaler", lambda: DPStandardScaler(random_state=0),
              "transform", verbose=False),
    Estimator("DPMinMaxScaler", lambda: DPMinMaxScaler(random_state=0),
              "transform", verbose=False),
    Estimator("make_private_pipeline", lambda: make_private_pipeline(
        DPStandardScaler(), DPSGDRegressor(max_iter=1, verbose=1)), "regression"),
]
BY_NAME = {e.name: e for e in ESTIMATORS}


# -- input paths: each plants the secret string and the secret count ---------

def _with_text_in_X(X):
    X = X.astype(object)
    X[_rows(), 0] = SECRET
    return X


def _with_nan(X):
    X = X.copy()
    X[_rows(), 1] = np.nan
    return X


def _with_inf(X):
    X = X.copy()
    X[_rows(), 2] = np.inf
    return X


def _with_secret_labels(y):
    y = np.asarray(y, dtype=object).copy()
    y[_rows()] = SECRET
    return y


@dataclass
class InputPath:
    """A way to plant the secrets in an estimator's input.

    ``plant(estimator, X, y, kwargs)`` returns the (estimator, X, y,
    kwargs) to fit; ``applies`` names the estimators it concerns.
    """

    name: str
    plant: Callable
    applies: tuple = field(default_factory=lambda: tuple(BY_NAME))


def _plant_X(change):
    def plant(est, X, y, kwargs):
        return est, change(X), y, kwargs
    return plant


def _plant_y(change):
    def plant(est, X, y, kwargs):
        return est, X, change(y), kwargs
    return plant


def _plant_groups(change):
    def plant(est, X, y, kwargs):
        groups = np.asarray(kwargs["sensitive_features"], dtype=object).copy()
        return est, X, y, {**kwargs, "sensitive_features": change(groups)}
    return plant


def _set_rows(value):
    def change(values):
        values[_rows()] = value
        return values
    return change


def _numeric_labels_with_secret(est, X, y, kwargs):
    """Declared numeric classes, the secret string among the labels."""
    est.set_params(classes=[0, 1])
    labels = (np.asarray(y) == LABELS[1]).astype(object)
    return est, X, _with_secret_labels(labels), kwargs


def _categorical_table(est, X, y, kwargs):
    """A declared categorical column with the secret among its values."""
    table = X.astype(object)
    table[:, 0] = np.where(X[:, 0] > 0, CATEGORIES[1], CATEGORIES[0])
    table[_rows(), 0] = SECRET
    est.set_params(domain=[list(CATEGORIES), None, None])
    return est, table, y, kwargs


def _declared_encoder_in_pipeline(est, X, y, kwargs):
    """A OneHotEncoder with declared categories inside a private pipeline,
    the secret among the column's values."""
    import pandas as pd

    frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(N_FEATURES)])
    frame["c"] = np.where(X[:, 0] > 0, CATEGORIES[1], CATEGORIES[0]).astype(object)
    frame.loc[_rows(), "c"] = SECRET
    encode = ColumnTransformer(
        [("c", OneHotEncoder(categories=[list(CATEGORIES)]), ["c"]),
         ("x", "passthrough", make_column_selector(pattern="^x"))],
        sparse_threshold=0)
    pipe = make_private_pipeline(encode, DPStandardScaler(),
                                 DPSGDRegressor(max_iter=1, verbose=1))
    return pipe, frame, y, kwargs


def _text_in_numeric_frame_column(est, X, y, kwargs):
    """A DataFrame whose numeric column holds the secret in some rows."""
    import pandas as pd

    frame = pd.DataFrame(_with_text_in_X(X),
                         columns=[f"x{j}" for j in range(N_FEATURES)])
    return est, frame, y, kwargs


def _one_dimensional_X(est, X, y, kwargs):
    """X given as one column, holding a secret number: scikit-learn's
    message for 1-d input prints the array."""
    column = X[:, 0].copy()
    column[_rows()] = SECRET_NUMBER
    return est, column, y, kwargs


def _undeclared_groups_without_prior(est, X, y, kwargs):
    """Groups read from the data (undeclared), one of them, the secret,
    without an entry in group_priors."""
    est.set_params(groups=None, group_priors={GROUPS[0]: 0.5, GROUPS[1]: 0.5})
    groups = np.asarray(kwargs["sensitive_features"], dtype=object).copy()
    groups[_rows()] = SECRET
    return est, X, y, {**kwargs, "sensitive_features": groups}


def _undeclared_numeric_frame(est, X, y, kwargs):
    """A DataFrame: a declared categorical column holding the secret, and a
    numeric column whose bounds would be drawn privately."""
    import pandas as pd

    frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(N_FEATURES)])
    frame["c"] = np.where(X[:, 0] > 0, CATEGORIES[1], CATEGORIES[0]).astype(object)
    frame.loc[_rows(), "c"] = SECRET
    est.set_params(domain={"c": list(CATEGORIES)})
    return est, frame, y, kwargs


def _dask(plant):
    def planted(est, X, y, kwargs):
        da = pytest.importorskip("dask.array")
        est, X, y, kwargs = plant(est, X, y, kwargs)
        return est, da.from_array(np.asarray(X, dtype=float), chunks=(50, -1)), (
            da.from_array(np.asarray(y), chunks=50)), kwargs
    return planted


_REGRESSORS = ("DPSGDRegressor", "DPLasso", "make_private_pipeline")
_CLASSIFIERS = ("DPSGDClassifier", "DPLogisticSimplex", "DPMinimaxClassifier")
_SUPERVISED = _REGRESSORS + _CLASSIFIERS

PATHS = [
    InputPath("text in a numeric column of X", _plant_X(_with_text_in_X)),
    InputPath("text in a numeric DataFrame column", _text_in_numeric_frame_column),
    InputPath("NaN rows in X", _plant_X(_with_nan)),
    InputPath("infinite rows in X", _plant_X(_with_inf)),
    InputPath("text among regression targets", _plant_y(_with_secret_labels),
              _REGRESSORS),
    InputPath("NaN targets", _plant_y(lambda y: _set_rows(np.nan)(
        np.asarray(y, dtype=object).copy())), _SUPERVISED),
    InputPath("labels outside classes=", _plant_y(_with_secret_labels),
              _CLASSIFIERS),
    InputPath("text labels outside numeric classes=", _numeric_labels_with_secret,
              _CLASSIFIERS),
    InputPath("groups outside groups=", _plant_groups(_set_rows(SECRET)),
              ("DPMinimaxClassifier",)),
    InputPath("missing groups", _plant_groups(_set_rows(None)),
              ("DPMinimaxClassifier",)),
    InputPath("categories outside the declared domain", _categorical_table,
              ("DPSyntheticData",)),
    InputPath("categories outside a declared OneHotEncoder's",
              _declared_encoder_in_pipeline, ("make_private_pipeline",)),
    InputPath("Dask labels outside classes=", _dask(_plant_y(_with_secret_labels)),
              ("DPSGDClassifier",)),
    InputPath("one-dimensional X", _one_dimensional_X,
              tuple(n for n in BY_NAME if n != "DPSyntheticData")),
    InputPath("undeclared groups missing from group_priors",
              _undeclared_groups_without_prior, ("DPMinimaxClassifier",)),
    InputPath("categories outside a DataFrame's declared domain",
              _undeclared_numeric_frame, ("DPSyntheticData",)),
]


def _texts_of(exc):
    """An exception's message and those it was raised from (what a
    traceback prints)."""
    texts = []
    while exc is not None:
        texts.append(f"{type(exc).__name__}: {exc}")
        exc = exc.__cause__ or (None if exc.__suppress_context__ else exc.__context__)
    return texts


def _assert_nothing_private(texts, where):
    for text in texts:
        assert SECRET not in text, f"{where} prints the secret value: {text}"
        assert "271828" not in text, f"{where} prints a value of X: {text}"
        assert not COUNT_PATTERN.search(text), (
            f"{where} prints the secret count {COUNT}: {text}")
        assert not SHARE_PATTERN.search(text), (
            f"{where} prints the secret count as a share: {text}")


def _fit_capturing(estimator, est, X, y, kwargs):
    """Fit inside a ledger; returns (exception or None, texts, records)."""
    out = io.StringIO()
    error = None
    with PrivacyLedger() as ledger, warnings.catch_warnings(record=True) as caught, \
            contextlib.redirect_stdout(out):
        warnings.simplefilter("always")
        try:
            estimator.fit(est, X, y, kwargs)
        except Exception as exc:  # noqa: BLE001 (its message is the subject)
            error = exc
    texts = [str(w.message) for w in caught] + out.getvalue().splitlines()
    texts += [repr(est)]
    if error is not None:
        texts += _texts_of(error)
    return error, texts, len(ledger)


CELLS = [pytest.param(BY_NAME[name], path, id=f"{name}-{path.name}")
         for path in PATHS for name in path.applies]


def _refused(estimator, path):
    X, y, kwargs = _clean(estimator.task)
    est, X, y, kwargs = path.plant(estimator.make(), X, y, kwargs)
    error, texts, records = _fit_capturing(estimator, est, X, y, kwargs)
    assert isinstance(error, (ValueError, TypeError)), (
        f"{path.name} was not refused: {error!r}")
    return texts, records


@pytest.mark.parametrize(("estimator", "path"), CELLS)
def test_no_message_carries_a_private_value(estimator, path):
    texts, _ = _refused(estimator, path)
    _assert_nothing_private(texts, f"{estimator.name} on {path.name}")


@pytest.mark.parametrize(("estimator", "path"), CELLS)
def test_refused_input_is_not_charged(estimator, path):
    # Every input check runs before anything is released or recorded.
    _, records = _refused(estimator, path)
    assert records == 0, f"a refused fit left {records} ledger record(s)"


# -- what succeeds prints nothing private either ------------------------------

def _counted(task):
    """Clean data in which COUNT rows share a label, a group or a value."""
    X, y, kwargs = _clean(task)
    rows = _rows()
    if task in ("classification", "groups"):
        y = np.full(N_ROWS, LABELS[0], dtype=object)
        y[rows] = LABELS[1]
    if task == "groups":
        groups = np.full(N_ROWS, GROUPS[0], dtype=object)
        groups[rows] = GROUPS[1]
        kwargs["sensitive_features"] = groups
    if task in ("regression", "table", "transform"):
        X[rows, 0] = 1e6  # COUNT outliers
    return X, y, kwargs


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=lambda e: e.name)
def test_fits_print_no_count_from_the_data(estimator):
    X, y, kwargs = _counted(estimator.task)
    error, texts, records = _fit_capturing(estimator, estimator.make(), X, y, kwargs)
    assert error is None, error
    assert records >= 1
    _assert_nothing_private(texts, estimator.name)


# -- predicting, transforming and scoring: the caller's rows, quoted by none -

@pytest.mark.parametrize("estimator", ESTIMATORS, ids=lambda e: e.name)
def test_prediction_messages_carry_no_value(estimator):
    X, y, kwargs = _clean(estimator.task)
    est = estimator.fit(estimator.make(), X, y, kwargs)
    if estimator.task == "table":
        table = X.astype(object)
        est = DPSyntheticData(domain=[list(CATEGORIES), None, None], max_iter=1,
                              random_state=0)
        table[:, 0] = np.where(X[:, 0] > 0, CATEGORIES[1], CATEGORIES[0])
        est.fit(table)
        table[_rows(), 0] = SECRET
        methods = [est.score, est.query_errors]
        bad = table
    else:
        methods = [getattr(est, m) for m in ("predict", "transform",
                                             "decision_function", "predict_proba")
                   if hasattr(est, m)]
        bad = _with_text_in_X(X)
    assert methods
    for method in methods:
        with pytest.raises((ValueError, TypeError)) as info:
            method(bad)
        _assert_nothing_private(_texts_of(info.value),
                                f"{estimator.name}.{method.__name__}")


def test_a_small_group_read_from_the_data_is_not_named():
    # The noisy counts are released (and charged) before the size floor
    # refuses the fit; the failed fit releases no group set, so the small
    # group's label, read from the data, stays out of the message.
    X, y, kwargs = _clean("groups")
    groups = kwargs["sensitive_features"].copy()
    groups[_rows()] = SECRET
    est = DPMinimaxClassifier(classes=list(LABELS), min_group_size=N_ROWS,
                              random_state=0)
    with pytest.raises(ValueError, match="too small") as info:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est.fit(X, y, sensitive_features=groups)
    # The noisy count it prints is a release; the label is not.
    assert SECRET not in "".join(_texts_of(info.value))
