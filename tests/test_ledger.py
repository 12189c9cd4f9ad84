"""The privacy ledger: every fit recorded, composed, and budgeted."""

import logging
import pickle
import re
import warnings

import numpy as np
import pytest
from joblib import parallel_backend
from sklearn.model_selection import GridSearchCV, cross_validate
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer

from skdpopt import (
    BudgetExceededError,
    DPSGDClassifier,
    DPSGDRegressor,
    LedgerError,
    PrivacyLedger,
)
from skdpopt.accounting import privacy_spent
from skdpopt.ledger import _Channel

dp_accounting = pytest.importorskip("dp_accounting")
from dp_accounting.pld import privacy_loss_distribution as dpa_pld  # noqa: E402

logging.getLogger("absl").setLevel(logging.ERROR)

GRID = {"alpha": [1e-4, 1e-3, 1e-2], "eta0": [0.1, 0.5]}  # 6 settings


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(1500, 3))
    y = X @ [0.5, -0.2, 0.1] + 0.1 * rng.normal(size=1500)
    return X, y


def dpa_total_epsilon(records, delta):
    """dp-accounting's replace-one PLD composition of recorded DP-SGD fits."""
    composed = None
    for record in records:
        plan_event = record.event
        mechanism, count = plan_event.event, plan_event.count
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            pld = dpa_pld.from_gaussian_mechanism(
                standard_deviation=mechanism.noise_multiplier,
                sampling_prob=mechanism.sampling_rate,
                neighboring_relation=dp_accounting.NeighboringRelation.REPLACE_ONE,
                value_discretization_interval=1e-3,
            ).self_compose(count)
        composed = pld if composed is None else composed.compose(pld)
    return composed.get_epsilon_for_delta(delta)


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_grid_search_fits_are_all_recorded_and_composed(data, n_jobs):
    X, y = data
    # A public clip norm: every record's event is the steps' alone.
    estimator = DPSGDRegressor(epsilon=0.5, delta=1e-7, clip_norm=1.0, target_scale=1.0,
                               random_state=0)
    with PrivacyLedger() as ledger:
        GridSearchCV(estimator, GRID, cv=3, n_jobs=n_jobs).fit(X, y)
    records = ledger.records
    # 6 settings x 3 folds, and the refit on all rows.
    assert len(ledger) == 19
    assert {r.estimator for r in records} == {"DPSGDRegressor"}
    delta = 19 * 1e-7
    total = ledger.spent()
    assert total.delta == pytest.approx(delta)
    reference = dpa_total_epsilon(records, delta)
    # Never below the composition (a sound bound; 1% for the two
    # accountants' different discretisations), and tight.
    assert 0.99 * reference <= total.epsilon <= 1.15 * reference
    assert total.epsilon < 19 * 0.5 / 3


def test_threads_cross_validate_and_pipelines_are_recorded(data):
    X, y = data
    pipe = make_pipeline(FunctionTransformer(), DPSGDRegressor(epsilon=1.0,
                                                               delta=1e-7))
    with PrivacyLedger() as ledger, parallel_backend("threading", n_jobs=2):
        cross_validate(pipe, X, y, cv=4)
    assert len(ledger) == 4


def test_ledgers_nest_and_outer_sees_inner_fits(data):
    X, y = data
    with PrivacyLedger() as outer:
        DPSGDRegressor(delta=1e-7).fit(X, y)
        with PrivacyLedger() as inner:
            DPSGDRegressor(delta=1e-7).fit(X, y)
    assert (len(outer), len(inner)) == (2, 1)
    # Records survive the with-block.
    assert outer.spent().epsilon > inner.spent().epsilon


def test_no_ledger_no_record_and_closed_ledger_ignored(data):
    X, y = data
    with PrivacyLedger() as ledger:
        shipped = pickle.loads(pickle.dumps(DPSGDRegressor(delta=1e-7)))
    # Sent from a ledger that has closed (on this machine): nothing to record.
    shipped.fit(X, y)
    assert len(ledger) == 0


