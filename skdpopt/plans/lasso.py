"""The plan of a DPLasso fit: budget shares, calibrated noise, events."""

from dataclasses import dataclass, replace

import numpy as np

from ..accounting import (
    EpsilonDeltaEvent,
    ExponentialMechanism,
    GaussianMechanism,
    LaplaceMechanism,
    PureDPMechanism,
    RhoBracket,
    calibrate,
    compose,
    repeat,
)
from ..accounting.zcdp import (
    draw_score_sensitivity,
    exponential_score_sensitivity,
    gaussian_noise_multiplier,
    pure_epsilon_for,
    rho_for,
)
from .base import PrivacyPlan
from .bounds import AUTO_BOUNDS_SHARE, QuantileDraws, auto_draws, is_auto

# Shares of each step's privacy budget (in zCDP units, rho) given to the
# selection, the coordinate gradient and, with curvature="private", the
# coordinate curvature and, with residual_bound="auto", the residual scale.
# Chosen by measurement (docs/benchmarks/dplasso.md).
SELECTION_SHARE = 0.5
CURVATURE_SHARE = 0.05
RESIDUAL_SHARE = 0.05
# A coordinate at zero becomes non-zero only if its noisy gradient clears
# the penalty by this many noise scales: a coordinate drawn by the selection
# noise would otherwise enter the model whenever its noise exceeds alpha.
ACTIVATION_MARGIN = 2.0


@dataclass(frozen=True)
class GreedyCDPlan(PrivacyPlan):
    """What a DP-GCD fit releases: per step, an optional residual scale, a
    private selection, a noisy coordinate gradient and an optional noisy
    curvature.

    The curvature is released on feature steps only (the intercept's is
    public), but which steps those are depends on the data: the event counts
    it on every step, the most there can be.

    Attributes
    ----------
    n_steps : int
        Steps T.
    selection : {"exponential", "laplace"}
    gradient_noise : {"gaussian", "laplace"}
    selection_epsilon : float
        Pure epsilon of one selection (``inf`` without privacy).
    gradient_noise_multiplier : float
        Gradient noise over its sensitivity (0 without privacy).
    curvature_noise_multiplier : float or None
        None steps by the public smoothness bound.
    residual_noise_multiplier : float or None
        None keeps the residual bound fixed.
    activation_margin : float
        Noise scales by which a noisy gradient must clear ``alpha`` for a
        coordinate to leave zero (post-processing).
    bounds_draws : QuantileDraws or None
        The private draws of the "auto" bounds (``target_bound`` first,
        then ``feature_bound``), released before the first step; None
        when both bounds are public.
    bounds_share : float
        Share of the fit's budget (zCDP units) spent on ``bounds_draws``.
    """

    n_steps: int
    selection: str
    gradient_noise: str
    selection_epsilon: float
    gradient_noise_multiplier: float
    curvature_noise_multiplier: float = None
    residual_noise_multiplier: float = None
    activation_margin: float = ACTIVATION_MARGIN
    bounds_draws: QuantileDraws = None
    bounds_share: float = 0.0


@dataclass(frozen=True)
class LassoFrankWolfePlan(PrivacyPlan):
    """What a private Frank-Wolfe fit of the Lasso releases: ``n_steps``
    exponential-mechanism draws of a vertex of the l1 ball.

    Attributes
    ----------
    n_steps : int
    residual_bound : float
        Residual clip C (public).
    score_scale : float
        Inverse temperature of each draw (``inf`` without privacy).
    score_sensitivity : float
        ``score_scale`` times the replace-one sensitivity ``2 R B C / n``
        of every vertex's linear score.
    bounds_draws : QuantileDraws or None
        The "auto" bounds' draws (``target_bound`` first); then
        ``residual_bound`` and ``score_scale`` are None until
        :meth:`with_bounds` sets them from the released bounds.
    bounds_share : float
        Share of the budget (zCDP units) spent on ``bounds_draws``.
    n_samples : int
    radius : float
    public_residual_bound : float or None
        The ``residual_bound`` hyperparameter; None for "auto" (the target
        bound).
    """

    n_steps: int
    residual_bound: float
    score_scale: float
    score_sensitivity: float
    bounds_draws: QuantileDraws = None
    bounds_share: float = 0.0
    n_samples: int = None
    radius: float = None
    public_residual_bound: float = None

    def with_bounds(self, *, feature_bound, target_bound):
        """The plan with the residual clip and the draws' scale that the
        public or released bounds give (:func:`frank_wolfe_scale`:
        post-processing; the event is unchanged)."""
        residual_bound, score_scale = frank_wolfe_scale(
            n_samples=self.n_samples, radius=self.radius,
            feature_bound=feature_bound, target_bound=target_bound,
            residual_bound=(target_bound if self.public_residual_bound is None
                            else self.public_residual_bound),
            score_sensitivity=self.score_sensitivity)
        return replace(self, residual_bound=residual_bound, score_scale=score_scale)


