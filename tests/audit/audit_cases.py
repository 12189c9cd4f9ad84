"""One audit per estimator: neighbouring datasets, a statistic, a planted bug.

Each case shrinks its estimator to the release it audits (one step, one
draw, a dataset in which only the canary record moves the output), so that
the statistic sees the mechanism almost directly and a few thousand fits
give a bound close to what the mechanism really leaks.  The two datasets
differ in one record (replace-one, the library's relation): the canary, a
record ten times beyond the public bounds with an extreme label, against
the same record with the opposite label, which moves every clipped
gradient by its full range (and, were a bound taken from the data, ten
times more).  All other records are zero rows, which move no gradient.  One
DP-SGD case instead puts the canary at a feature value whose square
overflows (1e300), to check that such a record cannot make the output NaN.

``plant`` is the test-only seam of the companion test: it breaks the
mechanism the way a real bug would (noise scaled down, a sensitivity
understated), by replacing the estimator's plan with one whose noise
disagrees with its event (estimators on plans) or by patching the name the
estimator calls, so that the same audit must then report a bound above the
claim.
"""

import dataclasses
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Callable

import numpy as np
import pytest

import skdpopt._data.inmemory
import skdpopt._domain
import skdpopt.lasso
import skdpopt.minimax
import skdpopt.plans.minimax
import skdpopt.plans.minimax_vertex
import skdpopt.sgd
import skdpopt.solvers.groups
import skdpopt.solvers.lockstep_sgd
import skdpopt.solvers.mirror_descent
import skdpopt.solvers.query_release
import skdpopt.synthetic
from skdpopt import (
    DPLasso,
    DPLogisticSimplex,
    DPMinimaxClassifier,
    DPSGDClassifier,
    DPSGDRegressor,
    DPSyntheticData,
    logistic_simplex,
)
from skdpopt.accounting import privacy_spent
from skdpopt.solvers.problems import WorstGroupResult

EPSILON = 1.0
DELTA = 1e-5
N_ROWS = 50


@dataclass
class AuditCase:
    """An estimator shrunk to one audited release.

    Attributes
    ----------
    name : str
    release : str
        What the statistic observes, for the docs table.
    fit : callable
        ``fit(dataset, random_state)`` returns a fitted estimator.
    datasets : callable
        Returns the neighbouring pair ``(data_in, data_out)``.
    statistic : callable
        The test statistic of a fitted estimator.
    claimed : callable
        The epsilon the estimator claims for what the statistic sees.
    plant : callable
        ``plant(monkeypatch)`` plants the companion test's bug.
    bug : str
        What ``plant`` breaks, for the docs table.
    delta : float
    fast_runs : int
        Fits per dataset of the honest audit in the default test run.
    test : (float, int) or None
        The fixed test (threshold, direction) of ``planted.PLANTED``, set
        by ``test_audits``.
    """

    name: str
    release: str
    fit: Callable
    datasets: Callable
    statistic: Callable
    claimed: Callable
    plant: Callable
    bug: str
    delta: float = DELTA
    fast_runs: int = 2_000
    test: tuple = None


# The canary lies beyond every public bound of the audited estimators (the
# feature and target bounds are 1, the clip norms at most 1): an estimator
# that clips to its public bounds releases what it would for a canary at
# them, and one that takes a bound from the data leaks 10 times more.
BEYOND = 10.0


def _canary_pair(n_features=1, low=-BEYOND, high=BEYOND):
    """Zero rows plus a canary at x = (BEYOND, 0, ...) with label high vs low."""
    X = np.zeros((N_ROWS, n_features))
    X[0, 0] = BEYOND
    y_in, y_out = np.zeros(N_ROWS), np.zeros(N_ROWS)
    y_in[0], y_out[0] = high, low
    return (X, y_in), (X, y_out)


