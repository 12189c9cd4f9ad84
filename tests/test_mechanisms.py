"""Noise samplers and private selection: distributions, not just shapes."""

import numpy as np
import pytest
from scipy import stats

from skdpopt import mechanisms


def test_gaussian_noise_moments():
    rng = np.random.default_rng(0)
    draws = mechanisms.gaussian_noise(rng, 2.0, 200_000)
    # The sample std of 2e5 normals has relative sd 1/sqrt(2 n) = 0.0016;
    # 5 sd is 0.008.
    assert abs(draws.std() / 2.0 - 1) < 0.008
    assert stats.kstest(draws / 2.0, "norm").pvalue > 1e-3


def test_zero_scale_gives_zeros():
    rng = np.random.default_rng(0)
    assert not mechanisms.gaussian_noise(rng, 0.0, 5).any()
    assert not mechanisms.laplace_noise(rng, 0.0, 5).any()


def test_laplace_noise_distribution():
    rng = np.random.default_rng(1)
    draws = mechanisms.laplace_noise(rng, 0.5, 100_000)
    assert stats.kstest(draws, "laplace", args=(0, 0.5)).pvalue > 1e-3


def test_exponential_mechanism_frequencies():
    rng = np.random.default_rng(2)
    log_weights = np.log([1.0, 2.0, 3.0, 4.0])
    draws = mechanisms.exponential_mechanism(rng, log_weights, size=40_000)
    counts = np.bincount(draws, minlength=4)
    expected = 40_000 * np.exp(log_weights) / np.exp(log_weights).sum()
    # Chi-square goodness of fit, 3 degrees of freedom.
    assert stats.chisquare(counts, expected).pvalue > 1e-3


def test_exponential_mechanism_never_draws_minus_infinity():
    rng = np.random.default_rng(3)
    draws = mechanisms.exponential_mechanism(rng, [0.0, -np.inf, 0.0], size=1000)
    assert not np.any(draws == 1)
    assert isinstance(mechanisms.exponential_mechanism(rng, [0.0, 1.0]), int)


def test_report_noisy_max_exact_without_noise():
    rng = np.random.default_rng(4)
    assert mechanisms.report_noisy_max(rng, [0.1, 3.0, 2.0], 0.0) == 1


def test_report_noisy_max_prefers_large_scores():
    rng = np.random.default_rng(5)
    wins = sum(mechanisms.report_noisy_max(rng, [0.0, 1.0], 1.0) for _ in range(4000))
    # P(argmax = 1) for Laplace(1) noise and a gap of 1 is 1 - e^-1 (1 + 1/2) / 2
    # = 0.724; its binomial sd over 4000 draws is 0.007, and 5 sd is 0.035.
    assert abs(wins / 4000 - (1 - 0.75 * np.exp(-1))) < 0.035


@pytest.mark.parametrize("rate", [0.01, 0.3])
def test_poisson_batches_are_independent_poisson_samples(rate):
    rng = np.random.default_rng(6)
    n, draws = 500, 2000
    rows, offsets = mechanisms.poisson_batches(rng, n, rate, draws)
    assert offsets[0] == 0 and offsets[-1] == len(rows) and len(offsets) == draws + 1
    assert rows.min() >= 0 and rows.max() < n
    hits = np.zeros(n)
    for b in range(draws):
        batch = rows[offsets[b]:offsets[b + 1]]
        assert np.all(np.diff(batch) > 0)  # distinct and sorted
        hits[batch] += 1
    # Each row's count is Binomial(draws, rate); the mean over rows has sd
    # sqrt(rate (1 - rate) / (draws n)); allow 5 sd.
    sd = np.sqrt(rate * (1 - rate) / (draws * n))
    assert abs(hits.mean() / draws - rate) < 5 * sd
    # Every row at the same rate: the spread of the counts over rows is that
    # of Binomial(draws, rate) (the sample variance of 500 counts has a
    # relative sd of about sqrt(2 / 500) = 0.063; 20% is 3 sd).
    assert np.var(hits) == pytest.approx(draws * rate * (1 - rate), rel=0.2)
    # Batch sizes are Binomial(n, rate) (a fixed batch size would fail the
    # variance check) and independent from batch to batch: the lag-one
    # correlation of 2000 independent sizes has sd 1/sqrt(2000) = 0.022.
    sizes = np.diff(offsets)
    assert np.var(sizes) == pytest.approx(n * rate * (1 - rate), rel=0.2)
    assert abs(np.corrcoef(sizes[:-1], sizes[1:])[0, 1]) < 5 / np.sqrt(draws)


def test_poisson_batches_at_rate_one_take_every_row():
    rng = np.random.default_rng(7)
    rows, offsets = mechanisms.poisson_batches(rng, 5, 1.0, 3)
    np.testing.assert_array_equal(rows, np.tile(np.arange(5), 3))
    np.testing.assert_array_equal(offsets, [0, 5, 10, 15])
