"""The plan of a DPLogisticSimplex fit: schedule, step size, noise, events."""

import math
from dataclasses import dataclass

import numpy as np

from ..accounting import (
    EpsilonDeltaEvent,
    ExponentialMechanism,
    GaussianMechanism,
    LaplaceMechanism,
    ScaleBracket,
    calibrate,
    compose,
    repeat,
)
from ..accounting.zcdp import (
    draw_score_sensitivity,
    gaussian_noise_multiplier,
    pure_epsilon_for,
    rho_for,
)
from .base import PrivacyPlan
from .checks import (
    CLIP_CHECK_SHARE,
    FIT_CHECK_SHARE,
    ClipCheckPlan,
    FitCheckPlan,
    plan_clip_check,
    plan_fit_check,
)
from .classes import COUNT_SHARE, ClassTotalsPlan, plan_class_totals
from .sgd import plan_dpsgd

# The per-feature signal |E[dloss * x_j]| / (2 b) that the default schedule
# is designed to detect (see mirror_descent_schedule).
DESIGN_SIGNAL = 0.02
# Share of mirror descent's nominal budget (zCDP rho, or pure epsilon when
# delta = 0) spent on the noisy statistics that fit the intercept and the
# scale of the released direction; the vertex draws get the rest
# (chosen on design data separate from the benchmark's:
# docs/benchmarks/dplogisticsimplex.md).
REFIT_SHARE = 0.12
# Newton steps of that fit, and where they start: this fraction of the
# largest scale the l1 ball leaves the direction (0 would ignore it).
REFIT_STEPS = 3
REFIT_START = 0.5
# solver="auto": mirror descent where sqrt(d) exceeds this many times
# n epsilon, DP-SGD over the polytope below (chosen on generated sparse
# families and the panel's design half).
AUTO_SQRT_D_PER_ROW = 0.05
# DP-SGD over the polytope: epochs, the default feature bound (standardized
# columns keep two standard deviations), and each example's gradient clipped
# to this many feature bounds (a norm of 1 at the default bound).  Against a
# bound of 1 with a clip of one bound, the median fraction of the
# non-private gain on the panel's design half (10 seeds) goes from 0.53,
# 0.80, 0.88 to 0.54, 0.84, 0.93 at epsilon 0.3, 1, 3; a bound of 3 does
# the same, a clip norm of 2 adds more noise than signal on the weak
# tables (benchmarks/design_simplex_sgd.py).
SGD_EPOCHS = 5
SGD_FEATURE_BOUND = 2.0
SGD_CLIP = 0.5
# Its step size, constant (DPSGDClassifier's base step, AUTO_ETA0).
SGD_STEP = 0.5


@dataclass(frozen=True)
class MirrorDescentPlan(PrivacyPlan):
    """What a mirror-descent fit releases: the class totals (with an
    intercept), then for each binary problem the data-dependent vertex
    draws and a noisy gradient and Hessian per Newton step of the scale and
    intercept fit.

    Attributes
    ----------
    n_problems : int
        Binary problems (one-vs-rest), composed.
    n_steps : int
        Steps T, each on a fresh disjoint batch.
    refresh_every : int
        q.
    n_vertices : int
        K, vertices drawn at each refresh and for the output.
    batch_size : int
        The smallest batch, ``n // T``: it bounds the sensitivity.
    step_size : float
        tau.
    score_sensitivity : float
        Replace-one sensitivity ``2 tau R b / batch_size`` of each draw's
        log weights.
    n_draws : int
        Data-dependent draws, all problems.
    n_statistics : int
        Noisy statistics, all problems.
    noise_multiplier : float
        Their noise over their sensitivity (0 without privacy).
    noise : {"gaussian", "laplace"}
        Laplace (L1 sensitivities) when delta = 0.
    class_totals : ClassTotalsPlan or None
        The release of the class totals, with the statistics' noise
        multiplier (:mod:`skdpopt.plans.classes`).
    fit_check : FitCheckPlan or None
        The release of the fit check, last, with the same multiplier.
    clip_check : ClipCheckPlan or None
        The release of the clip check, first, with the same multiplier.
    refit_gradient_noise, refit_hessian_noise : float
        Noise on each coordinate of a Newton step's mean gradient and on
        each entry of its mean Hessian (:func:`refit_sensitivities`).
    refit_steps : int
        Newton steps of the scale and intercept fit.
    refit_start : float
        Where they start, as a fraction of the largest scale.
    """

    n_problems: int
    n_steps: int
    refresh_every: int
    n_vertices: int
    batch_size: int
    step_size: float
    score_sensitivity: float
    n_draws: int
    n_statistics: int
    noise_multiplier: float
    noise: str
    class_totals: ClassTotalsPlan = None
    fit_check: FitCheckPlan = None
    clip_check: ClipCheckPlan = None
    refit_gradient_noise: float = 0.0
    refit_hessian_noise: float = 0.0
    refit_steps: int = REFIT_STEPS
    refit_start: float = REFIT_START

    def refresh_steps(self):
        """The steps (1-based) at which Algorithm 5 draws vertices."""
        return refresh_steps(self.n_steps, self.refresh_every)


