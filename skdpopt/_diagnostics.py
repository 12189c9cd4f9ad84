"""Utility diagnostics from public and released quantities only.

A private fit can satisfy its guarantee and still be useless: when the
planned noise is larger than anything the data could contribute, the
model cannot move from its starting point.  Most helpers here compare the
noise a plan adds with the largest signal its public bounds allow (from
n, epsilon through the plan's noise, the bounds and the schedule; never
the data); :func:`warn_if_no_better_than_prior` compares a released
(noisy, accounted) check with its public noise level.  All warn with
:class:`~skdpopt.exceptions.UtilityWarning` naming the levers.  Nothing
here reads X or y, so the warning itself releases nothing beyond what
the plan accounts.
"""

import math

import numpy as np
from scipy.stats import norm

from .exceptions import UtilityWarning, warn_at_caller

# Levers, in the words of a message.
MORE_EPSILON = "more epsilon"
MORE_ROWS = "more rows"
TIGHTER_BOUNDS = "tighter public bounds"
FEWER_FEATURES = "fewer features"


def noisy_sum_ratio(*, noise_multiplier, n_steps, expected_batch, n_params,
                    sensitivity_per_record=1.0):
    """Noise over the largest signal of ``n_steps`` noisy sums of clipped terms.

    Each step releases a sum of about ``expected_batch`` terms, each of
    norm at most C (so the mean has norm at most C), plus Gaussian noise of
    standard deviation ``noise_multiplier * C`` in each of ``n_params``
    coordinates.  Over ``n_steps`` steps the means add up to at most
    ``n_steps * C`` in any direction, while the noise adds up to a vector
    of norm about ``sqrt(n_steps * n_params) * noise_multiplier * C /
    expected_batch``.  Their ratio,

        noise_multiplier * sqrt(n_params) / (expected_batch * sqrt(n_steps)),

    above 1 means that even records whose clipped terms all point the same
    way move the model less than the noise does.  ``sensitivity_per_record``
    scales C for releases whose records contribute less than the clip
    (it multiplies the signal).

    Parameters
    ----------
    noise_multiplier : float
        Noise standard deviation over C (0 without privacy).
    n_steps : int
        Noisy sums released (and added up).
    expected_batch : float
        Expected number of records in each sum (``q * n``; ``n`` for full
        batches).
    n_params : int
        Coordinates of each sum (features, plus one for an intercept).
    sensitivity_per_record : float, default=1.0

    Returns
    -------
    float
        0 without noise.
    """
    if noise_multiplier == 0:
        return 0.0
    signal = expected_batch * math.sqrt(n_steps) * sensitivity_per_record
    return noise_multiplier * math.sqrt(n_params) / signal


def noisy_mean_ratio(*, noise_std, n_samples, half_range):
    """Noise of a clipped mean over the range the mean can take.

    A mean of values clipped to an interval of half-width ``half_range``
    moves over at most ``2 * half_range``; released with noise of standard
    deviation ``noise_std`` on the sum, its noise is ``noise_std / n``.

    Parameters
    ----------
    noise_std : float
        On the sum, in data units.
    n_samples : int
    half_range : float

    Returns
    -------
    float
    """
    if noise_std == 0:
        return 0.0
    return noise_std / max(n_samples, 1) / (2.0 * half_range)


def warn_if_noise_dominates(estimator, ratio, *, threshold=1.0,
                            levers=(MORE_EPSILON, MORE_ROWS)):
    """Warn with :class:`UtilityWarning` when ``ratio`` exceeds ``threshold``.

    Parameters
    ----------
    estimator : object or str
        The estimator (or its name), named in the message.
    ratio : float
        A ratio of this module (public quantities only).
    threshold : float, default=1.0
    levers : sequence of str, default=("more epsilon", "more rows")
        What the user can change, named in the message.

    Returns
    -------
    bool
        Whether it warned.
    """
    if not ratio > threshold:
        return False
    name = estimator if isinstance(estimator, str) else type(estimator).__name__
    warn_at_caller(
        f"{name}: the planned noise is {ratio:.3g} times the largest signal the "
        "data could contribute (computed from the number of rows, epsilon, "
        "the public bounds and the schedule, not from the data), so the fit "
        "is unlikely to move far from its starting point. Levers: "
        f"{', '.join(levers)}.",
        UtilityWarning)
    return True


