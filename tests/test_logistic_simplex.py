"""DPLogisticSimplex: privacy claims recomputed independently, sparsity,
dense/sparse agreement, probabilities, bad input."""

import inspect
import math
import re
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import minimize_scalar
from sklearn.datasets import make_classification

import skdpopt.logistic_simplex as logistic_simplex
import skdpopt.solvers.mirror_descent as mirror_descent
from skdpopt import DPLogisticSimplex, PrivacySpent, UtilityWarning
from skdpopt._base import LinearClassifierMixin
from skdpopt.accounting import (
    Composed,
    ExponentialMechanism,
    GaussianMechanism,
    LaplaceMechanism,
    Repeated,
)
from skdpopt.exceptions import PrivacyLeakWarning
from skdpopt.plans.logistic_simplex import (
    REFIT_STEPS,
    SGD_CLIP,
    SGD_FEATURE_BOUND,
    count_vertex_draws,
    mirror_descent_schedule,
    plan_logistic_simplex,
    theorem_steps,
)

dp_accounting = pytest.importorskip("dp_accounting")
from dp_accounting.pld import common  # noqa: E402
from dp_accounting.pld import privacy_loss_distribution as pld_lib  # noqa: E402


def zcdp_epsilon(rho, delta):
    """(epsilon, delta) from rho-zCDP, written out independently of skdpopt:
    the Renyi curve alpha * rho converted by Canonne, Kamath and Steinke
    (2020, Prop. 12), minimised over real alpha > 1."""
    def eps(alpha):
        return (alpha * rho + math.log((alpha - 1) / alpha)
                - (math.log(delta) + math.log(alpha)) / (alpha - 1))
    best = minimize_scalar(eps, bounds=(1.0 + 1e-9, 1e6), method="bounded",
                           options={"xatol": 1e-10})
    return best.fun


def pld_epsilon(epsilon0, count, delta, releases=()):
    """dp-accounting's PLD for ``count`` compositions of an epsilon0-DP
    mechanism (its dominating pair is randomised response), composed with
    Gaussian mechanisms: ``releases`` of (noise over sensitivity, count).
    The grid is pessimistic: its epsilon lies above the exact one by about
    1e-4 relative here, which bounds how far a sound claim can sit below
    it."""
    interval = 1e-5
    pld = pld_lib.from_privacy_parameters(
        common.DifferentialPrivacyParameters(epsilon0, 0.0),
        value_discretization_interval=interval).self_compose(count)
    for std, times in releases:
        gaussian = pld_lib.from_gaussian_mechanism(
            std, sensitivity=1.0, value_discretization_interval=interval)
        pld = pld.compose(gaussian.self_compose(times))
    return pld.get_epsilon_for_delta(delta)


def reference_epsilon(score_sensitivity, count, delta, releases=()):
    """The tightest of the independent bounds for ``count`` draws whose
    scores move by at most D, plus Gaussian releases (noise over L2
    sensitivity, count): each draw is D^2/2-zCDP (bounded range, and for
    the average of iterates the mixture argument of the privacy page) and
    2D-DP; each Gaussian release is 1/(2 m^2)-zCDP.  Composed by zCDP, or
    by dp-accounting's PLD."""
    D = score_sensitivity
    rho = count * D**2 / 2 + sum(times / (2 * m**2) for m, times in releases)
    bounds = [zcdp_epsilon(rho, delta), pld_epsilon(2 * D, count, delta, releases)]
    if not releases:
        bounds.append(2 * D * count)
    return min(bounds)


def recorded_releases(clf):
    """(noise over sensitivity, count) of every noisy statistic of a fit.

    Mirror descent records its statistics (the clip check, the class
    totals, the Newton statistics, the fit check) and their one
    multiplier; Frank-Wolfe has the clip check, the totals and the fit
    check, whose multipliers are their noise scales over the sensitivities
    derived here: 1 for the clip check's sum of shares in [0, 1], sqrt(2)
    in l2 (2 in l1) for the totals (one record moves two totals by 1),
    2 * bound for the fit check's sum of gains clipped to [-bound, bound]."""
    if hasattr(clf, "n_noisy_statistics_"):
        return [(clf.noise_multiplier_, clf.n_noisy_statistics_)]
    plan = clf.privacy_plan_
    pure = plan.fit_check.noise == "laplace"
    totals = plan.class_totals.noise_scale / (2.0 if pure else math.sqrt(2))
    check = plan.fit_check.noise_scale / (2 * plan.fit_check.bound)
    return [(plan.clip_check.noise_scale, 1), (totals, 1), (check, 1)]


