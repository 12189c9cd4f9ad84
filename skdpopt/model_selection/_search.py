"""Private hyperparameter search: DPGridSearchCV and DPRandomizedSearchCV."""

from numbers import Integral, Real
from typing import NamedTuple

import numpy as np
from joblib import Parallel, delayed
from sklearn.base import BaseEstimator, MetaEstimatorMixin, is_classifier, is_regressor
from sklearn.metrics import get_scorer
from sklearn.model_selection import ParameterGrid, ParameterSampler
from sklearn.utils import indexable
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import _num_samples, check_is_fitted

from .. import _bounds, mechanisms
from .._base import (
    PRIVACY_PARAMETER_CONSTRAINTS,
    DPEstimatorMixin,
    keep_fit_on_error,
    make_generator,
)
from .._data import refuse_dask
from ..accounting import PrivacySpent, rdp
from ..exceptions import warn_at_caller
from ..plans.search import STOPPING_RULES, plan_search
from . import _candidates
from ._scoring import SCORES, resolve_score

# Shape of the truncated negative binomial number of runs by default
# (0: the logarithmic distribution).  Chosen on the benchmark panel's
# design half against the geometric (1): each candidate gets a larger share
# of the budget, which outweighed the runs' heavier tail there; see
# docs/benchmarks/selection.md.
DEFAULT_SHAPE = 0.0


def _estimator_has(attr):
    """Delegate ``attr`` to the chosen model (``refit=True`` only)."""

    def check(self):
        if not self.refit:
            raise AttributeError(
                f"{type(self).__name__} was made with refit=False: {attr} needs "
                "the chosen model (best_estimator_).")
        getattr(self.best_estimator_ if hasattr(self, "best_estimator_")
                else self.estimator, attr)
        return True

    return check


class _Split(NamedTuple):
    """The search's rows: a training and a validation part."""

    X_train: object
    y_train: object
    X_val: object
    y_val: object
    train_params: dict
    n_validation: int
    value_range: tuple
    state_names: list


def _estimator_type(estimator):
    if is_classifier(estimator):
        return "classifier"
    if is_regressor(estimator):
        return "regressor"
    return None


