"""Planning of private bounds: the public grid, the draws and their event,
and the shares of a fit's budget they get.

Every private bound of the library (the scalers' per-column bounds, the
``"auto"`` bounds of the estimators, the numeric columns of
DPSyntheticData) is released by one mechanism,
:func:`skdpopt._bounds.private_bounds`: for each column, an
exponential-mechanism draw of the cell of the public grid
(:func:`bound_grid`) holding the median, then one draw per requested rank,
scored by how far the count of values below a candidate is from the
target count, with a public prior anchored at the median cell.  Replacing
one record moves every count by at most 1, so every draw is an
``ExponentialMechanism(score_sensitivity)``.  This module plans those
draws from public quantities (:class:`QuantileDraws`); the derivations are
in ``docs/privacy/preprocessing.md``.
"""

import math
from dataclasses import dataclass

import numpy as np

from ..accounting import (
    EpsilonDeltaEvent,
    ExponentialMechanism,
    GaussianMechanism,
    LaplaceMechanism,
    ScaleBracket,
    calibrate,
    compose,
    repeat,
    zcdp,
)

# Magnitudes the grid spans: 2^-20 (about 1e-6) to 2^60 (about 1e18).
GRID_EXPONENTS = (-20, 60)
# Candidates per doubling: a chosen bound is then within a factor 2^(1/4)
# (19%) of the best candidate.
GRID_PER_DOUBLING = 4
# Weight of the public prior per doubling of magnitude away from the
# anchor (see ``skdpopt._bounds.anchored_prior``): 1 per candidate at
# magnitudes above 1.  Among candidates the data score alike it prefers
# the one nearest the anchor.
PRIOR_WEIGHT = 4.0
# The candidates the data leave tied weigh together at most exp(-TIE_MARGIN)
# of a candidate at the target (see ``effective_quantiles``).
TIE_MARGIN = 3.0
# Target ranks are never moved further inwards than this.
MAX_TAIL = 0.25

# "auto" bounds: their share of a fit's budget (zCDP units), all of them
# together (small: a bound within a factor 2 of the right one costs far
# less utility than this share of the fit's noise budget would buy back),
# and the rank of the released bound (1% of the records are clipped at
# most, in expectation over the draw's error in rank).
AUTO_BOUNDS_SHARE = 0.05
AUTO_QUANTILE = 0.99


def bound_grid(exponents=GRID_EXPONENTS, per_doubling=GRID_PER_DOUBLING):
    """The public grid of candidate bounds: 0 and ``+-2^(k / per_doubling)``.

    Parameters
    ----------
    exponents : (int, int), default=(-20, 60)
        Smallest and largest magnitude, as powers of 2.
    per_doubling : int, default=4
        Candidates per doubling of the magnitude.

    Returns
    -------
    ndarray
        Sorted, symmetric about 0, independent of any data.
    """
    low, high = exponents
    powers = 2.0 ** (np.arange(low * per_doubling, high * per_doubling + 1)
                     / per_doubling)
    return np.concatenate([-powers[::-1], [0.0], powers])


DEFAULT_GRID = bound_grid()
# The smallest positive candidate: an "auto" bound is never below it.
SMALLEST_POSITIVE = float(DEFAULT_GRID[DEFAULT_GRID > 0].min())


def tied_weight(weight=PRIOR_WEIGHT, per_doubling=GRID_PER_DOUBLING):
    """Total prior weight of the candidates beyond the data, relative to the
    nearest, at magnitudes above 1: ``1 / (1 - 2^(-weight / per_doubling))``
    (below 1 the prior hardly separates candidates; see the docs)."""
    return 1.0 / -math.expm1(-weight / per_doubling * math.log(2.0))


def effective_quantiles(quantiles, n_samples, score_sensitivity):
    """Target ranks moved inwards until the draw can find them.

    A candidate beyond every value scores ``score_sensitivity * t * n``
    below a candidate at the target, where ``t`` is the target's tail
    (``q``, or ``1 - q``); with the prior, all of them together weigh at
    most :func:`tied_weight` times the nearest.  They are at most
    ``exp(-TIE_MARGIN)`` of a candidate at the target once
    ``t >= (log(tied_weight()) + TIE_MARGIN) / (score_sensitivity * n)``;
    smaller tails are raised to that, at most to :data:`MAX_TAIL`.  Uses
    public quantities only.

    Parameters
    ----------
    quantiles : sequence of float
        Requested ranks in [0, 1].
    n_samples : int
    score_sensitivity : float
        Of each draw; ``inf`` (no privacy) keeps the ranks.

    Returns
    -------
    tuple of float
    """
    if not np.isfinite(score_sensitivity):
        return tuple(float(q) for q in quantiles)
    margin = math.log(tied_weight()) + TIE_MARGIN
    tail = min(margin / (score_sensitivity * max(n_samples, 1)), MAX_TAIL)
    out = []
    for q in quantiles:
        q = float(q)
        if q < 0.5:
            q = min(max(q, tail), 0.5)
        elif q > 0.5:
            q = max(min(q, 1.0 - tail), 0.5)
        out.append(q)
    return tuple(out)


