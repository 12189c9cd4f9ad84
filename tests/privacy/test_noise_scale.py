"""The noise every solver and transformer adds is the noise its plan accounts for.

Two checks per release:

* **The scale reaching the sampler.**  Every draw goes through
  :func:`skdpopt.mechanisms.draw_noise`; each public fit (``public_fits.FITS``)
  runs with that seam observed, and each draw's distribution, scale and
  number must be what the plan's *event* implies: the event's noise
  multiplier (or score sensitivity, or epsilon) times the release's public
  sensitivity, derived here from the algorithm (docs/privacy/), not read
  from the solver.  A plan whose noise disagrees with its event, or a
  solver that draws less noise than its plan, fails.
* **The noise in the output.**  Each solver's noise, recovered from what
  it returns, over enough draws that half or double the planned noise
  fails with probability below 1e-6 (the margins are derived beside the
  constants below and checked by :func:`test_margins`).
"""

import math
from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np
import pytest
from public_fits import DATA, FITS
from scipy import stats
from scipy.special import softmax

from skdpopt import mechanisms
from skdpopt._base import DPEstimatorMixin
from skdpopt._bounds import _draw, anchored_prior, private_moments
from skdpopt._data import counts_below, least_squares_problem
from skdpopt.accounting import (
    EpsilonDeltaEvent,
    ExponentialMechanism,
    GaussianMechanism,
    LaplaceMechanism,
    PureDPMechanism,
    SubsampledGaussianMechanism,
    leaves,
)
from skdpopt.losses import SquaredError
from skdpopt.pipeline import _fitted_leaves
from skdpopt.plans.bounds import DEFAULT_GRID, PRIOR_WEIGHT
from skdpopt.plans.checks import (
    FIT_CHECK_BOUND,
    REGRESSION_CHECK_BOUND,
    REGRESSION_MEAN_BOUND,
)
from skdpopt.plans.logistic_simplex import SGD_CLIP
from skdpopt.plans.sgd import DPSGDPlan
from skdpopt.solvers import query_release
from skdpopt.solvers.frank_wolfe import private_frank_wolfe
from skdpopt.solvers.gda import noisy_gda
from skdpopt.solvers.greedy_cd import (
    INTERCEPT,
    RESIDUAL_SCALE_MULTIPLE,
    _adapted_residual_bound,
    private_greedy_cd,
)
from skdpopt.solvers.groups import release_group_sizes
from skdpopt.solvers.lockstep_sgd import LockstepProblem, lockstep_sgd
from skdpopt.solvers.mirror_descent import (
    vertex_sampling_mirror_descent,
)
from skdpopt.solvers.noisy_newton import noisy_newton_logistic
from skdpopt.solvers.noisy_sgd import noisy_sgd
from skdpopt.solvers.problems import GroupProblem, LinearProblem, MarginalProblem
from skdpopt.solvers.query_release import (
    MarginalWorkload,
    fit_synthetic,
    release_workload,
)
from skdpopt.solvers.saddle_point import saddle_point_mirror_descent

pytestmark = pytest.mark.filterwarnings(
    "ignore::skdpopt.exceptions.UtilityWarning",
    "ignore:delta=:UserWarning",
)

RTOL = 1e-9  # scales are recomputed along another path: rounding only


# -- the seam -----------------------------------------------------------------

@dataclass(frozen=True)
class Draw:
    """One call of ``draw_noise``."""

    distribution: str
    scale: float
    shape: tuple

    @property
    def count(self):
        """Releases it serves: one per row of Gumbel noise (an exponential
        mechanism's draw), one per value otherwise."""
        shape = self.shape
        if self.distribution == "gumbel":
            return int(np.prod(shape[:-1])) if len(shape) > 1 else 1
        return int(np.prod(shape))


@pytest.fixture
def sampler(monkeypatch):
    """The draws of every fit, each fit's after a ``("begin", estimator)``
    marker (``_begin_release``: the ledger's record, before any draw)."""
    seen = []
    draw = mechanisms.draw_noise
    begin = DPEstimatorMixin._begin_release

    def observed_draw(rng, distribution, scale, size):
        values = draw(rng, distribution, scale, size)
        seen.append(Draw(distribution, float(scale), np.shape(values)))
        return values

    def observed_begin(self, plan, *args, **kwargs):
        seen.append(("begin", self))
        return begin(self, plan, *args, **kwargs)

    monkeypatch.setattr(mechanisms, "draw_noise", observed_draw)
    monkeypatch.setattr(DPEstimatorMixin, "_begin_release", observed_begin)
    return seen


def _segments(seen):
    """``{id(estimator): [draws]}`` in the order the fits began."""
    segments, current = {}, None
    for item in seen:
        if isinstance(item, tuple):
            current = segments.setdefault(id(item[1]), [])
        else:
            assert current is not None, f"a draw before any plan: {item}"
            current.append(item)
    return segments


def _tally(draws):
    """Sorted ``(distribution, scale, count)``, equal scales merged."""
    merged = []
    for distribution, scale, count in draws:
        for entry in merged:
            if entry[0] == distribution and math.isclose(entry[1], scale,
                                                         rel_tol=RTOL):
                entry[2] += count
                break
        else:
            merged.append([distribution, scale, count])
    return sorted(tuple(entry) for entry in merged)


def assert_draws(observed, expected):
    got = _tally((d.distribution, d.scale, d.count) for d in observed)
    want = _tally(expected)
    assert len(got) == len(want), f"drawn {got}, planned {want}"
    for g, w in zip(got, want, strict=True):
        assert g[0] == w[0] and g[2] == w[2], f"drawn {got}, planned {want}"
        assert g[1] == pytest.approx(w[1], rel=RTOL), f"drawn {got}, planned {want}"


# -- what each plan's event implies ------------------------------------------
#
# An exponential mechanism over scores of sensitivity s, drawn as the argmax
# of scores plus Gumbel noise of scale g, moves each log-weight by s / g: the
# event's ExponentialMechanism(beta) needs g = s / beta.  The private bounds'
# scores are rank distances (sensitivity 1).  A Gaussian (Laplace) release of
# sensitivity s and noise multiplier z (epsilon0) draws at s z (s / epsilon0).

def _grid_draws(leaf, count):
    assert isinstance(leaf, ExponentialMechanism)
    return ("gumbel", 1.0 / leaf.score_sensitivity, count)


def _leaf_scale(leaf):
    """("normal", z) or ("laplace", 1 / epsilon0): the noise over the
    sensitivity of a Gaussian or Laplace leaf."""
    if isinstance(leaf, GaussianMechanism):
        return "normal", leaf.noise_multiplier
    assert isinstance(leaf, LaplaceMechanism)
    return "laplace", 1.0 / leaf.epsilon0


