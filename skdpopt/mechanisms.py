"""Noise samplers and private selection, all drawing from one numpy Generator.

These functions only sample.  How much noise to add is decided by
:mod:`skdpopt.accounting`; the estimators pass the calibrated scales in.
"""

import numpy as np


def gaussian_noise(rng, scale, size):
    """Draw ``N(0, scale^2)`` noise of the given size.

    Parameters
    ----------
    rng : numpy.random.Generator
    scale : float
        Standard deviation; 0 gives zeros (no privacy).
    size : int or tuple of int

    Returns
    -------
    ndarray of float
    """
    if scale == 0:
        return np.zeros(size)
    return rng.normal(0.0, scale, size)


def laplace_noise(rng, scale, size):
    """Draw Laplace(0, scale) noise of the given size; ``scale=0`` gives zeros."""
    if scale == 0:
        return np.zeros(size)
    return rng.laplace(0.0, scale, size)


def exponential_mechanism(rng, log_weights, size=None):
    """Sample indices with probability proportional to ``exp(log_weights)``.

    Uses the Gumbel-max trick: ``argmax(log_weights + Gumbel noise)`` is an
    exact draw.  With ``size`` given, draws that many independent samples
    (one per row of fresh Gumbel noise).

    Parameters
    ----------
    rng : numpy.random.Generator
    log_weights : ndarray of shape (m,)
        Unnormalised log-probabilities; ``-inf`` entries are never drawn.
    size : int, default=None
        Number of independent draws; ``None`` returns a single int.

    Returns
    -------
    int or ndarray of int
    """
    log_weights = np.asarray(log_weights, dtype=float)
    if size is None:
        return int(np.argmax(log_weights + rng.gumbel(size=log_weights.shape)))
    noisy = log_weights[None, :] + rng.gumbel(size=(size, log_weights.shape[0]))
    return np.argmax(noisy, axis=1)


def report_noisy_max(rng, scores, scale):
    """Index of the largest score after adding Laplace(0, scale) noise to each.

    Parameters
    ----------
    rng : numpy.random.Generator
    scores : ndarray of shape (m,)
    scale : float
        Laplace scale; 0 returns the exact argmax.

    Returns
    -------
    int
    """
    scores = np.asarray(scores, dtype=float)
    return int(np.argmax(scores + laplace_noise(rng, scale, scores.shape)))


def poisson_batch(rng, n_samples, sampling_rate):
    """Indices of a Poisson sample: each row included with probability q.

    Drawn as a Binomial(n, q) size and then a uniform subset of that size,
    which has exactly the Poisson-sampling distribution and costs time and
    memory in the batch size, not in n.
    """
    if sampling_rate >= 1.0:
        return np.arange(n_samples)
    return uniform_subset(rng, n_samples, rng.binomial(n_samples, sampling_rate))


def uniform_subset(rng, n_samples, size):
    """A uniformly random subset of ``range(n_samples)`` of the given size, sorted.

    numpy's sampler without replacement uses Floyd's algorithm here (time
    and memory proportional to ``size``, not to ``n_samples``).
    """
    return np.sort(rng.choice(n_samples, size=size, replace=False, shuffle=False))
