"""Tests of ``skdpopt.accounting.rdp``: the Renyi-DP curves and the conversion.

References are computed independently: dp-accounting's RDP accountant and its
closed form for integer orders (Mironov, Talwar and Zhang 2019), adaptive
quadrature of the Renyi divergence (see ``conftest.mixture_renyi_quad``),
mpmath for a high-precision spot check, closed forms re-derived from the
papers, and a 2-D integral for the worst-case (dominating pair) check.
"""

import functools
import math

import numpy as np
import pytest

from skdpopt.accounting import Accountant, SubsampledGaussianMechanism, rdp

# Integer orders of dp-accounting's default grid: there dp-accounting uses the
# exact closed form, so the two curves must agree to rounding.
DPA_INTEGER_ORDERS = tuple(float(a) for a in list(range(2, 64)) + [128, 256, 512, 1024])

# Epsilons this small are compared absolutely: exp(1e-3) = 1.001, so two
# bounds within 1e-3 of each other promise likelihood ratios within 0.1%;
# below that, relative differences only measure where the two order grids put
# their points (at eps ~ 1e-3 one grid step in alpha moves eps by 20-50%).
EPS_ABS_TOL = 1e-3
RDP_REL_TOL = 0.02  # the accountant's accuracy target


@functools.lru_cache(maxsize=None)
def _our_curve(q, sigma, relation, orders=None):
    orders = rdp.DEFAULT_ORDERS if orders is None else np.asarray(orders)
    return rdp.subsampled_gaussian_rdp(orders, q, sigma, relation)


def _ours_add_remove(q, sigma, steps, delta, orders=None):
    """Our add/remove epsilon, through the public Accountant (RDP only)."""
    acc = Accountant(
        "add_remove", orders=None if orders is None else np.asarray(orders)
    )
    acc.compose(SubsampledGaussianMechanism(q, sigma), steps)
    return acc.epsilon(delta)


def _independent_add_remove_rdp(ref, alpha, q, sigma):
    """max of the two directions of the add/remove pair, by quadrature."""
    forward = ref.mixture_renyi_quad(alpha, q, sigma, 1.0, 0.0, q_p=q, q_q=0.0)
    backward = ref.mixture_renyi_quad(alpha, q, sigma, 0.0, 1.0, q_p=0.0, q_q=q)
    return max(forward, backward)


def _check_add_remove_against_dp_accounting(ref, q, sigma, steps, delta):
    """Acceptance criterion 1 at one grid point; returns a description.

    Both sides use their default order grids.  Our epsilon must never be more
    than 2% (or EPS_ABS_TOL) above dp-accounting's.  It may be lower by more
    than that only for a reason this test verifies: at the order alpha* where
    our bound is attained, our curve value is confirmed by independent
    quadrature (to 1e-6) and reproduces our epsilon through an independently
    coded conversion, so our epsilon is exactly what a correct RDP accountant
    that includes alpha* reports.  dp-accounting then must be missing that
    value: alpha* is not on its grid, or its own curve there is infinite (its
    fractional-order series did not converge and it drops the order) or too
    high (inaccurate series).  Anything else fails.
    """
    ours = _ours_add_remove(q, sigma, steps, delta)
    theirs = ref.dpa_rdp_epsilon(q, sigma, steps, delta)
    hi = max(theirs * (1 + RDP_REL_TOL), theirs + EPS_ABS_TOL)
    assert ours <= hi, (
        f"ours {ours:.6g} more than 2% above dp-accounting's RDP {theirs:.6g}"
    )
    lo = min(theirs * (1 - RDP_REL_TOL), theirs - EPS_ABS_TOL)
    if ours >= lo:
        return "agree"
    curve = steps * _our_curve(q, sigma, "add_remove")
    eps_ours, a_star = rdp.rdp_to_epsilon_and_order(rdp.DEFAULT_ORDERS, curve, delta)
    assert eps_ours == pytest.approx(ours, rel=1e-12)
    r_ind = _independent_add_remove_rdp(ref, a_star, q, sigma)
    i = int(np.flatnonzero(rdp.DEFAULT_ORDERS == a_star)[0])
    assert _our_curve(q, sigma, "add_remove")[i] == pytest.approx(r_ind, rel=1e-6)
    assert ref.rdp_conversion([a_star], [steps * r_ind], delta) == pytest.approx(
        ours, rel=1e-6, abs=1e-12
    )
    dpa_orders = tuple(ref.dpa_rdp.DEFAULT_RDP_ORDERS)
    on_grid = [k for k, a in enumerate(dpa_orders) if abs(a - a_star) < 1e-9]
    if not on_grid:
        return f"alpha*={a_star:g} not on dp-accounting's grid"
    theirs_at = ref.dpa_rdp_curve(q, sigma, dpa_orders)[on_grid[0]]
    assert theirs_at > r_ind * (1 + 1e-6), (
        "dp-accounting's curve is right at alpha* yet its epsilon is higher: "
        "unexplained discrepancy"
    )
    return (
        f"dp-accounting's curve at alpha*={a_star:g} is {theirs_at:.6g}, "
        f"true {r_ind:.6g}"
    )


