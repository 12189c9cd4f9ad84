"""The plan of a DPSyntheticData fit: rounds, budget shares, noise scales.

A fit releases, in order,

1. the private bounds of the numeric columns without declared bounds
   (:func:`skdpopt._bounds.private_bounds`: three exponential-mechanism
   draws per column), spending ``preprocessor_epsilon`` or a share of the
   zCDP budget;
2. one Gaussian measurement of every 1-way marginal (the warm start),
   sharing :data:`ONE_WAY_SHARE` of the rest in zCDP units;
3. ``n_rounds`` rounds, each an exponential-mechanism selection of a query
   (:data:`SELECTION_SHARE` of the round) and a Gaussian measurement of
   the selected query (the rest of the round).

The shares are as in AIM (McKenna et al. 2022).  Which query a round
selects depends on the data, but every selection and every measurement
has the same, planned, sensitivity and noise, so the event tree below
holds whatever was selected.
"""

from dataclasses import dataclass

import numpy as np

from ..accounting import (
    EpsilonDeltaEvent,
    ExponentialMechanism,
    GaussianMechanism,
    RhoBracket,
    calibrate,
    compose,
    repeat,
)
from ..accounting.zcdp import (
    exponential_score_sensitivity,
    gaussian_noise_multiplier,
    rho_for,
)
from .base import PrivacyPlan
from .bounds import (
    QuantileDraws,
    quantile_draws,
    quantile_draws_for_epsilon,
    quantile_draws_for_rho,
    reliable_share,
)

# zCDP shares: the warm start's 1-way measurements get ONE_WAY_SHARE of
# the budget; each round's selection gets SELECTION_SHARE of the round.
ONE_WAY_SHARE = 0.1
SELECTION_SHARE = 0.1
# Share of the zCDP budget spent on the bounds of numeric columns nobody
# declared when ``preprocessor_epsilon`` is None: the share at which their
# draws find the data (``reliable_share``), within these limits
# (docs/design/dpsynthetic.md).
MIN_BOUNDS_SHARE = 0.05
MAX_BOUNDS_SHARE = 0.25
# Ranks of a numeric column's private bounds: values beyond fall into the
# end bins.
BOUNDS_QUANTILES = (0.01, 0.99)


@dataclass(frozen=True)
class SyntheticPlan(PrivacyPlan):
    """What a DPSyntheticData fit releases.

    Attributes
    ----------
    n_rounds : int
        Select-and-measure rounds.
    n_one_way : int
        1-way marginals measured in the warm start.
    bounds : QuantileDraws or None
        The private bounds of the numeric columns without declared bounds,
        calibrated to spend ``preprocessor_epsilon``; None when there are
        none.
    one_way_noise_multiplier, round_noise_multiplier : float
        Noise std over L2 sensitivity of each warm-start measurement and
        of each round's measurement (0 without privacy).
    one_way_noise_std, round_noise_std : float
        The same as standard deviations on a cell of a normalised answer
        (counts over ``n_samples``).
    selection_epsilon : float
        Pure epsilon of each round's selection: its scores (errors of
        sensitivity ``l1_sensitivity_times_n / n_samples``) are scaled so
        that a record moves a log weight by at most
        ``selection_epsilon / 2``.
    """

    n_rounds: int
    n_one_way: int
    bounds: QuantileDraws
    one_way_noise_multiplier: float
    round_noise_multiplier: float
    one_way_noise_std: float
    round_noise_std: float
    selection_epsilon: float


def default_rounds(n_columns, epsilon, n_queries):
    """Rounds of the default schedule: ``2 * n_columns * 2 ** log10(epsilon)``
    (half as many at epsilon = 0.1, twice as many at 10), at least 2, at
    most the number of queries.  Each round splits the budget further, so
    the best count grows with epsilon (docs/design/dpsynthetic.md)."""
    if not np.isfinite(epsilon):
        return n_queries
    rounds = round(2 * n_columns * 2.0 ** np.log10(epsilon))
    return int(min(max(rounds, 2), n_queries))


def _run_event(rho, n_one_way, n_rounds):
    """Event of the warm start and the rounds for a zCDP budget ``rho``,
    and the parameters it implies."""
    if n_one_way:
        one_way_z = gaussian_noise_multiplier(ONE_WAY_SHARE * rho / n_one_way)
        round_rho = (1 - ONE_WAY_SHARE) * rho / n_rounds
    else:
        one_way_z = np.inf
        round_rho = rho / n_rounds
    # A bounded-range draw with score sensitivity D costs D^2 / 2, and its
    # epsilon is 2 D.
    selection_epsilon = 2 * exponential_score_sensitivity(SELECTION_SHARE * round_rho)
    round_z = gaussian_noise_multiplier((1 - SELECTION_SHARE) * round_rho)
    event = compose(
        repeat(GaussianMechanism(one_way_z), n_one_way),
        repeat(compose(ExponentialMechanism(selection_epsilon / 2),
                       GaussianMechanism(round_z)), n_rounds),
    )
    return event, one_way_z, round_z, selection_epsilon


