"""Fits on Dask collections: the same plan, a true Poisson sample, and the
same utility as in memory, on a small LocalCluster."""

import warnings
from functools import partial

import numpy as np
import pytest
from scipy import stats

da = pytest.importorskip(
    "dask.array", reason="the dask extra is not installed: pip install skdpopt[dask]")
dd = pytest.importorskip(
    "dask.dataframe",
    reason="the dask extra is not installed: pip install skdpopt[dask]")
dask = pytest.importorskip(
    "dask", reason="the dask extra is not installed: pip install skdpopt[dask]")
distributed = pytest.importorskip(
    "distributed", reason="the dask extra is not installed: pip install skdpopt[dask]")

from skdpopt import (  # noqa: E402
    DPLasso,
    DPLogisticSimplex,
    DPMinimaxClassifier,
    DPSGDClassifier,
    DPSGDRegressor,
    PrivacyLedger,
)
from skdpopt._data import dask_backend, dask_held, linear_rows, marginal_counts  # noqa: E402
from skdpopt._data.inmemory import merge_by_step  # noqa: E402
from skdpopt.losses import SquaredError  # noqa: E402


def in_process_cluster(n_workers, threads_per_worker):
    """A LocalCluster in this process (its start-up warnings silenced)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return distributed.LocalCluster(
            n_workers=n_workers, threads_per_worker=threads_per_worker,
            processes=False, dashboard_address=None)


@pytest.fixture(scope="module")
def client():
    """A small in-process cluster: two workers of one thread each."""
    cluster = in_process_cluster(2, 1)
    with distributed.Client(cluster) as dask_client:
        yield dask_client
    cluster.close()


def regression(n=20_000, d=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, d))
    y = X @ np.linspace(0.6, -0.4, d) + 0.1 * rng.normal(size=n)
    return X, np.clip(y, -1, 1)


def as_dask(X, y, rows=3_000):
    return (da.from_array(X, chunks=(rows, X.shape[1])),
            da.from_array(y, chunks=rows))


N_ROWS, RATE, N_STEPS = 600, 0.1, 2_000


def inclusions(chunks, monkeypatch):
    """How often each row, and how many rows each step, a sampler drew."""
    # Small chunks, so that the steps span many chunks (and generators).
    monkeypatch.setattr(dask_backend, "SAMPLED_VALUES_PER_CHUNK",
                        50 * RATE * N_ROWS * 3)
    X = da.from_array(np.arange(N_ROWS, dtype=float)[:, None], chunks=(chunks, 1))
    y = da.zeros(N_ROWS, chunks=(chunks,))
    sampler = linear_rows(X, y, SquaredError(), clip_norm=1.0).poisson_sampler(
        np.random.default_rng(0), RATE, N_STEPS, 256)
    counts = np.zeros(N_ROWS, dtype=np.int64)
    sizes = np.empty(N_STEPS, dtype=np.int64)
    for t in range(N_STEPS):
        source, rows = sampler.batch(t)
        ids = source.X[rows, 0].astype(np.int64)
        assert len(np.unique(ids)) == len(ids)  # a row at most once per step
        np.add.at(counts, ids, 1)
        sizes[t] = len(ids)
    assert sampler.chunk_steps == 50
    return counts, sizes


def looks_poisson(counts, sizes):
    """Whether the draws pass the checks a Poisson sample fails w.p. < 1e-6.

    Each row's count is Binomial(T, q): every row within its two-sided
    quantiles at level 1e-7 / n (union bound over rows).  Each step's size
    is Binomial(n, q), independent across steps: their sum is
    Binomial(n T, q), and their sample variance s^2 satisfies
    (T - 1) s^2 / (n q (1 - q)) ~ chi^2(T - 1) to the normal approximation
    of the binomial (n q = 60), checked at 1e-7 in each tail.
    """
    alpha = 1e-7 / N_ROWS
    low = stats.binom.ppf(alpha / 2, N_STEPS, RATE)
    high = stats.binom.isf(alpha / 2, N_STEPS, RATE)
    rows_ok = low <= counts.min() and counts.max() <= high
    total_ok = (stats.binom.ppf(1e-7, N_ROWS * N_STEPS, RATE) <= sizes.sum()
                <= stats.binom.isf(1e-7, N_ROWS * N_STEPS, RATE))
    spread = (N_STEPS - 1) * sizes.var(ddof=1) / (N_ROWS * RATE * (1 - RATE))
    spread_ok = (stats.chi2.ppf(1e-7, N_STEPS - 1) <= spread
                 <= stats.chi2.isf(1e-7, N_STEPS - 1))
    return rows_ok and total_ok and spread_ok


@pytest.mark.parametrize("chunks", [(600,), (100,) * 6, (7, 293, 1, 299)])
def test_poisson_inclusions_are_binomial_whatever_the_partitioning(
        chunks, monkeypatch):
    assert looks_poisson(*inclusions(chunks, monkeypatch))


def test_poisson_check_catches_a_fixed_size_sample_per_block(monkeypatch):
    # Planted bug: each block contributes round(q * rows) rows per step
    # (sampling without the binomial spread).  Every row is still drawn
    # with probability q, but batch sizes no longer vary as they must.
    def fixed_size(rng, n_rows, rate, n_batches):
        size = int(round(rate * n_rows))
        rows = np.concatenate([np.sort(rng.choice(n_rows, size, replace=False))
                               for _ in range(n_batches)]).astype(np.int64)
        return rows, np.arange(n_batches + 1) * size

    monkeypatch.setattr(dask_held, "poisson_batches", fixed_size)
    assert not looks_poisson(*inclusions((100,) * 6, monkeypatch))


def test_merge_groups_rows_by_step_in_block_order():
    # Each block's piece is grouped by step; the merge must give step s the
    # rows of block 0, then block 1, ..., i.e. a stable sort by step.
    rng = np.random.default_rng(1)
    n_steps, pieces, expected = 7, [], []
    for block in range(5):
        counts = rng.integers(0, 4, size=n_steps)
        counts[block % n_steps] = 0  # empty steps too
        steps = np.repeat(np.arange(n_steps), counts)
        ids = block * 1000 + np.arange(len(steps), dtype=float)
        pieces.append((np.c_[ids, -ids], ids + 0.5, ids + 0.25, counts))
        expected.append((steps, ids))
    steps = np.concatenate([e[0] for e in expected])
    ids = np.concatenate([e[1] for e in expected])[np.argsort(steps, kind="stable")]
    X_rows, y_rows, limits, offsets = merge_by_step(pieces)
    np.testing.assert_array_equal(X_rows, np.c_[ids, -ids])
    np.testing.assert_array_equal(y_rows, ids + 0.5)
    np.testing.assert_array_equal(limits, ids + 0.25)
    np.testing.assert_array_equal(
        offsets, np.searchsorted(np.sort(steps), np.arange(n_steps + 1)))


def batches(sampler, n_steps):
    return [source.X[rows, 0].copy() for source, rows in
            (sampler.batch(t) for t in range(n_steps))]


def record_batches(state, batches):
    """A segment's function: the first column of each batch's rows."""
    for source, rows in batches:
        state.append(source.X[rows, 0].copy())
    return state


def segment_batches(sampler):
    """The batches of every segment, in step order, run where the sampler
    runs them."""
    state = []
    for segment in sampler.segments():
        state = segment.run(record_batches, state)
    return sampler.result(state)


@pytest.mark.parametrize("persisted", [False, True])
def test_prefetched_batches_equal_the_synchronous_ones(client, monkeypatch,
                                                       persisted):
    # Chunks of 3 steps.  Lazy blocks: windows of 4 chunks (1 / q = 10
    # steps), each drawn in one pass, fetched ahead by the client;
    # persisted blocks: drawn a chunk at a time on the workers, two chunks
    # ahead, and stepped on one of them; the local scheduler draws chunk
    # by chunk.  Same generator, same batches.
    monkeypatch.setattr(dask_backend, "SAMPLED_VALUES_PER_CHUNK",
                        3 * RATE * N_ROWS * 3)
    X = da.from_array(np.arange(N_ROWS, dtype=float)[:, None], chunks=(70, 1))
    y = da.zeros(N_ROWS, chunks=(70,))
    held = client.persist([X, y]) if persisted else (X, y)
    data = linear_rows(*held, SquaredError(), clip_norm=1.0)
    n_steps = 100
    fetched = data.poisson_sampler(np.random.default_rng(5), RATE, n_steps, 256)
    assert fetched.client is client
    assert fetched.chunk_steps == 3
    if persisted:
        assert isinstance(fetched, dask_held.HeldPoissonSampler)
        got = segment_batches(fetched)
    else:
        assert fetched.window_chunks == 4
        got = batches(fetched, n_steps)
        assert fetched.windows == set(range(-(-34 // 4)))
    with dask.config.set(scheduler="sync"):
        data = linear_rows(X, y, SquaredError(), clip_norm=1.0)
        local = data.poisson_sampler(np.random.default_rng(5), RATE, n_steps, 256)
        assert local.client is None
        want = batches(local, n_steps)
    for a, b in zip(got, want, strict=True):
        np.testing.assert_array_equal(a, b)
    assert sum(map(len, got)) > 0


def staged_files(client):
    """The staged-sample directories left in the workers' local directories."""
    import os

    def listing(dask_worker=None):
        return [name for name in os.listdir(dask_worker.local_directory)
                if name.startswith("skdpopt-poisson-")]

    return sum(client.run(listing).values(), [])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_staged_rows_come_back_whole_and_their_files_go(client, monkeypatch,
                                                        dtype):
    # Lazy blocks stage their rows in files: every part of a row (its
    # values in X's dtype, target, bound) must come back as drawn, and the
    # files must be gone once the last batch is served.
    monkeypatch.setattr(dask_backend, "SAMPLED_VALUES_PER_CHUNK",
                        3 * RATE * N_ROWS * 5)
    X_np, y_np = regression(N_ROWS, d=3, seed=2)
    X_np = (X_np * [1.0, 10.0, 0.1]).astype(dtype)  # rows of unequal norms
    X, y = as_dask(X_np, y_np, rows=70)

    def served(sampler):
        return [(source.X[rows].copy(), source.y[rows].copy(),
                 np.broadcast_to(source.limits, len(source.y))[rows].copy())
                for source, rows in (sampler.batch(t) for t in range(100))]

    staged = linear_rows(X, y, SquaredError(), clip_norm=1.0).poisson_sampler(
        np.random.default_rng(7), RATE, 100, 256)
    got = served(staged)
    assert staged.window_chunks > 1
    assert staged_files(client) == []
    with dask.config.set(scheduler="sync"):
        want = served(linear_rows(X, y, SquaredError(), clip_norm=1.0)
                      .poisson_sampler(np.random.default_rng(7), RATE, 100, 256))
    for a, b in zip(got, want, strict=True):
        assert a[0].dtype == dtype
        for part_a, part_b in zip(a, b, strict=True):
            np.testing.assert_array_equal(part_a, part_b)
    assert sum(len(a[1]) for a in got) > 0


