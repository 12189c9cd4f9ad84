"""DPSGDRegressor and DPSGDClassifier: privacy claims, accuracy, bad input."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import make_classification, make_regression
from sklearn.linear_model import LinearRegression
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer

from skdpopt import DPSGDClassifier, DPSGDRegressor, PrivacyLedger, PrivacySpent
from skdpopt.exceptions import UtilityWarning
from skdpopt.plans.checks import FIT_CHECK_BOUND
from skdpopt.plans.sgd import LOCKSTEP_CLIP, plan_dpsgd

dp_accounting = pytest.importorskip("dp_accounting")
from dp_accounting.pld import privacy_loss_distribution as pld_lib  # noqa: E402

REPLACE_ONE = dp_accounting.NeighboringRelation.REPLACE_ONE


def peer_epsilon(noise_multiplier, rate, steps, delta, pessimistic=True):
    """dp-accounting's replace-one PLD epsilon for Poisson-subsampled DP-SGD.

    The pessimistic estimate is an upper bound on the true epsilon, the
    optimistic one (privacy buckets rounded down) a lower bound, both up to
    the peer's own numerics; a sound and tight claim lies between them.
    """
    # Full batch (rate 1) is the Gaussian mechanism with sensitivity 2 C.
    pld = pld_lib.from_gaussian_mechanism(
        noise_multiplier, sampling_prob=min(rate, 1.0),
        neighboring_relation=REPLACE_ONE, value_discretization_interval=1e-4,
        pessimistic_estimate=pessimistic, use_connect_dots=pessimistic)
    return pld.self_compose(steps).get_epsilon_for_delta(delta)


def assert_claim_matches_peer(claimed, noise_multiplier, rate, steps, delta):
    """Never below the peer's lower bound, at most 15% above its upper bound."""
    lower = peer_epsilon(noise_multiplier, rate, steps, delta, pessimistic=False)
    upper = peer_epsilon(noise_multiplier, rate, steps, delta, pessimistic=True)
    assert lower <= claimed <= 1.15 * upper


class AddedNoise:
    """The Gaussian noise a fit actually drew (through mechanisms.draw_noise):
    its scales and how many steps' worth of it (rows of n_params values)."""

    def __init__(self):
        self.draws = []

    def noise_multiplier(self, estimator):
        """Std of the steps' noise over the clip norm: one value for the fit."""
        scales = {scale for scale, _ in self.draws}
        assert len(scales) == 1, scales
        return scales.pop() / estimator.clip_norm_

    def steps(self, estimator):
        n_params = estimator.n_features_in_ + int(estimator.fit_intercept)
        values = sum(size for _, size in self.draws)
        assert values % n_params == 0
        return values // n_params


@pytest.fixture
def added_noise(monkeypatch):
    from skdpopt import mechanisms

    seen = AddedNoise()
    draw = mechanisms.draw_noise

    def observed(rng, distribution, scale, size):
        values = draw(rng, distribution, scale, size)
        if distribution == "normal":
            seen.draws.append((float(scale), int(np.size(values))))
        return values

    monkeypatch.setattr(mechanisms, "draw_noise", observed)
    return seen


@pytest.fixture(scope="module")
def regression_data():
    X, y, coef = make_regression(n_samples=4000, n_features=8, noise=5.0,
                                 coef=True, random_state=0)
    scale = np.abs(y).max()
    return X / 3.0, y / scale, coef / scale


@pytest.mark.parametrize("sampling", ["poisson", "full"])
def test_spent_epsilon_matches_peer_accountant(regression_data, sampling,
                                              added_noise):
    """The claim is at least dp-accounting's PLD of the noise the fit added
    and at most 15% above it."""
    X, y, _ = regression_data
    # A public target scale: the steps are the fit's only Gaussian noise
    # (the auto target's spend is recomputed in its own test).
    model = DPSGDRegressor(epsilon=1.0, delta=1e-5, batch_size=200, max_iter=2,
                           sampling=sampling, target_scale=1.0,
                           random_state=0).fit(X, y)
    rate = 1.0 if sampling == "full" else 200 / len(X)
    claimed = model.privacy_spent_.epsilon
    assert_claim_matches_peer(claimed, added_noise.noise_multiplier(model), rate,
                              added_noise.steps(model), 1e-5)
    # The claim never exceeds the request and calibration wastes little.
    assert 0.95 <= claimed <= 1.0
    assert model.privacy_spent_.delta == 1e-5
    assert model.privacy_spent_.relation == "replace_one"


