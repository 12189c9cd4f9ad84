"""The plan of a check that a public feature bound fits the data.

An estimator that clips its features to a public bound B (DPLasso,
DPLogisticSimplex) and predicts with the same clip learns nothing from a
column whose values all lie far beyond B: clipped, the column is a
constant.  Features in raw units (dollars, years) passed straight to such
an estimator do that silently.  The check counts, privately, the rows
with a value beyond ``FAR_FACTOR * B`` (one record moves the count by at
most 1: a Gaussian release) and the estimator warns when most rows are.
The derivation is in ``docs/privacy/clipping.md``.
"""

from dataclasses import dataclass

import numpy as np

from ..accounting import EpsilonDeltaEvent, GaussianMechanism, LaplaceMechanism
from ..accounting.zcdp import gaussian_noise_multiplier

# Share of a fit's budget (zCDP units) that the count costs: its noise
# (about 1 / sqrt(2 * 0.01 * rho) rows) is a few percent of n from a
# thousand rows at epsilon = 1.
CLIP_CHECK_SHARE = 0.01
# A row counts when some value lies beyond this many bounds.  Standardised
# columns (a DP scaler's output) reach it on a small share of the rows of
# the panel's design tables with B = 1, against every row for columns in
# raw units (measured by benchmarks/design_regression.py --task clip_check;
# docs/privacy/clipping.md quotes its table).
FAR_FACTOR = 4.0
# The estimator warns when the noisy share of such rows exceeds this.
MOST = 0.5


@dataclass(frozen=True)
class ClipCheck:
    """A noisy count of the rows with a value beyond ``FAR_FACTOR`` bounds.

    Attributes
    ----------
    noise_multiplier : float
        Noise std (Gaussian) or scale (Laplace) over the count's
        sensitivity (1); 0 without privacy.
    mechanism : {"gaussian", "laplace"}
        "laplace" for pure differential privacy.
    far_factor : float
        A row counts when some value lies beyond this many bounds.
    most : float
        The estimator warns when the released share of such rows exceeds
        this.
    """

    noise_multiplier: float
    mechanism: str = "gaussian"
    far_factor: float = FAR_FACTOR
    most: float = MOST

    @property
    def event(self):
        """One noisy count (``EpsilonDeltaEvent(inf, 0)`` without
        privacy)."""
        if self.noise_multiplier == 0:
            return EpsilonDeltaEvent(np.inf, 0.0)
        if self.mechanism == "laplace":
            return LaplaceMechanism(1.0 / self.noise_multiplier)
        return GaussianMechanism(self.noise_multiplier)


def clip_check(rho, *, epsilon, pure=False):
    """The check costing ``rho`` in zCDP units: a Gaussian of multiplier z
    costs ``1 / (2 z^2)``, a Laplace of scale z (pure ``1/z``-DP, for
    ``pure=True``) as much."""
    if epsilon == np.inf:
        return ClipCheck(0.0)
    return ClipCheck(gaussian_noise_multiplier(rho),
                     "laplace" if pure else "gaussian")
