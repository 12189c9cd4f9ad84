"""DPStandardScaler and DPMinMaxScaler: accuracy, spend, ledger, pandas."""

import logging
import warnings

import numpy as np
import pytest

from skdpopt import DPMinMaxScaler, DPStandardScaler, PrivacyLedger
from skdpopt.accounting import GaussianMechanism, LaplaceMechanism, leaves

logging.getLogger("absl").setLevel(logging.ERROR)


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    n = 20000
    return np.column_stack([rng.normal(50, 10, n), rng.lognormal(8, 0.5, n),
                            rng.normal(-3, 0.5, n)])


def test_standard_scaler_is_close_with_public_bounds(data):
    bounds = ([0, 0, -10], [100, 20000, 5])
    scaler = DPStandardScaler(epsilon=1.0, delta=1e-6, bounds=bounds,
                              random_state=0).fit(data)
    assert scaler.privacy_plan_.bounds is None
    low, high = np.array(bounds[0]), np.array(bounds[1])
    half = (high - low) / 2
    clipped = np.clip(data, low, high)
    # The mean's noise: std z1 * 2 sqrt(d) / n in units of half the range;
    # 5 standard deviations.
    z1, z2 = scaler.privacy_plan_.noise_multipliers
    n, d = data.shape
    mean_tol = 5 * z1 * 2 * np.sqrt(d) / n * half
    np.testing.assert_array_less(np.abs(scaler.mean_ - clipped.mean(0)), mean_tol)
    # The variance in units of half^2: noise on E[u^2] plus 2|m| times the
    # mean's noise, each at 5 standard deviations.
    var_tol = 5 * (z2 * np.sqrt(d) / n + 2 * z1 * 2 * np.sqrt(d) / n) * half**2
    np.testing.assert_array_less(np.abs(scaler.var_ - clipped.var(0)), var_tol)


def test_standard_scaler_with_private_bounds_standardises(data):
    scaler = DPStandardScaler(epsilon=1.0, delta=1e-6, random_state=1).fit(data)
    Z = scaler.transform(data)
    # Clipped at about the 1% and 99% ranks, then noisy: the transformed
    # columns are centred and about unit scale.
    assert np.all(np.abs(Z.mean(0)) < 0.1)
    assert np.all((Z.std(0) > 0.8) & (Z.std(0) < 1.3))
    # transform clips to the bounds first: the inverse gives back the
    # clipped values.
    low, high = scaler.bounds_
    np.testing.assert_allclose(scaler.inverse_transform(Z),
                               np.clip(data, low, high), rtol=1e-9)


def test_standard_scaler_output_is_bounded_where_the_bounds_fail(data):
    """With far too little budget the private bounds and moments are
    noise, but the output stays within public limits: the values are
    clipped to the released bounds and no column is divided by less than
    the noise level of its variance (never by an arbitrary 1)."""
    scaler = DPStandardScaler(epsilon=0.01, delta=1e-6,
                              random_state=0).fit(data[:200])
    low, high = scaler.bounds_
    noise = scaler.privacy_plan_.noise_multipliers[1] * np.sqrt(3) / 200
    floor = (high - low) / 2 * np.sqrt(noise)
    assert np.all(scaler.scale_ >= floor * (1 - 1e-12))
    Z = scaler.transform(np.vstack([data, 1e12 * data[:5], -1e12 * data[:5]]))
    # |x - mean| <= |x - centre| + |centre - mean| <= 2 * half-width.
    assert np.all(np.abs(Z) <= 2 * (high - low) / 2 / floor * (1 + 1e-9))


def test_minmax_scaler_with_public_bounds_is_free_and_reads_nothing(data):
    scaler = DPMinMaxScaler(bounds=(0, [100, 30000, 1])).fit(data)
    assert scaler.privacy_spent_.epsilon == 0.0
    assert not leaves(scaler.privacy_plan_.event)
    np.testing.assert_array_equal(scaler.data_min_, [0, 0, 0])
    Z = scaler.transform(data[:5])
    np.testing.assert_allclose(Z[:, 0], data[:5, 0] / 100)
    np.testing.assert_allclose(scaler.inverse_transform(Z), data[:5])


def test_minmax_scaler_private_bounds_cover_the_data(data):
    scaler = DPMinMaxScaler(epsilon=1.0, delta=1e-6, random_state=0,
                            clip=True).fit(data)
    Z = scaler.transform(data)
    assert Z.min() >= 0 and Z.max() <= 1
    # At most a few percent of each column outside the private bounds.
    inside = (data >= scaler.data_min_) & (data <= scaler.data_max_)
    assert np.all(inside.mean(0) > 0.95)
    assert scaler.privacy_spent_.epsilon <= 1.0


def test_spend_recomputed_with_dp_accounting(data):
    pytest.importorskip("dp_accounting")
    from dp_accounting.pld import privacy_loss_distribution as dpa_pld

    scaler = DPStandardScaler(epsilon=0.5, delta=1e-6, bounds=(-100, 30000),
                              random_state=0).fit(data)
    z1, z2 = scaler.privacy_plan_.noise_multipliers
    released = [leaf for leaf, count in leaves(scaler.privacy_plan_.event)
                for _ in range(count)]
    assert released == [GaussianMechanism(z1), GaussianMechanism(z2)]
    # Two Gaussian releases with noise std over L2 sensitivity z1 and z2.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pld = dpa_pld.from_gaussian_mechanism(
            standard_deviation=z1, sensitivity=1.0,
            value_discretization_interval=1e-4).compose(
            dpa_pld.from_gaussian_mechanism(
                standard_deviation=z2, sensitivity=1.0,
                value_discretization_interval=1e-4))
        reference = pld.get_epsilon_for_delta(1e-6)
    assert scaler.privacy_spent_.epsilon == pytest.approx(reference, rel=0.02)
    assert scaler.privacy_spent_.epsilon <= 0.5


