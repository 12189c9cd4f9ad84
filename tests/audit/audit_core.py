"""Empirical lower bounds on epsilon from a distinguishing test.

An (epsilon, delta)-DP mechanism M gives, for neighbouring datasets D and
D' and every set S of outputs,

    P[M(D) in S] <= exp(epsilon) P[M(D') in S] + delta,

and the same with D and D' swapped.  A test "statistic > threshold" run on
many fits of each dataset therefore bounds epsilon from below (Jagielski,
Ullman and Oprea 2020):

    epsilon >= log((TPR - delta) / FPR)  and  log((TNR - delta) / FNR).

The rates are estimated with Clopper-Pearson intervals, taking the
pessimistic end of each (the lower end of the numerator, the upper end of
the denominator) at a confidence that makes the bound hold with
probability ``confidence`` overall (a union bound over the intervals).

Two tests are run on the same fits, each at half the error allowance, and
the larger bound is reported:

* an adaptive one: its threshold and direction are chosen on one half of
  the runs and the bound is computed on the other half, so that choosing
  them costs no confidence (it finds whatever the fits leak);
* the case's own test, a threshold and direction fixed before any run,
  measured on all runs.  Its power against a planted bug is exact
  (:func:`detection_power`): the run counts of the planted-bug audits are
  the fewest that catch their bug with probability ``POWER`` whatever the
  seed (:func:`runs_needed`).
"""

from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
import pytest
from scipy import stats

import skdpopt.lasso
import skdpopt.logistic_simplex
import skdpopt.minimax
import skdpopt.preprocessing
import skdpopt.sgd
import skdpopt.synthetic


def clopper_pearson(successes, trials, alpha):
    """Exact one-sided bounds on a binomial rate, each holding w.p. 1 - alpha.

    Parameters
    ----------
    successes, trials : int or ndarray of int
    alpha : float
        Probability that the lower (or the upper) bound is wrong.

    Returns
    -------
    low, high : float or ndarray
    """
    successes = np.asarray(successes, dtype=float)
    low = np.where(successes > 0,
                   stats.beta.ppf(alpha, successes, trials - successes + 1), 0.0)
    high = np.where(successes < trials,
                    stats.beta.ppf(1 - alpha, successes + 1, trials - successes),
                    1.0)
    return low, high


def bound_from_counts(hits_in, hits_out, n_in, n_out, delta, alpha):
    """Lower bound on epsilon from how often the test fired on each side.

    ``hits_in`` of ``n_in`` runs on D and ``hits_out`` of ``n_out`` runs on D'
    landed in the rejection region S.  Both directions of the DP inequality
    are tried (S on D against S on D', and the complement of S on D' against
    the complement on D).  Arrays are bounds for many thresholds at once.
    """
    tpr_low, _ = clopper_pearson(hits_in, n_in, alpha)
    _, fpr_high = clopper_pearson(hits_out, n_out, alpha)
    tnr_low, _ = clopper_pearson(n_out - np.asarray(hits_out), n_out, alpha)
    _, fnr_high = clopper_pearson(n_in - np.asarray(hits_in), n_in, alpha)
    with np.errstate(divide="ignore", invalid="ignore"):
        forward = np.log(np.maximum(tpr_low - delta, 0.0) / fpr_high)
        backward = np.log(np.maximum(tnr_low - delta, 0.0) / fnr_high)
    return np.nan_to_num(np.maximum(forward, backward), nan=-np.inf)


# Probability that a planted-bug audit catches its bug, at any seed.
POWER = 0.999


@dataclass
class AuditResult:
    """What an audit measured.

    Attributes
    ----------
    epsilon_lower : float
        Lower bound on the mechanism's epsilon, valid with probability
        ``confidence`` (0 when the test distinguishes nothing).
    threshold : float
        The threshold of the test that gave the bound.
    direction : int
        +1 when "statistic > threshold" signals D, -1 when "<" does.
    n_runs : int
        Fits per dataset.
    fixed_bound : float
        The bound of the case's own fixed test (``-inf`` without one).
    """

    epsilon_lower: float
    threshold: float
    direction: int
    n_runs: int
    fixed_bound: float = -np.inf


