"""Discrete privacy loss distributions (PLDs) that upper-bound the true ones.

A mechanism's dominating pair (P, Q) is summarised by its privacy loss
``L = log(P/Q)(X)`` with ``X ~ P``; composition adds independent losses, and
``delta(eps) = E[(1 - exp(eps - L))_+]`` is the tight (eps, delta) curve
(Dwork and Rothblum 2016; Koskela, Jalko and Honkela 2020; Zhu, Dong and Wang
2022).  Every operation below replaces a loss distribution by one that
dominates it, so the reported delta (hence epsilon) is never optimistic:

* discretisation splits the mass of L in each grid cell between the cell's two
  ends keeping both its P-mass and its Q-mass ("connect the dots",
  Doroshenko et al. 2022); the split is a mean-preserving spread of
  ``exp(-L)``, and ``(1 - y exp(-L))_+`` is convex in ``exp(-L)``;
* mass above the grid becomes infinite loss (it counts fully in delta);
* mass below the grid, or truncated from the low tail, is moved up to the
  lowest kept point;
* floating point: every answer carries an explicit allowance for the
  round-off of the convolutions (see ``_convolve``).

The pairs of the library's mechanisms are symmetric (swapping P and Q is the
same as swapping the neighbouring datasets), so one distribution covers both
directions of the replace-one relation.
"""

import math
from functools import lru_cache

import numpy as np
from scipy import fft as sp_fft
from scipy.special import log_ndtr, ndtr
from scipy.stats import norm

from . import rdp

# Number of grid points the composed distribution of a whole run should span;
# sets the discretisation step and, with it, accuracy against run time.
TARGET_POINTS = 2**14
# A mechanism composed many times is discretised on a finer grid and moved
# to the run's grid in stages (see ``_power``): the spreads its moves add
# to the run's loss total at most about ``_SPREAD_BUDGET / 4`` grid steps
# squared per stage, and its finer grids span at most four times the run's
# points, and at most ``_REFINED_POINTS`` (the fine grid's size: refining
# the fine grid itself cost two to four times as much for under a tenth
# of a percent of epsilon on a 2,930-step DP-SGD run).
_SPREAD_BUDGET = 128.0
_REFINED_POINTS = 2**14
# Renyi orders among which the tilt is chosen (a coarse grid suffices: the
# tilt only steers numerical accuracy, never soundness).
_TILT_ORDERS = 1.0 + np.geomspace(1e-3, 1023.0, 64)
# Tilted masses more than e^-700 below the largest are not represented.
_LOG_TINY = -700.0
# Unit round-off of float64, and a safety factor on the textbook bound of an
# FFT convolution's error, ``u * log2(n) * ||a||_2 * ||b||_2`` in each entry
# (checked against exact convolutions in the tests).
_UNIT_ROUNDOFF = 2.0**-53
_FFT_SAFETY = 4.0
# Relative slack added to each discretised mass for the round-off of the
# cell-mass computation (CDF differences and the connect-the-dots split).
_DISCRETIZATION_SLACK = 1e-10


def _log_cumsum(log_values):
    """``log(cumsum(exp(log_values)))``, computed in the linear domain.

    Much faster than ``np.logaddexp.accumulate``; terms more than e^-700
    below the largest underflow to zero, which is far below every mass
    that matters here.
    """
    top = np.max(log_values)
    if not np.isfinite(top):
        return np.full_like(log_values, top)
    with np.errstate(divide="ignore"):
        return np.log(np.cumsum(np.exp(log_values - top))) + top


def _fft_convolve(a, b):
    """Full linear convolution by real FFTs; one transform when squaring."""
    n = len(a) + len(b) - 1
    size = sp_fft.next_fast_len(n, real=True)
    fa = sp_fft.rfft(a, size)
    fb = fa if b is a else sp_fft.rfft(b, size)
    return sp_fft.irfft(fa * fb, size)[:n]