def test_moments_split_their_share_three_to_one():
    """The clipped sum gets SUM_WEIGHT of the moments' zCDP budget and the
    sum of squares the rest (z = 1 / sqrt(2 rho_i)); a scaler without
    the variance gives the sum all of it.  Public bounds: the moments
    share the whole budget; private bounds take BOUNDS_SHARE first."""
    from skdpopt.plans.preprocessing import BOUNDS_SHARE, SUM_WEIGHT, plan_scaler

    assert SUM_WEIGHT == 0.75 and BOUNDS_SHARE == 0.5
    for private in (False, True):
        both = plan_scaler(n_samples=5000, n_features=4, epsilon=1.0, delta=1e-6,
                           private_bounds=private)
        z1, z2 = both.noise_multipliers
        rho = 1 / (2 * z1**2) + 1 / (2 * z2**2)
        assert 1 / (2 * z1**2) == pytest.approx(SUM_WEIGHT * rho)
        if private:
            # The draws: 3 per column, each D^2 / 2 of zCDP.
            draws = 3 * 4 * both.bounds.score_sensitivity**2 / 2
            assert draws / (draws + rho) == pytest.approx(BOUNDS_SHARE)
        mean_only = plan_scaler(n_samples=5000, n_features=4, epsilon=1.0,
                                delta=1e-6, private_bounds=private,
                                moments=(True, False))
        assert mean_only.noise_multipliers[1] is None
        assert mean_only.noise_multipliers[0] < z1


def test_pure_dp_uses_laplace_and_adds_up(data):
    scaler = DPStandardScaler(epsilon=0.8, delta=0.0, random_state=0).fit(data)
    plan = scaler.privacy_plan_
    assert plan.mechanism == "laplace"
    kinds = {type(leaf) for leaf, _ in leaves(plan.event)}
    assert LaplaceMechanism in kinds
    assert scaler.privacy_spent_.epsilon == pytest.approx(0.8)
    assert scaler.privacy_spent_.delta == 0.0


@pytest.mark.parametrize("value, dtype", [(1e300, np.float64), (3e19, np.float32)])
def test_one_extreme_record_gives_finite_statistics(data, value, dtype):
    X = data[:2000].astype(dtype)
    X[0] = value
    for scaler in (DPStandardScaler(random_state=0), DPMinMaxScaler(random_state=0)):
        Z = scaler.fit_transform(X)
        assert np.all(np.isfinite(Z[1:]))
        for name in ("mean_", "scale_", "data_min_", "data_max_"):
            if hasattr(scaler, name):
                assert np.all(np.isfinite(getattr(scaler, name)))


def test_without_privacy_the_statistics_are_exact_after_clipping(data):
    scaler = DPStandardScaler(epsilon=np.inf, random_state=0).fit(data)
    low, high = scaler.bounds_
    clipped = np.clip(data, low, high)
    np.testing.assert_allclose(scaler.mean_, clipped.mean(0), rtol=1e-10)
    np.testing.assert_allclose(scaler.var_, clipped.var(0), rtol=1e-8)
    assert scaler.privacy_spent_.epsilon == np.inf


def test_each_fit_is_recorded_once_in_the_ledger(data):
    with PrivacyLedger() as ledger:
        DPStandardScaler(epsilon=0.3, delta=1e-7).fit(data)
        DPMinMaxScaler(epsilon=0.2, delta=1e-7).fit(data)
    assert [r.estimator for r in ledger.records] == ["DPStandardScaler",
                                                      "DPMinMaxScaler"]


def test_pandas_output_keeps_the_column_names(data):
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(data[:500], columns=["age", "price", "score"])
    out = (DPStandardScaler(bounds=(-1e5, 1e5), random_state=0)
           .set_output(transform="pandas").fit_transform(frame))
    assert list(out.columns) == ["age", "price", "score"]
    scaler = DPMinMaxScaler(random_state=0).fit(frame)
    assert list(scaler.get_feature_names_out()) == ["age", "price", "score"]


def test_bad_bounds_and_quantiles_are_refused(data):
    with pytest.raises(ValueError, match="bounds"):
        DPStandardScaler(bounds=(5, 1)).fit(data)
    with pytest.raises(ValueError, match="bounds"):
        DPMinMaxScaler(bounds=(0, [1, 2])).fit(data)
    with pytest.raises(ValueError, match="quantiles"):
        DPStandardScaler(quantiles=(0.6, 0.9)).fit(data)


def test_plan_takes_no_data():
    import inspect

    from skdpopt.plans.bounds import quantile_draws_for_epsilon
    from skdpopt.plans.preprocessing import plan_scaler
    for function in (plan_scaler, quantile_draws_for_epsilon):
        params = set(inspect.signature(function).parameters)
        assert not params & {"X", "y", "data"}


def test_too_few_rows_for_private_bounds_warn_without_private_values():
    from skdpopt import UtilityWarning

    rng = np.random.default_rng(0)
    X = rng.normal(1234.5678, 1, size=(200, 4))
    with pytest.warns(UtilityWarning, match="bounds=") as record:
        DPStandardScaler(epsilon=0.5, random_state=0).fit(X)
    assert "1234" not in str(record[0].message)
    # With public bounds nothing is drawn: no warning about private bounds
    # (the spread of these 200 rows is below the moments' noise at this
    # budget, which the scaler may say).
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UtilityWarning)
        DPStandardScaler(epsilon=0.5, bounds=(1000, 1500), random_state=0).fit(X)
    assert not [w for w in caught if "private bounds" in str(w.message)]
