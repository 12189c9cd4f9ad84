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

Usage::

    python benchmarks/bench_sgd_timing.py              # 9 pairs per row
    python benchmarks/bench_sgd_timing.py --repeats 5
"""

import argparse
import os
import platform
import time
import warnings

import numpy as np
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
    parser.add_argument("--repeats", type=int, default=9)
    args = parser.parse_args(argv)
    X, y = data()
    warnings.simplefilter("ignore")
    # Warm-up: imports, BLAS, the first calibration.
    DPSGDRegressor(delta=1.0 / N_SAMPLES**2, random_state=0).fit(X[:20_000], y[:20_000])
    SGDRegressor(max_iter=EPOCHS, tol=None).fit(X[:20_000], y[:20_000])
    print(f"{N_SAMPLES:,} rows x {N_FEATURES} features, {EPOCHS} epochs, "
          f"{args.repeats} alternating pairs per row; {platform.machine()}, "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at "
          "the start")
    print(f"{'DPSGDRegressor':22s} {'DP wall s':>9s} {'SGD wall s':>10s} "
          f"{'wall ratio':>10s} {'CPU ratio':>9s}")
    for label, cold in (("cold (cache cleared)", True), ("warm (cache kept)", False)):
        t = pairs(X, y, args.repeats, cold)
        wall_ratio = np.median(t[:, 0] / t[:, 2])
        cpu_ratio = np.median(t[:, 1] / t[:, 3])
        print(f"{label:22s} {np.median(t[:, 0]):9.3f} {np.median(t[:, 2]):10.3f} "
              f"{wall_ratio:10.2f} {cpu_ratio:9.2f}", flush=True)


if __name__ == "__main__":
    main()
