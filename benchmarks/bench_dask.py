"""Fits on Dask arrays: time, peak memory per worker and of the client, utility.

A ``LocalCluster`` with 2 worker processes (one thread each) on this
machine.  The rows are generated lazily by Dask, block by block, every time
a pass reads them (never held whole anywhere): X uniform on [-1, 1]^50,
``y = clip(X w + N(0, 0.1^2), -1, 1)`` with 5 non-zero weights of 0.3.
Each fit is compared with the same estimator fitted in memory on numpy
data of the same distribution (in a fresh subprocess, data built before
the clock starts), and with dask-ml's non-private ``LinearRegression``
(run from a separate virtual environment, ``--daskml-python``, on its own
LocalCluster of the same shape).

Reported per fit: wall time; peak resident memory of each worker and of
the client during the fit (the kernel's high-water mark, reset before the
fit, ``/proc/self/clear_refs``), next to their resident size before it;
R^2 on 100,000 held-out rows; ``privacy_spent_`` (identical for numpy and
Dask, by construction of the plan: checked).

Without ``--sizes`` the script runs the documented plan (``PLAN``): every
fit at 1e6 and 1e7 rows (lazy, persisted where it is the use case, and in
memory), the lazy fits at 1e8 rows, dask-ml at 1e6 and 1e7, each
``--repeats`` times (3; once at 1e8), interleaved so that the fits a ratio
compares ran close together; it writes the table, the log-log slopes and
the targets to ``docs/benchmarks/_generated/bench_dask.md`` (see
``report.py``).  ``--quick`` runs the lazy and in-memory fits at 1e5 rows
once (``bench_dask.quick.md``).  With ``--sizes`` it prints the JSON lines
of the fits asked for.

With ``--workers 1 2 ...`` it runs two tables instead, on data of
``--size`` rows persisted in the workers' memory, medians of
``--repeats`` fits: per-core efficiency (one worker with one thread
against numpy with one BLAS thread) and strong scaling (1, 2, ...
workers of one thread against one numpy process with a BLAS thread per
core), with the processor seconds of all the processes of each fit, and
writes them with every single fit to
``docs/benchmarks/_generated/bench_dask.cores.md`` (with all three fits;
a subset of ``--estimators`` only prints them).  ``--profile`` times the
phases of one-worker DPLasso fits on such data (the client's calls
against the worker's busy time in them) and writes
``bench_dask.profile.md``.

Usage::

    python benchmarks/bench_dask.py --daskml-python /path/to/env/bin/python
    python benchmarks/bench_dask.py --quick
    python benchmarks/bench_dask.py --sizes 1e7 3e7 --estimators sgd_poisson \
        --lazy sgd_poisson --in-memory-max 0 --memory-limit 2GB
    python benchmarks/bench_dask.py --workers 1 2 --size 2e6 --repeats 3
    python benchmarks/bench_dask.py --profile --size 2e6 --repeats 3
    python benchmarks/bench_dask.py --synthetic 1e7

``--memory-limit`` is each worker's ``memory_limit`` (beyond it a worker
spills task results to its local disk): lazy Poisson fits keep an epoch's
sampled rows on the workers until the client fetches them; the plan gives
them 2 GB per worker.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import warnings

import numpy as np
from report import Report

distributed = None  # imported by main(), where a cluster is started
D = 50
BLOCK_ROWS = 250_000  # 100 MB of float64 per block
N_TEST = 100_000
DELTA = 1e-9
WEIGHTS = np.r_[np.full(5, 0.3), np.zeros(D - 5)]
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")

ESTIMATORS = {
    # NoisyGD: 10 full-batch steps, one pass each.
    "sgd_full": ("DPSGDRegressor",
                 dict(sampling="full", max_iter=10, eta0=1.0, clip_norm=1.0,
                      target_scale=1.0, delta=DELTA)),
    # Poisson-subsampled DP-SGD, one epoch of batches of 1024 expected rows.
    "sgd_poisson": ("DPSGDRegressor",
                    dict(sampling="poisson", max_iter=1, batch_size=1024,
                         clip_norm=1.0, target_scale=1.0, delta=DELTA)),
    # Private greedy CD: 10 steps, two passes each (residual scale, gradient).
    "lasso": ("DPLasso", dict(alpha=1e-3, max_iter=10, feature_bound=1.0,
                               target_bound=1.0, delta=DELTA)),
}


def _status_mb(key):
    """A memory figure of this process from /proc/self/status, in MB."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) / 1024.0
    raise RuntimeError(f"no {key}")


