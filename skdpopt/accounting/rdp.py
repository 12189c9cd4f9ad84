"""Renyi-DP curves of the library's mechanisms and their conversion to (eps, delta).

Every curve is a function of an array of orders ``alpha > 1`` and returns the
Renyi divergence of order ``alpha`` between the mechanism's dominating pair of
output distributions (see ``docs/privacy/accounting.md``).  Curves of mechanisms
run one after the other add up (Mironov 2017, Prop. 1).
"""

import numpy as np
from scipy.special import logsumexp

# A grid of orders dense where small-epsilon runs have their optimum (alpha
# near 1 to 11) and sparse where only tiny-epsilon runs look (alpha > 64).
DEFAULT_ORDERS = np.unique(
    np.concatenate(
        [
            np.round(np.arange(1.05, 11.0, 0.05), 2),
            np.arange(11.0, 64.0),
            [72.0, 80, 96, 112, 128, 160, 192, 256, 320, 384, 512, 768, 1024],
        ]
    )
)

REPLACE_ONE = "replace_one"
ADD_REMOVE = "add_remove"
RELATIONS = (REPLACE_ONE, ADD_REMOVE)


def gaussian_rdp(orders, noise_multiplier):
    """Renyi DP of the Gaussian mechanism.

    Parameters
    ----------
    orders : ndarray of float
        Orders ``alpha > 1``.
    noise_multiplier : float
        Noise standard deviation divided by the L2 sensitivity under the
        neighbouring relation in use.

    Returns
    -------
    ndarray of float
        ``alpha / (2 noise_multiplier**2)``.
    """
    return np.asarray(orders, dtype=float) / (2.0 * noise_multiplier**2)


# Points of the integration grid above which the subsampled curve falls back
# to the unsubsampled one (16 MB per array).
MAX_GRID_POINTS = 2_000_000


def _log_mixture_density(x, sampling_rate, noise_multiplier, shift):
    """log((1-q) N(x; 0, s^2) + q N(x; shift, s^2)) up to the Gaussian constant."""
    var2 = 2.0 * noise_multiplier**2
    shifted = -((x - shift) ** 2) / var2
    if sampling_rate == 1.0:
        return shifted
    return np.logaddexp(
        np.log1p(-sampling_rate) - x**2 / var2, np.log(sampling_rate) + shifted
    )


def _log_integral(log_p, log_q, orders, x, step, noise_multiplier, upper_edges):
    """log of the integral of P^a Q^(1-a) on a grid, one value per order.

    The trapezoid rule on a uniform grid converges spectrally for these smooth
    integrands; ``step`` is chosen by the caller.  Each order integrates up to
    its own upper edge, beyond which its integrand is negligible.
    """
    log_norm = np.log(step) - 0.5 * np.log(2.0 * np.pi * noise_multiplier**2)
    ends = np.searchsorted(x, upper_edges)
    out = np.empty(len(orders))
    for i, (alpha, end) in enumerate(zip(orders, ends, strict=True)):
        # log-sum-exp by hand: scipy's wrapper costs more than the sum here.
        terms = alpha * log_p[:end] + (1.0 - alpha) * log_q[:end]
        top = terms.max()
        out[i] = top + np.log(np.exp(terms - top).sum())
    return out + log_norm


