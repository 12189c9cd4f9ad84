"""The plan of a DP-SGD fit: schedule and calibrated noise."""

import math
from dataclasses import dataclass

import numpy as np

from ..accounting import (
    EpsilonDeltaEvent,
    SubsampledGaussianMechanism,
    calibrate_noise_multiplier,
    repeat,
)
from .base import PrivacyPlan


@dataclass(frozen=True)
class DPSGDPlan(PrivacyPlan):
    """What a DP-SGD fit releases: ``n_problems * n_steps`` noisy sums.

    Attributes
    ----------
    sampling_rate : float
        Poisson sampling rate q (1 for full batches).
    n_steps : int
        Noisy steps per problem.
    n_epochs : int
        Epochs those steps make (for progress messages and ``n_iter_``).
    n_problems : int
        Binary problems fitted one after another (one-vs-rest), or 1.
    noise_multiplier : float
        Noise std over the clip norm; 0 without privacy.
    average_start : float or None
        Step from which iterates are averaged (None: the last iterate).
    """

    sampling_rate: float
    n_steps: int
    n_epochs: int
    n_problems: int
    noise_multiplier: float
    average_start: float = None


def sgd_schedule(n_samples, *, sampling, batch_size, max_iter):
    """Sampling rate, steps and epochs from the public hyperparameters."""
    if batch_size == "auto":
        batch_size = min(256, n_samples)
    elif batch_size > n_samples:
        raise ValueError(
            f"batch_size={batch_size} must be at most n_samples={n_samples}."
        )
    if sampling == "full":
        return 1.0, max_iter, max_iter
    rate = batch_size / n_samples
    if sampling == "single_pass":
        # Run until about half the rows have been sampled: after T steps a
        # row is unseen with probability (1 - q)^T.
        steps = 1 if rate >= 1.0 else math.ceil(math.log(2.0) / -math.log1p(-rate))
        return rate, steps, 1
    return rate, math.ceil(max_iter / rate), max_iter


def plan_dpsgd(*, n_samples, n_problems, epsilon, delta, sampling, batch_size,
               max_iter, average):
    """Plan a DP-SGD fit from public quantities.

    Parameters
    ----------
    n_samples : int
        Number of rows (public).
    n_problems : int
        Binary problems composed in the fit (classes in one-vs-rest).
    epsilon, delta : float
        The fit's budget; ``epsilon=inf`` plans a run without noise.
    sampling, batch_size, max_iter, average
        The estimator's hyperparameters of the same names.

    Returns
    -------
    DPSGDPlan
    """
    rate, steps, epochs = sgd_schedule(
        n_samples, sampling=sampling, batch_size=batch_size, max_iter=max_iter)
    if average is False:
        average_start = None
    else:
        # Like scikit-learn, an integer ``average`` counts samples seen.
        average_start = max(int(average) / (rate * n_samples) - 1.0, 0.0)
    if epsilon == np.inf:
        noise_multiplier, event = 0.0, EpsilonDeltaEvent(np.inf, 0.0)
    else:
        if delta == 0:
            raise ValueError(
                "delta must be > 0: Gaussian noise gives no pure (delta=0) "
                "guarantee."
            )
        # The problems run one after another: calibrate their total.
        noise_multiplier, _ = calibrate_noise_multiplier(
            epsilon, delta, rate, steps * n_problems)
        event = repeat(SubsampledGaussianMechanism(min(rate, 1.0), noise_multiplier),
                       steps * n_problems)
    return DPSGDPlan(
        epsilon=epsilon, delta=delta, event=event, sampling_rate=rate,
        n_steps=steps, n_epochs=epochs, n_problems=n_problems,
        noise_multiplier=noise_multiplier, average_start=average_start)
