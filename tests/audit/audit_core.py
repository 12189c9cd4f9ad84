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
probability ``confidence`` overall (a union bound over the two intervals).
The threshold and the test's direction are chosen on one half of the runs
and the bound is computed on the other half, so that choosing them costs
no confidence.
"""

from dataclasses import dataclass

import numpy as np
from scipy import stats


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


@dataclass
class AuditResult:
    """What an audit measured.

    Attributes
    ----------
    epsilon_lower : float
        Lower bound on the mechanism's epsilon, valid with probability
        ``confidence`` (0 when the test distinguishes nothing).
    threshold : float
        The threshold chosen on the selection half.
    direction : int
        +1 when "statistic > threshold" signals D, -1 when "<" does.
    n_runs : int
        Fits per dataset (half of them choose the test, half measure it).
    """

    epsilon_lower: float
    threshold: float
    direction: int
    n_runs: int


def _hits(scores, thresholds, direction):
    """How many scores fall in the rejection region of each threshold."""
    ordered = np.sort(scores)
    above = len(scores) - np.searchsorted(ordered, thresholds, side="right")
    return above if direction > 0 else len(scores) - above


def audit_scores(scores_in, scores_out, delta, confidence=0.95):
    """Lower-bound epsilon from statistics of fits on D (in) and on D' (out).

    Parameters
    ----------
    scores_in, scores_out : ndarray of shape (n_runs,)
        The test statistic of each fit; runs must be independent.
    delta : float
        The delta the mechanism claims.
    confidence : float, default=0.95

    Returns
    -------
    AuditResult
    """
    scores_in = np.asarray(scores_in, dtype=float)
    scores_out = np.asarray(scores_out, dtype=float)
    half = len(scores_in) // 2
    choose_in, measure_in = scores_in[:half], scores_in[half:]
    choose_out, measure_out = scores_out[:half], scores_out[half:]
    alpha = (1 - confidence) / 2
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
    return AuditResult(epsilon_lower=max(float(bound), 0.0), threshold=threshold,
                       direction=direction, n_runs=len(scores_in))


def run_audit(case, n_runs, seed=0, confidence=0.95):
    """Fit ``case`` ``n_runs`` times on each neighbouring dataset and audit it.

    Parameters
    ----------
    case : AuditCase
        See ``audit_cases.py``.
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
    data_in, data_out = case.datasets()
    states = (seed * 10**6 + np.arange(2 * n_runs)).reshape(2, n_runs)
    scores = [
        np.array([case.statistic(case.fit(data, int(s))) for s in side])
        for data, side in zip((data_in, data_out), states, strict=True)
    ]
    return audit_scores(*scores, case.delta, confidence)
