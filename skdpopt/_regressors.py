"""What the linear regressors release after their fit: the fit check.

DPSGDRegressor and DPLasso both end, where their target was centred at a
released location, with the regression fit check; their plans hold its
noise (:mod:`skdpopt.plans.checks`, ``docs/privacy/targets.md``).
"""

from ._data import map_rows
from ._diagnostics import (
    FEWER_FEATURES,
    MORE_EPSILON,
    MORE_ROWS,
    warn_if_no_better_than_mean,
)
from ._sums import row_dots
from .solvers.checks import release_squared_error_check


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