def record_served(state, batches):
    """A segment's function: each batch's rows, targets and gradient bounds."""
    for source, rows in batches:
        state.append((source.X[rows].copy(), source.y[rows].copy(),
                      np.broadcast_to(source.limits, len(source.y))[rows].copy()))
    return state


def held_against_synchronous(client, monkeypatch, dtype):
    """Batches of a held sampler and of the local scheduler's, same seed."""
    monkeypatch.setattr(dask_backend, "SAMPLED_VALUES_PER_CHUNK",
                        3 * RATE * N_ROWS * 5)
    # Own rows move a few at a time: the moves' loop runs several times.
    monkeypatch.setattr(dask_held, "ROWS_PER_MOVE", 3)
    X_np, y_np = regression(N_ROWS, d=3, seed=2)
    X_np = (X_np * [1.0, 10.0, 0.1]).astype(dtype)  # rows of unequal norms
    X, y = as_dask(X_np, y_np, rows=70)
    held = linear_rows(*client.persist([X, y]), SquaredError(),
                       clip_norm=1.0).poisson_sampler(np.random.default_rng(7),
                                                      RATE, 100, 256)
    assert isinstance(held, dask_held.HeldPoissonSampler)
    got = []
    for segment in held.segments():
        got = segment.run(record_served, got)
    got = held.result(got)
    with dask.config.set(scheduler="sync"):
        local = linear_rows(X, y, SquaredError(), clip_norm=1.0).poisson_sampler(
            np.random.default_rng(7), RATE, 100, 256)
        want = [(source.X[rows].copy(), source.y[rows].copy(),
                 np.broadcast_to(source.limits, len(source.y))[rows].copy())
                for source, rows in (local.batch(t) for t in range(100))]
    for a, b in zip(got, want, strict=True):
        assert a[0].dtype == dtype
        for part_a, part_b in zip(a, b, strict=True):
            np.testing.assert_array_equal(part_a, part_b)
    assert sum(len(a[1]) for a in got) > 0
    return held


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_held_batches_carry_the_synchronous_rows_targets_and_bounds(
        client, monkeypatch, dtype):
    # Persisted blocks on two workers: the chunks are stepped on each in
    # turn; the other worker's rows are received and placed ahead of the
    # steps, the stepper's own rows moved into their places and their
    # bounds computed there; the local scheduler's path computes them per
    # block's sample.  Same rows, targets and bounds, whatever X's dtype.
    held = held_against_synchronous(client, monkeypatch, dtype)
    assert len(held.steppers) == 2


