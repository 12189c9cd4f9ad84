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
# Located bounds (see ``QuantileDraws.location_cells``): the released median
# cell of the grid is cut into this many equal cells and the one holding
# the median is drawn: the location is then known to 1/(2 * 4096) of the
# grid cell's width (0.19 / 8192 of its magnitude: +-2.3e-5 of it, 0.05
# for a year, 23 at 1e6).
LOCATION_CELLS = 4096
# Cost of that draw in units of one rank draw's (zCDP: its score
# sensitivity is sqrt(LOCATION_WEIGHT) times theirs).
LOCATION_WEIGHT = 1.0
# Weight of the located ranks' prior per doubling of the offset from the
# location (see ``QuantileDraws.location_cells``): lighter than
# PRIOR_WEIGHT, because the offsets start at 0 whatever the column's
# magnitude, so reaching a bound 2^k from the location costs k times this
# (a quarter of what PRIOR_WEIGHT would charge), while the candidates
# beyond the data still weigh at most ``tied_weight(1.0)`` = 6.3 times the
# nearest together.
LOCATED_PRIOR_WEIGHT = 1.0

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


def effective_quantiles(quantiles, n_samples, score_sensitivity,
                        prior_weight=PRIOR_WEIGHT):
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
    prior_weight : float, default=PRIOR_WEIGHT
        Of the draws' prior (see :func:`tied_weight`).

    Returns
    -------
    tuple of float
    """
    if not np.isfinite(score_sensitivity):
        return tuple(float(q) for q in quantiles)
    margin = math.log(tied_weight(prior_weight)) + TIE_MARGIN
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


def draws_per_column(n_quantiles, location_cells=0):
    """Draws of one column: the median cell, the location (when
    ``location_cells``) and one per rank."""
    return 1 + (1 if location_cells else 0) + n_quantiles


def draw_costs_per_column(n_quantiles, location_cells=0):
    """Cost of one column's draws in units of one rank draw's: the
    location draw costs :data:`LOCATION_WEIGHT`."""
    return 1 + (LOCATION_WEIGHT if location_cells else 0) + n_quantiles


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
    location_cells : int
        0: the ranks are drawn from the grid itself, anchored at the median
        cell.  Otherwise the bounds are *located*: one more draw per column
        (score sensitivity :attr:`location_sensitivity`) picks which of
        ``location_cells`` equal cells of the median cell holds the median
        (its midpoint is the location ``m``), and the ranks are drawn from
        the grid shifted to ``m`` (candidates ``m + c``), anchored at ``m``
        with the grid's prior on the offsets ``c``: a column far from 0
        relative to its spread (years, prices) gets bounds at the
        resolution of its spread, not of its magnitude, and a column whose
        median is near 0 the grid's own candidates.
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
    location_cells: int = 0
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
        """The median cell, the location cell when located, one draw per
        rank."""
        return draws_per_column(len(self.quantiles), self.location_cells)

    @property
    def location_sensitivity(self):
        """Score sensitivity of the location draw (when located):
        ``sqrt(LOCATION_WEIGHT)`` times the others'."""
        return math.sqrt(LOCATION_WEIGHT) * self.score_sensitivity

    @property
    def event(self):
        """The draws' event (``EpsilonDeltaEvent(inf, 0)`` without privacy)."""
        if not np.isfinite(self.score_sensitivity) or (
                self.anchor_sensitivity is None and not self.location_cells):
            return quantile_event(self.score_sensitivity,
                                  self.n_columns * self.draws_per_column)
        parts = [quantile_event(self.median_sensitivity, self.n_columns),
                 quantile_event(self.score_sensitivity,
                                self.n_columns * len(self.quantiles))]
        if self.location_cells:
            parts.append(quantile_event(self.location_sensitivity, self.n_columns))
        return compose(*parts)

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


