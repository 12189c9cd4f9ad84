"""The benchmarks' generated tables: the file format read back as written,
references to cells and figures, and CI's comparison of quick tables."""

import argparse
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "tools"))

import check_quick_tables  # noqa: E402
import report  # noqa: E402


def written(tmp_path, cells="0.9824", seconds="0.083", figure="14.9"):
    out = report.Report("bench_x", argparse.Namespace(out=tmp_path, quick=True))
    out.table("diamonds", "diamonds: n_train=40455 | medians over 5 seeds",
              ["model", "epsilon", "R^2", "fit s"],
              [["LinearRegression (not private)", "-", "0.9829", "0.027"],
               ["DPSGDRegressor", "1", cells, seconds],
               ["DPSGDRegressor", "3", "0.9825", "0.090"]],
              timing=["fit s"], note="one note line")
    out.table("other", "a second table", ["a|b", "c"], [["x|y", "1e-05"]])
    out.value("opacus.ratio", figure, timing=True)
    out.value("slope", "0.82")
    return out.write()


def test_a_written_file_reads_back_as_written(tmp_path):
    generated = report.read(written(tmp_path))
    assert set(generated.header) >= {"commit", "command", "machine", "date"}
    table = generated.tables["diamonds"]
    assert table.title == "diamonds: n_train=40455 | medians over 5 seeds"
    assert table.columns == ["model", "epsilon", "R^2", "fit s"]
    assert table.rows[1] == ["DPSGDRegressor", "1", "0.9824", "0.083"]
    assert table.timing == ["fit s"]
    assert table.note == ["one note line"]
    # A pipe inside a cell or a column name survives the round trip.
    assert generated.tables["other"].columns == ["a|b", "c"]
    assert generated.tables["other"].rows == [["x|y", "1e-05"]]
    assert generated.values == {"opacus.ratio": ("14.9", True),
                                "slope": ("0.82", False)}


def test_references_name_one_cell_or_figure_and_refuse_the_rest(tmp_path):
    generated = report.read(written(tmp_path))
    assert report.lookup(generated, "diamonds[DPSGDRegressor;1][R^2]") == "0.9824"
    assert report.lookup(generated, "slope") == "0.82"
    assert report.span(report.lookup_all(
        generated, "diamonds[DPSGDRegressor][R^2]")) == "0.9824 to 0.9825"
    for bad in ("diamonds[DPSGDRegressor][R^2]",   # two rows
                "diamonds[DPSGDRegressor;8][R^2]",  # no row
                "diamonds[DPSGDRegressor;1][R2]",   # no column
                "nodiamonds[DPSGDRegressor;1][R^2]", "noslope"):
        with pytest.raises(KeyError):
            report.lookup(generated, bad)


def test_quick_tables_compare_equal_but_for_timings(tmp_path):
    first = written(tmp_path / "a")
    assert check_quick_tables.compare(first, written(
        tmp_path / "b", seconds="0.5", figure="3.0")) == []


@pytest.mark.parametrize("cell, moved", [("0.9823", False), ("0.9825", False),
                                         ("0.9822", True), ("0.982", True),
                                         ("0.9924", True)])
def test_a_seeded_cell_may_move_one_unit_of_its_last_digit(tmp_path, cell, moved):
    diff = check_quick_tables.compare(written(tmp_path / "a"),
                                      written(tmp_path / "b", cells=cell))
    assert bool(diff) is moved
    if moved:
        assert any(cell in line for line in diff)


def test_close_compares_every_number_of_a_line():
    close = check_quick_tables.close
    assert close("0.716 / 0.667 (drop 0.048)", "0.716 / 0.668 (drop 0.049)")
    assert not close("0.716 / 0.667 (drop 0.048)", "0.716 / 0.669 (drop 0.048)")
    assert not close("gain 1 (0.223)", "gain 1.00 (0.223)")
    assert not close("yes", "no")
    assert close("1e-05", "1e-05") and not close("1e-05", "3e-05")


def test_a_re_rendered_file_keeps_the_earlier_header(tmp_path):
    earlier = report.read(written(tmp_path / "a"))
    again = report.Report("bench_x", argparse.Namespace(out=tmp_path / "b",
                                                        quick=True))
    again.keep_header(tmp_path / "a" / "bench_x.quick.md")
    again.table("t", "a table", ["a"], [["1"]])
    assert report.read(again.write()).header == earlier.header