def _prefix_search(prefix_values, n, log_threshold):
    """Count the leading values ``<= log_threshold`` of a non-decreasing sequence.

    ``prefix_values(m)`` gives the first m values; the prefix examined
    starts at half the sequence (the tails cut after a composition are a
    few tenths of it, so one pass usually suffices) and grows fourfold
    until the count falls inside it.

    Returns
    -------
    count : int
    values : ndarray
        The prefix examined (at least ``count`` long).
    """
    m = min(n, max(512, n // 2))
    while True:
        values = prefix_values(m)
        count = int(np.searchsorted(values, log_threshold, side="right"))
        if count < m or m == n:
            return count, values
        m = min(n, 4 * m)


class DiscretePLD:
    """A privacy loss distribution on a grid, stored exponentially tilted.

    The loss takes the value ``step * (offset + i)`` with probability at most
    ``(tilted[i] + error) * exp(log_scale - tilt * step * (offset + i))``, and
    is infinite with probability ``infinity_mass``.

    Tilting by ``exp(tilt * loss)`` commutes with convolution, and with the
    tilt of the Renyi order the run is most sensitive to, the region of
    losses near the final epsilon becomes the bulk of the tilted masses, so
    that the absolute round-off of FFT convolutions (relative to the largest
    tilted mass) is tiny relative to what decides delta.  ``error`` is a
    uniform bound on that round-off, propagated through every convolution and
    charged to every delta reported, so the answers are upper bounds in
    floating point too.

    Parameters
    ----------
    tilted : ndarray of float
        Tilted masses, scaled so that the largest is 1.
    offset : int
        Grid index of ``tilted[0]``.
    step : float
        Grid spacing in loss units.
    tilt : float
        Tilt exponent (>= 0).
    log_scale : float
        Log of the common scale factor.
    error : float
        Bound on the absolute error of each entry of ``tilted``.
    infinity_mass : float
        Probability of an infinite loss.
    """

    def __init__(self, tilted, offset, step, tilt, log_scale, error=0.0,
                 infinity_mass=0.0):
        tilted = np.asarray(tilted, dtype=float)
        top = tilted.max()
        if top > 0:
            tilted = tilted / top
            error = error / top
            log_scale = log_scale + np.log(top)
        self.tilted = tilted
        self.offset = int(offset)
        self.step = float(step)
        self.tilt = float(tilt)
        self.log_scale = float(log_scale)
        self.error = float(error)
        self.infinity_mass = float(infinity_mass)

    @classmethod
    def from_masses(cls, masses, offset, step, tilt, infinity_mass=0.0):
        """Build from untilted probabilities (upper bounds on them)."""
        masses = np.asarray(masses, dtype=float)
        losses = (offset + np.arange(len(masses))) * step
        with np.errstate(divide="ignore"):
            log_tilted = np.log(masses) + tilt * losses
        top = np.max(log_tilted)
        # Masses too small to be represented once tilted are moved up to the
        # next representable point (or to infinite loss above the last one):
        # pessimistic, and nothing is silently lost.
        lost = (masses > 0) & (log_tilted - top < _LOG_TINY)
        kept = np.nonzero(~lost)[0]
        log_tilted[lost] = -np.inf
        tilted = np.exp(log_tilted - top)
        if lost.any():
            target = np.searchsorted(kept, np.nonzero(lost)[0])
            above = target < len(kept)
            infinity_mass += masses[lost][~above].sum()
            moved = np.bincount(target[above], weights=masses[lost][above],
                                minlength=len(kept))
            tilted[kept] += moved * np.exp(tilt * losses[kept] - top)
        return cls(tilted, offset, step, tilt, top, 0.0, infinity_mass)

    @property
    def losses(self):
        """Loss value of each grid point."""
        return (self.offset + np.arange(len(self.tilted))) * self.step

    def _log_mass_slice(self, start, stop):
        """:meth:`log_mass_bounds` for the grid points ``start:stop``."""
        losses = (self.offset + np.arange(start, stop)) * self.step
        with np.errstate(divide="ignore"):
            return (np.log(self.tilted[start:stop] + self.error) + self.log_scale
                    - self.tilt * losses)

    def log_mass_bounds(self):
        """Log of the upper bound on each grid point's probability."""
        with np.errstate(divide="ignore"):
            return (np.log(self.tilted + self.error) + self.log_scale
                    - self.tilt * self.losses)

    def truncate(self, tail_mass):
        """Cut tails of probability at most ``tail_mass`` each, pessimistically.

        The upper tail becomes infinite loss.  The lower tail is moved up onto
        the lowest kept point; it is cut where that costs little in tilted
        terms, that is where the moved mass, tilted at its new place, is at
        most ``tail_mass`` times the largest tilted mass.
        """
        if tail_mass <= 0:
            return self
        n = len(self.tilted)
        log_tail = math.log(tail_mass)
        log_mass = self.log_mass_bounds()
        # Cumulative masses from the top.
        from_top = _log_cumsum(log_mass[::-1])
        n_top = min(int(np.searchsorted(from_top, log_tail, side="right")), n - 1)
        inf_mass = self.infinity_mass
        if n_top:
            inf_mass = min(1.0, inf_mass + math.exp(from_top[n_top - 1]))
        keep = n - n_top
        # Tilted weight the lowest m points would have once moved up to
        # point m - 1; the distribution has total mass 1, so no cumulative
        # mass exceeds 1 even where round-off bounds are loose.
        from_bottom = np.minimum(_log_cumsum(log_mass[:keep]), 0.0)
        losses = (self.offset + np.arange(keep)) * self.step
        moved_mass = np.maximum.accumulate(
            from_bottom + self.tilt * losses - self.log_scale)
        n_bottom = int(np.searchsorted(moved_mass, log_tail, side="right"))
        n_bottom = min(n_bottom, keep - 1)
        tilted = self.tilted[n_bottom:keep].copy()
        if n_bottom:
            tilted[0] += np.exp(moved_mass[n_bottom - 1]
                                + self.tilt * self.step)  # one point higher
        return DiscretePLD(tilted, self.offset + n_bottom, self.step, self.tilt,
                           self.log_scale, self.error, inf_mass)

    def compose(self, other, tail_mass=0.0):
        """Distribution of the sum of the two (independent) losses."""
        if other.step != self.step or other.tilt != self.tilt:
            raise ValueError("cannot compose PLDs on different grids or tilts")
        a, b = self.tilted, other.tilted
        conv = _fft_convolve(a, b)
        np.maximum(conv, 0.0, out=conv)
        round_off = (_FFT_SAFETY * _UNIT_ROUNDOFF * max(np.log2(len(conv)), 1.0)
                     * np.sqrt(np.einsum("i,i", a, a) * np.einsum("i,i", b, b)))
        ea, eb = self.error, other.error
        error = (round_off + ea * b.sum() + eb * a.sum()
                 + ea * eb * min(len(a), len(b)))
        inf_mass = 1.0 - (1.0 - self.infinity_mass) * (1.0 - other.infinity_mass)
        result = DiscretePLD(conv, self.offset + other.offset, self.step,
                             self.tilt, self.log_scale + other.log_scale,
                             error, inf_mass)
        return result.truncate(tail_mass)

    def self_compose(self, count, tail_mass=0.0):
        """``count``-fold composition by repeated squaring.

        A tail cut from the power ``base = self^(2^k)`` is paid once for each
        of the ``count >> k`` times that power enters the result, so each cut
        there is limited to ``tail_mass / (count >> k)``.
        """
        result, base, remaining = None, self, count
        while remaining:
            if remaining & 1:
                result = base if result is None else result.compose(base, tail_mass)
            remaining >>= 1
            if remaining:
                base = base.compose(base, tail_mass / remaining)
        return result

    def coarsen(self, factor):
        """The same distribution on the grid ``factor`` times coarser,
        pessimistically (the grid points are the multiples of the new step).

        Each point's mass is split between the two coarse points around it
        keeping both its P-mass and its Q-mass ("connect the dots" again):
        a mean-preserving spread of ``exp(-L)`` under P, so delta(eps) can
        only grow, and composition keeps the order.  The map is linear with
        non-negative coefficients, so the error bound maps with it.
        """
        factor = int(factor)
        if factor == 1:
            return self
        h, m, tilt = self.step, factor, self.tilt
        index = self.offset + np.arange(len(self.tilted))
        coarse = np.floor_divide(index, m)
        within = np.arange(m)
        # Share of a point ``within * h`` above a coarse point that moves up
        # one coarse step: ``(1 - exp(-within h)) / (1 - exp(-m h))``.
        up = np.expm1(-within * h) / np.expm1(-m * h)
        down = 1.0 - up
        # Tilted weights change by exp(tilt * move) when a mass moves.
        down_weight = down * np.exp(-tilt * h * within)
        up_weight = up * np.exp(tilt * h * (m - within))
        j = index - coarse * m
        first = int(coarse[0])
        size = int(coarse[-1]) - first + 2
        tilted = (np.bincount(coarse - first, self.tilted * down_weight[j], size)
                  + np.bincount(coarse - first + 1, self.tilted * up_weight[j],
                                size))
        tilted *= 1.0 + _DISCRETIZATION_SLACK  # round-off of the split
        # Each coarse point receives every ``within`` once going down and
        # once going up (from the cell below), at most.
        gain = (down_weight.sum() + up_weight.sum()) * (1.0 + _DISCRETIZATION_SLACK)
        return DiscretePLD(tilted, first, h * m, tilt, self.log_scale,
                           self.error * gain, self.infinity_mass)

    def _log_delta_terms(self):
        """Logs of ``A_j = sum_{i>j} m_i`` and ``D_j = sum_{i>j} m_i e^(l_j - l_i)``.

        With m the mass bounds, ``delta(l_j) = inf + A_j - D_j``; between grid
        points j and j+1, ``delta(eps) = inf + A_j - exp(eps - l_j) D_j``.
        """
        log_mass = self.log_mass_bounds()
        losses = self.losses
        log_a = _log_cumsum(log_mass[::-1])[::-1]
        log_d = _log_cumsum((log_mass - losses)[::-1])[::-1]
        log_a = np.append(log_a[1:], -np.inf)
        log_d = np.append(log_d[1:], -np.inf) + losses
        return log_a, log_d

    def epsilon(self, delta):
        """Smallest epsilon at which this distribution is (epsilon, delta)-DP."""
        target = delta - self.infinity_mass
        if target <= 0 or not np.isfinite(self.error + self.log_scale):
            return np.inf
        log_a, log_d = self._log_delta_terms()
        # log(A_j - D_j); D_j <= exp(-step) A_j holds exactly (every term of
        # D_j is discounted by at least one grid step), so round-off in the
        # ratio is clipped to that.
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.minimum(log_d - log_a, -self.step)
            log_gap = log_a + np.log1p(-np.exp(ratio))
        log_gap = np.where(np.isneginf(log_a), -np.inf, log_gap)
        met = np.nonzero(log_gap <= np.log(target))[0]
        if len(met) == 0 or not np.all(np.isfinite(log_gap[:met[0]])):
            return np.inf  # nothing met, or numbers not to be trusted
        j = int(met[0])
        losses = self.losses
        if j == 0:
            return max(0.0, float(losses[0]))
        k = j - 1
        # Solve A_k - exp(eps - l_k) D_k = target on (l_k, l_{k+1}]; here
        # A_k - D_k > target >= A_{k+1} - D_{k+1}, so A_k > target.
        log_excess = log_a[k] + np.log1p(-np.exp(np.log(target) - log_a[k]))
        eps = log_excess - (log_d[k] - losses[k])
        return max(0.0, float(min(eps, losses[k] + self.step)))

    def delta(self, epsilon):
        """delta(epsilon) of this distribution, round-off included."""
        log_mass = self.log_mass_bounds()
        losses = self.losses
        above = losses > epsilon
        value = self.infinity_mass + np.sum(
            np.exp(log_mass[above]) * -np.expm1(epsilon - losses[above]))
        return float(min(1.0, value))


def discretize(pair, step, tail_mass, tilt):
    """Discretise a privacy loss pair on the grid of spacing ``step``.

    Parameters
    ----------
    pair : LossPair
        The mechanism's privacy loss, as interval masses under P and Q.
    step : float
        Grid spacing.
    tail_mass : float
        Probability that may be cut from each tail (pessimistically).
    tilt : float
        Tilt of the returned distribution.

    Returns
    -------
    DiscretePLD
    """
    low, high = pair.support(tail_mass)
    first = int(np.floor(low / step))
    last = max(int(np.ceil(high / step)), first + 1)
    # Rounding can leave k * step just inside the support (k = t / step
    # computed as an integer): widen by a point so no atom falls outside.
    first -= int(first * step > low)
    last += int(last * step < high)
    grid = np.arange(first, last + 1) * step
    p_mass, q_mass = pair.interval_masses(grid)
    # Cell (grid_i, grid_i+1] with masses (p, q): put b at its top and p - b at
    # its bottom so that the Q-mass, sum of mass * exp(-loss), is unchanged.
    p_cell, q_cell = p_mass[1:-1], q_mass[1:-1]
    # exp(loss) * Q-mass is at most the P-mass, so clipping the exponent
    # where Q-mass underflows anyway changes nothing.
    y_low = np.exp(np.minimum(grid[:-1], 700.0))
    top = p_cell - y_low * q_cell
    top = np.clip(top / -np.expm1(-step), 0.0, p_cell)
    masses = np.zeros(len(grid))
    masses[1:] += top
    masses[:-1] += p_cell - top
    masses[0] += p_mass[0]  # below the grid: round up onto the lowest point
    masses *= 1.0 + _DISCRETIZATION_SLACK
    return DiscretePLD.from_masses(masses, first, step, tilt, p_mass[-1])


class LossPair:
    """Interface of a mechanism's dominating pair, as seen by the PLD code.

    Pairs are equal when their ``key`` (class and parameters) is, so that
    what is computed from a pair alone (:func:`_pair_summary`) is computed
    once for the many runs a calibration composes it into.
    """

    key = None

    def __eq__(self, other):
        if self.key is None:
            return self is other
        return type(other) is type(self) and other.key == self.key

    def __hash__(self):
        return id(self) if self.key is None else hash((type(self), self.key))

    def support(self, tail_mass):
        """Loss interval outside which each tail has P-mass <= ``tail_mass``."""
        raise NotImplementedError

    def interval_masses(self, edges):
        """P- and Q-mass of L in (-inf, e0], (e0, e1], ..., (e_last, inf)."""
        raise NotImplementedError


def _normal_interval(lo, hi):
    """Phi(hi) - Phi(lo) for lo <= hi, accurate in both tails."""
    upper = lo > 0
    lo_s = np.where(upper, -hi, lo)
    hi_s = np.where(upper, -lo, hi)
    return ndtr(hi_s) - ndtr(lo_s)


class SubsampledGaussianPair(LossPair):
    """``(1-q) N(0, s^2) + q N(1, s^2)`` against ``(1-q) N(0, s^2) + q N(-1, s^2)``.

    The replace-one pair of the Poisson-subsampled Gaussian with noise
    multiplier s (noise std over clip norm); q = 1 is the Gaussian mechanism
    with L2 sensitivity 2 (one record moves the sum from +C to -C).
    """

    def __init__(self, sampling_rate, noise_multiplier):
        self.q = float(sampling_rate)
        self.s = float(noise_multiplier)
        self.key = (self.q, self.s)

    def loss(self, x):
        """Privacy loss log(P/Q) at output x (increasing in x)."""
        q, s2 = self.q, 2.0 * self.s**2
        if q == 1.0:
            return 2.0 * x / self.s**2
        base = np.log1p(-q) - x**2 / s2
        log_p = np.logaddexp(base, np.log(q) - (x - 1.0) ** 2 / s2)
        log_q = np.logaddexp(base, np.log(q) - (x + 1.0) ** 2 / s2)
        return log_p - log_q

    def inverse_loss(self, loss):
        """Output x at which the privacy loss equals ``loss``.

        With ``u = exp(x / s^2)``, ``a = 1 - q``, ``b = q exp(-1 / (2 s^2))`` the
        ratio is ``(a + b u) / (a + b / u)``; solving for u gives a quadratic.
        L is odd in x, so only non-negative losses are solved.
        """
        loss = np.asarray(loss, dtype=float)
        mag = np.abs(loss)
        if self.q == 1.0:
            x = mag * self.s**2 / 2.0
        else:
            a = 1.0 - self.q
            log_b = np.log(self.q) - 1.0 / (2.0 * self.s**2)
            # u = (a e + sqrt(a^2 e^2 + 4 b^2 exp(L))) / (2 b), e = expm1(L);
            # in logs, to survive large L.
            # log(expm1(L)) without overflow: L + log1p(-exp(-L)) for large L.
            small = np.minimum(mag, 30.0)
            log_expm1 = np.where(
                mag > 30.0,
                mag + np.log1p(-np.exp(-np.maximum(mag, 30.0))),
                np.log(np.maximum(np.expm1(small), 1e-300)),
            )
            log_ae = np.log(a) + log_expm1
            log_disc = 0.5 * np.logaddexp(2 * log_ae, np.log(4.0) + 2 * log_b + mag)
            log_u = np.logaddexp(log_ae, log_disc) - np.log(2.0) - log_b
            x = self.s**2 * log_u
        return np.where(loss >= 0, x, -x)

    def support(self, tail_mass):
        z = norm.isf(tail_mass)
        return float(self.loss(-self.s * z)), float(self.loss(1.0 + self.s * z))

    def interval_masses(self, edges):
        x = self.inverse_loss(edges)
        lo = np.concatenate([[-np.inf], x]) / self.s
        hi = np.concatenate([x, [np.inf]]) / self.s
        inv = 1.0 / self.s
        centre = _normal_interval(lo, hi)
        p = self.q * _normal_interval(lo - inv, hi - inv)
        q = self.q * _normal_interval(lo + inv, hi + inv)
        if self.q < 1.0:
            p = p + (1.0 - self.q) * centre
            q = q + (1.0 - self.q) * centre
        return p, q


class LaplacePair(LossPair):
    """Laplace(0, 1) against Laplace(t, 1): the scalar Laplace mechanism.

    ``t`` is the sensitivity over the scale.  The loss is ``t`` with
    probability 1/2, ``-t`` with probability ``exp(-t)/2`` and in between has
    CDF ``exp(-(t - l)/2) / 2`` under P, ``1 - exp(-(t + l)/2) / 2`` under Q.
    """

    def __init__(self, epsilon0):
        self.t = float(epsilon0)
        self.key = (self.t,)

    def support(self, tail_mass):
        return -self.t, self.t

    def _cdfs(self, edges):
        t = self.t
        inside = np.clip(edges, -t, t)
        p = np.where(edges < -t, 0.0, 0.5 * np.exp(-(t - inside) / 2))
        q = np.where(edges < -t, 0.0, 1.0 - 0.5 * np.exp(-(t + inside) / 2))
        p = np.where(edges >= t, 1.0, p)
        q = np.where(edges >= t, 1.0, q)
        return p, q

    def interval_masses(self, edges):
        p, q = self._cdfs(np.asarray(edges, dtype=float))
        p = np.concatenate([[0.0], p, [1.0]])
        q = np.concatenate([[0.0], q, [1.0]])
        return np.diff(p), np.diff(q)


class RandomizedResponsePair(LossPair):
    """The dominating pair of every epsilon0-DP mechanism.

    P puts ``e^e0 / (1 + e^e0)`` on loss ``e0`` and the rest on ``-e0``; Q puts
    ``1 / (1 + e^e0)`` on ``e0``.
    """

    def __init__(self, epsilon0):
        self.t = float(epsilon0)
        self.key = (self.t,)

    def support(self, tail_mass):
        return -self.t, self.t

    def interval_masses(self, edges):
        edges = np.asarray(edges, dtype=float)
        p_top = 1.0 / (1.0 + np.exp(-self.t))
        q_top = 1.0 - p_top
        p = np.where(edges < -self.t, 0.0, np.where(edges < self.t, q_top, 1.0))
        q = np.where(edges < -self.t, 0.0, np.where(edges < self.t, p_top, 1.0))
        p = np.concatenate([[0.0], p, [1.0]])
        q = np.concatenate([[0.0], q, [1.0]])
        return np.diff(p), np.diff(q)


def _coarse_summary(pair, tail_mass, orders):
    """Support, variance and cumulant generating function of one pair's loss.

    Read off a coarse discretisation; used only to size the grid and choose
    the tilt, never to bound privacy.
    """
    low, high = pair.support(tail_mass)
    step = (high - low) / 500 if high > low else 1.0
    coarse = discretize(pair, step, tail_mass, tilt=0.0)
    losses = coarse.losses
    log_w = coarse.log_mass_bounds()
    w = np.exp(log_w)
    mean = np.dot(w, losses) / w.sum()
    var = np.dot(w, (losses - mean) ** 2) / w.sum()
    # K(lambda) = log E[exp(lambda L)], the Renyi divergence of order
    # lambda + 1 times lambda.
    exponents = log_w[None, :] + np.outer(orders - 1.0, losses)
    top = exponents.max(axis=1)
    cgf = top + np.log(np.exp(exponents - top[:, None]).sum(axis=1))
    return high - low, var, cgf


@lru_cache(maxsize=256)
def _pair_summary(pair, tail_mass):
    """:func:`_coarse_summary` at the tilt orders, kept per pair and tail
    (read-only)."""
    summary = _coarse_summary(pair, tail_mass, _TILT_ORDERS)
    summary[2].flags.writeable = False
    return summary


def compose_pairs(pairs_and_counts, delta, points=None):
    """PLD of a run composing ``count`` copies of each pair.

    The grid is sized so that the run's distribution spans about ``points``
    points; tails cut along the way total at most ``delta * 1e-4`` (they are
    accounted pessimistically, not dropped).  The tilt is the Renyi order,
    minus one, at which the run's Renyi bound for ``delta`` is tightest: the
    losses that decide delta are then the bulk of the tilted masses.

    Parameters
    ----------
    pairs_and_counts : list of (LossPair, int)
    delta : float
        The delta the result will be queried at (sets the truncation mass).
    points : int, default=None
        Target grid size; ``None`` means 2**14 (epsilon within about 4% of
        the limit of a fine grid in the tests' runs; 2**16 is within 0.2%,
        four times slower).

    Returns
    -------
    DiscretePLD
    """
    n_ops = sum(2 * int(np.log2(c) + 2) for _, c in pairs_and_counts) + 2
    tail = delta * 1e-4 / n_ops
    width = 0.0
    orders = _TILT_ORDERS
    cgf = np.zeros(len(orders))
    for pair, count in pairs_and_counts:
        single, var, pair_cgf = _pair_summary(pair, tail / count)
        width += min(count * single, max(single, 20.0 * np.sqrt(count * var)))
        cgf += count * pair_cgf
    _, order = rdp.rdp_to_epsilon_and_order(orders, cgf / (orders - 1.0), delta)
    tilt = float(min(order - 1.0, 256.0))
    step = max(width / (points or TARGET_POINTS), 1e-7)
    result = None
    for pair, count in pairs_and_counts:
        pld = _power(pair, count, step, tail, tilt, points or TARGET_POINTS)
        result = pld if result is None else result.compose(pld, tail)
    return result


def _power(pair, count, step, tail_mass, tilt, points):
    """``count``-fold composition of ``pair``, on the grid of ``step``.

    Discretising a cell spreads its mass over the cell's two ends, which
    adds up to ``step^2 / 4`` to the variance of the loss; a single step
    discretised on the run's grid adds that ``count`` times, which for the
    many small losses of a subsampled Gaussian run is most of the grid's
    excess.  So the single step is discretised on a grid ``refine`` times
    finer, and the power ``pair^(2^k)`` moves to a grid twice as coarse
    (:meth:`DiscretePLD.coarsen`, itself pessimistic) once the spread that
    adds, paid by each of the ``count >> k`` times the power enters the
    result, is within ``_SPREAD_BUDGET`` squared steps of the run's grid.
    """
    low, high = pair.support(tail_mass / count)
    span = (high - low) / step  # the single step's support, in run steps
    limit = min(4 * points, _REFINED_POINTS)
    refine = 1
    while (2 * refine * span <= limit
           and count > _SPREAD_BUDGET * refine**2):
        refine *= 2
    # The single step's cut tails are paid ``count`` times.
    base = discretize(pair, step / refine, tail_mass / count, tilt)
    base = base.truncate(tail_mass / count)
    result, remaining = None, count
    while remaining:
        if remaining & 1:
            if result is None:
                result = base
            else:
                result = result.coarsen(round(base.step / result.step))
                result = result.compose(base, tail_mass)
        remaining >>= 1
        if remaining:
            base = base.compose(base, tail_mass / remaining)
            while (base.step < step
                   and remaining * 4 * base.step**2 <= _SPREAD_BUDGET * step**2):
                base = base.coarsen(2)
    return result.coarsen(round(step / result.step))


def clear_cache():
    """Forget the pairs' cached summaries."""
    _pair_summary.cache_clear()


def gaussian_curve_delta(mu, epsilon):
    """Exact delta(epsilon) of the Gaussian mechanism with mu = sensitivity/std.

    ``Phi(-eps/mu + mu/2) - exp(eps) Phi(-eps/mu - mu/2)`` (Balle and Wang 2018),
    evaluated in logs.
    """
    a = log_ndtr(-epsilon / mu + mu / 2)
    b = epsilon + log_ndtr(-epsilon / mu - mu / 2)
    if b >= a:
        return 0.0
    return float(np.exp(a) * -np.expm1(b - a))


def gaussian_epsilon(mu, delta):
    """Exact epsilon of the Gaussian mechanism with mu = sensitivity/std."""
    from scipy.optimize import brentq

    if gaussian_curve_delta(mu, 0.0) <= delta:
        return 0.0
    high = 1.0
    while gaussian_curve_delta(mu, high) > delta:
        high *= 2.0
    # brentq's tolerance is on epsilon; nudge up so the answer is never low.
    eps = brentq(lambda e: gaussian_curve_delta(mu, e) - delta, 0.0, high,
                 xtol=1e-12, rtol=1e-12)
    return eps * (1 + 1e-9) + 1e-12


def gaussian_mu(epsilon, delta):
    """mu of the Gaussian mechanism that is exactly (epsilon, delta)-DP: the
    inverse of :func:`gaussian_epsilon` in mu (bisection on log mu, to the
    last digits; the answer errs low, never above the budget)."""
    low, high = 1e-3, 1.0
    while gaussian_epsilon(high, delta) < epsilon:
        high *= 2.0
    for _ in range(60):
        middle = math.sqrt(low * high)
        if gaussian_epsilon(middle, delta) < epsilon:
            low = middle
        else:
            high = middle
    return low