def hwm_mb():
    return _status_mb("VmHWM")


def rss_mb():
    return _status_mb("VmRSS")


def reset_peak():
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")


def test_set():
    rng = np.random.default_rng(12345)
    X = rng.uniform(-1, 1, size=(N_TEST, D))
    return X, np.clip(X @ WEIGHTS + 0.1 * rng.normal(size=N_TEST), -1, 1)


def r2(model, X, y):
    residual = y - np.asarray(model.predict(X))
    return 1.0 - residual @ residual / ((y - y.mean()) @ (y - y.mean()))


def lazy_data(n, seed=0):
    """X and y as lazy Dask arrays: every pass regenerates the blocks."""
    import dask.array as da

    rng = da.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, D), chunks=(BLOCK_ROWS, D))
    noise = rng.normal(0, 0.1, size=n, chunks=BLOCK_ROWS)
    return X, da.clip(X @ WEIGHTS + noise, -1, 1)


def make(name):
    import skdpopt

    cls, params = ESTIMATORS[name]
    return getattr(skdpopt, cls)(random_state=0, **params)


def _import_package():
    import skdpopt._data.dask_backend  # noqa: F401


def run_dask(client, n, name, persist=False):
    X, y = lazy_data(n)
    if persist:
        # Held in the workers' memory: passes read blocks instead of
        # generating them (the memory per worker then grows with n).
        X, y = client.persist([X, y])
        distributed.wait([X, y])
    model = make(name)
    before = client.run(rss_mb)
    client.run(reset_peak)
    client_before = rss_mb()
    reset_peak()
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(X, y)
    seconds = time.perf_counter() - start
    peaks = client.run(hwm_mb)
    X_test, y_test = test_set()
    return dict(
        backend="dask-persisted" if persist else "dask", estimator=name, n=n,
        seconds=round(seconds, 2),
        worker_rss_before_mb=[round(v) for v in before.values()],
        worker_peak_mb=[round(v) for v in peaks.values()],
        client_rss_before_mb=round(client_before), client_peak_mb=round(hwm_mb()),
        r2=round(float(r2(model, X_test, y_test)), 4),
        epsilon=model.privacy_spent_.epsilon, delta=model.privacy_spent_.delta)


def run_in_memory(n, name, repeats=1):
    """In this (fresh) process: numpy data built block by block, then fit
    ``repeats`` times (wall and processor seconds of each fit)."""
    rng = np.random.default_rng(0)
    X = np.empty((n, D))
    y = np.empty(n)
    for start in range(0, n, BLOCK_ROWS):
        stop = min(n, start + BLOCK_ROWS)
        X[start:stop] = rng.uniform(-1, 1, size=(stop - start, D))
        y[start:stop] = np.clip(X[start:stop] @ WEIGHTS
                                + rng.normal(0, 0.1, size=stop - start), -1, 1)
    data_rss = rss_mb()
    reset_peak()
    times, cpus = [], []
    for _ in range(repeats):
        model = make(name)
        cpu, start = time.process_time(), time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model.fit(X, y)
        times.append(round(time.perf_counter() - start, 3))
        cpus.append(round(time.process_time() - cpu, 3))
    X_test, y_test = test_set()
    return dict(
        backend="numpy", estimator=name, n=n, seconds=times[0], all_seconds=times,
        cpu_seconds=cpus, rss_with_data_mb=round(data_rss), peak_mb=round(hwm_mb()),
        r2=round(float(r2(model, X_test, y_test)), 4),
        epsilon=model.privacy_spent_.epsilon, delta=model.privacy_spent_.delta)


def run_daskml(n):
    """dask-ml's non-private LinearRegression, on its own LocalCluster."""
    from dask_ml.linear_model import LinearRegression
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None,
                      silence_logs=40) as cluster, Client(cluster) as client:
        X, y = lazy_data(n)
        client.run(reset_peak)
        reset_peak()
        start = time.perf_counter()
        model = LinearRegression(solver="lbfgs", max_iter=10, fit_intercept=True)
        model.fit(X, y)
        seconds = time.perf_counter() - start
        peaks = client.run(hwm_mb)
    X_test, y_test = test_set()
    return dict(
        backend="dask-ml", estimator="LinearRegression(lbfgs, max_iter=10)", n=n,
        seconds=round(seconds, 2), worker_peak_mb=[round(v) for v in peaks.values()],
        client_peak_mb=round(hwm_mb()), r2=round(float(r2(model, X_test, y_test)), 4))