def _classification_pair():
    """As :func:`_canary_pair` with 5 features, labels +1/-1; zero rows get
    alternating labels (they move no gradient: their features are 0).

    With 10 vertices to choose from, the canary's vertex is rare under
    either dataset, so the odds of drawing it reflect the full change of
    its log weight rather than half of it."""
    (X, y_in), (_, y_out) = _canary_pair(n_features=5, low=-1.0, high=1.0)
    rest = np.where(np.arange(N_ROWS) % 2 == 0, 1.0, -1.0)
    y_in, y_out = np.where(y_in == 0, rest, y_in), np.where(y_out == 0, rest, y_out)
    return (X, y_in), (X, y_out)


def _scaled_noise(modules, name, factor):
    """A planter that scales the noise scale of ``name`` in each module."""

    def plant(monkeypatch):
        for module in modules:
            original = getattr(module, name)
            monkeypatch.setattr(
                module, name,
                lambda rng, scale, size, f=original: f(rng, scale * factor, size))

    return plant


def _scaled_plan(module, plan_function, field, factor):
    """A planter that makes ``module``'s plan function return plans whose
    ``field`` is scaled by ``factor``, with the event (hence the claim)
    left as planned: the bug of a solver that adds less noise than its
    plan accounts for."""

    def plant(monkeypatch):
        original = getattr(module, plan_function)

        def broken(**kwargs):
            plan = original(**kwargs)
            return dataclasses.replace(plan, **{field: getattr(plan, field) * factor})

        monkeypatch.setattr(module, plan_function, broken)

    return plant


def _fit_xy(make):
    def fit(data, random_state):
        X, y = data
        return make(random_state).fit(X, y)
    return fit


def _spent(estimator):
    return estimator.privacy_spent_.epsilon


# -- DPSGDRegressor: full batch, and Poisson sampling ------------------------

def _sgd_case(name, release, fast_runs=2_000, epsilon=EPSILON, **sampling):
    """DP-SGD on the canary pair: one epoch, no averaging, squared loss whose
    clipped gradient the canary's extreme label moves by its full range."""

    def make(random_state):
        return DPSGDRegressor(
            epsilon=epsilon, delta=DELTA, max_iter=1, average=False,
            fit_intercept=False, alpha=0.0, learning_rate="constant", eta0=1.0,
            clip_norm=1.0, target_scale=1.0, random_state=random_state,
            **sampling)

    return AuditCase(
        name=name,
        release=release,
        fit=_fit_xy(make),
        datasets=lambda: _canary_pair(low=-1e3, high=1e3),
        statistic=lambda est: est.coef_[0],
        claimed=_spent,
        plant=_scaled_plan(skdpopt.sgd, "plan_dpsgd", "noise_multiplier", 0.25),
        bug="plan's noise multiplier scaled down by 4 (event unchanged)",
        fast_runs=fast_runs,
    )


SGD = _sgd_case(
    "DPSGDRegressor",
    "one full-batch step: coefficient = noisy clipped gradient sum",
    sampling="full",
)
# Poisson rate 1/2 over one epoch: two steps, each of which may or may not
# sample the canary (amplification by subsampling).  The canary is in a batch
# only half the time: 2,000 fits leave the planted bug's bound barely above
# the claim.
SGD_POISSON = _sgd_case(
    "DPSGDRegressor (Poisson, rate 1/2)",
    "two subsampled steps: coefficient = sum of noisy clipped sums",
    fast_runs=4_000,
    sampling="poisson",
    batch_size=N_ROWS // 2,
)


# -- DPSGDRegressor with an extreme canary ------------------------------------

EXTREME = 1e300  # its square, and ||x||^2 computed naively, overflow
# The canary moves the clipped sum by C (not 2C as above: a zero residual is
# what a naive clip factor turns into NaN), so a larger epsilon lets the
# honest audit see the shift.
EXTREME_EPSILON = 4.0


def _extreme_pair():
    """Zero rows plus a canary at x = 1e300: with label -1e3 its residual at
    w = 0 is 1e3 and its clipped gradient is +C; with label 0 its residual is
    exactly 0 and it contributes nothing (a naive clip factor is then
    ``0 * inf``, NaN).  The zero rows' labels are 1, so that their residuals
    are not 0 (they move no gradient either way)."""
    X = np.zeros((N_ROWS, 1))
    X[0, 0] = EXTREME
    y_in, y_out = np.ones(N_ROWS), np.ones(N_ROWS)
    y_in[0], y_out[0] = -1e3, 0.0
    return (X, y_in), (X, y_out)


