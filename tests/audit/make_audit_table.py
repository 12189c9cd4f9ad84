"""Print the audit table of docs/privacy/audits.md.

Usage (from the repository root)::

    python tests/audit/make_audit_table.py --runs 20000 [--case NAME]

For each audit case: the release audited, the epsilon claimed for it, the
95% lower bound the audit measures on the real estimator, and the same
with the case's planted bug.
"""

import argparse
import time

import pytest
from audit_core import run_audit
from test_audits import CASES


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20_000,
                        help="fits per neighbouring dataset")
    parser.add_argument("--case", default=None,
                        help="only the cases whose name contains this")
    args = parser.parse_args()
    cases = [c for c in CASES if args.case is None or args.case in c.name]
    print(f"Fits per dataset: {args.runs:,} (half choose the test, half "
          "measure it); delta as claimed; 95% Clopper-Pearson.\n")
    print("| estimator | release audited | claimed epsilon | lower bound "
          "| planted bug | lower bound with the bug | seconds |")
    print("|---|---|---|---|---|---|---|")
    for case in cases:
        start = time.perf_counter()
        data_in, _ = case.datasets()
        claim = case.claimed(case.fit(data_in, 0))
        honest = run_audit(case, args.runs, seed=1)
        with pytest.MonkeyPatch.context() as patch:
            case.plant(patch)
            planted = run_audit(case, args.runs, seed=1)
        print(f"| {case.name} | {case.release} | {claim:.3f} "
              f"| {honest.epsilon_lower:.3f} | {case.bug} "
              f"| {planted.epsilon_lower:.3f} "
              f"| {time.perf_counter() - start:.0f} |", flush=True)


if __name__ == "__main__":
    main()
