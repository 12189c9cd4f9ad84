"""Aggregates over row blocks held in a distributed cluster's memory.

When every row block of the data is in the workers' memory (persisted),
a pass costs its arithmetic plus a fixed price per task: the scheduler's
bookkeeping, a message each way, the worker's.  So each pass here is one
task per worker thread, over all the blocks that thread's share holds
(where a pass over lazily read data is a task per block, see
:mod:`.dask_backend`), submitted as futures without building a graph:

* what every full pass would recompute (targets divided by a scale, a
  clipped copy of X, each row's gradient bound) is computed once per fit,
  at the first pass, and kept beside the blocks, on the worker that holds
  them (Poisson steps compute their rows' bounds on each batch instead);
* a least-squares fit keeps its residual vector there too, updated by a
  coordinate move as in memory, so a step reads X once, not three times;
  its passes are calls to an actor per worker that holds the residual
  (:class:`LeastSquaresShares`), a message each way without the
  scheduler: greedy coordinate descent makes two sequential passes per
  step, each of which would otherwise pay a task's round trip;
* each task returns its blocks' float64 partial sums, which the client
  adds in block order with compensation (:func:`skdpopt._sums.sum_parts`),
  so the sums do not depend on which worker held which block.

The client sends the current model with each pass (one task per worker
thread: the model crosses once per thread) and receives a few numbers.
"""

import math
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from .._clipping import clip_scalars, example_norms
from .._sums import column_squares, column_sums, row_dots, sum_parts, total
from ..mechanisms import poisson_batches
from .inmemory import InMemoryLinearRows, Segment, place_rows, step_layout

# glibc's ceiling for its own, dynamic, mmap threshold on 64-bit Linux.
MMAP_THRESHOLD = 32 * 2**20


def heap_for_temporaries():
    """On a worker started with Dask's default ``MALLOC_TRIM_THRESHOLD_``:
    serve allocations below 32 MiB from the heap, as a process without
    that setting does once its temporaries have been freed once.

    Setting the trim threshold turns off glibc's dynamic mmap threshold,
    so every temporary above 128 KiB (a step's batch, a block's residual,
    a row block of the sums) is then mapped afresh and its pages faulted
    in and zeroed at every use: measured, that made Poisson steps 1.7
    times and full passes 1.25 times slower than the same code in a
    plain process.  The trim threshold (memory given back to the system)
    is kept.  Changes nothing on a worker whose allocator the user has
    set (``MALLOC_MMAP_THRESHOLD_``) or where glibc is not found; returns
    whether it changed the setting.
    """
    import ctypes
    import os

    if ("MALLOC_TRIM_THRESHOLD_" not in os.environ
            or "MALLOC_MMAP_THRESHOLD_" in os.environ):
        return False
    try:
        libc = ctypes.CDLL("libc.so.6")
        done = libc.mallopt(-3, MMAP_THRESHOLD) == 1  # M_MMAP_THRESHOLD
    except (OSError, AttributeError):
        return False
    if done:  # once per worker; read by the check above
        os.environ["MALLOC_MMAP_THRESHOLD_"] = str(MMAP_THRESHOLD)
    return done


def block_futures(client, array):
    """The futures of a persisted array's row blocks, in block order."""
    from distributed import futures_of

    by_key = {future.key: future for future in futures_of(array)}
    keys = array.__dask_keys__()
    if array.ndim == 2:
        keys = [row[0] for row in keys]
    return [by_key[key] for key in keys]


