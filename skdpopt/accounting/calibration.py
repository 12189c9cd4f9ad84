"""Find the noise (or step size, or budget) that makes a planned run spend
its budget: one routine, :func:`calibrate`, for every plan.

A plan maps one free parameter (a zCDP budget shared by its releases, a
noise multiplier, a score sensitivity or the step size it is proportional
to) to the event tree of the whole run.  :func:`calibrate` searches for the
value whose event spends the target epsilon, starting from a typed
bracket (:class:`RhoBracket`, :class:`NoiseBracket`, :class:`ScaleBracket`:
the parameter's kind says which way epsilon moves and how far off the
usual guesses are), and returns a value whose event spends at most the
target, as :func:`~skdpopt.accounting.privacy_spent` reports it (the
epsilon gap is never positive), and at least ``1 - rtol`` of it.
"""

from dataclasses import dataclass
from typing import ClassVar, NamedTuple

import numpy as np
from scipy.optimize import brentq

from . import pld
from .accountant import _CONVERGED, COARSE_POINTS, Accountant
from .rdp import REPLACE_ONE


@dataclass(frozen=True)
class Bracket:
    """Where :func:`calibrate` starts looking, for one kind of parameter.

    Parameters
    ----------
    guess : float
        A starting value (> 0), usually a zCDP conversion from
        :mod:`skdpopt.accounting.zcdp` or :func:`clt_noise_multiplier`.

    Attributes
    ----------
    increasing : bool
        Class attribute: whether epsilon grows with the parameter.
    factors : (float, float)
        Class attribute: the first bracket, as factors of the guess (those
        the guesses, which are loose in a known direction, have needed);
        the search widens it when the answer lies outside.
    slope : float or None
        Class attribute: a guess of ``|d log epsilon / d log parameter|``
        for the search's second probe (None: the bracket's other end).
    aim : float
        Class attribute: where in the accepted window the first search's
        steps aim, from 0 (its bottom) to 1 (the target itself).  The top
        suits parameters whose epsilon the slope and secant steps predict
        well (a pure-DP spend is linear in them); the middle saves a probe
        where a step that misses by a little would overshoot.
    """

    guess: float
    increasing: ClassVar[bool] = True
    factors: ClassVar[tuple] = (0.5, 2.0)
    slope: ClassVar[float] = None
    aim: ClassVar[float] = 1.0


@dataclass(frozen=True)
class RhoBracket(Bracket):
    """A zCDP budget shared by the run's releases.  The classical
    conversion of :func:`~skdpopt.accounting.zcdp.rho_for` under-spends, so
    the answer lies above the guess.

    Parameters
    ----------
    guess : float
        A starting value (> 0).
    """

    increasing: ClassVar[bool] = True
    factors: ClassVar[tuple] = (0.5, 4.0)


@dataclass(frozen=True)
class ScaleBracket(Bracket):
    """An exponential mechanism's score sensitivity, or a step size it is
    proportional to.

    Parameters
    ----------
    guess : float
        A starting value (> 0).
    """

    increasing: ClassVar[bool] = True
    factors: ClassVar[tuple] = (0.8, 1.3)


@dataclass(frozen=True)
class NoiseBracket(Bracket):
    """Noise over sensitivity (a noise multiplier), or a noise scale: epsilon
    falls as it grows, about as its power -1.5 for subsampled Gaussian
    runs.

    Parameters
    ----------
    guess : float
        A starting value (> 0).
    """

    increasing: ClassVar[bool] = False
    factors: ClassVar[tuple] = (0.8, 1.05)
    slope: ClassVar[float] = 1.5
    # The slope varies with the run (near 1 for DP-SGD's 2,930-step run on
    # 150,000 rows at epsilon 1, whose third probe overshot the target by
    # about 1% when aimed at it, and lands when aimed at the middle).
    aim: ClassVar[float] = 0.5


