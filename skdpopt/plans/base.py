"""What every privacy plan holds."""

from dataclasses import dataclass

from ..accounting import privacy_spent


@dataclass(frozen=True)
class PrivacyPlan:
    """Everything a fit will release, computed before it reads the data.

    A plan is made from public quantities only: the number of rows and
    features, the declared classes or groups, the hyperparameters, epsilon
    and delta.  It holds the schedule, the budget split, the calibrated
    noise scales, and the event tree of every release; the solver uses the
    scales and the estimator reports ``privacy_spent_`` from the tree, so
    the reported guarantee never depends on the path a run took.

    Attributes
    ----------
    epsilon, delta : float
        The requested guarantee.
    event : event
        Event tree (see :mod:`skdpopt.accounting.events`) of everything
        the fit releases.
    """

    epsilon: float
    delta: float
    event: object

    def spent(self):
        """The plan's guarantee at its delta, as a :class:`PrivacySpent`."""
        return privacy_spent(self.event, self.delta)