def _naive_norms(X, offset=0.0):
    # ||x||^2 in the data's precision: inf once an entry passes ~1.3e154.
    from sklearn.utils.extmath import row_norms

    return np.sqrt(row_norms(X, squared=True) + offset**2)


def _naive_clip(values, limit):
    # r C / max(|r| ||x||, C), written with limit L = C / ||x||: r L / max(|r|, L)
    # is 0 / 0 = NaN for a zero residual on a row whose norm overflowed.
    return values * limit / np.maximum(np.abs(values), limit)


def _naive_clip_and_sum(values, limit):
    clipped = _naive_clip(values, limit)
    return clipped, float(clipped.sum())


def _plant_naive_clipping(monkeypatch):
    # DP-SGD reads its rows through the in-memory data-access backend.
    monkeypatch.setattr(skdpopt._data.inmemory, "example_norms", _naive_norms)
    monkeypatch.setattr(skdpopt._data.inmemory, "clip_scalars_and_sum",
                        _naive_clip_and_sum)


SGD_EXTREME = AuditCase(
    name="DPSGDRegressor (extreme canary)",
    release="one full-batch step, canary x = 1e300: coefficient, NaN read as 1e300",
    fit=_sgd_case("", "", epsilon=EXTREME_EPSILON, sampling="full").fit,
    datasets=_extreme_pair,
    # An attacker sees a NaN coefficient as such: map it to a number.
    statistic=lambda est: float(np.nan_to_num(est.coef_[0], nan=EXTREME)),
    claimed=_spent,
    plant=_plant_naive_clipping,
    bug=("norm squared naively (overflows to inf), clip factor "
         "C / max(abs(r) norm(x), C)"),
)


# -- DPSGDClassifier: classes in lockstep, one joint step ---------------------

# Classes of the lockstep audit: without the joint clip a row's part moves
# by sqrt(LOCKSTEP_CLASSES) times the bound the noise is calibrated for.
LOCKSTEP_CLASSES = 64


def _lockstep_pair():
    """Zero rows (of four of the classes in turn: they move no gradient;
    the other classes have none) plus a canary of class 0 at x = +BEYOND
    against the same canary at -BEYOND.
    At w = 0 each of its K hinge derivatives is -y_k (+-1, norm sqrt(K)),
    clipped together to B: its part flips sign between the datasets, so
    the joint sum moves by 2 B, the whole replace-one sensitivity, along
    the direction -y of its derivatives."""
    X = np.zeros((N_ROWS, 1))
    y = np.arange(N_ROWS) % 4
    X_out = X.copy()
    X[0, 0], X_out[0, 0] = BEYOND, -BEYOND
    return (X, y), (X_out, y)


def _lockstep_direction():
    """The canary's derivatives at w = 0 over their norm: -y / sqrt(K)."""
    y = -np.ones(LOCKSTEP_CLASSES)
    y[0] = 1.0
    return -y / np.sqrt(LOCKSTEP_CLASSES)


def _sgd_lockstep(random_state):
    # The hinge loss without an intercept releases nothing but the steps
    # (no class totals, calibration or fit check); one full-batch step of
    # size 1 from 0 makes each coefficient minus its noisy sum over n.
    return DPSGDClassifier(
        loss="hinge", epsilon=EPSILON, delta=DELTA, max_iter=1, sampling="full",
        average=False, fit_intercept=False, alpha=0.0, learning_rate="constant",
        eta0=1.0, clip_norm=1.0, classes=list(range(LOCKSTEP_CLASSES)),
        random_state=random_state)


