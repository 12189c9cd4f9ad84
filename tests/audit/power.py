"""Derive each planted-bug audit's fixed test and run count from a pilot.

Usage (from the repository root)::

    python tests/audit/power.py [--runs 10000] [--case NAME]
    python tests/audit/power.py --seeds 1 2 3 4 5 [--case NAME]

For each audit case, ``--runs`` fits per dataset with the case's bug
planted (random states from ``PILOT_SEED * 10**6``, apart from the tests'
seeds).  The test's threshold and direction are chosen on the first
``--choose`` of them (the one that needs the fewest runs at its rates
there, at their pessimistic ends at 1%); its rates on the others, taken
at their pessimistic Clopper-Pearson ends (the rate on D at its lower
end, on D' at its upper end, each at confidence 1 - 1e-4), give the run
count: the fewest fits per dataset at which the fixed test catches the
bug with probability ``audit_core.POWER`` (:func:`audit_core.runs_needed`,
exact over the binomial hit counts).
Prints the entries of ``planted.PLANTED``.

With ``--seeds``, runs each planted-bug audit as the tests do (the stored
test and run count) at each seed and prints its bound against the claim.
"""

import argparse
import math
import time

import numpy as np
import pytest
from audit_core import (
    POWER,
    _hits,
    audit_scores,
    bound_from_counts,
    clopper_pearson,
    run_scores,
    runs_needed,
)
from planted import PLANTED
from test_audits import CASES, claim_of

PILOT_SEED = 7
PILOT_ALPHA = 1e-4
N_CANDIDATES = 200


def _candidates(scores_in, scores_out):
    values = np.unique(np.concatenate([scores_in, scores_out]))
    if len(values) > N_CANDIDATES:
        values = np.unique(np.quantile(values, np.linspace(0, 1, N_CANDIDATES)))
    return values


def choose_test(scores_in, scores_out, claim, delta):
    """The threshold and direction that need the fewest runs at their rates."""
    n = len(scores_in)
    best = (np.inf, None)
    limits = []
    for direction in (1, -1):
        for threshold in _candidates(scores_in, scores_out):
            # Rates at their pessimistic ends (at 1%), so that a threshold
            # far in a tail, whose rates this half measures poorly, is not
            # preferred for its luck.
            rate_in, _ = clopper_pearson(_hits(scores_in, threshold, direction),
                                         n, 0.01)
            _, rate_out = clopper_pearson(_hits(scores_out, threshold, direction),
                                          n, 0.01)
            # With unlimited runs the bound tends to this.
            limit = bound_from_counts(rate_in * 10**9, rate_out * 10**9,
                                      10**9, 10**9, delta, 0.5)
            if limit > claim * 1.02 + 0.02:
                limits.append((float(limit), threshold, direction, rate_in, rate_out))
    for _, threshold, direction, rate_in, rate_out in sorted(limits)[-12:]:
        runs = runs_needed(rate_in, rate_out, claim, delta)
        if runs < best[0]:
            best = (runs, (float(threshold), direction))
    if best[1] is None:
        raise RuntimeError("no test separates the planted bug from the claim")
    return best[1]


def pessimistic_rates(scores_in, scores_out, test):
    n = len(scores_in)
    hits_in = _hits(scores_in, test[0], test[1])
    hits_out = _hits(scores_out, test[0], test[1])
    rate_in, _ = clopper_pearson(hits_in, n, PILOT_ALPHA)
    _, rate_out = clopper_pearson(hits_out, n, PILOT_ALPHA)
    # Printed to 4 decimals: round the pessimistic way.
    return (math.floor(float(rate_in) * 1e4) / 1e4,
            math.ceil(float(rate_out) * 1e4) / 1e4)


def derive(case, runs, choose):
    claim = claim_of(case)
    with pytest.MonkeyPatch.context() as patch:
        case.plant(patch)
        scores_in, scores_out = run_scores(case, runs, seed=PILOT_SEED)
    test = choose_test(scores_in[:choose], scores_out[:choose], claim, case.delta)
    rates = pessimistic_rates(scores_in[choose:], scores_out[choose:], test)
    return claim, test, rates, runs_needed(*rates, claim, case.delta)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=12_000,
                        help="pilot fits per dataset")
    parser.add_argument("--choose", type=int, default=4_000,
                        help="of which the test is chosen on the first")
    parser.add_argument("--case", default=None,
                        help="only the cases whose name contains this")
    parser.add_argument("--seeds", type=int, nargs="*", default=None,
                        help="check the stored planted audits at these seeds")
    args = parser.parse_args()
    cases = [c for c in CASES if args.case is None or args.case in c.name]
    for case in cases:
        start = time.perf_counter()
        if args.seeds:
            claim = claim_of(case)
            planted = PLANTED[case.name]
            bounds = []
            for seed in args.seeds:
                with pytest.MonkeyPatch.context() as patch:
                    case.plant(patch)
                    scores = run_scores(case, planted.runs, seed=seed)
                bounds.append(audit_scores(*scores, case.delta,
                                           test=case.test).epsilon_lower)
            caught = sum(b > claim for b in bounds)
            print(f"{case.name}: claim {claim:.3f}, runs {planted.runs}, bounds "
                  + ", ".join(f"{b:.3f}" for b in bounds)
                  + f"; caught at {caught} of {len(bounds)} seeds "
                  f"[{time.perf_counter() - start:.0f} s]", flush=True)
            continue
        claim, test, rates, runs = derive(case, args.runs, args.choose)
        print(f'    "{case.name}": Planted(  # claim {claim:.3f}\n'
              f"        threshold={test[0]!r}, direction={test[1]},\n"
              f"        rates=({rates[0]}, {rates[1]}), runs={runs}),"
              f"  # pilot of {args.runs} fits: "
              f"{time.perf_counter() - start:.0f} s", flush=True)
    if not args.seeds:
        print(f"(power {POWER} at the pessimistic rates)")


if __name__ == "__main__":
    main()
