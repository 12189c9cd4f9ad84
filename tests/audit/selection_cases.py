"""Audit of the private search: the released validation score of the chosen
run stays within the search's claim, and a planted bug that selects on
(and releases) noiseless scores is caught.

The case has the shape of ``audit_cases.AuditCase`` so that it can join
``CASES`` (and the audit table) as it is.

Design: every row is a zero feature vector, and the candidate (DP-SGD
without intercept) then predicts label 0 whatever its noisy fit, so a
candidate's exact validation accuracy is the share of label-0 rows among
the validation rows.  The neighbouring datasets differ in one row, the
canary, labelled 1 (in) or 0 (out): with the canary among the validation
rows (half the time, at ``validation_fraction = 0.5``) every run's exact
score is ``1 / n_validation`` lower in the first.  The search releases the
best noisy score of a random number of runs; its noise must hide the
shift.
"""

import dataclasses

import numpy as np
from audit_cases import DELTA, EPSILON, AuditCase

import skdpopt.model_selection._search as search_module
from skdpopt import DPSGDClassifier
from skdpopt.model_selection import DPGridSearchCV

N_ROWS = 50


def _pair():
    X = np.zeros((N_ROWS, 1))
    y_out = np.zeros(N_ROWS)
    y_in = y_out.copy()
    y_in[0] = 1.0
    return (X, y_in), (X, y_out)


def _fit(data, random_state):
    X, y = data
    candidate = DPSGDClassifier(classes=[0, 1], fit_intercept=False, max_iter=1,
                                sampling="full")
    # One point: each run is a fresh noisy fit and score of it, and the
    # search releases the best of a random number of runs.
    return DPGridSearchCV(candidate, {"alpha": [1e-4]}, epsilon=EPSILON,
                          delta=DELTA, scoring="accuracy", validation_fraction=0.5,
                          random_state=random_state).fit(X, y)


def _plant_noiseless_scores(monkeypatch):
    """The plan's score noise is 0 while its event (the claim) is kept: the
    search selects on, and releases, exact validation scores."""
    original = search_module.plan_search

    def noiseless(**kwargs):
        return dataclasses.replace(original(**kwargs), score_noise=0.0)

    monkeypatch.setattr(search_module, "plan_search", noiseless)


SEARCH = AuditCase(
    name="DPGridSearchCV (chosen run's score)",
    release="the chosen run's noisy validation score (best_score_)",
    fit=_fit,
    datasets=_pair,
    statistic=lambda search: search.best_score_,
    claimed=lambda search: search.privacy_spent_.epsilon,
    plant=_plant_noiseless_scores,
    bug="selection on noiseless validation scores (released as they are)",
    # With the bug the statistic separates the datasets whenever the canary
    # is a validation row (half the runs): on 150 measured runs a side the
    # bound is about log(0.42 / 0.024) = 2.9, far above the claim of 1.
    fast_runs=300,
)

CASES = [SEARCH]
