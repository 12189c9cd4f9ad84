"""What holds for every estimator's plan: it is made without the data, it
is what the fit reports, and no estimator calibrates by itself."""

import ast
import importlib
import inspect
import pkgutil
from pathlib import Path

import numpy as np
import pytest
from sklearn.base import clone

import skdpopt
import skdpopt.plans
from skdpopt import DPLasso, DPLogisticSimplex, DPSGDClassifier, DPSGDRegressor

PACKAGE = Path(skdpopt.__file__).parent
DATA_NAMES = {"X", "y", "data", "sample_weight", "sensitive_features", "codes",
              "values", "target"}


def plan_functions():
    for info in pkgutil.iter_modules(skdpopt.plans.__path__):
        module = importlib.import_module(f"skdpopt.plans.{info.name}")
        for name, function in inspect.getmembers(module, inspect.isfunction):
            if name.startswith("plan_") and function.__module__ == module.__name__:
                yield f"{info.name}.{name}", function


@pytest.mark.parametrize("name, function", list(plan_functions()))
def test_plan_functions_take_no_data(name, function):
    assert not set(inspect.signature(function).parameters) & DATA_NAMES


def estimator_modules():
    for path in sorted(PACKAGE.glob("*.py")):
        if path.name.startswith("__"):
            continue
        yield path


@pytest.mark.parametrize("path", list(estimator_modules()), ids=lambda p: p.name)
def test_no_estimator_module_calibrates_by_itself(path):
    """Calibration lives in the plans (one function, calibrate): an
    estimator module neither defines an ``epsilon_of`` closure nor calls
    the accountant's search directly."""
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef):
            assert node.name != "epsilon_of", f"{path.name}: {node.name}"
        if isinstance(node, ast.Call):
            func = node.func
            called = getattr(func, "id", getattr(func, "attr", None))
            assert called not in {"calibrate", "_search"}, path.name


def small_fits():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(400, 4))
    y_reg = X @ [0.5, -0.3, 0.0, 0.2] + 0.1 * rng.normal(size=400)
    y_clf = (y_reg > 0).astype(int)
    return [
        (DPSGDRegressor(delta=1e-6, random_state=0), X, y_reg),
        (DPSGDClassifier(delta=1e-6, classes=[0, 1], random_state=0), X, y_clf),
        (DPLasso(alpha=0.01, delta=1e-6, random_state=0), X, y_reg),
        (DPLasso(solver="frank_wolfe", delta=1e-6, random_state=0), X, y_reg),
        (DPLogisticSimplex(delta=1e-6, classes=[0, 1], random_state=0), X, y_clf),
        (DPLogisticSimplex(solver="frank_wolfe", delta=1e-6, classes=[0, 1],
                           random_state=0), X, y_clf),
    ]


@pytest.mark.parametrize("estimator, X, y", small_fits(),
                         ids=lambda v: type(v).__name__ if hasattr(v, "fit") else "")
def test_reported_spend_is_the_plans(estimator, X, y):
    fitted = clone(estimator).fit(X, y)
    plan = fitted.privacy_plan_
    assert fitted.privacy_spent_ == plan.spent()
    assert plan.spent().epsilon <= estimator.epsilon
    # The same public quantities plan the same releases: another dataset
    # of the same shape gets the same plan.
    other = clone(estimator).fit(X[::-1] * 0.5, y[::-1])
    assert other.privacy_plan_.event == plan.event
