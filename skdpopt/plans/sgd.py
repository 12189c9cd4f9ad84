"""The plan of a DP-SGD fit: schedule and calibrated noise."""

import math
from dataclasses import dataclass

import numpy as np

from ..accounting import (
    EpsilonDeltaEvent,
    GaussianMechanism,
    NoiseBracket,
    SubsampledGaussianMechanism,
    calibrate,
    clt_noise_multiplier,
    compose,
    repeat,
    zcdp,
)
from .base import PrivacyPlan
from .bounds import AUTO_BOUNDS_SHARE, QuantileDraws, auto_draws
from .checks import (
    CLIP_CHECK_SHARE,
    FIT_CHECK_BOUND,
    FIT_CHECK_SHARE,
    REGRESSION_CHECK_SHARE,
    ClipCheckPlan,
    FitCheckPlan,
    RegressionCheckPlan,
    plan_clip_check,
    plan_fit_check,
    plan_regression_check,
)
from .classes import (
    CALIBRATION_SHARE,
    CALIBRATION_STEPS,
    COUNT_SHARE,
    ClassTotalsPlan,
    plan_class_totals,
)
from .targets import TargetDraws, centring_share, target_draws, target_units

# Rank of the "auto" clip norm among the per-example gradient norms at the
# starting point (chosen on development data, benchmarks/design_defaults.py).
CLIP_QUANTILE = 0.9
# Rank of the "auto" target scale among the |y_i - location|, moved
# inwards as far as the draws need (effective_quantiles).  Targets scaled
# at a lower rank are clipped harder by the unit clip norm, which biases
# the fit of a heavy-tailed target; centred targets pay little for the
# higher rank's smaller scaled signal: 0.99 did as well as 0.9 or better
# on the panel's design half and the generated families
# (benchmarks/design_regression.py; 0.9 was chosen for targets scaled
# without centring).  Draws that miss the data's scale cost the whole
# fit, so the target's releases get the share of the budget that lets
# them centre it for the rows at hand, at least the "auto" share and at
# most MAX_TARGET_SHARE.
TARGET_QUANTILE = 0.99
MAX_TARGET_SHARE = 0.25
# Classes in lockstep clip each row's K derivatives together to this times
# clip_norm: sqrt(2) is the largest l2 norm of y - p for a one-hot y and a
# probability vector p, so a row whose derivatives behave like a softmax
# model's is clipped no harder than one binary problem's row is clipped
# to clip_norm.  Measured on the multiclass tables of the panel's design
# half and of benchmarks/design_classify_dev.py (fraction of the
# non-private AUC gain, problems one after another -> in lockstep): at
# epsilon = 1 chile 0.75 -> 0.84, fishing 0.46 -> 0.59, gen_multi4 0.90 ->
# 0.92, military 0.91 -> 0.88; at epsilon = 3 within -0.02 on each (the
# shared clip's bias, where the noise is small).  A factor of 1 cut more
# signal (military 0.87 at epsilon = 1), 2 added noise (chile 0.91 at
# epsilon = 3).  DPLogisticSimplex's solver="sgd" in lockstep, 16 seeds,
# means at epsilon = 1: chile 0.77 -> 0.79, fishing 0.55 -> 0.56,
# gen_multi4 0.88 -> 0.91, military 0.86 -> 0.87; at 3 within -0.011.
LOCKSTEP_CLIP = math.sqrt(2.0)


