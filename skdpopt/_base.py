"""What every skdpopt estimator shares: privacy parameters, randomness, and
the record of what a fit spent."""

import functools
import warnings
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.utils._param_validation import Interval, Options
from sklearn.utils.validation import _num_samples, validate_data

from .accounting import PrivacySpent

# A finite epsilon above this promises nothing (exp(1e6)) and only strains
# calibration's arithmetic; np.inf says "no privacy" honestly.
MAX_EPSILON = 1e6

PRIVACY_PARAMETER_CONSTRAINTS = {
    # np.inf is allowed: it means "no privacy", and must be asked for.
    "epsilon": [
        Interval(Real, 0, MAX_EPSILON, closed="right"),
        Options(Real, {np.inf}),
    ],
    "delta": [Interval(Real, 0, 1, closed="left")],
    "random_state": ["random_state"],
}


def keep_fit_on_error(fit):
    """Make ``fit`` all-or-nothing: if it raises, the estimator is restored.

    The state before the call (its ``__dict__``, shallow) comes back, so a
    failed fit after a successful one leaves the old fit usable and
    unchanged, and a failed first fit leaves the estimator unfitted.  Fits
    assign new fitted attributes rather than writing into old ones, which is
    what makes the shallow copy enough.  Nothing is released by a fit that
    raises, so restoring costs no privacy.
    """

    @functools.wraps(fit)
    def wrapper(self, *args, **kwargs):
        before = dict(self.__dict__)
        try:
            return fit(self, *args, **kwargs)
        except BaseException:
            self.__dict__.clear()
            self.__dict__.update(before)
            raise

    return wrapper


def validate_training_data(estimator, X, y, **kwargs):
    """``validate_data(estimator, X, y, **kwargs)`` with errors that name X or y.

    scikit-learn's messages for rows that do not match, no rows, or
    non-numeric entries do not say which argument is at fault; these do,
    and keep scikit-learn's wording after it.
    """
    try:
        n_rows, n_targets = _num_samples(X), _num_samples(y)
    except TypeError:
        n_rows = n_targets = None  # left to validate_data's own message
    if n_rows is not None and n_rows != n_targets:
        raise ValueError(
            f"y has {n_targets} entries but X has {n_rows} rows; pass one target "
            "per row (found input variables with inconsistent numbers of samples)."
        )
    try:
        X, y = validate_data(estimator, X, y, **kwargs)
        if kwargs.get("y_numeric") and y.dtype.kind in "OUS":
            # validate_data converts only object arrays; strings stay strings.
            y = y.astype(np.float64)
        return X, y
    except ValueError as exc:
        message = str(exc)
        if "0 sample(s)" in message:
            raise ValueError(f"X has no rows: {message}") from exc
        if "could not convert" in message:
            culprit = "y"
            if not sp.issparse(X) and np.asarray(X).dtype.kind in "OUS":
                culprit = "X"
            raise ValueError(f"{culprit} must be numeric: {message}") from exc
        raise


# Bits drawn from a RandomState to seed a fit's generator.
_SEED_BYTES = 32


def make_generator(random_state):
    """One ``numpy.random.Generator`` for a whole fit.

    Parameters
    ----------
    random_state : None, int, numpy.random.RandomState or numpy.random.Generator
        ``None`` draws fresh entropy from the operating system, which is what
        a real private release should do: a fixed seed lets anyone who knows
        it reproduce (and so subtract) the noise.  A RandomState seeds the
        generator with 256 bits drawn from it (it advances), which keep all
        of its entropy (an unseeded RandomState holds 128 bits from the
        operating system); a Generator is used as is.

    Returns
    -------
    numpy.random.Generator
    """
    if random_state is None or isinstance(random_state, Integral):
        return np.random.default_rng(random_state)
    if isinstance(random_state, np.random.RandomState):
        # Not a 31- or 32-bit integer seed: that would leave few enough
        # noise streams to try them all.
        entropy = int.from_bytes(random_state.bytes(_SEED_BYTES), "little")
        return np.random.default_rng(np.random.SeedSequence(entropy))
    if isinstance(random_state, np.random.Generator):
        return random_state
    raise ValueError(
        "random_state must be None, an int or a numpy RandomState, got "
        f"{random_state!r}"
    )


class DPEstimatorMixin:
    """Mixin for estimators that take ``epsilon`` and ``delta``.

    Provides the checks and bookkeeping every private estimator needs; the
    subclass's ``_parameter_constraints`` should include
    ``PRIVACY_PARAMETER_CONSTRAINTS``.
    """

    @property
    def _is_private(self):
        return self.epsilon != np.inf

    def _warn_if_delta_too_large(self, n_samples):
        # A mechanism that publishes one random record is (0, 1/n)-DP, so a
        # delta of 1/n or more promises nothing.
        if self._is_private and self.delta >= 1.0 / n_samples:
            warnings.warn(
                f"delta={self.delta} is not below 1/n_samples={1.0 / n_samples:.3g}; "
                "such a guarantee allows releasing records outright. "
                "Choose delta much smaller than 1/n_samples.",
                UserWarning,
                stacklevel=3,
            )

    def _record_spent(self, accountant):
        """Set ``privacy_spent_`` from the run's accountant."""
        if not self._is_private:
            self.privacy_spent_ = PrivacySpent(np.inf, 0.0, accountant.relation)
            return
        spent = accountant.spent(self.delta)
        if spent.epsilon > self.epsilon * (1 + 1e-9):
            raise RuntimeError(  # a bug in calibration, never a user error
                f"fit spent epsilon={spent.epsilon} above the requested "
                f"{self.epsilon}"
            )
        self.privacy_spent_ = spent


class LinearClassifierMixin:
    """``predict`` from ``decision_function`` for the linear classifiers."""

    def predict(self, X):
        """Predict class labels.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Samples to classify.

        Returns
        -------
        ndarray of shape (n_samples,)
            Predicted labels, taken from ``classes_``.
        """
        scores = self.decision_function(X)
        if scores.ndim == 1:
            return self.classes_[(scores > 0).astype(int)]
        return self.classes_[np.argmax(scores, axis=1)]
