"""Utility diagnostics: ratios from public quantities, and the warning."""

import warnings

import numpy as np
import pytest

from skdpopt import UtilityWarning
from skdpopt._diagnostics import (
    noisy_mean_ratio,
    noisy_sum_ratio,
    warn_if_noise_dominates,
)
from skdpopt.plans.sgd import plan_dpsgd


def _dpsgd_ratio(n_samples, epsilon, n_params=10):
    plan = plan_dpsgd(n_samples=n_samples, n_problems=1, epsilon=epsilon,
                      delta=min(1e-5, 0.1 / n_samples), sampling="poisson",
                      batch_size="auto", max_iter=5, average=True)
    return noisy_sum_ratio(noise_multiplier=plan.noise_multiplier,
                           n_steps=plan.n_steps,
                           expected_batch=plan.sampling_rate * n_samples,
                           n_params=n_params)


def test_sum_ratio_matches_a_simulated_run():
    # Aligned clipped terms of norm 1 and the planned noise: the summed
    # noise's norm over the summed signal is the ratio (the norm of a
    # 400-dimensional Gaussian vector is within 4% of sqrt(400) with
    # probability above 0.99).
    rng = np.random.default_rng(0)
    s, steps, batch, d = 3.0, 50, 20.0, 400
    noise = rng.normal(0.0, s, size=(steps, d)).sum(axis=0) / batch
    measured = np.linalg.norm(noise) / steps
    assert measured == pytest.approx(
        noisy_sum_ratio(noise_multiplier=s, n_steps=steps, expected_batch=batch,
                        n_params=d), rel=0.04)


def test_ratio_falls_with_rows_and_epsilon():
    assert _dpsgd_ratio(500, 1e-4) > 1.0        # the useless fit of epsilon 1e-4
    assert _dpsgd_ratio(50_000, 1.0) < 0.1
    assert _dpsgd_ratio(5_000, 1.0) < _dpsgd_ratio(500, 1.0)
    assert _dpsgd_ratio(5_000, 1.0) < _dpsgd_ratio(5_000, 0.1)
    assert noisy_sum_ratio(noise_multiplier=0.0, n_steps=1, expected_batch=1,
                           n_params=1) == 0.0


def test_mean_ratio():
    assert noisy_mean_ratio(noise_std=100.0, n_samples=100, half_range=0.5) == 1.0
    assert noisy_mean_ratio(noise_std=0.0, n_samples=1, half_range=1.0) == 0.0


def test_warning_names_the_levers_and_only_public_numbers():
    with pytest.warns(UtilityWarning, match="more epsilon, more rows") as record:
        assert warn_if_noise_dominates("DPSGDRegressor", 12.5)
    assert "12.5 times" in str(record[0].message)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UtilityWarning)
        assert not warn_if_noise_dominates("DPSGDRegressor", 0.5)
