"""Clipping to public bounds never touches the input and keeps sparsity."""

import numpy as np
import scipy.sparse as sp

from skdpopt._clipping import clip_features, clip_targets


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


def test_clip_targets():
    np.testing.assert_array_equal(clip_targets([3, -0.5], 1.0), [1.0, -0.5])


def test_in_bounds_input_is_not_copied():
    # Large pre-scaled inputs should not be duplicated by a no-op clip.
    X = np.array([[0.5, -1.0], [1.0, 0.0]])
    assert clip_features(X, 1.0) is X
    Xs = sp.csr_matrix(X)
    assert clip_features(Xs, 1.0) is Xs