def median_cell_is_reliable(n_samples, score_sensitivity,
                            n_candidates=DEFAULT_GRID.size):
    """Whether the median-cell draw finds the data.

    Every cell beyond the data is ``n / 2`` from holding the median, so the
    ``n_candidates - 1`` cells together weigh at most ``exp(-TIE_MARGIN)``
    of the right one once ``score_sensitivity * n / 2 >=
    log(n_candidates - 1) + TIE_MARGIN``.  Public quantities only.
    """
    if not np.isfinite(score_sensitivity):
        return True
    needed = math.log(n_candidates - 1) + TIE_MARGIN
    return score_sensitivity * n_samples / 2.0 >= needed


def quantile_event(score_sensitivity, n_draws):
    """``n_draws`` exponential-mechanism draws (``EpsilonDeltaEvent(inf, 0)``
    without privacy)."""
    if not np.isfinite(score_sensitivity):
        return EpsilonDeltaEvent(np.inf, 0.0)
    return repeat(ExponentialMechanism(score_sensitivity), n_draws)


@dataclass(frozen=True)
class QuantileDraws:
    """The draws of private bounds of ``n_columns`` per-record columns.

    Per column: the median cell, then one draw per rank.  A part of a plan
    (bounds inside a larger fit), with its own event.

    Attributes
    ----------
    n_samples, n_columns : int
    quantiles : tuple of float
        Effective target ranks (see :func:`effective_quantiles`); with one
        rank below 1/2 and one above, the release is a (low, high) pair.
    score_sensitivity : float
        Of each draw; ``inf`` without privacy.
    requested : tuple of float
        The ranks asked for.
    floor : float
        Released bounds are raised to at least this (post-processing):
        ``SMALLEST_POSITIVE`` for the bound of a non-negative statistic,
        which must be positive; ``-inf`` otherwise.
    prior_weight : float
    anchor_sensitivity : float or None
        Of the median-cell draws, where they are sharper than the others
        (they anchor everything after them); None: ``score_sensitivity``.
    """

    n_samples: int
    n_columns: int
    quantiles: tuple
    score_sensitivity: float
    requested: tuple
    floor: float = -np.inf
    prior_weight: float = PRIOR_WEIGHT
    anchor_sensitivity: float = None

    @property
    def median_sensitivity(self):
        """Score sensitivity of each column's median-cell draw."""
        return (self.score_sensitivity if self.anchor_sensitivity is None
                else self.anchor_sensitivity)

    @property
    def grid(self):
        """The public candidates (:data:`DEFAULT_GRID`)."""
        return DEFAULT_GRID

    @property
    def draws_per_column(self):
        """The median cell and one draw per rank."""
        return 1 + len(self.quantiles)

    @property
    def event(self):
        """The draws' event (``EpsilonDeltaEvent(inf, 0)`` without privacy)."""
        if self.anchor_sensitivity is None:
            return quantile_event(self.score_sensitivity,
                                  self.n_columns * self.draws_per_column)
        return compose(quantile_event(self.anchor_sensitivity, self.n_columns),
                       quantile_event(self.score_sensitivity,
                                      self.n_columns * len(self.quantiles)))

    @property
    def lost(self):
        """Whether the budget and the rows are too few for the median-cell
        draw to find the data's scale (public quantities only)."""
        return not median_cell_is_reliable(self.n_samples, self.median_sensitivity,
                                           len(self.grid))

    @property
    def capped(self):
        """Whether a rank had to move inwards to the ``MAX_TAIL`` limit from
        a requested rank beyond it (public quantities only)."""
        return any((q < 0.5 and wanted < MAX_TAIL <= q)
                   or (q > 0.5 and wanted > 1.0 - MAX_TAIL >= q)
                   for q, wanted in zip(self.quantiles, self.requested, strict=True))


