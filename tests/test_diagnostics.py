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


def test_warnings_point_at_the_users_line_once_per_search():
    """A UtilityWarning raised in the clones of a GridSearchCV points at
    the line that called the search (not at scikit-learn's), so Python's
    default filter shows it once for the whole search, not once per clone;
    a direct fit points at its own line."""
    from sklearn.model_selection import GridSearchCV

    from skdpopt import DPSGDRegressor

    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    y = X[:, 0]
    tiny = DPSGDRegressor(epsilon=1e-4, random_state=0)
    search = GridSearchCV(tiny, {"eta0": [0.1, 0.5]}, cv=3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        search.fit(X, y); line = __import__("inspect").currentframe().f_lineno  # noqa: E702
    utility = [str(w.message) for w in caught if w.category is UtilityWarning]
    # The six fold fits (200 rows each) warn alike, the refit (300 rows)
    # with its own numbers: each message is shown once.
    assert utility and len(utility) == len(set(utility))
    assert {(w.filename, w.lineno) for w in caught
            if w.category is UtilityWarning} == {(__file__, line)}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tiny.fit(X, y); line = __import__("inspect").currentframe().f_lineno  # noqa: E702
    assert {(w.filename, w.lineno) for w in caught
            if w.category is UtilityWarning} == {(__file__, line)}