class BaseDPSearchCV(DPEstimatorMixin, MetaEstimatorMixin, BaseEstimator):
    """What the private searches share; see :class:`DPGridSearchCV`."""

    _parameter_constraints = {
        "estimator": [HasMethods(["fit"])],
        **PRIVACY_PARAMETER_CONSTRAINTS,
        "scoring": [StrOptions(set(SCORES)), None],
        "score_bound": [Interval(Real, 0, None, closed="neither"),
                        StrOptions({"auto"}), None],
        "stopping": [StrOptions(set(STOPPING_RULES))],
        "stopping_shape": [Interval(Real, 0, None, closed="left")],
        "validation_fraction": [Interval(Real, 0, 1, closed="neither")],
        "refit": ["boolean"],
        "refit_share": [Interval(Real, 0, 1, closed="left")],
        "n_jobs": [Integral, None],
        "verbose": ["verbose"],
    }

    def _candidate_list(self, rng):
        """The public list of candidates' parameters."""
        raise NotImplementedError

    def _mean_repetitions(self, n_candidates):
        raise NotImplementedError

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        inner = self.estimator.__sklearn_tags__()
        tags.estimator_type = inner.estimator_type
        tags.classifier_tags = inner.classifier_tags
        tags.regressor_tags = inner.regressor_tags
        tags.input_tags.sparse = inner.input_tags.sparse
        tags.non_deterministic = True
        return tags

    @keep_fit_on_error
    def fit(self, X, y=None, **fit_params):
        """Choose a candidate privately, spending ``epsilon`` and ``delta``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data, as the estimator takes it.
        y : array-like of shape (n_samples,)
            Targets.
        **fit_params : dict
            Passed to the candidates' ``fit``; per-row arrays are split with
            the rows.

        Returns
        -------
        self : object
            The fitted search.
        """
        self._validate_params()
        refuse_dask(self, X, y, "(its split into training and validation rows "
                    "indexes rows in memory)")
        _candidates.check_private(self.estimator)
        score, bound = resolve_score(self.scoring, self.score_bound,
                                     _estimator_type(self.estimator),
                                     hasattr(self.estimator, "predict_proba"))
        if score.response != "predict" and not hasattr(self.estimator, score.response):
            raise ValueError(f"scoring={score.name!r} needs the estimator's "
                             f"{score.response}, which it does not have.")
        X, y = indexable(X, y)
        rng = make_generator(self.random_state)
        params_list = self._candidate_list(rng)
        split = self._split(X, y, fit_params, rng)
        caught = []
        plan = self._plan(params_list, split, bound == "auto", caught)
        # The record is withdrawn if the search fails before drawing from rng.
        self._begin_release(plan, rng)
        if plan.range_draws is not None:
            split, bound = self._clip_to_range(y, split, plan, score, rng)
        runs = self._run(params_list, split, plan, score, bound, rng)
        for run in runs:
            caught.extend(run[3])
        noisy = self._noisy_scores([run[2] for run in runs], plan, bound,
                                   split.n_validation, rng)
        self._store(params_list, runs, noisy, plan, score)
        if self.refit and plan.refit_epsilon and len(runs):
            self.best_estimator_ = self._refit(X, y, fit_params, plan, rng)
        self._finish_release(plan)
        _warn_once(caught)
        return self

    def _split(self, X, y, fit_params, rng):
        """Training and validation rows, drawn by position independently of
        the data (a row replaced in a neighbouring dataset lies on one side)."""
        n_samples = _num_samples(X)
        n_validation = int(round(self.validation_fraction * n_samples))
        if n_validation < 1 or n_samples - n_validation < 1:
            raise ValueError(
                "the search needs at least 2 samples and a validation_fraction "
                "that leaves rows on both sides of its split; got "
                f"n_samples = {n_samples}, validation_fraction="
                f"{self.validation_fraction}.")
        order = rng.permutation(n_samples)
        train, val = np.sort(order[n_validation:]), np.sort(order[:n_validation])
        return _Split(_candidates.rows(X, train), _candidates.rows(y, train),
                      _candidates.rows(X, val), _candidates.rows(y, val),
                      _candidates.split_params(fit_params, n_samples, train),
                      n_validation, None,
                      _candidates.random_state_names(self.estimator))

    def _plan(self, params_list, split, auto_range, caught):
        """The search's plan; the candidates' planning warnings go to
        ``caught``."""

        def events_for(epsilon, delta):
            events = []
            for params in params_list:
                event, warned = _candidates.planned_event(
                    _candidates.configured(self.estimator, params, epsilon, delta,
                                           state_names=split.state_names),
                    split.X_train, split.y_train, split.train_params)
                events.append(event)
                caught.extend((w.category, str(w.message)) for w in warned)
            return tuple(events)

        return plan_search(
            candidate_events_for=events_for, epsilon=self.epsilon,
            delta=self.delta,
            mean_repetitions=self._mean_repetitions(len(params_list)),
            stopping=self.stopping, shape=self.stopping_shape,
            refit_share=self.refit_share if self.refit else 0.0,
            auto_range=auto_range, n_samples=_num_samples(split.X_train)
            + split.n_validation)

    def _clip_to_range(self, y, split, plan, score, rng):
        """Release the targets' range over all rows (the plan's draws) and
        the score's bound it gives."""
        released = _bounds.private_bounds(np.asarray(y, dtype=np.float64),
                                          plan.range_draws, rng)
        low, high = float(released[0, 0]), float(released[-1, 0])
        width = high - low
        bound = width * width if score.name == "neg_mean_squared_error" else width
        return split._replace(value_range=(low, high)), bound

    def _run(self, params_list, split, plan, score, bound, rng):
        """The plan's random number of runs, each of a candidate drawn
        uniformly: (candidate index, fitted model, exact score, warnings)."""
        shape = plan.shape
        gamma = (None if shape == rdp.POISSON
                 else rdp.repetitions_gamma(plan.mean_repetitions, shape))
        n_runs = mechanisms.repetitions(rng, plan.mean_repetitions, shape, gamma)
        picks = rng.integers(len(params_list), size=n_runs)
        seeds = self._seeds(rng, n_runs)
        runs = Parallel(n_jobs=self.n_jobs)(
            delayed(_candidates.run_candidate)(
                _candidates.configured(self.estimator, params_list[pick],
                                       plan.candidate_epsilon, plan.candidate_delta,
                                       seed, split.state_names),
                plan.candidate_events[pick], split.X_train, split.y_train,
                split.X_val, split.y_val, split.train_params, score, bound,
                split.value_range)
            for pick, seed in zip(picks, seeds, strict=True))
        return [(pick, *run) for pick, run in zip(picks, runs, strict=True)]

    def _seeds(self, rng, n_runs):
        """One seed per run: drawn from the search's generator when its
        random_state is an int (reproducible), else None (fresh entropy)."""
        if not isinstance(self.random_state, Integral) \
                or isinstance(self.random_state, bool):
            return [None] * n_runs
        return [int(s) for s in rng.integers(2**31 - 1, size=n_runs)]

    def _noisy_scores(self, values, plan, bound, n_validation, rng):
        """The runs' scores with the plan's noise, scaled to the score's
        sensitivity ``bound / n_validation``."""
        scale = plan.score_noise * bound / n_validation
        if plan.score_mechanism == "laplace":
            noise = mechanisms.laplace_noise(rng, scale, len(values))
        else:
            noise = mechanisms.gaussian_noise(rng, scale, len(values))
        return np.asarray(values, dtype=np.float64) + noise

    def _store(self, params_list, runs, noisy, plan, score):
        """Fitted attributes: the chosen run's parameters, noisy score and
        model, and nothing of the other runs (not even how many there were)."""
        self.scorer_ = None if self.scoring is None else get_scorer(score.name)
        self.candidate_epsilon_ = plan.candidate_epsilon
        self.candidate_delta_ = plan.candidate_delta
        self.n_splits_ = 1
        if not len(runs):
            warn_at_caller(
                f"{type(self).__name__}: the Poisson number of runs was 0 "
                f"(probability exp(-{plan.mean_repetitions:g})); nothing was "
                "chosen.", UserWarning)
            self.best_index_, self.best_params_, self.best_score_ = None, None, np.nan
            self.cv_results_ = {"params": [], "mean_test_score": np.array([]),
                                "rank_test_score": np.array([], dtype=np.int32)}
            return
        best = int(np.argmax(noisy))
        self.best_index_ = 0
        self.best_params_ = dict(params_list[runs[best][0]])
        self.best_score_ = float(noisy[best])
        self.cv_results_ = {
            "params": [self.best_params_],
            **{f"param_{k}": np.ma.MaskedArray([v], dtype=object)
               for k, v in self.best_params_.items()},
            "mean_test_score": np.array([self.best_score_]),
            "rank_test_score": np.array([1], dtype=np.int32),
        }
        if self.refit:
            self.best_estimator_ = runs[best][1]

    def _refit(self, X, y, fit_params, plan, rng):
        """The chosen parameters refitted on all rows with the refit budget."""
        seed = self._seeds(rng, 1)[0]
        model = _candidates.configured(self.estimator, self.best_params_,
                                       plan.refit_epsilon, plan.refit_delta, seed)
        # Recorded by the search's own event (an (epsilon, delta) stage).
        with _candidates.ledger.release_hook(lambda estimator, fit_plan: None):
            model.fit(X, y, **fit_params)
        refit_spent = PrivacySpent(*model.privacy_spent_)
        if refit_spent.epsilon > plan.refit_epsilon * (1 + 1e-9) \
                or refit_spent.delta > plan.refit_delta * (1 + 1e-9):
            raise RuntimeError("the refit spent more than its share; a bug.")
        return model

    @available_if(_estimator_has("predict"))
    def predict(self, X):
        """Predict with the chosen model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        check_is_fitted(self)
        return self.best_estimator_.predict(X)

    @available_if(_estimator_has("predict_proba"))
    def predict_proba(self, X):
        """Class probabilities from the chosen model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
        """
        check_is_fitted(self)
        return self.best_estimator_.predict_proba(X)

    @available_if(_estimator_has("predict_log_proba"))
    def predict_log_proba(self, X):
        """Log class probabilities from the chosen model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
        """
        check_is_fitted(self)
        return self.best_estimator_.predict_log_proba(X)

    @available_if(_estimator_has("decision_function"))
    def decision_function(self, X):
        """Decision function of the chosen model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray
        """
        check_is_fitted(self)
        return self.best_estimator_.decision_function(X)

    @available_if(_estimator_has("transform"))
    def transform(self, X):
        """Transform with the chosen model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray
        """
        check_is_fitted(self)
        return self.best_estimator_.transform(X)

    @available_if(_estimator_has("score"))
    def score(self, X, y=None):
        """Score the chosen model on (X, y), without privacy.

        ``scoring``'s scikit-learn scorer (unclipped, no noise), or the
        model's own ``score`` when ``scoring`` is None.  The data passed
        here are the user's to protect: use held-out, public or
        already-spent data.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)

        Returns
        -------
        float
        """
        check_is_fitted(self)
        if self.scorer_ is None:
            return self.best_estimator_.score(X, y)
        return self.scorer_(self.best_estimator_, X, y)

    @property
    def n_features_in_(self):
        """Number of features the chosen model was fitted on."""
        _estimator_has("n_features_in_")(self)
        if not hasattr(self, "best_estimator_"):
            raise AttributeError(f"{type(self).__name__} is not fitted")
        return self.best_estimator_.n_features_in_

    @property
    def classes_(self):
        """Class labels of the chosen model."""
        _estimator_has("classes_")(self)
        return self.best_estimator_.classes_


def _warn_once(caught):
    """Re-raise the candidates' warnings, each distinct one once (they
    carry public quantities only, as every skdpopt warning does)."""
    seen = set()
    for category, message in caught:
        if (category, message) not in seen:
            seen.add((category, message))
            warn_at_caller(message, category)


class DPGridSearchCV(BaseDPSearchCV):
    """Differentially private search over a grid of parameters.

    Spends ``epsilon`` and ``delta`` on the whole search: the choice of
    parameters, the chosen model and its score.  The rows are split once
    at random into a training part and a validation part
    (``validation_fraction``).  The search then repeats a random number of
    times K (drawn independently of the data; expected value ``n_iter``):
    draw a point of the grid uniformly at random, fit a clone of the
    estimator with it on the training part with the candidate budget
    (``candidate_epsilon_``), and score it on the validation part with a
    bounded per-row score plus noise.  Only the run with the best noisy
    score is released (Papernot and Steinke 2022: its cost is a small
    multiple of one run's, not K runs'); K, the other runs and their
    scores are not.

    Because each run draws its point at random, a point may be tried twice
    (each time a fresh fit) and another not at all: with ``n_iter`` equal
    to the grid's size m, each point is tried with probability about
    ``1 - E[(1 - 1/m)^K]`` (63% for a fixed K = m).  A larger ``n_iter``
    covers more of the grid at a small privacy cost (the candidate budget
    falls with the logarithm of ``n_iter``) and a proportional time cost.

    Parameters
    ----------
    estimator : estimator
        A skdpopt estimator or a :class:`~skdpopt.PrivatePipeline`; its
        ``epsilon`` and ``delta`` are set by the search (on clones).
    param_grid : dict or list of dicts
        As for :class:`sklearn.model_selection.GridSearchCV`, with
        ``step__param`` names for pipeline steps.
    epsilon : float, default=1.0
        Budget of the whole search; ``np.inf`` searches without noise.
    delta : float, default=1e-5
        Failure probability of the whole search.
    scoring : {"accuracy", "neg_log_loss", "neg_mean_squared_error", \
"neg_mean_absolute_error"} or None, default=None
        The per-row score averaged on the validation rows; None: the log
        loss for classifiers with ``predict_proba`` (accuracy for the
        others), squared error for regressors.
    score_bound : float, "auto" or None, default=None
        Public bound of a row's score (its sensitivity is
        ``score_bound / n_validation``); None: 1 for accuracy, ``log(20)``
        for the log loss (a row's loss counts at most as a probability of
        1/20 on its label), "auto" for regression: the range of the
        targets (ranks 0.05 and 0.95), released privately with 5% to 25%
        of the budget (zCDP units; more for fewer rows), to which targets
        and predictions are clipped.
    n_iter : float or None, default=None
        Expected number of candidate runs; None: the grid's size (at least
        2).
    stopping : {"negative_binomial", "poisson", "geometric"}, \