def _class_release_draws(plan, leaf, count, n_classes):
    """The draws of one of a classifier's class releases (None if ``leaf``
    is none of them), from the algorithm's sensitivities: the clip check
    sums per-row shares in [0, 1] (1); the class totals move two totals
    by the weight bound W (1 without sample weights: l2 sqrt(2), l1 2);
    the fit check sums gains clipped to +-FIT_CHECK_BOUND
    (2 FIT_CHECK_BOUND; a regressor's +-REGRESSION_CHECK_BOUND)."""
    kind, z = _leaf_scale(leaf)
    if plan.clip_check is not None and leaf == plan.clip_check.event:
        assert count == 1
        return [(kind, z * 1.0, 1)]
    if plan.class_totals is not None and leaf == plan.class_totals.event:
        assert count == 1
        per_total = math.sqrt(2.0) if kind == "normal" else 2.0
        return [(kind, z * per_total, n_classes)]
    if plan.fit_check is not None and not n_classes:
        if [(leaf, count)] == leaves(plan.fit_check.event):
            return _regression_check_draws(leaf)
    if plan.fit_check is not None and leaf == plan.fit_check.event:
        assert count == 1
        return [(kind, z * 2.0 * FIT_CHECK_BOUND, 1)]
    return None


def _regression_check_draws(leaf):
    """The regressors' fit check: three releases of one noise over their
    sensitivity, in order: the centred targets' sum clipped to
    +-REGRESSION_MEAN_BOUND (2 REGRESSION_MEAN_BOUND), then two sums of
    squared-error gains clipped to +-REGRESSION_CHECK_BOUND (2
    REGRESSION_CHECK_BOUND each)."""
    kind, z = _leaf_scale(leaf)
    return [(kind, z * 2.0 * REGRESSION_MEAN_BOUND, 1),
            (kind, z * 2.0 * REGRESSION_CHECK_BOUND, 2)]


# The widths a target's clipped sum can be clipped to (docs/privacy/targets.md):
# high - low for two candidates of the grid, or twice a positive candidate
# (the window); both are released, so the check is that the observed scale is
# the leaf's noise multiplier times one of them.
_PAIRS = np.triu_indices(DEFAULT_GRID.size, 1)
_WIDTHS = np.unique(np.concatenate([
    DEFAULT_GRID[_PAIRS[1]] - DEFAULT_GRID[_PAIRS[0]],
    2.0 * DEFAULT_GRID[DEFAULT_GRID > 0]]))


def _sum_draw(leaf, draw, sensitivity=None):
    """The expected draw of a Gaussian (Laplace) noisy sum of the given
    sensitivity, or, with None, of a released grid width."""
    per_width = (leaf.noise_multiplier if isinstance(leaf, GaussianMechanism)
                 else 1.0 / leaf.epsilon0)
    if sensitivity is None:
        width = draw.scale / per_width
        k = np.searchsorted(_WIDTHS, width)
        near = _WIDTHS[max(k - 1, 0):k + 1]
        assert np.isclose(near, width, rtol=RTOL, atol=0).any(), (
            f"noise {draw.scale} is not {per_width} times a grid width")
        sensitivity = width
    distribution = "normal" if isinstance(leaf, GaussianMechanism) else "laplace"
    return (distribution, per_width * sensitivity, 1)


def _expected_preliminary(plan, found, draws):
    """The releases before the steps, popped from ``found``: the target's
    location and scale (grid draws and two clipped sums), the "auto"
    bounds' grid draws and the clip check's count (sensitivity 1).
    Returns the expected draws and how many observed draws they are."""
    expected, used = [], 0
    parts = [(getattr(plan, "target_draws", None), None),
             (getattr(plan, "bounds_draws", None), None),
             (getattr(plan, "clip_check", None), 1.0)]
    for part, sensitivity in parts:
        if part is None:
            continue
        for _ in leaves(part.event):
            leaf, count = found.pop(0)
            if isinstance(leaf, ExponentialMechanism):
                expected.append(_grid_draws(leaf, count))
                used += count
            else:
                expected.append(_sum_draw(leaf, draws[used], sensitivity))
                used += 1
    return expected, used


def _expected_sgd(est, draws, n, clip_norm=None):
    plan = est.privacy_plan_
    clip_norm = est.clip_norm_ if clip_norm is None else clip_norm
    dim = est.n_features_in_ + int(est.fit_intercept)
    n_classes = len(getattr(est, "classes_", ()))
    found = leaves(plan.event)
    expected, _ = _expected_preliminary(plan, found, draws)
    for leaf, count in found:
        if isinstance(leaf, SubsampledGaussianMechanism) and plan.lockstep:
            # The K problems' sums at once: each example's K gradients
            # clipped together to sqrt(2) C (Frobenius norm), K dim values.
            expected.append(("normal", leaf.noise_multiplier * math.sqrt(2.0)
                             * clip_norm, count * dim * plan.n_problems))
        elif isinstance(leaf, SubsampledGaussianMechanism):
            # The clipped sum (each example's gradient of norm <= C).
            expected.append(("normal", leaf.noise_multiplier * clip_norm,
                             count * dim))
        elif isinstance(leaf, ExponentialMechanism):
            expected.append(_grid_draws(leaf, count))
        else:
            found = _class_release_draws(plan, leaf, count, n_classes)
            if found is None:
                # The intercept's calibration: sums of rows' weighted
                # probabilities, each term in [0, 1] (sensitivity 1).
                assert count == plan.calibration_steps * plan.n_problems
                found = [("normal", leaf.noise_multiplier * 1.0, count)]
            expected += found
    return expected