# ---------------------------------------------------------------------------
# Criterion 1: add/remove subsampled Gaussian against dp-accounting's RDP
# ---------------------------------------------------------------------------


def test_add_remove_epsilon_vs_dp_accounting_rdp(ref, subset_point):
    q, sigma, steps, delta = subset_point
    _check_add_remove_against_dp_accounting(ref, q, sigma, steps, delta)


def test_add_remove_epsilon_vs_dp_accounting_same_integer_orders(ref, subset_point):
    """Same orders on both sides (dp-accounting's integer orders, where its
    curve is an exact closed form): curve and conversion must then agree
    within 2% (or EPS_ABS_TOL when both are tiny) with no excuses."""
    q, sigma, steps, delta = subset_point
    ours = _ours_add_remove(q, sigma, steps, delta, orders=DPA_INTEGER_ORDERS)
    theirs = ref.dpa_rdp_epsilon(q, sigma, steps, delta, orders=DPA_INTEGER_ORDERS)
    assert abs(ours - theirs) <= max(RDP_REL_TOL * theirs, EPS_ABS_TOL), (ours, theirs)


@pytest.mark.slow
def test_add_remove_epsilon_vs_dp_accounting_rdp_full_grid(ref, grid_point):
    q, sigma, steps, delta = grid_point
    _check_add_remove_against_dp_accounting(ref, q, sigma, steps, delta)


@pytest.mark.slow
def test_add_remove_same_integer_orders_full_grid(ref, grid_point):
    test_add_remove_epsilon_vs_dp_accounting_same_integer_orders(ref, grid_point)


def test_accountant_add_remove_is_rdp_conversion_of_composed_curve(ref):
    """With add/remove the accountant's epsilon is the conversion of count x
    the single-step curve (no PLD, no pure bound), by our own conversion."""
    q, sigma, steps, delta = 0.02, 1.3, 700, 1e-6
    curve = rdp.subsampled_gaussian_rdp(rdp.DEFAULT_ORDERS, q, sigma, "add_remove")
    expected = ref.rdp_conversion(rdp.DEFAULT_ORDERS, steps * curve, delta)
    assert _ours_add_remove(q, sigma, steps, delta) == pytest.approx(
        expected, rel=1e-12
    )


@pytest.mark.parametrize("q", [1e-3, 1e-2, 0.1, 0.5, 0.9])
@pytest.mark.parametrize("sigma", [0.6, 1.0, 2.0, 5.0, 10.0])
def test_integer_orders_match_dp_accounting_closed_form(ref, q, sigma):
    """Mironov, Talwar and Zhang (2019) closed form, as coded in dp-accounting,
    at integer orders: equal to 1e-6 relative (the library's stated accuracy)."""
    ours = _our_curve(q, sigma, "add_remove", DPA_INTEGER_ORDERS)
    theirs = ref.dpa_rdp_curve(q, sigma, DPA_INTEGER_ORDERS)
    np.testing.assert_allclose(ours, theirs, rtol=1e-6, atol=0)


FRACTIONAL_ORDERS = (1.05, 1.3, 1.5, 2.5, 3.7, 7.25, 15.5, 40.5)
QUAD_SETTINGS = [
    (1e-3, 0.6),
    (1e-3, 10.0),
    (1e-2, 1.0),
    (0.1, 0.6),
    (0.1, 5.0),
    (0.5, 2.0),
    (0.9, 1.0),
]


