"""Plans of the private scalers: bounds draws and noisy clipped moments."""

import math
from dataclasses import dataclass

import numpy as np
from scipy.special import ndtri

from ..accounting import EpsilonDeltaEvent, RhoBracket, calibrate, compose, zcdp
from .base import PrivacyPlan
from .bounds import (
    COARSE_GRID,
    DEFAULT_GRID,
    LOCATION_CELLS,
    LOCATION_WEIGHT,
    TIE_MARGIN,
    LocationScaleDraws,
    QuantileDraws,
    draw_costs_per_column,
    moments_event,
    quantile_draws,
    quantile_draws_for_rho,
)

# Default share of a scaler's budget spent on private bounds (zCDP units)
# when no public bounds are given; the rest goes to the moments.
BOUNDS_SHARE = 0.5
# How the moments' part splits between the clipped sum and the sum of
# squares when both are released.  The mean's noise is the one a model
# feels (an offset on every column); the scale only has to be right to
# a few tens of percent, so the sum gets three quarters.
SUM_WEIGHT = 0.75
# The standard scaler's ranks are read as a normal distribution's, in units
# of its median absolute deviation; ranks beyond these are read as them
# (the bounds stay within 5.5 scales of the location).
SPREAD_RANKS = (1e-4, 1.0 - 1e-4)
# Rank of the deviations |x - m| the scale aims at: 3/4 (a column with up
# to 3/4 of its rows at one value keeps a positive scale), moved down to
# no less than 1/2 where the budget is too small for the draw to find it
# (see ``scale_rank``).
SCALE_RANK = 0.75
MIN_SCALE_RANK = 0.5
# The scale draw's tie margin (``scale_rank``), wider than the grid's
# TIE_MARGIN: a scale drawn above the data (up to 2^60) loses its column
# (the scaler flattens it).  At TIE_MARGIN = 3, on 3 normal columns at
# epsilon = 0.2 (a pipeline's share of 1), 31 fits of 400 lost a column
# at n = 3000 (rank 3/4) and 40 at n = 2000; at 8, none and 3 (rank 0.61
# and 1/2).  The cells above the data then weigh at most exp(-8) of the
# target's wherever the rank can still move down (D n >= 24.8); a public
# rank only: the draws and their event are unchanged.
SCALE_TIE_MARGIN = 8.0


def scale_rank(n_samples, score_sensitivity):
    """The rank of the scale draw: :data:`SCALE_RANK`, moved down until
    the cells above the data (``(1 - r) n`` from the target, up to
    ``len(scale_grid) - 1 = 81`` of them) weigh together at most
    ``exp(-SCALE_TIE_MARGIN)`` of the target's, at most to
    :data:`MIN_SCALE_RANK` (the median, whose cells beyond the data are
    ``n / 2`` from it on either side).  Public quantities only.

    Parameters
    ----------
    n_samples : int
    score_sensitivity : float
        Of each draw; ``inf`` (no privacy) keeps :data:`SCALE_RANK`.

    Returns
    -------
    float
    """
    if not np.isfinite(score_sensitivity):
        return SCALE_RANK
    needed = math.log(COARSE_GRID[COARSE_GRID > 0].size) + SCALE_TIE_MARGIN
    tail = needed / (score_sensitivity * max(n_samples, 1))
    return float(np.clip(1.0 - tail, MIN_SCALE_RANK, SCALE_RANK))


def spread_factors(quantiles, rank=MIN_SCALE_RANK):
    """Distances of the ranks ``quantiles`` of a normal distribution from
    its median, in units of the rank-``rank`` quantile of its absolute
    deviation from the median: ``(0.01, 0.99)`` gives ``(3.45, 3.45)`` for
    the median absolute deviation (``rank=0.5``), ``(2.02, 2.02)`` for
    ``rank=0.75``.  Public.

    Parameters
    ----------
    quantiles : (float, float)
        A rank below 1/2 and one above.
    rank : float, default=MIN_SCALE_RANK

    Returns
    -------
    (float, float)
    """
    low, high = np.clip(quantiles, *SPREAD_RANKS)
    mad = ndtri(0.5 + rank / 2)
    return (float(-ndtri(low) / mad), float(ndtri(high) / mad))


