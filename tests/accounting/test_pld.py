"""Tests of ``skdpopt.accounting.pld``: discretisation, composition, queries.

The references are exact: the subsampled Gaussian pair's delta(epsilon) from
the mixture CDFs (scipy.stats.norm, with the loss inverted by brentq on an
independently written loss), closed forms for the Laplace and randomised
response pairs, and convolutions done in exact integer arithmetic.
"""

import functools
import math
import warnings
from fractions import Fraction

import numpy as np
import pytest
from scipy import optimize, stats

from skdpopt.accounting import pld

# ---------------------------------------------------------------------------
# Independent exact references
# ---------------------------------------------------------------------------


def _sg_loss(x, q, s):
    """log(P/Q)(x) for P = (1-q)N(0,s^2)+qN(1,s^2), Q = (1-q)N(0,s^2)+qN(-1,s^2)."""
    v = 2 * s * s
    if q == 1.0:
        return 2 * x / (s * s)
    b = math.log1p(-q) - x * x / v
    lp = np.logaddexp(b, math.log(q) - (x - 1) ** 2 / v)
    lq = np.logaddexp(b, math.log(q) - (x + 1) ** 2 / v)
    return float(lp - lq)


def _sg_inverse(loss, q, s):
    """The output x where the (increasing) loss equals ``loss``, by brentq."""
    lo, hi = -1.0, 1.0
    while _sg_loss(lo, q, s) > loss:
        lo *= 2
    while _sg_loss(hi, q, s) < loss:
        hi *= 2
    # Where q is small and s large the loss is nearly flat (|L| ~ 1e-4), so
    # the bracket is wide relative to the tolerance: allow many iterations.
    return optimize.brentq(
        lambda x: _sg_loss(x, q, s) - loss, lo, hi, xtol=1e-15, rtol=1e-15, maxiter=1000
    )


def _sg_tails(x, q, s):
    """P(X > x) and Q(X > x) from the mixture CDFs."""
    p = (1 - q) * stats.norm.sf(x / s) + q * stats.norm.sf((x - 1) / s)
    qq = (1 - q) * stats.norm.sf(x / s) + q * stats.norm.sf((x + 1) / s)
    return p, qq


def _sg_exact_delta(eps, q, s):
    """delta(eps) = P(L > eps) - e^eps Q(L > eps) (the loss is increasing)."""
    x = _sg_inverse(eps, q, s)
    p, qq = _sg_tails(x, q, s)
    return max(p - math.exp(eps) * qq, 0.0), p


def _sg_cell_mass(a, b, q, s):
    """P(a < L <= b)."""
    pa, _ = _sg_tails(_sg_inverse(a, q, s), q, s)
    pb, _ = _sg_tails(_sg_inverse(b, q, s), q, s)
    return pa - pb


# ---------------------------------------------------------------------------
# Criterion 6: the discretisation dominates the exact curve, and is close
# ---------------------------------------------------------------------------

SG_SETTINGS = [(1e-3, 5.0), (0.01, 1.0), (0.1, 0.6), (0.5, 2.0), (0.9, 1.0)]


