"""DPLogisticSimplex: private logistic regression in the l1 geometry."""

from functools import partial
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils._param_validation import Interval, StrOptions

from ._base import (
    PRIVACY_PARAMETER_CONSTRAINTS,
    DPEstimatorMixin,
    LinearClassifierMixin,
    keep_fit_on_error,
)
from ._classifiers import check_fit, release_weighting, weight_bound
from ._clipping import clip_features
from ._data import clip_rows, is_dask_collection
from ._diagnostics import warn_if_mostly_clipped
from ._targets import check_sample_weight, classifier_data
from .losses import LogLoss
from .plans.checks import CLIP_CHECK_SPREADS
from .plans.classes import public_class_weights
from .plans.logistic_simplex import (
    SGD_CLIP,
    default_feature_bound,
    fitted_attributes,
    plan_logistic_simplex,
    resolve_solver,
)
from .solvers.checks import release_clip_check
from .solvers.frank_wolfe import frank_wolfe_logistic
from .solvers.lockstep_sgd import lockstep_is_possible, polytope_lockstep
from .solvers.mirror_descent import vertex_sampling_logistic
from .solvers.noisy_sgd import polytope_sgd_logistic
from .solvers.problems import LinearProblem


class DPLogisticSimplex(
    LinearClassifierMixin, ClassifierMixin, DPEstimatorMixin, BaseEstimator
):
    """Logistic regression in the l1 ball (or simplex) with differential privacy.

    Fits ``min E[log(1 + exp(-y (<w, x> + b)))]`` over weights in the l1
    ball ``||w||_1 + |b| / feature_bound <= radius`` (or, with
    ``constraint="simplex"``, non-negative weights) by private entropic
    stochastic mirror descent with vertex sampling (González, Guzmán and
    Paquette 2024, Section 4, Algorithm 5).  Its error grows with the
    logarithm of the number of features, not with the number itself,
    which makes it the estimator for high-dimensional sparse data (bags of
    words, one-hot encodings).

    The weights are barycentric coordinates over the vertices ``+-R e_j``
    of the features; mirror descent updates them multiplicatively on fresh
    disjoint batches of ``n / T`` rows, and every released quantity is a
    vertex drawn from an average of the iterates (an exponential
    mechanism).  The released direction u is the average of K vertices
    drawn from the iterates the data produced (the uniform start left
    out), so ``coef_`` has at most K non-zeros per class.  With an
    intercept, a noisy count of the labels gives mirror descent the base
    rate (its gradients are taken at the sampled point plus that
    log-odds).  Last, the scale a of ``coef_ = a u / ||u||_1`` and the
    intercept are fitted by three Newton steps on noisy gradients and
    Hessians of that two-parameter logistic regression, inside the same
    l1 ball.  Those statistics get ``REFIT_SHARE`` (12%) of the budget,
    the vertex draws the rest; the step size and the noise are calibrated
    together by the accountant so that everything spends ``epsilon``
    (replace-one neighbours).  The derivation is in
    ``docs/privacy/dplogisticsimplex.md``.

    Parameters
    ----------
    epsilon : float, default=1.0
        Privacy budget of the whole fit, in (0, 1e6]; ``np.inf`` trains without
        the privacy constraint on the step size (vertices are still sampled).
        Each call to ``fit`` spends it again.
    delta : float, default=1e-5
        Failure probability; choose it well below ``1 / n_samples``.  0 gives
        pure differential privacy.
    constraint : {"l1_ball", "simplex"}, default="l1_ball"
        "l1_ball": weights of any sign with ``||w||_1 <= radius``.
        "simplex": non-negative weights with
        ``sum(w) + |b| / feature_bound <= radius`` (the intercept takes
        either sign).
    radius : float, default=10.0
        Radius R of the l1 ball (total mass of the simplex).  Public.
    feature_bound : float or None, default=None
        Public bound b: every feature is clipped to ``[-b, b]`` (in
        ``predict`` too).  ``None``: 1 for mirror descent and Frank-Wolfe
        (binary and one-hot features need no clipping at 1, and every
        draw's sensitivity grows with b), 2 for "sgd" (standardized
        columns keep two standard deviations; its gradients are clipped to
        half a feature bound).  See ``feature_bound_``.
    fit_intercept : bool, default=True
        Fit an intercept.  It is one more coordinate of the polytope, whose
        feature is the constant b, so ``|intercept_| <= radius * b``.
        Mirror descent fits it with the scale of the released direction
        (see above); Frank-Wolfe draws its vertices like the others.
    solver : {"auto", "sgd", "mirror_descent", "frank_wolfe"}, default="auto"
        "mirror_descent": Algorithm 5 of González, Guzmán and Paquette
        (2024).  "frank_wolfe": private Frank-Wolfe over the same vertices
        (Talwar, Thakurta and Zhang 2015), full-batch gradients and one
        exponential-mechanism draw per step; the classical baseline.
        "sgd": DP-SGD over the polytope (Poisson batches, gradients
        clipped to half a feature bound, a projection after every step, the
        intercept outside it and calibrated after the run).  "auto":
        mirror descent where ``sqrt(n_features) > 0.05 n_samples epsilon``
        (wide, sparse designs, where its ``log d`` error wins) and for
        ``delta=0``; "sgd" otherwise.  See ``solver_``.
    max_iter : int, default=None
        Number of steps T (mirror descent: also the number of batches, at
        most n_samples).  ``None`` follows the theory (see Notes).
    n_vertices : int, default=None
        K, the number of vertices drawn at each refresh and for the output
        (mirror descent only).  ``None`` follows the theory.
    refresh_every : int, default=None
        q: vertices are redrawn every step during the first q steps, then
        every q steps (mirror descent only).  ``None`` follows the theory.
    class_weight : dict, "balanced" or None, default=None
        Weights of the classes, multiplying each row's loss as in
        scikit-learn.  "balanced" weighs each class inversely to its
        total, from the class totals the fit releases privately
        (``docs/privacy/classes.md``).
    sample_weight_bound : float, default=1.0
        Public bound on the ``sample_weight`` passed to ``fit``: larger
        weights are refused, and the noise of the class releases grows
        with it.
    classes : array-like or None, default=None
        The label set, declared public.  Every label in ``y`` must be in
        it.  ``None`` reads the label set from ``y`` and warns with
        :class:`~skdpopt.exceptions.PrivacyLeakWarning`: which labels occur
        is then revealed by ``classes_`` and the shape of ``coef_``.
    verbose : int, default=0
        Print progress (never data-dependent quantities).
    random_state : int, RandomState instance or None, default=None
        Seeds the fit's one random generator (noise, sampling, private
        selections).  ``None`` takes fresh entropy from the operating
        system: use it for a real release.  An int reproduces the fit
        exactly (for tests and documentation), and lets anyone who knows
        it regenerate the noise and subtract it.  A RandomState instance
        is not used as a seed: like ``None``, it draws fresh entropy at
        every fit, so that the clones ``GridSearchCV`` and
        ``cross_validate`` make (which copy the RandomState) never share
        noise.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The declared ``classes`` (sorted), or the labels seen during ``fit``.
    solver_ : {"sgd", "mirror_descent", "frank_wolfe"}
        The solver the fit ran (``solver``, or the one "auto" chose from
        n, d, epsilon and delta).
    feature_bound_ : float
        The bound b the fit clipped to and ``predict`` clips to
        (``feature_bound``, or its default for ``solver_``).
    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
        Coefficients; one row for a binary problem, one per class
        (one-vs-rest) otherwise.  At most ``n_vertices_`` non-zeros per row.
    intercept_ : ndarray of shape (1,) or (n_classes,)
        Intercepts, one per row of ``coef_``.
    n_iter_ : int
        Steps T per binary problem.
    n_vertices_ : int
        K (mirror descent).
    refresh_every_ : int
        q (mirror descent).
    step_size_ : float
        tau of mirror descent, or the inverse temperature of Frank-Wolfe's
        selection.
    n_draws_ : int
        Data-dependent vertex draws (exponential mechanisms), all classes,
        as planned.
    score_sensitivity_ : float
        Replace-one sensitivity of each draw's score (log weight).
    n_noisy_statistics_ : int
        Noisy statistics released by mirror descent, all classes: the
        clip check, the class totals, a gradient and a Hessian per Newton
        step, and the fit check.
    noise_multiplier_ : float
        Their noise over their sensitivity: Gaussian standard deviation
        over L2 sensitivity, or with ``delta=0`` Laplace scale over L1
        sensitivity (mirror descent).
    privacy_spent_ : PrivacySpent
        The (epsilon, delta) guarantee of the fitted model (all classes
        together), replace-one, computed from the plan's event tree.
    privacy_plan_ : MirrorDescentPlan or SimplexFrankWolfePlan
        What the fit released, planned before it read the data (all
        classes): schedule, step size, noise multiplier and event tree.
    n_features_in_ : int
        Number of features seen during ``fit``.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of the features seen during ``fit``.  Defined only when X has
        feature names that are all strings.

    See Also
    --------
    DPSGDClassifier : DP-SGD, whose error grows with the dimension.
    sklearn.linear_model.LogisticRegression : The non-private model.

    Notes
    -----
    Defaults (:func:`skdpopt.plans.logistic_simplex.mirror_descent_schedule`):
    q and K follow the proof of Theorem 4.2 of González, Guzmán and
    Paquette (2024) for second-order smooth losses (the logistic loss is
    one), ``q = sqrt(T / log m)`` and ``K = sqrt(T log m)`` with m
    vertices; T is the theorem's ``min(n, n eps / (log m sqrt(log 1/delta)))``
    unless the budget cannot pay for the ``T (1 + log m)`` draws that
    implies, in which case T is cut to what lets a feature with a
    per-record signal of ``DESIGN_SIGNAL`` stand out.  The step size is the
    largest the privacy budget allows; without privacy it is the
    exponentiated-gradient step ``sqrt(2 log m / T) / (R b)``.  Step 1's
    gradient is taken at the mean of the uniform start (the origin) rather
    than at K vertices drawn from it: both are free of data, and the mean
    is exact.  The theory's
    accuracy advantage is asymptotic: at ``n eps`` of a few thousand
    private Frank-Wolfe is often better (see the benchmark in
    ``docs/benchmarks/dplogisticsimplex.md``).
    Multiclass problems are fitted one-vs-rest, all binary fits in one
    plan; with ``solver="sgd"`` on rows in memory they run in lockstep,
    one noisy sum per step for all classes (as
    :class:`~skdpopt.DPSGDClassifier`'s do).

    Examples
    --------
    >>> import numpy as np
    >>> from skdpopt import DPLogisticSimplex
    >>> rng = np.random.default_rng(0)
    >>> X = rng.integers(0, 2, size=(4000, 50)).astype(float)
    >>> y = (X[:, 0] - X[:, 1] + 0.3 * rng.normal(size=4000) > 0).astype(int)
    >>> clf = DPLogisticSimplex(epsilon=1.0, delta=1e-8, random_state=0).fit(X, y)
    >>> clf.privacy_spent_.epsilon <= 1.0
    True
    >>> int(np.count_nonzero(clf.coef_)) <= clf.n_vertices_
    True
    """

    _parameter_constraints = {
        **PRIVACY_PARAMETER_CONSTRAINTS,
        "constraint": [StrOptions({"l1_ball", "simplex"})],
        "radius": [Interval(Real, 0, None, closed="neither")],
        "feature_bound": [Interval(Real, 0, None, closed="neither"), None],
        "fit_intercept": ["boolean"],
        "solver": [StrOptions({"auto", "sgd", "mirror_descent", "frank_wolfe"})],
        "max_iter": [None, Interval(Integral, 1, None, closed="left")],
        "n_vertices": [None, Interval(Integral, 1, None, closed="left")],
        "refresh_every": [None, Interval(Integral, 1, None, closed="left")],
        "class_weight": [StrOptions({"balanced"}), dict, None],
        "sample_weight_bound": [Interval(Real, 0, None, closed="neither")],
        "classes": ["array-like", None],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        *,
        epsilon=1.0,
        delta=1e-5,
        constraint="l1_ball",
        radius=10.0,
        feature_bound=None,
        fit_intercept=True,
        solver="auto",
        max_iter=None,
        n_vertices=None,
        refresh_every=None,
        class_weight=None,
        sample_weight_bound=1.0,
        classes=None,
        verbose=0,
        random_state=None,
    ):
        self.epsilon = epsilon
        self.delta = delta
        self.constraint = constraint
        self.radius = radius
        self.feature_bound = feature_bound
        self.fit_intercept = fit_intercept
        self.solver = solver
        self.max_iter = max_iter
        self.n_vertices = n_vertices
        self.refresh_every = refresh_every
        self.class_weight = class_weight
        self.sample_weight_bound = sample_weight_bound
        self.classes = classes
        self.verbose = verbose
        self.random_state = random_state

    # ------------------------------------------------------------------
    # Fitting

    @keep_fit_on_error
    def fit(self, X, y, sample_weight=None):
        """Fit the classifier, spending ``epsilon`` and ``delta``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data; sparse input should be CSR.  Values are clipped
            to ``[-feature_bound_, feature_bound_]`` (in ``predict`` too).
        y : array-like of shape (n_samples,)
            Class labels, all in ``classes`` when it is given.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the rows, in ``[0, sample_weight_bound]`` (larger
            ones are refused).  They multiply each row's loss, with the
            class weights, as in scikit-learn; the noise grows with the
            bound.  Not with Dask collections.

        Returns
        -------
        self : DPLogisticSimplex
            The fitted estimator.
        """
        self._validate_params()
        # Frank-Wolfe and DP-SGD read X only through gradient sums, which
        # the Dask backend provides.
        on_dask = self.solver != "mirror_descent" and is_dask_collection(X)
        X, self.classes_, targets = classifier_data(self, X, y, on_dask=on_dask)
        public_class_weights(self.class_weight, self.classes_)  # checks a dict
        sample_weight = check_sample_weight(self, sample_weight, X,
                                            self.sample_weight_bound)
        n_samples, n_features = X.shape
        self._warn_if_delta_too_large(n_samples)
        self.solver_ = resolve_solver(self.solver, n_samples, n_features,
                                      self.epsilon, self.delta, on_dask=on_dask)
        self.feature_bound_ = float(default_feature_bound(self.solver_)
                                    if self.feature_bound is None
                                    else self.feature_bound)
        plan = plan_logistic_simplex(
            n_samples=n_samples, n_features=n_features, n_problems=len(targets),
            epsilon=self.epsilon, delta=self.delta, solver=self.solver_,
            constraint=self.constraint, radius=self.radius,
            feature_bound=self.feature_bound_, fit_intercept=self.fit_intercept,
            max_iter=self.max_iter, n_vertices=self.n_vertices,
            refresh_every=self.refresh_every, n_classes=len(self.classes_),
            weight_bound=weight_bound(self, sample_weight),
            lockstep=lockstep_is_possible(X, len(targets)))
        rng = self._begin_release(plan)
        # A released check of the public bound against the data.
        clipped = release_clip_check(X, self.feature_bound_, plan.clip_check, rng)
        warn_if_mostly_clipped(self, clipped, n_samples, plan.clip_check,
                               spreads=CLIP_CHECK_SPREADS)
        weighting = release_weighting(self, targets, LogLoss(), sample_weight,
                                      plan.class_totals, rng)
        if self.solver_ == "mirror_descent":
            # Mirror descent clips each batch as it reads it (no copy of X).
            solve = partial(vertex_sampling_logistic, verbose=self.verbose)
        else:
            # The others read all of X at every step: clip it once.  Clipping
            # to the public bound is what bounds the sensitivity.
            X = clip_rows(X, self.feature_bound_)
            solve = (frank_wolfe_logistic if self.solver_ == "frank_wolfe"
                     else partial(polytope_sgd_logistic, verbose=self.verbose))
        if self.solver_ == "sgd" and plan.lockstep:
            results = polytope_lockstep(
                X, targets, weighting, plan, rng, radius=self.radius,
                constraint=self.constraint, clip_norm=SGD_CLIP * self.feature_bound_,
                fit_intercept=self.fit_intercept, verbose=self.verbose)
        else:
            results = [solve(LinearProblem(
                X, target, self.fit_intercept, radius=self.radius,
                constraint=self.constraint, feature_bound=self.feature_bound_,
                clip_norm=SGD_CLIP * self.feature_bound_, weighting=problem),
                plan, rng) for target, problem in zip(targets, weighting.problems,
                                                      strict=True)]
        self.coef_ = np.array([result.coef for result in results])
        self.intercept_ = np.array([result.intercept for result in results])
        # A released check of the fitted model against the class prior.
        check_fit(self, X, targets, weighting, plan.fit_check, rng)
        for name, value in fitted_attributes(plan, self.solver_).items():
            setattr(self, name, value)
        self._finish_release(plan)
        return self

    def _prediction_rows(self, X):
        # The model was fitted on rows clipped to the public bound: it
        # predicts on the same clipped rows.
        return clip_features(X, self.feature_bound_)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        # At the default epsilon=1 the check suite's datasets of a few dozen
        # rows leave the step size too small to learn much.
        tags.classifier_tags.poor_score = True
        return tags
