"""DPSGDRegressor and DPSGDClassifier: linear models trained by DP-SGD."""

from numbers import Integral, Real

import numpy as np
from scipy.special import expit
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from ._base import (
    PRIVACY_PARAMETER_CONSTRAINTS,
    DPEstimatorMixin,
    LinearClassifierMixin,
    check_features,
    keep_fit_on_error,
    validate_training_data,
)
from ._bounds import private_bounds
from ._classifiers import check_fit, class_plan, sgd_weighting
from ._clipping import example_norms
from ._data import (
    is_dask_collection,
    map_rows,
    refuse_auto_bounds,
    validate_dask_training_data,
)
from ._diagnostics import (
    MORE_EPSILON,
    MORE_ROWS,
    noisy_sum_ratio,
    warn_if_coarse,
    warn_if_noise_dominates,
    warn_if_not_centred,
)
from ._regressors import check_sgd_fit
from ._targets import check_sample_weight, classifier_data
from .losses import CLASSIFICATION_LOSSES, REGRESSION_LOSSES
from .plans.bounds import is_auto
from .plans.sgd import plan_dpsgd
from .solvers.lockstep_sgd import lockstep_is_possible, sgd_problems
from .solvers.targets import release_location_scale

_COMMON_PARAMETER_CONSTRAINTS = {
    **PRIVACY_PARAMETER_CONSTRAINTS,
    "penalty": [StrOptions({"l2"}), None],
    "alpha": [Interval(Real, 0, None, closed="left")],
    "fit_intercept": ["boolean"],
    "max_iter": [Interval(Integral, 1, None, closed="left")],
    "learning_rate": [StrOptions({"constant", "invscaling"})],
    "eta0": [Interval(Real, 0, None, closed="neither")],
    "power_t": [Interval(Real, 0, None, closed="left")],
    "average": ["boolean", Interval(Integral, 1, None, closed="left")],
    "batch_size": [StrOptions({"auto"}), Interval(Integral, 1, None, closed="left")],
    "clip_norm": [StrOptions({"auto"}), Interval(Real, 0, None, closed="neither")],
    "sampling": [StrOptions({"poisson", "full", "single_pass"})],
    "radius": [None, Interval(Real, 0, None, closed="neither")],
    "verbose": ["verbose"],
}

