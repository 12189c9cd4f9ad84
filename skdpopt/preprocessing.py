"""Private scalers: DPStandardScaler and DPMinMaxScaler.

Both learn their statistics from values clipped to per-column bounds, so
that one record's influence is bounded.  The bounds are either public
(``bounds=``, free) or drawn privately from the data by the exponential
mechanism over a public grid (a documented share of the budget).  The
privacy argument is in ``docs/privacy/preprocessing.md``.
"""

import numpy as np
from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin
from sklearn.utils.validation import FLOAT_DTYPES, check_is_fitted

from ._base import (
    PRIVACY_PARAMETER_CONSTRAINTS,
    DPEstimatorMixin,
    check_features,
    keep_fit_on_error,
)
from ._bounds import private_bounds, private_location_scale, private_moments
from ._data import refuse_dask
from ._diagnostics import warn_if_bounds_wide, warn_if_coarse
from .plans.preprocessing import plan_scaler, reliable_epsilon

__all__ = ["DPMinMaxScaler", "DPStandardScaler"]


def _check_quantiles(quantiles):
    try:
        low, high = (float(q) for q in quantiles)
    except (TypeError, ValueError) as exc:
        raise ValueError(
            f"quantiles must be two ranks (low, high), got {quantiles!r}.") from exc
    if not 0.0 <= low < 0.5 < high <= 1.0:
        raise ValueError(
            "quantiles must satisfy 0 <= low < 0.5 < high <= 1, got "
            f"{quantiles!r}.")
    return low, high


def _check_bounds(bounds, n_features):
    """Public bounds as two float arrays of shape (n_features,)."""
    try:
        low, high = bounds
        low = np.broadcast_to(np.asarray(low, dtype=np.float64), (n_features,))
        high = np.broadcast_to(np.asarray(high, dtype=np.float64), (n_features,))
    except (TypeError, ValueError) as exc:
        raise ValueError(
            "bounds must be (low, high), each a number or one value per "
            f"feature ({n_features}), got {bounds!r}.") from exc
    if not (np.all(np.isfinite(low)) and np.all(np.isfinite(high))
            and np.all(low < high)):
        raise ValueError(
            f"bounds must be finite with low < high in every feature, got {bounds!r}.")
    return low.copy(), high.copy()


class _DPScaler(DPEstimatorMixin, OneToOneFeatureMixin, TransformerMixin,
                BaseEstimator):
    """What both scalers share: validation, bounds, the plan and the ledger."""

    _parameter_constraints = {
        **PRIVACY_PARAMETER_CONSTRAINTS,
        "bounds": [tuple, list, None],
        "quantiles": [tuple, list],
        "copy": ["boolean"],
    }

    def _moments(self):
        """Which clipped moments the fit releases: (sum, sum of squares)."""
        raise NotImplementedError

    def uses_privacy_budget(self):
        """Whether a fit with these parameters releases anything.

        With public ``bounds`` and no statistic to compute, nothing is
        read from the data; a private pipeline gives budget only to the
        steps that release something.

        Returns
        -------
        bool
        """
        return self.bounds is None or any(self._moments())

    def reliable_epsilon(self, n_samples, n_features, delta):
        """The smallest epsilon at which this scaler's private bounds find
        the data of ``n_samples`` rows and ``n_features`` columns
        (:func:`skdpopt.plans.preprocessing.reliable_epsilon`); 0 with
        public ``bounds``.  A private pipeline reads it to size the
        scaler's share of its budget.  Public quantities only.

        Parameters
        ----------
        n_samples, n_features : int
        delta : float
            The scaler's delta.

        Returns
        -------
        float
        """
        if self.bounds is not None or not (any(self._moments())
                                           or self._needs_bounds()):
            return 0.0
        return reliable_epsilon(n_samples=n_samples, n_features=n_features,
                                delta=delta, moments=self._moments())

    def _fit_statistics(self, X):
        """Plan, record in the ledger, draw bounds, release moments.

        Returns the bounds and the noisy unit moments (see
        :func:`skdpopt._bounds.private_moments`).
        """
        # Not yet on Dask: refused rather than gathered into memory.
        refuse_dask(self, X, reason="(its statistics are computed in memory)")
        X = check_features(self, X, dtype=FLOAT_DTYPES, ensure_all_finite=True)
        quantiles = _check_quantiles(self.quantiles)
        n_samples, n_features = X.shape
        public = None
        if self.bounds is not None:
            public = _check_bounds(self.bounds, n_features)
        self._warn_if_delta_too_large(n_samples)
        moments = self._moments()
        needs_bounds = any(moments) or self._needs_bounds()
        plan = plan_scaler(n_samples=n_samples, n_features=n_features,
                           epsilon=self.epsilon, delta=self.delta,
                           private_bounds=public is None and needs_bounds,
                           quantiles=quantiles, moments=moments)
        warn_if_coarse(self, plan.bounds, ["bounds"], public="bounds=(low, high)")
        rng = self._begin_release(plan)
        if public is not None:
            low, high = public
        elif plan.bounds is not None and any(moments):
            low, high = private_location_scale(X, plan.bounds, rng)
        elif plan.bounds is not None:
            low, high = private_bounds(X, plan.bounds, rng)
        else:  # nothing to compute: no bounds needed
            return plan, n_samples, None, None, None, None, (None, None)
        mean_unit, second_unit, noise_std = private_moments(
            X, low, high, plan.noise_multipliers, rng, plan.mechanism)
        return plan, n_samples, low, high, mean_unit, second_unit, noise_std

    def _needs_bounds(self):
        """Whether the fit needs bounds even without moments."""
        return False

    def _validate_for_transform(self, X):
        check_is_fitted(self)
        copy = self.copy
        return check_features(self, X, dtype=FLOAT_DTYPES, reset=False,
                             copy=copy, ensure_all_finite=True)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        return tags