class HeldBlocks:
    """Row blocks of X and y in the cluster's memory, grouped by thread.

    Parameters
    ----------
    client : distributed.Client
    X : dask.array.Array of shape (n_samples, n_features)
        Its blocks, or the arrays it derives from, are in the cluster's
        memory; a derived X (clipped, converted) is computed once, here.
    y : dask.array.Array of shape (n_samples,)
        Chunked as X's rows; computed once, here, if derived.

    Attributes
    ----------
    groups : list of (address, list of int)
        Each share: a worker and the indices of blocks it holds, about
        equal shares for a worker's threads.
    """

    def __init__(self, client, X, y):
        import distributed

        self.client = client
        client.run(heap_for_temporaries)
        X, y = client.persist([X, y])
        distributed.wait([X, y])
        self.X_blocks = block_futures(client, X)
        self.y_blocks = block_futures(client, y)
        self.n_blocks = len(self.X_blocks)
        where = client.who_has(self.X_blocks)
        threads = client.nthreads()
        by_worker = {}
        for k, future in enumerate(self.X_blocks):
            holders = sorted(where.get(future.key, ())) or [None]
            by_worker.setdefault(holders[0], []).append(k)
        self.groups = []
        for address, blocks in by_worker.items():
            shares = max(1, min(threads.get(address, 1), len(blocks)))
            for i in range(shares):
                self.groups.append((address, blocks[i::shares]))
        # The blocks' futures are held by the arrays; kept for the fit.
        self._arrays = (X, y)

    def submit(self, function, *args, state=None, indices=False, priority=0,
               shares=None):
        """``function(X_blocks, y_blocks, [state,] [indices,] *args)`` on
        each share (or those listed in ``shares``), where its blocks are;
        returns one future per share.

        ``state``: a list of futures, one per share (a previous call's
        result), passed after the blocks; ``indices``: whether to pass the
        share's block indices.
        """
        futures = []
        for i, (address, blocks) in enumerate(self.groups):
            if shares is not None and i not in shares:
                continue
            inputs = ([self.X_blocks[k] for k in blocks],
                      [self.y_blocks[k] for k in blocks])
            if state is not None:
                inputs = inputs + (state[i],)
            if indices:
                inputs = inputs + (blocks,)
            futures.append(self.client.submit(
                function, *inputs, *args, pure=False, priority=priority,
                workers=None if address is None else [address],
                allow_other_workers=True))
        return futures

    def gather_parts(self, futures):
        """The shares' per-block results, back in block order."""
        parts = [None] * self.n_blocks
        for (_, blocks), results in zip(self.groups, self.client.gather(futures),
                                        strict=True):
            for k, part in zip(blocks, results, strict=True):
                parts[k] = part
        return parts


# ----------------------------------------------------------------------
# Tasks: each takes one share's blocks (lists of arrays) and returns one
# result per block.

def row_bounds(X, clip_norm, limit, offset):
    """Per-row bound on ``|r_i|`` of rows X, as
    :class:`~.inmemory.InMemoryLinearRows` computes it: ``limit`` (a
    float) without a clip norm."""
    if clip_norm is None:
        return float(limit)
    limits = example_norms(X, offset)
    np.divide(clip_norm, limits, out=limits, where=limits > 0)
    np.minimum(limits, np.finfo(np.float64).max, out=limits)
    return limits


def _row_limits(X_blocks, y_blocks, clip_norm, limit, offset):
    """Each block's float64 targets and per-row gradient bounds, held for
    the fit's full passes."""
    return [(np.asarray(y_block, dtype=np.float64),
             row_bounds(X_block, clip_norm, limit, offset))
            for X_block, y_block in zip(X_blocks, y_blocks, strict=True)]


@np.errstate(over="ignore", invalid="ignore")
def _gradients(X_blocks, y_blocks, held, coef, intercept, loss):
    out = []
    for X_block, (y_block, limits) in zip(X_blocks, held, strict=True):
        residual = loss.derivative(row_dots(X_block, coef) + intercept, y_block)
        scaled = clip_scalars(np.asarray(residual, dtype=np.float64).ravel(), limits)
        out.append((column_sums(X_block, scaled), total(scaled)))
    return out


class HeldLinearRows:
    """Full-batch clipped gradient sums of a linear model on held blocks:
    a pass is one task per worker thread, one round trip.

    See :class:`~.dask_backend.DaskLinearRows`, which uses it when the
    data are held in a distributed cluster's memory.
    """

    def __init__(self, blocks, loss, clip_norm, limit, offset):
        self.blocks, self.loss = blocks, loss
        self.bounds = (clip_norm, limit, offset)
        self.held = None

    def gradient_sum(self, coef, intercept):
        if self.held is None:  # at the first pass: a Poisson fit needs none
            self.held = self.blocks.submit(_row_limits, *self.bounds)
        parts = self.blocks.gather_parts(self.blocks.submit(
            _gradients, np.asarray(coef, dtype=np.float64), float(intercept),
            self.loss, state=self.held))
        return sum_parts(g for g, _ in parts), math.fsum(s for _, s in parts)


def _clipped(residual, bound):
    # A NaN residual (an overflowed prediction) counts as 0, inside [-C, C].
    return clip_scalars(residual.copy(), bound)