@pytest.mark.parametrize("sampling", ["poisson", "full"])
def test_multiclass_budget_covers_the_classes_in_lockstep(added_noise, sampling):
    X, y = make_classification(n_samples=1500, n_features=6, n_informative=4,
                               n_classes=3, random_state=0)
    # The hinge loss without an intercept releases no class totals, no
    # calibration and no fit check: the steps are the whole fit (the class
    # releases' spend is recomputed in test_totals_and_calibration_are_in_the_spend).
    clf = DPSGDClassifier(epsilon=2.0, delta=1e-6, batch_size=150, max_iter=2,
                          loss="hinge", fit_intercept=False, sampling=sampling,
                          random_state=0).fit(X, y)
    assert clf.coef_.shape == (3, 6)
    assert clf.privacy_plan_.lockstep
    # Each step draws noise for the three problems at once (three rows of
    # n_params values), at sqrt(2) C: one Gaussian mechanism of that
    # sensitivity per step, not three.
    assert added_noise.steps(clf) == 3 * clf.t_
    multiplier = added_noise.noise_multiplier(clf) / LOCKSTEP_CLIP
    assert multiplier == pytest.approx(clf.noise_multiplier_, rel=1e-12)
    rate = 1.0 if sampling == "full" else 150 / 1500
    assert_claim_matches_peer(clf.privacy_spent_.epsilon, multiplier, rate,
                              clf.t_, 1e-6)
    assert clf.privacy_spent_.epsilon <= 2.0


def test_one_after_another_composes_the_problems():
    # Problems that do not run in lockstep (a Dask fit's) compose: K times
    # the steps, at a larger noise for the same budget.
    common = {"n_samples": 1500, "n_problems": 3, "epsilon": 2.0, "delta": 1e-6,
              "sampling": "poisson", "batch_size": 150, "max_iter": 2,
              "average": True}
    apart = plan_dpsgd(**common)
    together = plan_dpsgd(**common, lockstep=True)
    assert not apart.lockstep and apart.clip_scale == 1.0
    assert together.clip_scale == LOCKSTEP_CLIP
    assert_claim_matches_peer(apart.spent().epsilon, apart.noise_multiplier,
                              0.1, 3 * apart.n_steps, 1e-6)
    assert_claim_matches_peer(together.spent().epsilon,
                              together.noise_multiplier, 0.1, together.n_steps, 1e-6)
    assert apart.noise_multiplier > 1.5 * together.noise_multiplier


def test_accuracy_close_to_non_private(regression_data):
    X, y, _ = regression_data
    X_train, y_train, X_test, y_test = X[:3000], y[:3000], X[3000:], y[3000:]
    exact = LinearRegression().fit(X_train, y_train).score(X_test, y_test)
    private = DPSGDRegressor(epsilon=2.0, delta=1e-6, eta0=0.5, max_iter=10,
                             random_state=0).fit(X_train, y_train)
    assert private.score(X_test, y_test) > exact - 0.05


def test_no_privacy_means_no_noise(regression_data):
    X, y, _ = regression_data
    model = DPSGDRegressor(epsilon=np.inf, random_state=0).fit(X, y)
    assert model.noise_multiplier_ == 0.0
    assert model.privacy_spent_ == PrivacySpent(np.inf, 0.0)
    # Without noise two seeds differ only through the sampling.
    other = DPSGDRegressor(epsilon=np.inf, random_state=1).fit(X, y)
    np.testing.assert_allclose(model.coef_, other.coef_, atol=0.05)


