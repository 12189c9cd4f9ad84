"""Privacy plans of DPMinimaxClassifier: gradient descent-ascent and vertex
sampling.

Both fits have two stages.  The first releases the group counts (unless
the proportions are public: priors, or one group); the second runs the
solver with settings chosen from the released (or public) proportions:
:meth:`MinimaxGDAPlan.stage` and :meth:`MinimaxVertexPlan.stage`.  The
plan is made from public quantities alone (n, d, the number of groups,
epsilon, delta, the hyperparameters); a stage also from released
proportions, which are public once released.  The derivations are in
``docs/privacy/dpminimax.md``; how the constants below were chosen is in
``docs/design/minimax.md``.

Gradient descent-ascent: the first stage is a Gaussian mechanism on the
vector of counts, the second ``T`` steps of the model's Gaussian mechanism
and ``T`` of the adversary's (:mod:`skdpopt.solvers.gda`).  What the second
stage takes from the counts (the cap kappa, the group sizes, the step
sizes) changes how the data are used but never a release's sensitivity
over its noise, so the two stages compose adaptively with exact
accounting: the plan's event is the whole run's.

Vertex sampling (:mod:`skdpopt.solvers.saddle_point`): the first stage is
a Laplace mechanism on the counts; the number of draws and their score
sensitivity are chosen from the noisy counts and calibrated to spend at
most the rest of the budget, so the plan's event bounds the second stage
by that budget (sequential composition).  With public proportions the
whole fit is planned at once and its event is exact.
"""

import math
from dataclasses import dataclass

import numpy as np

from ..accounting import (
    EpsilonDeltaEvent,
    ExponentialMechanism,
    GaussianMechanism,
    LaplaceMechanism,
    PureDPMechanism,
    RhoBracket,
    ScaleBracket,
    calibrate,
    compose,
    privacy_spent,
    repeat,
)
from ..accounting.zcdp import (
    exponential_score_sensitivity,
    gaussian_noise_multiplier,
    rho_for,
)
from .base import PrivacyPlan
from .bounds import AUTO_BOUNDS_SHARE, auto_draws
from .checks import FIT_CHECK_SHARE, plan_fit_check
from .classes import CALIBRATION_SHARE, CALIBRATION_STEPS, plan_class_totals
from .classes import COUNT_SHARE as CLASS_COUNT_SHARE
from .preprocessing import QuantileDraws

# -- choosing the solver (docs/design/minimax.md#choosing-the-solver) ---------

# Vertex sampling's error grows with log(d), gradient descent-ascent's with
# sqrt(d) / (n mu): "auto" picks vertex sampling above this sqrt(d) per row
# and unit of epsilon.
AUTO_SQRT_D_PER_ROW = 0.004
# Without privacy gradient descent-ascent solves the problem over the l2
# ball, whose models overfit once d is a sizeable fraction of n: vertex
# sampling above this d per row.
AUTO_D_PER_ROW = 0.007

# -- gradient descent-ascent (docs/design/minimax.md#gradient-descent-ascent) -

# Shares of the zCDP budget of the group counts and, with
# clip_norm="auto", of the rows' norm (the rest to the two players; the
# model's share of it below, all of it when a stage's kappa is 1).
COUNT_SHARE = 0.05
ROW_NORM_SHARE = AUTO_BOUNDS_SHARE
MODEL_SHARE = 0.50
# Rank of the released row norm S (an upper quantile of ``||x_i||``): the
# gradient clip C and the model's step are set from it.
ROW_NORM_QUANTILE = 0.99
# With privacy the coefficients' part of each gradient is clipped at
# C = CLIP_FACTOR S: below the largest gradient norm, it trades a bias
# for less noise (the intercept's part is never clipped).
CLIP_FACTOR = 0.7
# Weight decay on the coefficients (not the intercept), in units of the
# model's noise floor (:func:`noise_floor`) at the step's weights.
WEIGHT_DECAY = 1.0
# Steps (every step is one pass over the data).  With privacy,
# STEPS_PER_FEATURE per coordinate of the model within [MIN_PRIVATE_STEPS,
# MAX_PRIVATE_STEPS] (:func:`private_steps`); without, NON_PRIVATE_STEPS.
STEPS_PER_FEATURE = 8
MIN_PRIVATE_STEPS = 50
MAX_PRIVATE_STEPS = 400
NON_PRIVATE_STEPS = 200
# The model's step is MODEL_STEP / L, L = (S^2 + b^2) / 4 the logistic
# loss's smoothness on rows (x, b) with ||x|| = S.
MODEL_STEP = 1.0
# The adversary's temperature: its log-weights end with noise of standard
# deviation about GROUP_TEMPERATURE on the smallest group (with privacy);
# without, its step is NON_PRIVATE_GROUP_STEP / (l_max sqrt(T)).
GROUP_TEMPERATURE = 1.0
NON_PRIVATE_GROUP_STEP = 60.0
# The cap kappa on q_g / p_g keeps the model's noise floor below this
# (:func:`gda_kappa`).
KAPPA_NOISE = 0.05
# A fit warns (UtilityWarning) when its noise floor at unit weight is
# above this: the weight decay, WEIGHT_DECAY times the floor, is then
# above about the logistic loss's curvature along a feature of unit scale
# (sigma' ~ 0.2 times E[x^2] ~ 0.25), so it pulls the coefficients at
# least halfway to zero, towards the intercept-only model.
USEFUL_NOISE_FLOOR = 0.05

