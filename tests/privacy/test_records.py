"""Every public class records exactly its plan's event in the ledger, once,
is refused over budget, and reports what its plan spends.

The cases are ``public_fits.FITS``: every public estimator, transformer and
pipeline with each of its solver options.  A public class missing from it
fails :func:`test_every_public_class_is_covered`.
"""

import numpy as np
import pytest
from public_fits import FITS, NOT_FITTED, covered_names, public_estimator_names

from skdpopt import BudgetExceededError, PrivacyLedger, PrivacySpent
from skdpopt._base import DPEstimatorMixin
from skdpopt.accounting import compose, privacy_spent
from skdpopt.pipeline import _fitted_leaves

pytestmark = pytest.mark.filterwarnings(
    "ignore::skdpopt.exceptions.UtilityWarning",
    "ignore:delta=:UserWarning",
)


def _private_parts(estimator):
    """The estimators that release something: itself, or a pipeline's steps."""
    if isinstance(estimator, DPEstimatorMixin):
        return [estimator]
    return _fitted_leaves(estimator)


def test_every_public_class_is_covered():
    missing = set(public_estimator_names()) - covered_names()
    assert not missing, (
        f"public classes without a case in public_fits.FITS: {sorted(missing)} "
        "(add each solver option, or list the name in NOT_FITTED with a reason)")
    assert not set(NOT_FITTED) - set(__import__("skdpopt").__all__)


@pytest.mark.parametrize("case", FITS, ids=lambda c: c.id)
def test_records_its_plans_event_once(case):
    with PrivacyLedger() as ledger:
        fitted = case.fit()
    parts = _private_parts(fitted)
    assert parts, "a public class that releases nothing"
    records = ledger.records
    assert [r.estimator for r in records] == [type(p).__name__ for p in parts]
    for record, part in zip(records, parts, strict=True):
        plan = part.privacy_plan_
        assert record.event == plan.event
        assert record.delta == plan.delta
        assert record.spent == plan.spent()
    # Another fit records again.
    with PrivacyLedger() as again:
        case.fit()
    assert len(again) == len(records)


@pytest.mark.parametrize("case", FITS, ids=lambda c: c.id)
def test_refused_over_budget(case):
    with PrivacyLedger() as unlimited:
        case.fit()
    spends = unlimited.spent().epsilon > 0
    estimator = case.make()
    with PrivacyLedger(budget=(1e-3, 1e-12)) as ledger:
        if not spends:  # public bounds: nothing released, nothing to refuse
            case.fit(estimator)
            assert ledger.spent().epsilon == 0
            return
        # Every case plans (close to) EPSILON, far above 1e-3.
        with pytest.raises(BudgetExceededError):
            case.fit(estimator)
    assert len(ledger) == 0
    # Nothing was fitted, nothing released.
    for part in _private_parts(estimator):
        assert not hasattr(part, "privacy_plan_")
        assert not hasattr(part, "privacy_spent_")


@pytest.mark.parametrize("case", FITS, ids=lambda c: c.id)
def test_privacy_spent_is_the_plans(case):
    fitted = case.fit()
    parts = _private_parts(fitted)
    for part in parts:
        assert part.privacy_spent_ == part.privacy_plan_.spent()
        assert part.privacy_spent_ == privacy_spent(part.privacy_plan_.event,
                                                    part.privacy_plan_.delta)
    if len(parts) > 1 or parts[0] is not fitted:
        # A pipeline: the smaller of basic composition of its steps' plans
        # and the accountant's composition of their events.
        spents = [p.privacy_plan_.spent() for p in parts]
        delta = min(sum(s.delta for s in spents), 1.0 - 1e-12)
        basic = PrivacySpent(sum(s.epsilon for s in spents), delta)
        composed = privacy_spent(compose(*(p.privacy_plan_.event for p in parts)),
                                 delta)
        assert fitted.privacy_spent_ == min(basic, composed,
                                            key=lambda s: s.epsilon)
    assert np.isfinite(fitted.privacy_spent_.epsilon)
