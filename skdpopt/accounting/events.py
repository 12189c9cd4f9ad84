"""Events: descriptions of what a run releases, composable as data.

A leaf event is a mechanism described, not sampled: its parameters are the
noise scale relative to the sensitivity under the accountant's neighbouring
relation.  Each leaf provides its Renyi-DP curve and, where one is
available, its privacy loss pair for PLD accounting and its pure-DP epsilon.
:class:`EpsilonDeltaEvent` stands for a stage that can only be bounded by an
(epsilon, delta) pair.

Trees are built with :class:`Repeated` and :class:`Composed` (or the
functions :func:`repeat` and :func:`compose`), in the spirit of the DpEvent
trees of Google's dp-accounting: a plan's event says everything the fit
will release, and :func:`leaves` flattens it for the accountant.

Two nodes are accounted as a whole rather than flattened, because their
guarantee is not a composition of their parts': :class:`Parallel` (runs on
disjoint parts of the rows) and :class:`RepeatAndSelect` (a random number
of runs of which only the best is released).  The accountant treats them
as leaves: each gives its Renyi-DP curve (:func:`event_rdp` of its parts)
and, where one holds, its pure-DP epsilon.
"""

import functools
from dataclasses import dataclass

import numpy as np
from scipy.special import logsumexp

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


@dataclass(frozen=True)
class EpsilonDeltaEvent:
    """A stage known only to be (epsilon, delta)-DP.

    Used where a stage's mechanisms are chosen from an earlier noisy release
    (so they are not known when the plan is made) and the stage is
    calibrated to a fixed (epsilon, delta): the accountant composes it with
    the rest by basic composition, which holds whatever was chosen.
    ``EpsilonDeltaEvent(inf, 0)`` is a fit without privacy.

    Parameters
    ----------
    epsilon : float
        Its epsilon, ``inf`` allowed.
    delta : float
        Its delta.
    """

    epsilon: float
    delta: float = 0.0

    @property
    def pure_epsilon(self):
        return self.epsilon if self.delta == 0 else None


@dataclass(frozen=True)
class Repeated:
    """``count`` adaptive runs of ``event``.

    Parameters
    ----------
    event : event
        A leaf or a tree.
    count : int
        How many times it runs (>= 0).
    """

    event: object
    count: int

    def __post_init__(self):
        if int(self.count) != self.count or self.count < 0:
            raise ValueError(f"count must be an integer >= 0, got {self.count!r}")


@dataclass(frozen=True)
class Composed:
    """Events run one after another, each possibly chosen after the last.

    Parameters
    ----------
    events : tuple of events
        Leaves or trees, in the order they run.
    """

    events: tuple = ()


def repeat(event, count):
    """``Repeated(event, count)``, or the empty composition when count is 0.

    Parameters
    ----------
    event : event
        A leaf or a tree.
    count : int
        How many times it runs.

    Returns
    -------
    event
        ``event`` itself when ``count`` is 1.
    """
    count = int(count)
    if count == 0:
        return Composed(())
    if count == 1:
        return event
    return Repeated(event, count)


def compose(*events):
    """One :class:`Composed` of ``events``.

    Nested compositions are flattened and empty ones dropped (the tree
    describes the same run).

    Parameters
    ----------
    *events : event
        Leaves or trees, in the order they run; ``None`` entries are
        skipped.

    Returns
    -------
    event
        The single event when only one remains, else a :class:`Composed`.
    """
    flat = []
    for event in events:
        if isinstance(event, Composed):
            flat.extend(e for e in event.events
                        if not (isinstance(e, Composed) and not e.events))
        elif event is not None:
            flat.append(event)
    if len(flat) == 1 and not isinstance(flat[0], Composed):
        return flat[0]
    return Composed(tuple(flat))


def leaves(event, count=1):
    """The tree's leaf events with how many times each runs.

    Parameters
    ----------
    event : event
        A leaf or a tree.
    count : int, default=1
        Multiplies every count (for a repeated subtree).

    Returns
    -------
    list of (leaf, int)
        Consecutive runs of the same leaf are merged.
    """
    out = []

    def visit(node, times):
        if isinstance(node, Composed):
            for child in node.events:
                visit(child, times)
        elif isinstance(node, Repeated):
            visit(node.event, times * int(node.count))
        elif times:
            if out and out[-1][0] == node:
                out[-1] = (node, out[-1][1] + times)
            else:
                out.append((node, times))

    visit(event, int(count))
    return out


def is_noiseless(leaf):
    """Whether a leaf releases without noise (infinite epsilon)."""
    return (getattr(leaf, "noise_multiplier", 1.0) == 0
            or getattr(leaf, "pure_epsilon", 0.0) == np.inf
            or getattr(leaf, "epsilon", 0.0) == np.inf)