class _BaseDPSGD(DPEstimatorMixin, BaseEstimator):
    """Shared fitting machinery of the DP-SGD estimators."""

    def _fit_problems(self, X, targets, loss, sample_weight=None):
        """Fit one linear model per target vector, all in one budget.

        Parameters
        ----------
        X : ndarray or CSR matrix
        targets : list of ndarray
            One target vector per binary (or regression) problem.
        loss : object
        sample_weight : ndarray or None, default=None
            Validated weights in ``[0, sample_weight_bound]`` (classifier).

        Returns
        -------
        coefs : ndarray of shape (n_problems, n_features)
        intercepts : ndarray of shape (n_problems,)
        """
        n_samples = X.shape[0]
        self._warn_if_delta_too_large(n_samples)
        plan = plan_dpsgd(
            n_samples=n_samples, n_problems=len(targets), epsilon=self.epsilon,
            delta=self.delta, sampling=self.sampling, batch_size=self.batch_size,
            max_iter=self.max_iter, average=self.average,
            auto_clip=is_auto(self.clip_norm),
            auto_target=self._auto_target_scale(),
            centre_target=self.fit_intercept,
            learning_rate=self.learning_rate, power_t=self.power_t,
            lockstep=lockstep_is_possible(X, len(targets)),
            **self._class_plan(loss, sample_weight))
        # Public quantities only: n, epsilon (through the noise), schedule.
        warn_if_noise_dominates(self, noisy_sum_ratio(
            noise_multiplier=plan.noise_multiplier, n_steps=plan.n_steps,
            expected_batch=plan.sampling_rate * n_samples,
            n_params=X.shape[1] + int(self.fit_intercept)),
            levers=(MORE_EPSILON, MORE_ROWS, "fewer features"))
        rng = self._begin_release(plan)
        weighting = self._weighting(targets, loss, sample_weight, plan, rng)
        targets, loss = self._scaled_problem(targets, loss, plan, rng)
        clip_norm = self._clip_norm(X, targets[0], loss, plan, rng)
        results = sgd_problems(
            X, targets, loss, weighting, plan, rng, clip_norm=clip_norm,
            fit_intercept=self.fit_intercept,
            alpha=self.alpha if self.penalty == "l2" else 0.0,
            radius=self.radius, verbose=self.verbose)
        # The fit check reads the fitted model.
        self.coef_ = np.array([result.coef for result in results])
        self.intercept_ = np.array([result.intercept for result in results])
        if plan.fit_check is not None:  # classifiers weigh their classes
            check = check_sgd_fit if weighting is None else check_fit
            check(self, X, targets, weighting, plan.fit_check, rng)
        self.noise_multiplier_ = plan.noise_multiplier
        self.n_iter_ = plan.n_epochs
        self.t_ = plan.n_steps
        self._finish_release(plan)
        return self.coef_, self.intercept_

    def _fits_on_dask(self, X):
        # single_pass tracks the rows seen: validate_training_data refuses
        # Dask input for it, with the reason.
        if not is_dask_collection(X) or self.sampling == "single_pass":
            return False
        refuse_auto_bounds(self, ["clip_norm"])
        return True

    def _auto_target_scale(self):
        """Whether the fit releases a private target scale (regressor)."""
        return False

    def _class_plan(self, loss, sample_weight):
        """The plan's step, class totals and calibration (classifier)."""
        return {"eta0": self.eta0}

    def _weighting(self, targets, loss, sample_weight, plan, rng):
        """The classes' weighting (classifier; None for regression)."""
        return None

    def _scaled_problem(self, targets, loss, plan, rng):
        """The targets and loss the solver fits (classifiers: as given)."""
        return targets, loss

    def _clip_norm(self, X, target, loss, plan, rng):
        """The public clip norm, or the private draw the plan budgeted: an
        upper quantile of the per-example gradient norms at the starting
        point, ``|l'(0, y_i)| ||(x_i, 1)||`` (the same for every
        one-vs-rest problem of a symmetric classification loss)."""
        if plan.clip_draws is None:
            self.clip_norm_ = float(self.clip_norm)
            return self.clip_norm_
        warn_if_coarse(self, plan.clip_draws, ["clip_norm"])
        norms = example_norms(X, float(self.fit_intercept))
        slopes = np.abs(loss.derivative(np.zeros(X.shape[0]), target))
        with np.errstate(invalid="ignore", over="ignore"):
            statistic = np.where(slopes == 0, 0.0, slopes * norms)
        self.clip_norm_ = float(private_bounds([statistic], plan.clip_draws, rng)[0, 0])
        return self.clip_norm_

    def _decision(self, X):
        check_is_fitted(self)
        X = check_features(self, X, accept_sparse="csr", reset=False)
        return X @ self.coef_.T + self.intercept_

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags


