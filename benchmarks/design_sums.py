"""The cost of float64 sums over a float32 X (``skdpopt/_sums.py``).

Every sum over rows that feeds a release is computed in float64, a block
of rows at a time (``docs/privacy/plans.md``).  This measures, side by
side in one run on a float32 array of ``n`` rows and 50 columns (standard
normal, seed 0):

* ``sums``: the weighted column sum ``X.T @ w`` by ``column_sums`` (float64
  blocks), by numpy in float32 (the product it replaces) and by numpy in
  float64 (``X.astype(float64).T @ w``, which converts X whole); and for
  a CSC matrix with a tenth of the values stored, ``column_sums`` against
  scipy's float32 product.  Median seconds over repeats, their ratio to
  the float32 product, and the peak memory traced by ``tracemalloc``
  during one call.
* ``fits``: the peak traced memory of DPLasso (20 greedy steps) and of
  DP-SGD with full batches (5 epochs) on the dense array, against the
  size of a float64 copy of X.

Times depend on the machine and its load (the header says which); the
ratios compare calls of the same run.  ``--quick`` runs 100,000 rows
(``n = 10^6`` in the full run).

Usage::

    python benchmarks/design_sums.py [--quick]
"""

import argparse
import sys
import time
import tracemalloc
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from report import Report  # noqa: E402

from skdpopt._sums import column_sums  # noqa: E402

COLUMNS = 50
REPEATS = 7
MB = 2**20


def timed(call):
    times = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def peak(call):
    tracemalloc.start()
    call()
    result = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return result


def sums_table(report, X, w):
    w32 = w.astype(np.float32)
    csc = sp.random(X.shape[0], COLUMNS, density=0.1, format="csc",
                    dtype=np.float32, random_state=np.random.default_rng(1))
    calls = [
        ("dense", "column_sums (float64 blocks)", lambda: column_sums(X, w)),
        ("dense", "numpy float32 X.T @ w", lambda: X.T @ w32),
        ("dense", "numpy float64 X.T @ w (X converted)",
         lambda: X.astype(np.float64).T @ w),
        ("CSC", "column_sums (float64 blocks)", lambda: column_sums(csc, w)),
        ("CSC", "scipy float32 X.T @ w", lambda: csc.T @ w32),
    ]
    peer = {}
    rows = []
    for form, method, call in calls:
        call()  # warm up
        seconds = timed(call)
        if "float32" in method:
            peer[form] = seconds
        rows.append([form, method, seconds, peak(call)])
    rows = [[form, method, f"{seconds * 1e3:.1f}",
             f"{seconds / peer[form]:.2f}", f"{memory / MB:.0f}"]
            for form, method, seconds, memory in rows]
    report.table(
        "sums",
        f"X.T @ w on a float32 X of {X.shape[0]} x {COLUMNS} (dense) and a "
        f"CSC matrix of the same shape with {csc.nnz} stored values: median "
        f"of {REPEATS} calls, ratio to the float32 product of the same form "
        "in this run, peak traced memory of one call",
        ["form", "method", "ms", "time / float32", "peak MB"], rows,
        timing=["ms", "time / float32"])


def fits_table(report, X):
    from skdpopt import DPLasso, DPSGDRegressor

    y = (X[:, :5].astype(np.float64) @ np.ones(5)
         + np.random.default_rng(2).standard_normal(X.shape[0]))
    fits = [("DPLasso", "max_iter=20",
             DPLasso(max_iter=20, epsilon=1.0, random_state=0)),
            ("DPSGDRegressor", "full batches, 5 epochs",
             DPSGDRegressor(batch_size=X.shape[0], max_iter=5, epsilon=1.0,
                            random_state=0))]
    rows = []
    for name, setting, estimator in fits:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            memory = peak(lambda e=estimator: e.fit(X, y))
        rows.append([name, setting, f"{memory / MB:.0f}"])
    report.table(
        "fits",
        f"Peak memory traced during one fit on the float32 X of "
        f"{X.shape[0]} x {COLUMNS}; a float64 copy of X is "
        f"{X.shape[0] * COLUMNS * 8 / MB:.0f} MB, X itself "
        f"{X.nbytes / MB:.0f} MB",
        ["estimator", "setting", "peak MB"], rows)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="100,000 rows instead of 10^6")
    Report.add_arguments(parser)
    args = parser.parse_args()
    report = Report("design_sums", args)
    n = 100_000 if args.quick else 1_000_000
    X = np.random.default_rng(0).standard_normal((n, COLUMNS), dtype=np.float32)
    w = np.random.default_rng(1).standard_normal(n)
    sums_table(report, X, w)
    fits_table(report, X)
    report.write()


if __name__ == "__main__":
    main()