def subsampled_gaussian_rdp(orders, sampling_rate, noise_multiplier, relation):
    """Renyi DP of the Poisson-subsampled Gaussian mechanism on clipped sums.

    Each record is included with probability ``sampling_rate``; its contribution
    to the released sum has L2 norm at most ``C``; the noise is
    ``N(0, (noise_multiplier * C)**2 I)``.  Under replace-one the dominating pair
    is ``(1-q) N(0, s^2) + q N(1, s^2)`` against ``(1-q) N(0, s^2) + q N(-1, s^2)``
    (in units of C), under add/remove it is ``(1-q) N(0, s^2) + q N(1, s^2)``
    against ``N(0, s^2)`` in both directions.  The divergence is computed by
    numerical integration (trapezoid rule, error below 1e-6 relative, checked
    against adaptive quadrature and, for add/remove at integer orders, the
    closed form of Mironov, Talwar and Zhang 2019 in the tests).

    Parameters
    ----------
    orders : ndarray of float
        Orders ``alpha > 1``.
    sampling_rate : float
        Poisson sampling probability q in (0, 1].
    noise_multiplier : float
        Noise standard deviation divided by the clip norm C.
    relation : {"replace_one", "add_remove"}
        Neighbouring relation.

    Returns
    -------
    ndarray of float
        The RDP curve at ``orders``.
    """
    orders = np.asarray(orders, dtype=float)
    q, s = float(sampling_rate), float(noise_multiplier)
    if relation == REPLACE_ONE:
        if q == 1.0:
            return gaussian_rdp(orders, s / 2.0)
        # P^a Q^(1-a) is a mixture of Gaussian-like bumps centred between 0
        # and 2a - 1 (the centre of N(1)^a N(-1)^(1-a)); pad by 14 std.
        shifts = (1.0, -1.0)
        upper = 2.0 * orders - 1.0 + 14.0 * s
    elif relation == ADD_REMOVE:
        if q == 1.0:
            return gaussian_rdp(orders, s)
        # Forward D(mix(+1) || N(0)) has bumps centred in [0, a]; the backward
        # D(N(0) || mix(+1)) is computed mirrored, as D(N(0) || mix(-1))
        # integrated over -x, whose bumps are centred in [0, a - 1].
        shifts = (1.0, 0.0)
        upper = orders + 14.0 * s
    else:
        raise ValueError(f"relation must be one of {RELATIONS}, got {relation!r}")
    # The integrand is analytic in a strip of half-width about pi s^2 around
    # the real line, so a step of min(s, s^2) / 2 makes the trapezoid rule
    # accurate to far below 1e-6 relative (checked in the tests).
    step = min(s, s * s) / 2.0
    if (upper.max() + 1.0 + 14.0 * s) / step > MAX_GRID_POINTS:
        # Tiny noise (epsilon in the hundreds of thousands): the grid would
        # not fit in memory.  exp((a - 1) D_a) is jointly convex, so the
        # mixtures are no farther apart than their components N(1) and N(-1)
        # (N(1) and N(0) under add/remove): the unsubsampled curve is a
        # valid, if loose, bound; the PLD bound is the tight one here.
        return gaussian_rdp(orders, s / 2.0 if relation == REPLACE_ONE else s)
    x = np.arange(-1.0 - 14.0 * s, upper.max() + step, step)
    log_p = _log_mixture_density(x, q, s, shifts[0])
    log_q = _log_mixture_density(x, q, s, shifts[1])
    forward = _log_integral(log_p, log_q, orders, x, step, s, upper)
    if relation == ADD_REMOVE:
        log_mirror = _log_mixture_density(x, q, s, -1.0)
        backward = _log_integral(log_q, log_mirror, orders, x, step, s, upper)
        forward = np.maximum(forward, backward)
    return np.maximum(forward, 0.0) / (orders - 1.0)


def laplace_rdp(orders, epsilon0):
    """Renyi DP of the scalar Laplace mechanism (Mironov 2017, Prop. 6).

    Parameters
    ----------
    orders : ndarray of float
        Orders ``alpha > 1``.
    epsilon0 : float
        Sensitivity divided by the Laplace scale (the mechanism's pure epsilon).

    Returns
    -------
    ndarray of float
    """
    a = np.asarray(orders, dtype=float)
    t = float(epsilon0)
    log_terms = np.stack(
        [
            np.log(a / (2 * a - 1)) + (a - 1) * t,
            np.log((a - 1) / (2 * a - 1)) - a * t,
        ]
    )
    return np.minimum(logsumexp(log_terms, axis=0) / (a - 1), t)


def pure_dp_rdp(orders, epsilon0):
    """Renyi DP of the worst epsilon0-DP mechanism (randomised response).

    Every epsilon0-DP mechanism is dominated by randomised response with the
    same epsilon0, whose divergence is
    ``log((e^(a e0) + e^((1-a) e0)) / (1 + e^e0)) / (a - 1)``.
    """
    a = np.asarray(orders, dtype=float)
    t = float(epsilon0)
    log_num = np.logaddexp(a * t, (1 - a) * t)
    return np.minimum((log_num - np.logaddexp(0.0, t)) / (a - 1), t)