# -- vertex sampling (docs/design/minimax.md#vertex-sampling) -----------------

# Passes over the data without privacy; the factor on the worst-case
# regret-optimal step sizes that caps every step; the share of that capped
# step that the default private T keeps the model's worst-case private
# step at.
NON_PRIVATE_PASSES = 20
STEP_CAP_FACTOR = 3.0
STEP_RATIO = 0.025


def choose_solver(n_samples, n_features, n_groups, epsilon, delta):
    """``"gda"`` or ``"vertex_sampling"`` from public quantities.

    Parameters
    ----------
    n_samples, n_features, n_groups : int
        Public sizes (``n_features`` counts the intercept).
    epsilon, delta : float

    Returns
    -------
    str
        ``"vertex_sampling"`` for pure differential privacy (``delta=0``,
        which Gaussian noise cannot give), where the dimension is large
        against the rows and the budget (``sqrt(d) > AUTO_SQRT_D_PER_ROW n
        epsilon``) and, without privacy, where ``d > AUTO_D_PER_ROW n``;
        ``"gda"`` otherwise.
    """
    if np.isinf(epsilon):
        return "vertex_sampling" if n_features > AUTO_D_PER_ROW * n_samples else "gda"
    if delta <= 0:
        return "vertex_sampling"
    if math.sqrt(n_features) > AUTO_SQRT_D_PER_ROW * n_samples * epsilon:
        return "vertex_sampling"
    return "gda"


def plan_minimax(*, n_samples, n_features, n_groups, epsilon, delta, solver,
                 proportions, count_budget_share, clip_norm, loss_bound, radius,
                 feature_bound, fit_intercept, max_iter, n_vertices):
    """Plan a DPMinimaxClassifier fit from public quantities only.

    Parameters
    ----------
    n_samples : int
    n_features : int
        Coordinates of the model, the intercept's included.
    n_groups : int
        Number of groups (public: declared, or read with a warning).
    epsilon, delta : float
    solver : {"auto", "gda", "vertex_sampling"}
    proportions : ndarray of shape (n_groups,) or None
        Public group proportions (priors, or the one group); None when the
        fit counts the groups (privately, unless ``epsilon`` is infinite).
    count_budget_share, clip_norm, loss_bound, radius, feature_bound,
    fit_intercept, max_iter, n_vertices
        The estimator's hyperparameters of the same names.

    Returns
    -------
    MinimaxGDAPlan or MinimaxVertexPlan
    """
    if solver == "auto":
        solver = choose_solver(n_samples, n_features, n_groups, epsilon, delta)
    elif solver == "gda" and not np.isinf(epsilon) and delta <= 0:
        raise ValueError(
            "solver='gda' needs delta > 0 (its releases are Gaussian); use "
            "solver='vertex_sampling' for pure differential privacy.")
    if solver == "gda":
        return plan_minimax_gda(
            n_samples=n_samples, n_features=n_features, n_groups=n_groups,
            epsilon=epsilon, delta=delta, counts_public=proportions is not None,
            clip_norm=clip_norm, loss_bound=loss_bound, radius=radius,
            intercept_value=feature_bound if fit_intercept else 0.0,
            max_iter=max_iter)
    return plan_minimax_vertex(
        n_samples=n_samples, n_features=n_features, epsilon=epsilon,
        delta=delta, proportions=proportions,
        count_budget_share=count_budget_share, radius=radius,
        feature_bound=feature_bound, max_iter=max_iter, n_vertices=n_vertices,
        calibrate=fit_intercept)


# -- what both solvers release around the fit (docs/privacy/dpminimax.md#fit-check)


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


# -- gradient descent-ascent --------------------------------------------------


