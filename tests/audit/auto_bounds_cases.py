"""Audits of the estimators' "auto" bounds and checks: the released bound
stays within the claim of its draws, the target's location and scale
within the claim of their releases, the clip check's count within its
Gaussian's, and a planted bug that makes each nearly free is caught.

The cases have the shape of ``audit_cases.AuditCase`` so that they can join
``CASES`` (and the audit table) as they are.
"""

import dataclasses

import numpy as np
from audit_cases import DELTA, AuditCase

import skdpopt._regressors
import skdpopt.sgd
import skdpopt.solvers.gda
import skdpopt.solvers.targets
from skdpopt import DPLasso, DPMinimaxClassifier, DPSGDRegressor
from skdpopt.accounting import GaussianMechanism, privacy_spent

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
                   feature_bound="auto", target_bound=1.0,
                   random_state=random_state).fit(X, y)


def _fit_lasso_target(data, random_state):
    X, y = data
    return DPLasso(alpha=1e-3, epsilon=EPSILON, delta=DELTA, max_iter=1,
                   feature_bound=1.0, random_state=random_state).fit(X, y)


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


def _feature_pair():
    # Every feature at 1, the canary's at 1 (in) or just above the median
    # cell [1, 2^(1/4)) (out): max_j |x_ij| differs in one record.  This way
    # round the dataset that spreads the draw upwards (every count below the
    # candidates above 1 ties) is the one the test signals: with the bounds'
    # share at 100 rows (about 20%) the other way round cannot exceed the
    # claim even with the planted bug.
    X_in = np.ones((N_ROWS, 1))
    X_out = X_in.copy()
    X_out[0] = 1.2
    y = np.zeros(N_ROWS)
    return (X_in, y), (X_out, y)


# The target is centred only where its anchoring draws find the median
# cell with a wide margin: from about 1,000 rows at this epsilon.
N_TARGET_ROWS = 1000


def _target_pair():
    # Every target at 1, the canary's at 2 (in) or 0 (out): the first
    # bounds hold the median cell around 1, the canary lands on either end
    # of them, and both clipped sums move by as much as one record can.
    X = np.zeros((N_TARGET_ROWS, 1))
    y_out = np.ones(N_TARGET_ROWS)
    y_out[0] = 0.0
    y_in = y_out.copy()
    y_in[0] = 2.0
    return (X, y_in), (X, y_out)


def _target_claim(est):
    # The location and the scale are functions of the nine releases.
    return privacy_spent(est.privacy_plan_.target_draws.event, DELTA).epsilon


def _plant_quiet_sums(monkeypatch):
    """The target's clipped sums are released without noise."""
    original = skdpopt.solvers.targets._noisy_mean
    monkeypatch.setattr(
        skdpopt.solvers.targets, "_noisy_mean",
        lambda y, low, high, noise_multiplier, draws, rng: original(
            y, low, high, 0.0, draws, rng))


def _plant_free_spreads(monkeypatch):
    """The target's scale draws run with 16 times the score sensitivity the
    plan accounts for."""
    original = skdpopt.solvers.targets._spread
    monkeypatch.setattr(
        skdpopt.solvers.targets, "_spread",
        lambda y, location, draws, rng: original(
            y, location, dataclasses.replace(
                draws, scale_sensitivity=16 * draws.scale_sensitivity), rng))


def _clip_pair():
    # Every row at 0, the canary's far beyond 4 bounds (in) or at 0 (out):
    # the count of far rows differs by one.
    X_out = np.zeros((N_ROWS, 1))
    X_in = X_out.copy()
    X_in[0] = 10.0
    y = np.zeros(N_ROWS)
    return (X_in, y), (X_out, y)


def _fit_lasso_clip(data, random_state):
    X, y = data
    return DPLasso(alpha=1e-3, epsilon=EPSILON, delta=DELTA, max_iter=1,
                   target_bound=1.0, random_state=random_state).fit(X, y)


def _plant_quiet_count(monkeypatch):
    """The clip check's count gets a sixteenth of its planned noise."""
    original = skdpopt._regressors.far_rows_share
    monkeypatch.setattr(
        skdpopt._regressors, "far_rows_share",
        lambda X, bound, check, rng: original(
            X, bound, dataclasses.replace(
                check, noise_multiplier=check.noise_multiplier / 16), rng))


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
    _bound_case("DPLasso (auto feature_bound)", "feature_bound_", _fit_lasso,
                "bounds_draws", skdpopt._regressors, "feature bound",
                datasets=_feature_pair),
    _bound_case("DPSGDRegressor (auto clip_norm)", "clip_norm_", _fit_sgd,
                "clip_draws", skdpopt.sgd, "clip norm"),
    AuditCase(
        name="DPLasso (auto target location)",
        release="the released target location (target_location_)",
        fit=_fit_lasso_target, datasets=_target_pair,
        statistic=lambda est: est.target_location_, claimed=_target_claim,
        plant=_plant_quiet_sums,
        bug="the target's clipped sums released without noise",
        fast_runs=2_000),
    AuditCase(
        name="DPSGDRegressor (auto target_scale)",
        release="the released target scale (target_scale_)",
        fit=_fit_sgd_target, datasets=_pair,
        statistic=lambda est: est.target_scale_, claimed=_target_claim,
        plant=_plant_free_spreads,
        bug="the target scale's draws' score sensitivity understated 16-fold "
            "(nearly free)",
        fast_runs=2_000),
    AuditCase(
        name="DPLasso (clip check of a public feature_bound)",
        release="the released share of rows far beyond the bound "
                "(far_rows_share_)",
        fit=_fit_lasso_clip, datasets=_clip_pair,
        statistic=lambda est: est.far_rows_share_,
        claimed=lambda est: privacy_spent(
            GaussianMechanism(est.privacy_plan_.clip_check.noise_multiplier),
            DELTA).epsilon,
        plant=_plant_quiet_count,
        bug="the clip check's count noised 16-fold too little",
        fast_runs=2_000),
    # clip_norm_ is CLIP_FACTOR times the released row norm: a function of
    # the two draws alone.
    _bound_case("DPMinimaxClassifier (auto clip_norm)", "clip_norm_",
                _fit_minimax, "row_norm_draws", skdpopt.solvers.gda, "row norm",
                datasets=_row_pair),
]
