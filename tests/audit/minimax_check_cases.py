"""Audit of DPMinimaxClassifier's worst-group fit check: the released
group sums stay within the claim of the class totals and the check, and a
planted bug that noises the check 64-fold too little is caught.

The solver is replaced by a fixed model (public: chosen here, not from the
data), so that the only releases that see the canary are the class totals
and the check (``docs/privacy/dpminimax.md``).  Every row but the canary
is a zero row, on which the model predicts one half; the canary's feature
is 1, on which the model predicts nearly 1: the canary's gain over the
prior is clipped to +0.1 when it is positive (D) and to -0.1 when negative
(D'), a move of the check's full sensitivity ``2 bound``.  The zero rows'
gains, ``-log(2 prior(y))``, are within ``1e-4`` of zero at these counts
(the prior's noise is that of the totals, a few rows against 8,000), and
the class weights ``min T / T_y`` are within a few thousandths of one.

The released vector (one group) is observed through a spy on the release
and attached to the fitted estimator; the case has the shape of
``audit_cases.AuditCase`` so that it joins ``CASES`` (and the audit table)
as it is.
"""

import dataclasses

import numpy as np
import pytest
from audit_cases import DELTA, AuditCase

import skdpopt._classifiers
import skdpopt.minimax
from skdpopt import DPMinimaxClassifier
from skdpopt.accounting import privacy_spent
from skdpopt.solvers.problems import WorstGroupResult

# Odd: the classes are balanced but for the canary, 4,000 + 4,000.
N_ROWS = 8_001
# The check gets FIT_CHECK_SHARE (2%) of the zCDP budget: at epsilon 8 its
# noise has standard deviation about 0.8 against the canary's move of 0.2;
# with the planted bug 16-fold, about 0.05 (measured with the totals' share
# of the spread: about 0.056 on each dataset, means 0.2 apart), too close
# for a pilot of 1,000 fits to derive a test; 64-fold it is caught.
EPSILON = 8.0
# The fixed model's coefficient: sigma(20) is 1 - 2e-9, far beyond the
# clip of the canary's gain.
COEF = 20.0


def _pair():
    X = np.zeros((N_ROWS, 1))
    X[0, 0] = 1.0
    y_in = np.where(np.arange(N_ROWS) % 2 == 0, 1.0, -1.0)
    y_in[0] = 1.0
    y_out = y_in.copy()
    y_out[0] = -1.0
    return (X, y_in), (X, y_out)


def _fixed_model(problem, stage, rng):
    return WorstGroupResult(np.array([COEF]), 0.0, np.ones(problem.n_groups),
                            np.zeros(0))


def _fit(data, random_state):
    # gda without an intercept (no calibration), a public clip norm (no
    # row-norm release), one group (no counts): the solver's releases are
    # planned and spent but skipped.
    X, y = data
    released = []
    original = skdpopt._classifiers.release_group_fit_check

    def observed(*args, **kwargs):
        released.append(original(*args, **kwargs))
        return released[-1]

    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(skdpopt.minimax.SOLVERS, "gda", _fixed_model)
        patch.setattr(skdpopt._classifiers, "release_group_fit_check", observed)
        est = DPMinimaxClassifier(
            solver="gda", epsilon=EPSILON, delta=DELTA, fit_intercept=False,
            clip_norm=1.0, max_iter=1, classes=[-1.0, 1.0],
            random_state=random_state).fit(X, y)
    est.released_check = float(released[0][0])
    return est


def _claimed(est):
    """What the statistic sees: the class totals and the check."""
    return privacy_spent(est.privacy_plan_.checks.event, DELTA).epsilon


def _plant_quiet_check(monkeypatch):
    """The plan noises the fit check 64-fold too little (event unchanged)."""
    original = skdpopt.minimax.plan_minimax

    def broken(**kwargs):
        plan = original(**kwargs)
        checks = plan.checks
        check = dataclasses.replace(checks.fit_check,
                                    noise_scale=checks.fit_check.noise_scale / 64)
        return dataclasses.replace(plan, checks=dataclasses.replace(
            checks, fit_check=check))

    monkeypatch.setattr(skdpopt.minimax, "plan_minimax", broken)


CASES = [
    AuditCase(
        name="DPMinimaxClassifier (fit check)",
        release="the worst-group fit check's released group sum (class "
                "totals and check), the solver replaced by a fixed model",
        fit=_fit,
        datasets=_pair,
        statistic=lambda est: est.released_check,
        claimed=_claimed,
        plant=_plant_quiet_check,
        bug="plan's fit-check noise scaled down by 64 (event unchanged)",
        fast_runs=2_000,
    ),
]