def _expected_lasso(est, draws, n):
    plan = est.privacy_plan_
    b = est.feature_bound_
    found = leaves(plan.event)
    expected, skip = _expected_preliminary(plan, found, draws)
    check = []
    if plan.fit_check is not None:
        # Last: the fit check's three releases, drawn only where the
        # target was centred.
        leaf, count = found.pop()
        assert [(leaf, count)] == leaves(plan.fit_check.event)
        if plan.target_draws.centre:
            check = _regression_check_draws(leaf)
    if est.solver == "frank_wolfe":
        (leaf, count), = found
        residual = (est.target_bound_ if est.residual_bound == "auto"
                    else est.residual_bound)
        residual = min(residual, b * est.radius + est.target_bound_)
        # <v, grad> moves by R * 2 b C / n for every vertex v.
        sensitivity = est.radius * 2.0 * b * residual / n
        return expected + [("gumbel", sensitivity / leaf.score_sensitivity,
                             count)] + check
    steps = [leaf for leaf, count in found]
    assert all(count == plan.n_steps for _, count in found)
    residual_leaf = steps.pop(0) if plan.residual_noise_multiplier is not None else None
    chooser, release, *curvature = steps
    # Walk the steps: the residual bound C_t in force at step t is public
    # or released (the adaptive one); the selection's scale says which, and
    # everything else in the step must agree with it.
    walk = iter(draws[skip:])
    bound = est.target_bound_ if est.residual_bound == "auto" else est.residual_bound
    for step in range(plan.n_steps):
        if residual_leaf is not None:
            # Mean of clipped squared residuals: terms in [0, C^2].
            expected.append(("normal",
                             residual_leaf.noise_multiplier * bound**2 / n, 1))
            next(walk)
        selection = next(walk)
        if residual_leaf is not None:
            # C_t from the selection's scale (checked against the gradient's
            # below), within the public bound.
            factor = (selection.scale * chooser.score_sensitivity
                      if isinstance(chooser, ExponentialMechanism)
                      else selection.scale * chooser.epsilon0 / 2.0)
            bound = factor * n / 2.0
            assert bound <= est.target_bound_ * (1 + RTOL)
        score_sensitivity = 2.0 * bound / n  # scores are gradients over b
        if isinstance(chooser, ExponentialMechanism):
            expected.append(("gumbel", score_sensitivity / chooser.score_sensitivity,
                             1))
        else:
            assert isinstance(chooser, PureDPMechanism)
            # Report-noisy-max: Laplace of scale 2 s / epsilon0 on each score.
            expected.append(("laplace", 2.0 * score_sensitivity / chooser.epsilon0,
                             selection.count))
        next(walk)  # the gradient
        # The chosen column's bound (the intercept's constant: the largest).
        chosen = est.selected_[step]
        b_j = float(np.max(b)) if chosen == INTERCEPT else float(
            np.broadcast_to(b, (est.n_features_in_,))[chosen])
        if isinstance(release, GaussianMechanism):
            expected.append(("normal",
                             release.noise_multiplier * b_j * score_sensitivity, 1))
        else:
            expected.append(("laplace", b_j * score_sensitivity / release.epsilon0, 1))
        if curvature and chosen != INTERCEPT:
            # (1/n) sum x_ij^2 with x_ij^2 in [0, b_j^2].
            expected.append(("normal",
                             curvature[0].noise_multiplier * b_j * b_j / n, 1))
            next(walk)
    return expected + check


def _expected_simplex(est, draws, n):
    plan = est.privacy_plan_
    b, R = est.feature_bound_, est.radius
    n_classes = len(est.classes_)
    if est.solver_ == "sgd":
        # DP-SGD over the polytope: rows clipped to b, gradients to SGD_CLIP b.
        return _expected_sgd(est, draws, n, clip_norm=SGD_CLIP * b)
    found = leaves(plan.event)
    if est.solver_ == "frank_wolfe":
        expected = []
        for leaf, count in found:
            if isinstance(leaf, ExponentialMechanism):
                # <v, grad> moves by R * 2 b / n (log-loss slopes in [-1, 1]).
                expected.append(("gumbel", 2.0 * R * b / n / leaf.score_sensitivity,
                                 count))
            else:
                expected += _class_release_draws(plan, leaf, count, n_classes)
        return expected
    draws_leaf = next(leaf for leaf, _ in found
                      if isinstance(leaf, ExponentialMechanism))
    statistic = next(leaf for leaf, _ in found
                     if not isinstance(leaf, ExponentialMechanism))
    n_draws = sum(c for leaf, c in found if leaf == draws_leaf)
    n_problems = plan.n_problems
    # The step size reaching the multiplicative-weights update: one batch
    # (of at least n // T rows) moves every log weight by 2 tau R b / B.
    batch = n // plan.n_steps
    assert plan.step_size == pytest.approx(
        draws_leaf.score_sensitivity * batch / (2.0 * R * b), rel=RTOL)
    # Uniform draws: the event's vertex draws, and K per problem at the
    # data-free start.
    expected = [("uniform", 1.0, n_draws + plan.n_vertices * n_problems)]
    k = 1 + int(est.fit_intercept)
    kind, z = _leaf_scale(statistic)
    gaussian = kind == "normal"
    # Every other statistic has the same noise over its sensitivity: the
    # clip check, the class totals and the fit check (one each).
    for release in (plan.clip_check, plan.class_totals, plan.fit_check):
        assert release is not None and release.event == statistic
    per_total = math.sqrt(2.0) if gaussian else 2.0
    expected += [(kind, z * 1.0, 1), (kind, z * per_total, n_classes),
                 (kind, z * 2.0 * FIT_CHECK_BOUND, 1)]
    # Newton's features z = b (score, 1) lie in [-b, b]: a record moves the
    # mean gradient's entries by 2 b / n each, the Hessian's w z_j z_k
    # (w in [0, 1/4]) by b^2 / (4 n) on the diagonal, b^2 / (2 n) off it.
    rows, cols = np.triu_indices(k)
    entries = np.where(rows == cols, 0.25, 0.5) * b * b / n
    if gaussian:
        gradient, hessian = 2.0 * b * math.sqrt(k) / n, np.sqrt(np.sum(entries**2))
    else:
        gradient, hessian = 2.0 * b * k / n, np.sum(entries)
    steps = plan.refit_steps * n_problems
    expected += [(kind, z * gradient, k * steps),
                 (kind, z * hessian, len(rows) * steps)]
    return expected


def _minimax_check_draws(plan, found, n_groups):
    """The releases after DPMinimaxClassifier's solver, popped from the end
    of ``found``: the class totals (one record moves both counts by 1: l2
    sqrt(2), l1 2), the calibration sums (terms in [0, 1]: 1) and the
    groups' sums of gains clipped to +-FIT_CHECK_BOUND (a record moves
    them by 2 FIT_CHECK_BOUND in l1 and l2: that noise on each)."""
    checks = plan.checks
    tail = leaves(checks.event)
    assert found[-len(tail):] == tail
    del found[-len(tail):]
    kind, z = _leaf_scale(checks.class_totals.event)
    expected = [(kind, z * (math.sqrt(2.0) if kind == "normal" else 2.0), 2)]
    if checks.calibration_steps:
        leaf, count = tail[1]
        assert count == checks.calibration_steps
        kind, z = _leaf_scale(leaf)
        expected.append((kind, z * 1.0, count))
    kind, z = _leaf_scale(checks.fit_check.event)
    expected.append((kind, z * 2.0 * FIT_CHECK_BOUND, n_groups))
    return expected


