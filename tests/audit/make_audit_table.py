"""Print the audit table of docs/privacy/audits.md.

Usage (from the repository root)::

    python tests/audit/make_audit_table.py --runs 20000 [--case NAME]

For each audit case: the release audited, the epsilon claimed for it, the
95% lower bound the audit measures on the real estimator (``--runs`` fits
per dataset, seed 1), and the bound of the planted-bug audit as the tests
run it (its derived number of fits, seed 0).
"""

import argparse
import time

import pytest
from audit_core import run_audit
from planted import PLANTED
from test_audits import CASES, claim_of


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20_000,
                        help="fits per neighbouring dataset")
    parser.add_argument("--case", default=None,
                        help="only the cases whose name contains this")
    args = parser.parse_args()
    cases = [c for c in CASES if args.case is None or args.case in c.name]
    print(f"Honest audits: {args.runs:,} fits per dataset; delta as claimed; "
          "95% Clopper-Pearson.\n")
    print("| estimator | release audited | claimed epsilon | lower bound "
          "| planted bug | fits with the bug | lower bound with the bug "
          "| seconds |")
    print("|---|---|---|---|---|---|---|---|")
    for case in cases:
        start = time.perf_counter()
        claim = claim_of(case)
        honest = run_audit(case, args.runs, seed=1)
        runs = PLANTED[case.name].runs
        with pytest.MonkeyPatch.context() as patch:
            case.plant(patch)
            planted = run_audit(case, runs, seed=0)
        print(f"| {case.name} | {case.release} | {claim:.3f} "
              f"| {honest.epsilon_lower:.3f} | {case.bug} | {runs:,} "
              f"| {planted.epsilon_lower:.3f} "
              f"| {time.perf_counter() - start:.0f} |", flush=True)


if __name__ == "__main__":
    main()
