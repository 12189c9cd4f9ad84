"""The accountant uses the exponential mechanism's bounded-range Renyi
curve even where its (generic pure-DP) PLD pair applies."""

import math

import numpy as np
import pytest

from skdpopt.accounting import Accountant, ExponentialMechanism, rdp


def closed_form_zcdp_epsilon(rho, delta):
    """rho-zCDP to (epsilon, delta) by the classical conversion (a valid but
    looser bound than the accountant's optimal one)."""
    return rho + 2 * math.sqrt(rho * math.log(1 / delta))


@pytest.mark.parametrize("D, count", [(0.01, 1000), (0.004, 5000), (0.05, 100)])
def test_many_draws_use_the_bounded_range_bound(D, count):
    delta = 1e-8
    claimed = Accountant().compose(ExponentialMechanism(D), count).epsilon(delta)
    renyi = rdp.rdp_to_epsilon(rdp.DEFAULT_ORDERS,
                               count * rdp.exponential_mechanism_rdp(
                                   rdp.DEFAULT_ORDERS, D), delta)
    assert claimed == pytest.approx(renyi, rel=1e-12)
    # Below the classical zCDP conversion, and far below what a generic
    # 2D-DP mechanism (its PLD pair) would allow.
    assert claimed <= closed_form_zcdp_epsilon(count * D**2 / 2, delta)
    generic = Accountant()
    generic.events = [(_Generic(2 * D), count)]
    assert claimed < 0.7 * generic.epsilon(delta)
    if (D, count) == (0.01, 1000):
        # The figures docs/privacy/dplogisticsimplex.md quotes.
        assert (round(claimed, 2), round(generic.epsilon(delta), 2)) == (1.76, 3.49)


def test_few_large_draws_keep_the_tighter_pld():
    """For a handful of strong draws the pure/PLD bound wins: the minimum is
    reported."""
    acc = Accountant().compose(ExponentialMechanism(0.5), 3)
    assert acc.epsilon(1e-8) == pytest.approx(3.0)  # 3 draws of 2D = 1


class _Generic:
    """An epsilon0-DP mechanism with no bounded-range property."""

    def __init__(self, epsilon0):
        self.epsilon0 = epsilon0
        self.pure_epsilon = epsilon0

    def rdp(self, orders, relation):
        return rdp.pure_dp_rdp(np.asarray(orders), self.epsilon0)

    def loss_pair(self):
        from skdpopt.accounting import pld
        return pld.RandomizedResponsePair(self.epsilon0)

    def __hash__(self):
        return hash(("generic", self.epsilon0))

    def __eq__(self, other):
        return isinstance(other, _Generic) and other.epsilon0 == self.epsilon0
