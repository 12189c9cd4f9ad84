"""DPMinimaxClassifier: private minimisation of the worst group's loss."""

import math
import time
import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets, type_of_target

from ._base import (
    PRIVACY_PARAMETER_CONSTRAINTS,
    DPEstimatorMixin,
    LinearClassifierMixin,
    keep_fit_on_error,
    make_generator,
    validate_training_data,
)
from ._clipping import clip_features
from .accounting.zcdp import exponential_score_sensitivity, rho_for
from .exceptions import PrivacyLeakWarning
from .losses import LogLoss
from .mechanisms import gaussian_noise, laplace_noise
from .plans.minimax import (
    gda_stage,
    plan_minimax_gda,
    plan_minimax_vertex_counts,
    plan_minimax_vertex_public,
    vertex_score,
)
from .solvers.gda import noisy_gda
from .solvers.mirror_descent import VertexSet
from .solvers.saddle_point import group_linear_model_oracle, saddle_point_mirror_descent


def encode_groups(sensitive_features, n_samples):
    """Group labels and integer codes from one or several columns.

    Parameters
    ----------
    sensitive_features : array-like of shape (n_samples,) or (n_samples, k)
        One label per row, or k columns (a DataFrame, say) whose
        combinations form intersectional groups.
    n_samples : int

    Returns
    -------
    labels : ndarray of object of shape (n_groups,)
        Distinct groups, sorted; tuples for several columns.
    codes : ndarray of int of shape (n_samples,)
    """
    if hasattr(sensitive_features, "to_numpy"):  # pandas Series / DataFrame
        values = sensitive_features.to_numpy()
    else:
        values = np.asarray(sensitive_features, dtype=object)
    if values.ndim == 0 or values.shape[0] != n_samples:
        raise ValueError(
            f"sensitive_features has {values.shape[0] if values.ndim else 0} "
            f"rows but X has {n_samples}; pass one group label per row."
        )
    if values.ndim > 2:
        raise ValueError("sensitive_features must be 1-D or 2-D.")
    columns = values.reshape(n_samples, -1)
    if columns.shape[1] == 0:
        raise ValueError("sensitive_features has no columns.")
    column_codes, column_labels = [], []
    for j in range(columns.shape[1]):
        column = columns[:, j]
        missing = np.array(
            [v is None or (isinstance(v, float) and math.isnan(v)) for v in column],
            dtype=bool,
        )
        if missing.any():
            raise ValueError(
                "sensitive_features has missing values; every row needs a group."
            )
        try:
            labels, codes = np.unique(column, return_inverse=True)
        except TypeError:  # mixed types: order by their text
            text = column.astype(str)
            _, first, codes = np.unique(text, return_index=True, return_inverse=True)
            labels = column[first]
        column_codes.append(codes.ravel())
        column_labels.append(labels)
    if len(column_codes) == 1:
        labels = np.empty(len(column_labels[0]), dtype=object)
        labels[:] = list(column_labels[0])
        return labels, column_codes[0]
    combos, codes = np.unique(
        np.column_stack(column_codes), axis=0, return_inverse=True
    )
    labels = np.empty(len(combos), dtype=object)
    labels[:] = [
        tuple(column_labels[j][c] for j, c in enumerate(row)) for row in combos
    ]
    return labels, codes.ravel()


# Passes over the data without privacy, and the factor on the worst-case
# regret-optimal step sizes that caps every step: both measured on a
# tuning design (``benchmarks/bench_minimax.py --tuning``).  The worst-case
# bound R b on the gradients is about ten times the gradients seen there,
# which makes the worst-case step too short.
NON_PRIVATE_PASSES = 20
STEP_CAP_FACTOR = 3.0
# The default private T keeps the model's private step (all the adversary's
# draws on the smallest group) at this share of the capped step; measured
# on the same tuning design and one of 8 groups.
STEP_RATIO = 0.025


def default_schedule(n_samples, epsilon, delta, n_x_vertices, proportions, radius,
                     feature_bound):
    """Default T and K.

    With privacy every row is used once: T disjoint batches of ``n / T``
    rows, ``K = sqrt(T)`` draws per player per step.  More steps shrink
    each batch, so the private step (score sensitivity over the change of
    the scores) falls as ``T^(-7/4)``, while the capped, regret-optimal step
    falls only as ``T^(-1/2)``.  T is the largest number of steps at which
    the private model step, for an adversary whose draws all fall on the
    smallest group, is still ``STEP_RATIO`` times the cap, at most
    ``sqrt(n)`` (:func:`private_steps`): it grows with ``n * p_min`` and
    epsilon.  Without privacy nothing limits the
    schedule: ``NON_PRIVATE_PASSES`` passes over the data in batches of
    about ``sqrt(n)`` rows, and K the square root of the number of batches
    per pass.
    """
    private = not np.isinf(epsilon)
    if private:
        n_steps = private_steps(
            n_samples, epsilon, delta, n_x_vertices, proportions, radius,
            feature_bound,
        )
    else:
        root = batches_per_pass(n_samples, n_samples, private=False)
        n_steps = NON_PRIVATE_PASSES * root
    return n_steps, draws_per_step(n_samples, n_steps, private)


