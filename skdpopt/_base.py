"""What every skdpopt estimator shares: privacy parameters, randomness, and
the record of what a fit spent."""

import functools
import re
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from scipy.special import expit
from sklearn.base import clone, is_classifier, is_regressor
from sklearn.utils._param_validation import Interval, Options
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import _num_samples, check_is_fitted, validate_data

from . import ledger
from ._data import is_dask_collection, map_rows, refuse_dask
from ._validation import resolve_classes
from .accounting import compose, privacy_spent
from .exceptions import warn_at_caller

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
            result = fit(self, *args, **kwargs)
        except BaseException:
            _withdraw_if_nothing_drawn(self)
            self.__dict__.clear()
            self.__dict__.update(before)
            raise
        self.__dict__.pop("_open_release", None)
        return result

    return wrapper


def _withdraw_if_nothing_drawn(estimator):
    """Take a failed fit's record out of the ledgers if it released nothing.

    A fit records its plan before its solver reads the data, and its
    generator makes every random number of the fit (noise, samples,
    selections).  If the fit raised before that generator produced a single
    number, everything it computed was a function of the data and public
    quantities alone: no noisy quantity, hence nothing of the plan's
    releases, existed to leave the process.  Otherwise the record stays:
    the error (or a verbose line before it) may depend on noisy values.
    """
    opened = estimator.__dict__.get("_open_release")
    if opened is None:
        return
    handle, rng, state = opened
    if rng.bit_generator.state == state:
        ledger.withdraw(handle)


# Why an estimator, or one of its settings, reads rows otherwise than by
# the sums a Dask backend distributes.
_DASK_REFUSALS = {
    "DPMinimaxClassifier": (
        "(its saddle-point solver keeps a weight per row and updates all of "
        "them at every step)"),
    "DPLogisticSimplex": (
        "with solver='mirror_descent' (it reads disjoint batches of a random "
        "permutation of the rows; solver='frank_wolfe' is supported)"),
    "DPSGDRegressor": (
        "with sampling='single_pass' (it tracks which rows were seen; "
        "'poisson' and 'full' are supported)"),
    "DPSGDClassifier": (
        "with sampling='single_pass' (it tracks which rows were seen; "
        "'poisson' and 'full' are supported)"),
}


# What numpy's and scikit-learn's messages quote from the data: a value in
# quotes ("could not convert string to float: 'x'") or a list of values
# ("Found unknown categories ['x'] in column 0 during fit").
_QUOTED_VALUES = re.compile(r"""'[^']*'|"[^"]*"|\[[^\]]*\]""")


def withhold_values(message):
    """``message`` with every quoted value and list of values withheld.

    For messages of other libraries about the training data, which may
    quote a record's value; skdpopt's own messages name only public values.
    """
    return _QUOTED_VALUES.sub("<a value of the data, withheld>", message)


def raised_in_skdpopt(exc):
    """Whether ``exc`` was raised by skdpopt's code (whose messages print
    no private value) rather than by a library it called."""
    tb = exc.__traceback__
    if tb is None:
        return False
    while tb.tb_next is not None:
        tb = tb.tb_next
    return tb.tb_frame.f_globals.get("__name__", "").startswith("skdpopt")


def without_values(exc):
    """A copy of ``exc`` (same type when it takes a message) whose message
    withholds the values it quotes; raise it ``from None``, so that the
    traceback does not print the original."""
    message = withhold_values(str(exc))
    try:
        return type(exc)(message)
    except Exception:  # noqa: BLE001 (an exception type without a message)
        return ValueError(message)


def check_features(estimator, X, **kwargs):
    """``validate_data(estimator, X, **kwargs)`` whose errors quote no value
    of X (scikit-learn's quote a text found in a numeric column, or print
    a 1-d array whole)."""
    try:
        return validate_data(estimator, X, **kwargs)
    except ValueError as exc:
        raise ValueError(withhold_values(str(exc))) from None


