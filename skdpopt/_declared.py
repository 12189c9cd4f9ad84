"""Bounds that fitted transformers declare by construction.

A one-hot column is 0 or 1 whatever the records: its bound 1 is public,
fixed by the transformer's type, not learned from the data.  A private
pipeline hands such bounds to the model at its end
(:meth:`skdpopt.DPLasso.with_declared_bounds`), which then pays noise for
the range a column can take rather than for one shared bound.  Only the
transformers' types and parameters are read, never the data's values.

The columns one ``OneHotEncoder`` writes for one input column are a block
with at most one non-zero per row, whatever the records
(:func:`declared_blocks`): a model may then move the whole block at the
price of one column (``docs/privacy/dplasso.md``).
"""

import numpy as np
from sklearn.compose import ColumnTransformer
from sklearn.pipeline import Pipeline

# scikit-learn transformers whose every output lies in [0, 1].
_ZERO_ONE = {"OneHotEncoder", "MissingIndicator", "Binarizer"}


def declared_bounds(transformer, n_columns):
    """The public bound of each output column of a fitted transformer.

    Parameters
    ----------
    transformer : estimator, "passthrough" or None
        A fitted transformer (a ``ColumnTransformer`` or ``Pipeline`` of
        them included).
    n_columns : int
        The width of its output.

    Returns
    -------
    ndarray of shape (n_columns,)
        1 for the columns of a ``OneHotEncoder``, ``MissingIndicator`` or
        ``Binarizer``; ``max(|low|, |high|)`` of the ``feature_range`` of
        a :class:`~skdpopt.DPMinMaxScaler` with ``clip=True``; the parts of
        a ``ColumnTransformer`` in their output order; a ``Pipeline``'s
        last transformer's; NaN for any other column (unknown).
    """
    bounds = _bounds(transformer, n_columns)
    if bounds is None or bounds.shape != (n_columns,):
        return np.full(n_columns, np.nan)
    return bounds


def declared_blocks(transformer, n_columns):
    """The one-hot blocks of a fitted transformer's output.

    Parameters
    ----------
    transformer, n_columns
        As in :func:`declared_bounds`.

    Returns
    -------
    ndarray of shape (n_columns,)
        The block of each output column, numbered from 0 in output order:
        the columns a scikit-learn ``OneHotEncoder`` writes for one of its
        input columns share a block; every other column is a block of its
        own.  Contiguous and non-decreasing; ``arange(n_columns)`` when
        nothing is declared.
    """
    sizes = _block_sizes(transformer, n_columns)
    if sizes is None or sum(sizes) != n_columns:
        sizes = [1] * n_columns
    return np.repeat(np.arange(len(sizes)), sizes).astype(np.intp)


def _block_sizes(transformer, width):
    """Widths of the output's blocks in order, or None if unknown."""
    if isinstance(transformer, ColumnTransformer):
        indices = getattr(transformer, "output_indices_", None)
        if indices is None or max(
                (part.stop for part in indices.values()), default=0) != width:
            return None
        fitted = dict(transformer.named_transformers_)
        sizes = []
        for name, positions in sorted(indices.items(),
                                      key=lambda item: item[1].start):
            part = len(range(width)[positions])
            inner = (_block_sizes(fitted[name], part)
                     if part and name in fitted else None)
            sizes += inner if inner is not None and sum(inner) == part else [1] * part
        return sizes
    if isinstance(transformer, Pipeline):
        steps = [s for _, s in transformer.steps
                 if s is not None and not (isinstance(s, str) and s == "passthrough")]
        return _block_sizes(steps[-1], width) if steps else None
    kind = type(transformer)
    if kind.__name__ == "OneHotEncoder" and kind.__module__.startswith("sklearn."):
        # The encoder's own count of output columns per input column (after
        # a dropped or grouped infrequent category): its parameters' doing.
        sizes = getattr(transformer, "_n_features_outs", None)
        if sizes is not None and sum(sizes) == width:
            return [int(size) for size in sizes]
    return None


def _bounds(transformer, width):
    if isinstance(transformer, ColumnTransformer):
        return _column_transformer_bounds(transformer, width)
    if isinstance(transformer, Pipeline):
        steps = [s for _, s in transformer.steps
                 if s is not None and not (isinstance(s, str) and s == "passthrough")]
        return _bounds(steps[-1], width) if steps else None
    kind = type(transformer)
    if kind.__name__ in _ZERO_ONE and kind.__module__.startswith("sklearn."):
        return np.ones(width)
    if kind.__name__ == "DPMinMaxScaler" and kind.__module__.startswith("skdpopt."):
        if transformer.clip:
            return np.full(width, float(np.max(np.abs(transformer.feature_range))))
    return None


def _column_transformer_bounds(transformer, width):
    """The parts' bounds at the output positions ``output_indices_`` gives
    (remainder and passthrough columns unknown)."""
    indices = getattr(transformer, "output_indices_", None)
    if indices is None or max(
            (part.stop for part in indices.values()), default=0) != width:
        return None  # not the output this transformer gives
    bounds = np.full(width, np.nan)
    fitted = dict(transformer.named_transformers_)
    for name, positions in indices.items():
        part = range(width)[positions]
        if len(part) == 0 or name not in fitted:
            continue
        inner = _bounds(fitted[name], len(part))
        if inner is not None and inner.shape == (len(part),):
            bounds[positions] = inner
    return bounds
