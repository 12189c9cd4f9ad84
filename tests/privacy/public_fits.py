"""Every public estimator, transformer and pipeline, with a fit for each of
its solver options: what the privacy tests run over.

``FITS`` must cover every class that :data:`skdpopt.__all__` exports and
that fits on data (``test_records.py`` checks it), so a new public class
fails the privacy tests until it joins this list.
"""

from dataclasses import dataclass
from typing import Callable

import numpy as np
from sklearn.base import BaseEstimator

import skdpopt
from skdpopt import (
    DPLasso,
    DPLogisticSimplex,
    DPMinimaxClassifier,
    DPMinMaxScaler,
    DPSGDClassifier,
    DPSGDRegressor,
    DPStandardScaler,
    DPSyntheticData,
    PrivatePipeline,
    make_private_pipeline,
)
from skdpopt.model_selection import DPGridSearchCV, DPRandomizedSearchCV

EPSILON, DELTA = 1.0, 1e-6
N_ROWS = 400


def _regression():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(N_ROWS, 3))
    y = np.clip(X @ [0.5, -0.3, 0.0] + 0.1 * rng.normal(size=N_ROWS), -1, 1)
    return (X, y), {}


def _binary():
    (X, y), _ = _regression()
    return (X, np.where(y > 0, 1, -1)), {}


def _multiclass():
    (X, y), _ = _regression()
    return (X, np.digitize(y, [-0.2, 0.2])), {}


def _groups():
    (X, y), _ = _binary()
    groups = np.where(np.arange(N_ROWS) % 3 == 0, "a", "b")
    return (X, y), {"sensitive_features": groups}


def _table():
    rng = np.random.default_rng(1)
    a = rng.integers(0, 3, N_ROWS)
    b = (a + rng.integers(0, 2, N_ROWS)) % 3
    c = rng.integers(0, 2, N_ROWS)
    return (np.column_stack([a, b, c]),), {}


def _numeric_table():
    (table,), _ = _table()
    values = np.random.default_rng(2).normal(10.0, 3.0, N_ROWS)
    return (np.column_stack([table[:, :2], values]),), {}


def _features():
    rng = np.random.default_rng(3)
    return (rng.normal(5.0, 2.0, size=(N_ROWS, 3)),), {}


DATA = {
    "regression": _regression,
    "binary": _binary,
    "multiclass": _multiclass,
    "groups": _groups,
    "table": _table,
    "numeric_table": _numeric_table,
    "features": _features,
}


@dataclass(frozen=True)
class PublicFit:
    """One public class with one choice of solver options.

    Attributes
    ----------
    id : str
    make : callable
        Returns the unfitted estimator, seeded, at ``EPSILON``, ``DELTA``
        (or what the options need).
    data : str
        Key of ``DATA``: the arguments of ``fit``.
    """

    id: str
    make: Callable
    data: str

    def fit(self, estimator=None):
        """Fit ``estimator`` (a fresh one by default) on the case's data."""
        estimator = self.make() if estimator is None else estimator
        args, kwargs = DATA[self.data]()
        return estimator.fit(*args, **kwargs)


def _sgd(cls, **params):
    defaults = dict(epsilon=EPSILON, delta=DELTA, max_iter=2, random_state=0)
    return lambda: cls(**{**defaults, **params})


def _lasso(**params):
    defaults = dict(epsilon=EPSILON, delta=DELTA, alpha=0.01, max_iter=5,
                    random_state=0)
    return lambda: DPLasso(**{**defaults, **params})


def _simplex(**params):
    defaults = dict(epsilon=EPSILON, delta=DELTA, radius=2.0, random_state=0)
    return lambda: DPLogisticSimplex(**{**defaults, **params})


def _minimax(**params):
    defaults = dict(epsilon=EPSILON, delta=DELTA, classes=[-1, 1],
                    groups=["a", "b"], max_iter=5, random_state=0)
    return lambda: DPMinimaxClassifier(**{**defaults, **params})