def warn_if_no_better_than_prior(estimator, released, plan, *, spreads,
                                 levers=(MORE_EPSILON, MORE_ROWS, FEWER_FEATURES)):
    """Warn when a released fit check is not clearly positive.

    ``released`` is the noisy sum of the training rows' clipped gains in
    log-likelihood of the fitted model over the class prior
    (:func:`skdpopt.solvers.classes.release_fit_check`): a released value,
    compared with a public multiple of its noise's standard deviation and
    never printed.

    Parameters
    ----------
    estimator : object
    released : float
    plan : FitCheckPlan
    spreads : float
        The sum must exceed this many standard deviations of its noise.
    levers : sequence of str

    Returns
    -------
    bool
        Whether it warned.
    """
    return _warn_unless_clearly_positive(
        estimator, released, plan, spreads, levers,
        "than predicting the class shares (a private check of its training "
        "log-likelihood, within its noise), so its predictions may be no "
        "better than chance", "the classes")


def warn_if_worst_group_no_better_than_prior(
        estimator, released, plan, *, proportions, kappa, spreads,
        levers=(MORE_EPSILON, MORE_ROWS, FEWER_FEATURES)):
    """Warn unless the released group sums show the model better than the
    class prior on every mixture of the groups that weighs no group more
    than ``kappa`` times its proportion.

    ``released`` holds each group's noisy sum of the training rows'
    clipped gains in log-likelihood over the class prior
    (:func:`skdpopt.solvers.checks.release_group_fit_check`).  Each sum is
    lowered by the one-sided quantile of its noise at level
    ``alpha / n_groups``, with ``alpha`` the upper tail of a standard
    normal beyond ``spreads`` (a union bound over the groups), and the
    fit is quiet when the smallest mixture of the lowered per-row gains is
    positive (``docs/privacy/dpminimax.md``: with probability at least
    ``1 - alpha`` a quiet fit gains on every such mixture).  With
    ``kappa = 1 / min(proportions)`` this is every group; with ``kappa =
    1`` the pooled rows.  Released values and public quantities only, and
    none printed.

    Parameters
    ----------
    estimator : object
    released : ndarray of shape (n_groups,)
    plan : FitCheckPlan
    proportions : ndarray of shape (n_groups,)
        The groups' public or released proportions.
    kappa : float
        The cap on a group's weight over its proportion, at least 1.
    spreads : float
    levers : sequence of str

    Returns
    -------
    bool
        Whether it warned.
    """
    if plan.noise is None:
        return False
    lowered = np.asarray(released, dtype=float) - group_check_margin(
        plan, len(released), spreads)
    if worst_mixture(lowered, np.asarray(proportions, dtype=float), kappa) > 0:
        return False
    _warn_not_clearly_better(
        estimator, levers,
        "than predicting the class shares on its worst groups (a private "
        "check of each group's training log-likelihood, within its noise), "
        "so its predictions may be no better than chance there", "the classes")
    return True


def group_check_margin(plan, n_groups, spreads):
    """The one-sided quantile, at ``norm.sf(spreads) / n_groups``, of the
    noise on each released group sum (Gaussian or Laplace)."""
    alpha = float(norm.sf(spreads)) / n_groups
    if plan.noise == "laplace":  # P(noise > t) = exp(-t / b) / 2
        return plan.noise_scale * math.log(0.5 / alpha)
    return plan.spread * float(norm.isf(alpha))


def worst_mixture(sums, proportions, kappa):
    """``min sum_g q_g sums_g / proportions_g`` over the mixtures ``q``
    (non-negative, summing to 1) with ``q_g <= kappa proportions_g``.

    The minimum fills the groups of smallest ``sums_g / proportions_g``
    first, each up to its cap (a linear programme over a capped simplex).
    """
    per_row = sums / proportions
    order = np.argsort(per_row, kind="stable")
    caps = np.minimum(kappa, 1.0 / proportions[order].min()) * proportions[order]
    before = np.cumsum(caps) - caps
    weights = np.clip(1.0 - before, 0.0, caps)
    used = weights > 0  # an unweighted group adds nothing, even if infinite
    with np.errstate(invalid="ignore"):  # inf - inf: NaN, which warns
        return float(np.sum(weights[used] * per_row[order][used]))


def warn_if_no_better_than_mean(estimator, clear, *, levers):
    """Warn unless the regression fit check showed the model clearly
    better than a constant.

    ``clear`` is the check's verdict
    (:meth:`skdpopt.plans.checks.RegressionCheckPlan.clearly_better`),
    decided from its released sums of clipped gains in squared error over
    the targets' released location and mean against public margins; no
    value is printed.

    Parameters
    ----------
    estimator : object
    clear : bool
    levers : sequence of str

    Returns
    -------
    bool
        Whether it warned.
    """
    if clear:
        return False
    _warn_not_clearly_better(
        estimator, levers,
        "than predicting a constant (a private check of its training squared "
        "error against the targets' released location and mean, within "
        "their noise), so its predictions may be worse than the mean's",
        "the target")
    return True


