"""DPMinimaxClassifier: private minimisation of the worst group's loss."""

import time
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets

from ._base import (
    PRIVACY_PARAMETER_CONSTRAINTS,
    DPEstimatorMixin,
    LinearClassifierMixin,
    keep_fit_on_error,
    validate_training_data,
)
from ._classifiers import check_group_fit, release_calibration
from ._clipping import clip_features
from ._diagnostics import (
    FEWER_FEATURES,
    MORE_EPSILON,
    MORE_ROWS,
    warn_if_coarse,
    warn_if_noise_dominates,
)
from ._validation import (
    check_group_sizes,
    public_group_sizes,
    resolve_binary_classes,
    resolve_groups,
)
from .plans.minimax import plan_minimax
from .plans.minimax_gda import gda_noise_ratio
from .solvers.gda import noisy_gda, release_row_norm
from .solvers.groups import release_group_sizes
from .solvers.problems import GroupProblem
from .solvers.saddle_point import vertex_sampling

# The solver of each plan, by name.
SOLVERS = {"gda": noisy_gda, "vertex_sampling": vertex_sampling}


class DPMinimaxClassifier(
    LinearClassifierMixin, ClassifierMixin, DPEstimatorMixin, BaseEstimator
):
    """Linear classifier minimising the worst group's logistic loss, privately.

    Solves ``min over w max over groups g of E[log(1 + exp(-y (<w, x> + b)))
    | group g]``, the game ``min_w max_{q in simplex} sum_g q_g F_g(w)``
    between the model and an adversary that weighs the groups, with one of
    two solvers:

    * ``"gda"``: noisy full-batch gradient descent-ascent.  The model
      takes projected gradient steps in an l2 ball on the group-weighted
      loss's gradients (each row's coefficients' part clipped, its
      intercept's part kept, so the probabilities stay calibrated) plus
      Gaussian noise, with a weight decay on the coefficients that grows
      with the noise; the adversary takes exponentiated steps on noisy
      (clipped) group losses, its weights capped at ``kappa`` times the
      group proportions, with kappa chosen from public and released
      quantities: 1 (private average-loss training) when the budget
      cannot pay for upweighting, ``1 / p_min`` (the exact minimax) as
      epsilon grows.  The output averages the last half of the iterates.
      Needs ``delta > 0``.
    * ``"vertex_sampling"``: private stochastic mirror descent over the
      vertices ``+-R e_j`` of the l1 ball ``||w||_1 + |b| / feature_bound
      <= radius`` (González, Guzmán and Paquette 2024, Algorithm 1): both
      players update multiplicatively on fresh disjoint batches and draw K
      vertices after each step (exponential mechanisms); the model is the
      average of its draws.  Its error grows with ``log d``, not
      ``sqrt(d)``: the choice for many features and few rows.
    * ``"auto"`` picks one from public quantities
      (:func:`skdpopt.plans.minimax.choose_solver`).

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
        Number of steps T. ``"gda"``: full passes over the data, ``None`` is 8
        per coordinate of the model (the intercept's included) within [50, 400]
        with privacy, 200 without. ``"vertex_sampling"``: with privacy each
        step has a fresh batch of ``n_samples // T`` rows (so ``T <=
        n_samples``); without, batches of ``n_samples // min(T,
        sqrt(n_samples))`` rows cut from successive random permutations.
        ``None``: with privacy, the largest T up to ``sqrt(n_samples)`` at
        which the worst-case private step is still ``STEP_RATIO`` (0.025) times
        the capped one (grows with epsilon and the smallest group's size); ``20
        sqrt(n_samples)`` (20 passes) without (see Notes).
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
    clip_norm : "auto" or float, default="auto"
        ``"gda"``: the row scale S.  The coefficients' part of each row's
        gradient is clipped to ``C = 0.7 S`` (``CLIP_FACTOR``; the
        intercept's part, at most ``feature_bound``, is not clipped) and
        the model's step is ``4 / (S^2 + b^2)``.  ``"auto"`` releases S
        first, a private 0.99 quantile of the rows' norms ``||x_i||``
        after the feature clip, for 5% of the budget (zCDP units); a float
        is public and free.
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
    clip_norm_ : float
        ``"gda"`` only: the clip C of the coefficients' part of each row's
        gradient (``inf`` without privacy).
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
    ``"gda"`` schedule: T = 8 full passes per coordinate of the model
    within [50, 400] (200 without privacy); the budget (zCDP) is split
    5% counts, 5% the row norm (``clip_norm="auto"``), then half of the
    rest to the model and half to the adversary (all to the model when
    kappa is 1: the adversary then releases nothing); the model's step is
    ``4 / (S^2 + b^2)``; with f the model's noise floor ``2 sqrt(C^2 +
    b^2) sqrt(d) / (n mu_model)`` (mu_model the Gaussian-DP parameter of
    its releases), kappa is ``clip(0.05 / f, 1, 1 / p_min)`` and the
    weight decay ``f`` times the step's largest ``q_g / p_g``; the
    adversary's step makes the noise of its final log-weights about 1 on
    the smallest group.  All chosen on a generated family of group tasks
    and the panel's design tables (``docs/design/minimax.md``).  Without
    privacy nothing is clipped or decayed.  A fit whose noise floor is
    above 0.05 warns (``UtilityWarning``).

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
    minimax's worst-group training loss; ``docs/design/minimax.md``).
    At small epsilon, expect little from vertex sampling: both players'
    sensitivities grow with ``1 / p_min``, the inverse share of the
    smallest group.

    After the solver, both solvers release the class counts and a fit
    check, each group's sum of the training rows' gains in log-likelihood
    over the class shares (clipped, the classes balanced by the counts),
    on 3% and 2% of the budget; vertex sampling also calibrates its
    intercept to the released class share (3 noisy probability sums on
    5%).  The fit warns (``UtilityWarning``) unless the released gains,
    each lowered by a margin from its noise, are positive on every mixture
    of the groups the solver's adversary weighs (gda: no group above
    ``kappa_`` times its proportion; vertex sampling: every group): a fit
    that does not warn was shown better than the class shares on its
    worst such mixture.
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
        "clip_norm": [StrOptions({"auto"}), Interval(Real, 0, None, closed="neither")],
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
        clip_norm="auto",
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
        start = time.perf_counter()
        X, y = validate_training_data(
            self, X, y, accept_sparse="csr", dtype=[np.float64, np.float32]
        )
        check_classification_targets(y)
        self.classes_, encoded = resolve_binary_classes(self, y, self.classes)
        n_samples, n_features = X.shape
        self.groups_, codes = resolve_groups(self, sensitive_features, n_samples,
                                             self.groups)
        self._warn_if_delta_too_large(n_samples)
        # groups read from the data are unnamed in messages
        sizes = public_group_sizes(self.groups_, self.group_priors, n_samples,
                                   self.min_group_size,
                                   named=self.groups is not None)
        plan = plan_minimax(
            n_samples=n_samples, n_features=n_features + int(self.fit_intercept),
            n_groups=len(self.groups_), epsilon=self.epsilon, delta=self.delta,
            solver=self.solver,
            proportions=None if sizes is None else sizes / sizes.sum(),
            count_budget_share=self.count_budget_share, clip_norm=self.clip_norm,
            loss_bound=self.loss_bound, radius=self.radius,
            feature_bound=self.feature_bound, fit_intercept=self.fit_intercept,
            max_iter=self.max_iter,
            n_vertices=self.n_vertices)
        self._say(f"solver={plan.solver!r}, {len(self.groups_)} group(s), "
                  f"{n_samples} rows")
        rng = self._begin_release(plan)
        problem = GroupProblem(
            clip_features(X, self.feature_bound), np.where(encoded == 1, 1.0, -1.0),
            codes, len(self.groups_),
            self.feature_bound if self.fit_intercept else None)
        if sizes is None:
            sizes, what = release_group_sizes(problem, plan, rng)
            check_group_sizes(sizes, self.groups_, what, self.min_group_size,
                              named=self.groups is not None)
        # "gda" with clip_norm="auto": the rows' released norm quantile.
        draws = getattr(plan, "row_norm_draws", None)
        if draws is not None:
            warn_if_coarse(self, draws, ["clip_norm"])
        stage = plan.stage(sizes, release_row_norm(problem, draws, rng))
        if plan.solver == "gda":
            warn_if_noise_dominates(
                self, gda_noise_ratio(stage),
                levers=(MORE_EPSILON, MORE_ROWS, FEWER_FEATURES))
        self._say(_describe(stage))
        result = SOLVERS[plan.solver](problem, stage, rng)
        self.solver_ = plan.solver
        self.coef_ = result.coef[None, :]
        # After the solver, so that its draws are those of a fit without them.
        totals, intercept = release_calibration(X, problem, result, plan.checks,
                                                rng)
        self.intercept_ = np.array([intercept])
        check_group_fit(self, X, problem, totals, plan.checks.fit_check, stage,
                        rng)
        self.group_weights_ = result.group_weights
        self.group_proportions_ = stage.proportions
        self.count_noise_scale_ = plan.count_noise_scale
        self.n_iter_ = stage.n_steps
        if plan.solver == "gda":
            self.kappa_ = stage.kappa
            self.clip_norm_ = stage.clip_norm
        else:
            self.n_vertices_ = stage.n_draws
            self.step_sizes_ = (result.x_step_sizes, stage.y_step)
            self.score_sensitivity_ = stage.score
            self.n_draws_ = stage.n_releases
        self._finish_release(plan)
        self._say(f"done in {time.perf_counter() - start:.2f} s")
        return self

    def _say(self, message):
        if self.verbose:  # public or released quantities only
            print(f"[DPMinimaxClassifier] {message}")

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.classifier_tags.multi_class = False
        # At the default epsilon=1 the check suite's datasets of a few dozen
        # rows leave the step size too small to learn much.
        tags.classifier_tags.poor_score = True
        return tags


def _describe(stage):
    """The schedule a verbose fit prints: public or released quantities."""
    if hasattr(stage, "kappa"):
        return (f"T={stage.n_steps}, kappa={stage.kappa:.3g}, noise multipliers "
                f"{stage.noise_multiplier:.3g} (model) / "
                f"{stage.loss_noise_multiplier:.3g} (group losses)")
    return (f"T={stage.n_steps}, K={stage.n_draws}, score sensitivity "
            f"{stage.score:.3g}")
