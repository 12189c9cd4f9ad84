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
    bounds = _walk(transformer, n_columns, _leaf_bounds,
                   lambda width: np.full(width, np.nan))
    return np.full(n_columns, np.nan) if bounds is None else bounds


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
    starts = _walk(transformer, n_columns, _leaf_block_starts,
                   lambda width: np.ones(width, dtype=bool))
    if starts is None:
        starts = np.ones(n_columns, dtype=bool)
    return (np.cumsum(starts) - 1).astype(np.intp)


def _walk(transformer, width, leaf, unknown):
    """One value per output column of a fitted transformer: ``leaf(step,
    width)`` for a transformer that declares something (None if it does
    not), the parts of a ``ColumnTransformer`` at their output positions
    (``unknown(width)`` where a part declares nothing), a ``Pipeline``'s
    last transformer's; None if unknown."""
    if isinstance(transformer, ColumnTransformer):
        indices = getattr(transformer, "output_indices_", None)
        if indices is None or max(
                (part.stop for part in indices.values()), default=0) != width:
            return None  # not the output this transformer gives
        out = unknown(width)
        fitted = dict(transformer.named_transformers_)
        for name, positions in indices.items():
            part = range(width)[positions]
            if len(part) == 0 or name not in fitted:
                continue
            inner = _walk(fitted[name], len(part), leaf, unknown)
            if inner is not None and inner.shape == (len(part),):
                out[positions] = inner
        return out
    if isinstance(transformer, Pipeline):
        steps = [s for _, s in transformer.steps
                 if s is not None and not (isinstance(s, str) and s == "passthrough")]
        return _walk(steps[-1], width, leaf, unknown) if steps else None
    return leaf(transformer, width)


def _leaf_bounds(transformer, width):
    kind = type(transformer)
    if kind.__name__ in _ZERO_ONE and kind.__module__.startswith("sklearn."):
        return np.ones(width)
    if kind.__name__ == "DPMinMaxScaler" and kind.__module__.startswith("skdpopt."):
        if transformer.clip:
            return np.full(width, float(np.max(np.abs(transformer.feature_range))))
    return None


def _leaf_block_starts(transformer, width):
    """Where a ``OneHotEncoder``'s blocks start: its own count of output
    columns per input column (after a dropped or grouped infrequent
    category), its parameters' doing."""
    kind = type(transformer)
    if kind.__name__ != "OneHotEncoder" or not kind.__module__.startswith("sklearn."):
        return None
    sizes = getattr(transformer, "_n_features_outs", None)
    if sizes is None or sum(sizes) != width:
        return None
    starts = np.zeros(width, dtype=bool)
    first = np.cumsum(np.r_[0, sizes[:-1]]).astype(int)
    starts[first[first < width]] = True
    return starts
