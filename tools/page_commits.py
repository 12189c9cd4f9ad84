"""Which commits each page's figures come from.

Every page of ``docs/`` and ``README.md`` quotes the benchmarks' generated
tables (``docs/benchmarks/_generated/``) through the ``bench-header``,
``bench-table`` and ``bench-tables`` directives, the ``bench`` and
``bench-range`` roles (``docs/sphinxext/bench_tables.py``) and includes of
a generated file.  This script resolves each quotation as the extension
does (``NAME.md`` where it exists, else the quick run's ``NAME.quick.md``),
reads the commit in the file's header, and prints per page the set of
commits, flagging a page whose figures come from more than one commit (or
from a run with uncommitted changes): such a page cannot name in its
header the one commit that reproduces it.  It then lists every quoted
generated file with its command and the run time its header records, and
the re-runs that would bring every flagged page onto one commit.

Two spellings of one commit (``7730dd3`` and ``7730dd3b1a``) are one
commit: a commit is named by the longest form whose prefix the others are.

Usage::

    python tools/page_commits.py            # every page, then every file
    python tools/page_commits.py --check    # exit 1 if a page has several
"""

import argparse
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import report  # noqa: E402
import typed_figures  # noqa: E402

# Quotations of generated files: a directive (MyST fence or reST), a role
# (MyST or reST), or an include of a file under _generated/.
DIRECTIVE = re.compile(
    r"^\s*(?:(?:`{3,}|:{3,})\{(?P<md>bench-header|bench-tables|bench-table)\}"
    r"|\.\.\s+(?P<rst>bench-header|bench-tables|bench-table)::)"
    r"[ \t]*(?P<target>[^\n]*?)\s*$", re.MULTILINE)
ROLE = re.compile(
    r"(?:\{(?P<md>bench-range|bench)\}|:(?P<rst>bench-range|bench):)"
    r"`(?P<target>[^`]*)`")
INCLUDE = re.compile(
    r"^\s*(?:(?:`{3,}|:{3,})\{include\}|\.\.\s+include::)[ \t]*"
    r"(?P<path>\S*_generated/\S+)\s*$", re.MULTILINE)

DIRTY = "uncommitted changes"
RUN_TIME = re.compile(r"run time (\d+(?:\.\d+)?) s")


@dataclass
class Quote:
    """One quotation on a page: what kind, the file's name, and the target."""

    kind: str      # bench-header, bench-table, bench-tables, bench, include
    name: str      # the generated file's name (NAME, or the included path)
    target: str    # what follows NAME: (a table key, a reference), or ""
    line: int


@dataclass
class Source:
    """A generated file as the pages see it."""

    name: str          # the file's name, NAME.md or NAME.quick.md
    path: Path
    quick: bool        # a quick run's file (NAME.quick.md)
    commit: str        # the commit's hex as written, "" if none
    dirty: bool        # run with uncommitted changes
    command: str
    seconds: float     # run time recorded in the header, None if not
    generated: object = None
    pages: set = field(default_factory=set)
    # Quoted by a NAME whose full run is missing: the pages fall back to
    # this quick run, and the full run is what they need.
    fallback: bool = False

    def rerun(self):
        """``(command, seconds)`` of the run the pages need: the full run
        (its time unknown) where they fall back to the quick one."""
        if self.fallback:
            return re.sub(r"\s--quick\b", "", self.command), None
        return self.command, self.seconds


def quotes(text):
    """Every quotation in a page's text, in order."""
    found = []

    def line_of(position):
        return text.count("\n", 0, position) + 1

    for match in DIRECTIVE.finditer(text):
        name, _, rest = match["target"].partition(":")
        found.append(Quote(match["md"] or match["rst"], name.strip(),
                           rest.strip(), line_of(match.start())))
    for match in ROLE.finditer(text):
        target = " ".join(match["target"].split())
        name, _, rest = target.partition(":")
        found.append(Quote(match["md"] or match["rst"], name.strip(),
                           rest.strip(),
                           line_of(match.start())))
    for match in INCLUDE.finditer(text):
        found.append(Quote("include", match["path"], "",
                           line_of(match.start())))
    return sorted(found, key=lambda q: q.line)


def resolve(name, generated=None):
    """``(path, is_quick)`` as the extension resolves NAME: the full run's
    file where it exists, else the quick run's; KeyError if neither."""
    generated = Path(generated or report.GENERATED)
    full, quick = generated / f"{name}.md", generated / f"{name}.quick.md"
    if full.exists():
        return full, False
    if quick.exists():
        return quick, True
    raise KeyError(f"no generated file {full.name} or {quick.name}")