def _synthetic(**params):
    defaults = dict(epsilon=EPSILON, delta=DELTA, max_iter=3, random_state=0)
    return lambda: DPSyntheticData(**{**defaults, **params})


def _scaler(cls, **params):
    defaults = dict(epsilon=EPSILON, delta=DELTA, random_state=0)
    return lambda: cls(**{**defaults, **params})


PUBLIC_BOUNDS = dict(target_bound=1.0, residual_bound=1.0, feature_bound=1.0)

FITS = [
    PublicFit("DPSGDRegressor-poisson", _sgd(DPSGDRegressor, target_scale=1.0),
              "regression"),
    PublicFit("DPSGDRegressor-full", _sgd(DPSGDRegressor, sampling="full",
                                          target_scale=1.0), "regression"),
    PublicFit("DPSGDRegressor-single_pass",
              _sgd(DPSGDRegressor, sampling="single_pass", batch_size=40,
                   target_scale=1.0), "regression"),
    PublicFit("DPSGDRegressor-auto", _sgd(DPSGDRegressor, clip_norm="auto",
                                          target_scale="auto"), "regression"),
    PublicFit("DPSGDClassifier-binary", _sgd(DPSGDClassifier, classes=[-1, 1]),
              "binary"),
    PublicFit("DPSGDClassifier-multiclass",
              _sgd(DPSGDClassifier, classes=[0, 1, 2], clip_norm="auto"),
              "multiclass"),
    PublicFit("DPLasso-greedy_cd-auto", _lasso(), "regression"),
    # Budgets at which 400 rows' targets are centred: the fit check runs.
    PublicFit("DPSGDRegressor-fit_check", _sgd(DPSGDRegressor, epsilon=4.0),
              "regression"),
    PublicFit("DPLasso-greedy_cd-fit_check", _lasso(epsilon=4.0), "regression"),
    PublicFit("DPLasso-greedy_cd-laplace-fit_check",
              _lasso(epsilon=8.0, delta=0.0, selection="laplace",
                     gradient_noise="laplace", curvature="bound",
                     residual_bound=1.0), "regression"),
    PublicFit("DPLasso-greedy_cd-public", _lasso(curvature="bound", **PUBLIC_BOUNDS),
              "regression"),
    PublicFit("DPLasso-greedy_cd-private_curvature",
              _lasso(fit_intercept=False, **PUBLIC_BOUNDS), "regression"),
    PublicFit("DPLasso-greedy_cd-laplace",
              _lasso(delta=0.0, selection="laplace", gradient_noise="laplace",
                     curvature="bound", **PUBLIC_BOUNDS), "regression"),
    # One bound per column: each release's noise follows its column's.
    PublicFit("DPLasso-greedy_cd-per_column",
              _lasso(feature_bound=[0.5, 1.0, 2.5]), "regression"),
    PublicFit("DPLasso-frank_wolfe-public",
              _lasso(solver="frank_wolfe", **PUBLIC_BOUNDS), "regression"),
    PublicFit("DPLasso-frank_wolfe-auto", _lasso(solver="frank_wolfe"),
              "regression"),
    PublicFit("DPLogisticSimplex-mirror_descent",
              _simplex(solver="mirror_descent", classes=[-1, 1]), "binary"),
    PublicFit("DPLogisticSimplex-mirror_descent-laplace",
              _simplex(solver="mirror_descent", delta=0.0, classes=[0, 1, 2],
                       constraint="simplex"), "multiclass"),
    PublicFit("DPLogisticSimplex-sgd",
              _simplex(solver="sgd", classes=[0, 1, 2]), "multiclass"),
    PublicFit("DPLogisticSimplex-frank_wolfe",
              _simplex(solver="frank_wolfe", classes=[-1, 1], max_iter=5), "binary"),
    PublicFit("DPMinimaxClassifier-vertex_sampling-counts",
              _minimax(solver="vertex_sampling"), "groups"),
    PublicFit("DPMinimaxClassifier-vertex_sampling-priors",
              _minimax(solver="vertex_sampling", group_priors=[1.0, 2.0]), "groups"),
    PublicFit("DPMinimaxClassifier-gda-counts", _minimax(solver="gda"), "groups"),
    PublicFit("DPMinimaxClassifier-gda-one_group",
              _minimax(solver="gda", groups=None, min_group_size=1), "binary"),
    PublicFit("DPSyntheticData-categorical", _synthetic(domain=[3, 3, 2]), "table"),
    PublicFit("DPSyntheticData-private_bounds", _synthetic(domain={0: 3, 1: 3}),
              "numeric_table"),
    PublicFit("DPSyntheticData-matrix_workload",
              _synthetic(domain=[3, 3, 2], workload=np.eye(18)[:4]), "table"),
    PublicFit("DPStandardScaler-private_bounds", _scaler(DPStandardScaler),
              "features"),
    PublicFit("DPStandardScaler-public_bounds",
              _scaler(DPStandardScaler, bounds=(0.0, 10.0)), "features"),
    PublicFit("DPStandardScaler-laplace",
              _scaler(DPStandardScaler, bounds=(0.0, 10.0), delta=0.0), "features"),
    PublicFit("DPMinMaxScaler-private_bounds", _scaler(DPMinMaxScaler), "features"),
    PublicFit("DPMinMaxScaler-public_bounds",
              _scaler(DPMinMaxScaler, bounds=(0.0, 10.0)), "features"),
    PublicFit("PrivatePipeline",
              lambda: PrivatePipeline(
                  [("scale", DPStandardScaler(random_state=0)),
                   ("model", DPSGDRegressor(max_iter=2, random_state=1))],
                  epsilon=EPSILON, delta=DELTA),
              "regression"),
    PublicFit("make_private_pipeline",
              lambda: make_private_pipeline(
                  DPMinMaxScaler(random_state=0),
                  DPLasso(max_iter=3, random_state=1),
                  epsilon=EPSILON, delta=DELTA),
              "regression"),
]

