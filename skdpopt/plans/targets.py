"""The plan of a private target location and scale (the regressors' "auto"
target handling).

A regression target far from zero (log wages around 6.7, prices around
2,000) must be centred before it is scaled: scaled but not centred, its
spread is a small fraction of its size, and clipping or a unit clip norm
keeps little of it.  The location and the scale are released in five
steps, each reading the target only through a statistic of bounded
sensitivity:

1. bounds ``[low, high]`` at ranks ``LOCATION_RANKS`` of ``y``: the grid
   cell holding the median, then the two ranks anchored at its ends
   (three exponential-mechanism draws on the public grid of private
   bounds);
2. a first location: the mean of ``clip(y_i, low, high)``, from the sum
   with noise (one record moves the sum by at most ``high - low``);
3. a window: the ``WINDOW_RANK`` quantile r of ``|y_i - location|`` (the
   grid cell holding the median, then the rank: two draws);
4. the location: the mean of ``y_i`` clipped to ``location +- r``, from
   the sum with noise (sensitivity ``2 r``);
5. the scale: an upper quantile of ``|y_i - location|`` (two draws).

The grid is geometric, so the bounds of step 1 are as coarse as the
target is far from zero (a candidate within 19% of 2,000 can be 400
away), and the noise of step 2 is proportional to their width.  Step 3
measures the window around that first location, at the target's own
scale plus that location's error, and step 4's noise is proportional to
the window: a target a thousand times further from zero than its spread
is centred as well as one at zero.

The median cells of steps 1 and 3 anchor everything after them: a wrong
cell, which the grid's bounds allow with probability up to
``exp(-TIE_MARGIN)`` at the rows and budget that
:func:`skdpopt.plans.bounds.median_cell_is_reliable` accepts, would put the
location anywhere on the grid, up to 2^60.  So these two draws get the
score sensitivity at which all wrong cells together weigh at most
``exp(-CENTRE_MARGIN)`` (5e-5) of the right one, and the other releases
the one at which their draws are reliable; all costs are in zCDP units
(a draw of score sensitivity D costs ``D^2 / 2``, a sum of noise
multiplier ``1 / D`` as much).  Where the rows and the budget are too few
for that (public quantities only), the target is not centred, and the
budget buys only the scale's two draws, of ``|y_i|``, whose errors cost
accuracy, never the output's range (the estimators warn).  The
derivation is in ``docs/privacy/targets.md``.
"""

import math
from dataclasses import dataclass

import numpy as np

from ..accounting import (
    EpsilonDeltaEvent,
    ExponentialMechanism,
    GaussianMechanism,
    LaplaceMechanism,
    compose,
    repeat,
)
from ..accounting.zcdp import exponential_score_sensitivity
from .bounds import (
    DEFAULT_GRID,
    MAX_TAIL,
    SMALLEST_POSITIVE,
    TIE_MARGIN,
    QuantileDraws,
    effective_quantiles,
    median_cell_is_reliable,
)

# Ranks of the bounds the first location's mean is clipped to, and of the
# window of the second among the |y_i - first location|: wide enough that
# a clipped mean stays near the bulk of a skewed target, narrow enough
# that the bounds (hence the noise) do not follow its tails.
LOCATION_RANKS = (0.05, 0.95)
WINDOW_RANK = 0.9
# Margins, in log-weight, of the median-cell draws that anchor the
# location (CENTRE_MARGIN) and of the others (the grid's TIE_MARGIN).
CENTRE_MARGIN = 10.0
_CELLS = math.log(len(DEFAULT_GRID) - 1)
ANCHOR_FACTOR = (_CELLS + CENTRE_MARGIN) / (_CELLS + TIE_MARGIN)
# The second sum's noise is the location's error: it gets LOCATION_WEIGHT
# times an ordinary draw's budget (half the noise of the first sum), so
# that where the draws are just reliable the location's noise is about 5%
# of the window (``2 r z / n`` with ``z D n / 2`` = 9.5).
LOCATION_WEIGHT = 4.0
# The scale's two draws get SCALE_WEIGHT times an ordinary draw's budget
# each: the upper rank a draw can aim at is limited by its score
# sensitivity (``effective_quantiles``), and a heavy-tailed target scaled
# at too low a rank is clipped hard (benchmarks/design_regression.py).
SCALE_WEIGHT = 4.0
# Cost of all the releases in units of one ordinary draw's: the two
# anchoring draws (ANCHOR_FACTOR^2 each), three ordinary draws, the first
# sum, the second and the scale's two draws.
N_RELEASES = 2 * ANCHOR_FACTOR**2 + 4 + LOCATION_WEIGHT + 2 * SCALE_WEIGHT