def _expected_minimax(est, draws, n):
    plan = est.privacy_plan_
    found = leaves(plan.event)
    n_groups = len(est.groups_)
    after = ([] if np.isinf(plan.epsilon)
             else _minimax_check_draws(plan, found, n_groups))
    return _expected_minimax_solver(est, plan, found, n_groups) + after


def _expected_minimax_solver(est, plan, found, n_groups):
    if est.solver_ == "gda":
        expected = []
        # Counts (if released), the row norm's draws (clip_norm="auto"),
        # then T model and T adversary releases.
        gaussians = []
        for leaf, count in found:
            if isinstance(leaf, ExponentialMechanism):
                expected.append(_grid_draws(leaf, count))
            else:
                gaussians += [leaf] * count
        if plan.counts_released:
            # One row moves between two counts: l2 sensitivity sqrt(2).
            counts = gaussians.pop(0)
            expected.append(("normal", math.sqrt(2.0) * counts.noise_multiplier,
                             n_groups))
        assert len(gaussians) == 2 * plan.n_steps
        model, loss = gaussians[0], gaussians[-1]
        dim = est.n_features_in_ + int(est.fit_intercept)
        # A row's gradient on (x, b): its coefficients' part clipped at C,
        # its intercept's at most b; the sum moves by 2 sqrt(C^2 + b^2).
        # Each group's loss sum (losses within [0, l_max]) moves by l_max.
        b = est.feature_bound if est.fit_intercept else 0.0
        if est.kappa_ == 1.0:
            # q pinned at p: the adversary releases nothing and each step's
            # model release is the pair's one Gaussian mechanism (mu^2 add).
            z = 1.0 / math.hypot(1.0 / model.noise_multiplier,
                                 1.0 / loss.noise_multiplier)
            expected.append(("normal", 2.0 * math.hypot(est.clip_norm_, b) * z,
                             plan.n_steps * dim))
            return expected
        expected.append(("normal", 2.0 * math.hypot(est.clip_norm_, b)
                         * model.noise_multiplier, plan.n_steps * dim))
        expected.append(("normal", plan.loss_bound * loss.noise_multiplier,
                         plan.n_steps * n_groups))
        return expected
    expected = [("uniform", 1.0, est.n_draws_)]
    first, count = found[0]
    if isinstance(first, PureDPMechanism):
        # Noisy counts first: one row moves two counts by 1 (l1 sensitivity 2).
        expected.append(("laplace", 2.0 / first.epsilon0, n_groups))
        assert isinstance(found[1][0], EpsilonDeltaEvent)
    else:
        assert found == [(ExponentialMechanism(est.score_sensitivity_), est.n_draws_)]
    return expected


def _expected_synthetic(est, draws, n):
    plan = est.privacy_plan_
    queries = est._queries
    found = leaves(plan.event)
    expected = []
    if plan.bounds is not None:
        expected.append(_grid_draws(*found.pop(0)))
    if plan.n_one_way:
        leaf, count = found.pop(0)
        # A record moves a normalised marginal by 1/n in two cells.
        cells = sum(column.size for column in est.domain_)
        expected.append(("normal", math.sqrt(2.0) / n * leaf.noise_multiplier, cells))
    (selection, rounds), (measure, rounds_too) = found
    assert rounds == rounds_too == plan.n_rounds == len(est.selected_)
    if isinstance(est.workload, np.ndarray):
        # One query of entries within [-m, m]: a record moves it by 2 m / n.
        l1 = l2 = 2.0 * np.abs(est.workload).max() / n
    else:
        l1, l2 = 2.0 / n, math.sqrt(2.0) / n
    expected.append(("gumbel", l1 / selection.score_sensitivity, rounds))
    expected.append(("normal", l2 * measure.noise_multiplier,
                     int(sum(queries.sizes[j] for j in est.selected_))))
    return expected


def _expected_scaler(est, draws, n):
    plan = est.privacy_plan_
    d = est.n_features_in_
    found = leaves(plan.event)
    expected = []
    if plan.bounds is not None:
        expected.append(_grid_draws(*found.pop(0)))
    # Values clipped to the unit interval: a record moves the sum by 2 per
    # column, the centred sum of squares by 1.
    moments = [leaf for leaf, count in found for _ in range(count)]
    for leaf, per_column in zip(moments, (2.0, 1.0), strict=False):
        if isinstance(leaf, GaussianMechanism):
            expected.append(("normal", leaf.noise_multiplier * per_column
                             * math.sqrt(d), d))
        else:
            expected.append(("laplace", per_column * d / leaf.epsilon0, d))
    return expected


EXPECTED = {
    "DPSGDRegressor": _expected_sgd,
    "DPSGDClassifier": _expected_sgd,
    "DPLasso": _expected_lasso,
    "DPLogisticSimplex": _expected_simplex,
    "DPMinimaxClassifier": _expected_minimax,
    "DPSyntheticData": _expected_synthetic,
    "DPStandardScaler": _expected_scaler,
    "DPMinMaxScaler": _expected_scaler,
}


def _search_segments(seen, search):
    """A search's own draws, and each candidate fit's: ``(own draws,
    [(fitted part, draws)])``.  A candidate's fits
    (the one stopped at its release that learns its plan, and its run) lie
    between a ``("start", None)`` and an ``("end", None)``; a refit begins
    after the runs and draws last."""
    own, parts, current, inside = [], [], None, False
    for item in seen:
        if isinstance(item, tuple) and item[0] == "begin":
            if item[1] is not search:  # a candidate's fit, or the refit
                parts.append((item[1], []))
                current = parts[-1][1]
        elif isinstance(item, tuple):
            inside, current = item[0] == "start", None
        else:
            assert not inside or current is not None, "a draw before any plan"
            (own if current is None else current).append(item)
    return own, parts


