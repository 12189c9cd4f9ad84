"""Shared reference computations for the accounting tests.

Everything here is written independently of ``skdpopt.accounting``: closed
forms re-derived from the papers, numerical integrals done a different way
(adaptive quadrature in log space instead of the library's trapezoid rule),
and thin wrappers around the peer accountant ``dp_accounting``.  The
library under test is never used to produce a reference value.
"""

import functools
import logging
import math
import warnings

import numpy as np
import pytest
from scipy import integrate, optimize, special, stats

dp_accounting = pytest.importorskip("dp_accounting")
from dp_accounting.pld import privacy_loss_distribution as dpa_pld  # noqa: E402
from dp_accounting.rdp import rdp_privacy_accountant as dpa_rdp  # noqa: E402

NeighborRel = dp_accounting.NeighboringRelation

# dp-accounting logs a warning for every optimistic PLD it builds (it falls
# back from connect-the-dots to privacy buckets) and for every fractional RDP
# order whose series fails to converge; neither is actionable here.
logging.getLogger().setLevel(logging.ERROR)
logging.getLogger("absl").setLevel(logging.ERROR)

# The grid the accountant is checked on.
GRID_Q = (1e-3, 1e-2, 0.1, 0.5, 1.0)
GRID_SIGMA = (0.6, 1.0, 2.0, 5.0, 10.0)
GRID_STEPS = (1, 10, 100, 1000, 10_000, 100_000)
GRID_DELTA = (1e-3, 1e-5, 1e-7, 1e-9)

# A representative subset for the default (fast) suite: every corner of the
# (q, sigma, steps) box appears at least once, plus the reference run of
# the accounting page and a few interior points, with the deltas spread over the
# grid.  (q, sigma, steps, delta)
SUBSET = [
    (1e-3, 0.6, 1, 1e-3),
    (1e-3, 0.6, 100_000, 1e-9),
    (1e-3, 10.0, 1, 1e-5),
    (1e-3, 10.0, 100_000, 1e-7),
    (1e-3, 1.0, 1, 1e-3),
    (1e-2, 1.0, 1000, 1e-5),
    (1e-2, 2.0, 10_000, 1e-9),
    (0.1, 0.6, 100_000, 1e-3),
    (0.1, 10.0, 1, 1e-9),
    (0.5, 2.0, 1000, 1e-7),
    (0.5, 10.0, 100_000, 1e-3),
    (1.0, 0.6, 1, 1e-9),
    (1.0, 0.6, 100_000, 1e-3),
    (1.0, 10.0, 1, 1e-3),
    (1.0, 10.0, 100_000, 1e-9),
    (1.0, 2.0, 1000, 1e-5),
]


def full_grid():
    for q in GRID_Q:
        for s in GRID_SIGMA:
            for t in GRID_STEPS:
                for d in GRID_DELTA:
                    yield (q, s, t, d)


def point_id(p):
    q, s, t, d = p
    return f"q{q:g}-s{s:g}-T{t:g}-d{d:g}"


# ---------------------------------------------------------------------------
# dp-accounting wrappers
# ---------------------------------------------------------------------------


def dpa_rdp_epsilon(q, sigma, steps, delta, orders=None):
    """dp-accounting's RDP accountant, add/remove, Poisson-subsampled Gaussian."""
    kwargs = {} if orders is None else {"orders": list(orders)}
    acc = dpa_rdp.RdpAccountant(
        neighboring_relation=NeighborRel.ADD_OR_REMOVE_ONE, **kwargs
    )
    event = dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(sigma))
    acc.compose(event, int(steps))
    return acc.get_epsilon(delta)


@functools.lru_cache(maxsize=None)
def dpa_rdp_curve(q, sigma, orders):
    """dp-accounting's single-step add/remove curve at ``orders`` (a tuple)."""
    return dpa_rdp._compute_rdp_poisson_subsampled_gaussian(q, sigma, list(orders))


