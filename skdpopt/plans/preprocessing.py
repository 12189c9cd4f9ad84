"""Plans of the private scalers: bounds draws and noisy clipped moments.

Also the building blocks other plans use for a private bound:
:class:`QuantileDraws` (a part of a plan, with its event) made by
:func:`quantile_draws` or :func:`quantile_draws_for_rho`, and
:func:`plan_quantiles` for a fit that only releases quantiles.
"""

from dataclasses import dataclass

import numpy as np

from .. import _bounds
from ..accounting import (
    EpsilonDeltaEvent,
    RhoBracket,
    ScaleBracket,
    calibrate,
    compose,
    zcdp,
)
from .base import PrivacyPlan

# Default share of a scaler's budget spent on private bounds (zCDP units)
# when no public bounds are given; the rest goes to the moments.
BOUNDS_SHARE = 0.5


@dataclass(frozen=True)
class QuantileDraws:
    """``n_columns * draws_per_column`` exponential-mechanism draws.

    A part of a plan (a bound inside a larger fit), with its own event.

    Attributes
    ----------
    n_columns : int
    quantiles : tuple of float
        Effective target ranks (see :func:`skdpopt._bounds.effective_quantiles`).
    score_sensitivity : float
        Of each draw; ``inf`` without privacy.
    draws_per_column : int
        ``len(quantiles)`` for :func:`skdpopt._bounds.private_quantiles`,
        3 for :func:`skdpopt._bounds.private_bounds` (median anchor too).
    """

    n_columns: int
    quantiles: tuple
    score_sensitivity: float
    draws_per_column: int

    @property
    def event(self):
        """The draws' event (``EpsilonDeltaEvent(inf, 0)`` without privacy)."""
        if not np.isfinite(self.score_sensitivity):
            return EpsilonDeltaEvent(np.inf, 0.0)
        return _bounds.quantile_event(self.score_sensitivity, self.n_columns,
                                      self.draws_per_column)


def quantile_draws(*, n_samples, n_columns, score_sensitivity,
                   quantiles=(0.01, 0.99), bounds=True):
    """Draws of the given score sensitivity, their ranks moved inwards where
    the draws could not find them (public quantities only).

    Parameters
    ----------
    n_samples, n_columns : int
    score_sensitivity : float
    quantiles : sequence of float, default=(0.01, 0.99)
    bounds : bool, default=True
        For :func:`skdpopt._bounds.private_bounds` (3 draws per column);
        False for :func:`skdpopt._bounds.private_quantiles`.

    Returns
    -------
    QuantileDraws
    """
    effective = _bounds.effective_quantiles(quantiles, n_samples,
                                            score_sensitivity)
    per_column = _bounds.BOUNDS_DRAWS if bounds else len(quantiles)
    return QuantileDraws(n_columns, effective, float(score_sensitivity),
                         per_column)


def quantile_draws_for_rho(rho, *, n_samples, n_columns, quantiles=(0.01, 0.99),
                           bounds=True):
    """Draws that together cost ``rho`` in zCDP units (each draw is
    bounded-range, ``D^2 / 2``-zCDP): for a plan that splits its budget in
    rho and calibrates the whole with :func:`calibrate_event`."""
    per_column = _bounds.BOUNDS_DRAWS if bounds else len(quantiles)
    sensitivity = zcdp.exponential_score_sensitivity(rho / (n_columns * per_column))
    return quantile_draws(n_samples=n_samples, n_columns=n_columns,
                          score_sensitivity=sensitivity, quantiles=quantiles,
                          bounds=bounds)


@dataclass(frozen=True)
class QuantilePlan(PrivacyPlan):
    """A fit that releases private quantiles only.

    Attributes
    ----------
    draws : QuantileDraws
    """

    draws: QuantileDraws = None


def plan_quantiles(*, n_samples, n_columns, epsilon, delta,
                   quantiles=(0.01, 0.99), bounds=True):
    """Plan private quantiles of ``n_columns`` per-record statistics.

    Parameters
    ----------
    n_samples, n_columns : int
        Public shape.
    epsilon, delta : float
        Budget of all the draws; ``epsilon=inf`` plans exact quantiles.
    quantiles : sequence of float, default=(0.01, 0.99)
        Requested ranks; the plan moves them inwards where the draws could
        not find them (:func:`skdpopt._bounds.effective_quantiles`).
    bounds : bool, default=True
        Plan :func:`skdpopt._bounds.private_bounds` (a median anchor and
        the two ranks); False plans :func:`skdpopt._bounds.private_quantiles`
        of ``quantiles``.

    Returns
    -------
    QuantilePlan
    """
    per_column = _bounds.BOUNDS_DRAWS if bounds else len(quantiles)
    n_draws = n_columns * per_column
    if epsilon == np.inf:
        sensitivity = np.inf
    elif delta == 0:
        # Pure DP: each draw is 2 D-DP and the draws add.
        sensitivity = epsilon / (2.0 * n_draws)
    else:
        guess = zcdp.exponential_score_sensitivity(zcdp.rho_for(epsilon, delta)
                                                   / n_draws)
        sensitivity = calibrate(
            lambda s: _bounds.quantile_event(s, n_columns, per_column),
            epsilon, delta, ScaleBracket(guess)).value
    draws = quantile_draws(n_samples=n_samples, n_columns=n_columns,
                           score_sensitivity=sensitivity, quantiles=quantiles,
                           bounds=bounds)
    return QuantilePlan(epsilon=epsilon, delta=delta, event=draws.event,
                        draws=draws)


