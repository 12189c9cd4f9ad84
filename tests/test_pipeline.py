"""PrivatePipeline: refusal of non-private steps, the budget split, the
composed spend, grid search and the ledger."""

import logging
import warnings

import numpy as np
import pytest
from sklearn.base import BaseEstimator, TransformerMixin, clone
from sklearn.compose import ColumnTransformer
from sklearn.feature_extraction.text import (
    CountVectorizer,
    HashingVectorizer,
    TfidfVectorizer,
)
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LinearRegression
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import (
    FunctionTransformer,
    MinMaxScaler,
    OneHotEncoder,
    StandardScaler,
)

from skdpopt import (
    DPLogisticSimplex,
    DPMinMaxScaler,
    DPSGDClassifier,
    DPSGDRegressor,
    DPStandardScaler,
    PrivacyLeakError,
    PrivacyLedger,
    PrivatePipeline,
    make_private_pipeline,
)
from skdpopt.accounting import compose, privacy_spent

logging.getLogger("absl").setLevel(logging.ERROR)


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(100, 20, size=(3000, 3))
    y = (X - 100) @ [0.05, -0.02, 0.01] + 0.3 * rng.normal(size=3000)
    return X, y


def test_standard_scaler_is_refused_by_name():
    with pytest.raises(PrivacyLeakError, match="StandardScaler") as info:
        make_private_pipeline(StandardScaler(), DPSGDRegressor())
    message = str(info.value)
    assert "'standardscaler'" in message and "DPStandardScaler" in message


@pytest.mark.parametrize("step, alternative", [
    (SimpleImputer(), "strategy='constant'"),
    (OneHotEncoder(), "categories="),
    (TfidfVectorizer(), "HashingVectorizer"),
    (MinMaxScaler(), "DPMinMaxScaler"),
    (OneHotEncoder(categories=[["a", "b"]], min_frequency=5), "categories="),
])
def test_transformers_that_learn_from_data_are_refused(step, alternative):
    name = type(step).__name__
    with pytest.raises(PrivacyLeakError, match=name) as info:
        make_private_pipeline(step, DPSGDClassifier())
    assert alternative in str(info.value)


def test_a_non_private_model_and_unknown_steps_are_refused():
    with pytest.raises(PrivacyLeakError, match="LinearRegression.*private estimator"):
        make_private_pipeline(DPStandardScaler(), LinearRegression())

    class Custom(TransformerMixin, BaseEstimator):
        def fit(self, X, y=None):
            return self

        def transform(self, X):
            return X

    with pytest.raises(PrivacyLeakError, match="public_steps"):
        make_private_pipeline(Custom(), DPSGDRegressor())
    # Declared public by the user: accepted.
    make_private_pipeline(Custom(), DPSGDRegressor(), public_steps=("custom",))


def test_nested_steps_are_checked():
    inner = ColumnTransformer([("scale", StandardScaler(), [0]),
                               ("keep", "passthrough", [1])])
    with pytest.raises(PrivacyLeakError, match="columntransformer__scale"):
        make_private_pipeline(inner, DPSGDRegressor())
    with pytest.raises(PrivacyLeakError, match="pipeline__standardscaler"):
        make_private_pipeline(make_pipeline(StandardScaler()), DPSGDRegressor())


def test_stateless_and_declared_steps_are_accepted():
    from sklearn.frozen import FrozenEstimator

    pipe = make_private_pipeline(
        FunctionTransformer(np.log1p),
        ColumnTransformer([
            ("onehot", OneHotEncoder(categories=[["a", "b", "c"]]), [0]),
            ("rest", DPStandardScaler(), [1, 2]),
        ]),
        FrozenEstimator(StandardScaler().fit(np.ones((3, 4)))),
        DPSGDRegressor(),
    )
    assert [p for p, _ in pipe.check_privacy()] == [
        "columntransformer__rest", "dpsgdregressor"]
    make_private_pipeline(HashingVectorizer(), DPLogisticSimplex())
    make_private_pipeline(CountVectorizer(vocabulary=["a", "b"], binary=True),
                          DPLogisticSimplex())
    make_private_pipeline(
        SimpleImputer(strategy="constant", fill_value=0, keep_empty_features=True),
        DPSGDRegressor())


def test_default_split_and_composed_spend(data):
    X, y = data
    pipe = make_private_pipeline(DPStandardScaler(), DPSGDRegressor(),
                                 epsilon=1.0, delta=1e-6).fit(X, y)
    assert pipe.step_budgets_ == {"dpstandardscaler": (0.2, 2e-7),
                                  "dpsgdregressor": (0.8, 8e-7)}
    scaler, model = pipe.named_steps.values()
    assert (scaler.epsilon, model.epsilon) == (0.2, 0.8)
    # Recomputed independently: the accountant's composition of the two
    # plans' events at the summed delta, and basic composition.
    events = compose(scaler.privacy_plan_.event, model.privacy_plan_.event)
    composed = privacy_spent(events, 1e-6).epsilon
    basic = scaler.privacy_spent_.epsilon + model.privacy_spent_.epsilon
    assert pipe.privacy_spent_.epsilon == pytest.approx(min(composed, basic))
    assert pipe.privacy_spent_.epsilon <= 1.0 and pipe.privacy_spent_.delta <= 1e-6
    assert pipe.score(X, y) > 0.3