class DPStandardScaler(_DPScaler):
    """Standardise features with a differentially private mean and scale.

    Each value is clipped to its column's bounds, and the clipped sum and
    sum of squares of every column are released with Gaussian noise
    (Laplace when ``delta=0``) calibrated by the library's accountant.  The
    bounds are public when given (``bounds=``, no privacy cost); otherwise
    they are drawn privately, per column, as a location and a scale chosen
    by the exponential mechanism over public grids of candidates, which
    costs half of the budget (in zCDP units,
    ``plans.preprocessing.BOUNDS_SHARE``); of the rest, three quarters go
    to the sum and one quarter to the sum of squares (a model feels an
    error of the mean more than one of the scale).  The privacy argument
    is in ``docs/privacy/preprocessing.md``.

    Parameters
    ----------
    epsilon : float, default=1.0
        Privacy budget of the fit, in (0, 1e6]; ``np.inf`` computes the same
        statistics without noise.  Inside a private pipeline the pipeline
        sets it.
    delta : float, default=1e-5
        Failure probability; ``0`` gives pure DP (Laplace noise).
    bounds : (low, high) or None, default=None
        Public bounds of the features: each a number or one value per
        feature.  Values are clipped to them before the statistics are
        computed.  Give them when they are known without looking at the
        data (a sensor's range, an age range): it saves the bounds' share
        of the budget.  ``None``: drawn privately: a private location of
        each column (its median, to about 1e-4 of its magnitude) and a
        private scale (about its median absolute deviation from the
        location, to a factor 2), so a column far from 0 relative to its
        spread (years, prices) gets bounds about its range.  A
        :class:`~skdpopt.exceptions.UtilityWarning` says when released
        bounds are more than 20 released standard deviations wide.
    quantiles : (float, float), default=(0.01, 0.99)
        Where the private bounds are, read as ranks of a normal
        distribution with the released location and scale: the default
        puts them 3.45 scales either side of the location
        (``privacy_plan_.bounds.spread``).
    with_mean : bool, default=True
        Centre the data.
    with_std : bool, default=True
        Scale the data to unit variance.
    copy : bool, default=True
        Work on a copy of the input in ``transform``.
    random_state : None, int or numpy.random.RandomState, default=None
        Source of the noise.  An int reproduces the fit (for tests and
        documentation); ``None`` (use it for a real release) and a
        RandomState draw fresh entropy from the operating system at every
        fit, so clones never share noise.

    Attributes
    ----------
    mean_ : ndarray of shape (n_features,) or None
        Private mean of the clipped features (None when ``with_mean`` and
        ``with_std`` are both False).
    var_ : ndarray of shape (n_features,) or None
        Private variance of the clipped features.
    scale_ : ndarray of shape (n_features,) or None
        ``sqrt(var_)``; where the variance cannot be told from zero, the
        noise level of the variance instead (in the column's units).
    bounds_ : tuple of two ndarray of shape (n_features,) or None
        The bounds the values were clipped to (public or released); None
        when nothing was computed (``with_mean=with_std=False``).
    n_samples_seen_ : int
        Number of rows (public).
    n_features_in_ : int
        Number of features seen in ``fit``.
    feature_names_in_ : ndarray of str
        Only when X has string column names.
    privacy_plan_ : ScalerPlan
        What the fit released: the bounds draws, the noise of the moments.
    privacy_spent_ : PrivacySpent
        The guarantee of the fit, from the plan's event.

    Examples
    --------
    >>> import numpy as np
    >>> from skdpopt import DPStandardScaler
    >>> X = np.random.default_rng(0).normal(50, 10, size=(10000, 2))
    >>> scaler = DPStandardScaler(epsilon=1.0, delta=1e-7, random_state=0).fit(X)
    >>> np.round(scaler.mean_, 0), np.round(scaler.scale_, 0)
    (array([50., 50.]), array([10., 10.]))
    """

    _parameter_constraints = {
        **_DPScaler._parameter_constraints,
        "with_mean": ["boolean"],
        "with_std": ["boolean"],
    }

    def __init__(self, *, epsilon=1.0, delta=1e-5, bounds=None,
                 quantiles=(0.01, 0.99), with_mean=True, with_std=True, copy=True,
                 random_state=None):
        self.epsilon = epsilon
        self.delta = delta
        self.bounds = bounds
        self.quantiles = quantiles
        self.with_mean = with_mean
        self.with_std = with_std
        self.copy = copy
        self.random_state = random_state

    def _moments(self):
        # The variance needs the mean: the sum is released for either.
        return (self.with_mean or self.with_std, self.with_std)

    @keep_fit_on_error
    def fit(self, X, y=None):
        """Compute the private mean and scale.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data (finite values).
        y : None
            Ignored.

        Returns
        -------
        self : DPStandardScaler
        """
        self._validate_params()
        plan, n, low, high, mean_unit, second_unit, noise_std = (
            self._fit_statistics(X))
        mean = var = scale = None
        if low is not None:
            centre, half = low / 2.0 + high / 2.0, high / 2.0 - low / 2.0
        if mean_unit is not None:
            mean = centre + half * mean_unit
        if second_unit is not None:
            var_unit = np.maximum(second_unit - mean_unit**2, 0.0)
            # Below the noise on the second moment a variance cannot be
            # told from 0: such a column is scaled by the noise level in its
            # own units, never by 1 (the units are arbitrary), so that the
            # scaled values stay within a public multiple of the bounds.
            floor = noise_std[1] if noise_std[1] else 0.0
            var = half**2 * var_unit
            scale = half * np.sqrt(np.maximum(var_unit, floor))
            scale = np.where(scale > 0, scale, 1.0)
            # Warned from the released spread, 0 where the noise hides it
            # (the bounds are then too wide to tell it: a ratio of inf).
            with np.errstate(divide="ignore"):
                warn_if_bounds_wide(self, low, high, half * np.sqrt(
                    np.where(var_unit >= floor, var_unit, 0.0)))
        self.mean_ = mean if self.with_mean or self.with_std else None
        self.var_ = var
        self.scale_ = scale
        self.bounds_ = (low, high) if low is not None else None
        self.n_samples_seen_ = n
        self._finish_release(plan)
        return self

    def transform(self, X, copy=None):
        """Standardise X with the private mean and scale.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Data to scale.
        copy : bool, default=None
            Ignored beyond ``self.copy`` (kept for scikit-learn's signature).

        Returns
        -------
        ndarray of shape (n_samples, n_features)
        """
        X = self._validate_for_transform(X)
        if self.bounds_ is not None:
            # The statistics describe values clipped to the bounds; clipping
            # here too keeps every output within a public multiple of the
            # bounds' width over the scale, even where a private bound fell
            # inside the data.
            X = np.clip(X, *self.bounds_)
        if self.with_mean:
            X = X - self.mean_
        if self.with_std:
            X = X / self.scale_
        return X

    def inverse_transform(self, X, copy=None):
        """Undo :meth:`transform`.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Scaled data.
        copy : bool, default=None
            Ignored beyond ``self.copy``.

        Returns
        -------
        ndarray of shape (n_samples, n_features)
        """
        X = self._validate_for_transform(X)
        if self.with_std:
            X = X * self.scale_
        if self.with_mean:
            X = X + self.mean_
        return X


