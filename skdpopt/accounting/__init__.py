"""Privacy accounting shared by every skdpopt estimator.

Estimators describe the mechanisms a planned run will compose, ask
:func:`calibrate` for the noise (or step size) that meets their target, and
record what was spent as a :class:`PrivacySpent`.
"""

from .accountant import Accountant
from .calibration import calibrate, calibrate_noise_multiplier
from .events import (
    ExponentialMechanism,
    GaussianMechanism,
    LaplaceMechanism,
    PureDPMechanism,
    SubsampledGaussianMechanism,
)
from .spent import PrivacySpent

__all__ = [
    "Accountant",
    "ExponentialMechanism",
    "GaussianMechanism",
    "LaplaceMechanism",
    "PrivacySpent",
    "PureDPMechanism",
    "SubsampledGaussianMechanism",
    "calibrate",
    "calibrate_noise_multiplier",
]
