"""Re-run every benchmark the documentation shows, in full, then quick.

One command regenerates every table in ``docs/benchmarks/_generated/``
(the pages, the estimator pages and the comparison quote them): each
script's full run, one after another, then each quick run (the tables CI
compares, ``tools/check_quick_tables.py``).  Run it on a committed tree,
so that every header names the commit the figures come from.

The peers run in their own environments, named by options or environment
variables (``benchmarks/peer_envs.sh`` makes them):

* Opacus (``bench_sgd.py``) and fairlearn (``bench_minimax.py``) in the
  environment that runs this script (``pip install ".[bench,opacus]"``);
* Private-PGM's MST and AIM (``--mbi-python``, ``SKDPOPT_MBI_PYTHON``,
  with ``MBI_MECHANISMS`` the folder of Private-PGM's mechanisms) and
  smartnoise-synth (``--smartnoise-python``, ``SKDPOPT_SMARTNOISE_PYTHON``)
  for ``bench_synthetic.py``;
* dask-ml (``--daskml-python``, ``SKDPOPT_DASKML_PYTHON``) for
  ``bench_dask.py``.

A full run without a peer's environment stops before it starts, naming
what is missing.  ``--skip-missing-peers`` runs instead without every
peer that is not there (an environment variable unset or its Python
missing, Opacus or fairlearn not importable): the runs go ahead and their
tables say which peers ran (the header names the installed versions);
a page that quotes a skipped peer's row then fails the docs build until
the peer's run is made.

Usage::

    python benchmarks/run_all.py                   # everything (hours)
    python benchmarks/run_all.py --skip-missing-peers
    python benchmarks/run_all.py --quick-only      # the quick tables (minutes)
    python benchmarks/run_all.py --only bench_sgd,bench_lasso

Every run is started with ``nice -n 10`` (the machines these run on are
shared); the time of each run and the total are printed at the end.
"""

import argparse
import importlib.util
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


@dataclass
class Run:
    name: str          # the generated file's name (NAME.md, NAME.quick.md)
    script: str
    full: list         # arguments of the full run
    quick: list | None  # arguments of the quick run (None: no quick table)
    peers: dict = field(default_factory=dict)  # option -> environment variable
    # Peers imported by the script itself: module -> arguments that run
    # the script without it (empty: the script skips it on its own).
    modules: dict = field(default_factory=dict)
    # Whether CI compares the quick table (not where it is all timings).
    checked: bool = True


PEER_OPTIONS = {
    "--mbi-python": "SKDPOPT_MBI_PYTHON",
    "--smartnoise-python": "SKDPOPT_SMARTNOISE_PYTHON",
    "--daskml-python": "SKDPOPT_DASKML_PYTHON",
}

# The design runs of the private search's defaults (the page shows each):
# name suffix -> arguments after --half design --seeds 3 --epsilon 1.
SELECTION_DESIGN = {
    "geometric": ["--variant", "stopping_shape=1.0"],
    "logarithmic": ["--variant", "stopping_shape=0.0"],
    "logarithmic_refit": ["--variant", "stopping_shape=0.0",
                          "--variant", "refit_share=0.5"],
    "logarithmic_accuracy": ["--metric", "accuracy",
                             "--variant", "stopping_shape=0.0"],
    "logarithmic_narrow": ["--variant", "stopping_shape=0.0", "--grid", "narrow"],
    "logarithmic_n4": ["--variant", "stopping_shape=0.0", "--variant", "n_iter=4"],
    "logarithmic_vf1": ["--variant", "stopping_shape=0.0",
                        "--variant", "validation_fraction=0.1"],
}

# In the order they run: the short ones first.
RUNS = [
    Run("bench_sgd", "bench_sgd.py", [], ["--quick"], modules={"opacus": []}),
    Run("bench_sgd_timing", "bench_sgd_timing.py", [], ["--quick"], checked=False),
    Run("design_accounting", "design_accounting.py", [], ["--quick"],
        modules={"dp_accounting": None}),
    Run("design_sums", "design_sums.py", [], ["--quick"]),
    Run("design_fit_check", "design_fit_check.py", [], ["--quick"]),
    Run("bench_defaults", "bench_defaults.py", [], ["--quick"]),
    Run("design_defaults.scaler_cost", "design_defaults.py",
        ["--task", "scaler_cost"], ["--task", "scaler_cost", "--quick"]),
    Run("bench_scale", "bench_scale.py", [], ["--quick"]),
    Run("design_simplex", "design_simplex.py", [], ["--quick"]),
    Run("design_regression.clip_check", "design_regression.py",
        ["--task", "clip_check"], ["--task", "clip_check", "--quick"]),
    Run("bench_lasso", "bench_lasso.py", [], ["--quick"]),
    Run("bench_simplex", "bench_simplex.py", [], ["--quick"]),
    Run("panel_outside", "bench_panel.py", ["--outside"], None),
    Run("panel", "bench_panel.py", [], ["--quick"]),
    Run("bench_minimax.screen", "bench_minimax.py", ["--screen"],
        ["--screen", "--quick"], checked=False),
    Run("bench_minimax.timing", "bench_minimax.py", ["--timing"],
        ["--timing", "--quick"], modules={"fairlearn": None}, checked=False),
    Run("bench_minimax", "bench_minimax.py", [], ["--quick"],
        modules={"fairlearn": ["--no-fairlearn"]}),
    Run("design_minimax", "design_minimax.py", ["--report"], ["--quick"]),
    Run("design_minimax.develop", "design_minimax.py",
        ["--develop", "--n-jobs", "2"], ["--develop", "--quick"]),
    Run("design_minimax.auto", "design_minimax.py",
        ["--auto", "--n-jobs", "2"], ["--auto", "--quick"]),
    Run("design_minimax.vertex", "design_minimax.py",
        ["--vertex", "--n-jobs", "2"], ["--vertex", "--quick"]),
    Run("design_synthetic_bounds", "design_synthetic_bounds.py", [], ["--quick"]),
    Run("design_synthetic", "design_synthetic.py", ["--report"],
        ["--report", "--quick"]),
    Run("bench_synthetic", "bench_synthetic.py", [], ["--quick"],
        {"--mbi-python": "SKDPOPT_MBI_PYTHON",
         "--smartnoise-python": "SKDPOPT_SMARTNOISE_PYTHON"}),
    Run("bench_dask", "bench_dask.py", [], ["--quick"],
        {"--daskml-python": "SKDPOPT_DASKML_PYTHON"}),
    Run("selection", "bench_selection.py", ["--write"], ["--quick"]),
    Run("audits", "../tests/audit/make_audit_table.py", ["--runs", "20000"], None),
    *(Run(f"selection_design_{tag}", "bench_selection.py",
          ["--half", "design", "--seeds", "3", "--epsilon", "1", "--methods",
           "search", "--write", "--tag", tag, *variant], None)
      for tag, variant in SELECTION_DESIGN.items()),
]