class DPSGDRegressor(RegressorMixin, _BaseDPSGD):
    """Linear regression by differentially private SGD.

    Poisson-subsampled, per-example-clipped, Gaussian-noised SGD (Abadi et al.
    2016; Wang 2021), with the noise calibrated by the library's accountant
    for the planned number of steps under replace-one neighbouring.  The
    privacy argument is in ``docs/privacy/dpsgd.md``.  Features need no
    public bound: clipping each example's gradient bounds the sensitivity,
    so scaling the features changes accuracy, never privacy.

    Parameters
    ----------
    loss : {"squared_error", "huber", "epsilon_insensitive"}, default="squared_error"
        The loss, as in :class:`sklearn.linear_model.SGDRegressor`.
    epsilon : float, default=1.0
        Privacy budget of the fit, in (0, 1e6]; ``np.inf`` trains without
        noise, to measure what privacy costs.  Each call to ``fit`` spends it
        again.
    delta : float, default=1e-5
        Failure probability of the guarantee; choose it well below
        ``1 / n_samples``.
    penalty : {"l2"} or None, default="l2"
        Regularisation (data-independent, so free of privacy cost).
    alpha : float, default=1e-4
        Strength of the L2 penalty.
    fit_intercept : bool, default=True
        Fit an intercept; it is clipped and noised together with the
        coefficients.
    max_iter : int, default=5
        Number of epochs (expected passes over the data); the number of
        steps is ``ceil(max_iter * n_samples / batch_size)``.
    learning_rate : {"constant", "invscaling"}, default="constant"
        Step size schedule: ``eta0`` or ``eta0 / (t + 1)**power_t``.
    eta0 : float, default=0.5
        Initial step size.
    power_t : float, default=0.25
        Exponent of the "invscaling" schedule.
    average : bool or int, default=True
        Output the average of the iterates (after ``average`` samples seen
        if an int), which smooths out the noise.
    batch_size : int or "auto", default="auto"
        Expected batch size q * n_samples.  "auto": at most 256 rows, and
        small enough for ``max_iter`` epochs to make ``n_samples * epsilon
        / 50`` steps, within [10, 200] (200 without privacy): more steps
        when the noise is small, fewer and larger batches when it is not.
    clip_norm : "auto" or float, default=1.0
        Bound C on each example's gradient norm (coefficients and intercept
        together).  A float is public and free.  "auto" first releases a
        private 0.9 quantile of the examples' gradient norms at the start
        (``w = 0``) for 5% of the budget (zCDP units; the steps' noise is
        calibrated for the rest); see ``clip_norm_``.  It sets C from the
        start's gradients, larger than those near the optimum, so at small
        epsilon the default 1.0 is better.
    sampling : {"poisson", "full", "single_pass"}, default="poisson"
        "poisson": each step includes each row with probability
        ``batch_size / n_samples``.  "full": every row in every step
        (NoisyGD), ``max_iter`` steps.  "single_pass": Poisson steps where
        each row's gradient counts only the first time it is drawn, run
        until about half the rows have been seen (arXiv:2002.09609, 2020;
        ``max_iter`` is unused); meant for the non-smooth losses.
    target_scale : "auto", float or None, default="auto"
        The targets are divided by it before the fit, and the model is
        scaled back, so that ``clip_norm`` and ``eta0`` act on targets
        of about unit size whatever their units (dollars, years).
        "auto" also centres them: it first releases a private location
        (a noisy mean of the targets clipped to a privately released
        window, in two rounds) and a private 0.99 quantile of
        ``|y - location|`` (a candidate of a public grid), nine releases
        for 5% of the budget in zCDP units (up to 25% when the rows are
        too few for 5% to find the targets), and fits ``(y - location) /
        scale``; see ``target_location_`` and ``target_scale_``
        (``docs/privacy/targets.md``).  With a released location the fit
        then checks itself against it: the training rows' gains in squared
        error over the location, clipped per row, summed and released on
        2% of the budget; a sum not clearly positive warns with a
        :class:`~skdpopt.exceptions.UtilityWarning` (the model may be worse
        than the mean).  ``loss_epsilon`` stays in the
        targets' units.  A float is public and free, and does not centre
        (targets already centred and scaled by public constants: pass
        1.0).  None is the same as 1.0.
    loss_epsilon : float, default=0.1
        Width of the "huber" and "epsilon_insensitive" losses (called
        ``epsilon`` in scikit-learn, a name taken here by the budget).
    radius : float or None, default=None
        If set, project the coefficients onto the L2 ball of this radius
        after each step.
    verbose : int, default=0
        Print progress once per epoch (never data-dependent quantities
        beyond the private iterate).
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
        Coefficients of the released model (the averaged iterate unless
        ``average=False``).
    intercept_ : ndarray of shape (1,)
        Intercept of the released model (0 if ``fit_intercept=False``).
    n_iter_ : int
        Epochs run.
    t_ : int
        Noisy steps taken.
    noise_multiplier_ : float
        Noise standard deviation over ``clip_norm``.
    clip_norm_ : float
        The clip norm used (in units of the scaled targets): ``clip_norm``,
        or the privately released one (a candidate of a public grid).
    target_location_ : float
        What was subtracted from the targets before they were scaled: the
        privately released location with ``target_scale="auto"``, else 0.
        ``intercept_`` includes it.
    target_scale_ : float
        What the targets were divided by: ``target_scale`` (1.0 for None),
        or the privately released one (a candidate of a public grid).
    privacy_spent_ : PrivacySpent
        The (epsilon, delta) guarantee of the fitted model, replace-one.
    privacy_plan_ : DPSGDPlan
        What the fit released, planned before it read the data: schedule,
        noise multiplier and event tree (``privacy_spent_`` is computed
        from it).
    n_features_in_ : int
        Number of features seen during ``fit``.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of the features seen during ``fit``.  Defined only when X has
        feature names that are all strings.

    See Also
    --------
    DPSGDClassifier : The same solver for classification.
    sklearn.linear_model.SGDRegressor : The non-private model.

    Examples
    --------
    >>> import numpy as np
    >>> from skdpopt import DPSGDRegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(2000, 3))
    >>> y = X @ [0.5, -0.2, 0.1] + 0.05 * rng.normal(size=2000)
    >>> model = DPSGDRegressor(epsilon=1.0, delta=1e-6, random_state=0).fit(X, y)
    >>> model.privacy_spent_.epsilon <= 1.0
    True
    """

    _parameter_constraints = {
        **_COMMON_PARAMETER_CONSTRAINTS,
        "loss": [StrOptions(set(REGRESSION_LOSSES))],
        "loss_epsilon": [Interval(Real, 0, None, closed="left")],
        "target_scale": [StrOptions({"auto"}),
                         Interval(Real, 0, None, closed="neither"), None],
    }

    def __init__(
        self,
        loss="squared_error",
        *,
        epsilon=1.0,
        delta=1e-5,
        penalty="l2",
        alpha=1e-4,
        fit_intercept=True,
        max_iter=5,
        learning_rate="constant",
        eta0=0.5,
        power_t=0.25,
        average=True,
        batch_size="auto",
        clip_norm=1.0,
        sampling="poisson",
        target_scale="auto",
        loss_epsilon=0.1,
        radius=None,
        verbose=0,
        random_state=None,
    ):
        self.loss = loss
        self.epsilon = epsilon
        self.delta = delta
        self.penalty = penalty
        self.alpha = alpha
        self.fit_intercept = fit_intercept
        self.max_iter = max_iter
        self.learning_rate = learning_rate
        self.eta0 = eta0
        self.power_t = power_t
        self.average = average
        self.batch_size = batch_size
        self.clip_norm = clip_norm
        self.sampling = sampling
        self.target_scale = target_scale
        self.loss_epsilon = loss_epsilon
        self.radius = radius
        self.verbose = verbose
        self.random_state = random_state

    @keep_fit_on_error
    def fit(self, X, y):
        """Fit the model, spending ``epsilon`` and ``delta``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data; sparse input should be CSR.  Features need no
            bound: each example's gradient is clipped to ``clip_norm``.
        y : array-like of shape (n_samples,)
            Targets.

        Returns
        -------
        self : DPSGDRegressor
            The fitted estimator.
        """
        self._validate_params()
        if not self._fits_on_dask(X):
            X, y = validate_training_data(
                self,
                X,
                y,
                accept_sparse="csr",
                y_numeric=True,
                dtype=[np.float64, np.float32],
            )
            y = np.asarray(y, dtype=np.float64)
        else:
            X, y, _ = validate_dask_training_data(self, X, y)
        coefs, intercepts = self._fit_problems(X, [y], self._loss(1.0))
        # The model of the centred and scaled targets, moved back
        # (post-processing).
        self.coef_ = coefs[0] * self.target_scale_
        self.intercept_ = intercepts[:1] * self.target_scale_ + self.target_location_
        return self

    def _auto_target_scale(self):
        return is_auto(self.target_scale)

    def _loss(self, target_scale):
        """The loss on targets divided by ``target_scale``: the width of
        the Huber and epsilon-insensitive losses is in the targets' units."""
        loss_class = REGRESSION_LOSSES[self.loss]
        if self.loss == "squared_error":
            return loss_class()
        return loss_class(self.loss_epsilon / target_scale)

    def _scaled_problem(self, targets, loss, plan, rng):
        if plan.target_draws is None:
            self.target_location_ = 0.0
            self.target_scale_ = (1.0 if self.target_scale is None
                                  else float(self.target_scale))
        else:
            warn_if_coarse(self, plan.target_draws, ["target_scale"])
            if self.fit_intercept:  # without one, never centred
                warn_if_not_centred(self, plan.target_draws, "target_scale")
            self.target_location_, self.target_scale_ = release_location_scale(
                targets[0], plan.target_draws, rng)
        return ([(target - self.target_location_) / self.target_scale_
                 for target in targets], self._loss(self.target_scale_))

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
        if is_dask_collection(X):
            check_is_fitted(self)
            return map_rows(self.predict, X)  # lazily, block by block
        return np.asarray(self._decision(X)).ravel()

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # At the default epsilon=1 the noise dominates on the check suite's
        # datasets of a few dozen rows.
        tags.regressor_tags.poor_score = True
        return tags


