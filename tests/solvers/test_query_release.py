"""The query-release game on small histograms."""

import numpy as np

from skdpopt.solvers.graphical_model import GraphicalModel
from skdpopt.solvers.query_release import (
    MarginalWorkload,
    MatrixWorkload,
    candidates,
    fit_measurements,
    joint_estimate,
    project_to_simplex,
    release_workload,
)


def records(n=3000, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 3, n)
    b = (a + (rng.random(n) < 0.2)) % 3  # b follows a
    c = rng.integers(0, 2, n)
    return np.column_stack([a, b, c])


def empirical_model(codes, shape):
    """The records' histogram as a one-clique model."""
    hist = np.zeros(shape)
    np.add.at(hist, tuple(codes.T), 1.0 / len(codes))
    model = GraphicalModel(shape, [tuple(range(len(shape)))])
    model.update(tuple(range(len(shape))), np.log(hist + 1e-300))
    return model


def test_marginal_answers_match_bincounts():
    codes = records()
    workload = MarginalWorkload([(0, 1), (2,)], (3, 3, 2))
    model = empirical_model(codes, (3, 3, 2))
    for j in range(2):
        np.testing.assert_allclose(workload.answer(model, j),
                                   workload.answer_records(codes, j), atol=1e-12)


def test_update_with_exact_measurement_fits_that_marginal():
    codes = records()
    workload = MarginalWorkload([(0, 1)], (3, 3, 2))
    target = workload.answer_records(codes, 0)
    model = GraphicalModel((3, 3, 2))
    workload.update(model, 0, target, noise_std=0.0)
    np.testing.assert_allclose(workload.answer(model, 0), target, atol=1e-12)
    assert model.cliques == [(0, 1)]


def test_update_within_noise_moves_little():
    # A gap of 1e-4 under noise of 1e-2 (damped by 3e-2) changes the cell
    # by about 0.3%.
    workload = MarginalWorkload([(0,)], (2, 2))
    model = GraphicalModel((2, 2))
    workload.update(model, 0, np.array([0.5001, 0.4999]), noise_std=1e-2)
    assert np.allclose(model.dense(), 0.25, rtol=1e-3)


def test_projection_onto_the_simplex():
    np.testing.assert_allclose(project_to_simplex([0.5, 0.3, 0.2]), [0.5, 0.3, 0.2])
    np.testing.assert_allclose(project_to_simplex([0.7, 0.5, -0.1]), [0.6, 0.4, 0.0])
    out = project_to_simplex(np.random.default_rng(0).normal(size=50))
    assert out.min() >= 0 and np.isclose(out.sum(), 1.0)


def test_candidates_respect_the_size_limit():
    workload = MarginalWorkload([(0,), (0, 1), (1, 2, 3)], (10, 10, 10, 10))
    model = GraphicalModel((10, 10, 10, 10), [(0,)])
    # Columns alone: 40 cells; with (0, 1): 100 + 20; with (1, 2, 3):
    # 1000 + 10.
    assert candidates(workload, model, 200) == [0, 1]
    assert candidates(workload, model, 1010) == [0, 1, 2]
    assert candidates(workload, model, np.inf) == [0, 1, 2]


def test_noiseless_release_selects_the_worst_marginal_first():
    codes = records()
    workload = MarginalWorkload([(0,), (1,), (2,), (0, 1)], (3, 3, 2))
    real = [workload.answer_records(codes, j) for j in range(len(workload))]
    rng = np.random.default_rng(0)
    result = release_workload(workload, real, len(codes), n_rounds=4,
                              selection_epsilon=np.inf, noise_std=0.0, rng=rng)
    # From the uniform start, the 2-way table (b follows a) is the worst.
    assert result.selected[0] == 3
    errors = workload.errors(result.model, real)
    assert errors.max() < 1e-6


def test_selection_is_random_at_small_epsilon():
    codes = records()
    workload = MarginalWorkload([(0,), (1,), (2,), (0, 1)], (3, 3, 2))
    real = [workload.answer_records(codes, j) for j in range(len(workload))]
    picks = [
        release_workload(workload, real, len(codes), n_rounds=1,
                         selection_epsilon=1e-6, noise_std=0.1,
                         rng=np.random.default_rng(s)).selected[0]
        for s in range(40)
    ]
    # Nearly uniform over 4 queries: each is picked with probability about
    # 1/4; 40 draws all landing on one query has probability < 1e-20.
    assert len(set(picks)) >= 3


def test_matrix_workload_exact_queries_are_reached():
    codes = records()
    shape = (3, 3, 2)
    matrix = np.zeros((2, 18))
    matrix[0, :6] = 1.0  # a = 0
    matrix[1, 1::2] = 1.0  # c = 1
    workload = MatrixWorkload(matrix, shape)
    real = [workload.answer_records(codes, j) for j in range(2)]
    result = release_workload(workload, real, len(codes), n_rounds=2,
                              selection_epsilon=np.inf, noise_std=0.0,
                              rng=np.random.default_rng(0))
    fit_measurements(workload, result.model, result.measurements, n_sweeps=50)
    assert workload.errors(result.model, real).max() < 0.01


def test_joint_estimate_lowers_the_weighted_loss_and_recovers_consistent_answers():
    codes = records()
    shape = (3, 3, 2)
    workload = MarginalWorkload([(0,), (0, 1), (1, 2)], shape)
    rng = np.random.default_rng(0)
    measurements = {}
    for j, std in enumerate([0.05, 0.01, 0.01]):
        noisy = (workload.answer_records(codes, j)
                 + rng.normal(0, std, workload.sizes[j]))
        measurements[j] = (noisy / std**2, 1 / std**2)
    model = GraphicalModel(shape)
    start = joint_estimate(workload, model, measurements, n_iter=0)
    end = joint_estimate(workload, model, measurements, n_iter=200)
    assert end < 0.5 * start
    # Exact answers are consistent: the joint fit reaches them.
    exact = {j: (workload.answer_records(codes, j), 1.0) for j in range(3)}
    model = GraphicalModel(shape)
    joint_estimate(workload, model, exact, n_iter=500)
    for j in range(3):
        np.testing.assert_allclose(workload.answer(model, j),
                                   workload.answer_records(codes, j), atol=2e-3)