def subprocess_json(args, python=sys.executable, timeout=1800, threads=None):
    env = None
    if threads is not None:  # the BLAS and OpenMP pools of the fresh process
        env = dict(os.environ, **{v: str(threads) for v in THREAD_VARIABLES})
    out = subprocess.run([python, __file__, *args], capture_output=True, text=True,
                         timeout=timeout, env=env)
    if out.returncode != 0:
        return dict(error=out.stderr.strip().splitlines()[-1:], args=args)
    return json.loads(out.stdout.strip().splitlines()[-1])


# The documented run: (memory limit per worker, n, estimator, backends).
# Persisted data is the use case of data that fits the cluster's memory;
# lazily generated data stands for data read from storage at every pass.
PLAN = [
    ("auto", 1e6, "sgd_full", ("dask", "dask-persisted", "numpy")),
    ("auto", 1e6, "lasso", ("dask", "dask-persisted", "numpy")),
    ("auto", 1e6, "sgd_poisson", ("dask-persisted", "numpy")),
    ("auto", 1e7, "sgd_full", ("dask", "dask-persisted", "numpy")),
    ("auto", 1e7, "lasso", ("dask", "dask-persisted", "numpy")),
    ("auto", 1e7, "sgd_poisson", ("dask-persisted", "numpy")),
    ("2GB", 1e6, "sgd_poisson", ("dask",)),
    ("2GB", 1e7, "sgd_poisson", ("dask",)),
    ("auto", 1e8, "sgd_full", ("dask",)),
    ("auto", 1e8, "lasso", ("dask",)),
    ("2GB", 1e8, "sgd_poisson", ("dask",)),
]
DASKML_SIZES = (1e6, 1e7)
QUICK_PLAN = [("auto", 1e5, name, ("dask", "numpy")) for name in ESTIMATORS]


def run_plan(plan, repeats, daskml_python):
    """Every fit of ``plan`` (and dask-ml), ``repeats`` times (once from
    1e8 rows), in rounds; returns the records, each with its round."""
    global distributed
    import distributed
    from distributed import Client, LocalCluster

    records = []
    for round_ in range(repeats):
        for limit in dict.fromkeys(step[0] for step in plan):
            steps = [s for s in plan if s[0] == limit and (round_ == 0 or s[1] < 1e8)]
            if not steps:
                continue
            with LocalCluster(n_workers=2, threads_per_worker=1,
                              dashboard_address=None, silence_logs=40,
                              memory_limit=limit) as cluster, Client(cluster) as client:
                client.run(_import_package)
                for _, n, name, backends in steps:
                    n = int(n)
                    for backend in backends:
                        if backend == "numpy":
                            record = subprocess_json(["--in-memory", str(n), name])
                        else:
                            record = run_dask(client, n, name,
                                              persist=backend == "dask-persisted")
                        record.update(round=round_, memory_limit=limit)
                        records.append(record)
                        print(json.dumps(record), flush=True)
        if daskml_python:
            for n in DASKML_SIZES:
                record = subprocess_json(["--daskml", str(n)], python=daskml_python)
                record.update(round=round_)
                records.append(record)
                print(json.dumps(record), flush=True)
    return records


