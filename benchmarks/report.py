"""Tables that benchmark scripts write for the documentation.

A benchmark script builds a :class:`Report`, adds its tables (and any
figure its page quotes that is not a table cell) as it measures them, and
writes them with :meth:`Report.write` to ``docs/benchmarks/_generated/``:
``NAME.md`` for the full run the pages show, ``NAME.quick.md`` for the
``--quick`` run CI repeats and compares (``tools/check_quick_tables.py``).
Each file opens with the commit, the command, the machine and the date of
its run, so that a page built from it names where its figures come from,
and nobody types a figure by hand: the pages include the tables and quote
cells and figures through the ``bench-table`` directive and the ``bench``
role (``docs/sphinxext/bench_tables.py``).

Usage in a script::

    from report import Report

    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    Report.add_arguments(parser)              # --out DIR
    args = parser.parse_args()
    report = Report("bench_x", args)          # NAME, quick from args.quick
    report.table("diamonds", "diamonds: n=40455, medians over 5 seeds",
                 ["model", "epsilon", "R^2", "fit s"], rows, timing=["fit s"])
    report.value("slope", f"{slope:.2f}")
    report.write()

Columns and figures marked as timing are left out of CI's comparison
(they depend on the machine and its load); every other cell must come out
the same from the same command at the same commit.

The file format (Markdown, readable as it is) is read back by :func:`read`:

* a header list ``* field: value`` (commit, command, machine, date, load);
* per table, a marker ``<!-- table: KEY; timing: COL, COL -->``, a title
  line, the Markdown table, and optional note lines;
* the named figures, after ``<!-- figures -->``, as a table of name,
  value and whether it is a timing.
"""

import datetime
import os
import platform
import re
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GENERATED = ROOT / "docs" / "benchmarks" / "_generated"
# Where a run's own code lives: a change here without a commit makes the
# header say so.
CODE_PATHS = ("skdpopt", "benchmarks", "pyproject.toml")


@dataclass
class Table:
    title: str
    columns: list
    rows: list
    timing: list = field(default_factory=list)
    note: list = field(default_factory=list)


@dataclass
class Generated:
    """What :func:`read` returns: header fields, tables, named figures."""

    header: dict
    tables: dict
    values: dict  # name -> (text, is_timing)


def _git(*args):
    try:
        return subprocess.run(["git", "-C", str(ROOT), *args], check=True,
                              capture_output=True, text=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return ""


def commit_description():
    """The commit of the code that ran, and whether it had local changes."""
    commit = _git("rev-parse", "--short=10", "HEAD") or "unknown"
    dirty = _git("status", "--porcelain", "--", *CODE_PATHS)
    if dirty:
        return f"{commit} (with uncommitted changes to {', '.join(CODE_PATHS)})"
    return commit


def _cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def _memory_gib():
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) / 2**20
    except OSError:
        pass
    return float("nan")


def _version(package):
    from importlib import metadata

    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def machine_description(packages=()):
    versions = []
    for package in ("numpy", "scipy", "scikit-learn", *packages):
        version = _version(package)
        versions.append(f"{package} {version}" if version else
                        f"{package} not installed")
    return (f"{platform.system()} {platform.machine()}, {_cpu_model()}, "
            f"{os.cpu_count()} logical cores, {_memory_gib():.0f} GiB; "
            f"Python {platform.python_version()}; " + ", ".join(versions))


def _load():
    try:
        return os.getloadavg()[0]
    except OSError:
        return float("nan")


def relative_command(argv=None):
    """``python benchmarks/x.py ARGS`` with paths inside the repository made
    relative to its root, and absolute paths outside it (a peer's
    interpreter) written as ``/path/to/`` and their last four parts: a
    header names no folder of the machine it ran on."""
    argv = list(sys.argv if argv is None else argv)
    parts = []
    for arg in argv:
        path = Path(arg)
        if path.is_absolute() and path.exists():
            try:
                arg = str(path.resolve().relative_to(ROOT))
            except ValueError:
                arg = "/path/to/" + "/".join(path.parts[1:][-4:])
        elif path.suffix == ".py" and path.exists():
            try:
                arg = str(path.resolve().relative_to(ROOT))
            except ValueError:
                pass
        parts.append(arg if re.fullmatch(r"[\w./=,:+-]+", arg) else repr(arg))
    return "python " + " ".join(parts)


