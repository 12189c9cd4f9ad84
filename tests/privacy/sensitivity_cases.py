"""One case per release: how to fit, where to look, what is declared.

Every release of every plan has a case here (the convention: a new
release adds its case, see docs/privacy/sensitivity.md).  A case's
``observe(side, rng)`` fits its estimator on one dataset of a pair and
returns ``{key: Statistic}``: each released pre-noise statistic with its
declared sensitivity and norm.  ``rng`` draws the public probe points; it
is seeded alike for both datasets, so both are probed at the same points.
``data`` holds the neighbouring datasets the case is checked on: a
hypothesis strategy and fixed adversarial examples.
"""

import math
import sys
from dataclasses import dataclass
from functools import partial
from typing import Callable

import numpy as np
import pytest
import scipy.sparse
from harness import (
    Statistic,
    features,
    frames,
    observing,
    probe_l1_ball,
    probe_vectors,
    spy,
    tables,
    zero_noise,
)

import skdpopt._bounds
import skdpopt._classifiers
import skdpopt._data.inmemory
import skdpopt._domain
import skdpopt._regressors
import skdpopt.lasso
import skdpopt.logistic_simplex
import skdpopt.minimax
import skdpopt.sgd
import skdpopt.solvers.classes
import skdpopt.solvers.clipping
import skdpopt.solvers.frank_wolfe
import skdpopt.solvers.gda
import skdpopt.solvers.greedy_cd
import skdpopt.solvers.lockstep_sgd
import skdpopt.solvers.mirror_descent
import skdpopt.solvers.saddle_point
import skdpopt.solvers.targets
import skdpopt.synthetic
from skdpopt import (
    DPLasso,
    DPLogisticSimplex,
    DPMinimaxClassifier,
    DPMinMaxScaler,
    DPSGDClassifier,
    DPSGDRegressor,
    DPStandardScaler,
    DPSyntheticData,
    make_private_pipeline,
)
from skdpopt._classifiers import quiet_log_proba
from skdpopt._sums import row_dots
from skdpopt.accounting import leaves
from skdpopt.losses import LogLoss
from skdpopt.plans.checks import plan_clip_check, plan_fit_check
from skdpopt.plans.logistic_simplex import SGD_CLIP, refit_sensitivities
from skdpopt.solvers.checks import (
    clipped_targets,
    release_clip_check,
    release_fit_check,
    release_group_fit_check,
    squared_error_gains,
)
from skdpopt.solvers.classes import probability_sum
from skdpopt.solvers.greedy_cd import selection_scores
from skdpopt.solvers.noisy_newton import logistic_statistics


@dataclass
class Case:
    """A release and how to observe it.

    Attributes
    ----------
    name : str
    observe : callable
        ``observe(side, rng)`` -> dict of str to Statistic.
    data : harness.Datasets
        The neighbouring pairs: a hypothesis strategy and fixed examples.
    marks : tuple
        pytest marks of the case (a strict xfail while a known finding is
        open).
    """

    name: str
    observe: Callable
    data: object
    marks: tuple = ()

    def __repr__(self):
        return self.name

    def param(self):
        """The case as a pytest parameter (with its marks)."""
        return pytest.param(self, id=self.name, marks=self.marks)


FLOATS = (np.float32, np.float64)
ALL_FORMATS = ("dense", "csr", "dask")


# -- DP-SGD: the clipped gradient sum of every step --------------------------

CLIP = 0.7  # public clip norm C: each clipped contribution has norm <= C


def _gradient_sums(patch, fit_intercept, seed, out, max_calls=6):
    """Spy on every gradient sum the solver asks for (all rows, a Poisson
    batch, a single-pass batch; in memory or on Dask) and evaluate the
    same rows at probe iterates right away, before the fit moves on (the
    Dask sampler reuses its buffers).  The first steps are enough: every
    step reads the same function."""
    for owner in _linear_rows_classes():
        original = owner.gradient_sum

        def then(call, original=original):
            if len(out) >= max_calls:
                return
            source = call.args[0]
            rows = call.args[3] if len(call.args) > 3 else call.kwargs.get("rows")
            d = source.n_features
            points = probe_vectors(np.random.default_rng([seed, len(out)]), d + 1)
            values = []
            for point in points:
                intercept = point[d] if fit_intercept else 0.0
                g, s = original(source, point[:d], intercept, rows)
                values.append(np.append(g, s) if fit_intercept else g)
            out.append(values)

        spy(patch, owner, "gradient_sum", then=then)
    _lockstep_sums(patch, fit_intercept, seed, out, max_calls)


def _lockstep_sums(patch, fit_intercept, seed, out, max_calls):
    """The same for the classes in lockstep: the K x (d + 1) sums of every
    step, at probe coefficient matrices (as one vector)."""
    owner = skdpopt.solvers.lockstep_sgd.LockstepRows
    original = owner.gradient_sums

    def then(call):
        if len(out) >= max_calls:
            return
        source = call.args[0]
        rows = call.args[3] if len(call.args) > 3 else call.kwargs.get("rows")
        k, d = len(source.problems), source.n_features
        points = probe_vectors(np.random.default_rng([seed, len(out)]), k * (d + 1))
        values = []
        for point in points:
            point = point.reshape(k, d + 1)
            intercept = point[:, d] if fit_intercept else np.zeros(k)
            g, s = original(source, point[:, :d], intercept, rows)
            values.append((np.column_stack([g, s]) if fit_intercept else g).ravel())
        out.append(values)

    spy(patch, owner, "gradient_sums", then=then)


def _linear_rows_classes():
    classes = [skdpopt._data.inmemory.InMemoryLinearRows]
    try:
        from skdpopt._data.dask_backend import DaskLinearRows
    except ImportError:  # pragma: no cover
        return classes
    return classes + [DaskLinearRows]


