"""Empirical privacy audits: every estimator's measured leakage stays
within its claim, and the same audit catches a planted bug.

A lower bound above the claim, at 95% confidence, means the estimator
leaks more than it says (or, with probability at most 5%, bad luck; the
seeds are fixed, so a failure is reproducible and worth reading).

Each case's planted-bug audit runs the case's fixed test
(``planted.PLANTED``) with the fewest fits that catch the bug with
probability ``audit_core.POWER`` whatever the seed; ``AUDIT_SEED`` (an
environment variable, 0 by default) picks the seed, to check that.
"""

import dataclasses
import os

import auto_bounds_cases
import class_cases
import minimax_check_cases
import numpy as np
import preprocessing_cases
import pytest
from audit_cases import CASES as ESTIMATOR_CASES
from audit_core import (
    POWER,
    audit_scores,
    clopper_pearson,
    detection_power,
    run_audit,
)
from planted import PLANTED

SLOW_RUNS = 20_000
SEED = int(os.environ.get("AUDIT_SEED", "0"))


def _with_test(case):
    planted = PLANTED.get(case.name)
    if planted is None:
        return case
    return dataclasses.replace(case, test=(planted.threshold, planted.direction))


# Estimators' releases, then the private bounds of the preprocessing
# transformers and of the estimators' "auto" bounds, then the classifiers'
# class totals and DPMinimaxClassifier's fit check.
CASES = [_with_test(c) for c in
         ESTIMATOR_CASES + preprocessing_cases.CASES + auto_bounds_cases.CASES
         + class_cases.CASES + minimax_check_cases.CASES]

# The bounds cases are small on purpose (the canary must matter), which
# the estimators rightly call useless.
pytestmark = pytest.mark.filterwarnings("ignore::skdpopt.exceptions.UtilityWarning")


def claim_of(case):
    """The epsilon the case's estimator claims for what its statistic sees."""
    data_in, _ = case.datasets()
    return case.claimed(case.fit(data_in, 0))


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_audit_within_claim(case):
    result = run_audit(case, case.fast_runs)
    assert result.epsilon_lower <= claim_of(case)


@pytest.mark.planted
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_audit_catches_planted_bug(case, monkeypatch):
    claim = claim_of(case)
    case.plant(monkeypatch)
    result = run_audit(case, PLANTED[case.name].runs, seed=SEED)
    # For the docs table (pytest -rP shows it).
    print(f"{case.name}: planted bug, {result.n_runs} fits, seed {SEED}: bound "
          f"{result.epsilon_lower:.3f}, claim {claim:.3f}")
    assert result.epsilon_lower > claim, (
        f"the audit missed a planted bug ({case.bug}) at seed {SEED}: "
        f"lower bound {result.epsilon_lower:.3f} <= claim {claim:.3f}")


def test_every_case_has_its_planted_audit():
    assert sorted(PLANTED) == sorted(case.name for case in CASES)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_planted_runs_have_the_power(case):
    planted = PLANTED[case.name]
    power = detection_power(*planted.rates, planted.runs, claim_of(case),
                            case.delta)
    assert power >= POWER


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_audit_within_claim_high_power(case):
    result = run_audit(case, SLOW_RUNS, seed=1)
    claim = claim_of(case)
    print(f"{case.name}: honest, {SLOW_RUNS} fits, seed 1: bound "
          f"{result.epsilon_lower:.3f}, claim {claim:.3f}")
    assert result.epsilon_lower <= claim


# -- the statistics themselves ----------------------------------------------

def test_clopper_pearson_brackets_the_rate():
    low, high = clopper_pearson(30, 100, 0.025)
    assert 0.2 < low < 0.3 < high < 0.4
    assert clopper_pearson(0, 50, 0.025)[0] == 0.0
    assert clopper_pearson(50, 50, 0.025)[1] == 1.0


def test_known_randomised_response_is_bounded_correctly():
    # Randomised response with epsilon = 2: the bound must come close to 2
    # from below, never above it (at this seed; 95% in general).
    rng = np.random.default_rng(0)
    p = np.exp(2.0) / (1 + np.exp(2.0))
    scores_in = rng.random(40_000) < p
    scores_out = rng.random(40_000) < 1 - p
    result = audit_scores(scores_in, scores_out, delta=0.0)
    assert 1.7 < result.epsilon_lower <= 2.0


def test_identical_distributions_give_no_bound():
    rng = np.random.default_rng(1)
    result = audit_scores(rng.normal(size=4000), rng.normal(size=4000), delta=1e-5)
    assert result.epsilon_lower < 0.2
