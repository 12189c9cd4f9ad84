"""The plan of a private hyperparameter search: every candidate's budget,
the noise on its score, and the one event of the whole search.

A run of the search (Papernot and Steinke 2022; Liu and Talwar 2019)
repeats, a random number of times K, one candidate run: a candidate drawn
uniformly from a public list, fitted on the training rows with the
candidate budget, and scored on the validation rows with noise on its mean
score.  Only the best run (its parameters, model and noisy score) is
released.  The training and validation rows are disjoint, so one run is a
:class:`~skdpopt.accounting.Parallel` of the fit and the score, each
calibrated to the candidate budget; the repetition is a
:class:`~skdpopt.accounting.RepeatAndSelect` of those runs.  Before it,
optionally, the private range of the targets that bounds a regression
score; after it, optionally, a refit of the chosen candidate on all rows
with a declared share of the budget.  The derivation is in
``docs/privacy/model_selection.md``.
"""

import functools
from dataclasses import dataclass

import numpy as np

from ..accounting import (
    Accountant,
    BudgetBracket,
    EpsilonDeltaEvent,
    GaussianMechanism,
    LaplaceMechanism,
    NoiseBracket,
    Parallel,
    RepeatAndSelect,
    calibrate,
    compose,
    privacy_spent,
    rdp,
    zcdp,
)
from ..accounting.events import event_rdp
from .base import PrivacyPlan
from .bounds import (
    QuantileDraws,
    quantile_draws,
    quantile_draws_for_rho,
    reliable_share,
)

# Share of the search's budget (zCDP units) spent on the private range of
# the targets when a regression score's bound is "auto": three
# exponential-mechanism draws over all rows (see
# ``docs/privacy/model_selection.md``), given the share that makes them
# find the data for the rows at hand, within [RANGE_SHARE, MAX_RANGE_SHARE]
# (as DP-SGD's private target scale).
RANGE_SHARE = 0.05
MAX_RANGE_SHARE = 0.25
# Ranks of that range: the score clips targets and predictions to it.
RANGE_QUANTILES = (0.05, 0.95)

# A candidate budget below this share of the total is refused: the search
# would spend most of its budget on selection (see the error's message).
MIN_CANDIDATE_SHARE = 0.1

STOPPING_RULES = ("negative_binomial", "poisson", "geometric")


@dataclass(frozen=True)
class SearchPlan(PrivacyPlan):
    """What a private search releases.

    Attributes
    ----------
    candidate_epsilon, candidate_delta : float
        The budget of every candidate's fit (and, on the validation rows,
        of its score).
    candidate_events : tuple of events
        Each candidate's fit event at that budget, in the order of the
        candidate list (the fits must plan exactly these).
    score_noise : float
        Standard deviation of the noise on a mean score, in units of the
        score's sensitivity (``bound / n_validation``); 0 without privacy.
    score_mechanism : {"gaussian", "laplace", None}
        Gaussian when delta > 0, Laplace when delta = 0.
    mean_repetitions : float
        Expected number of candidate runs.
    shape : float
        Shape of their truncated negative binomial distribution, ``inf``
        for a Poisson number of runs.
    range_draws : QuantileDraws or None
        The draws of the targets' private range (a regression score with
        an "auto" bound), released first.
    refit_epsilon, refit_delta : float
        Budget of the refit of the chosen candidate on all rows (0: the
        chosen candidate itself is the model).
    """

    candidate_epsilon: float
    candidate_delta: float
    candidate_events: tuple
    score_noise: float
    score_mechanism: str
    mean_repetitions: float
    shape: float
    range_draws: QuantileDraws = None
    refit_epsilon: float = 0.0
    refit_delta: float = 0.0


def stopping_shape(stopping, shape):
    """The distribution's shape for a stopping rule: ``shape`` for the
    truncated negative binomial, 1 for the geometric of Liu and Talwar,
    ``inf`` for the Poisson."""
    if stopping == "poisson":
        return rdp.POISSON
    if stopping == "geometric":
        return 1.0
    return float(shape)