@dataclass(frozen=True)
class ScalerPlan(PrivacyPlan):
    """What a private scaler's fit releases.

    Attributes
    ----------
    bounds : QuantileDraws, LocationScaleDraws or None
        The bounds draws (a location and a scale for the standard scaler,
        two ranks for the min-max scaler); None when the bounds are public.
    noise_multipliers : (float or None, float or None)
        Of the clipped sum and the clipped sum of squares (see
        :func:`skdpopt._bounds.private_moments`); None: not released.
    mechanism : {"gaussian", "laplace"}
        Noise of the moments (Laplace when ``delta = 0``).
    """

    bounds: QuantileDraws = None
    noise_multipliers: tuple = (None, None)
    mechanism: str = "gaussian"


def reliable_epsilon(*, n_samples, n_features, delta, moments=(True, True)):
    """The smallest epsilon at which a scaler's private bounds find the data.

    The median-cell draws find the data once their score sensitivity D
    meets ``D n / 2 >= log(cells) + TIE_MARGIN``
    (:func:`~skdpopt.plans.bounds.median_cell_is_reliable`): the standard
    scaler's ``3 n_features`` draws over the coarse grid get
    ``BOUNDS_SHARE`` of its zCDP budget, the min-max scaler's located
    rank draws (the location counting ``LOCATION_WEIGHT``) over the grid
    all of it.  The epsilon is the classical conversion of that budget
    (pure DP: the draws' epsilons add), which the accountant's
    calibration only tightens.  Public quantities only.

    Parameters
    ----------
    n_samples, n_features : int
    delta : float
    moments : (bool, bool), default=(True, True)
        The moments the scaler releases (none: the min-max scaler).

    Returns
    -------
    float
    """
    if any(moments):
        cells, costs, share = COARSE_GRID.size - 1, 3.0, BOUNDS_SHARE
    else:
        cells, share = DEFAULT_GRID.size - 1, 1.0
        costs = draw_costs_per_column(2, LOCATION_CELLS)
    needed = 2.0 * (math.log(cells) + TIE_MARGIN) / max(n_samples, 1)
    if delta <= 0:
        # Each draw is 2 D-DP (the location's sqrt(LOCATION_WEIGHT) D).
        return 2.0 * needed * costs * n_features / share
    rho = costs * n_features * needed**2 / 2.0 / share
    return rho + 2.0 * math.sqrt(rho * math.log(1.0 / delta))


def _location_scale(budget, share, *, n_samples, n_features, quantiles,
                    mechanism):
    """Location-and-scale draws costing ``share * budget`` (zCDP rho, or a
    pure epsilon: each draw is then 2 D-DP and the draws add)."""
    n_draws = n_features * LocationScaleDraws.draws_per_column
    if mechanism == "gaussian":
        sensitivity = zcdp.exponential_score_sensitivity(share * budget / n_draws)
    else:
        sensitivity = share * budget / (2.0 * n_draws)
    rank = scale_rank(n_samples, sensitivity)
    return LocationScaleDraws(n_samples, n_features, float(sensitivity),
                              spread_factors(quantiles, rank), scale_rank=rank)


