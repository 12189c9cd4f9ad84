"""Privacy plans: what each estimator's fit will release, made from public
quantities only (a module per estimator, DPMinimaxClassifier's split by
solver, and the modules they share)."""

from .base import PrivacyPlan

__all__ = ["PrivacyPlan"]
