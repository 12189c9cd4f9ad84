"""A scikit-learn Pipeline whose every step is private, public or stateless.

:class:`PrivatePipeline` (and :func:`make_private_pipeline`) refuses, with
:class:`~skdpopt.exceptions.PrivacyLeakError`, a step that would learn from
the training data without differential privacy; splits one budget across
its private steps; and reports the composed guarantee in
``privacy_spent_``.  The budget argument is in
``docs/privacy/preprocessing.md``.
"""

import inspect
from numbers import Integral, Real

import numpy as np
from sklearn.base import clone
from sklearn.compose import ColumnTransformer
from sklearn.pipeline import FeatureUnion, Pipeline, _name_estimators
from sklearn.utils._indexing import _get_column_indices
from sklearn.utils._param_validation import Interval, Options
from sklearn.utils.validation import _num_samples

from ._base import (
    MAX_EPSILON,
    BudgetMixin,
    DPEstimatorMixin,
    check_targets,
    raised_in_skdpopt,
    without_values,
)
from ._declared import declared_blocks, declared_bounds
from .accounting import PrivacySpent, compose, privacy_spent
from .exceptions import PrivacyLeakError

__all__ = ["PrivatePipeline", "make_private_pipeline"]

# Default share of the budget that the private transformers (scalers)
# share between them when the last step is a private estimator; the
# estimator gets the rest.  A scaler only has to get the features to about
# unit scale, the model's accuracy is where the budget counts.
PREPROCESSING_SHARE = 0.2
# On few rows or a small budget, the share is raised (up to this) to what
# the private scalers need for their bounds to find the data (their
# ``reliable_epsilon``): below that, a scaler's bounds can miss a column
# and flatten it, whatever the model's budget.
MAX_PREPROCESSING_SHARE = 0.3

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


def _check_inverse_runs(params):
    return bool(params.get("check_inverse")) and not (
        params.get("func") is None or params.get("inverse_func") is None)


# The scikit-learn transformers whose fitted state is public, and the
# parameter values that keep it so: for each, a test of its parameters
# (get_params(deep=False)).  The table in docs/privacy/preprocessing.md
# states exactly these rules; keep them in step.
_PUBLIC_TRANSFORMERS = {
    # Stateless: fit only checks the input's shape.
    "Normalizer": lambda p: True,
    "Binarizer": lambda p: True,
    "PolynomialFeatures": lambda p: True,
    "HashingVectorizer": lambda p: True,
    "FeatureHasher": lambda p: True,
    # Its fit checks that inverse_func undoes func on the data, and warns
    # if not: a warning that depends on the records.
    "FunctionTransformer": lambda p: not _check_inverse_runs(p),
    # Declared categories only; "warn" warns about the training data's
    # unknown categories as it transforms them.
    "OneHotEncoder": lambda p: (not isinstance(p.get("categories"), str)
                                and p.get("min_frequency") is None
                                and p.get("max_categories") is None
                                and p.get("handle_unknown") != "warn"),
    "OrdinalEncoder": lambda p: (not isinstance(p.get("categories"), str)
                                 and p.get("min_frequency") is None
                                 and p.get("max_categories") is None),
    # A given vocabulary (max_df, min_df and max_features are then unused).
    "CountVectorizer": lambda p: p.get("vocabulary") is not None,
    "TfidfVectorizer": lambda p: (p.get("vocabulary") is not None
                                  and not p.get("use_idf")),
    "TfidfTransformer": lambda p: not p.get("use_idf"),
    # The fill value is declared; add_indicator learns which columns have
    # missing values, and without keep_empty_features a column missing in
    # every record is dropped.
    "SimpleImputer": lambda p: (p.get("strategy") == "constant"
                                and not p.get("add_indicator")
                                and bool(p.get("keep_empty_features"))),
    "MissingIndicator": lambda p: p.get("features") == "all",
    "SplineTransformer": lambda p: not isinstance(p.get("knots"), str),
}


def _is_public_transformer(estimator):
    """Whether a known scikit-learn transformer learns nothing private:
    stateless, or its learned state declared by its parameters."""
    kind = type(estimator)
    rule = _PUBLIC_TRANSFORMERS.get(kind.__name__)
    # scikit-learn's own classes only: a subclass may learn anything.
    return (rule is not None and kind.__module__.startswith("sklearn.")
            and rule(estimator.get_params(deep=False)))


