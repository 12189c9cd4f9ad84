"""Benchmark tables and figures in the pages, from the files the scripts write.

Every benchmark script writes its tables to ``docs/benchmarks/_generated/``
(``benchmarks/report.py``); the pages never type a measured figure, they
name it:

``.. bench-header:: NAME``
    where the run's figures come from: its commit, command, machine, date;
    ``:fields:`` keeps the named header fields (separated by `` | ``), as
    ``commit | command`` beside a figure quoted from another page's run.
``.. bench-table:: NAME:KEY``
    one table, captioned with its title; ``:rows:`` keeps the rows whose
    leading cells match (selectors separated by `` | ``, a selector's
    cells by ``;``), ``:columns:`` the named columns (separated by
    `` | ``), ``:caption:`` replaces the title.
``.. bench-tables:: NAME``
    every table of the run, in order, each with its notes.
``:bench:`NAME:KEY[ROW][COLUMN]``` or ``:bench:`NAME:FIGURE```
    one cell or one named figure, inline (``{bench}`...``` in Markdown).
``:bench-range:`NAME:KEY[ROW][COLUMN]```
    "low to high" over the column's cells in every row ROW matches (its
    leading cells; fewer of them match more rows).

A reference to a file, table, row, column or figure that does not exist
is an error, so a page cannot quote a figure its benchmark no longer
prints (the build runs with warnings as errors).

Where only the quick run's file ``NAME.quick.md`` exists (a checkout
before the full runs were made, ``benchmarks/run_all.py``), the pages are
built from it: its header says it is the quick run, and a figure or row
the quick run does not measure is shown as "not in the quick run" instead
of failing the build.  Once ``NAME.md`` exists every reference is checked.
"""

import sys
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

import report  # noqa: E402

logger = logging.getLogger(__name__)
_CACHE = {}


MISSING = "not in the quick run"


def _read(path):
    stamp = path.stat().st_mtime_ns
    cached = _CACHE.get(path)
    if cached is None or cached[0] != stamp:
        cached = (stamp, report.read(path))
        _CACHE[path] = cached
    return cached[1]


def load(name, env=None):
    """``(parsed file, is_quick)``: the full run's ``NAME.md``, else the
    quick run's ``NAME.quick.md`` (parsed files cached by modification
    time)."""
    full = report.GENERATED / f"{name}.md"
    quick = report.GENERATED / f"{name}.quick.md"
    if env is not None:
        # Noted even when missing, so that the page is read again once a
        # file exists (and whenever one changes).
        env.note_dependency(str(full))
        env.note_dependency(str(quick))
    if full.exists():
        return _read(full), False
    if quick.exists():
        return _read(quick), True
    raise KeyError(f"no generated file {full.name} or {quick.name} in "
                   f"{full.parent} (run the benchmark script, see "
                   "benchmarks/run_all.py)")


def _split_target(target):
    name, _, rest = target.partition(":")
    if not rest:
        raise KeyError(f"{target!r}: expected NAME:KEY")
    return name.strip(), rest.strip()


def bench_role(name, rawtext, text, lineno, inliner, options=None, content=None):
    env = inliner.document.settings.env
    try:
        file_name, reference = _split_target(text)
        generated, quick = load(file_name, env)
    except KeyError as error:
        message = inliner.reporter.error(f"bench: {error.args[0]}", line=lineno)
        problem = inliner.problematic(rawtext, rawtext, message)
        return [problem], [message]
    try:
        if name == "bench-range":
            value = report.span(report.lookup_all(generated, reference))
        else:
            value = report.lookup(generated, reference)
    except KeyError as error:
        if quick:
            return [nodes.emphasis(rawtext, MISSING, classes=["bench-missing"])], []
        message = inliner.reporter.error(f"bench: {error.args[0]}", line=lineno)
        problem = inliner.problematic(rawtext, rawtext, message)
        return [problem], [message]
    return [nodes.inline(rawtext, value, classes=["bench-figure"])], []


