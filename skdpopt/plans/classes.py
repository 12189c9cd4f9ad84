"""The class totals of the linear classifiers, and what they set.

DPSGDClassifier and DPLogisticSimplex release, before they fit, the total
weight of each declared class: the class counts, or with ``sample_weight``
the sums of the rows' weights per class.  Replacing one record moves at
most two totals, each by at most the public weight bound ``W_s`` (1
without weights): an L2 sensitivity of ``sqrt(2) W_s`` for Gaussian noise,
an L1 sensitivity of ``2 W_s`` for Laplace noise (pure DP).  The derivation
is in ``docs/privacy/classes.md``.

The released totals are public; from them (and the public ``class_weight``)
:func:`problem_weights` sets, for each binary problem (one-vs-rest), the
weights of its positive and negative rows (``class_weight="balanced"``), the
largest weight a row of the problem can carry, and the weighted share of
positives, whose log-odds starts the intercept.
"""

import math
from dataclasses import dataclass

import numpy as np
from sklearn.utils.class_weight import compute_class_weight

from ..accounting import EpsilonDeltaEvent, GaussianMechanism, LaplaceMechanism

# Shares of the zCDP budget (pure epsilon when delta = 0) of the class
# totals and of the intercept's calibration (chosen on the panel's design
# half and on generated imbalanced families).
COUNT_SHARE = 0.03
CALIBRATION_SHARE = 0.05
# Calibration steps (each one noisy sum per problem).
CALIBRATION_STEPS = 3
# Released totals are floored at this many standard deviations of their
# noise, so that a class the noise hides gets a bounded weight.
TOTAL_FLOOR_SPREADS = 2.0
# DPSGDClassifier's eta0="auto": the step of each binary problem is
# AUTO_ETA0 times a scale that grows to STEP_GROWTH with two public ramps
# (their product): the released (weighted) share of the problem's rarer
# side, from 0
# at STEP_SHARES[0] to 1 at STEP_SHARES[1], and the steps' noise over their
# largest signal (``skdpopt._diagnostics.noisy_sum_ratio``), from 1 at
# NOISE_RATIOS[0] to 0 at NOISE_RATIOS[1].  A larger step finds the fit
# sooner on balanced problems, but on rare classes, and where the noise is
# large, it lets the noise move the scores more than the summed gradients
# of the rows (chosen on the panel's design half, the classifier
# development tables and generated families).
AUTO_ETA0 = 0.5
STEP_GROWTH = 2.0
STEP_SHARES = (0.05, 0.15)
NOISE_RATIOS = (0.015, 0.03)


@dataclass(frozen=True)
class ClassTotalsPlan:
    """The release of the class totals.

    Attributes
    ----------
    n_classes : int
    noise : {"gaussian", "laplace", None}
        None: no privacy, the exact totals.
    noise_scale : float
        Standard deviation (Gaussian) or scale (Laplace) of the noise on
        each total.
    floor : float
        Released totals below this are raised to it
        (``TOTAL_FLOOR_SPREADS`` standard deviations of the noise, at least
        half a row of weight 1).
    event : event
        What the release spends.
    """

    n_classes: int
    noise: str
    noise_scale: float
    floor: float
    event: object


def plan_class_totals(n_classes, noise_multiplier, weight_bound=1.0, pure=False):
    """Plan the release of the class totals.

    Parameters
    ----------
    n_classes : int
    noise_multiplier : float
        Noise over sensitivity: the Gaussian's standard deviation over its
        L2 sensitivity ``sqrt(2) W_s``, or with ``pure`` the Laplace scale
        over its L1 sensitivity ``2 W_s`` (an ``1 / noise_multiplier``-DP
        release).  0: no privacy, the exact totals.
    weight_bound : float, default=1.0
        Public bound ``W_s`` on each row's sample weight (1 without
        weights).
    pure : bool, default=False

    Returns
    -------
    ClassTotalsPlan
    """
    if noise_multiplier == 0:
        return ClassTotalsPlan(n_classes, None, 0.0, 0.5,
                               EpsilonDeltaEvent(np.inf, 0.0))
    if pure:
        scale = noise_multiplier * 2.0 * weight_bound
        return ClassTotalsPlan(n_classes, "laplace", scale,
                               max(TOTAL_FLOOR_SPREADS * math.sqrt(2.0) * scale, 0.5),
                               LaplaceMechanism(1.0 / noise_multiplier))
    std = noise_multiplier * math.sqrt(2.0) * weight_bound
    return ClassTotalsPlan(n_classes, "gaussian", std,
                           max(TOTAL_FLOOR_SPREADS * std, 0.5),
                           GaussianMechanism(noise_multiplier))


def class_weight_vector(class_weight, classes, totals):
    """The weight of each class: public (None, a dict) or "balanced" from
    the released totals, ``sum(totals) / (n_classes * totals)``."""
    weights = public_class_weights(class_weight, classes)
    if weights is None:
        weights = totals.sum() / (len(classes) * totals)
    return weights