@dataclass(frozen=True)
class SimplexFrankWolfePlan(PrivacyPlan):
    """What a private Frank-Wolfe fit releases: one exponential-mechanism
    vertex draw per step and problem.

    Attributes
    ----------
    n_problems : int
    n_steps : int
    step_size : float
        Inverse temperature of the draws (``inf`` without privacy).
    score_sensitivity : float
        ``step_size * 2 R b / n``: replace-one sensitivity of the scores.
    n_draws : int
        ``n_steps * n_problems``.
    class_totals : ClassTotalsPlan or None
        The release of the class totals.
    fit_check : FitCheckPlan or None
        The release of the fit check, last.
    clip_check : ClipCheckPlan or None
        The release of the clip check, first.
    """

    n_problems: int
    n_steps: int
    step_size: float
    score_sensitivity: float
    n_draws: int
    class_totals: ClassTotalsPlan = None
    fit_check: FitCheckPlan = None
    clip_check: ClipCheckPlan = None


def refresh_steps(n_steps, refresh_every):
    """Steps (1-based) at which Algorithm 5 of González, Guzmán and
    Paquette (2024) draws fresh vertices: every step during the first
    ``q`` steps, then every q-th step."""
    t = np.arange(1, n_steps + 1)
    return t[(t <= refresh_every) | (t % refresh_every == 0)]


def count_vertex_draws(n_steps, n_draws, refresh_every):
    """Data-dependent vertex draws of a run of Algorithm 5.

    K draws at every refresh step except the first (at step 1 the average
    is the uniform starting point, which depends on no data), and K for the
    output.  Never more than the ``T K / q + q K + K`` of González, Guzmán
    and Paquette (2024).
    """
    refreshes = refresh_steps(n_steps, refresh_every)
    return n_draws * (int(np.count_nonzero(refreshes > 1)) + 1)


def hessian_sensitivity_bounds(n_params, bound):
    """Largest change of each released Hessian entry per replaced record, times n.

    The entries are the upper triangle, row by row (``np.triu_indices``):
    ``bound^2 / 4`` on the diagonal (``w z_j^2`` lies in ``[0, bound^2 / 4]``)
    and ``bound^2 / 2`` off it (``w z_j z_k`` lies in
    ``[-bound^2 / 4, bound^2 / 4]``).
    """
    rows, cols = np.triu_indices(n_params)
    return np.where(rows == cols, 0.25, 0.5) * bound**2


def refit_sensitivities(n_samples, n_params, feature_bound, pure):
    """Sensitivities of a Newton step's released mean gradient and mean
    Hessian in the scale and intercept fit (features ``z = b (score, 1)``,
    ``|z_j| <= b``): L1 for pure DP (Laplace noise), L2 otherwise.

    Each gradient coordinate ``(1/n) sum dloss_i z_ij`` moves by at most
    ``2 b / n`` when one record is replaced; each Hessian entry by
    :func:`hessian_sensitivity_bounds` over n.
    """
    b = feature_bound
    bounds = hessian_sensitivity_bounds(n_params, b) / n_samples
    if pure:
        return 2.0 * b * n_params / n_samples, bounds.sum()
    return 2.0 * b * math.sqrt(n_params) / n_samples, np.sqrt(np.sum(bounds**2))