def _why(estimator):
    """What a refused step learns, for the error message."""
    name = type(estimator).__name__
    params = estimator.get_params(deep=False)
    if name in {"StandardScaler", "RobustScaler", "MaxAbsScaler", "MinMaxScaler"}:
        return "learns its centring and scaling statistics"
    if name == "OneHotEncoder" and params.get("handle_unknown") == "warn":
        return "warns about the categories it does not know"
    if name in {"OneHotEncoder", "OrdinalEncoder"}:
        return "learns its categories (a category held by one record included)"
    if name in {"TfidfVectorizer", "CountVectorizer", "TfidfTransformer"}:
        return "learns its vocabulary or document frequencies"
    if name == "SimpleImputer" and params.get("add_indicator"):
        return "learns which columns have missing values (add_indicator=True)"
    if name == "SimpleImputer" and params.get("strategy") == "constant":
        return "drops the columns missing in every record (keep_empty_features=False)"
    if name == "SimpleImputer":
        return "learns its fill values"
    if name == "FunctionTransformer":
        return ("checks that inverse_func undoes func on the records, and warns "
                "if not (check_inverse=True)")
    if hasattr(estimator, "predict") or hasattr(estimator, "decision_function"):
        return "fits a model"
    return "learns its state"


def _private_leaves(estimator, path, public_steps, *, nested=True, check=True):
    """The private steps inside ``estimator``, as (path, estimator).

    With ``nested=False`` a private pipeline nested in another is one
    step (it splits the budget it is given itself); otherwise its own
    private steps are listed.  Raises PrivacyLeakError on the first step
    that learns from the data without differential privacy, unless
    ``check`` is False (inside a step the user declared public, where only
    the private steps are looked for: their releases still count).
    """
    if estimator is None or (isinstance(estimator, str)
                             and estimator in {"passthrough", "drop"}):
        return []
    check = check and path not in public_steps
    if isinstance(estimator, DPEstimatorMixin):
        return [(path, estimator)]
    if isinstance(estimator, PrivatePipeline):
        if not nested:
            if check:
                estimator.check_privacy()
            return [(path, estimator)]
        inner = _leaves_of(estimator.steps, "", set(estimator.public_steps),
                           nested=True, check=check)
        return [(f"{path}__{p}", e) for p, e in inner]
    if type(estimator).__name__ == "FrozenEstimator":
        return []  # fitted elsewhere; its fit here does nothing
    if isinstance(estimator, Pipeline):
        return _leaves_of(estimator.steps, path, public_steps, nested=nested,
                          check=check)
    if isinstance(estimator, FeatureUnion):
        return _leaves_of(estimator.transformer_list, path, public_steps,
                          nested=nested, check=check)
    if isinstance(estimator, ColumnTransformer):
        inner = [(name, t) for name, t, _ in estimator.transformers]
        leaves = _leaves_of(inner, path, public_steps, nested=nested, check=check)
        remainder = estimator.remainder
        if not isinstance(remainder, str):
            leaves += _private_leaves(remainder, f"{path}__remainder",
                                      public_steps, nested=nested, check=check)
        if check and estimator.sparse_threshold not in (0, 1):
            raise PrivacyLeakError(
                f"step {path!r} (ColumnTransformer) chooses between a sparse "
                "and a dense output by comparing the density of the "
                "transformed training data with sparse_threshold="
                f"{estimator.sparse_threshold!r}, so one record can change the "
                "fitted pipeline's output format. Pass sparse_threshold=0 "
                "(always dense) or 1 (sparse whenever a transformer's output "
                "is sparse).")
        return leaves
    if not check or _is_public_transformer(estimator):
        return []
    name = type(estimator).__name__
    alternative = _ALTERNATIVES.get(name)
    if alternative is None and (hasattr(estimator, "predict")
                                or hasattr(estimator, "decision_function")):
        alternative = f"a private estimator ({_SKDPOPT_ESTIMATORS})"
    raise _leak(path, estimator, _why(estimator), alternative)


def _leaves_of(named, prefix, public_steps, *, nested=True, check=True):
    leaves = []
    for name, estimator in named:
        path = f"{prefix}__{name}" if prefix else name
        leaves += _private_leaves(estimator, path, public_steps, nested=nested,
                                  check=check)
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


