"""DPLogisticSimplex: private logistic regression in the l1 geometry."""

import math
from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np
from scipy.special import expit
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from ._base import (
    PRIVACY_PARAMETER_CONSTRAINTS,
    DPEstimatorMixin,
    LinearClassifierMixin,
    keep_fit_on_error,
    make_generator,
    validate_training_data,
)
from ._clipping import clip_features
from ._targets import one_vs_rest_signs
from .accounting import (
    Accountant,
    ExponentialMechanism,
    GaussianMechanism,
    LaplaceMechanism,
    calibrate,
)
from .losses import LogLoss
from .solvers.frank_wolfe import private_frank_wolfe
from .solvers.mirror_descent import (
    VertexSet,
    count_vertex_draws,
    linear_model_gradient,
    vertex_sampling_mirror_descent,
)
from .solvers.noisy_newton import hessian_sensitivity_bounds, noisy_newton_logistic

# The per-feature signal |E[dloss * x_j]| / (2 b) that the default schedule
# is designed to detect (see mirror_descent_schedule).
DESIGN_SIGNAL = 0.02
# Share of mirror descent's nominal budget (zCDP rho, or pure epsilon when
# delta = 0) spent on the noisy statistics that fit the intercept and the
# scale of the released direction; the vertex draws get the rest.  Like
# REFIT_STEPS, chosen on design data separate from the benchmark's
# (docs/benchmarks/dplogisticsimplex.md).
REFIT_SHARE = 0.12
# Newton steps of that fit, and where they start: this fraction of the
# largest scale the l1 ball leaves the direction (0 would ignore it).
REFIT_STEPS = 3
REFIT_START = 0.5


def theorem_steps(n_samples, n_vertices, epsilon, delta):
    """T of the proof of Theorem 4.2 (seed 001) for second-order smooth losses.

    ``T = min(n, n eps / (log m sqrt(log 1/delta)))``, m the number of
    vertices; ``n`` without privacy.  A delta of 0 is planned as 1/n^2.
    """
    if np.isinf(epsilon):
        return n_samples
    log_m = max(math.log(n_vertices), 1.0)
    delta = delta if delta > 0 else 1.0 / n_samples**2
    steps = n_samples * epsilon / (log_m * math.sqrt(math.log(1 / delta)))
    return min(n_samples, max(1, math.ceil(steps)))


def mirror_descent_schedule(n_samples, n_vertices, epsilon, delta,
                            signal=DESIGN_SIGNAL, budget_share=1.0 - REFIT_SHARE):
    """Default T, q and K of Algorithm 5.

    q and K follow the proof of Theorem 4.2 of seed 001 for second-order
    smooth losses (the logistic loss is one): ``q = sqrt(T / log m)`` and
    ``K = T / q = sqrt(T log m)``, so that the run makes about
    ``N = T (1 + log m)`` vertex draws.  T is the theorem's
    (:func:`theorem_steps`) unless the privacy budget cannot pay for that
    many draws.  The argument: with N draws sharing a zCDP budget rho, each
    has score sensitivity ``D = sqrt(2 rho / N)``; the calibrated step lets
    a feature whose per-record signal is ``|E[dloss x_j]| = 2 b s`` move its
    log weight by ``n s D`` over the run, and sampling finds it only if that
    exceeds about ``log m``.  Hence ``N <= 2 rho (n s / log m)^2``, with
    ``s = signal``: the theorem's T, whose constants are hidden, makes the
    draws so many at n ~ 1e4 that no feature can stand out
    (``benchmarks/bench_simplex.py`` compares both).

    Parameters
    ----------
    n_samples : int
    n_vertices : int
    epsilon : float
        ``inf`` for no privacy.
    delta : float
        A delta of 0 (pure DP) is planned as ``1 / n^2``.
    signal : float, default=DESIGN_SIGNAL
    budget_share : float, default=1 - REFIT_SHARE
        Share of the zCDP budget rho that pays for the vertex draws.

    Returns
    -------
    n_steps, refresh_every, n_draws : int
    """
    log_m = max(math.log(n_vertices), 1.0)
    n_steps = theorem_steps(n_samples, n_vertices, epsilon, delta)
    if not np.isinf(epsilon):
        delta = delta if delta > 0 else 1.0 / n_samples**2
        rho = budget_share * _zcdp_budget(epsilon, delta)
        affordable_draws = 2.0 * rho * (n_samples * signal / log_m) ** 2
        n_steps = min(n_steps, max(1, round(affordable_draws / (1.0 + log_m))))
    return _schedule_for_steps(n_steps, n_vertices)


