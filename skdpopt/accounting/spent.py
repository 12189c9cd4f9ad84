"""The public record of what a fit spent."""

from dataclasses import dataclass


@dataclass(frozen=True)
class PrivacySpent:
    """The (epsilon, delta) guarantee a fitted estimator's release satisfies.

    Parameters
    ----------
    epsilon : float
        Privacy loss bound; ``inf`` when the fit ran without privacy.
    delta : float
        Failure probability.
    relation : str
        Neighbouring relation of the guarantee: ``"replace_one"`` means two
        datasets of the same size that differ in one record.

    Examples
    --------
    >>> from skdpopt import PrivacySpent
    >>> eps, delta = PrivacySpent(0.97, 1e-5)
    >>> eps
    0.97
    """

    epsilon: float
    delta: float
    relation: str = "replace_one"

    def __iter__(self):
        yield self.epsilon
        yield self.delta
