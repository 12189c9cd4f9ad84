"""skdpopt: differentially private optimisation as scikit-learn estimators."""

from .accounting import PrivacySpent
from .lasso import DPLasso
from .logistic_simplex import DPLogisticSimplex
from .minimax import DPMinimaxClassifier
from .sgd import DPSGDClassifier, DPSGDRegressor
from .synthetic import DPSyntheticData

__all__ = [
    "DPLasso",
    "DPLogisticSimplex",
    "DPMinimaxClassifier",
    "DPSGDClassifier",
    "DPSGDRegressor",
    "DPSyntheticData",
    "PrivacySpent",
]
__version__ = "0.1.0.dev0"