def exponential_mechanism_rdp(orders, score_sensitivity):
    """Renyi DP of one exponential-mechanism draw with weights ``exp(score)``.

    With score sensitivity D the mechanism is 2D-DP and 2D-bounded-range, hence
    ``(2D)^2 / 8``-zCDP (Cesar and Rogers 2021), i.e. RDP ``alpha D^2 / 2``; it
    is also covered by the pure-DP bound, and the smaller of the two holds.
    """
    d = float(score_sensitivity)
    return np.minimum(np.asarray(orders, dtype=float) * d * d / 2.0,
                      pure_dp_rdp(orders, 2.0 * d))


def rdp_to_epsilon(orders, rdp, delta):
    """Smallest epsilon such that the RDP curve implies (epsilon, delta)-DP.

    See :func:`rdp_to_epsilon_and_order`, which also returns the best order.
    """
    return rdp_to_epsilon_and_order(orders, rdp, delta)[0]


def rdp_to_epsilon_and_order(orders, rdp, delta):
    """Smallest epsilon such that the RDP curve implies (epsilon, delta)-DP.

    Uses the conversion of Balle et al. (2020, Thm. 21) and Canonne, Kamath and
    Steinke (2020, Prop. 12):
    ``eps = rdp(a) + log((a-1)/a) - (log(delta) + log(a)) / (a-1)``,
    minimised over the orders, and epsilon = 0 when some order's divergence
    already bounds the total variation distance by delta.

    Parameters
    ----------
    orders, rdp : ndarray of float
        Orders and the composed RDP curve.
    delta : float
        Target delta in (0, 1).

    Returns
    -------
    epsilon : float
        Epsilon (``inf`` if the curve is infinite everywhere).
    order : float
        The order attaining it.
    """
    a = np.asarray(orders, dtype=float)
    rdp = np.asarray(rdp, dtype=float)
    if delta <= 0:
        return (0.0 if np.all(rdp == 0) else np.inf), float(a[-1])
    # Renyi divergence grows with the order, so every D_alpha bounds the KL
    # divergence, and by the Bretagnolle-Huber inequality total variation is
    # at most sqrt(1 - exp(-KL)): the run is (0, delta)-DP if that is <= delta.
    tv_ok = -np.expm1(-rdp) <= delta**2
    if np.any(tv_ok):
        return 0.0, float(a[np.argmax(tv_ok)])
    eps = rdp + np.log1p(-1.0 / a) - (np.log(delta) + np.log(a)) / (a - 1.0)
    best = int(np.argmin(eps))
    return float(max(0.0, eps[best])), float(a[best])


def rdp_to_delta(orders, rdp, epsilon):
    """Smallest delta such that the RDP curve implies (epsilon, delta)-DP.

    The inverse of :func:`rdp_to_epsilon_and_order`'s conversion at each
    order, ``log delta = (a - 1)(rdp(a) - epsilon + log(1 - 1/a)) - log a``,
    and the total-variation bound ``delta <= sqrt(1 - exp(-rdp(a)))``; the
    smallest over the orders holds.

    Parameters
    ----------
    orders, rdp : ndarray of float
        Orders and the curve.
    epsilon : float
        Target epsilon (>= 0).

    Returns
    -------
    float
        Delta in [0, 1].
    """
    a = np.asarray(orders, dtype=float)
    rdp = np.asarray(rdp, dtype=float)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        tv = 0.5 * np.log(-np.expm1(-rdp))
        log_delta = (a - 1.0) * (rdp - epsilon + np.log1p(-1.0 / a)) - np.log(a)
    best = np.nanmin(np.minimum(tv, log_delta))
    return float(min(np.exp(best), 1.0))


# -- repeat and select (Papernot and Steinke 2022) ---------------------------

POISSON = np.inf  # the "shape" of a Poisson number of repetitions


