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
from .checks import REGRESSION_CHECK_SHARE, RegressionCheckPlan, plan_regression_check
from .clipping import CLIP_CHECK_SHARE, ClipCheck, clip_check
from .targets import TargetDraws, centring_share, target_draws, target_units

# Shares of each step's privacy budget (in zCDP units, rho) given to the
# coordinate curvature (curvature="private") and the residual scale
# (residual_bound="auto"); the selection and the coordinate gradient share
# the rest in the ratio selection_ratio(n_features) (chosen by measurement,
# docs/benchmarks/dplasso.md and benchmarks/design_regression.py).
CURVATURE_SHARE = 0.05
RESIDUAL_SHARE = 0.05
# The selection's share over the gradient's for SELECTION_COLUMNS
# candidates, growing as log(candidates)^(2/3) (selection_ratio).
SELECTION_RATIO = 0.5
SELECTION_COLUMNS = 20
# "auto" target bound: rank of the bound among the |y_i - location|, and
# the most of the budget the releases before the steps may take when the
# rows are too few for AUTO_BOUNDS_SHARE to find the target's scale.
TARGET_QUANTILE = 0.99
MAX_BOUNDS_SHARE = 0.25
# alpha="auto": this fraction of feature_bound * target_bound, the largest
# coordinate gradient of the clipped problem at w = 0.
ALPHA_RATIO = 0.001
# The fit warns when a coordinate gradient's noise (public) exceeds this
# fraction of the largest gradient, B C (chosen on the panel's design
# half, benchmarks/design_regression.py).
WEAK_SIGNAL_RATIO = 0.1
# feature_bound="public": a column without a declared bound (a
# standardised numeric one) is clipped at PUBLIC_BOUND_LOW where n * epsilon
# / p is at most PUBLIC_RATIO_LOW, at PUBLIC_BOUND_HIGH from
# PUBLIC_RATIO_HIGH, log-linearly in between (chosen on the panel's design
# half and benchmarks/design_lasso_dev.py): a wider clip keeps more of a
# standardised column's signal and costs noise in proportion, which pays
# only where the noise is small.
PUBLIC_BOUND_LOW = 1.0
PUBLIC_BOUND_HIGH = 2.0
PUBLIC_RATIO_LOW = 100.0
PUBLIC_RATIO_HIGH = 1000.0
# A coordinate at zero becomes non-zero only if its noisy gradient clears
# the penalty by this many noise scales: a coordinate drawn by the selection
# noise would otherwise enter the model whenever its noise exceeds alpha.
ACTIVATION_MARGIN = 2.0
# Declared one-hot blocks of fewer columns than this step a column at a
# time: a two-level block is one column and the intercept, and moving both
# of its columns pays two noises for one column's information (chosen on
# benchmarks/design_lasso_dev.py, against 2 and 5).
MIN_BLOCK_COLUMNS = 3


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
    target_draws : TargetDraws or None
        The releases of the "auto" target bound (a private location and an
        upper quantile of ``|y_i - location|``), released first; None for
        a public ``target_bound``.
    bounds_draws : QuantileDraws or None
        The private draws of an "auto" ``feature_bound``, released next;
        None for a public one.
    clip_check : ClipCheck or None
        The noisy count of rows far beyond a public ``feature_bound``,
        released next; None for an "auto" one.
    bounds_share : float
        Share of the fit's budget (zCDP units) spent on the releases before
        the steps.
    fit_check : RegressionCheckPlan or None
        The regression fit check, released last on
        ``REGRESSION_CHECK_SHARE`` of the budget.
    """

    n_steps: int
    selection: str
    gradient_noise: str
    selection_epsilon: float
    gradient_noise_multiplier: float
    curvature_noise_multiplier: float = None
    residual_noise_multiplier: float = None
    activation_margin: float = ACTIVATION_MARGIN
    target_draws: TargetDraws = None
    bounds_draws: QuantileDraws = None
    clip_check: ClipCheck = None
    bounds_share: float = 0.0
    fit_check: RegressionCheckPlan = None


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
    target_draws, bounds_draws, clip_check
        As in :class:`GreedyCDPlan`.  With "auto" bounds,
        ``residual_bound`` and ``score_scale`` are None until
        :meth:`with_bounds` sets them from the released bounds.
    bounds_share : float
        Share of the budget (zCDP units) spent on the releases before the
        steps.
    n_samples : int
    radius : float
    public_residual_bound : float or None
        The ``residual_bound`` hyperparameter; None for "auto" (the target
        bound).
    fit_check : RegressionCheckPlan or None
        As in :class:`GreedyCDPlan`.
    """

    n_steps: int
    residual_bound: float
    score_scale: float
    score_sensitivity: float
    target_draws: TargetDraws = None
    bounds_draws: QuantileDraws = None
    clip_check: ClipCheck = None
    bounds_share: float = 0.0
    n_samples: int = None
    radius: float = None
    public_residual_bound: float = None
    fit_check: RegressionCheckPlan = None

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