def check_targets(estimator, y):
    """Check targets for ``estimator`` before anything is fitted on them.

    A private pipeline calls this with its last step before its first step
    fits: a target the model would refuse must not cost the budget that
    the earlier (private) steps release.  Regressors need finite numbers;
    classifiers need labels without missing values, inside a declared
    ``classes`` where there is one.  Messages quote no value of ``y``.

    Parameters
    ----------
    estimator : estimator
        The model that will be fitted on ``y``.
    y : array-like or None
        ``None`` (an unsupervised model) passes.
    """
    if y is None or is_dask_collection(y):
        return  # Dask targets are checked block by block by the model's fit
    y = np.asarray(y)
    if y.dtype.kind == "c":
        raise ValueError("Complex data not supported; y must be real.")
    if is_regressor(estimator):
        try:
            values = np.asarray(y, dtype=np.float64)
        except (TypeError, ValueError):
            raise ValueError("y must be numeric for a regressor.") from None
        if not np.all(np.isfinite(values)):
            raise ValueError("y contains NaN or infinity; a regressor needs "
                             "finite targets.")
    elif is_classifier(estimator):
        labels = np.asarray(y)
        missing = labels != labels  # NaN, as float or inside an object array
        if labels.dtype == object:
            missing = missing | np.equal(labels, None)
        if np.any(missing):
            raise ValueError("y has missing labels (NaN or None); every row "
                             "needs a label.")
        declared = estimator.get_params().get("classes")
        if declared is not None:
            resolve_classes(estimator, labels.ravel(), declared)


def validate_training_data(estimator, X, y, **kwargs):
    """``validate_data(estimator, X, y, **kwargs)`` with errors that name X or y.

    scikit-learn's messages for rows that do not match, no rows, or
    non-numeric entries do not say which argument is at fault; these do,
    and keep scikit-learn's wording after it.
    """
    # A Dask collection reaching here would be gathered into memory.
    refuse_dask(estimator, X, y, _DASK_REFUSALS.get(type(estimator).__name__))
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
        # numpy's and scikit-learn's wording, without the values they quote
        # (a text in a numeric column, say), and not chained to the
        # original, which a traceback would print.
        message = withhold_values(str(exc))
        if "0 sample(s)" in message:
            raise ValueError(f"X has no rows: {message}") from None
        if "could not convert" in message:
            culprit = "y"
            if not sp.issparse(X) and np.asarray(X).dtype.kind in "OUS":
                culprit = "X"
            raise ValueError(f"{culprit} must be numeric: {message}") from None
        raise ValueError(message) from None


def make_generator(random_state):
    """The ``numpy.random.Generator`` of one fit's noise.

    Parameters
    ----------
    random_state : None, int, numpy.random.RandomState or numpy.random.Generator
        An int seeds the generator, so that a fixed seed reproduces a fit
        exactly: for tests and documentation only, since anyone who knows
        the seed can reproduce (and so subtract) the noise.  Anything else
        (``None``, a RandomState, a Generator) draws fresh entropy from the
        operating system at every fit: scikit-learn's ``clone`` deep-copies
        a RandomState, so the clones that ``GridSearchCV`` or
        ``cross_validate`` fit would otherwise draw identical noise, and two
        releases with the same noise on overlapping data reveal the exact
        difference of their statistics.

    Returns
    -------
    numpy.random.Generator
    """
    if isinstance(random_state, Integral) and not isinstance(random_state, bool):
        return np.random.default_rng(random_state)
    if random_state is None or isinstance(
            random_state, (np.random.RandomState, np.random.Generator)):
        return np.random.default_rng()
    raise ValueError(
        "random_state must be None, an int or a numpy RandomState, got "
        f"{random_state!r}"
    )


