"""Privacy accounting shared by every skdpopt estimator.

Plans describe everything a fit will release as an event tree
(:mod:`~skdpopt.accounting.events`), ask :func:`calibrate_event` for the
noise (or step size) that meets their target, and report what the fit
spends with :func:`privacy_spent` of that tree.
"""

from .accountant import Accountant, privacy_spent
from .calibration import (
    calibrate,
    calibrate_event,
    calibrate_noise_multiplier,
    clt_noise_multiplier,
)
from .events import (
    Composed,
    EpsilonDeltaEvent,
    ExponentialMechanism,
    GaussianMechanism,
    LaplaceMechanism,
    Parallel,
    PureDPMechanism,
    RepeatAndSelect,
    Repeated,
    SubsampledGaussianMechanism,
    compose,
    leaves,
    repeat,
)
from .spent import PrivacySpent

__all__ = [
    "Accountant",
    "Composed",
    "EpsilonDeltaEvent",
    "ExponentialMechanism",
    "GaussianMechanism",
    "LaplaceMechanism",
    "Parallel",
    "PrivacySpent",
    "PureDPMechanism",
    "RepeatAndSelect",
    "Repeated",
    "SubsampledGaussianMechanism",
    "calibrate",
    "calibrate_event",
    "calibrate_noise_multiplier",
    "clt_noise_multiplier",
    "compose",
    "leaves",
    "privacy_spent",
    "repeat",
]