def centres(n_samples, score_sensitivity):
    """Whether ordinary draws of this score sensitivity find the median
    cell of ``n_samples`` values (:func:`skdpopt.plans.bounds.median_cell_is_reliable`),
    so that the anchoring ones, ``ANCHOR_FACTOR`` times sharper, find it
    with the margin ``CENTRE_MARGIN``."""
    return median_cell_is_reliable(n_samples, score_sensitivity)


def target_units(centre=True):
    """Cost of a target's releases in units of one ordinary draw's: all of
    them, or, for a target not centred (a model without intercept), the
    scale's two draws."""
    return N_RELEASES if centre else 2


def centring_share(n_samples, rho, *, n_releases=N_RELEASES, low, high):
    """Share of ``rho`` that lets :func:`target_draws` centre the target
    (releases of ``n_releases`` ordinary draws' cost together, each draw
    at the reliable score sensitivity), within ``[low, high]``: public
    quantities only."""
    sensitivity = 2.0 * (_CELLS + TIE_MARGIN) / max(n_samples, 1)
    return float(np.clip(n_releases * sensitivity**2 / 2.0 / rho, low, high))


@dataclass(frozen=True)
class TargetDraws:
    """What a private target location and scale releases.

    A part of a plan, with its own event, in the order the releases run:
    the median cell of y (score sensitivity ``anchor_sensitivity``), two
    ranks (``score_sensitivity``), a noisy sum (``noise_multiplier``), the
    median cell of ``|y - first location|`` (``anchor_sensitivity``), a
    rank, a noisy sum (``location_noise_multiplier``), and the scale's
    median cell and rank (``scale_sensitivity``).

    Attributes
    ----------
    n_samples : int
    score_sensitivity : float
        Of each ordinary draw; ``inf`` without privacy.
    anchor_sensitivity : float
        Of the two median-cell draws that anchor the location.
    noise_multiplier : float
        Noise std (Gaussian) or scale (Laplace) of the first clipped sum
        over its sensitivity (the width it is clipped to):
        ``1 / score_sensitivity``; 0 without privacy.
    location_noise_multiplier : float
        The same for the second sum, whose noise is the location's error:
        ``noise_multiplier / sqrt(LOCATION_WEIGHT)``.
    scale_sensitivity : float
        Of the scale's two draws: ``sqrt(SCALE_WEIGHT) * score_sensitivity``.
    location_ranks : (float, float)
        Effective ranks of the first bounds (moved inwards where the draws
        could not find them, see :func:`skdpopt.plans.bounds.effective_quantiles`).
    window_rank : float
        Effective rank of the window among the ``|y_i - first location|``.
    scale_rank : float
        Effective rank of the scale among the ``|y_i - location|``.
    requested_scale_rank : float
        The rank asked for.
    mechanism : {"gaussian", "laplace"}
        The sums' noise ("laplace" for pure differential privacy).
    centre : bool
        False where the budget could not centre the target
        (:func:`centres`): then only the scale's two draws run, on
        ``|y_i|`` (location 0).
    """

    n_samples: int
    score_sensitivity: float
    anchor_sensitivity: float
    noise_multiplier: float
    location_noise_multiplier: float
    scale_sensitivity: float
    location_ranks: tuple
    window_rank: float
    scale_rank: float
    requested_scale_rank: float
    mechanism: str = "gaussian"
    centre: bool = True

    @property
    def event(self):
        """The releases' event (``EpsilonDeltaEvent(inf, 0)`` without privacy)."""
        if not np.isfinite(self.score_sensitivity):
            return EpsilonDeltaEvent(np.inf, 0.0)
        draw = ExponentialMechanism(self.score_sensitivity)
        scale = ExponentialMechanism(self.scale_sensitivity)
        if not self.centre:
            return repeat(scale, 2)
        anchor = ExponentialMechanism(self.anchor_sensitivity)
        first, second = (
            GaussianMechanism(z) if self.mechanism == "gaussian"
            else LaplaceMechanism(1.0 / z)
            for z in (self.noise_multiplier, self.location_noise_multiplier))
        return compose(anchor, repeat(draw, 2), first, anchor, draw, second,
                       repeat(scale, 2))

    @property
    def bounds_draws(self):
        """Step 1's draws (the median cell of y, then the two ranks)."""
        return QuantileDraws(self.n_samples, 1, tuple(self.location_ranks),
                             self.score_sensitivity, LOCATION_RANKS,
                             anchor_sensitivity=self.anchor_sensitivity)

    @property
    def window_draws(self):
        """Step 3's draws (the median cell of ``|y - first location|``,
        then the window's rank), never below the grid's smallest positive
        candidate."""
        return QuantileDraws(self.n_samples, 1, (self.window_rank,),
                             self.score_sensitivity, (WINDOW_RANK,),
                             SMALLEST_POSITIVE,
                             anchor_sensitivity=self.anchor_sensitivity)

    @property
    def scale_draws(self):
        """Step 5's two draws (of ``|y_i|`` where the target is not
        centred), never below the grid's smallest positive candidate."""
        return QuantileDraws(self.n_samples, 1, (self.scale_rank,),
                             self.scale_sensitivity, (self.requested_scale_rank,),
                             SMALLEST_POSITIVE)

    @property
    def quantiles(self):
        """The scale's effective rank, as a tuple (as for bound draws)."""
        return (self.scale_rank,)

    @property
    def lost(self):
        """Whether the rows and the budget are too few for the scale's
        median-cell draw to find the target (public quantities only)."""
        return not median_cell_is_reliable(self.n_samples,
                                                   self.scale_sensitivity)

    @property
    def capped(self):
        """Whether a rank had to move inwards to the limit of
        :data:`skdpopt.plans.bounds.MAX_TAIL` (public quantities only)."""
        return (self.scale_rank <= 1.0 - MAX_TAIL < self.requested_scale_rank
                or (self.centre
                    and self.location_ranks[0] >= MAX_TAIL > LOCATION_RANKS[0]))


