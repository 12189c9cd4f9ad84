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


def poisson_batches(rng, n_samples, sampling_rate, n_batches):
    """Rows of ``n_batches`` independent Poisson samples, drawn at once.

    Each row enters each batch independently with probability q.  The
    ``n_batches * n_samples`` (batch, row) slots form a Bernoulli process,
    whose gaps between sampled slots are i.i.d. geometric: one vectorised
    draw of about ``q * n_samples * n_batches`` gaps gives every batch,
    instead of a sampler call per batch.

    Parameters
    ----------
    rng : numpy.random.Generator
    n_samples : int
    sampling_rate : float
        q in (0, 1].
    n_batches : int

    Returns
    -------
    rows : ndarray of int
        The batches' rows, concatenated; sorted within each batch.
    offsets : ndarray of int of shape (n_batches + 1,)
        Batch b is ``rows[offsets[b]:offsets[b + 1]]``.
    """
    n_slots = n_samples * n_batches
    expected = sampling_rate * n_slots
    chunks, last = [], -1
    while last < n_slots - 1:
        # Enough gaps to pass the end almost always; otherwise draw more.
        size = int(expected + 6.0 * np.sqrt(expected) + 16)
        slots = last + np.cumsum(rng.geometric(sampling_rate, size))
        chunks.append(slots)
        last = int(slots[-1])
    slots = np.concatenate(chunks)
    slots = slots[:np.searchsorted(slots, n_slots)]
    batch, rows = np.divmod(slots, n_samples)
    offsets = np.searchsorted(batch, np.arange(n_batches + 1))
    return rows, offsets


def repetitions(rng, mean, shape, gamma=None):
    """Number of runs of a private selection, drawn independently of the data.

    A truncated negative binomial ``D(shape, gamma)`` on ``k >= 1``
    (``P[K = k]`` proportional to ``(1 - gamma)^k binom(k + shape - 1, k)``;
    ``shape = 0`` is the logarithmic distribution, ``1`` the geometric), or
    a Poisson of mean ``mean`` when ``shape`` is infinite.  The truncated
    negative binomial is one uniform draw inverted through the untruncated
    distribution function above its mass at 0; the logarithmic is numpy's
    sampler.

    Parameters
    ----------
    rng : numpy.random.Generator
    mean : float
        Expected number of runs (the Poisson's parameter).
    shape : float
        ``eta >= 0``, or ``inf`` for a Poisson.
    gamma : float, default=None
        The truncated negative binomial's parameter, which gives ``mean``
        (see :func:`skdpopt.accounting.rdp.repetitions_gamma`).

    Returns
    -------
    int
    """
    from scipy import stats

    if shape == np.inf:
        return int(rng.poisson(mean))
    if shape == 0:
        return int(rng.logseries(1.0 - gamma))
    u = rng.random()
    at_zero = gamma**shape
    return max(1, int(stats.nbinom.ppf(at_zero + u * (1.0 - at_zero), shape, gamma)))
