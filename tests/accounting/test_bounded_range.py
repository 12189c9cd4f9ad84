"""The accountant uses the exponential mechanism's bounded range.

Its PLD sees an exponential mechanism as randomised response with the same
pure epsilon 2D; the Renyi bound uses (2D)^2/8-zCDP.  Over many draws the
latter is much smaller, and the accountant must report it.
"""

import numpy as np
import pytest

from skdpopt.accounting import Accountant, ExponentialMechanism, GaussianMechanism


def zcdp_epsilon(rho, delta):
    """Canonne-Kamath-Steinke (2020) conversion of rho-zCDP, over a fine grid
    of orders (independent of the library's grid)."""
    a = 1 + np.exp(np.linspace(np.log(1e-3), np.log(1e4), 200_000))
    eps = a * rho + np.log1p(-1 / a) - (np.log(delta) + np.log(a)) / (a - 1)
    return eps.min()


@pytest.mark.parametrize("draws, sensitivity", [(100, 0.01), (20, 0.05), (500, 0.002)])
def test_many_draws_are_accounted_by_bounded_range(draws, sensitivity):
    delta = 1e-8
    claimed = Accountant().compose(ExponentialMechanism(sensitivity),
                                   draws).epsilon(delta)
    bounded_range = zcdp_epsilon(draws * sensitivity**2 / 2, delta)
    # The library's order grid is coarser, so it may be slightly above.
    assert bounded_range <= claimed <= 1.01 * bounded_range


def test_mixed_with_gaussians_composes_in_zcdp():
    delta = 1e-9
    acc = (Accountant().compose(ExponentialMechanism(0.02), 50)
           .compose(GaussianMechanism(40.0), 50))
    rho = 50 * 0.02**2 / 2 + 50 / (2 * 40.0**2)
    expected = zcdp_epsilon(rho, delta)
    assert expected <= acc.epsilon(delta) <= 1.01 * expected