def _table_node(table, caption, rows, columns):
    indices = [table.columns.index(c) for c in columns]
    node = nodes.table(classes=["bench-table"])
    if caption:
        node += nodes.title(caption, caption)
    group = nodes.tgroup(cols=len(indices))
    node += group
    for _ in indices:
        group += nodes.colspec(colwidth=1)

    def row_node(cells):
        row = nodes.row()
        for cell in cells:
            entry = nodes.entry()
            entry += nodes.paragraph(cell, cell)
            row += entry
        return row

    head = nodes.thead()
    head += row_node(columns)
    group += head
    body = nodes.tbody()
    for row in rows:
        body += row_node([row[i] for i in indices])
    group += body
    return node


def _split_list(text):
    return [part.strip() for part in text.split(" | ") if part.strip()]


class BenchTable(SphinxDirective):
    required_arguments = 1
    final_argument_whitespace = True
    option_spec = {"rows": directives.unchanged, "columns": directives.unchanged,
                   "caption": directives.unchanged}

    def run(self):
        try:
            file_name, key = _split_target(self.arguments[0])
            generated, quick = load(file_name, self.env)
            if key not in generated.tables and quick:
                return [nodes.paragraph("", f"({file_name}:{key}: {MISSING}.)")]
            if key not in generated.tables:
                raise KeyError(f"{file_name}: no table {key!r}")
            table = generated.tables[key]
            rows = table.rows
            if "rows" in self.options:
                rows = []
                for selector in _split_list(self.options["rows"]):
                    matched = report.select_rows(table, selector)
                    if not matched and not quick:
                        raise KeyError(f"{file_name}:{key}: no row {selector!r}")
                    rows += matched
            columns = table.columns
            if "columns" in self.options:
                columns = _split_list(self.options["columns"])
                missing = [c for c in columns if c not in table.columns]
                if missing:
                    raise KeyError(f"{file_name}:{key}: no column {missing}")
        except KeyError as error:
            raise self.error(f"bench-table: {error.args[0]}") from None
        caption = self.options.get("caption", table.title)
        out = [_table_node(table, caption, rows, columns)]
        if "rows" not in self.options and "columns" not in self.options:
            out += [nodes.paragraph(line, line) for line in table.note]
        return out


class BenchTables(SphinxDirective):
    required_arguments = 1

    def run(self):
        try:
            generated, _ = load(self.arguments[0].strip(), self.env)
        except KeyError as error:
            raise self.error(f"bench-tables: {error.args[0]}") from None
        out = []
        for table in generated.tables.values():
            out.append(_table_node(table, table.title, table.rows, table.columns))
            out += [nodes.paragraph(line, line) for line in table.note]
        return out


class BenchHeader(SphinxDirective):
    required_arguments = 1
    option_spec = {"fields": directives.unchanged}

    def run(self):
        try:
            name = self.arguments[0].strip()
            generated, quick = load(name, self.env)
            header = dict(generated.header)
            if "fields" in self.options:
                keep = _split_list(self.options["fields"])
                missing = [k for k in keep if k not in header]
                if missing:
                    raise KeyError(f"{name}: no header field {missing}")
                header = {k: header[k] for k in keep}
        except KeyError as error:
            raise self.error(f"bench-header: {error.args[0]}") from None
        fields = nodes.field_list(classes=["bench-header"])
        if quick:
            header = {"run": f"the quick run ({name}.quick.md), a subset of "
                      "the rows; the full run is not in this checkout "
                      "(python benchmarks/run_all.py)", **header}
        for key, text in header.items():
            body = nodes.paragraph()
            if key in ("commit", "command"):
                body += nodes.literal(text.strip("`"), text.strip("`"))
            else:
                body += nodes.Text(text)
            item = nodes.field()
            item += nodes.field_name(key, key)
            field_body = nodes.field_body()
            field_body += body
            item += field_body
            fields += item
        return [fields]


def setup(app):
    app.add_role("bench", bench_role)
    app.add_role("bench-range", bench_role)
    app.add_directive("bench-table", BenchTable)
    app.add_directive("bench-tables", BenchTables)
    app.add_directive("bench-header", BenchHeader)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
