"""Private bounds and clipped moments of numeric columns.

One implementation for every place where a bound drives utility: the
scalers of :mod:`skdpopt.preprocessing`, and meant for the numeric domains
of DPSyntheticData and for bounds such as a target bound or a clip norm,
which are quantiles of a per-record statistic (``|y_i|``, ``||x_i||``).

Two mechanisms, both under replace-one neighbouring:

* :func:`private_bounds` and :func:`private_quantiles`: for each column,
  draws of the exponential mechanism over a public grid of candidates
  (:func:`bound_grid`), scored by how far the count of values below a
  candidate is from a target count (:func:`private_bounds` first draws the
  grid cell holding the median, and anchors the two bounds at it).
  Replacing one record moves every count by at most 1, so a draw whose
  score is ``score_sensitivity`` times minus that distance has score
  sensitivity ``score_sensitivity``
  (:class:`~skdpopt.accounting.ExponentialMechanism`).  Values only ever
  enter comparisons with candidates, so extreme values (1e300, float32
  3e19, infinities) cannot overflow anything.
* :func:`private_moments`: noisy sums of the values clipped to public (or
  earlier released) bounds and rescaled to ``[-1, 1]``, Gaussian (or
  Laplace when ``delta = 0``).

The events of both are built by :func:`quantile_event` and
:func:`moments_event`, and calibrated by the plans in
:mod:`skdpopt.plans.preprocessing`.  The derivations are in
``docs/privacy/preprocessing.md``.
"""

import math

import numpy as np
import scipy.sparse as sp

from ._sums import row_blocks, sum_parts
from .accounting import (
    ExponentialMechanism,
    GaussianMechanism,
    LaplaceMechanism,
    compose,
    repeat,
)

# Magnitudes the default grid spans: 2^-20 (about 1e-6) to 2^60 (about 1e18).
GRID_EXPONENTS = (-20, 60)
# Candidates per doubling of the default grid: a chosen bound is then
# within a factor 2^(1/4) (19%) of the best candidate.
GRID_PER_DOUBLING = 4

# Weight of the public prior per doubling of magnitude away from the
# anchor (see ``anchored_prior``): 1 per candidate of the default grid at
# magnitudes above 1.  Among candidates the data score alike it prefers
# the one nearest the anchor.
PRIOR_WEIGHT = 4.0

# The candidates the data leave tied weigh together at most exp(-TIE_MARGIN)
# of a candidate at the target (see ``effective_quantiles``).
TIE_MARGIN = 3.0
# Target ranks are never moved further inwards than this.
MAX_TAIL = 0.25


def bound_grid(exponents=GRID_EXPONENTS, per_doubling=GRID_PER_DOUBLING):
    """The public grid of candidate bounds: 0 and ``+-2^(k / per_doubling)``.

    Parameters
    ----------
    exponents : (int, int), default=(-20, 60)
        Smallest and largest magnitude, as powers of 2.
    per_doubling : int, default=4
        Candidates per doubling of the magnitude.

    Returns
    -------
    ndarray
        Sorted, symmetric about 0, independent of any data.
    """
    low, high = exponents
    powers = 2.0 ** (np.arange(low * per_doubling, high * per_doubling + 1)
                     / per_doubling)
    return np.concatenate([-powers[::-1], [0.0], powers])


DEFAULT_GRID = bound_grid()


def symlog(values):
    """``sign(c) * log2(1 + |c|)``: the monotone scale the prior measures
    distances on (about linear below 1, logarithmic above)."""
    values = np.asarray(values, dtype=np.float64)
    return np.sign(values) * np.log2(1.0 + np.abs(values))


def anchored_prior(q, anchor, grid, weight=PRIOR_WEIGHT):
    """Public log-prior of the candidates of a draw aiming at rank ``q``.

    An upper rank (``q > 1/2``) may only pick candidates at or above the
    anchor, and weighs each ``weight`` less per doubling of magnitude
    above it (distances on :func:`symlog`); a lower rank the mirror image.
    The candidates the data cannot tell apart are those beyond the data
    (all have the same count below them): the prior makes the draw prefer
    the nearest of them.

    Parameters
    ----------
    q : float
        Rank, not 1/2.
    anchor : ndarray of shape (n_columns,)
        Each column's anchor, a candidate (public or released).
    grid : ndarray of shape (n_candidates,)
    weight : float, default=4.0

    Returns
    -------
    ndarray of shape (n_columns, n_candidates)
        ``-inf`` on the excluded side.
    """
    steps = symlog(grid)[None, :] - symlog(anchor)[:, None]
    if q < 0.5:
        steps = -steps
    return np.where(steps >= 0, -weight * steps, -np.inf)