def test_pages_fall_back_to_the_quick_table_only_where_the_full_one_is_missing(
        tmp_path, monkeypatch):
    # The extension needs Sphinx (the docs extra): CI runs this file again
    # once it has installed it.
    pytest.importorskip("sphinx")
    sys.path.insert(0, str(ROOT / "docs" / "sphinxext"))
    import bench_tables

    monkeypatch.setattr(report, "GENERATED", tmp_path)
    written(tmp_path)                      # bench_x.quick.md only
    generated, quick = bench_tables.load("bench_x")
    assert quick and "diamonds" in generated.tables
    full = report.Report("bench_x", argparse.Namespace(out=tmp_path, quick=False))
    full.table("diamonds", "full", ["model"], [["DPSGDRegressor"]])
    full.write()
    generated, quick = bench_tables.load("bench_x")
    assert not quick and generated.tables["diamonds"].title == "full"
    with pytest.raises(KeyError):
        bench_tables.load("bench_y")


def test_a_timing_column_whose_name_holds_a_comma_is_read_as_timing(tmp_path):
    out = report.Report("bench_x", argparse.Namespace(out=tmp_path, quick=True))
    out.table("t", "title", ["n", "time (s), median", "R^2"],
              [["10", "0.5", "0.9"]], timing=["time (s), median"])
    assert report.read(out.write()).tables["t"].timing == ["time (s), median"]


def test_typed_figures_are_found_in_prose_only(tmp_path):
    import typed_figures

    page = tmp_path / "page.md"
    page.write_text(
        "A gain of 0.83, 9% of rows and 2.4x faster, 6.6e-3 apart.\n"
        "Quoted: {bench}`x:t[a;0.5][b]` and `CLIP = 0.7` and $0.25 n$.\n"
        "Version 1.2.3, a link [0.1](x.md).\n"
        "```python\nmodel.fit(0.77)\n```\n")
    found = list(typed_figures.typed_figures(page))
    assert [(number, figures) for number, figures, _ in found] == [
        (1, ["0.83", "9%", "2.4x", "6.6e-3"])]


# Every page of the documentation and README: each measured figure comes
# from a generated table, so a figure typed into a page fails here
# (tools/typed_figures.allow lists the settings the pages state on
# purpose).  Left out: what a build writes (sphinx-gallery's pages, the
# API stubs, the generated tables themselves) and the estimator page
# template.
BUILT = ("_generated", "auto_examples", "generated", "_build")
PAGES = sorted(
    [str(path.relative_to(ROOT)) for suffix in ("*.md", "*.rst")
     for path in (ROOT / "docs").rglob(suffix)
     if not set(path.relative_to(ROOT).parts) & set(BUILT)
     and not path.name.startswith("_")
     and path.name != "sg_execution_times.rst"] + ["README.md"])


def test_every_page_is_read():
    assert {"README.md", "docs/index.rst", "docs/privacy/accounting.md",
            "docs/benchmarks/dask.md", "docs/design/minimax.md"} <= set(PAGES)


def test_pages_of_generated_figures_type_no_figure():
    import typed_figures

    allowed = typed_figures.read_allow(ROOT / "tools" / "typed_figures.allow")
    typed = [f"{name}:{number}: {figure}"
             for name in PAGES
             for number, figures, _ in typed_figures.typed_figures(ROOT / name)
             for figure in figures if f"{name}:{figure}" not in allowed]
    assert typed == []


def _generated_file(path, commit, seconds, tables):
    """A generated file as report.Report writes it, with a given header."""
    script, _, quick = path.stem.partition(".")
    lines = [f"# {path.stem}", "", f"* commit: `{commit}`",
             f"* command: `python benchmarks/{script}.py"
             f"{' --quick' if quick else ''}`",
             "* machine: test", f"* date: 2026-01-01 00:00 UTC, run time "
             f"{seconds} s"]
    for key in tables:
        lines += ["", f"<!-- table: {key} -->", "", "title", "",
                  "| model | R^2 |", "| --- | --- |", "| DP | 0.9 |"]
    path.write_text("\n".join(lines) + "\n")