def plan_synthetic(*, n_samples, n_columns, n_queries, n_one_way, n_bounded,
                   l2_sensitivity_times_n, epsilon, delta, max_iter=None,
                   preprocessor_epsilon=None):
    """Plan a DPSyntheticData fit from public quantities.

    Parameters
    ----------
    n_samples : int
        Number of records (public).
    n_columns : int
        Number of columns.
    n_queries : int
        Queries (groups) in the workload, 1-way marginals included.
    n_one_way : int
        1-way marginals measured in the warm start (0 for explicit queries).
    n_bounded : int
        Numeric columns without declared bounds (their bounds are private).
    l2_sensitivity_times_n : float
        L2 sensitivity of one measured answer, times ``n_samples``
        (``sqrt(2)`` for normalised marginals under replace-one).
    epsilon, delta : float
        The fit's budget; ``epsilon=inf`` plans a run without noise.
    max_iter : int, default=None
        Rounds; None for :func:`default_rounds`.
    preprocessor_epsilon : float, default=None
        Budget of the private bounds (they are calibrated alone to spend
        it); None: the share of the zCDP budget at which the draws find the
        data for ``n_samples`` rows, within ``[MIN_BOUNDS_SHARE,
        MAX_BOUNDS_SHARE]``, calibrated with the rest of the fit.

    Returns
    -------
    SyntheticPlan
    """
    n_rounds = max_iter if max_iter is not None else default_rounds(
        n_columns, epsilon, n_queries)
    if not np.isfinite(epsilon):
        bounds = None
        if n_bounded:
            bounds = quantile_draws(n_samples=n_samples, n_columns=n_bounded,
                                    score_sensitivity=np.inf,
                                    quantiles=BOUNDS_QUANTILES)
        return SyntheticPlan(
            epsilon=epsilon, delta=delta, event=EpsilonDeltaEvent(np.inf, 0.0),
            n_rounds=n_rounds, n_one_way=n_one_way, bounds=bounds,
            one_way_noise_multiplier=0.0,
            round_noise_multiplier=0.0, one_way_noise_std=0.0,
            round_noise_std=0.0, selection_epsilon=np.inf)
    if delta <= 0:
        raise ValueError(
            "delta must be > 0 for a finite epsilon: DPSyntheticData "
            "measures marginals with Gaussian noise."
        )
    if not n_bounded:
        bounds = None
        rho = calibrate(lambda r: _run_event(r, n_one_way, n_rounds)[0], epsilon,
                        delta, RhoBracket(rho_for(epsilon, delta))).value
    elif preprocessor_epsilon is not None:
        if preprocessor_epsilon >= epsilon:
            raise ValueError(
                f"preprocessor_epsilon={preprocessor_epsilon} must be below "
                f"epsilon={epsilon}.")
        bounds = quantile_draws_for_epsilon(
            preprocessor_epsilon, delta, n_samples=n_samples,
            n_columns=n_bounded, quantiles=BOUNDS_QUANTILES)
        rho = calibrate(
            lambda r: compose(bounds.event, _run_event(r, n_one_way, n_rounds)[0]),
            epsilon, delta, RhoBracket(rho_for(epsilon, delta))).value
    else:
        # The share of the zCDP budget at which the median-cell draws find
        # the data for the rows at hand (docs/design/dpsynthetic.md).
        share = reliable_share(n_samples, rho_for(epsilon, delta),
                               n_draws=n_bounded * (1 + len(BOUNDS_QUANTILES)),
                               low=MIN_BOUNDS_SHARE, high=MAX_BOUNDS_SHARE)

        def draws(r):
            return quantile_draws_for_rho(share * r, n_samples=n_samples,
                                          n_columns=n_bounded,
                                          quantiles=BOUNDS_QUANTILES)

        total = calibrate(
            lambda r: compose(draws(r).event,
                              _run_event((1 - share) * r, n_one_way, n_rounds)[0]),
            epsilon, delta, RhoBracket(rho_for(epsilon, delta))).value
        bounds, rho = draws(total), (1 - share) * total
    bounds_event = compose() if bounds is None else bounds.event
    run, one_way_z, round_z, selection_epsilon = _run_event(rho, n_one_way, n_rounds)
    # One record moves a normalised 1-way marginal by sqrt(2)/n in L2.
    one_way_std = np.sqrt(2.0) / n_samples * one_way_z if n_one_way else 0.0
    return SyntheticPlan(
        epsilon=epsilon, delta=delta, event=compose(bounds_event, run),
        n_rounds=n_rounds, n_one_way=n_one_way, bounds=bounds,
        one_way_noise_multiplier=one_way_z,
        round_noise_multiplier=round_z, one_way_noise_std=one_way_std,
        round_noise_std=l2_sensitivity_times_n / n_samples * round_z,
        selection_epsilon=selection_epsilon)
