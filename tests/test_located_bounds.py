"""Located private bounds of the scalers: offset columns, spend, warning."""

import warnings

import numpy as np
import pytest

from skdpopt import DPMinMaxScaler, DPStandardScaler
from skdpopt.accounting import (
    ExponentialMechanism,
    GaussianMechanism,
    leaves,
    privacy_spent,
)
from skdpopt.exceptions import UtilityWarning


def _years(n, seed):
    return np.random.default_rng(seed).integers(2003, 2010, n).astype(float)


def test_a_year_column_keeps_its_scale_at_a_pipeline_share():
    # n = 3000, epsilon = 1 split as make_private_pipeline splits it (20%
    # to the scaler), two columns (years, ages).  Each of the three draws
    # per column has D n / 2 = 15 here, against log(160) = 5.1 for the
    # coarse grid's cells: the median cell is [1024, 2048); the location
    # is the midpoint of one of its 4096 cells of width 1/4, and the cells
    # more than a year from 2006 are n / 14 = 214 counts from holding the
    # median (D * 214 = 2.2 nats each, against the 4 cells per year that
    # hold it), so m is in [2005, 2007] but with small probability; then
    # the median of |x - m| is in [1, 3], in the scale cell [1, 2) or
    # [2, 4): s <= 4 and the bounds are within m +- 3.45 s, inside
    # [1991, 2021]; they hold every year (s >= 2 gives +-6.9), so the
    # clipped std is the true one up to the moments' noise (a few
    # percent).  Factor 2 either way holds with room; the old grid-cell
    # bounds [1448, 2048] gave 0.01.
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
        assert 1985 < low[0] < high[0] < 2025
    assert 0.5 < min(ratios) and max(ratios) < 2.0


@pytest.mark.parametrize("offset, scale", [(1e3, 1e-1), (1e3, 1.0), (1e3, 1e4),
                                           (1e6, 1e2), (1e6, 1e4)])
def test_offset_families_keep_their_scale(offset, scale):
    # One normal column, n = 3000, epsilon = 1: the location is the
    # midpoint of one of 4096 cells of the median's coarse cell [2^k,
    # 2^(k+1)), within 2^k / 8192 of the median (0.06 at 1e3, 64 at 1e6),
    # at most 0.6 std for every pair here; the scale is the upper end of
    # the coarse cell [2^j, 2^(j+1)) holding the median of |x - m|, between
    # 0.67 and 1.3 std (up to 1.6 with the location's error): the bounds
    # m +- 3.45 s clip a normal column at 2.3 std or more (clipped std
    # 0.95 of the true one) and are 4.6 to 12 std wide: factor 2 and
    # width < 20 std.
    X = np.random.default_rng(0).normal(offset, scale, (3000, 1))
    scaler = DPStandardScaler(epsilon=1.0, delta=1e-7, random_state=0).fit(X)
    assert 0.5 < scaler.scale_[0] / X.std() < 2.0
    assert 0.5 < (scaler.bounds_[1] - scaler.bounds_[0])[0] / X.std() < 20


def test_a_column_beyond_one_refinement_warns():
    # std 0.01 about 1e6 + 20: the location is a midpoint of cells 128
    # wide (1e6 is one), 20 from the data, so the bounds are thousands of
    # stds wide; the scaler says so.
    X = np.random.default_rng(0).normal(1e6 + 20, 1e-2, (3000, 1))
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
    # Per column: the median cell, the location cell and the scale cell,
    # each an exponential mechanism with score sensitivity D (2D-DP); then
    # two Gaussian moments.  dp-accounting's composition of the same
    # releases bounds ours from above.
    pytest.importorskip("dp_accounting")
    from dp_accounting.pld import privacy_loss_distribution as dpa_pld

    d = 3
    X = np.random.default_rng(1).normal(1e4, 3.0, (2000, d))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UtilityWarning)
        scaler = DPStandardScaler(epsilon=1.0, delta=1e-6, random_state=0).fit(X)
    plan = scaler.privacy_plan_
    D = plan.bounds.score_sensitivity
    counted = {}
    for leaf, count in leaves(plan.event):
        counted[leaf] = counted.get(leaf, 0) + count
    n_draws = d * 3
    expected = {ExponentialMechanism(D): n_draws}
    for z in plan.noise_multipliers:
        expected[GaussianMechanism(z)] = expected.get(GaussianMechanism(z), 0) + 1
    assert counted == expected
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
