"""Clipping data to public bounds, the way sensitivity is bounded.

Never computed from the data: the bounds are constructor parameters.  The
input is never modified; dense and sparse inputs keep their format.
"""

import numpy as np
import scipy.sparse as sp


def clip_features(X, bound):
    """Copy of X with every entry clipped to ``[-bound, bound]``.

    Sparse input stays sparse (zeros are inside the bounds).
    """
    if sp.issparse(X):
        X = X.copy()
        np.clip(X.data, -bound, bound, out=X.data)
        return X
    return np.clip(X, -bound, bound)


def clip_targets(y, bound):
    """Copy of y clipped to ``[-bound, bound]``."""
    return np.clip(np.asarray(y, dtype=float), -bound, bound)