def step_blocks(declared):
    """The blocks greedy CD steps on, from the declared ones: blocks of at
    least :data:`MIN_BLOCK_COLUMNS` columns, every other column its own.
    Public (the transformers' declarations only).

    Parameters
    ----------
    declared : ndarray of shape (n_features,)
        Contiguous block numbers (:func:`skdpopt._declared.declared_blocks`).

    Returns
    -------
    ndarray of shape (n_features,) or None
        Renumbered from 0; None when every block is a single column.
    """
    declared = np.asarray(declared)
    if declared.size == 0:
        return None
    small = np.bincount(declared)[declared] < MIN_BLOCK_COLUMNS
    starts = np.r_[True, (np.diff(declared) != 0) | small[1:]]
    if starts.all():
        return None
    return (np.cumsum(starts) - 1).astype(np.intp)


def public_feature_bound(n_samples, n_features, epsilon):
    """The bound ``feature_bound="public"`` gives the columns whose bound no
    transformer declares: ``PUBLIC_BOUND_LOW`` up to a public noise ratio
    ``n_samples * epsilon / n_features`` of ``PUBLIC_RATIO_LOW``,
    ``PUBLIC_BOUND_HIGH`` from ``PUBLIC_RATIO_HIGH`` (and without
    privacy), log-linear in between.  Public quantities only.

    Parameters
    ----------
    n_samples, n_features : int
    epsilon : float
        The fit's own budget.

    Returns
    -------
    float
    """
    if epsilon == np.inf:
        return PUBLIC_BOUND_HIGH
    ratio = n_samples * epsilon / max(n_features, 1)
    if PUBLIC_RATIO_HIGH <= PUBLIC_RATIO_LOW:  # a step
        return PUBLIC_BOUND_HIGH if ratio >= PUBLIC_RATIO_HIGH else PUBLIC_BOUND_LOW
    position = np.log(max(ratio, 1e-300) / PUBLIC_RATIO_LOW) / np.log(
        PUBLIC_RATIO_HIGH / PUBLIC_RATIO_LOW)
    position = float(np.clip(position, 0.0, 1.0))
    return PUBLIC_BOUND_LOW + position * (PUBLIC_BOUND_HIGH - PUBLIC_BOUND_LOW)


