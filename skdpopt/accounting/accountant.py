"""One accountant for every estimator: compose mechanisms, report (eps, delta)."""

from functools import lru_cache

import numpy as np

from . import pld, rdp
from .events import (
    EpsilonDeltaEvent,
    GaussianMechanism,
    PureDPMechanism,
    SubsampledGaussianMechanism,
    is_noiseless,
    leaves,
)
from .spent import PrivacySpent


class Accountant:
    """Composes the mechanisms of a run and bounds its total privacy loss.

    Epsilon is the smallest of the sound bounds that apply to the whole run
    (each cached per run, see :meth:`epsilon`):

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
    2.85
    >>> round(acc.epsilon(1e-5, points=2**14), 2)
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
        """Record ``count`` runs of ``mechanism`` (a leaf event or a tree).

        Parameters
        ----------
        mechanism : event
            A leaf (GaussianMechanism, SubsampledGaussianMechanism,
            LaplaceMechanism, ExponentialMechanism, PureDPMechanism,
            EpsilonDeltaEvent) or a tree of them (Repeated, Composed); see
            :mod:`skdpopt.accounting.events`.
        count : int, default=1
            How many times it ran (adaptively composed).

        Returns
        -------
        Accountant
            The accountant itself, so that calls chain.
        """
        count = int(count)
        if count < 0:
            raise ValueError(f"count must be >= 0, got {count}")
        for leaf, times in leaves(mechanism, count):
            if isinstance(leaf, EpsilonDeltaEvent) and leaf.delta == 0:
                # A pure stage composes like any pure mechanism.
                leaf = PureDPMechanism(leaf.epsilon)
            if self.events and self.events[-1][0] == leaf:
                # One event per run of identical mechanisms, so that a run
                # that repeats a planned mechanism in parts (one-vs-rest
                # problems, say) is accounted exactly as planned.
                self.events[-1] = (leaf, self.events[-1][1] + times)
            else:
                self.events.append((leaf, times))
        return self

    def rdp(self):
        """The run's composed Renyi-DP curve at ``self.orders`` (infinite
        when some stage is only bounded by an (epsilon, delta) pair)."""
        total = np.zeros(len(self.orders))
        for mechanism, count in self.events:
            if isinstance(mechanism, EpsilonDeltaEvent):
                return np.full(len(self.orders), np.inf)
            total += count * mechanism.rdp(self.orders, self.relation)
        return total

    def _is_free(self):
        return not self.events

    def _noiseless(self):
        return any(is_noiseless(m) for m, _ in self.events)

    def epsilon(self, delta, points=None, fast=False):
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
            and slower.  ``None`` uses a coarse grid of 2**11 points where
            it has converged to within about 1% (checked against a grid half
            its size), the fine grid of 2**14 points otherwise.
        fast : bool, default=False
            Skip the Renyi bound for runs of Gaussian mechanisms under
            replace-one, where the PLD is tighter except in runs with
            epsilon in the thousands (about 1% looser there) and the Renyi
            curve costs as much again.  For calibration loops; the answer is
            still an upper bound.

        Returns
        -------
        float
        """
        if self._is_free():
            return 0.0
        if self._noiseless():
            return np.inf
        bounded = [(m, c) for m, c in self.events if isinstance(m, EpsilonDeltaEvent)]
        if bounded:
            # Basic composition: the bounded stages' epsilons and deltas add
            # to the rest's guarantee at what is left of delta.
            bound_epsilon = sum(c * m.epsilon for m, c in bounded)
            left = float(delta) - sum(c * m.delta for m, c in bounded)
            if left < 0:
                return np.inf
            rest = Accountant(self.relation, self.orders)
            rest.events = [(m, c) for m, c in self.events
                           if not isinstance(m, EpsilonDeltaEvent)]
            return float(bound_epsilon + rest.epsilon(left, points, fast))
        events = tuple(self.events)
        delta = float(delta)
        bounds = [_pure_epsilon(events)]
        if delta > 0:
            bounds.append(_pld_epsilon(events, self.relation, delta, points))
            gaussian_only = all(
                isinstance(m, (GaussianMechanism, SubsampledGaussianMechanism))
                for m, _ in events)
            if not (fast and gaussian_only and np.isfinite(bounds[-1])):
                orders = (None if self.orders is rdp.DEFAULT_ORDERS
                          else tuple(self.orders))
                bounds.append(_rdp_epsilon(events, self.relation, orders, delta))
        return float(min(bounds))

    def pld_epsilon(self, delta, points):
        """The PLD bound alone on the grid of ``points`` points (``inf``
        where it does not apply, for example under add/remove); an upper
        bound like every other, for calibration probes that need not pay
        for the Renyi curve.

        Parameters
        ----------
        delta : float
            Target delta in (0, 1).
        points : int
            Grid size (see :func:`skdpopt.accounting.pld.compose_pairs`).

        Returns
        -------
        float
        """
        if (self._is_free() or self._noiseless() or delta <= 0
                or any(isinstance(m, EpsilonDeltaEvent) for m, _ in self.events)):
            return self.epsilon(delta, points, fast=True)
        return float(_pld_epsilon(tuple(self.events), self.relation,
                                  float(delta), points))

    def spent(self, delta):
        """The run's guarantee as a :class:`PrivacySpent` at ``delta``.

        Parameters
        ----------
        delta : float
            Target delta in [0, 1).

        Returns
        -------
        PrivacySpent
            ``epsilon(delta)`` and ``delta`` (delta 0 when epsilon is
            infinite), with the accountant's relation.
        """
        # The Renyi bound is skipped where the PLD is tighter (see ``fast``).
        eps = self.epsilon(delta, fast=True)
        return PrivacySpent(eps, 0.0 if eps == np.inf else float(delta), self.relation)


