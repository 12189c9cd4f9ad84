"""Private Frank-Wolfe: converges without noise, stays feasible, selects by
the exponential mechanism."""

import numpy as np

from skdpopt.solvers.frank_wolfe import private_frank_wolfe


def quadratic(target):
    return lambda w: w - target


def test_exact_frank_wolfe_converges_at_rate_one_over_t():
    target = np.array([0.5, -0.3, 0.0, 0.1])  # inside the unit l1 ball
    result = private_frank_wolfe(quadratic(target), 4, radius=1.0, n_steps=400,
                                 score_scale=np.inf, rng=np.random.default_rng(0))
    # Frank-Wolfe's gap bound 2 L D^2 / (t + 2) with L = 1 and l1 diameter 2
    # in the l2 sense (D^2 <= 2) gives an objective gap below 4 / 402.
    gap = 0.5 * np.sum((result.coef - target) ** 2)
    assert gap <= 4.0 / 402
    assert np.abs(result.coef).sum() <= 1.0 + 1e-12


def test_simplex_iterates_stay_in_the_simplex():
    target = np.array([0.2, 0.7, 0.1])
    result = private_frank_wolfe(quadratic(target), 3, radius=1.0, n_steps=50,
                                 score_scale=5.0, rng=np.random.default_rng(1),
                                 constraint="simplex")
    assert np.all(result.coef >= 0) and np.isclose(result.coef.sum(), 1.0)


def test_selection_frequencies_follow_the_exponential_mechanism():
    # One step from 0 with gradient g: vertex +e_j has <v, g> = g_j, -e_j has
    # -g_j; the draw has probability proportional to exp(-scale <v, g>).
    g = np.array([1.0, -0.5])
    counts = np.zeros(4)
    rng = np.random.default_rng(2)
    for _ in range(4000):
        result = private_frank_wolfe(lambda w: g, 2, radius=1.0, n_steps=1,
                                     score_scale=1.0, rng=rng)
        counts[result.selected[0]] += 1
    weights = np.exp(-np.array([1.0, -0.5, -1.0, 0.5]))
    expected = 4000 * weights / weights.sum()
    # Each count is binomial; 5 standard deviations.
    sd = np.sqrt(expected * (1 - weights / weights.sum()))
    assert np.all(np.abs(counts - expected) < 5 * sd)
