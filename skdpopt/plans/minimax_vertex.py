"""Privacy plan of DPMinimaxClassifier's vertex sampling.

The solver is :mod:`skdpopt.solvers.saddle_point`.  The first stage is a
Laplace mechanism on the counts (unless the proportions are public); the
number of draws and their score sensitivity are chosen from the noisy counts
(:meth:`MinimaxVertexPlan.stage`) and calibrated to spend at most the
rest of the budget, so the plan's event bounds the second stage by that
budget (sequential composition).  With public proportions the whole fit
is planned at once and its event is exact.  The derivations are in
``docs/privacy/dpminimax.md``; how the constants below were chosen is in
``docs/design/minimax.md#vertex-sampling``.
"""

import math
from dataclasses import dataclass

import numpy as np

from ..accounting import (
    EpsilonDeltaEvent,
    ExponentialMechanism,
    PureDPMechanism,
    ScaleBracket,
    calibrate,
    compose,
    privacy_spent,
    repeat,
)
from ..accounting.zcdp import exponential_score_sensitivity, rho_for
from .base import PrivacyPlan
from .minimax_checks import MinimaxChecksPlan, checks_share, plan_minimax_checks

# Passes over the data without privacy; the factor on the worst-case
# regret-optimal step sizes that caps every step; the share of that capped
# step that the default private T keeps the model's worst-case private
# step at.
NON_PRIVATE_PASSES = 20
STEP_CAP_FACTOR = 3.0
STEP_RATIO = 0.025


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