# Candidates per doubling of a located scale's draws (see
# ``LocationScaleDraws``): a median-type draw needs no finer grid (the
# location is refined inside the cell, and the scale only sets the bounds
# and is within a factor 2^(1/COARSE_PER_DOUBLING) of the data's), and
# fewer cells are found with less budget.
COARSE_PER_DOUBLING = 1
COARSE_GRID = bound_grid(per_doubling=COARSE_PER_DOUBLING)


@dataclass(frozen=True)
class LocationScaleDraws:
    """The draws of a located scale of ``n_columns`` columns
    (:func:`skdpopt._bounds.private_location_scale`).

    Per column, three exponential-mechanism draws, each a median-type draw
    (every candidate beyond the data is ``n / 2`` from the target, on both
    sides, so no prior and no moving of ranks is needed): the cell of the
    grid holding the median, the location ``m`` in it (one of
    ``location_cells`` equal cells), and the cell of the non-negative grid
    holding the median of ``|x_i - m|`` (its upper end is the scale ``s``).
    The bounds ``[m - spread[0] s, m + spread[1] s]`` are post-processing.

    Attributes
    ----------
    n_samples, n_columns : int
    score_sensitivity : float
        Of each draw; ``inf`` without privacy.
    spread : (float, float)
        The bounds' distances from the location, in units of the scale.
    location_cells : int, default=LOCATION_CELLS
    """

    n_samples: int
    n_columns: int
    score_sensitivity: float
    spread: tuple
    location_cells: int = LOCATION_CELLS
    scale_rank: float = 0.5
    draws_per_column = 3

    @property
    def grid(self):
        """The public candidates (:data:`COARSE_GRID`)."""
        return COARSE_GRID

    @property
    def scale_grid(self):
        """The candidates of the scale: 0 and the grid's positive ones."""
        return COARSE_GRID[COARSE_GRID >= 0]

    @property
    def event(self):
        """``3 n_columns`` draws (``EpsilonDeltaEvent(inf, 0)`` without
        privacy)."""
        return quantile_event(self.score_sensitivity,
                              self.n_columns * self.draws_per_column)

    @property
    def lost(self):
        """Whether the budget and the rows are too few for the median-cell
        draw to find the data (public quantities only; the location draw's
        cells are more, but any of them is inside the median cell)."""
        return not median_cell_is_reliable(self.n_samples, self.score_sensitivity,
                                           len(self.grid))

    #: Never: the draws aim at medians, which need no moving inwards.
    capped = False


def quantile_draws(*, n_samples, n_columns, score_sensitivity,
                   quantiles=(0.01, 0.99), floor=-np.inf, location_cells=0,
                   anchor_sensitivity=None):
    """Draws of the given score sensitivity, their ranks moved inwards where
    the draws could not find them (public quantities only).

    Returns
    -------
    QuantileDraws
    """
    weight = LOCATED_PRIOR_WEIGHT if location_cells else PRIOR_WEIGHT
    effective = effective_quantiles(quantiles, n_samples, score_sensitivity,
                                    weight)
    return QuantileDraws(n_samples, n_columns, effective, float(score_sensitivity),
                         tuple(float(q) for q in quantiles), floor,
                         prior_weight=weight, location_cells=int(location_cells),
                         anchor_sensitivity=anchor_sensitivity)


def quantile_draws_for_rho(rho, *, n_samples, n_columns, quantiles=(0.01, 0.99),
                           floor=-np.inf, location_cells=0):
    """Draws that together cost ``rho`` in zCDP units (each draw is
    bounded-range, ``D^2 / 2``-zCDP): for a plan that splits its budget in
    rho and calibrates the whole.  All draws get the same share, but for
    the location draw (with ``location_cells``), which gets
    :data:`LOCATION_WEIGHT` shares."""
    per_column = draw_costs_per_column(len(quantiles), location_cells)
    sensitivity = zcdp.exponential_score_sensitivity(rho / (n_columns * per_column))
    return quantile_draws(n_samples=n_samples, n_columns=n_columns,
                          score_sensitivity=sensitivity, quantiles=quantiles,
                          floor=floor, location_cells=location_cells)


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
