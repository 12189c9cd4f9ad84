"""The release of private bounds and clipped moments of numeric columns.

One implementation for every place where a bound drives utility: the
scalers of :mod:`skdpopt.preprocessing`, the ``"auto"`` bounds of the
estimators (upper quantiles of a per-record statistic: ``|y_i|``,
``max_j |x_ij|``, a gradient's norm) and the numeric columns of
DPSyntheticData.  Two mechanisms, both under replace-one neighbouring:

* :func:`private_bounds`: for each column, draws of the exponential
  mechanism over the public grid of candidates (first the grid cell holding
  the median, then one candidate per rank, anchored at that cell), scored
  by how far the count of values below a candidate is from a target count.
  Replacing one record moves every count by at most 1, so each draw has
  the plan's score sensitivity.  Values only ever enter comparisons with
  candidates (:func:`skdpopt._data.counts_below`), so extreme values
  (1e300, float32 3e19, infinities) cannot overflow anything.
* :func:`private_moments`: noisy sums of the values clipped to public (or
  released) bounds and rescaled to ``[-1, 1]``, Gaussian (or Laplace when
  ``delta = 0``).

What they release is planned in :mod:`skdpopt.plans.bounds` (the draws:
:class:`~skdpopt.plans.bounds.QuantileDraws`) and
:mod:`skdpopt.plans.preprocessing` (the moments' noise); the derivations
are in ``docs/privacy/preprocessing.md``.
"""

import math

import numpy as np
import scipy.sparse as sp

from ._data import counts_below
from ._sums import row_blocks, sum_parts
from .mechanisms import exponential_mechanism, gaussian_noise, laplace_noise


def symlog(values):
    """``sign(c) * log2(1 + |c|)``: the monotone scale the prior measures
    distances on (about linear below 1, logarithmic above)."""
    values = np.asarray(values, dtype=np.float64)
    return np.sign(values) * np.log2(1.0 + np.abs(values))


