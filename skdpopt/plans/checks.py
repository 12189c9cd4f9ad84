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
* the regression fit check (DPSGDRegressor, DPLasso): the sum over the
  training rows of the fitted model's gain in squared error over the
  trivial model (the released location), in units of the target's
  released (or public) scale, each row's gain clipped to
  ``[-bound, bound]`` (sensitivity ``2 bound``); the fit warns when the
  released sum is not clearly positive.

The derivations are in ``docs/privacy/classes.md`` and
``docs/privacy/targets.md``.
"""

import math
from dataclasses import dataclass

import numpy as np

from ..accounting import EpsilonDeltaEvent, GaussianMechanism, LaplaceMechanism

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
# The regression fit check: each training row's gain in squared error over
# the trivial model, in squared target scales, clipped to
# [-REGRESSION_CHECK_BOUND, REGRESSION_CHECK_BOUND], summed and released
# on REGRESSION_CHECK_SHARE of the budget; the fit warns when the sum is
# not above FIT_CHECK_SPREADS standard deviations of its noise.
REGRESSION_CHECK_SHARE = 0.02
REGRESSION_CHECK_BOUND = 0.1
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