class LeastSquaresShares:
    """One worker's blocks and the residual of the current iterate beside
    them: a Dask actor (``client.submit(..., actor=True)``).

    Its methods are called by the client directly, without the scheduler
    (one message each way, where a task costs four: measured, about 4 ms
    against 20 ms on a loaded 2-core machine), and keep the residual ``z =
    X w + b - y`` of each block, updated in place as
    :class:`~.inmemory.ClippedLeastSquares` updates it in memory.  The
    client sends a reset to a new iterate, and the coordinate moves made
    since the previous call, with the next aggregate, which applies them
    before reading: they cost no message of their own.  The worker's
    shares (one per thread) are read in parallel by a pool of as many
    threads (an actor's methods run in one thread of their own).
    """

    def __init__(self, X_blocks, y_blocks, shares):
        self.X_blocks = X_blocks
        self.y_blocks = [np.asarray(y, dtype=np.float64) for y in y_blocks]
        self.shares = shares  # positions in X_blocks, per share
        self.residuals = [None] * len(X_blocks)

    def _each(self, function, *args):
        """``function(k, *args)`` for each block k, the shares in parallel;
        the results in block order."""
        def share(positions):
            return [(k, function(k, *args)) for k in positions]

        if len(self.shares) == 1:
            results = [share(self.shares[0])]
        else:  # threads for the call only: none outlives the actor
            with ThreadPoolExecutor(len(self.shares)) as pool:
                results = list(pool.map(share, self.shares))
        out = [None] * len(self.X_blocks)
        for k, result in (pair for part in results for pair in part):
            out[k] = result
        return out

    def _update(self, k, start, moves):
        """Block k's residual: of ``start = (coef, intercept)`` if given,
        then moved by ``moves``, in order, as they were made."""
        if start is not None:
            coef, intercept = start
            residual = row_dots(self.X_blocks[k], coef)
            residual += intercept - self.y_blocks[k]
            self.residuals[k] = residual
        residual = self.residuals[k]
        for j, delta in moves:
            if j is None:
                residual += delta
            else:
                residual += delta * np.asarray(self.X_blocks[k][:, j],
                                               dtype=np.float64)
        return residual

    @np.errstate(over="ignore", invalid="ignore")
    def _square_sum(self, k, start, moves, bound):
        r = _clipped(self._update(k, start, moves), bound)
        return np.array([total(r * r)])

    @np.errstate(over="ignore", invalid="ignore")
    def _gradient_sum(self, k, start, moves, bound):
        r = _clipped(self._update(k, start, moves), bound)
        return np.append(column_sums(self.X_blocks[k], r), total(r))

    def square_sums(self, start, moves, bound):
        """Each block's ``sum_i clip(z_i)^2``, the residuals updated first
        (see ``_update``)."""
        return self._each(self._square_sum, start, moves, bound)

    def gradient_sums(self, start, moves, bound):
        """Each block's ``sum_i clip(z_i) x_i`` and ``sum_i clip(z_i)``,
        the residuals updated first (see ``_update``)."""
        return self._each(self._gradient_sum, start, moves, bound)

    def column_squares(self):
        return self._each(lambda k: column_squares(self.X_blocks[k]))


class HeldLeastSquares:
    """:class:`~.inmemory.ClippedLeastSquares` on held blocks.

    The residual ``z = X w + b - y`` of the current iterate stays on the
    workers, beside the blocks, in one :class:`LeastSquaresShares` actor
    per worker; a reset or a coordinate move waits on the client until the
    next aggregate carries it (O(n / workers) there), and an aggregate is one
    call per worker, over X (the gradient) or over the residual only (the
    mean square).  The blocks' partial sums come back in block order and
    are added with compensation, as in memory.
    """

    def __init__(self, blocks, feature_bound, residual_bound):
        self.blocks = blocks
        self.feature_bound = float(feature_bound)
        self.residual_bound = float(residual_bound)
        self._column_squares = None
        self.start, self.moves = None, []  # what the actors have not seen
        by_worker = {}
        for address, indices in blocks.groups:
            by_worker.setdefault(address, []).append(indices)
        self.order, futures = [], []
        client = blocks.client
        for address, shares in by_worker.items():
            indices = [k for share in shares for k in share]
            positions, at = [], 0
            for share in shares:
                positions.append(list(range(at, at + len(share))))
                at += len(share)
            self.order.append(indices)
            futures.append(client.submit(
                LeastSquaresShares, [blocks.X_blocks[k] for k in indices],
                [blocks.y_blocks[k] for k in indices], positions, actor=True,
                pure=False, workers=None if address is None else [address],
                allow_other_workers=True))
        self.actors = client.gather(futures)
        self._futures = futures  # an actor lives as long as its future

    def _call(self, method, *args):
        """``method(*args)`` on every worker's actor at once; the blocks'
        results in block order."""
        calls = [getattr(actor, method)(*args) for actor in self.actors]
        parts = [None] * self.blocks.n_blocks
        for indices, call in zip(self.order, calls, strict=True):
            for k, part in zip(indices, call.result(), strict=True):
                parts[k] = part
        return parts

    def reset(self, coef, intercept):
        self.start = (np.array(coef, dtype=np.float64), float(intercept))
        self.moves = []

    def move(self, j, delta, intercept=False):
        self.moves.append((None if intercept else int(j), float(delta)))

    def _sum(self, method):
        # The reset and moves since the last aggregate travel with it.
        start, moves = self.start, self.moves
        self.start, self.moves = None, []
        return sum_parts(self._call(method, start, moves, self.residual_bound))

    def square_sum(self):
        return float(self._sum("square_sums")[0])

    def gradient_sums(self):
        sums = self._sum("gradient_sums")
        return sums[:-1], float(sums[-1])

    def column_squares(self):
        if self._column_squares is None:
            self._column_squares = sum_parts(self._call("column_squares"))
        return self._column_squares