@dataclass(frozen=True)
class BudgetBracket(Bracket):
    """A budget handed to sub-runs (each candidate's epsilon in a private
    search): the whole's epsilon grows about in proportion, and the guess
    (from Gaussian stand-ins for the sub-runs) is within a few percent.

    Parameters
    ----------
    guess : float
        The starting value (> 0).
    """

    increasing: ClassVar[bool] = True
    factors: ClassVar[tuple] = (0.85, 1.15)
    slope: ClassVar[float] = 1.0


class Calibrated(NamedTuple):
    """The answer of :func:`calibrate`.

    Parameters
    ----------
    value : float
        The parameter.
    epsilon : float
        What the run spends with it at the target delta: at most the target.
    """

    value: float
    epsilon: float


def calibrate(make_event, epsilon, delta, bracket, *, rtol=0.02,
              relation=REPLACE_ONE):
    """The parameter whose planned run spends at most ``epsilon``, and at
    least ``(1 - rtol) epsilon`` where the parameter allows.

    The search runs first on the accountant's coarse PLD grid (an upper
    bound on the default accounting's answer, and cheaper; its probes skip
    the Renyi curve where the PLD binds at the first), then checks the
    value with the default accounting, which is the same coarse answer
    wherever that grid has converged (most runs: no extra cost).  Where it
    has not, the default answer is first predicted from the coarse grid and
    the grid half its size, so that the fine grid is paid for only at a
    value predicted to land.  Near the answer the two differ by an almost
    constant factor, so a correction of the coarse target usually lands
    the default epsilon in tolerance; if not, the search finishes on the
    default accounting itself.  Every value returned is the default
    accounting's, whatever the prediction said.

    Parameters
    ----------
    make_event : callable
        Maps a value of the parameter to the event tree of the whole run.
    epsilon, delta : float
        Target guarantee.
    bracket : Bracket
        The parameter's kind and a starting guess.
    rtol : float, default=0.02
        Accepted relative shortfall below the target.
    relation : {"replace_one", "add_remove"}, default="replace_one"
        Neighbouring relation of the accounting.

    Returns
    -------
    Calibrated
        ``(value, epsilon)``, with ``epsilon`` never above the target.

    Raises
    ------
    ValueError
        If no value of the parameter reaches the target.
    """

    def accountant(value):
        return Accountant(relation).compose(make_event(value))

    def epsilon_of(value):
        # fast: the answer privacy_spent reports (Renyi skipped where the
        # PLD is tighter).
        return accountant(value).epsilon(delta, fast=True)

    probes = []  # the coarse search's (value, epsilon), in order
    # Whether the probes need every bound (None: not known before the
    # first).  Where the PLD is the tightest bound at the first probe, the
    # others skip the Renyi curve, which costs about as much as a coarse
    # PLD: the probes only steer the search, and every answer is checked
    # on the default accounting.
    every_bound = []

    def coarse_of(value):
        run = accountant(value)
        if every_bound and not every_bound[0]:
            eps = run.pld_epsilon(delta, COARSE_POINTS)
        else:
            eps = run.epsilon(delta, COARSE_POINTS, fast=True)
            if not every_bound:
                every_bound.append(eps < run.pld_epsilon(delta, COARSE_POINTS))
        probes.append((value, eps))
        return eps

    def predicted(value, coarse):
        """The default accounting's epsilon at ``value``, predicted from the
        coarse grid and the grid half its size (both of which the default
        computes anyway): the coarse answer where it has converged, else
        the limit of finer grids, extrapolated from the discretisation
        error shrinking about four-fold as the grid doubles (Richardson).
        None where the probes do not see every bound, or where the coarse
        grids are too far from the limit for the extrapolation."""
        if every_bound != [False]:
            return None
        coarser = accountant(value).pld_epsilon(delta, COARSE_POINTS // 2)
        if coarser <= _CONVERGED * coarse:
            return coarse
        if not coarser <= _PREDICTABLE * coarse:
            return None
        return coarse - (coarser - coarse) / 3.0

    def good(eps):
        return (1 - rtol) * epsilon <= eps <= epsilon

    aim, tolerance, slope = epsilon, rtol, bracket.slope
    low, high = bracket.factors
    value = bracket.guess
    checked = []
    # Each round searches the coarse grid, then checks the value on the
    # default accounting, unless the prediction of the default answer
    # already says that it misses (a fine grid saved); the next round
    # corrects the coarse target by the factor between the two.  The first
    # search aims where the bracket says (see Bracket.aim), the later ones
    # at the middle of their window.
    toward = bracket.aim
    for attempt in range(3):
        value, coarse = _search(
            coarse_of, aim, low * value, high * value,
            increasing=bracket.increasing, rtol=tolerance, slope=slope,
            aim=toward)
        expected = predicted(value, coarse)
        if (expected is None or good(expected) or len(checked) == 1
                or attempt == 2):
            checked.append((value, epsilon_of(value)))
            if good(checked[-1][1]):
                return Calibrated(*checked[-1])
            expected = checked[-1][1]
            if len(checked) == 2:
                break
        aim = epsilon * (1 - rtol / 4) * coarse / expected
        tolerance = rtol / 2
        low, high = 0.97, 1.03
        # The corrected aim is an estimate (the factor moves with the
        # value): its search steps to the middle of its window, starting
        # at the Newton step there with the slope the first search saw
        # near its answer, not at the value whose coarse epsilon is known.
        toward = 0.5
        slope = _local_slope(probes) or bracket.slope
        middle = aim * (1 - tolerance / 2)
        if slope and np.isfinite(np.log(middle / coarse)):
            move = np.log(middle / coarse) / slope
            value *= float(np.exp(move if bracket.increasing else -move))
    # The factor moved too much: finish on the default accounting itself,
    # from the Newton step to the middle of the window off the last check,
    # with the slope seen between the checks where they are far enough
    # apart to tell it, else near the coarse answer.
    (v1, _), (v2, e2) = checked[0], checked[-1]
    slope = None
    if abs(np.log(v1 / v2)) > 1e-3:
        slope = _local_slope(checked)
    slope = slope or _local_slope(probes) or bracket.slope
    start = v2
    if 0 < e2 < np.inf:
        move = np.log(epsilon * (1 - rtol / 2) / e2) / slope
        start = v2 * float(np.exp(move if bracket.increasing else -move))
    value, spent = _search(epsilon_of, epsilon, start, start,
                           increasing=bracket.increasing, rtol=rtol, slope=slope,
                           aim=0.5)
    if spent > epsilon:  # _search returns a value within budget, or raises
        raise RuntimeError(f"calibration spends {spent} above {epsilon}")
    return Calibrated(value, spent)


# The default answer is predicted from the coarse grids (see calibrate)
# only where halving the coarse grid moves epsilon by at most 25%: beyond
# it the extrapolation drifts from the fine grid's answer (the prediction
# table of benchmarks/design_accounting.py measures how far).  A prediction
# that misses costs the fine grid check it was meant to save, and the
# answer is the default accounting's anyway.
_PREDICTABLE = 1.25


def _local_slope(probes):
    """``|d log epsilon / d log value|`` between the last two distinct
    probes, or None."""
    finite = [(v, e) for v, e in probes if 0 < e < np.inf]
    for i in range(len(finite) - 1, 0, -1):
        (v1, e1), (v2, e2) = finite[i - 1], finite[i]
        if v1 != v2 and e1 != e2:
            return abs(np.log(e1 / e2) / np.log(v1 / v2))
    return None


def _search(epsilon_of, target, lower, upper, *, increasing, rtol=0.02,
              max_evals=60, slope=None, aim=1.0):
    """Solve ``epsilon_of(x) = target`` from below for a monotone ``epsilon_of``.

    Runs a bracketing secant search (the Illinois variant of regula falsi) on
    ``log epsilon`` against ``log x`` and stops at the first ``x`` whose
    epsilon lies in ``[(1 - rtol) * target, target]``; its steps aim at
    ``aim`` of the way from the window's bottom to its top.  The bracket is
    widened geometrically when the target is not inside ``[lower, upper]``.

    Parameters
    ----------
    epsilon_of : callable
        Maps the parameter to the planned run's epsilon.
    target : float
        Target epsilon (> 0).
    lower, upper : float
        Initial bracket of the parameter (> 0).
    increasing : bool
        Whether epsilon grows with the parameter (a step size) or shrinks
        (a noise multiplier).
    rtol : float, default=0.02
        Accepted relative shortfall below the target.
    max_evals : int, default=60
        Budget of evaluations of ``epsilon_of``.
    slope : float, default=None
        A guess of ``|d log epsilon / d log x|``.  If given, the second probe
        is the Newton step from the first instead of the bracket's other
        end, which saves evaluations when the initial bracket is poor.
    aim : float, default=1.0
        Where in the accepted window the steps aim: 1 its top (the target),
        0.5 its middle.

    Returns
    -------
    x : float
        A parameter whose epsilon is at most ``target``.
    epsilon : float
        Its epsilon.

    Raises
    ------
    ValueError
        If no parameter in (0, inf) reaches the target within the budget.
    """
    sign = 1.0 if increasing else -1.0
    # Where the steps aim: every bracket end with a gap <= 0 is within
    # budget.
    middle = target * (1 - rtol * (1 - aim))

    def probe(log_x):
        """Epsilon at exp(log_x), and the log-gap used for interpolation,
        signed so that the gap grows with log_x and is > 0 exactly when
        epsilon exceeds the target on the high side (for increasing
        epsilon) or is within budget on the high side (for decreasing)."""
        eps = epsilon_of(float(np.exp(log_x)))
        if eps <= 0:
            return eps, -sign * np.inf
        gap = sign * (np.log(eps) - np.log(middle))
        # Keep the sign faithful to eps vs middle despite rounding in logs.
        if eps > middle and gap * sign <= 0:
            gap = sign * 1e-300
        if eps <= middle and gap * sign > 0:
            gap = -sign * 1e-300
        return eps, gap

    def good(eps):
        return (1 - rtol) * target <= eps <= target

    lo, hi = np.log(lower), np.log(upper)
    # Probe the geometric middle first: with a good initial bracket it is
    # often already within tolerance.
    mid = 0.5 * (lo + hi)
    eps_mid, g_mid = probe(mid)
    evals = 1
    if good(eps_mid):
        return float(np.exp(mid)), eps_mid
    if slope is not None:
        step = np.clip(abs(g_mid) / abs(slope), np.log(1.01), np.log(4.0))
        second = mid - step if g_mid > 0 else mid + step
    else:
        second = lo if g_mid > 0 else hi
    eps_2, g_2 = probe(second)
    evals = 2
    if good(eps_2):
        return float(np.exp(second)), eps_2
    (lo, eps_lo, g_lo), (hi, eps_hi, g_hi) = sorted(
        [(mid, eps_mid, g_mid), (second, eps_2, g_2)], key=lambda p: p[0])
    # Widen until the bracket holds the target (g_lo <= 0 < g_hi), stepping
    # by secant extrapolation through the last two probes, by a factor of
    # 1.05 to 4 at a time.
    # The probe that is not the end being moved.
    previous = (hi, g_hi) if g_lo > 0 else (lo, g_lo)
    while (g_lo > 0 or g_hi <= 0) and evals < max_evals:
        down = g_lo > 0
        end, g_end = (lo, g_lo) if down else (hi, g_hi)
        log_x0, g0 = previous
        if np.isfinite(g0) and np.isfinite(g_end) and g_end != g0 and end != log_x0:
            move = -g_end * (end - log_x0) / (g_end - g0)
        else:
            move = -np.log(2.0) if down else np.log(2.0)
        move = np.clip(abs(move), np.log(1.05), np.log(4.0)) * (-1 if down else 1)
        previous = (end, g_end)
        new_end = end + move
        eps_new, g_new = probe(new_end)
        evals += 1
        if good(eps_new):
            return float(np.exp(new_end)), eps_new
        if down:
            hi, eps_hi, g_hi = lo, eps_lo, g_lo
            lo, eps_lo, g_lo = new_end, eps_new, g_new
        else:
            lo, eps_lo, g_lo = hi, eps_hi, g_hi
            hi, eps_hi, g_hi = new_end, eps_new, g_new
    if g_lo > 0 or g_hi <= 0:
        raise ValueError(
            f"could not calibrate to epsilon={target}: the reachable range does "
            "not contain it"
        )
    for log_x, eps in ((lo, eps_lo), (hi, eps_hi)):
        if good(eps):
            return float(np.exp(log_x)), eps
    side = 0
    while evals < max_evals:
        if np.isfinite(g_lo) and np.isfinite(g_hi) and g_hi > g_lo:
            mid = lo - g_lo * (hi - lo) / (g_hi - g_lo)
            # Keep clear of the ends so that the bracket always shrinks.
            span = hi - lo
            mid = min(max(mid, lo + 0.01 * span), hi - 0.01 * span)
        else:
            mid = 0.5 * (lo + hi)
        eps_mid, g_mid = probe(mid)
        evals += 1
        if good(eps_mid):
            return float(np.exp(mid)), eps_mid
        if g_mid > 0:
            hi, eps_hi, g_hi = mid, eps_mid, g_mid
            if side == 1:
                g_lo /= 2.0  # Illinois: stop the stale end from stalling
            side = 1
        else:
            lo, eps_lo, g_lo = mid, eps_mid, g_mid
            if side == -1:
                g_hi /= 2.0
            side = -1
    # Budget exhausted: return the end whose epsilon is within budget.
    safe_log_x, safe_eps = (lo, eps_lo) if increasing else (hi, eps_hi)
    return float(np.exp(safe_log_x)), safe_eps


def clt_noise_multiplier(epsilon, delta, sampling_rate, steps):
    """Starting guess from the central limit theorem of Dong, Roth and Su (2022).

    Many subsampled steps behave like a Gaussian mechanism with
    ``mu = q sqrt(T (exp(D^2 / s^2) - 1))``, D = 2 the replace-one distance
    in units of the clip norm; invert it at the mu that meets (eps, delta).
    A guess for a calibration, not a guarantee.

    Parameters
    ----------
    epsilon, delta : float
        Target guarantee.
    sampling_rate : float
        Poisson sampling rate q in (0, 1].
    steps : int
        Number of steps T.

    Returns
    -------
    float
        Noise multiplier s (1.0 when the target is degenerate).
    """
    def excess(m):
        return pld.gaussian_curve_delta(m, epsilon) - delta

    # delta(mu) grows with mu; a large epsilon needs mu of order
    # sqrt(2 epsilon), a tiny one a mu near zero, so widen the bracket until
    # it holds the root.  The answer is only a starting point for
    # ``calibrate``, which widens its own bracket: when no root is found
    # (a degenerate target), a guess of 1 is safe.
    low, high = 1e-6, 1e3
    while excess(high) < 0 and high < 1e12:
        high *= 8.0
    while excess(low) > 0 and low > 1e-12:
        low /= 8.0
    if not excess(low) < 0 < excess(high):
        return 1.0
    mu = brentq(excess, low, high)
    ratio = mu**2 / (sampling_rate**2 * steps)
    if not np.isfinite(ratio) or ratio <= 0:
        return 1.0
    return float(2.0 / np.sqrt(np.log1p(ratio)))
