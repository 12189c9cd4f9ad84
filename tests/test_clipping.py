"""Clipping to public bounds never touches the input and keeps sparsity."""

from itertools import product

import numpy as np
import pytest
import scipy.sparse as sp

from skdpopt._clipping import clip_blocks, clip_features, clip_targets, row_abs_max


def test_dense_clipping_copies():
    X = np.array([[5.0, -5.0], [0.5, 0.0]])
    clipped = clip_features(X, 1.0)
    np.testing.assert_array_equal(clipped, [[1.0, -1.0], [0.5, 0.0]])
    assert X[0, 0] == 5.0


def test_sparse_clipping_keeps_format():
    X = sp.csr_matrix(np.array([[5.0, 0.0], [0.0, -0.3]]))
    clipped = clip_features(X, 1.0)
    assert sp.issparse(clipped) and clipped.format == "csr"
    np.testing.assert_array_equal(clipped.toarray(), [[1.0, 0.0], [0.0, -0.3]])
    assert X[0, 0] == 5.0


def test_per_column_bounds_clip_each_column_in_every_format():
    """One bound per column: dense, CSR and CSC alike, the input untouched,
    its format and dtype kept, and in float32 never above the bound (1.7 is
    rounded down, not to the nearest float32, which lies above it)."""
    X = np.array([[5.0, -5.0, 0.2], [0.5, 0.0, -3.0]])
    bounds = np.array([1.7, 2.0, 0.1])
    expected = np.clip(X, -bounds, bounds)
    for make in (np.asarray, sp.csr_matrix, sp.csc_matrix):
        data = make(X)
        clipped = clip_features(data, bounds)
        dense = clipped.toarray() if sp.issparse(clipped) else clipped
        np.testing.assert_array_equal(dense, expected)
        assert sp.issparse(clipped) == sp.issparse(data)
        assert (data.toarray() if sp.issparse(data) else data)[0, 0] == 5.0
        small = clip_features(make(X.astype(np.float32)), bounds)
        values = small.toarray() if sp.issparse(small) else small
        assert values.dtype == np.float32
        assert np.all(np.abs(values.astype(float)) <= bounds)
    inside = np.array([[1.0, -2.0, 0.1]])
    assert clip_features(inside, bounds) is inside


def test_row_reach_in_units_of_the_columns_bounds():
    X = np.array([[5.0, -1.0, 0.0], [0.5, 0.0, -0.3], [np.nan, 0.0, 0.0]])
    bounds = np.array([10.0, 0.5, 0.1])
    expected = [2.0, 3.0, np.nan]
    np.testing.assert_allclose(row_abs_max(X, bounds), expected)
    np.testing.assert_allclose(row_abs_max(sp.csr_matrix(X[:2]), bounds),
                               expected[:2])
    np.testing.assert_allclose(row_abs_max(X[:2]), [5.0, 0.5])


def test_clip_targets():
    np.testing.assert_array_equal(clip_targets([3, -0.5], 1.0), [1.0, -0.5])


def test_in_bounds_input_is_not_copied():
    # Large pre-scaled inputs should not be duplicated by a no-op clip.
    X = np.array([[0.5, -1.0], [1.0, 0.0]])
    assert clip_features(X, 1.0) is X
    Xs = sp.csr_matrix(X)
    assert clip_features(Xs, 1.0) is Xs


def test_logistic_simplex_clips_batches_like_a_clipped_copy():
    # Mirror descent clips each batch as it reads it instead of copying X,
    # DP-SGD a copy up front (at its own default bound); either fit must be
    # the one on X clipped up front, bit for bit.
    from skdpopt import DPLogisticSimplex

    rng = np.random.default_rng(3)
    X = 3.0 * rng.normal(size=(600, 5))
    y = (X[:, 0] + rng.normal(size=600) > 0).astype(int)
    for solver, data in product(("mirror_descent", "sgd"), (X, sp.csr_matrix(X))):
        params = dict(epsilon=2.0, delta=1e-6, solver=solver, random_state=0)
        raw = DPLogisticSimplex(**params).fit(data, y)
        clipped = clip_features(data, raw.feature_bound_)
        ref = DPLogisticSimplex(**params).fit(clipped, y)
        np.testing.assert_array_equal(raw.coef_, ref.coef_)
        np.testing.assert_array_equal(raw.intercept_, ref.intercept_)
    assert np.abs(X).max() > 1.0  # the input itself was left alone