def tied_weight(weight=PRIOR_WEIGHT, per_doubling=GRID_PER_DOUBLING):
    """Total prior weight of the candidates beyond the data, relative to the
    nearest, at magnitudes above 1: ``1 / (1 - 2^(-weight / per_doubling))``
    (below 1 the prior hardly separates candidates; see the docs)."""
    return 1.0 / -math.expm1(-weight / per_doubling * math.log(2.0))


def effective_quantiles(quantiles, n_samples, score_sensitivity):
    """Target ranks moved inwards until the draw can find them.

    A candidate beyond every value scores ``score_sensitivity * t * n``
    below a candidate at the target, where ``t`` is the target's tail
    (``q``, or ``1 - q``); with the prior, all of them together weigh at
    most :func:`tied_weight` times the nearest.  They are at most
    ``exp(-TIE_MARGIN)`` of a candidate at the target once
    ``t >= (log(tied_weight()) + TIE_MARGIN) / (score_sensitivity * n)``;
    smaller tails are raised to that, at most to :data:`MAX_TAIL`.  Uses
    public quantities only.

    Parameters
    ----------
    quantiles : sequence of float
        Requested ranks in [0, 1].
    n_samples : int
    score_sensitivity : float
        Of each draw; ``inf`` (no privacy) keeps the ranks.

    Returns
    -------
    tuple of float
    """
    if not np.isfinite(score_sensitivity):
        return tuple(float(q) for q in quantiles)
    margin = math.log(tied_weight()) + TIE_MARGIN
    tail = min(margin / (score_sensitivity * max(n_samples, 1)), MAX_TAIL)
    out = []
    for q in quantiles:
        q = float(q)
        if q < 0.5:
            q = min(max(q, tail), 0.5)
        elif q > 0.5:
            q = max(min(q, 1.0 - tail), 0.5)
        out.append(q)
    return tuple(out)


def median_cell_is_reliable(n_samples, score_sensitivity,
                            n_candidates=DEFAULT_GRID.size):
    """Whether the median-cell draw of :func:`private_bounds` finds the data.

    Every cell beyond the data is ``n / 2`` from holding the median, so the
    ``n_candidates - 1`` cells together weigh at most ``exp(-TIE_MARGIN)``
    of the right one once ``score_sensitivity * n / 2 >=
    log(n_candidates - 1) + TIE_MARGIN``.  Public quantities only.
    """
    if not np.isfinite(score_sensitivity):
        return True
    needed = math.log(n_candidates - 1) + TIE_MARGIN
    return score_sensitivity * n_samples / 2.0 >= needed


def counts_below(X, grid=DEFAULT_GRID):
    """``#{i : X[i, j] < grid[k]}`` for every column j and candidate k.

    Vectorised: each value's position in the grid (a binary search), then
    one histogram of positions per column and a cumulative sum.  Values are
    only compared with candidates, so no value can overflow.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_columns)
        Values (NaN not allowed; infinities are fine).
    grid : ndarray of shape (n_candidates,), sorted

    Returns
    -------
    ndarray of int of shape (n_columns, n_candidates)
    """
    X = np.asarray(X)
    n_samples, n_columns = X.shape
    m = len(grid)
    # x < grid[k] exactly when k >= #{candidates <= x}.
    position = np.searchsorted(grid, X, side="right")
    offsets = np.arange(n_columns) * (m + 1)
    hist = np.bincount((position + offsets).ravel(),
                       minlength=n_columns * (m + 1)).reshape(n_columns, m + 1)
    return np.cumsum(hist, axis=1)[:, :m]


def _as_columns(X):
    X = np.asarray(X)
    if X.ndim == 1:
        X = X[:, None]
    if np.isnan(X).any():
        raise ValueError("private quantiles need values without NaN.")
    return X


def _draw(distance, score_sensitivity, prior, rng):
    """One exponential-mechanism draw per column (Gumbel-max, exact):
    log-weights ``-score_sensitivity * distance + prior``."""
    if np.isfinite(score_sensitivity):
        score = -score_sensitivity * distance + prior
        return np.argmax(score + rng.gumbel(size=score.shape), axis=1)
    # No privacy: the best candidate, the prior breaking ties.
    return np.argmax(np.where(np.isfinite(prior), -distance + 1e-9 * prior,
                              -np.inf), axis=1)