def test_held_batches_on_a_single_worker_match_the_synchronous_ones(monkeypatch):
    # One worker holds every block: it draws a few steps' rows at a time
    # straight from its blocks (here one or two steps per group).
    monkeypatch.setattr(dask_held, "VALUES_PER_GROUP", 2 * RATE * N_ROWS * 5)
    cluster = in_process_cluster(1, 1)
    with cluster, distributed.Client(cluster) as one:
        held = held_against_synchronous(one, monkeypatch, np.float64)
    assert len(held.steppers) == 1


def test_files_of_a_sampler_stopped_midway_are_removed(client, monkeypatch):
    import gc

    monkeypatch.setattr(dask_backend, "SAMPLED_VALUES_PER_CHUNK",
                        3 * RATE * N_ROWS * 3)
    X, y = as_dask(*regression(N_ROWS, d=1), rows=70)
    sampler = linear_rows(X, y, SquaredError(), clip_norm=1.0).poisson_sampler(
        np.random.default_rng(5), RATE, 100, 256)
    sampler.batch(0)
    assert staged_files(client) != []
    sampler.fetching.result()  # the background fetch holds the sampler
    del sampler
    gc.collect()
    assert staged_files(client) == []


def test_a_lost_worker_stops_a_staged_fit_with_an_error(monkeypatch):
    # Its staged rows are gone with it: reads pinned to it could wait
    # forever, so the sampler must say so instead.
    monkeypatch.setattr(dask_backend, "SAMPLED_VALUES_PER_CHUNK",
                        3 * RATE * N_ROWS * 3)
    monkeypatch.setattr(dask_backend._DaskPoissonSampler, "check_workers_every", 0.2)
    cluster = in_process_cluster(2, 1)
    with cluster, distributed.Client(cluster) as own:
        X, y = as_dask(*regression(N_ROWS, d=1), rows=70)
        sampler = linear_rows(X, y, SquaredError(), clip_norm=1.0).poisson_sampler(
            np.random.default_rng(5), RATE, 100, 256)
        assert sampler.client is own
        sampler.batch(0)
        sampler.fetching.result()
        own.retire_workers(workers=[sorted(sampler.staged_at)[0]])
        with pytest.raises(RuntimeError, match="left the cluster"):
            for t in range(100):
                sampler.batch(t)


READS = []  # block indices read (module level: the in-process workers share it)


def read_block(block, block_info=None):
    READS.append(block_info[0]["chunk-location"][0])
    return block


