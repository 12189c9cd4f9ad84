"""A scikit-learn Pipeline whose every step is private, public or stateless.

:class:`PrivatePipeline` (and :func:`make_private_pipeline`) refuses, with
:class:`~skdpopt.exceptions.PrivacyLeakError`, a step that would learn from
the training data without differential privacy; splits one budget across
its private steps; and reports the composed guarantee in
``privacy_spent_``.  The budget argument is in
``docs/privacy/preprocessing.md``.
"""

from numbers import Integral, Real

import numpy as np
from sklearn.compose import ColumnTransformer
from sklearn.pipeline import FeatureUnion, Pipeline, _name_estimators
from sklearn.utils._param_validation import Interval, Options

from ._base import MAX_EPSILON, DPEstimatorMixin
from .accounting import PrivacySpent, compose, privacy_spent
from .exceptions import PrivacyLeakError

__all__ = ["PrivatePipeline", "make_private_pipeline"]

# Default share of the budget that the private transformers (scalers)
# share between them when the last step is a private estimator; the
# estimator gets the rest.  A scaler only has to get the features to about
# unit scale, the model's accuracy is where the budget counts.
PREPROCESSING_SHARE = 0.2

_SKDPOPT_ESTIMATORS = ("DPSGDRegressor, DPSGDClassifier, DPLasso, "
                       "DPLogisticSimplex or DPMinimaxClassifier")

# What to use instead of a transformer that learns from the data.
_ALTERNATIVES = {
    "StandardScaler": "skdpopt.DPStandardScaler",
    "RobustScaler": "skdpopt.DPStandardScaler (its clipped statistics are "
                    "robust to outliers)",
    "MaxAbsScaler": "skdpopt.DPMinMaxScaler or skdpopt.DPStandardScaler",
    "MinMaxScaler": "skdpopt.DPMinMaxScaler",
    "Normalizer": None,
    "SimpleImputer": "SimpleImputer(strategy='constant', fill_value=..., "
                     "keep_empty_features=True), which learns nothing",
    "OneHotEncoder": "OneHotEncoder(categories=[...]) with the categories of "
                     "each column declared from a public codebook (and no "
                     "min_frequency or max_categories)",
    "OrdinalEncoder": "OrdinalEncoder(categories=[...]) with the categories "
                      "declared from a public codebook",
    "TfidfVectorizer": "HashingVectorizer (stateless), or "
                       "CountVectorizer(vocabulary=public_words, binary=True)",
    "CountVectorizer": "HashingVectorizer (stateless), or "
                       "CountVectorizer(vocabulary=public_words)",
    "TfidfTransformer": "TfidfTransformer(use_idf=False)",
    "KBinsDiscretizer": "skdpopt.DPMinMaxScaler, or bins from public edges "
                        "(FunctionTransformer with numpy.digitize)",
    "QuantileTransformer": "skdpopt.DPMinMaxScaler",
    "PCA": "a PCA fitted on public data, wrapped in "
           "sklearn.frozen.FrozenEstimator",
    "TruncatedSVD": "a TruncatedSVD fitted on public data, wrapped in "
                    "sklearn.frozen.FrozenEstimator",
}


def _leak(path, estimator, why, alternative):
    name = type(estimator).__name__
    message = (f"step {path!r} ({name}) {why} from the training data without "
               "differential privacy, and the fitted pipeline would reveal it.")
    if alternative:
        message += f" Use {alternative} instead."
    message += (f" If its fit learns nothing from the data, declare it with "
                f"public_steps=({path!r},); a transformer fitted on public data "
                "can be wrapped in sklearn.frozen.FrozenEstimator.")
    return PrivacyLeakError(message)


