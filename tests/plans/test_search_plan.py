"""The private search's plan: its total recomputed independently, the
candidate budget it finds, and the searches it refuses."""

import numpy as np
import pytest

from skdpopt import DPSGDClassifier
from skdpopt.accounting import (
    EpsilonDeltaEvent,
    LaplaceMechanism,
    privacy_spent,
)
from skdpopt.model_selection import DPGridSearchCV
from skdpopt.plans.search import MIN_CANDIDATE_SHARE, _score_event, plan_search
from skdpopt.plans.sgd import plan_dpsgd

dp_accounting = pytest.importorskip("dp_accounting")
from dp_accounting.rdp import rdp_privacy_accountant as dpa_rdp  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::skdpopt.exceptions.UtilityWarning")


@pytest.mark.parametrize("stopping, shape", [("negative_binomial", 0.5),
                                             ("geometric", 1.0), ("poisson", np.inf)])
def test_a_whole_search_recomputed_by_dp_accounting(stopping, shape):
    """End to end: a search over full-batch DP-SGD, its total recomputed
    from public quantities by dp-accounting's RepeatAndSelectDpEvent.

    A candidate run fits T full-batch steps of noise multiplier s on the
    training rows (sensitivity 2 under replace-one: T Gaussians of
    multiplier s/2, one Gaussian of multiplier s / (2 sqrt(T))) and adds
    Gaussian noise of multiplier z to its score on the validation rows.
    The parts read disjoint rows, so a run is bounded by the worse of the
    two Gaussians; the search repeats and selects runs."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(3000, 3))
    y = (X[:, 0] > 0).astype(int)
    search = DPGridSearchCV(
        DPSGDClassifier(classes=[0, 1], sampling="full", max_iter=4),
        {"alpha": [1e-4, 1e-3, 1e-2]}, epsilon=1.0, delta=1e-6, stopping=stopping,
        stopping_shape=min(shape, 1.0), n_iter=8, random_state=0).fit(X, y)
    model, plan = search.best_estimator_, search.privacy_plan_
    fit_sigma = model.noise_multiplier_ / (2.0 * np.sqrt(model.t_))
    run = dp_accounting.GaussianDpEvent(min(fit_sigma, plan.score_noise))
    peer = dpa_rdp.RdpAccountant(
        neighboring_relation=dp_accounting.NeighboringRelation.REPLACE_ONE)
    peer.compose(dp_accounting.dp_event.RepeatAndSelectDpEvent(run, 8.0, shape))
    assert search.privacy_spent_.epsilon == pytest.approx(peer.get_epsilon(1e-6),
                                                          rel=1e-3)


def _dpsgd_events(n_samples, schedules):
    def events_for(epsilon, delta):
        return tuple(plan_dpsgd(n_samples=n_samples, n_problems=1, epsilon=epsilon,
                                delta=delta, sampling="poisson", batch_size="auto",
                                max_iter=max_iter, average=True).event
                     for max_iter in schedules)

    return events_for


@pytest.mark.parametrize("epsilon", [1.0, 3.0])
@pytest.mark.parametrize("mean", [2, 8, 32])
@pytest.mark.parametrize("auto_range, stopping", [(False, "negative_binomial"),
                                                  (True, "negative_binomial"),
                                                  (False, "geometric")])
def test_each_candidate_gets_a_quarter_of_the_budget(epsilon, mean, auto_range,
                                                     stopping):
    # Grids of up to 32 candidates (the expected runs are the grid's size):
    # selection costs about 4 candidates' budgets, not 32, with the default
    # (logarithmic) number of runs and with the geometric.
    plan = plan_search(candidate_events_for=_dpsgd_events(8000, (2, 5, 10)),
                       epsilon=epsilon, delta=1e-6, mean_repetitions=mean,
                       stopping=stopping, auto_range=auto_range,
                       n_samples=8000)
    assert plan.candidate_epsilon >= epsilon / 4
    assert 0.97 * epsilon <= plan.spent().epsilon <= epsilon
    assert len(plan.candidate_events) == 3


def test_pure_candidates_plan_a_pure_search():
    # delta = 0: Laplace score noise, pure candidates, and the geometric's
    # pure bound 3 times a run's epsilon (Liu and Talwar 2019).
    plan = plan_search(candidate_events_for=lambda e, d: (LaplaceMechanism(e),),
                       epsilon=1.5, delta=0.0, mean_repetitions=10,
                       stopping="geometric")
    assert plan.score_mechanism == "laplace"
    assert plan.candidate_epsilon == pytest.approx(0.5, rel=0.03)
    assert privacy_spent(plan.event, 0.0).epsilon <= 1.5


def _gaussian_candidate(epsilon, delta):
    # One Gaussian mechanism that spends (epsilon, delta) on its own.
    return (_score_event(epsilon, delta)[1],)


def test_refit_share_is_composed_and_taken_from_the_runs():
    without = plan_search(candidate_events_for=_gaussian_candidate, epsilon=1.0,
                          delta=1e-6, mean_repetitions=8)
    shared = plan_search(candidate_events_for=_gaussian_candidate, epsilon=1.0,
                         delta=1e-6, mean_repetitions=8, refit_share=0.5)
    assert (shared.refit_epsilon, shared.refit_delta) == (0.5, 5e-7)
    assert shared.candidate_epsilon < 0.6 * without.candidate_epsilon
    assert shared.spent().epsilon <= 1.0


def test_without_privacy_there_is_no_noise():
    plan = plan_search(candidate_events_for=lambda e, d: (EpsilonDeltaEvent(e),),
                       epsilon=np.inf, delta=1e-6, mean_repetitions=4)
    assert plan.score_noise == 0 and plan.candidate_epsilon == np.inf
    assert plan.spent().epsilon == np.inf


def test_candidates_without_a_renyi_curve_are_refused():
    with pytest.raises(ValueError, match="Renyi-DP curve"):
        plan_search(candidate_events_for=lambda e, d: (EpsilonDeltaEvent(e, d),),
                    epsilon=1.0, delta=1e-6, mean_repetitions=4)


def test_a_budget_too_small_for_the_runs_is_refused_with_the_share():
    with pytest.raises(ValueError, match=f"below the {100 * MIN_CANDIDATE_SHARE:.0f}%"):
        plan_search(candidate_events_for=_gaussian_candidate,
                    epsilon=1.0, delta=1e-6, mean_repetitions=1e6,
                    stopping="poisson")
