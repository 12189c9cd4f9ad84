"""The classes of a one-vs-rest DP-SGD fit in lockstep, under one clip."""

from dataclasses import replace
from functools import partial

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import make_classification

from skdpopt import DPLogisticSimplex, DPSGDClassifier
from skdpopt.accounting import EpsilonDeltaEvent
from skdpopt.geometry import project_polytope
from skdpopt.losses import Hinge, LogLoss
from skdpopt.plans.sgd import LOCKSTEP_CLIP, DPSGDPlan
from skdpopt.solvers.lockstep_sgd import (
    LockstepProblem,
    LockstepRows,
    clip_rows,
    lockstep_is_possible,
    lockstep_sgd,
    row_bounds,
)
from skdpopt.solvers.noisy_sgd import noisy_sgd
from skdpopt.solvers.problems import LinearProblem

pytestmark = pytest.mark.filterwarnings("ignore::skdpopt.exceptions.UtilityWarning")


def _plan(n_steps=4, rate=1.0, noise=0.0, average=None, lockstep=True):
    return DPSGDPlan(np.inf, 0.0, EpsilonDeltaEvent(np.inf, 0.0),
                     sampling_rate=rate, n_steps=n_steps, n_epochs=1,
                     n_problems=3, noise_multiplier=noise, lockstep=lockstep,
                     average_start=average, learning_rate="constant", eta0=0.5)


def _targets(y, k):
    return [np.where(y == c, 1.0, -1.0) for c in range(k)]


def test_clip_rows_bounds_each_row_and_keeps_those_within():
    rng = np.random.default_rng(0)
    residuals = rng.normal(size=(200, 5)) * 10.0 ** rng.uniform(-3, 3, (200, 1))
    residuals[0] = [np.inf, -np.inf, np.nan, 1.0, 0.0]
    residuals[1] = np.nan
    bounds = rng.uniform(0.0, 2.0, 200)
    bounds[2] = 0.0
    bounds[3] = np.finfo(np.float64).max
    before = residuals.copy()
    clipped = clip_rows(residuals, bounds)
    norms = np.linalg.norm(clipped, axis=1)
    assert np.all(np.isfinite(clipped))
    assert np.all(norms <= bounds + 1e-12 * np.minimum(bounds, 1e300))
    assert np.array_equal(clipped[1], np.zeros(5))
    assert np.array_equal(clipped[2], np.zeros(5))
    # A row within its bound is unchanged; one beyond it keeps its direction.
    finite = np.all(np.isfinite(before), axis=1)
    inside = finite & (np.linalg.norm(before, axis=1) <= bounds)
    assert inside.sum() > 10
    np.testing.assert_array_equal(clipped[inside], before[inside])
    outside = finite & ~inside & (bounds > 0)
    cosine = np.sum(clipped[outside] * before[outside], axis=1) / (
        norms[outside] * np.linalg.norm(before[outside], axis=1))
    np.testing.assert_allclose(cosine, 1.0, rtol=1e-12)
    np.testing.assert_allclose(norms[outside], bounds[outside], rtol=1e-12)


def test_row_bounds_survive_overflowing_rows():
    X = np.array([[3.0, 4.0], [1e300, 1e300], [1.7e308, 1.7e308], [0.0, 0.0]])
    bounds = row_bounds(X, 2.0, fit_intercept=False)
    np.testing.assert_allclose(bounds[0], 2.0 / 5.0)
    assert bounds[1] == pytest.approx(2.0 / (np.sqrt(2.0) * 1e300))
    assert bounds[2] == 0.0 and bounds[3] == 0.0
    assert row_bounds(X[3:], 2.0, fit_intercept=True)[0] == 2.0


def test_each_rows_joint_gradient_is_within_the_bound():
    # One row's contribution to the K x (d + 1) sum, at any iterate.
    X, y = make_classification(n_samples=40, n_features=5, n_classes=3,
                               n_informative=3, random_state=0)
    X[0] *= 1e6
    problems = [LockstepProblem(t, LogLoss()) for t in _targets(y, 3)]
    rows = LockstepRows(X * 7.0, problems, bound=0.8, fit_intercept=True)
    rng = np.random.default_rng(1)
    for _ in range(20):
        coef = rng.normal(size=(3, 5)) * 10.0 ** rng.uniform(-2, 2)
        intercept = rng.normal(size=3)
        for i in range(len(y)):
            g, s = rows.gradient_sums(coef, intercept, np.array([i]))
            assert np.linalg.norm(np.column_stack([g, s])) <= 0.8 * (1 + 1e-12)