def _plant_per_problem_clip(monkeypatch):
    # Each derivative cut to the row's bound alone, as one problem run
    # alone clips it: the canary's part keeps norm sqrt(K) B.
    def clip_each(residuals, bounds):
        residuals = np.nan_to_num(residuals, copy=False)
        return np.clip(residuals, -bounds[:, None], bounds[:, None], out=residuals)
    monkeypatch.setattr(skdpopt.solvers.lockstep_sgd, "clip_rows", clip_each)


SGD_LOCKSTEP = AuditCase(
    name=f"DPSGDClassifier ({LOCKSTEP_CLASSES} classes in lockstep)",
    release=("one full-batch step of all classes: the coefficients' projection "
             "on the canary's derivatives"),
    fit=_fit_xy(_sgd_lockstep),
    datasets=_lockstep_pair,
    statistic=lambda est: float(_lockstep_direction() @ est.coef_[:, 0]),
    claimed=_spent,
    plant=_plant_per_problem_clip,
    bug=(f"joint clip skipped, each class's derivative clipped alone (the "
         f"canary's part of norm sqrt({LOCKSTEP_CLASSES}) = "
         f"{np.sqrt(LOCKSTEP_CLASSES):.0f} times the bound)"),
)


# -- DPLasso: one greedy step, its noisy coordinate gradient ------------------

def _lasso(random_state):
    # One feature: the selection has one candidate, the statistic is the
    # Gaussian-noised coordinate gradient after the step 1/M and a prox
    # whose threshold (alpha / M) is negligible.  A fixed residual bound
    # leaves the gradient the only release besides the selection, and the
    # activation margin (post-processing that zeroes small noisy gradients)
    # is switched off so that the statistic sees the release itself.  The
    # bounds are public (their private release is audited on its own).
    return DPLasso(
        alpha=1e-9, epsilon=EPSILON, delta=DELTA, fit_intercept=False,
        max_iter=1, curvature="bound", residual_bound=1.0, feature_bound=1.0,
        target_bound=1.0, random_state=random_state)


def _fit_lasso(data, random_state):
    plan_lasso = skdpopt.lasso.plan_lasso  # maybe planted
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(skdpopt.lasso, "plan_lasso", lambda **kwargs: dataclasses.replace(
            plan_lasso(**kwargs), activation_margin=0.0))
        return _fit_xy(_lasso)(data, random_state)


LASSO = AuditCase(
    name="DPLasso",
    release="one greedy step: coefficient = noisy coordinate gradient / M",
    fit=_fit_lasso,
    datasets=_canary_pair,
    statistic=lambda est: est.coef_[0],
    claimed=_spent,
    # The selection's share leaves the gradient a noise multiplier near 5.5:
    # a 4-fold bug leaks about epsilon 1.5, too little to show in 2,000 runs.
    plant=_scaled_plan(skdpopt.lasso, "plan_lasso",
                       "gradient_noise_multiplier", 0.125),
    bug="plan's gradient noise multiplier scaled down by 8 (event unchanged)",
)



# -- DPLasso, one-hot block: one greedy step, the block's noisy gradient ------

# A level count of a real categorical column; without its block clip the
# canary's part has l2 norm sqrt(64) = 8, the 8-fold bug of the LASSO case
# (16 levels, a 4-fold one, needed a planted audit of over 100,000 fits).
BLOCK_WIDTH = 64


def _fit_lasso_block(data, random_state):
    # As _fit_lasso, with the BLOCK_WIDTH columns declared as one one-hot
    # block of bound 1 (as a private pipeline declares an encoder's
    # columns): each row's part in it is clipped into the unit l2 ball, and
    # the one step (its selection has one candidate) releases the block's
    # whole gradient with the noise of one column's.
    plan_lasso = skdpopt.lasso.plan_lasso  # maybe planted
    ones, block = np.ones(BLOCK_WIDTH), np.zeros(BLOCK_WIDTH, dtype=int)
    X, y = data
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(skdpopt.lasso, "plan_lasso", lambda **kwargs: dataclasses.replace(
            plan_lasso(**kwargs), activation_margin=0.0))
        return DPLasso(
            alpha=1e-9, epsilon=EPSILON, delta=DELTA, fit_intercept=False,
            max_iter=1, curvature="bound", residual_bound=1.0,
            feature_bound="public", target_bound=1.0,
            random_state=random_state).with_declared_bounds(ones, block).fit(X, y)


