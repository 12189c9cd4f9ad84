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
import skdpopt.sgd
from skdpopt import DPLasso, DPSGDRegressor

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


def _plant_free_bounds(module):
    """The bound's draws run with 16 times the score sensitivity the plan
    accounts for: the bound estimation is nearly free."""

    def plant(monkeypatch):
        original = module.release_bounds
        monkeypatch.setattr(
            module, "release_bounds",
            lambda statistics, draws, rng: original(
                statistics, dataclasses.replace(
                    draws, score_sensitivity=16 * draws.score_sensitivity), rng))

    return plant


# The released bound is a function of its two draws (median cell, upper
# quantile), each 2D-DP: the claim is their sum.
LASSO_BOUNDS = AuditCase(
    name="DPLasso (auto target_bound)",
    release="the released target bound (target_bound_)",
    fit=_fit_lasso,
    datasets=_pair,
    statistic=lambda est: est.target_bound_,
    claimed=lambda est: 2 * 2 * est.privacy_plan_.bounds_draws.score_sensitivity,
    plant=_plant_free_bounds(skdpopt.lasso),
    bug="bound draws' score sensitivity understated 16-fold (nearly free)",
    fast_runs=2_000,
)

SGD_CLIP = AuditCase(
    name="DPSGDRegressor (auto clip_norm)",
    release="the released clip norm (clip_norm_)",
    fit=_fit_sgd,
    datasets=_pair,
    statistic=lambda est: est.clip_norm_,
    claimed=lambda est: 2 * 2 * est.privacy_plan_.clip_draws.score_sensitivity,
    plant=_plant_free_bounds(skdpopt.sgd),
    bug="clip draws' score sensitivity understated 16-fold (nearly free)",
    fast_runs=2_000,
)

SGD_TARGET = AuditCase(
    name="DPSGDRegressor (auto target_scale)",
    release="the released target scale (target_scale_)",
    fit=_fit_sgd_target,
    datasets=_pair,
    statistic=lambda est: est.target_scale_,
    claimed=lambda est: 2 * 2 * est.privacy_plan_.target_draws.score_sensitivity,
    plant=_plant_free_bounds(skdpopt.sgd),
    bug="target-scale draws' score sensitivity understated 16-fold (nearly free)",
    fast_runs=2_000,
)

CASES = [LASSO_BOUNDS, SGD_CLIP, SGD_TARGET]

