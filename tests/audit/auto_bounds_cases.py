"""Audits of the estimators' "auto" bounds: the released bound stays within
the claim of its two draws, and a planted bug that spends the bound
estimation for free is caught.

The cases have the shape of ``audit_cases.AuditCase`` so that they can join
``CASES`` (and the audit table) as they are.
"""

import dataclasses

import numpy as np
from audit_cases import DELTA, AuditCase

import skdpopt.lasso
import skdpopt.minimax
import skdpopt.sgd
from skdpopt import DPLasso, DPMinimaxClassifier, DPSGDRegressor

N_ROWS = 100
# The bounds get a small share of the budget: at this epsilon their two
# draws have about the score sensitivity of the scalers' audited draws.
EPSILON = 3.0

# Small on purpose (the canary must matter): the estimators warn that their
# bounds and fits are coarse, which is not what is audited.


def _pair():
    # One zero feature; every target at 1, the canary's just above the
    # median cell [1, 2^(1/4)) of the grid (in) or at 1 (out).  The
    # per-record statistic (|y_i|, or |y_i| ||(x_i, 1)|| = |y_i| for DP-SGD at
    # its start) then differs in one record, by one cell.
    X = np.zeros((N_ROWS, 1))
    y_out = np.ones(N_ROWS)
    y_in = y_out.copy()
    y_in[0] = 1.2
    return (X, y_in), (X, y_out)


def _fit_lasso(data, random_state):
    X, y = data
    return DPLasso(alpha=1e-3, epsilon=EPSILON, delta=DELTA, max_iter=1,
                   feature_bound=1.0, target_bound="auto",
                   random_state=random_state).fit(X, y)


def _fit_sgd(data, random_state):
    X, y = data
    return DPSGDRegressor(epsilon=EPSILON, delta=DELTA, max_iter=1,
                          sampling="full", clip_norm="auto", target_scale=1.0,
                          random_state=random_state).fit(X, y)


def _fit_sgd_target(data, random_state):
    X, y = data
    return DPSGDRegressor(epsilon=EPSILON, delta=DELTA, max_iter=1,
                          sampling="full", random_state=random_state).fit(X, y)


def _row_pair():
    # One feature at 1 on every row, the canary's at 1.2 (in) or 1 (out):
    # DPMinimaxClassifier's per-record statistic, the row norm ||x_i||,
    # differs in one record by one cell, as in ``_pair``.  feature_bound 2
    # keeps the canary unclipped.
    (_, y_in), (_, y_out) = _pair()
    X_out = np.ones((N_ROWS, 1))
    X_in = X_out.copy()
    X_in[0] = y_in[0]
    labels = np.where(np.arange(N_ROWS) % 2 == 0, 1.0, -1.0)
    return (X_in, labels), (X_out, labels)


def _fit_minimax(data, random_state):
    X, y = data
    return DPMinimaxClassifier(solver="gda", epsilon=EPSILON, delta=DELTA,
                               max_iter=1, feature_bound=2.0,
                               classes=[-1.0, 1.0],
                               random_state=random_state).fit(X, y)


def _plant_free_bounds(module):
    """The bound's draws run with 16 times the score sensitivity the plan
    accounts for: the bound estimation is nearly free."""

    def plant(monkeypatch):
        original = module.private_bounds
        monkeypatch.setattr(
            module, "private_bounds",
            lambda statistics, draws, rng: original(
                statistics, dataclasses.replace(
                    draws, score_sensitivity=16 * draws.score_sensitivity), rng))

    return plant


# The released bound is a function of its two draws (median cell, upper
# quantile), each 2D-DP: the claim is their sum.
def _bound_case(name, attribute, fit, draws, module, what, datasets=_pair):
    return AuditCase(
        name=name,
        release=f"the released {what} ({attribute})",
        fit=fit,
        datasets=datasets,
        statistic=lambda est: getattr(est, attribute),
        claimed=lambda est: 2 * 2 * getattr(est.privacy_plan_,
                                            draws).score_sensitivity,
        plant=_plant_free_bounds(module),
        bug=f"{what} draws' score sensitivity understated 16-fold (nearly free)",
        fast_runs=2_000,
    )


CASES = [
    _bound_case("DPLasso (auto target_bound)", "target_bound_", _fit_lasso,
                "bounds_draws", skdpopt.lasso, "target bound"),
    _bound_case("DPSGDRegressor (auto clip_norm)", "clip_norm_", _fit_sgd,
                "clip_draws", skdpopt.sgd, "clip norm"),
    _bound_case("DPSGDRegressor (auto target_scale)", "target_scale_",
                _fit_sgd_target, "target_draws", skdpopt.sgd, "target scale"),
    # clip_norm_ is CLIP_FACTOR times the released row norm: a function of
    # the two draws alone.
    _bound_case("DPMinimaxClassifier (auto clip_norm)", "clip_norm_",
                _fit_minimax, "row_norm_draws", skdpopt.minimax, "row norm",
                datasets=_row_pair),
]
