"""Privacy accounting shared by every skdpopt estimator.

Plans describe everything a fit will release as an event tree
(:mod:`~skdpopt.accounting.events`), ask :func:`calibrate` for the
noise (or step size, or budget) that meets their target, and report what the fit
spends with :func:`privacy_spent` of that tree.
"""

from .accountant import Accountant, privacy_spent
from .calibration import (
    Bracket,
    BudgetBracket,
    Calibrated,
    NoiseBracket,
    RhoBracket,
    ScaleBracket,
    calibrate,
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
    "Bracket",
    "BudgetBracket",
    "Calibrated",
    "Composed",
    "EpsilonDeltaEvent",
    "ExponentialMechanism",
    "GaussianMechanism",
    "LaplaceMechanism",
    "NoiseBracket",
    "Parallel",
    "PrivacySpent",
    "PureDPMechanism",
    "RepeatAndSelect",
    "Repeated",
    "RhoBracket",
    "ScaleBracket",
    "SubsampledGaussianMechanism",
    "calibrate",
    "clt_noise_multiplier",
    "compose",
    "leaves",
    "privacy_spent",
    "repeat",
]