def resolve_feature_bound(feature_bound, *, n_samples, n_features, epsilon,
                          solver, declared=None):
    """The feature bound a DPLasso fit uses, from public quantities.

    Parameters
    ----------
    feature_bound : "auto", "public", float or array-like of shape (n_features,)
        The estimator's parameter.
    n_samples, n_features : int
    epsilon : float
    solver : {"greedy_cd", "frank_wolfe"}
    declared : ndarray of shape (n_features,) or None, default=None
        Bounds declared by the transformers before the model (NaN where
        none is), for ``"public"``; ignored if its length is not
        ``n_features``.

    Returns
    -------
    "auto", float or ndarray of shape (n_features,)
        ``"public"`` gives an array (declared bounds, and
        :func:`public_feature_bound` elsewhere), or for Frank-Wolfe, which
        takes one bound, its largest entry (a bound of every column).

    Raises
    ------
    ValueError
        For an array of the wrong shape, with entries not positive and
        finite, or with ``solver="frank_wolfe"``.
    """
    if isinstance(feature_bound, str):
        if feature_bound == "auto":
            return feature_bound
        rule = public_feature_bound(n_samples, n_features, epsilon)
        bounds = np.full(n_features, rule)
        if declared is not None and np.shape(declared) == (n_features,):
            bounds = np.where(np.isnan(declared), rule, declared)
        return float(bounds.max()) if solver == "frank_wolfe" else bounds
    if np.ndim(feature_bound) == 0:
        return float(feature_bound)
    bounds = np.array(feature_bound, dtype=float)
    if bounds.shape != (n_features,) or not np.all(np.isfinite(bounds) & (bounds > 0)):
        raise ValueError(
            "feature_bound as an array must have one positive, finite bound per "
            f"feature, shape ({n_features},); got shape {bounds.shape}.")
    if solver == "frank_wolfe":
        raise ValueError(
            "solver='frank_wolfe' takes one feature bound for every column: "
            "pass a float, 'auto' or 'public' as feature_bound, or use "
            "solver='greedy_cd' for per-column bounds.")
    return bounds


def selection_ratio(n_features):
    """The selection's share of a DP-GCD step over the gradient's.

    The exponential mechanism misses the best coordinate by about
    ``log(p) / epsilon_sel`` score units, ``epsilon_sel`` growing as the
    root of its share s; the released gradient's error falls as the root
    of its share g.  The sum ``a log(p) / sqrt(s) + b / sqrt(g)`` at a
    fixed ``s + g`` is smallest where ``s / g`` grows as
    ``log(p)^(2/3)``: here ``SELECTION_RATIO`` at ``SELECTION_COLUMNS``
    candidates (a few standardised and one-hot columns: 0.3 of the step
    with the curvature and residual releases) and about 1 at 4,000 (0.45).
    Public: the number of candidates, ``n_features + 1``.
    """
    grow = np.log(n_features + 1.0) / np.log(SELECTION_COLUMNS + 1.0)
    return SELECTION_RATIO * grow ** (2.0 / 3.0)


def selection_share(n_features):
    """The selection's share of a DP-GCD step: it and the gradient split
    what the optional curvature and residual releases leave in the ratio
    :func:`selection_ratio` (a share those leave unused goes to the
    gradient)."""
    ratio = selection_ratio(n_features)
    return (1.0 - CURVATURE_SHARE - RESIDUAL_SHARE) * ratio / (1.0 + ratio)


def greedy_cd_step_parameters(rho, *, n_features, selection, curvature,
                              adaptive_residual):
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
    selection_rho = selection_share(n_features) * rho
    # A share not used (public curvature, fixed residual bound) goes to
    # the gradient.
    gradient_rho = rho - selection_rho - (curvature_share + residual_share) * rho
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



def bounds_budget(*, n_samples, epsilon, delta, target_bound, feature_bound,
                  centre_target=True):
    """Shares of the fit's budget (zCDP units) of the releases before the
    steps: the "auto" bounds' (``AUTO_BOUNDS_SHARE``, or more, up to
    ``MAX_BOUNDS_SHARE``, where the rows are too few for it to centre the
    target, :func:`~skdpopt.plans.targets.centring_share`), and the clip
    check's (``CLIP_CHECK_SHARE``, with a public ``feature_bound``).
    Public quantities only.

    Returns
    -------
    bounds_share, check_share : float
    """
    n_releases = (target_units(centre_target) * is_auto(target_bound)
                  + 2 * is_auto(feature_bound))
    if not n_releases or epsilon == np.inf:
        bounds_share = AUTO_BOUNDS_SHARE if n_releases else 0.0
    else:
        guess = (rho_for(epsilon, delta) if delta > 0
                 else (epsilon / 2.0) ** 2)  # pure DP: about (eps/2)^2
        bounds_share = centring_share(n_samples, guess, n_releases=n_releases,
                                      low=AUTO_BOUNDS_SHARE, high=MAX_BOUNDS_SHARE)
    check_share = 0.0 if is_auto(feature_bound) else CLIP_CHECK_SHARE
    return bounds_share, check_share


