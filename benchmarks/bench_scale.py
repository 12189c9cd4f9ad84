"""Peak memory and fit time of DPSGDRegressor and DPLogisticSimplex at scale.

Non-private scikit-learn SGDRegressor / SGDClassifier (one epoch) run on
the same data as peers: fit times are reported as ratios to them.

Two inputs: 1e7 rows by 20 dense float64 features (1.6 GB), and 1e6 rows by
1e5 sparse features in CSR with 20 non-zeros per row (float64 values, int32
indices: about 250 MB).  Each fit runs in a fresh subprocess that builds the
data in place (chunk by chunk, so generation leaves no large temporaries),
then resets the kernel's peak-RSS mark (``/proc/self/clear_refs``) so
that the data generation's temporaries do not hide the fit's peak, and
reads the peak (``VmHWM``) after ``fit``.  Reported, in MB: the process's
resident size before the data exists (interpreter and libraries), its
resident size once the data is built, and its peak during the fit; the
ratio (fit peak - resident before data) / input size is the memory the
data and the fit take together in units of the input (1.0 would be a fit
that allocates nothing).  ``ru_maxrss`` (the peak over the whole process,
generation included) is printed in the JSON lines too.

Each fit runs ``--repeats`` times (3; each a fresh subprocess): the table
shows the medians, and the fit time as a ratio of medians to the
non-private peer's.  The sum of the absolute coefficients (seeded, the
same on every run) shows the fits are the same fits.  The table goes to
``docs/benchmarks/_generated/bench_scale.md`` (see ``report.py``).

Usage::

    python benchmarks/bench_scale.py            # full sizes
    python benchmarks/bench_scale.py --quick    # the dense input only, 1% of
                                                # its rows, one run each
"""

import argparse
import json
import resource
import subprocess
import sys
import time
import warnings

import numpy as np
import scipy.sparse as sp
from report import Report
from sklearn.exceptions import ConvergenceWarning

N_DENSE, D_DENSE = 10_000_000, 20
N_SPARSE, D_SPARSE, NNZ_PER_ROW = 1_000_000, 100_000, 20
CHUNK = 100_000


def peak_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # KB on Linux


def hwm_mb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024.0
    raise RuntimeError("no VmHWM in /proc/self/status")


def reset_peak():
    # Writing 5 resets VmHWM to the current resident size (Linux >= 4.0).
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")


def current_mb():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize() / 2**20


def dense_data(n, rng):
    X = np.empty((n, D_DENSE))
    y = np.empty(n)
    w = np.linspace(-1.0, 1.0, D_DENSE) / np.sqrt(D_DENSE)
    for start in range(0, n, CHUNK):
        stop = min(start + CHUNK, n)
        rng.standard_normal(out=X[start:stop])
        np.matmul(X[start:stop], w, out=y[start:stop])
        y[start:stop] += 0.1 * rng.standard_normal(stop - start)
    return X, y, X.nbytes


def sparse_data(n, rng):
    # Row i's k-th non-zero lies in column stripe k, so columns are distinct
    # and sorted within a row (canonical CSR) without a sort.
    stripe = D_SPARSE // NNZ_PER_ROW
    nnz = n * NNZ_PER_ROW
    data = np.empty(nnz)
    indices = np.empty(nnz, dtype=np.int32)
    y = np.empty(n)
    w = rng.standard_normal(D_SPARSE) / np.sqrt(NNZ_PER_ROW)
    offsets = (np.arange(NNZ_PER_ROW) * stripe).astype(np.int32)
    for start in range(0, n, CHUNK):
        stop = min(start + CHUNK, n)
        lo, hi = start * NNZ_PER_ROW, stop * NNZ_PER_ROW
        cols = rng.integers(0, stripe, size=(stop - start, NNZ_PER_ROW), dtype=np.int32)
        cols += offsets
        indices[lo:hi] = cols.ravel()
        rng.standard_normal(out=data[lo:hi])
        vals = data[lo:hi].reshape(-1, NNZ_PER_ROW)
        y[start:stop] = np.einsum("ij,ij->i", vals, w[cols])
        del cols, vals
    indptr = np.arange(0, nnz + 1, NNZ_PER_ROW, dtype=np.int32)
    X = sp.csr_matrix((data, indices, indptr), shape=(n, D_SPARSE), copy=False)
    return X, y, data.nbytes + indices.nbytes + indptr.nbytes