def _reference_norms(X, offset):
    # math.hypot scales internally: exact to rounding at any magnitude.
    import math

    return np.array([math.hypot(*map(float, row), offset) for row in X])


def test_example_norms_do_not_overflow_or_underflow():
    from skdpopt._clipping import example_norms

    rng = np.random.default_rng(0)
    X = rng.normal(size=(8, 4))
    X[0] *= 1e200
    X[1] *= 1e300 / np.abs(X[1]).max()
    X[2] *= 1e-170
    X[3] = 0.0
    X[4, 0] = 1e-320  # subnormal entry in an otherwise normal row
    for offset in (0.0, 1.0):
        expected = _reference_norms(X, offset)
        for data in (X, sp.csr_matrix(X)):
            np.testing.assert_allclose(example_norms(data, offset), expected,
                                       rtol=1e-14)
    X32 = np.array([[3e19, -3e19, 1.0], [1.0, 2.0, 2.0]], dtype=np.float32)
    for data in (X32, sp.csr_matrix(X32)):
        norms = example_norms(data, 1.0)
        assert norms.dtype == np.float64
        np.testing.assert_allclose(norms, _reference_norms(X32, 1.0), rtol=1e-14)
    # Only a norm above the float64 maximum is infinite.
    assert example_norms(np.array([[1.5e308, 1.5e308]]))[0] == np.inf


def test_clip_scalars_clips_and_zeroes_nan():
    from skdpopt._clipping import clip_scalars

    values = np.array([np.nan, np.inf, -np.inf, 0.5, -3.0, 2.0])
    limits = np.array([1.0, 2.0, 3.0, 4.0, 0.0, 1.0])
    out = clip_scalars(values, limits)
    assert out is values
    np.testing.assert_array_equal(values, [0.0, 2.0, -3.0, 0.5, 0.0, 1.0])
    np.testing.assert_array_equal(clip_scalars(np.array([5.0, -5.0]), 2.0),
                                  [2.0, -2.0])


@pytest.mark.parametrize("sparse", [False, True])
def test_clip_blocks_bounds_each_rows_block_in_l2(sparse):
    """Each row's part in a block ends within the block's bound (the largest
    of its columns') in l2; one-hot rows and singleton blocks within their
    bounds are left alone, and the input is then returned as it is."""
    rng = np.random.default_rng(0)
    blocks = np.array([0, 1, 1, 1, 2, 2])
    bounds = np.array([2.0, 1.0, 1.0, 0.5, 1.0, 1.0])
    X = rng.uniform(-3, 3, size=(200, 6))
    X = np.clip(X, -bounds, bounds)  # the per-column clip comes first
    clipped = clip_blocks(sp.csr_matrix(X) if sparse else X, blocks, bounds)
    dense = clipped.toarray() if sparse else clipped
    for block, limit in ((0, 2.0), (1, 1.0), (2, 1.0)):
        norms = np.linalg.norm(dense[:, blocks == block], axis=1)
        assert norms.max() <= limit
        inside = np.linalg.norm(X[:, blocks == block], axis=1) <= limit
        np.testing.assert_array_equal(dense[inside][:, blocks == block],
                                      X[inside][:, blocks == block])
    one_hot = np.zeros((5, 6))
    one_hot[np.arange(5), [1, 2, 3, 1, 2]] = 1.0
    one_hot[:, 4] = 1.0
    same = sp.csr_matrix(one_hot) if sparse else one_hot
    assert clip_blocks(same, blocks, np.ones(6)) is same