def repetitions_mean(gamma, shape):
    """Mean of the truncated negative binomial ``D(shape, gamma)``.

    ``P[K = k]`` is proportional to ``(1 - gamma)^k binom(k + shape - 1, k)``
    on ``k >= 1``: the logarithmic distribution when ``shape = 0``, the
    geometric when ``shape = 1``.

    Parameters
    ----------
    gamma : float
        In (0, 1).
    shape : float
        ``eta >= 0``.

    Returns
    -------
    float
        ``shape (1 - gamma) / (gamma (1 - gamma^shape))``, or
        ``(1/gamma - 1) / log(1/gamma)`` when ``shape = 0``.
    """
    if shape == 0:
        return (1.0 / gamma - 1.0) / -np.log(gamma)
    return shape * (1.0 - gamma) / (gamma * -np.expm1(shape * np.log(gamma)))


def repetitions_gamma(mean, shape):
    """The ``gamma`` of the truncated negative binomial with this mean.

    The mean falls from infinity (``gamma -> 0``) to 1 (``gamma -> 1``), so
    the root is unique; found on ``log gamma``, to relative precision 1e-12.

    Parameters
    ----------
    mean : float
        Expected number of repetitions, > 1.
    shape : float
        ``eta >= 0``.

    Returns
    -------
    float
    """
    from scipy.optimize import brentq

    if not mean > 1:
        raise ValueError(f"the mean number of repetitions must be > 1, got {mean}")
    if shape == 1:
        return 1.0 / mean

    def excess(log_gamma):
        return np.log(repetitions_mean(np.exp(log_gamma), shape)) - np.log(mean)

    low = -1.0
    while excess(low) < 0:
        low *= 2.0
    high = -1e-12
    return float(np.exp(brentq(excess, low, high, xtol=1e-14, rtol=1e-12)))


def repeat_and_select_rdp(orders, base_rdp, mean, shape):
    """Renyi DP of repeating a mechanism a random number of times and
    releasing only the best run.

    The number of runs K is independent of the data: a truncated negative
    binomial ``D(shape, gamma)`` of the given mean (``shape >= 0``), or a
    Poisson of the given mean (``shape = inf``).  Papernot and Steinke
    (2022): Theorem 2 for the truncated negative binomial,

        eps'(l) = eps(l) + (1 + shape) min over m of
                  [(1 - 1/m) eps(m) + log(1/gamma) / m] + log(mean) / (l - 1),

    with the minimum over the grid of orders, then made monotone in the
    order (a Renyi divergence grows with its order, so the bound at a
    higher order holds at every lower one); Theorem 6 for the Poisson,

        eps'(l) = eps(l) + mean * delta_hat(l) + log(mean) / (l - 1),

    where ``delta_hat(l)`` is the base mechanism's delta at
    ``epsilon_hat = log(1 + 1/(l - 1))`` (:func:`rdp_to_delta`).

    Parameters
    ----------
    orders : ndarray of float
        Orders ``> 1``.
    base_rdp : ndarray of float
        The curve of one run at ``orders``.
    mean : float
        Expected number of runs (> 1).
    shape : float
        ``eta >= 0``, or ``inf`` for a Poisson number of runs.

    Returns
    -------
    ndarray of float
        The curve of the whole, at ``orders``.
    """
    a = np.asarray(orders, dtype=float)
    base = np.asarray(base_rdp, dtype=float)
    if not np.all(np.isfinite(base)):
        return np.full(len(a), np.inf)
    if shape == POISSON:
        eps_hat = np.log1p(1.0 / (a - 1.0))
        delta_hat = np.array([rdp_to_delta(a, base, e) for e in eps_hat])
        return base + mean * delta_hat + np.log(mean) / (a - 1.0)
    gamma = repetitions_gamma(mean, shape)
    constant = (1.0 + shape) * np.min((1.0 - 1.0 / a) * base - np.log(gamma) / a)
    curve = base + np.log(mean) / (a - 1.0) + constant
    # Monotone: the smallest bound at this order or any higher one.
    order = np.argsort(a)
    out = np.empty_like(curve)
    out[order] = np.minimum.accumulate(curve[order][::-1])[::-1]
    return out