def claimed_reference(clf, delta):
    """Epsilon recomputed from what the fit recorded: its draws and their
    score sensitivity, and its noisy statistics and their noise."""
    releases = recorded_releases(clf)
    if delta == 0:  # pure DP: 2 D per draw, 1 / m per Laplace statistic
        pure = 2 * clf.score_sensitivity_ * clf.n_draws_
        return pure + sum(times / m for m, times in releases)
    return reference_epsilon(clf.score_sensitivity_, clf.n_draws_, delta, releases)


@pytest.fixture(scope="module")
def sparse_binary():
    """Binary sparse features, 3 of 200 relevant."""
    rng = np.random.default_rng(0)
    n, d = 6000, 200
    X = (rng.random((n, d)) < 0.05).astype(float)
    X[:, :3] = rng.random((n, 3)) < 0.5
    logits = 2.0 * X[:, 0] - 2.0 * X[:, 1] + 1.5 * X[:, 2] - 0.75
    y = (rng.random(n) < 1 / (1 + np.exp(-logits))).astype(int)
    return sp.csr_matrix(X), y


@pytest.mark.parametrize("solver", ["mirror_descent", "frank_wolfe"])
@pytest.mark.parametrize("epsilon, delta", [(1.0, 1e-8), (4.0, 1e-6), (0.5, 0.0)])
def test_claim_is_never_below_an_independent_recomputation(sparse_binary, solver,
                                                           epsilon, delta):
    X, y = sparse_binary
    clf = DPLogisticSimplex(epsilon=epsilon, delta=delta, solver=solver,
                            random_state=0).fit(X, y)
    claimed = clf.privacy_spent_.epsilon
    reference = claimed_reference(clf, delta)
    assert claimed >= reference * (1 - 1e-4)
    assert claimed <= 1.02 * reference  # and the accountant is that tight
    assert 0.97 * epsilon <= claimed <= epsilon  # calibration wastes little
    assert clf.privacy_spent_.delta == delta
    assert clf.privacy_spent_.relation == "replace_one"


def test_recorded_draws_and_sensitivity_follow_from_the_run(sparse_binary):
    """n_draws_ is the plan's count and the sensitivity is 2 tau R b / B."""
    X, y = sparse_binary
    clf = DPLogisticSimplex(epsilon=2.0, delta=1e-8, radius=4.0, feature_bound=0.5,
                            solver="mirror_descent", random_state=0).fit(X, y)
    n = X.shape[0]
    batch = n // clf.n_iter_
    assert clf.score_sensitivity_ == pytest.approx(
        2 * clf.step_size_ * 4.0 * 0.5 / batch, rel=1e-12)
    assert clf.n_draws_ == count_vertex_draws(clf.n_iter_, clf.n_vertices_,
                                              clf.refresh_every_)
    # The clip check, the class totals, a gradient and a Hessian per Newton
    # step, the fit check.
    assert clf.n_noisy_statistics_ == 2 + 2 * REFIT_STEPS + 1
    # Never more than the paper's T K / q + q K + K.
    T, K, q = clf.n_iter_, clf.n_vertices_, clf.refresh_every_
    assert clf.n_draws_ <= T * K / q + q * K + K