def _input_width(steps, path, X):
    """How many columns of X the private step at ``path`` reads: all of
    them for the first step, those its branch selects for a step in a
    ColumnTransformer at the start (the steps before it in the branch
    assumed to keep the width); None where that is not known.  Reads
    the schema of X (its shape, names and dtypes), never its values."""
    name, _, rest = path.partition("__")
    first_name, first = steps[0]
    if name != first_name:
        return None
    if not rest:
        return X.shape[1] if hasattr(X, "shape") and len(X.shape) == 2 else None
    if not isinstance(first, ColumnTransformer):
        return None
    branch = rest.partition("__")[0]
    for branch_name, _, columns in first.transformers:
        if branch_name == branch:
            if callable(columns):
                columns = columns(X)
            try:
                return len(_get_column_indices(X, columns))
            except (TypeError, ValueError, KeyError):
                return None
    return None


def _default(estimator, name):
    """The default of ``estimator``'s parameter ``name``."""
    return inspect.signature(type(estimator).__init__).parameters[name].default


class PrivatePipeline(BudgetMixin, Pipeline):
    """A Pipeline whose fit is differentially private as a whole.

    Every step must be one of:

    * a private step: a skdpopt estimator or transformer
      (:class:`~skdpopt.DPStandardScaler`, :class:`~skdpopt.DPMinMaxScaler`,
      :class:`~skdpopt.DPSGDRegressor`, ...) or another
      :class:`PrivatePipeline`, which gets a share of the pipeline's
      budget;
    * a stateless step, or one whose learned state is declared by its
      parameters: ``FunctionTransformer`` (applied row by row),
      ``OneHotEncoder``/``OrdinalEncoder`` with explicit ``categories``,
      ``CountVectorizer`` with a ``vocabulary``, ``HashingVectorizer``,
      ``Normalizer``, ``PolynomialFeatures``, ``SimpleImputer`` with
      ``strategy="constant"`` and ``keep_empty_features=True``, a
      ``sklearn.frozen.FrozenEstimator`` (fitted elsewhere, on public
      data), a step named in ``public_steps``; the parameter values that
      keep each one's learned state public are listed in
      ``docs/privacy/preprocessing.md``;
    * a ``ColumnTransformer`` (with ``sparse_threshold`` 0 or 1),
      ``FeatureUnion`` or ``Pipeline`` of such steps.

    Any other step (``StandardScaler``, ``OneHotEncoder`` with
    ``categories="auto"``, ``SimpleImputer(add_indicator=True)``,
    ``TfidfVectorizer``, a non-private model, an unknown transformer)
    would learn from the training data without noise; the pipeline refuses
    it with :class:`~skdpopt.exceptions.PrivacyLeakError` naming the step
    and what to use instead, before reading any data.

    Budget.  At ``fit``, each private step that releases something gets a
    share of ``epsilon`` and of ``delta``.  A step whose own ``epsilon``
    (or ``delta``) you set to something other than its default keeps it;
    the steps' own values must fit within the pipeline's (a ``ValueError``
    names them otherwise), and what is left is shared among the other
    steps.  By basic composition the whole fit is then (``epsilon``,
    ``delta``)-DP; ``privacy_spent_`` reports the tighter of that sum and
    the accountant's composition of the steps' events, so it is never
    above the request.  Default shares: ``PREPROCESSING_SHARE`` (20%) split
    equally among the private transformers and the rest to a private model
    at the end; where that is too little for the transformers' private
    bounds to find the data (their ``reliable_epsilon`` of the number of
    rows and of the columns each reads), what they need, up to
    ``MAX_PREPROCESSING_SHARE`` (30%); equal shares otherwise (a pipeline
    of transformers, or no private model).  ``budget_split`` sets them by
    step name.  A nested private pipeline is one step of the split, and
    splits its share among its own steps.

    The estimators passed in are never changed: a step that gets its
    budget (or a seed) from the pipeline is fitted as a copy made by its
    ``with_budget`` method, which replaces it in ``steps``; the others are
    fitted as they are, as :class:`sklearn.pipeline.Pipeline` does.

    Declared bounds.  A model at the end with ``feature_bound="public"``
    (:class:`~skdpopt.DPLasso`) is fitted as a copy that knows the bounds
    the transformers before it give their output columns by construction
    (1 for one-hot columns, for instance): they come from the transformers'
    types and parameters, never from the data.

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
        ``{step name: share of the pipeline's budget}`` for every private
        step that releases something and takes its budget from the
        pipeline (nested steps by their ``outer__inner`` path); shares are
        positive and, with the steps' own budgets, add up to at most the
        pipeline's.
    public_steps : tuple of str, default=()
        Names of steps whose fit you declare learns nothing private from the
        data (a custom stateless transformer): accepted without checks.
        Private steps inside them still count.
    transform_input : list of str or None, default=None
        As for :class:`sklearn.pipeline.Pipeline`.
    memory : str or object with the joblib.Memory interface, default=None
        As for :class:`sklearn.pipeline.Pipeline`.
    verbose : bool, default=False
        As for :class:`sklearn.pipeline.Pipeline`.
    random_state : int, RandomState instance or None, default=None
        An int seeds every private step whose own ``random_state`` is
        ``None``, each with its own seed derived from this one, so that a
        whole pipeline fit can be reproduced.  For tests and documentation
        only: a real release leaves it unset (anyone who knows the seed can
        reproduce, and subtract, the noise).  ``None`` or a RandomState:
        each step draws fresh entropy from the operating system at every
        fit (or uses its own ``random_state``).

    Attributes
    ----------
    privacy_spent_ : PrivacySpent
        Guarantee of the whole fit: the smaller of basic composition of the
        fitted private steps' ``privacy_spent_`` and the accountant's
        composition of their plans' events, at the sum of their deltas.
    step_budgets_ : dict
        ``{step path: (epsilon, delta)}`` spent by each private step that
        releases something (a nested private pipeline as one step).
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

    def uses_privacy_budget(self):
        """Whether a fit releases anything: whether a private step does.

        Returns
        -------
        bool
        """
        return any(step.uses_privacy_budget() for _, step in self._units())

    def __sklearn_clone__(self):
        copy = super().__sklearn_clone__()
        # What this pipeline set on its steps is not theirs: a clone (that
        # GridSearchCV, say, makes of a fitted pipeline) shares it out anew.
        if hasattr(self, "_assigned"):
            copy._assigned = self._assigned
        return copy

    def _units(self):
        """Each private step (a nested private pipeline as one) and its path."""
        return _leaves_of(self.steps, "", set(self.public_steps), nested=False)

    def _own(self, path, unit, name):
        """The value of a step's parameter that the user chose, or None
        (its default, or a value this pipeline set at an earlier fit)."""
        value = getattr(unit, name)
        assigned = getattr(self, "_assigned", {}).get(path, {})
        if name in assigned and _same(value, assigned[name]):
            return None
        if name == "random_state":
            return value
        if isinstance(unit, PrivatePipeline) and unit.epsilon is None:
            # It keeps its steps' own budgets: their sum is its own.
            return _kept_budget(unit)[0 if name == "epsilon" else 1]
        return None if _same(value, _default(unit, name)) else value

    def _default_shares(self, units, X=None):
        """Each budgeted step's default share of the pipeline's budget."""
        paths = list(units)
        last, estimator = self.steps[-1]
        # The model at the end gets the larger share; a pipeline of
        # transformers only splits equally.
        final = [p for p in paths
                 if p == last and not hasattr(estimator, "transform")]
        others = [p for p in paths if p not in final]
        if final and others:
            share = self._preprocessing_share({p: units[p] for p in others}, X)
            each = share / len(others)
            return {**{p: each for p in others}, last: 1.0 - share}
        return {p: 1.0 / len(paths) for p in paths}

    def _preprocessing_share(self, units, X):
        """``PREPROCESSING_SHARE``, or, where the private transformers'
        bounds need more of the budget to find the data
        (``reliable_epsilon`` of the rows and of the columns each one
        reads), that, up to ``MAX_PREPROCESSING_SHARE``.  From the public
        shape of X and the parameters only."""
        if X is None or not np.isfinite(self.epsilon) or self.epsilon <= 0:
            return PREPROCESSING_SHARE
        try:
            n_samples = _num_samples(X)
        except (TypeError, ValueError):  # no length (a Dask array's chunks)
            return PREPROCESSING_SHARE
        if not isinstance(n_samples, Integral) or n_samples < 1:
            return PREPROCESSING_SHARE
        delta = PREPROCESSING_SHARE * self.delta / len(units)
        needed = 0.0
        for path, unit in units.items():
            width = _input_width(self.steps, path, X)
            if width and hasattr(unit, "reliable_epsilon"):
                needed += unit.reliable_epsilon(n_samples, width, delta)
        return float(np.clip(needed / self.epsilon, PREPROCESSING_SHARE,
                             MAX_PREPROCESSING_SHARE))

    def _user_shares(self, paths, free):
        split = dict(self.budget_split)
        wanted = [p for p in paths if p in free]
        missing = [p for p in wanted if p not in split]
        unknown = [p for p in split if p not in wanted]
        if missing or unknown:
            raise ValueError(
                "budget_split must name every private step that releases "
                f"something and takes its budget from the pipeline, {wanted}; "
                f"missing {missing}, not such a step {unknown} (a step with "
                "its own epsilon and delta keeps them).")
        shares = {p: float(split[p]) for p in wanted}
        if any(not s > 0 for s in shares.values()):
            raise ValueError(
                f"budget_split shares must be positive, got {split}.")
        return shares

    def _split(self, budgeted, X=None):
        """``{path: (epsilon, delta)}`` for every budgeted step, and the
        paths whose budget the pipeline chose (not the step's own)."""
        paths = [p for p, _ in budgeted]
        if self.epsilon is None:
            return {p: _kept_budget(u) for p, u in budgeted}, {}
        own = {p: (self._own(p, u, "epsilon"), self._own(p, u, "delta"))
               for p, u in budgeted}
        free = {p for p in paths if None in own[p]}
        if self.budget_split is not None:
            shares, renormalise = self._user_shares(paths, free), False
        else:
            shares, renormalise = self._default_shares(dict(budgeted), X), True
        budgets = {p: [None, None] for p in paths}
        chosen = {p: {} for p in paths}
        for k, (name, total) in enumerate((("epsilon", self.epsilon),
                                           ("delta", self.delta))):
            fixed = {p: own[p][k] for p in paths if own[p][k] is not None}
            taking = [p for p in paths if own[p][k] is None]
            used = sum(fixed.values())
            if used > total * (1 + 1e-9):
                raise ValueError(
                    f"the private steps' own {name} "
                    f"{ {p: float(v) for p, v in fixed.items()} } add up to "
                    f"{used:.6g}, above the pipeline's {name}={total:g}. Lower "
                    f"them, raise the pipeline's {name}, or leave {name} unset "
                    "on the steps to share the pipeline's.")
            if renormalise and taking:
                # What the steps' own budgets leave, in the default proportions.
                weight = sum(shares[p] for p in taking)
                given = {p: (total - used) * shares[p] / weight for p in taking}
            else:
                given = {p: shares[p] * total for p in taking}
            if used + sum(given.values()) > total * (1 + 1e-9):
                raise ValueError(
                    f"the private steps' budgets add up to {name}="
                    f"{used + sum(given.values()):.6g}, above the pipeline's "
                    f"{name}={total:g} (their own: "
                    f"{ {p: float(v) for p, v in fixed.items()} }; from "
                    f"budget_split: { {p: float(v) for p, v in given.items()} }"
                    "). Lower the shares or the steps' own budgets.")
            if taking and total > 0 and not min(given.values()) > 0:
                raise ValueError(
                    f"the steps with their own {name} "
                    f"{ {p: float(v) for p, v in fixed.items()} } take all "
                    f"of the pipeline's {name}={total:g}, leaving nothing for "
                    f"{taking}. Lower their {name} or raise the pipeline's.")
            for p in paths:
                budgets[p][k] = fixed[p] if p in fixed else given[p]
                if p not in fixed:
                    chosen[p][name] = given[p]
        return {p: tuple(b) for p, b in budgets.items()}, chosen

    def _seeds(self, units):
        """``{path: random_state}`` for the steps whose seed the pipeline sets."""
        chosen = {}
        if isinstance(self.random_state, Integral):
            # One independent seed per step (a shared seed would give the
            # steps the same noise draws).
            children = np.random.SeedSequence(self.random_state).spawn(len(units))
            for (path, unit), child in zip(units, children, strict=True):
                if self._own(path, unit, "random_state") is None:
                    chosen[path] = int(child.generate_state(1)[0])
        else:
            # Seeds set at an earlier fit go: each step draws fresh entropy.
            for path, unit in units:
                if unit.random_state is not None and self._own(
                        path, unit, "random_state") is None:
                    chosen[path] = None
        return chosen

    def _configure(self, X=None):
        """Check the steps; put a configured copy of each step whose budget
        or seed the pipeline sets in ``steps`` (X: for its public shape)."""
        units = self._units()
        budgeted = [(p, u) for p, u in units if u.uses_privacy_budget()]
        budgets, chosen = self._split(budgeted, X)
        seeds = self._seeds(units)
        assigned, replaced = {}, {}
        for path, unit in units:
            assigned[path] = dict(chosen.get(path, {}))
            new = {name: value for name, value in assigned[path].items()
                   if not _same(getattr(unit, name), value)}
            if path in seeds:
                if isinstance(self.random_state, Integral):
                    assigned[path]["random_state"] = seeds[path]
                if not _same(unit.random_state, seeds[path]):
                    new["random_state"] = seeds[path]
            if new:
                copy = unit.with_budget(*budgets[path]) if path in budgets \
                    else clone(unit)
                if "random_state" in new:
                    copy.set_params(random_state=new["random_state"])
                replaced[path] = copy
        self.steps = list(self.steps)
        for i, (name, step) in enumerate(self.steps):
            if name in replaced:
                self.steps[i] = (name, replaced[name])
                continue
            inner = {path[len(name) + 2:]: copy for path, copy in replaced.items()
                     if path.startswith(name + "__")}
            if inner:
                step = clone(step)
                step.set_params(**inner)
                self.steps[i] = (name, step)
        self._assigned = assigned
        self.step_budgets_ = budgets

    def _fit(self, *args, **kwargs):
        # Every fitting method of Pipeline (fit, fit_transform, fit_predict)
        # starts here, before any step sees the data: targets the model
        # would refuse are refused now, before a private step releases.
        y = args[1] if len(args) > 1 else kwargs.get("y")
        check_targets(_model_at_the_end(self), y)
        self._configure(args[0] if args else kwargs.get("X"))
        Xt = _quoting_no_value(super()._fit, *args, **kwargs)
        self._declare_bounds(Xt)
        return Xt

    def _declare_bounds(self, Xt):
        """Hand the model at the end the bounds and one-hot blocks its input
        columns have by construction (:func:`~skdpopt._declared.declared_bounds`
        and :func:`~skdpopt._declared.declared_blocks` of the fitted
        transformers: their types and parameters, never the data),
        as a copy, where it takes them (``with_declared_bounds``) and its
        ``feature_bound`` is "public"."""
        name, last = self.steps[-1]
        bound = getattr(last, "feature_bound", None)
        if not (hasattr(last, "with_declared_bounds") and isinstance(bound, str)
                and bound == "public" and len(self.steps) > 1
                and len(getattr(Xt, "shape", ())) == 2):
            return
        before = self.steps[-2][1]
        bounds = declared_bounds(before, Xt.shape[1])
        blocks = declared_blocks(before, Xt.shape[1])
        self.steps = list(self.steps)
        self.steps[-1] = (name, last.with_declared_bounds(bounds, blocks))

    @property
    def privacy_spent_(self):
        """Guarantee of the whole fit, composed from the fitted private steps."""
        if not hasattr(self, "step_budgets_"):
            raise AttributeError("privacy_spent_ is set by fit")
        fitted = [e for _, s in self.steps for e in _fitted_leaves(s)]
        if not fitted:
            return PrivacySpent(0.0, 0.0)
        events = [e.privacy_event_ for e in fitted]
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


def _model_at_the_end(pipeline):
    """The estimator a pipeline's targets reach (inside nested pipelines)."""
    last = pipeline.steps[-1][1]
    while isinstance(last, Pipeline):
        last = last.steps[-1][1]
    return last


def _quoting_no_value(fit, *args, **kwargs):
    """``fit(*args, **kwargs)``, its errors re-raised without the values of
    the data that a public step's message quotes (scikit-learn's encoders
    name the unknown categories they find; skdpopt's own messages name
    public values only, and stay as they are)."""
    try:
        return fit(*args, **kwargs)
    except (ValueError, TypeError) as exc:
        if raised_in_skdpopt(exc):
            raise
        raise without_values(exc) from None


def _kept_budget(unit):
    """``(epsilon, delta)`` a private step spends with the budget it has: a
    pipeline with ``epsilon=None``, the sum of its steps'."""
    if not (isinstance(unit, PrivatePipeline) and unit.epsilon is None):
        return (unit.epsilon, unit.delta)
    budgets = [_kept_budget(u) for _, u in unit._units() if u.uses_privacy_budget()]
    return (sum(b[0] for b in budgets), sum(b[1] for b in budgets))


def _same(a, b):
    """Whether two parameter values are the same (numbers by value)."""
    if isinstance(a, Real) and isinstance(b, Real):
        return float(a) == float(b)
    return a is b


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