@pytest.mark.parametrize("q, s", SG_SETTINGS)
@pytest.mark.parametrize("cells", [300, 3000])
@pytest.mark.parametrize("tilt", [0.25, 3.0])
def test_discretisation_dominates_exact_delta(q, s, cells, tilt):
    """delta(eps) of the discretised single step is >= the exact one, and
    exceeds it by no more than the connect-the-dots analysis allows.

    Bound on the excess, derived: delta(eps) = E_P[g(exp(-L))] with
    g(y) = (1 - e^eps y)_+, convex and piecewise linear with its kink at
    y = e^-eps.  The split of each cell keeps its P- and Q-mass, i.e. it is a
    mean-preserving spread of exp(-L) within the cell, so cells where g is
    linear contribute exactly; only the cell (l_k, l_k + h] that contains eps
    contributes an excess, at most P(L in that cell) times the chord of g at
    the kink, which is <= 1 - e^(eps - l_k - h) <= 1 - e^-h.  Add the upper
    tail (P-mass above the grid counts as infinite loss: <= tail_mass) and the
    library's explicit 1e-10 relative slack on every mass (<= 1e-10 P(L>eps)).
    """
    tail = 1e-12
    pair = pld.SubsampledGaussianPair(q, s)
    low, high = pair.support(tail)
    h = (high - low) / cells
    disc = pld.discretize(pair, h, tail, tilt)
    assert disc.step == h
    for eps in np.linspace(0.0, 0.97 * high, 37):
        exact, p_above = _sg_exact_delta(eps, q, s)
        ours = disc.delta(eps)
        # Exact reference: a few ulps of the tail probabilities.
        assert ours >= exact - 1e-15 * p_above, (eps, ours, exact)
        k = math.floor(eps / h)
        cell = _sg_cell_mass(k * h, (k + 1) * h, q, s)
        allowed = -math.expm1(-h) * cell + tail + 1e-10 * p_above + 1e-15
        assert ours - exact <= allowed, (eps, ours, exact, allowed)


def test_exact_delta_reference_is_right():
    """Check the CDF-based reference against direct quadrature of (p - e^eps q)_+."""
    from scipy import integrate

    q, s = 0.1, 0.8
    for eps in [0.0, 0.3, 1.5]:
        x0 = _sg_inverse(eps, q, s)

        def integrand(x, eps=eps):
            def dens(c):
                return stats.norm.pdf(x, c, s)

            return ((1 - q) * dens(0) + q * dens(1)) - math.exp(eps) * (
                (1 - q) * dens(0) + q * dens(-1)
            )

        val, _ = integrate.quad(integrand, x0, x0 + 60 * s, epsabs=1e-15, epsrel=1e-12)
        assert _sg_exact_delta(eps, q, s)[0] == pytest.approx(val, rel=1e-9, abs=1e-14)


# ---------------------------------------------------------------------------
# Criterion 6: FFT round-off of DiscretePLD.compose is within its error term
# ---------------------------------------------------------------------------

_SCALE = 1074  # every finite double is an integer multiple of 2**-1074


def _to_ints(a):
    return [int(Fraction(float(x)) * (1 << _SCALE)) for x in a]


def _exact_convolution(*arrays):
    """Exact convolution of float arrays, as integers in units of 2**(-1074 k)."""
    result = _to_ints(arrays[0])
    for arr in arrays[1:]:
        b = _to_ints(arr)
        out = [0] * (len(result) + len(b) - 1)
        for i, x in enumerate(result):
            if x:
                for j, y in enumerate(b):
                    if y:
                        out[i + j] += x * y
        result = out
    return result, _SCALE * len(arrays)


def _compose_no_tail(a, b):
    # compose() then truncate(0.0): log(0) is -inf by design there, but numpy
    # warns about it (see test_compose_default_tail_mass_does_not_warn).
    with np.errstate(divide="ignore"):
        return a.compose(b)


def _check_against_exact(result, inputs):
    """|result.tilted - exact/scale| <= result.error, entry by entry.

    ``result`` holds tilted masses divided by its scale exp(log_scale); the
    exact product of the inputs' tilted arrays, times exp(sum of the inputs'
    log_scale), is the same quantity, so exact / exp(result.log_scale -
    sum(input log_scale)) is what result.tilted approximates.  The error term
    is in the same units (relative to the largest tilted mass, which is 1).
    """
    exact, shift = _exact_convolution(*[p.tilted for p in inputs])
    ratio = Fraction(1 << shift) * Fraction(
        math.exp(result.log_scale - sum(p.log_scale for p in inputs))
    )
    first = result.offset - sum(p.offset for p in inputs)
    assert first >= 0 and first + len(result.tilted) <= len(exact)
    worst = 0.0
    for i, value in enumerate(result.tilted):
        ref = Fraction(exact[first + i]) / ratio
        err = abs(Fraction(float(value)) - ref)
        worst = max(worst, float(err))
        # The scale exp(log_scale) is itself a rounded float: its relative
        # error (a few ulps) multiplies each entry, at most 1e-15 * value.
        assert err <= Fraction(result.error) + Fraction(1e-15) * abs(ref), (
            i,
            float(err),
            result.error,
        )
    return worst


