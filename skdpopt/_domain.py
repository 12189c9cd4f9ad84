"""The public, finite domain of DPSyntheticData's records.

Each column is either categorical (declared categories, or a cardinality
for integer-coded data) or numeric (cut into ``n_bins`` equal bins over
public bounds).  Records become integer codes per column, and the code
tuples index the cells of a histogram over the full domain.  Nothing here
looks at the data to decide the domain: the only data-dependent part,
bounds of numeric columns nobody declared, is released by the exponential
mechanism in :func:`private_bounds` and accounted by the caller.
"""

from dataclasses import dataclass
from numbers import Integral

import numpy as np

from .mechanisms import exponential_mechanism

# Largest domain whose whole histogram is ever materialised (80 MB of
# float64), for ``histogram_`` on small domains.
MAX_DOMAIN_CELLS = 10_000_000

# Candidate bounds for a numeric column without declared bounds: 0 and
# +-2^k.  A data-independent grid, so that choosing among them is an
# exponential mechanism over public candidates.
BOUND_CANDIDATES = np.concatenate(
    [-(2.0 ** np.arange(60, -21, -1)), [0.0], 2.0 ** np.arange(-20, 61)]
)


# Public prior of the bounds draw: a factor e^-2 per doubling away from
# magnitude 1 (0 counts as 2^-21).  It only decides between candidates the
# data score (nearly) alike, such as all candidates beyond the data.
MAGNITUDE_PRIOR = 2.0 * np.abs(
    np.log2(np.where(BOUND_CANDIDATES == 0, 2.0**-21, np.abs(BOUND_CANDIDATES)))
)


@dataclass(frozen=True)
class Column:
    """One column of the domain.

    Attributes
    ----------
    name : str or int
        Column label (DataFrame column name, or position for arrays).
    categories : ndarray or None
        Declared values of a categorical column, in code order.
    edges : ndarray or None
        Bin edges of a numeric column (``n_bins + 1`` values).
    integer_coded : bool
        Categorical column given by a cardinality: its values are the
        integers ``0 .. cardinality - 1``.
    """

    name: object
    categories: np.ndarray = None
    edges: np.ndarray = None
    integer_coded: bool = False

    @property
    def size(self):
        """Number of codes of the column."""
        if self.categories is not None:
            return len(self.categories)
        return len(self.edges) - 1

    @property
    def is_numeric(self):
        return self.edges is not None


def domain_shape(columns, max_cells, whole=False):
    """Cells per column, checked against the public model size limit.

    The model always holds every column's 1-way table, so their total must
    fit in ``max_cells``; with ``whole`` (explicit linear queries, which
    address single cells of the domain) the whole domain must.
    """
    shape = tuple(column.size for column in columns)
    sizes = ", ".join(f"{c.name!r}: {c.size}" for c in columns)
    if whole:
        cells = float(np.prod([float(s) for s in shape]))
        if cells > max_cells:
            raise ValueError(
                f"The domain has {cells:.3g} cells ({sizes}), above "
                f"max_model_size={max_cells:.3g}. An explicit query matrix "
                "addresses single cells of the domain, so the model must hold "
                "the whole histogram; use a workload of marginals (an int or "
                "a list of column tuples), which is held as a graphical model, "
                "or reduce the domain (fewer columns, fewer n_bins, coarser "
                "categories)."
            )
    else:
        cells = float(sum(shape))
        if cells > max_cells:
            raise ValueError(
                f"The columns' 1-way tables have {cells:.3g} cells in all "
                f"({sizes}), above max_model_size={max_cells:.3g}. Raise "
                "max_model_size or use coarser categories or fewer n_bins."
            )
    return shape


def declared_categories(name, spec):
    """Validate one ``domain`` entry: a cardinality or a list of categories."""
    if isinstance(spec, Integral) and not isinstance(spec, bool):
        if spec < 1:
            raise ValueError(
                f"domain[{name!r}] must be a positive cardinality, got {spec}."
            )
        return Column(name, categories=np.arange(int(spec)), integer_coded=True)
    values = list(spec)
    if not values:
        raise ValueError(f"domain[{name!r}] declares no categories.")
    categories = np.empty(len(values), dtype=object)
    categories[:] = values
    return Column(name, categories=categories)


def numeric_column(name, low, high, n_bins):
    """A numeric column cut into ``n_bins`` equal bins over ``[low, high]``."""
    low, high = float(low), float(high)
    if not (np.isfinite(low) and np.isfinite(high) and low < high):
        raise ValueError(
            f"bounds[{name!r}] must be finite with low < high, got ({low}, {high})."
        )
    return Column(name, edges=np.linspace(low, high, n_bins + 1))