def test_lazy_blocks_are_read_once_per_window(client, monkeypatch):
    # Data computed at every read: a window of chunks (about an epoch) must
    # cost one read of each block, not one per chunk.
    monkeypatch.setattr(dask_backend, "SAMPLED_VALUES_PER_CHUNK",
                        3 * RATE * N_ROWS * 3)
    READS.clear()
    X = da.from_array(np.arange(N_ROWS, dtype=float)[:, None], chunks=(100, 1))
    X = X.map_blocks(read_block, dtype=float)
    y = da.zeros(N_ROWS, chunks=(100,))
    sampler = linear_rows(X, y, SquaredError(), clip_norm=1.0).poisson_sampler(
        np.random.default_rng(5), RATE, 100, 256)
    batches(sampler, 100)
    n_windows = -(-34 // sampler.window_chunks)  # 34 chunks of 3 steps
    assert n_windows == 9
    assert np.bincount(READS).tolist() == [n_windows] * 6
    # The local scheduler's path, a pass per chunk, reads each block 34 times.
    READS.clear()
    with dask.config.set(scheduler="sync"):
        batches(linear_rows(X, y, SquaredError(), clip_norm=1.0).poisson_sampler(
            np.random.default_rng(5), RATE, 100, 256), 100)
    assert np.bincount(READS).tolist() == [34] * 6


ESTIMATORS = [
    ("sgd_full", lambda s: DPSGDRegressor(clip_norm=1.0,
        sampling="full", max_iter=10, eta0=1.0, delta=1e-7, random_state=s)),
    ("sgd_poisson", lambda s: DPSGDRegressor(clip_norm=1.0,
        max_iter=2, delta=1e-7, random_state=s)),
    ("lasso", lambda s: DPLasso(feature_bound=1.0, target_bound=1.0, alpha=0.001,
                                max_iter=5, delta=1e-7,
                                random_state=s)),
]


@pytest.mark.parametrize("name,make", ESTIMATORS, ids=[e[0] for e in ESTIMATORS])
def test_same_plan_and_utility_within_seed_noise(client, name, make):
    X, y = regression()
    X_test, y_test = regression(seed=1)
    Xd, yd = as_dask(X, y)
    in_memory, on_dask = [], []
    for seed in range(4):
        a = make(seed).fit(X, y)
        b = make(seed).fit(Xd, yd)
        assert b.privacy_plan_ == a.privacy_plan_
        assert b.privacy_spent_ == a.privacy_spent_
        assert isinstance(b.coef_, np.ndarray)
        in_memory.append(a.score(X_test, y_test))
        on_dask.append(b.score(X_test, y_test))
    in_memory, on_dask = np.array(in_memory), np.array(on_dask)
    # Two samples of 4 seeds each: their means differ by less than 5
    # standard errors of the difference (a two-sample z bound), with the
    # seed-to-seed spread of both backends pooled.
    spread = np.sqrt((in_memory.var(ddof=1) + on_dask.var(ddof=1)) / 4)
    assert abs(in_memory.mean() - on_dask.mean()) <= 5 * spread + 1e-9
    assert on_dask.mean() > 0.5  # and the model learned something


@pytest.mark.parametrize("persisted", [False, True], ids=["lazy", "persisted"])
def test_full_batch_fits_draw_the_same_noise(client, persisted):
    # Full-batch fits release the same sums (up to rounding) with noise
    # from the same generator: the models agree to rounding.  Persisted,
    # the blocks are read where they are held (DPLasso's residual kept
    # there by an actor per worker, see dask_held).
    X, y = regression(n=5_000)
    Xd, yd = as_dask(X, y, rows=1_700)
    if persisted:
        Xd, yd = client.persist([Xd, yd])
    for make in (lambda: DPLasso(feature_bound=1.0, target_bound=1.0, alpha=0.001,
                                 max_iter=8, delta=1e-7,
                                 random_state=3),
                 lambda: DPSGDRegressor(clip_norm=1.0, sampling="full", max_iter=10,
                                        delta=1e-7, random_state=3)):
        a, b = make().fit(X, y), make().fit(Xd, yd)
        np.testing.assert_allclose(b.coef_, a.coef_, rtol=1e-6, atol=1e-9)


def test_per_column_bounds_on_dask_match_memory(client):
    """Per-column bounds on a Dask array chunked across columns too: each
    column is clipped to its own bound (the blocks are joined across
    columns first), the far-rows count and the fit draw the same noise as
    in memory, and predict clips the same way."""
    X, y = regression(n=3_000)
    X = 1.5 * X  # some values beyond their columns' bounds
    bounds = np.linspace(0.5, 2.0, X.shape[1])
    Xd = da.from_array(X, chunks=(1_000, 2))
    yd = da.from_array(y, chunks=1_000)

    def make():
        return DPLasso(feature_bound=bounds, target_bound=1.0, alpha=0.001,
                       max_iter=8, delta=1e-7, random_state=3)

    a, b = make().fit(X, y), make().fit(Xd, yd)
    np.testing.assert_allclose(b.coef_, a.coef_, rtol=1e-6, atol=1e-9)
    assert b.far_rows_share_ == pytest.approx(a.far_rows_share_, abs=1e-12)
    np.testing.assert_allclose(b.predict(Xd).compute(), a.predict(X),
                               rtol=1e-9, atol=1e-12)


def test_held_least_squares_match_memory_on_a_worker_of_two_threads():
    # One worker of two threads holds two shares of the blocks: its actor
    # reads them in two threads.  A reset and moves sent with the next
    # aggregate give the in-memory residual's sums, to rounding.
    from skdpopt._data import ClippedLeastSquares

    cluster = in_process_cluster(1, 2)
    with cluster, distributed.Client(cluster) as own:
        X, y = regression(n=3_000)
        Xd, yd = own.persist(list(as_dask(X, y, rows=700)))
        held = dask_backend.DaskClippedLeastSquares(Xd, yd, 1.0, 0.5)
        (address, first), (same, second) = held.held.blocks.groups
        assert address == same and (first, second) == ([0, 2, 4], [1, 3])
        memory = ClippedLeastSquares(X, y, 1.0, 0.5)
        coef = np.array([0.3, 0.0, -0.2, 0.0, 0.1])
        for data in (held, memory):
            data.reset(coef, 0.05)
            data.move(1, 0.25)
            data.move(dask_backend.INTERCEPT, -0.1)
        for data in (held, memory):  # the moves after a read, then the reset
            data.mean_square_residual()
        np.testing.assert_allclose(held.gradient()[0], memory.gradient()[0],
                                   rtol=1e-12)
        held.move(3, 0.5)
        memory.move(3, 0.5)
        np.testing.assert_allclose(held.mean_square_residual(),
                                   memory.mean_square_residual(), rtol=1e-12)
        np.testing.assert_allclose(held.gradient()[1], memory.gradient()[1],
                                   rtol=1e-12)
        held.reset(np.zeros(5), 0.0)
        memory.reset(np.zeros(5), 0.0)
        np.testing.assert_allclose(held.gradient()[0], memory.gradient()[0],
                                   rtol=1e-12)
        np.testing.assert_allclose(held.curvature(2), memory.curvature(2),
                                   rtol=1e-12)


def test_classifiers_and_block_wise_prediction(client):
    X, y = regression(n=10_000)
    labels = (y > 0).astype(int)
    Xd, yd = as_dask(X, labels)
    for make in (lambda: DPSGDClassifier(clip_norm=1.0, classes=[0, 1], delta=1e-7,
                                         random_state=0),
                 lambda: DPLogisticSimplex(solver="frank_wolfe", classes=[0, 1],
                                           max_iter=10, delta=1e-7,
                                           random_state=0)):
        a, b = make().fit(X, labels), make().fit(Xd, yd)
        assert b.privacy_spent_ == a.privacy_spent_
        assert list(b.classes_) == [0, 1]
        predicted = b.predict(Xd)
        assert isinstance(predicted, da.Array)
        np.testing.assert_array_equal(predicted.compute(), b.predict(X))
        np.testing.assert_allclose(b.predict_proba(Xd).compute(),
                                   b.predict_proba(X))
        assert abs(b.score(X, labels) - a.score(X, labels)) < 0.05


def test_label_outside_declared_classes_is_refused(client):
    X, y = regression(n=2_000)
    Xd, yd = as_dask(X, (y > 0).astype(int) + 1)
    with pytest.raises(ValueError, match=r"some rows have a label outside"):
        DPSGDClassifier(clip_norm=1.0, classes=[0, 1], delta=1e-7).fit(Xd, yd)


def test_dataframe_input_keeps_feature_names(client):
    pd = pytest.importorskip("pandas")
    X, y = regression(n=4_000)
    frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(X.shape[1])])
    dframe = dd.from_pandas(frame, npartitions=3)
    model = DPSGDRegressor(clip_norm=1.0, sampling="full", delta=1e-7,
                           random_state=0).fit(
        dframe, dd.from_pandas(pd.Series(y), npartitions=3))
    assert list(model.feature_names_in_) == list(frame.columns)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no feature-name warning per block
        predicted = model.predict(dframe).compute()
    np.testing.assert_allclose(predicted, model.predict(frame))