def _planned_delta(delta, n_samples):
    """The delta a schedule is planned for: a pure-DP fit (delta = 0) as
    ``1 / n^2``, with n at least 2 (``log(1 / delta)`` must be positive)."""
    return delta if delta > 0 else 1.0 / max(n_samples, 2) ** 2


def theorem_steps(n_samples, n_vertices, epsilon, delta):
    """T of the proof of Theorem 4.2 of González, Guzmán and Paquette (2024)
    for second-order smooth losses.

    ``T = min(n, n eps / (log m sqrt(log 1/delta)))``, m the number of
    vertices; ``n`` without privacy.  A delta of 0 is planned as 1/n^2.
    """
    if np.isinf(epsilon):
        return n_samples
    log_m = max(math.log(n_vertices), 1.0)
    delta = _planned_delta(delta, n_samples)
    steps = n_samples * epsilon / (log_m * math.sqrt(math.log(1 / delta)))
    return min(n_samples, max(1, math.ceil(steps)))


def mirror_descent_schedule(n_samples, n_vertices, epsilon, delta,
                            signal=DESIGN_SIGNAL, budget_share=1.0 - REFIT_SHARE):
    """Default T, q and K of their Algorithm 5.

    q and K follow the proof of Theorem 4.2 of González, Guzmán and Paquette
    (2024) for second-order smooth losses (the logistic loss is one):
    ``q = sqrt(T / log m)`` and ``K = T / q = sqrt(T log m)``, so that the
    run makes about ``N = T (1 + log m)`` vertex draws.  T is the theorem's
    (:func:`theorem_steps`) unless the privacy budget cannot pay for that
    many draws.  The argument: with N draws sharing a zCDP budget rho, each
    has score sensitivity ``D = sqrt(2 rho / N)``; the calibrated step lets
    a feature whose per-record signal is ``|E[dloss x_j]| = 2 b s`` move its
    log weight by ``n s D`` over the run, and sampling finds it only if that
    exceeds about ``log m``.  Hence ``N <= 2 rho (n s / log m)^2``, with
    ``s = signal``: the theorem's T, whose constants are hidden, makes the
    draws so many at n ~ 1e4 that no feature can stand out
    (``benchmarks/bench_simplex.py`` compares both).

    Parameters
    ----------
    n_samples : int
    n_vertices : int
    epsilon : float
        ``inf`` for no privacy.
    delta : float
        A delta of 0 (pure DP) is planned as ``1 / n^2``.
    signal : float, default=DESIGN_SIGNAL
    budget_share : float, default=1 - REFIT_SHARE
        Share of the zCDP budget rho that pays for the vertex draws.

    Returns
    -------
    n_steps, refresh_every, n_draws : int
    """
    log_m = max(math.log(n_vertices), 1.0)
    n_steps = theorem_steps(n_samples, n_vertices, epsilon, delta)
    if not np.isinf(epsilon):
        delta = _planned_delta(delta, n_samples)
        rho = budget_share * rho_for(epsilon, delta)
        affordable_draws = 2.0 * rho * (n_samples * signal / log_m) ** 2
        n_steps = min(n_steps, max(1, round(affordable_draws / (1.0 + log_m))))
    return schedule_for_steps(n_steps, n_vertices)


def schedule_for_steps(n_steps, n_vertices):
    """T, q and K of the Theorem 4.2 rule for a given T."""
    log_m = max(math.log(n_vertices), 1.0)
    return (n_steps, max(1, round(math.sqrt(n_steps / log_m))),
            max(1, round(math.sqrt(n_steps * log_m))))


def frank_wolfe_steps(n_samples, n_vertices, epsilon, delta, lipschitz,
                      smoothness, max_steps=500):
    """Default number of private Frank-Wolfe steps.

    Balances Frank-Wolfe's curvature error ``~ 4 L1 / T`` against the
    selection error of T exponential mechanisms sharing a zCDP budget
    ``rho ~ eps^2 / (4 log(1/delta))``, ``~ L0 log(m) sqrt(2 T / rho) / n``,
    which gives ``T ~ (n eps L1 / (2 L0 log m sqrt(log 1/delta)))^(2/3)``
    (Talwar, Thakurta and Zhang 2015 have the same exponent).  Without
    privacy, ``max_steps``.
    """
    if np.isinf(epsilon):
        return max_steps
    log_m = max(math.log(n_vertices), 1.0)
    delta = delta if delta > 0 else 1.0 / n_samples**2
    ratio = (n_samples * epsilon * smoothness
             / (2.0 * lipschitz * log_m * math.sqrt(math.log(1 / delta))))
    return int(min(max_steps, max(1, math.ceil(ratio ** (2.0 / 3.0)))))