def frank_wolfe_steps(n_samples, n_vertices, epsilon, delta, lipschitz,
                      smoothness, max_steps=500):
    """Default number of private Frank-Wolfe steps.

    Balances Frank-Wolfe's curvature error ``~ 4 L1 / T`` against the
    selection error of T exponential mechanisms sharing a zCDP budget
    ``rho ~ eps^2 / (4 log(1/delta))``, ``~ L0 log(m) sqrt(2 T / rho) / n``,
    which gives ``T ~ (n eps L1 / (2 L0 log m sqrt(log 1/delta)))^(2/3)``
    (Talwar, Thakurta and Zhang 2015 have the same exponent).  Without
    privacy, ``max_steps``.
    """
    if np.isinf(epsilon):
        return max_steps
    log_m = max(math.log(n_vertices), 1.0)
    delta = delta if delta > 0 else 1.0 / n_samples**2
    ratio = (n_samples * epsilon * smoothness
             / (2.0 * lipschitz * log_m * math.sqrt(math.log(1 / delta))))
    return int(min(max_steps, max(1, math.ceil(ratio ** (2.0 / 3.0)))))


class DPLogisticSimplex(
    LinearClassifierMixin, ClassifierMixin, DPEstimatorMixin, BaseEstimator
):
    """Logistic regression in the l1 ball (or simplex) with differential privacy.

    Fits ``min E[log(1 + exp(-y (<w, x> + b)))]`` over weights in the l1
    ball ``||w||_1 + |b| / feature_bound <= radius`` (or, with
    ``constraint="simplex"``, non-negative weights) by private entropic
    stochastic mirror descent with vertex sampling (seed 001, Section 4,
    Algorithm 5).  Its error grows with the logarithm of the number of
    features, not with the number itself, which makes it the estimator for
    high-dimensional sparse data (bags of words, one-hot encodings).

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
    feature_bound : float, default=1.0
        Public bound b: every feature is clipped to ``[-b, b]``.  Binary and
        one-hot features need no clipping at 1.
    fit_intercept : bool, default=True
        Fit an intercept.  It is one more coordinate of the polytope, whose
        feature is the constant b, so ``|intercept_| <= radius * b``.
        Mirror descent fits it with the scale of the released direction
        (see above); Frank-Wolfe draws its vertices like the others.
    solver : {"mirror_descent", "frank_wolfe"}, default="mirror_descent"
        "mirror_descent": Algorithm 5 of seed 001.  "frank_wolfe": private
        Frank-Wolfe over the same vertices (Talwar, Thakurta and Zhang
        2015), full-batch gradients and one exponential-mechanism draw per
        step; the classical baseline.
    max_iter : int, default=None
        Number of steps T (mirror descent: also the number of batches, at
        most n_samples).  ``None`` follows the theory (see Notes).
    n_vertices : int, default=None
        K, the number of vertices drawn at each refresh and for the output
        (mirror descent only).  ``None`` follows the theory.
    refresh_every : int, default=None
        q: vertices are redrawn every step during the first q steps, then
        every q steps (mirror descent only).  ``None`` follows the theory.
    classes : array-like or None, default=None
        The label set, declared public.  Every label in ``y`` must be in
        it.  ``None`` reads the label set from ``y`` and warns with
        :class:`~skdpopt.exceptions.PrivacyLeakWarning`: which labels occur
        is then revealed by ``classes_`` and the shape of ``coef_``.
    verbose : int, default=0
        Print progress (never data-dependent quantities).
    random_state : int, RandomState instance or None, default=None
        Seeds the fit's one random generator.  A fixed seed lets anyone who
        knows it reproduce the draws: leave it ``None`` for a real release.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The declared ``classes`` (sorted), or the labels seen during ``fit``.
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
        Data-dependent vertex draws (exponential mechanisms), all classes.
    score_sensitivity_ : float
        Replace-one sensitivity of each draw's score (log weight).
    n_noisy_statistics_ : int
        Noisy statistics released by the intercept and scale fit, all
        classes: the label count and a gradient and a Hessian per Newton
        step (mirror descent).
    noise_multiplier_ : float
        Their noise over their sensitivity: Gaussian standard deviation
        over L2 sensitivity, or with ``delta=0`` Laplace scale over L1
        sensitivity (mirror descent).
    privacy_spent_ : PrivacySpent
        The (epsilon, delta) guarantee of the fitted model, replace-one.
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
    Defaults (:func:`mirror_descent_schedule`): q and K follow the proof of
    Theorem 4.2 of seed 001 for second-order smooth losses (the logistic
    loss is one), ``q = sqrt(T / log m)`` and ``K = sqrt(T log m)`` with m
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
    Multiclass problems are fitted one-vs-rest; all binary fits are
    composed in one accountant.

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
        "feature_bound": [Interval(Real, 0, None, closed="neither")],
        "fit_intercept": ["boolean"],
        "solver": [StrOptions({"mirror_descent", "frank_wolfe"})],
        "max_iter": [None, Interval(Integral, 1, None, closed="left")],
        "n_vertices": [None, Interval(Integral, 1, None, closed="left")],
        "refresh_every": [None, Interval(Integral, 1, None, closed="left")],
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
        feature_bound=1.0,
        fit_intercept=True,
        solver="mirror_descent",
        max_iter=None,
        n_vertices=None,
        refresh_every=None,
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
        self.classes = classes
        self.verbose = verbose
        self.random_state = random_state

    # ------------------------------------------------------------------
    # Fitting

    @keep_fit_on_error
    def fit(self, X, y):
        """Fit the classifier, spending ``epsilon`` and ``delta``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data; sparse input should be CSR.  Values are clipped
            to ``[-feature_bound, feature_bound]``.
        y : array-like of shape (n_samples,)
            Class labels.  The set of labels becomes ``classes_`` and is
            treated as public.

        Returns
        -------
        self : DPLogisticSimplex
            The fitted estimator.
        """
        self._validate_params()
        X, y = validate_training_data(
            self, X, y, accept_sparse="csr", dtype=[np.float64, np.float32]
        )
        self.classes_, targets = one_vs_rest_signs(self, y, self.classes)
        self._warn_if_delta_too_large(X.shape[0])
        # Clipping to the public bound is what bounds the sensitivity.  Mirror
        # descent clips each batch as it reads it (no copy of X); Frank-Wolfe
        # reads all of X at every step, so it clips once.
        if self.solver == "frank_wolfe":
            X = clip_features(X, self.feature_bound)
        rng = make_generator(self.random_state)
        if self.solver == "mirror_descent":
            coefs, intercepts = self._fit_mirror_descent(X, targets, rng)
        else:
            coefs, intercepts = self._fit_frank_wolfe(X, targets, rng)
        self.coef_, self.intercept_ = coefs, intercepts
        return self

    def _vertex_set(self, n_features):
        dim = n_features + int(self.fit_intercept)
        if self.constraint == "l1_ball":
            return VertexSet.l1_ball(dim, self.radius)
        # The intercept keeps both signs inside the simplex.
        signed = [n_features] if self.fit_intercept else []
        return VertexSet.simplex(dim, self.radius, signed)

    @property
    def _lipschitz(self):
        # |dloss| <= 1 and each vertex's feature is at most R b in size, so
        # the gradient over vertex weights has sup-norm at most R b.
        return self.radius * self.feature_bound

    def _fit_mirror_descent(self, X, targets, rng):
        n_samples, n_features = X.shape
        # Vertices over the features only: the intercept is fitted afterwards
        # with the scale of the released direction (_fit_scale_and_intercept).
        if self.constraint == "l1_ball":
            vertex_set = VertexSet.l1_ball(n_features, self.radius)
        else:
            vertex_set = VertexSet.simplex(n_features, self.radius)
        n_steps, refresh_every, n_draws = mirror_descent_schedule(
            n_samples, vertex_set.n_vertices, self.epsilon, self.delta)
        if self.max_iter is not None:
            if self.max_iter > n_samples:
                raise ValueError(
                    f"max_iter={self.max_iter} must be at most n_samples="
                    f"{n_samples}: each step uses a fresh batch of rows.")
            n_steps = self.max_iter
            if self.refresh_every is None or self.n_vertices is None:
                _, refresh_every, n_draws = _schedule_for_steps(
                    n_steps, vertex_set.n_vertices)
        if self.refresh_every is not None:
            refresh_every = self.refresh_every
        if self.n_vertices is not None:
            n_draws = self.n_vertices
        # Fresh disjoint batches; the smallest one bounds the sensitivity.
        batch_size = n_samples // n_steps
        draws_per_problem = count_vertex_draws(n_steps, n_draws, refresh_every)
        total_draws = draws_per_problem * len(targets)
        # Noisy statistics per problem: the count of positive labels (for the
        # intercept), then a gradient and a Hessian per Newton step.
        statistics_per_problem = int(self.fit_intercept) + 2 * REFIT_STEPS
        total_statistics = statistics_per_problem * len(targets)
        lipschitz = self._lipschitz
        pure = self.delta == 0

        def sensitivity(step_size):
            # A replaced record changes one batch's gradient coordinates by
            # at most 2 L0 / B, hence every later log weight by 2 tau L0 / B
            # (docs/privacy/dplogisticsimplex.md).
            return 2.0 * step_size * lipschitz / batch_size

        def noise_multiplier(step_size):
            # The statistics get REFIT_SHARE of the nominal budget, the draws
            # the rest: nominally N D^2 / 2 zCDP (pure DP: 2 D N), against
            # 1 / (2 m^2) per Gaussian statistic with multiplier m (std over
            # L2 sensitivity; pure DP: 1 / m per Laplace statistic, scale
            # over L1 sensitivity).  The accountant then composes them all.
            score = sensitivity(step_size)
            draws_cost = total_draws * (2.0 * score if pure else 0.5 * score**2)
            per_statistic = (draws_cost * REFIT_SHARE / (1.0 - REFIT_SHARE)
                             / total_statistics)
            return 1.0 / per_statistic if pure else math.sqrt(0.5 / per_statistic)

        def events(step_size, draws=total_draws, statistics=total_statistics):
            multiplier = noise_multiplier(step_size)
            statistic = (LaplaceMechanism(1.0 / multiplier) if pure
                         else GaussianMechanism(multiplier))
            return [(ExponentialMechanism(sensitivity(step_size)), draws),
                    (statistic, statistics)]

        if self._is_private:
            step_size = self._calibrate_step_size(
                sensitivity, events, total_draws / (1.0 - REFIT_SHARE))
            multiplier = noise_multiplier(step_size)
        else:
            step_size = _regret_step_size(n_steps, vertex_set.n_vertices, lipschitz)
            multiplier = 0.0

        coefs, intercepts = [], []
        draws_made = statistics_made = 0
        for target in targets:
            offset = 0.0
            if self.fit_intercept:
                offset = self._private_offset(target, multiplier, rng)
                statistics_made += 1
            batches = np.array_split(rng.permutation(n_samples), n_steps)
            gradient = linear_model_gradient(
                X,
                target,
                _OffsetLogLoss(offset),
                vertex_set,
                batches,
                feature_bound=self.feature_bound,
            )
            gradient = _first_step_at_origin(gradient)
            result = vertex_sampling_mirror_descent(
                gradient, vertex_set.n_vertices, n_steps=n_steps,
                n_draws=n_draws, refresh_every=refresh_every,
                step_size=step_size, rng=rng, verbose=self.verbose)
            coef, intercept, releases = self._fit_scale_and_intercept(
                X, target, vertex_set.point(result.vertices), offset,
                multiplier, rng)
            draws_made += result.n_draws
            statistics_made += releases
            coefs.append(coef)
            intercepts.append(intercept)
        # The releases that ran, composed (the plan's counts, by construction).
        accountant = Accountant()
        if self._is_private:
            for mechanism, count in events(step_size, draws_made, statistics_made):
                accountant.compose(mechanism, count)
        self.n_iter_ = n_steps
        self.n_vertices_ = n_draws
        self.refresh_every_ = refresh_every
        self.step_size_ = step_size
        self.n_draws_ = draws_made
        self.score_sensitivity_ = sensitivity(step_size)
        self.n_noisy_statistics_ = statistics_made
        self.noise_multiplier_ = multiplier
        self._record_spent(accountant)
        return np.array(coefs), np.array(intercepts)

    def _private_offset(self, target, multiplier, rng):
        """Log-odds of the positive class from a noisy count (sensitivity 1).

        Mirror descent evaluates its gradients at the sampled point plus
        this offset, so that the first draws look for features that explain
        the labels beyond their base rate; the Newton fit starts from it.
        """
        n_samples = len(target)
        count = np.count_nonzero(target > 0)
        if multiplier > 0:
            noise = (rng.laplace if self.delta == 0 else rng.normal)(0.0, multiplier)
            count = count + noise
        share = np.clip(count / n_samples, 0.5 / n_samples, 1.0 - 0.5 / n_samples)
        limit = self.radius * self.feature_bound
        return float(np.clip(math.log(share / (1.0 - share)), -limit, limit))

    def _fit_scale_and_intercept(self, X, target, direction, offset, multiplier,
                                 rng):
        """Fit ``coef = a u / ||u||_1`` and the intercept by noisy Newton steps.

        u is the released direction (the average of the drawn vertices).  The
        model's scores ``<u, x> / (||u||_1 b)`` lie in [-1, 1] for clipped
        rows, so the two-parameter logistic regression on
        ``z = b (score, 1)`` has public sensitivities; ``|a| + |c| / b`` stays
        within the radius (``a >= 0`` for the simplex), so the model stays
        in the polytope with at most K non-zeros.
        """
        n_samples = X.shape[0]
        b = self.feature_bound
        l1_norm = np.abs(direction).sum()
        support = np.flatnonzero(direction)
        scores = np.zeros(n_samples)
        if l1_norm > 0:
            columns = clip_features(X[:, support], b)
            scores = np.asarray(columns @ direction[support]).ravel() / (l1_norm * b)
        features = [scores] + ([np.ones(n_samples)] if self.fit_intercept else [])
        Z = b * np.column_stack(features)
        n_params = Z.shape[1]
        bounds = hessian_sensitivity_bounds(n_params, b) / n_samples
        if self.delta == 0:  # Laplace: L1 sensitivities
            gradient_sensitivity = 2.0 * b * n_params / n_samples
            hessian_sensitivity = bounds.sum()
        else:
            gradient_sensitivity = 2.0 * b * math.sqrt(n_params) / n_samples
            hessian_sensitivity = np.sqrt(np.sum(bounds**2))
        # Start part of the way between ignoring the direction and the full
        # scale the polytope allows it.
        scale = (REFIT_START * (self.radius - abs(offset / b)) if l1_norm > 0
                 else 0.0)
        start = [scale] + ([offset / b] if self.fit_intercept else [])
        nonnegative = np.arange(n_params) == 0 if self.constraint == "simplex" else None
        result = noisy_newton_logistic(
            Z, target, radius=self.radius, n_steps=REFIT_STEPS,
            gradient_noise=multiplier * gradient_sensitivity,
            hessian_noise=multiplier * hessian_sensitivity, rng=rng,
            start=start, nonnegative=nonnegative,
            noise="laplace" if self.delta == 0 else "gaussian")
        coef = (direction * (result.coef[0] / l1_norm) if l1_norm > 0
                else np.zeros_like(direction))
        intercept = result.coef[1] * b if self.fit_intercept else 0.0
        return coef, intercept, result.n_releases

    def _calibrate_step_size(self, sensitivity, events, nominal_draws):
        """Largest step size whose releases, composed, spend at most epsilon.

        ``events(step_size)`` lists the run's (mechanism, count) pairs;
        ``nominal_draws`` is the number of draws that, alone, would spend
        the budget at the same sensitivity (the starting guess).
        """

        def epsilon_of(step_size):
            accountant = Accountant()
            for mechanism, count in events(step_size):
                accountant.compose(mechanism, count)
            return accountant.epsilon(self.delta)

        guess = _zcdp_sensitivity(self.epsilon, self.delta, nominal_draws)
        unit = sensitivity(1.0)
        step_size, _ = calibrate(epsilon_of, self.epsilon, 0.8 * guess / unit,
                                 1.3 * guess / unit, increasing=True)
        return step_size

    def _fit_frank_wolfe(self, X, targets, rng):
        n_samples, n_features = X.shape
        vertex_set = self._vertex_set(n_features)
        lipschitz = self._lipschitz
        smoothness = lipschitz**2 / 4.0
        n_steps = self.max_iter or frank_wolfe_steps(
            n_samples, vertex_set.n_vertices, self.epsilon, self.delta,
            lipschitz, smoothness)
        total_draws = n_steps * len(targets)

        def sensitivity(score_scale):
            # <v, grad F> changes by at most R * 2 b / n for every vertex v.
            return 2.0 * score_scale * lipschitz / n_samples

        if self._is_private:
            score_scale = self._calibrate_step_size(
                sensitivity,
                lambda scale: [(ExponentialMechanism(sensitivity(scale)), total_draws)],
                total_draws)
        else:
            score_scale = np.inf
        # Frank-Wolfe works over coordinates; the simplex with an intercept of
        # either sign becomes a simplex over (w, +b, -b).
        b = self.feature_bound
        if self.constraint == "l1_ball":
            dim = n_features + int(self.fit_intercept)
            extra = [b] if self.fit_intercept else []
        else:
            dim = n_features + 2 * int(self.fit_intercept)
            extra = [b, -b] if self.fit_intercept else []
        extra = np.array(extra)
        loss = LogLoss()

        coefs, intercepts = [], []
        accountant = Accountant()
        for target in targets:
            def gradient(point, target=target):
                prediction = X @ point[:n_features] + extra @ point[n_features:]
                residual = loss.derivative(np.asarray(prediction).ravel(), target)
                residual /= n_samples
                return np.concatenate([np.asarray(X.T @ residual).ravel(),
                                       extra * residual.sum()])

            result = private_frank_wolfe(
                gradient, dim, radius=self.radius, n_steps=n_steps,
                score_scale=score_scale, rng=rng, constraint=self.constraint)
            if self._is_private:
                accountant.compose(ExponentialMechanism(sensitivity(score_scale)),
                                   result.n_steps)
            coefs.append(result.coef[:n_features])
            intercepts.append(float(extra @ result.coef[n_features:]))
        self.n_iter_ = n_steps
        self.step_size_ = score_scale
        self.n_draws_ = total_draws
        self.score_sensitivity_ = (sensitivity(score_scale) if self._is_private
                                   else np.inf)
        self._record_spent(accountant)
        return np.array(coefs), np.array(intercepts)

    # ------------------------------------------------------------------
    # Prediction

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
        X = validate_data(self, X, accept_sparse="csr", reset=False)
        scores = np.asarray(X @ self.coef_.T) + self.intercept_
        return scores.ravel() if scores.shape[1] == 1 else scores

    def predict_proba(self, X):
        """Class probabilities.

        Binary: the logistic function of the decision.  Multiclass: each
        one-vs-rest probability, normalised over the classes (as
        scikit-learn's one-vs-rest logistic regression does).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Samples to score.

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            Probability of each class, in the order of ``classes_``.
        """
        scores = self.decision_function(X)
        positive = expit(scores)
        if positive.ndim == 1:
            return np.column_stack([1.0 - positive, positive])
        return positive / positive.sum(axis=1, keepdims=True)

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

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        # At the default epsilon=1 the check suite's datasets of a few dozen
        # rows leave the step size too small to learn much.
        tags.classifier_tags.poor_score = True
        return tags


@dataclass(frozen=True)
class _OffsetLogLoss(LogLoss):
    """The log loss of ``p + offset``: the model's intercept held fixed."""

    offset: float = 0.0

    def derivative(self, p, y):
        return super().derivative(p + self.offset, y)


def _first_step_at_origin(gradient):
    """The oracle, with the first step's gradient taken at the origin.

    Step 1's vertices are drawn from the uniform start, whose mean is the
    origin for the l1 ball: evaluating there instead of at K random
    vertices (weight R / K each) spends nothing and removes the noise of
    that data-free draw from the first gradient.
    """
    origin = np.empty(0, dtype=np.int64)

    def first_at_origin(t, vertices):
        return gradient(t, origin if t == 0 else vertices)

    return first_at_origin


def _schedule_for_steps(n_steps, n_vertices):
    """T, q and K of the Theorem 4.2 rule for a given T."""
    log_m = max(math.log(n_vertices), 1.0)
    return (n_steps, max(1, round(math.sqrt(n_steps / log_m))),
            max(1, round(math.sqrt(n_steps * log_m))))


def _regret_step_size(n_steps, n_vertices, lipschitz):
    """``sqrt(2 log m / T) / L0``: the step that minimises the regret bound
    ``log m / tau + tau T L0^2 / 2`` of exponentiated gradient."""
    return math.sqrt(2.0 * max(math.log(n_vertices), 1.0) / n_steps) / lipschitz


def _zcdp_budget(epsilon, delta):
    """The rho such that rho-zCDP gives (epsilon, delta) by the classical
    conversion ``epsilon = rho + 2 sqrt(rho log(1/delta))``."""
    log_inv = math.log(1.0 / delta)
    return (math.sqrt(log_inv + epsilon) - math.sqrt(log_inv)) ** 2


def _zcdp_sensitivity(epsilon, delta, count):
    """Score sensitivity D at which ``count`` draws meet (epsilon, delta).

    A starting guess for calibration: each draw is ``D^2 / 2``-zCDP, and
    rho-zCDP implies ``(rho + 2 sqrt(rho log(1/delta)), delta)``-DP; with
    delta = 0, the pure composition ``2 D count``.
    """
    if delta <= 0:
        return epsilon / (2.0 * count)
    return math.sqrt(2.0 * _zcdp_budget(epsilon, delta) / count)