def test_one_record_dask_fit_records_once_in_the_client_ledger(client):
    X, y = regression(n=3_000)
    Xd, yd = as_dask(X, y, rows=1_000)
    with PrivacyLedger() as ledger:
        DPSGDRegressor(clip_norm=1.0, delta=1e-7, random_state=0).fit(Xd, yd)
    assert len(ledger) == 1


def test_extreme_record_keeps_the_model_finite(client):
    X, y = regression(n=3_000)
    X[17] = 1e300
    y[17] = -1e300
    Xd, yd = as_dask(X, y, rows=1_000)
    for sampling in ("full", "poisson"):
        model = DPSGDRegressor(clip_norm=1.0, sampling=sampling, delta=1e-7,
                               random_state=0)
        assert np.all(np.isfinite(model.fit(Xd, yd).coef_))


def test_non_finite_values_are_refused(client):
    X, y = regression(n=3_000)
    X[5, 1] = np.nan
    Xd, yd = as_dask(X, y, rows=1_000)
    with pytest.raises(ValueError, match="NaN or infinity"):
        DPLasso(feature_bound=1.0, target_bound=1.0, delta=1e-7).fit(Xd, yd)


@pytest.mark.parametrize("value,finite", [
    (np.finfo(np.float64).max, True),  # finite, but every block's sum overflows
    (np.inf, False), (-np.inf, False), (np.nan, False)])
def test_finite_check_falls_back_to_each_value_where_a_sum_is_not_finite(
        value, finite):
    X = np.zeros((3_000, 2))
    X[::2, 0] = np.finfo(np.float64).max  # sums overflow in every block
    X[1_234, 1] = value
    with dask.config.set(scheduler="sync"):
        assert dask_backend._all_finite(
            da.from_array(X, chunks=(1_000, 2))).compute() is finite
        assert dask_backend._all_finite(
            da.from_array(X[:, 1], chunks=700)).compute() is finite


@pytest.mark.parametrize("make,reason", [
    (lambda: DPSGDRegressor(clip_norm=1.0, sampling="single_pass"), "single_pass"),
    (lambda: DPLogisticSimplex(classes=[0, 1], solver="mirror_descent"),
     "mirror_descent"),
    (lambda: DPMinimaxClassifier(), "saddle-point"),
])
def test_unsupported_fits_are_refused_with_the_reason(client, make, reason):
    X, y = regression(n=200)
    Xd, yd = as_dask(X, (y > 0).astype(int), rows=100)
    with pytest.raises(TypeError, match=reason) as info:
        if isinstance(make(), DPMinimaxClassifier):
            make().fit(Xd, yd, sensitive_features=np.arange(200) % 2)
        else:
            make().fit(Xd, yd)
    assert "supported by DPSGDRegressor" in str(info.value)