def report_plan(report, records, quick):
    """The table of medians, the slopes and the targets."""
    groups = {}
    for r in records:
        if "error" in r:
            raise RuntimeError(f"a fit failed: {r}")
        key = (r["n"], r["estimator"], r["backend"], r.get("memory_limit", "auto"))
        groups.setdefault(key, []).append(r)

    def seconds_by_round(n, name, backend):
        return {r["round"]: r["seconds"] for key, runs in groups.items()
                if key[:3] == (n, name, backend) for r in runs}

    labels = {"dask": "dask (lazy)", "dask-persisted": "dask (persisted)",
              "numpy": "numpy", "dask-ml": "dask (lazy), dask-ml"}
    rows, spent = [], {}
    for (n, name, backend, limit), runs in groups.items():
        times = [r["seconds"] for r in runs]
        ratio = ""
        peer = "numpy" if backend.startswith("dask") and backend != "dask-ml" else None
        if peer:
            mine, theirs = seconds_by_round(n, name, backend), seconds_by_round(
                n, name, peer)
            both = [mine[k] / theirs[k] for k in mine if k in theirs]
            ratio = f"{np.median(both):.2f}" if both else ""
        if backend == "numpy":
            workers = f"{runs[0]['peak_mb']} (one process)"
            before = str(runs[0]["rss_with_data_mb"])
            client = ""
        else:
            peaks = [max(r["worker_peak_mb"]) for r in runs]
            workers = f"{min(peaks)} to {max(peaks)}" if len(runs) > 1 else \
                ", ".join(map(str, runs[0]["worker_peak_mb"]))
            before = ", ".join(map(str, runs[0].get("worker_rss_before_mb", [])))
            client = str(max(r["client_peak_mb"] for r in runs))
        epsilon = runs[0].get("epsilon")
        if epsilon is not None:
            spent.setdefault((n, name), set()).add(f"{epsilon:.8f}")
        label = labels[backend] + (f", {limit} per worker" if limit != "auto"
                                   and backend != "numpy" else "")
        versus_daskml = ""
        if backend == "dask" and name == "sgd_full":
            mine = seconds_by_round(n, name, backend)
            theirs = {r["round"]: r["seconds"] for key, runs_ in groups.items()
                      if key[0] == n and key[2] == "dask-ml" for r in runs_}
            both = [mine[k] / theirs[k] for k in mine if k in theirs]
            versus_daskml = f"{np.median(both):.2f}" if both else ""
        rows.append([f"{n:.0e}", name, label, str(len(runs)),
                     f"{np.median(times):.1f}", ratio, versus_daskml, workers,
                     before, client,
                     f"{runs[0]['r2']:.4f}",
                     "(none)" if epsilon is None else f"{epsilon:.8f}"])
    machine = ["time (s), median", "time / numpy", "time / dask-ml",
               "worker peak (MB)", "worker before (MB)", "client peak (MB)"]
    report.table("fits", "Fits on Dask arrays and in memory (epsilon = 1, "
                 "delta = 1e-9; times: medians over the runs, ratios: medians "
                 "over runs of the fits of the same round)",
                 ["n", "fit", "backend", "runs", *machine, "R^2",
                  "privacy_spent_ epsilon"], rows,
                 timing=machine)
    same = all(len(values) == 1 for values in spent.values())
    report.value("same_privacy_spent", "yes" if same else "no")
    if quick:
        return
    slopes = []
    for name in ESTIMATORS:
        low = [r["seconds"] for r in groups.get((10**7, name, "dask", "2GB" if
               name == "sgd_poisson" else "auto"), [])]
        high = [r["seconds"] for r in groups.get((10**8, name, "dask", "2GB" if
                name == "sgd_poisson" else "auto"), [])]
        if low and high:
            slope = np.log10(np.median(high) / np.median(low))
            slopes.append([name, f"{np.median(low):.1f}", f"{np.median(high):.1f}",
                           f"{slope:.2f}", "yes" if slope <= 1.1 else "no"])
    report.table("slopes", "Lazy fits, log-log slope of the median time from "
                 "1e7 to 1e8 rows (target: at most 1.1)",
                 ["fit", "1e7 (s)", "1e8 (s)", "slope", "met"], slopes,
                 timing=["1e7 (s)", "1e8 (s)", "slope", "met"])


SYNTHETIC_ROWS = 500_000  # rows per partition of the synthetic table
SYNTHETIC_DOMAIN = {
    "workclass": ["private", "self-employed", "government", "unpaid"],
    "education": ["school", "high school", "college", "bachelors", "masters",
                  "doctorate"],
    "sex": ["female", "male"],
    "income": ["<=50K", ">50K"],
}


def adult_like(partition, rows=SYNTHETIC_ROWS):
    """One partition of an Adult-like table, from its own seed: age and
    weekly hours numeric, four categorical columns, income depending on
    education, age and hours."""
    import pandas as pd

    rng = np.random.default_rng([7, partition])
    education = rng.choice(6, size=rows, p=[0.1, 0.3, 0.25, 0.2, 0.1, 0.05])
    age = np.clip(rng.normal(38 + 2 * education, 12), 17, 90)
    hours = np.clip(rng.normal(40, 10, size=rows), 1, 99)
    logit = -6 + 0.6 * education + 0.04 * age + 0.03 * hours
    income = rng.random(rows) < 1 / (1 + np.exp(-logit))
    columns = SYNTHETIC_DOMAIN
    return pd.DataFrame({
        "age": age, "hours": hours,
        "workclass": np.array(columns["workclass"], dtype=object)[
            rng.choice(4, size=rows, p=[0.7, 0.12, 0.15, 0.03])],
        "education": np.array(columns["education"], dtype=object)[education],
        "sex": np.array(columns["sex"], dtype=object)[rng.integers(0, 2, rows)],
        "income": np.array(columns["income"], dtype=object)[income.astype(int)],
    })