def greedy_cd_step_parameters(rho, *, selection, curvature, adaptive_residual):
    """Per-step privacy parameters of DP-GCD with per-step budget ``rho``.

    Every mechanism gets its share of ``rho`` as a zCDP cost: the
    exponential mechanism with score sensitivity D costs ``D^2 / 2``
    (bounded range), a Gaussian with noise multiplier s ``1 / (2 s^2)``,
    and a pure epsilon0-DP mechanism (report-noisy-max, Laplace)
    ``epsilon0^2 / 2``.  The accountant then computes the run's actual
    (epsilon, delta) with its tightest bound.

    Returns
    -------
    dict
        ``selection_epsilon``, ``gradient_noise_multiplier``,
        ``curvature_noise_multiplier`` (None unless curvature="private") and
        ``residual_noise_multiplier`` (None unless ``adaptive_residual``).
    """
    curvature_share = CURVATURE_SHARE if curvature == "private" else 0.0
    residual_share = RESIDUAL_SHARE if adaptive_residual else 0.0
    selection_rho = SELECTION_SHARE * rho
    gradient_rho = (1.0 - SELECTION_SHARE - curvature_share - residual_share) * rho
    # The exponential mechanism's pure epsilon is twice its score
    # sensitivity.  A Laplace release of scale s sensitivities is (1/s)-DP
    # and costs 1/(2 s^2), as a Gaussian of multiplier s does.
    if selection == "exponential":
        selection_epsilon = 2.0 * exponential_score_sensitivity(selection_rho)
    else:
        selection_epsilon = pure_epsilon_for(selection_rho)
    return {
        "selection_epsilon": selection_epsilon,
        "gradient_noise_multiplier": gaussian_noise_multiplier(gradient_rho),
        "curvature_noise_multiplier": (
            gaussian_noise_multiplier(curvature_share * rho) if curvature_share
            else None),
        "residual_noise_multiplier": (
            gaussian_noise_multiplier(residual_share * rho) if residual_share
            else None),
    }


def greedy_cd_step_event(*, selection, gradient_noise, selection_epsilon,
                         gradient_noise_multiplier, curvature_noise_multiplier,
                         residual_noise_multiplier):
    """The releases of one DP-GCD step, in the order they run."""
    if selection == "exponential":
        chooser = ExponentialMechanism(0.5 * selection_epsilon)
    else:
        chooser = PureDPMechanism(selection_epsilon)
    release = (GaussianMechanism(gradient_noise_multiplier)
               if gradient_noise == "gaussian"
               else LaplaceMechanism(1.0 / gradient_noise_multiplier))
    optional = [None if m is None else GaussianMechanism(m)
                for m in (residual_noise_multiplier, curvature_noise_multiplier)]
    return compose(optional[0], chooser, release, optional[1])


