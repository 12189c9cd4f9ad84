"""Design of the regressors' fit check: its per-row bound and margin.

Runs the panel's default path (``bench_panel.run_task``) on the design
half's regression tables and records, for every private fit, the exact
(noise-free) sum of the clipped per-row gains in squared error over the
trivial model for a grid of bounds, and the noise multiplier of the
check.  For each bound it prints the probability, over the check's noise,
that the fit warns (released sum below ``FIT_CHECK_SPREADS`` noise
standard deviations), summed over the fits below the trivial model (on
test data) and over those at least half as good as the non-private
model: the bound is chosen to warn about the first and not the second.

Usage::

    nice -n 10 python benchmarks/design_fit_check.py [--seeds 5] [--tables a,b]
"""

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import norm

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent), str(HERE)]

import bench_panel  # noqa: E402
from panel_data import PANEL  # noqa: E402

import skdpopt.lasso  # noqa: E402
import skdpopt.sgd  # noqa: E402
from skdpopt.plans.checks import FIT_CHECK_SPREADS  # noqa: E402
from skdpopt.solvers.checks import squared_error_gains  # noqa: E402

BOUNDS = (0.01, 0.03, 0.1, 0.3, 1.0, 1e12)
RECORDS = []


def recording(release):
    """The check's release, recording its exact sums in the fit's row."""
    def wrapped(predictions, targets, plan, rng):
        RECORDS[-1]["checked"] = True
        RECORDS[-1]["multiplier"] = plan.noise_scale / (2.0 * plan.bound)
        for b in BOUNDS:
            RECORDS[-1][f"S{b:g}"] = float(np.sum(
                squared_error_gains(predictions, targets, b)))
        return release(predictions, targets, plan, rng)
    return wrapped


def opening(fit):
    """The estimator's fit, opening a row for its check (none if the fit
    does not release one: a target not centred)."""
    def wrapped(self, *args, **kwargs):
        RECORDS.append({"checked": False})
        return fit(self, *args, **kwargs)
    return wrapped


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--tables", default=None)
    parser.add_argument("--epsilon", default="0.3,1,3")
    parser.add_argument("--csv", default=None)
    args = parser.parse_args(argv)
    for module in (skdpopt.lasso, skdpopt.sgd):
        module.release_squared_error_check = recording(
            module.release_squared_error_check)
    for cls in (skdpopt.lasso.DPLasso, skdpopt.sgd.DPSGDRegressor):
        cls.fit = opening(cls.fit)
    specs = [s for s in PANEL if s.half == "design" and s.task == "regression"]
    if args.tables:
        specs = [s for s in specs if s.name in args.tables.split(",")]
    epsilons = [float(e) for e in args.epsilon.split(",")]
    rows = []
    for spec in specs:
        for seed in range(args.seeds):
            start = len(RECORDS)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                records = bench_panel.run_task(
                    spec, seed, ("DPSGDRegressor", "DPLasso"), epsilons,
                    bench_panel.MAX_ROWS)
            for record, check in zip(records, RECORDS[start:], strict=True):
                rows.append({**record, **check})
    frame = pd.DataFrame(rows)
    print(f"{(~frame.checked).sum()} fits release no check (target not centred)")
    frame = frame[frame.checked]
    good = frame.fraction >= 0.5
    below = frame.below.astype(bool)
    print(f"{len(frame)} fits: {below.sum()} below the trivial model, "
          f"{good.sum()} at least half the non-private gain")
    print("bound  P(warn) summed over: below  good  (other)")
    for b in BOUNDS:
        spread = 2.0 * b * frame.multiplier
        warn = norm.cdf((FIT_CHECK_SPREADS * spread - frame[f"S{b:g}"]) / spread)
        other = ~below & ~good
        print(f"{b:5g}  {warn[below].sum():6.1f}/{below.sum()}  "
              f"{warn[good].sum():5.1f}/{good.sum()}  "
              f"{warn[other].sum():5.1f}/{other.sum()}")
        frame[f"warn{b:g}"] = warn
    cols = ["table", "estimator", "epsilon", "seed", "fraction"] + [
        f"warn{b:g}" for b in BOUNDS]
    print(frame[below | (frame.fraction < 0.5)][cols].round(2).to_string())
    if args.csv:
        frame.to_csv(args.csv, index=False)


if __name__ == "__main__":
    main()