def _warn_unless_clearly_positive(estimator, released, plan, spreads, levers,
                                  against, predicted):
    """The fit checks' shared rule: warn unless the released sum exceeds
    ``spreads`` standard deviations of its noise (no value printed)."""
    if plan.noise is None or released > spreads * plan.spread:
        return False
    _warn_not_clearly_better(estimator, levers, against, predicted)
    return True


def _warn_not_clearly_better(estimator, levers, against, predicted):
    warn_at_caller(
        f"{type(estimator).__name__}: the fitted model is not clearly better "
        f"{against}. Levers: {', '.join(levers)}; or the features carry "
        f"little signal about {predicted}.", UtilityWarning)


def warn_if_mostly_clipped(estimator, released, n_samples, plan, *, spreads,
                           bound_name="feature_bound"):
    """Warn when a released clip check says most feature values are clipped.

    ``released`` is the noisy sum over the rows of their share of values
    outside the public bound (:func:`skdpopt.solvers.checks.release_clip_check`);
    the fit warns when it exceeds half the rows by ``spreads`` standard
    deviations of its noise.  The released value is never printed.

    Returns
    -------
    bool
        Whether it warned.
    """
    if not released > 0.5 * n_samples + spreads * plan.spread:
        return False
    # The bound the fit used: its fitted value where the parameter has a
    # default that depends on the fit (``feature_bound_``).
    bound = getattr(estimator, f"{bound_name}_", None)
    if bound is None:
        bound = getattr(estimator, bound_name)
    warn_at_caller(
        f"{type(estimator).__name__}: most feature values lie outside "
        f"[-{bound_name}, {bound_name}] = [-{bound:g}, {bound:g}] (a private "
        "count) and are clipped there, in fit and in predict, so the model "
        "sees little of their variation. Scale the features first "
        "(skdpopt.DPStandardScaler, or a scaler fitted on public data), or "
        f"raise {bound_name} (the noise grows with it).",
        UtilityWarning)
    return True


def warn_if_coarse(estimator, draws, names, *, public=None):
    """Warn with :class:`UtilityWarning` when planned private bounds are
    coarse: the budget and the rows (public) are too few for the draws to
    find the data's scale (``draws.lost``), or a rank had to move inwards to
    where they can (``draws.capped``).

    Parameters
    ----------
    estimator : object
        Named in the message, with its ``epsilon``.
    draws : QuantileDraws or None
        The plan's draws (None: public bounds, nothing to say).
    names : sequence of str
        The bounds, as the message names them.
    public : str, default=None
        How to pass public values instead; ``"<name>=..."`` for each name
        if None.

    Returns
    -------
    bool
        Whether it warned.
    """
    if draws is None or not math.isfinite(draws.score_sensitivity):
        return False
    if not (draws.lost or draws.capped):
        return False
    what = " and ".join(names)
    if draws.lost:
        shortfall = "may miss the data's scale altogether"
    else:
        ranks = " and ".join(f"{q:g}" for q in draws.quantiles)
        shortfall = f"can only aim at the {ranks} quantile(s)"
    public = public or ", ".join(f"{name}=..." for name in names)
    warn_at_caller(
        f"{type(estimator).__name__}: with {draws.n_samples} rows and "
        f"epsilon={estimator.epsilon:g} the private {what} {shortfall}, so the fit "
        "may clip most records or add noise far above their scale. Levers: "
        f"{MORE_EPSILON}, {MORE_ROWS}, or pass public {public}.",
        UtilityWarning)
    return True


def warn_if_signal_is_weak(estimator, ratio, *, threshold,
                           levers=(MORE_EPSILON, MORE_ROWS)):
    """Warn with :class:`UtilityWarning` when ``ratio`` (the noise of one
    release over the largest signal a release can carry, from public
    quantities) exceeds ``threshold`` though not 1: the fit moves, but the
    signals weaker than that fraction of the largest are lost in the noise,
    and the noise the model takes in can leave it worse than a constant.

    Returns
    -------
    bool
        Whether it warned.
    """
    if not threshold < ratio <= 1.0:
        return False
    warn_at_caller(
        f"{type(estimator).__name__}: the planned noise of each release is "
        f"{ratio:.2g} of the largest signal the data could contribute "
        "(computed from the number of rows, epsilon, the public bounds and "
        "the schedule, not from the data): features whose signal is weaker "
        "than that are lost in it, and the fit may do worse than a constant. "
        f"Levers: {', '.join(levers)}.",
        UtilityWarning)
    return True


