"""DP-SGD side by side with non-private scikit-learn and Opacus, in one run.

Prints, for each dataset, the test score (R^2 or accuracy) of DPSGDRegressor
/ DPSGDClassifier at several epsilons beside non-private scikit-learn, with
fit times as ratios to SGDRegressor / SGDClassifier for the same epochs; a
scaling run (fit time against n); and Opacus training the same linear model
with the same clipping, sampling rate, epochs and noise multiplier.

Medians over seeds; each fit is timed three times and its median kept, and
time ratios are medians over seeds of ratios between fits timed one after
the other.
Every DP fit's time includes its noise calibration (the accountant's cache
is cleared before each timed fit).  A last table checks the page's targets
against the figures of the same run.

The tables go to ``docs/benchmarks/_generated/bench_sgd.md`` (see
``report.py``).

Usage::

    pip install ".[bench,opacus]"
    python benchmarks/bench_sgd.py            # full run
    python benchmarks/bench_sgd.py --quick    # 2 seeds, one timing per fit,
                                              # smaller scaling run, no Opacus
"""

import argparse
import time
import warnings

import numpy as np
from datasets import cps1988, diamonds, synthetic_regression
from report import Report
from sklearn.linear_model import (
    LinearRegression,
    LogisticRegression,
    SGDClassifier,
    SGDRegressor,
)

from skdpopt import DPSGDClassifier, DPSGDRegressor
from skdpopt.accounting import accountant as accountant_module

EPSILONS = [0.1, 0.5, 1.0, 3.0, 10.0, np.inf]
DELTA = 1e-5
EPOCHS = 5
REPEATS = 3  # timings per fit, median kept (1 in --quick)


def timed(fit, repeats=REPEATS):
    """Run ``fit()`` ``repeats`` times, each with a cold accountant cache.

    Returns the last result and the median seconds: on a shared machine one
    timing of a 20 ms fit can be off by a factor of two.
    """
    seconds = []
    for _ in range(repeats):
        accountant_module.clear_cache()
        start = time.perf_counter()
        result = fit()
        seconds.append(time.perf_counter() - start)
    return result, float(np.median(seconds))


def timings(repeats):
    return ("each fit timed once" if repeats == 1 else
            f"each fit timed {repeats} times, median kept")


def eps_label(eps):
    return "inf" if np.isinf(eps) else f"{eps:g}"


def compare(report, key, name, data, private_class, sgd, exact, metric, seeds,
            repeats):
    """One table: the DP estimator at each epsilon beside two non-private peers.

    For each seed, SGD and the private fits are timed one after the other,
    so that a ratio compares fits made under the same machine load; the
    table shows medians over seeds of the scores, the seconds and the
    per-seed ratios.  Returns {epsilon or "sgd" or "exact": (score, ratio)}.
    """
    X_train, X_test, y_train, y_test = data
    models = {"sgd": sgd}
    # The classifier's label set is public (a threshold's two sides).
    extra = ({"classes": [0, 1]} if private_class is DPSGDClassifier else {})
    for eps in EPSILONS:
        models[eps] = (lambda seed, eps=eps: private_class(
            epsilon=eps, delta=DELTA, max_iter=EPOCHS, random_state=seed,
            **extra))
    scores = {key_: [] for key_ in models}
    seconds = {key_: [] for key_ in models}
    for seed in seeds:
        for key_, make in models.items():
            model, elapsed = timed(
                lambda make=make, seed=seed: make(seed).fit(X_train, y_train),
                repeats)
            scores[key_].append(model.score(X_test, y_test))
            seconds[key_].append(elapsed)
    sgd_seconds = np.array(seconds["sgd"])
    out = {}

    def row(label, eps, key_):
        ratio = np.median(np.array(seconds[key_]) / sgd_seconds)
        out[key_] = (np.median(scores[key_]), ratio)
        return [label, eps, f"{np.median(scores[key_]):.4f}",
                f"{np.median(seconds[key_]):.3f}", f"{ratio:.2f}"]

    exact_model, exact_time = timed(lambda: exact.fit(X_train, y_train), repeats)
    exact_score = exact_model.score(X_test, y_test)
    out["exact"] = (exact_score, exact_time / np.median(sgd_seconds))
    rows = [
        [type(exact).__name__ + " (not private)", "-", f"{exact_score:.4f}",
         f"{exact_time:.3f}", f"{exact_time / np.median(sgd_seconds):.2f}"],
        row(type(sgd(0)).__name__ + f" (not private, {EPOCHS} epochs)", "-", "sgd"),
    ]
    rows += [row(private_class.__name__, eps_label(eps), eps) for eps in EPSILONS]
    report.table(
        key, f"{name}: n_train={len(X_train)}, d={X_train.shape[1]}, "
        f"delta={DELTA:g}, medians over {len(seeds)} seeds ({timings(repeats)}; "
        "time ratios: medians over seeds of fits timed one after the other)",
        ["model", "epsilon", metric, "fit s", "time / SGD"], rows,
        timing=["fit s", "time / SGD"])
    return out