@dataclass(frozen=True)
class GDAStage:
    """Everything :func:`skdpopt.solvers.gda.noisy_gda` reads: the plan's
    noise and schedule, and what the released counts and row norm set.

    Attributes
    ----------
    proportions, group_sizes : ndarray of shape (n_groups,)
        Released (or public) proportions p and group sizes.
    kappa : float
        Cap on ``q_g / p_g``.
    step_size, group_step_size : float
        The model's and the adversary's steps.
    n_steps : int
    clip_norm : float
        C, the bound on the norm of the coefficients' part of each row's
        gradient (``inf``: no clipping); the intercept's part is at most
        b and never clipped.
    weight_decay : float
        lambda: at each step the model descends ``sum_g q_g F_g(w) +
        lambda r / 2 ||coef||^2``, r the step's largest ``q_g / p_g``,
        which scales that step's noise (the intercept is not decayed).
    noise_multiplier, loss_bound, loss_noise_multiplier, radius
        As in :class:`MinimaxGDAPlan`, but with ``kappa = 1`` the model's
        multiplier is that of the plan's two releases of a step together
        and the adversary's ``inf`` (it releases nothing).
    noise_floor : float
        The model's noise floor at unit weight (:func:`noise_floor`) at
        the stage's noise multiplier.
    """

    proportions: np.ndarray
    group_sizes: np.ndarray
    kappa: float
    step_size: float
    group_step_size: float
    n_steps: int
    clip_norm: float
    weight_decay: float
    noise_multiplier: float
    loss_bound: float
    loss_noise_multiplier: float
    radius: float
    noise_floor: float = 0.0


@dataclass(frozen=True)
class MinimaxGDAPlan(PrivacyPlan):
    """Everything the gradient descent-ascent fit releases, planned.

    Attributes
    ----------
    epsilon, delta : float
        The request.
    event : event
        The whole fit: the counts (one Gaussian release, if any), the row
        norm's draws (if any), then ``Repeated`` model and adversary
        releases, T each.
    n_samples, n_features, n_groups : int
        Public sizes (``n_features`` counts the intercept's coordinate).
    counts_released : bool
        Whether the first stage releases noisy counts.
    count_noise_scale : float
        Standard deviation of the noise on each group count (0: none).
    row_norm_draws : QuantileDraws or None
        The private upper quantile of the rows' norms ``||x_i||``
        (``clip_norm="auto"``); None when ``clip_norm`` is public.
    clip_norm : float or None
        The public C; None with ``row_norm_draws``.
    n_steps : int
        T.
    noise_multiplier : float
        s: the model's noise std is ``2 sqrt(C^2 + b^2) s``.
    loss_noise_multiplier : float
        s_L: each group's loss-sum noise std is ``l_max s_L``.
    loss_bound, radius : float
        l_max and R.
    intercept_value : float
        b, the intercept's constant feature (0: no intercept).
    model_mu : float
        Gaussian-DP mu of the model's T releases together (``inf``: no
        privacy); sets kappa (:func:`gda_kappa`).
    """

    n_samples: int
    n_features: int
    n_groups: int
    counts_released: bool
    count_noise_scale: float
    row_norm_draws: QuantileDraws
    clip_norm: float
    n_steps: int
    noise_multiplier: float
    loss_noise_multiplier: float
    loss_bound: float
    radius: float
    intercept_value: float
    model_mu: float
    checks: MinimaxChecksPlan = None
    solver = "gda"
    count_noise = "gaussian"

    @property
    def private(self):
        return not np.isinf(self.model_mu)

    def stage(self, group_sizes, row_norm=None):
        """The second stage's settings from released (or public) group
        sizes and the row norm S (released; ignored when ``clip_norm`` is
        public, which is then S).

        The model's step is ``MODEL_STEP / L`` with ``L = (S^2 + b^2) /
        4``, the smoothness of the logistic loss on rows ``(x, b)`` with
        ``||x|| = S``; with privacy the coefficients' part of the gradient
        is clipped at ``C = CLIP_FACTOR S``.  The adversary's step sets its
        temperature: after T steps the noise of its log-weights is about
        ``GROUP_TEMPERATURE`` on the smallest group (the noise of that
        group's mean loss is ``l_max s_L / n_min`` per step), never above
        the step without privacy.
        """
        scale = float(self.clip_norm if self.clip_norm is not None else row_norm)
        proportions = group_sizes / group_sizes.sum()
        root = math.sqrt(self.n_steps)
        group_step = NON_PRIVATE_GROUP_STEP / (self.loss_bound * root)
        if self.private and self.loss_noise_multiplier > 0:
            smallest = max(float(np.min(group_sizes)), 1.0)
            group_step = min(group_step, GROUP_TEMPERATURE * smallest / (
                self.loss_bound * self.loss_noise_multiplier * root))
        clip = CLIP_FACTOR * scale if self.private else np.inf
        kappa = gda_kappa(self, proportions, clip)
        model_noise, loss_noise = self.noise_multiplier, self.loss_noise_multiplier
        if self.private and kappa <= 1.0:
            # kappa = 1 pins q at p: the adversary's releases could move
            # nothing, so the model takes its share of every step.  One
            # step's two releases are one Gaussian mechanism of multiplier
            # (1 / s^2 + 1 / s_L^2)^(-1/2) however they split it (their
            # mu^2 add up), so the plan's event stays exact.
            model_noise = (model_noise * loss_noise
                           / math.hypot(model_noise, loss_noise)
                           if model_noise and loss_noise else 0.0)
            loss_noise, group_step = np.inf, 0.0
        floor = noise_floor(self, clip)
        if self.noise_multiplier:  # the floor scales with the model's noise
            floor *= model_noise / self.noise_multiplier
        return GDAStage(
            proportions=proportions, group_sizes=group_sizes, kappa=kappa,
            step_size=MODEL_STEP * 4.0 / (scale**2 + self.intercept_value**2),
            group_step_size=group_step,
            n_steps=self.n_steps, clip_norm=clip,
            weight_decay=WEIGHT_DECAY * floor, noise_multiplier=model_noise,
            loss_bound=self.loss_bound if self.private else np.inf,
            loss_noise_multiplier=loss_noise, radius=self.radius,
            noise_floor=floor)


