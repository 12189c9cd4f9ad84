"""skdpopt: differentially private optimisation as scikit-learn estimators."""

from .accounting import PrivacySpent
from .sgd import DPSGDClassifier, DPSGDRegressor

__all__ = ["DPSGDClassifier", "DPSGDRegressor", "PrivacySpent"]
__version__ = "0.1.0.dev0"