def _is_missing(values):
    """Elementwise missing-value test that works on object arrays."""
    try:
        import pandas as pd

        return np.asarray(pd.isna(values), dtype=bool)
    except ImportError:  # pragma: no cover - pandas is optional at runtime
        return np.array([v is None or v != v for v in values], dtype=bool)


def encode_column(column, values):
    """Integer codes of one column's values; raises on values outside it."""
    if column.is_numeric:
        values = np.asarray(values, dtype=np.float64)
        if not np.all(np.isfinite(values)):
            raise ValueError(
                f"Column {column.name!r} has NaN or infinite values; a numeric "
                "column needs finite values."
            )
        # Values outside the bounds fall into the end bins (documented).
        inner = column.edges[1:-1]
        return np.searchsorted(inner, values, side="right").astype(np.intp)
    values = np.asarray(values, dtype=object)
    missing = _is_missing(values)
    categories = column.categories
    declares_missing = bool(_is_missing(categories).any())
    if missing.any() and not declares_missing:
        raise ValueError(
            f"Column {column.name!r} has missing values (NaN or None), which "
            "are not among its declared categories."
        )
    # Map the distinct values (few) to codes, then broadcast to the rows.
    uniques, inverse = _factorize(values, missing)
    lookup = {}
    for code, category in enumerate(categories):
        lookup[_key(category)] = code
    unique_codes = np.empty(len(uniques), dtype=np.intp)
    for i, value in enumerate(uniques):
        code = lookup.get(_key(value))
        if code is None:
            # Which value, and how many rows hold it, is private.
            raise ValueError(
                f"Column {column.name!r} has values that are not among its "
                "declared categories; declare every category the column may "
                "hold in domain."
            )
        unique_codes[i] = code
    return unique_codes[inverse]


def _key(value):
    """Dictionary key under which equal category values meet (NaN with NaN,
    numpy scalars with Python scalars)."""
    if value is None or (isinstance(value, float) and value != value):
        return ("missing",)
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _factorize(values, missing):
    """Distinct values and, per row, the index of its value."""
    try:
        import pandas as pd

        codes, uniques = pd.factorize(values, use_na_sentinel=True)
        uniques = list(uniques)
        if missing.any():
            codes = np.where(codes < 0, len(uniques), codes)
            uniques.append(None)
        return uniques, codes
    except ImportError:  # pragma: no cover - pandas is optional at runtime
        keys = np.array([repr(_key(v)) for v in values])
        _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
        return [values[i] for i in first], inverse


def decode_column(column, codes, rng):
    """Column values for integer codes: the category, or for a numeric
    column a uniform draw inside the code's bin (post-processing)."""
    if not column.is_numeric:
        return column.categories[codes]
    low, high = column.edges[codes], column.edges[codes + 1]
    return low + (high - low) * rng.random(len(codes))


def private_bounds(values, epsilon_per_draw, rng, quantiles=(0.01, 0.99)):
    """Bounds of a numeric column by the exponential mechanism.

    Each bound is a draw from the public grid :data:`BOUND_CANDIDATES` with
    score ``-epsilon_per_draw / 2 * |#{x < c} - q n| - 2 |log2 |c||``:
    replacing one record moves every count by at most 1, so each draw is an
    exponential mechanism with score sensitivity ``epsilon_per_draw / 2``
    (the second term is a public prior: among candidates the data cannot
    tell apart, such as every candidate beyond the data, it prefers
    moderate magnitudes, which keeps the bins from spreading over 2^60).

    Parameters
    ----------
    values : ndarray of shape (n_samples,)
        The column (finite floats).
    epsilon_per_draw : float
        Pure-DP epsilon of each of the two draws.
    rng : numpy.random.Generator
    quantiles : tuple of float
        Target ranks of the lower and upper bound.

    Returns
    -------
    (low, high) : tuple of float
        ``low < high``.
    """
    ordered = np.sort(values)
    below = np.searchsorted(ordered, BOUND_CANDIDATES, side="left")
    bounds = []
    for q in quantiles:
        distance = np.abs(below - q * len(values))
        if np.isfinite(epsilon_per_draw):
            # Log-weights -epsilon / 2 * distance - MAGNITUDE_PRIOR.
            scale = 2.0 / epsilon_per_draw
            pick = exponential_mechanism(
                rng, -distance - scale * MAGNITUDE_PRIOR, scale=scale)
        else:  # no privacy asked: the best candidate
            pick = int(np.argmin(distance))
        bounds.append(BOUND_CANDIDATES[pick])
    low, high = sorted(bounds)
    if low == high:  # widen to the neighbouring candidates (still public)
        i = int(np.searchsorted(BOUND_CANDIDATES, low))
        low = BOUND_CANDIDATES[max(i - 1, 0)]
        high = BOUND_CANDIDATES[min(i + 1, len(BOUND_CANDIDATES) - 1)]
    return float(low), float(high)