class DPMinMaxScaler(_DPScaler):
    """Scale features to a range using private (or public) bounds.

    The bounds play the role of scikit-learn's data minimum and maximum.
    Given (``bounds=``), the fit reads nothing from the data and costs
    nothing.  Otherwise each column's lower and upper bounds are two
    private quantiles, drawn by the exponential mechanism over a public
    grid of candidates with the whole budget (see
    ``docs/privacy/preprocessing.md``).

    Parameters
    ----------
    epsilon : float, default=1.0
        Privacy budget of the bounds, in (0, 1e6]; ``np.inf`` picks the
        best candidates without noise.
    delta : float, default=1e-5
        Failure probability of the guarantee (the draws are pure DP; delta
        lets the accountant compose them more tightly).
    bounds : (low, high) or None, default=None
        Public bounds: each a number or one value per feature.
    quantiles : (float, float), default=(0.01, 0.99)
        Ranks the private bounds aim at (moved inwards when the rows and
        the budget are too few, at most to 0.25 and 0.75).
    feature_range : (float, float), default=(0, 1)
        Range of the transformed data.
    clip : bool, default=False
        Clip transformed values to ``feature_range``.
    copy : bool, default=True
        Work on a copy of the input in ``transform``.
    random_state : None, int or numpy.random.RandomState, default=None
        Source of the noise.  An int reproduces the fit (for tests and
        documentation); ``None`` (use it for a real release) and a
        RandomState draw fresh entropy from the operating system at every
        fit, so clones never share noise.

    Attributes
    ----------
    data_min_ : ndarray of shape (n_features,)
        Lower bounds (public or released), mapped to ``feature_range[0]``.
    data_max_ : ndarray of shape (n_features,)
        Upper bounds, mapped to ``feature_range[1]``.
    data_range_ : ndarray of shape (n_features,)
        ``data_max_ - data_min_``.
    scale_ : ndarray of shape (n_features,)
        ``X * scale_ + min_`` is the transform.
    min_ : ndarray of shape (n_features,)
        See ``scale_``.
    bounds_ : tuple of two ndarray of shape (n_features,)
        ``(data_min_, data_max_)``.
    n_samples_seen_ : int
        Number of rows (public).
    n_features_in_ : int
        Number of features seen in ``fit``.
    feature_names_in_ : ndarray of str
        Only when X has string column names.
    privacy_plan_ : ScalerPlan
        What the fit released: the bounds draws, or nothing.
    privacy_spent_ : PrivacySpent
        The guarantee of the fit; zero when the bounds are public.

    Examples
    --------
    >>> import numpy as np
    >>> from skdpopt import DPMinMaxScaler
    >>> X = np.array([[0.0, 10.0], [5.0, 20.0], [10.0, 30.0]])
    >>> DPMinMaxScaler(bounds=(0, [10, 30])).fit_transform(X)[:, 0]
    array([0. , 0.5, 1. ])
    """

    _parameter_constraints = {
        **_DPScaler._parameter_constraints,
        "feature_range": [tuple],
        "clip": ["boolean"],
    }

    def __init__(self, *, epsilon=1.0, delta=1e-5, bounds=None,
                 quantiles=(0.01, 0.99), feature_range=(0, 1), clip=False,
                 copy=True, random_state=None):
        self.epsilon = epsilon
        self.delta = delta
        self.bounds = bounds
        self.quantiles = quantiles
        self.feature_range = feature_range
        self.clip = clip
        self.copy = copy
        self.random_state = random_state

    def _moments(self):
        return (False, False)

    def _needs_bounds(self):
        return True

    def uses_privacy_budget(self):
        """Whether a fit releases anything: only the private bounds.

        Returns
        -------
        bool
        """
        return self.bounds is None

    @keep_fit_on_error
    def fit(self, X, y=None):
        """Compute (or take) the bounds.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data (finite values).
        y : None
            Ignored.

        Returns
        -------
        self : DPMinMaxScaler
        """
        self._validate_params()
        out_low, out_high = self.feature_range
        if not out_low < out_high:
            raise ValueError(
                "Minimum of desired feature range must be smaller than maximum. "
                f"Got {self.feature_range!r}.")
        plan, n, low, high, *_ = self._fit_statistics(X)
        self.data_min_, self.data_max_ = low, high
        self.data_range_ = high - low
        self.scale_ = (out_high - out_low) / self.data_range_
        self.min_ = out_low - low * self.scale_
        self.bounds_ = (low, high)
        self.n_samples_seen_ = n
        self._finish_release(plan)
        return self

    def transform(self, X):
        """Scale X to ``feature_range``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Data to scale.

        Returns
        -------
        ndarray of shape (n_samples, n_features)
        """
        X = self._validate_for_transform(X)
        X = X * self.scale_ + self.min_
        if self.clip:
            np.clip(X, self.feature_range[0], self.feature_range[1], out=X)
        return X

    def inverse_transform(self, X):
        """Undo :meth:`transform`.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Scaled data.

        Returns
        -------
        ndarray of shape (n_samples, n_features)
        """
        X = self._validate_for_transform(X)
        return (X - self.min_) / self.scale_

