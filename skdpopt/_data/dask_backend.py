"""Dask backend of the data-access layer: maps over row blocks, then sums.

Every aggregate is one pass over the row blocks of a ``dask.array.Array``
(rows chunked, columns in one chunk): each task reads one block, reduces
it to a few numbers (a gradient, column sums, counts) or to the rows a
Poisson sample drew from it, and only those travel to the client.  A
worker holds one block at a time (for Poisson samples of data read at
every pass, the sampled rows the client has not fetched yet wait in files
on its local disk, see :mod:`.dask_staging`); the client holds the small
results, or one chunk of sampled rows and the next.
Clipping is the in-memory backend's, applied block by block, so it
bounds the same sensitivities and stays finite on extreme records.
"""

import math
import sys
import uuid
import weakref
from concurrent.futures import ThreadPoolExecutor

import dask
import dask.array as da
import numpy as np

from .._clipping import clip_scalars
from .._sums import column_squares, column_sums, row_dots, sum_parts, total
from .._validation import resolve_classes
from .dask_held import (
    HeldBlocks,
    HeldLeastSquares,
    HeldLinearRows,
    HeldPoissonSampler,
    block_sample,
    row_bounds,
)
from .dask_staging import read_staged, remove_staged, stage_block, unpack
from .inmemory import (
    INTERCEPT,
    InMemoryLinearRows,
    Segment,
    grid_counts,
    marginal_counts_inmemory,
    merge_by_step,
)

# The client holds the sampled rows of a chunk of steps (and fetches the
# next one meanwhile): as many steps as keep a chunk under this many
# values, 2**25 float64 values, 256 MB.  The Dask configuration key
# "skdpopt.sampled-values-per-chunk" overrides it.
SAMPLED_VALUES_PER_CHUNK = 2**25


def _blocks(X, y=None):
    """Delayed row blocks of X (and the matching blocks of y).

    Unoptimised, so that X's blocks keep their keys in y's graph: a y
    computed from X (a lazily generated or transformed dataset) then
    reuses each block of X instead of fusing, and recomputing, it.
    """
    X_blocks = X.to_delayed(optimize_graph=False).ravel()
    if y is None:
        return X_blocks
    return X_blocks, y.to_delayed(optimize_graph=False).ravel()


def _optimize(X, y):
    """X and y with their graphs optimised together, once per fit.

    Together, so that tasks y shares with X (a y computed from X) stay
    shared; once, so that no pass pays for it.  About twice as fast per
    pass as optimising each block's graph at every pass.
    """
    return dask.optimize(X, y)


@np.errstate(over="ignore", invalid="ignore")
def _block_gradient(X_block, y_block, coef, intercept, loss, clip_norm, limit, offset):
    limits = row_bounds(X_block, clip_norm, limit, offset)
    residual = loss.derivative(row_dots(X_block, coef) + intercept, y_block)
    scaled = clip_scalars(np.asarray(residual, dtype=np.float64).ravel(), limits)
    return column_sums(X_block, scaled), total(scaled)


@np.errstate(over="ignore", invalid="ignore")
def _block_sample(X_block, y_block, seed, block_index, chunks, sampling_rate,
                  clip_norm, limit, offset):
    """:func:`~.dask_held.block_sample` of each chunk of ``chunks``, a
    list of ``(chunk_index, n_steps)``: one piece per chunk."""
    return [block_sample(X_block, y_block, seed, block_index, chunk, n_steps,
                         sampling_rate, clip_norm, limit, offset)
            for chunk, n_steps in chunks]


def _block_sample_one(*args):
    """:func:`_block_sample` of a single chunk: its piece, no list."""
    return _block_sample(*args)[0]


def _block_stage(X_block, y_block, seed, block_index, chunks, sampling_rate,
                 clip_norm, limit, offset, directory):
    """:func:`_block_sample`'s rows of every chunk, written to this worker's
    disk (see :mod:`.dask_staging`); returns where they are."""
    sample = _block_sample(X_block, y_block, seed, block_index, chunks,
                           sampling_rate, clip_norm, limit, offset)
    return stage_block(sample, directory, block_index)


