"""Descriptions of the mechanisms a run composes, each with its privacy curves.

A mechanism here is a description, not a sampler: its parameters are the
noise scale relative to the sensitivity under the accountant's neighbouring
relation.  Each one provides its Renyi-DP curve and, where one is available,
its privacy loss pair for PLD accounting and its pure-DP epsilon.
"""

from dataclasses import dataclass

from . import pld, rdp


@dataclass(frozen=True)
class GaussianMechanism:
    """Gaussian noise added to a query.

    Parameters
    ----------
    noise_multiplier : float
        Noise standard deviation divided by the query's L2 sensitivity under
        the neighbouring relation (for a sum of records each clipped to norm
        C, the replace-one sensitivity is 2C).
    """

    noise_multiplier: float

    def rdp(self, orders, relation):
        return rdp.gaussian_rdp(orders, self.noise_multiplier)

    @property
    def mu(self):
        """Sensitivity over noise std (the Gaussian-DP parameter)."""
        return 1.0 / self.noise_multiplier


@dataclass(frozen=True)
class SubsampledGaussianMechanism:
    """Gaussian noise on a sum over a Poisson sample of clipped records.

    Parameters
    ----------
    sampling_rate : float
        Probability q that each record is in the sample.
    noise_multiplier : float
        Noise standard deviation divided by the clip norm C bounding each
        record's contribution.
    """

    sampling_rate: float
    noise_multiplier: float

    def rdp(self, orders, relation):
        return rdp.subsampled_gaussian_rdp(
            orders, self.sampling_rate, self.noise_multiplier, relation
        )

    def loss_pair(self):
        return pld.SubsampledGaussianPair(self.sampling_rate, self.noise_multiplier)


@dataclass(frozen=True)
class LaplaceMechanism:
    """Laplace noise added to a scalar query.

    Parameters
    ----------
    epsilon0 : float
        Sensitivity divided by the Laplace scale.
    """

    epsilon0: float

    def rdp(self, orders, relation):
        return rdp.laplace_rdp(orders, self.epsilon0)

    def loss_pair(self):
        return pld.LaplacePair(self.epsilon0)

    @property
    def pure_epsilon(self):
        return self.epsilon0


@dataclass(frozen=True)
class ExponentialMechanism:
    """One draw with probabilities proportional to ``exp(score)``.

    Parameters
    ----------
    score_sensitivity : float
        Largest change of any candidate's score between neighbouring datasets.
        The draw is ``2 * score_sensitivity``-DP and bounded-range.
    """

    score_sensitivity: float

    def rdp(self, orders, relation):
        return rdp.exponential_mechanism_rdp(orders, self.score_sensitivity)

    def loss_pair(self):
        return pld.RandomizedResponsePair(self.pure_epsilon)

    @property
    def pure_epsilon(self):
        return 2.0 * self.score_sensitivity


@dataclass(frozen=True)
class PureDPMechanism:
    """Any epsilon0-DP mechanism (for example report-noisy-max with Laplace).

    Parameters
    ----------
    epsilon0 : float
        Its pure-DP epsilon under the neighbouring relation.
    """

    epsilon0: float

    def rdp(self, orders, relation):
        return rdp.pure_dp_rdp(orders, self.epsilon0)

    def loss_pair(self):
        return pld.RandomizedResponsePair(self.epsilon0)

    @property
    def pure_epsilon(self):
        return self.epsilon0
