"""Clipping data to public bounds, the way sensitivity is bounded.

Never computed from the data: the bounds are constructor parameters.  The
input is never modified; dense and sparse inputs keep their format.
"""

import numpy as np
import scipy.sparse as sp


def clip_features(X, bound):
    """X with every entry clipped to ``[-bound, bound]``.

    A copy when some entry is out of bounds; X itself (never written to)
    when all are inside, which spares a copy of a large pre-scaled input.
    Sparse input stays sparse (zeros are inside the bounds).
    """
    values = X.data if sp.issparse(X) else X
    # min/max reduce without a temporary array the size of X.
    if values.size == 0 or (values.min() >= -bound and values.max() <= bound):
        return X
    if sp.issparse(X):
        X = X.copy()
        np.clip(X.data, -bound, bound, out=X.data)
        return X
    return np.clip(X, -bound, bound)


def clip_targets(y, bound):
    """Copy of y clipped to ``[-bound, bound]``."""
    return np.clip(np.asarray(y, dtype=float), -bound, bound)
