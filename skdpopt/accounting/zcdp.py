"""Zero-concentrated DP (zCDP) as a common currency for splitting budgets.

Plans split a budget between mechanisms in zCDP units (rho), where costs
simply add: a Gaussian release with noise multiplier s (noise std over L2
sensitivity) costs ``1 / (2 s^2)``; an exponential-mechanism draw with score
sensitivity D costs ``D^2 / 2`` (it is 2D-DP and bounded-range, Cesar and
Rogers 2021); a pure eps0-DP release costs ``eps0^2 / 2`` (Bun and Steinke
2016).  These are only for splitting and for starting guesses: the
accountant then computes each plan's actual (epsilon, delta) with its
tightest bound, and calibration scales the whole split to the target.
"""

import math


def rho_for(epsilon, delta):
    """The rho whose rho-zCDP guarantee gives (epsilon, delta).

    Inverts the classical conversion ``epsilon = rho + 2 sqrt(rho log(1/delta))``
    (Bun and Steinke 2016), which is loose: calibration, not this function,
    decides the final noise.  With ``delta = 0`` (no conversion exists),
    the pure-DP cost ``epsilon^2 / 2`` of one epsilon-DP release.

    Parameters
    ----------
    epsilon : float
        Target epsilon (> 0).
    delta : float
        Target delta in [0, 1).

    Returns
    -------
    float
    """
    if delta <= 0:
        return 0.5 * epsilon**2
    log_inverse = math.log(1.0 / delta)
    return (math.sqrt(log_inverse + epsilon) - math.sqrt(log_inverse)) ** 2


def gaussian_noise_multiplier(rho):
    """Noise std over L2 sensitivity of a Gaussian release costing ``rho``."""
    return 1.0 / math.sqrt(2.0 * rho)


def exponential_score_sensitivity(rho):
    """Score sensitivity of an exponential-mechanism draw costing ``rho``."""
    return math.sqrt(2.0 * rho)


def pure_epsilon_for(rho):
    """Epsilon of a pure-DP release (Laplace, report-noisy-max) costing ``rho``."""
    return math.sqrt(2.0 * rho)


def draw_score_sensitivity(epsilon, delta, count):
    """Score sensitivity D at which ``count`` exponential-mechanism draws
    meet (epsilon, delta): a starting guess for calibration.

    Each draw costs ``D^2 / 2`` in zCDP; with ``delta = 0`` the draws
    compose as pure ``2 D``-DP releases, ``2 D count`` in all.
    """
    if delta <= 0:
        return epsilon / (2.0 * count)
    return exponential_score_sensitivity(rho_for(epsilon, delta) / count)
