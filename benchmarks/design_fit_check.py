"""Design of the regressors' fit check: its per-row bound and its rule.

Runs the panel's default path (``bench_panel.run_task``) on the design
half's regression tables and records, for every private fit, the exact
(noise-free) sums of the clipped per-row gains in squared error over the
released location and over the mean of the targets clipped to
``REGRESSION_MEAN_BOUND`` (what the check's released mean estimates) for
a grid of bounds, and the noise multiplier of each of the check's
releases.  For each bound it prints the probability, over the check's
noise, that the fit warns (``RegressionCheckPlan.clearly_better``: either
sum below ``FIT_CHECK_SPREADS`` noise standard deviations, the second
plus the lift its mean's noise gives; the mean's noise enters through
that lift only), summed over the fits below the trivial model (on test
data) and over those at least half as good as the non-private model: the
bound is chosen to warn about the first and not the second.  The
``rules`` table compares, at the default bound, the rule that compared
with the location only (one release on the check's whole share).

``--families`` runs generated tables through the same path instead
(``FAMILIES``: skewed counts, log targets off zero with a long lower
tail, targets independent of the features, a weak signal on a target
far from zero; four numeric columns with offsets and a categorical one)
and prints the same tables (``design_fit_check.families``).
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
from panel_data import PANEL, TableSpec, get_spec  # noqa: E402
from report import Report  # noqa: E402

import skdpopt._regressors  # noqa: E402
import skdpopt.lasso  # noqa: E402
import skdpopt.sgd  # noqa: E402
from skdpopt.plans.checks import (  # noqa: E402
    FIT_CHECK_SPREADS,
    REGRESSION_CHECK_BOUND,
    REGRESSION_CHECK_RELEASES,
)
from skdpopt.solvers.checks import clipped_targets, squared_error_gains  # noqa: E402

BOUNDS = (0.01, 0.03, 0.1, 0.3, 1.0, 1e12)
RECORDS = []
# Generated families: name -> rows.  Weak and medium signals fail at small
# budgets; "logoff" and "skewcount" are the same families with more signal.
FAMILIES = {"skewcount": 4400, "skewcount_mid": 4400, "skewcount_weak": 4400,
            "logoff": 30000, "logoff_mid": 30000, "logoff_weak": 30000,
            "indep_log": 30000, "indep_skew": 8000, "weak_offset": 3000}


def family_table(name, seed):
    """A generated table of the family ``name`` and its spec: columns age
    (20 to 89), year (2000 to 2010), income (log-normal, around 22,000),
    a count (Poisson 2) and a category of three levels."""
    n = FAMILIES[name]
    rng = np.random.default_rng(1000 + seed)
    age = rng.integers(20, 90, n).astype(float)
    year = rng.integers(2000, 2011, n).astype(float)
    income = rng.lognormal(10, 0.7, n)
    count = rng.poisson(2.0, n).astype(float)
    level = rng.choice(["a", "b", "c"], n)
    za, zi, zc = [(v - v.mean()) / v.std() for v in (age, np.log(income), count)]
    effect = np.select([level == "a", level == "b"], [0.2, -0.1], 0.0)

    def lower_tail(share, scale):
        # A log target's long lower tail (low incomes, small counts).
        return np.where(rng.random(n) < share, rng.exponential(scale, n), 0.0)

    def counts(mean, dispersion):
        return rng.negative_binomial(dispersion, dispersion / (dispersion + mean))

    y = {
        "skewcount": lambda: counts(np.exp(1.5 + 0.25 * zc + 0.12 * za + effect), 1.0),
        "skewcount_mid": lambda: counts(np.exp(1.5 + 0.15 * zc + 0.08 * za), 0.8),
        "skewcount_weak": lambda: counts(np.exp(1.5 + 0.08 * zc + 0.05 * za), 0.8),
        "logoff": lambda: (6.0 + 0.2 * zi + 0.12 * za + effect
                           + rng.normal(0, 0.45, n) - lower_tail(0.12, 1.2)),
        "logoff_mid": lambda: (6.0 + 0.12 * zi + 0.08 * za + 0.5 * effect
                               + rng.normal(0, 0.5, n) - lower_tail(0.08, 2.0)),
        "logoff_weak": lambda: (6.0 + 0.05 * zi + 0.03 * za
                                + rng.normal(0, 0.45, n) - lower_tail(0.12, 1.2)),
        "indep_log": lambda: 6.0 + rng.normal(0, 0.45, n) - lower_tail(0.12, 1.2),
        "indep_skew": lambda: rng.lognormal(3, 1.0, n),
        "weak_offset": lambda: 100 + 0.15 * za + rng.normal(0, 1, n),
    }[name]().astype(float)
    X = pd.DataFrame({"age": age, "year": year, "income": income,
                      "count": count, "level": level})
    spec = TableSpec(name=name, package="generated", item=name, n_rows=n,
                     half="design", task="regression", target="y",
                     target_rule="generated",
                     numeric=("age", "year", "income", "count"),
                     categorical={"level": ("a", "b", "c")})
    return spec, (X, y, None)


def recording(release):
    """The check's release, recording its exact sums in the fit's row."""
    def wrapped(predictions, targets, plan, rng):
        record = RECORDS[-1]
        record["checked"] = True
        record["multiplier"] = plan.noise_multiplier
        record["n_check"] = len(targets)
        record["lift"] = plan.mean_spread ** 2 / len(targets)
        mean = float(np.mean(clipped_targets(targets, plan.mean_bound)))
        for b in BOUNDS:
            record[f"S{b:g}"] = float(np.sum(
                squared_error_gains(predictions, targets, b)))
            record[f"M{b:g}"] = float(np.sum(
                squared_error_gains(predictions, targets, b, constant=mean)))
        return release(predictions, targets, plan, rng)
    return wrapped


def warn_probability(frame, bound):
    """The probability over the check's noise that each recorded fit warns
    at ``bound``: one minus the probability that both sums clear their
    margins (independent noises)."""
    spread = 2.0 * bound * frame.multiplier
    margin = FIT_CHECK_SPREADS * spread
    clear = (norm.cdf((frame[f"S{bound:g}"] - margin) / spread)
             * norm.cdf((frame[f"M{bound:g}"] - margin - frame.lift) / spread))
    return 1.0 - clear


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
    parser.add_argument("--families", action="store_true",
                        help="the generated families instead of the design tables")
    Report.add_arguments(parser)
    args = parser.parse_args(argv)
    if args.quick:
        args.seeds = 1
    # A partial run (other tables or budgets) prints its tables only.
    report = Report("design_fit_check" + (".families" if args.families else ""),
                    args,
                    write=(args.tables is None and args.epsilon == "0.3,1,3"
                           and args.seeds == (1 if args.quick else 5)))
    skdpopt._regressors.release_squared_error_check = recording(
        skdpopt._regressors.release_squared_error_check)
    for cls in (skdpopt.lasso.DPLasso, skdpopt.sgd.DPSGDRegressor):
        cls.fit = opening(cls.fit)
    names = (list(FAMILIES) if args.families else
             [s.name for s in PANEL if s.half == "design" and s.task == "regression"])
    if args.tables:
        names = [name for name in names if name in args.tables.split(",")]
    epsilons = [float(e) for e in args.epsilon.split(",")]
    rows = []
    for name in names:
        for seed in range(args.seeds):
            spec, table = (family_table(name, seed) if args.families
                           else (get_spec(name), None))
            start = len(RECORDS)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                records = bench_panel.run_task(
                    spec, seed, ("DPSGDRegressor", "DPLasso"), epsilons,
                    bench_panel.MAX_ROWS, table=table)
            for record, check in zip(records, RECORDS[start:], strict=True):
                rows.append({**record, **check})
    frame = pd.DataFrame(rows)
    source = ("generated families" if args.families
              else "design half's regression tables")
    report.note(f"{source}, default path, epsilon "
                f"{args.epsilon.replace(',', ', ')}, {args.seeds} seed(s)")
    report.value("unchecked", int((~frame.checked).sum()))
    frame = frame[frame.checked]
    below = frame.below.astype(bool)
    # Not below: a family whose non-private model is itself below the
    # trivial one gives a positive fraction to a private fit below it too.
    good = (frame.fraction >= 0.5) & ~below
    other = ~below & ~good
    report.value("checked", len(frame))
    report.value("below", int(below.sum()))
    report.value("good", int(good.sum()))
    table = []
    for b in BOUNDS:
        warn = warn_probability(frame, b)
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
    # The rule that compared with the location only, on one release of the
    # check's whole share (multiplier sqrt(k) times smaller).
    b = REGRESSION_CHECK_BOUND
    single = 2.0 * b * frame.multiplier / np.sqrt(REGRESSION_CHECK_RELEASES)
    location_only = norm.cdf((FIT_CHECK_SPREADS * single - frame[f"S{b:g}"]) / single)
    report.table(
        "rules",
        f"Expected number of warnings at the bound {b:g}: the fits below the "
        f"trivial model, those with at least half the non-private gain, the "
        f"others",
        ["rule", "below trivial", "at least half", "others"],
        [[name, f"{w[below].sum():.1f}", f"{w[good].sum():.1f}",
          f"{w[other].sum():.1f}"]
         for name, w in (("location only", location_only),
                         ("location and mean", frame[f"warn{b:g}"]))])
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
