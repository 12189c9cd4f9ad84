"""DPSGDRegressor's fit time beside scikit-learn's SGDRegressor, side by side.

150,000 rows by 7 standard normal features, a linear target plus noise,
5 epochs for both: ``DPSGDRegressor(epsilon=1, delta=1/n^2)`` with its
defaults (``target_scale="auto"``, batch size "auto") against
``SGDRegressor(max_iter=5, tol=None)``.  The fits alternate, one DP fit
then one SGD fit, ``--repeats`` times, so that each ratio compares fits
made under the same machine load; the table shows the medians of the
per-pair ratios of wall-clock time (``time.perf_counter``) and of CPU
time (``time.process_time``, which a machine shared with other jobs
disturbs less).

Two DP rows: **cold**, the accountant's cache cleared before every DP fit
(each fit calibrates its noise from scratch, as the first fit of a
session does), and **warm**, the cache kept (a fit with the public
parameters of an earlier one: a refit, a grid search over
hyperparameters that leave the plan unchanged).

The table is written through :mod:`report` to
``docs/benchmarks/_generated/bench_sgd_timing.md`` (``--quick``: 3 pairs
per row, to ``bench_sgd_timing.quick.md``; every cell is a timing).

Usage::

    python benchmarks/bench_sgd_timing.py              # 9 pairs per row
    python benchmarks/bench_sgd_timing.py --repeats 5
    python benchmarks/bench_sgd_timing.py --quick
"""

import argparse
import os
import platform
import time
import warnings

import numpy as np
from report import Report
from sklearn.linear_model import SGDRegressor

from skdpopt import DPSGDRegressor
from skdpopt.accounting import accountant as accountant_module

N_SAMPLES, N_FEATURES, EPOCHS = 150_000, 7, 5


def data(seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(N_SAMPLES, N_FEATURES))
    y = X @ rng.normal(size=N_FEATURES) + rng.normal(size=N_SAMPLES)
    return X, y


def timed(fit):
    wall, cpu = time.perf_counter(), time.process_time()
    fit()
    return time.perf_counter() - wall, time.process_time() - cpu


def pairs(X, y, repeats, cold):
    """``repeats`` (DP, SGD) pairs of (wall, cpu) seconds."""
    out = []
    for seed in range(repeats):
        if cold:
            accountant_module.clear_cache()
        dp = timed(lambda s=seed: DPSGDRegressor(
            epsilon=1.0, delta=1.0 / N_SAMPLES**2, max_iter=EPOCHS,
            random_state=s).fit(X, y))
        sgd = timed(lambda s=seed: SGDRegressor(
            max_iter=EPOCHS, tol=None, random_state=s).fit(X, y))
        out.append((*dp, *sgd))
    return np.array(out)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=None,
                        help="pairs per row (default 9, 3 with --quick)")
    parser.add_argument("--quick", action="store_true",
                        help="3 pairs per row, to the quick table")
    Report.add_arguments(parser)
    args = parser.parse_args(argv)
    repeats = args.repeats or (3 if args.quick else 9)
    report = Report("bench_sgd_timing", args)
    X, y = data()
    warnings.simplefilter("ignore")
    # Warm-up: imports, BLAS, the first calibration.
    DPSGDRegressor(delta=1.0 / N_SAMPLES**2, random_state=0).fit(X[:20_000], y[:20_000])
    SGDRegressor(max_iter=EPOCHS, tol=None).fit(X[:20_000], y[:20_000])
    load = os.getloadavg()[0]
    print(f"{N_SAMPLES:,} rows x {N_FEATURES} features, {EPOCHS} epochs, "
          f"{repeats} alternating pairs per row; {platform.machine()}, "
          f"{os.cpu_count()} CPUs, load average {load:.1f} at the start")
    rows = []
    for label, cold in (("cold (cache cleared)", True), ("warm (cache kept)", False)):
        t = pairs(X, y, repeats, cold)
        rows.append([label, f"{np.median(t[:, 0]):.3f}", f"{np.median(t[:, 2]):.3f}",
                     f"{np.median(t[:, 0] / t[:, 2]):.2f}",
                     f"{np.median(t[:, 1] / t[:, 3]):.2f}"])
    report.table(
        "timing",
        f"DPSGDRegressor(epsilon=1, delta=1/n^2, max_iter={EPOCHS}) against "
        f"SGDRegressor(max_iter={EPOCHS}, tol=None): {N_SAMPLES:,} rows x "
        f"{N_FEATURES} features, medians over {repeats} alternating pairs",
        ["DPSGDRegressor", "DP wall s", "SGD wall s", "wall ratio", "CPU ratio"],
        rows, timing=["DP wall s", "SGD wall s", "wall ratio", "CPU ratio"],
        note=[f"Load average {load:.1f} at the start of the timed pairs, "
              f"{os.getloadavg()[0]:.1f} at their end, on "
              f"{os.cpu_count()} logical cores."])
    report.write()


if __name__ == "__main__":
    main()
