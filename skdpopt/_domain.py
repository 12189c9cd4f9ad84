"""The public, finite domain of DPSyntheticData's records.

Each column is either categorical (declared categories, or a cardinality
for integer-coded data) or numeric (cut into ``n_bins`` equal bins over
public bounds).  Records become integer codes per column, and the code
tuples index the cells of a histogram over the full domain.  Nothing here
looks at the data to decide the domain: the only data-dependent part,
bounds of numeric columns nobody declared, is released by
:func:`skdpopt._bounds.private_bounds` and accounted by the plan.
"""

import itertools
from dataclasses import dataclass
from numbers import Integral

import numpy as np

# Largest domain whose whole histogram is ever materialised (80 MB of
# float64), for ``histogram_`` on small domains.
MAX_DOMAIN_CELLS = 10_000_000

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


def per_column(spec, names, parameter):
    """``domain`` or ``bounds`` as one entry (or None) per column."""
    if spec is None:
        return [None] * len(names)
    if isinstance(spec, dict):
        unknown = [k for k in spec if k not in names]
        if unknown:
            raise ValueError(
                f"{parameter} names column(s) {unknown!r} that X does not have."
            )
        return [spec.get(name) for name in names]
    spec = list(spec)
    if len(spec) != len(names):
        raise ValueError(
            f"{parameter} has {len(spec)} entries but X has {len(names)} columns."
        )
    return spec


def declared_domain(names, domain, bounds, n_bins):
    """Per column: a :class:`Column` if its domain is public (declared
    categories, or a numeric column with declared bounds), None if a
    numeric column still needs private bounds."""
    domain_spec = per_column(domain, names, "domain")
    bounds_spec = per_column(bounds, names, "bounds")
    columns = []
    for name, spec, bound in zip(names, domain_spec, bounds_spec, strict=True):
        if spec is not None:
            column = declared_categories(name, spec)
            if column.size < 2:
                raise ValueError(
                    f"Column {name!r} has a single declared value, so it "
                    "carries nothing; drop it before fitting."
                )
        elif bound is not None:
            column = numeric_column(name, *bound, n_bins)
        else:
            column = None
        columns.append(column)
    return columns


def finite_numeric(name, values):
    """A numeric column's values as float64, refusing text, NaN and infinities."""
    try:
        values = np.asarray(values, dtype=np.float64)
    except ValueError:  # text; other objects raise numpy's TypeError
        raise ValueError(
            f"Column {name!r} is not numeric; declare its categories in domain "
            "(categories cannot be learnt from the data for free)."
        ) from None
    if not np.all(np.isfinite(values)):
        raise ValueError(
            f"Column {name!r} has NaN or infinite values; a numeric column "
            "needs finite values."
        )
    return values


def resolve_workload(workload, names, domain, n_bins):
    """The workload as column positions (marginals) or a query matrix.

    Parameters
    ----------
    workload : int, list of tuple or ndarray
        ``DPSyntheticData``'s parameter.
    names : list
        Column names (or positions).
    domain : list of Column or None
        From :func:`declared_domain`; a column still without bounds counts
        ``n_bins`` cells.
    n_bins : int

    Returns
    -------
    list of tuple of int, or ndarray of shape (n_queries, n_cells)
    """
    n_columns = len(names)
    if isinstance(workload, np.ndarray):
        matrix = np.asarray(workload, dtype=np.float64)
        if matrix.ndim != 2:
            raise ValueError("workload as an array must be 2-D (queries x cells).")
        cells = int(np.prod([c.size if c is not None else n_bins for c in domain]))
        if matrix.shape[1] != cells:
            raise ValueError(
                f"workload has {matrix.shape[1]} columns but the domain "
                f"has {cells} cells."
            )
        if not np.all(np.isfinite(matrix)) or np.abs(matrix).max() > 1:
            raise ValueError("workload coefficients must be finite, in [-1, 1].")
        return matrix
    if isinstance(workload, Integral):
        k = min(int(workload), n_columns)
        return [m for size in range(1, k + 1)
                for m in itertools.combinations(range(n_columns), size)]
    positions = {name: i for i, name in enumerate(names)}
    marginals = []
    for entry in workload:  # the workload's marginals, never rows
        entry = (entry,) if not isinstance(entry, (tuple, list)) else entry
        try:
            marginal = tuple(sorted({positions[c] for c in entry}))
        except KeyError as error:
            raise ValueError(
                f"workload names the column {error.args[0]!r}, which X "
                "does not have."
            ) from None
        if not marginal:
            raise ValueError("workload contains an empty marginal.")
        if marginal not in marginals:
            marginals.append(marginal)
    if not marginals:
        raise ValueError("workload is empty.")
    return marginals


# Block functions of a fit on Dask records (each takes a block's columns).

def check_columns(columns, names, domain):
    """Check a block's columns as a fit in memory does (a declared column
    is encoded, refusing values outside it; the others must be finite
    numbers); returns the block's number of rows (public once summed)."""
    for name, column, values in zip(names, domain, columns, strict=True):
        if column is None:
            finite_numeric(name, values)
        else:
            encode_column(column, values)
    return len(columns[0]) if columns else 0


def numeric_values(columns, names, positions):
    """A block's columns at ``positions`` as float64 (rows, columns)."""
    return np.column_stack([finite_numeric(names[i], columns[i]) for i in positions])


def encode_columns(columns, domain):
    """A block's integer codes, shape (rows, n_columns)."""
    return np.column_stack([encode_column(column, values)
                            for column, values in zip(domain, columns, strict=True)])
