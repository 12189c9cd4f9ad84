"""Bounds that fitted transformers declare by construction, and the private
pipeline handing them to DPLasso."""

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.compose import ColumnTransformer
from sklearn.impute import MissingIndicator, SimpleImputer
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import Binarizer, OneHotEncoder

from skdpopt import (
    DPLasso,
    DPMinMaxScaler,
    DPStandardScaler,
    make_private_pipeline,
)
from skdpopt._declared import declared_blocks, declared_bounds
from skdpopt.plans.lasso import public_feature_bound

NAN = np.nan


@pytest.fixture(scope="module")
def table():
    rng = np.random.default_rng(0)
    n = 4000
    X = pd.DataFrame({"a": rng.normal(50, 10, n), "b": rng.normal(size=n),
                      "c": rng.integers(0, 3, n), "d": rng.normal(size=n)})
    y = 0.1 * X.a + X.b + (X.c == 1) + rng.normal(size=n)
    return X, y


def _columns(remainder="drop"):
    return ColumnTransformer(
        [("num", DPStandardScaler(), ["a", "b"]),
         ("cat", OneHotEncoder(categories=[[0, 1, 2]]), ["c"])],
        remainder=remainder, sparse_threshold=0)


def test_column_transformer_parts_in_output_order(table):
    X, _ = table
    fitted = _columns("passthrough").set_params(
        num=DPStandardScaler(epsilon=1.0, random_state=0)).fit(X)
    np.testing.assert_array_equal(declared_bounds(fitted, 6),
                                  [NAN, NAN, 1, 1, 1, NAN])
    # A width that does not match the transformer's output: all unknown.
    assert np.isnan(declared_bounds(fitted, 7)).all()


def test_zero_one_transformers_and_clipping_min_max_scaler():
    X = np.array([[0.0, 1.0], [2.0, np.nan], [1.0, 3.0]])
    assert (declared_bounds(Binarizer().fit(X[:, :1]), 1) == 1).all()
    indicator = MissingIndicator(features="all").fit(X)
    assert (declared_bounds(indicator, 2) == 1).all()
    fill = SimpleImputer(strategy="constant", fill_value=0,
                         keep_empty_features=True)
    chain = make_pipeline(fill, OneHotEncoder(categories=[[0.0, 1.0, 2.0]]))
    assert (declared_bounds(chain.fit(X[:, :1]), 3) == 1).all()
    scaler = DPMinMaxScaler(bounds=(0, 3), feature_range=(-2, 1), clip=True,
                            epsilon=1.0).fit(X[:, :1])
    assert declared_bounds(scaler, 1).tolist() == [2.0]
    unclipped = DPMinMaxScaler(bounds=(0, 3), epsilon=1.0).fit(X[:, :1])
    assert np.isnan(declared_bounds(unclipped, 1)).all()
    assert np.isnan(declared_bounds("passthrough", 2)).all()
    assert np.isnan(declared_bounds(fill.fit(X), 2)).all()


def test_private_pipeline_hands_declared_bounds_to_dplasso(table):
    """One-hot columns get bound 1, the scaled columns the public rule of
    DPLasso's own budget; the user's estimator is never changed, a clone
    of the fitted pipeline refits the same way, and an explicit bound is
    kept."""
    X, y = table
    model = DPLasso()
    pipe = make_private_pipeline(_columns(), model, epsilon=1.0, delta=1e-8,
                                 random_state=0).fit(X, y)
    fitted = pipe.steps[-1][1]
    eps = pipe.step_budgets_["dplasso"][0]
    rule = public_feature_bound(len(y), 5, eps)
    assert rule > 1.0
    np.testing.assert_array_equal(fitted.feature_bound_, [rule, rule, 1, 1, 1])
    # alpha="auto" from the narrowest column's largest gradient.
    assert fitted.alpha_ == pytest.approx(0.001 * 1.0 * fitted.target_bound_)
    assert fitted is not model and not hasattr(model, "_declared_bounds")
    assert model.get_params()["feature_bound"] == "public"
    assert pipe.get_params()["dplasso__feature_bound"] == "public"
    again = clone(pipe).fit(X, y)
    np.testing.assert_array_equal(again.steps[-1][1].feature_bound_,
                                  fitted.feature_bound_)
    np.testing.assert_allclose(again.predict(X), pipe.predict(X))
    explicit = make_private_pipeline(_columns(), DPLasso(feature_bound=1.0),
                                     random_state=0).fit(X, y)
    assert explicit.steps[-1][1].feature_bound_ == 1.0


def test_one_hot_columns_of_one_input_column_share_a_block():
    """Blocks in output order: each input column of a OneHotEncoder is one
    block (a dropped category included), every other column its own; a
    transformer that declares nothing gives one block per column."""
    frame = pd.DataFrame({"a": [1.0, 2.0, 3.0, 4.0], "c": list("xyzx"),
                          "d": list("pqpq")})
    columns = ColumnTransformer(
        [("num", DPStandardScaler(bounds=(0, 5)), ["a"]),
         ("cat", OneHotEncoder(), ["c", "d"])], sparse_threshold=0).fit(frame)
    np.testing.assert_array_equal(declared_blocks(columns, 6), [0, 1, 1, 1, 2, 2])
    dropped = ColumnTransformer(
        [("cat", OneHotEncoder(drop="first"), ["c", "d"]),
         ("num", "passthrough", ["a"])], sparse_threshold=0).fit(frame)
    np.testing.assert_array_equal(declared_blocks(dropped, 4), [0, 0, 1, 2])
    inner = make_pipeline(SimpleImputer(strategy="most_frequent"), OneHotEncoder())
    np.testing.assert_array_equal(
        declared_blocks(inner.fit(frame[["c"]]), 3), [0, 0, 0])
    np.testing.assert_array_equal(
        declared_blocks(Binarizer().fit(frame[["a"]]), 1), [0])
    # A width that is not the transformer's output: nothing declared.
    np.testing.assert_array_equal(declared_blocks(columns, 7), np.arange(7))


def test_private_pipeline_hands_blocks_to_dplasso(table):
    """The fitted model steps on the encoder's block of three columns as a
    whole; the user's estimator keeps none; a two-level column steps a
    column at a time."""
    X, y = table
    model = DPLasso()
    pipe = make_private_pipeline(_columns(), model, epsilon=1.0, delta=1e-8,
                                 random_state=0).fit(X, y)
    fitted = pipe.steps[-1][1]
    np.testing.assert_array_equal(fitted.feature_blocks_, [0, 1, 2, 2, 2])
    assert not hasattr(model, "_declared_blocks")
    binary = ColumnTransformer(
        [("num", DPStandardScaler(), ["a", "b"]),
         ("cat", OneHotEncoder(categories=[[0, 1, 2]], drop="first"), ["c"])],
        sparse_threshold=0)
    pipe = make_private_pipeline(binary, DPLasso(), epsilon=1.0, delta=1e-8,
                                 random_state=0).fit(X, y)
    assert pipe.steps[-1][1].feature_blocks_ is None
