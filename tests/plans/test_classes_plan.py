"""Class totals: their release's plan, and the weights set from them."""

import numpy as np
import pytest
from sklearn.utils.class_weight import compute_class_weight

from skdpopt.accounting import GaussianMechanism, LaplaceMechanism
from skdpopt.plans.classes import (
    NOISE_RATIOS,
    STEP_GROWTH,
    STEP_SHARES,
    TOTAL_FLOOR_SPREADS,
    auto_step_scales,
    plan_class_totals,
    problem_weights,
    public_class_weights,
)


def test_totals_noise_is_the_multiplier_times_the_histograms_sensitivity():
    """Replacing a record moves two totals by at most the weight bound W
    each: l2 sensitivity sqrt(2) W (Gaussian), l1 2 W (Laplace)."""
    gaussian = plan_class_totals(3, 4.0, weight_bound=2.5)
    assert gaussian.event == GaussianMechanism(4.0)
    assert gaussian.noise_scale == pytest.approx(4.0 * np.sqrt(2) * 2.5)
    assert gaussian.floor == pytest.approx(TOTAL_FLOOR_SPREADS * gaussian.noise_scale)
    laplace = plan_class_totals(3, 4.0, weight_bound=2.5, pure=True)
    assert laplace.event == LaplaceMechanism(0.25)
    assert laplace.noise_scale == pytest.approx(4.0 * 2 * 2.5)
    exact = plan_class_totals(3, 0.0)
    assert exact.noise is None and exact.noise_scale == 0


def test_balanced_weights_are_scikit_learns_from_the_totals():
    classes = np.array(["a", "b", "c"])
    totals = np.array([10.0, 30.0, 60.0])
    labels = np.repeat(classes, totals.astype(int))
    expected = compute_class_weight("balanced", classes=classes, y=labels)
    problems = problem_weights("balanced", classes, totals)
    for k, problem in enumerate(problems):
        # One-vs-rest as SGDClassifier: positives w[k], negatives 1; both
        # divided by the larger, which becomes the scale.
        top = max(expected[k], 1.0)
        assert problem.scale == pytest.approx(top)
        assert problem.positive == pytest.approx(expected[k] / top)
        assert problem.negative == pytest.approx(1.0 / top)
        mass = expected[k] * totals[k] + (totals.sum() - totals[k])
        assert problem.share == pytest.approx(expected[k] * totals[k] / mass)
        assert problem.total == pytest.approx(mass / top)


def test_binary_weights_and_the_sample_weight_bound():
    classes = np.array([0, 1])
    (problem,) = problem_weights({0: 1.0, 1: 4.0}, classes,
                                 np.array([90.0, 10.0]), weight_bound=2.0)
    assert (problem.positive, problem.negative) == (1.0, 0.25)
    assert problem.scale == 8.0  # sample weights up to 2, class weight 4
    assert problem.share == pytest.approx(40 / 130)
    assert problem.total == pytest.approx(130 / 8)
    (unweighted,) = problem_weights(None, classes, None)
    assert unweighted == type(unweighted)(1.0, 1.0, 1.0, None, None)


@pytest.mark.parametrize("bad", [{0: -1.0, 1: 1.0}, {0: np.inf, 1: 1.0},
                                 {0: 0.0, 1: 0.0}])
def test_bad_class_weights_are_refused(bad):
    with pytest.raises(ValueError, match="class_weight"):
        public_class_weights(bad, np.array([0, 1]))


def test_class_weight_names_only_declared_classes():
    with pytest.raises(ValueError):
        public_class_weights({0: 1.0, 5: 2.0}, np.array([0, 1]))


def test_auto_step_scales_ramp_with_the_rarer_side_and_the_noise():
    """The rarer side of each problem's share (positives or negatives,
    whichever is rarer): its ramp is 0 at or below STEP_SHARES[0], 1 at or
    above STEP_SHARES[1]; the noise's is 1 at or below NOISE_RATIOS[0], 0
    at or above NOISE_RATIOS[1]; the scale grows to STEP_GROWTH with their
    product."""
    low, high = STEP_SHARES
    quiet, loud = NOISE_RATIOS
    half = (1 + STEP_GROWTH) / 2
    for share, scale in ((0.02, 1.0), (low, 1.0), ((low + high) / 2, half),
                         (high, STEP_GROWTH), (0.5, STEP_GROWTH)):
        for positive in (share, 1 - share):
            assert auto_step_scales([positive]) == [pytest.approx(scale)]
            assert auto_step_scales([positive], quiet) == [pytest.approx(scale)]
            assert auto_step_scales([positive], loud) == [pytest.approx(1.0)]
    assert auto_step_scales([0.5], (quiet + loud) / 2) == [pytest.approx(half)]
    assert auto_step_scales([0.02, 0.5, 0.9]) == pytest.approx(
        [1.0, STEP_GROWTH, 1.5])


def test_auto_step_reads_the_weighted_share():
    """Balanced weights make every problem's weighted share one half."""
    problems = problem_weights("balanced", np.array([0, 1]), np.array([950.0, 50.0]))
    assert problems[0].share == pytest.approx(0.5)
    assert auto_step_scales([p.share for p in problems]) == [STEP_GROWTH]