def test_without_noise_or_clip_it_runs_the_problems_it_runs_alone():
    # A clip no row reaches and no noise: each problem's walk is the one
    # noisy_sgd takes on it alone (averaged iterates included).
    X, y = make_classification(n_samples=300, n_features=6, n_classes=3,
                               n_informative=4, random_state=0)
    targets = _targets(y, 3)
    plan = _plan(n_steps=6, average=2)
    together = lockstep_sgd(X, [LockstepProblem(t, LogLoss(), step_scale=s,
                                                intercept_init=b)
                                for t, s, b in zip(targets, (1.0, 0.5, 2.0),
                                                   (0.1, -0.2, 0.0), strict=True)],
                            plan, np.random.default_rng(0), clip_norm=1e6,
                            alpha=1e-3)
    for t, s, b, result in zip(targets, (1.0, 0.5, 2.0), (0.1, -0.2, 0.0),
                               together, strict=True):
        alone = noisy_sgd(LinearProblem(X, t, True, loss=LogLoss(), clip_norm=1e6,
                                        alpha=1e-3, intercept_init=b),
                          replace(plan, lockstep=False, eta0=plan.eta0 * s),
                          np.random.default_rng(0))
        np.testing.assert_allclose(result.coef, alone.coef, rtol=1e-10)
        assert result.intercept == pytest.approx(alone.intercept, rel=1e-10)


@pytest.mark.parametrize("rate", [1.0, 0.3])
def test_sparse_and_float32_rows_give_the_dense_fit(rate):
    X, y = make_classification(n_samples=200, n_features=8, n_classes=4,
                               n_informative=5, random_state=1)
    X[X < 0.3] = 0.0
    problems = [LockstepProblem(t, Hinge()) for t in _targets(y, 4)]
    plan = _plan(n_steps=5, rate=rate, noise=1.0)

    def fit(rows):
        return lockstep_sgd(rows, problems, plan, np.random.default_rng(3),
                            clip_norm=0.5, radius=2.0)

    dense = fit(X)
    for other in (fit(sp.csr_matrix(X)), fit(X.astype(np.float32))):
        for a, b in zip(dense, other, strict=True):
            np.testing.assert_allclose(a.coef, b.coef, rtol=1e-5, atol=1e-9)
            assert a.intercept == pytest.approx(b.intercept, rel=1e-5, abs=1e-9)
    for result in dense:
        assert np.linalg.norm(result.coef) <= 2.0 * (1 + 1e-12)


def test_the_projection_keeps_each_problem_on_the_polytope():
    X, y = make_classification(n_samples=300, n_features=6, n_classes=3,
                               n_informative=4, random_state=0)
    problems = [LockstepProblem(t, LogLoss()) for t in _targets(y, 3)]
    results = lockstep_sgd(X, problems, _plan(n_steps=8, noise=2.0),
                           np.random.default_rng(0), clip_norm=1.0,
                           projection=partial(project_polytope, radius=0.3))
    assert all(np.abs(r.coef).sum() <= 0.3 * (1 + 1e-9) for r in results)


def test_multiclass_simplex_sgd_runs_in_lockstep():
    X, y = make_classification(n_samples=600, n_features=5, n_classes=3,
                               n_informative=4, n_redundant=0, random_state=0)
    clf = DPLogisticSimplex(solver="sgd", radius=2.0, classes=[0, 1, 2],
                            random_state=0).fit(X, y)
    assert clf.privacy_plan_.lockstep and clf.coef_.shape == (3, 5)
    assert np.all(np.abs(clf.coef_).sum(axis=1) <= 2.0 * (1 + 1e-9))


def test_an_extreme_row_leaves_the_fit_finite():
    X, y = make_classification(n_samples=100, n_features=3, n_classes=3,
                               n_informative=3, n_redundant=0, random_state=0)
    X[0] = 1e300
    problems = [LockstepProblem(t, LogLoss()) for t in _targets(y, 3)]
    results = lockstep_sgd(X, problems, _plan(n_steps=3, noise=1.0),
                           np.random.default_rng(0), clip_norm=1.0)
    assert all(np.all(np.isfinite(r.coef)) and np.isfinite(r.intercept)
               for r in results)


def test_multiclass_fits_in_memory_run_in_lockstep():
    X, y = make_classification(n_samples=600, n_features=5, n_classes=3,
                               n_informative=4, n_redundant=0, random_state=0)
    assert lockstep_is_possible(X, 3) and lockstep_is_possible(sp.csr_matrix(X), 3)
    assert not lockstep_is_possible(X, 1)
    clf = DPSGDClassifier(epsilon=1.0, delta=1e-6, classes=[0, 1, 2],
                          class_weight="balanced", random_state=0)
    clf.fit(X, y, sample_weight=np.full(len(y), 0.5))
    assert clf.privacy_plan_.lockstep
    assert clf.privacy_plan_.clip_scale == LOCKSTEP_CLIP
    assert clf.coef_.shape == (3, 5)
    binary = DPSGDClassifier(epsilon=1.0, delta=1e-6, classes=[0, 1],
                             random_state=0).fit(X, np.minimum(y, 1))
    assert not binary.privacy_plan_.lockstep


def test_verbose_prints_each_epoch(capsys):
    X, y = make_classification(n_samples=300, n_features=4, n_classes=3,
                               n_informative=3, n_redundant=0, random_state=0)
    DPSGDClassifier(epsilon=1.0, delta=1e-6, max_iter=3, classes=[0, 1, 2],
                    verbose=1, random_state=0).fit(X, y)
    assert capsys.readouterr().out.count("-- Epoch") == 3
