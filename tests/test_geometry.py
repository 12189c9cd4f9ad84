"""Projections and proximal maps against their defining optimisation problems."""

import hypothesis.strategies as st
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis.extra.numpy import arrays
from scipy.optimize import minimize

from skdpopt.geometry import (
    project_l1_ball,
    project_simplex,
    soft_threshold,
    vertex_coordinates,
)


def test_soft_threshold_is_the_l1_prox():
    rng = np.random.default_rng(0)
    x = rng.normal(size=7)
    prox = soft_threshold(x, 0.4)
    # The prox minimises 0.5 ||z - x||^2 + 0.4 ||z||_1, coordinate by coordinate.
    for xi, pi in zip(x, prox, strict=True):
        grid = np.linspace(-3, 3, 60_001)
        objective = 0.5 * (grid - xi) ** 2 + 0.4 * np.abs(grid)
        assert abs(grid[np.argmin(objective)] - pi) < 1e-4


@pytest.mark.parametrize("radius", [1.0, 2.5])
def test_project_simplex_solves_the_projection_problem(radius):
    rng = np.random.default_rng(1)
    v = rng.normal(size=6)
    p = project_simplex(v, radius)
    assert np.all(p >= 0) and np.isclose(p.sum(), radius)
    constraints = [{"type": "eq", "fun": lambda w: w.sum() - radius}]
    ref = minimize(lambda w: np.sum((w - v) ** 2), np.full(6, radius / 6),
                   bounds=[(0, None)] * 6, constraints=constraints, tol=1e-12)
    np.testing.assert_allclose(p, ref.x, atol=1e-5)


def test_project_l1_ball():
    v = np.array([3.0, -1.0, 0.5])
    p = project_l1_ball(v, 2.0)
    assert np.isclose(np.abs(p).sum(), 2.0)
    np.testing.assert_allclose(p, [2.0, 0.0, 0.0])
    inside = np.array([0.2, -0.3])
    np.testing.assert_array_equal(project_l1_ball(inside, 1.0), inside)


def test_vertex_coordinates():
    features, values = vertex_coordinates(np.array([0, 2, 3, 5]), 3, 2.0)
    np.testing.assert_array_equal(features, [0, 2, 0, 2])
    np.testing.assert_array_equal(values, [2.0, 2.0, -2.0, -2.0])
    features, values = vertex_coordinates(np.array([1]), 3, 2.0, "simplex")
    np.testing.assert_array_equal(values, [2.0])


finite_vectors = arrays(np.float64, st.integers(1, 12),
                        elements=st.floats(-1e3, 1e3, allow_nan=False))


@given(finite_vectors, st.floats(0.01, 100.0))
@settings(max_examples=200, deadline=None)
def test_simplex_projection_properties(v, radius):
    p = project_simplex(v, radius)
    assert np.all(p >= 0)
    assert np.isclose(p.sum(), radius, rtol=1e-9, atol=1e-9 * radius)
    # Optimality (KKT): v - p is constant (= theta) on the support of p and
    # at most theta off it.
    support = p > 0
    theta = np.mean((v - p)[support])
    assert np.allclose((v - p)[support], theta, atol=1e-6 * (1 + np.abs(v).max()))
    assert np.all((v - p)[~support] <= theta + 1e-6 * (1 + np.abs(v).max()))
    # Idempotent.
    np.testing.assert_allclose(project_simplex(p, radius), p, atol=1e-9 * radius)


@given(finite_vectors, st.floats(0.01, 100.0))
@settings(max_examples=200, deadline=None)
def test_l1_ball_projection_is_feasible_and_no_farther_than_any_vertex(v, radius):
    p = project_l1_ball(v, radius)
    assert np.abs(p).sum() <= radius * (1 + 1e-9)
    distance = np.linalg.norm(v - p)
    for j in range(len(v)):
        for sign in (-1.0, 1.0):
            vertex = np.zeros(len(v))
            vertex[j] = sign * radius
            assert distance <= np.linalg.norm(v - vertex) + 1e-9 * (1 + radius)