def sampling_generator(random_state):
    """A ``numpy.random.Generator`` for post-processing (drawing records
    from a released model), where reproducibility costs no privacy.

    Parameters
    ----------
    random_state : None, int, numpy.random.RandomState or numpy.random.Generator
        ``None``: fresh entropy; an int: a seed; a RandomState: seeds the
        generator with 256 bits drawn from it (it advances), which keep all
        of its entropy; a Generator: used as is.

    Returns
    -------
    numpy.random.Generator
    """
    if isinstance(random_state, np.random.RandomState):
        # 256 bits from the RandomState (not one 31-bit integer, which would
        # leave only 2**31 streams).
        words = random_state.randint(0, 2**32, size=8, dtype=np.uint64)
        return np.random.default_rng(np.random.SeedSequence(words.tolist()))
    if isinstance(random_state, np.random.Generator):
        return random_state
    return make_generator(random_state)


class BudgetMixin:
    """How a private pipeline hands an estimator (or a nested pipeline)
    its budget: a configured copy, never a change to the object itself."""

    def with_budget(self, epsilon, delta):
        """An unfitted copy of this estimator that spends ``(epsilon, delta)``.

        How :class:`~skdpopt.PrivatePipeline` hands each private step (a
        nested private pipeline included) its share: this object is left
        as it is.

        Parameters
        ----------
        epsilon : float
            The copy's ``epsilon``: its fit's privacy budget.
        delta : float
            The copy's ``delta``: its fit's failure probability.

        Returns
        -------
        estimator
            A clone with ``epsilon`` and ``delta`` set.
        """
        return clone(self).set_params(epsilon=epsilon, delta=delta)


class DPEstimatorMixin(BudgetMixin):
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
            warn_at_caller(
                f"delta={self.delta} is not below 1/n_samples={1.0 / n_samples:.3g}; "
                "such a guarantee allows releasing records outright. "
                "Choose delta much smaller than 1/n_samples.",
                UserWarning,
            )

    def uses_privacy_budget(self):
        """Whether a fit with these parameters releases anything.

        A private pipeline gives a share of its budget only to the steps
        that do (a scaler with public bounds that computes no statistic
        releases nothing).

        Returns
        -------
        bool
        """
        return True

    @property
    def privacy_event_(self):
        """Event tree of everything the fitted model depends on.

        The plan's event, composed with the fit it started from on a warm
        start; what ``privacy_spent_`` is computed from, and what a
        pipeline composes its steps' guarantees from.
        """
        if not hasattr(self, "_privacy_event"):
            raise AttributeError(
                f"{type(self).__name__} is not fitted: privacy_event_ is set by fit")
        return self._privacy_event

    def _begin_release(self, plan, rng=None):
        """Record the plan in any active :class:`~skdpopt.PrivacyLedger`, and
        return the fit's generator (``rng``, or one made from
        ``random_state``).

        Called once the plan is made and before the solver touches the
        data: a ledger whose budget the fit would exceed refuses it here
        (:class:`~skdpopt.exceptions.BudgetExceededError`), having released
        nothing.  A fit (wrapped in :func:`keep_fit_on_error`) that raises
        before the generator has drawn anything is taken out of the ledgers
        again: it released nothing.
        """
        handle = ledger.record_release(self, plan)
        if rng is None:
            rng = make_generator(self.random_state)
        self._open_release = (handle, rng, rng.bit_generator.state)
        return rng

    def _finish_release(self, plan, previous_event=None):
        """Store the plan and the guarantee it gives as fitted attributes.

        Parameters
        ----------
        plan : PrivacyPlan
        previous_event : event, default=None
            The event of a fit this one started from (warm start): the
            released model depends on both, so ``privacy_spent_`` composes
            them, and may then exceed this fit's ``epsilon``.
        """
        self.privacy_plan_ = plan
        if previous_event is None:
            spent = plan.spent()
            if spent.epsilon > plan.epsilon * (1 + 1e-9):
                raise RuntimeError(  # a bug in calibration, never a user error
                    f"plan spends epsilon={spent.epsilon} above the requested "
                    f"{plan.epsilon}"
                )
            self._privacy_event = plan.event
        else:
            self._privacy_event = compose(previous_event, plan.event)
            spent = privacy_spent(self._privacy_event, plan.delta)
        self.privacy_spent_ = spent

    def _warm_start_event(self):
        """The event behind the current fit, to compose a warm start with."""
        return getattr(self, "_privacy_event", None)

    def __getstate__(self):
        state = super().__getstate__()
        channels = ledger.active_channels()
        if channels:
            # Shipped to another process inside a ledger (joblib's process
            # backends pickle estimators): the fit there records back.
            state = dict(state)
            known = tuple(state.get("_ledger_channels", ()))
            state["_ledger_channels"] = known + tuple(
                c for c in channels if c not in known)
        return state

    def __sklearn_clone__(self):
        clone = super().__sklearn_clone__()
        channels = getattr(self, "_ledger_channels", None)
        if channels:
            clone._ledger_channels = channels
        return clone