def regret_step_size(n_steps, n_vertices, lipschitz):
    """``sqrt(2 log m / T) / L0``: the step that minimises the regret bound
    ``log m / tau + tau T L0^2 / 2`` of exponentiated gradient."""
    return math.sqrt(2.0 * max(math.log(n_vertices), 1.0) / n_steps) / lipschitz


def polytope_vertices(n_coordinates, constraint, signed=0):
    """Vertices of the l1 ball (``+-R e_j``) or of the simplex (``R e_j``,
    and ``-R e_j`` for ``signed`` coordinates) over ``n_coordinates``."""
    if constraint == "l1_ball":
        return 2 * n_coordinates
    return n_coordinates + signed


def plan_mirror_descent(*, n_samples, n_features, n_problems, epsilon, delta,
                        constraint, radius, feature_bound, fit_intercept,
                        max_iter=None, n_vertices=None, refresh_every=None,
                        refit_share=REFIT_SHARE, refit_steps=REFIT_STEPS,
                        refit_start=REFIT_START, n_classes=None, class_totals=None,
                        weight_bound=1.0):
    """Plan a mirror-descent fit (Algorithm 5) from public quantities.

    Parameters
    ----------
    n_samples, n_features, n_problems : int
    epsilon, delta : float
    constraint, radius, feature_bound, fit_intercept, max_iter, n_vertices,
    refresh_every
        The estimator's hyperparameters of the same names.
    refit_share, refit_steps, refit_start : float, int, float
        Share of the nominal budget, Newton steps and starting scale of
        the scale and intercept fit.
    n_classes : int or None, default=None
        Number of classes (``n_problems``, or 2 for one problem).
    class_totals : bool or None, default=None
        Release the class totals first (None: yes; they also set the fit
        check's prior).
    weight_bound : float, default=1.0
        Public bound on the rows' sample weights (the totals' sensitivity).

    Returns
    -------
    MirrorDescentPlan
    """
    if n_classes is None:
        n_classes = 2 if n_problems == 1 else n_problems
    if class_totals is None:
        class_totals = True
    # Vertices over the features only: the intercept is fitted afterwards
    # with the scale of the released direction.
    m = polytope_vertices(n_features, constraint)
    n_steps, q, K = mirror_descent_schedule(n_samples, m, epsilon, delta,
                                            budget_share=1.0 - refit_share)
    if max_iter is not None:
        if max_iter > n_samples:
            raise ValueError(
                f"max_iter={max_iter} must be at most n_samples={n_samples}: "
                "each step uses a fresh batch of rows.")
        n_steps = max_iter
        if refresh_every is None or n_vertices is None:
            _, q, K = schedule_for_steps(n_steps, m)
    q = q if refresh_every is None else refresh_every
    K = K if n_vertices is None else n_vertices
    # Fresh disjoint batches; the smallest one bounds the sensitivity.
    batch_size = n_samples // n_steps
    draws = count_vertex_draws(n_steps, K, q)
    # Noisy statistics: the clip check, the class totals (one release for
    # all problems: the intercept's offset, "balanced" weights, the fit
    # check's prior), a gradient and a Hessian per Newton step and problem,
    # and the fit check.
    per_problem = 2 * refit_steps
    statistics = 1 + int(class_totals) + per_problem * n_problems + 1
    lipschitz = radius * feature_bound
    pure = delta == 0

    def sensitivity(step_size):
        # A replaced record changes one batch's gradient coordinates by at
        # most 2 L0 / B, hence every later log weight by 2 tau L0 / B
        # (docs/privacy/dplogisticsimplex.md).
        return 2.0 * step_size * lipschitz / batch_size

    def noise_multiplier(step_size):
        # The statistics get refit_share of the nominal budget, the draws
        # the rest: nominally N D^2 / 2 zCDP (pure DP: 2 D N), against
        # 1 / (2 m^2) per Gaussian statistic with multiplier m (std over L2
        # sensitivity; pure DP: 1 / m per Laplace statistic, scale over L1
        # sensitivity).  The accountant then composes them all.
        if not statistics:
            return np.inf
        score = sensitivity(step_size)
        draws_cost = n_problems * draws * (2.0 * score if pure else 0.5 * score**2)
        per_statistic = draws_cost * refit_share / (1.0 - refit_share) / statistics
        return 1.0 / per_statistic if pure else math.sqrt(0.5 / per_statistic)

    def statistic(multiplier):
        return (LaplaceMechanism(1.0 / multiplier) if pure
                else GaussianMechanism(multiplier))

    def run_event(step_size):
        multiplier = noise_multiplier(step_size)
        # Within a problem the draws come first and the Newton statistics
        # last; the order is immaterial to their composition.
        problem = compose(repeat(ExponentialMechanism(sensitivity(step_size)), draws),
                          repeat(statistic(multiplier), per_problem))
        first = repeat(statistic(multiplier), 1 + int(class_totals))
        return compose(first, repeat(problem, n_problems), statistic(multiplier))

    if epsilon == np.inf:
        step_size = regret_step_size(n_steps, m, lipschitz)
        multiplier, event = 0.0, EpsilonDeltaEvent(np.inf, 0.0)
    else:
        # The draws alone would spend the budget at 1 / (1 - refit_share)
        # times as many draws.
        guess = draw_score_sensitivity(
            epsilon, delta, draws * n_problems / (1.0 - refit_share))
        step_size = calibrate(run_event, epsilon, delta,
                              ScaleBracket(guess / sensitivity(1.0))).value
        multiplier, event = noise_multiplier(step_size), run_event(step_size)
    gradient_sensitivity, hessian_sensitivity = refit_sensitivities(
        n_samples, 1 + int(fit_intercept), feature_bound, pure)
    totals = None
    if class_totals:
        totals = plan_class_totals(n_classes, multiplier, weight_bound, pure)
    return MirrorDescentPlan(
        epsilon=epsilon, delta=delta, event=event, n_problems=n_problems,
        n_steps=n_steps, refresh_every=q, n_vertices=K, batch_size=batch_size,
        step_size=step_size, score_sensitivity=sensitivity(step_size),
        n_draws=draws * n_problems, n_statistics=statistics,
        noise_multiplier=multiplier, noise="laplace" if pure else "gaussian",
        class_totals=totals, fit_check=plan_fit_check(multiplier, pure),
        clip_check=plan_clip_check(multiplier, pure),
        refit_gradient_noise=multiplier * gradient_sensitivity,
        refit_hessian_noise=multiplier * hessian_sensitivity,
        refit_steps=refit_steps, refit_start=refit_start)