def private_quantiles(X, quantiles, score_sensitivity, rng, *, anchor=0.0,
                      grid=DEFAULT_GRID, prior_weight=PRIOR_WEIGHT):
    """Private quantiles of each column, drawn from a public grid.

    For each column and each rank q, one exponential-mechanism draw of a
    candidate c with log-weight ``-score_sensitivity * |#{x < c} - q n|``
    plus the public prior :func:`anchored_prior` (upper ranks pick at or
    above the anchor, lower ranks at or below).  One record changes each
    count by at most 1, so each draw is an
    ``ExponentialMechanism(score_sensitivity)``: the whole call is the
    event ``quantile_event(score_sensitivity, n_columns, len(quantiles))``.

    The columns can be any per-record statistic (``|y_i|``, a row norm),
    as long as each record contributes one value to each column.  For a
    non-negative statistic the default anchor 0 is right; for a column
    that may lie anywhere, :func:`private_bounds` first draws a median as
    the anchor.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_columns) or (n_samples,)
        Values; NaN is refused (the caller validates), infinities are fine.
    quantiles : sequence of float
        Ranks in [0, 1]; pass them through :func:`effective_quantiles`
        first to keep the draws away from ties.
    score_sensitivity : float
        Score sensitivity of each draw (> 0); ``np.inf`` returns the best
        candidate (no privacy).
    rng : numpy.random.Generator
    anchor : float or array-like of shape (n_columns,), default=0.0
        Public (or earlier released) value per column.
    grid : ndarray, default=DEFAULT_GRID
        Public, sorted candidates.
    prior_weight : float, default=4.0

    Returns
    -------
    ndarray of shape (len(quantiles), n_columns)
        Chosen candidates.
    """
    X = _as_columns(X)
    return quantiles_from_counts(counts_below(X, grid), X.shape[0], quantiles,
                                 score_sensitivity, rng, anchor=anchor,
                                 grid=grid, prior_weight=prior_weight)


def quantiles_from_counts(below, n_samples, quantiles, score_sensitivity, rng, *,
                          anchor=0.0, grid=DEFAULT_GRID,
                          prior_weight=PRIOR_WEIGHT):
    """:func:`private_quantiles` from the counts of :func:`counts_below`
    (computed by any backend: the draws read nothing else)."""
    n_columns = below.shape[0]
    anchor = np.broadcast_to(np.asarray(anchor, dtype=np.float64), (n_columns,))
    out = np.empty((len(quantiles), n_columns))
    for row, q in enumerate(quantiles):  # a handful of ranks, never rows
        if q == 0.5:
            raise ValueError("use private_median_cell for the median.")
        prior = anchored_prior(q, anchor, grid, prior_weight)
        distance = np.abs(below - q * n_samples)
        out[row] = grid[_draw(distance, score_sensitivity, prior, rng)]
    return out


def _median_cell_distance(below, n_samples):
    """How far each cell ``[c_k, c_(k+1))`` is from holding the median:
    ``max(#{x < c_k} - n/2, n/2 - #{x < c_(k+1)}, 0)``.  Each count moves
    by at most 1 when a record is replaced, so this distance does too."""
    half = n_samples / 2.0
    return np.maximum(np.maximum(below[:, :-1] - half, half - below[:, 1:]), 0.0)


def private_median_cell(X, score_sensitivity, rng, *, grid=DEFAULT_GRID):
    """The cell of the grid holding each column's median, privately.

    One exponential-mechanism draw per column over the cells
    ``[c_k, c_(k+1))``, log-weight ``-score_sensitivity`` times the
    distance of :func:`_median_cell_distance` (score sensitivity
    ``score_sensitivity``).  Unlike a candidate, a cell can hold all the
    data (a column of years all in ``[1722, 2048)``), so the draw is never
    flat where the data are.

    Returns
    -------
    ndarray of int of shape (n_columns,)
        ``k``: the cell is ``[grid[k], grid[k + 1])``.
    """
    X = _as_columns(X)
    return median_cell_from_counts(counts_below(X, grid), X.shape[0],
                                   score_sensitivity, rng)


def median_cell_from_counts(below, n_samples, score_sensitivity, rng):
    """:func:`private_median_cell` from the counts of :func:`counts_below`."""
    distance = _median_cell_distance(below, n_samples)
    return _draw(distance, score_sensitivity, np.zeros(distance.shape), rng)