def make_estimator(name, n):
    from skdpopt import DPLogisticSimplex, DPSGDRegressor

    if name == "DPSGDRegressor":
        # One epoch of batches of ~n/1000 rows: 1000 noisy steps.
        return DPSGDRegressor(
            epsilon=1.0,
            delta=1e-8,
            max_iter=1,
            batch_size=max(n // 1000, 1),
            target_scale=1.0,  # the targets' scale is public here
            random_state=0,
        )
    if name == "DPLogisticSimplex":
        return DPLogisticSimplex(epsilon=1.0, delta=1e-8, random_state=0)
    # Non-private peers, one epoch each, for the memory and time columns.
    from sklearn.linear_model import SGDClassifier, SGDRegressor

    if name == "SGDRegressor":
        return SGDRegressor(max_iter=1, tol=None, random_state=0)
    return SGDClassifier(loss="log_loss", max_iter=1, tol=None, random_state=0)


def child(name, kind, n):
    import skdpopt  # noqa: F401  (imports count in the baseline, not the fit)

    before = current_mb()
    rng = np.random.default_rng(0)
    X, y, nbytes = (dense_data if kind == "dense" else sparse_data)(n, rng)
    if name in ("DPLogisticSimplex", "SGDClassifier"):
        y = y > 0
    est = make_estimator(name, n)
    with_data = current_mb()
    reset_peak()
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # peers' 1 epoch
        est.fit(X, y)
    seconds = time.perf_counter() - start
    fit_peak = hwm_mb()
    print(
        json.dumps(
            {
                "estimator": name,
                "kind": kind,
                "shape": list(X.shape),
                "input_mb": nbytes / 2**20,
                "rss_before_data_mb": before,
                "rss_with_data_mb": with_data,
                "fit_peak_mb": fit_peak,
                "ru_maxrss_mb": peak_mb(),
                "fit_seconds": seconds,
                "ratio": (fit_peak - before) / (nbytes / 2**20),
                "coef_checksum": float(np.sum(np.abs(est.coef_))),
            }
        )
    )


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows-scale", type=float, default=1.0)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--quick", action="store_true",
                        help="the dense input, --rows-scale 0.01 --repeats 1")
    parser.add_argument("--child", nargs=3, metavar=("ESTIMATOR", "KIND", "ROWS"))
    parser.add_argument("--only", default=None)
    Report.add_arguments(parser)
    args = parser.parse_args()
    if args.child:
        name, kind, n = args.child
        child(name, kind, int(n))
        return
    if args.quick:
        args.rows_scale, args.repeats = 0.01, 1
    canonical = args.quick or (args.rows_scale == 1.0 and not args.only)
    report = Report("bench_scale", args, write=canonical)
    runs = []
    peers = {"DPSGDRegressor": "SGDRegressor", "DPLogisticSimplex": "SGDClassifier"}
    for name in (
        "DPSGDRegressor",
        "SGDRegressor",
        "DPLogisticSimplex",
        "SGDClassifier",
    ):
        if args.only and args.only != name:
            continue
        for kind, n in (("dense", N_DENSE), ("sparse", N_SPARSE)):
            if args.quick and kind == "sparse":
                continue
            n = max(int(n * args.rows_scale), 1000)
            repeats = []
            for _ in range(args.repeats):
                out = subprocess.run(
                    [sys.executable, __file__, "--child", name, kind, str(n)],
                    capture_output=True,
                    text=True,
                    check=True,
                )
                repeats.append(json.loads(out.stdout.strip().splitlines()[-1]))
                print(json.dumps(repeats[-1]), flush=True)
            median = {key: float(np.median([r[key] for r in repeats]))
                      for key, value in repeats[0].items()
                      if isinstance(value, float)}
            runs.append({**repeats[0], **median})
    seconds = {(r["estimator"], r["kind"]): r["fit_seconds"] for r in runs}
    rows = []
    for r in runs:
        peer = peers.get(r["estimator"], r["estimator"])
        relative = r["fit_seconds"] / seconds.get((peer, r["kind"]), np.nan)
        shape = "x".join(f"{s:.0e}" if s >= 1000 else str(s) for s in r["shape"])
        rows.append([r["estimator"], f"{r['kind']} {shape}", f"{r['input_mb']:.0f}",
                     f"{r['rss_before_data_mb']:.0f}", f"{r['rss_with_data_mb']:.0f}",
                     f"{r['fit_peak_mb']:.0f}", f"{r['ratio']:.2f}",
                     f"{r['fit_seconds']:.1f}", f"{relative:.2f}",
                     f"{r['coef_checksum']:.4g}"])
    machine = ["RSS before data MB", "RSS with data MB", "fit peak MB",
               "(fit peak - before) / input", "fit s", "fit time / peer's"]
    report.table(
        "scale", "Peak memory and fit time on large inputs (each fit in a fresh "
        "process, " + (f"medians over {args.repeats} runs" if args.repeats > 1
                       else "one run each")
        + "; fit time as a ratio to the non-private peer's)",
        ["estimator", "input", "input MB", *machine, "sum of abs(coef)"], rows,
        timing=machine)
    report.write()


if __name__ == "__main__":
    main()