@functools.lru_cache(maxsize=512)
def _score_event(epsilon, delta):
    """A mean score's noise calibrated to (epsilon, delta) on its own, as
    (noise multiplier, event): Gaussian, or Laplace when delta = 0."""
    if delta == 0:
        return 1.0 / epsilon, LaplaceMechanism(epsilon)
    guess = zcdp.gaussian_noise_multiplier(zcdp.rho_for(epsilon, delta))
    multiplier, _ = calibrate(GaussianMechanism, epsilon, delta, NoiseBracket(guess))
    return multiplier, GaussianMechanism(multiplier)


def search_event(candidate_events, score_event, *, mean_repetitions, shape,
                 range_event=None, refit_event=None):
    """The event tree of a whole search (see the module's docstring)."""
    runs = tuple(Parallel((fit, score_event)) for fit in candidate_events)
    return compose(range_event,
                   RepeatAndSelect(runs, float(mean_repetitions), float(shape)),
                   refit_event)


@functools.lru_cache(maxsize=128)
def _guess_candidate_epsilon(epsilon, delta, *, mean_repetitions, shape,
                             range_event, refit_event):
    """Candidate epsilon of a search whose runs were Gaussian mechanisms: a
    starting guess (public quantities only, no candidate planned)."""
    def total(epsilon_c):
        multiplier, score = _score_event(epsilon_c, delta)
        event = search_event((score,), score, mean_repetitions=mean_repetitions,
                             shape=shape, range_event=range_event,
                             refit_event=refit_event)
        return Accountant().compose(event).epsilon(delta)

    low, high = 1e-3 * epsilon, epsilon
    if total(high) <= epsilon:
        return high
    for _ in range(40):  # bisection in log space: a guess needs no more
        middle = np.sqrt(low * high)
        if total(middle) > epsilon:
            high = middle
        else:
            low = middle
        if high / low < 1.005:
            break
    return low