class Report:
    """The tables and figures of one benchmark run, written as Markdown.

    Parameters
    ----------
    name : str
        The file's name without suffix (the script's name, or the script's
        name and a mode, as ``bench_minimax.timing``).
    args : argparse.Namespace or None
        Parsed arguments; ``args.quick`` picks the quick file and
        ``args.out`` (see :meth:`add_arguments`) the folder.
    packages : tuple of str
        Distributions whose versions the header names besides numpy,
        scipy and scikit-learn (the peers, say).
    write : bool
        False for a partial run that must not replace the page's file
        (its tables are printed only).
    """

    def __init__(self, name, args=None, *, packages=(), write=True):
        self.name = name
        self.quick = bool(getattr(args, "quick", False))
        out = getattr(args, "out", None)
        self.out = Path(out) if out else GENERATED
        self.packages = tuple(packages)
        self.enabled = write
        self.tables = {}
        self.values = {}
        self.notes = []
        self.start = time.time()
        self.load_start = _load()
        self.commit = commit_description()
        self.command = relative_command()
        self.kept_header = None

    @staticmethod
    def add_arguments(parser):
        parser.add_argument(
            "--out", default=None,
            help="folder for the generated tables (default: "
                 "docs/benchmarks/_generated)")

    @property
    def path(self):
        return self.out / (f"{self.name}.quick.md" if self.quick
                           else f"{self.name}.md")

    def table(self, key, title, columns, rows, *, timing=(), note=()):
        """Add (and print) one table; cells are the strings to show."""
        if key in self.tables:
            raise ValueError(f"table {key!r} added twice")
        columns = [str(c) for c in columns]
        rows = [[str(c) for c in row] for row in rows]
        for row in rows:
            if len(row) != len(columns):
                raise ValueError(f"table {key!r}: a row of {len(row)} cells "
                                 f"under {len(columns)} columns")
        unknown = set(timing) - set(columns)
        if unknown:
            raise ValueError(f"table {key!r}: timing columns {unknown} missing")
        note = [note] if isinstance(note, str) else list(note)
        table = Table(title, columns, rows, list(timing), note)
        self.tables[key] = table
        print("\n" + "\n".join(_table_lines(key, table)), flush=True)
        return table

    def value(self, key, text, *, timing=False):
        """Add (and print) one named figure, a string as the page shows it."""
        if key in self.values:
            raise ValueError(f"figure {key!r} added twice")
        self.values[key] = (str(text), bool(timing))
        print(f"{key} = {text}", flush=True)

    def note(self, text):
        """A line for the header (a setting of the run, say)."""
        self.notes.append(str(text))

    def keep_header(self, path):
        """Write the header of the earlier file ``path`` instead of this
        run's (a script that re-renders an earlier run's records)."""
        self.kept_header = {key: text.strip("`") if key in ("commit", "command")
                            else text for key, text in read(path).header.items()}

    def header(self):
        if self.kept_header is not None:
            return dict(self.kept_header)
        seconds = time.time() - self.start
        date = datetime.datetime.fromtimestamp(self.start, datetime.timezone.utc)
        load = (f"load average {self.load_start:.1f} at the start and "
                f"{_load():.1f} at the end on {os.cpu_count()} cores; the "
                "machine may have been shared with other jobs, so times "
                "compare only as ratios within this run")
        fields = {
            "commit": self.commit,
            "command": self.command,
            "machine": machine_description(self.packages),
            "date": f"{date:%Y-%m-%d %H:%M} UTC, run time {seconds:.0f} s",
            "load": load,
        }
        for i, text in enumerate(self.notes):
            fields[f"note {i + 1}" if len(self.notes) > 1 else "note"] = text
        return fields

    def render(self):
        header = self.header()
        lines = [f"<!-- Written by {header['command']}; do not edit: re-run the "
                 "command. -->", "", f"# {self.name}"
                 + (" (quick)" if self.quick else ""), ""]
        for key, text in header.items():
            if key in ("commit", "command"):
                text = f"`{text}`"
            lines.append(f"* {key}: {text}")
        for key, table in self.tables.items():
            lines += ["", f"## {key}", ""] + _table_lines(key, table)
        if self.values:
            lines += ["", "## figures", "", "<!-- figures -->", "",
                      "| name | value | timing |", "| --- | --- | --- |"]
            for key, (text, timing) in self.values.items():
                lines.append(f"| {_escape(key)} | {_escape(text)} | "
                             f"{'yes' if timing else ''} |")
        return "\n".join(lines) + "\n"

    def write(self):
        """Write the file (unless this run is partial); return its path."""
        if not self.enabled:
            print("\n(partial run: the generated tables were not written)")
            return None
        self.out.mkdir(parents=True, exist_ok=True)
        text = self.render()
        partial = self.path.with_suffix(".part")
        partial.write_text(text)
        partial.replace(self.path)
        print(f"\nwrote {self.path}", flush=True)
        return self.path


def _escape(text):
    return str(text).replace("|", "\\|")


