"""The ledger's release hook: fits inside it hand their plan to the hook
and record nothing (the private search records itself once)."""

import threading

import numpy as np
import pytest

from skdpopt import DPSGDRegressor, PrivacyLedger, ledger

pytestmark = pytest.mark.filterwarnings("ignore::skdpopt.exceptions.UtilityWarning")

X = np.random.default_rng(0).normal(size=(500, 2))
Y = X @ [1.0, -1.0]


def test_fits_in_the_hook_record_nothing_and_hand_their_plan():
    plans = []
    with PrivacyLedger() as book:
        with ledger.release_hook(lambda est, plan: plans.append((est, plan))):
            model = DPSGDRegressor(random_state=0).fit(X, Y)
        DPSGDRegressor(random_state=0).fit(X, Y)  # outside: recorded
    assert len(plans) == 1 and plans[0][0] is model
    assert plans[0][1] is model.privacy_plan_
    assert len(book) == 1


def test_a_hook_that_raises_stops_the_fit_before_it_releases():
    class Stop(Exception):
        pass

    def refuse(est, plan):
        raise Stop

    model = DPSGDRegressor()
    with ledger.release_hook(refuse), pytest.raises(Stop):
        model.fit(X, Y)
    assert not hasattr(model, "coef_") and not hasattr(model, "privacy_spent_")


def test_the_hook_holds_in_its_own_thread_only():
    # Another thread's fits keep recording while one thread is in a hook.
    with PrivacyLedger() as book:
        seen = []
        with ledger.release_hook(lambda est, plan: seen.append(plan)):
            worker = threading.Thread(
                target=lambda: DPSGDRegressor(random_state=1).fit(X, Y))
            worker.start()
            worker.join()
    assert not seen and len(book) == 1