def _is_public_transformer(estimator):
    """Whether a known scikit-learn transformer learns nothing private:
    stateless, or its learned state declared by its parameters."""
    name = type(estimator).__name__
    params = estimator.get_params(deep=False)
    if name in {"FunctionTransformer", "Normalizer", "Binarizer",
                "PolynomialFeatures", "HashingVectorizer", "FeatureHasher"}:
        return True
    if name in {"OneHotEncoder", "OrdinalEncoder"}:
        return (not isinstance(params.get("categories"), str)
                and params.get("min_frequency") is None
                and params.get("max_categories") is None)
    if name == "CountVectorizer":
        return params.get("vocabulary") is not None
    if name == "TfidfVectorizer":
        return params.get("vocabulary") is not None and not params.get("use_idf")
    if name == "TfidfTransformer":
        return not params.get("use_idf")
    if name == "SimpleImputer":
        return (params.get("strategy") == "constant"
                and bool(params.get("keep_empty_features")))
    if name == "MissingIndicator":
        return params.get("features") == "all"
    if name == "SplineTransformer":
        return not isinstance(params.get("knots"), str)
    return False


def _why(estimator):
    """What a refused step learns, for the error message."""
    name = type(estimator).__name__
    if name in {"StandardScaler", "RobustScaler", "MaxAbsScaler", "MinMaxScaler"}:
        return "learns its centring and scaling statistics"
    if name in {"OneHotEncoder", "OrdinalEncoder"}:
        return "learns its categories (a category held by one record included)"
    if name in {"TfidfVectorizer", "CountVectorizer", "TfidfTransformer"}:
        return "learns its vocabulary or document frequencies"
    if name == "SimpleImputer":
        return "learns its fill values"
    if hasattr(estimator, "predict") or hasattr(estimator, "decision_function"):
        return "fits a model"
    return "learns its state"


def _private_leaves(estimator, path, public_steps):
    """The skdpopt private estimators inside ``estimator``, as (path, est).

    Raises PrivacyLeakError on the first step that learns from the data
    without differential privacy.
    """
    if estimator is None or (isinstance(estimator, str)
                             and estimator in {"passthrough", "drop"}):
        return []
    if path in public_steps:
        return []
    if isinstance(estimator, DPEstimatorMixin):
        return [(path, estimator)]
    if type(estimator).__name__ == "FrozenEstimator":
        return []  # fitted elsewhere; its fit here does nothing
    if isinstance(estimator, Pipeline):
        return _leaves_of(estimator.steps, path, public_steps)
    if isinstance(estimator, FeatureUnion):
        return _leaves_of(estimator.transformer_list, path, public_steps)
    if isinstance(estimator, ColumnTransformer):
        inner = [(name, t) for name, t, _ in estimator.transformers]
        leaves = _leaves_of(inner, path, public_steps)
        remainder = estimator.remainder
        if not isinstance(remainder, str):
            leaves += _private_leaves(remainder, f"{path}__remainder",
                                      public_steps)
        return leaves
    if _is_public_transformer(estimator):
        return []
    name = type(estimator).__name__
    alternative = _ALTERNATIVES.get(name)
    if alternative is None and (hasattr(estimator, "predict")
                                or hasattr(estimator, "decision_function")):
        alternative = f"a private estimator ({_SKDPOPT_ESTIMATORS})"
    raise _leak(path, estimator, _why(estimator), alternative)


def _leaves_of(named, prefix, public_steps):
    leaves = []
    for name, estimator in named:
        path = f"{prefix}__{name}" if prefix else name
        leaves += _private_leaves(estimator, path, public_steps)
    return leaves


def _fitted_leaves(estimator):
    """The fitted private estimators inside a fitted composite (the fitted
    clones, where a composite fits clones)."""
    if isinstance(estimator, DPEstimatorMixin):
        return [estimator]
    if isinstance(estimator, Pipeline):
        return [e for _, s in estimator.steps for e in _fitted_leaves(s)]
    if isinstance(estimator, FeatureUnion):
        return [e for _, s in estimator.transformer_list for e in _fitted_leaves(s)]
    if isinstance(estimator, ColumnTransformer):
        fitted = getattr(estimator, "transformers_", [])
        return [e for _, s, _ in fitted for e in _fitted_leaves(s)]
    return []