@dataclass(frozen=True)
class ProblemWeights:
    """The weights of one binary problem, from public or released values.

    Attributes
    ----------
    positive, negative : float
        Class weights of the rows labelled +1 and -1, divided by the larger
        of the two (so that both lie in [0, 1]).
    scale : float
        The largest weight a row of the problem carries: the sample-weight
        bound times the larger class weight.  Rows' weights are divided by
        it, so that every sensitivity stays that of unit weights; a solver
        multiplies its step by it to keep the weighted objective's scale.
    share : float or None
        Weighted share of the positives from the released totals, inside
        (0, 1); None when the totals were not released.
    total : float or None
        The released total of the rows' weights divided by ``scale`` (the
        sum of the weights the solvers see); None without totals.
    """

    positive: float
    negative: float
    scale: float
    share: float = None
    total: float = None


def public_class_weights(class_weight, classes):
    """The weight of each class for ``None`` or a dict (public), as
    scikit-learn's ``compute_class_weight``; None for "balanced".

    Raises
    ------
    ValueError
        If a dict names labels outside ``classes``, or gives weights that are
        negative, not finite or all zero.
    """
    if isinstance(class_weight, str):
        return None
    weights = compute_class_weight(class_weight, classes=classes, y=classes)
    if not (np.all(np.isfinite(weights)) and np.all(weights >= 0)
            and weights.max() > 0):
        raise ValueError(
            "class_weight must give finite, non-negative weights, not all zero.")
    return np.asarray(weights, dtype=float)


def problem_weights(class_weight, classes, totals, weight_bound=1.0):
    """The weights of each binary problem (one-vs-rest beyond two classes).

    As scikit-learn's SGDClassifier: with two classes the positive rows
    (``classes[1]``) weigh ``w[1]`` and the negative ``w[0]``; with more,
    problem k's positive rows weigh ``w[k]`` and the rest 1.  "balanced"
    takes ``w[k] = sum(totals) / (n_classes * totals[k])``.

    Parameters
    ----------
    class_weight : dict, "balanced" or None
    classes : ndarray of shape (n_classes,)
    totals : ndarray of shape (n_classes,) or None
        The released (floored) class totals; None when not released.
    weight_bound : float, default=1.0
        The public bound on the sample weights (1 without them).

    Returns
    -------
    list of ProblemWeights
    """
    n_classes = len(classes)
    weights = class_weight_vector(class_weight, classes, totals)
    if n_classes == 2:
        pairs = [(1, weights[1], weights[0])]
    else:
        pairs = [(k, weights[k], 1.0) for k in range(n_classes)]
    problems = []
    for k, positive, negative in pairs:
        top = max(positive, negative)
        share = total = None
        if totals is not None:
            mass = positive * totals[k]
            other = negative * (totals.sum() - totals[k])
            share = float(np.clip(mass / (mass + other), 1e-6, 1.0 - 1e-6))
            total = float((mass + other) / (top * weight_bound))
        problems.append(ProblemWeights(positive / top, negative / top,
                                       weight_bound * top, share, total))
    return problems


@dataclass(frozen=True)
class ClassStage:
    """What the public class weights and the released totals set.

    Attributes
    ----------
    problems : list of ProblemWeights
        One per binary problem (:func:`problem_weights`).
    class_weights : ndarray of shape (n_classes,)
        The weight of each class (:func:`class_weight_vector`).
    totals : ndarray of shape (n_classes,) or None
        The released totals (None when not released).
    """

    problems: list
    class_weights: np.ndarray
    totals: np.ndarray = None


def class_stage(class_weight, classes, totals, weight_bound=1.0):
    """The weighting stage of a classifier fit, from public and released
    values only (see :func:`problem_weights`)."""
    return ClassStage(problem_weights(class_weight, classes, totals, weight_bound),
                      class_weight_vector(class_weight, classes, totals), totals)


def auto_step_scales(shares, noise_ratio=0.0):
    """What ``eta0="auto"`` multiplies ``AUTO_ETA0`` by on each binary
    problem, from released and public quantities only (post-processing).

    Parameters
    ----------
    shares : sequence of float
        Each problem's weighted share of positives from the released
        totals (:attr:`ProblemWeights.share`: class and sample weights
        included, so that a class weight and the same weight on the class's
        rows set the same step).
    noise_ratio : float, default=0.0
        The steps' noise over their largest signal (public: from the
        plan's noise multiplier and schedule and the number of
        parameters).

    Returns
    -------
    list of float
        One scale per problem, in ``[1, STEP_GROWTH]``.
    """
    shares = np.asarray(shares, dtype=float)
    rare = np.minimum(shares, 1.0 - shares)
    by_share = _ramp(rare, *STEP_SHARES)
    by_noise = 1.0 - _ramp(noise_ratio, *NOISE_RATIOS)
    return [float(1.0 + (STEP_GROWTH - 1.0) * r * by_noise) for r in by_share]


def _ramp(value, low, high):
    """0 at or below ``low``, 1 at or above ``high``, linear between."""
    return np.clip((np.asarray(value, dtype=float) - low) / (high - low), 0.0, 1.0)