def gda_noise(rho, shares, n_steps):
    """Noise multipliers (counts, model, adversary) for a zCDP budget
    ``rho`` split by ``shares``: each player's share over its T releases."""
    count_share, model_share, loss_share = shares
    count = gaussian_noise_multiplier(rho * count_share) if count_share else 0.0
    model = gaussian_noise_multiplier(rho * model_share / n_steps)
    loss = gaussian_noise_multiplier(rho * loss_share / n_steps)
    return count, model, loss


def gda_event(rho, shares, n_steps, row_norm_draws=None):
    """The event tree of a fit whose Gaussian releases cost ``rho`` (zCDP),
    after the row norm's draws (if any): the counts, the two players'
    steps, then the class totals and the fit check."""
    count, model, loss = gda_noise(rho, shares, n_steps)
    checks = plan_minimax_checks(rho, pure=False, calibrate=False)
    return compose(
        GaussianMechanism(count) if count else compose(),
        row_norm_draws.event if row_norm_draws is not None else compose(),
        repeat(GaussianMechanism(model), n_steps),
        repeat(GaussianMechanism(loss), n_steps),
        checks.event,
    )


def plan_minimax_gda(*, n_samples, n_features, n_groups, epsilon, delta,
                     counts_public, clip_norm, loss_bound, radius,
                     intercept_value=1.0, max_iter=None):
    """Plan a gradient descent-ascent fit from public quantities only.

    Parameters
    ----------
    n_samples : int
        Number of rows (public).
    n_features : int
        Coordinates of the model, the intercept's included.
    n_groups : int
        Number of groups (public: declared, or read with a warning).
    epsilon, delta : float
        Budget of the whole fit; ``epsilon=inf`` plans no noise.  ``delta``
        must be positive when epsilon is finite (every release but the row
        norm's is Gaussian).
    counts_public : bool
        Group proportions are public (priors, or one group): no counts.
    clip_norm : float or "auto"
        C; "auto" releases an upper quantile of the rows' norms first, on
        ``ROW_NORM_SHARE`` of the budget.
    loss_bound, radius : float
        l_max, R.
    intercept_value : float, default=1.0
        b, the intercept's constant feature (0: no intercept).
    max_iter : int, default=None
        T; ``None``: :func:`private_steps` or ``NON_PRIVATE_STEPS``.

    Returns
    -------
    MinimaxGDAPlan
    """
    private = not np.isinf(epsilon)
    n_steps = max_iter or (private_steps(n_features) if private
                           else NON_PRIVATE_STEPS)
    auto = isinstance(clip_norm, str)
    public_clip = None if auto else float(clip_norm)
    counts_released = private and not counts_public and n_groups > 1
    count_share = COUNT_SHARE if counts_released else 0.0
    # The class totals and the fit check (after the run) take their shares.
    rest = 1.0 - count_share - checks_share(calibrate=False)
    model_share = rest * MODEL_SHARE
    shares = (count_share, model_share, rest - model_share)
    if not private:
        # Nothing to bound: no clipping, so that the fit solves the exact
        # problem; the row norm (exact) still sets the model's step.
        draws = (auto_draws(0.0, n_samples=n_samples, n_bounds=1,
                            epsilon=epsilon, quantile=ROW_NORM_QUANTILE)
                 if auto else None)
        return MinimaxGDAPlan(
            epsilon, delta, EpsilonDeltaEvent(np.inf, 0.0), n_samples,
            n_features, n_groups, False, 0.0, draws, public_clip, n_steps,
            0.0, 0.0, loss_bound, radius, intercept_value, np.inf,
            plan_minimax_checks(np.inf, pure=False, calibrate=False))
    if delta <= 0:
        raise ValueError(
            "solver='gda' needs delta > 0 (its releases are Gaussian); use "
            "solver='vertex_sampling' for pure differential privacy.")
    total = rho_for(epsilon, delta)
    draws = None
    if auto:
        draws = auto_draws(ROW_NORM_SHARE * total, n_samples=n_samples,
                           n_bounds=1, epsilon=epsilon,
                           quantile=ROW_NORM_QUANTILE)
    # The Gaussian releases together are one Gaussian mechanism (their
    # mu^2 add up), so the split among them never changes the total; the
    # row norm's draws are composed with them in the accountant.
    rho = calibrate(lambda r: gda_event(r, shares, n_steps, draws), epsilon,
                    delta, RhoBracket(total * (1.0 - ROW_NORM_SHARE * auto)),
                    rtol=0.005).value
    count, model, loss = gda_noise(rho, shares, n_steps)
    # The count vector moves by sqrt(2) in l2 (one row between two groups).
    count_std = math.sqrt(2.0) * count
    return MinimaxGDAPlan(
        epsilon, delta, gda_event(rho, shares, n_steps, draws), n_samples,
        n_features, n_groups, counts_released, count_std, draws, public_clip,
        n_steps, model, loss, loss_bound, radius, intercept_value,
        math.sqrt(n_steps) / model,
        plan_minimax_checks(rho, pure=False, calibrate=False))


