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
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from .._clipping import clip_scalars, example_norms
from .._sums import column_squares, column_sums, row_dots, sum_parts, total
from ..mechanisms import poisson_batches
from .inmemory import InMemoryLinearRows, Segment

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
# Poisson samples: drawn where the blocks are, stepped on one worker.

ALL = slice(None)

def _draws(X_blocks, y_blocks, blocks, seed, chunk, n_steps, sampling_rate):
    """Each block's rows drawn by a chunk of Poisson steps, grouped by step.

    Each (step, row) slot is included independently with probability q,
    from a generator seeded by the fit's seed, the chunk's index and the
    block's index (as :func:`.dask_backend._block_sample` draws them): the
    union over blocks is a Poisson sample of all rows whatever the
    partitioning.  Returns, per block, ``(block, X, y, rows, offsets)``:
    step s drew ``rows[offsets[s]:offsets[s + 1]]`` of X and of y (float64).
    """
    draws = []
    for k, X_block, y_block in zip(blocks, X_blocks, y_blocks, strict=True):
        if X_block.shape[0] == 0:  # an empty block (a filtered DataFrame's)
            rows = np.empty(0, dtype=np.int64)
            offsets = np.zeros(n_steps + 1, dtype=np.int64)
        else:
            rng = np.random.default_rng([*seed, chunk, k])
            rows, offsets = poisson_batches(rng, X_block.shape[0], sampling_rate,
                                            n_steps)
        draws.append((k, X_block, np.asarray(y_block, dtype=np.float64), rows,
                      offsets))
    return draws


def _sampled_pieces(X_blocks, y_blocks, blocks, seed, chunk, n_steps,
                    sampling_rate):
    """The rows a chunk draws from a share's blocks, gathered for the
    stepper: per block ``(block, X_rows, y_rows, None, offsets)``."""
    # np.take: several times X[rows]'s speed.
    return [(k, np.take(X, rows, axis=0), np.take(y, rows), None, offsets)
            for k, X, y, rows, offsets in _draws(X_blocks, y_blocks, blocks, seed,
                                                 chunk, n_steps, sampling_rate)]


def _batches(sources, n_steps, loss, bounds):
    """Each step's ``(source, rows)`` from the blocks' draws, in order: the
    source is the step's batch, rows all of it.

    ``sources``: ``(block, X, y, rows, offsets)`` per block, rows None for
    a piece already gathered.  A step's rows, block after block, are
    gathered straight from the blocks into buffers reused from step to
    step (the rows go from the block to the processor's cache once, as an
    in-memory fit's batches do), and their bounds on ``|r_i|`` are
    computed there (``bounds``: ``(clip_norm, limit, offset)``, see
    :func:`row_bounds`), not gathered from an n-vector held for the fit.
    """
    sources = sorted(sources, key=lambda source: source[0])
    spans = [source[4].tolist() for source in sources]
    counts = np.sum([np.diff(source[4]) for source in sources], axis=0)
    size = int(counts.max()) if len(counts) else 0
    X_rows = np.empty((size, sources[0][1].shape[1]), dtype=sources[0][1].dtype)
    y_rows = np.empty(size)
    for s in range(n_steps):
        at = 0
        for (_, X, y, rows, _), offsets in zip(sources, spans, strict=True):
            start, end = offsets[s], offsets[s + 1]
            if start == end:
                continue
            stop = at + end - start
            if rows is None:
                X_rows[at:stop] = X[start:end]
                y_rows[at:stop] = y[start:end]
            else:  # mode="clip": no copy of the output to check the indices
                taken = rows[start:end]
                np.take(X, taken, axis=0, out=X_rows[at:stop], mode="clip")
                np.take(y, taken, out=y_rows[at:stop], mode="clip")
            at = stop
        X_step = X_rows[:at]
        yield InMemoryLinearRows.of_rows(X_step, y_rows[:at],
                                         row_bounds(X_step, *bounds), loss), ALL


def _run_segment(function, state, X_blocks, y_blocks, blocks, shares, seed, chunk,
                 n_steps, sampling_rate, loss, bounds, *args):
    """A chunk's steps, on the stepper: its own blocks drawn here (no copy
    but into the steps' buffers), the others' pieces received."""
    sources = _draws(X_blocks, y_blocks, blocks, seed, chunk, n_steps,
                     sampling_rate)
    sources += [piece for share in shares for piece in share]
    return function(state, _batches(sources, n_steps, loss, bounds), *args)


class HeldPoissonSampler:
    """Poisson batches of held blocks, stepped on a worker.

    The steps are cut into chunks (:func:`.dask_backend.chunk_steps`).
    One worker, the one holding the most blocks (the *stepper*), runs
    every chunk's steps: the solver's ``function`` travels there with the
    model and the chunk's noise, drawn by the solver in the fit's process,
    and the model comes back as a future that the next chunk's steps take.
    The stepper draws its own blocks' rows as it steps; each other worker
    thread draws its blocks' rows of a chunk in one task
    (:func:`_sampled_pieces`) ``lookahead`` chunks ahead, and they travel
    to the stepper.  So the sampled rows never reach the client, and the
    client waits for a chunk's steps only before letting a further chunk
    be drawn (which bounds the workers' memory).  The batches are those of
    the other Dask samplers for the same generator.
    """

    lookahead = 2

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
        weight = Counter()
        for address, blocks in data.blocks.groups:
            weight[address] += len(blocks)
        self.stepper = weight.most_common(1)[0][0]
        self.own = [i for i, (address, _) in enumerate(data.blocks.groups)
                    if address == self.stepper]
        self.pieces, self.runs = {}, []

    def segments(self):
        """A :class:`~.inmemory.Segment` per chunk; ``run`` returns a future."""
        for chunk in range(self.n_chunks):
            start = chunk * self.chunk_steps
            yield Segment(start, min(start + self.chunk_steps, self.n_steps),
                          self._run)

    def _steps(self, chunk):
        return min(self.chunk_steps, self.n_steps - chunk * self.chunk_steps)

    def _draw(self, chunk):
        """Submit the other workers' draws of a chunk (once)."""
        if chunk < self.n_chunks and chunk not in self.pieces:
            others = [i for i in range(len(self.blocks.groups)) if i not in self.own]
            futures = self.blocks.submit(
                _sampled_pieces, self.seed, chunk, self._steps(chunk),
                self.sampling_rate, indices=True,
                priority=-chunk, shares=others)
            self.pieces[chunk] = futures

    def _run(self, segment, function, state, *args):
        import distributed

        chunk = segment.start // self.chunk_steps
        if len(self.runs) >= self.lookahead:
            # The chunks drawn ahead wait in the workers' memory: at most
            # this many beyond the steps running.
            distributed.wait(self.runs.pop(0))
        for ahead in range(chunk, chunk + self.lookahead + 1):
            self._draw(ahead)
        groups = self.blocks.groups
        blocks = [k for i in self.own for k in groups[i][1]]
        future = self.client.submit(
            _run_segment, function, state,
            [self.blocks.X_blocks[k] for k in blocks],
            [self.blocks.y_blocks[k] for k in blocks], blocks,
            self.pieces.pop(chunk), self.seed, chunk, self._steps(chunk),
            self.sampling_rate, self.loss, self.bounds, *args, pure=False,
            priority=1 - chunk,
            workers=None if self.stepper is None else [self.stepper],
            allow_other_workers=True)
        self.runs.append(future)
        return future

    @staticmethod
    def result(state):
        return state.result() if hasattr(state, "result") else state