def test_budget_refuses_before_release(data):
    X, y = data
    clf_y = (y > 0).astype(int)
    with PrivacyLedger(budget=(1.5, 1e-6)) as ledger:
        DPSGDRegressor(epsilon=1.0, delta=1e-7).fit(X, y)
        late = DPSGDClassifier(epsilon=2.0, delta=1e-7, classes=[0, 1])
        with pytest.raises(BudgetExceededError, match="budget of epsilon=1.5"):
            late.fit(X, clf_y)
    assert len(ledger) == 1
    assert not hasattr(late, "coef_")  # nothing was fitted, nothing released
    assert ledger.spent().epsilon <= 1.5


def test_a_fit_refused_by_an_inner_ledger_is_recorded_in_none(data):
    X, y = data
    with PrivacyLedger() as outer, PrivacyLedger(budget=(0.5, 1e-6)) as inner:
        with pytest.raises(BudgetExceededError):
            DPSGDRegressor(epsilon=1.0, delta=1e-7).fit(X, y)
    assert (len(outer), len(inner)) == (0, 0)


@pytest.mark.parametrize("fail_at, charged", [(1, 0), (3, 1)])
def test_a_fit_that_fails_before_drawing_anything_is_not_charged(
        data, monkeypatch, fail_at, charged):
    """The first pass over the data fails (say, the memory runs out) before
    the fit's generator has drawn anything: no noisy quantity existed, so
    the ledgers forget the fit.  A failure once noise was drawn (the third
    pass) stays charged: the error may depend on noisy values."""
    from skdpopt._data import inmemory

    X, y = data
    gradient_sum = inmemory.InMemoryLinearRows.gradient_sum
    passes = []

    def failing(self, *args):
        passes.append(1)
        if len(passes) >= fail_at:
            raise MemoryError("the pass failed")
        return gradient_sum(self, *args)

    monkeypatch.setattr(inmemory.InMemoryLinearRows, "gradient_sum", failing)
    model = DPSGDRegressor(sampling="full", clip_norm=1.0, target_scale=1.0,
                           max_iter=5, delta=1e-7)
    with PrivacyLedger() as outer, PrivacyLedger() as inner:
        with pytest.raises(MemoryError):
            model.fit(X, y)
    assert (len(outer), len(inner)) == (charged, charged)
    assert not hasattr(model, "_open_release") and not hasattr(model, "coef_")
    monkeypatch.undo()
    # A fit that succeeds stays recorded, and keeps no handle on its ledger.
    with PrivacyLedger() as ledger:
        model.fit(X, y)
    assert len(ledger) == 1 and not hasattr(model, "_open_release")


def test_budget_message_prints_no_private_value(data):
    X, y = data
    with PrivacyLedger(budget=(0.1, 1e-6)):
        with pytest.raises(BudgetExceededError) as info:
            DPSGDRegressor(epsilon=1.0, delta=1e-7).fit(X, y)
    # Every number in the message is public: the budget, and the total the
    # fit's plan (public quantities only) would bring the ledger to.
    plan = DPSGDRegressor(epsilon=1.0, delta=1e-7).fit(X, y).privacy_plan_
    total = float(f"{privacy_spent(plan.event, 1e-6).epsilon:.4g}")
    numbers = {float(n) for n in re.findall(
        r"(?<![\w.])\d+(?:\.\d+)?(?:e[-+]?\d+)?", str(info.value))}
    assert numbers == {total, 1e-6, 0.1}


def test_unreachable_ledger_refuses_loudly(data):
    X, y = data
    estimator = DPSGDRegressor(delta=1e-7)
    estimator._ledger_channels = (_Channel("/nonexistent/skdpopt-ledger",
                                           "another-host"),)
    with pytest.raises(LedgerError, match="cannot reach"):
        estimator.fit(X, y)
    assert not hasattr(estimator, "coef_")


def test_non_private_fit_makes_the_total_infinite(data):
    X, y = data
    with PrivacyLedger() as ledger:
        DPSGDRegressor(epsilon=np.inf).fit(X, y)
    assert ledger.spent().epsilon == np.inf


def test_budget_is_validated():
    with pytest.raises(ValueError, match="budget"):
        PrivacyLedger(budget=(0, 1e-6))
