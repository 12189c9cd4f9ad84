"""The checks a fit releases to warn about itself.

Warnings may be computed only from public or released quantities.  Three
checks release, with noise accounted in the fit's plan, one number each:

* the fit check (both linear classifiers): the sum over the training rows
  of the fitted model's gain in log-likelihood over the class prior, each
  row's gain clipped to ``[-bound, bound]`` and weighted in [0, 1] so that
  every class weighs as much as the smallest (from the released totals),
  so that replacing one record moves the sum by at most ``2 bound``; the
  fit warns when the released sum is not clearly positive;
* the clip check (DPLogisticSimplex): the sum over the rows of the share
  of the row's features outside ``[-feature_bound, feature_bound]``, each
  term in [0, 1] (sensitivity 1); the fit warns when most values are
  clipped, which the model then never sees (in fit or in predict);
* the regression fit check (DPSGDRegressor, DPLasso), three releases in
  units of the target's released scale: the sum of the centred targets
  clipped to ``[-mean_bound, mean_bound]`` (sensitivity ``2 mean_bound``),
  whose mean stands for the training mean; then the sums over the rows
  of the fitted model's gain in squared error over two constants, the
  released location and that mean, each row's gain clipped to
  ``[-bound, bound]`` (sensitivity ``2 bound`` each); the fit warns
  unless both sums are clearly positive.

The derivations are in ``docs/privacy/classes.md`` and
``docs/privacy/targets.md``.
"""

import math
from dataclasses import dataclass

import numpy as np

from ..accounting import EpsilonDeltaEvent, GaussianMechanism, LaplaceMechanism, repeat

# The fit check: each training row's gain in log-likelihood of the fitted
# model over the class prior, clipped to [-FIT_CHECK_BOUND, FIT_CHECK_BOUND]
# nats, summed and released on FIT_CHECK_SHARE of the budget; the fit warns
# when the released sum is not above FIT_CHECK_SPREADS standard deviations
# of its noise (the model is then not clearly better than the prior).  A
# tight bound makes the sum count rows the model helps against rows it
# hurts, with little noise (chosen on the panel's design half against
# wider bounds).
FIT_CHECK_SHARE = 0.02
FIT_CHECK_BOUND = 0.1
FIT_CHECK_SPREADS = 2.0
# The regression fit check, on REGRESSION_CHECK_SHARE of the budget split
# evenly over its REGRESSION_CHECK_RELEASES releases (the same zCDP, or
# pure epsilon, as one release on the whole share: the fit's calibration
# is unchanged by the split): the centred targets'
# sum clipped to +-REGRESSION_MEAN_BOUND target scales (its mean stands
# for the training mean, the panel's trivial model: the released location
# is a clipped mean, nearer the bulk of a skewed target than the mean),
# then each training row's gain in squared error over the location and
# over that mean, in squared target scales, clipped to
# [-REGRESSION_CHECK_BOUND, REGRESSION_CHECK_BOUND] and summed.  The
# clipped gains favour a constant near the bulk, squared error the mean:
# the model must clearly beat both (margins in RegressionCheckPlan).
# The bounds were chosen on the panel's design half and generated data
# (benchmarks/design_fit_check.py).
REGRESSION_CHECK_SHARE = 0.02
REGRESSION_CHECK_BOUND = 0.1
REGRESSION_MEAN_BOUND = 0.5
REGRESSION_CHECK_RELEASES = 3
# The clip check's share of the budget, and the margin of its warning
# (the released share of clipped values must exceed one half by this many
# standard deviations of its noise).
CLIP_CHECK_SHARE = 0.01
CLIP_CHECK_SPREADS = 2.0


@dataclass(frozen=True)
class FitCheckPlan:
    """The release of the fit check's sum.

    Attributes
    ----------
    noise : {"gaussian", "laplace", None}
    noise_scale : float
        Standard deviation (Gaussian) or scale (Laplace) of the noise on
        the sum; replacing one record moves it by at most ``2 bound``.
    bound : float
        Each row's gain is clipped to ``[-bound, bound]``.
    event : event
    """

    noise: str
    noise_scale: float
    bound: float
    event: object

    @property
    def spread(self):
        """Standard deviation of the noise."""
        return self.noise_scale * (math.sqrt(2.0) if self.noise == "laplace" else 1.0)


def plan_fit_check(noise_multiplier, pure=False, bound=FIT_CHECK_BOUND):
    """Plan the fit check's release: noise over its sensitivity ``2 bound``
    (Gaussian, or Laplace with ``pure``); 0: no privacy, no noise."""
    if noise_multiplier == 0:
        return FitCheckPlan(None, 0.0, bound, EpsilonDeltaEvent(np.inf, 0.0))
    if pure:
        return FitCheckPlan("laplace", noise_multiplier * 2.0 * bound, bound,
                            LaplaceMechanism(1.0 / noise_multiplier))
    return FitCheckPlan("gaussian", noise_multiplier * 2.0 * bound, bound,
                        GaussianMechanism(noise_multiplier))


