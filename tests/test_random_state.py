"""What ``random_state`` turns into: one generator per fit, never fewer
bits of entropy than the caller supplied."""

import numpy as np

from skdpopt import DPSGDRegressor
from skdpopt._base import make_generator


def _stream(generator):
    return generator.integers(0, 2**63, size=4)


def test_seeded_random_state_reproduces_the_stream():
    first = _stream(make_generator(np.random.RandomState(7)))
    again = _stream(make_generator(np.random.RandomState(7)))
    other = _stream(make_generator(np.random.RandomState(8)))
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first, other)


def test_random_state_advances_between_fits():
    state = np.random.RandomState(7)
    assert not np.array_equal(_stream(make_generator(state)),
                              _stream(make_generator(state)))


def test_unseeded_random_states_give_distinct_streams():
    streams = {tuple(_stream(make_generator(np.random.RandomState())))
               for _ in range(20)}
    assert len(streams) == 20


def _entropy_bits(seed_seq):
    """The seed as one integer, from an int or a list of 32-bit words."""
    entropy = seed_seq.entropy
    if isinstance(entropy, int):
        return entropy
    return sum(int(word) << (32 * i) for i, word in enumerate(entropy))


def test_random_state_seeds_with_256_bits_not_31():
    # The seed is 256 bits drawn from the RandomState, not one integer
    # below 2**31 (which would leave 2**31 noise streams to enumerate).
    seed_seq = make_generator(np.random.RandomState(7)).bit_generator.seed_seq
    assert 200 < _entropy_bits(seed_seq).bit_length() <= 256  # w.p. 1 - 2**-56
    old_seed = np.random.RandomState(7).randint(np.iinfo(np.int32).max)
    assert not np.array_equal(_stream(make_generator(np.random.RandomState(7))),
                              _stream(np.random.default_rng(old_seed)))


def test_estimator_fit_is_reproducible_from_a_seeded_random_state():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    y = X @ [0.3, -0.2, 0.1]

    def fit(random_state):
        return DPSGDRegressor(epsilon=1.0, delta=1e-5, max_iter=2,
                              random_state=random_state).fit(X, y).coef_

    np.testing.assert_array_equal(fit(np.random.RandomState(1)),
                                  fit(np.random.RandomState(1)))
    assert not np.array_equal(fit(np.random.RandomState(1)),
                              fit(np.random.RandomState(2)))
    assert not np.array_equal(fit(None), fit(None))
