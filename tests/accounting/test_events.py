"""Event trees: flattening, composition and (epsilon, delta) stages."""

import numpy as np
import pytest

from skdpopt.accounting import (
    Accountant,
    Composed,
    EpsilonDeltaEvent,
    ExponentialMechanism,
    GaussianMechanism,
    LaplaceMechanism,
    Repeated,
    SubsampledGaussianMechanism,
    compose,
    leaves,
    privacy_spent,
    repeat,
)


def test_leaves_multiply_counts_through_nesting():
    g, e = GaussianMechanism(2.0), ExponentialMechanism(0.1)
    tree = compose(repeat(compose(g, e), 3), repeat(g, 2))
    assert leaves(tree) == [(g, 3), (e, 3), (g, 2)]
    assert leaves(repeat(tree, 2)) == [(g, 6), (e, 6), (g, 4)]


def test_compose_flattens_and_repeat_handles_zero_and_one():
    g = GaussianMechanism(1.0)
    assert repeat(g, 1) is g
    assert repeat(g, 0) == Composed(())
    assert compose(compose(g, g), Composed(())) == Composed((g, g))
    with pytest.raises(ValueError):
        Repeated(g, -1)


def test_a_tree_spends_what_its_flat_list_spends():
    s = SubsampledGaussianMechanism(0.01, 1.0)
    lap = LaplaceMechanism(0.05)
    tree = compose(repeat(s, 500), repeat(lap, 4), repeat(s, 500))
    flat = Accountant().compose(s, 500).compose(lap, 4).compose(s, 500)
    assert privacy_spent(tree, 1e-5).epsilon == pytest.approx(
        flat.epsilon(1e-5, fast=True), rel=1e-9)


def test_epsilon_delta_stage_composes_basically():
    lap = LaplaceMechanism(0.2)
    # Pure stage: epsilons add.
    assert privacy_spent(compose(lap, EpsilonDeltaEvent(0.5)), 0).epsilon == \
        pytest.approx(0.7)
    # Its delta is taken from the total first; what is left goes to the rest.
    spent = privacy_spent(compose(GaussianMechanism(3.0), EpsilonDeltaEvent(0.5, 1e-6)),
                          2e-6)
    rest = privacy_spent(GaussianMechanism(3.0), 1e-6).epsilon
    assert spent.epsilon == pytest.approx(0.5 + rest)
    # A total delta below the stage's cannot be met.
    assert privacy_spent(EpsilonDeltaEvent(0.5, 1e-5), 1e-6).epsilon == np.inf


def test_non_private_stage_is_infinite():
    spent = privacy_spent(compose(GaussianMechanism(1.0), EpsilonDeltaEvent(np.inf)),
                          1e-5)
    assert (spent.epsilon, spent.delta) == (np.inf, 0.0)