def preliminary_releases(rho, *, n_samples, epsilon, delta, target_bound,
                         feature_bound, bounds_share, check_share,
                         centre_target=True):
    """The releases before the steps, for a fit whose budget is ``rho``:
    the "auto" target's (:func:`~skdpopt.plans.targets.target_draws`), the
    "auto" feature bound's draws and the clip check of a public feature
    bound.  The bounds' releases cost ``bounds_share * rho`` together,
    each the same; the check ``check_share * rho``.

    Returns
    -------
    target_draws : TargetDraws or None
    bounds_draws : QuantileDraws or None
    clip_check : ClipCheck or None
    event : event or None
        Their composition, in that order.
    """
    pure = delta == 0
    n_releases = (target_units(centre_target) * is_auto(target_bound)
                  + 2 * is_auto(feature_bound))
    each = bounds_share * rho / max(n_releases, 1)
    targets = (target_draws(target_units(centre_target) * each,
                            n_samples=n_samples, epsilon=epsilon,
                            scale_quantile=TARGET_QUANTILE, pure=pure,
                            centre=centre_target)
               if is_auto(target_bound) else None)
    draws = auto_draws(2 * each, n_samples=n_samples,
                       n_bounds=int(is_auto(feature_bound)), epsilon=epsilon)
    check = (clip_check(check_share * rho, epsilon=epsilon, pure=pure)
             if check_share else None)
    parts = [part.event for part in (targets, draws, check) if part is not None]
    return targets, draws, check, (compose(*parts) if parts else None)


def fit_check_share(target_bound, centre_target):
    """The regression fit check's share of the budget: it compares the
    model with the targets' released location, so it is planned only for
    an "auto" target bound with a location (``REGRESSION_CHECK_SHARE``),
    else 0.  Released only where the location is (``target_draws.centre``,
    which the rows and the budget decide): otherwise its share is spent
    unused, and the fit warns that its target is not centred."""
    return REGRESSION_CHECK_SHARE if is_auto(target_bound) and centre_target else 0.0


def fit_check_plan(rho, share, pure=False):
    """The regression fit check's release on ``share`` of the fit's
    ``rho`` (None for a share of 0; rho 0: no privacy, no noise), Gaussian
    or (``pure``) Laplace (:func:`~skdpopt.plans.checks.plan_regression_check`
    splits it over its releases): a Laplace release of scale s
    sensitivities is (1/s)-DP and costs ``1 / (2 s^2)`` in zCDP, as a
    Gaussian of multiplier s does."""
    if not share:
        return None
    multiplier = gaussian_noise_multiplier(share * rho) if rho else 0.0
    return plan_regression_check(multiplier, pure=pure)


