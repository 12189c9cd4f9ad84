"""The accountant's worked examples: the figures the privacy pages quote.

Every figure here is computed, not sampled: the accountant is
deterministic, so the full run and the quick run (``--quick``) write the
same tables (the quick one is what CI compares).

* ``relation``: one DP-SGD run (sampling rate 0.01, noise multiplier 1,
  1000 steps, delta 1e-5) under replace-one and add/remove.
* ``bounds``: the Renyi and the PLD bound of a short and a very long
  DP-SGD run and of 100 draws of an exponential mechanism.
* ``grids``: DP-SGD runs of 5 epochs at batch 256 on 40,000 rows and
  longer ones at the same sampling rate and noise multiplier 1: epsilon
  on the coarse grid, the grid half as fine, the fine grid and the limit
  of ever finer grids (extrapolated from two very fine grids, the error
  shrinking four-fold as the grid doubles), and which grid the default
  accounting uses.
* ``prediction``: subsampled Gaussian runs whose coarse grid has not
  converged: the calibration's prediction of the fine grid's answer from
  the two coarse grids against the fine grid itself.
* ``dp_accounting``: the add/remove subsampled Gaussian's Renyi curve of
  one step against Google's dp-accounting's (its integer-order closed
  form over a grid of sampling rates and noise multipliers, and its
  fractional-order series where it is off); needs dp-accounting (the
  ``test`` extra).
* ``ledger``: the privacy ledger page's example, 19 fits at epsilon 0.5
  and delta 1e-7 (a grid search of 6 settings with 3 folds and the refit)
  on a generated regression set, composed by the ledger.

Usage::

    python benchmarks/design_accounting.py [--quick]
"""

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from report import Report  # noqa: E402

from skdpopt.accounting import Accountant, SubsampledGaussianMechanism  # noqa: E402
from skdpopt.accounting.accountant import (  # noqa: E402
    _CONVERGED,
    COARSE_POINTS,
    _rdp_epsilon,
)
from skdpopt.accounting.calibration import _PREDICTABLE  # noqa: E402
from skdpopt.accounting.pld import TARGET_POINTS  # noqa: E402

DELTA = 1e-5
# Two grids far finer than the fine one, for the limit's extrapolation.
VERY_FINE = (2**16, 2**17)


def pct(x, digits=1):
    text = f"{100 * x:.{digits}f}%"
    return text[1:] if text.startswith("-") and float(text[:-1]) == 0 else text


def run(q, s, steps):
    return Accountant().compose(SubsampledGaussianMechanism(q, s), steps)