def private_steps(n_samples, epsilon, delta, n_x_vertices, proportions, radius,
                  feature_bound):
    """The largest T in ``[1, sqrt(n)]`` whose private model step is at
    least ``STEP_RATIO`` times the capped step, for an adversary whose
    draws all fall on the smallest group (the worst case).

    Batches are never smaller than the ``sqrt(n)`` rows of the non-private
    schedule, so that a large epsilon gives the non-private step sizes.

    Public inputs only (the proportions are public priors or released
    noisy counts).  The private score sensitivity is the zCDP estimate for
    ``2 K T`` draws sharing ``epsilon``; the model's scores change by at
    most ``2 R b T / (n p_min)`` per unit step (``docs/privacy/dpminimax.md``).
    """
    weight = 1.0 / np.min(proportions)  # the largest ybar_g / p_g

    def private_enough(n_steps):
        draws = 2 * draws_per_step(n_samples, n_steps, True) * n_steps
        if delta <= 0:
            score = epsilon / (2.0 * draws)
        else:
            score = exponential_score_sensitivity(rho_for(epsilon, delta) / draws)
        change = 2.0 * radius * feature_bound * n_steps / n_samples * weight
        cap = STEP_CAP_FACTOR * math.sqrt(
            2.0 * math.log(n_x_vertices) / n_steps
        ) / (radius * feature_bound)
        return score / change >= STEP_RATIO * cap

    low, high = 1, batches_per_pass(n_samples, n_samples, private=False)
    if private_enough(high):
        return high
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if private_enough(middle) else (low, middle)
    return low


def batches_per_pass(n_samples, n_steps, private):
    """T with privacy (one pass); without, ``min(T, sqrt(n))``."""
    if private:
        return n_steps
    return int(min(n_steps, max(1, round(math.sqrt(n_samples)))))


def draws_per_step(n_samples, n_steps, private):
    """K: the square root of the number of batches per pass."""
    return max(1, round(math.sqrt(batches_per_pass(n_samples, n_steps, private))))


# solver="auto": vertex sampling's error grows with log(d), the gradient
# descent-ascent's with sqrt(d) / (n mu); measured on the tuning designs
# (``benchmarks/bench_minimax.py --tuning``).
AUTO_SQRT_D_PER_ROW = 0.004
# Without privacy gda solves the problem over the l2 ball, whose models
# overfit once d is a sizeable fraction of n (its generalisation gap grows
# as sqrt(d / n); the l1 ball's as sqrt(log(d) / n)); with privacy the
# noise and the short schedule keep it from that (measured up to epsilon =
# 100).  Measured on the tuning designs.
AUTO_D_PER_ROW = 0.007


def choose_solver(n_samples, n_features, n_groups, epsilon, delta):
    """``"gda"`` or ``"vertex_sampling"`` from public quantities.

    Parameters
    ----------
    n_samples, n_features, n_groups : int
        Public sizes (``n_features`` counts the intercept).
    epsilon, delta : float

    Returns
    -------
    str
        ``"vertex_sampling"`` for pure differential privacy (``delta=0``,
        which Gaussian noise cannot give), where the dimension is large
        against the rows and the budget (``sqrt(d) > AUTO_SQRT_D_PER_ROW n
        epsilon``) and, without privacy, where ``d > AUTO_D_PER_ROW n``;
        ``"gda"`` otherwise.
    """
    if np.isinf(epsilon):
        return "vertex_sampling" if n_features > AUTO_D_PER_ROW * n_samples else "gda"
    if delta <= 0:
        return "vertex_sampling"
    if math.sqrt(n_features) > AUTO_SQRT_D_PER_ROW * n_samples * epsilon:
        return "vertex_sampling"
    return "gda"


def make_batches(n_samples, n_steps, per_pass, rng):
    """Row indices of each step's batch: successive random partitions of
    the rows into ``per_pass`` batches, T batches in all.  With privacy
    ``per_pass = T``: one partition, every row in one batch."""
    batches = []
    while len(batches) < n_steps:
        batches.extend(np.array_split(rng.permutation(n_samples), per_pass))
    return batches[:n_steps]


