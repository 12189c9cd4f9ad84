"""One extreme record must not turn a fit into inf or NaN.

A neighbouring dataset that differs from an ordinary one by a single row
with an enormous feature value (far above what its squared norm can hold)
must still give finite fitted outputs: a non-finite output would tell the
two datasets apart with probability one, whatever the privacy budget.
"""

import numpy as np
import pytest
import scipy.sparse as sp

from skdpopt import (
    DPLasso,
    DPLogisticSimplex,
    DPMinimaxClassifier,
    DPSGDClassifier,
    DPSGDRegressor,
    DPSyntheticData,
)

N_SAMPLES, N_FEATURES = 500, 3

# (value, dtype): beyond sqrt(float max) in float64 (1e200), near the float64
# maximum (1e300, whose square and whose sum with itself overflow), and beyond
# sqrt(float32 max) for float32 input, which estimators accept as is.
EXTREMES = [
    pytest.param(1e200, np.float64, id="1e200-float64"),
    pytest.param(1e300, np.float64, id="1e300-float64"),
    pytest.param(3e19, np.float32, id="3e19-float32"),
]


def _neighbours(value, dtype, seed=0):
    """An ordinary dataset and its neighbour whose first row is extreme."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(N_SAMPLES, N_FEATURES))
    y = (X[:, 0] - 0.5 * X[:, 1] + 0.3 * rng.normal(size=N_SAMPLES) > 0)
    y = y.astype(int)
    X_extreme = X.copy()
    X_extreme[0] = [value, -value, 0.0]
    return X.astype(dtype), X_extreme.astype(dtype), y, rng


def _sgd_regressor(sampling):
    # Batches of nearly every row, so that the extreme row is in the first
    # step's batch, where the model is zero and its residual is exactly 0.
    return lambda: DPSGDRegressor(epsilon=1.0, delta=1e-5, sampling=sampling,
                                  batch_size=490, max_iter=5, random_state=0)


ESTIMATORS = {
    "sgd-regressor-poisson": _sgd_regressor("poisson"),
    "sgd-regressor-full": _sgd_regressor("full"),
    "sgd-regressor-single_pass": _sgd_regressor("single_pass"),
    "sgd-classifier": lambda: DPSGDClassifier(epsilon=1.0, delta=1e-5,
                                              random_state=0),
    "lasso-greedy_cd": lambda: DPLasso(alpha=0.01, epsilon=1.0, delta=1e-5,
                                       solver="greedy_cd", random_state=0),
    "lasso-frank_wolfe": lambda: DPLasso(alpha=0.01, epsilon=1.0, delta=1e-5,
                                         solver="frank_wolfe", random_state=0),
    "simplex-mirror_descent": lambda: DPLogisticSimplex(
        epsilon=1.0, delta=1e-5, solver="mirror_descent", random_state=0),
    "simplex-frank_wolfe": lambda: DPLogisticSimplex(
        epsilon=1.0, delta=1e-5, solver="frank_wolfe", random_state=0),
    "minimax": lambda: DPMinimaxClassifier(epsilon=1.0, delta=1e-5,
                                           random_state=0),
}


def _fitted_outputs(estimator, X, y, X_test, sensitive):
    if "classes" in estimator.get_params():
        estimator.set_params(classes=[0, 1])  # public labels: no warning
    if isinstance(estimator, DPMinimaxClassifier):
        estimator.fit(X, y, sensitive_features=sensitive)
    else:
        estimator.fit(X, y)
    outputs = [np.asarray(estimator.coef_, dtype=float),
               np.asarray(estimator.intercept_, dtype=float),
               np.asarray(estimator.predict(X_test), dtype=float)]
    if hasattr(estimator, "decision_function"):
        outputs.append(np.asarray(estimator.decision_function(X_test)))
    return outputs


@pytest.mark.parametrize("value, dtype", EXTREMES)
@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_extreme_row_gives_finite_fit(name, value, dtype):
    X, X_extreme, y, rng = _neighbours(value, dtype)
    y_fit = (X[:, 0] - 0.5 * X[:, 1]) / 4.0 if "regressor" in name else y
    if "regressor" in name:
        y_fit[0] = 0.0
    sensitive = rng.choice(["a", "b"], size=N_SAMPLES)
    X_test = X[1:50].astype(np.float64)
    for data in (X, X_extreme):
        for output in _fitted_outputs(ESTIMATORS[name](), data, y_fit,
                                      X_test, sensitive):
            assert np.all(np.isfinite(output)), (name, output)


@pytest.mark.parametrize("value, dtype", EXTREMES)
@pytest.mark.parametrize("bounds", [None, "declared"])
def test_synthetic_data_extreme_row_gives_finite_samples(value, dtype, bounds):
    X, X_extreme, _, _ = _neighbours(value, dtype)
    declared = None if bounds is None else [(-4.0, 4.0)] * N_FEATURES
    for data in (X, X_extreme):
        generator = DPSyntheticData(epsilon=1.0, delta=1e-9, bounds=declared,
                                    random_state=0).fit(data)
        samples = np.asarray(generator.sample(200), dtype=float)
        assert np.all(np.isfinite(samples))


@pytest.mark.parametrize("value, dtype", EXTREMES)
@pytest.mark.parametrize("name", [n for n in ESTIMATORS if n.startswith("sgd")])
def test_extreme_row_gives_finite_fit_sparse(name, value, dtype):
    X, X_extreme, y, rng = _neighbours(value, dtype)
    y_fit = np.zeros(N_SAMPLES) if "regressor" in name else y
    X_test = X[1:50].astype(np.float64)
    for data in (sp.csr_matrix(X), sp.csr_matrix(X_extreme)):
        for output in _fitted_outputs(ESTIMATORS[name](), data, y_fit,
                                      X_test, None):
            assert np.all(np.isfinite(output)), (name, output)
