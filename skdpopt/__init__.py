"""skdpopt: differentially private optimisation as scikit-learn estimators."""

from .accounting import PrivacySpent
from .exceptions import (
    BudgetExceededError,
    LedgerError,
    PrivacyLeakError,
    PrivacyLeakWarning,
    UtilityWarning,
)
from .lasso import DPLasso
from .ledger import PrivacyLedger
from .logistic_simplex import DPLogisticSimplex
from .minimax import DPMinimaxClassifier
from .model_selection import DPGridSearchCV, DPRandomizedSearchCV
from .pipeline import PrivatePipeline, make_private_pipeline
from .preprocessing import DPMinMaxScaler, DPStandardScaler
from .sgd import DPSGDClassifier, DPSGDRegressor
from .synthetic import DPSyntheticData

__all__ = [
    "BudgetExceededError",
    "DPGridSearchCV",
    "DPLasso",
    "DPLogisticSimplex",
    "DPMinMaxScaler",
    "DPMinimaxClassifier",
    "DPRandomizedSearchCV",
    "DPSGDClassifier",
    "DPSGDRegressor",
    "DPStandardScaler",
    "DPSyntheticData",
    "LedgerError",
    "PrivacyLedger",
    "PrivacyLeakError",
    "PrivacyLeakWarning",
    "PrivacySpent",
    "PrivatePipeline",
    "UtilityWarning",
    "make_private_pipeline",
]
__version__ = "0.1.0.dev0"