def test_auto_bounds_on_dask_match_memory_and_clip_norm_is_refused(client):
    """The "auto" bounds read counts of a per-row statistic below each
    candidate, summed over row blocks: the same counts, hence the same
    draws for the same seed, as in memory.  The clip norm's "auto" needs
    each row's gradient norm and is refused."""
    X, y = regression(n=200)
    y = 40.0 * y
    Xd, yd = as_dask(X, y, rows=70)
    lasso = dict(feature_bound="auto", alpha=0.01, max_iter=2, delta=1e-7,
                 random_state=0)
    in_memory, on_dask = DPLasso(**lasso).fit(X, y), DPLasso(**lasso).fit(Xd, yd)
    assert on_dask.target_bound_ == in_memory.target_bound_
    assert on_dask.feature_bound_ == in_memory.feature_bound_
    sgd = dict(sampling="full", max_iter=2, delta=1e-7, random_state=0)
    assert (DPSGDRegressor(**sgd).fit(Xd, yd).target_scale_
            == DPSGDRegressor(**sgd).fit(X, y).target_scale_)
    with pytest.raises(ValueError, match="clip_norm=<a public number>"):
        DPSGDRegressor(clip_norm="auto").fit(Xd, yd)


def test_marginal_counts_match_in_memory(client):
    rng = np.random.default_rng(0)
    cardinalities = (3, 4, 2)
    codes = np.column_stack([rng.integers(0, c, size=5_000) for c in cardinalities])
    attributes = [(0,), (1, 2), (0, 1, 2)]
    expected = marginal_counts(codes, cardinalities, attributes)
    got = marginal_counts(da.from_array(codes, chunks=(1_300, 2)), cardinalities,
                          attributes)
    for e, g in zip(expected, got, strict=True):
        np.testing.assert_array_equal(g, e)
    assert got[2].sum() == 5_000
    codes[3, 1] = 4  # outside the declared domain
    with pytest.raises(ValueError, match="outside the declared domain"):
        marginal_counts(da.from_array(codes, chunks=(1_300, 3)), cardinalities,
                        attributes)


def test_block_sums_are_float64_whatever_the_blocks_dtype(client):
    """The float32 case of tests/test_sums.py on Dask blocks: one step of
    DPLasso without noise moves by the exact 2 / n, not by 1.5e-3."""
    n_ones, n_small = 32_769, 100_000
    n = n_ones + n_small
    X = da.ones((n, 1), dtype=np.float32, chunks=(70_000, 1))
    y = np.concatenate([-np.ones(n_ones), np.full(n_small, 0.0015)])
    other = y.copy()
    other[0] = 1.0

    def coef(target):
        return DPLasso(alpha=0, fit_intercept=False, max_iter=1, target_bound=1,
                       residual_bound=1, curvature="bound", feature_bound=1.0,
                       epsilon=np.inf).fit(X, da.from_array(target, chunks=70_000)
                                           ).coef_[0]

    assert abs(coef(y) - coef(other)) == pytest.approx(2 / n, rel=1e-6)


EMPTY_CHUNKS = (100, 0, 300, 0)  # what filtering a DataFrame leaves


def _with_empty_blocks(X, y):
    return (da.from_array(X, chunks=(EMPTY_CHUNKS, X.shape[1])),
            da.from_array(y, chunks=(EMPTY_CHUNKS,)))


EMPTY_BLOCK_FITS = [
    ("sgd_full", lambda: DPSGDRegressor(clip_norm=1.0, sampling="full", max_iter=3,
                                        delta=1e-7, random_state=0), False),
    ("sgd_poisson", lambda: DPSGDRegressor(clip_norm=1.0, max_iter=2, delta=1e-7,
                                           random_state=0), False),
    ("sgd_auto_target", lambda: DPSGDRegressor(sampling="full", max_iter=2,
                                               delta=1e-7, random_state=0), False),
    ("sgd_classifier", lambda: DPSGDClassifier(clip_norm=1.0, classes=[0, 1],
                                               max_iter=2, delta=1e-7,
                                               random_state=0), True),
    ("lasso", lambda: DPLasso(feature_bound=1.0, target_bound=1.0, max_iter=3,
                              delta=1e-7, random_state=0), False),
    ("lasso_auto_bounds", lambda: DPLasso(feature_bound="auto", max_iter=3,
                                          delta=1e-7, random_state=0), False),
    ("lasso_frank_wolfe", lambda: DPLasso(solver="frank_wolfe", feature_bound=1.0,
                                          target_bound=1.0, max_iter=3,
                                          delta=1e-7, random_state=0), False),
    ("simplex_frank_wolfe", lambda: DPLogisticSimplex(
        solver="frank_wolfe", classes=[0, 1], max_iter=3, delta=1e-7,
        random_state=0), True),
]


@pytest.mark.parametrize("persist", [False, True], ids=["lazy", "persisted"])
@pytest.mark.parametrize("name,make,labels", EMPTY_BLOCK_FITS,
                         ids=[f[0] for f in EMPTY_BLOCK_FITS])