def _block_pair():
    """Zero rows plus a canary at BEYOND in every column of the block (l2
    norm sqrt(BLOCK_WIDTH) BEYOND, far outside the one-hot shape) with
    label +BEYOND vs -BEYOND: clipped to 1 per column, then into the
    block's unit ball, its part moves the block's gradient by the full l2
    sensitivity 2 B C / n, along (1, ..., 1)."""
    X = np.zeros((N_ROWS, BLOCK_WIDTH))
    X[0] = BEYOND
    y_in, y_out = np.zeros(N_ROWS), np.zeros(N_ROWS)
    y_in[0], y_out[0] = BEYOND, -BEYOND
    return (X, y_in), (X, y_out)


def _plant_skipped_block_clip(monkeypatch):
    monkeypatch.setattr(skdpopt.lasso, "clip_blocks", lambda X, blocks, bounds: X)


LASSO_BLOCK = AuditCase(
    name="DPLasso (one-hot block)",
    release=(f"one greedy step on a block of {BLOCK_WIDTH} columns: sum of its "
             "coefficients = its noisy gradient along the canary's direction"),
    fit=_fit_lasso_block,
    datasets=_block_pair,
    # The projection of the released block gradient on the canary's
    # direction, times sqrt(BLOCK_WIDTH) (the step is -noisy / M with
    # M = 1: the curvature floor, 4 noise scales, about 0.8, stays below
    # it).  The chi-square gate (post-processing: with activation_margin
    # 0, ||noisy||^2 > BLOCK_WIDTH std^2) keeps the block at zero in about
    # half the fits, alike under both datasets (its chance depends on
    # ||noisy|| only, which has one law under both); the tails, where the
    # projection is large, mostly pass it.
    statistic=lambda est: float(np.sum(est.coef_)),
    claimed=_spent,
    # Without the block clip the canary's part keeps its per-column clip,
    # (1, ..., 1) of l2 norm sqrt(BLOCK_WIDTH) = 8: a sensitivity 8 times
    # the one the noise is calibrated for.
    plant=_plant_skipped_block_clip,
    bug=(f"block clip skipped (the canary's part of l2 norm "
         f"sqrt({BLOCK_WIDTH}) = {np.sqrt(BLOCK_WIDTH):.0f}, not 1)"),
)

# -- DPLogisticSimplex, Frank-Wolfe: one exponential-mechanism vertex draw ----

def _simplex_fw(random_state):
    return DPLogisticSimplex(
        epsilon=EPSILON, delta=DELTA, solver="frank_wolfe", max_iter=1,
        fit_intercept=False, radius=1.0, classes=[-1.0, 1.0],
        random_state=random_state)


SIMPLEX_FW = AuditCase(
    name="DPLogisticSimplex (frank_wolfe)",
    release="one step: sign of the exponential-mechanism vertex",
    fit=_fit_xy(_simplex_fw),
    datasets=_classification_pair,
    statistic=lambda est: np.sign(est.coef_[0, 0]),
    claimed=_spent,
    # The canary moves its vertex's score by a quarter of the claimed bound
    # (the logistic slope at 0 is half its bound, and a draw is charged
    # twice its score sensitivity), so a 4-fold bug stays within the claim.
    plant=_scaled_plan(logistic_simplex, "plan_logistic_simplex", "step_size", 8.0),
    bug="plan's step size scaled up 8-fold (event unchanged)",
)


# -- DPLogisticSimplex, mirror descent: the K output vertices -----------------

MD_DRAWS = 50


def _simplex_md(random_state):
    return DPLogisticSimplex(
        epsilon=EPSILON, delta=DELTA, solver="mirror_descent", max_iter=1,
        n_vertices=MD_DRAWS, refresh_every=1, fit_intercept=False, radius=1.0,
        classes=[-1.0, 1.0], random_state=random_state)