default="negative_binomial"
        Distribution of the number of runs: truncated negative binomial of
        shape ``stopping_shape`` (Papernot and Steinke 2022, Theorem 2), Poisson
        (their Theorem 6; no run, and nothing chosen, with probability
        ``exp(-n_iter)``), or geometric (Liu and Talwar 2019; the negative
        binomial of shape 1, also accounted in pure DP when the
        candidates are pure).
    stopping_shape : float, default=0.0
        Shape ``eta >= 0`` of the negative binomial: smaller is cheaper in
        privacy but gives a heavier tail (more searches with few runs and a
        few with very many); 0 is the logarithmic distribution, 1 the
        geometric.
    validation_fraction : float, default=0.2
        Share of the rows scored, not fitted on.
    refit : bool, default=True
        Keep the chosen model as ``best_estimator_`` (and delegate
        ``predict`` and the rest to it).
    refit_share : float, default=0.0
        0: ``best_estimator_`` is the chosen run's model (fitted on the
        training part).  Above 0: that share of ``epsilon`` and ``delta``
        goes to a refit of the chosen parameters on all rows, composed
        with the selection.
    n_jobs : int or None, default=None
        Runs fitted in parallel (joblib).
    verbose : int, default=0
        Unused: a progress line would reveal the number of runs.
    random_state : int, RandomState instance or None, default=None
        Seeds the split, the number of runs, the draws, the noise and
        every candidate's own random_state.  Leave it unset for a real
        release (an int is for tests and docs).

    Attributes
    ----------
    best_params_ : dict
        The chosen parameters.
    best_score_ : float
        Their noisy validation score (private: released with the choice).
    best_estimator_ : estimator
        The chosen model (``refit=True``).
    best_index_ : int
        0: the row of ``cv_results_``.
    cv_results_ : dict
        One row: the chosen run's parameters and noisy score (the other
        runs are not released).
    candidate_epsilon_ : float
        The epsilon each candidate's fit (and score) was given.
    candidate_delta_ : float
        The delta each candidate's fit (and score) was given.
    privacy_spent_ : PrivacySpent
        Guarantee of the whole search, from its plan's event.
    privacy_plan_ : SearchPlan
        The plan: candidate budget, score noise, the event tree.
    scorer_ : callable or None
        The scikit-learn scorer ``score`` uses.
    n_splits_ : int
        1 (one training/validation split).

    See Also
    --------
    DPRandomizedSearchCV : the same over parameters drawn from distributions.
    sklearn.model_selection.GridSearchCV : not private in its choice.

    Examples
    --------
    >>> import numpy as np
    >>> from skdpopt import DPSGDClassifier
    >>> from skdpopt.model_selection import DPGridSearchCV
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(4000, 3))
    >>> y = (X[:, 0] + 0.5 * rng.normal(size=4000) > 0).astype(int)
    >>> search = DPGridSearchCV(DPSGDClassifier(classes=[0, 1]),
    ...                         {"alpha": [1e-4, 1e-2], "max_iter": [2, 5]},
    ...                         epsilon=1.0, delta=1e-6, random_state=0)
    >>> search = search.fit(X, y)
    >>> sorted(search.best_params_)
    ['alpha', 'max_iter']
    >>> bool(search.privacy_spent_.epsilon <= 1.0)
    True
    """

    _parameter_constraints = {
        **BaseDPSearchCV._parameter_constraints,
        "param_grid": [dict, list],
        "n_iter": [Interval(Real, 1, None, closed="neither"), None],
    }

    def __init__(self, estimator, param_grid, *, epsilon=1.0, delta=1e-5,
                 scoring=None, score_bound=None, n_iter=None,
                 stopping="negative_binomial", stopping_shape=DEFAULT_SHAPE,
                 validation_fraction=0.2, refit=True, refit_share=0.0,
                 n_jobs=None, verbose=0, random_state=None):
        self.estimator = estimator
        self.param_grid = param_grid
        self.epsilon = epsilon
        self.delta = delta
        self.scoring = scoring
        self.score_bound = score_bound
        self.n_iter = n_iter
        self.stopping = stopping
        self.stopping_shape = stopping_shape
        self.validation_fraction = validation_fraction
        self.refit = refit
        self.refit_share = refit_share
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.random_state = random_state

    def _candidate_list(self, rng):
        return list(ParameterGrid(self.param_grid))

    def _mean_repetitions(self, n_candidates):
        return float(self.n_iter) if self.n_iter is not None else max(n_candidates, 2)


class DPRandomizedSearchCV(BaseDPSearchCV):
    """Differentially private search over parameters drawn from distributions.

    As :class:`DPGridSearchCV`, over a pool of ``n_iter`` parameter
    settings drawn from ``param_distributions`` before the search reads any
    data (as :class:`sklearn.model_selection.ParameterSampler` draws them:
    without replacement when every distribution is a list); each run draws
    its setting uniformly from the pool, and the expected number of runs
    is ``n_iter``.

    Parameters
    ----------
    estimator : estimator
        A skdpopt estimator or a :class:`~skdpopt.PrivatePipeline`.
    param_distributions : dict or list of dicts
        As for :class:`sklearn.model_selection.RandomizedSearchCV`.
    n_iter : int, default=10
        Size of the pool and expected number of runs (> 1).
    epsilon : float, default=1.0
        Budget of the whole search; ``np.inf`` searches without noise.
    delta : float, default=1e-5
        Failure probability of the whole search.
    scoring : str or None, default=None
        See :class:`DPGridSearchCV`.
    score_bound : float, "auto" or None, default=None
        See :class:`DPGridSearchCV`.
    stopping : {"negative_binomial", "poisson", "geometric"}, \