def private_bounds(X, score_sensitivity, rng, *, quantiles=(0.01, 0.99),
                   grid=DEFAULT_GRID, prior_weight=PRIOR_WEIGHT):
    """Private lower and upper bounds of each column, ``low < high``.

    Three draws per column (the event is
    ``quantile_event(score_sensitivity, n_columns, 3)``): the cell of the
    grid holding the median (:func:`private_median_cell`), then the lower
    rank anchored at the cell's lower end and the upper rank at its upper
    end (:func:`private_quantiles`).  Then, by post-processing, a pair that fell on one
    candidate is widened to its neighbours in the grid.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_columns) or (n_samples,)
    score_sensitivity : float
    rng : numpy.random.Generator
    quantiles : (float, float), default=(0.01, 0.99)
        Target ranks, used as given (see :func:`effective_quantiles`).
    grid : ndarray, default=DEFAULT_GRID
    prior_weight : float, default=4.0

    Returns
    -------
    low, high : ndarray of shape (n_columns,)
    """
    X = _as_columns(X)
    n_samples = X.shape[0]
    below = counts_below(X, grid)
    cell = _draw(_median_cell_distance(below, n_samples), score_sensitivity,
                 np.zeros((below.shape[0], len(grid) - 1)), rng)
    picks = []
    for q, anchor in zip(quantiles, (grid[cell], grid[cell + 1]), strict=True):
        prior = anchored_prior(q, anchor, grid, prior_weight)
        distance = np.abs(below - q * n_samples)
        picks.append(_draw(distance, score_sensitivity, prior, rng))
    low, high = np.min(picks, axis=0), np.max(picks, axis=0)
    tied = low == high
    low = np.where(tied, np.maximum(low - 1, 0), low)
    high = np.where(tied, np.minimum(high + 1, len(grid) - 1), high)
    return grid[low], grid[high]


BOUNDS_DRAWS = 3  # per column: the median anchor and the two bounds


def quantile_event(score_sensitivity, n_columns, n_quantiles=BOUNDS_DRAWS):
    """Event of :func:`private_quantiles` (``n_quantiles`` ranks) or of
    :func:`private_bounds` (the default, 3 draws per column)."""
    return repeat(ExponentialMechanism(score_sensitivity), n_columns * n_quantiles)


def clip_to_unit(X, low, high):
    """X clipped to ``[low, high]`` per column and mapped affinely to ``[-1, 1]``.

    Computed on halves, ``(clip(x)/2 - low/2) / (high/2 - low/2) * 2 - 1``,
    so that no intermediate overflows for any finite bounds, whatever the
    values.
    """
    low = np.asarray(low, dtype=np.float64)
    high = np.asarray(high, dtype=np.float64)
    if sp.issparse(X):
        X = X.toarray()
    clipped = np.clip(np.asarray(X, dtype=np.float64), low, high)
    # Halves first: (high - low) / 2 and (x - low) / 2 are below the float
    # maximum for any finite bounds.
    unit = (clipped / 2 - low / 2) / (high / 2 - low / 2)
    return 2.0 * unit - 1.0


def moments_event(noise_multipliers, n_columns, mechanism="gaussian"):
    """Event of :func:`private_moments` with the given noise levels.

    Parameters
    ----------
    noise_multipliers : (float or None, float or None)
        Noise of the sum and of the sum of squares, each in units of its
        L2 sensitivity (Gaussian: ``2 sqrt(d)`` and ``sqrt(d)``) or, for
        Laplace, the Laplace scale over the L1 sensitivity (``2 d`` and
        ``d``).  None: not released.
    n_columns : int
        Unused by the event (the sensitivities above already include it);
        kept so that callers say what they release.
    mechanism : {"gaussian", "laplace"}, default="gaussian"
    """
    events = []
    for z in noise_multipliers:
        if z is None:
            continue
        if mechanism == "gaussian":
            events.append(GaussianMechanism(z))
        else:
            events.append(LaplaceMechanism(1.0 / z))
    return compose(*events)


def _unit_sums(X, low, high):
    """``S1`` and ``S2`` of :func:`private_moments` (before noise), in
    float64 a block of rows at a time: no float64 copy of the whole of X,
    and sums whose rounding does not depend on the data's order (see
    :mod:`skdpopt._sums`)."""
    firsts, seconds = [np.zeros(X.shape[1])], [np.zeros(X.shape[1])]
    for start, end in row_blocks(*X.shape):
        u = clip_to_unit(X[start:end], low, high)
        firsts.append(u.sum(axis=0))
        seconds.append((u * u - 0.5).sum(axis=0))
    return sum_parts(firsts), sum_parts(seconds)