def test_random_state_reproduces_fit(regression_data):
    X, y, _ = regression_data
    a = DPSGDRegressor(random_state=3).fit(X, y)
    b = DPSGDRegressor(random_state=3).fit(X, y)
    c = DPSGDRegressor(random_state=4).fit(X, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    assert not np.array_equal(a.coef_, c.coef_)


def test_sparse_input_gives_the_dense_result(regression_data):
    X, y, _ = regression_data
    X = X * (np.abs(X) > 0.5)  # make it worth storing sparsely
    dense = DPSGDRegressor(random_state=0).fit(X, y)
    for fmt in (sp.csr_matrix, sp.csc_matrix, sp.csr_array):
        sparse = DPSGDRegressor(random_state=0).fit(fmt(X), y)
        np.testing.assert_allclose(sparse.coef_, dense.coef_, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(sparse.predict(fmt(X)), dense.predict(X))


def test_feature_scale_changes_nothing_about_privacy(regression_data):
    """Clipping bounds sensitivity, so huge features neither break privacy nor
    overflow; the model of features that large is useless (its steps are
    clipped to a unit norm), and the fit check says so, whatever the
    overflow of its training predictions."""
    X, y, _ = regression_data
    base = DPSGDRegressor(random_state=0).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.warns(UtilityWarning, match="not clearly better"):
            huge = DPSGDRegressor(random_state=0).fit(X * 1e12, y)
        huge.predict(X * 1e12)
    assert huge.score(X * 1e12, y) < 0
    assert huge.noise_multiplier_ == base.noise_multiplier_
    assert huge.privacy_spent_ == base.privacy_spent_
    assert np.all(np.isfinite(huge.coef_))


@pytest.mark.parametrize("loss", ["squared_error", "huber", "epsilon_insensitive"])
def test_regression_losses_fit(regression_data, loss):
    X, y, _ = regression_data
    model = DPSGDRegressor(loss=loss, epsilon=np.inf, eta0=0.5, max_iter=10,
                           random_state=0).fit(X, y)
    assert model.score(X, y) > 0.9


@pytest.mark.parametrize("loss", ["log_loss", "hinge", "modified_huber"])
def test_classification_losses_fit(loss):
    X, y = make_classification(n_samples=3000, n_features=5, n_informative=3,
                               class_sep=2.0, random_state=1)
    clf = DPSGDClassifier(loss=loss, epsilon=1.0, delta=1e-6,
                          random_state=0).fit(X, y)
    assert clf.score(X, y) > 0.85
    if loss != "hinge":
        proba = clf.predict_proba(X)
        np.testing.assert_allclose(proba.sum(axis=1), 1.0)
        assert np.array_equal(clf.classes_[proba.argmax(axis=1)], clf.predict(X))
    else:
        assert not hasattr(clf, "predict_proba")


def test_single_pass_mode_runs_half_an_epoch(regression_data):
    X, y, _ = regression_data
    model = DPSGDRegressor(loss="epsilon_insensitive", sampling="single_pass",
                           batch_size=40, epsilon=np.inf, eta0=0.5,
                           random_state=0).fit(X, y)
    rate = 40 / len(X)
    assert model.t_ == int(np.ceil(np.log(2) / -np.log1p(-rate)))
    assert model.score(X, y) > 0.5


def test_pipeline_and_grid_search(regression_data):
    X, y, _ = regression_data
    pipe = make_pipeline(FunctionTransformer(lambda Z: Z / 2.0),
                         DPSGDRegressor(epsilon=1.0, delta=1e-6, random_state=0))
    search = GridSearchCV(pipe, {"dpsgdregressor__eta0": [0.05, 0.5]}, cv=3)
    with PrivacyLedger() as ledger:
        search.fit(X, y)
    # Every fit through the pipeline ran and spent: 2 settings x 3 folds,
    # and the refit, with the refit's eta0.
    assert len(ledger) == 7
    best = search.best_estimator_[-1]
    assert best.eta0 == search.best_params_["dpsgdregressor__eta0"]
    assert ledger.records[-1].event == best.privacy_plan_.event


def test_single_sample_fits():
    model = DPSGDRegressor(random_state=0).fit([[1.0, 2.0]], [3.0])
    assert model.predict([[1.0, 2.0]]).shape == (1,)


@pytest.mark.parametrize(
    "params, name",
    [
        ({"epsilon": 0.0}, "epsilon"),
        ({"epsilon": -1.0}, "epsilon"),
        ({"delta": 1.0}, "delta"),
        ({"delta": -0.1}, "delta"),
        ({"clip_norm": 0.0}, "clip_norm"),
        ({"batch_size": 0}, "batch_size"),
        ({"batch_size": 10_000}, "batch_size"),
        ({"sampling": "uniform"}, "sampling"),
    ],
)
def test_bad_parameters_name_themselves(regression_data, params, name):
    X, y, _ = regression_data
    with pytest.raises(ValueError, match=name):
        DPSGDRegressor(**params).fit(X, y)


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_non_finite_input_rejected(regression_data, bad):
    X, y, _ = regression_data
    X_bad, y_bad = X.copy(), y.copy()
    X_bad[0, 0] = bad
    y_bad[0] = bad
    with pytest.raises(ValueError):
        DPSGDRegressor().fit(X_bad, y)
    with pytest.raises(ValueError):
        DPSGDRegressor().fit(X, y_bad)


def test_delta_zero_is_refused_with_a_reason(regression_data):
    X, y, _ = regression_data
    with pytest.raises(ValueError, match="delta"):
        DPSGDRegressor(delta=0.0).fit(X, y)


def test_large_delta_warns(regression_data):
    X, y, _ = regression_data
    with pytest.warns(UserWarning, match="delta"):
        DPSGDRegressor(delta=0.01).fit(X, y)


def test_verbose_prints_one_line_block_per_epoch(regression_data, capsys):
    X, y, _ = regression_data
    DPSGDRegressor(max_iter=3, verbose=1, random_state=0).fit(X, y)
    out = capsys.readouterr().out
    assert out.count("-- Epoch") == 3
    # Progress shows the private iterate's norm, never a training loss.
    assert "Norm:" in out and "loss" not in out.lower()


def test_auto_clip_norm_is_in_the_plan_and_the_spend(regression_data,
                                                     added_noise):
    """clip_norm="auto" spends two exponential-mechanism draws (median cell
    and upper quantile of the per-example gradient norms) costing
    AUTO_BOUNDS_SHARE of rho_for(epsilon, delta), and the steps the rest;
    recomputed here with dp-accounting (the draws as randomised response
    of pure epsilon 2 D, their worst case)."""
    from skdpopt.accounting import ExponentialMechanism, leaves
    from skdpopt.accounting.zcdp import rho_for
    from skdpopt.plans.bounds import AUTO_BOUNDS_SHARE

    X, y, _ = regression_data
    kwargs = dict(epsilon=1.0, delta=1e-5, batch_size=200, max_iter=2,
                  target_scale=1.0, random_state=0)
    auto = DPSGDRegressor(clip_norm="auto", **kwargs).fit(X, y)
    # The noise the fit added, for the peer.
    noise_multiplier = added_noise.noise_multiplier(auto)
    steps_taken = added_noise.steps(auto)
    public = DPSGDRegressor(clip_norm=1.0, **kwargs).fit(X, y)
    D = np.sqrt(2.0 * AUTO_BOUNDS_SHARE * rho_for(1.0, 1e-5) / 2)
    draws = [(leaf, count) for leaf, count in leaves(auto.privacy_plan_.event)
             if isinstance(leaf, ExponentialMechanism)]
    assert len(draws) == 1 and draws[0][1] == 2
    assert draws[0][0].score_sensitivity == pytest.approx(D)
    assert auto.privacy_plan_.bounds_share == AUTO_BOUNDS_SHARE
    # A number is free: no draw, and less noise for the same epsilon.
    assert public.privacy_plan_.clip_draws is None
    assert not any(isinstance(leaf, ExponentialMechanism)
                   for leaf, _ in leaves(public.privacy_plan_.event))
    assert auto.noise_multiplier_ > public.noise_multiplier_
    claimed = auto.privacy_spent_.epsilon
    assert 0.95 <= claimed <= 1.0
    # Peer bounds: the steps alone (optimistic) below the claim; the steps
    # with the draws as randomised response (pessimistic) not far above.
    rate = 200 / len(X)
    lower = peer_epsilon(noise_multiplier, rate, steps_taken, 1e-5,
                         pessimistic=False)
    steps = pld_lib.from_gaussian_mechanism(
        noise_multiplier, sampling_prob=rate,
        neighboring_relation=REPLACE_ONE, value_discretization_interval=1e-4,
        pessimistic_estimate=True, use_connect_dots=True).self_compose(steps_taken)
    e = 2 * D
    log_p, log_q = -np.logaddexp(0, -e), -np.logaddexp(0, e)
    rr = pld_lib.from_two_probability_mass_functions(
        {0: log_p, 1: log_q}, {0: log_q, 1: log_p}, pessimistic_estimate=True)
    upper = steps.compose(rr.self_compose(2)).get_epsilon_for_delta(1e-5)
    assert lower <= claimed <= 1.15 * upper
    # The released clip norm is a grid candidate near the gradient norms'
    # 0.9 quantile at the start, |y_i| ||(x_i, 1)||.
    norms = np.abs(y) * np.sqrt((X**2).sum(1) + 1)
    assert np.quantile(norms, 0.5) <= auto.clip_norm_ <= 2 * norms.max()


def test_auto_target_scale_is_in_the_plan_and_makes_units_irrelevant(
        regression_data):
    """target_scale="auto" (the default) spends nine releases on the
    target's location and scale (two anchoring draws of score sensitivity
    ANCHOR_FACTOR D, three of D and the scale's two of 2 D on the grid of
    private bounds, two noisy clipped sums of noise multipliers 1 / D and
    1 / (2 D)):
    AUTO_BOUNDS_SHARE of rho_for(epsilon, delta) when that is enough for
    the draws to centre the target, more for fewer rows (at most
    MAX_TARGET_SHARE).  The targets in dollars (times 3,000, shifted by
    50,000) then fit about as well as in their own units with a public
    scale of 1, which leaves the dollar model far off."""
    from skdpopt.accounting import ExponentialMechanism, GaussianMechanism, leaves
    from skdpopt.accounting.zcdp import rho_for
    from skdpopt.plans.bounds import AUTO_BOUNDS_SHARE, median_cell_is_reliable
    from skdpopt.plans.checks import REGRESSION_CHECK_SHARE
    from skdpopt.plans.sgd import MAX_TARGET_SHARE, plan_dpsgd
    from skdpopt.plans.targets import ANCHOR_FACTOR, N_RELEASES

    X, y, _ = regression_data
    dollars = 50_000 + 3000 * y
    kwargs = dict(epsilon=1.0, delta=1e-5, random_state=0)
    model = DPSGDRegressor(**kwargs).fit(X, dollars)
    rho = rho_for(1.0, 1e-5)
    released = [(leaf, count) for leaf, count in leaves(model.privacy_plan_.event)
                if not leaf.__class__.__name__.startswith("Subsampled")]
    D = model.privacy_plan_.target_draws.score_sensitivity
    anchor = ExponentialMechanism(ANCHOR_FACTOR * D)
    draw = ExponentialMechanism(D)
    first, second = GaussianMechanism(1 / D), GaussianMechanism(1 / (2 * D))
    # leaves() merges the runs of one mechanism that follow each other.
    assert [(type(m).__name__, c) for m, c in released] == [
        ("ExponentialMechanism", 1), ("ExponentialMechanism", 2),
        ("GaussianMechanism", 1), ("ExponentialMechanism", 1),
        ("ExponentialMechanism", 1), ("GaussianMechanism", 1),
        ("ExponentialMechanism", 2), ("GaussianMechanism", 3)]
    # The last is the fit check's three releases, on REGRESSION_CHECK_SHARE
    # of rho together.
    check = model.privacy_plan_.fit_check
    assert [released[7]] == leaves(check.event)
    assert 3 / (2 * released[7][0].noise_multiplier**2) == pytest.approx(
        REGRESSION_CHECK_SHARE * rho)
    assert released[0][0] == anchor and released[3][0] == anchor
    assert [released[k][0] for k in (1, 4)] == [draw] * 2
    assert released[6][0].score_sensitivity == pytest.approx(2 * D)
    assert released[2][0] == first
    assert released[5][0].noise_multiplier == pytest.approx(second.noise_multiplier)
    # Units of D^2 / 2: 2 ANCHOR_FACTOR^2 + 3 draws + 1 + 4 for the sums +
    # 2 x 4 for the scale's draws.
    assert D == pytest.approx(np.sqrt(2 * AUTO_BOUNDS_SHARE * rho / N_RELEASES))
    assert median_cell_is_reliable(len(y), D)
    assert model.privacy_plan_.clip_draws is None
    assert 0.95 <= model.privacy_spent_.epsilon <= 1.0
    # With 1,000 rows 5% is not enough: the share grows until the draws are
    # reliable; with 300 it stops at MAX_TARGET_SHARE, and the target is not
    # centred (two draws of the scale of |y|).
    def plan(n):
        return plan_dpsgd(n_samples=n, n_problems=1, epsilon=1.0, delta=1e-5,
                          sampling="poisson", batch_size="auto", max_iter=5,
                          average=True, auto_target=True)

    small = plan(1000)
    assert AUTO_BOUNDS_SHARE < small.bounds_share < MAX_TARGET_SHARE
    assert median_cell_is_reliable(
        1000, small.target_draws.score_sensitivity * (1 + 1e-9))
    assert plan(300).bounds_share == MAX_TARGET_SHARE
    assert not plan(300).target_draws.centre
    assert small.target_draws.centre
    # The location is near the targets' mean (the noise of the second sum is
    # 2 r z / n, r the window: about 0.01 standard deviations here), the
    # scale a grid candidate near the 0.99 quantile of |y - location|.
    assert abs(model.target_location_ - dollars.mean()) < 0.1 * dollars.std()
    top = np.quantile(np.abs(dollars - dollars.mean()), 0.99)
    assert top / 2 <= model.target_scale_ <= 2 * top
    unit = DPSGDRegressor(target_scale=1.0, **kwargs)
    r2_dollars = model.score(X, dollars)
    assert r2_dollars > unit.fit(X, y).score(X, y) - 0.05
    assert unit.fit(X, dollars).score(X, dollars) < r2_dollars - 0.3


def test_auto_target_spend_is_recomputed_by_a_peer(regression_data):
    """The target's nine releases and the steps, recomputed with
    dp-accounting: the steps alone (optimistic PLD) below the claim; the
    steps with the draws as randomised response of pure epsilon 2 D (their
    worst case) and the Gaussian sums (pessimistic PLDs) not far above."""
    from skdpopt.accounting import (
        ExponentialMechanism,
        GaussianMechanism,
        SubsampledGaussianMechanism,
        leaves,
    )

    X, y, _ = regression_data
    model = DPSGDRegressor(epsilon=1.0, delta=1e-5, batch_size=200, max_iter=2,
                           random_state=0).fit(X, 50 + 10 * y)
    claimed = model.privacy_spent_.epsilon
    rate = 200 / len(X)
    total = None
    for leaf, count in leaves(model.privacy_plan_.event):
        if isinstance(leaf, SubsampledGaussianMechanism):
            pld = pld_lib.from_gaussian_mechanism(
                leaf.noise_multiplier, sampling_prob=rate,
                neighboring_relation=REPLACE_ONE,
                value_discretization_interval=1e-4, pessimistic_estimate=True,
                use_connect_dots=True)
        elif isinstance(leaf, GaussianMechanism):
            # Sensitivity 1 in units of the noise multiplier.
            pld = pld_lib.from_gaussian_mechanism(
                leaf.noise_multiplier, value_discretization_interval=1e-4,
                pessimistic_estimate=True)
        else:
            assert isinstance(leaf, ExponentialMechanism)
            e = 2 * leaf.score_sensitivity
            log_p, log_q = -np.logaddexp(0, -e), -np.logaddexp(0, e)
            pld = pld_lib.from_two_probability_mass_functions(
                {0: log_p, 1: log_q}, {0: log_q, 1: log_p},
                pessimistic_estimate=True)
        pld = pld.self_compose(count)
        total = pld if total is None else total.compose(pld)
    upper = total.get_epsilon_for_delta(1e-5)
    lower = peer_epsilon(model.noise_multiplier_, rate, model.t_, 1e-5,
                         pessimistic=False)
    assert lower <= claimed <= 1.15 * upper
    assert 0.95 <= claimed <= 1.0


def test_a_shifted_target_fits_as_well_as_the_original(regression_data):
    """Centring: the model of y + 100 is the model of y with its intercept
    moved by 100, up to the noise, at epsilon = inf (where scaling without
    centring lost 0.13 of R^2) and at epsilon = 1."""
    X, y, _ = regression_data
    for epsilon in (np.inf, 1.0):
        kwargs = dict(epsilon=epsilon, delta=1e-5, random_state=0)
        base = DPSGDRegressor(**kwargs).fit(X, y).score(X, y)
        shifted = DPSGDRegressor(**kwargs).fit(X, y + 100).score(X, y + 100)
        assert shifted > base - 0.02


def test_huber_width_stays_in_the_targets_units(regression_data):
    """The target scale changes the targets, not the loss: with targets
    times 1,000 and loss_epsilon times 1,000, the Huber fit is the same up
    to the factor (without noise, the same draws of rows)."""
    X, y, _ = regression_data
    kwargs = dict(loss="huber", epsilon=np.inf, random_state=0)
    small = DPSGDRegressor(loss_epsilon=0.1, **kwargs).fit(X, y)
    large = DPSGDRegressor(loss_epsilon=100.0, **kwargs).fit(X, 1000 * y)
    assert large.target_scale_ == pytest.approx(1000 * small.target_scale_,
                                                rel=0.2)
    assert large.score(X, 1000 * y) == pytest.approx(small.score(X, y), abs=0.02)


def test_noise_far_above_any_signal_warns_naming_the_levers(regression_data):

    X, y, _ = regression_data
    with pytest.warns(UtilityWarning, match="more epsilon, more rows"):
        DPSGDRegressor(epsilon=1e-4, delta=1e-5, random_state=0).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UtilityWarning)
        DPSGDRegressor(epsilon=1.0, delta=1e-5, random_state=0).fit(X, y)


# ---------------------------------------------------------------------------
# Imbalanced classes: class totals, the calibrated intercept, class and
# sample weights.


@pytest.fixture(scope="module")
def imbalanced():
    """5% positives from a logistic model with signal in two features."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20_000, 4))
    logits = 1.5 * X[:, 0] - X[:, 1] - 3.6
    y = (rng.random(20_000) < 1 / (1 + np.exp(-logits))).astype(int)
    return X, y


def test_totals_and_calibration_are_in_the_spend(imbalanced):
    """dp-accounting composes the steps, the class totals (a Gaussian of
    l2 sensitivity sqrt(2): one record moves two totals by 1), the
    calibration sums (each a Gaussian of sensitivity 1: a record's term
    lies in [0, 1]) and the fit check (a Gaussian of sensitivity 2 bound:
    a record's gain lies in [-bound, bound]); the claim lies between the
    optimistic and 1.15 times the pessimistic estimate."""
    X, y = imbalanced
    clf = DPSGDClassifier(epsilon=1.0, delta=1e-8, batch_size=500, max_iter=2,
                          classes=[0, 1], random_state=0).fit(X, y)
    plan = clf.privacy_plan_
    totals_multiplier = plan.class_totals.noise_scale / np.sqrt(2)
    check_multiplier = plan.fit_check.noise_scale / (2 * FIT_CHECK_BOUND)
    releases = plan.calibration_steps * plan.n_problems
    assert releases == 3

    def estimate(pessimistic):
        steps = pld_lib.from_gaussian_mechanism(
            clf.noise_multiplier_, sampling_prob=500 / len(X),
            neighboring_relation=REPLACE_ONE, value_discretization_interval=1e-4,
            pessimistic_estimate=pessimistic,
            use_connect_dots=pessimistic).self_compose(clf.t_)
        for std, count in ((totals_multiplier, 1), (plan.calibration_noise, releases),
                           (check_multiplier, 1)):
            gaussian = pld_lib.from_gaussian_mechanism(
                std, value_discretization_interval=1e-4,
                pessimistic_estimate=pessimistic, use_connect_dots=pessimistic)
            steps = steps.compose(gaussian.self_compose(count))
        return steps.get_epsilon_for_delta(1e-8)

    claimed = clf.privacy_spent_.epsilon
    assert estimate(False) <= claimed <= 1.15 * estimate(True)
    assert 0.95 <= claimed <= 1.0


def test_calibrated_intercept_gives_the_base_rate(imbalanced):
    """The mean predicted probability on the training rows is the base
    rate up to the released quantities' noise: the calibration solves
    sum_i p_i = T for the released positive total T, from released sums.
    Its error in mean probability is about (noise of T + noise of the last
    sum) / n; four standard deviations of that, plus 0.002 for three
    fixed-point steps on spread scores (tests/solvers/test_classes.py
    measures about 0.0005 from an intercept 3 off)."""
    X, y = imbalanced
    for epsilon in (1.0, np.inf):
        clf = DPSGDClassifier(epsilon=epsilon, delta=1e-8, classes=[0, 1],
                              random_state=0).fit(X, y)
        plan = clf.privacy_plan_
        spread = np.hypot(plan.class_totals.noise_scale, plan.calibration_noise)
        margin = 4 * spread / len(y) + 0.002
        assert abs(clf.predict_proba(X)[:, 1].mean() - y.mean()) <= margin
    # Without the calibration (and with the intercept started at 0), DP-SGD's
    # clipped and averaged fit puts the mean far below the base rate.
    assert y.mean() > 0.04


def test_class_weight_acts_as_the_weight_of_its_rows(imbalanced):
    """Without noise, class_weight={0: 1, 1: 3} and sample weights of 3 on
    the positives (bound 3) fit the same model: both divide the rows'
    weights by 3 and scale the steps back."""
    X, y = imbalanced
    X, y = X[:3000], y[:3000]
    by_class = DPSGDClassifier(epsilon=np.inf, class_weight={0: 1, 1: 3},
                               classes=[0, 1], random_state=0).fit(X, y)
    by_row = DPSGDClassifier(epsilon=np.inf, sample_weight_bound=3.0,
                             classes=[0, 1], random_state=0).fit(
        X, y, sample_weight=np.where(y == 1, 3.0, 1.0))
    np.testing.assert_allclose(by_class.coef_, by_row.coef_, rtol=1e-10)
    np.testing.assert_allclose(by_class.intercept_, by_row.intercept_, rtol=1e-10)


def test_balanced_weights_come_from_the_released_totals(imbalanced):
    """Without noise the released totals are the counts, and "balanced" is
    scikit-learn's n / (n_classes * counts)."""
    from sklearn.utils.class_weight import compute_class_weight

    X, y = imbalanced
    X, y = X[:3000], y[:3000]
    weights = compute_class_weight("balanced", classes=np.array([0, 1]), y=y)
    balanced = DPSGDClassifier(epsilon=np.inf, class_weight="balanced",
                               classes=[0, 1], random_state=0).fit(X, y)
    explicit = DPSGDClassifier(epsilon=np.inf, class_weight=dict(enumerate(weights)),
                               classes=[0, 1], random_state=0).fit(X, y)
    np.testing.assert_allclose(balanced.coef_, explicit.coef_, rtol=1e-10)
    # Balanced weights predict the rare class far more often.
    plain = DPSGDClassifier(epsilon=np.inf, classes=[0, 1],
                            random_state=0).fit(X, y)
    assert balanced.predict(X).mean() > 3 * plain.predict(X).mean()


def test_auto_step_is_set_by_the_released_totals_at_no_cost(imbalanced):
    """eta0="auto" plans the base step and scales it per problem from the
    released class totals and the steps' public noise ratio
    (post-processing): the plan and the spend are those of eta0=0.5, and
    with the same seed the fit is exactly the fit of a fixed step:
    AUTO_ETA0 on 3% positives (below STEP_SHARES[0]), STEP_GROWTH
    times it on a balanced label (above STEP_SHARES[1]) where the noise
    ratio is below NOISE_RATIOS[0], and AUTO_ETA0 again on that label
    where the ratio is above NOISE_RATIOS[1].  The released shares lie
    within a few hundredths of the true ones (noise std under 20 rows of
    20,000 at epsilon 0.05 and above), far from the ramp's ends."""
    from skdpopt._diagnostics import noisy_sum_ratio
    from skdpopt.plans.classes import (
        AUTO_ETA0,
        NOISE_RATIOS,
        STEP_GROWTH,
        STEP_SHARES,
    )

    X, y = imbalanced
    score = X[:, 0] + np.random.default_rng(1).normal(size=len(y))
    rare, balanced = (score > 2.6).astype(int), (score > 0).astype(int)
    assert rare.mean() < STEP_SHARES[0] - 0.01
    assert balanced.mean() > STEP_SHARES[1] + 0.02
    cases = ((rare, 3.0, AUTO_ETA0), (balanced, 3.0, STEP_GROWTH * AUTO_ETA0),
             (balanced, 0.02, AUTO_ETA0))
    for labels, epsilon, step in cases:
        def fit(eta0, labels=labels, epsilon=epsilon):
            return DPSGDClassifier(eta0=eta0, epsilon=epsilon, delta=1e-9,
                                   classes=[0, 1], random_state=0).fit(X, labels)

        auto, fixed, base = fit("auto"), fit(step), fit(AUTO_ETA0)
        ratio = noisy_sum_ratio(
            noise_multiplier=auto.noise_multiplier_, n_steps=auto.t_,
            expected_batch=auto.privacy_plan_.sampling_rate * len(y), n_params=5)
        assert ratio < NOISE_RATIOS[0] if epsilon == 3.0 else ratio > NOISE_RATIOS[1]
        np.testing.assert_array_equal(auto.coef_, fixed.coef_)
        np.testing.assert_array_equal(auto.intercept_, fixed.intercept_)
        assert auto.privacy_plan_ == base.privacy_plan_
        assert auto.privacy_spent_ == base.privacy_spent_


def test_unit_sample_weights_change_nothing(imbalanced):
    X, y = imbalanced
    X, y = X[:3000], y[:3000]
    plain = DPSGDClassifier(classes=[0, 1], random_state=0).fit(X, y)
    ones = DPSGDClassifier(classes=[0, 1], random_state=0).fit(
        X, y, sample_weight=[1.0] * len(y))
    np.testing.assert_array_equal(plain.coef_, ones.coef_)
    assert plain.privacy_plan_ == ones.privacy_plan_


def test_sample_weights_above_their_public_bound_are_refused(imbalanced):
    X, y = imbalanced
    X, y = X[:500], y[:500]
    weights = np.ones(len(y))
    weights[7] = 1.5
    with pytest.raises(ValueError, match="sample_weight_bound=1.0"):
        DPSGDClassifier(classes=[0, 1]).fit(X, y, sample_weight=weights)
    weights[7] = -0.5
    with pytest.raises(ValueError, match="sample_weight"):
        DPSGDClassifier(classes=[0, 1]).fit(X, y, sample_weight=weights)
    # A bound that covers them: accepted, and the weights are not written to.
    weights[7] = 10.0
    given = weights.copy()
    clf = DPSGDClassifier(sample_weight_bound=10.0, classes=[0, 1],
                          random_state=0).fit(X, y, sample_weight=given)
    np.testing.assert_array_equal(given, weights)
    # The noise grows with the bound: the steps' noise over the clip norm
    # is the same, their standard deviation ten times the unweighted one.
    unweighted = DPSGDClassifier(classes=[0, 1], random_state=0).fit(X, y)
    assert clf.noise_multiplier_ == pytest.approx(unweighted.noise_multiplier_)
    assert clf.privacy_plan_.class_totals.noise_scale == pytest.approx(
        10 * unweighted.privacy_plan_.class_totals.noise_scale)


def test_too_few_rows_to_centre_warns_at_the_callers_line():
    """300 rows at epsilon = 0.5: even MAX_TARGET_SHARE cannot centre the
    targets (a public condition), so the fit scales |y| only and says so,
    at this line, naming the levers and no private value."""

    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    y = X[:, 0] + 5.0
    with pytest.warns(UtilityWarning, match="not centred") as caught:
        model = DPSGDRegressor(epsilon=0.5, random_state=0).fit(X, y)
    assert model.target_location_ == 0.0
    assert not model.privacy_plan_.target_draws.centre
    for record in caught:
        assert record.filename == __file__
        assert f"{model.target_scale_:g}" not in str(record.message)


@pytest.mark.filterwarnings("ignore::skdpopt.exceptions.UtilityWarning")
def test_without_intercept_the_target_is_scaled_not_centred(regression_data):
    """fit_intercept=False fits y as it is (scikit-learn's model y = Xw):
    the plan releases only the scale (two draws, no sums), intercept_ and
    target_location_ are 0, and no warning says the budget failed to
    centre it."""
    import warnings

    from skdpopt.accounting import GaussianMechanism, leaves

    X, y, _ = regression_data
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = DPSGDRegressor(fit_intercept=False, epsilon=1.0, delta=1e-5,
                               random_state=0).fit(X, y + 5.0)
    assert not any(issubclass(w.category, UtilityWarning)
                   and "not centred" in str(w.message) for w in caught)
    draws = model.privacy_plan_.target_draws
    assert not draws.centre
    assert not any(isinstance(leaf, GaussianMechanism)
                   for leaf, _ in leaves(draws.event))
    assert model.target_location_ == 0.0 and model.intercept_[0] == 0.0