# ----------------------------------------------------------------------
# Poisson samples: drawn where the blocks are, merged and stepped on the
# workers in turn.

def _draw(n_rows, seed, block_index, chunk, n_steps, sampling_rate):
    """Rows of a block drawn by a chunk of Poisson steps, and each step's
    span of them (see :func:`block_sample`)."""
    if n_rows == 0:  # an empty block (a filtered DataFrame's)
        return np.empty(0, dtype=np.int64), np.zeros(n_steps + 1, dtype=np.int64)
    rng = np.random.default_rng([*seed, chunk, block_index])
    return poisson_batches(rng, n_rows, sampling_rate, n_steps)


def block_sample(X_block, y_block, seed, block_index, chunk, n_steps,
                 sampling_rate, clip_norm, limit, offset):
    """The rows that one chunk of Poisson steps draws from one block.

    Each (step, row) slot is included independently with probability q,
    from a generator seeded by the fit's seed, the chunk's index and the
    block's index: the union over blocks is a Poisson sample of all rows
    whatever the partitioning, and a chunk's draw does not depend on which
    task draws it or when.

    Returns ``(X_rows, y_rows, limits, counts)``: the rows grouped by step
    (ascending within a step), their targets (float64) and bounds on
    ``|r_i|`` (see :func:`row_bounds`), and each step's row count.
    """
    rows, offsets = _draw(X_block.shape[0], seed, block_index, chunk, n_steps,
                          sampling_rate)
    X_rows = np.take(X_block, rows, axis=0)  # several times X_block[rows]'s speed
    limits = row_bounds(X_rows, clip_norm, limit, offset)
    if np.ndim(limits) == 0:
        limits = np.full(len(rows), limits)
    y_rows = np.take(np.asarray(y_block, dtype=np.float64), rows)
    return X_rows, y_rows, limits, np.diff(offsets)


def _sampled_pieces(X_blocks, y_blocks, blocks, seed, chunk, n_steps,
                    sampling_rate, bounds):
    """A share's :func:`block_sample` of a chunk: ``(block, piece)`` each."""
    return [(k, block_sample(X, y, seed, k, chunk, n_steps, sampling_rate, *bounds))
            for k, X, y in zip(blocks, X_blocks, y_blocks, strict=True)]


def _gathered(shares, X_blocks, blocks, seed, chunk, n_steps, sampling_rate):
    """A chunk's rows from the other shares, placed on its stepper ahead of
    its steps, where the steps take them: grouped by step in block order
    (as :func:`~.inmemory.merge_by_step` groups them), with room left for
    the rows of the stepper's own blocks (``X_blocks``), drawn here.

    Returns ``(merged, holes)``: ``merged`` as :func:`~.inmemory.step_layout`
    returns it, received rows written; ``holes``, per own block, ``(block,
    rows, places)``: its drawn rows and where they go.
    """
    received = {k: piece for share in shares for k, piece in share}
    drawn = {k: _draw(X.shape[0], seed, k, chunk, n_steps, sampling_rate)
             for k, X in zip(blocks, X_blocks, strict=True)}
    order = sorted(received.keys() | drawn.keys())
    counts = [received[k][3] if k in received else np.diff(drawn[k][1])
              for k in order]
    some = next(iter(received.values()))[0]
    merged, places = step_layout(counts, some.shape[1:], some.dtype)
    holes = []
    for k, where in zip(order, places, strict=True):
        if k in drawn:
            holes.append((k, drawn[k][0], where))
        else:
            place_rows(merged, where, *received[k][:3])
    return merged, holes