def _uses_budget(estimator):
    uses = getattr(estimator, "_uses_privacy_budget", None)
    return True if uses is None else bool(uses())


class PrivatePipeline(Pipeline):
    """A Pipeline whose fit is differentially private as a whole.

    Every step must be one of:

    * a private step: a skdpopt estimator or transformer
      (:class:`~skdpopt.DPStandardScaler`, :class:`~skdpopt.DPMinMaxScaler`,
      :class:`~skdpopt.DPSGDRegressor`, ...), which gets a share of the
      pipeline's budget;
    * a stateless step, or one whose learned state is declared by its
      parameters: ``FunctionTransformer`` (applied row by row),
      ``OneHotEncoder``/``OrdinalEncoder`` with explicit ``categories``,
      ``CountVectorizer`` with a ``vocabulary``, ``HashingVectorizer``,
      ``Normalizer``, ``PolynomialFeatures``, ``SimpleImputer`` with
      ``strategy="constant"`` and ``keep_empty_features=True``, a
      ``sklearn.frozen.FrozenEstimator`` (fitted elsewhere, on public
      data), a step named in ``public_steps``;
    * a ``ColumnTransformer``, ``FeatureUnion`` or ``Pipeline`` of such
      steps.

    Any other step (``StandardScaler``, ``OneHotEncoder`` with
    ``categories="auto"``, ``TfidfVectorizer``, a non-private model, an
    unknown transformer) would learn from the training data without noise;
    the pipeline refuses it with :class:`~skdpopt.exceptions.PrivacyLeakError`
    naming the step and what to use instead, before reading any data.

    Budget.  At ``fit``, each private step that releases something gets
    ``share * epsilon`` and ``share * delta`` (its ``epsilon`` and
    ``delta`` parameters are set to them).  By basic composition the whole
    fit is then (``epsilon``, ``delta``)-DP; ``privacy_spent_`` reports the
    tighter of that sum and the accountant's composition of the steps'
    events, so it is never above the request.  Default shares:
    ``PREPROCESSING_SHARE`` (20%) split equally among the private
    transformers and the rest to a private model at the end; equal shares
    otherwise (a pipeline of transformers, or no private model).
    ``budget_split`` sets them by step name.

    Parameters
    ----------
    steps : list of (str, estimator)
        As for :class:`sklearn.pipeline.Pipeline`.
    epsilon : float or None, default=1.0
        Budget of the whole fit; ``np.inf`` fits without noise.  ``None``
        keeps each private step's own ``epsilon`` and ``delta`` (the
        pipeline then reports their composition).
    delta : float, default=1e-5
        Failure probability of the whole fit, split like ``epsilon``.
    budget_split : dict or None, default=None
        ``{step name: share}`` for every private step that releases
        something (nested steps by their ``outer__inner`` path); shares
        are positive and sum to at most 1.
    public_steps : tuple of str, default=()
        Names of steps whose fit you declare learns nothing private from the
        data (a custom stateless transformer): accepted without checks.
    transform_input : list of str or None, default=None
        As for :class:`sklearn.pipeline.Pipeline`.
    memory : str or object with the joblib.Memory interface, default=None
        As for :class:`sklearn.pipeline.Pipeline`.
    verbose : bool, default=False
        As for :class:`sklearn.pipeline.Pipeline`.
    random_state : int, RandomState instance or None, default=None
        Seeds every private step whose own ``random_state`` is ``None``,
        each with its own seed derived from this one, so that a whole
        pipeline fit can be reproduced.  For tests and documentation only:
        a real release leaves it unset (anyone who knows the seed can
        reproduce, and subtract, the noise).  A step with its own
        ``random_state`` keeps it.

    Attributes
    ----------
    privacy_spent_ : PrivacySpent
        Guarantee of the whole fit: the smaller of basic composition of the
        fitted private steps' ``privacy_spent_`` and the accountant's
        composition of their plans' events, at the sum of their deltas.
    step_budgets_ : dict
        ``{step path: (epsilon, delta)}`` given to each private step.
    named_steps : Bunch
        As for :class:`sklearn.pipeline.Pipeline`.

    Examples
    --------
    >>> from sklearn.preprocessing import StandardScaler
    >>> from skdpopt import DPSGDRegressor, make_private_pipeline
    >>> make_private_pipeline(StandardScaler(), DPSGDRegressor())
    Traceback (most recent call last):
    ...
    skdpopt.exceptions.PrivacyLeakError: step 'standardscaler' (StandardScaler) ...
    """

    _parameter_constraints = {
        **Pipeline._parameter_constraints,
        "epsilon": [Interval(Real, 0, MAX_EPSILON, closed="right"),
                    Options(Real, {np.inf}), None],
        "delta": [Interval(Real, 0, 1, closed="left")],
        "budget_split": [dict, None],
        "public_steps": [tuple, list],
        "random_state": ["random_state"],
    }

    def __init__(self, steps, *, epsilon=1.0, delta=1e-5, budget_split=None,
                 public_steps=(), transform_input=None, memory=None,
                 verbose=False, random_state=None):
        super().__init__(steps, transform_input=transform_input, memory=memory,
                         verbose=verbose)
        self.epsilon = epsilon
        self.delta = delta
        self.budget_split = budget_split
        self.public_steps = public_steps
        self.random_state = random_state

    def check_privacy(self):
        """Refuse non-private steps; return the private ones.

        Returns
        -------
        list of (str, estimator)
            Each private step's path (``outer__inner`` when nested) and the
            estimator.

        Raises
        ------
        PrivacyLeakError
            On the first step that would learn from the data without
            differential privacy.
        """
        return _leaves_of(self.steps, "", set(self.public_steps))

    def _shares(self, budgeted):
        """Each budgeted step's share of the pipeline's budget."""
        paths = [path for path, _ in budgeted]
        if self.budget_split is not None:
            split = dict(self.budget_split)
            missing = [p for p in paths if p not in split]
            unknown = [p for p in split if p not in paths]
            if missing or unknown:
                raise ValueError(
                    f"budget_split must name every private step that releases "
                    f"something, {paths}; missing {missing}, unknown {unknown}.")
            shares = [float(split[p]) for p in paths]
            if any(not s > 0 for s in shares) or sum(shares) > 1 + 1e-9:
                raise ValueError(
                    "budget_split shares must be positive and sum to at most 1, "
                    f"got {split}.")
            return dict(zip(paths, shares, strict=True))
        last, estimator = self.steps[-1]
        # The model at the end gets the larger share; a pipeline of
        # transformers only splits equally.
        final = [p for p in paths
                 if p == last and not hasattr(estimator, "transform")]
        others = [p for p in paths if p not in final]
        if final and others:
            each = PREPROCESSING_SHARE / len(others)
            return {**{p: each for p in others}, last: 1.0 - PREPROCESSING_SHARE}
        return {p: 1.0 / len(paths) for p in paths}

    def _seed_steps(self, leaves):
        """Give each private step without a random_state its own seed."""
        if self.random_state is None:
            return
        if isinstance(self.random_state, Integral):
            # One independent seed per step (a shared seed would give the
            # steps the same noise draws).
            children = np.random.SeedSequence(self.random_state).spawn(len(leaves))
            seeds = [int(c.generate_state(1)[0]) for c in children]
        else:
            seeds = [self.random_state] * len(leaves)
        for (_, estimator), seed in zip(leaves, seeds, strict=True):
            if estimator.get_params().get("random_state", 0) is None:
                estimator.set_params(random_state=seed)

    def _prepare_privacy(self):
        """Check the steps and give each private step its budget."""
        leaves = self.check_privacy()
        self._seed_steps(leaves)
        budgeted = [(p, e) for p, e in leaves if _uses_budget(e)]
        if self.epsilon is None:
            self.step_budgets_ = {p: (e.epsilon, e.delta) for p, e in budgeted}
            return
        shares = self._shares(budgeted) if budgeted else {}
        budgets = {}
        for path, estimator in budgeted:
            budget = (shares[path] * self.epsilon, shares[path] * self.delta)
            estimator.set_params(epsilon=budget[0], delta=budget[1])
            budgets[path] = budget
        self.step_budgets_ = budgets

    def _fit(self, *args, **kwargs):
        # Every fitting method of Pipeline (fit, fit_transform, fit_predict)
        # starts here, before any step sees the data.
        self._prepare_privacy()
        return super()._fit(*args, **kwargs)

    @property
    def privacy_spent_(self):
        """Guarantee of the whole fit, composed from the fitted private steps."""
        if not hasattr(self, "step_budgets_"):
            raise AttributeError("privacy_spent_ is set by fit")
        fitted = [e for _, s in self.steps for e in _fitted_leaves(s)]
        if not fitted:
            return PrivacySpent(0.0, 0.0)
        events = [getattr(e, "_privacy_event", e.privacy_plan_.event)
                  for e in fitted]
        spents = [e.privacy_spent_ for e in fitted]
        # Basic composition of the steps' own guarantees, and the
        # accountant's composition of their events at the same total delta:
        # both hold, so the smaller epsilon does.
        delta = min(sum(s.delta for s in spents), 1.0 - 1e-12)
        basic = PrivacySpent(sum(s.epsilon for s in spents), delta)
        if basic.epsilon == np.inf:
            return PrivacySpent(np.inf, 0.0)
        composed = privacy_spent(compose(*events), delta)
        return min(basic, composed, key=lambda s: s.epsilon)


