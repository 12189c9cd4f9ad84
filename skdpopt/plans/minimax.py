"""Privacy plans of DPMinimaxClassifier: gradient descent-ascent and vertex
sampling.

Gradient descent-ascent.

Two stages.  The first releases the group counts (a Gaussian mechanism on
the vector of counts), unless the proportions are public.  The second is
``T`` steps of the model's Gaussian mechanism and ``T`` of the adversary's
(:mod:`skdpopt.solvers.gda`).  The noise of every release is fixed by
:func:`plan_minimax_gda` from public quantities alone (n, d, the number of
groups, epsilon, delta, hyperparameters); what the second stage takes from
the released counts (the cap kappa on the adversary, the group sizes that
divide the loss sums, the step sizes: :func:`gda_stage`) changes how the
data are used but never a release's sensitivity over its noise, so the
two stages compose adaptively with exact accounting: the plan's event is
the whole run's (``docs/privacy/dpminimax.md``).
"""

import math
from dataclasses import dataclass

import numpy as np

from ..accounting import (
    EpsilonDeltaEvent,
    ExponentialMechanism,
    GaussianMechanism,
    PureDPMechanism,
    calibrate_event,
    compose,
    pld,
    privacy_spent,
    repeat,
)
from ..accounting.zcdp import (
    exponential_score_sensitivity,
    gaussian_noise_multiplier,
    rho_for,
)
from .base import PrivacyPlan

# Shares of the zCDP budget (equivalently of mu^2: every release is
# Gaussian) of the counts, the model and the adversary.  Measured on the
# tuning designs (``benchmarks/bench_minimax.py --tuning``).
COUNT_SHARE = 0.05
MODEL_SHARE = 0.50
# Steps with privacy and without; the step-size factors of the model
# (times R / (C sqrt(T))) and of the adversary (times 1 / l_max); and the
# scale of the kappa rule (:func:`gda_kappa`).  Measured on the tuning
# designs.
STEPS_PER_SIGNAL = 0.03
MIN_PRIVATE_STEPS = 10
MAX_PRIVATE_STEPS = 50
MODEL_STEP_FACTOR = 1.0
GROUP_STEP_FACTOR = 60.0
KAPPA_SCALE = 0.01
# Without privacy: the fewest steps (full passes) at which every tuning
# design's training worst-group loss was within 0.003 of the exact
# minimax's, with the model step factor that reached it.
NON_PRIVATE_STEPS = 200
NON_PRIVATE_MODEL_STEP_FACTOR = 3.0


@dataclass(frozen=True)
class MinimaxGDAPlan(PrivacyPlan):
    """Everything the gradient descent-ascent fit releases, planned.

    Attributes
    ----------
    epsilon, delta : float
        The request.
    event : event
        The whole fit: the counts (one Gaussian release, if any), then
        ``Repeated`` model and adversary releases, T each.
    n_samples, n_features, n_groups : int
        Public sizes (``n_features`` counts the intercept's coordinate).
    counts_released : bool
        Whether the first stage releases noisy counts.
    count_noise_std : float
        Standard deviation of the noise on each group count (0: none).
    n_steps : int
        T.
    noise_multiplier : float
        s: the model's noise std is ``2 C s``.
    loss_noise_multiplier : float
        s_L: each group's loss-sum noise std is ``l_max s_L``.
    clip_norm, loss_bound, radius : float
        C, l_max and R.
    model_mu : float
        Gaussian-DP mu of the model's T releases together (``inf``: no
        privacy); sets kappa (:func:`gda_kappa`).
    step_clip_norm, step_loss_bound : float
        The hyperparameters C and l_max, which scale the step sizes also
        without privacy (when nothing is clipped).
    """

    n_samples: int
    n_features: int
    n_groups: int
    counts_released: bool
    count_noise_std: float
    n_steps: int
    noise_multiplier: float
    loss_noise_multiplier: float
    clip_norm: float
    loss_bound: float
    radius: float
    model_mu: float
    step_clip_norm: float
    step_loss_bound: float


def gda_noise(rho, shares, n_steps):
    """Noise multipliers (counts, model, adversary) for a zCDP budget
    ``rho`` split by ``shares``: each player's share over its T releases."""
    count_share, model_share, loss_share = shares
    count = gaussian_noise_multiplier(rho * count_share) if count_share else 0.0
    model = gaussian_noise_multiplier(rho * model_share / n_steps)
    loss = gaussian_noise_multiplier(rho * loss_share / n_steps)
    return count, model, loss


