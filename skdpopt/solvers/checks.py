"""The checks a fit releases to warn about itself: the classifiers' fit
check and clip check, the regressors' fit check
(:mod:`skdpopt.plans.checks`), with the noise of their plan."""

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
    return _noisy_total(gains if weights is None else gains * weights,
                        plan.noise, plan.noise_scale, rng)


def release_group_fit_check(log_proba, targets, codes, n_groups, log_prior,
                            weights, plan, rng):
    """Each group's sum of the rows' clipped gains (weighted), plus the
    plan's noise on each.

    A replaced record moves one group's sum by at most ``2 bound``, or two
    groups' sums by at most ``bound`` each (its group changed): at most
    ``2 bound`` in l1 and in l2, the sensitivity of one sum, so every
    coordinate gets the plan's noise (``docs/privacy/dpminimax.md``).

    Parameters
    ----------
    log_proba, targets, log_prior, weights
        As :func:`release_fit_check` (in memory).
    codes : ndarray of int of shape (n_samples,)
        Group of each row, in ``range(n_groups)``.
    n_groups : int
    plan : FitCheckPlan
    rng : numpy.random.Generator

    Returns
    -------
    ndarray of shape (n_groups,)
    """
    gains = log_likelihood_gains(log_proba, targets, log_prior, plan.bound)
    if weights is not None:
        gains = gains * weights
    released = np.bincount(codes, weights=gains, minlength=n_groups).astype(float)
    if plan.noise is not None:
        draw = gaussian_noise if plan.noise == "gaussian" else laplace_noise
        released += draw(rng, plan.noise_scale, n_groups)
    return released


# The regressors' fit check reads targets clipped to this many target
# scales: beyond any scale a fit meets, it only keeps the squares finite
# (1e6 squared is far from overflow); each gain is clipped far tighter.
TARGET_CLIP = 1e6


def squared_error_gains(predictions, targets, bound, constant=0.0):
    """Each row's gain in squared error of the model over a constant,
    clipped.

    ``clip((t_i - c)^2 - (t_i - f_i)^2, -bound, bound) = clip((f_i - c)
    (2 (t_i - c) - (f_i - c)), -bound, bound)``, with the targets ``t_i``
    centred at the released location and divided by the target's scale
    (``c = 0``: the location).  Every term lies in ``[-bound, bound]``, so
    replacing one record moves their sum by at most ``2 bound``.  Targets
    are clipped to ``TARGET_CLIP`` (a per-record map: a target that far
    counts as clipped there) and predictions to ``2 TARGET_CLIP + 1``
    around c, which changes no clipped gain for ``bound <= 1`` (beyond that
    prediction the gain is below -1 for every target within the clip) and
    keeps every product finite; a NaN prediction counts 0.

    Parameters
    ----------
    predictions : ndarray or dask.array.Array of shape (n_samples,)
        The fitted model on the training rows, in the targets' units.
    targets : ndarray or dask.array.Array of shape (n_samples,)
        The centred and scaled training targets.
    bound : float
        At most 1.
    constant : float, default=0.0
        The constant c, public or released, with ``|c| <= 1``.

    Returns
    -------
    ndarray or dask.array.Array of shape (n_samples,)
    """
    t = np.clip(targets, -TARGET_CLIP, TARGET_CLIP) - constant
    f = np.clip(predictions - constant, -2.0 * TARGET_CLIP - 1.0,
                2.0 * TARGET_CLIP + 1.0)
    gains = np.clip(f * (2.0 * t - f), -bound, bound)
    return np.where(np.isnan(gains), 0.0, gains)


def clipped_targets(targets, bound):
    """The centred, scaled targets clipped to ``[-bound, bound]``: their
    sum moves by at most ``2 bound`` when one record is replaced (an
    infinite target, ``y - mu`` overflowing, clips to the bound).

    Parameters
    ----------
    targets : ndarray or dask.array.Array of shape (n_samples,)
    bound : float

    Returns
    -------
    ndarray or dask.array.Array of shape (n_samples,)
    """
    return np.clip(targets, -bound, bound)


def release_squared_error_check(predictions, targets, plan, rng):
    """The regression fit check's three releases, in order: the sum of the
    targets clipped to ``[-plan.mean_bound, plan.mean_bound]``, whose
    clipped mean ``m`` is the released mean; then the sums of the rows'
    clipped gains in squared error (:func:`squared_error_gains`) over the
    constant 0 (the location) and over ``m``; each plus the plan's noise.

    The mean is an earlier release when the gains over it are summed, so
    each of the three sums moves by at most its sensitivity (``2
    mean_bound``, ``2 bound``, ``2 bound``) when one record is replaced.

    Parameters
    ----------
    predictions, targets
        As :func:`squared_error_gains`.
    plan : RegressionCheckPlan
    rng : numpy.random.Generator

    Returns
    -------
    over_location, over_mean : float
        The released sums of gains.
    """
    n_samples = targets.shape[0]
    total = _noisy_total(clipped_targets(targets, plan.mean_bound),
                         plan.noise, plan.mean_noise_scale, rng)
    mean = float(np.clip(total / n_samples, -plan.mean_bound, plan.mean_bound))
    over_location = _noisy_total(squared_error_gains(predictions, targets, plan.bound),
                                 plan.noise, plan.noise_scale, rng)
    over_mean = _noisy_total(squared_error_gains(predictions, targets, plan.bound,
                                                 constant=mean),
                             plan.noise, plan.noise_scale, rng)
    return over_location, over_mean


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
    return _noisy_total(map_rows(partial(clipped_share, bound=bound), X),
                        plan.noise, plan.noise_scale, rng)


def _noisy_total(terms, noise, scale, rng):
    """The checks' release: the float64 total of the per-row terms plus
    noise of the given kind and scale (none for None)."""
    released = vector_total(terms)
    if noise is not None:
        draw = gaussian_noise if noise == "gaussian" else laplace_noise
        released += draw(rng, scale, 1)[0]
    return float(released)
