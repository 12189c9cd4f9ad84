"""scikit-learn's estimator checks over every public estimator."""

from sklearn.utils.estimator_checks import parametrize_with_checks

from skdpopt import (
    DPLasso,
    DPLogisticSimplex,
    DPMinimaxClassifier,
    DPMinMaxScaler,
    DPSGDClassifier,
    DPSGDRegressor,
    DPStandardScaler,
    DPSyntheticData,
)

ESTIMATORS = [
    DPSGDRegressor(),
    DPSGDClassifier(),
    DPLasso(),
    DPLasso(solver="frank_wolfe"),
    DPLogisticSimplex(),
    DPLogisticSimplex(solver="frank_wolfe"),
    DPMinimaxClassifier(),
    # The checks fit 10 numeric columns; at the default 8 bins that domain
    # has 8**10 = 1e9 cells, above the memory limit (a clear ValueError).
    DPSyntheticData(n_bins=3),
    DPStandardScaler(),
    DPStandardScaler(bounds=(-10, 10), delta=0.0),
    DPMinMaxScaler(),
    DPMinMaxScaler(bounds=(-10, 10)),
]

# No check is expected to fail; an entry here needs a reason a user would
# accept, written beside it.
EXPECTED_FAILED_CHECKS = {}


@parametrize_with_checks(
    ESTIMATORS,
    expected_failed_checks=lambda est: EXPECTED_FAILED_CHECKS.get(type(est), {}),
)
def test_sklearn_compatible(estimator, check):
    check(estimator)
