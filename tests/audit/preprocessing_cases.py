"""Audits of the private preprocessing: the bounds draws and the scaler's
noisy moments stay within their claims, and a planted bug in each is caught.

The cases have the shape of ``audit_cases.AuditCase`` so that they can join
``CASES`` (and the audit table) as they are.
"""

import dataclasses

import numpy as np
from audit_cases import DELTA, EPSILON, AuditCase

import skdpopt._bounds
import skdpopt.preprocessing
from skdpopt import DPMinMaxScaler, DPStandardScaler
from skdpopt.accounting import GaussianMechanism, privacy_spent
from skdpopt.plans.preprocessing import plan_scaler

N_ROWS = 100

# The cases are small on purpose (the canary must matter): the scalers warn
# that their bounds are coarse, which is not what is audited.


# -- the private bounds (DPMinMaxScaler) --------------------------------------

def _bounds_pair():
    # Every row at 1, the canary at 1.2 (in) or at 1 (out): the located
    # upper draw's candidates m + c between 1 and 1.2 (m just above 1) have
    # one value fewer below them in D than in D', and the prior's mode is
    # the nearest of them.
    data_out = np.ones((N_ROWS, 1))
    data_in = data_out.copy()
    data_in[0, 0] = 1.2
    return data_in, data_out


def _fit_minmax(data, random_state):
    return DPMinMaxScaler(epsilon=EPSILON, delta=DELTA,
                          random_state=random_state).fit(data)


def _plant_free_draws(name):
    """A plant under which the scalers' bounds function ``name`` draws
    with 16 times the score sensitivity the plan accounts for: the bounds
    are nearly free."""
    def plant(monkeypatch):
        original = getattr(skdpopt._bounds, name)
        monkeypatch.setattr(
            skdpopt.preprocessing, name,
            lambda X, draws, rng: original(X, dataclasses.replace(
                draws, score_sensitivity=16 * draws.score_sensitivity), rng))
    return plant


BOUNDS = AuditCase(
    name="DPMinMaxScaler (private bounds)",
    release="upper bound of a column (data_max_)",
    fit=_fit_minmax,
    datasets=_bounds_pair,
    statistic=lambda est: est.data_max_[0],
    # The statistic is a function of three of the four draws (the median
    # cell, the location in it and the upper bound), each 2D-DP (the
    # location's D is sqrt(LOCATION_WEIGHT) times the others'): the claim
    # is their sum.
    claimed=lambda est: 2 * (2 * est.privacy_plan_.bounds.score_sensitivity
                             + est.privacy_plan_.bounds.location_sensitivity),
    plant=_plant_free_draws("private_bounds"),
    bug="score sensitivity understated 16-fold (bounds nearly free)",
    fast_runs=3_000,
)


# -- the located scale (DPStandardScaler with private bounds) ----------------

def _scale_pair():
    # Every row in the location draw's cell [1, 1 + 2^-12) of the median
    # cell [1, 2), so the location is its midpoint m = 1 + 2^-13 (exact):
    # rows at 1 deviate from m by 2^-13, rows at 1 + 2^-14 by 2^-14.  With
    # r n of the latter (out; r the plan's scale rank, 1/2 here), the
    # scale cells [2^-14, 2^-13) and [2^-13, 2^-12) both hold the rank-r
    # deviation (distance 0: a tie); the canary, one more row at
    # 1 + 2^-14 (in), puts one count more below 2^-13 and the upper cell
    # 1 from the target: s = 2^-13 is favoured.
    rank = plan_scaler(n_samples=N_ROWS, n_features=1, epsilon=EPSILON,
                       delta=DELTA, private_bounds=True).bounds.scale_rank
    k = round(rank * N_ROWS)
    data_out = np.ones((N_ROWS, 1))
    data_out[:k, 0] = 1.0 + 2.0**-14
    data_in = data_out.copy()
    data_in[k, 0] = 1.0 + 2.0**-14
    return data_in, data_out


def _fit_standard(data, random_state):
    return DPStandardScaler(epsilon=EPSILON, delta=DELTA,
                            random_state=random_state).fit(data)


SCALE = AuditCase(
    name="DPStandardScaler (private location and scale)",
    release="upper bound of a column (bounds_[1])",
    fit=_fit_standard,
    datasets=_scale_pair,
    statistic=lambda est: est.bounds_[1][0],
    # The statistic is a function of the three draws (median cell,
    # location, scale), each 2D-DP: the claim is their sum.
    claimed=lambda est: 3 * 2 * est.privacy_plan_.bounds.score_sensitivity,
    plant=_plant_free_draws("private_location_scale"),
    bug="score sensitivity understated 16-fold (location and scale nearly free)",
    fast_runs=3_000,
)


# -- the clipped moments (DPStandardScaler with public bounds) ---------------

def _moments_pair():
    # The canary ten times beyond the public upper bound (in) or the lower
    # one (out): clipped, the sum moves by its full sensitivity (a bound
    # taken from the data would move it ten times as far).
    data_in = np.zeros((N_ROWS, 1))
    data_out = data_in.copy()
    data_in[0, 0], data_out[0, 0] = 10.0, -10.0
    return data_in, data_out


def _fit_scaler(data, random_state):
    return DPStandardScaler(epsilon=EPSILON, delta=DELTA, bounds=(-1.0, 1.0),
                            random_state=random_state).fit(data)


def _plant_quiet_moments(monkeypatch):
    # Noise of the moments a quarter of what the plan accounts for.
    original = skdpopt._bounds.private_moments
    monkeypatch.setattr(
        skdpopt.preprocessing, "private_moments",
        lambda X, low, high, noise, rng, mechanism="gaussian": original(
            X, low, high, tuple(z / 4 if z else z for z in noise), rng, mechanism))


MOMENTS = AuditCase(
    name="DPStandardScaler (clipped moments)",
    release="private mean of a column (mean_)",
    fit=_fit_scaler,
    datasets=_moments_pair,
    statistic=lambda est: est.mean_[0],
    # mean_ is a function of the clipped sum alone: its Gaussian release.
    claimed=lambda est: privacy_spent(
        GaussianMechanism(est.privacy_plan_.noise_multipliers[0]), DELTA).epsilon,
    plant=_plant_quiet_moments,
    bug="Gaussian noise scaled down by 4",
    fast_runs=2_000,
)

CASES = [BOUNDS, SCALE, MOMENTS]