def plan_simplex_frank_wolfe(*, n_samples, n_features, n_problems, epsilon, delta,
                             constraint, radius, feature_bound, fit_intercept,
                             max_iter=None, n_classes=None, class_totals=True,
                             weight_bound=1.0):
    """Plan a private Frank-Wolfe fit over the l1 ball or simplex.

    Parameters
    ----------
    n_samples, n_features, n_problems : int
    epsilon, delta : float
    constraint, radius, feature_bound, fit_intercept, max_iter
        The estimator's hyperparameters of the same names.
    n_classes : int or None, default=None
    class_totals : bool, default=True
        Release the class totals first (``class_weight="balanced"``, the
        fit check's prior), on ``COUNT_SHARE`` of the budget; the fit
        check is released last, on ``FIT_CHECK_SHARE``.
    weight_bound : float, default=1.0
        Public bound on the rows' sample weights (the totals' sensitivity).

    Returns
    -------
    SimplexFrankWolfePlan
    """
    if n_classes is None:
        n_classes = 2 if n_problems == 1 else n_problems
    # The intercept is one more coordinate, of either sign.
    m = polytope_vertices(n_features + int(fit_intercept), constraint,
                          signed=int(fit_intercept))
    lipschitz = radius * feature_bound
    n_steps = max_iter or frank_wolfe_steps(n_samples, m, epsilon, delta,
                                            lipschitz, lipschitz**2 / 4.0)
    draws = n_steps * n_problems
    pure = delta == 0

    def sensitivity(step_size):
        # <v, grad F> changes by at most R * 2 b / n for every vertex v.
        return 2.0 * step_size * lipschitz / n_samples

    if epsilon == np.inf:
        totals = (plan_class_totals(n_classes, 0.0, weight_bound) if class_totals
                  else None)
        return SimplexFrankWolfePlan(
            epsilon=epsilon, delta=delta, event=EpsilonDeltaEvent(np.inf, 0.0),
            n_problems=n_problems, n_steps=n_steps, step_size=np.inf,
            score_sensitivity=np.inf, n_draws=draws, class_totals=totals,
            fit_check=plan_fit_check(0.0), clip_check=plan_clip_check(0.0))

    def multiplier_for(share):
        rho = share * rho_for(epsilon, delta)
        return 1.0 / pure_epsilon_for(rho) if pure else gaussian_noise_multiplier(rho)

    totals, share = None, FIT_CHECK_SHARE + CLIP_CHECK_SHARE
    if class_totals:
        share += COUNT_SHARE
        totals = plan_class_totals(n_classes, multiplier_for(COUNT_SHARE),
                                   weight_bound, pure)
    check = plan_fit_check(multiplier_for(FIT_CHECK_SHARE), pure)
    clipped = plan_clip_check(multiplier_for(CLIP_CHECK_SHARE), pure)

    def run_event(step_size):
        draws_event = repeat(ExponentialMechanism(sensitivity(step_size)), draws)
        first = [clipped.event] + ([] if totals is None else [totals.event])
        return compose(*first, draws_event, check.event)

    step_size = calibrate(run_event, epsilon, delta, ScaleBracket(
        draw_score_sensitivity(epsilon, delta, draws / (1.0 - share))
        / sensitivity(1.0))).value
    return SimplexFrankWolfePlan(
        epsilon=epsilon, delta=delta, event=run_event(step_size),
        n_problems=n_problems, n_steps=n_steps, step_size=step_size,
        score_sensitivity=sensitivity(step_size), n_draws=draws,
        class_totals=totals, fit_check=check, clip_check=clipped)


