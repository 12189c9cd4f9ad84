"""``"auto"`` bounds of the estimators: private quantiles of per-record statistics.

A public bound that drives utility (a target bound, a feature bound, a
gradient clip norm) defaults to ``"auto"``: a small documented share of
the fit's budget buys a private upper quantile of the per-record
statistic it bounds (``|y_i|``, ``max_j |x_ij|``, a gradient's norm), by
the exponential mechanism over the public grid of
:mod:`skdpopt._bounds`; the rest of the budget goes to the fit.  Each
record contributes one value to each statistic, so each bound is one
draw of score sensitivity D (an ``ExponentialMechanism(D)``, ``D^2 / 2``
in zCDP units).  Plans put :func:`auto_draws` in their event tree; the
estimators call :func:`release_bounds` after the ledger check.
"""

import warnings

import numpy as np
import scipy.sparse as sp

from . import _bounds
from .exceptions import UtilityWarning
from .plans.preprocessing import QuantileDraws, quantile_draws_for_rho

# Share of a fit's budget (zCDP units) spent on its "auto" bounds, all of
# them together.  Small: a bound within a factor 2 of the right one costs
# far less utility than 10% of the fit's noise budget would buy back.
AUTO_BOUNDS_SHARE = 0.05

# Rank of the released bound: 1% of the records are clipped at most (in
# expectation over the draw's error in rank).
AUTO_QUANTILE = 0.99

# The smallest positive candidate of the grid: a released bound is never 0.
_SMALLEST = float(_bounds.DEFAULT_GRID[_bounds.DEFAULT_GRID > 0].min())


def is_auto(value):
    """Whether a bound parameter asks for a private bound."""
    return isinstance(value, str) and value == "auto"


def auto_draws(rho, *, n_samples, n_bounds, epsilon, quantile=AUTO_QUANTILE):
    """The draws of ``n_bounds`` auto bounds costing ``rho`` together.

    Without privacy (``epsilon = inf``) the "draws" are exact: the largest
    value (rank 1), rounded up to the grid.

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
        return QuantileDraws(n_bounds, (1.0,), np.inf, 1)
    return quantile_draws_for_rho(rho, n_samples=n_samples, n_columns=n_bounds,
                                  quantiles=(quantile,), bounds=False)


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
    statistics : list of ndarray of shape (n_samples,)
        Non-negative per-record values, one array per bound, in the order
        the plan counted them.
    draws : QuantileDraws
        From the plan; ``draws.n_columns == len(statistics)``.
    rng : numpy.random.Generator

    Returns
    -------
    ndarray of shape (len(statistics),)
        Released candidates of the public grid, at least its smallest
        positive candidate.
    """
    values = np.column_stack([np.nan_to_num(np.asarray(s, dtype=np.float64),
                                            nan=np.inf) for s in statistics])
    released = _bounds.private_quantiles(values, draws.quantiles,
                                         draws.score_sensitivity, rng,
                                         anchor=0.0)[0]
    return np.maximum(released, _SMALLEST)


def warn_if_coarse(estimator, draws, n_samples, names, stacklevel=4):
    """UtilityWarning (public quantities only) when the budget and the
    rows are too few for the draw to find an upper quantile: its rank
    had to move to the floor ``1 - MAX_TAIL``."""
    if draws is None or not np.isfinite(draws.score_sensitivity):
        return False
    if draws.quantiles[0] > 1.0 - _bounds.MAX_TAIL or draws.quantiles[0] < 0.5:
        return False
    warnings.warn(
        f"{type(estimator).__name__}: with {n_samples} rows and this epsilon "
        f"the private {' and '.join(names)} can only aim at the "
        f"{1 - _bounds.MAX_TAIL:g} quantile, so many records may be clipped. "
        f"Levers: more epsilon, more rows, or pass public {' and '.join(names)}.",
        UtilityWarning, stacklevel=stacklevel)
    return True