# The solver steps 32 times further than the accountant was told.  The
# canary moves its vertex's log weight by a quarter of the claimed bound (the
# logistic slope at 0 is half its bound, and each draw is charged twice its
# score sensitivity), and the 50 draws are charged as a worst-case
# composition; 8- and 16-fold bugs do not show reliably in 2,000 fits.
_plant_md_step = _scaled_plan(logistic_simplex, "plan_logistic_simplex",
                              "step_size", 32.0)


def _fit_md_keeping_draws(data, random_state):
    """Fit, and keep the output vertices on the estimator.

    ``coef_`` is those vertices' mean rescaled by the noisy Newton fit,
    whose sign and size at 50 rows are mostly noise; the draws themselves
    are accounted as if published (docs/privacy/dplogisticsimplex.md), so
    the audit may look at them directly.
    """
    solver = skdpopt.solvers.mirror_descent.vertex_sampling_mirror_descent
    drawn = []

    def keeping(*args, **kwargs):
        vertices = solver(*args, **kwargs)
        drawn.append(vertices)
        return vertices

    X, y = data
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(skdpopt.solvers.mirror_descent,
                      "vertex_sampling_mirror_descent", keeping)
        estimator = _simplex_md(random_state).fit(X, y)
    estimator.audit_vertices_ = drawn[0]
    return estimator


def _mean_first_coefficient(estimator):
    """Mean coefficient of feature 0 over the output vertices (radius 1):
    vertex 0 is +e_0, vertex n_features is -e_0."""
    vertices = estimator.audit_vertices_
    n_features = estimator.n_features_in_
    return (np.mean(vertices == 0) - np.mean(vertices == n_features))


SIMPLEX_MD = AuditCase(
    name="DPLogisticSimplex (mirror_descent)",
    release=f"one step, {MD_DRAWS} output vertices: their mean coefficient",
    fit=_fit_md_keeping_draws,
    datasets=_classification_pair,
    statistic=_mean_first_coefficient,
    claimed=_spent,
    plant=_plant_md_step,
    bug="plan's step size scaled up 32-fold (event unchanged)",
)


# -- DPMinimaxClassifier: the Laplace-noised group counts ---------------------

def _minimax(random_state):
    # max_iter=1 keeps the players' part short (one step, two draws); the
    # statistic is group_proportions_, the noisy counts, whose own share of
    # the budget is the claim.
    return DPMinimaxClassifier(
        solver="vertex_sampling", epsilon=EPSILON, delta=DELTA,
        count_budget_share=0.5, max_iter=1, min_group_size=1,
        classes=[-1.0, 1.0], groups=["a", "b"], random_state=random_state)


def _group_pair():
    # Enough rows that no noisy count falls below min_group_size.
    n_rows = 20 * N_ROWS
    X = np.zeros((n_rows, 1))
    y = np.where(np.arange(n_rows) % 2 == 0, 1.0, -1.0)
    groups_in = np.where(np.arange(n_rows) % 4 < 2, "a", "b")
    groups_out = groups_in.copy()
    groups_in[0], groups_out[0] = "a", "b"  # the canary changes group
    return (X, y, groups_in), (X, y, groups_out)


def _skipped_stage(plan, group_sizes, row_norm=None):
    return SimpleNamespace(proportions=group_sizes / group_sizes.sum(), n_steps=0,
                           n_draws=0, y_step=0.0, score=0.0, n_releases=0)


def _skipped_draws(problem, stage, rng):
    return WorstGroupResult(np.zeros(problem.X.shape[1]), 0.0,
                            np.full(problem.n_groups, 1.0 / problem.n_groups),
                            np.zeros(0))


def _fit_minimax(data, random_state):
    # The draws that follow the counts (their schedule, calibrated from the
    # counts, and the draws themselves) are skipped: the statistic does not
    # see them, and they cost most of the fit.
    X, y, groups = data
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(skdpopt.plans.minimax_vertex.MinimaxVertexPlan, "stage",
                      _skipped_stage)
        patch.setitem(skdpopt.minimax.SOLVERS, "vertex_sampling", _skipped_draws)
        return _minimax(random_state).fit(X, y, sensitive_features=groups)


