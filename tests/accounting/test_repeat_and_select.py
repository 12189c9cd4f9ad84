"""Repeat-and-select and parallel events, checked against dp-accounting's
``RepeatAndSelectDpEvent`` and against closed forms written here."""

import math

import numpy as np
import pytest
from scipy import stats

from skdpopt import mechanisms
from skdpopt.accounting import (
    Accountant,
    EpsilonDeltaEvent,
    GaussianMechanism,
    LaplaceMechanism,
    Parallel,
    RepeatAndSelect,
    SubsampledGaussianMechanism,
    compose,
    privacy_spent,
    rdp,
)
from skdpopt.accounting.events import event_rdp

dp_accounting = pytest.importorskip("dp_accounting")
from dp_accounting.rdp import rdp_privacy_accountant as dpa_rdp  # noqa: E402

ORDERS = rdp.DEFAULT_ORDERS
# Integer orders: where dp-accounting's subsampled-Gaussian curve is its
# exact closed form (its fractional orders use a looser series).
INTEGER_ORDERS = np.arange(2.0, 257.0)
SHAPES = (0.0, 0.5, 1.0, 3.0, np.inf)


def _peer_epsilon(event, mean, shape, delta, orders, relation):
    accountant = dpa_rdp.RdpAccountant(orders=list(orders),
                                       neighboring_relation=relation)
    accountant.compose(
        dp_accounting.dp_event.RepeatAndSelectDpEvent(event, mean, shape))
    return accountant.get_epsilon(delta)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("mean", (2.0, 8.0, 32.0))
def test_gaussian_base_matches_dp_accounting(mean, shape):
    sigma = 3.0
    ours = Accountant().compose(
        RepeatAndSelect((GaussianMechanism(sigma),), mean, shape)).epsilon(1e-6)
    peer = _peer_epsilon(dp_accounting.GaussianDpEvent(sigma), mean, shape, 1e-6,
                         ORDERS, dp_accounting.NeighboringRelation.REPLACE_ONE)
    assert ours == pytest.approx(peer, rel=1e-8)


@pytest.mark.parametrize("shape", SHAPES)
def test_subsampled_base_matches_dp_accounting(shape):
    # 200 add/remove DP-SGD steps as the base, on integer orders; the
    # library's curve is a numerical integral accurate to 1e-6 relative.
    base = compose(*[SubsampledGaussianMechanism(0.02, 1.2)] * 200)
    ours = Accountant(relation="add_remove", orders=INTEGER_ORDERS).compose(
        RepeatAndSelect((base,), 10.0, shape)).epsilon(1e-5)
    event = dp_accounting.SelfComposedDpEvent(
        dp_accounting.PoissonSampledDpEvent(0.02, dp_accounting.GaussianDpEvent(1.2)),
        200)
    peer = _peer_epsilon(event, 10.0, shape, 1e-5, INTEGER_ORDERS,
                         dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE)
    assert ours == pytest.approx(peer, rel=1e-5)


def test_rdp_to_delta_matches_dp_accounting():
    curve = event_rdp(compose(*[SubsampledGaussianMechanism(0.01, 1.0)] * 300),
                      ORDERS, "replace_one")
    for epsilon in (0.05, 0.5, 1.0, 3.0):
        peer, _ = dpa_rdp.compute_delta(ORDERS, curve, epsilon)
        ours = rdp.rdp_to_delta(ORDERS, curve, epsilon)
        assert ours == pytest.approx(peer, rel=1e-10)
    # and it inverts the epsilon conversion
    epsilon = rdp.rdp_to_epsilon(ORDERS, curve, 1e-6)
    assert rdp.rdp_to_delta(ORDERS, curve, epsilon) == pytest.approx(1e-6, rel=1e-6)


def test_mixture_of_candidates_is_the_log_mean_exp():
    # One run draws a candidate uniformly and releases which: its order-a
    # divergence is log(mean_c exp((a - 1) D_c)) / (a - 1), by hand here.
    g1, g2 = GaussianMechanism(1.5), GaussianMechanism(6.0)
    event = RepeatAndSelect((g1, g2), 8.0, 1.0)
    a = ORDERS
    by_hand = (np.logaddexp((a - 1) * a / (2 * 1.5**2), (a - 1) * a / (2 * 6.0**2))
               - np.log(2.0)) / (a - 1)
    np.testing.assert_allclose(event.base_rdp(a, "replace_one"), by_hand, rtol=1e-12)
    # between the two candidates alone
    low = privacy_spent(RepeatAndSelect((g2,), 8.0, 1.0), 1e-6).epsilon
    high = privacy_spent(RepeatAndSelect((g1,), 8.0, 1.0), 1e-6).epsilon
    assert low < privacy_spent(event, 1e-6).epsilon < high