def test_multiclass_composes_every_binary_fit():
    X, y = make_classification(n_samples=3000, n_features=20, n_informative=5,
                               n_classes=3, random_state=0)
    clf = DPLogisticSimplex(epsilon=2.0, delta=1e-8, feature_bound=3.0,
                            solver="mirror_descent", random_state=0).fit(X, y)
    per_problem = count_vertex_draws(clf.n_iter_, clf.n_vertices_,
                                     clf.refresh_every_)
    assert clf.n_draws_ == 3 * per_problem
    assert clf.coef_.shape == (3, 20) and clf.intercept_.shape == (3,)
    # The clip check, one release of the class totals for all problems,
    # each problem's Newton statistics, the fit check.
    assert clf.n_noisy_statistics_ == 2 + 3 * 2 * REFIT_STEPS + 1
    assert clf.privacy_spent_.epsilon >= claimed_reference(clf, 1e-8) * (1 - 1e-4)
    assert clf.privacy_spent_.epsilon <= 2.0


@pytest.mark.parametrize("constraint", ["l1_ball", "simplex"])
def test_coef_is_sparse_and_feasible(sparse_binary, constraint):
    X, y = sparse_binary
    for solver in ("mirror_descent", "sgd"):
        clf = DPLogisticSimplex(epsilon=3.0, delta=1e-8, constraint=constraint,
                                radius=5.0, solver=solver, random_state=1).fit(X, y)
        if solver == "mirror_descent":
            assert np.count_nonzero(clf.coef_) <= clf.n_vertices_
        # The coefficients lie in the polytope; the intercept is outside it.
        assert np.abs(clf.coef_).sum() <= 5.0 + 1e-9
        if constraint == "simplex":
            assert np.all(clf.coef_ >= 0)
    if constraint == "simplex":
        no_intercept = DPLogisticSimplex(epsilon=3.0, delta=1e-8, radius=5.0,
                                         constraint="simplex", fit_intercept=False,
                                         solver="mirror_descent",
                                         random_state=1).fit(X, y)
        assert np.all(no_intercept.coef_ >= 0)
        assert no_intercept.coef_.sum() <= 5.0 + 1e-9
        assert np.all(no_intercept.intercept_ == 0)


def test_learns_the_relevant_features(sparse_binary):
    X, y = sparse_binary
    X_train, y_train, X_test, y_test = X[:5000], y[:5000], X[5000:], y[5000:]
    clf = DPLogisticSimplex(epsilon=8.0, delta=1e-8, random_state=0).fit(
        X_train, y_train)
    # Class balance is about 0.5; the Bayes rule reaches about 0.75.
    assert clf.score(X_test, y_test) > 0.66
    # Vertices drawn uniformly would put 3/402 of the mass on the relevant
    # features; the fit puts a quarter or more there (the output is drawn
    # from the average of all iterates, early near-uniform ones included).
    coef = np.abs(clf.coef_.ravel())
    assert coef[:3].sum() > 0.25 * coef.sum()
    assert np.sign(clf.coef_[0, 0]) == 1 and np.sign(clf.coef_[0, 1]) == -1


def test_frank_wolfe_solver(sparse_binary):
    X, y = sparse_binary
    clf = DPLogisticSimplex(epsilon=3.0, delta=1e-8, solver="frank_wolfe",
                            random_state=0).fit(X[:5000], y[:5000])
    assert clf.score(X[5000:], y[5000:]) > 0.68
    assert np.count_nonzero(clf.coef_) <= clf.n_iter_


def test_no_privacy(sparse_binary):
    X, y = sparse_binary
    clf = DPLogisticSimplex(epsilon=np.inf, solver="mirror_descent",
                            random_state=0).fit(X, y)
    assert clf.privacy_spent_ == PrivacySpent(np.inf, 0.0)
    assert clf.n_iter_ == X.shape[0]  # one row per step, as the theorem says
    assert clf.score(X, y) > 0.7
    # "auto" without privacy: DP-SGD over the polytope, without noise.
    auto = DPLogisticSimplex(epsilon=np.inf, random_state=0).fit(X, y)
    assert auto.solver_ == "sgd" and auto.noise_multiplier_ == 0
    assert auto.privacy_spent_ == PrivacySpent(np.inf, 0.0)
    assert auto.score(X, y) > 0.7