MINIMAX = AuditCase(
    name="DPMinimaxClassifier",
    release="noisy group counts (group_proportions_)",
    fit=_fit_minimax,
    datasets=_group_pair,
    statistic=lambda est: est.group_proportions_[0],
    # privacy_spent_ reports the whole budget here (docs/privacy/dpminimax.md);
    # what the statistic sees is the counts' own share.
    claimed=lambda est: est.count_budget_share * est.epsilon,
    plant=_scaled_noise([skdpopt.solvers.groups], "laplace_noise", 0.25),
    bug="Laplace noise scaled down by 4",
)


# -- DPMinimaxClassifier (gda): one model step, its noisy gradient sum --------

def _minimax_gda(random_state):
    # One group (no counts) and one step: the coefficient is the projected
    # step from zero along the model's noisy clipped gradient sum, whose
    # only data-dependent term is the canary's (the other rows are zero).
    # clip_norm=0.5 sets C = CLIP_FACTOR * 0.5 below the canary's gradient
    # norm at w = 0 (|sigma(0)| x = 0.5), so the two labels move the sum by
    # its full 2 C (no intercept: C_w = C); a large radius keeps the
    # projection from cutting the noise.
    return DPMinimaxClassifier(
        solver="gda", epsilon=EPSILON, delta=DELTA, max_iter=1,
        fit_intercept=False, clip_norm=0.5, radius=1e3, classes=[-1.0, 1.0],
        random_state=random_state)


def _model_release_epsilon(estimator):
    """Epsilon of the model's one release, from the plan's event (the
    first leaf: the model's Gaussian mechanism; the second is the
    adversary's, which the statistic does not see)."""
    model_leaf = estimator.privacy_plan_.event.events[0]
    return privacy_spent(model_leaf, estimator.delta).epsilon


MINIMAX_GDA = AuditCase(
    name="DPMinimaxClassifier (gda)",
    release="one model step: coefficient = noisy clipped gradient sum",
    fit=_fit_xy(_minimax_gda),
    datasets=_classification_pair,
    statistic=lambda est: est.coef_[0, 0],
    claimed=_model_release_epsilon,
    # The model's release has half the zCDP budget (claim about 0.68), so
    # the bug must be larger than DP-SGD's for 2,000 fits to see it.
    plant=_scaled_plan(skdpopt.plans.minimax, "plan_minimax_gda", "noise_multiplier",
                       0.125),
    bug="plan's model noise multiplier scaled down by 8 (event unchanged)",
)


# -- DPSyntheticData: the measured marginals of two binary columns -----------

def _fit_synthetic(data, random_state):
    # One round: the warm start's 1-way measurements, one selection and one
    # measurement, each fitted into the model as it comes.  The final joint
    # estimation, post-processing of the same measurements that costs three
    # quarters of the fit, is skipped.
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(skdpopt.solvers.query_release, "joint_estimate",
                      lambda *args, **kwargs: None)
        return DPSyntheticData(epsilon=EPSILON, delta=DELTA, workload=1,
                               domain=[2, 2], max_iter=1,
                               random_state=random_state).fit(data)