@dataclass(frozen=True)
class RegressionCheckPlan:
    """The regression fit check's three releases, each with the same
    noise over its sensitivity: the clipped target sum (``2 mean_bound``),
    then the two sums of clipped gains (``2 bound`` each).

    Attributes
    ----------
    noise : {"gaussian", "laplace", None}
    noise_multiplier : float
        Each release's noise standard deviation (Gaussian) or scale
        (Laplace) over its sensitivity; 0 without privacy.
    bound : float
        Each row's gain is clipped to ``[-bound, bound]``.
    mean_bound : float
        Each centred target is clipped to ``[-mean_bound, mean_bound]``.
    event : event
        The three releases.
    """

    noise: str
    noise_multiplier: float
    bound: float
    mean_bound: float
    event: object

    @property
    def noise_scale(self):
        """Scale of the noise on each sum of gains."""
        return self.noise_multiplier * 2.0 * self.bound

    @property
    def mean_noise_scale(self):
        """Scale of the noise on the clipped target sum."""
        return self.noise_multiplier * 2.0 * self.mean_bound

    @property
    def spread(self):
        """Standard deviation of the noise on each sum of gains."""
        return self.noise_scale * (math.sqrt(2.0) if self.noise == "laplace" else 1.0)

    @property
    def mean_spread(self):
        """Standard deviation of the noise on the clipped target sum."""
        return self.mean_noise_scale * (
            math.sqrt(2.0) if self.noise == "laplace" else 1.0)

    def clearly_better(self, over_location, over_mean, n_samples):
        """Whether the released gains show the model better than both
        constants (released values against public margins).

        Each released sum must exceed ``FIT_CHECK_SPREADS`` standard
        deviations of its noise, one-sided.  The gain over the released
        mean also has that mean's noise ``e = N / n`` (N the noise on the
        clipped sum): the gain over a constant exceeds the gain over the
        training mean by ``n`` times their squared distance, so the noise
        lifts the expected gain by ``n E[e^2] = mean_spread^2 / n``, which
        its margin adds.

        Parameters
        ----------
        over_location, over_mean : float
            The released sums of gains over the location and the mean.
        n_samples : int
            Public.

        Returns
        -------
        bool
            True without noise (no privacy), as the other checks.
        """
        if self.noise is None:  # no privacy: nothing is checked
            return True
        margin = FIT_CHECK_SPREADS * self.spread
        lift = self.mean_spread ** 2 / n_samples
        return over_location > margin and over_mean > margin + lift


def plan_regression_check(noise_multiplier, pure=False):
    """Plan the regression fit check on a budget worth one release of
    multiplier ``noise_multiplier`` (0: no privacy, no noise), split evenly
    over its releases: Gaussian of multiplier ``sqrt(k) noise_multiplier``
    each (the same zCDP), or (``pure``) Laplace of ``k noise_multiplier``
    sensitivities each (the same pure epsilon), k the number of releases."""
    k = REGRESSION_CHECK_RELEASES
    bounds = {"bound": REGRESSION_CHECK_BOUND, "mean_bound": REGRESSION_MEAN_BOUND}
    if noise_multiplier == 0:
        return RegressionCheckPlan(None, 0.0, event=EpsilonDeltaEvent(np.inf, 0.0),
                                   **bounds)
    if pure:
        each = k * noise_multiplier
        return RegressionCheckPlan("laplace", each,
                                   event=repeat(LaplaceMechanism(1.0 / each), k),
                                   **bounds)
    each = math.sqrt(k) * noise_multiplier
    return RegressionCheckPlan("gaussian", each,
                               event=repeat(GaussianMechanism(each), k), **bounds)


@dataclass(frozen=True)
class ClipCheckPlan:
    """The release of the clip check's sum (sensitivity 1).

    Attributes
    ----------
    noise : {"gaussian", "laplace", None}
    noise_scale : float
        Standard deviation (Gaussian) or scale (Laplace) of the noise.
    event : event
    """

    noise: str
    noise_scale: float
    event: object

    @property
    def spread(self):
        """Standard deviation of the noise."""
        return self.noise_scale * (math.sqrt(2.0) if self.noise == "laplace" else 1.0)


def plan_clip_check(noise_multiplier, pure=False):
    """Plan the clip check's release (noise over sensitivity 1); 0: no
    privacy, no noise."""
    if noise_multiplier == 0:
        return ClipCheckPlan(None, 0.0, EpsilonDeltaEvent(np.inf, 0.0))
    if pure:
        return ClipCheckPlan("laplace", noise_multiplier,
                             LaplaceMechanism(1.0 / noise_multiplier))
    return ClipCheckPlan("gaussian", noise_multiplier,
                         GaussianMechanism(noise_multiplier))
