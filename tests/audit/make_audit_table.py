"""Write the audit table of docs/privacy/audits.md.

Usage (from the repository root)::

    python tests/audit/make_audit_table.py [--runs 20000] [--case NAME]

For each audit case: the release audited, the epsilon claimed for it, the
95% lower bound the audit measures on the real estimator (``--runs`` fits
per dataset, seed 1, as CI's slow stage runs it), and the bounds of the
planted-bug audit as the tests run it (its derived number of fits and
fixed test) at seeds 0 (CI's planted stage) to 5.  A whole run writes
``docs/benchmarks/_generated/audits.md`` through ``benchmarks/report.py``
(the commit, command, machine and date in its header); a run restricted by
``--case`` only prints its rows.  About half an hour on 2 idle cores.
"""

import argparse
import sys
import time
from pathlib import Path

import pytest
from audit_core import audit_scores, run_audit, run_scores
from planted import PLANTED
from test_audits import CASES, claim_of

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

from report import Report  # noqa: E402

PLANTED_SEEDS = range(6)
COLUMNS = ["estimator", "release audited", "claimed epsilon", "lower bound",
           "planted bug", "fits with the bug",
           "lower bound with the bug, seeds 0 to 5", "seconds"]


def planted_bounds(case):
    planted = PLANTED[case.name]
    bounds = []
    for seed in PLANTED_SEEDS:
        with pytest.MonkeyPatch.context() as patch:
            case.plant(patch)
            scores = run_scores(case, planted.runs, seed=seed)
        bounds.append(audit_scores(*scores, case.delta,
                                   test=getattr(case, "test", None)).epsilon_lower)
    return bounds


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20_000,
                        help="fits per neighbouring dataset")
    parser.add_argument("--case", default=None,
                        help="only the cases whose name contains this")
    Report.add_arguments(parser)
    args = parser.parse_args()
    cases = [c for c in CASES if args.case is None or args.case in c.name]
    rows = []
    caught_total = audits_total = 0
    for case in cases:
        start = time.perf_counter()
        claim = claim_of(case)
        honest = run_audit(case, args.runs, seed=1)
        bounds = planted_bounds(case)
        rows.append([case.name, case.release, f"{claim:.3f}",
                     f"{honest.epsilon_lower:.3f}", case.bug,
                     f"{PLANTED[case.name].runs:,}",
                     ", ".join(f"{b:.3f}" for b in bounds),
                     f"{time.perf_counter() - start:.0f}"])
        print(" | ".join(rows[-1]), flush=True)
        caught = sum(b > claim for b in bounds)
        caught_total += caught
        audits_total += len(bounds)
        if caught < len(bounds):
            print(f"  {case.name}: the planted bug was caught at {caught} of "
                  f"{len(bounds)} seeds", flush=True)
    report = Report("audits", args, write=args.case is None)
    report.table(
        "audits",
        f"Audits: {args.runs:,} honest fits per dataset (seed 1); the planted "
        "bug at its derived run count and fixed test, seeds 0 to 5; 95% "
        "Clopper-Pearson lower bounds",
        COLUMNS, rows, timing=["seconds"])
    report.value("planted audits that caught their bug",
                 f"{caught_total} of {audits_total}")
    report.write()


if __name__ == "__main__":
    main()