@lru_cache(maxsize=256)
def _rdp_epsilon(events, relation, orders, delta):
    """The Renyi bound: curves add, then the optimal conversion."""
    orders = rdp.DEFAULT_ORDERS if orders is None else np.asarray(orders)
    curve = sum(count * m.rdp(orders, relation) for m, count in events)
    return rdp.rdp_to_epsilon(orders, curve, delta)


def _pure_epsilon(events):
    total = 0.0
    for mechanism, count in events:
        pure = getattr(mechanism, "pure_epsilon", None)
        if pure is None:
            return np.inf
        total += count * pure
    return total


# The default PLD answer comes from the coarse grid when that grid has
# converged: the discretisation error shrinks about four-fold each time the
# grid doubles, so if halving the coarse grid moves epsilon by at most 3%,
# the coarse answer is within about 1% of the limit of ever finer grids.
# Otherwise the fine grid (pld's default size) is used.
COARSE_POINTS = 2**11
_CONVERGED = 1.03


@lru_cache(maxsize=256)
def _pld_epsilon(events, relation, delta, points):
    """The PLD bound (replace-one only); ``inf`` where it does not apply.

    ``points=None`` picks the grid adaptively (see ``COARSE_POINTS``); every
    grid gives an upper bound, so the choice only affects tightness.
    """
    if relation != rdp.REPLACE_ONE:
        return np.inf
    # Gaussian mechanisms compose exactly into one with mu^2 = sum mu_i^2.
    mu_squared = 0.0
    # Equal pairs anywhere in the run are composed as one run of them (the
    # composed loss is a sum of independent losses, so order is free): one
    # discretisation and one power each.
    counts = {}
    for mechanism, count in events:
        if isinstance(mechanism, GaussianMechanism):
            mu_squared += count * mechanism.mu**2
        elif (isinstance(mechanism, SubsampledGaussianMechanism)
              and mechanism.sampling_rate == 1.0):
            # Full batch: sensitivity 2C under replace-one, so mu = 2 / s.
            mu_squared += count * (2.0 / mechanism.noise_multiplier) ** 2
        elif hasattr(mechanism, "loss_pair"):
            pair = mechanism.loss_pair()
            counts[pair] = counts.get(pair, 0) + count
        else:
            return np.inf
    pairs = list(counts.items())
    if not pairs:
        return pld.gaussian_epsilon(np.sqrt(mu_squared), delta)
    if points is None:
        coarse = _pld_epsilon(events, relation, delta, COARSE_POINTS)
        if np.isfinite(coarse):
            coarser = _pld_epsilon(events, relation, delta, COARSE_POINTS // 2)
            if coarser <= _CONVERGED * coarse:
                return coarse
        return min(coarse, _pld_epsilon(events, relation, delta, pld.TARGET_POINTS))
    if mu_squared > 0:
        # N(1, s^2) against N(-1, s^2) has mu = 2 / s.
        pairs.append((pld.SubsampledGaussianPair(1.0, 2.0 / np.sqrt(mu_squared)), 1))
    return pld.compose_pairs(pairs, delta, points).epsilon(delta)


def clear_cache():
    """Forget cached results (for benchmarks that time calibration cold)."""
    _rdp_epsilon.cache_clear()
    _pld_epsilon.cache_clear()
    pld.clear_cache()


def privacy_spent(event, delta, relation=rdp.REPLACE_ONE):
    """The guarantee of a run described by ``event``, at ``delta``.

    Parameters
    ----------
    event : event
        A leaf or a tree (see :mod:`skdpopt.accounting.events`).
    delta : float
        Target delta in [0, 1).
    relation : {"replace_one", "add_remove"}, default="replace_one"

    Returns
    -------
    PrivacySpent
        ``(inf, 0)`` when some stage runs without noise.
    """
    return Accountant(relation).compose(event).spent(delta)