def make_private_pipeline(*steps, epsilon=1.0, delta=1e-5, budget_split=None,
                          public_steps=(), memory=None, verbose=False,
                          random_state=None):
    """Build a :class:`PrivatePipeline`, naming the steps automatically.

    The steps are checked at once: a step that would learn from the data
    without differential privacy raises
    :class:`~skdpopt.exceptions.PrivacyLeakError` here, naming it and what to
    use instead.

    Parameters
    ----------
    *steps : estimators
        As for :func:`sklearn.pipeline.make_pipeline`.
    epsilon : float or None, default=1.0
        Budget of the whole fit (see :class:`PrivatePipeline`).
    delta : float, default=1e-5
        Failure probability of the whole fit.
    budget_split : dict or None, default=None
        ``{step name: share}``; names are the lower-cased class names, as
        :func:`sklearn.pipeline.make_pipeline` gives them.
    public_steps : tuple of str, default=()
        Steps declared to learn nothing private (see :class:`PrivatePipeline`).
    memory : str or object with the joblib.Memory interface, default=None
        As for :func:`sklearn.pipeline.make_pipeline`.
    verbose : bool, default=False
        As for :func:`sklearn.pipeline.make_pipeline`.
    random_state : int, RandomState instance or None, default=None
        Seeds every private step that has no ``random_state`` of its own
        (see :class:`PrivatePipeline`); for tests and documentation, a real
        release leaves it unset.

    Returns
    -------
    PrivatePipeline

    Examples
    --------
    >>> import numpy as np
    >>> from skdpopt import DPSGDRegressor, DPStandardScaler, make_private_pipeline
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(100, 20, size=(5000, 3))
    >>> y = (X - 100) @ [0.05, -0.02, 0.01] + rng.normal(size=5000)
    >>> pipe = make_private_pipeline(DPStandardScaler(), DPSGDRegressor(),
    ...                              epsilon=1.0, delta=1e-6).fit(X, y)
    >>> budgets = pipe.step_budgets_
    >>> budgets["dpstandardscaler"][0], budgets["dpsgdregressor"][0]
    (0.2, 0.8)
    >>> bool(pipe.privacy_spent_.epsilon <= 1.0)
    True
    """
    pipeline = PrivatePipeline(_name_estimators(steps), epsilon=epsilon,
                               delta=delta, budget_split=budget_split,
                               public_steps=public_steps, memory=memory,
                               verbose=verbose, random_state=random_state)
    pipeline.check_privacy()
    return pipeline
