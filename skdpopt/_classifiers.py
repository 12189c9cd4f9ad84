"""What the linear classifiers release around their fit.

DPSGDClassifier and DPLogisticSimplex both release the class totals before
they fit (which set the intercepts' start, ``class_weight="balanced"`` and
the fit check's prior) and the fit check after it; their plans hold the
noise (:mod:`skdpopt.plans.classes`, :mod:`skdpopt.plans.checks`).
DPMinimaxClassifier releases the class totals after its solver, then
calibrates its intercept (vertex sampling) and checks each group's fit
(:mod:`skdpopt.plans.minimax_checks`).
"""

from functools import partial

import numpy as np

from ._data import map_rows
from ._diagnostics import (
    noisy_sum_ratio,
    warn_if_no_better_than_prior,
    warn_if_worst_group_no_better_than_prior,
)
from .losses import LogLoss
from .plans.checks import FIT_CHECK_SPREADS
from .plans.classes import (
    AUTO_ETA0,
    auto_step_scales,
    class_stage,
    public_class_weights,
)
from .solvers.checks import release_fit_check, release_group_fit_check
from .solvers.classes import (
    calibrate_intercept,
    release_class_totals,
    weigh_problems,
)


def weight_bound(estimator, sample_weight):
    """The public bound on the rows' weights (1 without sample weights)."""
    return 1.0 if sample_weight is None else float(estimator.sample_weight_bound)


def class_plan(estimator, sample_weight, *, proba):
    """DPSGDClassifier's base step and planned class releases
    (``plan_dpsgd`` arguments).

    The class totals start the intercepts, set "balanced" weights and the
    prior of the fit check; the intercepts of losses with a probability
    (``proba``) are calibrated, and their fit checked, last.
    """
    public_class_weights(estimator.class_weight, estimator.classes_)  # checks a dict
    count = estimator.fit_intercept or estimator.class_weight == "balanced" or proba
    # eta0="auto" plans the base step; each problem scales it (sgd_weighting).
    return {"eta0": AUTO_ETA0 if estimator.eta0 == "auto" else estimator.eta0,
            "n_classes": len(estimator.classes_) if count else None,
            "weight_bound": weight_bound(estimator, sample_weight),
            "calibrate_intercept": estimator.fit_intercept and proba,
            "fit_check": proba}


def release_weighting(estimator, targets, loss, sample_weight, totals_plan, rng,
                      *, auto_step=None):
    """Release the class totals (if planned) and weigh each binary problem.

    Parameters
    ----------
    estimator : DPSGDClassifier or DPLogisticSimplex
        Reads ``class_weight``, ``classes_``, ``fit_intercept`` and
        ``sample_weight_bound``.
    targets : list of ndarray or dask.array.Array
        The +-1 targets of each binary problem.
    loss : object
        The unweighted loss.
    sample_weight : ndarray or None
        Validated weights in ``[0, sample_weight_bound]``.
    totals_plan : ClassTotalsPlan or None
    rng : numpy.random.Generator
    auto_step : float or None, default=None
        The steps' public noise ratio, to scale each problem's step from
        it and the weighted share of its rarer side in the released totals
        (DPSGDClassifier's ``eta0="auto"``,
        :func:`~skdpopt.plans.classes.auto_step_scales`; 1 where the
        totals are not released); None: no scaling.

    Returns
    -------
    ClassWeighting
    """
    totals = None
    if totals_plan is not None:
        totals = release_class_totals(targets, sample_weight, totals_plan, rng)
    bound = weight_bound(estimator, sample_weight)
    stage = class_stage(estimator.class_weight, estimator.classes_, totals, bound)
    steps = (auto_step_scales([p.share for p in stage.problems], auto_step)
             if auto_step is not None and totals is not None else None)
    return weigh_problems(
        targets, loss, stage, fit_intercept=estimator.fit_intercept,
        sample_weight=None if sample_weight is None else sample_weight / bound,
        step_scales=steps)


