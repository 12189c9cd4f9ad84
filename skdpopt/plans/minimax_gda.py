"""Privacy plan of DPMinimaxClassifier's gradient descent-ascent.

The first stage is a Gaussian mechanism on the vector of counts (unless
the proportions are public), the second ``T`` steps of the model's
Gaussian mechanism and ``T`` of the adversary's
(:mod:`skdpopt.solvers.gda`): :meth:`MinimaxGDAPlan.stage`.  What the
second stage takes from the counts (the cap kappa, the group sizes, the
step sizes) changes how the data are used but never a release's
sensitivity over its noise, so the two stages compose adaptively with
exact accounting: the plan's event is the whole run's.  The derivations
are in ``docs/privacy/dpminimax.md``; how the constants below were chosen
is in ``docs/design/minimax.md#gradient-descent-ascent``.
"""

import math
from dataclasses import dataclass

import numpy as np

from ..accounting import (
    EpsilonDeltaEvent,
    GaussianMechanism,
    RhoBracket,
    calibrate,
    compose,
    repeat,
)
from ..accounting.zcdp import gaussian_noise_multiplier, rho_for
from .base import PrivacyPlan
from .bounds import AUTO_BOUNDS_SHARE, auto_draws
from .minimax_checks import MinimaxChecksPlan, checks_share, plan_minimax_checks
from .preprocessing import QuantileDraws

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