# Own rows move into place this many at a time, through a buffer that
# stays in the processor's cache (no copy of the chunk's size made afresh:
# page faults cost more than the copy, measured).
ROWS_PER_MOVE = 4096
# Without a gathered chunk (the stepper holds every block), the rows of a
# few steps, about this many values, are grouped at a time, into buffers
# reused from group to group.
VALUES_PER_GROUP = 2**20


def _move_rows(X, y, rows, where, bounds, merged, moved):
    """Rows ``rows`` of a block to positions ``where`` of ``merged``'s
    arrays, with their bounds on ``|r_i|`` (see :func:`row_bounds`),
    through ``moved``, a dict of buffers reused from call to call."""
    if "X" not in moved or moved["X"].dtype != X.dtype:
        moved["X"] = np.empty((ROWS_PER_MOVE, X.shape[1]), X.dtype)
        moved["y"] = np.empty(ROWS_PER_MOVE, np.asarray(y[:0]).dtype)
    for i in range(0, len(rows), ROWS_PER_MOVE):
        taken = rows[i:i + ROWS_PER_MOVE]
        part, part_y = moved["X"][:len(taken)], moved["y"][:len(taken)]
        # mode="clip": no copy of the output to check the indices
        np.take(X, taken, axis=0, out=part, mode="clip")
        np.take(y, taken, out=part_y, mode="clip")
        place_rows(merged, where[i:i + ROWS_PER_MOVE], part, part_y,
                   row_bounds(part, *bounds))


def _steps_of(source, offsets):
    return ((source, slice(offsets[s], offsets[s + 1]))
            for s in range(len(offsets) - 1))


def _filled_batches(X_blocks, y_blocks, blocks, gathered, bounds, loss):
    """A gathered chunk's steps, once the own blocks' rows fill its holes."""
    (X_out, y_out, limits_out, offsets), holes = gathered
    held = dict(zip(blocks, zip(X_blocks, y_blocks, strict=True), strict=True))
    moved = {}
    for k, rows, where in holes:
        _move_rows(*held[k], rows, where, bounds, gathered[0], moved)
    yield from _steps_of(InMemoryLinearRows.of_rows(X_out, y_out, limits_out, loss),
                         offsets)