def clip_norm_run(report, data, seeds):
    """The default public clip norm 1 against clip_norm="auto" (a private
    0.9 quantile of the starting gradients' norms, 5% of the budget)."""
    X_train, X_test, y_train, y_test = data
    rows = []
    for eps in (0.1, 1.0):
        cells = []
        for clip in (1.0, "auto"):
            scores = [DPSGDRegressor(epsilon=eps, delta=DELTA, max_iter=EPOCHS,
                                     clip_norm=clip, random_state=seed)
                      .fit(X_train, y_train).score(X_test, y_test)
                      for seed in seeds]
            cells.append(f"{np.median(scores):.4f}")
        rows.append([eps_label(eps), *cells])
    report.table("clip_norm", "make_regression: DPSGDRegressor's test R^2 with "
                 "the default public clip_norm=1 and with clip_norm='auto', "
                 f"medians over {len(seeds)} seeds",
                 ["epsilon", "clip_norm=1 (default)", "clip_norm='auto'"], rows)


def scaling_run(report, sizes, seeds, repeats):
    """Fit time against n at d = 50 (epsilon = 1), and the log-log slope."""
    rng = np.random.default_rng(0)
    X_all = rng.normal(size=(max(sizes), 50))
    y_all = X_all @ rng.normal(size=50) / 10 + 0.1 * rng.normal(size=max(sizes))
    rows, dp_times, ratios = [], [], []
    for n in sizes:
        X, y = X_all[:n], y_all[:n]
        delta = min(DELTA, 1.0 / n**1.1)  # keep delta below 1/n at every size
        pairs = np.array([
            (timed(lambda s=s, X=X, y=y, delta=delta: DPSGDRegressor(
                epsilon=1.0, delta=delta, max_iter=EPOCHS, random_state=s,
            ).fit(X, y), repeats)[1],
             timed(lambda s=s, X=X, y=y: SGDRegressor(
                 max_iter=EPOCHS, tol=None, random_state=s).fit(X, y), repeats)[1])
            for s in seeds])
        dp, sgd = np.median(pairs, axis=0)
        dp_times.append(dp)
        ratios.append(np.median(pairs[:, 0] / pairs[:, 1]))
        rows.append([f"{n:,}", f"{delta:.2g}", f"{dp:.3f}", f"{sgd:.3f}",
                     f"{ratios[-1]:.2f}"])
    slope = np.polyfit(np.log(sizes), np.log(dp_times), 1)[0]
    report.table("scaling", f"Scaling: d=50, epsilon=1, {EPOCHS} epochs, "
                 f"batch 256, medians over {len(seeds)} seeds",
                 ["n", "delta", "DPSGD s", "SGDRegressor s", "ratio"], rows,
                 timing=["DPSGD s", "SGDRegressor s", "ratio"])
    report.value("scaling.slope", f"{slope:.2f}", timing=True)
    return slope, dict(zip(sizes, ratios, strict=True))


