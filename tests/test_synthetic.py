"""DPSyntheticData: fit, sample, errors, accounting and bad input."""

import dp_accounting
import numpy as np
import pandas as pd
import pytest
from dp_accounting import dp_event
from dp_accounting import pld as dpa_pld
from sklearn.model_selection import GridSearchCV

from skdpopt import DPSyntheticData, PrivacyLedger, UtilityWarning


def correlated_table(n=4000, seed=0):
    """Three categorical columns where c depends on a and b, plus one
    independent column: the 3-way marginal carries real structure."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 3, n)
    b = rng.integers(0, 4, n)
    c = (a + b + (rng.random(n) < 0.1)) % 3
    d = rng.integers(0, 2, n)
    return np.column_stack([a, b, c, d])


DOMAIN = [3, 4, 3, 2]


def test_fit_sample_shapes_and_reproducibility():
    X = correlated_table()
    gen = DPSyntheticData(epsilon=1.0, domain=DOMAIN, random_state=0).fit(X)
    assert gen.histogram_.shape == (3, 4, 3, 2)
    assert np.isclose(gen.histogram_.sum(), 1.0)
    S = gen.sample(random_state=1)
    assert S.shape == X.shape
    assert set(np.unique(S[:, 1])) <= set(range(4))
    again = DPSyntheticData(epsilon=1.0, domain=DOMAIN, random_state=0).fit(X)
    np.testing.assert_array_equal(gen.histogram_, again.histogram_)
    np.testing.assert_array_equal(S, again.sample(random_state=1))
    # The default sampler is systematic: the root's cells (in C order)
    # get n p rounded through one offset, and column 0 leads the root
    # (the tree's nodes are sorted), so its counts are within 1 of n p.
    counts = np.bincount(S[:, 0].astype(int), minlength=3)
    assert np.abs(counts - len(S) * gen.marginal([0])).max() < 1.0
    assert gen.sample(7, random_state=1, method="iid").shape == (7, 4)
    with pytest.raises(ValueError, match="method"):
        gen.sample(7, method="rounded")


def test_learns_the_three_way_structure_beyond_independence():
    # At epsilon = 10 on 4000 rows the measurement noise per cell is about
    # 1e-3, far below the 3-way signal: the fit must beat the product of
    # the true 1-way marginals (which misses c's dependence on a and b).
    X = correlated_table()
    gen = DPSyntheticData(epsilon=10.0, domain=DOMAIN, random_state=0).fit(X)
    errors = gen.query_errors(X)
    three_way = [i for i, m in enumerate(gen.workload_) if m == (0, 1, 2)][0]
    independent = np.ones((3, 4, 3))
    for axis, k in enumerate([3, 4, 3]):
        p = np.bincount(X[:, axis], minlength=k) / len(X)
        shape = [1, 1, 1]
        shape[axis] = k
        independent = independent * p.reshape(shape)
    real = np.zeros((3, 4, 3))
    np.add.at(real, (X[:, 0], X[:, 1], X[:, 2]), 1.0 / len(X))
    assert errors[three_way] < 0.5 * np.abs(independent - real).sum()


def test_no_privacy_recovers_marginals_nearly_exactly():
    X = correlated_table()
    gen = DPSyntheticData(epsilon=np.inf, domain=DOMAIN, random_state=0).fit(X)
    assert gen.query_errors(X).max() < 0.02
    assert gen.privacy_spent_.epsilon == np.inf


def test_error_shrinks_with_epsilon():
    X = correlated_table()
    scores = [
        np.median([DPSyntheticData(epsilon=e, domain=DOMAIN, random_state=s)
                   .fit(X).score(X) for s in range(3)])
        for e in (0.1, 1.0, 10.0)
    ]
    assert scores[0] < scores[1] < scores[2]


def _rdp_bounded_range_epsilon(sigmas_and_counts, selections, delta):
    """Independent (epsilon, delta) of Gaussian mechanisms plus
    bounded-range selections: Renyi DP adds up (Gaussian: a / (2 sigma^2);
    an epsilon0-bounded-range draw is epsilon0^2 / 8 zCDP, Cesar and Rogers
    2021), then the conversion of Canonne, Kamath and Steinke 2020."""
    orders = np.concatenate([np.linspace(1.01, 10, 500), np.arange(10, 2000)])
    rdp = np.zeros_like(orders)
    for sigma, count in sigmas_and_counts:
        rdp += count * orders / (2 * sigma**2)
    epsilon0, count = selections
    rdp += count * orders * epsilon0**2 / 8
    eps = (rdp + np.log((orders - 1) / orders)
           - (np.log(delta) + np.log(orders)) / (orders - 1))
    return float(eps.min())


def test_spent_epsilon_recomputed_independently():
    """Recompute the fit's epsilon from its recorded noise and selections,
    without skdpopt's accountant: dp-accounting's PLD (selections as
    randomized response, the worst case of a pure-DP draw) and a Renyi
    bound written here.  Both are sound, so the claim must be at least the
    smaller one (up to the PLD's discretisation), and calibration must
    have used the budget."""
    X = correlated_table()
    n = len(X)
    delta = 1e-6
    gen = DPSyntheticData(epsilon=1.0, delta=delta, domain=DOMAIN,
                          random_state=0).fit(X)
    claim = gen.privacy_spent_.epsilon
    assert 0.97 <= claim <= 1.0
    plan = gen.privacy_plan_
    # The plan's noise is what the fit adds: replace-one moves two cells of
    # a normalised marginal by 1/n each.
    sensitivity = np.sqrt(2.0) / n
    assert np.isclose(gen.noise_std_, plan.round_noise_multiplier * sensitivity)
    round_sigma = plan.round_noise_multiplier
    one_way_sigma = plan.one_way_noise_multiplier
    n_one_way = len(DOMAIN)
    assert plan.n_one_way == n_one_way and plan.bounds is None
    epsilon0 = gen.selection_epsilon_
    rr = 2.0 / (1.0 + np.exp(epsilon0))  # binary randomized response at epsilon0
    events = dp_event.ComposedDpEvent([
        dp_event.SelfComposedDpEvent(
            dp_event.GaussianDpEvent(2 * one_way_sigma), n_one_way),
        dp_event.SelfComposedDpEvent(
            dp_event.GaussianDpEvent(2 * round_sigma), gen.n_iter_),
        dp_event.SelfComposedDpEvent(
            dp_event.RandomizedResponseDpEvent(rr, 2), gen.n_iter_),
    ])
    # dp-accounting's replace-one Gaussian assumes a sensitivity of 2 for a
    # unit noise multiplier, hence the factor 2.
    accountant = dpa_pld.PLDAccountant(
        neighboring_relation=dp_accounting.NeighboringRelation.REPLACE_ONE,
        value_discretization_interval=1e-4)
    accountant.compose(events)
    pld_eps = accountant.get_epsilon(delta)
    rdp_eps = _rdp_bounded_range_epsilon(
        [(one_way_sigma, n_one_way), (round_sigma, gen.n_iter_)],
        (epsilon0, gen.n_iter_), delta)
    assert claim >= min(pld_eps, rdp_eps) - 1e-3


def test_dataframe_roundtrip_with_categories_and_numeric():
    rng = np.random.default_rng(0)
    n = 3000
    df = pd.DataFrame({
        "colour": rng.choice(["red", "green", "blue"], n),
        "size": rng.choice(np.array(["S", "M", "L", None], dtype=object), n),
        "weight": rng.normal(50, 10, n),
    })
    gen = DPSyntheticData(
        epsilon=2.0,
        domain={"colour": ["red", "green", "blue"], "size": ["S", "M", "L", np.nan]},
        bounds={"weight": (0, 100)},
        n_bins=5,
        random_state=0,
    ).fit(df)
    S = gen.sample(100, random_state=0)
    assert isinstance(S, pd.DataFrame)
    assert list(S.columns) == ["colour", "size", "weight"]
    assert isinstance(S["colour"].dtype, pd.CategoricalDtype)
    assert set(S["colour"].cat.categories) == {"red", "green", "blue"}
    assert S["weight"].between(0, 100).all()
    assert np.all(gen.feature_names_in_ == ["colour", "size", "weight"])
    assert gen.query_errors(df).shape == (len(gen.workload_),)


def test_numeric_without_bounds_gets_private_bounds():
    rng = np.random.default_rng(0)
    X = rng.normal(10, 2, size=(2000, 3))
    gen = DPSyntheticData(epsilon=1.0, n_bins=4, random_state=0).fit(X)
    # The share of the budget that makes the median cell reliable for 2000
    # rows: the bounds are released around the data (the 1% and 99%
    # quantiles are 5.3 and 14.7; the ranks move inwards by at most
    # MAX_TAIL), within a few candidates of the grid (2^(1/4) apart).
    draws = gen.privacy_plan_.bounds
    assert draws.n_columns == 3 and not draws.lost
    for column in gen.domain_:
        low, high = column.edges[[0, -1]]
        assert 2.0 <= low <= 10.0 <= high <= 32.0
    assert 0.97 <= gen.privacy_spent_.epsilon <= 1.0
    # Declared bounds skip the draws; the rest is calibrated the same way.
    with_bounds = DPSyntheticData(epsilon=1.0, n_bins=4, random_state=0,
                                  bounds=[(-4, 4)] * 3).fit(X)
    assert list(with_bounds.domain_[0].edges) == [-4, -2, 0, 2, 4]
    assert with_bounds.privacy_spent_.epsilon <= 1.0


def test_bounds_draws_spend_the_declared_share():
    from skdpopt.accounting import Accountant, ExponentialMechanism

    rng = np.random.default_rng(0)
    X = rng.normal(size=(500, 3))
    with pytest.warns(UtilityWarning, match="bounds="):  # 500 rows: coarse
        gen = DPSyntheticData(epsilon=1.0, preprocessor_epsilon=0.2, delta=1e-9,
                              random_state=0).fit(X)
    draws = gen.privacy_plan_.bounds
    assert draws.n_columns == 3 and draws.event.count == 9
    score = draws.score_sensitivity
    spent = Accountant().compose(ExponentialMechanism(score), 9).epsilon(1e-9)
    assert 0.98 * 0.2 <= spent <= 0.2


def test_workload_as_list_and_as_matrix():
    X = correlated_table()
    gen = DPSyntheticData(epsilon=1.0, domain=DOMAIN, workload=[(0, 2), (1,)],
                          random_state=0).fit(X)
    assert gen.workload_ == [(0, 2), (1,)]
    assert gen.query_errors(X).shape == (2,)
    matrix = np.zeros((2, 72))
    matrix[0, :36] = 1.0  # first half of the flattened domain: a = 0 or 1
    matrix[1, ::2] = 1.0  # d = 0
    gen = DPSyntheticData(epsilon=np.inf, domain=DOMAIN, workload=matrix,
                          random_state=0).fit(X)
    assert gen.query_errors(X).max() < 0.01


def test_grid_search_over_rounds():
    X = correlated_table(1000)
    with PrivacyLedger() as ledger:
        search = GridSearchCV(DPSyntheticData(domain=DOMAIN, random_state=0),
                              {"max_iter": [2, 4]}, cv=2).fit(X)
    # Every fit ran and spent: 2 settings x 2 folds, and the refit.
    assert [r.estimator for r in ledger.records] == ["DPSyntheticData"] * 5
    scores = search.cv_results_["mean_test_score"]
    assert np.all(np.isfinite(scores)) and np.all(scores < 0)  # minus errors
    assert search.best_estimator_.n_iter_ == search.best_params_["max_iter"]


@pytest.mark.parametrize(
    "X, kwargs, match",
    [
        (np.zeros((0, 3)), {}, "0 sample"),
        (np.zeros((1, 3)), {"domain": [2, 2, 2]}, "1 sample"),
        (np.zeros((10, 1)), {"domain": [2]}, "1 feature"),
        (np.array([[0, 1], [1, 5]]), {"domain": [2, 2]}, "not among its declared"),
        (np.array([["a", "b"], ["b", "a"]], dtype=object), {}, "declare its"),
        (np.array([[0.0, np.nan], [1, 1]]), {"domain": [2, 2]}, "missing"),
        (np.zeros((10, 2)), {"domain": [1, 2]}, "single declared value"),
        (np.zeros((10, 8)), {"domain": [10] * 8, "max_model_size": 50},
         "max_model_size"),
        (np.zeros((10, 3)), {"domain": [10] * 3, "max_model_size": 500,
                             "workload": np.zeros((1, 1000))},
         "explicit query matrix"),
        (np.zeros((10, 2)), {"domain": [2, 2], "delta": 0.0}, "delta"),
    ],
)
def test_bad_input(X, kwargs, match):
    with pytest.raises(ValueError, match=match):
        DPSyntheticData(**kwargs).fit(X)


def test_size_limit_checked_before_reading_values():
    # Too large a model fails even with values that would also fail.
    X = np.full((10, 8), 99)
    with pytest.raises(ValueError, match="max_model_size=50"):
        DPSyntheticData(domain=[10] * 8, max_model_size=50).fit(X)


def test_census_scale_domain_is_held_as_a_graphical_model(capsys):
    """16 columns of 10 codes: a 1e16-cell domain.  The fit keeps its
    junction tree within max_model_size, answers any marginal, samples,
    and reports each round without printing data."""
    rng = np.random.default_rng(0)
    n, d = 3000, 16
    X = rng.integers(0, 10, size=(n, d))
    X[:, 1] = (X[:, 0] + (rng.random(n) < 0.1)) % 10  # column 1 follows 0
    gen = DPSyntheticData(epsilon=3.0, domain=[10] * d, workload=2,
                          max_model_size=20_000, random_state=0,
                          verbose=1).fit(X)
    assert gen.model_.cells <= 20_000
    pair = gen.marginal([1, 0])
    assert pair.shape == (10, 10) and np.isclose(pair.sum(), 1.0)
    # The dependence is learnt: most mass on the diagonal (0.9 in the data,
    # 0.1 for independent columns).
    assert np.trace(pair) > 0.5
    assert gen.sample(7, random_state=0).shape == (7, d)
    with pytest.raises(AttributeError, match="marginal"):
        gen.histogram_  # noqa: B018
    out = capsys.readouterr().out
    assert out.count("round") == gen.n_iter_
    assert "measured columns" in out


def test_dense_histogram_is_the_one_clique_model():
    # An explicit query matrix makes the model one clique over every
    # column: its tables are the histogram.
    X = correlated_table()
    matrix = np.zeros((1, 72))
    matrix[0, ::2] = 1.0
    gen = DPSyntheticData(epsilon=1.0, domain=DOMAIN, workload=matrix,
                          random_state=0).fit(X)
    assert gen.model_.tree.nodes == [(0, 1, 2, 3)]
    assert gen.model_.cells == 72
    np.testing.assert_allclose(gen.marginal([0, 1]), gen.histogram_.sum(axis=(2, 3)))


@pytest.mark.parametrize("value, dtype", [(1e200, np.float64), (1e300, np.float64),
                                          (3e19, np.float32)])
def test_one_extreme_record_leaves_everything_finite(value, dtype):
    # Numeric columns without bounds: the extreme record meets the private
    # bounds draw and the binning; neither may overflow.
    X = np.random.default_rng(0).normal(size=(500, 3)).astype(dtype)
    X[0, 0] = value
    gen = DPSyntheticData(epsilon=1.0, n_bins=4, random_state=0).fit(X)
    assert all(np.all(np.isfinite(c.edges)) for c in gen.domain_)
    assert np.all(np.isfinite(gen.histogram_))
    assert np.all(np.isfinite(gen.sample(50, random_state=0)))
    assert np.isfinite(gen.score(X))
    assert gen.privacy_spent_.epsilon <= 1.0


def test_categorical_column_without_domain_is_refused():
    df = pd.DataFrame({"a": ["x", "y"] * 10, "b": [0.0, 1.0] * 10})
    with pytest.raises(ValueError, match="declare its categories"):
        DPSyntheticData().fit(df)