@pytest.mark.parametrize("q, s", [(0.01, 1.0), (0.3, 0.7)])
@pytest.mark.parametrize("cells", [100, 400])
def test_compose_round_off_within_error_term(q, s, cells):
    pair = pld.SubsampledGaussianPair(q, s)
    low, high = pair.support(1e-12)
    single = pld.discretize(pair, (high - low) / cells, 1e-12, tilt=2.0)
    two = _compose_no_tail(single, single)
    worst = _check_against_exact(two, [single, single])
    # The check must be able to fail: the tilted masses span many orders of
    # magnitude and the FFT's absolute error is visible.
    assert worst > 0
    if cells == 100:
        # Propagation: error terms of the inputs carry through a second
        # composition, compared with the exact threefold convolution.
        three = _compose_no_tail(two, single)
        _check_against_exact(three, [single, single, single])


def test_compose_round_off_random_dynamic_range():
    """Random arrays spanning 300 orders of magnitude, odd lengths."""
    rng = np.random.default_rng(11)
    for n1, n2 in [(57, 311), (256, 256)]:
        a = pld.DiscretePLD(np.exp(rng.uniform(-690, 0, n1)), 0, 0.01, 0.5, 0.0)
        b = pld.DiscretePLD(np.exp(rng.uniform(-690, 0, n2)), 3, 0.01, 0.5, -2.0)
        _check_against_exact(_compose_no_tail(a, b), [a, b])


