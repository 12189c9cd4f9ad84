"""Located private bounds of the scalers: offset columns, spend, warning."""

import warnings

import numpy as np
import pytest

from skdpopt import DPMinMaxScaler, DPStandardScaler
from skdpopt.accounting import ExponentialMechanism, leaves, privacy_spent
from skdpopt.exceptions import UtilityWarning
from skdpopt.plans.bounds import LOCATION_WEIGHT, draws_per_column


def _years(n, seed):
    return np.random.default_rng(seed).integers(2003, 2010, n).astype(float)


def test_a_year_column_keeps_its_scale_at_a_pipeline_share():
    # n = 3000, epsilon = 1 split as make_private_pipeline splits it (20%
    # to the scaler), two columns (years, ages).  Margin: the draws aim at
    # the effective ranks (about 0.11 and 0.89 at this budget), which clip
    # at most the outer two of the seven years: the clipped std is at least
    # 0.6 of the true one; the located grid's candidates near the data are
    # 19% of their offset (a few years) apart, so a bound lands at most one
    # year outside the data, which the clip to the data leaves unchanged;
    # the moments' noise on the scale is a few percent.  Factor 2 either
    # way holds with room; the old grid-cell bounds [1448, 2048] gave 0.01.
    ratios = []
    for seed in range(5):
        X = np.column_stack([_years(3000, seed),
                             np.random.default_rng(seed + 10).integers(18, 81, 3000)])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UtilityWarning)
            scaler = DPStandardScaler(epsilon=0.2, delta=1e-7,
                                      random_state=seed).fit(X)
        ratios.append(scaler.scale_[0] / X[:, 0].std())
        low, high = scaler.bounds_
        assert 1990 < low[0] < high[0] < 2020
    assert 0.5 < min(ratios) and max(ratios) < 2.0


@pytest.mark.parametrize("offset, scale", [(1e3, 1e-2), (1e3, 1.0), (1e3, 1e4),
                                           (1e6, 1.0), (1e6, 1e4)])
def test_offset_families_keep_their_scale(offset, scale):
    # One normal column, n = 3000, epsilon = 1: the location is known to
    # 0.19 / 8192 of its magnitude (0.023 at 1e3, 23 at 1e6), within a std
    # for every pair here; the ranks (about 0.05 and 0.95 here) clip a
    # normal column to +-1.6 std (clipped std 0.8 of the true one) and the
    # grid places them within 19% of their offset: factor 2 either way.
    X = np.random.default_rng(0).normal(offset, scale, (3000, 1))
    scaler = DPStandardScaler(epsilon=1.0, delta=1e-7, random_state=0).fit(X)
    assert 0.5 < scaler.scale_[0] / X.std() < 2.0
    assert 0.5 < (scaler.bounds_[1] - scaler.bounds_[0])[0] / X.std() < 20


def test_a_column_beyond_one_refinement_warns():
    # std 0.01 around 1e6: the location is known to 23 only, so the bounds
    # are hundreds of stds wide; the scaler says so.
    X = np.random.default_rng(0).normal(1e6, 1e-2, (3000, 1))
    with pytest.warns(UtilityWarning, match="bounds of column"):
        DPStandardScaler(epsilon=1.0, delta=1e-7, random_state=0).fit(X)


def test_a_point_mass_keeps_the_bounds_about_the_data():
    # 60% of the rows at 5, the rest uniform on [5, 105]: the location is 5
    # and the upper rank (about 0.95) is at 5 + 0.875 * 100 = 92.5; a
    # candidate near 5 is 0.35 n from that rank in count, the prior's cost
    # of reaching 92.5 is log2(88.5) = 6.5: with the spread draw it
    # replaces, the bounds collapsed onto 5 here.
    rng = np.random.default_rng(4)
    X = np.where(rng.random(3000) < 0.6, 5.0, rng.uniform(5, 105, 3000))[:, None]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UtilityWarning)
        scaler = DPStandardScaler(epsilon=1.0, delta=1e-7, random_state=0).fit(X)
    assert scaler.bounds_[1][0] > 50
    assert 0.5 < scaler.scale_[0] / X.std() < 2.0


def test_minmax_bounds_of_a_year_column_are_about_its_range():
    X = _years(3000, 0)[:, None]
    scaler = DPMinMaxScaler(epsilon=1.0, delta=1e-7, random_state=0).fit(X)
    # Candidates just beyond the data are tied; the prior weighs each
    # 2^(-1/4) of the one before (offsets from 2006 of 3, 3.6, 4.2, ...):
    # a bound lands a few years outside, within 8 of the data, not 600.
    assert 1995 <= scaler.data_min_[0] < scaler.data_max_[0] <= 2017


def test_located_spend_recomputed_with_dp_accounting():
    # Per column: the median cell, the location cell and two ranks, each an
    # exponential mechanism with score sensitivity D (2D-DP; the location
    # draw's D is sqrt(LOCATION_WEIGHT) times the others', LOCATION_WEIGHT
    # = 1); then two Gaussian moments.  dp-accounting's composition of the
    # same releases bounds ours from above.
    pytest.importorskip("dp_accounting")
    from dp_accounting.pld import privacy_loss_distribution as dpa_pld

    d = 3
    X = np.random.default_rng(1).normal(1e4, 3.0, (2000, d))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UtilityWarning)
        scaler = DPStandardScaler(epsilon=1.0, delta=1e-6, random_state=0).fit(X)
    plan = scaler.privacy_plan_
    D = plan.bounds.score_sensitivity
    assert LOCATION_WEIGHT == 1.0
    assert draws_per_column(2, plan.bounds.location_cells) == 4
    counted = {}
    for leaf, count in leaves(plan.event):
        counted[leaf] = counted.get(leaf, 0) + count
    n_draws = d * 4
    assert counted[ExponentialMechanism(D)] == n_draws
    z1, z2 = plan.noise_multipliers
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pld = dpa_pld.from_randomized_response(
            noise_parameter=2 / (1 + np.exp(2 * D)), num_buckets=2,
            value_discretization_interval=1e-4).self_compose(n_draws)
        for z in (z1, z2):
            pld = pld.compose(dpa_pld.from_gaussian_mechanism(
                standard_deviation=z, sensitivity=1.0,
                value_discretization_interval=1e-4))
        reference = pld.get_epsilon_for_delta(1e-6)
    ours = privacy_spent(plan.event, 1e-6).epsilon
    assert scaler.privacy_spent_.epsilon == pytest.approx(ours)
    assert ours <= 1.0
    assert ours <= reference * 1.02


def test_one_extreme_record_leaves_the_located_bounds_finite():
    X = np.random.default_rng(2).normal(2006, 2, (2000, 2))
    X[0] = [1e300, -1e300]
    scaler = DPStandardScaler(epsilon=1.0, random_state=0).fit(X)
    assert np.all(np.isfinite(scaler.bounds_)) and np.all(np.abs(scaler.bounds_) < 2e4)
    assert np.all(np.isfinite(scaler.transform(X)))


def test_wide_bounds_warn_from_released_values_only():
    X = np.random.default_rng(3).normal(2006, 2, (3000, 2))
    with pytest.warns(UtilityWarning, match=r"column\(s\) 0, 1 .*bounds=") as record:
        DPStandardScaler(bounds=(0, 4000), random_state=0).fit(X)
    message = str(record[0].message)
    assert "2006" not in message and "3000" not in message
    with warnings.catch_warnings():
        warnings.simplefilter("error", UtilityWarning)
        DPStandardScaler(epsilon=1.0, delta=1e-7, random_state=0).fit(X)