class DPMinimaxClassifier(
    LinearClassifierMixin, ClassifierMixin, DPEstimatorMixin, BaseEstimator
):
    """Linear classifier minimising the worst group's logistic loss, privately.

    Solves ``min over w max over groups g of E[log(1 + exp(-y (<w, x> + b)))
    | group g]``, the game ``min_w max_{q in simplex} sum_g q_g F_g(w)``
    between the model and an adversary that weighs the groups, with one of
    two solvers:

    * ``"gda"``: noisy gradient descent-ascent.  The model takes projected
      gradient steps in an l2 ball on per-example clipped gradients of the
      group-weighted loss plus Gaussian noise; the adversary takes
      exponentiated steps on noisy (clipped) group losses, its weights
      capped at ``kappa`` times the group proportions, with kappa chosen
      from public quantities: 1 (private average-loss training) when the
      budget cannot pay for the smallest group, ``1 / p_min`` (the exact
      minimax) as epsilon grows.  The output averages the last half of
      the iterates.  Needs ``delta > 0``.
    * ``"vertex_sampling"``: private stochastic mirror descent over the
      vertices ``+-R e_j`` of the l1 ball ``||w||_1 + |b| / feature_bound
      <= radius`` (González, Guzmán and Paquette 2024, Algorithm 1): both
      players update multiplicatively on fresh disjoint batches and draw K
      vertices after each step (exponential mechanisms); the model is the
      average of its draws.  Its error grows with ``log d``, not
      ``sqrt(d)``: the choice for many features and few rows.
    * ``"auto"`` picks one from public quantities (:func:`choose_solver`).

    Group proportions weight the groups.  They are public when
    ``group_priors`` is given; otherwise noisy group counts are released
    first (Gaussian for ``"gda"``, Laplace for ``"vertex_sampling"``) and
    the rest of the fit is planned from them.  Everything the fit releases
    is in its plan (``privacy_plan_``), made from public quantities only;
    ``privacy_spent_`` is the plan's guarantee (replace-one neighbours,
    including a record whose replacement changes its group).  The
    derivation is in ``docs/privacy/dpminimax.md``.

    Parameters
    ----------
    epsilon : float, default=1.0
        Privacy budget of the whole fit, in (0, 1e6]; ``np.inf`` trains without
        privacy (vertices are still sampled).  Each call to ``fit`` spends it
        again.
    delta : float, default=1e-5
        Failure probability; choose it well below ``1 / n_samples``.  0
        gives pure differential privacy.
    radius : float, default=5.0
        Radius R of the l1 ball.  Public.  It bounds the logistic loss by
        ``log(1 + exp(R b))``, which sets the adversary's sensitivity.
    feature_bound : float, default=1.0
        Public bound b: every feature is clipped to ``[-b, b]``.
    fit_intercept : bool, default=True
        Fit an intercept: one more coordinate of the l1 ball whose feature is
        the constant b, so ``|intercept_| <= radius * b``.
    group_priors : dict, array-like of shape (n_groups,) or None, default=None
        Public group proportions, as a mapping from group label to
        proportion or an array in the sorted order of the groups.  ``None``
        estimates them from noisy counts on ``count_budget_share`` of the
        budget.  Ignored when ``fit`` gets no groups.
    count_budget_share : float, default=0.1
        Share of ``epsilon`` spent on the noisy group counts when
        ``group_priors`` is None (pure DP, Laplace noise).
    min_group_size : float, default=20
        Floor on every group's (noisy or prior-implied) number of rows;
        ``fit`` raises ``ValueError`` naming a group below it.  The
        adversary's sensitivity grows as the inverse of the smallest group.
    max_iter : int, default=None
        Number of steps T.  With privacy each step has a fresh batch of
        ``n_samples // T`` rows (so ``T <= n_samples``); without, batches
        of ``n_samples // min(T, sqrt(n_samples))`` rows cut from
        successive random permutations.  ``None``:
        with privacy, the largest T up to ``sqrt(n_samples)`` at which the
        worst-case private step is still ``STEP_RATIO`` (0.025) times the
        capped one (grows with epsilon and the smallest group's size);
        ``20 sqrt(n_samples)`` (20 passes) without (see Notes).
    n_vertices : int, default=None
        K, the number of vertices drawn per player per step.  ``None``: the
        square root of the number of batches per pass (``sqrt(T)`` with
        privacy).
    solver : {"auto", "gda", "vertex_sampling"}, default="auto"
        The algorithm (see above).  ``"auto"``: ``"vertex_sampling"`` for
        ``delta=0``, when ``sqrt(d + 1) > 0.004 n epsilon`` (many
        features for the rows and the budget) and, for ``epsilon=inf``,
        when ``d + 1 > 0.007 n`` (where the l2 ball overfits);
        ``"gda"`` otherwise.  The rule was measured on tuning designs.
    clip_norm : float, default=1.0
        ``"gda"``: public bound C on each row's gradient norm (with respect
        to the coefficients and the intercept coordinate).  Also scales the
        model's step size.
    loss_bound : float, default=1.0
        ``"gda"``: each row's loss is clipped to ``[0, loss_bound]`` in the
        adversary's noisy group losses.
    classes : array-like of shape (2,), default=None
        The two class labels, declared public.  Rows of ``y`` outside raise
        ``ValueError``.  ``None`` reads them from ``y`` and warns
        (``PrivacyLeakWarning``).
    groups : array-like, default=None
        The group labels, declared public (tuples when several columns form
        the groups); ``groups_`` follows their order.  Rows outside raise
        ``ValueError``; a declared group without enough rows fails the
        ``min_group_size`` floor.  ``None`` reads them from the data and
        warns (``PrivacyLeakWarning``).
    verbose : int, default=0
        Print the solver, the schedule and kappa (public or released
        quantities only).
    random_state : int, RandomState instance or None, default=None
        Seeds the fit's one random generator.  A fixed seed lets anyone who
        knows it reproduce the draws: leave it ``None`` for a real release.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        Class labels: ``classes`` sorted, or those read from ``y``.
    coef_ : ndarray of shape (1, n_features)
        Coefficients of the positive class.
    intercept_ : ndarray of shape (1,)
        Intercept.
    groups_ : ndarray of object of shape (n_groups,)
        ``groups`` in its order, or the groups read from the data, sorted;
        tuples when several columns form the groups, and the single group
        ``"all"`` when ``fit`` got none.
    group_weights_ : ndarray of shape (n_groups,)
        The adversary's weights: the average of its iterates over the last
        half of the run (``"gda"``), or the frequency of each group among
        all its draws (``"vertex_sampling"``).  Large weights mark the
        groups with the largest loss.
    group_proportions_ : ndarray of shape (n_groups,)
        The proportions that weighted the groups: ``group_priors`` or the
        normalised noisy counts.
    n_iter_ : int
        Steps T.
    n_vertices_ : int
        ``"vertex_sampling"`` only: K.
    step_sizes_ : tuple of (ndarray of shape (T,), float)
        ``"vertex_sampling"`` only.  The model's step size at each step and
        the adversary's.  The model's step t is
        ``s B / (2 R b max_g(ybar_g / p_g))``, the adversary's
        ``2 s B p_min / (l_max - l_min)``, both capped at
        ``STEP_CAP_FACTOR`` (3) times the worst-case regret-optimal step.
        The model's is larger when that step's adversary draws ``ybar``
        weigh small groups less: its draws then move its weights less.
    score_sensitivity_ : float
        ``"vertex_sampling"`` only.  Replace-one sensitivity of each draw's
        score (log weight).
    n_draws_ : int
        ``"vertex_sampling"`` only.  Vertex draws (exponential mechanisms),
        both players: ``2 K T``.
    count_noise_scale_ : float
        Scale of the noise added to each group count (the Gaussian's
        standard deviation for ``"gda"``, the Laplace scale for
        ``"vertex_sampling"``); 0 when no counts were released (public
        priors, one group, or no privacy).
    privacy_spent_ : PrivacySpent
        The (epsilon, delta) guarantee of the fitted model, replace-one:
        the plan's.
    privacy_plan_ : MinimaxGDAPlan or MinimaxVertexPlan
        Everything the fit released: schedule, noise, event tree.
    solver_ : str
        The solver that ran.
    kappa_ : float
        ``"gda"`` only: the adversary's cap on ``q_g / p_g``.
    n_features_in_ : int
        Number of features seen during ``fit``.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of the features seen during ``fit``.  Defined only when X has
        feature names that are all strings.

    See Also
    --------
    DPLogisticSimplex : Private l1 logistic regression (average loss).
    skdpopt.metrics.worst_group_accuracy : Score a model by its worst group.

    Notes
    -----
    ``"gda"`` schedule: T is ``0.03 n mu / sqrt(d)`` within [10, 50] (mu
    the whole fit's Gaussian-DP parameter), 200 without privacy; the budget
    (zCDP) is split 5% counts, then half of the rest to the model and half
    to the adversary; the model's step is ``R / (C sqrt(T))`` (three times
    that without privacy), the adversary's ``60 / (loss_bound sqrt(T))``;
    kappa is
    ``clip(0.01 n mu_model / (2 sqrt(d)), 1, 1 / p_min)``.  All measured on
    tuning designs (``benchmarks/bench_minimax.py --tuning``).  Without
    privacy nothing is clipped.

    ``"vertex_sampling"`` schedule: with privacy all ``2 K T`` draws share
    the budget and
    each batch has ``n / T`` rows, so fewer steps let each move the weights
    further, up to the capped regret-optimal step; T is the largest (at
    most ``sqrt(n)``) at which the private step, for an adversary whose
    draws all fall on the smallest group, is still ``STEP_RATIO`` (0.025)
    times that step, so that it grows with epsilon and with the smallest
    group's size ``n p_min``; the ratio was measured on two tuning designs
    (4 and 8 groups); ``K = sqrt(T)``.  Without privacy,
    20 passes over the data in batches of about ``sqrt(n)`` rows (measured
    on a tuning design: one pass stayed 0.017 to 0.027 above the exact
    minimax's worst-group training loss; ``docs/benchmarks/dpminimax.md``).
    At small epsilon, expect little from vertex sampling: both players'
    sensitivities grow with ``1 / p_min``, the inverse share of the
    smallest group.
    Binary classification only: ``fit`` raises ``ValueError`` for more than
    two classes.  Without ``sensitive_features`` there is one group and the
    estimator is private l1-constrained logistic regression.  With routing
    enabled (``sklearn.set_config(enable_metadata_routing=True)``)
    ``sensitive_features`` is requested by default, so that Pipeline,
    GridSearchCV and ``cross_validate`` forward it; without routing they
    forward it as a fit parameter.  The privacy cost grows with
    ``1 / (n p_min)``, the size of the smallest group: that group's rows
    carry the most weight in the worst-group objective.  ``"gda"`` caps
    that weight at what the budget can pay for.

    Examples
    --------
    >>> import numpy as np
    >>> from skdpopt import DPMinimaxClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, size=(4000, 5))
    >>> groups = rng.choice(["a", "b"], size=4000, p=[0.8, 0.2])
    >>> y = (X[:, 0] + 0.5 * (groups == "b") * X[:, 1] > 0).astype(int)
    >>> clf = DPMinimaxClassifier(epsilon=1.0, delta=1e-6, classes=[0, 1],
    ...                           groups=["a", "b"], random_state=0)
    >>> clf = clf.fit(X, y, sensitive_features=groups)
    >>> clf.solver_
    'gda'
    >>> clf.privacy_spent_.epsilon <= 1.0
    True
    >>> list(clf.groups_)
    ['a', 'b']
    """

    __metadata_request__fit = {"sensitive_features": True}

    _parameter_constraints = {
        **PRIVACY_PARAMETER_CONSTRAINTS,
        "radius": [Interval(Real, 0, None, closed="neither")],
        "feature_bound": [Interval(Real, 0, None, closed="neither")],
        "fit_intercept": ["boolean"],
        "group_priors": [None, dict, "array-like"],
        "count_budget_share": [Interval(Real, 0, 1, closed="neither")],
        "min_group_size": [Interval(Real, 1, None, closed="left")],
        "max_iter": [None, Interval(Integral, 1, None, closed="left")],
        "n_vertices": [None, Interval(Integral, 1, None, closed="left")],
        "solver": [StrOptions({"auto", "gda", "vertex_sampling"})],
        "clip_norm": [Interval(Real, 0, None, closed="neither")],
        "loss_bound": [Interval(Real, 0, None, closed="neither")],
        "classes": [None, "array-like"],
        "groups": [None, "array-like"],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        *,
        epsilon=1.0,
        delta=1e-5,
        radius=5.0,
        feature_bound=1.0,
        fit_intercept=True,
        group_priors=None,
        count_budget_share=0.1,
        min_group_size=20,
        max_iter=None,
        n_vertices=None,
        solver="auto",
        clip_norm=1.0,
        loss_bound=1.0,
        classes=None,
        groups=None,
        verbose=0,
        random_state=None,
    ):
        self.epsilon = epsilon
        self.delta = delta
        self.radius = radius
        self.feature_bound = feature_bound
        self.fit_intercept = fit_intercept
        self.group_priors = group_priors
        self.count_budget_share = count_budget_share
        self.min_group_size = min_group_size
        self.max_iter = max_iter
        self.n_vertices = n_vertices
        self.solver = solver
        self.clip_norm = clip_norm
        self.loss_bound = loss_bound
        self.classes = classes
        self.groups = groups
        self.verbose = verbose
        self.random_state = random_state

    @keep_fit_on_error
    def fit(self, X, y, sensitive_features=None):
        """Fit the classifier, spending ``epsilon`` and ``delta``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data; sparse input should be CSR.  Values are clipped
            to ``[-feature_bound, feature_bound]``.
        y : array-like of shape (n_samples,)
            Binary class labels, within ``classes`` when it is given.
        sensitive_features : array-like of shape (n_samples,) or \
(n_samples, n_columns), default=None
            Group of each row, or several columns (a DataFrame) whose
            combinations form the groups; within ``groups`` when it is
            given.  ``None``: one group.

        Returns
        -------
        self : DPMinimaxClassifier
            The fitted estimator.
        """
        self._validate_params()
        X, y = validate_training_data(
            self, X, y, accept_sparse="csr", dtype=[np.float64, np.float32]
        )
        check_classification_targets(y)
        self.classes_, encoded = self._resolve_classes(y)
        target = np.where(encoded == 1, 1.0, -1.0)
        n_samples = X.shape[0]
        if sensitive_features is None:
            labels = np.array(["all"], dtype=object)
            codes = np.zeros(n_samples, dtype=np.int64)
        else:
            labels, codes = encode_groups(sensitive_features, n_samples)
            labels, codes = self._resolve_groups(labels, codes)
        self.groups_ = labels
        self._warn_if_delta_too_large(n_samples)
        X = clip_features(X, self.feature_bound)
        rng = make_generator(self.random_state)
        self.solver_ = self._choose_solver(n_samples, X.shape[1], len(labels))
        if self.verbose:
            print(f"[DPMinimaxClassifier] solver={self.solver_!r}, "
                  f"{len(labels)} group(s), {n_samples} rows")
        if self.solver_ == "gda":
            self._fit_gda(X, target, codes, labels, rng)
        else:
            self._fit_vertex_sampling(X, target, codes, labels, rng)
        return self

    def _resolve_classes(self, y):
        """``classes_`` (declared, or read with a warning) and y's indices."""
        if self.classes is None:
            warnings.warn(
                "DPMinimaxClassifier: the label set is read from the training "
                "data, so the fitted model reveals which labels occur. Pass "
                "classes=... to declare it public.",
                PrivacyLeakWarning, stacklevel=3)
            y_type = type_of_target(y, input_name="y")
            if y_type != "binary":
                raise ValueError(
                    "Only binary classification is supported. The type of the "
                    f"target is {y_type}. For more classes, fit one "
                    "DPMinimaxClassifier per class against the rest (each "
                    "spends its own budget).")
            classes, encoded = np.unique(y, return_inverse=True)
            if len(classes) != 2:
                raise ValueError(
                    f"The number of classes has to be two; got {len(classes)} "
                    "class.")
            return classes, encoded.ravel()
        classes = np.unique(np.asarray(self.classes))
        if classes.ndim != 1 or len(classes) != 2:
            raise ValueError(
                "classes must list exactly two labels (binary classification); "
                f"got {len(classes)}.")
        try:
            encoded = np.clip(np.searchsorted(classes, y), 0, 1)
            outside = classes[encoded] != y
        except TypeError as exc:
            raise ValueError(
                f"the labels in y cannot be compared with classes={list(classes)!r}"
            ) from exc
        if np.any(outside):
            # Which label is outside, and in how many rows, is private.
            raise ValueError(
                f"some rows of y have a label outside classes={list(classes)!r}.")
        return classes, encoded

    def _resolve_groups(self, labels, codes):
        """``groups_`` (declared, or read with a warning) and row codes."""
        if self.groups is None:
            warnings.warn(
                "DPMinimaxClassifier: the group set is read from the training "
                "data, so the fitted model reveals which groups occur. Pass "
                "groups=... to declare it public.",
                PrivacyLeakWarning, stacklevel=4)
            return labels, codes
        declared = list(self.groups)
        if not declared:
            raise ValueError("groups must list at least one group.")
        index = {}
        for position, group in enumerate(declared):
            key = tuple(group) if isinstance(group, (list, np.ndarray)) else group
            index.setdefault(key, position)
        mapping = np.array([index.get(label, -1) for label in labels])
        outside = mapping[codes] < 0
        if np.any(outside):
            # Which group is outside, and in how many rows, is private.
            raise ValueError(
                "some rows of sensitive_features have a group outside "
                f"groups={declared!r}.")
        public = np.empty(len(declared), dtype=object)
        public[:] = [tuple(g) if isinstance(g, (list, np.ndarray)) else g
                     for g in declared]
        return public, mapping[codes]

    def _choose_solver(self, n_samples, n_features, n_groups):
        """The solver ``"auto"`` picks, from public quantities only."""
        if self.solver != "auto":
            if self.solver == "gda" and self._is_private and self.delta <= 0:
                raise ValueError(
                    "solver='gda' needs delta > 0 (its releases are Gaussian); "
                    "use solver='vertex_sampling' for pure differential "
                    "privacy.")
            return self.solver
        return choose_solver(n_samples, n_features + int(self.fit_intercept),
                             n_groups, self.epsilon, self.delta)

    def _fit_gda(self, X, target, codes, labels, rng):
        """Noisy gradient descent-ascent: counts first, then the players."""
        start = time.perf_counter()
        n_samples, n_features = X.shape
        n_groups = len(labels)
        priors = None
        if self.group_priors is not None and n_groups > 1:
            priors = self._prior_proportions(labels)
        plan = plan_minimax_gda(
            n_samples=n_samples, n_features=n_features + int(self.fit_intercept),
            n_groups=n_groups, epsilon=self.epsilon, delta=self.delta,
            counts_public=priors is not None or n_groups == 1,
            clip_norm=self.clip_norm, loss_bound=self.loss_bound,
            radius=self.radius, max_iter=self.max_iter)
        self._begin_release(plan)
        counts = np.bincount(codes, minlength=n_groups).astype(float)
        if n_groups == 1:
            sizes, what = counts, "count"
        elif priors is not None:
            sizes, what = priors * n_samples, "prior-implied size"
        elif plan.counts_released:
            sizes = counts + gaussian_noise(rng, plan.count_noise_std, n_groups)
            what = "noisy count"
        else:
            sizes, what = counts, "count"
        self._check_group_sizes(sizes, labels, what)
        proportions = sizes / sizes.sum()
        stage = gda_stage(plan, proportions)
        if self.verbose:
            # Public or released quantities only.
            print(f"[DPMinimaxClassifier] T={plan.n_steps}, kappa="
                  f"{stage.kappa:.3g}, noise multipliers "
                  f"{plan.noise_multiplier:.3g} (model) / "
                  f"{plan.loss_noise_multiplier:.3g} (group losses)")
        result = noisy_gda(
            X, target, codes, proportions=proportions, group_sizes=sizes,
            kappa=stage.kappa, n_steps=plan.n_steps, clip_norm=plan.clip_norm,
            noise_multiplier=plan.noise_multiplier, loss_bound=plan.loss_bound,
            loss_noise_multiplier=plan.loss_noise_multiplier,
            radius=plan.radius, step_size=stage.step_size,
            group_step_size=stage.group_step_size,
            intercept_value=self.feature_bound if self.fit_intercept else None,
            rng=rng)
        self.coef_ = result.coef[None, :]
        self.intercept_ = np.array([result.intercept])
        self.group_weights_ = result.group_weights
        self.group_proportions_ = proportions
        self.kappa_ = stage.kappa
        self.n_iter_ = plan.n_steps
        self.count_noise_scale_ = plan.count_noise_std
        self._finish_release(plan)
        if self.verbose:
            print(f"[DPMinimaxClassifier] done in "
                  f"{time.perf_counter() - start:.2f} s")

    def _check_group_sizes(self, sizes, labels, what):
        if len(sizes) == 1:
            return  # one group: all n (public) rows, no weighting
        small = np.flatnonzero(sizes < self.min_group_size)
        if len(small):
            g = small[np.argmin(sizes[small])]
            # A group read from the data is named only once the fit releases
            # it (groups_), which this one will not.
            name = (f"group {labels[g]!r}" if self.groups is not None
                    else "a group read from the data")
            raise ValueError(
                f"{name} is too small: its {what} is "
                f"{sizes[g]:.1f} < min_group_size={self.min_group_size}. "
                "Merge it with another group or lower min_group_size."
            )

    def _fit_vertex_sampling(self, X, target, codes, labels, rng):
        """Vertex sampling: public proportions, or noisy counts first."""
        n_samples, n_groups = X.shape[0], len(labels)
        # Checked before the counts are released (and charged).
        if self.max_iter is not None and self._is_private and self.max_iter > n_samples:
            raise ValueError(
                f"max_iter={self.max_iter} must be at most n_samples="
                f"{n_samples}: with privacy each step uses a fresh batch "
                "of rows."
            )
        counts = np.bincount(codes, minlength=n_groups).astype(float)
        plan = None
        if n_groups == 1:
            sizes, what = counts, "count"
        elif self.group_priors is not None:
            sizes = self._prior_proportions(labels) * n_samples
            what = "prior-implied size"
        elif self._is_private:
            # The counts are released first and the draws are planned from
            # them: the plan bounds the second stage by the budget left.
            plan = plan_minimax_vertex_counts(
                epsilon=self.epsilon, delta=self.delta,
                count_budget_share=self.count_budget_share)
            self._begin_release(plan)
            sizes = counts + laplace_noise(rng, plan.count_noise_scale, n_groups)
            what = "noisy count"
        else:
            sizes, what = counts, "count"
        self._check_group_sizes(sizes, labels, what)
        proportions = sizes / sizes.sum()
        self.count_noise_scale_ = plan.count_noise_scale if plan else 0.0
        self.group_proportions_ = proportions
        self._fit_saddle_point(X, target, codes, proportions, rng, plan)

    def _prior_proportions(self, labels):
        priors = self.group_priors
        # Groups read from the data are private until the fit releases them:
        # only declared ones are named.
        declared = self.groups is not None
        if isinstance(priors, dict):
            missing = [g for g in labels if g not in priors]
            if missing:
                which = f"group {missing[0]!r}" if declared else (
                    "a group of the data (declare groups=... to name them)")
                raise ValueError(f"group_priors has no entry for {which}.")
            values = np.array([priors[g] for g in labels], dtype=float)
        else:
            values = np.asarray(priors, dtype=float).ravel()
            if len(values) != len(labels):
                found = (f"groups={list(labels)}" if declared else
                         "the groups of the data (declare groups=...)")
                raise ValueError(
                    f"group_priors has {len(values)} entries, not one per group "
                    f"of {found}.")
        if np.any(~np.isfinite(values)) or np.any(values <= 0):
            raise ValueError("group_priors must be positive and finite.")
        return values / values.sum()

    def _fit_saddle_point(self, X, target, codes, proportions, rng, plan):
        """The draws; ``plan`` is the counts' stage-one plan, if any."""
        n_samples, n_features = X.shape
        # With noisy counts the rest of the schedule (T, K, s) is chosen from
        # them, on the budget the counts left (docs/privacy/dpminimax.md).
        budget = plan.draws_epsilon if plan is not None else self.epsilon
        b, R = self.feature_bound, self.radius
        vertex_set = VertexSet.l1_ball(n_features + int(self.fit_intercept), R)
        n_groups = len(proportions)
        n_steps, n_draws = default_schedule(
            n_samples, budget, self.delta,
            vertex_set.n_vertices, proportions, R, b,
        )
        if self.max_iter is not None:
            n_steps = self.max_iter
            n_draws = draws_per_step(n_samples, n_steps, self._is_private)
        if self.n_vertices is not None:
            n_draws = self.n_vertices
        # The step sizes below are those of a run of one pass.
        per_pass = batches_per_pass(n_samples, n_steps, self._is_private)
        batches = make_batches(n_samples, n_steps, per_pass, rng)
        batch_size = n_samples // per_pass  # the smallest batch
        # |<x, z>| <= R b on the ball, so the loss lies in [low, high].
        low, high = np.logaddexp(0.0, -R * b), np.logaddexp(0.0, R * b)
        # Replace-one changes one batch's gradients (docs/privacy/dpminimax.md):
        # per coordinate, by at most 2 R b max_g(ybar_g / p_g) / B for the
        # model (ybar: that step's group draws); the adversary's scores move
        # within a range of (l_max - l_min) / (B p_min).
        x_change_unit = 2.0 * R * b / batch_size
        x_change_worst = x_change_unit / proportions.min()
        y_range = (high - low) / (batch_size * proportions.min())
        draws = 2 * n_draws * n_steps
        # Step sizes that minimise each player's worst-case regret bound, times
        # STEP_CAP_FACTOR: never larger.
        regret_x = STEP_CAP_FACTOR * math.sqrt(
            2.0 * math.log(vertex_set.n_vertices) / per_pass
        ) / (R * b)
        regret_y = STEP_CAP_FACTOR * math.sqrt(
            2.0 * max(math.log(n_groups), 1.0) / per_pass
        ) / (0.5 * (high - low))
        # Every draw of either player is ExponentialMechanism(s): the model's
        # scores move by at most s, the adversary's within a range of 2 s.
        cap = max(regret_x * x_change_worst, regret_y * y_range / 2.0)
        score = cap
        if self._is_private:
            score = vertex_score(budget, self.delta, draws, cap)
        if plan is None:
            # Public proportions: the whole fit is planned before any data
            # is read by a mechanism, and its event is exact.
            plan = plan_minimax_vertex_public(
                epsilon=self.epsilon, delta=self.delta, score=score,
                n_draws=draws)
            self._begin_release(plan)
        y_step = min(regret_y, 2.0 * score / y_range)

        def x_step(y_drawn):
            # The largest row weight this step's draws give, times B.
            y_bar = np.bincount(y_drawn, minlength=n_groups) / len(y_drawn)
            return min(regret_x, score / (x_change_unit * np.max(y_bar / proportions)))

        oracle = group_linear_model_oracle(
            X,
            target,
            codes,
            proportions,
            LogLoss(),
            vertex_set,
            batches,
            intercept_value=b if self.fit_intercept else None,
            loss_center=0.5 * (low + high),
        )
        result = saddle_point_mirror_descent(
            oracle,
            vertex_set.n_vertices,
            n_groups,
            n_steps=n_steps,
            n_draws=n_draws,
            x_step_size=x_step,
            y_step_size=y_step,
            rng=rng,
        )
        point = vertex_set.point(result.x_vertices.ravel())
        self.coef_ = point[None, :n_features]
        self.intercept_ = np.array(
            [point[n_features] * b if self.fit_intercept else 0.0]
        )
        self.group_weights_ = (
            np.bincount(result.y_vertices.ravel(), minlength=n_groups)
            / result.y_vertices.size
        )
        self.n_iter_ = n_steps
        self.n_vertices_ = n_draws
        self.step_sizes_ = (result.x_step_sizes, y_step)
        self.score_sensitivity_ = score
        self.n_draws_ = draws
        self._finish_release(plan)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.classifier_tags.multi_class = False
        # At the default epsilon=1 the check suite's datasets of a few dozen
        # rows leave the step size too small to learn much.
        tags.classifier_tags.poor_score = True
        return tags
