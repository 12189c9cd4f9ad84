"""The DP-SGD plan: public inputs only, spends at most the request, and
its event is what dp-accounting composes independently."""

import inspect
import itertools
import logging
import warnings

import numpy as np
import pytest

from skdpopt.accounting import SubsampledGaussianMechanism
from skdpopt.plans.sgd import plan_dpsgd

logging.getLogger("absl").setLevel(logging.ERROR)


def test_plan_takes_no_data():
    params = set(inspect.signature(plan_dpsgd).parameters)
    assert not params & {"X", "y", "data", "sample_weight"}


@pytest.mark.parametrize(
    "n_samples, epsilon, delta, sampling",
    list(itertools.product([100, 5000], [0.3, 1.0, 8.0], [1e-5, 1e-8],
                           ["poisson", "full", "single_pass"])),
)
def test_plan_spends_at_most_the_request(n_samples, epsilon, delta, sampling):
    plan = plan_dpsgd(n_samples=n_samples, n_problems=2, epsilon=epsilon,
                      delta=delta, sampling=sampling, batch_size="auto",
                      max_iter=3, average=True)
    spent = plan.spent()
    assert 0.9 * epsilon <= spent.epsilon <= epsilon
    assert spent.delta == delta


def test_spend_recomputed_with_dp_accounting():
    dp_accounting = pytest.importorskip("dp_accounting")
    from dp_accounting.pld import privacy_loss_distribution as dpa_pld

    plan = plan_dpsgd(n_samples=2000, n_problems=3, epsilon=1.0, delta=1e-6,
                      sampling="poisson", batch_size=100, max_iter=2, average=True)
    assert plan.event.event == SubsampledGaussianMechanism(
        0.05, plan.noise_multiplier)
    assert plan.event.count == 3 * plan.n_steps == 3 * 40
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reference = dpa_pld.from_gaussian_mechanism(
            standard_deviation=plan.noise_multiplier, sampling_prob=0.05,
            neighboring_relation=dp_accounting.NeighboringRelation.REPLACE_ONE,
            value_discretization_interval=1e-4,
        ).self_compose(plan.event.count).get_epsilon_for_delta(1e-6)
    assert plan.spent().epsilon == pytest.approx(reference, rel=0.02)


def test_no_privacy_plan_has_no_noise_and_infinite_spend():
    plan = plan_dpsgd(n_samples=100, n_problems=1, epsilon=np.inf, delta=1e-5,
                      sampling="poisson", batch_size="auto", max_iter=1,
                      average=False)
    assert plan.noise_multiplier == 0 and plan.average_start is None
    assert plan.spent().epsilon == np.inf
