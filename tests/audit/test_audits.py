"""Empirical privacy audits: every estimator's measured leakage stays
within its claim, and the same audit catches a planted bug.

A lower bound above the claim, at 95% confidence, means the estimator
leaks more than it says (or, with probability at most 5%, bad luck; the
seeds are fixed, so a failure is reproducible and worth reading).
"""

import auto_bounds_cases
import numpy as np
import preprocessing_cases
import pytest
from audit_cases import CASES as ESTIMATOR_CASES
from audit_core import audit_scores, clopper_pearson, run_audit

# Estimators' releases, then the private bounds of the preprocessing
# transformers and of the estimators' "auto" bounds.
CASES = ESTIMATOR_CASES + preprocessing_cases.CASES + auto_bounds_cases.CASES
SLOW_RUNS = 20_000

# The bounds cases are small on purpose (the canary must matter), which
# the estimators rightly call useless.
pytestmark = pytest.mark.filterwarnings("ignore::skdpopt.exceptions.UtilityWarning")


def _claim(case):
    data_in, _ = case.datasets()
    return case.claimed(case.fit(data_in, 0))


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_audit_within_claim(case):
    result = run_audit(case, case.fast_runs)
    assert result.epsilon_lower <= _claim(case)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_audit_catches_planted_bug(case, monkeypatch):
    claim = _claim(case)
    case.plant(monkeypatch)
    result = run_audit(case, case.fast_runs)
    assert result.epsilon_lower > claim, (
        f"the audit missed a planted bug ({case.bug}): "
        f"lower bound {result.epsilon_lower:.3f} <= claim {claim:.3f}")


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_audit_within_claim_high_power(case):
    result = run_audit(case, SLOW_RUNS, seed=1)
    assert result.epsilon_lower <= _claim(case)


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