def installed(module):
    return importlib.util.find_spec(module) is not None


def command(run, args, peer_paths, kind="full"):
    """The run's command line, or None where it cannot run without a
    missing peer."""
    cmd = [sys.executable, str((HERE / run.script).resolve()), *args]
    for option in run.peers:
        if peer_paths.get(option):
            cmd += [option, peer_paths[option]]
    if kind == "full":
        for module, without in run.modules.items():
            if not installed(module):
                if without is None:
                    return None
                cmd += without
    return cmd


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default=None,
                        help="comma-separated names (default: all): "
                             + ",".join(r.name for r in RUNS))
    parser.add_argument("--quick-only", action="store_true")
    parser.add_argument("--full-only", action="store_true")
    parser.add_argument("--skip-missing-peers", action="store_true",
                        help="run without the peers that are not installed "
                             "(their rows are then missing)")
    for option, variable in PEER_OPTIONS.items():
        parser.add_argument(option, default=os.environ.get(variable),
                            help=f"(or {variable})")
    args = parser.parse_args()
    runs = RUNS
    if args.only:
        wanted = set(args.only.split(","))
        unknown = wanted - {r.name for r in RUNS}
        if unknown:
            parser.error(f"unknown runs: {sorted(unknown)}")
        runs = [r for r in RUNS if r.name in wanted]
    peer_paths = {o: getattr(args, o[2:].replace("-", "_")) for o in PEER_OPTIONS}

    for option, path in list(peer_paths.items()):
        if path and not Path(path).exists():
            print(f"{option} {path}: no such file", flush=True)
            peer_paths[option] = None
    if not args.quick_only:
        missing = [f"{r.name}: {o} (or {v})" for r in runs for o, v in r.peers.items()
                   if not peer_paths.get(o)]
        missing += [f"{r.name}: {m} (pip install \".[bench,opacus]\")"
                    for r in runs for m in r.modules if not installed(m)]
        if missing and not args.skip_missing_peers:
            sys.exit("peers missing (see benchmarks/peer_envs.sh), or pass "
                     "--skip-missing-peers:\n  " + "\n  ".join(missing))
        if missing:
            print("running without these peers:\n  " + "\n  ".join(missing),
                  flush=True)

    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in [str(ROOT), env.get("PYTHONPATH")]
                                        if p)
    plan = []
    if not args.quick_only:
        plan += [(r, r.full, "full") for r in runs]
    if not args.full_only:
        plan += [(r, r.quick, "quick") for r in runs if r.quick is not None]
    times, failed = [], []
    start = time.perf_counter()
    for run, run_args, kind in plan:
        cmd = command(run, run_args, peer_paths, kind)
        if cmd is None:
            print(f"\n=== {run.name} ({kind}): skipped (a peer is missing)")
            times.append((run.name, kind, 0.0, "skipped"))
            continue
        print(f"\n=== {run.name} ({kind}): {' '.join(cmd[1:])}", flush=True)
        begin = time.perf_counter()
        status = subprocess.run(["nice", "-n", "10", *cmd], cwd=ROOT,
                                env=env).returncode
        seconds = time.perf_counter() - begin
        times.append((run.name, kind, seconds, status))
        if status:
            failed.append(f"{run.name} ({kind})")
    print("\n=== run times")
    for name, kind, seconds, status in times:
        print(f"{name:40s} {kind:6s} {seconds:8.0f} s"
              + ("" if status == 0 else "  skipped" if status == "skipped"
                 else f"  FAILED ({status})"))
    print(f"{'total':47s} {time.perf_counter() - start:8.0f} s")
    if failed:
        sys.exit("failed: " + ", ".join(failed))


if __name__ == "__main__":
    main()