def _assert_search_draws(case, sampler, monkeypatch):
    """Each candidate fit draws its own plan's noise; the search draws its
    range (when auto) and one score noise per run at
    ``score_noise * bound / n_validation``."""
    from skdpopt.model_selection import _candidates, _search

    noisy = _search.BaseDPSearchCV._noisy_scores
    scales = []

    def bracketed(function):
        def marked(*args, **kwargs):
            sampler.append(("start", None))
            try:
                return function(*args, **kwargs)
            finally:
                sampler.append(("end", None))
        return marked

    def observed(self, values, plan, bound, n_validation, rng):
        scales.append((plan.score_noise * bound / n_validation, len(values)))
        return noisy(self, values, plan, bound, n_validation, rng)

    for name in ("run_candidate", "planned_event"):
        monkeypatch.setattr(_candidates, name, bracketed(getattr(_candidates, name)))
    monkeypatch.setattr(_search.BaseDPSearchCV, "_noisy_scores", observed)
    fitted = case.fit(case.make())
    n = DATA[case.data]()[0][0].shape[0]
    n_train = n - int(round(fitted.validation_fraction * n))
    own, parts = _search_segments(sampler, fitted)
    # A candidate's plan is first learnt by a fit stopped at its release
    # (it begins, draws nothing and keeps no plan); then the run fits.
    runs = [(part, draws) for part, draws in parts
            if draws or hasattr(part, "privacy_plan_")]
    assert runs, "a search that ran no candidate"
    for part, draws in runs:
        assert_draws(draws, EXPECTED[type(part).__name__](part, draws, n_train))
    plan = fitted.privacy_plan_
    (scale, n_runs), = scales
    distribution = "laplace" if plan.score_mechanism == "laplace" else "normal"
    expected = [(distribution, scale, n_runs)]
    if plan.range_draws is not None:
        # Each column's draws (the median cell, then the quantiles): the
        # range is one column, the targets.
        expected.append(("gumbel", 1.0 / plan.range_draws.score_sensitivity,
                         plan.range_draws.draws_per_column))
    assert_draws(own, expected)


@pytest.mark.parametrize("case", FITS, ids=lambda c: c.id)
def test_scale_reaching_the_sampler_is_the_plans(case, sampler, monkeypatch):
    if "Search" in case.id:
        _assert_search_draws(case, sampler, monkeypatch)
        return
    fitted = case.fit()
    n = DATA[case.data]()[0][0].shape[0]
    parts = ([fitted] if isinstance(fitted, DPEstimatorMixin)
             else _fitted_leaves(fitted))
    segments = _segments(sampler)
    assert list(segments) == [id(p) for p in parts]
    for part in parts:
        draws = segments[id(part)]
        assert_draws(draws, EXPECTED[type(part).__name__](part, draws, n))


# -- the noise in the output ---------------------------------------------------
#
# Gaussian noise whose std is c times the planned one gives
# S = sum((noise / std)^2) ~ c^2 chi2_k.  The check accepts S / k within
# [1/2, 2], halfway (in log scale) between 1 and c^2 = 1/4 or 4: it fails at
# c = 1 with probability chi2.sf(2k, k) + chi2.cdf(k/2, k), and passes at
# c = 1/2 (c = 2) with probability chi2.sf(2k, k) (chi2.cdf(k/2, k)); all
# below 1e-6 from k = 120 (9.3e-7), and 4.6e-8 at k = GAUSSIAN_DRAWS.
# Laplace noise: sum(|noise| / scale) ~ c Gamma(k), its mean accepted within
# [2^-1/2, 2^1/2]: below 1e-6 from k = 250 (1.3e-7).
GAUSSIAN_DRAWS = 150
LAPLACE_DRAWS = 250
# An exponential mechanism (or any sampler of a known law p) checked by
# likelihood: the draws must be likelier under p than under the laws at
# half and at double the noise (q).  By Chernoff's bound at t = 1/2,
# P(L(q) >= L(p)) under p and P(L(p) > L(q)) under q are both at most
# BC(p, q)^N, BC the Bhattacharyya coefficient sum(sqrt(p q)): N draws with
# 2 max BC^N <= 1e-6 (draws_needed) keep every error below 1e-6.
ERROR = 1e-6


def test_margins():
    k = GAUSSIAN_DRAWS
    assert stats.chi2.sf(2 * k, k) + stats.chi2.cdf(k / 2, k) < ERROR
    k = LAPLACE_DRAWS
    r = math.sqrt(2.0)
    assert stats.gamma.sf(r * k, k) + stats.gamma.cdf(k / r, k) < ERROR


def assert_gaussian(noise, std):
    noise = np.ravel(noise)
    assert noise.size >= GAUSSIAN_DRAWS
    ratio = np.mean((noise / std) ** 2)
    assert 0.5 <= ratio <= 2.0, f"noise variance {ratio:.3f} times the planned"


def assert_laplace(noise, scale):
    noise = np.ravel(noise)
    assert noise.size >= LAPLACE_DRAWS
    ratio = np.mean(np.abs(noise) / scale)
    assert 2**-0.5 <= ratio <= 2**0.5, f"noise scale {ratio:.3f} times the planned"


def _bhattacharyya(p, q):
    return float(np.sum(np.sqrt(p * q)))


def draws_needed(law, alternatives):
    worst = max(_bhattacharyya(law, q) for q in alternatives)
    return math.ceil(math.log(ERROR / len(alternatives)) / math.log(worst))


def assert_law(draws, law, alternatives):
    """``draws`` (indices) come from ``law``, not from an alternative."""
    draws = np.ravel(draws)
    assert draws.size >= draws_needed(law, alternatives)
    counts = np.bincount(draws, minlength=len(law))

    def loglik(p):
        with np.errstate(divide="ignore"):
            terms = counts * np.log(p)
        return np.sum(np.where(counts > 0, terms, 0.0))

    for q in alternatives:
        assert loglik(law) > loglik(q)


def _softmax_laws(scores, scale):
    """The exponential mechanism's law at ``scale`` and at half and double
    the noise."""
    return (softmax(scores / scale),
            [softmax(scores / (0.5 * scale)), softmax(scores / (2.0 * scale))])


# DP-SGD: on zero rows every clipped gradient is 0, so one step's
# coefficients are minus the noise over the expected batch q n.

@pytest.mark.parametrize("rate", [1.0, 0.5])
def test_noisy_sgd_adds_its_noise(rate):

    n, z, clip = 10, 1.5, 0.7
    problem = LinearProblem(np.zeros((n, GAUSSIAN_DRAWS)), np.zeros(n), False,
                            loss=SquaredError(), clip_norm=clip)
    plan = DPSGDPlan(np.inf, 0.0, EpsilonDeltaEvent(np.inf, 0.0),
                     sampling_rate=rate, n_steps=1, n_epochs=1, n_problems=1,
                     noise_multiplier=z, average_start=None, single_pass=False,
                     learning_rate="constant", eta0=1.0)
    result = noisy_sgd(problem, plan, np.random.default_rng(0))
    assert_gaussian(-result.coef * rate * n, z * clip)


