"""Noise samplers and private selection, all drawing from one numpy Generator.

These functions only sample.  How much noise to add is decided by
:mod:`skdpopt.accounting`; the estimators pass the calibrated scales in.
Every draw of a mechanism's randomness goes through :func:`draw_noise`,
with the scale its calibration gave: the one place where the scale that
reaches the sampler can be seen (the tests compare it with the plan's).
"""

import numpy as np

_DISTRIBUTIONS = ("normal", "laplace", "gumbel", "uniform")


def draw_noise(rng, distribution, scale, size):
    """Draw noise of a distribution at a scale: every mechanism's draws.

    Parameters
    ----------
    rng : numpy.random.Generator
    distribution : {"normal", "laplace", "gumbel", "uniform"}
        Centred at 0 with ``scale`` the standard deviation (normal) or the
        scale parameter (Laplace, Gumbel); "uniform" is on ``[0, scale)``.
    scale : float
        0 gives zeros without drawing (no privacy).
    size : int, tuple of int or None
        ``None`` draws one float.

    Returns
    -------
    ndarray of float, or float when ``size`` is None
    """
    if distribution not in _DISTRIBUTIONS:
        raise ValueError(f"unknown noise distribution {distribution!r}")
    if scale == 0:
        return 0.0 if size is None else np.zeros(size)
    if distribution == "uniform":
        return scale * rng.random(size)
    return getattr(rng, distribution)(0.0, scale, size)


def gaussian_noise(rng, scale, size):
    """Draw ``N(0, scale^2)`` noise of the given size.

    Parameters
    ----------
    rng : numpy.random.Generator
    scale : float
        Standard deviation; 0 gives zeros (no privacy).
    size : int, tuple of int or None
        ``None`` draws one float.

    Returns
    -------
    ndarray of float, or float
    """
    return draw_noise(rng, "normal", scale, size)


def laplace_noise(rng, scale, size):
    """Draw Laplace(0, scale) noise of the given size; ``scale=0`` gives zeros."""
    return draw_noise(rng, "laplace", scale, size)


def exponential_mechanism(rng, scores, size=None, *, scale=1.0):
    """Sample indices with probability proportional to ``exp(scores / scale)``.

    Uses the Gumbel-max trick: ``argmax(scores + Gumbel(0, scale) noise)``
    is an exact draw.  A score of sensitivity s then moves each log-weight
    by at most ``s / scale``.

    Parameters
    ----------
    rng : numpy.random.Generator
    scores : ndarray of shape (m,) or (k, m)
        ``-inf`` entries are never drawn.  Two dimensions: one draw per row.
    size : int, default=None
        Number of independent draws from one-dimensional scores (one row
        of fresh noise each); ``None`` returns a single int (or one per row).
    scale : float, default=1.0
        Scale of the Gumbel noise, in the scores' units; 0 returns the
        exact argmax.

    Returns
    -------
    int or ndarray of int
    """
    scores = np.asarray(scores, dtype=float)
    shape = scores.shape if size is None else (size, scores.shape[-1])
    choice = np.argmax(scores + draw_noise(rng, "gumbel", scale, shape), axis=-1)
    return int(choice) if choice.ndim == 0 else choice


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


def proportional_draws(rng, weights, size):
    """Draw ``size`` i.i.d. indices with probabilities proportional to weights.

    Inverse-CDF sampling: one cumulative sum and ``size`` binary searches,
    O(m + size log m), where Gumbel-max would cost O(size m).  The draws
    have the same law as the exponential mechanism with scores
    ``log(weights)`` (mirror descent's iterates, whose step size bounds
    how far one record moves those scores).

    Parameters
    ----------
    rng : numpy.random.Generator
    weights : ndarray of shape (m,)
        Non-negative weights (normalised or not).
    size : int

    Returns
    -------
    ndarray of int of shape (size,)
    """
    cumulative = np.cumsum(weights)
    targets = draw_noise(rng, "uniform", 1.0, size) * cumulative[-1]
    draws = np.searchsorted(cumulative, targets, side="right")
    # Guard against rounding at the top end and against zero-weight cells.
    return np.minimum(draws, len(cumulative) - 1)


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