def sgd_weighting(estimator, targets, loss, sample_weight, plan, rng):
    """DPSGDClassifier's :func:`release_weighting`: with ``eta0="auto"``
    each problem's step is scaled from its released share and the steps'
    public noise ratio (:func:`~skdpopt.plans.classes.auto_step_scales`).

    ``plan`` is the fit's DPSGDPlan.
    """
    noise_ratio = None
    if estimator.eta0 == "auto":
        n_samples = targets[0].shape[0]
        noise_ratio = noisy_sum_ratio(
            noise_multiplier=plan.noise_multiplier, n_steps=plan.n_steps,
            expected_batch=plan.sampling_rate * n_samples,
            n_params=estimator.n_features_in_ + int(estimator.fit_intercept))
    return release_weighting(estimator, targets, loss, sample_weight,
                             plan.class_totals, rng, auto_step=noise_ratio)


def quiet_log_proba(estimator, rows):
    """``estimator.predict_log_proba(rows)`` without floating-point
    warnings: an extreme training row overflows its score (its gain is
    then clipped), and a warning would say that such a row exists."""
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        return estimator.predict_log_proba(rows)


def check_fit(estimator, X, targets, weighting, plan, rng):
    """Release the fit check of the fitted ``estimator`` (its training
    log-likelihood over the class prior, the classes balanced by
    :meth:`~skdpopt.solvers.classes.ClassWeighting.check_weights`) and warn
    when it is not clearly positive; ``plan`` is the
    :class:`~skdpopt.plans.checks.FitCheckPlan`."""
    released = release_fit_check(
        map_rows(partial(quiet_log_proba, estimator), X, len(estimator.classes_)),
        targets, weighting.log_prior(), weighting.check_weights(targets), plan,
        rng)
    warn_if_no_better_than_prior(estimator, released, plan,
                                 spreads=FIT_CHECK_SPREADS)


def release_calibration(X, problem, result, plan, rng):
    """Release DPMinimaxClassifier's class totals and, where planned, its
    intercept calibrated to their share of positives.

    The calibration moves the intercept until the mean predicted
    probability on the training rows (as ``predict`` sees them) matches
    that share (:func:`~skdpopt.solvers.classes.calibrate_intercept`).

    Parameters
    ----------
    X : ndarray or CSR matrix
        The validated training rows.
    problem : GroupProblem
        The solver's problem (its +-1 targets).
    result : object
        The solver's result (``coef``, ``intercept``).
    plan : MinimaxChecksPlan
    rng : numpy.random.Generator

    Returns
    -------
    totals : ndarray of shape (2,)
        The released (floored) class totals.
    intercept : float
        The solver's intercept, calibrated where the plan says so.
    """
    totals = release_class_totals([problem.target], None, plan.class_totals, rng)
    if not plan.calibration_steps:
        return totals, result.intercept
    share = float(np.clip(totals[1] / totals.sum(), 1e-6, 1.0 - 1e-6))
    return totals, calibrate_intercept(
        X, result.coef, float(result.intercept), LogLoss(), None, share,
        float(X.shape[0]), plan.calibration_steps, plan.calibration_scale, rng,
        noise=plan.calibration_noise or "gaussian")


def check_group_fit(estimator, X, problem, totals, plan, stage, rng):
    """Release the worst-group fit check of the fitted DPMinimaxClassifier
    and warn unless it shows a gain on every mixture of the groups that the
    solver's adversary could weigh (gda: capped at ``kappa``; vertex
    sampling: any, so every group).

    Each group's sum of the rows' clipped gains in log-likelihood over the
    class prior, the classes balanced by the released ``totals``;
    ``plan`` is the :class:`~skdpopt.plans.checks.FitCheckPlan`, ``stage``
    the solver's stage (its proportions and cap).
    """
    log_proba = quiet_log_proba(estimator, X)
    released = release_group_fit_check(
        log_proba, [problem.target], problem.codes,
        problem.n_groups, np.log(totals / totals.sum()),
        np.where(problem.target > 0, totals.min() / totals[1],
                 totals.min() / totals[0]), plan, rng)
    proportions = np.asarray(stage.proportions, dtype=float)
    kappa = getattr(stage, "kappa", 1.0 / proportions.min())
    warn_if_worst_group_no_better_than_prior(
        estimator, released, plan, proportions=proportions, kappa=kappa,
        spreads=FIT_CHECK_SPREADS)
