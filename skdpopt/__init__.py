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
from .sgd import DPSGDClassifier, DPSGDRegressor
from .synthetic import DPSyntheticData

__all__ = [
    "BudgetExceededError",
    "DPLasso",
    "DPLogisticSimplex",
    "DPMinimaxClassifier",
    "DPSGDClassifier",
    "DPSGDRegressor",
    "DPSyntheticData",
    "LedgerError",
    "PrivacyLedger",
    "PrivacyLeakError",
    "PrivacyLeakWarning",
    "PrivacySpent",
    "UtilityWarning",
]
__version__ = "0.1.0.dev0"