def quantile_draws(*, n_samples, n_columns, score_sensitivity,
                   quantiles=(0.01, 0.99), floor=-np.inf, anchor_sensitivity=None):
    """Draws of the given score sensitivity, their ranks moved inwards where
    the draws could not find them (public quantities only).

    Returns
    -------
    QuantileDraws
    """
    effective = effective_quantiles(quantiles, n_samples, score_sensitivity)
    return QuantileDraws(n_samples, n_columns, effective, float(score_sensitivity),
                         tuple(float(q) for q in quantiles), floor,
                         anchor_sensitivity=anchor_sensitivity)


def quantile_draws_for_rho(rho, *, n_samples, n_columns, quantiles=(0.01, 0.99),
                           floor=-np.inf):
    """Draws that together cost ``rho`` in zCDP units (each draw is
    bounded-range, ``D^2 / 2``-zCDP): for a plan that splits its budget in
    rho and calibrates the whole."""
    per_column = 1 + len(quantiles)
    sensitivity = zcdp.exponential_score_sensitivity(rho / (n_columns * per_column))
    return quantile_draws(n_samples=n_samples, n_columns=n_columns,
                          score_sensitivity=sensitivity, quantiles=quantiles,
                          floor=floor)


def quantile_draws_for_epsilon(epsilon, delta, *, n_samples, n_columns,
                               quantiles=(0.01, 0.99)):
    """Draws that together spend ``epsilon`` at ``delta`` (calibrated by the
    accountant; pure epsilons add when ``delta = 0``), for a share of a
    budget given as an epsilon."""
    n_draws = n_columns * (1 + len(quantiles))
    if epsilon == np.inf:
        sensitivity = np.inf
    elif delta == 0:
        # Pure DP: each draw is 2 D-DP and the draws add.
        sensitivity = epsilon / (2.0 * n_draws)
    else:
        guess = zcdp.exponential_score_sensitivity(zcdp.rho_for(epsilon, delta)
                                                   / n_draws)
        sensitivity = calibrate(lambda s: quantile_event(s, n_draws), epsilon,
                                delta, ScaleBracket(guess)).value
    return quantile_draws(n_samples=n_samples, n_columns=n_columns,
                          score_sensitivity=sensitivity, quantiles=quantiles)


def moments_event(noise_multipliers, mechanism="gaussian"):
    """Event of :func:`skdpopt._bounds.private_moments` with the given noise.

    Parameters
    ----------
    noise_multipliers : (float or None, float or None)
        Noise of the sum and of the sum of squares, each in units of its
        L2 sensitivity (Gaussian: ``2 sqrt(d)`` and ``sqrt(d)``) or, for
        Laplace, the Laplace scale over the L1 sensitivity (``2 d`` and
        ``d``).  None: not released.
    mechanism : {"gaussian", "laplace"}, default="gaussian"
    """
    events = []
    for z in noise_multipliers:
        if z is None:
            continue
        if mechanism == "gaussian":
            events.append(GaussianMechanism(z))
        else:
            events.append(LaplaceMechanism(1.0 / z))
    return compose(*events)


# -- "auto" bounds -------------------------------------------------------------


def is_auto(value):
    """Whether a bound parameter asks for a private bound."""
    return isinstance(value, str) and value == "auto"


def auto_draws(rho, *, n_samples, n_bounds, epsilon, quantile=AUTO_QUANTILE):
    """The draws of ``n_bounds`` "auto" bounds costing ``rho`` together.

    An "auto" bound is a private upper quantile of a non-negative
    per-record statistic (``|y_i|``, ``max_j |x_ij|``, a gradient's norm),
    never below the grid's smallest positive candidate.  Without privacy
    (``epsilon = inf``) the "draws" are exact: the quantile, rounded up to
    the grid.

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
        return quantile_draws(n_samples=n_samples, n_columns=n_bounds,
                              score_sensitivity=np.inf, quantiles=(quantile,),
                              floor=SMALLEST_POSITIVE)
    return quantile_draws_for_rho(rho, n_samples=n_samples, n_columns=n_bounds,
                                  quantiles=(quantile,), floor=SMALLEST_POSITIVE)


def reliable_share(n_samples, rho, *, n_draws, low, high):
    """Share of ``rho`` that gives each of ``n_draws`` equal draws the score
    sensitivity at which a median-cell draw finds the data
    (:func:`median_cell_is_reliable`), within [low, high]: public
    quantities only."""
    needed = 2.0 * (np.log(len(DEFAULT_GRID) - 1) + TIE_MARGIN)
    sensitivity = needed / max(n_samples, 1)
    return float(np.clip(n_draws * sensitivity**2 / 2.0 / rho, low, high))
