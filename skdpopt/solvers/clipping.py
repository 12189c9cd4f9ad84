"""Whether a public feature bound clips most rows: the release of the
private count planned in :mod:`skdpopt.plans.clipping`."""

import numpy as np

from .._clipping import row_abs_max
from .._data import clipped_total, map_rows
from ..mechanisms import gaussian_noise, laplace_noise


def far_rows_share(X, bound, check, rng):
    """The noisy share of rows with a value beyond ``check.far_factor`` times
    its column's bound.

    Parameters
    ----------
    X : ndarray, sparse matrix or dask.array.Array of shape (n_samples, n_features)
        The features before clipping.
    bound : float or ndarray of shape (n_features,)
        The public feature bound, or one per column.
    check : ClipCheck
        From the plan.
    rng : numpy.random.Generator

    Returns
    -------
    float
        ``(count + noise) / n_samples``; released, so it may be printed.
    """
    n_samples = X.shape[0]
    if np.ndim(bound):
        # In units of each column's bound.
        reach = map_rows(lambda rows: row_abs_max(rows, bound), X)
        far = reach > check.far_factor  # NaN is not far
    else:
        far = map_rows(row_abs_max, X) > check.far_factor * bound
    # A record moves the count by at most 1.
    count = clipped_total(far, 0.0, 1.0)
    draw = gaussian_noise if check.mechanism == "gaussian" else laplace_noise
    noisy = count + float(draw(rng, check.noise_multiplier, ()))
    return noisy / max(n_samples, 1)