def plan_greedy_cd(*, n_samples, n_features, epsilon, delta, max_iter, selection,
                   gradient_noise, curvature, adaptive_residual, n_auto_bounds=0):
    """Plan a DP-GCD fit from public quantities.

    Parameters
    ----------
    n_samples, n_features : int
        Shape of the data (public; the sensitivities scale with 1/n in the
        solver, the plan's parameters are in units of them).
    epsilon, delta : float
        The fit's budget; ``epsilon=inf`` plans a run without noise.
    max_iter : int
        Steps T.
    selection, gradient_noise, curvature : str
        The estimator's hyperparameters of the same names.
    adaptive_residual : bool
        Whether each step releases the residual scale (residual_bound="auto").
    n_auto_bounds : int, default=0
        Private bounds released before the first step (``target_bound``
        and ``feature_bound`` set to "auto"): they share
        ``AUTO_BOUNDS_SHARE`` of the budget, the steps the rest.

    Returns
    -------
    GreedyCDPlan
    """
    share = AUTO_BOUNDS_SHARE if n_auto_bounds else 0.0
    options = {"selection": selection, "curvature": curvature,
               "adaptive_residual": adaptive_residual}
    if epsilon == np.inf:
        # Without noise there is nothing to gain from clipping residuals
        # tighter than the public bound.
        return GreedyCDPlan(
            epsilon=epsilon, delta=delta, event=EpsilonDeltaEvent(np.inf, 0.0),
            n_steps=max_iter, selection=selection, gradient_noise=gradient_noise,
            selection_epsilon=np.inf, gradient_noise_multiplier=0.0,
            curvature_noise_multiplier=0.0 if curvature == "private" else None,
            bounds_draws=auto_draws(0.0, n_samples=n_samples,
                                    n_bounds=n_auto_bounds, epsilon=epsilon))
    gaussian = (gradient_noise == "gaussian" or curvature == "private"
                or adaptive_residual)
    if delta == 0 and gaussian:
        raise ValueError(
            "delta must be > 0: Gaussian noise gives no pure (delta=0) "
            "guarantee; use gradient_noise='laplace', curvature='bound' "
            "and a numeric residual_bound for pure differential privacy."
        )

    def bounds_draws(rho):
        return auto_draws(share * rho, n_samples=n_samples,
                          n_bounds=n_auto_bounds, epsilon=epsilon)

    def run_event(rho):
        # rho is the whole fit's: the bounds' share first, the steps the rest.
        step = greedy_cd_step_event(
            gradient_noise=gradient_noise, selection=selection,
            **greedy_cd_step_parameters((1.0 - share) * rho / max_iter, **options))
        draws = bounds_draws(rho)
        return compose(None if draws is None else draws.event,
                       repeat(step, max_iter))

    # Pure DP composes epsilons (each step's two releases cost about
    # 2 sqrt(rho)); zCDP composes rhos.
    guess = ((epsilon / 2.0) ** 2 / max_iter if delta == 0
             else rho_for(epsilon, delta))
    rho = calibrate(run_event, epsilon, delta, RhoBracket(guess)).value
    return GreedyCDPlan(
        epsilon=epsilon, delta=delta, event=run_event(rho), n_steps=max_iter,
        selection=selection, gradient_noise=gradient_noise,
        bounds_draws=bounds_draws(rho), bounds_share=share,
        **greedy_cd_step_parameters((1.0 - share) * rho / max_iter, **options))


def frank_wolfe_scale(*, n_samples, radius, feature_bound, target_bound,
                      residual_bound, score_sensitivity):
    """Residual clip and inverse temperature of private Frank-Wolfe's draws.

    ``|x . w + b| <= B ||(w, b/B)||_1 <= B R`` on the ball, so no residual
    exceeds ``B R + target_bound``: the clip is the public residual bound
    or that, whichever is tighter.  ``<v, grad>`` then moves by at most
    ``R * 2 B C / n`` between neighbours, and the draws' scale is the
    planned score sensitivity over that.  Post-processing of public (or
    released) bounds.

    Returns
    -------
    residual_bound, score_scale : float
    """
    residual_bound = min(residual_bound, feature_bound * radius + target_bound)
    linear_sensitivity = radius * 2.0 * feature_bound * residual_bound / n_samples
    return residual_bound, score_sensitivity / linear_sensitivity