FITS += [
    PublicFit("DPGridSearchCV",
              lambda: DPGridSearchCV(
                  DPSGDRegressor(max_iter=2, target_scale=1.0),
                  {"eta0": [0.1, 0.5]}, epsilon=EPSILON, delta=DELTA,
                  random_state=0),
              "regression"),
    PublicFit("DPRandomizedSearchCV",
              lambda: DPRandomizedSearchCV(
                  make_private_pipeline(DPStandardScaler(),
                                        DPSGDClassifier(max_iter=2, classes=[-1, 1])),
                  {"dpsgdclassifier__eta0": [0.1, 0.5, 2.0]}, n_iter=2,
                  epsilon=EPSILON, delta=DELTA, random_state=0),
              "binary"),
]

# Public names that are not fitted on data, and why.
NOT_FITTED = {
    "BudgetExceededError": "an exception",
    "LedgerError": "an exception",
    "PrivacyLeakError": "an exception",
    "PrivacyLeakWarning": "a warning",
    "UtilityWarning": "a warning",
    "PrivacyLedger": "the ledger itself (it records the fits)",
    "PrivacySpent": "a result: what a fit spent",
}


def public_estimator_names():
    """Names in ``skdpopt.__all__`` of classes (or factories) that fit on data."""
    names = []
    for name in skdpopt.__all__:
        obj = getattr(skdpopt, name)
        if name in NOT_FITTED:
            continue
        if isinstance(obj, type) and issubclass(obj, BaseEstimator):
            names.append(name)
        elif callable(obj):  # a factory such as make_private_pipeline
            names.append(name)
        else:
            raise AssertionError(f"skdpopt.{name}: neither fitted nor listed "
                                 "in NOT_FITTED")
    return names


def covered_names():
    """Public names that ``FITS`` exercises (classes, and the factories by
    their case ids)."""
    covered = {type(case.make()).__name__ for case in FITS}
    covered |= {case.id.split("-")[0] for case in FITS}
    return covered