def plan_greedy_cd(*, n_samples, n_features, epsilon, delta, max_iter, selection,
                   gradient_noise, curvature, adaptive_residual,
                   target_bound=1.0, feature_bound=1.0, centre_target=True):
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
    target_bound, feature_bound : float or "auto", default=1.0
        "auto" bounds are released before the first step
        (:func:`preliminary_releases`, :func:`bounds_budget`), and so is
        the clip check of a public ``feature_bound``; the steps get the
        rest of the budget.
    centre_target : bool, default=True
        Whether an "auto" target bound comes with a private location.

    Returns
    -------
    GreedyCDPlan
    """
    bounds = {"n_samples": n_samples, "epsilon": epsilon, "delta": delta,
              "target_bound": target_bound, "feature_bound": feature_bound,
              "centre_target": centre_target}
    bounds_share, check_share = bounds_budget(**bounds)
    # The steps get what the releases before them and the fit check leave.
    fit_share = fit_check_share(target_bound, centre_target)
    share = bounds_share + check_share + fit_share
    options = {"n_features": n_features, "selection": selection,
               "curvature": curvature, "adaptive_residual": adaptive_residual}
    if epsilon == np.inf:
        # Without noise there is nothing to gain from clipping residuals
        # tighter than the public bound.
        targets, draws, check, _ = preliminary_releases(
            0.0, bounds_share=bounds_share, check_share=check_share, **bounds)
        return GreedyCDPlan(
            epsilon=epsilon, delta=delta, event=EpsilonDeltaEvent(np.inf, 0.0),
            n_steps=max_iter, selection=selection, gradient_noise=gradient_noise,
            selection_epsilon=np.inf, gradient_noise_multiplier=0.0,
            curvature_noise_multiplier=0.0 if curvature == "private" else None,
            target_draws=targets, bounds_draws=draws, clip_check=check,
            bounds_share=share - fit_share, fit_check=fit_check_plan(0.0, fit_share))
    gaussian = (gradient_noise == "gaussian" or curvature == "private"
                or adaptive_residual)
    if delta == 0 and gaussian:
        raise ValueError(
            "delta must be > 0: Gaussian noise gives no pure (delta=0) "
            "guarantee; use gradient_noise='laplace', curvature='bound' "
            "and a numeric residual_bound for pure differential privacy."
        )

    def run_event(rho):
        # rho is the whole fit's: the releases before the steps first, the
        # steps the rest.
        step = greedy_cd_step_event(
            gradient_noise=gradient_noise, selection=selection,
            **greedy_cd_step_parameters((1.0 - share) * rho / max_iter, **options))
        first = preliminary_releases(rho, bounds_share=bounds_share,
                                     check_share=check_share, **bounds)[3]
        check = fit_check_plan(rho, fit_share, delta == 0)
        return compose(first, repeat(step, max_iter),
                       None if check is None else check.event)

    # Pure DP composes epsilons (each step's two releases cost about
    # 2 sqrt(rho)); zCDP composes rhos.
    guess = ((epsilon / 2.0) ** 2 / max_iter if delta == 0
             else rho_for(epsilon, delta))
    rho = calibrate(run_event, epsilon, delta, RhoBracket(guess)).value
    targets, draws, check, _ = preliminary_releases(
        rho, bounds_share=bounds_share, check_share=check_share, **bounds)
    return GreedyCDPlan(
        epsilon=epsilon, delta=delta, event=run_event(rho), n_steps=max_iter,
        selection=selection, gradient_noise=gradient_noise,
        target_draws=targets, bounds_draws=draws, clip_check=check,
        bounds_share=share - fit_share,
        fit_check=fit_check_plan(rho, fit_share, delta == 0),
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
                           radius, feature_bound, target_bound, residual_bound,
                           centre_target=True):
    """Plan a private Frank-Wolfe fit of the Lasso from public quantities.

    Parameters
    ----------
    n_samples, n_features : int
    epsilon, delta : float
    max_iter : int
        Steps T, one draw each.
    radius : float
    feature_bound, target_bound : float or "auto"
        "auto" bounds are released first (:func:`preliminary_releases`);
        the plan's ``residual_bound`` and ``score_scale`` are then None and
        follow from the released bounds (:func:`frank_wolfe_scale`).  A
        public ``feature_bound`` is checked against the rows first.
    residual_bound : float or "auto"
        The public residual bound ("auto": the target bound, the residuals'
        bound at w = 0); clipped further at ``B R + target_bound``.

    Returns
    -------
    LassoFrankWolfePlan
    """
    bounds = {"n_samples": n_samples, "epsilon": epsilon, "delta": delta,
              "target_bound": target_bound, "feature_bound": feature_bound,
              "centre_target": centre_target}
    bounds_share, check_share = bounds_budget(**bounds)
    # The draws get what the releases before them and the fit check leave.
    fit_share = fit_check_share(target_bound, centre_target)
    share = bounds_share + check_share + fit_share
    auto = is_auto(target_bound) or is_auto(feature_bound)
    public = {"n_samples": n_samples, "radius": radius,
              "public_residual_bound": (None if is_auto(residual_bound)
                                        else residual_bound)}

    def first(rho):
        return preliminary_releases(rho, bounds_share=bounds_share,
                                    check_share=check_share, **bounds)

    def scale(sensitivity):
        if auto:
            return None, None
        return frank_wolfe_scale(
            n_samples=n_samples, radius=radius, feature_bound=feature_bound,
            target_bound=target_bound, score_sensitivity=sensitivity,
            residual_bound=(target_bound if is_auto(residual_bound)
                            else residual_bound))

    if epsilon == np.inf:
        residual, score_scale = scale(np.inf)
        targets, draws, check, _ = first(0.0)
        return LassoFrankWolfePlan(
            epsilon=epsilon, delta=delta, event=EpsilonDeltaEvent(np.inf, 0.0),
            n_steps=max_iter, residual_bound=residual, score_scale=score_scale,
            score_sensitivity=np.inf, target_draws=targets, bounds_draws=draws,
            clip_check=check, bounds_share=share - fit_share,
            fit_check=fit_check_plan(0.0, fit_share), **public)

    def make_event(rho):
        # The whole fit's rho: the releases before the steps, then T
        # bounded-range draws.
        per_draw = exponential_score_sensitivity((1.0 - share) * rho / max_iter)
        check = fit_check_plan(rho, fit_share, delta == 0)
        return compose(first(rho)[3], repeat(ExponentialMechanism(per_draw), max_iter),
                       None if check is None else check.event)

    guess = max_iter * draw_score_sensitivity(epsilon, delta, max_iter) ** 2 / 2.0
    rho = calibrate(make_event, epsilon, delta, RhoBracket(guess)).value
    sensitivity = exponential_score_sensitivity((1.0 - share) * rho / max_iter)
    residual, score_scale = scale(sensitivity)
    targets, draws, check, _ = first(rho)
    return LassoFrankWolfePlan(
        epsilon=epsilon, delta=delta, event=make_event(rho), n_steps=max_iter,
        residual_bound=residual, score_scale=score_scale,
        score_sensitivity=sensitivity, target_draws=targets, bounds_draws=draws,
        clip_check=check, bounds_share=share - fit_share,
        fit_check=fit_check_plan(rho, fit_share, delta == 0), **public)


def plan_lasso(*, n_samples, n_features, epsilon, delta, solver, max_iter,
               selection, gradient_noise, curvature, residual_bound,
               feature_bound, target_bound, radius, centre_target=True):
    """Plan a DPLasso fit from public quantities (never X or y).

    Parameters
    ----------
    n_samples, n_features : int
    epsilon, delta : float
    solver, max_iter, selection, gradient_noise, curvature, residual_bound,
    feature_bound, target_bound, radius
        The estimator's hyperparameters of the same names.
    centre_target : bool, default=True
        Whether an "auto" target bound comes with a private location (False
        for a model without intercept).

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
            target_bound=target_bound, feature_bound=feature_bound,
            centre_target=centre_target)
    return plan_lasso_frank_wolfe(
        n_samples=n_samples, n_features=n_features, epsilon=epsilon, delta=delta,
        max_iter=max_iter, radius=radius, feature_bound=feature_bound,
        target_bound=target_bound, residual_bound=residual_bound,
        centre_target=centre_target)
