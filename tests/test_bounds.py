"""Private bounds: counts, draws, sensitivity, overflow, and the spend."""

import logging
import warnings

import numpy as np
import pytest

from skdpopt import _bounds
from skdpopt._data import counts_below
from skdpopt.accounting import ExponentialMechanism, privacy_spent
from skdpopt.plans import bounds as plans
from skdpopt.plans.preprocessing import plan_scaler

GRID = plans.DEFAULT_GRID


def draws(score_sensitivity, n_samples, n_columns, quantiles=(0.01, 0.99)):
    """The draws of private bounds at the given ranks, used as given."""
    return plans.QuantileDraws(n_samples, n_columns, tuple(quantiles),
                               score_sensitivity, tuple(quantiles))

logging.getLogger("absl").setLevel(logging.ERROR)


def test_grid_is_public_sorted_and_symmetric():
    grid = plans.bound_grid()
    assert np.all(np.diff(grid) > 0)
    np.testing.assert_array_equal(grid, -grid[::-1])
    assert grid[-1] == 2.0**60 and 0.0 in grid


def test_counts_below_match_a_direct_count():
    rng = np.random.default_rng(0)
    X = np.column_stack([rng.normal(0, 5, 300), rng.lognormal(3, 2, 300),
                         np.full(300, 7.0)])
    grid = plans.bound_grid((-3, 10), 2)
    expected = (X.T[:, :, None] < grid[None, None, :]).sum(axis=1)
    np.testing.assert_array_equal(counts_below(X, grid), expected)
    np.testing.assert_array_equal(counts_below(X[:, 0], grid), expected[0])


@pytest.mark.parametrize("grid", [GRID, plans.bound_grid((-3, 10), 2),
                                  np.linspace(1990.0, 2010.0, 4097)])
def test_counts_below_on_long_columns_match_a_direct_count(grid):
    # Long columns read positions off the values' float64 bits where the
    # grid allows (one candidate per bucket): the same counts, ties at the
    # candidates, their float neighbours, signed zeros, infinities, NaN and
    # extreme magnitudes included.
    rng = np.random.default_rng(3)
    edges = np.concatenate([grid, np.nextafter(grid, np.inf),
                            np.nextafter(grid, -np.inf)])
    special = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e308, -1e308, 5e-324,
               -5e-324, 1e-300, 2000.0]
    column = np.concatenate([edges, -edges, special,
                             rng.normal(0, 5, 3000),
                             rng.lognormal(0, 20, 3000) * rng.choice([-1, 1], 3000),
                             rng.uniform(1990, 2010, 3000)])
    rng.shuffle(column)
    X = np.column_stack([column, column[::-1]])
    assert X.size >= 2 * 4096
    # NaN counts as infinite: below no candidate.
    expected = (np.nan_to_num(X, nan=np.inf).T[:, :, None]
                < grid[None, None, :]).sum(axis=1)
    np.testing.assert_array_equal(counts_below(X, grid), expected)
    np.testing.assert_array_equal(counts_below(X[:, 0], grid), expected[0])


def test_replacing_one_record_moves_every_score_by_at_most_one():
    # The sensitivity argument: counts below a candidate, and the median
    # cell's distance, move by at most 1 when one record is replaced.
    rng = np.random.default_rng(1)
    X = rng.normal(10, 3, size=(200, 2))
    for value in (1e300, -1e300, 0.0, 10.0, np.inf):
        Y = X.copy()
        Y[0] = value
        a, b = counts_below(X, GRID), counts_below(Y, GRID)
        assert np.max(np.abs(a - b)) <= 1
        da = _bounds._median_cell_distance(a, 200)
        db = _bounds._median_cell_distance(b, 200)
        assert np.max(np.abs(da - db)) <= 1


@pytest.mark.parametrize("extreme, dtype", [(1e300, np.float64), (1e200, np.float64),
                                            (3e19, np.float32)])
