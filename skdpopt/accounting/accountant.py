"""One accountant for every estimator: compose mechanisms, report (eps, delta)."""

from functools import lru_cache

import numpy as np

from . import pld, rdp
from .events import (
    ExponentialMechanism,
    GaussianMechanism,
    SubsampledGaussianMechanism,
)
from .spent import PrivacySpent


class Accountant:
    """Composes the mechanisms of a run and bounds its total privacy loss.

    Epsilon is the smallest of the sound bounds that apply to the whole run
    (the Renyi bound is used when the PLD does not apply):

    * Renyi DP: the curves of all mechanisms add up, then the optimal
      conversion to (epsilon, delta);
    * privacy loss distributions (replace-one only): the composed
      distribution, discretised pessimistically, gives delta(epsilon)
      almost exactly; used when every mechanism has a loss pair, and exact
      in closed form when the run is only Gaussian mechanisms;
    * pure DP: the sum of the pure epsilons, when every mechanism is pure.

    Each bound holds on its own, so their minimum holds.

    Parameters
    ----------
    relation : {"replace_one", "add_remove"}, default="replace_one"
        Neighbouring relation.  The library's guarantees are replace-one;
        add/remove exists to cross-check against other accountants.
    orders : array-like of float, default=None
        Renyi orders; ``None`` uses :data:`skdpopt.accounting.rdp.DEFAULT_ORDERS`.

    Examples
    --------
    >>> from skdpopt.accounting import Accountant, SubsampledGaussianMechanism
    >>> acc = Accountant().compose(SubsampledGaussianMechanism(0.01, 1.0), 1000)
    >>> round(acc.epsilon(1e-5), 2)
    2.84
    """

    def __init__(self, relation=rdp.REPLACE_ONE, orders=None):
        if relation not in rdp.RELATIONS:
            raise ValueError(
                f"relation must be one of {rdp.RELATIONS}, got {relation!r}"
            )
        self.relation = relation
        self.orders = rdp.DEFAULT_ORDERS if orders is None else np.asarray(orders)
        self.events = []

    def compose(self, mechanism, count=1):
        """Record ``count`` runs of ``mechanism``; returns the accountant."""
        count = int(count)
        if count < 0:
            raise ValueError(f"count must be >= 0, got {count}")
        if count:
            self.events.append((mechanism, count))
        return self

    def rdp(self):
        """The run's composed Renyi-DP curve at ``self.orders``."""
        total = np.zeros(len(self.orders))
        for mechanism, count in self.events:
            total += count * mechanism.rdp(self.orders, self.relation)
        return total

    def _is_free(self):
        return not self.events

    def _noiseless(self):
        return any(
            getattr(m, "noise_multiplier", 1.0) == 0
            or getattr(m, "pure_epsilon", 0.0) == np.inf
            for m, _ in self.events
        )

    def epsilon(self, delta, points=None):
        """Smallest epsilon such that the run is (epsilon, delta)-DP.

        Results are cached on the run's mechanisms, so asking again after a
        calibration that planned the same run costs nothing.

        Parameters
        ----------
        delta : float
            Target delta in [0, 1).
        points : int, default=None
            Grid size of the PLD computation (see
            :func:`skdpopt.accounting.pld.compose_pairs`); more is tighter
            and slower.

        Returns
        -------
        float
        """
        if self._is_free():
            return 0.0
        if self._noiseless():
            return np.inf
        orders = None if self.orders is rdp.DEFAULT_ORDERS else tuple(self.orders)
        return _cached_epsilon(tuple(self.events), self.relation, orders,
                               float(delta), points)

    def spent(self, delta):
        """The run's guarantee as a :class:`PrivacySpent` at ``delta``."""
        eps = self.epsilon(delta)
        return PrivacySpent(eps, 0.0 if eps == np.inf else float(delta), self.relation)


@lru_cache(maxsize=256)
def _cached_epsilon(events, relation, orders, delta, points):
    """Epsilon of a run: the smallest of the bounds that apply (see Accountant).

    The Renyi bound is computed when the PLD does not apply, and when the
    run has exponential mechanisms: their loss pair is that of any 2D-DP
    mechanism and ignores the bounded-range property, which only their
    Renyi curve ``alpha D^2 / 2`` uses (for many draws it is about half the
    PLD's epsilon).  Elsewhere the PLD is the tighter (checked over the
    tests' grid).
    """
    bounds = [_pure_epsilon(events)]
    if delta > 0:
        pld_bound = _pld_epsilon(events, relation, delta, points)
        bounds.append(pld_bound)
        bounded_range = any(isinstance(m, ExponentialMechanism) for m, _ in events)
        if not np.isfinite(pld_bound) or bounded_range:
            orders = rdp.DEFAULT_ORDERS if orders is None else np.asarray(orders)
            curve = sum(count * m.rdp(orders, relation) for m, count in events)
            bounds.append(rdp.rdp_to_epsilon(orders, curve, delta))
    return float(min(bounds))


def _pure_epsilon(events):
    total = 0.0
    for mechanism, count in events:
        pure = getattr(mechanism, "pure_epsilon", None)
        if pure is None:
            return np.inf
        total += count * pure
    return total


def _pld_epsilon(events, relation, delta, points):
    if relation != rdp.REPLACE_ONE:
        return np.inf
    # Gaussian mechanisms compose exactly into one with mu^2 = sum mu_i^2.
    mu_squared = 0.0
    pairs = []
    for mechanism, count in events:
        if isinstance(mechanism, GaussianMechanism):
            mu_squared += count * mechanism.mu**2
        elif (isinstance(mechanism, SubsampledGaussianMechanism)
              and mechanism.sampling_rate == 1.0):
            # Full batch: sensitivity 2C under replace-one, so mu = 2 / s.
            mu_squared += count * (2.0 / mechanism.noise_multiplier) ** 2
        elif hasattr(mechanism, "loss_pair"):
            pairs.append((mechanism.loss_pair(), count))
        else:
            return np.inf
    if not pairs:
        return pld.gaussian_epsilon(np.sqrt(mu_squared), delta)
    if mu_squared > 0:
        # N(1, s^2) against N(-1, s^2) has mu = 2 / s.
        pairs.append((pld.SubsampledGaussianPair(1.0, 2.0 / np.sqrt(mu_squared)), 1))
    return pld.compose_pairs(pairs, delta, points).epsilon(delta)
