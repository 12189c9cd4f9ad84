"""DPLasso: l1-regularised least squares by private greedy coordinate descent."""

from copy import deepcopy
from functools import partial
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, RegressorMixin, clone
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from ._base import (
    PRIVACY_PARAMETER_CONSTRAINTS,
    DPEstimatorMixin,
    check_features,
    keep_fit_on_error,
)
from ._clipping import clip_blocks
from ._data import clip_rows, clip_values, is_dask_collection, map_rows
from ._diagnostics import (
    MORE_EPSILON,
    MORE_ROWS,
    noisy_sum_ratio,
    warn_if_clipped,
    warn_if_coarse,
    warn_if_noise_dominates,
    warn_if_not_centred,
    warn_if_signal_is_weak,
)
from ._regressors import check_fit, release_lasso_bounds
from ._targets import regressor_data
from .plans.bounds import is_auto
from .plans.lasso import (
    ALPHA_RATIO,
    WEAK_SIGNAL_RATIO,
    plan_lasso,
    resolve_feature_bound,
    step_blocks,
)
from .solvers.frank_wolfe import frank_wolfe_lasso
from .solvers.greedy_cd import private_greedy_cd
from .solvers.problems import LinearProblem

# The solver of each plan, by name.
SOLVERS = {"greedy_cd": private_greedy_cd, "frank_wolfe": frank_wolfe_lasso}