def test_extreme_values_give_finite_bounds_and_moments(extreme, dtype):
    rng = np.random.default_rng(2)
    X = rng.normal(0, 1, size=(500, 3)).astype(dtype)
    X[0] = extreme
    low, high = _bounds.private_bounds(X, draws(0.5, 500, 3),
                                       np.random.default_rng(0))
    assert np.all(np.isfinite(low)) and np.all(np.isfinite(high))
    assert np.all(low < high) and np.all(high <= 2.0**60)
    mean, second, _ = _bounds.private_moments(X, low, high, (1.0, 1.0),
                                              np.random.default_rng(0))
    assert np.all(np.isfinite(mean)) and np.all(np.isfinite(second))


def test_clip_to_unit_survives_the_widest_bounds():
    u = _bounds.clip_to_unit(np.array([[1e308], [-1e308], [0.0]]),
                             np.array([-1.5e308]), np.array([1.5e308]))
    assert np.all(np.isfinite(u)) and np.all(np.abs(u) <= 1)


def _outside(X, low, high):
    """Fraction of each column below low and above high."""
    return (X < low).mean(axis=0), (X > high).mean(axis=0)


def test_without_privacy_the_bounds_are_the_nearest_candidates():
    rng = np.random.default_rng(3)
    X = np.column_stack([rng.normal(50, 10, 5000), rng.uniform(1990, 2020, 5000),
                         rng.normal(0, 1e-3, 5000), -rng.lognormal(5, 1, 5000)])
    low, high = _bounds.private_bounds(X, draws(np.inf, 5000, 4), None)
    below, above = _outside(X, low, high)
    # The candidate nearest the 1% (99%) rank: off by at most the mass of
    # the grid cell around it.
    assert np.all(below <= 0.03) and np.all(above <= 0.03)
    q = np.quantile(X, [0.01, 0.99], axis=0)
    assert np.all(high - low <= (q[1] - q[0]) * 2 + 2**-19 + 0.2 * np.abs(q).max(0))
    # Years all lie in the cell [2^(43/4), 2^11): exactly that cell.
    assert (low[1], high[1]) == (2 ** (43 / 4), 2048.0)


@pytest.mark.parametrize("score_sensitivity", [np.inf, 1.0])
def test_bounds_of_a_constant_column_are_an_interval_around_it(score_sensitivity):
    """A constant column: the two ranks fall on the same candidates, and the
    pair is widened to an interval that holds the value."""
    low, high = _bounds.private_bounds(np.full((100, 1), 3.0),
                                       draws(score_sensitivity, 100, 1),
                                       np.random.default_rng(0))
    assert low[0] < high[0] and low[0] <= 3.0 <= high[0]


def test_private_bounds_are_accurate_with_enough_rows():
    # n * score_sensitivity = 1000: with the tie margin the draws land
    # within a few ranks (a percent) of their targets in every seed.
    rng = np.random.default_rng(4)
    X = np.column_stack([rng.normal(50, 10, 10000), rng.lognormal(8, 1, 10000)])
    q = np.quantile(X, [0.01, 0.99], axis=0)
    for seed in range(5):
        low, high = _bounds.private_bounds(X, draws(0.1, 10000, 2),
                                           np.random.default_rng(seed))
        below, above = _outside(X, low, high)
        assert np.all(below <= 0.03) and np.all(above <= 0.03)
        assert np.all(low >= q[0] / 2) and np.all(high <= q[1] * 2)


def test_effective_quantiles_move_inwards_only_when_needed():
    assert plans.effective_quantiles((0.01, 0.99), 10**6, 1.0) == (0.01, 0.99)
    low, high = plans.effective_quantiles((0.01, 0.99), 1000, 0.05)
    margin = np.log(plans.tied_weight()) + plans.TIE_MARGIN
    assert low == pytest.approx(margin / 50) and high == pytest.approx(1 - low)
    assert plans.effective_quantiles((0.01, 0.99), 10, 0.01) == (0.25, 0.75)