def _column_pair():
    columns = np.column_stack([np.arange(N_ROWS) % 2, np.arange(N_ROWS) // 2 % 2])
    data_in, data_out = columns.copy(), columns.copy()
    data_in[0], data_out[0] = (1, 1), (0, 0)  # the canary moves both columns
    return data_in, data_out


SYNTHETIC = AuditCase(
    name="DPSyntheticData",
    release="the fitted distribution (histogram_): both columns' share of 1",
    fit=_fit_synthetic,
    datasets=_column_pair,
    statistic=lambda est: est.histogram_[1].sum() + est.histogram_[:, 1].sum(),
    claimed=_spent,
    # Selection and the fit's damping blunt a 4-fold bug (the statistic's
    # shift over its spread grows only from 0.25 to 0.65).
    plant=lambda monkeypatch: [
        _scaled_plan(skdpopt.synthetic, "plan_synthetic", field,
                     0.1)(monkeypatch)
        for field in ("one_way_noise_std", "round_noise_std")],
    bug="Gaussian noise scaled down by 10",
)


# -- DPSyntheticData: the private bounds of a numeric column ------------------

class _BoundsReleased(Exception):
    pass


def _fit_synthetic_bounds(data, random_state):
    # Column 0 gets its bounds privately, with preprocessor_epsilon of the
    # budget (column 1 is declared categorical).  The fit stops once they
    # are released: what follows is not what the statistic sees (and costs
    # most of the fit).
    estimator = DPSyntheticData(epsilon=2 * EPSILON, delta=DELTA,
                                preprocessor_epsilon=EPSILON, domain={1: 2},
                                random_state=random_state)
    released, plans = [], []
    plan_synthetic = skdpopt.synthetic.plan_synthetic  # maybe planted

    def planning(**kwargs):
        plans.append(plan_synthetic(**kwargs))
        return plans[-1]

    def release(name, low, high, n_bins):
        released.append(float(high))
        raise _BoundsReleased

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(skdpopt.synthetic, "plan_synthetic", planning)
        patch.setattr(skdpopt.synthetic._domain, "numeric_column", release)
        with pytest.raises(_BoundsReleased):
            estimator.fit(data)
    # The fit was withdrawn (it raised): keep what it released.
    estimator.upper_bound_, estimator.audit_plan_ = released[0], plans[0]
    return estimator


def _bounds_pair():
    # 100 rows: 76 at 10 and 23 at 100 besides the canary, at 18 (in) or 50
    # (out).  The median cell, [2^(13/4), 2^(14/4)) around 10, is the same
    # for both, and so is the upper bound's target rank (77.8 at this
    # budget).  In, the candidates from 19 to 45 are one count nearer it
    # than the three between the cell and 16; out, all are as near: the
    # draw of a candidate from 19 up (whose prior weight is low) is e^D
    # likelier in than out.
    n_rows = 2 * N_ROWS
    values = np.r_[0.0, np.full(76, 10.0), np.full(23, 100.0)]
    data = np.column_stack([values, np.arange(n_rows) % 2])
    data_in, data_out = data.copy(), data.copy()
    data_in[0, 0], data_out[0, 0] = 18.0, 50.0
    return data_in, data_out


def _plant_bounds(monkeypatch):
    """The draws use 8 times the score sensitivity the plan's event
    accounts for."""
    original = skdpopt.synthetic.plan_synthetic

    def broken(**kwargs):
        plan = original(**kwargs)
        draws = dataclasses.replace(
            plan.bounds, score_sensitivity=8.0 * plan.bounds.score_sensitivity)
        return dataclasses.replace(plan, bounds=draws)

    monkeypatch.setattr(skdpopt.synthetic, "plan_synthetic", broken)


SYNTHETIC_BOUNDS = AuditCase(
    name="DPSyntheticData (private bounds)",
    release="upper bound of a numeric column (domain_ edges)",
    fit=_fit_synthetic_bounds,
    datasets=_bounds_pair,
    statistic=lambda est: est.upper_bound_,
    # The upper bound is a function of two of the three draws (the median
    # cell and the upper rank), each 2D-DP: the claim is their sum.
    claimed=lambda est: 2 * 2 * est.audit_plan_.bounds.score_sensitivity,
    plant=_plant_bounds,
    bug="score sensitivity understated 8-fold",
    # The canary moves one draw's score by its sensitivity, on the
    # candidates between 1 and 2 only.
    fast_runs=4_000,
)


CASES = [SGD, SGD_POISSON, SGD_EXTREME, SGD_LOCKSTEP, LASSO, LASSO_BLOCK,
         SIMPLEX_FW, SIMPLEX_MD, MINIMAX, MINIMAX_GDA, SYNTHETIC, SYNTHETIC_BOUNDS]