def _hits(scores, thresholds, direction):
    """How many scores fall in the rejection region of each threshold."""
    ordered = np.sort(scores)
    above = len(scores) - np.searchsorted(ordered, thresholds, side="right")
    return above if direction > 0 else len(scores) - above


def _adaptive(scores_in, scores_out, delta, alpha):
    """Threshold and direction chosen on the first half, bound on the second."""
    half = len(scores_in) // 2
    choose_in, measure_in = scores_in[:half], scores_in[half:]
    choose_out, measure_out = scores_out[:half], scores_out[half:]
    # Candidate thresholds: every distinct value seen while choosing, so a
    # statistic with ties (a discrete one) is handled exactly.
    thresholds = np.unique(np.concatenate([choose_in, choose_out]))
    best = (-np.inf, np.nan, 1)
    for direction in (1, -1):
        bounds = bound_from_counts(
            _hits(choose_in, thresholds, direction),
            _hits(choose_out, thresholds, direction),
            len(choose_in), len(choose_out), delta, alpha)
        i = int(np.argmax(bounds))
        if bounds[i] > best[0]:
            best = (bounds[i], thresholds[i], direction)
    _, threshold, direction = best
    bound = bound_from_counts(
        _hits(measure_in, threshold, direction),
        _hits(measure_out, threshold, direction),
        len(measure_in), len(measure_out), delta, alpha)
    return float(bound), threshold, direction


def audit_scores(scores_in, scores_out, delta, confidence=0.95, test=None):
    """Lower-bound epsilon from statistics of fits on D (in) and on D' (out).

    Parameters
    ----------
    scores_in, scores_out : ndarray of shape (n_runs,)
        The test statistic of each fit; runs must be independent.
    delta : float
        The delta the mechanism claims.
    confidence : float, default=0.95
    test : (threshold, direction) or None
        A test fixed before the runs; None runs the adaptive test alone,
        at the whole error allowance.

    Returns
    -------
    AuditResult
    """
    scores_in = np.asarray(scores_in, dtype=float)
    scores_out = np.asarray(scores_out, dtype=float)
    parts = 1 if test is None else 2
    alpha = (1 - confidence) / (2 * parts)  # per interval
    bound, threshold, direction = _adaptive(scores_in, scores_out, delta, alpha)
    fixed = -np.inf
    if test is not None:
        fixed = float(bound_from_counts(
            _hits(scores_in, test[0], test[1]), _hits(scores_out, test[0], test[1]),
            len(scores_in), len(scores_out), delta, alpha))
        if fixed > bound:
            bound, (threshold, direction) = fixed, test
    return AuditResult(epsilon_lower=max(bound, 0.0), threshold=threshold,
                       direction=direction, n_runs=len(scores_in),
                       fixed_bound=fixed)


def detection_power(rate_in, rate_out, n_runs, claim, delta, confidence=0.95):
    """Probability that the fixed test's bound exceeds ``claim``.

    Each fit on D lands in the test's rejection region with probability
    ``rate_in``, each fit on D' with ``rate_out``: the hit counts are
    binomial, and the bound (at the fixed test's share of the error
    allowance, as in :func:`audit_scores`) grows with the hits on D and
    falls with those on D'.  Exact up to the binomials' tails beyond 1e-12.
    """
    alpha = (1 - confidence) / 4
    n = int(n_runs)

    def support(rate):
        low = stats.binom.ppf(1e-12, n, rate)
        high = stats.binom.isf(1e-12, n, rate)
        k = np.arange(max(low, 0), min(high, n) + 1)
        return k, stats.binom.pmf(k, n, rate)

    k_in, p_in = support(rate_in)
    k_out, p_out = support(rate_out)
    low_in, high_in = clopper_pearson(k_in, n, alpha)      # TPR and 1 - FNR
    low_out, high_out = clopper_pearson(k_out, n, alpha)   # 1 - TNR and FPR
    with np.errstate(divide="ignore", invalid="ignore"):
        forward = (np.log(np.maximum(low_in - delta, 0.0))[:, None]
                   - np.log(high_out)[None, :])
        backward = (np.log(np.maximum(1.0 - high_out - delta, 0.0))[None, :]
                    - np.log(1.0 - low_in)[:, None])
    caught = np.maximum(np.nan_to_num(forward, nan=-np.inf),
                        np.nan_to_num(backward, nan=-np.inf)) > claim
    return float(p_in @ caught @ p_out)