def _table_lines(key, table):
    marker = f"<!-- table: {key}"
    if table.timing:
        marker += "; timing: " + ", ".join(table.timing)
    lines = [marker + " -->", "", table.title, "",
             "| " + " | ".join(_escape(c) for c in table.columns) + " |",
             "|" + " --- |" * len(table.columns)]
    lines += ["| " + " | ".join(_escape(c) for c in row) + " |"
              for row in table.rows]
    if table.note:
        lines += [""] + table.note
    return lines


# ---------------------------------------------------------------------------
# Reading

_MARKER = re.compile(r"<!-- table: (?P<key>[^;]+?)(?:; timing: (?P<timing>.*?))? -->$")


def _split_row(line):
    cells = re.split(r"(?<!\\)\|", line.strip())[1:-1]
    return [c.strip().replace("\\|", "|") for c in cells]


def read(path):
    """Parse a generated file into a :class:`Generated`."""
    header, tables, values, timing_text = {}, {}, {}, {}
    lines = Path(path).read_text().splitlines()
    current = None  # the table being read, or "figures"
    for line in lines:
        stripped = line.strip()
        match = _MARKER.match(stripped)
        if match:
            current = Table("", [], [], [])
            # Column names may hold ", ": the marker's list is matched
            # against the columns once they are read.
            timing_text[id(current)] = match["timing"] or ""
            tables[match["key"].strip()] = current
            continue
        if stripped == "<!-- figures -->":
            current = "figures"
            continue
        if current is None:
            if stripped.startswith("* ") and ": " in stripped:
                key, text = stripped[2:].split(": ", 1)
                header[key] = text
            continue
        if not stripped or stripped.startswith("## "):
            continue
        if current == "figures":
            if stripped.startswith("|"):
                cells = _split_row(stripped)
                if cells[:2] != ["name", "value"] and not set(cells[0]) <= {"-"}:
                    values[cells[0]] = (cells[1], cells[2] == "yes")
            continue
        if stripped.startswith("|"):
            cells = _split_row(stripped)
            if not current.columns:
                current.columns = cells
            elif all(set(c) <= {"-", ":"} for c in cells) and not current.rows:
                continue
            else:
                current.rows.append(cells)
        elif not current.columns and not current.title:
            current.title = stripped
        else:
            current.note.append(stripped)
    for table in tables.values():
        listed = f", {timing_text[id(table)]}, "
        table.timing = [c for c in table.columns if f", {c}, " in listed]
    return Generated(header, tables, values)


def select_rows(table, selector):
    """Rows whose leading cells are the ``;``-separated parts of ``selector``
    (every row for an empty selector); a part ending in ``*`` matches the
    cells that start with the rest."""
    if not selector.strip():
        return list(table.rows)
    parts = [p.strip() for p in selector.split(";")]

    def matches(cell, part):
        cell = cell.strip()
        return cell.startswith(part[:-1]) if part.endswith("*") else cell == part

    return [row for row in table.rows if len(row) >= len(parts)
            and all(matches(c, p) for c, p in zip(row, parts, strict=False))]


def lookup_all(generated, reference):
    """The cells a reference names: ``KEY[ROW][COLUMN]`` (the column's cell in
    every row whose leading cells are ROW's, separated by ``;``) or ``NAME``
    (a named figure, one cell).  Raises KeyError with a reason."""
    match = re.fullmatch(r"(?P<key>[^\[\]]+)\[(?P<row>[^\]]*)\]\[(?P<col>[^\]]*)\]",
                         reference.strip())
    if not match:
        name = reference.strip()
        if name not in generated.values:
            raise KeyError(f"no figure named {name!r}")
        return [generated.values[name][0]]
    key = match["key"].strip()
    if key not in generated.tables:
        raise KeyError(f"no table {key!r}")
    table = generated.tables[key]
    column = match["col"].strip()
    if column not in table.columns:
        raise KeyError(f"table {key!r} has no column {column!r}")
    rows = select_rows(table, match["row"])
    if not rows:
        raise KeyError(f"table {key!r}: no row matches {match['row']!r}")
    return [row[table.columns.index(column)] for row in rows]


def lookup(generated, reference):
    """The one cell or figure a reference names (see :func:`lookup_all`)."""
    cells = lookup_all(generated, reference)
    if len(cells) != 1:
        raise KeyError(f"{len(cells)} rows match {reference!r}")
    return cells[0]


def span(cells):
    """``"low to high"`` of numeric cells as printed (one value if equal)."""
    try:
        ordered = sorted(cells, key=float)
    except ValueError:
        raise KeyError(f"not all numbers: {cells}") from None
    return ordered[0] if ordered[0] == ordered[-1] else \
        f"{ordered[0]} to {ordered[-1]}"