def read_source(path):
    generated = report.read(path)
    header = generated.header
    commit_text = header.get("commit", "").strip()
    match = re.match(r"`?([0-9a-f]{7,40})", commit_text)
    seconds = RUN_TIME.search(header.get("date", ""))
    return Source(name=path.name, path=path,
                  quick=path.name.endswith(".quick.md"),
                  commit=match.group(1) if match else "",
                  dirty=DIRTY in commit_text,
                  command=header.get("command", "").strip("`"),
                  seconds=float(seconds.group(1)) if seconds else None,
                  generated=generated)


def check_quote(quote, source):
    """Why a quotation does not resolve in its file ("" where it does), as
    the extension reads it."""
    if quote.kind not in ("bench-table", "bench", "bench-range"):
        return ""
    generated = source.generated
    try:
        if quote.kind == "bench-table":
            if quote.target not in generated.tables:
                raise KeyError(f"no table {quote.target!r}")
        elif quote.kind == "bench-range":
            report.span(report.lookup_all(generated, quote.target))
        else:
            report.lookup(generated, quote.target)
    except KeyError as error:
        return f"{quote.name}:{quote.target}: {error.args[0]}"
    return ""


def canonical_commits(commits):
    """Map each spelling of a commit to its longest spelling."""
    names = sorted({c for c in commits if c}, key=len, reverse=True)
    canonical = {}
    for commit in names:
        canonical[commit] = next(
            (longer for longer in names
             if len(longer) > len(commit) and longer.startswith(commit)),
            commit)
    return canonical


def default_pages():
    return [page for page in typed_figures.pages([ROOT / "docs"])
            if not page.name.startswith("_")] + [ROOT / "README.md"]


@dataclass
class Survey:
    pages: dict        # page name -> list of (Quote, Source or None)
    sources: dict      # file name -> Source
    problems: list     # quotations that do not resolve
    canonical: dict    # commit spelling -> commit
    absent: list       # quotations shown as "not in the quick run"

    def commits(self, page):
        """The commits a page's quoted runs name (a run with uncommitted
        changes as "COMMIT+dirty"), files without a commit left out."""
        out = set()
        for _, source in self.pages[page]:
            if source is not None and source.commit:
                commit = self.canonical[source.commit]
                out.add(commit + ("+dirty" if source.dirty else ""))
        return out

    def single(self, page):
        commits = self.commits(page)
        return len(commits) <= 1 and not any(c.endswith("+dirty")
                                             for c in commits)


def survey(pages=None, generated=None):
    """Read every page's quotations and the files they resolve to."""
    generated = Path(generated or report.GENERATED)
    pages = default_pages() if pages is None else [Path(p) for p in pages]
    found, sources, problems, absent = {}, {}, [], []
    for page in pages:
        try:
            name = page.resolve().relative_to(ROOT).as_posix()
        except ValueError:
            name = str(page)
        entries = []
        for quote in quotes(page.read_text()):
            try:
                if quote.kind == "include":
                    path, quick = (page.parent / quote.name).resolve(), False
                    if not path.exists():
                        raise KeyError(f"no file {quote.name}")
                else:
                    path, quick = resolve(quote.name, generated)
            except KeyError as error:
                problems.append(f"{name}:{quote.line}: {error.args[0]}")
                entries.append((quote, None))
                continue
            # Keyed by file: a role and an include of one file are one run.
            source = sources.get(path.name)
            if source is None:
                source = sources[path.name] = read_source(path)
            source.pages.add(name)
            source.fallback |= quick
            problem = check_quote(quote, source)
            if problem:
                # The extension shows a quick run's missing figure as "not
                # in the quick run"; in a full run's file it is an error.
                (absent if quick else problems).append(
                    f"{name}:{quote.line}: {problem}")
            entries.append((quote, source))
        if entries:
            found[name] = entries
    canonical = canonical_commits(s.commit for s in sources.values())
    return Survey(found, sources, problems, canonical, absent)


def _seconds(source):
    return "run time not recorded" if source.seconds is None else \
        f"{source.seconds:.0f} s"


def headed(result, page):
    """The generated files a page quotes and the subset whose header the
    page shows (``bench-header``)."""
    quoted = {source.name for _, source in result.pages[page]
              if source is not None and source.commit}
    shown = {source.name for quote, source in result.pages[page]
             if source is not None and quote.kind == "bench-header"}
    return quoted, shown