class LinearClassifierMixin:
    """What the linear classifiers share: decisions, labels, probabilities.

    Expects ``coef_`` of shape (n_problems, n_features), ``intercept_`` of
    shape (n_problems,) and ``classes_``; one problem for two classes, one
    per class (one-vs-rest) otherwise.  Probabilities are the logistic
    function of each decision, normalised over the classes as scikit-learn's
    one-vs-rest models do; a subclass with another link overrides
    ``_positive_probability`` (and ``_has_proba``).
    """

    def decision_function(self, X):
        """Signed distance to the separating hyperplane(s).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Samples to score.

        Returns
        -------
        ndarray of shape (n_samples,) or (n_samples, n_classes)
            ``X @ coef_.T + intercept_``; one column per class when there
            are more than two classes.
        """
        check_is_fitted(self)
        if is_dask_collection(X):  # lazily, block by block
            n_columns = None if self.coef_.shape[0] == 1 else self.coef_.shape[0]
            return map_rows(self.decision_function, X, n_columns)
        X = self._prediction_rows(
            check_features(self, X, accept_sparse="csr", reset=False))
        scores = np.asarray(X @ self.coef_.T) + self.intercept_
        return scores.ravel() if scores.shape[1] == 1 else scores

    def _prediction_rows(self, X):
        """The rows the model scores: X, or X under the public transform
        the model was fitted on (a clip to a feature bound)."""
        return X

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
        if is_dask_collection(X):  # lazily, block by block
            check_is_fitted(self)
            return map_rows(self.predict, X, dtype=self.classes_.dtype)
        scores = self.decision_function(X)
        if scores.ndim == 1:
            return self.classes_[(scores > 0).astype(int)]
        return self.classes_[np.argmax(scores, axis=1)]

    def _has_proba(self):
        return True

    def _positive_probability(self, scores):
        return expit(scores)

    @available_if(lambda self: self._has_proba())
    def predict_proba(self, X):
        """Class probabilities.

        Binary: the logistic function of the decision.  Multiclass: each
        one-vs-rest probability, normalised over the classes.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Samples to score.

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            Probability of each class, in the order of ``classes_``.
        """
        if is_dask_collection(X):  # lazily, block by block
            check_is_fitted(self)
            return map_rows(self.predict_proba, X, len(self.classes_))
        positive = self._positive_probability(self.decision_function(X))
        if positive.ndim == 1:
            return np.column_stack([1.0 - positive, positive])
        total = positive.sum(axis=1, keepdims=True)
        uniform = np.full_like(positive, 1.0 / positive.shape[1])
        with np.errstate(invalid="ignore", divide="ignore"):
            normalised = positive / total
        return np.where(total > 0, normalised, uniform)

    @available_if(lambda self: self._has_proba())
    def predict_log_proba(self, X):
        """Logarithm of :meth:`predict_proba`.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Samples to score.

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            Log-probability of each class, in the order of ``classes_``.
        """
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))
