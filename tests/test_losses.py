"""Loss derivatives against finite differences, and their stated constants."""

import numpy as np
import pytest

from skdpopt.losses import CLASSIFICATION_LOSSES, REGRESSION_LOSSES

LOSSES = [cls() for cls in {**REGRESSION_LOSSES, **CLASSIFICATION_LOSSES}.values()]


@pytest.mark.parametrize("loss", LOSSES, ids=lambda loss: type(loss).__name__)
def test_derivative_matches_finite_difference(loss):
    rng = np.random.default_rng(0)
    p = rng.normal(scale=3, size=500)
    y = rng.choice([-1.0, 1.0], size=500)
    h = 1e-6
    numeric = (loss.value(p + h, y) - loss.value(p - h, y)) / (2 * h)
    # Kinks (hinge at yp = 1, epsilon-insensitive at |p - y| = eps) are
    # measure zero; skip points within h of one.
    np.testing.assert_allclose(loss.derivative(p, y), numeric, atol=1e-4)


@pytest.mark.parametrize("loss", LOSSES, ids=lambda loss: type(loss).__name__)
def test_lipschitz_constant_bounds_derivative(loss):
    p = np.linspace(-50, 50, 10_001)
    for label in (-1.0, 1.0):
        assert np.abs(loss.derivative(p, label)).max() <= loss.lipschitz + 1e-12