def warn_if_not_centred(estimator, draws, name):
    """Warn with :class:`UtilityWarning` when the plan does not centre the
    targets (public quantities only: the rows and the budget).

    Parameters
    ----------
    estimator : object
        Named in the message, with its ``epsilon``.
    draws : TargetDraws or None
        The plan's target releases (None: a public target bound or scale).
    name : str
        The estimator's target parameter.

    Returns
    -------
    bool
        Whether it warned.
    """
    if draws is None or draws.centre:
        return False
    warn_at_caller(
        f"{type(estimator).__name__}: with {draws.n_samples} rows and "
        f"epsilon={estimator.epsilon:g} the budget is too small to find the "
        "targets' location privately, so they are not centred: targets far "
        f"from zero fit poorly. Levers: {MORE_EPSILON}, {MORE_ROWS}, or centre "
        f"and scale the targets by public constants and pass a public {name}.",
        UtilityWarning)
    return True


def warn_if_clipped(estimator, share, check, *, noise, name="feature_bound"):
    """Warn with :class:`UtilityWarning` when the released share of rows far
    beyond the bound is above ``check.most``; name the levers.

    Parameters
    ----------
    estimator : object
        Named in the message.
    share : float
        The clip check's released share of far rows.
    check : ClipCheck
        The plan's check (its ``far_factor`` and ``most``).
    noise : float
        Standard deviation of the share's noise (public): a share noisier
        than ``1 / 8`` decides nothing (a fit that noisy warns that its
        noise dominates anyway), so it never warns then.
    name : str, default="feature_bound"
        The estimator's bound parameter.

    Returns
    -------
    bool
        Whether it warned.
    """
    if not (share > check.most and noise <= 1.0 / 8.0):
        return False
    bound = np.asarray(getattr(estimator, name + "_", np.nan), dtype=float)
    # Public: a bound, or one per column (their range).
    shown = (f"{name}={float(bound):g}" if bound.ndim == 0 else
             f"its column's {name} (from {bound.min():g} to {bound.max():g})")
    warn_at_caller(
        f"{type(estimator).__name__}: most rows have a value beyond "
        f"{check.far_factor:g} times {shown} "
        "(a private count), so clipping to it, in fit and in predict, keeps "
        "little of those columns. Levers: put a DP scaler before it in a "
        "private pipeline (make_private_pipeline(DPStandardScaler(), ...)), or "
        f"pass a public {name} of the features' scale.",
        UtilityWarning)
    return True


# Bounds wider than this many released standard deviations: a column
# uniform between its bounds is sqrt(12) = 3.5 of them wide, a normal one
# between its 1% and 99% quantiles 4.7, a 0/1 column with a share p of
# ones 1 / sqrt(p (1 - p)) (20 at p = 0.25%).
WIDE_BOUNDS_RATIO = 20.0


def warn_if_bounds_wide(estimator, low, high, scale):
    """Warn with :class:`UtilityWarning` when a column's bounds are more
    than :data:`WIDE_BOUNDS_RATIO` times its scale wide: the values then
    sit in a small part of the clipped range, the noise of the released
    moments is large relative to them, and the scaled column is nearly
    constant.

    Decided from released (or public) values only, ``bounds_`` and
    ``scale_`` (post-processing); the message names the columns, not the
    values.

    Parameters
    ----------
    estimator : object
        Named in the message.
    low, high, scale : ndarray of shape (n_columns,)
        The bounds and the released scale (positive).

    Returns
    -------
    bool
        Whether it warned.
    """
    # Width on halves: finite for any finite bounds.
    ratio = 2.0 * (np.asarray(high) / 2 - np.asarray(low) / 2) / np.asarray(scale)
    wide = np.flatnonzero(ratio > WIDE_BOUNDS_RATIO)
    if wide.size == 0:
        return False
    shown = ", ".join(str(j) for j in wide[:10]) + (", ..." if wide.size > 10 else "")
    warn_at_caller(
        f"{type(estimator).__name__}: the bounds of column(s) {shown} are more "
        f"than {WIDE_BOUNDS_RATIO:g} times their released standard deviation "
        "wide, so their scaled values are nearly constant and the released "
        "moments noisy. Levers: pass public bounds=(low, high) around the "
        f"data's range, {MORE_EPSILON}, {MORE_ROWS}.",
        UtilityWarning)
    return True