def test_empty_blocks_fit_and_predict(client, name, make, labels, persist):
    X, y = regression(n=400)
    target = (y > 0).astype(int) if labels else y
    Xd, yd = _with_empty_blocks(X, target)
    if persist:
        Xd, yd = client.persist([Xd, yd])
    with PrivacyLedger() as ledger:
        model = make().fit(Xd, yd)
    assert len(ledger) == 1
    # The same plan as in memory, and predictions block by block.
    assert model.privacy_plan_ == make().fit(X, target).privacy_plan_
    np.testing.assert_array_equal(model.predict(Xd).compute(), model.predict(X))


def test_a_filtered_dataframe_fits(client):
    pd = pytest.importorskip("pandas")
    X, y = regression(n=3_000)
    frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(X.shape[1])])
    frame["y"] = y
    # Three of the four partitions hold no row with x0 > 0.5.
    frame = frame.sort_values("x0")
    kept = dd.from_pandas(frame, npartitions=4, sort=False)
    kept = kept[kept.x0 > 0.5]
    assert 0 in kept.map_partitions(len).compute().tolist()

    def make():
        return DPSGDRegressor(clip_norm=1.0, sampling="full", max_iter=3,
                              delta=1e-7, random_state=0)

    model = make().fit(kept.drop(columns="y"), kept.y)
    assert np.all(np.isfinite(model.coef_))
    in_memory = frame[frame.x0 > 0.5]
    reference = make().fit(in_memory.drop(columns="y"), in_memory.y)
    assert model.privacy_plan_ == reference.privacy_plan_
    np.testing.assert_allclose(model.coef_, reference.coef_, rtol=1e-6)
    # Predicted partition by partition, the empty ones included.
    np.testing.assert_allclose(model.predict(kept.drop(columns="y")).compute(),
                               model.predict(in_memory.drop(columns="y")))


@pytest.mark.parametrize("fail_at, charged", [(1, 0), (4, 1)])  # 3 blocks a pass
def test_a_fit_that_fails_before_drawing_anything_is_not_charged(
        monkeypatch, fail_at, charged):
    """A pass over the blocks that fails (a lost worker, say) before the
    fit's generator has drawn anything: nothing noisy existed, and the
    ledger forgets the fit.  A failure after noise was drawn stays charged."""
    X, y = regression(n=2_000)
    Xd, yd = as_dask(X, y, rows=700)
    block_gradient = dask_backend._block_gradient
    passes = []

    def failing(*args):
        passes.append(1)
        if len(passes) >= fail_at:
            raise RuntimeError("the pass failed")
        return block_gradient(*args)

    monkeypatch.setattr(dask_backend, "_block_gradient", failing)
    # In this process (a patched function does not travel to workers).
    with dask.config.set(scheduler="sync"), PrivacyLedger() as ledger:
        with pytest.raises(RuntimeError, match="the pass failed"):
            DPSGDRegressor(clip_norm=1.0, target_scale=1.0, sampling="full",
                           max_iter=3, delta=1e-7).fit(Xd, yd)
    assert len(ledger) == charged


# What each estimator that does not fit on Dask says instead of gathering.
REFUSED = "does not fit on Dask collections"
# Estimators whose every default fit runs on the blocks (never refused).
FIT_ON_DASK = {"DPSyntheticData"}


def _estimators():
    from test_common import ESTIMATORS

    from skdpopt import make_private_pipeline

    return ESTIMATORS + [make_private_pipeline(DPSGDRegressor(clip_norm=1.0),
                                               epsilon=1.0, delta=1e-7)]


@pytest.mark.parametrize("frame", [False, True], ids=["array", "dataframe"])
@pytest.mark.parametrize("estimator", _estimators(),
                         ids=lambda e: f"{type(e).__name__}"
                         f"({e.get_params().get('solver', '')})")
