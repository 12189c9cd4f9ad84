"""Each planted-bug audit's fixed test and run count, derived from a pilot.

The numbers are printed by ``python tests/audit/power.py --runs 10000``
(see its docstring): for each case, the test (threshold and direction)
chosen on half of a pilot of fits with the bug planted, the test's rates
on the other half at their pessimistic Clopper-Pearson ends (rate on D
low, on D' high, each at 1 - 1e-4), and the fewest fits per dataset at
which the test catches the bug with probability ``audit_core.POWER`` at
those rates.  ``test_audits.test_planted_runs_have_the_power`` recomputes
that probability from the stored rates.
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class Planted:
    """A planted-bug audit's fixed test, its rates with the bug, its runs.

    Attributes
    ----------
    threshold : float
    direction : int
        +1: "statistic > threshold" signals the dataset D (in), -1: "<".
    rates : (float, float)
        Pessimistic probabilities that a fit on D, and on D', lands in
        the test's rejection region with the bug planted.
    runs : int
        Fits per dataset.
    """

    threshold: float
    direction: int
    rates: tuple
    runs: int


PLANTED = {
}