@dataclass(frozen=True)
class Parallel:
    """Runs on disjoint parts of the rows, each released.

    The parts are fixed by row position, independently of the data.  Two
    replace-one neighbours differ in one row, which lies in one part: the
    other runs read identical inputs, so the whole is bounded by its worst
    part (at every Renyi order, and in pure DP) whichever part that is.
    A run may read another run's release (a score computed on one part from
    a model fitted on the other): that is post-processing for the first,
    and the second's bound holds for every model it is given.

    Parameters
    ----------
    events : tuple of events
        One per part.
    """

    events: tuple = ()

    def rdp(self, orders, relation):
        """The worst part's curve at each order.

        Parameters
        ----------
        orders : ndarray of float
            Orders ``> 1``.
        relation : {"replace_one", "add_remove"}
            Neighbouring relation.

        Returns
        -------
        ndarray of float
        """
        orders = np.asarray(orders, dtype=float)
        if not self.events:
            return np.zeros(len(orders))
        return np.max([event_rdp(e, orders, relation) for e in self.events], axis=0)

    @property
    def pure_epsilon(self):
        """The worst part's pure epsilon (None unless every part is pure)."""
        parts = [event_pure_epsilon(e) for e in self.events]
        if any(p is None for p in parts):
            return None
        return max(parts, default=0.0)


@dataclass(frozen=True)
class RepeatAndSelect:
    """A random number of runs, each of one candidate drawn uniformly at
    random; only the best run's output is released (Papernot and Steinke
    2022; Liu and Talwar 2019).

    The number of runs K is drawn independently of the data and is not
    released: a truncated negative binomial of shape ``shape`` (``0`` is
    the logarithmic distribution, ``1`` the geometric of Liu and Talwar) or
    a Poisson (``shape = inf``; K = 0 releases nothing), with mean
    ``mean``.  One run is the mixture over ``candidates`` with the drawn
    candidate released, whose Renyi divergence at order a is
    ``log(mean over c of exp((a - 1) D_c)) / (a - 1)``; the repetition's
    curve is :func:`skdpopt.accounting.rdp.repeat_and_select_rdp` of it.

    Parameters
    ----------
    candidates : tuple of events
        What one run releases, for each candidate.
    mean : float
        Expected number of runs (> 1).
    shape : float
        ``eta >= 0`` of the truncated negative binomial, or ``inf``.
    """

    candidates: tuple
    mean: float
    shape: float

    def __post_init__(self):
        if not self.candidates:
            raise ValueError("RepeatAndSelect needs at least one candidate")
        if not self.mean > 1:
            raise ValueError(f"mean must be > 1, got {self.mean!r}")
        if not self.shape >= 0:
            raise ValueError(f"shape must be >= 0 or inf, got {self.shape!r}")

    def base_rdp(self, orders, relation):
        """Curve of one run (the uniform mixture of the candidates).

        Parameters
        ----------
        orders : ndarray of float
            Orders ``> 1``.
        relation : {"replace_one", "add_remove"}
            Neighbouring relation.

        Returns
        -------
        ndarray of float
        """
        orders = np.asarray(orders, dtype=float)
        curves = np.array([event_rdp(c, orders, relation) for c in self.candidates])
        if not np.all(np.isfinite(curves)):
            return np.full(len(orders), np.inf)
        mixed = logsumexp((orders - 1.0) * curves, axis=0) - np.log(len(curves))
        return np.maximum(mixed / (orders - 1.0), 0.0)

    def rdp(self, orders, relation):
        """The curve of the whole repetition (Papernot and Steinke 2022).

        Parameters
        ----------
        orders : ndarray of float
            Orders ``> 1``.
        relation : {"replace_one", "add_remove"}
            Neighbouring relation.

        Returns
        -------
        ndarray of float
        """
        return rdp.repeat_and_select_rdp(orders, self.base_rdp(orders, relation),
                                         self.mean, self.shape)

    @property
    def pure_epsilon(self):
        """``(2 + shape)`` times the worst candidate's pure epsilon: the
        limit of Theorem 2 as both orders grow (3 epsilon for the geometric,
        Liu and Talwar's Theorem 3.4); none for a Poisson number of runs."""
        if self.shape == rdp.POISSON:
            return None
        parts = [event_pure_epsilon(c) for c in self.candidates]
        if any(p is None for p in parts):
            return None
        return (2.0 + self.shape) * max(parts)


def event_pure_epsilon(event):
    """Pure-DP epsilon of a tree (epsilons add), or None if some part has none."""
    total = 0.0
    for leaf, count in leaves(event):
        pure = getattr(leaf, "pure_epsilon", None)
        if pure is None:
            return None
        total += count * pure
    return total


def event_rdp(event, orders, relation):
    """Renyi-DP curve of a tree: its leaves' curves, added.

    A stage known only by an (epsilon, delta > 0) pair has no curve
    (infinite); a pure one has the curve of randomised response.

    Parameters
    ----------
    event : event
    orders : ndarray of float
    relation : {"replace_one", "add_remove"}

    Returns
    -------
    ndarray of float
    """
    orders = np.asarray(orders, dtype=float)
    key = None if orders is rdp.DEFAULT_ORDERS else tuple(orders)
    total = np.zeros(len(orders))
    for leaf, count in leaves(event):
        total = total + count * _leaf_rdp(leaf, relation, key)
    return total


@functools.lru_cache(maxsize=1024)
def _leaf_rdp(leaf, relation, orders_key):
    orders = rdp.DEFAULT_ORDERS if orders_key is None else np.asarray(orders_key)
    if is_noiseless(leaf):
        return np.full(len(orders), np.inf)
    if isinstance(leaf, EpsilonDeltaEvent):
        if leaf.delta > 0:
            return np.full(len(orders), np.inf)
        return rdp.pure_dp_rdp(orders, leaf.epsilon)
    return np.asarray(leaf.rdp(orders, relation), dtype=float)