class DPLasso(DPEstimatorMixin, RegressorMixin, BaseEstimator):
    """Lasso under differential privacy: private greedy coordinate descent.

    Minimises scikit-learn's Lasso objective
    ``1/(2n) ||y - Xw - b||^2 + alpha ||w||_1`` with the (epsilon,
    delta)-DP greedy coordinate descent of Mangold et al. (2023,
    proximal variant): each of ``max_iter`` steps privately selects the
    coordinate with the largest signed distance from zero to its
    subdifferential, releases that coordinate's gradient with noise, and
    applies the soft-threshold proximal map (a coordinate at zero enters the
    model only if its noisy gradient clears ``alpha`` by two noise scales,
    so that coordinates drawn by the selection noise stay out).  Iterates
    start at 0 and change one
    coordinate per step, so ``coef_`` has at most ``max_iter`` non-zeros.
    In a :class:`~skdpopt.PrivatePipeline`, the columns one
    ``OneHotEncoder`` writes for one input column (three or more) form a
    block that a step selects and moves as a whole, at the noise of one
    column (each row has one non-zero in it): a categorical column of many
    levels is then fitted in a step or two.
    Noise is calibrated by the library's accountant under replace-one
    neighbouring; the derivation is in ``docs/privacy/dplasso.md``.

    Sensitivity is bounded by bounds fixed before the steps, never by the
    data: feature j is clipped to ``[-B_j, B_j]`` (``feature_bound``, one
    bound or one per column; in ``fit`` and in ``predict``: the model never
    sees a value beyond it),
    targets to ``[-target_bound, target_bound]`` and residuals to
    ``[-residual_bound, residual_bound]`` (the loss is therefore Huber's,
    equal to the squared error wherever residuals stay within the bound).
    By default the targets are centred at a private location and clipped
    to a private quantile of their distance from it, released for 5% of
    the budget (more for fewer rows), and the intercept is moved back; a
    number is a public bound around 0, at no cost.  A public feature bound
    is checked by a private count of the rows far beyond it (1% of the
    budget): a fit where most are warns.  By default the residual bound
    starts at ``target_bound`` and then follows the residuals' scale,
    privately estimated at every step: the noise shrinks with it.

    Parameters
    ----------
    alpha : "auto" or float, default="auto"
        Strength of the l1 penalty, as in :class:`sklearn.linear_model.Lasso`
        (in the targets' units).  "auto": 0.001 times ``min(feature_bound_)
        * target_bound_``, the largest coordinate gradient of the clipped
        problem at ``w = 0`` (of its narrowest column, with one bound per
        column), so that it follows the targets' scale whatever their
        units (post-processing of the bounds, free); see ``alpha_``.
        Unused by ``solver="frank_wolfe"``.
    epsilon : float, default=1.0
        Privacy budget of the fit, in (0, 1e6]; ``np.inf`` runs without noise.
        Each call to ``fit`` spends it again.
    delta : float, default=1e-5
        Failure probability; choose it well below ``1 / n_samples``.
    fit_intercept : bool, default=True
        Fit an intercept.  It is one more coordinate of the greedy selection
        (unpenalised) with the same sensitivity as the features, so it is
        covered by the budget at no extra cost.
    max_iter : int, default=30
        Number of steps T (each one private selection and one noisy
        release).  Every step costs budget, so T should be about the number
        of non-zeros one hopes to find (with some steps to revisit them),
        not a convergence cap: 30 finds 15 true coefficients among 2,000
        columns at epsilon = 1 and n = 20,000, and does as well as 20 on
        tables of a few thousand rows (``benchmarks/design_regression.py``);
        with more budget (larger n * epsilon) more steps pay.
    warm_start : bool, default=False
        Start from the previous fit's solution.  The new model depends on
        both fits, so ``privacy_spent_`` composes their events (and may then
        exceed ``epsilon``); a :class:`~skdpopt.PrivacyLedger` records only
        the new fit, the earlier one being recorded already.
    feature_bound : "public", "auto", float or array-like of shape (n_features,), \
            default="public"
        Bound ``B_j`` on ``|x_ij|``; feature j is clipped to ``[-B_j, B_j]``
        in ``fit`` and in ``predict``.  A float is one public bound for
        every column, an array one per column (public too; greedy solver
        only): column j's gradient and curvature then have sensitivities
        proportional to ``B_j`` and ``B_j^2``, the selection compares the
        scores over ``B_j``, and the budget is spent as with one bound
        (``docs/privacy/dplasso.md``).  A public bound is checked by a
        noisy count of the rows with a value beyond 4 times its column's
        bound (1% of the budget, zCDP units), and the fit warns with a
        :class:`~skdpopt.exceptions.UtilityWarning` when they are most rows
        (features in raw units: scale them with a DP scaler in a private
        pipeline).  "public": the bounds the transformers before the model
        declare by construction, where it is the last step of a
        :class:`~skdpopt.PrivatePipeline` (1 for the columns of a
        ``OneHotEncoder``, a ``MissingIndicator`` or a ``Binarizer``, the
        ``feature_range`` of a clipping ``DPMinMaxScaler``), and for every
        other column (all of them, used alone) a bound for standardised
        features that follows the public ratio ``n_samples * epsilon /
        n_features``: 1 up to 100, 2 from 1,000, log-linear in between (a
        wider clip keeps more of a standardised column and pays noise in
        proportion).  With ``solver="frank_wolfe"``, which takes one bound,
        "public" is the largest of these.  Pass 1 for features already
        within [-1, 1].  "auto" releases a private 0.99 quantile of
        ``max_j |x_ij|`` before the first step (with the "auto" target's
        releases, 5% of the budget; the steps get the rest); see
        ``feature_bound_``.
    target_bound : "auto" or float, default="auto"
        Bound on ``|y_i - location|``; centred targets are clipped to it.
        A float is a public bound around 0 (no centring), free.  "auto"
        releases a private location (a noisy mean of the targets clipped to
        a private window, in two rounds) and a private 0.99 quantile of
        ``|y_i - location|`` before the first step; see
        ``target_location_`` and ``target_bound_``
        (``docs/privacy/targets.md``).  With an intercept it also plans
        the fit check (2% of the budget): after the steps, the training
        rows' gains in squared error over the location, clipped per row,
        summed and released (where the target was centred); a sum not
        clearly positive warns with a
        :class:`~skdpopt.exceptions.UtilityWarning`.
    residual_bound : "auto" or float, default="auto"
        Bound C on ``|x_i . w + b - y_i|`` used in the gradient; larger
        residuals are clipped, and the noise is proportional to C.  A float
        is a public bound used throughout.  "auto" (greedy solver): each
        step first releases the mean squared clipped residual of the current
        iterate with Gaussian noise (5% of the step's budget) and clips at
        twice the root of an upper confidence bound on it, between
        ``target_bound / 100`` and ``target_bound``; without privacy, and
        for ``solver="frank_wolfe"``, "auto" is ``target_bound`` (the
        residuals of the starting point w = 0).
    solver : {"greedy_cd", "frank_wolfe"}, default="greedy_cd"
        "greedy_cd": private greedy coordinate descent on the penalised
        problem.  "frank_wolfe": private Frank-Wolfe (Talwar, Thakurta and
        Zhang 2015) on the constrained problem ``||(w, b / B)||_1 <=
        radius`` without penalty, selecting one of the l1 ball's vertices by
        the exponential mechanism at each step.
    radius : float, default=1.0
        Radius of the l1 ball for ``solver="frank_wolfe"`` (the intercept
        of the centred targets, divided by ``feature_bound``, counts as a
        coordinate).
    selection : {"exponential", "laplace"}, default="exponential"
        Private selection of the greedy solver: the exponential mechanism
        (Gumbel-max; bounded range, so it composes better) or
        report-noisy-max with Laplace noise.
    gradient_noise : {"gaussian", "laplace"}, default="gaussian"
        Noise on the released coordinate gradient.
    curvature : {"private", "bound"}, default="private"
        Step size of the greedy solver.  "private": each feature step also
        releases the chosen column's mean square ``(1/n) sum_i x_ij^2`` with
        Gaussian noise (5% of the step's budget) and steps by the inverse of
        an upper confidence bound on it, which is close to an exact
        coordinate minimisation.  "bound": step ``1 / feature_bound**2``,
        the public smoothness bound, free but short when features are
        smaller than their bound.
    verbose : int, default=0
        Print progress (only the private iterate's sparsity and intercept).
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
    coef_ : ndarray of shape (n_features,)
        Coefficients of the released model; at most ``max_iter`` non-zeros.
    sparse_coef_ : scipy.sparse.csr_matrix of shape (1, n_features)
        ``coef_`` as a sparse row, as in :class:`sklearn.linear_model.Lasso`.
    intercept_ : float
        Intercept of the released model, ``target_location_`` included (0
        if ``fit_intercept=False``).
    n_iter_ : int
        Steps run.
    alpha_ : float
        The penalty used: ``alpha``, or the "auto" one.
    target_location_ : float
        Where the targets were centred: the privately released location
        with ``target_bound="auto"``, else 0.
    target_bound_ : float
        The target bound used: ``target_bound``, or the privately released
        one (a candidate of a public grid).
    feature_bound_ : float or ndarray of shape (n_features,)
        The feature bound used: a float for a float or "auto" (the released
        one) ``feature_bound``, one bound per column for an array or
        "public" (a float with ``solver="frank_wolfe"``).
    far_rows_share_ : float or None
        The released (noisy) share of the training rows with a value beyond
        4 times its column's ``feature_bound_``: above 1/2 the fit warns.
        None for ``feature_bound="auto"``.
    selected_ : ndarray of int
        Coordinate chosen at each step (a block's first column; -1: the
        intercept; for Frank-Wolfe the vertex index).
    feature_blocks_ : ndarray of shape (n_features,) or None
        The block of each column in the steps (declared by a private
        pipeline's one-hot encoders; each row's part in a block is clipped
        into the l2 ball of the block's bound, in fit and in predict), or
        None where every column was its own.
    privacy_spent_ : PrivacySpent
        The (epsilon, delta) guarantee of the fitted model, replace-one:
        the planned worst case (a curvature release counted on every step,
        whichever steps the run spent on the intercept).  With
        ``warm_start``, every fit the model started from is composed in.
    privacy_plan_ : GreedyCDPlan or LassoFrankWolfePlan
        What the fit released, planned before it read the data: budget
        shares, calibrated noise and event tree (``privacy_spent_`` is
        computed from it).
    n_features_in_ : int
        Number of features seen during ``fit``.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of the features seen during ``fit``.  Defined only when X has
        feature names that are all strings.

    See Also
    --------
    sklearn.linear_model.Lasso : The non-private model.
    DPSGDRegressor : Private linear regression with an L2 penalty.

    Examples
    --------
    >>> import numpy as np
    >>> from skdpopt import DPLasso
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, size=(20000, 50))
    >>> y = 0.5 * X[:, 0] - 0.3 * X[:, 1] + 0.05 * rng.normal(size=20000)
    >>> model = DPLasso(epsilon=1.0, delta=1e-8, random_state=0)
    >>> model.fit(X, y).privacy_spent_.epsilon <= 1.0
    True
    >>> sorted(np.argsort(-np.abs(model.coef_))[:2].tolist())
    [0, 1]
    """

    _parameter_constraints = {
        **PRIVACY_PARAMETER_CONSTRAINTS,
        "alpha": [StrOptions({"auto"}), Interval(Real, 0, None, closed="left")],
        "fit_intercept": ["boolean"],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "warm_start": ["boolean"],
        "feature_bound": [StrOptions({"auto", "public"}),
                          Interval(Real, 0, None, closed="neither"),
                          "array-like"],
        "target_bound": [StrOptions({"auto"}),
                         Interval(Real, 0, None, closed="neither")],
        "residual_bound": [StrOptions({"auto"}),
                           Interval(Real, 0, None, closed="neither")],
        "solver": [StrOptions({"greedy_cd", "frank_wolfe"})],
        "radius": [Interval(Real, 0, None, closed="neither")],
        "selection": [StrOptions({"exponential", "laplace"})],
        "gradient_noise": [StrOptions({"gaussian", "laplace"})],
        "curvature": [StrOptions({"bound", "private"})],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        alpha="auto",
        *,
        epsilon=1.0,
        delta=1e-5,
        fit_intercept=True,
        max_iter=30,
        warm_start=False,
        feature_bound="public",
        target_bound="auto",
        residual_bound="auto",
        solver="greedy_cd",
        radius=1.0,
        selection="exponential",
        gradient_noise="gaussian",
        curvature="private",
        verbose=0,
        random_state=None,
    ):
        self.alpha = alpha
        self.epsilon = epsilon
        self.delta = delta
        self.fit_intercept = fit_intercept
        self.max_iter = max_iter
        self.warm_start = warm_start
        self.feature_bound = feature_bound
        self.target_bound = target_bound
        self.residual_bound = residual_bound
        self.solver = solver
        self.radius = radius
        self.selection = selection
        self.gradient_noise = gradient_noise
        self.curvature = curvature
        self.verbose = verbose
        self.random_state = random_state

    @keep_fit_on_error
    def fit(self, X, y):
        """Fit the model, spending ``epsilon`` and ``delta``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Dense, CSR or CSC; sparse input stays sparse.  Values are
            clipped to ``[-feature_bound, feature_bound]``.
        y : array-like of shape (n_samples,)
            Targets, clipped to ``[-target_bound, target_bound]``.

        Returns
        -------
        self : DPLasso
            The fitted estimator.
        """
        self._validate_params()
        X, y = regressor_data(self, X, y, on_dask=is_dask_collection(X))
        n_samples, n_features = X.shape
        self._warn_if_delta_too_large(n_samples)
        # Public: the parameter, the shape, epsilon and declared bounds.
        feature_bound = resolve_feature_bound(
            self.feature_bound, n_samples=n_samples, n_features=n_features,
            epsilon=self.epsilon, solver=self.solver,
            declared=getattr(self, "_declared_bounds", None))
        plan = plan_lasso(
            n_samples=n_samples, n_features=n_features, epsilon=self.epsilon,
            delta=self.delta, solver=self.solver, max_iter=self.max_iter,
            selection=self.selection, gradient_noise=self.gradient_noise,
            curvature=self.curvature, residual_bound=self.residual_bound,
            feature_bound=feature_bound, target_bound=self.target_bound,
            radius=self.radius, centre_target=self.fit_intercept)
        if self.solver == "greedy_cd":
            # Public: a coordinate gradient is at most B C, its noise
            # 2 B C / n noise multipliers (n, epsilon and the schedule only).
            ratio = noisy_sum_ratio(
                noise_multiplier=2.0 * plan.gradient_noise_multiplier,
                n_steps=1, expected_batch=n_samples, n_params=1)
            warn_if_noise_dominates(self, ratio)
            # A coordinate gradient of a tenth of B C is a correlation of
            # about 0.2 for standardised features and targets; below that,
            # noise decides which coordinates enter (fits worse than a
            # constant on the panel's design tables, from a ratio of 0.12).
            warn_if_signal_is_weak(self, ratio, threshold=WEAK_SIGNAL_RATIO,
                                   levers=(MORE_EPSILON, MORE_ROWS,
                                           "fewer steps (max_iter)"))
        rng = self._begin_release(plan)
        # Public too: the grids and noise of the draws planned for "auto".
        if plan.target_draws is not None:
            warn_if_coarse(self, plan.target_draws, ["target_bound"])
            if self.fit_intercept:  # without one, never centred
                warn_if_not_centred(self, plan.target_draws, "target_bound")
        if plan.bounds_draws is not None:
            warn_if_coarse(self, plan.bounds_draws, ["feature_bound"])
        (self.target_location_, self.target_bound_, self.feature_bound_,
         self.far_rows_share_) = release_lasso_bounds(self, X, y, plan, rng,
                                                      feature_bound)
        if plan.clip_check is not None:
            warn_if_clipped(self, self.far_rows_share_, plan.clip_check,
                            noise=plan.clip_check.noise_multiplier / n_samples)
        # Post-processing of public or released bounds: column j's largest
        # coordinate gradient is B_j * target_bound; from the narrowest
        # column's, so that the penalty keeps none of them out.
        self.alpha_ = (ALPHA_RATIO * float(np.min(self.feature_bound_))
                       * self.target_bound_
                       if is_auto(self.alpha) else float(self.alpha))
        steps = plan  # what the solver reads: with the bounds in force
        if self.solver == "frank_wolfe":
            steps = plan.with_bounds(feature_bound=self.feature_bound_,
                                     target_bound=self.target_bound_)
        X = clip_rows(X, self.feature_bound_)
        y = clip_values(y - self.target_location_, self.target_bound_)
        # Public: the declared blocks (greedy CD with Gaussian noise, in
        # memory); clipped so that a block's row has one column's l2 bound.
        self.feature_blocks_ = self._blocks(X)
        if self.feature_blocks_ is not None:
            X = clip_blocks(X, self.feature_blocks_, self.feature_bound_)
        warm = (self.warm_start and hasattr(self, "coef_")
                and self.coef_.shape == (n_features,))
        previous_event = self._warm_start_event() if warm else None
        problem = LinearProblem(
            X, y, self.fit_intercept, alpha=self.alpha_, radius=self.radius,
            feature_bound=self.feature_bound_,
            # "auto" starts from the residuals of w = 0, which the target
            # bound covers (and greedy CD adapts privately from there).
            residual_bound=(self.target_bound_ if self.residual_bound == "auto"
                            else self.residual_bound),
            coef_init=self.coef_.copy() if warm else None,
            # The warm start's intercept, on the centred targets.
            intercept_init=(float(self.intercept_) - self.target_location_
                            if warm and self.fit_intercept else 0.0),
            blocks=self.feature_blocks_)
        solve = SOLVERS[self.solver]
        if self.solver == "greedy_cd":
            solve = partial(solve, verbose=self.verbose)
        result = solve(problem, steps, rng)
        self.coef_ = result.coef
        # The model of the centred targets, moved back (post-processing).
        self.intercept_ = (result.intercept + self.target_location_
                           if self.fit_intercept else 0.0)
        self.n_iter_ = plan.n_steps
        self.selected_ = result.selected
        self.sparse_coef_ = sp.csr_matrix(self.coef_[None, :])
        if plan.fit_check is not None and plan.target_draws.centre:
            # On the clipped rows and centred targets, in units of
            # target_bound_ (the trivial model is the constant 0).
            scale = self.target_bound_
            check_fit(self, X, y / scale, result.coef / scale,
                      result.intercept / scale, plan.fit_check, rng,
                      (MORE_EPSILON, MORE_ROWS, "fewer steps (max_iter)"))
        self._finish_release(plan, previous_event)
        return self

    def _blocks(self, X):
        """The declared blocks the steps use (:func:`step_blocks`), or None:
        greedy CD with Gaussian gradient noise on in-memory data only."""
        blocks = getattr(self, "_declared_blocks", None)
        if (blocks is None or self.solver != "greedy_cd"
                or self.gradient_noise != "gaussian" or is_dask_collection(X)
                or blocks.shape != (X.shape[1],)):
            return None
        return step_blocks(blocks)

    def with_declared_bounds(self, bounds, blocks=None):
        """A copy that takes ``bounds`` as declared public bounds.

        How :class:`~skdpopt.PrivatePipeline` hands the model at its end
        the bounds its transformers declare by construction (a one-hot
        column's is 1): with ``feature_bound="public"`` the copy clips
        column j to ``bounds[j]`` where it is not NaN.  This object is
        left as it is.

        Parameters
        ----------
        bounds : array-like of shape (n_features,)
            Positive bounds, NaN where none is declared; public (from the
            transformers' types and parameters, never the data).
        blocks : array-like of shape (n_features,), default=None
            The block of each column (contiguous, numbered from 0: the
            columns of one one-hot encoded input column share one,
            :func:`skdpopt._declared.declared_blocks`); public.  None:
            every column its own.

        Returns
        -------
        DPLasso
            A clone (with ``warm_start``, a copy that keeps the fitted
            model it starts from).
        """
        # With warm_start, the copy keeps the fit it continues from.
        copy = deepcopy(self) if self.warm_start else clone(self)
        copy._declared_bounds = np.array(bounds, dtype=float)
        copy._declared_blocks = (None if blocks is None
                                 else np.array(blocks, dtype=np.intp))
        return copy

    def predict(self, X):
        """Predict with the fitted linear model.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Samples to predict.

        Returns
        -------
        ndarray of shape (n_samples,)
            Predicted values.
        """
        check_is_fitted(self)
        if is_dask_collection(X):
            return map_rows(self.predict, X)  # lazily, block by block
        X = check_features(self, X, accept_sparse=["csr", "csc"], reset=False)
        # The clip of fit: the model never saw a value beyond the bound.
        X = clip_rows(X, self.feature_bound_)
        if getattr(self, "feature_blocks_", None) is not None:
            X = clip_blocks(X, self.feature_blocks_, self.feature_bound_)
        return np.asarray(X @ self.coef_).ravel() + self.intercept_

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        # At the default epsilon=1 the noise dominates on the check suite's
        # datasets of a few hundred rows.
        tags.regressor_tags.poor_score = True
        return tags