def test_no_estimator_gathers_dask_data_into_memory(client, monkeypatch,
                                                   estimator, frame):
    """Dask's conversions to numpy raise: every fit either runs on the
    blocks or refuses with the TypeError the large-data guide promises."""
    pd = pytest.importorskip("pandas")
    from sklearn.base import clone, is_classifier

    X, y = regression(n=600)
    target = (y > 0).astype(int) if is_classifier(estimator) else y
    if frame:
        Xd = dd.from_pandas(pd.DataFrame(X, columns=list("abcde")), npartitions=3)
        yd = dd.from_pandas(pd.Series(target), npartitions=3)
    else:
        Xd, yd = as_dask(X, target, rows=200)

    def gathered(*args, **kwargs):
        raise AssertionError("a Dask collection was converted to numpy")

    for kind in (da.Array, dd.DataFrame, dd.Series):
        monkeypatch.setattr(kind, "__array__", gathered)
    model = clone(estimator)
    if "classes" in model.get_params():
        model.set_params(classes=[0, 1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            model.fit(Xd, yd)
        except TypeError as exc:
            assert REFUSED in str(exc)
            assert type(model).__name__ not in FIT_ON_DASK
        except ValueError as exc:
            # The private "auto" bounds that need rows in memory: refused too.
            assert "on Dask collections needs public bounds" in str(exc)


# ----------------------------------------------------------------------
# DPSyntheticData on Dask records.

def census(n=3_000, seed=0):
    """A small mixed table: two categorical columns (one with missing
    values declared), one numeric column with declared bounds, one without."""
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(seed)
    colour = rng.choice(["red", "green", "blue"], size=n)
    group = rng.integers(0, 4, size=n).astype(float)
    group[rng.random(n) < 0.05] = np.nan
    age = rng.normal(40, 12, size=n) + 5 * (colour == "red")
    income = np.exp(rng.normal(10, 0.5, size=n))
    frame = pd.DataFrame({"colour": colour, "group": group, "age": age,
                          "income": income})
    params = dict(domain={"colour": ["red", "green", "blue"],
                          "group": [0.0, 1.0, 2.0, 3.0, np.nan]},
                  bounds={"age": (0, 100)}, n_bins=6, random_state=3)
    return frame, params


@pytest.mark.parametrize("workload", [2, [("colour", "age"), ("group", "income")]])
def test_synthetic_fits_on_dask_as_in_memory(client, workload):
    """Same seed, same fit: the same plan and events, the same private
    bounds (the same grid counts), the same selections and model (the
    marginals are the same integer counts over the same n)."""
    from skdpopt import DPSyntheticData

    frame, params = census()
    in_memory = DPSyntheticData(workload=workload, **params).fit(frame)
    on_dask = DPSyntheticData(workload=workload, **params).fit(
        dd.from_pandas(frame, npartitions=7))
    assert on_dask.privacy_plan_ == in_memory.privacy_plan_
    assert on_dask.privacy_spent_ == in_memory.privacy_spent_
    assert on_dask.selected_ == in_memory.selected_
    for a, b in zip(on_dask.domain_[2:], in_memory.domain_[2:], strict=True):
        np.testing.assert_array_equal(a.edges, b.edges)  # "income": private
    for columns in (["colour", "age"], ["group", "income"], ["age"]):
        np.testing.assert_allclose(on_dask.marginal(columns),
                                   in_memory.marginal(columns), rtol=1e-12)
    assert list(on_dask.feature_names_in_) == list(frame.columns)
    assert list(on_dask.sample(5, random_state=0).columns) == list(frame.columns)


def test_synthetic_on_a_dask_array_with_a_query_matrix(client):
    """Integer-coded columns of a Dask array and explicit linear queries:
    the answers come from the counts of the whole (small) domain."""
    from skdpopt import DPSyntheticData

    rng = np.random.default_rng(1)
    X = np.column_stack([rng.integers(0, 3, 2_000), rng.integers(0, 2, 2_000)])
    queries = np.random.default_rng(2).uniform(-1, 1, size=(4, 6))
    params = dict(domain=[3, 2], workload=queries, random_state=0, max_iter=3)
    in_memory = DPSyntheticData(**params).fit(X)
    on_dask = DPSyntheticData(**params).fit(da.from_array(X, chunks=(300, 1)))
    assert on_dask.privacy_spent_ == in_memory.privacy_spent_
    assert on_dask.selected_ == in_memory.selected_
    # The answers agree to rounding (a mean of n terms against a product
    # with n times the counts), the model with them.
    np.testing.assert_allclose(on_dask.histogram_, in_memory.histogram_,
                               rtol=1e-9)


def test_synthetic_on_dask_checks_every_block_before_charging(client):
    """A category outside the declared domain, or a NaN in a numeric
    column, in the last block: refused as in memory, nothing charged."""
    from skdpopt import DPSyntheticData

    frame, params = census(n=600)
    outside = frame.copy()
    outside.loc[599, "colour"] = "mauve"
    nan = frame.copy()
    nan.loc[599, "income"] = np.nan
    with PrivacyLedger() as ledger:
        with pytest.raises(ValueError, match="not among its declared categories"):
            DPSyntheticData(**params).fit(dd.from_pandas(outside, npartitions=3))
        with pytest.raises(ValueError, match="NaN or infinite"):
            DPSyntheticData(**params).fit(dd.from_pandas(nan, npartitions=3))
    assert len(ledger) == 0


def test_cell_counts_are_sparse_and_added_over_blocks(client):
    """Each block sends the cells its records fall in (not the marginal's
    table); the tree of additions gives the in-memory counts."""
    from skdpopt._data import dask_records
    from skdpopt._domain import declared_categories, encode_columns

    rng = np.random.default_rng(0)
    shape = (3, 4, 50)
    codes = np.column_stack([rng.integers(0, c, size=5_000) for c in shape])
    records = dask_records.DaskRecords(da.from_array(codes, chunks=(300, 3)))
    domain = [declared_categories(i, c) for i, c in enumerate(shape)]
    cliques = [(0,), (1, 2), (0, 1, 2)]
    got = records.cell_counts(partial(encode_columns, domain=domain), shape, cliques)
    expected = marginal_counts(codes, shape, cliques)
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_array_equal(g, e.ravel())
    block = dask_records._cell_counts(partial(encode_columns, domain=domain),
                                      codes[:10], shape, cliques)
    assert len(block[2][0]) <= 10  # cells present, not 600 cells


def test_workers_heap_serves_the_temporaries(monkeypatch):
    """On a worker with Dask's MALLOC_TRIM_THRESHOLD_ and no mmap threshold
    of its own, the threshold is raised once; a user's own setting, or no
    trim threshold, is left alone."""
    import sys

    if not sys.platform.startswith("linux"):
        pytest.skip("glibc's mallopt")
    monkeypatch.delenv("MALLOC_TRIM_THRESHOLD_", raising=False)
    monkeypatch.delenv("MALLOC_MMAP_THRESHOLD_", raising=False)
    assert not dask_held.heap_for_temporaries()  # a plain process
    monkeypatch.setenv("MALLOC_TRIM_THRESHOLD_", "65536")
    monkeypatch.setenv("MALLOC_MMAP_THRESHOLD_", "1000000")
    assert not dask_held.heap_for_temporaries()  # the user's setting
    monkeypatch.delenv("MALLOC_MMAP_THRESHOLD_")
    assert dask_held.heap_for_temporaries()  # Dask's default worker
    assert not dask_held.heap_for_temporaries()  # once