def target_draws(rho, *, n_samples, epsilon, scale_quantile, pure=False,
                 centre=True):
    """The releases of a private target location and scale costing ``rho``.

    Parameters
    ----------
    rho : float
        zCDP cost of all the releases together: ``N_RELEASES`` units of
        ``D^2 / 2``, D the ordinary draws' score sensitivity.
    n_samples : int
    epsilon : float
        The fit's budget (only whether it is infinite matters: then the
        releases are exact).
    scale_quantile : float
        Rank of the scale among the ``|y_i - location|``.
    pure : bool, default=False
        Laplace noise on the sums (pure DP: a Laplace of scale ``1 / D``
        sensitivities is D-DP, ``D^2 / 2`` in zCDP units), instead of
        Gaussian.
    centre : bool, default=True
        False: never centre (a model without intercept fits the targets
        as they are); the scale's two draws of ``|y_i|`` get the whole
        ``rho``.

    Returns
    -------
    TargetDraws
        With ``centre=False`` where the ordinary draws would not be
        reliable (:func:`centres`): then the scale's two draws cost
        ``rho / 2`` each.
    """
    if epsilon == np.inf:
        return TargetDraws(n_samples, np.inf, np.inf, 0.0, 0.0, np.inf,
                           LOCATION_RANKS, WINDOW_RANK, float(scale_quantile),
                           float(scale_quantile), centre=centre)
    sensitivity = exponential_score_sensitivity(rho / N_RELEASES)
    if not (centre and centres(n_samples, sensitivity)):
        # Not centred: the scale's two draws get the whole rho.
        sensitivity = exponential_score_sensitivity(rho / 2)
        scale = effective_quantiles((scale_quantile,), n_samples,
                                            sensitivity)[0]
        return TargetDraws(n_samples, sensitivity, sensitivity, 0.0, 0.0,
                           sensitivity, LOCATION_RANKS, WINDOW_RANK, scale,
                           float(scale_quantile), centre=False)
    ranks = effective_quantiles(
        (*LOCATION_RANKS, WINDOW_RANK), n_samples, sensitivity)
    scale_sensitivity = np.sqrt(SCALE_WEIGHT) * sensitivity
    scale = effective_quantiles((scale_quantile,), n_samples,
                                        scale_sensitivity)[0]
    # A Gaussian of std z and a Laplace of scale z (sensitivities) both
    # cost 1 / (2 z^2) in zCDP units, the Laplace as a pure 1/z-DP release.
    return TargetDraws(n_samples, sensitivity, ANCHOR_FACTOR * sensitivity,
                       1.0 / sensitivity,
                       1.0 / (np.sqrt(LOCATION_WEIGHT) * sensitivity),
                       scale_sensitivity, ranks[:2], ranks[2], scale,
                       float(scale_quantile), "laplace" if pure else "gaussian")
