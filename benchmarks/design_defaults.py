"""Design measurements for the defaults: "auto" bounds and DP-SGD's schedule.

Development data and seeds only (seeds 100 and up); the reported
benchmark (``bench_defaults.py``) uses other seeds.

* ``lasso``: sparse regression, n = 20,000, p = 2,000, features uniform
  in [-1, 1], 15 coefficients +-1, noise 0.5, targets clipped to [-6, 6];
  alpha = 0.02, epsilon = 1, delta = 1/n^2.  Relative suboptimality
  ``(F(w) - F*) / (F(0) - F*)`` against scikit-learn's Lasso and support
  recall, for DPLasso with defaults ("auto" bounds), with the public
  bounds (6, 1) and with the old defaults (1, 1).
* ``sgd``: DP-SGD's number of steps against n * epsilon (see
  ``--task sgd``).

Usage::

    python benchmarks/design_defaults.py --task lasso
    python benchmarks/design_defaults.py --task sgd
"""

import argparse
import warnings

import numpy as np
from sklearn.linear_model import Lasso

from skdpopt import DPLasso

SEEDS = (100, 101, 102)


def sparse_regression(seed, n_samples=20_000, n_features=2_000, n_true=15):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1.0, 1.0, size=(n_samples, n_features))
    coef = np.zeros(n_features)
    support = rng.choice(n_features, n_true, replace=False)
    coef[support] = rng.choice([-1.0, 1.0], n_true)
    y = np.clip(X @ coef + 0.5 * rng.normal(size=n_samples), -6.0, 6.0)
    return X, y, coef != 0


def objective(X, y, coef, intercept, alpha):
    residual = y - X @ coef - intercept
    return 0.5 * np.mean(residual**2) + alpha * np.abs(coef).sum()


def lasso_scores(X, y, truth, model, alpha):
    reference = Lasso(alpha=alpha).fit(X, y)
    best = objective(X, y, reference.coef_, reference.intercept_, alpha)
    start = objective(X, y, np.zeros(X.shape[1]), 0.0, alpha)
    value = objective(X, y, model.coef_, model.intercept_, alpha)
    recall = np.sum((model.coef_ != 0) & truth) / truth.sum()
    return (value - best) / (start - best), recall


def task_lasso(alpha=0.02, epsilon=1.0):
    variants = {"auto": {}, "public (6, 1)": {"target_bound": 6.0,
                                              "feature_bound": 1.0},
                "old (1, 1)": {"target_bound": 1.0, "feature_bound": 1.0}}
    for name, params in variants.items():
        rows = []
        for seed in SEEDS:
            X, y, truth = sparse_regression(seed)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model = DPLasso(alpha=alpha, epsilon=epsilon,
                                delta=1.0 / len(y) ** 2, random_state=seed,
                                **params).fit(X, y)
            rows.append(lasso_scores(X, y, truth, model, alpha))
            extra = (f" bounds ({model.target_bound_:.3g}, "
                     f"{model.feature_bound_:.3g})")
            print(f"  {name} seed {seed}: subopt {rows[-1][0]:.3f} "
                  f"recall {rows[-1][1]:.2f}{extra}", flush=True)
        med = np.median(rows, axis=0)
        print(f"{name}: median subopt {med[0]:.3f}, recall {med[1]:.2f}",
              flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--task", choices=["lasso", "sgd"], default="lasso")
    args = parser.parse_args()
    if args.task == "lasso":
        task_lasso()
    else:
        task_sgd()