def runs_needed(rate_in, rate_out, claim, delta, power=POWER, confidence=0.95):
    """The fewest fits per dataset whose fixed test exceeds ``claim`` with
    probability ``power`` (to 1%: a bisection on :func:`detection_power`)."""
    high = 64
    while detection_power(rate_in, rate_out, high, claim, delta, confidence) < power:
        high *= 2
        if high > 10**7:
            raise ValueError("the test cannot reach that power")
    low = high // 2
    while high - low > max(low // 100, 1):
        middle = (low + high) // 2
        if detection_power(rate_in, rate_out, middle, claim, delta,
                           confidence) >= power:
            high = middle
        else:
            low = middle
    return high


def run_audit(case, n_runs, seed=0, confidence=0.95):
    """Fit ``case`` ``n_runs`` times on each neighbouring dataset and audit it.

    Parameters
    ----------
    case : AuditCase
        See ``audit_cases.py``; its ``test`` (if any) is the fixed test.
    n_runs : int
        Fits per dataset.
    seed : int, default=0
        The fits use distinct random states from ``seed * 10**6`` on:
        independent across runs, reproducible across runs of the suite.
    confidence : float, default=0.95

    Returns
    -------
    AuditResult
    """
    scores_in, scores_out = run_scores(case, n_runs, seed)
    return audit_scores(scores_in, scores_out, case.delta, confidence,
                        test=getattr(case, "test", None))


def run_scores(case, n_runs, seed=0):
    """The statistic of ``n_runs`` fits on each dataset (in, out)."""
    data_in, data_out = case.datasets()
    states = (seed * 10**6 + np.arange(2 * n_runs)).reshape(2, n_runs)
    with _memoized_plans():
        return [
            np.array([case.statistic(case.fit(data, int(s))) for s in side])
            for data, side in zip((data_in, data_out), states, strict=True)
        ]


# Where the estimators find their plan functions.
_PLANS = [
    (skdpopt.sgd, "plan_dpsgd"),
    (skdpopt.lasso, "plan_lasso"),
    (skdpopt.logistic_simplex, "plan_logistic_simplex"),
    (skdpopt.minimax, "plan_minimax"),
    (skdpopt.synthetic, "plan_synthetic"),
    (skdpopt.preprocessing, "plan_scaler"),
]


@contextmanager
def _memoized_plans():
    """Plan each distinct request once across an audit's fits.

    A plan is a function of public quantities only, the same for every fit
    of a case; calibrating it anew each time is a third of a small fit's
    cost.  The functions in force are wrapped (a planted bug's included),
    so each fit still gets exactly the plan it would have made.
    """
    with pytest.MonkeyPatch.context() as patch:
        for module, name in _PLANS:
            function, cache = getattr(module, name), {}

            def memoized(*args, _function=function, _cache=cache, **kwargs):
                if any(isinstance(v, np.ndarray) for v in (*args, *kwargs.values())):
                    return _function(*args, **kwargs)
                key = repr((args, sorted(kwargs.items())))
                if key not in _cache:
                    _cache[key] = _function(*args, **kwargs)
                return _cache[key]

            patch.setattr(module, name, memoized)
        yield
