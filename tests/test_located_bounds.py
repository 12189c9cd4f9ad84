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
from skdpopt.plans.preprocessing import plan_scaler


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
    # the scale's rank (between 1/2 and 3/4) of |x - m| is in [1, 4), in
    # the scale cell [1, 2) or [2, 4): s <= 4 and the bounds are within
    # m +- 3.45 s (m +- 2.02 s at rank 3/4), inside [1991, 2021]; they
    # hold every year (s >= 2 gives +-4 or more), so the clipped std is
    # the true one up to the moments' noise (a few percent).  Factor 2
    # either way holds with room; the old grid-cell bounds [1448, 2048]
    # gave 0.01.
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
    # at most 0.6 std for every pair here; D n = 530, so the scale is the
    # upper end of the coarse cell [2^j, 2^(j+1)) holding the rank-3/4
    # deviation |x - m|, 1.15 std: s between 1.15 and 2.3 std (up to 2.9
    # with the location's error); the bounds m +- 2.02 s clip a normal
    # column at 2.3 std or more (clipped std 0.95 of the true one) and are
    # 4.6 to 12 std wide: factor 2 and width < 20 std.
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
    # 60% of the rows at 5, the rest uniform on [5, 105], n = 3000,
    # epsilon = 1: D n = 530, so the scale aims at rank 3/4 of |x - m|
    # (scale_rank), which is 37.5 (0.6 + 0.4 t / 100 = 0.75) with m = 5
    # (within 2^2 / 8192): s is the upper end of [32, 64) (the cells off
    # it by one or more are 0.1 n = 300 counts away, D * 300 = 53 nats),
    # and the upper bound 5 + 2.02 * 64 = 134 holds every row.  A scale at
    # the median of |x - m|, 0, would reduce the column to an indicator.
    rng = np.random.default_rng(4)
    X = np.where(rng.random(3000) < 0.6, 5.0, rng.uniform(5, 105, 3000))[:, None]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UtilityWarning)
        scaler = DPStandardScaler(epsilon=1.0, delta=1e-7, random_state=0).fit(X)
    assert scaler.privacy_plan_.bounds.scale_rank == 0.75
    assert scaler.bounds_[1][0] > 105
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


def test_the_scale_rank_moves_down_where_the_draw_cannot_find_it():
    # The cells above the data are (1 - r) n from the rank-r target and up
    # to 81 of them tie: r = 1 - (log(81) + SCALE_TIE_MARGIN) / (D n),
    # within [1/2, 3/4]; the spread factors read the quantiles at that rank.
    from skdpopt.plans.bounds import COARSE_GRID
    from skdpopt.plans.preprocessing import (
        SCALE_TIE_MARGIN,
        plan_scaler,
        scale_rank,
        spread_factors,
    )

    assert SCALE_TIE_MARGIN == 8.0
    needed = np.log(np.sum(COARSE_GRID > 0)) + SCALE_TIE_MARGIN
    assert np.sum(COARSE_GRID > 0) == 81
    assert scale_rank(1000, needed / 1000 / 0.3) == pytest.approx(0.7)
    assert scale_rank(1000, needed / 1000) == 0.5
    assert scale_rank(10**6, 1.0) == 0.75 == scale_rank(10, np.inf)
    assert spread_factors((0.01, 0.99), 0.5) == pytest.approx((3.449, 3.449), abs=1e-3)
    assert spread_factors((0.01, 0.99), 0.75) == pytest.approx((2.022, 2.022), abs=1e-3)
    assert spread_factors((0.0, 1.0), 0.5) == spread_factors((1e-4, 1 - 1e-4), 0.5)
    small = plan_scaler(n_samples=200, n_features=4, epsilon=0.3, delta=1e-6,
                        private_bounds=True).bounds
    large = plan_scaler(n_samples=10**6, n_features=4, epsilon=0.3, delta=1e-6,
                        private_bounds=True).bounds
    assert (small.scale_rank, large.scale_rank) == (0.5, 0.75)
    assert small.spread == spread_factors((0.01, 0.99), 0.5)