@pytest.mark.parametrize("q, sigma", QUAD_SETTINGS)
@pytest.mark.parametrize("relation", ["add_remove", "replace_one"])
def test_fractional_orders_match_quadrature(ref, q, sigma, relation):
    """Fractional orders against adaptive quadrature (independent method).

    The reference is accurate to about 1e-8 relative (checked against mpmath
    below); the library claims 1e-6 relative, which is the tolerance.
    """
    ours = rdp.subsampled_gaussian_rdp(FRACTIONAL_ORDERS, q, sigma, relation)
    for alpha, value in zip(FRACTIONAL_ORDERS, ours, strict=True):
        if relation == "replace_one":
            expected = ref.mixture_renyi_quad(alpha, q, sigma, 1.0, -1.0)
        else:
            expected = _independent_add_remove_rdp(ref, alpha, q, sigma)
        assert value == pytest.approx(expected, rel=1e-6), (alpha, value, expected)


def test_quadrature_reference_matches_mpmath(ref):
    """The quadrature reference itself, against a 40-digit mpmath integral, at
    the hardest point (divergence ~ 1e-8, where cancellation is worst)."""
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 40
    a, q, s = mpmath.mpf("1.05"), mpmath.mpf("0.001"), mpmath.mpf(10)

    def mix(x, shift):
        return (1 - q) * mpmath.exp(-(x**2) / (2 * s**2)) + q * mpmath.exp(
            -((x - shift) ** 2) / (2 * s**2)
        )

    def f(x):
        ratio = mix(x, 1) / mix(x, -1)
        return (
            mix(x, -1)
            * mpmath.expm1(a * mpmath.log(ratio))
            / (s * mpmath.sqrt(2 * mpmath.pi))
        )

    exact = float(mpmath.log1p(mpmath.quad(f, [-600, -5, 0, 1, 5, 600])) / (a - 1))
    assert ref.mixture_renyi_quad(1.05, 1e-3, 10.0, 1.0, -1.0) == pytest.approx(
        exact, rel=1e-7
    )
    ours = rdp.subsampled_gaussian_rdp([1.05], 1e-3, 10.0, "replace_one")[0]
    assert ours == pytest.approx(exact, rel=1e-6)


@pytest.mark.parametrize("sigma", [0.6, 1.0, 3.0])
def test_full_batch_is_gaussian(sigma):
    """q = 1: replace-one moves the sum by 2C, so alpha * 4 / (2 s^2);
    add/remove by C, so alpha / (2 s^2)."""
    a = rdp.DEFAULT_ORDERS
    np.testing.assert_allclose(
        rdp.subsampled_gaussian_rdp(a, 1.0, sigma, "replace_one"),
        2 * a / sigma**2,
        rtol=1e-14,
    )
    np.testing.assert_allclose(
        rdp.subsampled_gaussian_rdp(a, 1.0, sigma, "add_remove"),
        a / (2 * sigma**2),
        rtol=1e-14,
    )


def test_invalid_relation_rejected():
    with pytest.raises(ValueError, match="relation"):
        rdp.subsampled_gaussian_rdp([2.0], 0.1, 1.0, "swap")


# ---------------------------------------------------------------------------
# Criterion 7: the replace-one pair is the worst case in two dimensions
# ---------------------------------------------------------------------------


def _renyi_2d(alpha, q, s, g, g2, half_width, h):
    """D_alpha between 2-D mixtures with means g and g2, trapezoid rule in logs.

    The integrand is a finite sum of Gaussian bumps exp(-|x - c|^2/(2 s^2))
    times constants (it is analytic and decays like a Gaussian), so the
    trapezoid rule on a uniform grid converges geometrically: with h = s/5 the
    aliasing error is of order exp(-2 pi^2 s^2 / h^2) = exp(-493), far below
    rounding.  The box covers every bump centre (they lie within 2 alpha of
    the origin) plus 12 s, beyond which the Gaussian tails are < e^-72.
    """
    x = np.arange(-half_width, half_width + h / 2, h)
    xx, yy = np.meshgrid(x, x, indexing="ij")
    v = 2 * s * s
    base = np.log1p(-q) - (xx**2 + yy**2) / v

    def log_mix(c):
        return np.logaddexp(base, np.log(q) - ((xx - c[0]) ** 2 + (yy - c[1]) ** 2) / v)

    log_f = alpha * log_mix(g) + (1 - alpha) * log_mix(g2)
    m = log_f.max()
    log_int = m + np.log(np.exp(log_f - m).sum() * h * h) - np.log(np.pi * v)
    return log_int / (alpha - 1)