def test_spend_against_dp_accounting(data):
    pytest.importorskip("dp_accounting")
    from dp_accounting.pld import privacy_loss_distribution as dpa_pld

    X, y = data
    pipe = make_private_pipeline(DPStandardScaler(bounds=(0, 200)),
                                 DPSGDRegressor(sampling="full", max_iter=20,
                                                clip_norm=1.0, target_scale=1.0),
                                 epsilon=1.0, delta=1e-6).fit(X, y)
    scaler, model = pipe.named_steps.values()
    z1, z2 = scaler.privacy_plan_.noise_multipliers
    s = model.privacy_plan_.noise_multiplier
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gaussian = dpa_pld.from_gaussian_mechanism
        pld = gaussian(standard_deviation=z1, value_discretization_interval=1e-4)
        pld = pld.compose(gaussian(standard_deviation=z2,
                                   value_discretization_interval=1e-4))
        # A full-batch step: sum of clipped gradients, replace-one
        # sensitivity 2C, noise s C.
        step = gaussian(standard_deviation=s, sensitivity=2.0,
                        value_discretization_interval=1e-4)
        pld = pld.compose(step.self_compose(model.privacy_plan_.n_steps))
        reference = pld.get_epsilon_for_delta(1e-6)
    assert pipe.privacy_spent_.epsilon == pytest.approx(reference, rel=0.02)


def test_user_split_and_own_budgets(data):
    X, y = data
    pipe = make_private_pipeline(
        DPStandardScaler(), DPSGDRegressor(), epsilon=2.0, delta=1e-6,
        budget_split={"dpstandardscaler": 0.5, "dpsgdregressor": 0.5}).fit(X, y)
    assert pipe.step_budgets_["dpsgdregressor"] == (1.0, 5e-7)
    with pytest.raises(ValueError, match="budget_split"):
        make_private_pipeline(DPStandardScaler(), DPSGDRegressor(),
                              budget_split={"dpsgdregressor": 1.0}).fit(X, y)
    with pytest.raises(ValueError, match="at most 1"):
        make_private_pipeline(
            DPStandardScaler(), DPSGDRegressor(),
            budget_split={"dpstandardscaler": 0.6, "dpsgdregressor": 0.6}).fit(X, y)
    own = make_private_pipeline(DPStandardScaler(epsilon=0.1, delta=1e-7),
                                DPSGDRegressor(epsilon=0.4, delta=1e-7),
                                epsilon=None).fit(X, y)
    assert own.step_budgets_ == {"dpstandardscaler": (0.1, 1e-7),
                                 "dpsgdregressor": (0.4, 1e-7)}
    assert own.privacy_spent_.epsilon <= 0.5


def test_free_steps_get_no_budget(data):
    X, y = data
    pipe = make_private_pipeline(DPMinMaxScaler(bounds=(0, 200)), DPSGDRegressor(),
                                 epsilon=1.0, delta=1e-6).fit(X, y)
    assert pipe.step_budgets_ == {"dpsgdregressor": (1.0, 1e-6)}


def test_grid_search_and_the_ledger_count_each_fit_once(data):
    X, y = data
    pipe = make_private_pipeline(DPStandardScaler(), DPSGDRegressor(),
                                 epsilon=0.5, delta=1e-7)
    grid = {"dpsgdregressor__alpha": [1e-4, 1e-2]}
    with PrivacyLedger() as ledger:
        search = GridSearchCV(pipe, grid, cv=3).fit(X, y)
    # 2 settings x 3 folds + the refit, two private steps each.
    names = [r.estimator for r in ledger.records]
    assert names.count("DPStandardScaler") == 7
    assert names.count("DPSGDRegressor") == 7
    assert len(names) == 14
    best = search.best_estimator_
    assert best.privacy_spent_.epsilon <= 0.5
    # The ledger's total composes all 14 events.
    total = privacy_spent(compose(*[r.event for r in ledger.records]),
                          sum(r.delta for r in ledger.records)).epsilon
    assert ledger.spent().epsilon == pytest.approx(total)


def test_clone_and_params_round_trip():
    pipe = make_private_pipeline(DPStandardScaler(), DPSGDRegressor(),
                                 epsilon=0.7, delta=1e-7)
    copy = clone(pipe)
    assert isinstance(copy, PrivatePipeline)
    assert copy.get_params()["epsilon"] == 0.7
    copy.set_params(dpsgdregressor__alpha=0.5, epsilon=0.3)
    assert copy.named_steps["dpsgdregressor"].alpha == 0.5 and copy.epsilon == 0.3


def test_fit_transform_splits_too(data):
    X, _ = data
    pipe = make_private_pipeline(DPStandardScaler(), DPMinMaxScaler(),
                                 epsilon=1.0, delta=1e-6)
    Z = pipe.fit_transform(X)
    assert Z.shape == X.shape
    assert pipe.step_budgets_ == {"dpstandardscaler": (0.5, 5e-7),
                                  "dpminmaxscaler": (0.5, 5e-7)}
    assert pipe.privacy_spent_.epsilon <= 1.0


def test_random_state_seeds_the_steps_reproducibly(data):
    X, y = data

    def fit(seed, **model):
        pipe = make_private_pipeline(DPStandardScaler(), DPSGDRegressor(**model),
                                     epsilon=1.0, delta=1e-6,
                                     random_state=seed)
        return pipe.fit(X, y)

    first, again, other = fit(0), fit(0), fit(1)
    np.testing.assert_array_equal(first[-1].coef_, again[-1].coef_)
    np.testing.assert_array_equal(first[0].mean_, again[0].mean_)
    assert not np.array_equal(first[-1].coef_, other[-1].coef_)
    # Each step gets its own seed, and a step's own seed is kept.
    seeds = [first[0].random_state, first[-1].random_state]
    assert seeds[0] != seeds[1]
    assert fit(0, random_state=5)[-1].random_state == 5