def anchored_prior(q, anchor, grid, weight):
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
        Each column's anchor, a candidate (released).
    grid : ndarray of shape (n_candidates,)
    weight : float

    Returns
    -------
    ndarray of shape (n_columns, n_candidates)
        ``-inf`` on the excluded side.
    """
    steps = symlog(grid)[None, :] - symlog(anchor)[:, None]
    if q < 0.5:
        steps = -steps
    return np.where(steps >= 0, -weight * steps, -np.inf)


def _draw(distance, score_sensitivity, prior, rng):
    """One exponential-mechanism draw per column, log-weights
    ``-score_sensitivity * distance + prior`` (a handful of columns, each
    over the grid)."""
    if np.isfinite(score_sensitivity):
        # Scores -distance + prior / s at Gumbel scale 1 / s: the log-weights
        # above, with the scale the sampler sees.
        scale = 1.0 / score_sensitivity
        score = -distance + scale * prior
        return np.array([exponential_mechanism(rng, row, scale=scale)
                         for row in score], dtype=np.intp)
    # No privacy: the best candidate, the prior breaking ties.
    return np.argmax(np.where(np.isfinite(prior), -distance + 1e-9 * prior,
                              -np.inf), axis=1)


def _cell_distance(below, target):
    """How far each cell ``[c_k, c_(k+1))`` is from holding the value of
    rank ``target`` (a count): ``max(#{x < c_k} - target, target -
    #{x < c_(k+1)}, 0)``, moving by at most 1 when a record is replaced."""
    return np.maximum(np.maximum(below[:, :-1] - target, target - below[:, 1:]),
                      0.0)


def _median_cell_distance(below, n_samples):
    """How far each cell ``[c_k, c_(k+1))`` is from holding the median:
    ``max(#{x < c_k} - n/2, n/2 - #{x < c_(k+1)}, 0)``.  Each count moves
    by at most 1 when a record is replaced, so this distance does too.
    Unlike a candidate, a cell can hold all the data (a column of years all
    in ``[1722, 2048)``), so the draw is never flat where the data are."""
    half = n_samples / 2.0
    return np.maximum(np.maximum(below[:, :-1] - half, half - below[:, 1:]), 0.0)


def private_bounds(values, draws, rng):
    """Private bounds of each column: the one release of private bounds.

    ``draws.draws_per_column`` exponential-mechanism draws per column (the
    event is ``draws.event``): the cell of the grid holding the median (score
    sensitivity ``draws.median_sensitivity``),
    then each rank q of ``draws.quantiles``, a lower rank anchored at the
    cell's lower end and an upper rank at its upper end
    (:func:`anchored_prior`).  With ``draws.location_cells`` the bounds are
    located instead (:func:`_located_ranks`): one more draw refines the
    median cell to a location ``m``, and the ranks are drawn from the grid
    shifted to ``m``, anchored there.  Then, by post-processing: a (low,
    high) pair is ordered and, where it fell on one candidate, widened to
    its neighbours among the candidates; every bound is raised to
    ``draws.floor``.

    Parameters
    ----------
    values : array-like of shape (n_samples, n_columns) or (n_samples,), or \
list of them
        The columns, or one per-record statistic per column (a Dask array
        is read block by block); NaN counts as infinite.
    draws : QuantileDraws
        From the plan: the grid, the ranks, the score sensitivity.
    rng : numpy.random.Generator

    Returns
    -------
    ndarray of shape (len(draws.quantiles), n_columns)
        The released candidates, one row per rank (``low, high = ...`` for
        a pair).
    """
    grid = draws.grid
    if isinstance(values, list):
        below = np.vstack([counts_below(v, grid) for v in values])
        n_samples = values[0].shape[0]
    else:
        below = np.atleast_2d(counts_below(values, grid))
        n_samples = values.shape[0]
    sensitivity = draws.score_sensitivity
    cell = _draw(_median_cell_distance(below, n_samples), draws.median_sensitivity,
                 np.zeros((below.shape[0], len(grid) - 1)), rng)
    if draws.location_cells:
        location = refine_location(values, grid[cell], grid[cell + 1],
                                   draws.location_cells,
                                   draws.location_sensitivity, rng)
        return np.maximum(_located_ranks(values, location, draws, rng),
                          draws.floor)
    picks = []
    for q in draws.quantiles:  # a handful of ranks, never rows
        anchor = grid[cell] if q < 0.5 else grid[cell + 1]
        prior = anchored_prior(q, anchor, grid, draws.prior_weight)
        picks.append(_draw(np.abs(below - q * n_samples), sensitivity, prior, rng))
    picks = _order_pair(np.array(picks), draws.quantiles, len(grid))
    return np.maximum(grid[picks], draws.floor)


def private_location_scale(X, draws, rng):
    """Private located bounds of each column from a location and a scale.

    Three exponential-mechanism draws per column (``draws.event``), each
    scored by a cell's distance from holding a median
    (:func:`_median_cell_distance`, moving by at most 1 when a record is
    replaced): the cell of the grid holding the column's median, the
    location ``m`` inside it (:func:`refine_location`), then, given the
    released ``m``, the cell ``[c_k, c_(k+1))`` of the non-negative grid
    holding the median of ``|x_i - m|``; the scale is ``s = c_(k+1)``.
    Median-type draws need no prior: every cell beyond the data, on either
    side, is ``n / 2`` from holding the median.  The bounds are ``m -
    spread[0] s`` and ``m + spread[1] s`` (post-processing), at most
    ``2^61 + 6 * 2^60`` in magnitude; where they round to one value (a
    large ``m`` and a tiny ``s``) they are its floating-point neighbours.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_columns)
        Finite values.
    draws : LocationScaleDraws
        From the plan.
    rng : numpy.random.Generator

    Returns
    -------
    low, high : ndarray of shape (n_columns,)
    """
    grid, n_samples = draws.grid, X.shape[0]
    sensitivity = draws.score_sensitivity
    below = np.atleast_2d(counts_below(X, grid))
    cell = _draw(_median_cell_distance(below, n_samples), sensitivity,
                 np.zeros((below.shape[0], len(grid) - 1)), rng)
    location = refine_location(X, grid[cell], grid[cell + 1],
                               draws.location_cells, sensitivity, rng)
    scale_grid = draws.scale_grid
    below = np.vstack([counts_below(np.abs(X[:, j] - m), scale_grid)
                       for j, m in enumerate(location)])  # columns, never rows
    scale = scale_grid[_draw(_cell_distance(below, draws.scale_rank * n_samples),
                             sensitivity,
                             np.zeros((len(location), len(scale_grid) - 1)),
                             rng) + 1]
    low = location - draws.spread[0] * scale
    high = location + draws.spread[1] * scale
    tied = ~(low < high)
    low = np.where(tied, np.nextafter(location, -np.inf), low)
    high = np.where(tied, np.nextafter(location, np.inf), high)
    return low, high


def _order_pair(picks, quantiles, n_candidates):
    """A (low, high) pair of candidate indices ordered and, where both fell
    on one candidate, widened to its neighbours (post-processing)."""
    if len(picks) == 2 and quantiles[0] < 0.5 < quantiles[1]:
        low, high = np.min(picks, axis=0), np.max(picks, axis=0)
        tied = low == high
        low = np.where(tied, np.maximum(low - 1, 0), low)
        high = np.where(tied, np.minimum(high + 1, n_candidates - 1), high)
        picks = np.array([low, high])
    return picks


def _column(values, j):
    """Column ``j`` of ``values`` (a list of per-record statistics, a 1-D
    column or a 2-D array)."""
    if isinstance(values, list):
        return values[j]
    return values if values.ndim == 1 else values[:, j]


def refine_location(values, cell_low, cell_high, n_cells, score_sensitivity, rng):
    """A private location inside each column's released median cell.

    The cell ``[a, b)`` is cut into ``n_cells`` equal cells and the one
    holding the median is drawn with the median cell's score
    (:func:`_median_cell_distance`, moving by at most 1 when a record is
    replaced): one exponential-mechanism draw per column.  Returns the
    drawn cell's midpoint, within ``(b - a) / (2 n_cells)`` of a value of
    that cell; finite for any finite cell (computed on halves).

    Parameters
    ----------
    values : array-like or list of them
        As :func:`private_bounds` reads them.
    cell_low, cell_high : ndarray of shape (n_columns,)
        Each column's released median cell.
    n_cells : int
    score_sensitivity : float
    rng : numpy.random.Generator

    Returns
    -------
    ndarray of shape (n_columns,)
    """
    fractions = np.arange(n_cells + 1) / n_cells
    n_samples = _column(values, 0).shape[0]
    rows = np.arange(len(cell_low))
    # a + (b - a) t on halves: no intermediate exceeds |a| + |b| <= 2^61.
    fine = 2.0 * (cell_low[:, None] / 2 + (cell_high[:, None] / 2
                                           - cell_low[:, None] / 2) * fractions)
    below = np.vstack([counts_below(_column(values, j), fine[j])
                       for j in rows])  # columns, never rows
    drawn = _draw(_median_cell_distance(below, n_samples), score_sensitivity,
                  np.zeros((len(rows), n_cells)), rng)
    return fine[rows, drawn] / 2 + fine[rows, drawn + 1] / 2


def _located_ranks(values, location, draws, rng):
    """Each rank drawn from the grid shifted to the column's location ``m``:
    candidates ``m + c`` for every ``c`` of the grid (rounded, then
    deduplicated: public given ``m``), scored like the grid's own, with
    :func:`anchored_prior` on the offsets ``c`` anchored at ``m`` (weight
    ``draws.prior_weight``, lighter than the grid's: the offsets start at
    0 whatever the column's magnitude).  With ``m`` near 0 these are the
    grid's candidates; a column far
    from 0 relative to its spread (years, prices) gets candidates 19% of
    their distance from ``m`` apart, not of their magnitude.  Every
    candidate is at most ``2^61`` in magnitude: nothing overflows."""
    n_samples = _column(values, 0).shape[0]
    out = np.empty((len(draws.quantiles), len(location)))
    for j, m in enumerate(location):  # columns, never rows
        candidates = np.unique(m + draws.grid)
        offsets = candidates - m
        below = np.atleast_2d(counts_below(_column(values, j), candidates))
        picks = []
        for q in draws.quantiles:
            prior = anchored_prior(q, np.zeros(1), offsets, draws.prior_weight)
            picks.append(_draw(np.abs(below - q * n_samples),
                               draws.score_sensitivity, prior, rng))
        picks = _order_pair(np.array(picks), draws.quantiles, len(candidates))
        out[:, j] = candidates[picks[:, 0]]
    return out


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
            noise, std = gaussian_noise(rng, scale, d), scale
        else:
            scale = z * sens * d
            noise, std = laplace_noise(rng, scale, d), math.sqrt(2.0) * scale
        means.append((stat + noise) / n)
        stds.append(std / n)
    mean_unit, second_unit = means
    if mean_unit is not None:
        mean_unit = np.clip(mean_unit, -1.0, 1.0)
    if second_unit is not None:
        second_unit = np.clip(second_unit + 0.5, 0.0, 1.0)
    return mean_unit, second_unit, tuple(stds)