default="negative_binomial"
        See :class:`DPGridSearchCV`.
    stopping_shape : float, default=0.0
        See :class:`DPGridSearchCV`.
    validation_fraction : float, default=0.2
        Share of the rows scored, not fitted on.
    refit : bool, default=True
        Keep the chosen model as ``best_estimator_``.
    refit_share : float, default=0.0
        See :class:`DPGridSearchCV`.
    n_jobs : int or None, default=None
        Runs fitted in parallel (joblib).
    verbose : int, default=0
        Unused: a progress line would reveal the number of runs.
    random_state : int, RandomState instance or None, default=None
        Seeds the pool, the split, the runs and the noise; leave it unset
        for a real release.

    Attributes
    ----------
    best_params_ : dict
        The chosen parameters.
    best_score_ : float
        Their noisy validation score.
    best_estimator_ : estimator
        The chosen model (``refit=True``).
    best_index_ : int
        0: the row of ``cv_results_``.
    cv_results_ : dict
        One row: the chosen run's parameters and noisy score.
    candidate_epsilon_ : float
        The epsilon each candidate's fit (and score) was given.
    candidate_delta_ : float
        The delta each candidate's fit (and score) was given.
    privacy_spent_ : PrivacySpent
        Guarantee of the whole search.
    privacy_plan_ : SearchPlan
        The plan.
    scorer_ : callable or None
        The scikit-learn scorer ``score`` uses.
    n_splits_ : int
        1.

    See Also
    --------
    DPGridSearchCV : the same over a grid.

    Examples
    --------
    >>> import numpy as np
    >>> from scipy.stats import loguniform
    >>> from skdpopt import DPSGDRegressor
    >>> from skdpopt.model_selection import DPRandomizedSearchCV
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(4000, 3))
    >>> y = X @ [1.0, -0.5, 0.2] + 0.3 * rng.normal(size=4000)
    >>> search = DPRandomizedSearchCV(DPSGDRegressor(),
    ...                               {"eta0": loguniform(0.05, 1.0)}, n_iter=6,
    ...                               epsilon=1.0, delta=1e-6, random_state=0)
    >>> search = search.fit(X, y)
    >>> bool(0.05 <= search.best_params_["eta0"] <= 1.0)
    True
    """

    _parameter_constraints = {
        **BaseDPSearchCV._parameter_constraints,
        "param_distributions": [dict, list],
        "n_iter": [Interval(Integral, 2, None, closed="left")],
    }

    def __init__(self, estimator, param_distributions, *, n_iter=10, epsilon=1.0,
                 delta=1e-5, scoring=None, score_bound=None,
                 stopping="negative_binomial", stopping_shape=DEFAULT_SHAPE,
                 validation_fraction=0.2, refit=True, refit_share=0.0,
                 n_jobs=None, verbose=0, random_state=None):
        self.estimator = estimator
        self.param_distributions = param_distributions
        self.n_iter = n_iter
        self.epsilon = epsilon
        self.delta = delta
        self.scoring = scoring
        self.score_bound = score_bound
        self.stopping = stopping
        self.stopping_shape = stopping_shape
        self.validation_fraction = validation_fraction
        self.refit = refit
        self.refit_share = refit_share
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.random_state = random_state

    def _candidate_list(self, rng):
        seed = int(rng.integers(2**31 - 1))
        return list(ParameterSampler(self.param_distributions, self.n_iter,
                                     random_state=seed))

    def _mean_repetitions(self, n_candidates):
        return float(self.n_iter)