def test_sparse_input_gives_the_dense_result(sparse_binary):
    X, y = sparse_binary
    X, y = X[:1500], y[:1500]
    for solver in ("mirror_descent", "frank_wolfe"):
        dense = DPLogisticSimplex(epsilon=3.0, delta=1e-8, solver=solver,
                                  random_state=0).fit(X.toarray(), y)
        for fmt in (sp.csr_matrix, sp.csc_matrix, sp.csr_array):
            sparse = DPLogisticSimplex(epsilon=3.0, delta=1e-8, solver=solver,
                                       random_state=0).fit(fmt(X), y)
            np.testing.assert_allclose(sparse.coef_, dense.coef_, atol=1e-12)
            np.testing.assert_allclose(sparse.intercept_, dense.intercept_,
                                       atol=1e-12)
            # Sparse and dense products sum in different orders.
            np.testing.assert_allclose(sparse.decision_function(fmt(X)),
                                       dense.decision_function(X.toarray()),
                                       atol=1e-12)


def test_random_state_reproduces_fit(sparse_binary):
    X, y = sparse_binary
    a = DPLogisticSimplex(random_state=3).fit(X, y)
    b = DPLogisticSimplex(random_state=3).fit(X, y)
    c = DPLogisticSimplex(random_state=4).fit(X, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    assert not np.array_equal(a.coef_, c.coef_)


@pytest.mark.parametrize("n_classes", [2, 3])
def test_probabilities_agree_with_the_decision(n_classes):
    X, y = make_classification(n_samples=1500, n_features=10, n_informative=4,
                               n_classes=n_classes, random_state=0)
    clf = DPLogisticSimplex(epsilon=np.inf, feature_bound=3.0,
                            random_state=0).fit(X, y)
    proba = clf.predict_proba(X)
    scores = clf.decision_function(X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_allclose(np.exp(clf.predict_log_proba(X)), proba)
    np.testing.assert_array_equal(clf.classes_[proba.argmax(axis=1)], clf.predict(X))
    if n_classes == 2:
        np.testing.assert_allclose(proba[:, 1], 1 / (1 + np.exp(-scores)))
        np.testing.assert_array_equal(clf.predict(X), clf.classes_[(scores > 0) * 1])
    else:
        np.testing.assert_array_equal(scores.argmax(axis=1), proba.argmax(axis=1))


def test_feature_scale_changes_nothing_about_privacy(sparse_binary):
    """Clipping to the public bound fixes the sensitivity."""
    X, y = sparse_binary
    for solver in ("mirror_descent", "sgd"):
        base = DPLogisticSimplex(solver=solver, random_state=0).fit(X, y)
        huge = DPLogisticSimplex(solver=solver, random_state=0).fit(X * 1e12, y)
        assert huge.privacy_plan_ == base.privacy_plan_
        assert huge.privacy_spent_ == base.privacy_spent_
        assert np.all(np.isfinite(huge.coef_))


@pytest.mark.parametrize("solver, bound", [("sgd", SGD_FEATURE_BOUND),
                                           ("mirror_descent", 1.0),
                                           ("frank_wolfe", 1.0)])
def test_default_feature_bound_follows_the_solver(solver, bound, monkeypatch):
    """feature_bound=None is 2 for DP-SGD (gradients clipped to SGD_CLIP
    bounds) and 1 for the vertex solvers; fit and predict clip to it, and
    an explicit bound is kept."""
    X, y = make_classification(n_samples=600, n_features=8, random_state=0)
    X = 2.5 * X  # values well beyond both bounds
    seen = []
    original = logistic_simplex.polytope_sgd_logistic

    def spy(problem, plan, rng, **kwargs):
        seen.append((problem.clip_norm, np.abs(problem.X).max()))
        return original(problem, plan, rng, **kwargs)

    monkeypatch.setattr(logistic_simplex, "polytope_sgd_logistic", spy)
    clf = DPLogisticSimplex(solver=solver, classes=[0, 1], random_state=0).fit(X, y)
    assert clf.feature_bound_ == bound
    if solver == "sgd":
        assert seen == [(SGD_CLIP * bound, bound)]
    assert 1.0 * SGD_CLIP * SGD_FEATURE_BOUND == 1.0  # the default clip norm
    clipped = np.clip(X, -bound, bound)
    np.testing.assert_array_equal(clf.decision_function(X),
                                  clf.decision_function(clipped))
    assert not np.array_equal(X, clipped)  # the test clips something
    explicit = DPLogisticSimplex(solver=solver, feature_bound=1.5, classes=[0, 1],
                                 random_state=0).fit(X, y)
    assert explicit.feature_bound_ == 1.5
    assert explicit.get_params()["feature_bound"] == 1.5
    # Every value clipped: the released clip check warns, naming the bound
    # the fit used.
    with pytest.warns(UtilityWarning, match=re.escape(f"[-{bound:g}, {bound:g}]")):
        DPLogisticSimplex(solver=solver, classes=[0, 1], random_state=0).fit(
            100.0 * np.sign(X), y)


def test_schedule_follows_theorem_when_the_budget_allows():
    m = 2 * 10**4
    log_m = math.log(m)
    # Large n eps: the theorem's T, and q, K from it.
    T, q, K = mirror_descent_schedule(10**7, m, 1.0, 1e-14)
    assert T == theorem_steps(10**7, m, 1.0, 1e-14)
    assert q == round(math.sqrt(T / log_m)) and K == round(math.sqrt(T * log_m))
    # Small n eps: fewer steps than the theorem's, same relations.
    T, q, K = mirror_descent_schedule(8000, m, 3.0, 1 / 8000**2)
    assert T < theorem_steps(8000, m, 3.0, 1 / 8000**2)
    assert K == max(1, round(math.sqrt(T * log_m)))
    assert mirror_descent_schedule(500, m, np.inf, 0.0)[0] == 500


def test_one_class_is_rejected():
    with pytest.raises(ValueError, match="class"):
        DPLogisticSimplex().fit(np.ones((10, 2)), np.zeros(10))


@pytest.mark.parametrize(
    "params, name",
    [
        ({"radius": 0.0}, "radius"),
        ({"radius": -1.0}, "radius"),
        ({"feature_bound": 0.0}, "feature_bound"),
        ({"feature_bound": -2.0}, "feature_bound"),
        ({"epsilon": 0.0}, "epsilon"),
        ({"delta": 1.0}, "delta"),
        ({"constraint": "l2_ball"}, "constraint"),
        ({"solver": "newton"}, "solver"),
        ({"n_vertices": 0}, "n_vertices"),
        ({"refresh_every": 0}, "refresh_every"),
        ({"max_iter": 10**6, "solver": "mirror_descent"}, "max_iter"),
    ],
)
def test_bad_parameters_name_themselves(sparse_binary, params, name):
    X, y = sparse_binary
    with pytest.raises(ValueError, match=name):
        DPLogisticSimplex(**params).fit(X[:500], y[:500])


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_non_finite_input_rejected(bad):
    X = np.ones((20, 3))
    X[4, 1] = bad
    with pytest.raises(ValueError):
        DPLogisticSimplex().fit(X, np.arange(20) % 2)


def test_verbose_prints_progress(sparse_binary, capsys):
    X, y = sparse_binary
    DPLogisticSimplex(epsilon=5.0, delta=1e-8, verbose=1, solver="mirror_descent",
                      random_state=0).fit(X, y)
    out = capsys.readouterr().out
    assert "-- Step" in out and "elapsed" in out
    DPLogisticSimplex(epsilon=5.0, delta=1e-8, verbose=1, solver="sgd",
                      random_state=0).fit(X, y)
    out = capsys.readouterr().out
    assert "-- Epoch" in out and "Elapsed" in out


@pytest.mark.parametrize("delta", [1e-8, 0.0])
def test_refit_noise_is_the_multiplier_times_the_derived_sensitivities(
        sparse_binary, monkeypatch, delta):
    """The noise of the intercept and scale fit, recomputed from the bounds
    of the privacy page: features b (score, 1) with |score| <= 1, so per row
    each gradient coordinate lies in [-b, b] and the Hessian entries
    (h_aa, h_ac, h_cc) in [0, b^2/4], [-b^2/4, b^2/4], [0, b^2/4]."""
    X, y = sparse_binary
    seen = []
    original = mirror_descent.noisy_newton_logistic

    def spy(Z, target, **kwargs):
        seen.append((Z, kwargs))
        return original(Z, target, **kwargs)

    monkeypatch.setattr(mirror_descent, "noisy_newton_logistic", spy)
    b = 0.5
    clf = DPLogisticSimplex(epsilon=1.0, delta=delta, feature_bound=b,
                            solver="mirror_descent",
                            random_state=0).fit(X * 3.0, y)  # clipped to b
    ((Z, kwargs),) = seen
    n, m = X.shape[0], clf.noise_multiplier_
    assert np.abs(Z).max() <= b
    ranges = np.array([b * b / 4, b * b / 2, b * b / 4]) / n
    if delta > 0:  # Gaussian: L2 sensitivities
        gradient, hessian = 2 * b * math.sqrt(2) / n, np.linalg.norm(ranges)
        assert kwargs["noise"] == "gaussian"
    else:  # Laplace: L1 sensitivities
        gradient, hessian = 2 * b * 2 / n, ranges.sum()
        assert kwargs["noise"] == "laplace"
    assert kwargs["gradient_noise"] == pytest.approx(m * gradient, rel=1e-12)
    assert kwargs["hessian_noise"] == pytest.approx(m * hessian, rel=1e-12)
    assert 2 + 2 * kwargs["n_steps"] + 1 == clf.n_noisy_statistics_
    assert 0.97 <= clf.privacy_spent_.epsilon <= 1.0


# ---------------------------------------------------------------------------
# The plan: public inputs only, its event recomputed, its guarantee reported.

def flatten(event, times=1):
    """(leaf, count) pairs of an event tree, walked here rather than with
    the library's ``leaves``."""
    if isinstance(event, Composed):
        return [pair for child in event.events for pair in flatten(child, times)]
    if isinstance(event, Repeated):
        return flatten(event.event, times * event.count)
    return [(event, times)]


@pytest.mark.parametrize("solver", ["mirror_descent", "frank_wolfe"])
@pytest.mark.parametrize("epsilon, delta", [(1.0, 1e-8), (0.5, 0.0)])
def test_spent_is_recomputed_from_the_plans_event(sparse_binary, solver, epsilon,
                                                  delta):
    """The plan's event tree, walked and accounted here (dp-accounting's PLD,
    the bounded-range zCDP closed form for the draws), gives the claim."""
    X, y = sparse_binary
    clf = DPLogisticSimplex(epsilon=epsilon, delta=delta, solver=solver,
                            classes=[0, 1], random_state=0).fit(X, y)
    totals = {}
    for leaf, count in flatten(clf.privacy_plan_.event):
        totals[leaf] = totals.get(leaf, 0) + count
    draws = {m: c for m, c in totals.items() if isinstance(m, ExponentialMechanism)}
    statistics = {m: c for m, c in totals.items() if m not in draws}
    ((draw, n_draws),) = draws.items()
    assert n_draws == clf.n_draws_
    releases = []
    for statistic, count in statistics.items():
        if delta == 0:
            assert isinstance(statistic, LaplaceMechanism)
            releases.append((1.0 / statistic.epsilon0, count))
        else:
            assert isinstance(statistic, GaussianMechanism)
            releases.append((statistic.noise_multiplier, count))
    # The clip check, the class totals, the Newton statistics (mirror
    # descent) and the fit check: one multiplier for mirror descent's, one
    # each for Frank-Wolfe's.
    if solver == "mirror_descent":
        assert [count for _, count in releases] == [2 + 2 * REFIT_STEPS + 1]
    else:
        assert sorted(count for _, count in releases) == [1, 1, 1]
    D = draw.score_sensitivity
    if delta == 0:  # pure DP: 2 D per draw, 1 / m per Laplace statistic
        reference = 2 * D * n_draws + sum(count / m for m, count in releases)
    else:
        reference = reference_epsilon(D, n_draws, delta, releases)
    claimed = clf.privacy_spent_.epsilon
    assert reference * (1 - 1e-4) <= claimed <= 1.02 * reference
    assert claimed == clf.privacy_plan_.spent().epsilon


def test_plan_is_made_from_public_quantities_only(sparse_binary):
    """The plan function takes no data: planning from the shape and the
    number of classes alone gives the plan the fit used."""
    parameters = inspect.signature(plan_logistic_simplex).parameters
    assert not {"X", "y", "sample_weight"} & set(parameters)
    X, y = sparse_binary
    for solver in ("mirror_descent", "frank_wolfe"):
        clf = DPLogisticSimplex(solver=solver, delta=1e-8, classes=[0, 1],
                                random_state=0).fit(X, y)
        params = clf.get_params()
        plan = plan_logistic_simplex(
            n_samples=X.shape[0], n_features=X.shape[1], n_problems=1,
            **{name: params[name] for name in parameters if name in params})
        assert plan == clf.privacy_plan_


def test_declared_classes_are_public():
    X, y = make_classification(n_samples=600, n_features=8, random_state=0)
    # A declared label that no row holds still gets its problem and row.
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        clf = DPLogisticSimplex(epsilon=1.0, delta=1e-6, classes=[0, 1, 2],
                                random_state=0).fit(X, y)
    np.testing.assert_array_equal(clf.classes_, [0, 1, 2])
    assert clf.coef_.shape == (3, 8)
    assert clf.privacy_plan_.n_problems == 3
    # Rows outside the declared set are refused, naming the parameter.
    with pytest.raises(ValueError, match="classes"):
        DPLogisticSimplex(classes=[0, 2]).fit(X, y)
    # Without a declaration the label set is read from y, with a warning.
    with pytest.warns(PrivacyLeakWarning, match="classes="):
        undeclared = DPLogisticSimplex(epsilon=1.0, delta=1e-6,
                                       random_state=0).fit(X, y)
    np.testing.assert_array_equal(undeclared.classes_, [0, 1])


def test_prediction_methods_are_the_shared_ones():
    for name in ("decision_function", "predict_proba", "predict_log_proba",
                 "predict"):
        owner = next(c for c in DPLogisticSimplex.__mro__ if name in vars(c))
        assert owner is LinearClassifierMixin


def test_polytope_sgd_spend_is_recomputed_with_its_class_releases(sparse_binary):
    """solver="sgd": dp-accounting composes the subsampled Gaussian steps
    (noise multiplier over the clip norm SGD_CLIP b), the clip check (a
    Gaussian of sensitivity 1: each row's clipped share lies in [0, 1]),
    the class totals (l2 sensitivity sqrt(2): one record moves two
    totals by 1), the calibration sums (sensitivity 1) and the fit check
    (sensitivity 2 bound); the claim lies between the optimistic and 1.15
    times the pessimistic estimate."""
    X, y = sparse_binary
    clf = DPLogisticSimplex(epsilon=1.0, delta=1e-8, solver="sgd", classes=[0, 1],
                            random_state=0).fit(X, y)
    plan = clf.privacy_plan_
    gaussians = [
        (plan.clip_check.noise_scale / 1.0, 1),
        (plan.class_totals.noise_scale / math.sqrt(2), 1),
        (plan.calibration_noise / 1.0, plan.calibration_steps * plan.n_problems),
        (plan.fit_check.noise_scale / (2 * plan.fit_check.bound), 1),
    ]

    def estimate(pessimistic):
        options = dict(value_discretization_interval=1e-4,
                       pessimistic_estimate=pessimistic, use_connect_dots=pessimistic)
        total = pld_lib.from_gaussian_mechanism(
            plan.noise_multiplier, sampling_prob=plan.sampling_rate,
            neighboring_relation=dp_accounting.NeighboringRelation.REPLACE_ONE,
            **options).self_compose(plan.n_steps)
        for multiplier, count in gaussians:
            total = total.compose(pld_lib.from_gaussian_mechanism(
                multiplier, **options).self_compose(count))
        return total.get_epsilon_for_delta(1e-8)

    claimed = clf.privacy_spent_.epsilon
    assert estimate(False) <= claimed <= 1.15 * estimate(True)
    assert 0.95 <= claimed <= 1.0
