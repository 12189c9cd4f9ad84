"""Re-run every benchmark's quick mode and compare with the committed tables.

Each benchmark script has a ``--quick`` mode (a subset of its rows, seconds
to a minute on 2 cores) whose tables are committed in
``docs/benchmarks/_generated/NAME.quick.md`` (``benchmarks/run_all.py``
writes them).  This script runs every quick mode into a temporary folder
and compares the two files:

* the header (commit, command, machine, date) is not compared;
* timing columns and timing figures (marked so by the script) are not
  compared: they depend on the machine and its load;
* every other cell, title, note and figure must be the same, except that a
  number may differ by one unit of its last printed digit (floating point
  differs across platforms and BLAS builds, and a value on a rounding
  boundary can print either way); its printed format must not change.

A mismatch prints the differing lines and fails (exit status 1): a change
that moves a seeded figure regenerates its tables in the same commit
(``python benchmarks/run_all.py --quick-only`` for the quick ones, the full
run for the pages).

Usage::

    python tools/check_quick_tables.py               # every quick table
    python tools/check_quick_tables.py bench_sgd     # some of them
"""

import argparse
import difflib
import os
import re
import subprocess
import sys
import tempfile
import time
from decimal import Decimal
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

import report  # noqa: E402
from run_all import RUNS  # noqa: E402

NUMBER = re.compile(r"(?<![\w.])[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?(?![\w.])")


def close(a, b):
    """Two printed strings: equal, or equal but for numbers one unit of the
    last printed digit apart (same format)."""
    if a == b:
        return True
    split_a, split_b = NUMBER.split(a), NUMBER.split(b)
    numbers_a, numbers_b = NUMBER.findall(a), NUMBER.findall(b)
    if split_a != split_b or len(numbers_a) != len(numbers_b):
        return False
    for x, y in zip(numbers_a, numbers_b, strict=True):
        if x == y:
            continue
        dx, dy = Decimal(x), Decimal(y)
        if dx.as_tuple().exponent != dy.as_tuple().exponent:
            return False
        if abs(dx - dy) > Decimal(1).scaleb(dx.as_tuple().exponent):
            return False
    return True


def comparable_lines(generated):
    """The file's content without header and timings, as lines."""
    lines = []
    for key, table in generated.tables.items():
        timing = {table.columns.index(c) for c in table.timing if c in table.columns}
        lines.append(f"table {key}: {table.title}")
        lines.append("  | " + " | ".join(table.columns) + " |")
        for row in table.rows:
            cells = ["(timing)" if i in timing else c for i, c in enumerate(row)]
            lines.append("  | " + " | ".join(cells) + " |")
        lines += ["  " + line for line in table.note]
    for name, (text, timing) in generated.values.items():
        lines.append(f"figure {name} = {'(timing)' if timing else text}")
    return lines


def compare(committed, fresh):
    """Differences between two generated files, as printable lines."""
    old, new = comparable_lines(report.read(committed)), comparable_lines(
        report.read(fresh))
    if len(old) == len(new) and all(close(a, b) for a, b in zip(old, new,
                                                               strict=True)):
        return []
    return list(difflib.unified_diff(old, new, str(committed), "this run",
                                     lineterm="", n=1))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*",
                        help="quick tables to check (default: all)")
    args = parser.parse_args()
    runs = [r for r in RUNS if r.quick is not None and r.checked
            and (not args.names or r.name in args.names)]
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in [str(ROOT), env.get("PYTHONPATH")]
                                        if p)
    failures = []
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as out:
        for run in runs:
            committed = report.GENERATED / f"{run.name}.quick.md"
            begin = time.perf_counter()
            done = subprocess.run(
                [sys.executable, str(ROOT / "benchmarks" / run.script), *run.quick,
                 "--out", out], cwd=ROOT, env=env, capture_output=True, text=True)
            seconds = time.perf_counter() - begin
            fresh = Path(out) / f"{run.name}.quick.md"
            if done.returncode != 0 or not fresh.exists():
                failures.append(run.name)
                print(f"{run.name}: the quick run failed ({seconds:.0f} s)\n"
                      + done.stdout[-2000:] + done.stderr[-3000:])
                continue
            if not committed.exists():
                failures.append(run.name)
                print(f"{run.name}: no committed {committed.relative_to(ROOT)}")
                continue
            diff = compare(committed, fresh)
            if diff:
                failures.append(run.name)
                print(f"{run.name}: the quick tables moved ({seconds:.0f} s); "
                      "regenerate them (python benchmarks/run_all.py "
                      "--quick-only) and the pages' full tables:")
                print("\n".join(diff))
            else:
                print(f"{run.name}: as committed ({seconds:.0f} s)", flush=True)
    print(f"quick tables checked in {time.perf_counter() - start:.0f} s")
    if failures:
        sys.exit(f"quick tables differ or failed: {', '.join(failures)}")


if __name__ == "__main__":
    main()