def private_steps(n_features):
    """The default T with privacy: ``STEPS_PER_FEATURE`` per coordinate of
    the model, within ``[MIN_PRIVATE_STEPS, MAX_PRIVATE_STEPS]``.

    The model's step ``4 / S^2`` times the loss's curvature along one of d
    coordinates (about ``sigma' S^2 / d`` for rows of norm S spread over
    them) is about ``1 / d``: the iterates forget their start in about d
    steps.  With privacy the budget is split over the T steps, so each
    step's noise grows as ``sqrt(T)``: the iterates' excursions around the
    saddle point (which the adversary's losses are evaluated at) grow with
    T, while the noise of their average does not.  So the run lasts a fixed
    number of those times, not more.  Public: d only.
    """
    return int(min(MAX_PRIVATE_STEPS,
                   max(MIN_PRIVATE_STEPS, STEPS_PER_FEATURE * n_features)))


def noise_floor(plan, clip_norm):
    """The norm of the noise on the model's gradient at unit weight,
    averaged over the run: ``2 C_w sqrt(d) / (n mu_model)`` with ``C_w =
    sqrt(C^2 + b^2)`` (each step adds ``2 C_w s`` per coordinate to a sum
    over n rows; T steps average it down by ``sqrt(T)``, and ``s / sqrt(T)
    = 1 / mu_model``).  Public: C is public or released.  0 without
    privacy."""
    if not plan.private:
        return 0.0
    return 2.0 * math.hypot(clip_norm, plan.intercept_value) * math.sqrt(
        plan.n_features) / (plan.n_samples * plan.model_mu)


def gda_noise_ratio(stage):
    """The stage's noise floor at unit weight over ``USEFUL_NOISE_FLOOR``:
    above 1 the fit is likely little better than the intercept-only model
    (public and released quantities only)."""
    return stage.noise_floor / USEFUL_NOISE_FLOOR


def gda_kappa(plan, proportions, clip_norm):
    """The adversary's cap: ``clip(KAPPA_NOISE / floor, 1, 1 / p_min)``.

    kappa multiplies the weight one row can carry, and so the noise on the
    model's gradient: its noise floor (:func:`noise_floor`) at unit weight
    is ``floor``, at the cap ``kappa floor``.  The rule lets the adversary
    weigh a group up only as far as that stays below ``KAPPA_NOISE``:
    kappa is 1 (DP ERM) when the budget is small against the dimension,
    and ``1 / p_min`` (the exact minimax) as epsilon grows and without
    privacy.  Public inputs only (the proportions are public or released).
    """
    full = 1.0 / float(np.min(proportions))
    floor = noise_floor(plan, clip_norm)
    if floor == 0.0:
        return full
    return float(min(full, max(1.0, KAPPA_NOISE / floor)))