def test_parallel_is_bounded_by_its_worst_part():
    fit = compose(*[SubsampledGaussianMechanism(0.05, 1.0)] * 50)
    score = GaussianMechanism(4.0)
    curve = Parallel((fit, score)).rdp(ORDERS, "replace_one")
    np.testing.assert_allclose(
        curve, np.maximum(event_rdp(fit, ORDERS, "replace_one"),
                          score.rdp(ORDERS, "replace_one")))
    assert Parallel((LaplaceMechanism(0.3), LaplaceMechanism(0.7))).pure_epsilon == 0.7
    assert Parallel((LaplaceMechanism(0.3), score)).pure_epsilon is None
    # Identical parts spend what one spends (in Renyi DP: the node has no
    # privacy loss distribution).
    assert privacy_spent(Parallel((score, score)), 1e-6).epsilon == pytest.approx(
        rdp.rdp_to_epsilon(ORDERS, score.rdp(ORDERS, "replace_one"), 1e-6), rel=1e-9)


@pytest.mark.parametrize("shape, factor", [(0.0, 2.0), (1.0, 3.0), (2.5, 4.5)])
def test_pure_candidates_give_pure_selection(shape, factor):
    # Theorem 2 as both orders grow: (2 + eta) epsilon0; the geometric
    # (eta = 1) is Liu and Talwar's 3 epsilon0.
    event = RepeatAndSelect((Parallel((LaplaceMechanism(0.2), LaplaceMechanism(0.1))),),
                            5.0, shape)
    assert event.pure_epsilon == pytest.approx(factor * 0.2)
    assert privacy_spent(event, 0.0).epsilon == pytest.approx(factor * 0.2)
    assert RepeatAndSelect((LaplaceMechanism(0.2),), 5.0, np.inf).pure_epsilon is None


def test_unbounded_or_noiseless_candidates_are_never_under_reported():
    approx_only = EpsilonDeltaEvent(0.5, 1e-6)
    assert privacy_spent(RepeatAndSelect((approx_only,), 4.0, 1.0), 1e-5).epsilon \
        == np.inf
    assert privacy_spent(RepeatAndSelect((GaussianMechanism(0.0),), 4.0, 1.0),
                         1e-5).epsilon == np.inf
    assert privacy_spent(RepeatAndSelect((EpsilonDeltaEvent(np.inf),), 4.0, np.inf),
                         1e-5).epsilon == np.inf


def test_selection_costs_a_few_runs_not_their_number():
    # The point of the mechanism: 32 expected runs cost far less than 32
    # composed runs, and a few times one run.
    run = GaussianMechanism(4.0)
    one = privacy_spent(run, 1e-6).epsilon
    selected = privacy_spent(RepeatAndSelect((run,), 32.0, 1.0), 1e-6).epsilon
    composed = privacy_spent(compose(*[run] * 32), 1e-6).epsilon
    assert one < selected < 4 * one < composed


@pytest.mark.parametrize("shape", (0.0, 0.5, 1.0, 3.0))
@pytest.mark.parametrize("mean", (1.5, 8.0, 40.0))
def test_gamma_gives_the_mean(mean, shape):
    gamma = rdp.repetitions_gamma(mean, shape)
    # The mean by direct summation of the pmf on k >= 1: proportional to
    # (1 - gamma)^k / k (logarithmic) or to the negative binomial's.
    k = np.arange(1, 200_000)
    if shape == 0:
        log_pmf = k * math.log1p(-gamma) - np.log(k)
    else:
        log_pmf = stats.nbinom.logpmf(k, shape, gamma)
    pmf = np.exp(log_pmf - log_pmf.max())
    pmf /= pmf.sum()
    assert float(np.dot(k, pmf)) == pytest.approx(mean, rel=1e-6)


@pytest.mark.parametrize("shape", (0.0, 1.0, 3.0, np.inf))
def test_repetitions_follow_their_distribution(shape):
    mean, n = 6.0, 4_000
    gamma = None if shape == np.inf else rdp.repetitions_gamma(mean, shape)
    rng = np.random.default_rng(0)
    draws = np.array([mechanisms.repetitions(rng, mean, shape, gamma)
                      for _ in range(n)])
    assert draws.min() >= (0 if shape == np.inf else 1)
    # P[K = 1] against the pmf: a binomial proportion, 5 standard errors
    # (a false alarm has probability below 1e-6).
    if shape == np.inf:
        p1 = stats.poisson.pmf(1, mean)
    elif shape == 0:
        p1 = stats.logser.pmf(1, 1 - gamma)
    else:
        p1 = stats.nbinom.pmf(1, shape, gamma) / (1 - gamma**shape)
    assert abs(np.mean(draws == 1) - p1) < 5 * math.sqrt(p1 * (1 - p1) / n)
    # The mean: its standard error from the sample, 5 of them.
    assert abs(draws.mean() - mean) < 5 * draws.std() / math.sqrt(n)