def plan_lasso_frank_wolfe(*, n_samples, n_features, epsilon, delta, max_iter,
                           radius, feature_bound, target_bound, residual_bound):
    """Plan a private Frank-Wolfe fit of the Lasso from public quantities.

    Parameters
    ----------
    n_samples, n_features : int
    epsilon, delta : float
    max_iter : int
        Steps T, one draw each.
    radius : float
    feature_bound, target_bound : float or "auto"
        "auto" bounds are released first (``AUTO_BOUNDS_SHARE`` of the
        budget); the plan's ``residual_bound`` and ``score_scale`` are then
        None and follow from the released bounds (:func:`frank_wolfe_scale`).
    residual_bound : float or "auto"
        The public residual bound ("auto": the target bound, the residuals'
        bound at w = 0); clipped further at ``B R + target_bound``.

    Returns
    -------
    LassoFrankWolfePlan
    """
    n_auto = int(is_auto(target_bound)) + int(is_auto(feature_bound))
    share = AUTO_BOUNDS_SHARE if n_auto else 0.0
    public = {"n_samples": n_samples, "radius": radius,
              "public_residual_bound": (None if is_auto(residual_bound)
                                        else residual_bound)}

    def bounds_draws(rho):
        return auto_draws(share * rho, n_samples=n_samples, n_bounds=n_auto,
                          epsilon=epsilon)

    def scale(sensitivity):
        if n_auto:
            return None, None
        return frank_wolfe_scale(
            n_samples=n_samples, radius=radius, feature_bound=feature_bound,
            target_bound=target_bound, score_sensitivity=sensitivity,
            residual_bound=(target_bound if is_auto(residual_bound)
                            else residual_bound))

    if epsilon == np.inf:
        residual, score_scale = scale(np.inf)
        return LassoFrankWolfePlan(
            epsilon=epsilon, delta=delta, event=EpsilonDeltaEvent(np.inf, 0.0),
            n_steps=max_iter, residual_bound=residual, score_scale=score_scale,
            score_sensitivity=np.inf, bounds_draws=bounds_draws(0.0),
            bounds_share=share, **public)

    def make_event(rho):
        # The whole fit's rho: the bounds' share, then T bounded-range draws.
        draws = bounds_draws(rho)
        per_draw = exponential_score_sensitivity((1.0 - share) * rho / max_iter)
        return compose(None if draws is None else draws.event,
                       repeat(ExponentialMechanism(per_draw), max_iter))

    guess = max_iter * draw_score_sensitivity(epsilon, delta, max_iter) ** 2 / 2.0
    rho = calibrate(make_event, epsilon, delta, RhoBracket(guess)).value
    sensitivity = exponential_score_sensitivity((1.0 - share) * rho / max_iter)
    residual, score_scale = scale(sensitivity)
    return LassoFrankWolfePlan(
        epsilon=epsilon, delta=delta, event=make_event(rho), n_steps=max_iter,
        residual_bound=residual, score_scale=score_scale,
        score_sensitivity=sensitivity, bounds_draws=bounds_draws(rho),
        bounds_share=share, **public)


def plan_lasso(*, n_samples, n_features, epsilon, delta, solver, max_iter,
               selection, gradient_noise, curvature, residual_bound,
               feature_bound, target_bound, radius):
    """Plan a DPLasso fit from public quantities (never X or y).

    Parameters
    ----------
    n_samples, n_features : int
    epsilon, delta : float
    solver, max_iter, selection, gradient_noise, curvature, residual_bound,
    feature_bound, target_bound, radius
        The estimator's hyperparameters of the same names.

    Returns
    -------
    GreedyCDPlan or LassoFrankWolfePlan
    """
    if solver == "greedy_cd":
        return plan_greedy_cd(
            n_samples=n_samples, n_features=n_features, epsilon=epsilon,
            delta=delta, max_iter=max_iter, selection=selection,
            gradient_noise=gradient_noise, curvature=curvature,
            adaptive_residual=residual_bound == "auto",
            n_auto_bounds=int(is_auto(target_bound)) + int(is_auto(feature_bound)))
    return plan_lasso_frank_wolfe(
        n_samples=n_samples, n_features=n_features, epsilon=epsilon, delta=delta,
        max_iter=max_iter, radius=radius, feature_bound=feature_bound,
        target_bound=target_bound, residual_bound=residual_bound)
