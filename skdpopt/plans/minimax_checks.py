"""What DPMinimaxClassifier releases after its solver, whichever it is:
the class totals, the intercept's calibration (vertex sampling) and the
worst-group fit check, planned on declared shares of the fit's budget
(``docs/privacy/dpminimax.md#fit-check``)."""

from dataclasses import dataclass

import numpy as np

from ..accounting import (
    EpsilonDeltaEvent,
    GaussianMechanism,
    LaplaceMechanism,
    compose,
    repeat,
)
from ..accounting.zcdp import gaussian_noise_multiplier
from .checks import FIT_CHECK_SHARE, plan_fit_check
from .classes import CALIBRATION_SHARE, CALIBRATION_STEPS, plan_class_totals
from .classes import COUNT_SHARE as CLASS_COUNT_SHARE


@dataclass(frozen=True)
class MinimaxChecksPlan:
    """The releases after a DPMinimaxClassifier's solver: the class
    totals, the intercept's calibration (vertex sampling) and the
    worst-group fit check, in that order.

    Attributes
    ----------
    class_totals : ClassTotalsPlan
        The two class counts (:mod:`skdpopt.plans.classes`): the prior of
        the fit check, the share the intercept is calibrated to.
    calibration_steps : int
        Noisy probability sums of the calibration (0: none).
    calibration_noise : {"gaussian", "laplace", None}
    calibration_scale : float
        Standard deviation (Gaussian) or scale (Laplace) of the noise on
        each sum (sensitivity 1).
    fit_check : FitCheckPlan
        The release of the vector of the groups' sums of clipped gains:
        one record moves it by at most ``2 bound`` in l1 and in l2, as one
        sum, so each coordinate gets the noise of the plan.
    event : event
        The three releases.
    """

    class_totals: object
    calibration_steps: int
    calibration_noise: str
    calibration_scale: float
    fit_check: object
    event: object


def plan_minimax_checks(budget, *, pure, calibrate):
    """Plan the releases after the solver on their shares of ``budget``
    (:func:`checks_share`).

    Parameters
    ----------
    budget : float
        The fit's whole budget: zCDP rho (Gaussian noise), or with
        ``pure`` the pure epsilon (Laplace noise); ``inf``: no privacy,
        exact releases.
    pure : bool
    calibrate : bool
        Plan the intercept's calibration (``CALIBRATION_STEPS`` sums on
        ``CALIBRATION_SHARE``).

    Returns
    -------
    MinimaxChecksPlan
    """
    steps = CALIBRATION_STEPS if calibrate else 0
    if np.isinf(budget):
        return MinimaxChecksPlan(plan_class_totals(2, 0.0), steps, None, 0.0,
                                 plan_fit_check(0.0), EpsilonDeltaEvent(np.inf, 0.0))
    if pure:  # Laplace: the noise over the L1 sensitivity is 1 / epsilon
        totals = plan_class_totals(2, 1.0 / (CLASS_COUNT_SHARE * budget), pure=True)
        check = plan_fit_check(1.0 / (FIT_CHECK_SHARE * budget), pure=True)
        each = CALIBRATION_SHARE * budget / max(steps, 1)
        calibration = ("laplace", 1.0 / each, LaplaceMechanism(each))
    else:
        totals = plan_class_totals(
            2, gaussian_noise_multiplier(CLASS_COUNT_SHARE * budget))
        check = plan_fit_check(gaussian_noise_multiplier(FIT_CHECK_SHARE * budget))
        each = gaussian_noise_multiplier(CALIBRATION_SHARE * budget / max(steps, 1))
        calibration = ("gaussian", each, GaussianMechanism(each))
    noise, scale, mechanism = calibration if steps else (None, 0.0, None)
    return MinimaxChecksPlan(
        totals, steps, noise, scale, check,
        compose(totals.event, repeat(mechanism, steps) if steps else None,
                check.event))


def checks_share(calibrate):
    """The share of the budget :func:`plan_minimax_checks` spends."""
    return (CLASS_COUNT_SHARE + FIT_CHECK_SHARE
            + (CALIBRATION_SHARE if calibrate else 0.0))