@pytest.mark.parametrize("rate", [1.0, 0.5])
def test_lockstep_sgd_adds_its_noise(rate):
    # The same for K problems in lockstep: each entry of the K x d noisy
    # sum has standard deviation z sqrt(2) C.
    n, z, clip, k = 10, 1.5, 0.7, 3
    d = GAUSSIAN_DRAWS // k
    problems = [LockstepProblem(np.zeros(n), SquaredError()) for _ in range(k)]
    plan = DPSGDPlan(np.inf, 0.0, EpsilonDeltaEvent(np.inf, 0.0),
                     sampling_rate=rate, n_steps=1, n_epochs=1, n_problems=k,
                     noise_multiplier=z, lockstep=True, average_start=None,
                     single_pass=False, learning_rate="constant", eta0=1.0)
    results = lockstep_sgd(np.zeros((n, d)), problems, plan,
                           np.random.default_rng(0), clip_norm=clip,
                           fit_intercept=False)
    noise = -np.concatenate([r.coef for r in results]) * rate * n
    assert_gaussian(noise, z * math.sqrt(2.0) * clip)


# DPLasso's greedy coordinate descent.

def _greedy(X, y, *, runs, feature_bound=1.0, **options):
    """``runs`` one-step fits (no l1 penalty, no activation margin, public
    bounds b = C = 1 unless ``feature_bound`` says otherwise), with the
    given noise."""
    problem = LinearProblem(X, y, False, alpha=0.0, feature_bound=feature_bound,
                            residual_bound=1.0)
    rng = np.random.default_rng(1)
    settings = dict(n_steps=1, selection="exponential", selection_epsilon=np.inf,
                    gradient_noise="gaussian", gradient_noise_multiplier=0.0,
                    curvature_noise_multiplier=None, residual_noise_multiplier=None,
                    activation_margin=0.0)
    settings.update(options)
    plan = SimpleNamespace(**settings)
    return [private_greedy_cd(problem, plan, rng) for _ in range(runs)]


@pytest.mark.parametrize("kind", ["gaussian", "laplace"])
def test_greedy_cd_adds_its_gradient_noise(kind):
    # Zero rows: every gradient is 0, and one step from 0 moves the chosen
    # coordinate to minus the noisy gradient over M = b^2 = 1.  The
    # gradient's sensitivity is 2 b C / n.
    n, z = 20, 2.0
    runs = GAUSSIAN_DRAWS if kind == "gaussian" else LAPLACE_DRAWS
    results = _greedy(np.zeros((n, 1)), np.zeros(n), runs=runs,
                      gradient_noise=kind, gradient_noise_multiplier=z)
    noise = -np.array([r.coef[0] for r in results])
    check = assert_gaussian if kind == "gaussian" else assert_laplace
    check(noise, z * 2.0 / n)


def test_greedy_cd_gradient_noise_follows_the_chosen_columns_bound():
    # Per-column bounds (0.5, 3): zero rows tie every score at 0 and the
    # exact argmax takes column 0, whose gradient has sensitivity
    # 2 b_0 C / n (not the largest bound's); the step from 0 is minus the
    # noisy gradient over M_0 = b_0^2.
    n, z, b0 = 20, 2.0, 0.5
    results = _greedy(np.zeros((n, 2)), np.zeros(n), runs=GAUSSIAN_DRAWS,
                      feature_bound=np.array([b0, 3.0]),
                      gradient_noise_multiplier=z)
    assert all(r.selected[0] == 0 for r in results)
    noise = -np.array([r.coef[0] for r in results]) * b0 * b0
    assert_gaussian(noise, z * 2.0 * b0 / n)


def _two_features():
    # Feature 0 at the bound with targets at the residual bound: its score
    # (|gradient| / b) is C = 1; feature 1 is zero, score 0.
    n = 8
    X = np.column_stack([np.ones(n), np.zeros(n)])
    return X, np.ones(n)


def test_greedy_cd_selection_is_its_exponential_mechanism():
    X, y = _two_features()
    n, epsilon = len(y), 1.5
    # Scores move by 2 C / n; each draw is epsilon-DP: Gumbel scale
    # 2 (2 C / n) / epsilon.
    law, alternatives = _softmax_laws(np.array([1.0, 0.0]), 4.0 / (n * epsilon))
    runs = draws_needed(law, alternatives)
    results = _greedy(X, y, runs=runs, selection_epsilon=epsilon)
    assert_law([r.selected[0] for r in results], law, alternatives)


def _noisy_max_law(gap, scale):
    # P(L0 - L1 > -gap) for i.i.d. Laplace(scale): the difference has
    # P(D > x) = exp(-x / scale) (1 + x / scale) / 2 for x >= 0.
    x = gap / scale
    first = 1.0 - 0.5 * np.exp(-x) * (1.0 + 0.5 * x)
    return np.array([first, 1.0 - first])


def test_greedy_cd_selection_is_its_report_noisy_max():
    X, y = _two_features()
    n, epsilon = len(y), 1.5
    scale = 2.0 * (2.0 / n) / epsilon  # Laplace 2 s / epsilon on each score
    law = _noisy_max_law(1.0, scale)
    alternatives = [_noisy_max_law(1.0, 0.5 * scale), _noisy_max_law(1.0, 2 * scale)]
    results = _greedy(X, y, runs=draws_needed(law, alternatives),
                      selection="laplace", selection_epsilon=epsilon)
    assert_law([r.selected[0] for r in results], law, alternatives)


def test_greedy_cd_adds_its_curvature_noise():
    # Entries +-b / sqrt(2): curvature (1/n) sum x^2 = b^2 / 2, within the
    # clip [b^2 / 100, b^2]; targets C sign(x) give the exact gradient
    # -C b / sqrt(2).  Without gradient noise the step is -gradient / M with
    # M = released + 2 std (sensitivity b^2 / n).
    n, z = 400, 5.0
    x = np.where(np.arange(n) % 2 == 0, 1.0, -1.0) / math.sqrt(2.0)
    std = z / n
    results = _greedy(x[:, None], np.sign(x), runs=GAUSSIAN_DRAWS,
                      curvature_noise_multiplier=z)
    released = np.array([(1.0 / math.sqrt(2.0)) / r.coef[0] for r in results])
    assert_gaussian(released - 2.0 * std - 0.5, std)


