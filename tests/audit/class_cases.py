"""Audit of the classifiers' class totals: DPSGDClassifier's released
intercept stays within the claim of the totals' Gaussian, and a planted
bug that noises the totals 16-fold too little is caught.

The totals are not stored on the estimator; they are observed through the
intercept they start (``docs/privacy/classes.md``).  The hinge loss is
the loss that shows them: its intercept starts at the best constant score
at the released share of positives, +1 or -1 for the majority, and is not
calibrated afterwards.  The log loss's intercept starts at the log-odds
but is then calibrated with noise of its own, on a larger share of the
budget than the totals': it hides them (with the totals noiseless, the
calibration's last step alone would leak about ``1 / sqrt(30 / rho)``
in Gaussian units against the totals' ``1 / sqrt(1 / (0.06 rho))``, so the
planted bug would stay within the claim).

The case has the shape of ``audit_cases.AuditCase`` so that it can join
``CASES`` (and the audit table) as it is.
"""

import dataclasses

import numpy as np
from audit_cases import DELTA, AuditCase

import skdpopt.sgd
from skdpopt import DPSGDClassifier
from skdpopt.accounting import privacy_spent

# Odd, so that the canary decides the majority: 51 against 50.
N_ROWS = 101
# The totals get COUNT_SHARE (3%) of the zCDP budget: at epsilon 8 their
# Gaussian has noise multiplier about 4 (claim about 0.93 at delta 1e-5),
# a standard deviation of about 5.6 per total and a floor of about 11, far
# below the 50 rows of each class (the floor, post-processing, then never
# decides the majority).
EPSILON = 8.0


def _majority_pair():
    # Zero rows (they move no gradient), 50 of each class; the canary is
    # labelled 1 (in: the positives are the majority, T1 - T0 = 1) or -1
    # (out: T1 - T0 = -1).  The released difference has noise of standard
    # deviation sqrt(2) * 5.6 = 8: the honest intercept's sign follows the
    # canary with probability Phi(1 / 8), about 0.55; with the planted bug
    # (standard deviation 0.5), Phi(2), about 0.98.
    X = np.zeros((N_ROWS, 1))
    y_out = np.where(np.arange(N_ROWS) % 2 == 0, 1.0, -1.0)
    y_out[0] = -1.0
    y_in = y_out.copy()
    y_in[0] = 1.0
    return (X, y_in), (X, y_out)


def _fit(data, random_state):
    # One full-batch step with a step size of 1e-6 moves the intercept
    # from +-1 by about 1e-6 (the hinge's slope is at most 1 per row, the
    # steps' noise at epsilon 8 about 1.2 clip norms): the sign stays the
    # released majority's (measured: within 6e-7 of +-1 over 300 fits).
    # No probability: no calibration, no fit check.
    X, y = data
    return DPSGDClassifier(loss="hinge", epsilon=EPSILON, delta=DELTA,
                           max_iter=1, sampling="full", eta0=1e-6,
                           average=False, classes=[-1.0, 1.0],
                           random_state=random_state).fit(X, y)


def _plant_quiet_totals(monkeypatch):
    """DP-SGD's plans noise the class totals 16-fold too little (floor and
    event as planned)."""
    original = skdpopt.sgd.plan_dpsgd

    def broken(**kwargs):
        plan = original(**kwargs)
        totals = plan.class_totals
        return dataclasses.replace(plan, class_totals=dataclasses.replace(
            totals, noise_scale=totals.noise_scale / 16))

    monkeypatch.setattr(skdpopt.sgd, "plan_dpsgd", broken)


CASES = [
    AuditCase(
        name="DPSGDClassifier (class totals)",
        release="the released majority class: sign of the hinge intercept "
                "(intercept_), set by the noisy class totals",
        fit=_fit,
        datasets=_majority_pair,
        # The sign: the step's last digits carry the steps' release, which
        # the claim does not cover.
        statistic=lambda est: float(np.sign(est.intercept_[0])),
        # What the sign sees: the totals' own Gaussian.
        claimed=lambda est: privacy_spent(est.privacy_plan_.class_totals.event,
                                          DELTA).epsilon,
        plant=_plant_quiet_totals,
        bug="plan's class-totals noise scaled down by 16 (event unchanged)",
        fast_runs=2_000,
    ),
]
