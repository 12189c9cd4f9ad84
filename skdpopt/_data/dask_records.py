"""Records of a Dask array or DataFrame, read block by block.

For the fits that read records column by column (DPSyntheticData): a
check of every block, numeric columns as a lazy array for the private
bounds, and the counts of records in the cells of column sets as one
map-reduce.  The counts of a block are sparse, keyed by the cells its
records fall in (never a dense table over a large domain), and are added
in a tree on the workers: the client receives one table per column set,
the size of the marginal it is, and nothing else of the data.
"""

import dask
import dask.array as da
import numpy as np

# Blocks' counts added per task of the reduction tree.
FAN_IN = 8


def block_columns(block):
    """A block's columns as 1-D arrays (a pandas DataFrame's, or a 2-D
    array's)."""
    if hasattr(block, "columns"):
        return [block[c].to_numpy() for c in block.columns]
    return [block[:, i] for i in range(block.shape[1])]


def _on_columns(function, block, *args):
    return function(block_columns(block), *args)


def _cell_counts(encode, block, shape, cliques):
    """The block's records counted in the cells of each column set:
    ``(cells, counts)`` per set, cells the flat C-order indices present."""
    codes = encode(block_columns(block))
    out = []
    for clique in cliques:
        flat = np.ravel_multi_index(tuple(codes[:, a] for a in clique),
                                    [shape[a] for a in clique])
        out.append(np.unique(flat, return_counts=True))
    return out


def _added(*parts):
    """Several blocks' sparse counts, added cell by cell."""
    out = []
    for pieces in zip(*parts, strict=True):
        cells = np.concatenate([c for c, _ in pieces])
        counts = np.concatenate([n for _, n in pieces])
        unique, inverse = np.unique(cells, return_inverse=True)
        out.append((unique, np.bincount(inverse, weights=counts,
                                        minlength=len(unique)).astype(np.int64)))
    return out


class DaskRecords:
    """A Dask array or DataFrame's records, block by block.

    Parameters
    ----------
    X : dask.array.Array of shape (n_samples, n_columns) or dask.dataframe.DataFrame

    Attributes
    ----------
    names : list
        The DataFrame's column names, or the array's column positions.
    """

    def __init__(self, X):
        import dask.dataframe as dd

        if isinstance(X, dd.DataFrame):
            self.names = list(X.columns)
            self.blocks = list(X.to_delayed())
        elif isinstance(X, da.Array):
            if X.ndim != 2:
                raise ValueError(
                    f"X must be 2-d (n_samples, n_columns), got {X.ndim}-d.")
            self.names = list(range(X.shape[1]))
            self.blocks = list(X.rechunk({1: -1}).to_delayed().ravel())
        else:
            raise TypeError(
                f"X is a {type(X).__name__}: Dask input must be a "
                "dask.array.Array or a dask.dataframe.DataFrame.")

    def map(self, function, *args):
        """``function(columns, *args)`` on every block, computed: the
        results in block order (what the caller returns of a block
        reaches the client)."""
        task = dask.delayed(_on_columns, pure=True)
        return list(dask.compute(*[task(function, block, *args)
                                   for block in self.blocks]))

    def rows(self, function, lengths, n_columns, *args):
        """``function(columns, *args)`` on every block, a float64 array of
        shape (block rows, n_columns), as a lazy Dask array; ``lengths``:
        each block's number of rows."""
        task = dask.delayed(_on_columns, pure=True)
        return da.concatenate([
            da.from_delayed(task(function, block, *args), (int(n), n_columns),
                            dtype=np.float64)
            for block, n in zip(self.blocks, lengths, strict=True)])

    def cell_counts(self, encode, shape, cliques):
        """The records' counts in the cells of each column set.

        Parameters
        ----------
        encode : callable
            A block's columns to its records' integer codes, of shape
            (rows, n_columns), each column's in ``0 .. shape[j] - 1``.
        shape : tuple of int
            Codes per column.
        cliques : list of tuple of int
            The column sets.

        Returns
        -------
        list of ndarray of int64
            Per column set, the counts of its cells, flattened (C order).
        """
        count = dask.delayed(_cell_counts, pure=True)
        parts = [count(encode, block, shape, cliques) for block in self.blocks]
        add = dask.delayed(_added, pure=True)
        while len(parts) > 1:
            parts = [add(*parts[i:i + FAN_IN]) for i in range(0, len(parts), FAN_IN)]
        (total,) = dask.compute(parts[0])
        tables = []
        for clique, (cells, counts) in zip(cliques, total, strict=True):
            table = np.zeros(int(np.prod([shape[a] for a in clique])), dtype=np.int64)
            table[cells] = counts
            tables.append(table)
        return tables