def test_greedy_cd_curvature_noise_follows_the_columns_bound():
    # As above with a per-column bound b = 2 (array): entries +-b / sqrt(2),
    # curvature b^2 / 2, its sensitivity b^2 / n; the exact gradient is
    # -C b / sqrt(2), and the step -gradient / M gives M.
    n, z, b = 400, 5.0, 2.0
    x = np.where(np.arange(n) % 2 == 0, b, -b) / math.sqrt(2.0)
    std = z * b * b / n
    results = _greedy(x[:, None], np.sign(x), runs=GAUSSIAN_DRAWS,
                      feature_bound=np.array([b]), curvature_noise_multiplier=z)
    released = np.array([(b / math.sqrt(2.0)) / r.coef[0] for r in results])
    assert_gaussian(released - 2.0 * std - b * b / 2, std)


def test_greedy_cd_adds_its_residual_noise():

    # Residuals at C / 4 (targets C / 4, w = 0): mean square C^2 / 16, so
    # the next bound 2 sqrt(C^2 / 16 + 2 std + noise) stays within
    # (C / 100, C), unclipped.
    n, z, C = 500, 4.0, 1.0
    problem = least_squares_problem(np.zeros((n, 1)), np.full(n, C / 4), 1.0, C)
    problem.reset(np.zeros(1), 0.0)
    std = z * C * C / n  # terms within [0, C^2]
    rng = np.random.default_rng(2)
    bounds = np.array([_adapted_residual_bound(problem, z, C, rng)
                       for _ in range(GAUSSIAN_DRAWS)])
    assert np.all(bounds < C)
    released = (bounds / RESIDUAL_SCALE_MULTIPLE) ** 2 - 2.0 * std
    assert_gaussian(released - C * C / 16, std)


# Frank-Wolfe (DPLasso, DPLogisticSimplex): a constant gradient makes every
# step's draw the same exponential mechanism.

def test_frank_wolfe_draws_are_its_exponential_mechanism():

    R, g, score_scale = 2.0, 0.3, 1.2
    # Vertices +R e_0 and -R e_0: scores -<v, g> = -R g and +R g.
    law, alternatives = _softmax_laws(np.array([-R * g, R * g]), 1.0 / score_scale)
    runs = draws_needed(law, alternatives)
    result = private_frank_wolfe(lambda coef: np.array([g]), 1, radius=R,
                                 n_steps=runs, score_scale=score_scale,
                                 rng=np.random.default_rng(3))
    assert_law(result.selected, law, alternatives)


# Mirror descent (DPLogisticSimplex) and the saddle point (DPMinimaxClassifier):
# after one step on a constant gradient g the weights are softmax(-tau g), and
# the K output vertices are drawn from them; half the noise is twice the step.

def test_mirror_descent_draws_follow_its_step():

    gradient = np.array([1.0, 0.0, -0.5, 0.25])
    tau = 0.8
    law, alternatives = _softmax_laws(-gradient, 1.0 / tau)
    K = draws_needed(law, alternatives)
    vertices = vertex_sampling_mirror_descent(
        lambda t, vertices: (np.arange(4), gradient), 4, n_steps=1, n_draws=K,
        refreshes=[1], step_size=tau, rng=np.random.default_rng(4))
    assert_law(vertices, law, alternatives)


def test_saddle_point_draws_follow_its_steps():

    x_gradient, y_gradient = np.array([1.0, -1.0, 0.0]), np.array([0.5, -0.5])
    tau_x, tau_y = 0.7, 1.1
    x_law, x_alternatives = _softmax_laws(-x_gradient, 1.0 / tau_x)
    y_law, y_alternatives = _softmax_laws(y_gradient, 1.0 / tau_y)  # ascent
    K = max(draws_needed(x_law, x_alternatives), draws_needed(y_law, y_alternatives))
    result = saddle_point_mirror_descent(
        lambda t, x, y: (np.arange(3), x_gradient, y_gradient), 3, 2, n_steps=1,
        n_draws=K, x_step_size=tau_x, y_step_size=tau_y,
        rng=np.random.default_rng(5))
    assert_law(result.x_vertices, x_law, x_alternatives)
    assert_law(result.y_vertices, y_law, y_alternatives)


# Gradient descent-ascent (DPMinimaxClassifier): one step from 0 on zero rows.

def _gda(n_features, groups, *, runs, **noise):
    n = len(groups)
    sizes = np.bincount(groups).astype(float)
    rng = np.random.default_rng(6)
    settings = dict(proportions=sizes / n, group_sizes=sizes, kappa=1e6,
                    n_steps=1, clip_norm=0.5, loss_bound=2.0, radius=1e6,
                    step_size=1.0, group_step_size=1.0, weight_decay=0.0,
                    noise_multiplier=0.0, loss_noise_multiplier=0.0)
    settings.update(noise)
    target = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
    problem = GroupProblem(np.zeros((n, n_features)), target, groups, len(sizes),
                           None)
    return [noisy_gda(problem, SimpleNamespace(**settings), rng)
            for _ in range(runs)]


def test_gda_adds_its_model_noise():
    # Zero rows: the gradient sum is 0; the step from 0 is minus the noise
    # (std 2 C z) times the step over n.
    n, z = 30, 1.3
    (result,) = _gda(GAUSSIAN_DRAWS, np.zeros(n, dtype=int), runs=1,
                     noise_multiplier=z)
    assert_gaussian(-result.coef * n, 2 * 0.5 * z)


def test_gda_adds_its_loss_noise():
    # Two groups: after one step log(q_1 / q_0) = log(p_1 / p_0) + (l_1 - l_0)
    # (group step 1, no cap), l_g the noisy loss sum over the group's size:
    # its noise is N(0, (l_max z)^2 (1 / s_0^2 + 1 / s_1^2)).
    groups = np.repeat([0, 1], [10, 20])
    z = 0.9
    exact = _gda(1, groups, runs=1)[0].group_weights
    noisy = _gda(1, groups, runs=GAUSSIAN_DRAWS, loss_noise_multiplier=z)
    shift = np.array([np.log(r.group_weights[1] / r.group_weights[0])
                      for r in noisy]) - np.log(exact[1] / exact[0])
    assert_gaussian(shift, 2.0 * z * math.sqrt(1 / 10**2 + 1 / 20**2))


# Noisy Newton (DPLogisticSimplex's scale and intercept): one parameter, one
# step from 0, where every weight sigma(0) sigma(0) is 1/4.

def _newton_setup():
    # z = b = 1 on every row and 60% positive labels: gradient
    # -mean(y) / 2 = -0.1, Hessian 1/4, Newton step 0.4 (within MAX_STEP).
    n = 200
    Z = np.ones((n, 1))
    y = np.where(np.arange(n) % 5 < 3, 1.0, -1.0)
    return Z, y, -0.5 * y.mean(), 0.25


