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
The tables go to ``docs/benchmarks/_generated/design_fit_check.md`` (see
``report.py``); ``--quick`` runs one seed.

Usage::

    nice -n 10 python benchmarks/design_fit_check.py [--quick] [--seeds 5]
        [--tables a,b]
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
from report import Report  # noqa: E402

import skdpopt._regressors  # noqa: E402
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
    parser.add_argument("--quick", action="store_true", help="one seed")
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--tables", default=None)
    parser.add_argument("--epsilon", default="0.3,1,3")
    parser.add_argument("--csv", default=None)
    Report.add_arguments(parser)
    args = parser.parse_args(argv)
    if args.quick:
        args.seeds = 1
    # A partial run (other tables or budgets) prints its tables only.
    report = Report("design_fit_check", args,
                    write=(args.tables is None and args.epsilon == "0.3,1,3"
                           and args.seeds == (1 if args.quick else 5)))
    skdpopt._regressors.release_squared_error_check = recording(
        skdpopt._regressors.release_squared_error_check)
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
    report.note(f"design half's regression tables, default path, epsilon "
                f"{args.epsilon.replace(',', ', ')}, {args.seeds} seed(s)")
    report.value("unchecked", int((~frame.checked).sum()))
    frame = frame[frame.checked]
    good = frame.fraction >= 0.5
    below = frame.below.astype(bool)
    other = ~below & ~good
    report.value("checked", len(frame))
    report.value("below", int(below.sum()))
    report.value("good", int(good.sum()))
    table = []
    for b in BOUNDS:
        spread = 2.0 * b * frame.multiplier
        warn = norm.cdf((FIT_CHECK_SPREADS * spread - frame[f"S{b:g}"]) / spread)
        frame[f"warn{b:g}"] = warn
        table.append([f"{b:g}", f"{warn[below].sum():.1f}",
                      f"{warn[good].sum():.1f}", f"{warn[other].sum():.1f}"])
    report.table(
        "bounds",
        f"Expected number of warnings over the check's noise, summed over "
        f"the {len(frame)} checked fits: {below.sum()} below the trivial "
        f"model, {good.sum()} with at least half the non-private gain, "
        f"{other.sum()} others (bound 1e+12: no clipping)",
        ["bound", "below trivial", "at least half", "others"], table)
    cols = ["table", "estimator", "epsilon", "seed"]
    report.table(
        "below",
        "The fits below the trivial model: fraction of the non-private "
        "gain and the probability of a warning at each bound",
        cols + ["fraction"] + [f"{b:g}" for b in BOUNDS],
        [[str(r[c]) for c in cols] + [f"{r.fraction:.2f}"]
         + [f"{r[f'warn{b:g}']:.2f}" for b in BOUNDS]
         for _, r in frame[below].iterrows()])
    if args.csv:
        frame.to_csv(args.csv, index=False)
    report.write()

if __name__ == "__main__":
    main()