@dataclass(frozen=True)
class DPSGDPlan(PrivacyPlan):
    """What a DP-SGD fit releases: ``n_problems * n_steps`` noisy sums, or
    ``n_steps`` joint ones when the problems run in lockstep.

    Attributes
    ----------
    sampling_rate : float
        Poisson sampling rate q (1 for full batches).
    n_steps : int
        Noisy steps per problem.
    n_epochs : int
        Epochs those steps make (for progress messages and ``n_iter_``).
    n_problems : int
        Binary problems (one-vs-rest), or 1.
    lockstep : bool
        The problems run together, each step one noisy sum of all their
        gradients under one clip (:mod:`skdpopt.solvers.lockstep_sgd`),
        instead of one after another.
    noise_multiplier : float
        Noise std over the clip norm; 0 without privacy.
    average_start : float or None
        Step from which iterates are averaged (None: the last iterate).
    clip_draws : QuantileDraws or None
        The draws of the "auto" clip norm (a private quantile of the
        per-example gradient norms at the starting point), released before
        the first step; None for a public clip norm.
    target_draws : TargetDraws or None
        The releases of the "auto" target location and scale (a private
        mean of the clipped targets and an upper quantile of
        ``|y_i - location|``), released first; None for a public scale.
    bounds_share : float
        Share of ``rho_for(epsilon, delta)`` (zCDP units) given to all the
        "auto" draws together, the class totals and the calibration; the
        steps' noise is calibrated for the rest.
    class_totals : ClassTotalsPlan or None
        The release of the class totals, first (classifiers with an
        intercept or ``class_weight="balanced"``).
    calibration_steps : int
        Steps of the intercept's calibration after the run, per problem
        (0: none).
    calibration_noise : float
        Standard deviation of the noise on each calibration sum (rows'
        weights in [0, 1]: sensitivity 1).
    fit_check : FitCheckPlan, RegressionCheckPlan or None
        The release of the fit check, last (classifiers with
        probabilities: FitCheckPlan; the regressor: RegressionCheckPlan).
    clip_check : ClipCheckPlan or None
        The release of the clip check, first (DPLogisticSimplex).
    single_pass : bool
        Each row's gradient is used at most once (``sampling="single_pass"``).
    learning_rate : {"constant", "invscaling"}
    eta0, power_t : float
        The step size at step t (0-based): ``eta0``, or
        ``eta0 / (t + 1) ** power_t`` (:meth:`step_size`).
    """

    sampling_rate: float
    n_steps: int
    n_epochs: int
    n_problems: int
    noise_multiplier: float
    lockstep: bool = False
    average_start: float = None
    clip_draws: QuantileDraws = None
    target_draws: TargetDraws = None
    bounds_share: float = 0.0
    class_totals: ClassTotalsPlan = None
    calibration_steps: int = 0
    calibration_noise: float = 0.0
    fit_check: FitCheckPlan | RegressionCheckPlan = None
    clip_check: ClipCheckPlan = None
    single_pass: bool = False
    learning_rate: str = "invscaling"
    eta0: float = 0.01
    power_t: float = 0.25

    @property
    def clip_scale(self):
        """What ``clip_norm`` is multiplied by to bound one step's
        contribution of a row (and the noise with it):
        :data:`LOCKSTEP_CLIP` for problems in lockstep, else 1."""
        return LOCKSTEP_CLIP if self.lockstep else 1.0

    def step_size(self, t):
        """The step size at step t = 0, 1, ..."""
        if self.learning_rate == "constant":
            return self.eta0
        return self.eta0 / (t + 1.0) ** self.power_t


# batch_size="auto": at most MAX_AUTO_BATCH rows, and small enough that
# the epochs make at least n * epsilon / N_EPSILON_PER_STEP steps, within
# [MIN_AUTO_STEPS, MAX_AUTO_STEPS] (MAX_AUTO_STEPS without privacy).  Few
# steps leave the model far from the optimum when the noise is small;
# many small noisy steps add up more noise when it is not.  Chosen on
# development data (benchmarks/design_defaults.py, --task schedule).
MAX_AUTO_BATCH = 256
N_EPSILON_PER_STEP = 50.0
MIN_AUTO_STEPS = 10
MAX_AUTO_STEPS = 200


def auto_batch_size(n_samples, epsilon, max_iter):
    """The batch size of ``batch_size="auto"`` (public quantities only)."""
    steps = min(max(n_samples * epsilon / N_EPSILON_PER_STEP, MIN_AUTO_STEPS),
                MAX_AUTO_STEPS)
    wanted = math.ceil(max_iter * n_samples / steps)
    return max(1, min(MAX_AUTO_BATCH, n_samples, wanted))


