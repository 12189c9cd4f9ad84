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
is centred as well as one at zero.  The nine releases cost the same in
zCDP units.  The derivation is in ``docs/privacy/targets.md``.
"""

from dataclasses import dataclass

import numpy as np

from .. import _bounds
from ..accounting import (
    EpsilonDeltaEvent,
    ExponentialMechanism,
    GaussianMechanism,
    LaplaceMechanism,
    compose,
    repeat,
)
from ..accounting.zcdp import exponential_score_sensitivity, gaussian_noise_multiplier

# Ranks of the bounds the first location's mean is clipped to, and of the
# window of the second among the |y_i - first location|: wide enough that
# a clipped mean stays near the bulk of a skewed target, narrow enough
# that the bounds (hence the noise) do not follow its tails.
LOCATION_RANKS = (0.05, 0.95)
WINDOW_RANK = 0.9
# Exponential-mechanism draws (3 for the bounds, 2 for the window, 2 for
# the scale) and all the releases (with the two noisy sums), each costing
# rho / N_RELEASES.
N_DRAWS = 7
N_RELEASES = 9


@dataclass(frozen=True)
class TargetDraws:
    """What a private target location and scale releases.

    A part of a plan, with its own event: seven exponential-mechanism
    draws of score sensitivity ``score_sensitivity`` and two noisy sums
    with noise multiplier ``noise_multiplier``, in the order ``3 draws,
    sum, 2 draws, sum, 2 draws``.

    Attributes
    ----------
    n_samples : int
    score_sensitivity : float
        Of each draw; ``inf`` without privacy.
    noise_multiplier : float
        Noise std (Gaussian) or scale (Laplace) of each clipped sum over its
        sensitivity (the width it is clipped to); 0 without privacy.
    location_ranks : (float, float)
        Effective ranks of the first bounds (moved inwards where the draws
        could not find them, see :func:`skdpopt._bounds.effective_quantiles`).
    window_rank : float
        Effective rank of the window among the ``|y_i - first location|``.
    scale_rank : float
        Effective rank of the scale among the ``|y_i - location|``.
    requested_scale_rank : float
        The rank asked for.
    mechanism : {"gaussian", "laplace"}
        The sums' noise ("laplace" for pure differential privacy).
    """

    n_samples: int
    score_sensitivity: float
    noise_multiplier: float
    location_ranks: tuple
    window_rank: float
    scale_rank: float
    requested_scale_rank: float
    mechanism: str = "gaussian"

    @property
    def event(self):
        """The releases' event (``EpsilonDeltaEvent(inf, 0)`` without privacy)."""
        if not np.isfinite(self.score_sensitivity):
            return EpsilonDeltaEvent(np.inf, 0.0)
        draw = ExponentialMechanism(self.score_sensitivity)
        total = (GaussianMechanism(self.noise_multiplier)
                 if self.mechanism == "gaussian"
                 else LaplaceMechanism(1.0 / self.noise_multiplier))
        return compose(repeat(draw, 3), total, repeat(draw, 2), total,
                       repeat(draw, 2))

    @property
    def quantiles(self):
        """The scale's effective rank, as a tuple (as for bound draws)."""
        return (self.scale_rank,)

    @property
    def lost(self):
        """Whether the rows and the budget are too few for the median-cell
        draws to find the target (public quantities only)."""
        return not _bounds.median_cell_is_reliable(self.n_samples,
                                                   self.score_sensitivity)

    @property
    def capped(self):
        """Whether a rank had to move inwards to the limit of
        :data:`skdpopt._bounds.MAX_TAIL` (public quantities only)."""
        return (self.scale_rank <= 1.0 - _bounds.MAX_TAIL < self.requested_scale_rank
                or self.location_ranks[0] >= _bounds.MAX_TAIL > LOCATION_RANKS[0])


def target_draws(rho, *, n_samples, epsilon, scale_quantile, pure=False):
    """The releases of a private target location and scale costing ``rho``.

    Parameters
    ----------
    rho : float
        zCDP cost of all nine releases together (each costs ``rho / 9``:
        a draw of score sensitivity D costs ``D^2 / 2``, a Gaussian sum of
        noise multiplier z ``1 / (2 z^2)``).
    n_samples : int
    epsilon : float
        The fit's budget (only whether it is infinite matters: then the
        releases are exact).
    scale_quantile : float
        Rank of the scale among the ``|y_i - location|``.
    pure : bool, default=False
        Laplace noise on the sums (pure DP: each then costs the pure
        epsilon ``1 / z = sqrt(2 rho / 9)``, as each draw does), instead of
        Gaussian.

    Returns
    -------
    TargetDraws
    """
    if epsilon == np.inf:
        return TargetDraws(n_samples, np.inf, 0.0, LOCATION_RANKS, WINDOW_RANK,
                           float(scale_quantile), float(scale_quantile))
    share = rho / N_RELEASES
    sensitivity = exponential_score_sensitivity(share)
    ranks = _bounds.effective_quantiles(
        (*LOCATION_RANKS, WINDOW_RANK, scale_quantile), n_samples, sensitivity)
    # A Gaussian of std z and a Laplace of scale z (sensitivities) both
    # cost 1 / (2 z^2) in zCDP units, the Laplace as a pure 1/z-DP release.
    return TargetDraws(n_samples, sensitivity, gaussian_noise_multiplier(share),
                       ranks[:2], ranks[2], ranks[3], float(scale_quantile),
                       "laplace" if pure else "gaussian")