def run_synthetic(n):
    """DPSyntheticData on a lazily generated Adult-like Dask DataFrame of
    n rows (2 workers), against the in-memory fit on a 1e6-row sample of
    the same generator (3 seeds, for their spread): time, the client's
    peak memory during the Dask fit (nothing else held yet),
    privacy_spent_, and each fit's mean workload error on a held-out
    1e6-row sample of the same generator."""
    import dask.dataframe as dd
    import pandas as pd
    from distributed import Client, LocalCluster

    from skdpopt import DPSyntheticData

    params = dict(domain=SYNTHETIC_DOMAIN, bounds={"hours": (0, 100)},
                  workload=2, epsilon=1.0, delta=1e-9)
    with LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None,
                      silence_logs=40) as cluster, Client(cluster):
        X = dd.from_map(adult_like, range(-(-n // SYNTHETIC_ROWS)))
        client_before = rss_mb()
        reset_peak()
        on_dask = DPSyntheticData(random_state=0, **params)
        start = time.perf_counter()
        on_dask.fit(X)
        seconds = time.perf_counter() - start
        peak = hwm_mb()

    def sample(first):
        return pd.concat([adult_like(p) for p in range(first, first + 2)],
                         ignore_index=True)

    train, held_out = sample(10**6), sample(2 * 10**6)
    in_memory = []
    for seed in range(3):
        model = DPSyntheticData(random_state=seed, **params)
        begin = time.perf_counter()
        model.fit(train)
        in_memory.append(dict(
            seconds=round(time.perf_counter() - begin, 2),
            held_out_error=round(-model.score(held_out), 5),
            epsilon=model.privacy_spent_.epsilon))
    return dict(backend="dask (lazy DataFrame)", estimator="DPSyntheticData",
                n=n, seconds=round(seconds, 2),
                client_rss_before_mb=round(client_before),
                client_peak_mb=round(peak),
                held_out_error=round(-on_dask.score(held_out), 5),
                epsilon=on_dask.privacy_spent_.epsilon,
                delta=on_dask.privacy_spent_.delta,
                in_memory_1e6=in_memory)


def synthetic_table(args):
    """Write bench_dask.synthetic.md: run_synthetic's fits side by side."""
    n = int(args.synthetic)
    report = Report("bench_dask.synthetic", args,
                    packages=("dask", "distributed", "pandas"))
    result = run_synthetic(n)
    print(json.dumps(result), flush=True)
    rows = [["Dask, lazy DataFrame", f"{n:.0e}", f"{result['seconds']:.1f}",
             f"{result['client_rss_before_mb']} before, peak "
             f"{result['client_peak_mb']}",
             f"{result['held_out_error']:.5f}", f"{result['epsilon']:.8f}"]]
    for seed, fit in enumerate(result["in_memory_1e6"]):
        rows.append([f"numpy, seed {seed}", "1e+06", f"{fit['seconds']:.2f}", "",
                     f"{fit['held_out_error']:.5f}", f"{fit['epsilon']:.8f}"])
    report.table(
        "synthetic", "DPSyntheticData (epsilon 1, every 1- and 2-way marginal) "
        "on a lazily generated Adult-like table on 2 workers of one thread, "
        "against in-memory fits on 1e6-row samples of the same generator",
        ["fit", "rows", "time (s)", "client memory (MB)", "held-out error",
         "privacy_spent_ epsilon"], rows,
        timing=["time (s)", "client memory (MB)"])
    errors = [fit["held_out_error"] for fit in result["in_memory_1e6"]]
    report.value("client_growth_mb",
                 result["client_peak_mb"] - result["client_rss_before_mb"],
                 timing=True)
    report.value("same_epsilon", "yes" if all(
        fit["epsilon"] == result["epsilon"] for fit in result["in_memory_1e6"])
        else "no")
    report.value("error_vs_in_memory",
                 "below" if result["held_out_error"] < min(errors) else
                 "within" if result["held_out_error"] <= max(errors) else "above")
    report.write()


def _cpu_seconds():
    return time.process_time()


def fit_persisted(client, X, y, name, repeats):
    """``repeats`` fits on data held by the workers: wall seconds and
    processor seconds of the client (with the scheduler, in this process)
    and the workers together."""
    times, cpus = [], []
    for _ in range(repeats):
        model = make(name)
        before = sum(client.run(_cpu_seconds).values()) + time.process_time()
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model.fit(X, y)
        times.append(round(time.perf_counter() - start, 3))
        after = sum(client.run(_cpu_seconds).values()) + time.process_time()
        cpus.append(round(after - before, 3))
    return times, cpus


def workers_tables(args):
    """Per-core efficiency and strong scaling, persisted data, medians."""
    from distributed import Client, LocalCluster

    n, cores = int(args.size), os.cpu_count()
    counts = sorted(set(args.workers) | {1})
    # Made first, so that its header has the run's time and starting load.
    # The documented run writes bench_dask.cores.md; a subset only prints.
    report = Report("bench_dask.cores", args, packages=("dask", "distributed"),
                    write=set(args.estimators) == set(ESTIMATORS))
    runs = {}
    for name in args.estimators:
        for threads in sorted({1, cores}):
            result = subprocess_json(["--in-memory", str(n), name,
                                      "--repeats", str(args.repeats)],
                                     threads=threads)
            runs[name, "numpy", threads] = result
            print(json.dumps(dict(result, threads=threads)), flush=True)
    for w in counts:
        # Each worker one process, one thread (its BLAS pool too: Dask's
        # nanny sets the thread variables of the workers to 1).
        with LocalCluster(n_workers=w, threads_per_worker=1, dashboard_address=None,
                          silence_logs=40) as cluster, Client(cluster) as client:
            client.run(_import_package)
            X, y = client.persist(list(lazy_data(n)))
            distributed.wait([X, y])
            for name in args.estimators:
                times, cpus = fit_persisted(client, X, y, name, args.repeats)
                runs[name, "dask", w] = dict(all_seconds=times, cpu_seconds=cpus)
                print(json.dumps(dict(backend="dask-persisted", estimator=name, n=n,
                                      workers=w, all_seconds=times,
                                      cpu_seconds=cpus)), flush=True)
            del X, y

    def med(run, key="all_seconds"):
        return statistics.median(run[key]) if key in run else float("nan")

    report.note(f"{n:.0e} x {D} float64 rows persisted in the workers' memory; "
                f"medians of {args.repeats} fits")
    rows = []
    for name in args.estimators:
        a, b = runs[name, "numpy", 1], runs[name, "dask", 1]
        wall, cpu = med(b) / med(a), med(b, "cpu_seconds") / med(a, "cpu_seconds")
        rows.append([name, f"{med(a):.2f}", f"{med(b):.2f}", f"{wall:.2f}",
                     f"{med(a, 'cpu_seconds'):.2f}", f"{med(b, 'cpu_seconds'):.2f}",
                     f"{cpu:.2f}", "yes" if wall <= 2 else "no"])
    timed = ["numpy, 1 thread (s)", "Dask, 1 worker (s)", "ratio (wall)",
             "numpy processor (s)", "Dask processor (s)", "ratio (processor)",
             "wall ratio at most 2"]
    report.table("efficiency", "Per-core efficiency: one Dask worker of one "
                 "thread against numpy on one thread (medians; processor "
                 "seconds of every process of the fit)", ["fit", *timed], rows,
                 timing=timed)
    dask_columns = [f"Dask, {w} worker{'s' * (w > 1)} (s)" for w in counts]
    timed = [f"numpy, {cores} threads (s)", *dask_columns]
    report.table("scaling", f"Strong scaling: one numpy process with {cores} "
                 "threads against Dask with w workers of one thread (medians)",
                 ["fit", *timed],
                 [[name, f"{med(runs[name, 'numpy', cores]):.2f}",
                   *(f"{med(runs[name, 'dask', w]):.2f}" for w in counts)]
                  for name in args.estimators], timing=timed)
    timed = ["wall (s)", "processor (s)"]
    single = [[name, backend, str(k), f"{wall:.3f}", f"{cpu:.3f}"]
              for (name, backend, k), run in runs.items()
              for wall, cpu in zip(run.get("all_seconds", ()),
                                   run.get("cpu_seconds", ()), strict=True)]
    report.table("single", "Every fit, in the order run (backend: numpy with k "
                 "threads, or Dask with k workers)",
                 ["fit", "backend", "k", *timed], single, timing=timed)
    report.write()


# Where a one-worker DPLasso fit spends its time (--profile): the
# client-side calls timed, by phase, against the worker's busy time in
# them (its tasks' compute spans and its actor's method spans).
PROFILED = [
    ("validation", "skdpopt._data.dask_backend", None, "validate_training_data"),
    ("clip check", "skdpopt._regressors", None, "far_rows_share"),
    ("blocks held", "skdpopt._data.dask_backend", None, "HeldBlocks"),
    ("residual scale", "skdpopt._data.dask_held", "HeldLeastSquares", "square_sum"),
    ("gradient", "skdpopt._data.dask_held", "HeldLeastSquares", "gradient_sums"),
    ("column statistics", "skdpopt._data.dask_held", "HeldLeastSquares",
     "column_squares"),
]
ACTOR_METHODS = ("square_sums", "gradient_sums", "column_squares")


def _time_calls(spans):
    """Wrap the profiled functions of this process to append
    ``(phase, start, stop)`` to ``spans``."""
    import functools
    import importlib

    for phase, module, owner, name in PROFILED:
        where = importlib.import_module(module)
        where = getattr(where, owner) if owner else where
        function = getattr(where, name)

        def timed(*a, _function=function, _phase=phase, **k):
            start = time.time()
            try:
                return _function(*a, **k)
            finally:
                spans.append((_phase, start, time.time()))

        setattr(where, name, functools.wraps(function)(timed))


def _time_actor():
    """On a worker: record the spans of the least-squares actor's methods."""
    import skdpopt._data.dask_held as held

    held.PROFILE_SPANS = []
    for name in ACTOR_METHODS:
        method = getattr(held.LeastSquaresShares, name)

        def timed(*a, _method=method, **k):
            start = time.time()
            try:
                return _method(*a, **k)
            finally:
                held.PROFILE_SPANS.append((start, time.time()))

        setattr(held.LeastSquaresShares, name, timed)


def _actor_spans():
    import skdpopt._data.dask_held as held

    spans, held.PROFILE_SPANS = held.PROFILE_SPANS, []
    return spans


def profile(args):
    """The phases of one-worker DPLasso fits on persisted data: wall time
    on the client against the worker's busy time, medians over fits."""
    from distributed import Client, LocalCluster, get_task_stream

    n = int(args.size)
    report = Report("bench_dask.profile", args, packages=("dask", "distributed"))
    calls = []
    _time_calls(calls)
    fits = []
    with LocalCluster(n_workers=1, threads_per_worker=1, dashboard_address=None,
                      silence_logs=40) as cluster, Client(cluster) as client:
        client.run(_import_package)
        client.run(_time_actor)
        X, y = client.persist(list(lazy_data(n)))
        distributed.wait([X, y])
        for _ in range(args.repeats + 1):  # the first warms the worker up
            calls.clear()
            model = make("lasso")
            with get_task_stream(client) as stream, warnings.catch_warnings():
                warnings.simplefilter("ignore")
                start = time.time()
                model.fit(X, y)
                stop = time.time()
            busy = [(s["start"], s["stop"]) for record in stream.data
                    for s in record["startstops"] if s["action"] == "compute"]
            busy += [tuple(span) for spans in client.run(_actor_spans).values()
                     for span in spans]

            def on_worker(a, b, busy=busy):
                return sum(max(0.0, min(e, b) - max(s, a)) for s, e in busy)

            phases = {"whole fit": [1, stop - start, on_worker(start, stop)]}
            for phase, a, b in calls:
                count, wall, work = phases.get(phase, [0, 0.0, 0.0])
                phases[phase] = [count + 1, wall + b - a, work + on_worker(a, b)]
            fits.append(phases)
    fits = fits[1:]
    report.note(f"DPLasso as in the per-core table, {n:.0e} x {D} persisted on "
                f"one worker of one thread; medians of {args.repeats} fits after "
                "one to warm the worker up")
    rows = []
    for phase in ["whole fit", *dict.fromkeys(p for p, *_ in PROFILED)]:
        cells = [f[phase] for f in fits if phase in f]
        if not cells:
            continue
        wall = statistics.median(c[1] for c in cells)
        work = statistics.median(c[2] for c in cells)
        rows.append([phase, str(cells[0][0]), f"{wall:.3f}", f"{work:.3f}",
                     f"{wall - work:.3f}",
                     f"{1e3 * (wall - work) / cells[0][0]:.1f}"])
    timed = ["wall (s)", "worker busy (s)", "not on the worker (s)",
             "not on the worker per call (ms)"]
    report.table("phases", "Where a one-worker DPLasso fit's time goes: each "
                 "phase's calls on the client, their wall time and the "
                 "worker's busy time within them (medians over fits)",
                 ["phase", "calls", *timed], rows, timing=timed)
    report.write()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", nargs="+", type=float, default=None)
    parser.add_argument("--estimators", nargs="+", default=list(ESTIMATORS))
    parser.add_argument("--in-memory-max", type=float, default=1e7,
                        help="largest n also fitted in memory")
    parser.add_argument("--lazy", nargs="*", default=None,
                        help="estimators fitted on lazily generated data "
                        "(default: all of --estimators)")
    parser.add_argument("--persist", nargs="*", default=[],
                        help="estimators also fitted on data persisted in the "
                        "workers' memory")
    parser.add_argument("--memory-limit", default="auto",
                        help="memory limit of each worker (LocalCluster's "
                        "memory_limit; beyond it workers spill to disk)")
    parser.add_argument("--daskml-python", default=None,
                        help="python of an environment with dask-ml installed")
    parser.add_argument("--quick", action="store_true",
                        help="the lazy and in-memory fits at 1e5 rows, once")
    parser.add_argument("--workers", nargs="+", type=int, default=None,
                        help="worker counts (one thread each): print the "
                        "per-core efficiency and strong-scaling tables on "
                        "persisted data of --size rows instead")
    parser.add_argument("--size", type=float, default=2e6,
                        help="rows of the --workers tables")
    parser.add_argument("--repeats", type=int, default=None,
                        help="runs of each fit of the plan and fits per cell "
                        "of the --workers tables, medians (default 3; once "
                        "from 1e8 rows, and with --sizes)")
    parser.add_argument("--profile", action="store_true",
                        help="where one-worker DPLasso fits on persisted data "
                        "of --size rows spend their time, by phase")
    parser.add_argument("--synthetic", type=float, default=None,
                        help="fit DPSyntheticData on a lazily generated "
                        "Adult-like table of this many rows instead")
    parser.add_argument("--in-memory", nargs=2, help=argparse.SUPPRESS)
    parser.add_argument("--daskml", type=float, help=argparse.SUPPRESS)
    Report.add_arguments(parser)
    args = parser.parse_args()
    # One fit per --sizes cell (and per --in-memory call not told more);
    # three for the plan and the --workers tables.
    args.repeats = args.repeats or (1 if args.sizes or args.in_memory else 3)
    if args.in_memory:
        print(json.dumps(run_in_memory(int(float(args.in_memory[0])),
                                       args.in_memory[1], args.repeats)))
        return
    if args.daskml:
        print(json.dumps(run_daskml(int(args.daskml))))
        return
    if args.sizes is None and not (args.workers or args.synthetic or args.profile):
        report = Report("bench_dask", args, packages=("dask", "distributed"))
        if args.daskml_python:
            report.note("dask-ml peer: " + subprocess.run(
                [args.daskml_python, "-c", "import importlib.metadata as m; "
                 "print('dask-ml', m.version('dask-ml'), 'dask', m.version('dask'))"],
                capture_output=True, text=True).stdout.strip())
        records = run_plan(QUICK_PLAN if args.quick else PLAN,
                           1 if args.quick else args.repeats,
                           None if args.quick else args.daskml_python)
        report_plan(report, records, args.quick)
        report.write()
        return

    global distributed
    import distributed
    from distributed import Client, LocalCluster

    if args.workers:
        workers_tables(args)
        return
    if args.profile:
        profile(args)
        return
    if args.synthetic:
        synthetic_table(args)
        return

    with LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None,
                      silence_logs=40, memory_limit=args.memory_limit
                      ) as cluster, Client(cluster) as client:
        # Workers import the package once, before the first clock starts.
        client.run(_import_package)
        for n in (int(s) for s in args.sizes):
            for name in args.estimators:
                if args.lazy is None or name in args.lazy:
                    print(json.dumps(run_dask(client, n, name)), flush=True)
                if name in args.persist:
                    # The persisted blocks are released when the fit returns.
                    print(json.dumps(run_dask(client, n, name, persist=True)),
                          flush=True)
                if n <= args.in_memory_max:
                    print(json.dumps(subprocess_json(["--in-memory", str(n), name])),
                          flush=True)
            if args.daskml_python:
                print(json.dumps(subprocess_json(["--daskml", str(n)],
                                                 python=args.daskml_python)),
                      flush=True)


if __name__ == "__main__":
    main()