def _as_keys(X):
    """The keys of X's row blocks (its columns are one chunk)."""
    return [keys[0] for keys in X.__dask_keys__()]


def _persisted(X):
    """Whether every row block of X is held in a distributed cluster's memory."""
    if "distributed" not in sys.modules:
        return False
    from distributed import futures_of

    return len(futures_of(X)) >= X.numblocks[0]


def _held_blocks(X, y):
    """X's and y's blocks grouped by worker thread (:class:`HeldBlocks`)
    when X's blocks are in a distributed cluster's memory; else None."""
    client = _distributed_client()
    if client is None or not _persisted(X):
        return None
    return HeldBlocks(client, X, y)


def _distributed_client():
    """The distributed Client that dask.compute would use, or None."""
    if "distributed" not in sys.modules:
        return None
    from distributed import Client

    owner = getattr(dask.base.get_scheduler(), "__self__", None)
    return owner if isinstance(owner, Client) else None


class DaskLinearRows:
    """Clipped gradient sums of a linear model over a Dask array's rows.

    The counterpart of :class:`InMemoryLinearRows`: ``gradient_sum`` over
    all rows is one pass; ``poisson_sampler`` draws the batches on the
    workers, grouped by step, and serves them to the client chunk by chunk
    (see :class:`_DaskPoissonSampler`).
    """

    in_memory = False

    def __init__(self, X, y, loss, *, clip_norm=None, limit=None,
                 fit_intercept=True):
        self.loss = loss
        self.n_samples, self.n_features = X.shape
        self.clip_norm, self.limit = clip_norm, limit
        self.offset = float(fit_intercept)
        self.dtype = X.dtype
        # Data in a distributed cluster's memory: a task per worker thread
        # per pass (see dask_held); otherwise a task per block.
        self.blocks = _held_blocks(X, y)
        if self.blocks is not None:
            self.held = HeldLinearRows(self.blocks, loss, clip_norm, limit,
                                       self.offset)
        else:
            self.X, self.y = _optimize(X, y)

    def gradient_sum(self, coef, intercept, rows=None):
        if rows is not None:
            raise ValueError("a Dask array's rows are summed in full or sampled "
                             "by poisson_sampler")
        if self.blocks is not None:
            return self.held.gradient_sum(coef, intercept)
        X_blocks, y_blocks = _blocks(self.X, self.y)
        task = dask.delayed(_block_gradient, pure=True)
        parts = dask.compute(*[
            task(xb, yb, coef, float(intercept), self.loss, self.clip_norm,
                 self.limit, self.offset)
            for xb, yb in zip(X_blocks, y_blocks, strict=True)])
        # The blocks' float64 sums, added with compensation (skdpopt._sums).
        grad = sum_parts(g for g, _ in parts)
        return grad, math.fsum(s for _, s in parts)

    def poisson_sampler(self, rng, sampling_rate, n_steps, block):
        if self.blocks is not None:
            return HeldPoissonSampler(self, rng, sampling_rate, n_steps,
                                      chunk_steps(sampling_rate, self.n_samples,
                                                  self.n_features))
        return _DaskPoissonSampler(self, rng, sampling_rate, n_steps)