def test_one_upper_rank_is_a_positive_bound_of_a_statistic():
    """The "auto" bounds: one upper rank of a non-negative statistic, never
    below the grid's smallest positive candidate, NaN counted as infinite."""
    stats = [np.zeros(400), np.r_[np.full(399, 3.0), np.nan]]
    auto = plans.auto_draws(1.0, n_samples=400, n_bounds=2, epsilon=1.0)
    assert auto.draws_per_column == 2 and auto.event.count == 4
    (zero, three), = _bounds.private_bounds(stats, auto, np.random.default_rng(0))
    # All values 0: the median cell is [0, 2^-20), and the prior keeps the
    # upper draw within a few candidates above it.
    assert plans.SMALLEST_POSITIVE <= zero <= 2.0**-18
    assert 3.0 <= three <= 8.0  # the prior: a few candidates above the data
    exact = plans.auto_draws(0.0, n_samples=400, n_bounds=2, epsilon=np.inf)
    (zero, three), = _bounds.private_bounds(stats, exact, None)
    assert zero == plans.SMALLEST_POSITIVE and three == 2 ** (7 / 4)


def test_bounds_draw_is_an_exponential_mechanism():
    # The empirical distribution of one draw matches the weights
    # exp(-D |count - q n| + prior) it claims.
    X = np.repeat([1.0, 3.0], [30, 70])[:, None]
    grid = np.array([0.0, 2.0, 4.0, 8.0])
    D = 0.05
    rng = np.random.default_rng(5)
    below = counts_below(X, grid)
    distance = np.abs(below - 90)
    picks = np.concatenate([_bounds._draw(distance, D, np.zeros((1, 4)), rng)
                            for _ in range(4000)])
    weights = np.exp(-D * np.abs(np.array([0, 30, 100, 100]) - 90))
    expected = weights / weights.sum()
    observed = np.array([(picks == k).mean() for k in range(4)])
    # Binomial standard error of each frequency is below 0.008 at 4000 draws.
    np.testing.assert_allclose(observed, expected, atol=0.035)


def test_draws_for_an_epsilon_spend_at_most_it():
    for epsilon in (0.1, 1.0, 5.0):
        for delta in (0.0, 1e-6):
            planned = plans.quantile_draws_for_epsilon(
                epsilon, delta, n_samples=1000, n_columns=4)
            spent = privacy_spent(planned.event, delta).epsilon
            assert 0.95 * epsilon <= spent <= epsilon
            assert planned.event.count == 12


def test_scaler_plan_spends_at_most_the_request():
    for private_bounds in (True, False):
        for delta in (0.0, 1e-6):
            plan = plan_scaler(n_samples=2000, n_features=5, epsilon=0.7,
                               delta=delta, private_bounds=private_bounds)
            assert 0.95 * 0.7 <= plan.spent().epsilon <= 0.7


def test_quantile_spend_recomputed_with_dp_accounting():
    # 3 draws per column, each an exponential mechanism with score
    # sensitivity D: eps0 = 2D pure DP and bounded range.  dp-accounting's
    # PLD of a pure eps0-DP mechanism (randomized response pair) composed
    # 3 d times must not be far below our figure, which is also an upper
    # bound of that composition.
    pytest.importorskip("dp_accounting")
    from dp_accounting.pld import privacy_loss_distribution as dpa_pld

    planned = plans.quantile_draws_for_epsilon(1.0, 1e-6, n_samples=1000,
                                               n_columns=4)
    D = planned.score_sensitivity
    assert planned.event.event == ExponentialMechanism(D)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pld = dpa_pld.from_randomized_response(
            noise_parameter=2 / (1 + np.exp(2 * D)), num_buckets=2,
            value_discretization_interval=1e-4)
        reference = pld.self_compose(12).get_epsilon_for_delta(1e-6)
    ours = privacy_spent(planned.event, 1e-6).epsilon
    assert ours <= 1.0
    # Ours may be tighter (bounded range), never looser than dp-accounting's
    # randomized-response composition.
    assert ours <= reference * 1.02
    assert 12 * 2 * D >= ours  # and basic composition bounds both
