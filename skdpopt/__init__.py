"""skdpopt: differentially private optimisation as scikit-learn estimators."""

from .accounting import PrivacySpent
from .lasso import DPLasso
from .sgd import DPSGDClassifier, DPSGDRegressor

__all__ = ["DPLasso", "DPSGDClassifier", "DPSGDRegressor", "PrivacySpent"]
__version__ = "0.1.0.dev0"