def opacus_fit(X, y, noise_multiplier, rate, steps, lr, clip_norm, seed):
    """Opacus DP-SGD on torch.nn.Linear with the same plan; returns seconds."""
    import torch
    from opacus import PrivacyEngine
    from torch.utils.data import DataLoader, TensorDataset

    class BatchedTensorDataset(TensorDataset):
        # One indexing call per batch instead of one per row (a fair, fast
        # data path for Opacus's Poisson DataLoader).
        def __getitems__(self, indices):
            index = torch.as_tensor(indices, dtype=torch.long)
            return tuple(t[index] for t in self.tensors)

    torch.manual_seed(seed)
    # One thread, like skdpopt's solver: with a second thread, torch's
    # synchronisation makes a small linear model slower, and on a shared
    # machine much slower (seconds per fit measured beside another job).
    torch.set_num_threads(1)
    features = torch.as_tensor(X, dtype=torch.float32)
    targets = torch.as_tensor(y, dtype=torch.float32)
    batch = max(1, round(rate * len(X)))
    loader = DataLoader(BatchedTensorDataset(features, targets), batch_size=batch,
                        collate_fn=lambda b: b)
    model = torch.nn.Linear(X.shape[1], 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # secure-RNG and backward-hook notices
        engine = PrivacyEngine(accountant="prv", secure_mode=False)
        model, optimizer, loader = engine.make_private(
            module=model, optimizer=optimizer, data_loader=loader,
            noise_multiplier=noise_multiplier, max_grad_norm=clip_norm,
            poisson_sampling=True, grad_sample_mode="ew", loss_reduction="mean")
        done = 0
        while done < steps:
            for xb, yb in loader:
                optimizer.zero_grad()
                # 0.5 (p - y)^2 has per-example gradient (p - y)(x, 1), as in skdpopt.
                loss = 0.5 * ((model(xb).squeeze(-1) - yb) ** 2).mean()
                loss.backward()
                optimizer.step()
                done += 1
                if done == steps:
                    break
    return time.perf_counter() - start


def opacus_run(report, datasets, seeds, repeats):
    """Opacus against DPSGDRegressor, each seed's fits one after the other;
    returns {dataset: ratio} or None without Opacus."""
    try:
        import opacus
        import torch
    except ImportError:
        print("\nOpacus: not installed (pip install '.[opacus]'); skipped.")
        return None
    rows, ratios = [], {}
    for name, (X_train, _, y_train, _) in datasets.items():
        ours, theirs = [], []
        for seed in seeds:
            model, seconds = timed(lambda s=seed, X=X_train, y=y_train: DPSGDRegressor(
                epsilon=1.0, delta=DELTA, max_iter=EPOCHS, random_state=s,
                target_scale=1.0).fit(X, y), repeats)
            ours.append(seconds)
            rate = min(256, len(X_train)) / len(X_train)
            theirs.append(np.median([
                opacus_fit(X_train, y_train, model.noise_multiplier_, rate,
                           model.t_, model.eta0, model.clip_norm, seed)
                for _ in range(repeats)]))
        ratios[name] = float(np.median(np.array(theirs) / np.array(ours)))
        rows.append([name, f"{model.noise_multiplier_:.3f}", str(model.t_),
                     f"{np.median(ours):.3f}", f"{np.median(theirs):.3f}",
                     f"{ratios[name]:.1f}"])
    report.table(
        "opacus", f"Opacus {opacus.__version__} (torch {torch.__version__}, CPU, "
        "one thread, grad_sample_mode='ew', batched data loader) against "
        "DPSGDRegressor (target_scale=1): same linear model, clip norm, Poisson "
        f"rate, steps and noise multiplier (epsilon=1), medians over "
        f"{len(seeds)} seeds of fits timed one after the other "
        f"({timings(repeats)})",
        ["dataset", "noise mult.", "steps", "skdpopt s", "Opacus s",
         "Opacus / skdpopt"], rows,
        timing=["skdpopt s", "Opacus s", "Opacus / skdpopt"])
    return ratios


def targets(report, results, slope, scaling, opacus):
    """The page's targets, read from this run's figures."""
    def span(values):
        return f"{min(values):.2f} to {max(values):.2f}"

    diamonds = results["diamonds"]
    gap = diamonds["exact"][0] - diamonds[1.0][0]
    rows = [["epsilon = 1 on diamonds: R^2 within 0.05 of non-private "
             "LinearRegression",
             f"{diamonds[1.0][0]:.4f} against {diamonds['exact'][0]:.4f}",
             "yes" if gap <= 0.05 else "no"]]
    finite = [e for e in EPSILONS if np.isfinite(e)]
    for name in ("diamonds", "make_regression", "CPS1988"):
        ratios = [results[name][e][1] for e in finite]
        rows.append([f"fit time at most 3x SGD, same epochs ({name}, finite "
                     "epsilons)", f"{span(ratios)}x",
                     "yes" if max(ratios) <= 3 else "no"])
    for n, ratio in scaling.items():
        rows.append([f"fit time at most 3x SGDRegressor (scaling run, n = {n:,})",
                     f"{ratio:.2f}x", "yes" if ratio <= 3 else "no"])
    rows.append(["time linear in n (log-log slope at most 1.1)", f"{slope:.2f}",
                 "yes" if slope <= 1.1 else "no"])
    if opacus:
        rows.append(["faster than Opacus on CPU",
                     ", ".join(f"{r:.1f}x ({n})" for n, r in opacus.items()),
                     "yes" if min(opacus.values()) > 1 else "no"])
    report.table("targets", "Targets, read from this run (time ratios are "
                 "timings: compare them within this run only)",
                 ["target", "measured", "met"], rows,
                 timing=["measured", "met"])
    # Score-based cells stay comparable: the first row's measured cell is
    # also a figure of its own.
    report.value("target.diamonds.gap", f"{gap:.4f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="2 seeds, one timing per fit, a smaller scaling "
                             "run, no Opacus")
    Report.add_arguments(parser)
    args = parser.parse_args()
    report = Report("bench_sgd", args, packages=("opacus", "torch"))
    seeds = range(2 if args.quick else 5)
    repeats = 1 if args.quick else REPEATS
    sizes = [10_000, 100_000] if args.quick else [10_000, 100_000, 1_000_000]

    datasets = {"diamonds": diamonds(), "make_regression": synthetic_regression()}
    results = {}
    for name, data in datasets.items():
        results[name] = compare(
            report, name, name, data, DPSGDRegressor,
            lambda s: SGDRegressor(max_iter=EPOCHS, tol=None, random_state=s),
            LinearRegression(), "test R^2", seeds, repeats)
    results["CPS1988"] = compare(
        report, "CPS1988", "CPS1988 (wage > $500/week)", cps1988(),
        DPSGDClassifier,
        lambda s: SGDClassifier(loss="log_loss", max_iter=EPOCHS, tol=None,
                                random_state=s),
        LogisticRegression(max_iter=1000), "test accuracy", seeds, repeats)
    clip_norm_run(report, datasets["make_regression"], seeds)
    slope, scaling = scaling_run(report, sizes, seeds, repeats)
    opacus = None if args.quick else opacus_run(report, datasets, seeds, repeats)
    targets(report, results, slope, scaling, opacus)
    report.write()


if __name__ == "__main__":
    main()
