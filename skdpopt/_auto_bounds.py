"""``"auto"`` bounds of the estimators: private quantiles of per-record statistics.

A public bound that drives utility (a target bound, a feature bound, a
gradient clip norm) defaults to ``"auto"``: a small documented share of
the fit's budget buys a private upper quantile of the per-record
statistic it bounds (``|y_i|``, ``max_j |x_ij|``, a gradient's norm), by
the exponential mechanism over the public grid of
:mod:`skdpopt._bounds`; the rest of the budget goes to the fit.  Each
record contributes one value to each statistic, so each bound is one
draw of score sensitivity D (an ``ExponentialMechanism(D)``, ``D^2 / 2``
in zCDP units).  Two draws per bound: the grid cell holding the
statistic's median (:func:`skdpopt._bounds.private_median_cell`, no
prior), then the upper quantile anchored at that cell's upper end, so that
the public prior of the second draw measures magnitudes from the data's
own scale, not from 0 (a statistic in dollars lies 16 doublings above 1).
Plans put :func:`auto_draws` in their event tree; the estimators call
:func:`release_bounds` after the ledger check.
"""

import warnings

import numpy as np
import scipy.sparse as sp

from . import _bounds
from ._data import counts_below
from .accounting import zcdp
from .exceptions import UtilityWarning
from .plans.preprocessing import QuantileDraws

# Share of a fit's budget (zCDP units) spent on its "auto" bounds, all of
# them together.  Small: a bound within a factor 2 of the right one costs
# far less utility than 10% of the fit's noise budget would buy back.
AUTO_BOUNDS_SHARE = 0.05

# Rank of the released bound: 1% of the records are clipped at most (in
# expectation over the draw's error in rank).
AUTO_QUANTILE = 0.99

# Draws per bound: the median cell, then the upper quantile.
DRAWS_PER_BOUND = 2

# The smallest positive candidate of the grid: a released bound is never 0.
_SMALLEST = float(_bounds.DEFAULT_GRID[_bounds.DEFAULT_GRID > 0].min())


def is_auto(value):
    """Whether a bound parameter asks for a private bound."""
    return isinstance(value, str) and value == "auto"


def auto_draws(rho, *, n_samples, n_bounds, epsilon, quantile=AUTO_QUANTILE):
    """The draws of ``n_bounds`` auto bounds costing ``rho`` together.

    Without privacy (``epsilon = inf``) the "draws" are exact: the
    quantile, rounded up to the grid.

    Parameters
    ----------
    rho : float
        zCDP cost of all the draws.
    n_samples, n_bounds : int
    epsilon : float
        The fit's budget (only whether it is infinite matters).
    quantile : float, default=AUTO_QUANTILE
        Rank of the released bounds (moved inwards where the draw could
        not find it).

    Returns
    -------
    QuantileDraws or None
        None when ``n_bounds`` is 0.
    """
    if n_bounds == 0:
        return None
    if epsilon == np.inf:
        return QuantileDraws(n_bounds, (quantile,), np.inf, DRAWS_PER_BOUND)
    sensitivity = zcdp.exponential_score_sensitivity(
        rho / (n_bounds * DRAWS_PER_BOUND))
    effective = _bounds.effective_quantiles((quantile,), n_samples, sensitivity)
    return QuantileDraws(n_bounds, effective, float(sensitivity), DRAWS_PER_BOUND)


def reliable_share(n_samples, rho, *, n_draws, low, high):
    """Share of ``rho`` that gives each of ``n_draws`` equal draws the score
    sensitivity at which a median-cell draw finds the data
    (:func:`skdpopt._bounds.median_cell_is_reliable`), within [low, high]:
    public quantities only."""
    needed = 2.0 * (np.log(len(_bounds.DEFAULT_GRID) - 1) + _bounds.TIE_MARGIN)
    sensitivity = needed / max(n_samples, 1)
    return float(np.clip(n_draws * sensitivity**2 / 2.0 / rho, low, high))


def row_abs_max(X):
    """``max_j |x_ij|`` of every row, dense or sparse, without overflow."""
    if sp.issparse(X):
        return np.asarray(abs(X).max(axis=1).todense()).ravel()
    X = np.asarray(X)
    if X.shape[1] == 0:
        return np.zeros(X.shape[0])
    return np.abs(X).max(axis=1)


def release_bounds(statistics, draws, rng):
    """Release one private upper quantile of each per-record statistic.

    Parameters
    ----------
    statistics : list of ndarray or dask array of shape (n_samples,)
        Non-negative per-record values, one array per bound, in the order
        the plan counted them (NaN counts as infinite).
    draws : QuantileDraws
        From the plan; ``draws.n_columns == len(statistics)``.
    rng : numpy.random.Generator

    Returns
    -------
    ndarray of shape (len(statistics),)
        Released candidates of the public grid, at least its smallest
        positive candidate.
    """
    # Counts of values below each candidate: the only data access (a map
    # over row blocks and a sum on Dask arrays).
    below = np.vstack([counts_below(s) for s in statistics])
    n_samples = statistics[0].shape[0]
    cell = _bounds.median_cell_from_counts(below, n_samples,
                                           draws.score_sensitivity, rng)
    anchor = _bounds.DEFAULT_GRID[cell + 1]
    released = _bounds.quantiles_from_counts(below, n_samples, draws.quantiles,
                                             draws.score_sensitivity, rng,
                                             anchor=anchor)[0]
    return np.maximum(released, _SMALLEST)


def warn_if_coarse(estimator, draws, n_samples, names, stacklevel=4):
    """UtilityWarning (public quantities only) when the budget and the
    rows are too few for the draws to find the data's scale (the median
    cell) or an upper quantile (its rank had to move to ``1 - MAX_TAIL``)."""
    if draws is None or not np.isfinite(draws.score_sensitivity):
        return False
    lost = not _bounds.median_cell_is_reliable(n_samples, draws.score_sensitivity)
    capped = draws.quantiles[0] <= 1.0 - _bounds.MAX_TAIL
    if not (lost or capped):
        return False
    warnings.warn(
        f"{type(estimator).__name__}: with {n_samples} rows and this epsilon "
        f"the private {' and '.join(names)} may miss the data's scale, so the "
        "fit may clip most records or add noise far above their scale. "
        f"Levers: more epsilon, more rows, or pass public {' and '.join(names)}.",
        UtilityWarning, stacklevel=stacklevel)
    return True