def _scaler_parts(budget, *, n_samples, n_features, private_bounds, quantiles,
                  moments, mechanism):
    """Bounds plan and moment noise for a total ``budget``: zCDP rho
    (Gaussian) or pure epsilon (Laplace)."""
    n_moments = sum(moments)
    bounds_share = BOUNDS_SHARE if private_bounds and n_moments else (
        1.0 if private_bounds else 0.0)
    moment_shares = [0.0, 0.0]
    if all(moments):
        moment_shares = [(1.0 - bounds_share) * SUM_WEIGHT,
                         (1.0 - bounds_share) * (1.0 - SUM_WEIGHT)]
    elif n_moments:
        moment_shares[moments.index(True)] = 1.0 - bounds_share
    bounds = None
    if private_bounds and n_moments:
        bounds = _location_scale(budget, bounds_share, n_samples=n_samples,
                                 n_features=n_features, quantiles=quantiles,
                                 mechanism=mechanism)
    elif private_bounds:
        if mechanism == "gaussian":
            bounds = quantile_draws_for_rho(
                bounds_share * budget, n_samples=n_samples, n_columns=n_features,
                quantiles=quantiles, location_cells=LOCATION_CELLS)
        else:
            # Pure DP: each draw is 2 D-DP and the draws add (the location
            # draw's D is sqrt(LOCATION_WEIGHT) times the others').
            per_column = 1 + len(quantiles) + math.sqrt(LOCATION_WEIGHT)
            bounds = quantile_draws(
                n_samples=n_samples, n_columns=n_features,
                score_sensitivity=bounds_share * budget
                / (2.0 * per_column * n_features),
                quantiles=quantiles, location_cells=LOCATION_CELLS)
    noise = []
    for wanted, share in zip(moments, moment_shares, strict=True):
        if not wanted:
            noise.append(None)
        elif mechanism == "gaussian":
            noise.append(zcdp.gaussian_noise_multiplier(share * budget))
        else:
            noise.append(1.0 / (share * budget))
    return bounds, tuple(noise)


def _scaler_event(bounds, noise, mechanism):
    return compose(bounds.event if bounds is not None else None,
                   moments_event(noise, mechanism))


def plan_scaler(*, n_samples, n_features, epsilon, delta, private_bounds,
                quantiles=(0.01, 0.99), moments=(True, True)):
    """Plan a private scaler's fit from public quantities.

    Parameters
    ----------
    n_samples, n_features : int
        Public shape.
    epsilon, delta : float
        The fit's budget; ``epsilon=inf`` plans exact statistics.
    private_bounds : bool
        Whether bounds are drawn privately (else they are public and free):
        with moments (the standard scaler), a location and a scale
        (:class:`~skdpopt.plans.bounds.LocationScaleDraws`), without (the
        min-max scaler), two ranks.
    quantiles : (float, float), default=(0.01, 0.99)
        Requested ranks of the private bounds (for a location and a scale,
        read as a normal distribution's: :func:`spread_factors`).
    moments : (bool, bool), default=(True, True)
        Whether the clipped sum and the sum of squares are released.

    Returns
    -------
    ScalerPlan
        Its event spends at most ``epsilon`` at ``delta``.
    """
    mechanism = "gaussian" if delta > 0 else "laplace"
    if epsilon == np.inf:
        bounds = None
        if private_bounds and any(moments):
            bounds = LocationScaleDraws(n_samples, n_features, np.inf,
                                        spread_factors(quantiles, SCALE_RANK),
                                        scale_rank=SCALE_RANK)
        elif private_bounds:
            bounds = quantile_draws(n_samples=n_samples, n_columns=n_features,
                                    score_sensitivity=np.inf, quantiles=quantiles,
                                    location_cells=LOCATION_CELLS)
        noise = tuple(0.0 if m else None for m in moments)
        released = private_bounds or any(moments)
        event = EpsilonDeltaEvent(np.inf, 0.0) if released else compose()
        return ScalerPlan(epsilon=epsilon, delta=delta, event=event,
                          bounds=bounds, noise_multipliers=noise,
                          mechanism=mechanism)
    if not private_bounds and not any(moments):
        return ScalerPlan(epsilon=epsilon, delta=delta, event=compose(),
                          noise_multipliers=(None, None), mechanism=mechanism)

    def parts(budget):
        return _scaler_parts(budget, n_samples=n_samples, n_features=n_features,
                             private_bounds=private_bounds, quantiles=quantiles,
                             moments=moments, mechanism=mechanism)

    def make_event(budget):
        bounds, noise = parts(budget)
        return _scaler_event(bounds, noise, mechanism)

    if mechanism == "laplace":
        budget = epsilon  # pure epsilons add exactly
    else:
        budget = calibrate(make_event, epsilon, delta,
                           RhoBracket(zcdp.rho_for(epsilon, delta))).value
    bounds, noise = parts(budget)
    return ScalerPlan(epsilon=epsilon, delta=delta,
                      event=_scaler_event(bounds, noise, mechanism),
                      bounds=bounds, noise_multipliers=noise, mechanism=mechanism)