@pytest.mark.parametrize("kind", ["gaussian", "laplace"])
def test_noisy_newton_adds_its_gradient_noise(kind):

    Z, y, gradient, hessian = _newton_setup()
    rng, scale = np.random.default_rng(7), 0.02
    runs = GAUSSIAN_DRAWS if kind == "gaussian" else LAPLACE_DRAWS
    steps = np.array([noisy_newton_logistic(
        Z, y, radius=100.0, n_steps=1, gradient_noise=scale, hessian_noise=0.0,
        rng=rng, noise=kind)[0] for _ in range(runs)])
    # Unclipped Newton step: theta = -(g + e) / h.
    assert np.all(np.abs(steps) < 2.0)
    noise = -steps * hessian - gradient
    (assert_gaussian if kind == "gaussian" else assert_laplace)(noise, scale)


def test_noisy_newton_adds_its_hessian_noise():

    Z, y, gradient, hessian = _newton_setup()
    rng, scale = np.random.default_rng(8), 0.004  # floor 3 sd, far below h
    steps = np.array([noisy_newton_logistic(
        Z, y, radius=100.0, n_steps=1, gradient_noise=0.0, hessian_noise=scale,
        rng=rng)[0] for _ in range(GAUSSIAN_DRAWS)])
    assert_gaussian(-gradient / steps - hessian, scale)


# DPMinimaxClassifier's noisy group counts.

@pytest.mark.parametrize("kind", ["gaussian", "laplace"])
def test_minimax_adds_its_count_noise(kind):
    n_groups = GAUSSIAN_DRAWS if kind == "gaussian" else LAPLACE_DRAWS
    codes = np.arange(40 * n_groups) % n_groups
    problem = GroupProblem(np.zeros((len(codes), 1)), np.ones(len(codes)), codes,
                           n_groups, None)
    plan = SimpleNamespace(counts_released=True, count_noise=kind,
                           count_noise_scale=7.0)
    sizes, what = release_group_sizes(problem, plan, np.random.default_rng(14))
    assert what == "noisy count"
    noise = sizes - 40.0  # every group holds 40 rows
    (assert_gaussian if kind == "gaussian" else assert_laplace)(noise, 7.0)


# The scalers' clipped moments: entries +-1/sqrt(2) within bounds (-1, 1)
# make both sums exactly 0, so each column's released means are the noise
# over n (within [-1, 1] and [0, 1], unclipped).

@pytest.mark.parametrize("mechanism", ["gaussian", "laplace"])
def test_scaler_moments_add_their_noise(mechanism):

    d = GAUSSIAN_DRAWS if mechanism == "gaussian" else LAPLACE_DRAWS
    n, z = 2000, (0.5, 0.8)
    X = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)[:, None] / math.sqrt(2.0)
    X = np.repeat(X, d, axis=1)
    mean, second, _ = private_moments(X, -np.ones(d), np.ones(d), z,
                                      np.random.default_rng(10), mechanism)
    check = assert_gaussian if mechanism == "gaussian" else assert_laplace
    # Sensitivities 2 and 1 per column: l2 over d columns sqrt(d) times
    # that, l1 d times.
    spread = math.sqrt(d) if mechanism == "gaussian" else d
    check(mean * n, z[0] * 2.0 * spread)
    check((second - 0.5) * n, z[1] * 1.0 * spread)


# The private bounds' draws (scalers, "auto" bounds): many equal columns give
# independent draws of one exponential mechanism.

def test_bounds_draws_are_their_exponential_mechanism():
    # One column's rank distances |#{x < c} - q n| and the public prior
    # anchored at 1; many identical rows give independent draws of one
    # exponential mechanism, log-weights -s distance + prior.
    n, q, sensitivity = 20, 0.9, 0.5
    below = counts_below(np.linspace(1.0, 8.0, n)[:, None], DEFAULT_GRID)[0]
    distance = np.abs(below - q * n)
    prior = anchored_prior(q, np.array([1.0]), DEFAULT_GRID, PRIOR_WEIGHT)[0]
    keep = np.isfinite(prior)
    law, alternatives = _softmax_laws(-distance[keep] + prior[keep] / sensitivity,
                                      1.0 / sensitivity)
    runs = draws_needed(law, alternatives)
    drawn = _draw(np.repeat(distance[None, :], runs, axis=0), sensitivity,
                  np.repeat(prior[None, :], runs, axis=0), np.random.default_rng(12))
    assert np.all(keep[drawn])
    assert_law(np.searchsorted(np.flatnonzero(keep), drawn), law, alternatives)


# DPSyntheticData's measurements: noisy answers, each query's averaged over
# the times it was measured (c), so sqrt(c) times its error has the planned
# spread.

def _measured_noise(result, real, std):
    noise = []
    for j, (weighted, precision) in result.measurements.items():
        times = precision * std**2
        assert times == pytest.approx(round(times))
        noise.append((weighted / precision - real[j]) * math.sqrt(round(times)))
    return np.concatenate(noise)


def test_synthetic_measurements_add_their_noise(monkeypatch):
    rng = np.random.default_rng(13)
    shape = (80, 75, 3)
    codes = np.column_stack([rng.integers(0, m, 500) for m in shape])
    workload = MarginalWorkload([(0,), (1,), (2,), (0, 2), (1, 2)], shape)
    real = [workload.answer_records(codes, j) for j in range(len(workload))]
    one_way = SimpleNamespace(n_one_way=3, one_way_noise_std=0.01, n_rounds=0,
                              selection_epsilon=np.inf, round_noise_std=0.0)
    # The warm start's measurements, as the fit hands them to the rounds.
    handed = []
    rounds = query_release.release_workload

    def release(*args, initial_measurements, **kwargs):
        handed.append(dict(initial_measurements))
        return rounds(*args, initial_measurements=initial_measurements, **kwargs)

    monkeypatch.setattr(query_release, "release_workload", release)
    fit_synthetic(MarginalProblem(codes, workload), one_way, rng)
    assert_gaussian(_measured_noise(SimpleNamespace(measurements=handed[0]), real,
                                    0.01), 0.01)
    # Rounds: the largest errors measured (no selection noise), from the
    # uniform distribution, among the 2-way marginals.
    pairs = MarginalWorkload([(0, 2), (1, 2)], shape)
    real = [pairs.answer_records(codes, j) for j in range(len(pairs))]
    result = release_workload(pairs, real, 500, n_rounds=3,
                              selection_epsilon=np.inf, noise_std=0.02, rng=rng)
    assert_gaussian(_measured_noise(result, real, 0.02), 0.02)