def gda_event(rho, shares, n_steps):
    """The event tree of a fit with zCDP budget ``rho``."""
    count, model, loss = gda_noise(rho, shares, n_steps)
    return compose(
        GaussianMechanism(count) if count else compose(),
        repeat(GaussianMechanism(model), n_steps),
        repeat(GaussianMechanism(loss), n_steps),
    )


def plan_minimax_gda(*, n_samples, n_features, n_groups, epsilon, delta,
                     counts_public, clip_norm, loss_bound, radius,
                     max_iter=None):
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
        must be positive when epsilon is finite (every release is Gaussian).
    counts_public : bool
        Group proportions are public (priors, or one group): no counts.
    clip_norm, loss_bound, radius : float
        C, l_max, R.
    max_iter : int, default=None
        T; ``None``: :func:`private_steps` with privacy,
        ``NON_PRIVATE_STEPS`` without.

    Returns
    -------
    MinimaxGDAPlan
    """
    private = not np.isinf(epsilon)
    if not private or delta <= 0:
        n_steps = max_iter or NON_PRIVATE_STEPS
    else:
        n_steps = max_iter or private_steps(n_samples, n_features, epsilon, delta)
    counts_released = private and not counts_public and n_groups > 1
    count_share = COUNT_SHARE if counts_released else 0.0
    model_share = (1.0 - count_share) * MODEL_SHARE
    shares = (count_share, model_share, 1.0 - count_share - model_share)
    if not private:
        # Nothing to bound: no clipping, so that the fit solves the exact
        # problem (clip_norm still scales the step sizes, gda_stage).
        return MinimaxGDAPlan(
            epsilon, delta, EpsilonDeltaEvent(np.inf, 0.0), n_samples,
            n_features, n_groups, False, 0.0, n_steps, 0.0, 0.0, np.inf,
            np.inf, radius, np.inf, clip_norm, loss_bound)
    if delta <= 0:
        raise ValueError(
            "solver='gda' needs delta > 0 (its releases are Gaussian); use "
            "solver='vertex_sampling' for pure differential privacy.")
    # Every release is Gaussian: the whole run is one Gaussian mechanism
    # (its mu^2 the sum of the parts'), so the accountant's answer is exact
    # and the split never changes the total.
    rho, _ = calibrate_event(
        lambda r: gda_event(r, shares, n_steps), epsilon, delta,
        parameter="rho", guess=rho_for(epsilon, delta), rtol=0.005)
    count, model, loss = gda_noise(rho, shares, n_steps)
    # The count vector moves by sqrt(2) in l2 (one row between two groups).
    count_std = math.sqrt(2.0) * count
    return MinimaxGDAPlan(
        epsilon, delta, gda_event(rho, shares, n_steps), n_samples, n_features,
        n_groups, counts_released, count_std, n_steps, model, loss, clip_norm,
        loss_bound, radius, math.sqrt(n_steps) / model, clip_norm, loss_bound)


def private_steps(n_samples, n_features, epsilon, delta):
    """Default private T: ``STEPS_PER_SIGNAL n mu / sqrt(d)`` within
    ``[MIN_PRIVATE_STEPS, MAX_PRIVATE_STEPS]``.

    ``n mu / sqrt(d)`` (mu: the whole fit's Gaussian-DP parameter) is the
    size of the full gradient against the norm of the noise on it when the
    budget is spent in one step; each halving of the noise per step costs
    four times the steps, so T grows with that ratio up to a cap.
    """
    signal = n_samples * _gaussian_mu(epsilon, delta) / math.sqrt(n_features)
    steps = round(STEPS_PER_SIGNAL * signal)
    return int(min(MAX_PRIVATE_STEPS, max(MIN_PRIVATE_STEPS, steps)))


def _gaussian_mu(epsilon, delta):
    """mu of the Gaussian mechanism that is exactly (epsilon, delta)-DP."""
    low, high = 1e-3, 1.0
    while pld.gaussian_epsilon(high, delta) < epsilon:
        high *= 2.0
    for _ in range(60):  # bisection on log mu
        middle = math.sqrt(low * high)
        if pld.gaussian_epsilon(middle, delta) < epsilon:
            low = middle
        else:
            high = middle
    return low


@dataclass(frozen=True)
class GDAStage:
    """The second stage's settings, from the plan and the released counts.

    Attributes
    ----------
    kappa : float
        Cap on ``q_g / p_g``.
    step_size, group_step_size : float
        The model's and the adversary's steps.
    """

    kappa: float
    step_size: float
    group_step_size: float


def gda_kappa(plan, proportions):
    """The adversary's cap: ``clip(KAPPA_SCALE n mu_model / (2 sqrt(d)), 1,
    1 / p_min)``.

    The model's noise on the gradient, averaged over the run, has norm about
    ``2 C kappa sqrt(d) / (n mu_model)``: kappa multiplies the weight one
    row can carry.  The rule lets the adversary weigh a group up only as
    far as the budget pays for: kappa is 1 (DP ERM) when ``n mu_model`` is
    small against ``sqrt(d)``, and ``1 / p_min`` (the exact minimax) as
    epsilon grows.  Public inputs only (the proportions are public or
    released).
    """
    full = 1.0 / float(np.min(proportions))
    if np.isinf(plan.model_mu):
        return full
    paid = KAPPA_SCALE * plan.n_samples * plan.model_mu / (
        2.0 * math.sqrt(plan.n_features))
    return float(min(full, max(1.0, paid)))


def gda_stage(plan, proportions):
    """Second-stage settings from the plan and the released proportions."""
    kappa = gda_kappa(plan, proportions)
    root = math.sqrt(plan.n_steps)
    # Without noise a longer model step converges in fewer passes.
    factor = (NON_PRIVATE_MODEL_STEP_FACTOR if np.isinf(plan.model_mu)
              else MODEL_STEP_FACTOR)
    step = factor * plan.radius / (plan.step_clip_norm * root)
    group_step = GROUP_STEP_FACTOR / (plan.step_loss_bound * root)
    return GDAStage(kappa, step, group_step)


# -- vertex sampling ----------------------------------------------------------


@dataclass(frozen=True)
class MinimaxVertexPlan(PrivacyPlan):
    """What a vertex-sampling fit releases.

    With released counts, a two-stage plan: the counts (Laplace, pure
    ``count_epsilon``), then vertex draws whose number and score
    sensitivity are chosen from the noisy counts and calibrated to spend at
    most ``draws_epsilon`` at the fit's delta.  The second stage is not
    known when the plan is made, so its event is the bound
    ``EpsilonDeltaEvent(draws_epsilon, delta)`` (sequential composition).
    With public proportions, one stage: ``n_draws`` exponential mechanisms
    of score sensitivity ``score``, exactly.

    Attributes
    ----------
    count_epsilon : float
        Pure epsilon of the count vector (0: no counts released).
    count_noise_scale : float
        Laplace scale of each count, ``2 / count_epsilon`` (one row moves
        between two counts).
    draws_epsilon : float
        The budget of the draws.
    score : float or None
        Score sensitivity of each draw (public proportions only).
    n_draws : int or None
        Number of draws, both players (public proportions only).
    """

    count_epsilon: float
    count_noise_scale: float
    draws_epsilon: float
    score: float = None
    n_draws: int = None


def plan_minimax_vertex_counts(*, epsilon, delta, count_budget_share):
    """Stage one of a fit that releases noisy counts (finite epsilon).

    Parameters
    ----------
    epsilon, delta : float
    count_budget_share : float
        Share of epsilon the counts spend.

    Returns
    -------
    MinimaxVertexPlan
    """
    count_epsilon = count_budget_share * epsilon
    draws_epsilon = epsilon - count_epsilon
    event = compose(PureDPMechanism(count_epsilon),
                    EpsilonDeltaEvent(draws_epsilon, delta))
    return MinimaxVertexPlan(
        epsilon=epsilon, delta=delta, event=event, count_epsilon=count_epsilon,
        count_noise_scale=2.0 / count_epsilon, draws_epsilon=draws_epsilon)


def plan_minimax_vertex_public(*, epsilon, delta, score, n_draws):
    """The whole fit when the proportions are public (or there is one group).

    ``score`` comes from :func:`vertex_score` on public quantities.
    """
    if np.isinf(epsilon):
        event = EpsilonDeltaEvent(np.inf, 0.0)
    else:
        event = repeat(ExponentialMechanism(score), n_draws)
    return MinimaxVertexPlan(
        epsilon=epsilon, delta=delta, event=event, count_epsilon=0.0,
        count_noise_scale=0.0, draws_epsilon=epsilon, score=score,
        n_draws=n_draws)


def vertex_score(budget, delta, n_draws, cap):
    """The largest score sensitivity, at most ``cap``, whose ``n_draws``
    exponential mechanisms spend at most ``budget`` at ``delta``."""
    def event(score):
        return repeat(ExponentialMechanism(score), n_draws)

    if privacy_spent(event(cap), delta).epsilon <= budget:
        return cap  # the budget allows the non-private step
    if delta <= 0:
        guess = budget / (2.0 * n_draws)
    else:
        guess = exponential_score_sensitivity(rho_for(budget, delta) / n_draws)
    score, _ = calibrate_event(event, budget, delta,
                               parameter="score_sensitivity", guess=guess)
    return score
