"""Sums that feed a release: float64 whatever X's dtype, a neighbour moves
them by its exact effect, and memory stays bounded."""

import math
import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp

from skdpopt._data import least_squares_problem, linear_rows
from skdpopt._sums import (
    Columns,
    column_squares,
    column_sums,
    gram,
    group_sums,
    row_dots,
    sum_parts,
    total,
    touched_column_sums,
)
from skdpopt.losses import SquaredError

# One ones-column: 32,769 residuals of +1, then 100,000 of -0.0015.  In
# float32 each -0.0015 is below half a unit in the last place of 32,769
# and vanishes; after 32,767 (a replaced first record) it counts.
N_ONES, N_SMALL = 32_769, 100_000


def _neighbours():
    r = np.concatenate([np.ones(N_ONES), np.full(N_SMALL, -0.0015)])
    other = r.copy()
    other[0] = -1.0
    return r, other


FORMATS = {
    "dense": lambda X: X,
    "csr": sp.csr_matrix,
    "csc": sp.csc_matrix,
    "coo": sp.coo_matrix,
}


@pytest.mark.parametrize("form", FORMATS)
def test_a_neighbour_moves_a_float32_sum_by_its_exact_effect(form):
    X = FORMATS[form](np.ones((N_ONES + N_SMALL, 1), dtype=np.float32))
    r, other = _neighbours()
    moved = column_sums(X, r)[0] - column_sums(X, other)[0]
    # The exact effect is 2; float32 sums moved by 197.
    assert moved == pytest.approx(2.0, abs=1e-9)


def test_the_least_squares_gradient_moves_by_the_sensitivity():
    """The solver's released gradient: ``sum_i clip(r_i) x_ij`` over
    neighbours differing in one target moves by 2 C (C = 1 here)."""
    r, other = _neighbours()
    n = len(r)
    for form in ("csr", "dense"):
        X = FORMATS[form](np.ones((n, 1), dtype=np.float32))
        grads = []
        for residual in (r, other):
            problem = least_squares_problem(X, -residual, 1.0, 1.0)
            problem.reset(np.zeros(1), 0.0)  # residual z = 0 - y
            grads.append(problem.gradient()[0][0] * n)
        assert grads[0] - grads[1] == pytest.approx(2.0, abs=1e-9)
        curvature = least_squares_problem(X, -r, 1.0, 1.0).curvature(0)
        assert curvature == 1.0


def test_dp_sgd_gradient_sums_are_float64_too():
    r, other = _neighbours()
    X = sp.csr_matrix(np.ones((len(r), 1), dtype=np.float32))
    sums = [linear_rows(X, -target, SquaredError(), limit=1.0)
            .gradient_sum(np.zeros(1), 0.0)[0][0] for target in (r, other)]
    assert sums[0] - sums[1] == pytest.approx(2.0, abs=1e-9)


@pytest.mark.parametrize("shape", [(1, 1), (5_000, 3), (9_000, 70), (0, 4)])
@pytest.mark.parametrize("form", FORMATS)
def test_sums_match_exact_sums(shape, form):
    rng = np.random.default_rng(1)
    dense = rng.standard_normal(shape).astype(np.float32)
    dense[rng.random(shape) < 0.5] = 0.0
    X, w = FORMATS[form](dense), rng.standard_normal(shape[0])
    exact = np.array([math.fsum(dense[:, j].astype(float) * w)
                      for j in range(shape[1])])
    squares = np.array([math.fsum(dense[:, j].astype(float) ** 2)
                        for j in range(shape[1])])
    # fsum is exact to one rounding; the blocks' float64 sums are within a
    # few units in the last place of the largest partial sum.
    assert np.allclose(column_sums(X, w), exact, rtol=1e-12, atol=1e-12)
    assert np.allclose(Columns(X).sums(w), exact, rtol=1e-12, atol=1e-12)
    assert np.allclose(column_squares(X), squares, rtol=1e-12, atol=1e-12)
    assert np.allclose(Columns(X).squares(), squares, rtol=1e-12, atol=1e-12)
    assert np.allclose(row_dots(X, np.arange(shape[1])),
                       dense.astype(float) @ np.arange(shape[1]), rtol=1e-12)
    if form == "csr":
        columns, sums = touched_column_sums(X, w)
        assert np.array_equal(columns, np.flatnonzero((dense != 0).any(axis=0)))
        assert np.allclose(sums, exact[columns], rtol=1e-12, atol=1e-12)


def test_grouped_and_gram_sums_and_totals():
    rng = np.random.default_rng(2)
    Z, w = rng.standard_normal((10_000, 3)), rng.standard_normal(10_000)
    codes = rng.integers(0, 4, size=10_000)
    assert np.allclose(gram(Z, w), (Z.T * w) @ Z, rtol=1e-12)
    assert np.allclose(group_sums(codes, w, 5),
                       [math.fsum(w[codes == g]) for g in range(5)], atol=1e-12)
    assert total(w) == pytest.approx(math.fsum(w), abs=1e-12)
    # Compensated: 1e16 + 1 - 1e16 is 1, where plain float64 gives 0.
    assert sum_parts([np.array([1e16]), np.array([1.0]), np.array([-1e16])]) == 1.0
    assert np.isinf(sum_parts([np.array([1.0]), np.array([np.inf])]))


@pytest.mark.parametrize("form", ["dense", "csr", "csc"])
def test_no_float64_copy_of_a_float32_X(form):
    rng = np.random.default_rng(3)
    dense = rng.standard_normal((200_000, 20), dtype=np.float32)
    X, w = FORMATS[form](dense), rng.standard_normal(200_000)
    columns = Columns(X)
    tracemalloc.start()
    column_sums(X, w), columns.sums(w), column_squares(X), row_dots(X, np.ones(20))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    # A float64 copy of X would be 32 MB; blocks are 2 MB of values (8 MB
    # for row_dots' column blocks of CSC), plus the n-vectors it returns.
    assert peak < 16 * 2**20
