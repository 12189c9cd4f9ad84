"""A regression target's private location and scale (the releases planned by
:func:`skdpopt.plans.targets.target_draws`).

The regressors fit ``(y - location) / scale`` (DPSGDRegressor) or clip
``y - location`` to ``+-scale`` (DPLasso), and shift their intercept back
by ``location`` afterwards, which is post-processing.  The derivation is in
``docs/privacy/targets.md``.
"""

import warnings

import numpy as np

from . import _bounds
from ._auto_bounds import release_bounds
from ._data import clipped_total, counts_below
from .exceptions import UtilityWarning
from .mechanisms import gaussian_noise, laplace_noise
from .plans.preprocessing import QuantileDraws


def _anchored_ranks(values, ranks, draws, rng):
    """The grid cell holding the median of ``values`` (a draw of
    ``draws.anchor_sensitivity``), then each rank anchored at its lower end
    (ranks below 1/2) or upper end (``draws.score_sensitivity``), from the
    counts of values below each candidate."""
    grid = _bounds.DEFAULT_GRID
    n_samples = values.shape[0]
    below = counts_below(values)[None, :]
    cell = _bounds.median_cell_from_counts(below, n_samples,
                                           draws.anchor_sensitivity, rng)[0]
    return [_bounds.quantiles_from_counts(
                below, n_samples, (q,), draws.score_sensitivity, rng,
                anchor=grid[cell] if q < 0.5 else grid[cell + 1])[0, 0]
            for q in ranks]


def _first_bounds(y, draws, rng):
    """Step 1: ``[low, high]`` at the plan's ranks of y (three draws)."""
    grid = _bounds.DEFAULT_GRID
    picks = _anchored_ranks(y, draws.location_ranks, draws, rng)
    low, high = min(picks), max(picks)
    if low == high:  # post-processing: a pair on one candidate is widened
        k = int(np.searchsorted(grid, low))
        low, high = grid[max(k - 1, 0)], grid[min(k + 1, len(grid) - 1)]
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
    """Step 3: the window's rank of ``|y_i - location|`` (two draws, the
    median cell's anchoring), a positive candidate of the grid."""
    window = _anchored_ranks(_deviations(y, location), (draws.window_rank,),
                             draws, rng)[0]
    return float(max(window, _bounds.DEFAULT_GRID[_bounds.DEFAULT_GRID > 0][0]))


def _spread(y, location, rank, draws, rng):
    """Step 5: the rank's quantile of ``|y_i - location|`` (two draws), a
    positive candidate of the grid."""
    spread_draws = QuantileDraws(1, (rank,), draws.scale_sensitivity, 2)
    return float(release_bounds([_deviations(y, location)], spread_draws, rng)[0])


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
        return 0.0, _spread(y, 0.0, draws.scale_rank, draws, rng)
    low, high = _first_bounds(y, draws, rng)
    first = _noisy_mean(y, low, high, draws.noise_multiplier, draws, rng)
    window = _window(y, first, draws, rng)
    location = _noisy_mean(y, first - window, first + window,
                           draws.location_noise_multiplier, draws, rng)
    return location, _spread(y, location, draws.scale_rank, draws, rng)


def warn_if_not_centred(estimator, draws, name, stacklevel=4):
    """Warn with :class:`UtilityWarning` when the plan does not centre the
    targets (public quantities only: the rows and the budget)."""
    if draws is None or draws.centre:
        return False
    warnings.warn(
        f"{type(estimator).__name__}: with {draws.n_samples} rows and "
        f"epsilon={estimator.epsilon:g} the budget is too small to find the "
        "targets' location privately, so they are not centred: targets far "
        "from zero fit poorly. Levers: more epsilon, more rows, or centre "
        f"and scale the targets by public constants and pass a public {name}.",
        UtilityWarning, stacklevel=stacklevel)
    return True