def choose_solver(n_samples, n_features, epsilon, delta):
    """The solver of ``solver="auto"``, from public quantities.

    Mirror descent's error grows with ``log d``, DP-SGD's with ``sqrt(d) /
    (n epsilon)``: "auto" picks mirror descent where ``sqrt(d) >
    AUTO_SQRT_D_PER_ROW n epsilon`` (bags of words, hashed features) and
    for pure differential privacy (``delta=0``, which Gaussian noise cannot
    give); DP-SGD ("sgd") otherwise, and without privacy.

    Returns
    -------
    {"sgd", "mirror_descent"}
    """
    if np.isinf(epsilon):
        return "sgd"
    if delta <= 0:
        return "mirror_descent"
    if math.sqrt(n_features) > AUTO_SQRT_D_PER_ROW * n_samples * epsilon:
        return "mirror_descent"
    return "sgd"


def resolve_solver(solver, n_samples, n_features, epsilon, delta, *, on_dask):
    """The solver a fit runs: ``solver``, or for "auto" :func:`choose_solver`'s
    pick, with Frank-Wolfe for mirror descent on a Dask collection (``on_dask``),
    which it reads in the same l1 geometry."""
    if solver != "auto":
        return solver
    solver = choose_solver(n_samples, n_features, epsilon, delta)
    if solver == "mirror_descent" and on_dask:
        return "frank_wolfe"
    return solver


def fitted_attributes(plan, solver):
    """The fitted attributes that ``plan`` of ``solver`` fixes, by name."""
    if solver == "sgd":
        return {"n_iter_": plan.n_epochs,
                "noise_multiplier_": plan.noise_multiplier}
    attributes = {}
    if solver == "mirror_descent":
        attributes = {"n_vertices_": plan.n_vertices,
                      "refresh_every_": plan.refresh_every,
                      "n_noisy_statistics_": plan.n_statistics,
                      "noise_multiplier_": plan.noise_multiplier}
    return {**attributes, "n_iter_": plan.n_steps, "step_size_": plan.step_size,
            "n_draws_": plan.n_draws,
            "score_sensitivity_": plan.score_sensitivity}