# -- vertex sampling ----------------------------------------------------------


@dataclass(frozen=True)
class VertexStage:
    """Everything :func:`skdpopt.solvers.saddle_point.vertex_sampling` reads.

    Attributes
    ----------
    proportions : ndarray of shape (n_groups,)
        Released (or public) proportions p.
    n_steps : int
        T.
    n_draws : int
        K, vertices drawn per player per step.
    batches_per_pass : int
        T with privacy (every row in one batch); without, batches are cut
        from successive random partitions into this many.
    radius, feature_bound : float
        R and b.
    loss_center : float
        c, the middle of the loss range ``[log(1 + e^(-R b)), log(1 +
        e^(R b))]``, subtracted from every group's loss.
    score : float
        Score sensitivity of each draw.
    regret_step : float
        The model's capped regret-optimal step size.
    score_change : float
        ``2 R b / B`` (B the smallest batch): the change of the model's
        scores per unit step and unit row weight when one row is replaced.
    y_step : float
        The adversary's step size.
    n_releases : int
        Vertex draws of both players, ``2 K T``.
    """

    proportions: np.ndarray
    n_steps: int
    n_draws: int
    batches_per_pass: int
    radius: float
    feature_bound: float
    loss_center: float
    score: float
    regret_step: float
    score_change: float
    y_step: float
    n_releases: int

    def x_step(self, y_drawn):
        """The model's step from the adversary's draws of that step
        (released values): the largest at which the model's scores move by
        at most ``score`` given the largest row weight ``ybar_g / p_g`` the
        draws give, capped at the regret-optimal step."""
        y_bar = np.bincount(y_drawn, minlength=len(self.proportions)) / len(y_drawn)
        return min(self.regret_step, self.score / (
            self.score_change * np.max(y_bar / self.proportions)))


@dataclass(frozen=True)
class MinimaxVertexPlan(PrivacyPlan):
    """What a vertex-sampling fit releases.

    With released counts, a two-stage plan: the counts (Laplace, pure
    ``count_epsilon``), then vertex draws whose number and score
    sensitivity are chosen from the noisy counts (:meth:`stage`) and
    calibrated to spend at most ``draws_epsilon`` at the fit's delta.  The
    second stage is not known when the plan is made, so its event is the
    bound ``EpsilonDeltaEvent(draws_epsilon, delta)`` (sequential
    composition).  With public proportions, one stage (``public_stage``):
    its ``n_releases`` exponential mechanisms of score sensitivity
    ``score``, exactly.

    Attributes
    ----------
    n_samples, n_features : int
        ``n_features`` counts the intercept's coordinate.
    counts_released : bool
    count_epsilon : float
        Pure epsilon of the count vector (0: no counts released).
    count_noise_scale : float
        Laplace scale of each count, ``2 / count_epsilon`` (one row moves
        between two counts); 0 without.
    draws_epsilon : float
        The budget of the draws.
    radius, feature_bound : float
    max_iter, n_vertices : int or None
        The hyperparameters (T and K), None for the defaults.
    public_stage : VertexStage or None
        The stage, when the proportions are public.
    """

    n_samples: int
    n_features: int
    counts_released: bool
    count_epsilon: float
    count_noise_scale: float
    draws_epsilon: float
    radius: float
    feature_bound: float
    max_iter: int = None
    n_vertices: int = None
    public_stage: VertexStage = None
    checks: MinimaxChecksPlan = None
    solver = "vertex_sampling"
    count_noise = "laplace"

    def stage(self, group_sizes, row_norm=None):
        """The draws' settings from released (or public) group sizes (the
        row norm is unused)."""
        if self.public_stage is not None:
            return self.public_stage
        return vertex_stage(self, group_sizes / group_sizes.sum())


