"""The checks a classifier fit releases to warn about itself: the fit
check and the clip check (:mod:`skdpopt.plans.checks`), with the noise of
their plan."""

from functools import partial

import numpy as np

from .._clipping import clipped_share
from .._data import map_rows, vector_total
from ..mechanisms import gaussian_noise, laplace_noise


def log_likelihood_gains(log_proba, targets, log_prior, bound):
    """Each row's gain in log-likelihood over the prior, clipped.

    ``clip(log p(y_i | x_i) - log prior(y_i), -bound, bound)``, NaN as 0:
    every term lies in ``[-bound, bound]``, so replacing one record moves
    their (weighted, weights in [0, 1]) sum by at most ``2 bound``.

    Parameters
    ----------
    log_proba : ndarray or dask.array.Array of shape (n_samples, n_classes)
        The fitted model's log-probabilities on the training rows.
    targets : list of ndarray or dask.array.Array
        The +-1 targets (one problem for two classes, else one per class).
    log_prior : ndarray of shape (n_classes,)
        Log of the released class shares.
    bound : float

    Returns
    -------
    ndarray or dask.array.Array of shape (n_samples,)
    """
    # log 0 - log 0 is NaN (counted 0 below), inf - inf too.
    with np.errstate(invalid="ignore"):
        gains = log_proba - log_prior
        if len(targets) == 1:
            term = np.where(targets[0] > 0, gains[:, 1], gains[:, 0])
        else:
            term = sum(np.where(target > 0, gains[:, k], 0.0)
                       for k, target in enumerate(targets))
        term = np.clip(term, -bound, bound)
    return np.where(np.isnan(term), 0.0, term)


def release_fit_check(log_proba, targets, log_prior, weights, plan, rng):
    """The sum of the rows' clipped gains (weighted), plus the plan's noise.

    Parameters
    ----------
    log_proba, targets, log_prior
        As :func:`log_likelihood_gains`.
    weights : ndarray or None
        Rows' weights in [0, 1] (class and sample weights over their
        bounds); None: all 1.
    plan : FitCheckPlan
    rng : numpy.random.Generator

    Returns
    -------
    float
    """
    gains = log_likelihood_gains(log_proba, targets, log_prior, plan.bound)
    released = vector_total(gains if weights is None else gains * weights)
    if plan.noise is not None:
        noise = gaussian_noise if plan.noise == "gaussian" else laplace_noise
        released += noise(rng, plan.noise_scale, 1)[0]
    return float(released)


def release_clip_check(X, bound, plan, rng):
    """The sum over the rows of their share of features outside
    ``[-bound, bound]`` (each term in [0, 1]), plus the plan's noise.

    Parameters
    ----------
    X : ndarray, sparse matrix or dask.array.Array
    bound : float
    plan : ClipCheckPlan
    rng : numpy.random.Generator

    Returns
    -------
    float
    """
    released = vector_total(map_rows(partial(clipped_share, bound=bound), X))
    if plan.noise is not None:
        noise = gaussian_noise if plan.noise == "gaussian" else laplace_noise
        released += noise(rng, plan.noise_scale, 1)[0]
    return float(released)