def default_feature_bound(solver):
    """The bound ``feature_bound=None`` stands for: ``SGD_FEATURE_BOUND`` for
    "sgd" (standardized columns), 1 for the vertex solvers (binary and
    one-hot columns, and every draw's sensitivity grows with the bound)."""
    return SGD_FEATURE_BOUND if solver == "sgd" else 1.0


def plan_polytope_sgd(*, n_samples, n_problems, epsilon, delta, fit_intercept,
                      n_classes, weight_bound=1.0, lockstep=False):
    """Plan DP-SGD over the polytope (``solver="sgd"``).

    The DP-SGD plan (:func:`skdpopt.plans.sgd.plan_dpsgd`) with the
    schedule of DPSGDClassifier's defaults (``SGD_EPOCHS`` Poisson epochs,
    batch size "auto", averaged iterates), the clip check and the class
    totals first, the intercept's calibration and the fit check last; the
    classes in lockstep where ``lockstep`` (in memory,
    :mod:`skdpopt.solvers.lockstep_sgd`).

    Returns
    -------
    DPSGDPlan
    """
    return plan_dpsgd(
        n_samples=n_samples, n_problems=n_problems, epsilon=epsilon,
        delta=delta, sampling="poisson", batch_size="auto",
        max_iter=SGD_EPOCHS, average=True, n_classes=n_classes,
        weight_bound=weight_bound, calibrate_intercept=fit_intercept,
        fit_check=True, clip_check=True, learning_rate="constant",
        eta0=SGD_STEP, lockstep=lockstep)


def plan_logistic_simplex(*, n_samples, n_features, n_problems, epsilon, delta,
                          solver, constraint, radius, feature_bound, fit_intercept,
                          max_iter, n_vertices, refresh_every, n_classes=None,
                          weight_bound=1.0, lockstep=False):
    """Plan a DPLogisticSimplex fit from public quantities (never X or y).

    Parameters
    ----------
    n_samples, n_features : int
    n_problems : int
        1 for two classes, else the number of classes (one-vs-rest).
    epsilon, delta : float
    solver : {"sgd", "mirror_descent", "frank_wolfe"}
        The solver ("auto" resolved by :func:`choose_solver`).
    constraint, radius, feature_bound, fit_intercept, max_iter,
    n_vertices, refresh_every
        The estimator's hyperparameters of the same names (a
        ``feature_bound`` of None is :func:`default_feature_bound`).
    n_classes : int or None, default=None
        The number of classes (None: 2 for one problem, else n_problems).
    weight_bound : float, default=1.0
        Public bound on the rows' sample weights.
    lockstep : bool, default=False
        Whether "sgd" runs the classes in lockstep (rows in memory).

    Returns
    -------
    DPSGDPlan, MirrorDescentPlan or SimplexFrankWolfePlan
    """
    if n_classes is None:
        n_classes = 2 if n_problems == 1 else n_problems
    if feature_bound is None:
        feature_bound = default_feature_bound(solver)
    if solver == "sgd":
        return plan_polytope_sgd(
            n_samples=n_samples, n_problems=n_problems, epsilon=epsilon,
            delta=delta, fit_intercept=fit_intercept, n_classes=n_classes,
            weight_bound=weight_bound, lockstep=lockstep)
    common = {"n_samples": n_samples, "n_features": n_features,
              "n_problems": n_problems, "epsilon": epsilon, "delta": delta,
              "constraint": constraint, "radius": radius,
              "feature_bound": feature_bound, "fit_intercept": fit_intercept,
              "max_iter": max_iter}
    if solver == "mirror_descent":
        return plan_mirror_descent(**common, n_vertices=n_vertices,
                                   refresh_every=refresh_every,
                                   n_classes=n_classes, weight_bound=weight_bound)
    return plan_simplex_frank_wolfe(**common, n_classes=n_classes,
                                    weight_bound=weight_bound)