def sgd_schedule(n_samples, *, sampling, batch_size, max_iter, epsilon=1.0):
    """Sampling rate, steps and epochs from the public hyperparameters."""
    if batch_size == "auto":
        batch_size = auto_batch_size(n_samples, epsilon, max_iter)
    elif batch_size > n_samples:
        raise ValueError(
            f"batch_size={batch_size} must be at most n_samples={n_samples}."
        )
    if sampling == "full":
        return 1.0, max_iter, max_iter
    rate = batch_size / n_samples
    if sampling == "single_pass":
        # Run until about half the rows have been sampled: after T steps a
        # row is unseen with probability (1 - q)^T.
        steps = 1 if rate >= 1.0 else math.ceil(math.log(2.0) / -math.log1p(-rate))
        return rate, steps, 1
    return rate, math.ceil(max_iter / rate), max_iter


def plan_dpsgd(*, n_samples, n_problems, epsilon, delta, sampling, batch_size,
               max_iter, average, auto_clip=False, auto_target=False,
               n_classes=None, weight_bound=1.0, calibrate_intercept=False,
               fit_check=False, clip_check=False, centre_target=True,
               learning_rate="invscaling", eta0=0.01, power_t=0.25,
               lockstep=False):
    """Plan a DP-SGD fit from public quantities.

    Parameters
    ----------
    n_samples : int
        Number of rows (public).
    n_problems : int
        Binary problems in the fit (classes in one-vs-rest).
    epsilon, delta : float
        The fit's budget; ``epsilon=inf`` plans a run without noise.
    sampling, batch_size, max_iter, average, learning_rate, eta0, power_t
        The estimator's hyperparameters of the same names.
    auto_clip : bool, default=False
        Release the clip norm privately first (``clip_norm="auto"``).
    auto_target : bool, default=False
        Release the target's location and scale privately first
        (``target_scale="auto"``, :func:`~skdpopt.plans.targets.target_draws`).
        The clip norm's draws cost ``AUTO_BOUNDS_SHARE`` of
        ``rho_for(epsilon, delta)``, the target's releases the share that
        makes them centre it for ``n_samples`` rows
        (:func:`~skdpopt.plans.targets.centring_share`), within
        ``[AUTO_BOUNDS_SHARE, MAX_TARGET_SHARE]``; the steps' noise is then
        calibrated so that the whole event spends ``epsilon``.
    n_classes : int or None, default=None
        Release the total weight of each of these classes first, on
        ``COUNT_SHARE`` of the budget (None: no release).
    weight_bound : float, default=1.0
        Public bound on the rows' sample weights (the totals' sensitivity).
    calibrate_intercept : bool, default=False
        Calibrate each problem's intercept after the run
        (:func:`skdpopt.solvers.classes.calibrate_intercept`):
        ``CALIBRATION_STEPS`` noisy sums per problem on
        ``CALIBRATION_SHARE`` of the budget.
    fit_check : bool, default=False
        Release the classifiers' fit check last (:mod:`skdpopt.plans.checks`),
        on ``FIT_CHECK_SHARE`` of the budget.  A regressor whose target is
        centred at a released location (``auto_target``) releases the
        regression fit check there instead, on ``REGRESSION_CHECK_SHARE``
        (``docs/privacy/targets.md``).
    clip_check : bool, default=False
        Release the clip check first, on ``CLIP_CHECK_SHARE``.
    centre_target : bool, default=True
        Whether the target's location is released (False for a model
        without intercept: only its scale, two draws).
    lockstep : bool, default=False
        The problems run together, each step one subsampled Gaussian
        mechanism for all of them (:mod:`skdpopt.solvers.lockstep_sgd`);
        otherwise one after another, their steps composed.

    Returns
    -------
    DPSGDPlan
    """
    rate, steps, epochs = sgd_schedule(
        n_samples, sampling=sampling, batch_size=batch_size, max_iter=max_iter,
        epsilon=epsilon)
    if average is False:
        average_start = None
    else:
        # Like scikit-learn, an integer ``average`` counts samples seen.
        average_start = max(int(average) / (rate * n_samples) - 1.0, 0.0)
    if epsilon != np.inf and delta == 0:
        raise ValueError(
            "delta must be > 0: Gaussian noise gives no pure (delta=0) "
            "guarantee.")
    rho = 0.0 if epsilon == np.inf else zcdp.rho_for(epsilon, delta)
    clip_share = AUTO_BOUNDS_SHARE if auto_clip else 0.0
    target_share = 0.0
    if auto_target and epsilon != np.inf:
        target_share = centring_share(n_samples, rho,
                                      n_releases=target_units(centre_target),
                                      low=AUTO_BOUNDS_SHARE,
                                      high=MAX_TARGET_SHARE)
    clip_draws = targets = None
    if auto_clip:
        clip_draws = auto_draws(clip_share * rho, n_samples=n_samples,
                                n_bounds=1, epsilon=epsilon,
                                quantile=CLIP_QUANTILE)
    if auto_target:
        targets = target_draws(target_share * rho, n_samples=n_samples,
                               epsilon=epsilon, scale_quantile=TARGET_QUANTILE,
                               centre=centre_target)
    count_share = COUNT_SHARE if n_classes is not None else 0.0
    calibration_share = CALIBRATION_SHARE if calibrate_intercept else 0.0
    # The regressor's check compares with the released location: none
    # without one (a fit whose target is not centred warns of that).
    regression_check = auto_target and targets.centre
    check_share = (FIT_CHECK_SHARE if fit_check else
                   REGRESSION_CHECK_SHARE if regression_check else 0.0)
    clip_check_share = CLIP_CHECK_SHARE if clip_check else 0.0
    share = (clip_share + target_share + count_share + calibration_share
             + check_share + clip_check_share)
    totals = None
    if n_classes is not None:
        multiplier = zcdp.gaussian_noise_multiplier(count_share * rho) if rho else 0.0
        totals = plan_class_totals(n_classes, multiplier, weight_bound)
    calibration_steps = CALIBRATION_STEPS if calibrate_intercept else 0
    calibration_noise, calibration_event = 0.0, None
    if calibrate_intercept and epsilon != np.inf:
        releases = calibration_steps * n_problems
        multiplier = 1.0 / np.sqrt(2.0 * calibration_share * rho / releases)
        calibration_noise = multiplier  # sensitivity 1
        calibration_event = repeat(GaussianMechanism(multiplier), releases)
    check = clipped = None
    if fit_check or regression_check:
        multiplier = zcdp.gaussian_noise_multiplier(check_share * rho) if rho else 0.0
        check = (plan_fit_check(multiplier, bound=FIT_CHECK_BOUND) if fit_check
                 else plan_regression_check(multiplier))
    if clip_check:
        clipped = plan_clip_check(
            zcdp.gaussian_noise_multiplier(clip_check_share * rho) if rho else 0.0)
    if epsilon == np.inf:
        noise_multiplier, event = 0.0, EpsilonDeltaEvent(np.inf, 0.0)
    else:
        first = [d.event for d in (targets, clip_draws) if d is not None]
        if totals is not None:
            first.insert(0, totals.event)
        if clipped is not None:
            first.insert(0, clipped.event)
        last = [] if calibration_event is None else [calibration_event]
        if check is not None:
            last.append(check.event)

        runs = 1 if lockstep else n_problems

        def make_event(sigma):
            steps_event = repeat(
                SubsampledGaussianMechanism(min(rate, 1.0), sigma), steps * runs)
            parts = [*first, steps_event, *last]
            return compose(*parts) if len(parts) > 1 else steps_event

        # Problems run one after another compose: calibrate their total.
        # In zCDP terms the steps keep 1 - share of the budget.
        guess = clt_noise_multiplier(epsilon, delta, rate, steps * runs)
        noise_multiplier = calibrate(
            make_event, epsilon, delta,
            NoiseBracket(guess / np.sqrt(1.0 - share))).value
        event = make_event(noise_multiplier)
    return DPSGDPlan(
        epsilon=epsilon, delta=delta, event=event, sampling_rate=rate,
        n_steps=steps, n_epochs=epochs, n_problems=n_problems,
        noise_multiplier=noise_multiplier, lockstep=lockstep,
        average_start=average_start,
        clip_draws=clip_draws, target_draws=targets, bounds_share=share,
        class_totals=totals, calibration_steps=calibration_steps,
        calibration_noise=calibration_noise, fit_check=check, clip_check=clipped,
        single_pass=sampling == "single_pass", learning_rate=learning_rate,
        eta0=eta0, power_t=power_t)