def private_moments(X, low, high, noise_multipliers, rng, mechanism="gaussian"):
    """Private mean and second moment of each column clipped to bounds.

    Each value is clipped to its column's ``[low, high]`` and mapped to
    ``u`` in ``[-1, 1]`` (:func:`clip_to_unit`).  Released:

    * ``S1 = sum_i u_i`` (a vector over the d columns): replacing one record
      moves each entry by at most 2, so the L2 sensitivity is ``2 sqrt(d)``
      and the L1 sensitivity ``2 d``;
    * ``S2 = sum_i (u_i^2 - 1/2)``: each term is in ``[-1/2, 1/2]``, so the
      sensitivities are ``sqrt(d)`` and ``d``;

    each with noise of standard deviation (Gaussian) or scale (Laplace)
    ``noise_multiplier * sensitivity``.  The number of rows is public.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_columns)
    low, high : ndarray of shape (n_columns,)
        Public bounds (or bounds released earlier), ``low < high``.
    noise_multipliers : (float or None, float or None)
        For ``S1`` and ``S2``; 0 adds no noise, None skips the release.
    rng : numpy.random.Generator
    mechanism : {"gaussian", "laplace"}, default="gaussian"

    Returns
    -------
    mean_unit : ndarray of shape (n_columns,) or None
        Noisy mean of ``u``, clipped to [-1, 1].
    second_unit : ndarray of shape (n_columns,) or None
        Noisy mean of ``u^2``, clipped to [0, 1].
    noise_std : (float or None, float or None)
        Standard deviation of the noise on each mean (public).
    """
    n_samples, d = X.shape
    n = max(n_samples, 1)
    stats = _unit_sums(X, low, high)
    sensitivity = (2.0, 1.0)
    means, stds = [], []
    for stat, z, sens in zip(stats, noise_multipliers, sensitivity, strict=True):
        if z is None:
            means.append(None)
            stds.append(None)
            continue
        if mechanism == "gaussian":
            scale = z * sens * math.sqrt(d)
            noise = rng.normal(0.0, scale, d) if scale > 0 else 0.0
            std = scale
        else:
            scale = z * sens * d
            noise = rng.laplace(0.0, scale, d) if scale > 0 else 0.0
            std = math.sqrt(2.0) * scale
        means.append((stat + noise) / n)
        stds.append(std / n)
    mean_unit, second_unit = means
    if mean_unit is not None:
        mean_unit = np.clip(mean_unit, -1.0, 1.0)
    if second_unit is not None:
        second_unit = np.clip(second_unit + 0.5, 0.0, 1.0)
    return mean_unit, second_unit, tuple(stds)


def safe_row_norms(X):
    """Euclidean norm of each row, without overflow.

    Each row is divided by its largest absolute entry before squaring, so
    a row of 1e200 has norm about 1e200 (not inf); float32 is upcast.  An
    infinite entry gives an infinite norm, never NaN.  For clip-norm
    quantiles: ``private_quantiles(safe_row_norms(X), ...)``.

    Parameters
    ----------
    X : {ndarray, sparse matrix} of shape (n_samples, n_features)

    Returns
    -------
    ndarray of shape (n_samples,)
    """
    if sp.issparse(X):
        X = sp.csr_array(X, dtype=np.float64)
        absolute = abs(X)
        peak = absolute.max(axis=1).toarray().ravel()
        safe = np.where((peak > 0) & np.isfinite(peak), peak, 1.0)
        scaled = sp.diags_array(1.0 / safe) @ absolute
        norms = np.sqrt(np.asarray(scaled.multiply(scaled).sum(axis=1)).ravel())
    else:
        absolute = np.abs(np.asarray(X, dtype=np.float64))
        if absolute.shape[1] == 0:
            return np.zeros(absolute.shape[0])
        peak = absolute.max(axis=1)
        safe = np.where((peak > 0) & np.isfinite(peak), peak, 1.0)
        scaled = absolute / safe[:, None]
        norms = np.sqrt(np.einsum("ij,ij->i", scaled, scaled))
    out = norms * np.where(np.isfinite(peak) & (peak > 0), peak, 1.0)
    return np.where(np.isinf(peak), np.inf, out)