def _sgd_observe(make, sampling, fit_intercept, clip=CLIP):
    def observe(side, rng):
        est = make(
            sampling=sampling, fit_intercept=fit_intercept, clip_norm=clip,
            max_iter=1, batch_size=max(1, side.n_samples // 2),
            average=False, alpha=0.0, eta0=1.0, learning_rate="constant",
            epsilon=1.0, delta=1e-5, random_state=0)
        sums = []
        with observing() as patch:
            zero_noise(patch, skdpopt.sgd, "plan_dpsgd", noise_multiplier=0.0)
            _gradient_sums(patch, fit_intercept, int(rng.integers(2**31)), sums)
            est.fit(side.X, side.y)
        bound = 2.0 * est.clip_norm_  # replace-one: two clipped contributions
        if est.privacy_plan_.lockstep:
            # A row's gradients in the K problems, clipped together to
            # sqrt(2) C in Frobenius norm (docs/privacy/dpsgd.md).
            bound *= math.sqrt(2.0)
        stats = {}
        for step, values in enumerate(sums):
            for i, value in enumerate(values):
                stats[f"step {step} sum at probe {i}"] = Statistic(value, bound)
        plan = est.privacy_plan_
        public_start = plan.class_totals is None and not plan.calibration_steps
        if plan.sampling_rate == 1.0 and est.t_ == 1 and public_start:
            # End to end: one noiseless full-batch step from 0 with step 1
            # is minus the mean clipped gradient (in the targets' scale).
            # Not where released class totals start the intercept, or the
            # released calibration moves it after the run (their own cases).
            n = side.n_samples
            scale = getattr(est, "target_scale_", 1.0)
            coef = np.atleast_2d(est.coef_)
            intercept = np.atleast_1d(est.intercept_)
            for p in range(coef.shape[0]):
                released = coef[p] if not fit_intercept else np.append(
                    coef[p], intercept[p])
                stats[f"released first step, problem {p}"] = Statistic(
                    -n * released / scale, bound)
        return stats
    return observe


def _sgd_regressor(**params):
    return DPSGDRegressor(target_scale=1.0, **params)


def _sgd_classifier(classes, **fixed):
    def make(**params):
        return DPSGDClassifier(classes=classes, **fixed, **params)
    return make


SGD_CASES = []
for _sampling, _formats in (("full", ALL_FORMATS), ("poisson", ALL_FORMATS),
                            ("single_pass", ("dense", "csr"))):
    SGD_CASES.append(Case(
        f"DPSGDRegressor({_sampling}): clipped gradient sums",
        _sgd_observe(_sgd_regressor, _sampling, True),
        features(formats=_formats, dtypes=FLOATS, targets="real")))
    SGD_CASES.append(Case(
        f"DPSGDClassifier({_sampling}, 3 classes): clipped gradient sums",
        _sgd_observe(_sgd_classifier(["a", "b", "c"]), _sampling, True),
        features(formats=_formats, dtypes=FLOATS, targets=["a", "b", "c"])))
SGD_CASES.append(Case(
    "DPSGDClassifier(full, 2 classes, hinge, no intercept): clipped gradient sums",
    _sgd_observe(_sgd_classifier([0.0, 1.0], loss="hinge"), "full", False),
    features(formats=ALL_FORMATS, dtypes=FLOATS, targets=[0.0, 1.0])))


# -- the "auto" bounds: counts below each candidate of the public grid --------

def _counts_observe(make):
    """Each private quantile draw scores a candidate by how far the count
    of a per-record statistic below it is from a target rank: one record
    moves every count by at most 1, so the scores move by at most the
    draw's score sensitivity.  Observed at the counts, which the draws
    read and nothing else."""
    def observe(side, rng):
        with observing() as patch:
            counts = spy(patch, skdpopt._bounds, "counts_below")
            make().fit(side.X, side.y)
        return {f"counts of statistic {i}": Statistic(call.result, 1.0, "linf")
                for i, call in enumerate(counts.calls)}
    return observe


AUTO_BOUND_CASES = [
    Case("DPSGDRegressor: auto target scale (counts of |y|)",
         _counts_observe(lambda: DPSGDRegressor(
             target_scale="auto", max_iter=1, random_state=0)),
         features(formats=ALL_FORMATS, dtypes=FLOATS, targets="real")),
    Case("DPSGDRegressor: auto clip norm (counts of gradient norms)",
         _counts_observe(lambda: DPSGDRegressor(
             target_scale=1.0, clip_norm="auto", max_iter=1, random_state=0)),
         features(dtypes=FLOATS, formats=("dense", "csr"), targets="real")),
    Case("DPSGDClassifier: auto clip norm (counts of gradient norms)",
         _counts_observe(lambda: DPSGDClassifier(
             clip_norm="auto", classes=[0.0, 1.0], max_iter=1, random_state=0)),
         features(dtypes=FLOATS, formats=("dense", "csr"),
                  targets=[0.0, 1.0])),
    Case("DPLasso: auto target and feature bounds (counts of |y|, max |x|)",
         _counts_observe(lambda: DPLasso(max_iter=1, random_state=0)),
         features(formats=ALL_FORMATS, dtypes=FLOATS, targets="real")),
]


# -- the classifiers' class releases: totals, calibration, fit and clip checks --

WEIGHT_BOUND = 2.0  # public sample_weight_bound of the weighted cases


def _record_weights(X):
    """Sample weights in [1/2, WEIGHT_BOUND] read from each record's first
    feature: a replaced record carries its own weight, up to the bound
    (never all zero, which the fit refuses as scikit-learn does)."""
    first = X[:, :1]
    first = first.toarray() if hasattr(first, "toarray") else np.asarray(first)
    with np.errstate(invalid="ignore", over="ignore"):
        values = np.abs(first.ravel().astype(np.float64))
    return np.clip(np.nan_to_num(values, posinf=WEIGHT_BOUND), 0.5, WEIGHT_BOUND)


def _declared(release):
    """The sensitivity a class release's noise is calibrated for: its
    noise over the event's multiplier (Gaussian, l2) or times the event's
    epsilon (Laplace, l1)."""
    if release.noise == "laplace":
        return release.noise_scale * release.event.epsilon0, "l1"
    return release.noise_scale / release.event.noise_multiplier, "l2"


def _quiet_dots(rows, coef):
    # A probe's score overflows on extreme rows (a block at a time on Dask).
    with np.errstate(over="ignore", invalid="ignore"):
        return row_dots(rows, coef)


def _fit_weighted(est, side, weighted):
    if weighted:
        return est.fit(side.X, side.y, sample_weight=_record_weights(side.X))
    return est.fit(side.X, side.y)


def _class_releases_observe(make, weighted=False):
    """What a classifier releases around its fit besides its solver's own
    statistics: the class totals (one record moves two totals by its
    weight bound W: l2 sqrt(2) W, l1 2 W), each calibration sum
    ``sum_i v_i p(s_i + c)`` (terms in [0, 1]: 1) at probe coefficients
    and intercepts, the fit check's sum of clipped log-likelihood gains
    (terms in [-bound, bound]: 2 bound) at probe models and priors, and
    the clip check's sum of per-row shares of clipped values (terms in
    [0, 1]: 1).  The models, priors and intercepts are earlier releases:
    the probes stand for them, alike on both datasets."""
    def observe(side, rng):
        est = make()
        with observing() as patch:
            totals = spy(patch, skdpopt.solvers.classes, "class_totals")
            calibrations = spy(patch, skdpopt.solvers.classes, "calibrate_intercept")
            checks = spy(patch, skdpopt._classifiers, "release_fit_check")
            clipped = spy(patch, skdpopt.logistic_simplex, "release_clip_check")
            module = sys.modules[type(est).__module__]
            fitted = spy(patch, module, "check_fit")
            _fit_weighted(est, side, weighted)
        plan = est.privacy_plan_
        stats = {}
        if plan.class_totals is not None:
            bound, norm = _declared(plan.class_totals)
            stats["class totals"] = Statistic(totals.first.result, bound, norm)
        for p, call in enumerate(calibrations.calls):
            X, coef, _, loss, weights = call.args[:5]
            for i, probe in enumerate(probe_vectors(rng, len(coef))):
                scores = skdpopt._data.map_rows(partial(_quiet_dots, coef=probe), X)
                intercept = float(rng.normal() * 3.0)
                stats[f"problem {p} calibration sum at probe {i}"] = Statistic(
                    probability_sum(scores, intercept, loss, weights), 1.0)
        if checks.calls:
            bound, norm = _declared(plan.fit_check)
            fit = fitted.first
            X, targets, weighting = fit.args[1], fit.args[2], fit.args[3]
            coef_shape = est.coef_.shape
            for i, probe in enumerate(probe_vectors(rng, int(np.prod(coef_shape)))):
                est.coef_ = probe.reshape(coef_shape)
                est.intercept_ = rng.normal(size=coef_shape[0]) * 3.0
                log_prior = np.log(rng.dirichlet(np.ones(len(est.classes_))))
                log_proba = skdpopt._data.map_rows(
                    partial(quiet_log_proba, est), X, len(est.classes_))
                exact = release_fit_check(
                    log_proba, targets, log_prior, weighting.check_weights(targets),
                    plan_fit_check(0.0, bound=plan.fit_check.bound), rng)
                stats[f"fit check at probe {i}"] = Statistic(exact, bound, norm)
        for call in clipped.calls:
            bound, norm = _declared(plan.clip_check)
            X, feature_bound = call.args[:2]
            exact = release_clip_check(X, feature_bound, plan_clip_check(0.0), rng)
            stats["clip check"] = Statistic(exact, bound, norm)
        return stats
    return observe


# -- the target's location and scale, and the clip check --------------------

def _target_observe(make):
    """The target's releases (docs/privacy/targets.md): counts of y, of
    |y - first location| and of |y - location| below each candidate (each
    moves by at most 1) and the two clipped sums (by at most the width they
    are clipped to).  Each release's parameters are released values; to
    compare the two datasets at the same ones, every stage runs as it does
    (so its statistics are observed) and then hands the next one a public
    probe instead of its result: the bounds, the first location, the window
    and the location.  epsilon = inf: the target is always centred, and the
    statistics are the pre-noise ones."""
    def observe(side, rng):
        low, high = np.sort(rng.normal(size=2) * 3.0)
        first, location = rng.normal(size=2)
        window = 0.1 + abs(rng.normal())
        module = skdpopt.solvers.targets
        with observing() as patch:
            counts = spy(patch, skdpopt._bounds, "counts_below")
            sums = spy(patch, module, "clipped_total")
            stages = {"_first_bounds": lambda *a, result: (low, high),
                      "_window": lambda *a, result: window}
            for name, probe in stages.items():
                original = getattr(module, name)
                patch.setattr(module, name, lambda *a, original=original,
                              probe=probe: probe(*a, result=original(*a)))
            means = iter((first, location))
            original_mean = module._noisy_mean
            patch.setattr(module, "_noisy_mean", lambda *a: (
                original_mean(*a), next(means))[1])
            make().fit(side.X, side.y)
        stats = {f"counts {i}": Statistic(call.result, 1.0, "linf")
                 for i, call in enumerate(counts.calls)}
        for i, call in enumerate(sums.calls):
            _, lower, upper = call.args
            stats[f"clipped sum {i}"] = Statistic(call.result, upper - lower)
        return stats
    return observe


def _class_sgd(classes, **params):
    return lambda: DPSGDClassifier(classes=classes, max_iter=1, random_state=0,
                                   **params)


def _class_simplex(classes, **params):
    return lambda: DPLogisticSimplex(classes=classes, radius=RADIUS,
                                     feature_bound=FEATURE_BOUND, random_state=0,
                                     **params)


CLASS_CASES = [
    Case("DPSGDClassifier(3 classes): totals, calibration sums, fit check",
         _class_releases_observe(_class_sgd(["a", "b", "c"])),
         features(formats=ALL_FORMATS, dtypes=FLOATS, targets=["a", "b", "c"])),
    Case("DPSGDClassifier(balanced, sample weights): totals, calibration, fit check",
         _class_releases_observe(_class_sgd(
             [0.0, 1.0], class_weight="balanced", sample_weight_bound=WEIGHT_BOUND),
             weighted=True),
         features(formats=("dense", "csr"), dtypes=FLOATS, targets=[0.0, 1.0])),
    Case("DPLogisticSimplex(sgd, 3 classes): clip check, totals, calibration, fit",
         _class_releases_observe(_class_simplex(["a", "b", "c"], solver="sgd")),
         features(formats=ALL_FORMATS, dtypes=FLOATS, targets=["a", "b", "c"])),
    Case("DPLogisticSimplex(mirror_descent, delta=0, weights): Laplace checks, totals",
         _class_releases_observe(_class_simplex(
             [0.0, 1.0], solver="mirror_descent", delta=0.0, max_iter=1,
             n_vertices=2, sample_weight_bound=WEIGHT_BOUND), weighted=True),
         features(formats=("dense", "csr"), dtypes=FLOATS, targets=[0.0, 1.0])),
    Case("DPLogisticSimplex(frank_wolfe, balanced): clip check, totals, fit check",
         _class_releases_observe(_class_simplex(
             [0.0, 1.0], solver="frank_wolfe", max_iter=2, class_weight="balanced")),
         features(formats=ALL_FORMATS, dtypes=FLOATS, targets=[0.0, 1.0])),
]


def _clip_check_observe(side, rng):
    """The clip check's count of rows with a value beyond 4 public feature
    bounds: one record moves it by at most 1."""
    with observing() as patch:
        count = spy(patch, skdpopt.solvers.clipping, "clipped_total")
        DPLasso(max_iter=1, target_bound=1.0, random_state=0).fit(side.X, side.y)
    return {"count of far rows": Statistic(count.first.result, 1.0)}


def _regression_check_observe(make, owner):
    """The regressors' fit check: the sum of the centred and scaled
    targets clipped to +-mean_bound (2 mean_bound), and the sums of
    per-row squared-error gains of the fitted model over a constant (the
    location, 0, and the released mean), each clipped to +-bound (2
    bound).  The model, the targets' location and scale and the released
    mean are earlier releases: public probes stand for them, alike on
    both datasets, on the rows as the estimator hands them to the check
    (DPLasso's clipped to its public feature bound).  A large epsilon: the
    tiny datasets' targets are then centred, which the check needs."""
    def observe(side, rng):
        est = make()
        with observing() as patch:
            released = spy(patch, skdpopt._regressors, "release_squared_error_check")
            # The rows as the estimator hands them to the check.
            fitted = spy(patch, owner, "check_fit")
            est.fit(side.X, side.y)
        assert released.calls, "the fit check was not released"
        plan = est.privacy_plan_.fit_check
        (leaf, count), = leaves(plan.event)
        assert count == 3
        # The sensitivities the event's noise is calibrated for: the
        # noise over the leaf's multiplier (Gaussian, l2) or times its
        # epsilon (Laplace, l1).
        per_unit = (leaf.epsilon0 if plan.noise == "laplace"
                    else 1.0 / leaf.noise_multiplier)
        norm = "l1" if plan.noise == "laplace" else "l2"
        gain_bound = plan.noise_scale * per_unit
        mean_bound = plan.mean_noise_scale * per_unit
        X = fitted.first.args[1]
        y = np.asarray(side.y, dtype=np.float64)
        stats = {}
        for i, probe in enumerate(probe_vectors(rng, X.shape[1])):
            location, scale = rng.normal() * 3.0, 10.0 ** rng.uniform(-2, 2)
            targets = (y - location) / scale
            predictions = skdpopt._data.map_rows(
                partial(_quiet_dots, coef=probe), X) + rng.normal()
            constant = rng.uniform(-plan.mean_bound, plan.mean_bound)
            for name, c in (("location", 0.0), ("mean", constant)):
                exact = float(np.sum(squared_error_gains(
                    predictions, targets, plan.bound, constant=c)))
                stats[f"fit check over the {name} at probe {i}"] = Statistic(
                    exact, gain_bound, norm)
            stats[f"fit check's target sum at probe {i}"] = Statistic(
                float(np.sum(clipped_targets(targets, plan.mean_bound))),
                mean_bound, norm)
        return stats
    return observe


TARGET_CASES = [
    Case("DPSGDRegressor: the target's location and scale",
         _target_observe(lambda: DPSGDRegressor(
             epsilon=np.inf, max_iter=1, random_state=0)),
         features(formats=ALL_FORMATS, dtypes=FLOATS, targets="real")),
    Case("DPLasso: the target's location and bound",
         _target_observe(lambda: DPLasso(
             epsilon=np.inf, max_iter=1, random_state=0)),
         features(formats=("dense", "csr"), dtypes=FLOATS, targets="real")),
    Case("DPLasso: the clip check of a public feature bound (count)",
         _clip_check_observe,
         features(formats=ALL_FORMATS, dtypes=FLOATS, targets="real")),
    Case("DPSGDRegressor: the fit check (squared-error gains)",
         _regression_check_observe(lambda: DPSGDRegressor(
             epsilon=1e5, max_iter=1, random_state=0), skdpopt._regressors),
         features(formats=ALL_FORMATS, dtypes=FLOATS, targets="real")),
    Case("DPLasso: the fit check (squared-error gains)",
         _regression_check_observe(lambda: DPLasso(
             epsilon=1e5, max_iter=1, random_state=0), skdpopt.lasso),
         features(formats=ALL_FORMATS, dtypes=FLOATS, targets="real")),
]


# -- DPLasso: greedy coordinate descent and Frank-Wolfe ----------------------

# Public feature, target and residual bounds; 0.3 is not a float32 number
# (it rounds up), so a product or sum in float32 shows at the bound.
B, TARGET, RESIDUAL = 1.5, 2.0, 0.3


def _column_bounds(d):
    """Per-column public bounds around B: 0.5 B, B, 2 B, 0.5 B, ..."""
    return B * np.array([0.5, 1.0, 2.0])[np.arange(d) % 3]


def _lasso_observe(residual_bound, curvature, per_column=False):
    """The statistics greedy CD releases at a step, from the clipped
    least-squares problem the estimator hands the solver, at probe
    iterates and probe residual bounds C (the bound in force is a past
    release): coordinate gradients 2 B_j C / n, selection scores 2 C / n,
    mean squared clipped residual C^2 / n, column curvatures B_j^2 / n.
    With ``per_column``, one bound B_j per column (an array
    ``feature_bound``); each gradient is observed over its own B_j and
    each curvature over B_j^2, against 2 C / n and 1 / n."""
    alpha = 0.05

    def observe(side, rng):
        n, d = side.X.shape
        bound = _column_bounds(d) if per_column else B
        est = DPLasso(alpha=alpha, max_iter=2, feature_bound=bound,
                      target_bound=TARGET, residual_bound=residual_bound,
                      curvature=curvature, random_state=0)
        with observing() as patch:
            zero_noise(patch, skdpopt.lasso, "plan_lasso",
                       **_noiseless_lasso(residual_bound, curvature))
            problems = spy(patch, skdpopt.solvers.greedy_cd, "least_squares_problem")
            scorers = spy(patch, skdpopt.solvers.greedy_cd, "selection_scores")
            est.fit(side.X, side.y)
        problem = problems.first.result
        # The scores as the solver computes them: over the bounds it passes.
        score_bounds = scorers.first.args[3]
        # Each coordinate's bound: its column's, and the intercept's
        # constant feature (the largest).
        bounds = np.append(np.broadcast_to(est.feature_bound_, (d,)),
                           np.max(est.feature_bound_))
        public = TARGET if residual_bound == "auto" else residual_bound
        stats = {}
        for i, point in enumerate(probe_vectors(rng, d + 1)):
            C = public * rng.uniform(0.01, 1.0) if i else public
            problem.residual_bound = C
            problem.reset(point[:d], point[d])
            grad, grad_intercept = problem.gradient()
            gradient = np.append(grad, grad_intercept)
            stats[f"coordinate gradients over their bounds at probe {i}"] = (
                Statistic(gradient / bounds, 2.0 * C / n, "linf"))
            scores = np.append(selection_scores(grad, point[:d], alpha,
                                                score_bounds),
                               abs(grad_intercept) / bounds[d])
            stats[f"selection scores at probe {i}"] = Statistic(
                scores, 2.0 * C / n, "linf")
            stats[f"mean squared residual at probe {i}"] = Statistic(
                problem.mean_square_residual(), C * C / n)
        stats["column curvatures over their bounds squared"] = Statistic(
            [problem.curvature(j) / bounds[j]**2 for j in range(d)],
            1.0 / n, "linf")
        return stats
    return observe


def _lasso_blocks_observe(side, rng):
    """Greedy CD on declared blocks (column 0 alone, the others one block
    of bound B), whatever the rows: the block's gradient over B in l2
    (2 C / n), every candidate's score (2 C / n) and the block's
    curvatures over B^2 in l2 (sqrt(2) / n), from the problem handed to
    the solver (after the block clip), at probe iterates and bounds."""
    alpha = 0.05
    X = side.X
    if X.shape[1] < 4:  # zero columns alike on both sides: a block of 3
        pad = np.zeros((X.shape[0], 4 - X.shape[1]), dtype=X.dtype)
        X = (scipy.sparse.hstack([X, pad], format="csr") if scipy.sparse.issparse(X)
             else np.hstack([X, pad]))
    n, d = X.shape
    blocks = np.r_[0, np.ones(d - 1, dtype=np.intp)]
    est = DPLasso(alpha=alpha, max_iter=2, target_bound=TARGET,
                  curvature="private", random_state=0)
    est = est.with_declared_bounds(np.full(d, B), blocks)
    with observing() as patch:
        zero_noise(patch, skdpopt.lasso, "plan_lasso",
                   **_noiseless_lasso("auto", "private"))
        problems = spy(patch, skdpopt.solvers.greedy_cd, "least_squares_problem")
        est.fit(X, side.y)
    assert est.feature_blocks_ is not None
    problem = problems.first.result
    # Besides random iterates, an intercept far beyond the targets: every
    # residual then clips at the same edge, where a row's whole block
    # moves its gradient most.
    far = [np.r_[np.zeros(d), edge] for edge in (-100.0 * TARGET, 100.0 * TARGET)]
    stats = {}
    for i, point in enumerate(list(probe_vectors(rng, d + 1)) + far):
        C = TARGET * rng.uniform(0.01, 1.0) if i else TARGET
        problem.residual_bound = C
        problem.reset(point[:d], point[d])
        grad, grad_intercept = problem.gradient()
        stats[f"block gradient over B at probe {i}"] = Statistic(
            grad[1:] / B, 2.0 * C / n, "l2")
        scores = skdpopt.solvers.greedy_cd.block_scores(
            selection_scores(grad, point[:d], alpha, B), np.array([0, 1]))
        stats[f"column and block scores at probe {i}"] = Statistic(
            np.append(scores, abs(grad_intercept) / B), 2.0 * C / n, "linf")
    stats["block curvatures over B squared"] = Statistic(
        [problem.curvature(j) / B**2 for j in range(1, d)], np.sqrt(2.0) / n, "l2")
    return stats


def _noiseless_lasso(residual_bound, curvature):
    fields = {"gradient_noise_multiplier": 0.0, "selection_epsilon": np.inf,
              "activation_margin": 0.0}
    if curvature == "private":
        fields["curvature_noise_multiplier"] = 0.0
    if residual_bound == "auto":
        fields["residual_noise_multiplier"] = 0.0
    return fields


def _lasso_frank_wolfe_observe(side, rng):
    """Frank-Wolfe's draws score each vertex +-R e_j by ``+-R g_j``: the
    gradient oracle the solver is handed, at probe points of the ball;
    declared: the plan's score sensitivity over its inverse temperature."""
    radius = 3.0
    est = DPLasso(solver="frank_wolfe", radius=radius, max_iter=2, feature_bound=B,
                  target_bound=TARGET, residual_bound=RESIDUAL, random_state=0)
    with observing() as patch:
        runs = spy(patch, skdpopt.solvers.frank_wolfe, "private_frank_wolfe")
        est.fit(side.X, side.y)
    gradient = runs.first.args[0]
    dim = runs.first.args[1]
    plan = est.privacy_plan_
    declared = plan.score_sensitivity / plan.score_scale
    stats = {}
    for i, point in enumerate(probe_l1_ball(rng, dim, radius)):
        grad = gradient(point)
        stats[f"vertex scores at probe {i}"] = Statistic(
            radius * np.concatenate([grad, -grad]), declared, "linf")
    return stats


def lasso_first_step_observe(side, rng):
    """The end-to-end release of one greedy step: with a noiseless plan,
    ``alpha = 0`` and bounds B = c = C = 1, the fitted ``coef_`` of one
    feature is minus its coordinate gradient (over B^2 = 1), so ``n coef_``
    is minus the summed clipped gradient, sensitivity 2 B C = 2; and the
    gradient of the problem handed to the solver, at 0."""
    est = DPLasso(alpha=0.0, fit_intercept=False, max_iter=1, feature_bound=1.0,
                  target_bound=1.0, residual_bound=1.0, curvature="bound",
                  random_state=0)
    with observing() as patch:
        zero_noise(patch, skdpopt.lasso, "plan_lasso", **_noiseless_lasso(1.0, "bound"))
        problems = spy(patch, skdpopt.solvers.greedy_cd, "least_squares_problem")
        est.fit(side.X, side.y)
    n, d = side.X.shape
    problem = problems.first.result
    problem.reset(np.zeros(d), 0.0)
    grad, _ = problem.gradient()
    return {"released coefficient times n": Statistic(-n * est.coef_, 2.0),
            "summed gradient at 0": Statistic(n * grad, 2.0)}


LASSO_FIRST_STEP = Case("DPLasso: one noiseless greedy step, end to end",
                        lasso_first_step_observe, None)
SGD_FIRST_STEP = Case(
    "DPSGDRegressor(full, C = 1, no intercept): one noiseless step, end to end",
    _sgd_observe(_sgd_regressor, "full", False, clip=1.0), None)


LASSO_CASES = [
    Case("DPLasso(greedy_cd): gradient, selection, curvature, residual scale",
         _lasso_observe("auto", "private"),
         features(formats=ALL_FORMATS, dtypes=FLOATS, targets="real")),
    Case("DPLasso(greedy_cd, public residual bound, curvature bound)",
         _lasso_observe(RESIDUAL, "bound"),
         features(formats=("dense", "csr"), dtypes=FLOATS, targets="real")),
    Case("DPLasso(greedy_cd, per-column feature bounds)",
         _lasso_observe("auto", "private", per_column=True),
         features(formats=ALL_FORMATS, dtypes=FLOATS, targets="real")),
    Case("DPLasso(greedy_cd, one-hot blocks): block gradient, scores, curvatures",
         _lasso_blocks_observe,
         features(formats=("dense", "csr"), dtypes=FLOATS, targets="real")),
    Case("DPLasso(frank_wolfe): vertex scores",
         _lasso_frank_wolfe_observe,
         features(formats=ALL_FORMATS, dtypes=FLOATS, targets="real")),
]


# -- DPLogisticSimplex --------------------------------------------------------

RADIUS, FEATURE_BOUND = 3.0, 1.0


def _dense_vertex_gradient(result, n_vertices):
    vertices, values = result
    dense = np.zeros(n_vertices)
    dense[vertices] = values
    return dense


def _simplex_md_observe(classes, fit_intercept, constraint, delta=1e-5):
    """Mirror descent releases, per binary problem (the class totals and
    the checks have their own cases): vertex draws whose log weights move
    by the plan's score sensitivity over its step size per coordinate of a
    batch gradient (2 R b / B), and the noisy gradient (2 b sqrt(p) / n in
    l2) and Hessian of each Newton step of the scale and intercept fit."""
    def observe(side, rng):
        n = side.n_samples
        est = DPLogisticSimplex(
            solver="mirror_descent", radius=RADIUS, feature_bound=FEATURE_BOUND,
            constraint=constraint, fit_intercept=fit_intercept, classes=classes,
            max_iter=min(3, n), n_vertices=3, refresh_every=1, delta=delta,
            random_state=0)
        pure = delta == 0  # Laplace noise, calibrated for l1 sensitivities
        norm = "l1" if pure else "l2"
        solver = skdpopt.solvers.mirror_descent
        with observing() as patch:
            zero_noise(patch, skdpopt.logistic_simplex, "plan_logistic_simplex",
                       noise_multiplier=0.0, refit_gradient_noise=0.0,
                       refit_hessian_noise=0.0)
            oracles = spy(patch, solver, "linear_model_gradient")
            newtons = spy(patch, solver, "noisy_newton_logistic")
            est.fit(side.X, side.y)
        plan = est.privacy_plan_
        per_coordinate = plan.score_sensitivity / plan.step_size
        stats = {}
        for p, call in enumerate(oracles.calls):
            gradient, vertex_set = call.result, call.args[3]
            m = vertex_set.n_vertices
            for t in range(min(2, len(call.args[4]))):
                for i, vertices in enumerate(
                        [np.arange(0), rng.integers(m, size=3)]):
                    stats[f"problem {p} batch {t} gradient at probe {i}"] = Statistic(
                        _dense_vertex_gradient(gradient(t, vertices), m),
                        per_coordinate, "linf")
        for p, call in enumerate(newtons.calls):
            Z, y = call.args[0], call.args[1]
            n_params = Z.shape[1]
            gradient_bound, hessian_bound = refit_sensitivities(
                n, n_params, FEATURE_BOUND, pure=pure)
            upper = np.triu_indices(n_params)
            for i, theta in enumerate(probe_vectors(rng, n_params)):
                grad, hessian = logistic_statistics(Z, y, theta)
                stats[f"problem {p} Newton gradient at probe {i}"] = Statistic(
                    grad, gradient_bound, norm)
                stats[f"problem {p} Newton Hessian at probe {i}"] = Statistic(
                    hessian[upper], hessian_bound, norm)
        return stats
    return observe


def _frank_wolfe_scores(runs, radius, constraint, declared, rng):
    stats = {}
    for p, call in enumerate(runs.calls):
        gradient, dim = call.args[0], call.args[1]
        for i, point in enumerate(probe_l1_ball(rng, dim, radius)):
            if constraint == "simplex":
                point = np.abs(point)
            grad = gradient(point)
            linear = radius * (grad if constraint == "simplex"
                               else np.concatenate([grad, -grad]))
            stats[f"problem {p} vertex scores at probe {i}"] = Statistic(
                linear, declared, "linf")
    return stats


def _simplex_frank_wolfe_observe(classes, fit_intercept, constraint):
    """Frank-Wolfe's draws score each vertex by ``<v, grad F>``: the
    gradient oracle the solver is handed, at probe points of the polytope;
    declared: the plan's score sensitivity over its inverse temperature."""
    def observe(side, rng):
        est = DPLogisticSimplex(
            solver="frank_wolfe", radius=RADIUS, feature_bound=FEATURE_BOUND,
            constraint=constraint, fit_intercept=fit_intercept, classes=classes,
            max_iter=2, random_state=0)
        with observing() as patch:
            runs = spy(patch, skdpopt.solvers.frank_wolfe, "private_frank_wolfe")
            est.fit(side.X, side.y)
        plan = est.privacy_plan_
        return _frank_wolfe_scores(runs, RADIUS, constraint,
                                   plan.score_sensitivity / plan.step_size, rng)
    return observe


def _simplex_sgd_observe(classes):
    """DP-SGD over the polytope: every step's clipped gradient sum (the
    rows clipped to the feature bound b, each example's gradient to SGD_CLIP
    b, a multiclass fit's K gradients together to sqrt(2) SGD_CLIP b), at
    probe iterates; replace-one moves it by twice the clip."""
    def observe(side, rng):
        est = DPLogisticSimplex(
            solver="sgd", radius=RADIUS, feature_bound=FEATURE_BOUND,
            classes=classes, random_state=0)
        sums = []
        with observing() as patch:
            zero_noise(patch, skdpopt.logistic_simplex, "plan_logistic_simplex",
                       noise_multiplier=0.0)
            _gradient_sums(patch, True, int(rng.integers(2**31)), sums)
            est.fit(side.X, side.y)
        bound = 2.0 * SGD_CLIP * FEATURE_BOUND
        if est.privacy_plan_.lockstep:
            bound *= math.sqrt(2.0)
        return {f"step {step} sum at probe {i}": Statistic(value, bound)
                for step, values in enumerate(sums)
                for i, value in enumerate(values)}
    return observe


SIMPLEX_CASES = [
    Case("DPLogisticSimplex(sgd): clipped gradient sums",
         _simplex_sgd_observe([0.0, 1.0]),
         features(formats=ALL_FORMATS, dtypes=FLOATS, targets=[0.0, 1.0])),
    Case("DPLogisticSimplex(sgd, 3 classes): clipped gradient sums in lockstep",
         _simplex_sgd_observe(["a", "b", "c"]),
         features(formats=ALL_FORMATS, dtypes=FLOATS, targets=["a", "b", "c"])),
    Case("DPLogisticSimplex(mirror_descent, delta=0): Laplace, l1 Newton",
         _simplex_md_observe([-1.0, 1.0], True, "l1_ball", delta=0.0),
         features(formats=("dense",), dtypes=FLOATS, targets=[-1.0, 1.0])),
    Case("DPLogisticSimplex(mirror_descent): count, vertex gradients, Newton",
         _simplex_md_observe([-1.0, 1.0], True, "l1_ball"),
         features(formats=("dense", "csr"), dtypes=FLOATS,
                  targets=[-1.0, 1.0])),
    Case("DPLogisticSimplex(mirror_descent, simplex, 3 classes, no intercept)",
         _simplex_md_observe(["a", "b", "c"], False, "simplex"),
         features(formats=("dense", "csr"), dtypes=FLOATS,
                  targets=["a", "b", "c"])),
    Case("DPLogisticSimplex(frank_wolfe): vertex scores",
         _simplex_frank_wolfe_observe([0.0, 1.0], True, "l1_ball"),
         features(formats=ALL_FORMATS, dtypes=FLOATS, targets=[0.0, 1.0])),
    Case("DPLogisticSimplex(frank_wolfe, simplex, 3 classes): vertex scores",
         _simplex_frank_wolfe_observe(["a", "b", "c"], True, "simplex"),
         features(formats=("dense", "csr"), dtypes=FLOATS,
                  targets=["a", "b", "c"])),
]


# -- DPMinimaxClassifier ------------------------------------------------------

GROUPS = ["g0", "g1", "g2"]


def _minimax_gda_observe(fit_intercept):
    """GDA releases the noisy group counts (sqrt 2 in l2: a record changing
    group moves two counts), and at every step the weighted clipped
    gradient sum (2 C in l2, whatever the weights in [0, 1]) and the
    groups' centred clipped loss sums (l_max in l2).  Only the
    coefficients' part of each row's gradient is clipped (to C); the
    intercept's part is at most b, so one replaced row moves the gradient
    sum by at most 2 sqrt(C^2 + b^2)."""
    def observe(side, rng):
        est = DPMinimaxClassifier(
            solver="gda", classes=[0.0, 1.0], groups=GROUPS, max_iter=2,
            radius=RADIUS, feature_bound=FEATURE_BOUND, clip_norm=0.8,
            loss_bound=1.5, min_group_size=1, fit_intercept=fit_intercept,
            random_state=0)
        sums, bounds = [], []
        original = skdpopt.solvers.gda.step_sums

        def evaluate(call):
            if sums:
                return
            X, target, codes, w, weight, norms = call.args
            b = call.kwargs["intercept_value"] or 0.0
            bounds.append(2.0 * np.hypot(est.clip_norm, b))
            for i, point in enumerate(probe_vectors(rng, len(w))):
                weights = rng.uniform(0, 1, len(weight)) if i else np.ones(len(weight))
                sums.append(original(X, target, codes, point, weights, norms,
                                     **call.kwargs))

        with observing() as patch:
            zero_noise(patch, skdpopt.minimax, "plan_minimax",
                       noise_multiplier=0.0, loss_noise_multiplier=0.0,
                       count_noise_scale=0.0)
            spy(patch, skdpopt.solvers.gda, "step_sums", then=evaluate)
            est.fit(side.X, side.y, sensitive_features=side.groups)
        plan = est.privacy_plan_
        stats = {"group counts": Statistic(
            est.group_proportions_ * side.n_samples, np.sqrt(2.0))}
        for i, (gradient, losses) in enumerate(sums):
            stats[f"gradient sum at probe {i}"] = Statistic(gradient, bounds[0])
            stats[f"loss sums at probe {i}"] = Statistic(losses, plan.loss_bound)
        return stats
    return observe


def _minimax_row_norm_counts_observe(side, rng):
    """``clip_norm="auto"`` releases an upper quantile of the rows' norms
    (after the public feature clip) by draws over the counts below each
    candidate of the public grid: one record moves every count by at most
    1.  The group counts' noise is switched off so that small groups pass
    the size floor."""
    est = DPMinimaxClassifier(
        solver="gda", clip_norm="auto", classes=[0.0, 1.0], groups=GROUPS,
        min_group_size=1, max_iter=1, random_state=0)
    with observing() as patch:
        zero_noise(patch, skdpopt.minimax, "plan_minimax", count_noise_scale=0.0)
        counts = spy(patch, skdpopt._bounds, "counts_below")
        est.fit(side.X, side.y, sensitive_features=side.groups)
    return {f"counts of statistic {i}": Statistic(call.result, 1.0, "linf")
            for i, call in enumerate(counts.calls)}


def _minimax_vertex_counts_observe(side, rng):
    """Vertex sampling's noisy group counts: each count moves by at most 1,
    two of them when a record changes group (l1 sensitivity 2, recorded as
    pure ``count_epsilon`` with Laplace scale ``2 / count_epsilon``)."""
    est = DPMinimaxClassifier(
        solver="vertex_sampling", classes=[0.0, 1.0], groups=GROUPS, max_iter=2,
        min_group_size=1, random_state=0)
    with observing() as patch:
        plans = zero_noise(patch, skdpopt.minimax, "plan_minimax",
                           count_noise_scale=0.0)
        est.fit(side.X, side.y, sensitive_features=side.groups)
    plan = plans[0]  # as planned: Laplace scale s on each count, pure eps_c
    return {"group counts": Statistic(
        est.group_proportions_ * side.n_samples,
        plan.count_epsilon * plan.count_noise_scale, "l1")}


def _minimax_vertex_observe(fit_intercept):
    """Vertex sampling's draws: on each batch, the model's gradient over the
    l1 ball's vertices moves by at most ``2 R b max_g(ybar_g / p_g) / B``
    per vertex, and the adversary's over the groups within a range of
    ``(l_max - l_min) / (B p_min)`` (B the smallest batch, p the public
    proportions, ybar the adversary's drawn groups)."""
    priors = {"g0": 0.5, "g1": 0.3, "g2": 0.2}

    def observe(side, rng):
        est = DPMinimaxClassifier(
            solver="vertex_sampling", classes=[0.0, 1.0], groups=GROUPS,
            group_priors=priors, max_iter=min(2, side.n_samples), n_vertices=3,
            radius=RADIUS, feature_bound=FEATURE_BOUND,
            fit_intercept=fit_intercept, min_group_size=1, random_state=0)
        with observing() as patch:
            oracles = spy(patch, skdpopt.solvers.saddle_point,
                          "group_linear_model_oracle")
            est.fit(side.X, side.y, sensitive_features=side.groups)
        call = oracles.first
        oracle, proportions = call.result, call.args[3]
        vertex_set, batches = call.args[5], call.args[6]
        smallest = min(len(b) for b in batches)
        reach = RADIUS * FEATURE_BOUND
        loss_range = np.logaddexp(0.0, reach) - np.logaddexp(0.0, -reach)
        m, G = vertex_set.n_vertices, len(proportions)
        stats = {}
        for t in range(min(2, len(batches))):
            for i, (x_drawn, y_drawn) in enumerate(
                    [(np.arange(m), np.arange(G)),
                     (rng.integers(m, size=3), rng.integers(G, size=3))]):
                vertices, x_gradient, y_gradient = oracle(t, x_drawn, y_drawn)
                y_bar = np.bincount(y_drawn, minlength=G) / len(y_drawn)
                dense = np.zeros(m)
                dense[vertices] = x_gradient
                stats[f"batch {t} model gradient at probe {i}"] = Statistic(
                    dense, 2.0 * reach * np.max(y_bar / proportions) / smallest,
                    "linf")
                stats[f"batch {t} adversary gradient at probe {i}"] = Statistic(
                    y_gradient, loss_range / (smallest * proportions.min()),
                    "range")
        return stats
    return observe


def _minimax_checks_observe(**params):
    """What DPMinimaxClassifier releases after its solver
    (docs/privacy/dpminimax.md#fit-check): the two class counts (one
    record moves both by 1: l2 sqrt(2), l1 2), each calibration sum
    ``sum_i p(s_i + c)`` (terms in [0, 1]: 1) at probe coefficients and
    intercepts, and the groups' sums of clipped, class-weighted gains in
    log-likelihood over the prior (one record moves one sum by 2 bound, or
    two by bound each: 2 bound in l1 and l2) at probe models, priors and
    class weights.  The models, priors and weights are earlier releases:
    the probes stand for them, alike on both datasets."""
    def observe(side, rng):
        est = DPMinimaxClassifier(
            classes=[0.0, 1.0], groups=GROUPS, max_iter=2, min_group_size=1,
            group_priors={"g0": 0.5, "g1": 0.3, "g2": 0.2}, radius=RADIUS,
            feature_bound=FEATURE_BOUND, random_state=0, **params)
        with observing() as patch:
            totals = spy(patch, skdpopt.solvers.classes, "class_totals")
            calibrations = spy(patch, skdpopt._classifiers, "calibrate_intercept")
            checks = spy(patch, skdpopt._classifiers, "release_group_fit_check")
            est.fit(side.X, side.y, sensitive_features=side.groups)
        plan = est.privacy_plan_.checks
        bound, norm = _declared(plan.class_totals)
        stats = {"class totals": Statistic(totals.first.result, bound, norm)}
        for call in calibrations.calls:
            X, coef = call.args[:2]
            for i, probe in enumerate(probe_vectors(rng, len(coef))):
                scores = skdpopt._data.map_rows(partial(_quiet_dots, coef=probe), X)
                stats[f"calibration sum at probe {i}"] = Statistic(
                    probability_sum(scores, float(rng.normal() * 3.0), LogLoss()),
                    1.0)
        call = checks.first
        targets, codes, n_groups = call.args[1:4]
        bound, norm = _declared(plan.fit_check)
        for i, probe in enumerate(probe_vectors(rng, est.coef_.size)):
            est.coef_ = probe[None, :]
            est.intercept_ = rng.normal(size=1) * 3.0
            weights = np.where(targets[0] > 0, *rng.uniform(0, 1, 2))
            exact = release_group_fit_check(
                quiet_log_proba(est, side.X), targets, codes, n_groups,
                np.log(rng.dirichlet(np.ones(2))), weights,
                plan_fit_check(0.0, bound=plan.fit_check.bound), rng)
            stats[f"group fit check at probe {i}"] = Statistic(exact, bound, norm)
        return stats
    return observe


_GROUP_PAIRS = features(formats=("dense", "csr"), dtypes=FLOATS,
                        targets=[0.0, 1.0], groups=GROUPS, min_rows=10)
MINIMAX_CASES = [
    Case("DPMinimaxClassifier(gda): auto clip norm (counts of row norms)",
         _minimax_row_norm_counts_observe, _GROUP_PAIRS),
    Case("DPMinimaxClassifier(gda): counts, gradient and loss sums",
         _minimax_gda_observe(True), _GROUP_PAIRS),
    Case("DPMinimaxClassifier(gda, no intercept): counts, gradient and loss sums",
         _minimax_gda_observe(False), _GROUP_PAIRS),
    Case("DPMinimaxClassifier(vertex_sampling): noisy group counts",
         _minimax_vertex_counts_observe, _GROUP_PAIRS),
    Case("DPMinimaxClassifier(vertex_sampling): players' batch gradients",
         _minimax_vertex_observe(True), _GROUP_PAIRS),
    Case("DPMinimaxClassifier(gda): class totals, group fit check",
         _minimax_checks_observe(solver="gda", clip_norm=0.8), _GROUP_PAIRS),
    Case("DPMinimaxClassifier(vertex_sampling, delta=0): Laplace totals, "
         "calibration, group fit check",
         _minimax_checks_observe(solver="vertex_sampling", delta=0.0,
                                 n_vertices=2), _GROUP_PAIRS),
]


# -- DPSyntheticData ----------------------------------------------------------

def _synthetic_bounds_observe(side, rng):
    """Numeric columns without declared bounds get the library's private
    bounds (as the scalers' do): three draws per column scored from the
    counts of values below each candidate, which move by at most 1."""
    est = DPSyntheticData(domain=side.meta["domain"], bounds=side.meta["bounds"],
                          max_iter=1, workload=1, random_state=0)
    with observing() as patch:
        counts = spy(patch, skdpopt._bounds, "counts_below")
        est.fit(side.X)
    return {f"counts {i}": Statistic(call.result, 1.0, "linf")
            for i, call in enumerate(counts.calls)}


def _synthetic_measurements_observe(side, rng, workload=2):
    """Every round selects a query by its error (sensitivity: the
    workload's l1 sensitivity) and measures it (its l2 sensitivity): the
    answers the solver reads, from the codes and queries it is handed."""
    est = DPSyntheticData(domain=side.meta["domain"], bounds=side.meta["bounds"],
                          max_iter=1, workload=workload, random_state=0)
    with observing() as patch:
        fits = spy(patch, skdpopt.synthetic, "fit_synthetic")
        est.fit(side.X)
    problem = fits.first.args[0]
    codes, queries = problem.codes, problem.workload
    n = codes.shape[0]
    stats = {}
    for j in range(len(queries)):
        answer = queries.answer_records(codes, j)
        stats[f"query {j} answer (measurement)"] = Statistic(
            answer, queries.l2_sensitivity_times_n / n)
        stats[f"query {j} answer (selection error)"] = Statistic(
            answer, queries.l1_sensitivity_times_n / n, "l1")
    return stats


# An explicit query matrix over the 9 cells of two columns of cardinality 3
# (public): each answer moves by at most 2 max|q| / n.
_QUERIES = np.random.default_rng(0).uniform(-0.8, 0.8, size=(5, 9))


def _synthetic_matrix_observe(side, rng):
    return _synthetic_measurements_observe(side, rng, workload=_QUERIES)


SYNTHETIC_CASES = [
    Case("DPSyntheticData: private bounds of numeric columns",
         _synthetic_bounds_observe,
         tables(kinds=("numeric", "categories", "numeric"))),
    Case("DPSyntheticData: marginal measurements and selections",
         _synthetic_measurements_observe,
         tables(kinds=("categories", "cardinality", "bounded"))),
    Case("DPSyntheticData: an explicit query matrix",
         _synthetic_matrix_observe,
         tables(kinds=("cardinality",), max_columns=2)),
]


# -- DPStandardScaler and DPMinMaxScaler --------------------------------------

PUBLIC_BOUNDS = (-1.0, 2.0)


def _scaler_bounds_observe(make):
    """Private bounds: three draws per column scored from the counts of
    values below each candidate, which move by at most 1."""
    def observe(side, rng):
        with observing() as patch:
            counts = spy(patch, skdpopt._bounds, "counts_below")
            make().fit(side.X)
        return {f"counts {i}": Statistic(call.result, 1.0, "linf")
                for i, call in enumerate(counts.calls)}
    return observe


def _moment_sums(patch):
    """Spy on the clipped sums the scaler's release adds its noise to."""
    return spy(patch, skdpopt._bounds, "_unit_sums")


def _moments_statistics(sums, d, pure=False):
    """Gaussian noise (delta > 0) is calibrated for the l2 sensitivities
    2 sqrt(d) and sqrt(d), Laplace noise (delta = 0) for the l1 ones, 2 d
    and d."""
    S1, S2 = sums.first.result
    if pure:
        return {"sum S1": Statistic(S1, 2.0 * d, "l1"),
                "sum of squares S2": Statistic(S2, float(d), "l1")}
    return {"sum S1": Statistic(S1, 2.0 * np.sqrt(d)),
            "sum of squares S2": Statistic(S2, np.sqrt(d))}


def _scaler_moments_observe(delta):
    """Noisy clipped moments: ``S1 = sum u_i`` and ``S2 = sum (u_i^2 -
    1/2)``, u the values clipped to the public bounds and mapped to [-1,
    1]: the sums ``private_moments`` adds its noise to (its released means
    are clipped to [-1, 1] afterwards, which would hide a missing clip)."""
    def observe(side, rng):
        est = DPStandardScaler(bounds=PUBLIC_BOUNDS, delta=delta, random_state=0)
        with observing() as patch:
            sums = _moment_sums(patch)
            est.fit(side.X)
        return _moments_statistics(sums, side.X.shape[1], pure=delta == 0)
    return observe


def _location_observe(side, rng):
    """The located bounds' location draw (``refine_location``): each of
    its cells of a released median cell ``[a, b)`` (here a public probe
    cell per column) is scored by how far it is from holding the median,
    ``max(B_k - n/2, n/2 - B_(k+1), 0)``: one record moves each count by
    at most 1, so each distance moves by at most 1."""
    d = side.X.shape[1]
    low = rng.uniform(-2.0, 1.0, d)
    high = low + rng.uniform(0.1, 3.0, d)
    X = side.X.toarray() if hasattr(side.X, "toarray") else np.asarray(side.X)
    with observing() as patch:
        distances = spy(patch, skdpopt._bounds, "_median_cell_distance")
        skdpopt._bounds.refine_location(X, low, high, 64, np.inf, rng)
    return {"location cell distances": Statistic(distances.first.result, 1.0,
                                                 "linf")}


SCALER_CASES = [
    Case("DPStandardScaler: location draw (median-cell distances)",
         _location_observe, features(dtypes=FLOATS)),
    Case("DPStandardScaler: private bounds (counts)",
         _scaler_bounds_observe(lambda: DPStandardScaler(random_state=0)),
         features(dtypes=FLOATS)),
    Case("DPMinMaxScaler: private bounds (counts)",
         _scaler_bounds_observe(lambda: DPMinMaxScaler(random_state=0)),
         features(dtypes=FLOATS)),
    Case("DPStandardScaler: clipped moments",
         _scaler_moments_observe(1e-5), features(dtypes=FLOATS)),
    Case("DPStandardScaler(delta=0): clipped moments, Laplace (l1)",
         _scaler_moments_observe(0.0), features(dtypes=FLOATS)),
]


# -- the private pipeline -----------------------------------------------------

def _public_preprocessing():
    from sklearn.compose import ColumnTransformer
    from sklearn.impute import SimpleImputer
    from sklearn.preprocessing import FunctionTransformer, OneHotEncoder

    numeric = make_private_pipeline(
        SimpleImputer(strategy="constant", fill_value=0.0,
                      keep_empty_features=True),
        FunctionTransformer(np.tanh), epsilon=None)
    return ColumnTransformer(
        [("category", OneHotEncoder(categories=[list(CATEGORY_SET)]), ["c"]),
         ("numeric", numeric, make_numeric_selector())],
        sparse_threshold=0)


CATEGORY_SET = ("low", "mid", "high")


def make_numeric_selector():
    from sklearn.compose import make_column_selector

    return make_column_selector(pattern="^x")


def _pipeline_observe(side, rng):
    """Inside a private pipeline each private step releases what it does
    alone, on the rows the public steps give it: one record changes one
    row there too, and the steps' public state cannot move.  Observed: the
    DP-SGD step sums after a declared-categories encoder, a constant
    imputer, a row-wise function and a min-max scaler with public bounds
    (which releases nothing)."""
    pipe = make_private_pipeline(
        _public_preprocessing(), DPMinMaxScaler(bounds=(-1.0, 1.0)),
        DPSGDRegressor(target_scale=1.0, sampling="full", clip_norm=CLIP,
                       max_iter=1, average=False, alpha=0.0, eta0=1.0,
                       random_state=0),
        epsilon=1.0, delta=1e-5)
    sums = []
    with observing() as patch:
        zero_noise(patch, skdpopt.sgd, "plan_dpsgd", noise_multiplier=0.0)
        _gradient_sums(patch, True, int(rng.integers(2**31)), sums)
        pipe.fit(side.X, side.y)
    stats = {}
    for step, values in enumerate(sums):
        for i, value in enumerate(values):
            stats[f"step {step} sum at probe {i}"] = Statistic(value, 2.0 * CLIP)
    return stats


def _pipeline_scaler_observe(side, rng):
    """The pipeline's first private step after the public ones: the
    standard scaler's clipped moment sums."""
    pipe = make_private_pipeline(
        _public_preprocessing(), DPStandardScaler(bounds=(-1.0, 1.0)),
        DPLasso(max_iter=1), epsilon=1.0, delta=1e-5)
    with observing() as patch:
        sums = _moment_sums(patch)
        pipe.fit(side.X, side.y)
    return _moments_statistics(sums, sums.first.args[0].shape[1])


PIPELINE_CASES = [
    Case("make_private_pipeline(public steps, DPMinMaxScaler, DPSGDRegressor)",
         _pipeline_observe, frames(dtypes=FLOATS)),
    Case("make_private_pipeline(public steps, DPStandardScaler, DPLasso)",
         _pipeline_scaler_observe, frames(dtypes=FLOATS)),
]


CASES = (SGD_CASES + AUTO_BOUND_CASES + TARGET_CASES + CLASS_CASES + LASSO_CASES
         + SIMPLEX_CASES + MINIMAX_CASES + SYNTHETIC_CASES + SCALER_CASES
         + PIPELINE_CASES)
