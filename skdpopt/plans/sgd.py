"""The plan of a DP-SGD fit: schedule and calibrated noise."""

import math
from dataclasses import dataclass

import numpy as np

from .._auto_bounds import AUTO_BOUNDS_SHARE, auto_draws
from ..accounting import (
    EpsilonDeltaEvent,
    SubsampledGaussianMechanism,
    calibrate_event,
    calibrate_noise_multiplier,
    compose,
    repeat,
    zcdp,
)
from .base import PrivacyPlan
from .preprocessing import QuantileDraws

# Rank of the "auto" clip norm among the per-example gradient norms at the
# starting point (chosen on development data, benchmarks/design_defaults.py).
CLIP_QUANTILE = 0.9


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
    clip_draws : QuantileDraws or None
        The draw of the "auto" clip norm (a private quantile of the
        per-example gradient norms at the starting point), released before
        the first step; None for a public clip norm.
    clip_share : float
        Share of ``rho_for(epsilon, delta)`` (zCDP units) given to
        ``clip_draws``; the noise is calibrated for the rest.
    """

    sampling_rate: float
    n_steps: int
    n_epochs: int
    n_problems: int
    noise_multiplier: float
    average_start: float = None
    clip_draws: QuantileDraws = None
    clip_share: float = 0.0


# batch_size="auto": at most MAX_AUTO_BATCH rows, and small enough that
# the epochs make at least n * epsilon / N_EPSILON_PER_STEP steps, within
# [MIN_AUTO_STEPS, MAX_AUTO_STEPS] (MAX_AUTO_STEPS without privacy).  Few
# steps leave the model far from the optimum when the noise is small;
# many small noisy steps add up more noise when it is not.  Chosen on
# development data (benchmarks/design_defaults.py, --task schedule).
MAX_AUTO_BATCH = 256
N_EPSILON_PER_STEP = 50.0
MIN_AUTO_STEPS = 10
MAX_AUTO_STEPS = 200


def auto_batch_size(n_samples, epsilon, max_iter):
    """The batch size of ``batch_size="auto"`` (public quantities only)."""
    steps = min(max(n_samples * epsilon / N_EPSILON_PER_STEP, MIN_AUTO_STEPS),
                MAX_AUTO_STEPS)
    wanted = math.ceil(max_iter * n_samples / steps)
    return max(1, min(MAX_AUTO_BATCH, n_samples, wanted))


def sgd_schedule(n_samples, *, sampling, batch_size, max_iter, epsilon=1.0):
    """Sampling rate, steps and epochs from the public hyperparameters."""
    if batch_size == "auto":
        batch_size = auto_batch_size(n_samples, epsilon, max_iter)
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
               max_iter, average, auto_clip=False):
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
    auto_clip : bool, default=False
        Release the clip norm privately first (``clip_norm="auto"``): one
        exponential-mechanism draw costing ``AUTO_BOUNDS_SHARE`` of
        ``rho_for(epsilon, delta)``; the steps' noise is then calibrated so
        that the whole event spends ``epsilon``.

    Returns
    -------
    DPSGDPlan
    """
    rate, steps, epochs = sgd_schedule(
        n_samples, sampling=sampling, batch_size=batch_size, max_iter=max_iter,
        epsilon=epsilon)
    if average is False:
        average_start = None
    else:
        # Like scikit-learn, an integer ``average`` counts samples seen.
        average_start = max(int(average) / (rate * n_samples) - 1.0, 0.0)
    share = AUTO_BOUNDS_SHARE if auto_clip else 0.0
    if epsilon == np.inf:
        noise_multiplier, event = 0.0, EpsilonDeltaEvent(np.inf, 0.0)
        draws = auto_draws(0.0, n_samples=n_samples, n_bounds=int(auto_clip),
                           epsilon=epsilon, quantile=CLIP_QUANTILE)
    elif auto_clip:
        if delta == 0:
            raise ValueError(
                "delta must be > 0: Gaussian noise gives no pure (delta=0) "
                "guarantee.")
        draws = auto_draws(share * zcdp.rho_for(epsilon, delta),
                           n_samples=n_samples, n_bounds=1, epsilon=epsilon,
                           quantile=CLIP_QUANTILE)

        def make_event(sigma):
            return compose(draws.event, repeat(
                SubsampledGaussianMechanism(min(rate, 1.0), sigma),
                steps * n_problems))

        guess, _ = calibrate_noise_multiplier(epsilon, delta, rate,
                                              steps * n_problems)
        noise_multiplier, _ = calibrate_event(
            make_event, epsilon, delta, parameter="noise_multiplier", guess=guess)
        event = make_event(noise_multiplier)
    else:
        draws = None
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
        noise_multiplier=noise_multiplier, average_start=average_start,
        clip_draws=draws, clip_share=share)
