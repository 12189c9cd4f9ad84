"""Whether a public feature bound clips most rows: the planned private count
(:mod:`skdpopt.plans.clipping`) and its warning.

Shared by the estimators that clip their features to a public bound in
``fit`` and apply the same clip in ``predict``.
"""

import warnings

from ._auto_bounds import row_abs_max
from ._data import clipped_total, map_rows
from .exceptions import UtilityWarning
from .mechanisms import gaussian_noise, laplace_noise
from .plans.clipping import FAR_FACTOR, MOST


def far_rows_share(X, bound, check, rng):
    """The noisy share of rows with a value beyond ``FAR_FACTOR * bound``.

    Parameters
    ----------
    X : ndarray, sparse matrix or dask.array.Array of shape (n_samples, n_features)
        The features before clipping.
    bound : float
        The public feature bound.
    check : ClipCheck
        From the plan.
    rng : numpy.random.Generator

    Returns
    -------
    float
        ``(count + noise) / n_samples``; released, so it may be printed.
    """
    n_samples = X.shape[0]
    far = map_rows(row_abs_max, X) > FAR_FACTOR * bound  # NaN is not far
    # A record moves the count by at most 1.
    count = clipped_total(far, 0.0, 1.0)
    draw = gaussian_noise if check.mechanism == "gaussian" else laplace_noise
    noisy = count + float(draw(rng, check.noise_multiplier, ()))
    return noisy / max(n_samples, 1)


def warn_if_clipped(estimator, share, *, noise, name="feature_bound",
                    stacklevel=3):
    """Warn with :class:`UtilityWarning` when the released share of rows far
    beyond the bound is above one half; name the levers.

    Parameters
    ----------
    estimator : object
        Named in the message.
    share : float
        From :func:`far_rows_share` (a released value).
    noise : float
        Standard deviation of the share's noise (public): a share noisier
        than ``1 / 8`` decides nothing (a fit that noisy warns that its
        noise dominates anyway), so it never warns then.
    name : str, default="feature_bound"
        The estimator's bound parameter.
    stacklevel : int, default=3

    Returns
    -------
    bool
        Whether it warned.
    """
    if not (share > MOST and noise <= 1.0 / 8.0):
        return False
    warnings.warn(
        f"{type(estimator).__name__}: most rows have a value beyond "
        f"{FAR_FACTOR:g} times {name}={getattr(estimator, name + '_', None):g} "
        "(a private count), so clipping to it, in fit and in predict, keeps "
        "little of those columns. Levers: put a DP scaler before it in a "
        "private pipeline (make_private_pipeline(DPStandardScaler(), ...)), or "
        f"pass a public {name} of the features' scale.",
        UtilityWarning, stacklevel=stacklevel)
    return True
