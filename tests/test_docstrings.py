"""Every public estimator documents each parameter and fitted attribute.

The API reference is generated from these docstrings (numpydoc format), so
an undocumented parameter or attribute is a hole in the documentation.  The
documentation build checks the parameters of every public callable too
(numpydoc validation, warnings as errors); this test adds what it cannot
see: the attributes a fit actually sets.
"""

import inspect
import warnings

import numpy as np
import pytest
from sklearn.base import clone, is_classifier, is_regressor
from test_common import ESTIMATORS

import skdpopt


def _sections(docstring):
    """Map each numpydoc section title to its lines (dedented)."""
    lines = inspect.cleandoc(docstring).splitlines()
    sections, current = {}, None
    for line, below in zip(lines, lines[1:] + [""], strict=True):
        underline = below.strip()
        if line.strip() and underline and set(underline) == {"-"} \
                and len(underline) >= len(line.strip()):
            current = line.strip()
            sections[current] = []
        elif current is not None and not (line.strip() and set(line.strip()) == {"-"}):
            sections[current].append(line)
    return sections


def _entries(lines):
    """Map each ``name : type`` entry of a section to its description lines."""
    entries, name = {}, None
    for line in lines:
        if line and not line.startswith(" "):
            # "**fit_params" documents the parameter "fit_params".
            name = line.split(" : ")[0].strip().lstrip("*")
            entries[name] = []
        elif name is not None and line.strip():
            entries[name].append(line.strip())
    return entries


def _documented(cls, section):
    return _entries(_sections(cls.__doc__).get(section, []))


def _fitted(estimator):
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(300, 4))
    if is_classifier(estimator):
        y = (X[:, 0] + 0.3 * rng.normal(size=300) > 0).astype(int)
    elif is_regressor(estimator):
        y = 0.5 * X[:, 0] + 0.1 * rng.normal(size=300)
    else:
        y = None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # Estimators whose fit needs more (group labels, say) add it here.
        return clone(estimator).fit(X) if y is None else clone(estimator).fit(X, y)


def _ids(estimators):
    return [f"{type(e).__name__}({e.get_params().get('solver', '')})"
            for e in estimators]


def test_every_public_name_is_tested_here():
    # A new estimator joins ESTIMATORS in test_common.py; this keeps the
    # two lists from drifting apart.
    exported = {name for name in skdpopt.__all__
                if hasattr(getattr(skdpopt, name), "fit")}
    assert exported == {type(e).__name__ for e in ESTIMATORS}


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=_ids(ESTIMATORS))
def test_parameters_documented(estimator):
    documented = _documented(type(estimator), "Parameters")
    assert list(documented) == list(inspect.signature(type(estimator)).parameters)
    empty = [name for name, text in documented.items() if not text]
    assert not empty, f"parameters without a description: {empty}"


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=_ids(ESTIMATORS))
def test_fitted_attributes_documented(estimator):
    documented = _documented(type(estimator), "Attributes")
    fitted = _fitted(estimator)
    public = {name for name in vars(fitted)
              if name.endswith("_") and not name.startswith("_")}
    missing = sorted(public - set(documented))
    assert not missing, f"fitted attributes not in the docstring: {missing}"
    empty = [name for name, text in documented.items() if not text]
    assert not empty, f"attributes without a description: {empty}"


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=_ids(ESTIMATORS))
def test_public_methods_documented(estimator):
    cls = type(estimator)
    for name, method in inspect.getmembers(cls, inspect.isfunction):
        if name.startswith("_") or name not in vars(cls):
            continue  # private, or inherited from scikit-learn
        assert method.__doc__, f"{cls.__name__}.{name} has no docstring"
        wanted = [p for p in inspect.signature(method).parameters if p != "self"]
        documented = _entries(_sections(method.__doc__).get("Parameters", []))
        assert list(documented) == wanted, f"{cls.__name__}.{name}"
        empty = [p for p, text in documented.items() if not text]
        assert not empty, f"{cls.__name__}.{name}: no description for {empty}"