@pytest.mark.parametrize("q, s", [(0.1, 1.0), (0.3, 2.0), (0.05, 0.7)])
def test_replace_one_pair_is_worst_case_in_2d(q, s):
    """For g, g' in the unit disc (records clipped to norm C = 1), the Renyi
    divergence between the two subsampled outputs is at most our 1-D
    replace-one value, and equals it when g = -g' on the circle (which also
    validates the 2-D integrator).  Tolerance: 1e-6 relative, the library's
    stated accuracy; the 2-D integral is accurate to rounding (see above)."""
    rng = np.random.default_rng(20240607)
    orders = [2.0, 5.0, 20.0]
    bound = rdp.subsampled_gaussian_rdp(orders, q, s, "replace_one")
    pairs = [
        (np.array([1.0, 0.0]), np.array([-1.0, 0.0])),
        (np.array([0.6, 0.8]), np.array([-0.6, -0.8])),
    ]
    for _ in range(6):
        # Uniform in the disc, and half of them pushed to the boundary where
        # the worst case must live.
        pts = rng.normal(size=(2, 2))
        radii = np.sqrt(rng.uniform(size=2))
        if _ % 2:
            radii = np.ones(2)
        pts = pts / np.linalg.norm(pts, axis=1, keepdims=True) * radii[:, None]
        pairs.append((pts[0], pts[1]))
    for alpha, b in zip(orders, bound, strict=True):
        half_width = 2 * alpha + 12 * s
        for k, (g, g2) in enumerate(pairs):
            d = _renyi_2d(alpha, q, s, g, g2, half_width, s / 5)
            assert d <= b * (1 + 1e-6), (alpha, g, g2, d, b)
            if k < 2:  # antipodal on the circle: the dominating pair itself
                assert d == pytest.approx(b, rel=1e-6)


# ---------------------------------------------------------------------------
# Closed-form curves (criterion 3, and the Gaussian)
# ---------------------------------------------------------------------------


def _laplace_rdp_mironov(alpha, t):
    """Mironov (2017), Prop. 6, for Laplace with scale lambda and sensitivity
    1, written with 1/lambda = t:  1/(a-1) log( a/(2a-1) exp((a-1) t)
    + (a-1)/(2a-1) exp(-a t) ), here in mpmath at 50 digits."""
    import mpmath

    mpmath.mp.dps = 50
    a, t = mpmath.mpf(alpha), mpmath.mpf(t)
    val = a / (2 * a - 1) * mpmath.exp((a - 1) * t) + (a - 1) / (
        2 * a - 1
    ) * mpmath.exp(-a * t)
    return float(mpmath.log(val) / (a - 1))


@pytest.mark.parametrize("t", [1e-3, 0.1, 0.5, 1.0, 3.0, 10.0])
def test_laplace_rdp_is_mironov_prop6(t):
    pytest.importorskip("mpmath")
    orders = np.array([1.05, 1.5, 2.0, 3.3, 10.0, 63.0, 1024.0])
    ours = rdp.laplace_rdp(orders, t)
    expected = np.array([_laplace_rdp_mironov(a, t) for a in orders])
    # Compare (a - 1) * D, the log of the integral that float64 computes:
    # it carries an absolute round-off of a few ulps of 1 (~1e-15), which
    # division by a - 1 = 0.05 would turn into a relative error of up to
    # 1e-8 when D itself is ~1e-7.
    np.testing.assert_allclose(
        (orders - 1) * ours, (orders - 1) * expected, rtol=1e-10, atol=2e-15
    )
    assert np.all(ours <= t)


@pytest.mark.parametrize("t", [0.3, 2.0])
def test_laplace_rdp_matches_integral(t):
    """Prop. 6 itself, checked by integrating Lap(0,1)^a Lap(t,1)^(1-a)."""
    from scipy import integrate

    for a in [1.5, 2.0, 7.0]:

        def f(x, a=a):
            return 0.5 * math.exp(-a * abs(x) - (1 - a) * abs(x - t))

        val = sum(
            integrate.quad(f, lo, hi, epsabs=0, epsrel=1e-13)[0]
            for lo, hi in [(-np.inf, 0), (0, t), (t, np.inf)]
        )
        assert rdp.laplace_rdp([a], t)[0] == pytest.approx(
            math.log(val) / (a - 1), rel=1e-10
        )


def _rr_log_integral(alpha, e0):
    """Randomised response with P(truth) = e^e0/(1+e^e0): the log of
    sum_o p(o)^a q(o)^(1-a) over its two outputs, i.e. (a-1) D_a, in logs."""
    lp, lq = -math.log1p(math.exp(-e0)), -math.log1p(math.exp(e0))
    return float(
        np.logaddexp(alpha * lp + (1 - alpha) * lq, alpha * lq + (1 - alpha) * lp)
    )


