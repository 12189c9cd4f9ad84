"""Privacy plans: what each estimator's fit will release, made from public
quantities only (one module per estimator)."""

from .base import PrivacyPlan

__all__ = ["PrivacyPlan"]