def test_page_commits_resolves_quotations_as_the_extension_does(tmp_path):
    import page_commits

    out = tmp_path / "_generated"
    out.mkdir()
    # bench_a has a full run and a newer quick one: pages read the full run.
    _generated_file(out / "bench_a.md", "abcdef1234", 100, ["t"])
    _generated_file(out / "bench_a.quick.md", "9999999999", 3, ["t"])
    _generated_file(out / "bench_b.quick.md", "abcdef1", 7, ["u"])   # quick only
    _generated_file(out / "bench_c.md",
                    "abcdef1234 (with uncommitted changes to skdpopt)", 5, [])
    one = tmp_path / "one.md"
    one.write_text("```{bench-header} bench_a\n```\n\n"
                   "```{bench-table} bench_a:t\n```\n"
                   "A {bench}`bench_b:u[DP][R^2]` and "
                   "{bench-range}`bench_a:t[][R^2]`.\n")
    many = tmp_path / "many.rst"
    many.write_text(".. bench-table:: bench_a.quick:t\n\n"
                    "Cell :bench:`bench_a:t[DP][R^2]` and :bench:`bench_a:nothing`.\n"
                    "Dirty :bench:`bench_c:x` and a missing :bench:`bench_z:x`.\n"
                    ".. include:: _generated/bench_b.quick.md\n")
    result = page_commits.survey([one, many], generated=out)
    assert [q.kind for q, _ in result.pages[str(one)]] == [
        "bench-header", "bench-table", "bench", "bench-range"]
    assert "bench_a.quick.md" not in {
        source.name for _, source in result.pages[str(one)]}
    assert not result.sources["bench_a.md"].quick
    assert result.sources["bench_b.quick.md"].quick
    assert result.sources["bench_a.md"].seconds == 100
    assert result.sources["bench_a.md"].command == "python benchmarks/bench_a.py"
    # Two spellings of one commit are one commit.
    assert result.commits(str(one)) == {"abcdef1234"}
    assert result.single(str(one))
    # The quick file quoted by its own name, a run with uncommitted
    # changes, and an include are all counted.
    assert result.commits(str(many)) == {"abcdef1234", "9999999999",
                                         "abcdef1234+dirty"}
    assert not result.single(str(many))
    assert result.sources["bench_b.quick.md"].commit == "abcdef1"
    # A quotation of a missing file, or of a figure missing from a full
    # run, is reported; a quick run's missing figure is not (as in the
    # extension).
    assert sorted(p.split(": ", 1)[1] for p in result.problems) == [
        "bench_a:nothing: no figure named 'nothing'",
        "bench_c:x: no figure named 'x'",
        "no generated file bench_z.md or bench_z.quick.md"]
    # The re-run plan covers every file of the flagged page and of the
    # pages that share a file with it, cheapest first; where a page falls
    # back to a quick run, the full run (of unknown time) comes last.
    [(pages, runs)] = page_commits.reruns(result)
    assert pages == sorted([str(one), str(many)])
    assert [s.path.name for s in runs] == [
        "bench_a.quick.md", "bench_c.md", "bench_a.md", "bench_b.quick.md"]
    assert runs[0].rerun() == ("python benchmarks/bench_a.py --quick", 3)
    assert runs[-1].rerun() == ("python benchmarks/bench_b.py", None)


def test_every_generated_file_a_page_quotes_exists():
    import page_commits

    result = page_commits.survey([ROOT / name for name in PAGES])
    assert result.problems == []
    assert {"docs/benchmarks/dpsgd.md",
            "docs/comparison/dpsgd.rst"} <= set(result.pages)


def test_every_page_quotes_runs_of_one_commit():
    # A page's figures come from one commit: a change that moves a table
    # re-runs every run its pages quote (tools/page_commits.py lists them).
    import page_commits

    result = page_commits.survey([ROOT / name for name in PAGES])
    assert [page for page in result.pages if not result.single(page)] == []


def test_a_header_may_show_some_fields_only(tmp_path, monkeypatch):
    pytest.importorskip("sphinx")
    import io

    from sphinx.application import Sphinx

    sys.path.insert(0, str(ROOT / "docs" / "sphinxext"))
    monkeypatch.setattr(report, "GENERATED", tmp_path / "generated")
    (tmp_path / "generated").mkdir()
    _generated_file(tmp_path / "generated" / "bench_a.md", "abcdef1234", 4, [])
    source = tmp_path / "src"
    source.mkdir()
    (source / "conf.py").write_text("extensions = ['bench_tables']\n")
    (source / "index.rst").write_text(
        "Page\n====\n\n.. bench-header:: bench_a\n   :fields: commit | command\n"
        "\n.. bench-header:: bench_a\n   :fields: commit | colour\n")
    warnings = io.StringIO()
    app = Sphinx(str(source), str(source), str(tmp_path / "out"),
                 str(tmp_path / "doctrees"), "text", status=None,
                 warning=warnings, freshenv=True)
    app.build()
    text = (tmp_path / "out" / "index.txt").read_text()
    assert "abcdef1234" in text and "python benchmarks/bench_a.py" in text
    assert "machine" not in text and "date" not in text
    assert "no header field ['colour']" in warnings.getvalue()


def test_a_command_names_no_folder_outside_the_repository(tmp_path):
    peer = tmp_path / "envs" / "peers" / "mbi" / "bin" / "python"
    peer.parent.mkdir(parents=True)
    peer.touch()
    script = Path(report.__file__)
    command = report.relative_command([str(script), "--mbi-python", str(peer)])
    assert command == ("python benchmarks/report.py --mbi-python "
                       "/path/to/peers/mbi/bin/python")
    assert str(tmp_path) not in command