def reruns(result):
    """The re-runs that bring every flagged page onto one commit, as groups
    ``(pages, runs)``, cheapest group first (runs cheapest first).

    Re-running a file moves every page that quotes it, so a page that
    quotes one re-run file and one that is not would be split afresh: a
    group is closed under "shares a file", and its pages come onto one
    commit only once all its runs are repeated on that commit."""
    groups, seen = [], set()
    for start in sorted(result.pages):
        if result.single(start) or start in seen:
            continue
        pages, names, todo = set(), set(), [start]
        while todo:
            page = todo.pop()
            if page in pages:
                continue
            pages.add(page)
            for _, source in result.pages[page]:
                if source is None or not source.commit:
                    continue
                names.add(source.name)
                todo += [p for p in source.pages if p not in pages]
        seen |= pages
        runs = sorted((result.sources[n] for n in names), key=_cost)
        groups.append((sorted(pages), runs))
    return sorted(groups, key=lambda g: (sum(_cost(s)[0] for s in g[1]),
                                         sum(_cost(s)[1] for s in g[1])))


def _cost(source):
    """Sort key: runs of a known time first, cheapest first."""
    seconds = source.rerun()[1]
    return (seconds is None, seconds or 0, source.name)


def print_survey(result, out=sys.stdout):
    flagged = 0
    print("# Pages and the commits of the runs they quote\n", file=out)
    for page, entries in sorted(result.pages.items()):
        commits = sorted(result.commits(page))
        single = result.single(page)
        flagged += not single
        mark = "ok  " if single else "MANY"
        print(f"{mark} {page}: {len(commits)} commit(s) {', '.join(commits)}",
              file=out)
        _, shown = headed(result, page)
        if not single:
            names = {}
            for _, source in entries:
                if source is not None and source.commit:
                    names.setdefault(source.name, source)
            for name, source in sorted(names.items()):
                commit = result.canonical[source.commit]
                print(f"       {commit}{'+dirty' if source.dirty else ''}  "
                      f"{name}"
                      + ("" if name in shown else "  (no bench-header on the page)"),
                      file=out)
    print(f"\n{flagged} of {len(result.pages)} quoting pages name more than "
          "one commit", file=out)
    print("\n# Generated files quoted by the pages\n", file=out)
    for name, source in sorted(result.sources.items()):
        commit = result.canonical.get(source.commit, "") or "no commit"
        print(f"{name}: {commit}"
              f"{' (uncommitted changes)' if source.dirty else ''}; "
              f"{_seconds(source)}; `{source.command or 'no command'}`; "
              f"quoted by {', '.join(sorted(source.pages))}", file=out)
    groups = reruns(result)
    if groups:
        print("\n# Re-runs for the flagged pages: groups of pages that share "
              "files, cheapest first\n", file=out)
        total, unknown = 0.0, 0
        for pages, runs in groups:
            times = [source.rerun()[1] for source in runs]
            seconds = sum(t or 0 for t in times)
            missing = sum(t is None for t in times)
            total, unknown = total + seconds, unknown + missing
            print(f"## {seconds:.0f} s recorded"
                  + (f" (+{missing} runs of unknown time)" if missing else "")
                  + ": " + ", ".join(pages), file=out)
            for source in runs:
                command, seconds = source.rerun()
                if source.fallback:
                    when = "full run missing"
                    command += (f"   (its quick run, which the pages show "
                                f"now: {_seconds(source)})")
                else:
                    when = _seconds(source)
                print(f"{when:>24}  {command}", file=out)
            print(file=out)
        print(f"{sum(len(r) for _, r in groups)} runs, {total:.0f} s recorded"
              + (f" (+{unknown} of unknown time)" if unknown else ""),
              file=out)
    if result.absent:
        print("\n# Quoted from a quick run that lacks them (the page shows "
              "\"not in the quick run\" until the full run is made)\n",
              file=out)
        for quote in result.absent:
            print(quote, file=out)
    for problem in result.problems:
        print(f"unresolved: {problem}", file=out)
    return flagged


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pages", nargs="*", type=Path,
                        help="pages to read (default: docs/ and README.md)")
    parser.add_argument("--check", action="store_true",
                        help="exit 1 when a page quotes several commits or "
                             "a quotation does not resolve")
    args = parser.parse_args(argv)
    result = survey(args.pages or None)
    flagged = print_survey(result)
    return 1 if args.check and (flagged or result.problems) else 0


if __name__ == "__main__":
    sys.exit(main())