def _rr_rdp(alpha, e0):
    return _rr_log_integral(alpha, e0) / (alpha - 1)


@pytest.mark.parametrize("e0", [0.01, 0.5, 2.0, 8.0])
def test_pure_dp_rdp_is_randomised_response(e0):
    orders = np.array([1.05, 2.0, 4.5, 30.0, 1024.0])
    # Compared as (a - 1) D with an absolute round-off allowance of a few
    # ulps of 1, as for the Laplace curve above.
    expected = [min(_rr_log_integral(a, e0), (a - 1) * e0) for a in orders]
    np.testing.assert_allclose(
        (orders - 1) * rdp.pure_dp_rdp(orders, e0), expected, rtol=1e-12, atol=2e-15
    )


@pytest.mark.parametrize("d", [0.01, 0.3, 1.0, 4.0])
def test_exponential_mechanism_rdp(d):
    """alpha D^2 / 2 (Cesar and Rogers 2021) where it is below the pure-DP
    (randomised response with 2D) curve, which covers the rest."""
    orders = rdp.DEFAULT_ORDERS
    ours = rdp.exponential_mechanism_rdp(orders, d)
    zcdp = orders * d * d / 2
    pure = np.array([_rr_rdp(a, 2 * d) for a in orders])
    np.testing.assert_allclose(
        (orders - 1) * ours,
        (orders - 1) * np.minimum(zcdp, pure),
        rtol=1e-12,
        atol=2e-15,
    )
    below = zcdp <= pure
    if d <= 1.0:  # for large D the pure curve is the smaller at every order
        assert below.any()
    np.testing.assert_array_equal(ours[below], zcdp[below])


def test_gaussian_rdp():
    a = rdp.DEFAULT_ORDERS
    np.testing.assert_allclose(rdp.gaussian_rdp(a, 1.7), a / (2 * 1.7**2), rtol=1e-15)


# ---------------------------------------------------------------------------
# Conversion to (epsilon, delta)
# ---------------------------------------------------------------------------


def test_conversion_matches_independent_formula(ref):
    rng = np.random.default_rng(7)
    orders = rdp.DEFAULT_ORDERS
    for _ in range(20):
        curve = orders * rng.uniform(1e-4, 2.0) + rng.uniform(0, 0.1)
        delta = 10 ** rng.uniform(-10, -2)
        eps, order = rdp.rdp_to_epsilon_and_order(orders, curve, delta)
        assert eps == pytest.approx(ref.rdp_conversion(orders, curve, delta), rel=1e-13)
        assert order in orders


def test_conversion_delta_zero():
    a = rdp.DEFAULT_ORDERS
    assert rdp.rdp_to_epsilon(a, np.zeros(len(a)), 0.0) == 0.0
    assert rdp.rdp_to_epsilon(a, a / 2, 0.0) == np.inf


def test_conversion_is_no_worse_than_classic_bound(ref):
    """The improved conversion is never worse than Mironov's classic
    eps = r + log(1/d)/(a-1)."""
    a = rdp.DEFAULT_ORDERS
    for mu in [0.1, 1.0, 5.0]:
        curve = a * mu**2 / 2
        for delta in [1e-3, 1e-9]:
            classic = float(np.min(curve + np.log(1 / delta) / (a - 1)))
            assert rdp.rdp_to_epsilon(a, curve, delta) <= classic


@pytest.mark.parametrize("relation", ["replace_one", "add_remove"])
def test_tiny_noise_falls_back_to_the_unsubsampled_bound(relation):
    """Below the noise where the integration grid would pass
    MAX_GRID_POINTS, the curve is the unsubsampled Gaussian's: quick, and an
    upper bound on the subsampled curve (checked just above the switch,
    where both are computed)."""
    import time

    from skdpopt.accounting import rdp as rdp_module

    orders = np.array([1.5, 2.0, 8.0, 64.0])
    scale = 2.0 if relation == "replace_one" else 1.0
    start = time.perf_counter()
    tiny = rdp_module.subsampled_gaussian_rdp(orders, 0.01, 0.005, relation)
    assert time.perf_counter() - start < 1.0
    np.testing.assert_allclose(tiny, orders * scale**2 / (2 * 0.005**2))
    exact = rdp_module.subsampled_gaussian_rdp(orders, 0.01, 0.2, relation)
    bound = orders * scale**2 / (2 * 0.2**2)
    assert np.all(exact <= bound)