def plan_minimax_vertex(*, n_samples, n_features, epsilon, delta, proportions,
                        count_budget_share, radius, feature_bound, max_iter=None,
                        n_vertices=None, calibrate=True):
    """Plan a vertex-sampling fit from public quantities only.

    Parameters
    ----------
    n_samples, n_features : int
        ``n_features`` counts the intercept's coordinate.
    epsilon, delta : float
    proportions : ndarray or None
        Public group proportions; None: counted (privately with a finite
        epsilon, spending ``count_budget_share`` of it).
    count_budget_share, radius, feature_bound, max_iter, n_vertices
        The estimator's hyperparameters of the same names.
    calibrate : bool, default=True
        Calibrate the intercept after the draws (with an intercept).

    Returns
    -------
    MinimaxVertexPlan
    """
    private = not np.isinf(epsilon)
    if private and max_iter is not None and max_iter > n_samples:
        raise ValueError(
            f"max_iter={max_iter} must be at most n_samples={n_samples}: with "
            "privacy each step uses a fresh batch of rows.")
    common = {"epsilon": epsilon, "delta": delta, "n_samples": n_samples,
              "n_features": n_features, "radius": radius,
              "feature_bound": feature_bound, "max_iter": max_iter,
              "n_vertices": n_vertices}
    # The class totals, the intercept's calibration and the fit check:
    # pure releases on their share of epsilon, after the draws.
    checks = plan_minimax_checks(epsilon, pure=True, calibrate=calibrate)
    check_epsilon = checks_share(calibrate) * epsilon if private else 0.0
    if private and proportions is None:
        count_epsilon = count_budget_share * epsilon
        draws_epsilon = epsilon - count_epsilon - check_epsilon
        event = compose(PureDPMechanism(count_epsilon),
                        EpsilonDeltaEvent(draws_epsilon, delta), checks.event)
        return MinimaxVertexPlan(
            event=event, counts_released=True, count_epsilon=count_epsilon,
            count_noise_scale=2.0 / count_epsilon, draws_epsilon=draws_epsilon,
            checks=checks, **common)
    draws_epsilon = epsilon - check_epsilon
    plan = MinimaxVertexPlan(
        event=EpsilonDeltaEvent(np.inf, 0.0), counts_released=False,
        count_epsilon=0.0, count_noise_scale=0.0, draws_epsilon=draws_epsilon,
        checks=checks, **common)
    if proportions is None:  # no privacy: the stage follows the true counts
        return plan
    stage = vertex_stage(plan, proportions)
    event = (compose(repeat(ExponentialMechanism(stage.score), stage.n_releases),
                     checks.event)
             if private else plan.event)
    return MinimaxVertexPlan(event=event, counts_released=False,
                             count_epsilon=0.0, count_noise_scale=0.0,
                             draws_epsilon=draws_epsilon, public_stage=stage,
                             checks=checks, **common)


def vertex_stage(plan, proportions):
    """T, K, the draws' score sensitivity and the step sizes, from the
    plan and public (or released) proportions.

    Replace-one changes one batch's gradients (``docs/privacy/dpminimax.md``):
    per coordinate, by at most ``2 R b max_g(ybar_g / p_g) / B`` for the
    model (ybar: that step's group draws); the adversary's scores move
    within a range of ``(l_max - l_min) / (B p_min)``.  Every draw of either
    player is an ``ExponentialMechanism(s)``: the model's scores move by at
    most s, the adversary's within a range of 2 s.  Both step sizes are the
    largest that keep those moves within s, capped at ``STEP_CAP_FACTOR``
    times the worst-case regret-optimal steps.
    """
    n_samples, private = plan.n_samples, not np.isinf(plan.epsilon)
    R, b = plan.radius, plan.feature_bound
    n_x_vertices = 2 * plan.n_features  # the l1 ball's +-R e_j
    n_groups = len(proportions)
    n_steps, n_draws = default_schedule(
        n_samples, plan.draws_epsilon, plan.delta, n_x_vertices, proportions, R, b)
    if plan.max_iter is not None:
        n_steps = plan.max_iter
        n_draws = draws_per_step(n_samples, n_steps, private)
    if plan.n_vertices is not None:
        n_draws = plan.n_vertices
    # The step sizes are those of a run of one pass.
    per_pass = batches_per_pass(n_samples, n_steps, private)
    batch_size = n_samples // per_pass  # the smallest batch
    # |<x, z>| <= R b on the ball, so the loss lies in [low, high].
    low, high = np.logaddexp(0.0, -R * b), np.logaddexp(0.0, R * b)
    score_change = 2.0 * R * b / batch_size
    y_range = (high - low) / (batch_size * proportions.min())
    draws = 2 * n_draws * n_steps
    regret_x = STEP_CAP_FACTOR * math.sqrt(
        2.0 * math.log(n_x_vertices) / per_pass) / (R * b)
    regret_y = STEP_CAP_FACTOR * math.sqrt(
        2.0 * max(math.log(n_groups), 1.0) / per_pass) / (0.5 * (high - low))
    cap = max(regret_x * (score_change / proportions.min()),
              regret_y * y_range / 2.0)
    score = cap
    if private and plan.counts_released:  # the draws' share is a bound
        score = vertex_score(plan.draws_epsilon, plan.delta, draws, cap)
    elif private:  # planned at once: the draws take what the checks leave
        checks = plan.checks
        score = vertex_score(plan.epsilon, plan.delta, draws, cap,
                             extra=None if checks is None else checks.event)
    return VertexStage(
        proportions=proportions, n_steps=n_steps, n_draws=n_draws,
        batches_per_pass=per_pass, radius=R, feature_bound=b,
        loss_center=0.5 * (low + high), score=score, regret_step=regret_x,
        score_change=score_change, y_step=min(regret_y, 2.0 * score / y_range),
        n_releases=draws)


