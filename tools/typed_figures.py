"""List the figures typed by hand in the documentation's prose.

The pages quote measured figures through the generated tables
(``docs/sphinxext/bench_tables.py``: the ``bench-table`` directive, the
``bench`` and ``bench-range`` roles).  This script lists what is left in
``docs/`` (Markdown and reStructuredText, the generated folders and the
build left out) and ``README.md``: decimals (``0.83``), percentages
(``9%``), ratios (``2.4x``) and numbers in scientific notation
(``6.6e-3``) in prose, outside code (inline literals, fenced and literal
blocks), maths and the roles that quote generated files.  Integers are
not listed: counts, sizes and years are too many to tell from measured
ones, so a typed "14 of 16" or "99 s" is not found.

A number found here is not necessarily a measured figure: parameter
defaults, privacy parameters (epsilon, delta), a derivation's constants
and version numbers are typed on purpose (a version of two parts,
``1.9``, reads as a decimal: allow it).  ``--allow FILE`` reads one
``path:token`` a line (``#`` comments) that are accepted; the rest is
printed as ``path:line: tokens | the line``.  The exit status is 1 when
something is printed and ``--check`` is given.

Usage::

    python tools/typed_figures.py                 # every page
    python tools/typed_figures.py docs/design     # some folders or files
    python tools/typed_figures.py --check --allow tools/typed_figures.allow
"""

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SKIP_PARTS = {"_generated", "_build", "auto_examples", "generated", "_templates"}
# Written by sphinx-gallery at every build.
SKIP_NAMES = {"sg_execution_times.rst"}

# A figure: a decimal, a percentage, a ratio "2.4x" or a number in
# scientific notation; not part of a name, a path or a version (1.2.3).
FIGURE = re.compile(
    r"(?<![\w.\-/])(?:"
    r"\d+(?:\.\d+)?[eE][-+]?\d+"           # 6.6e-3, 1e5
    r"|\d+(?:\.\d+)?\s?%"                   # 9%, 1.4 %
    r"|\d+(?:\.\d+)?x(?![\w])"              # 2.4x
    r"|\d*\.\d+"                            # 0.83, .5
    r")(?![\w.]*\d)")

# What is not prose: quoting roles, inline literals, inline maths.
INLINE = re.compile(
    r"\{bench(?:-range)?\}`[^`]*`"          # Markdown roles
    r"|:bench(?:-range)?:`[^`]*`"           # reST roles
    r"|\{math\}`[^`]*`|:math:`[^`]*`"
    r"|``[^`]*``|`[^`]*`"                   # literals
    r"|\$\$.*?\$\$|\$[^$]+\$"               # Markdown maths
    r"|\[[^\]]*\]\([^)]*\)"                 # link targets
    r"|<https?://[^>]*>|https?://\S+")


def pages(paths):
    for path in paths:
        path = (ROOT / path) if not path.is_absolute() else path
        files = [path] if path.is_file() else sorted(
            p for p in path.rglob("*") if p.suffix in (".md", ".rst"))
        for page in files:
            if not (SKIP_PARTS & set(page.relative_to(ROOT).parts)
                    or page.name in SKIP_NAMES):
                yield page


def prose_lines(text, rst):
    """``(line number, line)`` of the prose: code, maths and directive
    bodies left out."""
    fence = None
    block_indent = None  # inside an indented reST block (literal, directive)
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if fence:
            if stripped.startswith(fence):
                fence = None
            continue
        match = re.match(r"(`{3,}|~{3,}|:{3,})", stripped)
        if match:
            fence = match.group(1)
            continue
        indent = len(line) - len(line.lstrip())
        if block_indent is not None:
            if not stripped or indent > block_indent:
                continue
            block_indent = None
        if rst and (stripped.startswith(".. ") or stripped.endswith("::")):
            # A directive or a literal block: its body is indented below.
            # The text of an admonition or a list-table is prose, but rare.
            if not stripped.startswith((".. note::", ".. warning::")):
                block_indent = indent
            continue
        if stripped.startswith(("<!--", "|")):  # comments, hand tables
            if stripped.startswith("|"):
                yield number, line
            continue
        yield number, line


def typed_figures(page):
    rst = page.suffix == ".rst"
    for number, line in prose_lines(page.read_text(), rst):
        found = [m.group(0) for m in FIGURE.finditer(INLINE.sub(" ", line))]
        if found:
            yield number, found, line.strip()


def read_allow(path):
    allowed = set()
    if path:
        for line in Path(path).read_text().splitlines():
            line = line.split("#", 1)[0].strip()
            if line:
                allowed.add(line)
    return allowed


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", type=Path,
                        default=[Path("docs"), Path("README.md")])
    parser.add_argument("--allow", default=None,
                        help="file of accepted path:token lines")
    parser.add_argument("--check", action="store_true",
                        help="exit with status 1 when a figure is listed")
    args = parser.parse_args(argv)
    allowed = read_allow(args.allow)
    count = 0
    for page in pages(args.paths):
        name = page.relative_to(ROOT).as_posix()
        for number, found, line in typed_figures(page):
            found = [f for f in found if f"{name}:{f}" not in allowed]
            if found:
                count += len(found)
                print(f"{name}:{number}: {', '.join(found)} | {line[:100]}")
    print(f"{count} typed figures", file=sys.stderr)
    return 1 if args.check and count else 0


if __name__ == "__main__":
    sys.exit(main())
