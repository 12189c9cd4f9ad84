"""A regression target's private location and scale (the releases planned by
:func:`skdpopt.plans.targets.target_draws`).

The regressors fit ``(y - location) / scale`` (DPSGDRegressor) or clip
``y - location`` to ``+-scale`` (DPLasso), and shift their intercept back
by ``location`` afterwards, which is post-processing.  The derivation is in
``docs/privacy/targets.md``.
"""

import numpy as np

from . import _bounds
from ._auto_bounds import release_bounds
from ._data import clipped_total, counts_below
from .mechanisms import gaussian_noise, laplace_noise
from .plans.preprocessing import QuantileDraws


def _first_bounds(y, draws, rng):
    """Step 1: ``[low, high]`` at the plan's ranks of y, from the counts of
    values below each candidate (three draws)."""
    grid = _bounds.DEFAULT_GRID
    n_samples = y.shape[0]
    below = counts_below(y)[None, :]
    sensitivity = draws.score_sensitivity
    cell = _bounds.median_cell_from_counts(below, n_samples, sensitivity, rng)[0]
    picks = [
        _bounds.quantiles_from_counts(below, n_samples, (q,), sensitivity, rng,
                                      anchor=anchor)[0, 0]
        for q, anchor in zip(draws.location_ranks, (grid[cell], grid[cell + 1]),
                             strict=True)]
    low, high = min(picks), max(picks)
    if low == high:  # post-processing: a pair on one candidate is widened
        k = int(np.searchsorted(grid, low))
        low, high = grid[max(k - 1, 0)], grid[min(k + 1, len(grid) - 1)]
    return float(low), float(high)


def _noisy_mean(y, low, high, draws, rng):
    """Steps 2 and 4: the mean of y clipped to ``[low, high]``, from the sum
    with noise (one record moves the sum by at most ``high - low``), kept
    inside the bounds."""
    draw = gaussian_noise if draws.mechanism == "gaussian" else laplace_noise
    noisy = clipped_total(y, low, high) + float(
        draw(rng, draws.noise_multiplier * (high - low), ()))
    return float(np.clip(noisy / max(y.shape[0], 1), low, high))


def _spread(y, location, rank, draws, rng):
    """Steps 3 and 5: the rank's quantile of ``|y_i - location|`` (two
    draws), a positive candidate of the grid."""
    with np.errstate(over="ignore"):  # |y - location| may be inf: counted so
        deviations = abs(y - location)
    spread_draws = QuantileDraws(1, (rank,), draws.score_sensitivity, 2)
    return float(release_bounds([deviations], spread_draws, rng)[0])


def release_location_scale(y, draws, rng):
    """Release a target's location and scale, as planned.

    Parameters
    ----------
    y : ndarray or dask.array.Array of shape (n_samples,)
        Finite targets (validated by the estimator).
    draws : TargetDraws
        From the plan.
    rng : numpy.random.Generator

    Returns
    -------
    location : float
        The noisy mean of y clipped to a released window around a first
        noisy location.
    scale : float
        The released rank of ``|y_i - location|``: a positive candidate of
        the public grid.
    """
    low, high = _first_bounds(y, draws, rng)
    first = _noisy_mean(y, low, high, draws, rng)
    window = _spread(y, first, draws.window_rank, draws, rng)
    location = _noisy_mean(y, first - window, first + window, draws, rng)
    return location, _spread(y, location, draws.scale_rank, draws, rng)
