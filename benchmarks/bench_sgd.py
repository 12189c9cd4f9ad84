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
is cleared before each timed fit).

Usage::

    pip install ".[bench,opacus]"
    python benchmarks/bench_sgd.py            # full run
    python benchmarks/bench_sgd.py --quick    # 2 seeds, smaller scaling run
"""

import argparse
import time
import warnings

import numpy as np
from datasets import cps1988, diamonds, synthetic_regression
from sklearn.linear_model import (
    LinearRegression,
    LogisticRegression,
    SGDClassifier,
    SGDRegressor,
)

from skdpopt import DPSGDClassifier, DPSGDRegressor
from skdpopt.accounting import accountant as accountant_module

EPSILONS = [0.1, 0.5, 1.0, 2.0, 8.0, np.inf]
DELTA = 1e-5
EPOCHS = 5


def timed(fit, repeats=3):
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


def median_over_seeds(seeds, run):
    scores, times = zip(*(run(seed) for seed in seeds), strict=True)
    return float(np.median(scores)), float(np.median(times))


def print_table(title, header, rows):
    print(f"\n{title}")
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    line = "  ".join(f"{{:<{w}}}" if i == 0 else f"{{:>{w}}}"
                     for i, w in enumerate(widths))
    print(line.format(*header))
    print(line.format(*("-" * w for w in widths)))
    for row in rows:
        print(line.format(*row))


def compare(name, data, private_class, sgd, exact, metric, seeds):
    """One table: the DP estimator at each epsilon beside two non-private peers.

    For each seed, SGD and the private fits are timed one after the other,
    so that a ratio compares fits made under the same machine load; the
    table shows medians over seeds of the scores, the seconds and the
    per-seed ratios.
    """
    X_train, X_test, y_train, y_test = data
    models = {"sgd": sgd}
    # The classifier's label set is public (a threshold's two sides).
    extra = ({"classes": [0, 1]} if private_class is DPSGDClassifier else {})
    for eps in EPSILONS:
        models[eps] = (lambda seed, eps=eps: private_class(
            epsilon=eps, delta=DELTA, max_iter=EPOCHS, random_state=seed,
            **extra))
    scores = {key: [] for key in models}
    seconds = {key: [] for key in models}
    for seed in seeds:
        for key, make in models.items():
            model, elapsed = timed(
                lambda make=make, seed=seed: make(seed).fit(X_train, y_train))
            scores[key].append(model.score(X_test, y_test))
            seconds[key].append(elapsed)
    sgd_seconds = np.array(seconds["sgd"])

    def row(label, eps, key):
        ratio = np.median(np.array(seconds[key]) / sgd_seconds)
        return [label, eps, f"{np.median(scores[key]):.4f}",
                f"{np.median(seconds[key]):.3f}", f"{ratio:.2f}"]

    exact_model, exact_time = timed(lambda: exact.fit(X_train, y_train))
    rows = [
        [type(exact).__name__ + " (not private)", "-",
         f"{exact_model.score(X_test, y_test):.4f}", f"{exact_time:.3f}",
         f"{exact_time / np.median(sgd_seconds):.2f}"],
        row(type(sgd(0)).__name__ + f" (not private, {EPOCHS} epochs)", "-", "sgd"),
    ]
    rows += [row(private_class.__name__, f"{eps:g}", eps) for eps in EPSILONS]
    print_table(f"{name}: n_train={len(X_train)}, d={X_train.shape[1]}, "
                f"delta={DELTA:g}, medians over {len(seeds)} seeds",
                ["model", "epsilon", metric, "fit s", "time / SGD"], rows)


def scaling_run(sizes, seeds):
    """Fit time against n at d = 50 (epsilon = 1), and the log-log slope."""
    rng = np.random.default_rng(0)
    X_all = rng.normal(size=(max(sizes), 50))
    y_all = X_all @ rng.normal(size=50) / 10 + 0.1 * rng.normal(size=max(sizes))
    rows, dp_times = [], []
    for n in sizes:
        X, y = X_all[:n], y_all[:n]
        delta = min(DELTA, 1.0 / n**1.1)  # keep delta below 1/n at every size
        pairs = np.array([
            (timed(lambda s=s, X=X, y=y, delta=delta: DPSGDRegressor(
                epsilon=1.0, delta=delta, max_iter=EPOCHS, random_state=s,
            ).fit(X, y))[1],
             timed(lambda s=s, X=X, y=y: SGDRegressor(
                 max_iter=EPOCHS, tol=None, random_state=s).fit(X, y))[1])
            for s in seeds])
        dp, sgd = np.median(pairs, axis=0)
        dp_times.append(dp)
        rows.append([f"{n:,}", f"{delta:.2g}", f"{dp:.3f}", f"{sgd:.3f}",
                     f"{np.median(pairs[:, 0] / pairs[:, 1]):.2f}"])
    slope = np.polyfit(np.log(sizes), np.log(dp_times), 1)[0]
    print_table(f"Scaling: d=50, epsilon=1, {EPOCHS} epochs, batch 256; "
                f"log-log slope of DP fit time against n = {slope:.3f}",
                ["n", "delta", "DPSGD s", "SGDRegressor s", "ratio"], rows)


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


def opacus_run(datasets, seeds):
    try:
        import opacus  # noqa: F401
        import torch
    except ImportError:
        print("\nOpacus: not installed (pip install '.[opacus]'); skipped.")
        return
    rows = []
    for name, (X_train, _, y_train, _) in datasets.items():
        ours, theirs = [], []
        for seed in seeds:
            model, seconds = timed(lambda s=seed, X=X_train, y=y_train: DPSGDRegressor(
                epsilon=1.0, delta=DELTA, max_iter=EPOCHS, random_state=s,
            ).fit(X, y))
            ours.append(seconds)
            rate = min(256, len(X_train)) / len(X_train)
            theirs.append(opacus_fit(X_train, y_train, model.noise_multiplier_, rate,
                                     model.t_, model.eta0, model.clip_norm, seed))
        rows.append([name, f"{model.noise_multiplier_:.3f}", str(model.t_),
                     f"{np.median(ours):.3f}", f"{np.median(theirs):.3f}",
                     f"{np.median(theirs) / np.median(ours):.1f}"])
    print_table(f"Opacus {opacus.__version__} (torch {torch.__version__}, CPU, one "
                "thread, grad_sample_mode='ew', batched data loader) against "
                "DPSGDRegressor: same linear model, clip norm, Poisson rate, steps "
                "and noise multiplier (epsilon=1)",
                ["dataset", "noise mult.", "steps", "skdpopt s", "Opacus s",
                 "Opacus / skdpopt"], rows)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="2 seeds and a smaller scaling run")
    args = parser.parse_args()
    seeds = range(2 if args.quick else 5)
    sizes = [10_000, 100_000] if args.quick else [10_000, 100_000, 1_000_000]

    datasets = {"diamonds": diamonds(), "make_regression": synthetic_regression()}
    for name, data in datasets.items():
        compare(name, data, DPSGDRegressor,
                lambda s: SGDRegressor(max_iter=EPOCHS, tol=None, random_state=s),
                LinearRegression(), "test R^2", seeds)
    compare("CPS1988 (wage > $500/week)", cps1988(), DPSGDClassifier,
            lambda s: SGDClassifier(loss="log_loss", max_iter=EPOCHS, tol=None,
                                    random_state=s),
            LogisticRegression(max_iter=1000), "test accuracy", seeds)
    scaling_run(sizes, seeds)
    opacus_run(datasets, seeds)
    print("\nTimes are medians from this one run; machines are noisy, so compare "
          "the ratios, not the seconds.")


if __name__ == "__main__":
    main()
