"""The private search's audit (see ``selection_cases.py``): within its claim,
and its planted bug caught."""

import pytest
import selection_cases
from audit_core import run_audit

pytestmark = pytest.mark.filterwarnings("ignore::skdpopt.exceptions.UtilityWarning")


def _claim(case):
    data_in, _ = case.datasets()
    return case.claimed(case.fit(data_in, 0))


@pytest.mark.parametrize("case", selection_cases.CASES, ids=lambda c: c.name)
def test_audit_within_claim(case):
    result = run_audit(case, case.fast_runs)
    assert result.epsilon_lower <= _claim(case)


@pytest.mark.parametrize("case", selection_cases.CASES, ids=lambda c: c.name)
def test_audit_catches_planted_bug(case, monkeypatch):
    claim = _claim(case)
    case.plant(monkeypatch)
    result = run_audit(case, case.fast_runs)
    assert result.epsilon_lower > claim, (
        f"the audit missed a planted bug ({case.bug}): "
        f"lower bound {result.epsilon_lower:.3f} <= claim {claim:.3f}")


@pytest.mark.slow
@pytest.mark.parametrize("case", selection_cases.CASES, ids=lambda c: c.name)
def test_audit_within_claim_high_power(case):
    result = run_audit(case, 20_000, seed=1)
    assert result.epsilon_lower <= _claim(case)
