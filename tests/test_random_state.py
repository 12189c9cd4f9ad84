"""What ``random_state`` turns into.

For a fit (noise): an int seeds it, reproducibly (tests and docs); None, a
RandomState or a Generator draws fresh entropy from the operating system
at every fit, so clones never share noise.  A ledger warns, once, about
fits with a fixed seed.  For post-processing (sampling a released model):
any of them seeds the draw, never with fewer bits than the caller gave.
"""

import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, cross_validate

from skdpopt import (
    DPLasso,
    DPSGDRegressor,
    DPStandardScaler,
    PrivacyLeakWarning,
    PrivacyLedger,
)
from skdpopt._base import make_generator, sampling_generator


def _stream(generator):
    return generator.integers(0, 2**63, size=4)


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(400, 3))
    y = X @ [0.3, -0.2, 0.1]
    return X, y


MAKERS = [
    lambda rs: DPStandardScaler(bounds=(-1, 1), random_state=rs),
    lambda rs: DPSGDRegressor(max_iter=2, random_state=rs),
    lambda rs: DPLasso(alpha=1e-3, max_iter=3, feature_bound=1.0,
                       target_bound=1.0, random_state=rs),
]


def _released(estimator):
    return estimator.mean_ if hasattr(estimator, "mean_") else estimator.coef_


@pytest.mark.parametrize("make", MAKERS)
def test_clones_of_a_random_state_instance_release_different_noise(data, make):
    # clone() deep-copies a RandomState: the two clones hold identical
    # states, and used to draw identical noise.
    # The noise is fresh OS entropy, so this test is not seeded: DPLasso
    # releases an all-zero coef_ in up to ~18% of these fits (measured: 7
    # of 40), so one pair coincides with probability up to ~0.03; four
    # pairs all coincide with probability below 1e-6, while clones that
    # share noise coincide in every pair.
    X, y = data
    for given in (make(np.random.RandomState(0)), make(None)):
        pairs = [(clone(given).fit(X, y), clone(given).fit(X, y)) for _ in range(4)]
        assert not all(np.array_equal(_released(a), _released(b)) for a, b in pairs)


@pytest.mark.parametrize("make", MAKERS)
def test_an_int_seed_reproduces_the_fit(data, make):
    X, y = data
    np.testing.assert_array_equal(_released(make(3).fit(X, y)),
                                  _released(make(3).fit(X, y)))
    assert not np.array_equal(_released(make(3).fit(X, y)),
                              _released(make(4).fit(X, y)))


def test_cross_validation_folds_do_not_share_noise(data):
    # Two folds' released means, with the same noise, would differ by
    # exactly the rows in which the folds differ.
    X, y = data
    scaler = DPStandardScaler(bounds=(-1, 1), random_state=np.random.RandomState(0))
    fits = cross_validate(scaler, X, cv=2, return_estimator=True,
                          scoring=lambda *args: 0.0)["estimator"]
    noise = [f.mean_ - X[test].clip(-1, 1).mean(axis=0) for f, test in
             zip(fits, [np.arange(200, 400), np.arange(200)], strict=True)]
    assert not np.allclose(noise[0], noise[1])


def test_fit_generators_take_no_state_but_an_int():
    state = np.random.RandomState(7)
    assert not np.array_equal(_stream(make_generator(np.random.RandomState(7))),
                              _stream(make_generator(np.random.RandomState(7))))
    generator = np.random.default_rng(7)
    assert make_generator(generator) is not generator
    np.testing.assert_array_equal(_stream(make_generator(7)),
                                  _stream(make_generator(7)))
    assert state.randint(2**31) == np.random.RandomState(7).randint(2**31)
    with pytest.raises(ValueError, match="random_state"):
        make_generator("seed")


def test_a_ledger_warns_once_about_fixed_seeds(data):
    X, y = data
    search = GridSearchCV(DPSGDRegressor(max_iter=2, random_state=0),
                          {"alpha": [1e-4, 1e-3]}, cv=3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with PrivacyLedger() as ledger:
            search.fit(X, y)
    shared = [w for w in caught if issubclass(w.category, PrivacyLeakWarning)
              and "share their noise" in str(w.message)]
    assert len(shared) == 1  # seven seeded fits, one warning
    assert all(r.fixed_seed for r in ledger.records) and len(ledger) == 7
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        with PrivacyLedger() as ledger:
            search.set_params(estimator__random_state=None).fit(X, y)
        DPSGDRegressor(max_iter=2, random_state=0).fit(X, y)  # no ledger
    assert not any(r.fixed_seed for r in ledger.records)


def test_seeded_sampling_reproduces_the_stream():
    first = _stream(sampling_generator(np.random.RandomState(7)))
    again = _stream(sampling_generator(np.random.RandomState(7)))
    other = _stream(sampling_generator(np.random.RandomState(8)))
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first, other)
    state = np.random.RandomState(7)
    assert not np.array_equal(_stream(sampling_generator(state)),
                              _stream(sampling_generator(state)))


def _entropy_bits(seed_seq):
    """The seed as one integer, from an int or a list of 32-bit words."""
    entropy = seed_seq.entropy
    if isinstance(entropy, int):
        return entropy
    return sum(int(word) << (32 * i) for i, word in enumerate(entropy))


def test_sampling_seeds_with_256_bits_not_31():
    # The seed is 256 bits drawn from the RandomState, not one integer
    # below 2**31 (which would leave 2**31 streams to enumerate).
    seed_seq = sampling_generator(np.random.RandomState(7)).bit_generator.seed_seq
    assert 200 < _entropy_bits(seed_seq).bit_length() <= 256  # w.p. 1 - 2**-56
    old_seed = np.random.RandomState(7).randint(np.iinfo(np.int32).max)
    assert not np.array_equal(_stream(sampling_generator(np.random.RandomState(7))),
                              _stream(np.random.default_rng(old_seed)))
    streams = {tuple(_stream(sampling_generator(np.random.RandomState())))
               for _ in range(20)}
    assert len(streams) == 20