def _lost_columns(X, seeds, epsilon, delta):
    """Per seed, the columns whose released scale is over 100 times the
    standard deviation of the column clipped to its released bounds (a
    scale drawn above the data: the column is flattened)."""
    lost = []
    for seed in seeds:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UtilityWarning)
            scaler = DPStandardScaler(epsilon=epsilon, delta=delta,
                                      random_state=seed).fit(X)
        clipped = np.clip(X, *scaler.bounds_).std(axis=0)
        lost.append(np.flatnonzero(scaler.scale_ > 100 * clipped))
    return lost


def test_the_scale_draw_keeps_the_columns_at_a_pipelines_share():
    # tests/test_pipeline.py's data and the scaler's share of
    # make_private_pipeline(..., epsilon=1, delta=1e-6): epsilon 0.2 at
    # delta 2e-7 over 3 columns, D n = 31.7.  With the grid's tie margin
    # (3) the scale aimed at rank 3/4, where the up to 81 cells above the
    # data were 0.25 n D = 7.9 nats from the target: seeds 12, 14 and 32
    # drew a scale of 1e5 to 3e16 for one column (31 fits of 400 lost a
    # column, 2.6% of columns), which the scaler flattened and warned
    # about.  SCALE_TIE_MARGIN = 8 moves the rank to 0.61 (12.4 nats).
    X = np.random.default_rng(0).normal(100, 20, size=(3000, 3))
    plan = plan_scaler(n_samples=3000, n_features=3, epsilon=0.2, delta=2e-7,
                       private_bounds=True).bounds
    assert plan.scale_rank == pytest.approx(0.609, abs=1e-3)
    for seed in (12, 14, 32):
        # (The width warning may still fire at this share: the noise of the
        # second moment is about the variance of a correctly bounded
        # column here.)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UtilityWarning)
            scaler = DPStandardScaler(epsilon=0.2, delta=2e-7,
                                      random_state=seed).fit(X)
        assert np.all((0.5 < scaler.scale_ / X.std(axis=0))
                      & (scaler.scale_ / X.std(axis=0) < 2.0))
    # Over 200 seeds: about 15 fits lost a column before, about 0.13
    # expected now (3 columns, at most exp(-8) each).
    lost = _lost_columns(X, range(200), 0.2, 2e-7)
    assert sum(len(cols) > 0 for cols in lost) <= 1


@pytest.mark.parametrize("delta", [1e-7, 0.0])
@pytest.mark.parametrize("moments", [(True, True), (False, False)])
def test_reliable_epsilon_is_where_the_bounds_find_the_data(delta, moments):
    # At reliable_epsilon the planned draws meet D n / 2 >= log(cells) + 3
    # (the plan's `lost` flag is off): the zCDP conversion it inverts is
    # loose, so the calibrated plan is at least that sharp; with delta = 0
    # the draws' epsilons add exactly, so it is just met.  A tenth of it
    # leaves them lost.
    from skdpopt.plans.preprocessing import plan_scaler, reliable_epsilon

    n, d = 3000, 4
    epsilon = reliable_epsilon(n_samples=n, n_features=d, delta=delta,
                               moments=moments)

    def plan(eps):
        return plan_scaler(n_samples=n, n_features=d, epsilon=eps, delta=delta,
                           private_bounds=True, moments=moments).bounds

    assert not plan(epsilon * (1 + 1e-9)).lost
    assert plan(epsilon / 10).lost
    if delta == 0 and any(moments):
        needed = 2 * (np.log(162) + 3) / n
        assert plan(epsilon).score_sensitivity == pytest.approx(needed)
    scaler = (DPStandardScaler if any(moments) else DPMinMaxScaler)(delta=delta)
    assert scaler.reliable_epsilon(n, d, delta) == epsilon
    assert scaler.set_params(bounds=(0, 1)).reliable_epsilon(n, d, delta) == 0.0