def default_schedule(n_samples, epsilon, delta, n_x_vertices, proportions, radius,
                     feature_bound):
    """Default T and K.

    With privacy every row is used once: T disjoint batches of ``n / T``
    rows, ``K = sqrt(T)`` draws per player per step.  More steps shrink
    each batch, so the private step (score sensitivity over the change of
    the scores) falls as ``T^(-7/4)``, while the capped, regret-optimal step
    falls only as ``T^(-1/2)``.  T is the largest number of steps at which
    the private model step, for an adversary whose draws all fall on the
    smallest group, is still ``STEP_RATIO`` times the cap, at most
    ``sqrt(n)`` (:func:`vertex_steps`): it grows with ``n * p_min`` and
    epsilon.  Without privacy nothing limits the schedule:
    ``NON_PRIVATE_PASSES`` passes over the data in batches of about
    ``sqrt(n)`` rows, and K the square root of the number of batches per
    pass.
    """
    private = not np.isinf(epsilon)
    if private:
        n_steps = vertex_steps(
            n_samples, epsilon, delta, n_x_vertices, proportions, radius,
            feature_bound,
        )
    else:
        root = batches_per_pass(n_samples, n_samples, private=False)
        n_steps = NON_PRIVATE_PASSES * root
    return n_steps, draws_per_step(n_samples, n_steps, private)


def vertex_steps(n_samples, epsilon, delta, n_x_vertices, proportions, radius,
                 feature_bound):
    """The largest T in ``[1, sqrt(n)]`` whose private model step is at
    least ``STEP_RATIO`` times the capped step, for an adversary whose
    draws all fall on the smallest group (the worst case).

    Batches are never smaller than the ``sqrt(n)`` rows of the non-private
    schedule, so that a large epsilon gives the non-private step sizes.

    Public inputs only (the proportions are public priors or released
    noisy counts).  The private score sensitivity is the zCDP estimate for
    ``2 K T`` draws sharing ``epsilon``; the model's scores change by at
    most ``2 R b T / (n p_min)`` per unit step (``docs/privacy/dpminimax.md``).
    """
    weight = 1.0 / np.min(proportions)  # the largest ybar_g / p_g

    def private_enough(n_steps):
        draws = 2 * draws_per_step(n_samples, n_steps, True) * n_steps
        if delta <= 0:
            score = epsilon / (2.0 * draws)
        else:
            score = exponential_score_sensitivity(rho_for(epsilon, delta) / draws)
        change = 2.0 * radius * feature_bound * n_steps / n_samples * weight
        cap = STEP_CAP_FACTOR * math.sqrt(
            2.0 * math.log(n_x_vertices) / n_steps
        ) / (radius * feature_bound)
        return score / change >= STEP_RATIO * cap

    low, high = 1, batches_per_pass(n_samples, n_samples, private=False)
    if private_enough(high):
        return high
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if private_enough(middle) else (low, middle)
    return low


def batches_per_pass(n_samples, n_steps, private):
    """T with privacy (one pass); without, ``min(T, sqrt(n))``."""
    if private:
        return n_steps
    return int(min(n_steps, max(1, round(math.sqrt(n_samples)))))


def draws_per_step(n_samples, n_steps, private):
    """K: the square root of the number of batches per pass."""
    return max(1, round(math.sqrt(batches_per_pass(n_samples, n_steps, private))))


def vertex_score(budget, delta, n_draws, cap, extra=None):
    """The largest score sensitivity, at most ``cap``, whose ``n_draws``
    exponential mechanisms (after ``extra``, the other releases of the
    fit, if any) spend at most ``budget`` at ``delta``."""
    def event(score):
        return compose(extra, repeat(ExponentialMechanism(score), n_draws))

    if privacy_spent(event(cap), delta).epsilon <= budget:
        return cap  # the budget allows the non-private step
    if delta <= 0:
        guess = budget / (2.0 * n_draws)
    else:
        guess = exponential_score_sensitivity(rho_for(budget, delta) / n_draws)
    return calibrate(event, budget, delta, ScaleBracket(guess)).value