def plan_search(*, candidate_events_for, epsilon, delta, mean_repetitions,
                stopping="negative_binomial", shape=0.0, refit_share=0.0,
                auto_range=False, n_samples=None, rtol=0.03):
    """Plan a private search from public quantities.

    Parameters
    ----------
    candidate_events_for : callable
        ``candidate_events_for(epsilon, delta)`` returns the tuple of the
        candidates' fit events at that budget (each candidate estimator's
        own plan, made from public quantities).
    epsilon, delta : float
        The whole search's budget; ``epsilon=inf`` plans a search without
        noise.
    mean_repetitions : float
        Expected number of candidate runs (> 1).
    stopping : {"negative_binomial", "poisson", "geometric"}
        Distribution of the number of runs.
    shape : float, default=0.0
        Shape ``eta >= 0`` of the truncated negative binomial (0: the
        logarithmic distribution).
    refit_share : float, default=0.0
        Share of epsilon and delta given to a refit of the chosen
        candidate on all rows, composed with the selection by basic
        composition (0: no refit).
    auto_range : bool, default=False
        Release the targets' range over all rows first, with the share of
        the budget (zCDP units, within ``[RANGE_SHARE, MAX_RANGE_SHARE]``)
        that makes its draws reliable for ``n_samples`` rows.
    n_samples : int, default=None
        Rows of the data (for the range's draws).
    rtol : float, default=0.03
        Accepted shortfall of the whole search below ``epsilon``.

    Returns
    -------
    SearchPlan

    Raises
    ------
    ValueError
        If a candidate's fit has no Renyi curve (a stage known only by an
        (epsilon, delta) pair), or if each candidate would get less than
        ``MIN_CANDIDATE_SHARE`` of the budget.
    """
    shape = stopping_shape(stopping, shape)
    common = dict(mean_repetitions=float(mean_repetitions), shape=shape)
    if epsilon == np.inf:
        events = tuple(candidate_events_for(np.inf, 0.0))
        return SearchPlan(
            epsilon=epsilon, delta=delta, event=EpsilonDeltaEvent(np.inf, 0.0),
            candidate_epsilon=np.inf, candidate_delta=0.0,
            candidate_events=events, score_noise=0.0, score_mechanism=None,
            range_draws=(quantile_draws(n_samples=n_samples, n_columns=1,
                                        score_sensitivity=np.inf,
                                        quantiles=RANGE_QUANTILES)
                         if auto_range else None),
            refit_epsilon=np.inf if refit_share else 0.0, **common)
    range_draws = None
    if auto_range:
        rho = zcdp.rho_for(epsilon, delta)
        share = reliable_share(n_samples, rho, n_draws=3, low=RANGE_SHARE,
                               high=MAX_RANGE_SHARE)
        range_draws = quantile_draws_for_rho(share * rho, n_samples=n_samples,
                                             n_columns=1, quantiles=RANGE_QUANTILES)
    range_event = None if range_draws is None else range_draws.event
    refit_epsilon, refit_delta = refit_share * epsilon, refit_share * delta
    refit_event = EpsilonDeltaEvent(refit_epsilon, refit_delta) if refit_share else None
    candidate_delta = delta - refit_delta

    memo = {}

    def parts(epsilon_c):
        # Each candidate budget is planned once (the calibration and the
        # final plan ask for the same one).
        if epsilon_c not in memo:
            multiplier, score = _score_event(epsilon_c, candidate_delta)
            events = tuple(candidate_events_for(epsilon_c, candidate_delta))
            memo[epsilon_c] = multiplier, score, events
        return memo[epsilon_c]

    def make_event(epsilon_c):
        _, score, events = parts(epsilon_c)
        return search_event(events, score, range_event=range_event,
                            refit_event=refit_event, **common)

    # The Gaussian stand-ins' answer, aimed inside the tolerance: planning
    # the candidates is the costly part, and their total usually lands
    # within a few percent of the stand-ins' (then they are planned once).
    guess = _guess_candidate_epsilon((1.0 - rtol / 2) * epsilon, delta,
                                     range_event=range_event,
                                     refit_event=refit_event, **common)
    _check_curves(parts(guess)[2])
    spent = privacy_spent(make_event(guess), delta).epsilon
    if (1.0 - rtol) * epsilon <= spent <= epsilon:
        epsilon_c = guess
    else:
        epsilon_c, _ = calibrate(make_event, epsilon, delta,
                                 BudgetBracket(guess * epsilon / spent), rtol=rtol)
    if epsilon_c < MIN_CANDIDATE_SHARE * epsilon:
        raise ValueError(
            f"this search cannot fit its budget: each candidate would get "
            f"epsilon={epsilon_c:.3g}, {100 * epsilon_c / epsilon:.1f}% of the "
            f"total {epsilon:g}, below the {100 * MIN_CANDIDATE_SHARE:.0f}% a "
            "useful candidate needs. Lower n_iter (the expected number of "
            "candidate runs), raise epsilon, or lower refit_share.")
    multiplier, _, events = parts(epsilon_c)
    return SearchPlan(
        epsilon=epsilon, delta=delta, event=make_event(epsilon_c),
        candidate_epsilon=epsilon_c, candidate_delta=candidate_delta,
        candidate_events=events, score_noise=multiplier,
        score_mechanism="laplace" if candidate_delta == 0 else "gaussian",
        range_draws=range_draws, refit_epsilon=refit_epsilon,
        refit_delta=refit_delta, **common)


def _check_curves(events):
    """Refuse candidates whose fit has no Renyi curve: the selection's bound
    needs one (never under-report)."""
    for event in events:
        if not np.all(np.isfinite(event_rdp(event, rdp.DEFAULT_ORDERS,
                                            rdp.REPLACE_ONE))):
            raise ValueError(
                "a candidate's fit has a stage known only by an (epsilon, "
                "delta) pair, which has no Renyi-DP curve, so the private "
                "selection cannot be accounted. Give that stage public inputs "
                "(for DPMinimaxClassifier, public group proportions) or search "
                "another estimator.")


__all__ = ["SearchPlan", "plan_search", "search_event"]