def chunk_steps(sampling_rate, n_samples, n_features):
    """Steps per chunk: as many as keep a chunk's sampled rows under
    ``SAMPLED_VALUES_PER_CHUNK`` values in expectation."""
    per_step = sampling_rate * n_samples * (n_features + 2)
    cap = dask.config.get("skdpopt.sampled-values-per-chunk",
                          SAMPLED_VALUES_PER_CHUNK)
    return int(max(1, cap // max(per_step, 1.0)))


class _DaskPoissonSampler:
    """Batches of a Dask array's rows read (or computed) at every pass,
    served to the client chunk by chunk.

    The steps are cut into chunks of ``chunk_steps`` steps, whose sampled
    rows stay under ``SAMPLED_VALUES_PER_CHUNK`` values in expectation.
    Each block draws its rows of a chunk from its own generator, already
    grouped by step (see :func:`_block_sample`); the client places each
    block's rows in one scatter (:func:`~.inmemory.merge_by_step`), so
    that a step's batch is a slice, and runs the chunk's steps (a
    :class:`~.inmemory.Segment` each).

    With a distributed client one pass draws a window of chunks covering
    about one epoch (``1 / q`` steps) and stages the rows on the workers'
    local disks (see :mod:`.dask_staging`), from which each chunk is read
    back with one task per worker, the next chunk in a background thread
    while the client runs the steps of the current one; the next window's
    pass is submitted when the client reaches its window's last chunk.  An
    epoch costs one pass, whatever ``n_samples``.  (Data held in the
    cluster's memory are sampled, and their steps run, on the workers:
    :class:`~.dask_held.HeldPoissonSampler`.)

    Without a distributed client (Dask's local schedulers), each chunk is
    its own pass, computed when its first step is reached.  Both ways draw
    the same batches from the same generator, as the held sampler does.
    """

    check_workers_every = 10.0  # seconds a read may wait before a look

    def __init__(self, data, rng, sampling_rate, n_steps):
        self.data, self.sampling_rate, self.n_steps = data, sampling_rate, n_steps
        # Drawn now, so that the batches do not depend on when chunks are
        # drawn or fetched.
        self.seed = rng.integers(0, 2**63, size=2).tolist()
        self.chunk_steps = chunk_steps(sampling_rate, data.n_samples,
                                       data.n_features)
        self.n_chunks = -(-n_steps // self.chunk_steps)
        self.client = _distributed_client()
        self.window_chunks = max(1, math.ceil(1.0 / sampling_rate / self.chunk_steps))
        self.X_blocks, self.y_blocks = _blocks(data.X, data.y)
        if self.client is not None:
            self.executor = ThreadPoolExecutor(max_workers=1)
        # Each window's files, then each chunk's reads.
        self.windows, self.fetching = set(), None
        self.staged, self.reads = {}, {}
        self.name = "skdpopt-poisson-" + uuid.uuid4().hex  # the files' too
        if self.client is not None:
            # Files of a fit stopped midway go when the sampler does.
            self.staged_directories = []
            weakref.finalize(self, _remove_directories, self.client,
                             self.staged_directories)
        self.buffers = [{}, {}]  # the current chunk's and the next one's
        self.chunk, self.end = -1, 0

    def segments(self):
        """A :class:`~.inmemory.Segment` per chunk, run by the client."""
        for chunk in range(self.n_chunks):
            start = chunk * self.chunk_steps
            yield Segment(start, start + self._steps(chunk), self._run)

    def _run(self, segment, function, state, *args):
        return function(state, (self.batch(t) for t in range(segment.start,
                                                             segment.stop)), *args)

    @staticmethod
    def result(state):
        return state

    def batch(self, t):
        """``(source, rows)``: step t's rows, for ``source.gradient_sum``.

        Steps are asked for in order.
        """
        while t >= self.end:
            self._next_chunk()
        i = t - self.start
        return self.source, slice(self.offsets[i], self.offsets[i + 1])

    def _steps(self, chunk):
        return min(self.chunk_steps, self.n_steps - chunk * self.chunk_steps)

    def _chunks(self, window):
        return range(window * self.window_chunks,
                     min((window + 1) * self.window_chunks, self.n_chunks))

    def _graph(self, chunks):
        """Each chunk's delayed pieces (one per block), drawn in one pass."""
        data = self.data
        # One chunk: no getitem tasks, a third of the scheduler's work.
        task = (dask.delayed(_block_sample_one, pure=True) if len(chunks) == 1 else
                dask.delayed(_block_sample, pure=True, nout=len(chunks)))
        per_block = [
            task(xb, yb, self.seed, k, [(c, self._steps(c)) for c in chunks],
                 self.sampling_rate, data.clip_norm, data.limit, data.offset)
            for k, (xb, yb) in enumerate(zip(self.X_blocks, self.y_blocks,
                                             strict=True))]
        if len(chunks) == 1:
            return [per_block]
        return [[p[i] for p in per_block] for i in range(len(chunks))]

    def _submit_window(self, window):
        chunks = self._chunks(window)
        if not chunks or window in self.windows:
            return
        self.windows.add(window)
        # Earlier windows first: they are needed first.
        self.staged[window] = self._stage(window, chunks, -window)

    def _stage(self, window, chunks, priority):
        """Futures of a window's staged blocks (where each wrote its rows).

        Built as one graph, not as a Delayed per block: Dask would
        optimise each collection against the whole graph, a time quadratic
        in the number of blocks.
        """
        from dask.highlevelgraph import HighLevelGraph

        data = self.data
        steps = [(c, self._steps(c)) for c in chunks]
        directory = f"{self.name}-{window}"
        self.staged_directories.append(directory)
        X_keys, y_keys = _as_keys(data.X), list(data.y.__dask_keys__())
        layer = {
            (directory, k): (_block_stage, X_key, y_key, self.seed, k, steps,
                             self.sampling_rate, data.clip_norm, data.limit,
                             data.offset, directory)
            for k, (X_key, y_key) in enumerate(zip(X_keys, y_keys, strict=True))}
        graph = HighLevelGraph.from_collections(directory, layer,
                                                dependencies=[data.X, data.y])
        return self.client.get(graph, list(layer), sync=False, priority=priority)

    def _submit_reads(self, chunk):
        """Read a staged chunk's spans back: a task per worker, strictly on
        the worker holding the files (submitted once)."""
        if chunk in self.reads:
            return
        window, position = divmod(chunk, self.window_chunks)
        held = self.staged[window]
        if not isinstance(held, dict):
            # Waits for the window's pass; then where each block's file is.
            by_worker = {}
            for k, where in enumerate(self.client.gather(held)):
                by_worker.setdefault(where[0], []).append((k, where))
            self.staged_at = set(by_worker)
            held = self.staged[window] = {
                address: self.client.scatter([entries], workers=[address])[0]
                for address, entries in by_worker.items()}
        self.reads[chunk] = [
            self.client.submit(read_staged, entries, position, pure=False,
                               workers=[address], allow_other_workers=False,
                               priority=1)
            for address, entries in held.items()]

    def _gather_reads(self, reads):
        """The reads' results; an error, not a wait without end, if a worker
        holding staged rows has left (its reads could run nowhere)."""
        import distributed

        while True:
            try:
                distributed.wait(reads, timeout=self.check_workers_every)
                return self.client.gather(reads)
            except distributed.TimeoutError:
                present = self.client.nthreads()
                if any(address not in present for address in self.staged_at):
                    raise RuntimeError(
                        "A Dask worker holding sampled rows staged for this fit "
                        "left the cluster; its rows are lost. Fit again.") from None

    def _fetch(self, chunk):
        """A chunk's rows, grouped by step (see :func:`_merge_by_step`)."""
        window = chunk // self.window_chunks
        self._submit_reads(chunk)
        if chunk + 1 in self._chunks(window):
            self._submit_reads(chunk + 1)  # read from disk while this one merges
        shape = (self._steps(chunk), self.data.n_features, self.data.X.dtype)
        staged = sorted((piece for read in self._gather_reads(self.reads.pop(chunk))
                         for piece in unpack(read, *shape)), key=lambda p: p[0])
        pieces = [piece for _, piece in staged]
        if chunk + 1 not in self._chunks(window):  # the window's files are read
            del self.staged[window]
            directory = f"{self.name}-{window}"
            self.client.run(remove_staged, directory)
            self.staged_directories.remove(directory)
        return merge_by_step(pieces, self.buffers[chunk % 2])

    def _next_chunk(self):
        chunk = self.chunk = self.chunk + 1
        if self.client is None:
            merged = merge_by_step(dask.compute(*self._graph([chunk])[0]),
                                    self.buffers[0])
        else:
            # The passes of the next chunks run meanwhile.
            for ahead in range(chunk, min(chunk + 2, self.n_chunks)):
                self._submit_window(ahead // self.window_chunks)
            merged = (self._fetch(chunk) if self.fetching is None
                      else self.fetching.result())
            # Fetch and group the next chunk while this one's steps run.
            following = chunk + 1 < self.n_chunks
            self.fetching = (self.executor.submit(self._fetch, chunk + 1)
                             if following else None)
            if not following:
                self.executor.shutdown(wait=False)
        X_rows, y_rows, limits, self.offsets = merged
        self.source = InMemoryLinearRows.of_rows(X_rows, y_rows, limits,
                                                  self.data.loss)
        self.start = chunk * self.chunk_steps
        self.end = self.start + self._steps(chunk)


def _remove_directories(client, directories):
    """Remove staged files left by a sampler (a fit stopped midway)."""
    try:
        for directory in directories:
            client.run(remove_staged, directory)
    except Exception:  # the cluster may be gone: its workers' directories too
        pass


@np.errstate(over="ignore", invalid="ignore")
def _block_least_squares(X_block, y_block, coef, intercept, bound, what):
    residual = row_dots(X_block, coef)
    residual += intercept - y_block
    r = clip_scalars(residual, bound)
    # In float64 whatever the block's dtype (see skdpopt._sums).
    if what == "square":
        return np.array([total(r * r)])
    return np.append(column_sums(X_block, r), total(r))


class DaskClippedLeastSquares:
    """:class:`ClippedLeastSquares` over a Dask array, one pass per aggregate.

    Holds the current iterate, not the residual vector (which would be
    n values on the client): each aggregate recomputes the residuals of
    its block.
    """

    def __init__(self, X, y, feature_bound, residual_bound):
        self.n_samples, self.n_features = X.shape
        self.feature_bound = float(feature_bound)
        self.residual_bound = float(residual_bound)
        self.coef = np.zeros(self.n_features)
        self.intercept = 0.0
        self._column_squares = None
        # Held blocks keep the residual beside them (see dask_held).
        blocks = _held_blocks(X, y)
        self.held = None
        if blocks is not None:
            self.held = HeldLeastSquares(blocks, feature_bound, residual_bound)
            self.held.reset(self.coef, self.intercept)
        else:
            self.X, self.y = _optimize(X, y)

    def reset(self, coef, intercept):
        self.coef = np.array(coef, dtype=float)
        self.intercept = float(intercept)
        if self.held is not None:
            self.held.reset(self.coef, self.intercept)

    def move(self, j, delta):
        if j == INTERCEPT:
            self.intercept += delta
        else:
            self.coef[j] += delta
        if self.held is not None:
            self.held.move(j, delta, intercept=j == INTERCEPT)

    def _sum(self, what):
        if self.held is not None:
            self.held.residual_bound = self.residual_bound
            if what == "square":
                return np.array([self.held.square_sum()])
            grad, intercept = self.held.gradient_sums()
            return np.append(grad, intercept)
        X_blocks, y_blocks = _blocks(self.X, self.y)
        task = dask.delayed(_block_least_squares, pure=True)
        parts = dask.compute(*[
            task(xb, yb, self.coef, self.intercept, self.residual_bound, what)
            for xb, yb in zip(X_blocks, y_blocks, strict=True)])
        return sum_parts(parts)

    def mean_square_residual(self):
        return float(self._sum("square")[0]) / self.n_samples

    def gradient(self):
        total = self._sum("gradient") / self.n_samples
        return total[:-1], self.feature_bound * float(total[-1])

    def curvature(self, j):
        if self._column_squares is None and self.held is not None:
            self._column_squares = self.held.column_squares() / self.n_samples
        if self._column_squares is None:
            task = dask.delayed(column_squares, pure=True)
            parts = dask.compute(*[task(xb) for xb in _blocks(self.X)])
            self._column_squares = sum_parts(parts) / self.n_samples
        return float(self._column_squares[j])


def _rows_of(function, n_columns, dtype):
    """``function`` on a block of rows; an empty block (a filtered
    DataFrame leaves them) gives an empty result without calling it."""

    def apply(block):
        if block.shape[0] == 0:
            shape = (0,) if n_columns is None else (0, n_columns)
            return np.empty(shape, dtype=dtype)
        return function(block)

    return apply


def map_rows(function, X, n_columns, dtype):
    import dask.dataframe as dd

    function = _rows_of(function, n_columns, dtype)
    if isinstance(X, dd.DataFrame):
        # Partition by partition, so that the function sees the column names.
        shape = (np.nan,) if n_columns is None else (np.nan, n_columns)
        task = dask.delayed(function, pure=True)
        return da.concatenate([da.from_delayed(task(part), shape, dtype=dtype)
                               for part in X.to_delayed()])
    X = X.rechunk({1: -1})
    if n_columns is None:
        return X.map_blocks(function, drop_axis=1, dtype=dtype)
    return X.map_blocks(function, chunks=(X.chunks[0], (n_columns,)), dtype=dtype)


def vector_total(values):
    """:func:`skdpopt._data.vector_total` of a Dask vector."""
    parts = dask.compute(*(dask.delayed(total)(block)
                           for block in values.to_delayed().ravel()))
    return math.fsum(parts)


def counts_below(values, grid):
    task = dask.delayed(grid_counts, pure=True)
    blocks = (values.to_delayed() if values.ndim == 1
              else _blocks(values.rechunk({1: -1})))
    return np.sum(dask.compute(*[task(block, grid) for block in blocks]), axis=0)


def clipped_total(values, low, high):
    from . import _clipped_total_block

    task = dask.delayed(_clipped_total_block, pure=True)
    parts = dask.compute(*[task(block, low, high) for block in values.to_delayed()])
    return float(sum_parts(np.atleast_1d(p) for p in parts)[0]) if parts else 0.0


def marginal_counts(codes, cardinalities, attributes):
    task = dask.delayed(marginal_counts_inmemory, pure=True)
    parts = dask.compute(*[task(block, cardinalities, attributes)
                           for block in _blocks(codes.rechunk({1: -1}))])
    return [np.sum([p[k] for p in parts], axis=0).astype(np.int64)
            for k in range(len(attributes))]


def _as_row_array(data, what):
    """A Dask array (or a dask DataFrame's values) with known row chunks."""
    import dask.dataframe as dd

    names = None
    if isinstance(data, (dd.DataFrame, dd.Series)):
        if isinstance(data, dd.DataFrame):
            names = np.asarray(data.columns, dtype=object)
        data = data.to_dask_array(lengths=True)
    elif not isinstance(data, da.Array):
        raise TypeError(
            f"{what} is a {type(data).__name__}: Dask input must be a "
            "dask.array.Array or a dask.dataframe.DataFrame / Series."
        )
    if any(np.isnan(c) for chunks in data.chunks for c in chunks):
        data = data.compute_chunk_sizes()  # the row count is public
    return data, names


@np.errstate(over="ignore", invalid="ignore")
def _finite_block(block):
    """Whether every value of a block is finite: its sum first (one read,
    no temporary, as scikit-learn checks arrays), each value only where
    the sum is not finite (a non-finite value, or finite ones whose sum
    overflows)."""
    return bool(np.isfinite(np.sum(block))) or bool(np.isfinite(block).all())


def _all_finite(data):
    """Whether every value of a Dask array is finite, lazily: a task per
    row block (the columns are one chunk).  Measured with persisted
    blocks, a third of ``da.isfinite(data).all()``'s processor time."""
    task = dask.delayed(_finite_block, pure=True)
    return dask.delayed(all, pure=True)(
        [task(block) for block in data.to_delayed().ravel()])


def validate_training_data(estimator, X, y, *, classification=False, classes=None):
    """Check a Dask training set lazily and set ``n_features_in_``.

    Shapes and dtypes are checked from the collections' metadata; one pass
    checks that every value is finite (and, for classifiers, which labels
    occur outside ``classes``), as the in-memory validation does, without
    gathering the data.

    Returns
    -------
    X : dask.array.Array
        Float32 or float64, rows chunked and the columns in one chunk.
    y : dask.array.Array
        Float64 targets, chunked as X's rows (the labels, for classifiers).
    classes : ndarray or None
        For classifiers, the declared classes (or the labels seen, with a
        :class:`~skdpopt.exceptions.PrivacyLeakWarning`).
    """
    X, names = _as_row_array(X, "X")
    if X.ndim != 2:
        raise ValueError(f"X must be 2-d (n_samples, n_features), got {X.ndim}-d.")
    if X.dtype.kind not in "biuf":
        raise ValueError(f"X must be numeric, got dtype {X.dtype}.")
    if X.dtype not in (np.float32, np.float64):
        X = X.astype(np.float64)
    X = X.rechunk({1: -1})
    if is_collection(y):
        y, _ = _as_row_array(y, "y")
    else:
        y = da.from_array(np.asarray(y), chunks=(X.chunks[0],))
    if y.ndim == 2 and y.shape[1] == 1:
        y = y[:, 0]
    if y.ndim != 1:
        raise ValueError(f"y must be 1-d (n_samples,), got shape {y.shape}.")
    if y.shape[0] != X.shape[0]:
        raise ValueError(
            f"y has {y.shape[0]} entries but X has {X.shape[0]} rows; pass one "
            "target per row."
        )
    if X.shape[0] == 0:
        raise ValueError("X has no rows.")
    y = y.rechunk((X.chunks[0],))
    if not classification:
        if y.dtype.kind not in "biuf":
            raise ValueError(f"y must be numeric, got dtype {y.dtype}.")
        y = y.astype(np.float64)
    checks = [_all_finite(X)]
    if y.dtype.kind in "biuf":
        checks.append(_all_finite(y))
    if classification:
        declared = None if classes is None else np.unique(np.asarray(classes))
        checks.append(da.unique(y) if declared is None
                      else (~da.isin(y, declared)).sum())
    results = dask.compute(*checks)
    if not all(bool(r) for r in results[:len(checks) - classification]):
        raise ValueError("Input contains NaN or infinity (X or y); every value "
                         "must be finite.")
    estimator.n_features_in_ = X.shape[1]
    if names is not None and all(isinstance(n, str) for n in names):
        estimator.feature_names_in_ = names
    elif hasattr(estimator, "feature_names_in_"):
        del estimator.feature_names_in_
    if not classification:
        return X, y, None
    if classes is None:
        classes, _ = resolve_classes(estimator, np.asarray(results[-1]), None)
    else:
        if declared.ndim != 1 or len(declared) == 0:
            raise ValueError("classes must be a non-empty 1-d array-like of labels.")
        if int(results[-1]):
            # Which value is outside, and in how many rows, is private.
            raise ValueError(
                f"some rows have a label outside classes={list(declared)!r}; the "
                "declared label set must cover every row."
            )
        classes = declared
    if len(classes) < 2:
        raise ValueError("The number of classes has to be greater than one; got "
                         "1 class.")
    return X, y, classes


def one_vs_rest_signs(y, classes):
    """The +-1 targets of each binary problem, lazily (see _targets)."""
    positives = [1] if len(classes) == 2 else range(len(classes))
    return [da.where(y == classes[k], 1.0, -1.0) for k in positives]


def is_collection(obj):
    return dask.is_dask_collection(obj)