# Bounded: a composed PLD can hold millions of points; the grid tests visit
# the four deltas of one (q, sigma, steps) in a row.
@functools.lru_cache(maxsize=4)
def dpa_replace_one_pld(q, sigma, steps, vdi, pessimistic):
    """dp-accounting's replace-one PLD of ``steps`` subsampled Gaussian steps."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        single = dpa_pld.from_gaussian_mechanism(
            standard_deviation=sigma,
            sampling_prob=q,
            neighboring_relation=NeighborRel.REPLACE_ONE,
            pessimistic_estimate=pessimistic,
            value_discretization_interval=vdi,
            # The optimistic estimate only exists for privacy buckets; asking
            # for it explicitly avoids a warning and changes nothing else.
            use_connect_dots=pessimistic,
        )
        return single.self_compose(int(steps)) if steps > 1 else single


def dpa_replace_one_epsilon(q, sigma, steps, delta, vdi, pessimistic):
    pld = dpa_replace_one_pld(q, sigma, steps, vdi, pessimistic)
    return pld.get_epsilon_for_delta(delta)


# ---------------------------------------------------------------------------
# Choosing dp-accounting's discretisation
# ---------------------------------------------------------------------------


@functools.lru_cache(maxsize=None)
def replace_one_loss_moments(q, sigma):
    """Mean, standard deviation and range of the single-step replace-one loss.

    L(x) = log(P(x)/Q(x)) with P = (1-q)N(0,s^2)+qN(1,s^2),
    Q = (1-q)N(0,s^2)+qN(-1,s^2), X ~ P; by direct summation on a fine grid.
    Only used to size dp-accounting's grid, never as a reference value.  The
    range is taken over the outputs dp-accounting keeps: it truncates the
    noise where its log-mass falls below -50, i.e. at 9.7 standard deviations
    (Phi(-9.7) ~ e^-50).
    """
    z = 9.7
    x = np.linspace(-1.0 - z * sigma, 1.0 + z * sigma, 200_001)
    log_base = np.log1p(-q) if q < 1 else -np.inf
    v = 2.0 * sigma**2
    log_p = np.logaddexp(log_base - x**2 / v, np.log(q) - (x - 1) ** 2 / v)
    log_qd = np.logaddexp(log_base - x**2 / v, np.log(q) - (x + 1) ** 2 / v)
    loss = log_p - log_qd
    w = np.exp(log_p - 0.5 * np.log(np.pi * v))
    w /= w.sum()
    mean = float(np.dot(w, loss))
    std = float(np.sqrt(np.dot(w, (loss - mean) ** 2)))
    width = float(loss[-1] - loss[0])
    return mean, std, width


# dp-accounting's cost, measured on this machine: building the single-step
# PLD takes about 5 microseconds per grid point (1.9e6 points in 9.6 s), and
# self-composition about 0.3 microseconds per point of the composed grid
# (1.07e8 points in 28 s).
FAST_BUDGET = (7.5e4, 1e6)  # default suite: ~0.5 s per call
SLOW_BUDGET = (1e5, 1.5e6)  # full grid (slow marker): ~0.7 s per call
VDI_CHOICES = (
    1e-8,
    3e-8,
    1e-7,
    3e-7,
    1e-6,
    3e-6,
    1e-5,
    3e-5,
    1e-4,
    3e-4,
    1e-3,
    3e-3,
    1e-2,
    3e-2,
    1e-1,
)


def choose_vdi(q, sigma, steps, budget=FAST_BUDGET):
    """Finest discretisation interval of dp-accounting that fits ``budget``.

    ``budget = (single, composed)`` caps the number of grid points of the
    single-step PLD and of the composed one.  dp-accounting truncates the
    composed distribution with a Chernoff bound at tail mass 1e-15, i.e.
    about 8.3 standard deviations either side of the mean
    (sqrt(2 ln 1e15) = 8.3); its width is at most that or ``steps`` single
    widths.
    """
    _, std, width = replace_one_loss_moments(q, sigma)
    composed = min(steps * width, width + 2 * 8.3 * math.sqrt(steps) * std)
    for vdi in VDI_CHOICES:
        if width / vdi <= budget[0] and composed / vdi <= budget[1]:
            return vdi
    return VDI_CHOICES[-1]


# ---------------------------------------------------------------------------
# Independent closed forms
# ---------------------------------------------------------------------------


def gaussian_delta(mu, eps):
    """Balle & Wang (2018), Thm. 8: delta(eps) of a Gaussian mechanism with
    sensitivity/std = mu, computed in logs with scipy.stats.norm."""
    a = stats.norm.logcdf(-eps / mu + mu / 2.0)
    b = eps + stats.norm.logcdf(-eps / mu - mu / 2.0)
    if b >= a:
        return 0.0
    return math.exp(a) * -math.expm1(b - a)


def gaussian_epsilon(mu, delta):
    """Exact epsilon of the Gaussian mechanism by bisection on gaussian_delta."""
    if gaussian_delta(mu, 0.0) <= delta:
        return 0.0
    lo, hi = 0.0, 1.0
    while gaussian_delta(mu, hi) > delta:
        lo, hi = hi, 2.0 * hi
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if gaussian_delta(mu, mid) > delta:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-13 * hi:
            break
    return hi


def rdp_conversion(orders, curve, delta):
    """Balle et al. 2020 Thm. 21 / Canonne, Kamath, Steinke 2020 Prop. 12,
    re-implemented: min over a of r(a) + log((a-1)/a) - (log delta + log a)/(a-1).

    Plus the total-variation shortcut dp-accounting also applies: D_a >= KL
    for a > 1, and TV <= sqrt(1 - exp(-KL)) (Bretagnolle and Huber 1979), so
    the run is (0, delta)-DP as soon as 1 - exp(-r(a)) <= delta^2 at some a.
    """
    a = np.asarray(orders, dtype=float)
    r = np.asarray(curve, dtype=float)
    if np.any(-np.expm1(-r) <= delta * delta):
        return 0.0
    eps = r + np.log((a - 1) / a) - (math.log(delta) + np.log(a)) / (a - 1)
    return max(0.0, float(np.min(eps)))


def log_comb(n, k):
    return special.gammaln(n + 1) - special.gammaln(k + 1) - special.gammaln(n - k + 1)


def mixture_renyi_quad(alpha, q, sigma, shift_p, shift_q, q_p=None, q_q=None):
    """D_alpha(P || Q) for 1-D Gaussian mixtures by adaptive quadrature.

    P = (1-q_p) N(0, s^2) + q_p N(shift_p, s^2), Q likewise with (q_q, shift_q);
    q_p, q_q default to q.  Written independently of the library (which uses a
    trapezoid rule on a fixed grid): scipy.integrate.quad on the integrand
    ``P^a Q^(1-a)`` evaluated in logs and divided by its maximum over a scan,
    so nothing over- or underflows.  When the divergence is small,
    ``log(integral)`` would lose its relative accuracy to cancellation
    (integral = 1 + tiny), so the integral minus one is computed directly as
    the quadrature of ``Q * expm1(a log(P/Q))``.
    """
    q_p = q if q_p is None else q_p
    q_q = q if q_q is None else q_q
    v = 2.0 * sigma**2
    log_norm = -0.5 * math.log(math.pi * v)

    def log_mix(x, qq, shift):
        if qq == 0.0:
            return -(x**2) / v
        if qq == 1.0:
            return -((x - shift) ** 2) / v
        return np.logaddexp(np.log1p(-qq) - x**2 / v, np.log(qq) - (x - shift) ** 2 / v)

    def log_f(x):
        return alpha * log_mix(x, q_p, shift_p) + (1 - alpha) * log_mix(x, q_q, shift_q)

    # The integrand is a sum of Gaussian bumps of width s centred within
    # alpha * (|shift_p| + |shift_q|) of 0; 40 std beyond that is ample.
    reach = (abs(shift_p) + abs(shift_q)) * alpha + 40.0 * sigma
    scan = np.linspace(-reach, reach, 40_001)
    vals = log_f(scan)
    m = float(vals.max())
    pts = sorted(
        {
            0.0,
            shift_p,
            shift_q,
            float(scan[np.argmax(vals)]),
            alpha * shift_p + (1 - alpha) * shift_q,
        }
    )
    pts = [p for p in pts if -reach < p < reach]
    val, _ = integrate.quad(
        lambda x: math.exp(log_f(x) - m),
        -reach,
        reach,
        points=pts,
        epsabs=0.0,
        epsrel=1e-13,
        limit=2000,
    )
    log_int = math.log(val) + m + log_norm
    if log_int > 1e-3:
        return log_int / (alpha - 1)

    def excess(x):
        log_q = log_mix(x, q_q, shift_q) + log_norm
        t = alpha * (log_mix(x, q_p, shift_p) - log_q + log_norm)
        if t > 30.0:  # no cancellation to protect; avoid overflowing expm1
            return math.exp(log_q + t) - math.exp(log_q)
        return math.exp(log_q) * math.expm1(t)

    # quad may report that round-off stops it short of epsrel on the very
    # flattest integrands (divergence ~ 1e-8); the result is still accurate
    # to ~1e-8 relative, as test_quadrature_reference_matches_mpmath checks
    # at exactly that point against a 40-digit mpmath integral.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", integrate.IntegrationWarning)
        minus_one, _ = integrate.quad(
            excess, -reach, reach, points=pts, epsabs=0.0, epsrel=1e-10, limit=2000
        )
    return math.log1p(minus_one) / (alpha - 1)


def brentq_increasing(f, target, lo, hi):
    return optimize.brentq(lambda x: f(x) - target, lo, hi, xtol=1e-14, rtol=1e-14)


# ---------------------------------------------------------------------------
# pytest plumbing: the helpers above reach the tests through the ``ref``
# fixture (importing ``conftest`` by name is ambiguous when several test
# directories have one), and grid points through ``subset_point`` and
# ``grid_point`` parameters.
# ---------------------------------------------------------------------------

import sys  # noqa: E402

_THIS_MODULE = sys.modules.get(__name__)


@pytest.fixture(scope="session")
def ref():
    """This module: the independent reference computations."""
    return _THIS_MODULE


def pytest_generate_tests(metafunc):
    if "subset_point" in metafunc.fixturenames:
        metafunc.parametrize("subset_point", SUBSET, ids=point_id)
    if "grid_point" in metafunc.fixturenames:
        metafunc.parametrize("grid_point", list(full_grid()), ids=point_id)