def test_compose_default_tail_mass_does_not_warn():
    """``compose(other)`` and ``self_compose(count)`` with their default
    ``tail_mass=0.0`` must not emit RuntimeWarnings (the project turns
    RuntimeWarnings from skdpopt into errors)."""
    pair = pld.SubsampledGaussianPair(0.1, 1.0)
    low, high = pair.support(1e-12)
    single = pld.discretize(pair, (high - low) / 100, 1e-12, tilt=1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        two = single.compose(single)
        three = single.self_compose(3)
    # ... and give the convolutions, within their error terms.
    _check_against_exact(two, [single, single])
    _check_against_exact(three, [single, single, single])


def test_compose_rejects_mismatched_grids():
    a = pld.DiscretePLD(np.ones(3), 0, 0.1, 1.0, 0.0)
    b = pld.DiscretePLD(np.ones(3), 0, 0.2, 1.0, 0.0)
    with pytest.raises(ValueError):
        a.compose(b)


def test_self_compose_matches_repeated_compose():
    pair = pld.LaplacePair(0.4)
    single = pld.discretize(pair, 0.01, 1e-12, 1.0)
    with np.errstate(divide="ignore"):
        five = single.self_compose(5)
        chain = single
        for _ in range(4):
            chain = chain.compose(single)
    assert five.offset == chain.offset
    np.testing.assert_allclose(
        five.tilted, chain.tilted, rtol=0, atol=max(five.error, chain.error) * 4
    )
    for eps in [0.0, 0.5, 1.0, 1.9]:
        assert five.delta(eps) == pytest.approx(chain.delta(eps), rel=1e-9, abs=1e-15)


# ---------------------------------------------------------------------------
# Criterion 6: truncation never decreases delta; epsilon and delta agree
# ---------------------------------------------------------------------------


@functools.lru_cache(maxsize=None)
def _composed_example():
    """A 64-step subsampled Gaussian PLD as the accountant builds it, for
    queries at delta >= 1e-12 (compose_pairs sizes its truncation for the
    smallest delta it will be asked about)."""
    return pld.compose_pairs([(pld.SubsampledGaussianPair(0.05, 0.9), 64)], 1e-12)


@pytest.mark.parametrize("tail_mass", [1e-30, 1e-15, 1e-9, 1e-6, 1e-3])
def test_truncation_never_decreases_delta(tail_mass):
    full = _composed_example()
    cut = full.truncate(tail_mass)
    assert len(cut.tilted) <= len(full.tilted)
    if tail_mass >= 1e-9:
        assert len(cut.tilted) < len(full.tilted)  # it did cut something
    for eps in np.linspace(0.0, full.losses[-1], 60):
        before, after = full.delta(eps), cut.delta(eps)
        # Moving mass to infinity or up the grid can only raise each term of
        # the sum; 1e-12 relative covers the different summation order.
        assert after >= before * (1 - 1e-12), (eps, before, after)


@pytest.mark.parametrize("factor", [2, 3, 8])
@pytest.mark.parametrize("which", ["composed", "single"])
def test_coarsening_never_decreases_delta_and_keeps_both_masses(factor, which):
    """coarsen() splits each point's mass between the two coarse points
    around it keeping its P-mass and its Q-mass (= P-mass * exp(-loss)): a
    mean-preserving spread of exp(-L) under P, so delta(eps) = E_P[(1 -
    e^eps exp(-L))_+], convex in exp(-L), can only grow.  Both totals are
    kept up to the 1e-10 relative slack it adds for round-off."""
    if which == "composed":
        fine = _composed_example()
    else:
        pair = pld.SubsampledGaussianPair(0.01, 1.0)
        low, high = pair.support(1e-12)
        fine = pld.discretize(pair, (high - low) / 3000, 1e-12, 2.0)
    coarse = fine.coarsen(factor)
    assert coarse.step == factor * fine.step
    assert len(coarse.tilted) <= len(fine.tilted) // factor + 2

    def totals(dist):
        # The masses themselves, without the round-off allowance (which
        # coarsening carries along as a bound, not as mass).
        mass = dist.tilted * np.exp(dist.log_scale - dist.tilt * dist.losses)
        return mass.sum() + dist.infinity_mass, np.dot(mass, np.exp(-dist.losses))

    (p_fine, q_fine), (p_coarse, q_coarse) = totals(fine), totals(coarse)
    assert p_fine * (1 - 1e-12) <= p_coarse <= p_fine * (1 + 1e-9)
    assert q_fine * (1 - 1e-12) <= q_coarse <= q_fine * (1 + 1e-9)
    for eps in np.linspace(0.0, fine.losses[-1], 60):
        before, after = fine.delta(eps), coarse.delta(eps)
        assert after >= before * (1 - 1e-12), (eps, before, after)
    # It does spread: at the coarse grid's own points the excess is small
    # but present somewhere.
    assert any(coarse.delta(e) > fine.delta(e) * (1 + 1e-9)
               for e in np.linspace(0.0, fine.losses[-1], 60))


def test_refined_power_is_tighter_than_the_plain_grid_and_still_above_the_limit():
    """A subsampled Gaussian run of 2,930 steps (DP-SGD's defaults on
    150,000 rows, 5 epochs): composed through the finer grids of
    ``_power`` the coarse grid's epsilon is within 1% of the fine grid's,
    and never below the answer of a grid 16 times finer than the fine one
    (which is itself an upper bound)."""
    pair = pld.SubsampledGaussianPair(256 / 150_000, 1.25)
    delta = 1e-10
    eps = {points: pld.compose_pairs([(pair, 2930)], delta, points).epsilon(delta)
           for points in (2**11, 2**14)}
    assert eps[2**11] <= 1.01 * eps[2**14]
    pld_module_budget = pld._SPREAD_BUDGET
    try:
        pld._SPREAD_BUDGET = np.inf  # the plain grid: no refinement
        plain = pld.compose_pairs([(pair, 2930)], delta, 2**11).epsilon(delta)
    finally:
        pld._SPREAD_BUDGET = pld_module_budget
    assert eps[2**11] < plain
    limit = pld.compose_pairs([(pair, 2930)], delta, 2**18).epsilon(delta)
    assert eps[2**11] >= limit


@pytest.mark.parametrize("delta", [1e-2, 1e-5, 1e-6, 1e-9, 1e-12])
def test_epsilon_and_delta_are_consistent(delta):
    dist = _composed_example()
    eps = dist.epsilon(delta)
    assert np.isfinite(eps)
    assert dist.delta(eps) <= delta * (1 + 1e-12)
    if eps > 0:
        # ... and epsilon is the smallest such value: a hair below, delta is
        # exceeded (delta is strictly decreasing where it is positive).
        assert dist.delta(eps * (1 - 1e-6)) > delta


def test_epsilon_infinite_when_infinity_mass_exceeds_delta():
    dist = pld.DiscretePLD(np.ones(4), 0, 0.1, 1.0, 0.0, infinity_mass=1e-3)
    assert dist.epsilon(1e-4) == np.inf
    assert dist.delta(100.0) >= 1e-3


# ---------------------------------------------------------------------------
# Criterion 3: Laplace and randomised response pairs against closed forms
# ---------------------------------------------------------------------------


def _laplace_exact_delta(eps, t):
    """Laplace(0,1) vs Laplace(t,1): 1 - exp((eps - t)/2) on [0, t], 0 above."""
    return -math.expm1((eps - t) / 2) if eps <= t else 0.0


def _laplace_p_cdf(loss, t):
    """P(L <= loss): atom e^-t/2 at -t, density e^(-(t-l)/2)/4 on (-t, t),
    atom 1/2 at t."""
    if loss < -t:
        return 0.0
    if loss >= t:
        return 1.0
    return 0.5 * math.exp(-(t - loss) / 2)


LAPLACE_T = [0.1, 0.5, 1.0, 2.0, 3.0, 4.0, 8.0]


@pytest.mark.parametrize("t", LAPLACE_T)
@pytest.mark.parametrize("tilt", [0.25, 8.0, 256.0])
def test_laplace_pair_discretised_delta_curve(t, tilt):
    """The discretised Laplace pair gives delta(eps) = 1 - exp((eps - t)/2)
    for 0 <= eps <= t: never below, and above by at most the cell bound of
    test_discretisation_dominates_exact_delta, (1 - e^-h) P(L in the cell of
    eps), plus the 1e-10 relative slack.  Tilts span the range compose_pairs
    uses (it clips to [0.25, 256]).  Soundness must hold for every eps at
    every tilt.  Closeness is required where the tilted grid represents the
    distribution: masses whose tilted weight is below e^-700 of the largest
    are (by design) moved up the grid, which only affects delta(eps) for eps
    below the loss where that happens, t - 700 / tilt at the lowest (the
    largest tilted mass sits at loss t); we require it above t - 600 / tilt."""
    h = 2 * t / 4000
    dist = pld.discretize(pld.LaplacePair(t), h, 1e-13, tilt)
    for eps in np.linspace(0.0, t, 41):
        exact = _laplace_exact_delta(eps, t)
        ours = dist.delta(eps)
        assert ours >= exact * (1 - 1e-12), (eps, ours, exact)
        if eps < t - 600 / tilt:
            continue
        k = math.floor(eps / h + 1e-9)
        cell = _laplace_p_cdf((k + 1) * h, t) - _laplace_p_cdf(k * h, t)
        allowed = -math.expm1(-h) * cell + 1e-10 + 1e-15
        assert ours - exact <= allowed, (eps, ours, exact, allowed)
    for delta in [1e-2, 1e-3, 1e-6]:
        exact_eps = t + 2 * math.log1p(-delta) if delta < 1 - math.exp(-t / 2) else 0.0
        assert dist.epsilon(delta) >= exact_eps * (1 - 1e-12)


@pytest.mark.parametrize("t", LAPLACE_T)
@pytest.mark.parametrize("delta", [1e-3, 1e-9])
def test_laplace_pair_as_composed_by_the_accountant(t, delta):
    """compose_pairs (the accountant's path, which truncates and tilts for the
    delta asked) must stay sound everywhere (delta(eps) never below the exact
    curve) and be tight where it is asked: epsilon(delta) within the cell
    bound of the exact t + 2 log(1 - delta)."""
    dist = pld.compose_pairs([(pld.LaplacePair(t), 1)], delta)
    for eps in np.linspace(0.0, t, 41):
        assert dist.delta(eps) >= _laplace_exact_delta(eps, t) * (1 - 1e-12), eps
    exact_eps = t + 2 * math.log1p(-delta)
    ours = dist.epsilon(delta)
    assert ours >= exact_eps * (1 - 1e-12)
    # The curve has slope >= e^((eps - t)/2)/2 >= 1/4 in eps on [0, t] (in
    # absolute value), so an excess of at most (1-e^-h)/2 + slack in delta
    # (the top cell holds the atom 1/2) is at most 4x that in epsilon.
    assert ours - exact_eps <= 4 * (
        -math.expm1(-dist.step) / 2 + 1e-10 * 2 + 1e-4 * delta
    )


@pytest.mark.parametrize("e0", [0.1, 1.0, 2.0, 3.0, 6.0])
@pytest.mark.parametrize("tilt", [0.25, 8.0, 256.0])
def test_randomized_response_pair_discretised(e0, tilt):
    """delta(eps) = (e^e0 - e^eps) / (1 + e^e0) for 0 <= eps <= e0: exact
    (to rounding and the 1e-10 slack) wherever eps is at or below the grid
    point just under e0, since there every cell is linear in exp(-L); in the
    cell holding e0 only the chord bound applies (with the whole upper atom).
    As for the Laplace pair, closeness is only required above e0 - 600 / tilt
    (the largest tilted mass sits at loss e0)."""
    h = 2 * e0 / 4000
    dist = pld.discretize(pld.RandomizedResponsePair(e0), h, 1e-13, tilt)
    below = math.floor(e0 / h) * h
    p_top = 1 / (1 + math.exp(-e0))
    for eps in np.linspace(0.0, e0, 51):
        exact = (math.exp(e0) - math.exp(eps)) / (1 + math.exp(e0))
        ours = dist.delta(eps)
        assert ours >= exact * (1 - 1e-12) - 1e-16, (eps, ours, exact)
        if eps < e0 - 600 / tilt:
            continue
        if eps <= below:
            assert ours == pytest.approx(exact, rel=2e-10, abs=1e-13)
        else:
            assert ours - exact <= -math.expm1(-h) * p_top + 1e-10 + 1e-13


def test_grid_keeps_an_atom_that_rounding_puts_at_its_edge():
    """With e0 = 0.0614754... and step 2 e0 / 500, ceil(e0 / step) * step
    rounds to just below e0: the upper atom (P-mass 0.515) must stay on
    the grid, not become infinite loss."""
    e0 = 2 * 0.03073770252931302
    step = 2 * e0 / 500
    assert math.ceil(e0 / step) * step < e0  # the rounding this is about
    dist = pld.discretize(pld.RandomizedResponsePair(e0), step, 1e-13, 0.0)
    assert dist.infinity_mass == 0.0
    assert dist.delta(e0 + step) == pytest.approx(0.0, abs=1e-9)


@pytest.mark.parametrize("e0", [0.1, 1.0, 2.0, 3.0, 6.0])
@pytest.mark.parametrize("delta", [1e-3, 1e-9])
def test_randomized_response_pair_as_composed_by_the_accountant(e0, delta):
    """One epsilon0-DP mechanism: epsilon(delta) = log(e^e0 - delta (1 + e^e0)),
    never below and within one grid cell above."""
    dist = pld.compose_pairs([(pld.RandomizedResponsePair(e0), 1)], delta)
    for eps in np.linspace(0.0, e0, 41):
        exact = (math.exp(e0) - math.exp(eps)) / (1 + math.exp(e0))
        assert dist.delta(eps) >= exact * (1 - 1e-12) - 1e-16, eps
    exact_eps = math.log(math.exp(e0) - delta * (1 + math.exp(e0)))
    ours = dist.epsilon(delta)
    assert (
        exact_eps * (1 - 1e-12)
        <= ours
        <= max(exact_eps, math.ceil(e0 / dist.step) * dist.step) + 1e-12
    )


# ---------------------------------------------------------------------------
# The Gaussian closed form used for runs of plain Gaussian mechanisms
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("mu", [0.05, 0.5, 1.0, 3.0, 10.0])
def test_gaussian_curve_delta_and_epsilon(ref, mu):
    for eps in [0.0, 0.1, 1.0, 5.0]:
        assert pld.gaussian_curve_delta(mu, eps) == pytest.approx(
            ref.gaussian_delta(mu, eps), rel=1e-9, abs=1e-300
        )
    for delta in [1e-3, 1e-6, 1e-10]:
        exact = ref.gaussian_epsilon(mu, delta)
        ours = pld.gaussian_epsilon(mu, delta)
        assert ours >= exact * (1 - 1e-12)
        assert ours <= exact * (1 + 1e-8) + 1e-11


# ---------------------------------------------------------------------------
# The subsampled Gaussian pair's own maps
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("q, s", SG_SETTINGS + [(1.0, 1.5)])
def test_loss_and_inverse(q, s):
    pair = pld.SubsampledGaussianPair(q, s)
    xs = np.linspace(-3 - 8 * s, 3 + 8 * s, 41)
    losses = pair.loss(xs)
    np.testing.assert_allclose(
        losses, [_sg_loss(x, q, s) for x in xs], rtol=1e-9, atol=1e-12
    )
    assert np.all(np.diff(losses) > 0)
    back = pair.inverse_loss(losses)
    np.testing.assert_allclose(back, xs, rtol=1e-7, atol=1e-7)


@pytest.mark.parametrize("q, s", SG_SETTINGS)
def test_interval_masses_sum_to_one_and_match_cdfs(q, s):
    pair = pld.SubsampledGaussianPair(q, s)
    low, high = pair.support(1e-10)
    edges = np.linspace(low, high, 50)
    p, qq = pair.interval_masses(edges)
    assert p.sum() == pytest.approx(1.0, abs=1e-12)
    assert qq.sum() == pytest.approx(1.0, abs=1e-12)
    # Upper tail beyond the support has P-mass <= tail_mass.
    assert p[-1] <= 1e-10 * (1 + 1e-6)
    # And each interval matches the mixture CDFs.
    for i in [5, 20, 40]:
        a, b = _sg_inverse(edges[i - 1], q, s), _sg_inverse(edges[i], q, s)
        pa, qa = _sg_tails(a, q, s)
        pb, qb = _sg_tails(b, q, s)
        assert p[i] == pytest.approx(pa - pb, rel=1e-8, abs=1e-16)
        assert qq[i] == pytest.approx(qa - qb, rel=1e-8, abs=1e-16)


def test_pairs_equal_by_parameters_share_their_summary():
    # A calibration composes the same pairs into every run it tries: their
    # summaries are computed once, and the composed answer is the same
    # bits as a cold computation's.
    pairs = [(pld.RandomizedResponsePair(0.03), 2),
             (pld.SubsampledGaussianPair(0.002, 0.9), 3000)]
    assert pld.RandomizedResponsePair(0.03) == pairs[0][0]
    assert pld.RandomizedResponsePair(0.03) != pld.LaplacePair(0.03)
    assert pld.SubsampledGaussianPair(0.002, 0.8) != pairs[1][0]
    assert len({pld.SubsampledGaussianPair(0.002, 0.9), pairs[1][0]}) == 1
    pld.clear_cache()
    cold = pld.compose_pairs(pairs, 1e-5, 2**10)
    copies = [(type(p)(*p.key), c) for p, c in pairs]
    assert pld._pair_summary.cache_info().currsize == 2
    warm = pld.compose_pairs(copies, 1e-5, 2**10)
    assert pld._pair_summary.cache_info().hits == 2
    np.testing.assert_array_equal(warm.tilted, cold.tilted)
    assert warm.epsilon(1e-5) == cold.epsilon(1e-5)
