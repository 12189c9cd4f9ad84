"""DPGridSearchCV and DPRandomizedSearchCV: what they release, what they
spend, and how they behave as scikit-learn searches."""

import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.linear_model import Ridge
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import skdpopt.model_selection._search as search_module
from skdpopt import (
    BudgetExceededError,
    DPSGDClassifier,
    DPSGDRegressor,
    DPStandardScaler,
    PrivacyLeakError,
    PrivacyLeakWarning,
    PrivacyLedger,
    make_private_pipeline,
)
from skdpopt.accounting import GaussianMechanism, compose
from skdpopt.model_selection import DPGridSearchCV, DPRandomizedSearchCV

pytestmark = pytest.mark.filterwarnings("ignore::skdpopt.exceptions.UtilityWarning")


def classification(n=2000, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    y = (X @ [1.0, -1.0, 0.5, 0.0] + 0.3 * rng.normal(size=n) > 0).astype(int)
    return X, y


def regression(n=2000, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    return X, X @ [1.0, -0.5, 0.2] + 0.3 * rng.normal(size=n)


def grid_search(**kwargs):
    params = dict(epsilon=1.0, delta=1e-6, random_state=0)
    params.update(kwargs)
    return DPGridSearchCV(DPSGDClassifier(classes=[0, 1]),
                          {"alpha": [1e-4, 1e-2], "eta0": [0.1, 0.5]}, **params)


# -- scikit-learn conventions (check_estimator: tests/test_common.py) ----------

def test_clone_and_params_round_trip():
    search = grid_search(n_iter=5, refit_share=0.3)
    params = search.get_params()
    assert params["estimator__alpha"] == 1e-4 and params["n_iter"] == 5
    twin = clone(search)
    assert twin.get_params(deep=False).keys() == params.keys() - {
        k for k in params if "__" in k}
    twin.set_params(estimator__eta0=0.3, epsilon=2.0)
    assert twin.estimator.eta0 == 0.3 and search.estimator.eta0 == "auto"


def test_pipeline_step_parameters_are_searched():
    X, y = regression()
    pipe = make_private_pipeline(DPStandardScaler(), DPSGDRegressor())
    search = DPGridSearchCV(pipe, {"dpsgdregressor__alpha": [1e-4, 1e-3],
                                   "dpstandardscaler__with_mean": [True]},
                            epsilon=2.0, delta=1e-6, random_state=0).fit(X, y)
    assert set(search.best_params_) == {"dpsgdregressor__alpha",
                                        "dpstandardscaler__with_mean"}
    assert search.best_estimator_.named_steps["dpsgdregressor"].alpha in (1e-4, 1e-3)
    assert search.score(X, y) > 0.5  # R^2 of the chosen pipeline


def test_the_users_estimator_is_not_modified():
    X, y = classification()
    estimator = DPSGDClassifier(classes=[0, 1], epsilon=7.0, delta=1e-9)
    before = estimator.get_params()
    DPGridSearchCV(estimator, {"alpha": [1e-4, 1e-2]}, random_state=0).fit(X, y)
    assert estimator.get_params() == before
    assert not hasattr(estimator, "coef_")


def test_delegation_and_fitted_attributes():
    X, y = classification()
    search = grid_search().fit(X, y)
    model = search.best_estimator_
    np.testing.assert_array_equal(search.predict(X), model.predict(X))
    np.testing.assert_array_equal(search.predict_proba(X), model.predict_proba(X))
    np.testing.assert_array_equal(search.decision_function(X),
                                  model.decision_function(X))
    assert search.score(X, y) == model.score(X, y)
    np.testing.assert_array_equal(search.classes_, [0, 1])
    assert search.n_features_in_ == 4
    # The chosen model was planned at the candidate budget.
    assert model.epsilon == search.candidate_epsilon_
    assert model.privacy_spent_.epsilon <= search.candidate_epsilon_


def test_cv_results_hold_only_the_released_run():
    X, y = classification()
    search = grid_search(n_iter=12).fit(X, y)
    results = search.cv_results_
    assert results["params"] == [search.best_params_]
    assert results["mean_test_score"].tolist() == [search.best_score_]
    assert results["rank_test_score"].tolist() == [1]
    assert {k for k in results if k.startswith("param_")} == {"param_alpha",
                                                              "param_eta0"}
    assert search.best_index_ == 0 and search.n_splits_ == 1


def test_refit_false_keeps_no_model():
    X, y = classification()
    search = grid_search(refit=False).fit(X, y)
    assert set(search.best_params_) == {"alpha", "eta0"}
    assert not hasattr(search, "best_estimator_")
    with pytest.raises(AttributeError) as info:
        search.predict(X)
    assert "refit=False" in str(info.value.__cause__)


def test_refit_share_refits_on_all_rows_within_its_share():
    X, y = classification()
    search = grid_search(refit_share=0.4).fit(X, y)
    model = search.best_estimator_
    assert model.epsilon == pytest.approx(0.4)
    assert model.privacy_spent_.epsilon <= 0.4
    assert search.privacy_spent_.epsilon <= 1.0
    # The refit's event is accounted as an (epsilon, delta) stage.
    assert search.privacy_plan_.refit_epsilon == pytest.approx(0.4)


def test_scoring_choices_and_their_errors():
    X, y = classification()
    search = grid_search(scoring="neg_log_loss").fit(X, y)
    assert -np.log(20) - 1 < search.best_score_ < 0.5
    with pytest.raises(ValueError, match="scores a regressor"):
        grid_search(scoring="neg_mean_squared_error").fit(X, y)
    with pytest.raises(ValueError, match="for accuracy"):
        grid_search(scoring="accuracy", score_bound=2.0).fit(X, y)
    hinge = DPGridSearchCV(DPSGDClassifier(loss="hinge", classes=[0, 1]),
                           {"alpha": [1e-4, 1e-2]}, scoring="neg_log_loss")
    with pytest.raises(ValueError, match="predict_proba"):
        hinge.fit(X, y)


def test_randomized_search_draws_its_pool_from_the_distributions():
    stats = pytest.importorskip("scipy.stats")
    X, y = regression()
    search = DPRandomizedSearchCV(DPSGDRegressor(), {"eta0": stats.loguniform(0.05, 1)},
                                  n_iter=5, epsilon=2.0, delta=1e-6,
                                  random_state=3).fit(X, y)
    assert 0.05 <= search.best_params_["eta0"] <= 1.0
    assert len(search.privacy_plan_.candidate_events) == 5


# -- privacy --------------------------------------------------------------------

def test_spent_is_the_plans_total_and_lands_below_the_request():
    X, y = classification()
    for epsilon in (0.5, 1.0, 3.0):
        search = grid_search(epsilon=epsilon).fit(X, y)
        assert search.privacy_spent_ == search.privacy_plan_.spent()
        assert 0.97 * epsilon <= search.privacy_spent_.epsilon <= epsilon
        assert search.privacy_spent_.delta == 1e-6


def test_the_ledger_records_the_search_once_with_any_n_jobs():
    # Runs in joblib's worker processes carry the ledger's channel and do
    # not record either; a seeded search is the same search with n_jobs.
    X, y = classification(n=1000)
    searches = []
    for n_jobs in (None, 2):
        with PrivacyLedger() as ledger:
            searches.append(grid_search(n_iter=6, n_jobs=n_jobs).fit(X, y))
        assert [r.estimator for r in ledger.records] == ["DPGridSearchCV"]
        assert ledger.spent() == searches[-1].privacy_spent_
    one, two = searches
    assert (one.best_params_, one.best_score_) == (two.best_params_, two.best_score_)
    np.testing.assert_array_equal(one.best_estimator_.coef_, two.best_estimator_.coef_)


def test_a_ledger_budget_refuses_the_search_before_any_fit(monkeypatch):
    X, y = classification(n=1000)
    fitted = []
    original = search_module._candidates.run_candidate
    monkeypatch.setattr(search_module._candidates, "run_candidate",
                        lambda *a, **k: fitted.append(1) or original(*a, **k))
    with PrivacyLedger(budget=(0.5, 1e-5)) as ledger, \
            pytest.raises(BudgetExceededError):
        grid_search().fit(X, y)
    assert not fitted and len(ledger) == 0


def test_scores_are_noisy_and_only_the_best_is_released(monkeypatch):
    # Two runs of one candidate on the same rows differ only by their noise
    # and their fits' noise: the released score is the larger noisy one.
    X, y = classification(n=1000)
    seen = {}
    original = search_module.BaseDPSearchCV._noisy_scores

    def spy(self, values, plan, bound, n_validation, rng):
        noisy = original(self, values, plan, bound, n_validation, rng)
        seen.update(values=np.array(values), noisy=noisy,
                    scale=plan.score_noise * bound / n_validation)
        return noisy

    monkeypatch.setattr(search_module.BaseDPSearchCV, "_noisy_scores", spy)
    search = grid_search(n_iter=30).fit(X, y)
    assert search.best_score_ == seen["noisy"].max()
    noise = seen["noisy"] - seen["values"]
    # Noise of the planned scale: over the runs, the sample standard
    # deviation of N(0, s^2) lies within a factor 2 of s with probability
    # above 1 - 1e-4 for 10 or more runs (chi-square tails); the grid's 30
    # expected runs fall below 10 with probability about 0.05, so the
    # check is made only then.
    if len(noise) >= 10:
        assert 0.5 < noise.std(ddof=1) / seen["scale"] < 2.0
    assert np.all(noise != 0)


def test_non_private_estimators_are_refused():
    X, y = regression()
    with pytest.raises(PrivacyLeakError, match="not a private"):
        DPGridSearchCV(Ridge(), {"alpha": [1.0, 2.0]}).fit(X, y)
    with pytest.raises(PrivacyLeakError):
        DPGridSearchCV(make_pipeline(StandardScaler(), DPSGDRegressor()),
                       {"dpsgdregressor__alpha": [1e-4]}).fit(X, y)


def test_a_search_that_cannot_fit_its_budget_says_how_small_each_share_is():
    X, y = classification(n=1000)
    with pytest.raises(ValueError, match=r"each candidate would get epsilon=.*% of "
                                         r"the total"):
        grid_search(stopping="poisson", n_iter=1e6).fit(X, y)


def test_candidate_fits_that_plan_otherwise_are_refused(monkeypatch):
    # A candidate whose real fit would release other than its planned event
    # stops the search before anything is released.
    X, y = classification(n=1000)
    original = search_module._candidates.planned_event

    def wrong(candidate, X, y, fit_params):
        event, caught = original(candidate, X, y, fit_params)
        return compose(event, GaussianMechanism(100.0)), caught

    monkeypatch.setattr(search_module._candidates, "planned_event", wrong)
    with pytest.raises(RuntimeError, match="did not account"):
        grid_search().fit(X, y)


def test_candidates_get_fresh_noise_each_run():
    # With random_state unset every run's own random_state is None.
    search = DPGridSearchCV(DPSGDClassifier(random_state=5), {"alpha": [1e-4]})
    assert search._seeds(np.random.default_rng(0), 3) == [None, None, None]
    seeded = DPGridSearchCV(DPSGDClassifier(), {"alpha": [1e-4]}, random_state=1)
    seeds = seeded._seeds(np.random.default_rng(0), 50)
    assert len(set(seeds)) == 50


def test_candidate_warnings_come_once():
    X, y = classification(n=1000)
    search = DPGridSearchCV(DPSGDClassifier(), {"alpha": [1e-4, 1e-2]}, n_iter=8,
                            random_state=0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        search.fit(X, y)
    leaks = [w for w in caught if issubclass(w.category, PrivacyLeakWarning)]
    assert len(leaks) == 1


def test_poisson_without_runs_chooses_nothing(monkeypatch):
    X, y = classification(n=1000)
    monkeypatch.setattr(search_module.mechanisms, "repetitions", lambda *a: 0)
    with pytest.warns(UserWarning, match="nothing was chosen"):
        search = grid_search(stopping="poisson").fit(X, y)
    assert search.best_params_ is None and not hasattr(search, "best_estimator_")
    assert search.privacy_spent_.epsilon <= 1.0


def test_selection_finds_a_clearly_better_candidate():
    # alpha = 10 shrinks the model into its noise, confidently wrong
    # (accuracy about 0.15; most rows' log loss at the bound log(20) = 3.0),
    # alpha = 1e-4 reaches a log loss about 0.32 (accuracy 0.95): a gap
    # above 2 against score noise of standard deviation
    # log(20) score_noise / 400 (about 0.08 at these budgets).  With the
    # geometric number of runs the search misses the good candidate only
    # if none of its K runs drew it: probability
    # E[(1/2)^K] = (gamma / 2) / (1 - (1 - gamma) / 2) = 0.048 for the
    # geometric of mean 20.  Over 10 seeds, 3 or more misses have
    # probability 0.011.
    X, y = classification(n=2000)
    found = 0
    for seed in range(10):
        search = DPGridSearchCV(DPSGDClassifier(classes=[0, 1]),
                                {"alpha": [1e-4, 10.0]}, n_iter=20, epsilon=1.0,
                                delta=1e-6, stopping="geometric",
                                random_state=seed).fit(X, y)
        found += search.best_params_["alpha"] == 1e-4
    assert found >= 8