@dataclass(frozen=True)
class ScalerPlan(PrivacyPlan):
    """What a private scaler's fit releases.

    Attributes
    ----------
    bounds : QuantileDraws or None
        The bounds draws; None when the bounds are public.
    noise_multipliers : (float or None, float or None)
        Of the clipped sum and the clipped sum of squares (see
        :func:`skdpopt._bounds.private_moments`); None: not released.
    mechanism : {"gaussian", "laplace"}
        Noise of the moments (Laplace when ``delta = 0``).
    """

    bounds: QuantileDraws = None
    noise_multipliers: tuple = (None, None)
    mechanism: str = "gaussian"


def _scaler_parts(budget, *, n_samples, n_features, private_bounds, quantiles,
                  moments, mechanism):
    """Bounds plan and moment noise for a total ``budget``: zCDP rho
    (Gaussian) or pure epsilon (Laplace)."""
    n_moments = sum(moments)
    bounds_share = BOUNDS_SHARE if private_bounds and n_moments else (
        1.0 if private_bounds else 0.0)
    moment_share = (1.0 - bounds_share) / n_moments if n_moments else 0.0
    bounds = None
    if private_bounds:
        if mechanism == "gaussian":
            bounds = quantile_draws_for_rho(
                bounds_share * budget, n_samples=n_samples, n_columns=n_features,
                quantiles=quantiles)
        else:
            bounds = quantile_draws(
                n_samples=n_samples, n_columns=n_features,
                score_sensitivity=bounds_share * budget
                / (2.0 * _bounds.BOUNDS_DRAWS * n_features),
                quantiles=quantiles)
    noise = []
    for wanted in moments:
        if not wanted:
            noise.append(None)
        elif mechanism == "gaussian":
            noise.append(zcdp.gaussian_noise_multiplier(moment_share * budget))
        else:
            noise.append(1.0 / (moment_share * budget))
    return bounds, tuple(noise)


def _scaler_event(bounds, noise, n_features, mechanism):
    return compose(bounds.event if bounds is not None else None,
                   _bounds.moments_event(noise, n_features, mechanism))


def plan_scaler(*, n_samples, n_features, epsilon, delta, private_bounds,
                quantiles=(0.01, 0.99), moments=(True, True)):
    """Plan a private scaler's fit from public quantities.

    Parameters
    ----------
    n_samples, n_features : int
        Public shape.
    epsilon, delta : float
        The fit's budget; ``epsilon=inf`` plans exact statistics.
    private_bounds : bool
        Whether bounds are drawn privately (else they are public and free).
    quantiles : (float, float), default=(0.01, 0.99)
        Requested ranks of the private bounds.
    moments : (bool, bool), default=(True, True)
        Whether the clipped sum and the sum of squares are released.

    Returns
    -------
    ScalerPlan
        Its event spends at most ``epsilon`` at ``delta``.
    """
    mechanism = "gaussian" if delta > 0 else "laplace"
    if epsilon == np.inf:
        bounds = None
        if private_bounds:
            bounds = QuantileDraws(n_features, tuple(quantiles), np.inf,
                                   _bounds.BOUNDS_DRAWS)
        noise = tuple(0.0 if m else None for m in moments)
        released = private_bounds or any(moments)
        event = EpsilonDeltaEvent(np.inf, 0.0) if released else compose()
        return ScalerPlan(epsilon=epsilon, delta=delta, event=event,
                          bounds=bounds, noise_multipliers=noise,
                          mechanism=mechanism)
    if not private_bounds and not any(moments):
        return ScalerPlan(epsilon=epsilon, delta=delta, event=compose(),
                          noise_multipliers=(None, None), mechanism=mechanism)

    def parts(budget):
        return _scaler_parts(budget, n_samples=n_samples, n_features=n_features,
                             private_bounds=private_bounds, quantiles=quantiles,
                             moments=moments, mechanism=mechanism)

    def make_event(budget):
        bounds, noise = parts(budget)
        return _scaler_event(bounds, noise, n_features, mechanism)

    if mechanism == "laplace":
        budget = epsilon  # pure epsilons add exactly
    else:
        budget = calibrate(make_event, epsilon, delta,
                           RhoBracket(zcdp.rho_for(epsilon, delta))).value
    bounds, noise = parts(budget)
    return ScalerPlan(epsilon=epsilon, delta=delta,
                      event=_scaler_event(bounds, noise, n_features, mechanism),
                      bounds=bounds, noise_multipliers=noise, mechanism=mechanism)