def _grouped_batches(X_blocks, y_blocks, blocks, seed, chunk, n_steps,
                     sampling_rate, bounds, loss):
    """A chunk's steps drawn from the stepper's own blocks alone, a group
    of steps at a time, into buffers reused from group to group."""
    drawn = [_draw(X.shape[0], seed, k, chunk, n_steps, sampling_rate)
             for k, X in zip(blocks, X_blocks, strict=True)]
    counts = np.array([np.diff(offsets) for _, offsets in drawn], dtype=np.int64)
    X_some = X_blocks[0]
    per_step = max(1.0, counts.sum() / max(n_steps, 1)) * (X_some.shape[1] + 2)
    group = int(max(1, VALUES_PER_GROUP // per_step))
    buffers, moved = {}, {}
    for first in range(0, n_steps, group):
        last = min(first + group, n_steps)
        merged, places = step_layout(counts[:, first:last], X_some.shape[1:],
                                     X_some.dtype, buffers=buffers)
        for X, y, (rows, offsets), where in zip(X_blocks, y_blocks, drawn, places,
                                                strict=True):
            _move_rows(X, y, rows[offsets[first]:offsets[last]], where, bounds,
                       merged, moved)
        yield from _steps_of(InMemoryLinearRows.of_rows(*merged[:3], loss),
                             merged[3])


def _run_chunk(function, state, X_blocks, y_blocks, blocks, gathered, seed, chunk,
               n_steps, sampling_rate, bounds, loss, *args):
    """A chunk's steps on its stepper: on the gathered chunk (see
    :func:`_gathered`), or, where the stepper holds every block, on rows
    drawn from them as the steps go."""
    if gathered is None:
        batches = _grouped_batches(X_blocks, y_blocks, blocks, seed, chunk,
                                   n_steps, sampling_rate, bounds, loss)
    else:
        batches = _filled_batches(X_blocks, y_blocks, blocks, gathered, bounds,
                                  loss)
    return function(state, batches, *args)


class HeldPoissonSampler:
    """Poisson batches of held blocks, stepped on the workers in turn.

    The steps are cut into chunks (:func:`.dask_backend.chunk_steps`).
    Chunk c belongs to one worker, the c-th in turn (its *stepper*): each
    other worker thread draws its blocks' rows of the chunk in one task
    (:func:`_sampled_pieces`); the rows move to the stepper, which places
    them where the steps will take them (:func:`_gathered`), all ahead of
    the chunk's steps.  The steps then run there (:func:`_run_chunk`),
    once the stepper's own rows fill their places: the solver's
    ``function`` travels there with the model, a future from the previous
    chunk's stepper, and the chunk's noise, drawn by the solver in the
    fit's process.  Only the steps run one after another; drawing, moving
    and placing the next chunks' rows run meanwhile on the other workers,
    each receiving about its share of the sampled rows.  The sampled rows
    never reach the client, and the client waits for a chunk's steps
    before letting more chunks be drawn (which bounds the workers'
    memory).  The batches are those of the other Dask samplers for the
    same generator.
    """

    # Chunks gathered ahead of the steps running: one per worker (so that
    # each worker gathers while the others step), at most this many.
    max_lookahead = 8

    def __init__(self, data, rng, sampling_rate, n_steps, chunk_steps):
        self.blocks, self.loss = data.blocks, data.loss
        self.bounds = (data.clip_norm, data.limit, data.offset)
        self.sampling_rate, self.n_steps = sampling_rate, n_steps
        # Drawn now, so that the batches do not depend on when chunks are
        # drawn or stepped.
        self.seed = rng.integers(0, 2**63, size=2).tolist()
        self.chunk_steps = chunk_steps
        self.n_chunks = -(-n_steps // chunk_steps)
        self.client = data.blocks.client
        self.steppers = list(dict.fromkeys(address for address, _ in
                                           data.blocks.groups))
        self.lookahead = min(self.max_lookahead, len(self.steppers))
        self.gathered, self.runs = {}, []

    def segments(self):
        """A :class:`~.inmemory.Segment` per chunk; ``run`` returns a future."""
        for chunk in range(self.n_chunks):
            start = chunk * self.chunk_steps
            yield Segment(start, min(start + self.chunk_steps, self.n_steps),
                          self._run)

    def _steps(self, chunk):
        return min(self.chunk_steps, self.n_steps - chunk * self.chunk_steps)

    def _stepper(self, chunk):
        stepper = self.steppers[chunk % len(self.steppers)]
        return stepper, dict(workers=None if stepper is None else [stepper],
                             allow_other_workers=True)

    def _own(self, stepper):
        return [k for address, blocks in self.blocks.groups if address == stepper
                for k in blocks]

    def _gather(self, chunk):
        """Submit the other workers' draws of a chunk, and their gathering
        on its stepper (once)."""
        if chunk >= self.n_chunks or chunk in self.gathered:
            return
        stepper, where = self._stepper(chunk)
        others = [i for i, (address, _) in enumerate(self.blocks.groups)
                  if address != stepper]
        if not others:  # the stepper holds every block
            self.gathered[chunk] = None
            return
        args = (self.seed, chunk, self._steps(chunk), self.sampling_rate)
        shares = self.blocks.submit(_sampled_pieces, *args, self.bounds,
                                    indices=True, priority=-chunk, shares=others)
        own = self._own(stepper)
        self.gathered[chunk] = self.client.submit(
            _gathered, shares, [self.blocks.X_blocks[k] for k in own], own, *args,
            pure=False, priority=-chunk, **where)

    def _run(self, segment, function, state, *args):
        import distributed

        chunk = segment.start // self.chunk_steps
        if len(self.runs) >= self.lookahead:
            # The chunks drawn ahead wait in the workers' memory: at most
            # this many beyond the steps running.
            distributed.wait(self.runs.pop(0))
        for ahead in range(chunk, chunk + self.lookahead + 1):
            self._gather(ahead)
        stepper, where = self._stepper(chunk)
        own = self._own(stepper)
        future = self.client.submit(
            _run_chunk, function, state, [self.blocks.X_blocks[k] for k in own],
            [self.blocks.y_blocks[k] for k in own], own, self.gathered.pop(chunk),
            self.seed, chunk, self._steps(chunk), self.sampling_rate, self.bounds,
            self.loss, *args, pure=False, priority=1 - chunk, **where)
        self.runs.append(future)
        return future

    @staticmethod
    def result(state):
        return state.result() if hasattr(state, "result") else state