def grid_epsilons(q, s, steps, delta=DELTA):
    acc = run(q, s, steps)
    return {points: acc.pld_epsilon(delta, points)
            for points in (COARSE_POINTS // 2, COARSE_POINTS, TARGET_POINTS)}


def relation_table(report):
    q, s, steps = 0.01, 1.0, 1000
    mech = SubsampledGaussianMechanism(q, s)
    replace = Accountant().compose(mech, steps)
    add_remove = Accountant("add_remove").compose(mech, steps)
    rows = [["replace-one", "default accounting",
             f"{replace.epsilon(DELTA):.2f}"],
            ["replace-one", f"fine grid ({TARGET_POINTS} points)",
             f"{replace.epsilon(DELTA, points=TARGET_POINTS):.2f}"],
            ["replace-one", "Renyi DP",
             f"{_rdp_epsilon(tuple(replace.events), 'replace_one', None, DELTA):.2f}"],
            ["add/remove", "Renyi DP", f"{add_remove.epsilon(DELTA):.2f}"]]
    report.table("relation",
                 f"DP-SGD, sampling rate {q}, noise multiplier {s:g}, "
                 f"{steps} steps, delta {DELTA:g}",
                 ["relation", "bound", "epsilon"], rows)


def bounds_table(report):
    from skdpopt.accounting import ExponentialMechanism
    from skdpopt.accounting.accountant import _pld_epsilon

    runs = [("DP-SGD", "sampling rate 0.0064, noise multiplier 1, 782 steps",
             SubsampledGaussianMechanism(256 / 40_000, 1.0), 782),
            ("DP-SGD", "sampling rate 0.1, noise multiplier 0.8, 100000 steps",
             SubsampledGaussianMechanism(0.1, 0.8), 100_000),
            ("exponential mechanism", "score sensitivity 0.05, 100 draws",
             ExponentialMechanism(0.05), 100),
            ("exponential mechanism", "score sensitivity 0.5, 100 draws",
             ExponentialMechanism(0.5), 100)]
    rows = []
    for kind, setting, mechanism, count in runs:
        events = tuple(Accountant().compose(mechanism, count).events)
        renyi = _rdp_epsilon(events, "replace_one", None, DELTA)
        pld = _pld_epsilon(events, "replace_one", DELTA, None)
        rows.append([kind, setting, f"{renyi:.4g}", f"{pld:.4g}",
                     f"{renyi / pld:.2f}"])
    report.table(
        "bounds",
        f"Replace-one, delta {DELTA:g}: the Renyi bound and the PLD bound "
        "(default grid) of one run each",
        ["run", "setting", "Renyi DP", "PLD", "Renyi / PLD"], rows)


def grids_table(report):
    q, s = 256 / 40_000, 1.0
    rows = []
    for steps in (782, 3000, 10_000):
        eps = grid_epsilons(q, s, steps)
        fine1, fine2 = (run(q, s, steps).pld_epsilon(DELTA, p) for p in VERY_FINE)
        limit = fine2 - (fine1 - fine2) / 3.0
        half, coarse, fine = (eps[COARSE_POINTS // 2], eps[COARSE_POINTS],
                              eps[TARGET_POINTS])
        default = "coarse" if half <= _CONVERGED * coarse else "fine"
        rows.append([str(steps), f"{half:.4f}", f"{coarse:.4f}",
                     pct(half / coarse - 1), f"{fine:.4f}", f"{limit:.4f}",
                     pct(coarse / limit - 1, 2), pct(fine / limit - 1, 2), default])
    report.table(
        "grids",
        f"DP-SGD at sampling rate {q:.4g} (batch 256 of 40,000 rows; 782 "
        f"steps are 5 epochs), noise multiplier {s:g}, delta {DELTA:g}: "
        f"epsilon on grids of {COARSE_POINTS // 2}, {COARSE_POINTS} (coarse) "
        f"and {TARGET_POINTS} (fine) points; the limit extrapolated from "
        f"{VERY_FINE[0]} and {VERY_FINE[1]} points",
        ["steps", "half grid", "coarse grid", "halving moves", "fine grid",
         "limit", "coarse above limit", "fine above limit", "default grid"],
        rows)


def prediction_table(report):
    rows, offs = [], []
    for q in (2.6e-4, 1e-3, 1e-2, 0.1):
        for s in (0.8, 1.0, 2.0):
            for steps in (100, 1000, 10_000, 100_000):
                eps = grid_epsilons(q, s, steps)
                half, coarse, fine = (eps[COARSE_POINTS // 2], eps[COARSE_POINTS],
                                      eps[TARGET_POINTS])
                moved = half / coarse - 1
                if not np.isfinite(coarse) or half <= _CONVERGED * coarse:
                    continue  # converged: the coarse answer is the default
                predicted = coarse - (half - coarse) / 3.0
                off = predicted / fine - 1
                used = half <= _PREDICTABLE * coarse
                if used:
                    offs.append(abs(off))
                rows.append([f"{q:g}", f"{s:g}", str(steps), f"{fine:.4g}",
                             pct(moved), f"{predicted:.4g}", pct(off),
                             "yes" if used else "no"])
    report.table(
        "prediction",
        "Subsampled Gaussian runs whose coarse grid has not converged "
        f"(halving it moves epsilon by more than {pct(_CONVERGED - 1)}), "
        f"delta {DELTA:g}: the fine grid's epsilon, predicted from the two "
        "coarse grids (Richardson) and the prediction's error; the "
        f"calibration uses the prediction where halving moves epsilon by "
        f"at most {pct(_PREDICTABLE - 1)}",
        ["sampling rate", "noise multiplier", "steps", "fine grid",
         "halving moves", "predicted", "prediction off", "used"], rows)
    report.value("prediction.used", str(len(offs)))
    report.value("prediction.max_off", pct(max(offs)))
    report.value("prediction.median_off", pct(float(np.median(offs))))


def dp_accounting_table(report):
    import logging

    from dp_accounting.rdp import rdp_privacy_accountant as dpa_rdp

    from skdpopt.accounting import rdp

    # dp-accounting logs each order whose series does not converge.
    logging.getLogger("absl").setLevel(logging.ERROR)
    integer = [float(a) for a in [*range(2, 64), 128, 256, 512, 1024]]
    rates, multipliers = (1e-3, 1e-2, 0.1, 0.5, 0.9), (0.6, 1.0, 2.0, 5.0, 10.0)
    worst = 0.0
    for q in rates:
        for s in multipliers:
            ours = rdp.subsampled_gaussian_rdp(np.array(integer), q, s, "add_remove")
            theirs = np.array(
                dpa_rdp._compute_rdp_poisson_subsampled_gaussian(q, s, integer))
            worst = max(worst, float(np.max(np.abs(ours / theirs - 1))))
    rows = [["integer orders 2 to 63, 128 to 1024",
             f"sampling rates {', '.join(f'{q:g}' for q in rates)}; noise "
             f"multipliers {', '.join(f'{s:g}' for s in multipliers)}",
             "largest relative difference", f"{worst:.1e}"]]
    for q, s, order in ((0.01, 1.0, 1.5), (0.5, 10.0, 1.1)):
        ours = rdp.subsampled_gaussian_rdp(np.array([order]), q, s, "add_remove")[0]
        theirs = dpa_rdp._compute_rdp_poisson_subsampled_gaussian(q, s, [order])[0]
        rows.append([f"order {order:g}", f"sampling rate {q:g}; noise "
                     f"multiplier {s:g}", "dp-accounting above ours",
                     pct(theirs / ours - 1) if np.isfinite(theirs) else "inf"])
    report.table(
        "dp_accounting",
        "One step's add/remove Renyi curve of the subsampled Gaussian: ours "
        "(numerical integration, checked against quadrature and mpmath in "
        "tests/accounting/) against dp-accounting's",
        ["orders", "settings", "compared", "value"], rows)


def ledger_table(report):
    from sklearn.datasets import make_regression
    from sklearn.model_selection import GridSearchCV

    from skdpopt import DPSGDRegressor, PrivacyLedger

    X, y = make_regression(n_samples=3000, n_features=5, noise=1.0,
                           random_state=0)
    with warnings.catch_warnings(), PrivacyLedger() as ledger:
        # Seeded fits warn that they share noise; the total assumes
        # independent noise, as the page says.
        warnings.simplefilter("ignore")
        GridSearchCV(DPSGDRegressor(epsilon=0.5, delta=1e-7, random_state=0),
                     {"alpha": [1e-4, 1e-3, 1e-2], "eta0": [0.1, 0.5]},
                     cv=3, n_jobs=1).fit(X, y)
    total = ledger.spent()
    eps_sum = sum(r.spent.epsilon for r in ledger.records)
    report.table(
        "ledger",
        "GridSearchCV over 6 settings, 3 folds, of DPSGDRegressor(epsilon=0.5, "
        "delta=1e-7) on make_regression(n_samples=3000, n_features=5), "
        "in a PrivacyLedger",
        ["fits", "sum of epsilons", "composed epsilon", "composed delta"],
        [[str(len(ledger)), f"{eps_sum:.2g}", f"{total.epsilon:.2g}",
          f"{total.delta:.2g}"]])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="the quick table (the same figures: every one "
                             "is computed, none sampled)")
    Report.add_arguments(parser)
    args = parser.parse_args()
    report = Report("design_accounting", args, packages=("dp-accounting",))
    relation_table(report)
    bounds_table(report)
    grids_table(report)
    prediction_table(report)
    dp_accounting_table(report)
    ledger_table(report)
    report.write()


if __name__ == "__main__":
    main()
