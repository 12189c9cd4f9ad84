"""A regression target's private location and scale (the releases planned by
:func:`skdpopt.plans.targets.target_draws`).

The regressors fit ``(y - location) / scale`` (DPSGDRegressor) or clip
``y - location`` to ``+-scale`` (DPLasso), and shift their intercept back
by ``location`` afterwards, which is post-processing.  The derivation is in
``docs/privacy/targets.md``.
"""

import numpy as np

from .._bounds import private_bounds
from .._data import clipped_total
from ..mechanisms import gaussian_noise, laplace_noise


def _first_bounds(y, draws, rng):
    """Step 1: ``[low, high]`` at the plan's ranks of y (three draws; a pair
    on one candidate is widened to its neighbours)."""
    low, high = private_bounds(y, draws.bounds_draws, rng)[:, 0]
    return float(low), float(high)


def _noisy_mean(y, low, high, noise_multiplier, draws, rng):
    """Steps 2 and 4: the mean of y clipped to ``[low, high]``, from the sum
    with noise (one record moves the sum by at most ``high - low``), kept
    inside the bounds."""
    draw = gaussian_noise if draws.mechanism == "gaussian" else laplace_noise
    noisy = clipped_total(y, low, high) + float(
        draw(rng, noise_multiplier * (high - low), ()))
    return float(np.clip(noisy / max(y.shape[0], 1), low, high))


def _deviations(y, location):
    with np.errstate(over="ignore"):  # |y - location| may be inf: counted so
        return abs(y - location)


def _window(y, location, draws, rng):
    """Step 3: the window's rank of ``|y_i - location|`` (two draws), a
    positive candidate of the grid."""
    return float(private_bounds([_deviations(y, location)], draws.window_draws,
                                rng)[0, 0])


def _spread(y, location, draws, rng):
    """Step 5: the scale's rank of ``|y_i - location|`` (two draws), a
    positive candidate of the grid."""
    return float(private_bounds([_deviations(y, location)], draws.scale_draws,
                                rng)[0, 0])


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
        noisy location (0 when the plan does not centre).
    scale : float
        The released rank of ``|y_i - location|``: a positive candidate of
        the public grid.
    """
    if not draws.centre:
        return 0.0, _spread(y, 0.0, draws, rng)
    low, high = _first_bounds(y, draws, rng)
    first = _noisy_mean(y, low, high, draws.noise_multiplier, draws, rng)
    window = _window(y, first, draws, rng)
    location = _noisy_mean(y, first - window, first + window,
                           draws.location_noise_multiplier, draws, rng)
    return location, _spread(y, location, draws, rng)