class DPSGDClassifier(LinearClassifierMixin, ClassifierMixin, _BaseDPSGD):
    """Linear classifier by differentially private SGD.

    The solver of :class:`DPSGDRegressor` with classification losses.
    Multiclass problems are fitted one-vs-rest, all classes in one budget.
    On rows in memory the binary problems run in lockstep: each step
    samples one batch for all of them and clips each row's gradients in
    all the problems together (to ``sqrt(2) * clip_norm``), so that one
    noisy sum per step serves every class and the noise does not grow
    with the number of classes (docs/privacy/dpsgd.md, "Classes in
    lockstep").  On a Dask collection they run one after another and
    compose.

    Parameters
    ----------
    loss : {"log_loss", "hinge", "modified_huber"}, default="log_loss"
        The loss, as in :class:`sklearn.linear_model.SGDClassifier`.
    epsilon : float, default=1.0
        Privacy budget of the whole fit, in (0, 1e6]; ``np.inf`` trains without
        noise. Each call to ``fit`` spends it again.
    delta : float, default=1e-5
        Failure probability; choose it well below ``1 / n_samples``.
    penalty : {"l2"} or None, default="l2"
        Regularisation (data-independent, so free of privacy cost).
    alpha : float, default=1e-4
        Strength of the L2 penalty.
    fit_intercept : bool, default=True
        Fit an intercept; it is clipped and noised together with the
        coefficients.
    max_iter : int, default=5
        Epochs per binary problem; the number of steps is
        ``ceil(max_iter * n_samples / batch_size)``.
    learning_rate : {"constant", "invscaling"}, default="constant"
        Step size schedule: ``eta0`` or ``eta0 / (t + 1)**power_t``.
    eta0 : float or "auto", default="auto"
        Initial step size.  "auto" sets it for each binary problem from
        the class totals the fit releases anyway (post-processing: no
        extra budget) and from public quantities: 0.5 where the released
        share of the problem's rarer side is at most 5%, or where the
        steps' summed noise is large against their largest summed signal
        (``noise_multiplier_ * sqrt(n_params) / (batch * sqrt(t_))``
        above 0.03), rising to 1.0 where that share is at least 15% and
        the ratio at most 0.015
        (``skdpopt.plans.classes.auto_step_scales``).  A larger step
        reaches the fit sooner on balanced classes; on rare classes and
        under heavy noise it lets the noise move the scores more than the
        few rare rows' gradients.  Without released totals (the hinge loss
        with ``fit_intercept=False`` and no "balanced" weights) it is 0.5.
    power_t : float, default=0.25
        Exponent of the "invscaling" schedule.
    average : bool or int, default=True
        Output the average of the iterates (after ``average`` samples seen
        if an int), which smooths out the noise.
    batch_size : int or "auto", default="auto"
        Expected batch size q * n_samples.  "auto": at most 256 rows, and
        small enough for ``max_iter`` epochs to make ``n_samples * epsilon
        / 50`` steps, within [10, 200] (200 without privacy): more steps
        when the noise is small, fewer and larger batches when it is not.
    clip_norm : "auto" or float, default=1.0
        Bound C on each example's gradient norm (coefficients and intercept
        together).  A float is public and free.  "auto" first releases a
        private 0.9 quantile of the examples' gradient norms at the start
        (``w = 0``) for 5% of the budget (zCDP units; the steps' noise is
        calibrated for the rest); see ``clip_norm_``.  It sets C from the
        start's gradients, larger than those near the optimum, so at small
        epsilon the default 1.0 is better.
    sampling : {"poisson", "full", "single_pass"}, default="poisson"
        "poisson": Poisson-subsampled steps; "full": every row in every step
        (NoisyGD); "single_pass": each row's gradient counts only the first
        time it is drawn (see :class:`DPSGDRegressor`).
    radius : float or None, default=None
        If set, project the coefficients onto the L2 ball of this radius
        after each step.
    class_weight : dict, "balanced" or None, default=None
        Weights of the classes, multiplying each row's loss as in
        scikit-learn.  "balanced" weighs each class inversely to its
        total, from the class totals the fit releases privately
        (``docs/privacy/classes.md``).
    sample_weight_bound : float, default=1.0
        Public bound on the ``sample_weight`` passed to ``fit``: larger
        weights are refused; each row's loss derivative is multiplied by
        its weight over the bound before the clip, so the noise is that of
        unweighted rows scaled by the bound.
    classes : array-like or None, default=None
        The label set, declared public.  Every label in ``y`` must be in
        it; a class without rows still gets its one-vs-rest model.
        ``None`` reads the label set from ``y`` and warns with
        :class:`~skdpopt.exceptions.PrivacyLeakWarning`: which labels occur
        (one held by a single record included) is then revealed by
        ``classes_`` and the shape of ``coef_``, and changes the noise.
    verbose : int, default=0
        Print progress once per epoch (never data-dependent quantities
        beyond the private iterate).
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
    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
        Coefficients; one row for a binary problem, one per class
        (one-vs-rest) otherwise.
    intercept_ : ndarray of shape (1,) or (n_classes,)
        Intercepts, one per row of ``coef_``.
    n_iter_ : int
        Epochs run per binary problem.
    t_ : int
        Noisy steps per binary problem.
    noise_multiplier_ : float
        Noise standard deviation over the clip of one step's sum, shared
        by all the binary problems: ``clip_norm``, or ``sqrt(2) *
        clip_norm`` for classes in lockstep.
    privacy_spent_ : PrivacySpent
        The (epsilon, delta) guarantee of the fitted model (all classes
        together), replace-one.
    clip_norm_ : float
        The clip norm used: ``clip_norm``, or the privately released one (a
        candidate of a public grid).
    privacy_plan_ : DPSGDPlan
        What the fit released, planned before it read the data (all
        classes): schedule, noise multiplier and event tree.
    n_features_in_ : int
        Number of features seen during ``fit``.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of the features seen during ``fit``.  Defined only when X has
        feature names that are all strings.

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> from skdpopt import DPSGDClassifier
    >>> X, y = make_classification(n_samples=5000, random_state=0)
    >>> clf = DPSGDClassifier(epsilon=2.0, delta=1e-6, random_state=0).fit(X, y)
    >>> clf.score(X, y) > 0.7
    True
    """

    _parameter_constraints = {
        **_COMMON_PARAMETER_CONSTRAINTS,
        "loss": [StrOptions(set(CLASSIFICATION_LOSSES))],
        "eta0": [StrOptions({"auto"}), Interval(Real, 0, None, closed="neither")],
        "class_weight": [StrOptions({"balanced"}), dict, None],
        "sample_weight_bound": [Interval(Real, 0, None, closed="neither")],
        "classes": ["array-like", None],
    }

    def __init__(
        self,
        loss="log_loss",
        *,
        epsilon=1.0,
        delta=1e-5,
        penalty="l2",
        alpha=1e-4,
        fit_intercept=True,
        max_iter=5,
        learning_rate="constant",
        eta0="auto",
        power_t=0.25,
        average=True,
        batch_size="auto",
        clip_norm=1.0,
        sampling="poisson",
        radius=None,
        class_weight=None,
        sample_weight_bound=1.0,
        classes=None,
        verbose=0,
        random_state=None,
    ):
        self.loss = loss
        self.epsilon = epsilon
        self.delta = delta
        self.penalty = penalty
        self.alpha = alpha
        self.fit_intercept = fit_intercept
        self.max_iter = max_iter
        self.learning_rate = learning_rate
        self.eta0 = eta0
        self.power_t = power_t
        self.average = average
        self.batch_size = batch_size
        self.clip_norm = clip_norm
        self.sampling = sampling
        self.radius = radius
        self.class_weight = class_weight
        self.sample_weight_bound = sample_weight_bound
        self.classes = classes
        self.verbose = verbose
        self.random_state = random_state

    @keep_fit_on_error
    def fit(self, X, y, sample_weight=None):
        """Fit the classifier, spending ``epsilon`` and ``delta``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data; sparse input should be CSR.  Features need no
            bound: each example's gradient is clipped to ``clip_norm``.
        y : array-like of shape (n_samples,)
            Class labels, all in ``classes`` when it is given.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the rows, in ``[0, sample_weight_bound]`` (larger
            ones are refused).  They multiply each row's loss, with the
            class weights, as in scikit-learn; the noise grows with the
            bound.  Not with Dask collections.

        Returns
        -------
        self : DPSGDClassifier
            The fitted estimator.
        """
        self._validate_params()
        X, self.classes_, targets = classifier_data(
            self, X, y, on_dask=self._fits_on_dask(X))
        sample_weight = check_sample_weight(self, sample_weight, X,
                                            self.sample_weight_bound)
        self._fit_problems(X, targets, CLASSIFICATION_LOSSES[self.loss](),
                           sample_weight)
        return self

    def _class_plan(self, loss, sample_weight):
        return class_plan(self, sample_weight, proba=self._has_proba())

    def _weighting(self, targets, loss, sample_weight, plan, rng):
        return sgd_weighting(self, targets, loss, sample_weight, plan, rng)

    def _has_proba(self):
        return self.loss in ("log_loss", "modified_huber")

    def _positive_probability(self, scores):
        # As scikit-learn's SGDClassifier: modified Huber's decision maps
        # linearly to a probability on [-1, 1].
        if self.loss == "log_loss":
            return expit(scores)
        return (np.clip(scores, -1.0, 1.0) + 1.0) / 2.0

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.poor_score = True
        return tags
