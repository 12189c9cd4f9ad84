"""What the linear regressors release around their fit.

DPLasso releases its bounds before it fits (where "auto"; the check of a
public feature bound otherwise), and DPSGDRegressor and DPLasso both end,
where their target was centred at a released location, with the
regression fit check; their plans hold the noise
(:mod:`skdpopt.plans.targets`, :mod:`skdpopt.plans.clipping`,
:mod:`skdpopt.plans.checks`, ``docs/privacy/targets.md``).
"""

from ._bounds import private_bounds
from ._clipping import row_abs_max
from ._data import map_rows
from ._diagnostics import (
    FEWER_FEATURES,
    MORE_EPSILON,
    MORE_ROWS,
    warn_if_no_better_than_mean,
)
from ._sums import row_dots
from .solvers.checks import release_squared_error_check
from .solvers.clipping import far_rows_share
from .solvers.targets import release_location_scale


def release_lasso_bounds(estimator, X, y, plan, rng, feature_bound):
    """DPLasso's bounds: the public ones, or the releases the plan budgeted
    for "auto"; with a public feature bound, the clip check.

    The target's location and scale come first (:mod:`skdpopt.solvers.targets`),
    then the feature bound (a rank of the rows' largest absolute values)
    or, for a public one, the noisy share of rows far beyond it.

    Parameters
    ----------
    estimator : DPLasso
        Reads ``target_bound``.
    X : ndarray, sparse matrix or dask.array.Array of shape (n_samples, n_features)
        The features before clipping.
    y : ndarray or dask.array.Array of shape (n_samples,)
        The targets before centring.
    plan : GreedyCDPlan or LassoFrankWolfePlan
        Reads ``target_draws``, ``bounds_draws`` and ``clip_check``.
    rng : numpy.random.Generator
    feature_bound : "auto", float or ndarray of shape (n_features,)
        The public bound (one per column for an array), or "auto".

    Returns
    -------
    target_location, target_bound : float
    feature_bound : float or ndarray of shape (n_features,)
    far_rows_share : float or None
        Released (``None`` without a clip check).
    """
    location, target_bound = 0.0, estimator.target_bound
    if plan.target_draws is not None:
        location, target_bound = release_location_scale(y, plan.target_draws, rng)
    if plan.bounds_draws is not None:
        # A per-record statistic, computed block by block on Dask arrays.
        feature_bound = float(private_bounds([map_rows(row_abs_max, X)],
                                             plan.bounds_draws, rng)[0, 0])
    share = None
    if plan.clip_check is not None:
        share = far_rows_share(X, feature_bound, plan.clip_check, rng)
    return location, float(target_bound), feature_bound, share


def check_fit(estimator, X, targets, coef, intercept, plan, rng, levers):
    """Release the fit check of the linear model ``(coef, intercept)`` on
    the rows X (as the solver read them) and the centred, scaled
    ``targets`` (the released location is the constant 0), and warn with
    the ``levers`` unless the model is clearly better than both the
    location and the released mean.

    Parameters
    ----------
    estimator : DPSGDRegressor or DPLasso
        Named in the warning.
    X : ndarray, sparse matrix or dask.array.Array
    targets : ndarray or dask.array.Array
    coef : ndarray of shape (n_features,)
    intercept : float
        The model, in the targets' units.
    plan : RegressionCheckPlan
    rng : numpy.random.Generator
    levers : sequence of str

    Returns
    -------
    bool
        Whether it warned.
    """
    # row_dots converts a block of X at a time: a float32 X is never
    # copied whole into float64 for the products.
    predictions = map_rows(lambda rows: row_dots(rows, coef) + intercept, X)
    over_location, over_mean = release_squared_error_check(
        predictions, targets, plan, rng)
    clear = plan.clearly_better(over_location, over_mean, X.shape[0])
    return warn_if_no_better_than_mean(estimator, clear, levers=levers)


def check_sgd_fit(estimator, X, targets, weighting, plan, rng):
    """DPSGDRegressor's fit check: its model of the centred and scaled
    targets (before it is moved back), whose trivial model is 0; the
    signature of the classifiers' ``check_fit`` (``weighting`` unused)."""
    return check_fit(estimator, X, targets[0], estimator.coef_[0],
                     float(estimator.intercept_[0]), plan, rng,
                     (MORE_EPSILON, MORE_ROWS, FEWER_FEATURES))
