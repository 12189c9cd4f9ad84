"""The house's layers, read from the code's own imports (AST).

From the top: the estimators (and the public modules beside them), the
machinery they share, then plans beside the solvers and the releases, then
data access, then the foundation (accounting, mechanisms, losses,
geometry, clipping, labels and groups).  Every import runs downwards or
within a layer; plans import neither solvers nor estimators; solvers and
releases import no accounting; no module takes another subpackage's
private name.  The estimator modules stay thin: at most
``MAX_ESTIMATOR_LINES`` lines of code (docstrings and comments excluded).
``docs/architecture.rst`` draws the same house in words.
"""

import ast
import io
import tokenize
from pathlib import Path

import pytest

import skdpopt

PACKAGE = Path(skdpopt.__file__).parent

# The estimators' modules (thin: validate, plan, solve, store); the
# pipeline and the private searches, meta-estimators, sit beside them.
ESTIMATORS = {"sgd", "lasso", "logistic_simplex", "minimax", "synthetic",
              "preprocessing"}
# Each part of the package, by its place in the house.
LAYERS = {
    "public": {"__init__", "metrics", "pipeline", "model_selection", "_classifiers",
               "_regressors",
               *ESTIMATORS},
    "shared": {"_base", "_targets", "_diagnostics", "_declared", "ledger"},
    "plans": {"plans"},
    "solvers": {"solvers", "_bounds", "_domain"},
    "data": {"_data"},
    "foundation": {"accounting", "mechanisms", "losses", "geometry", "_clipping",
                   "_sums", "_validation", "exceptions"},
}
# What each layer may import (its own parts included).
ALLOWED = {
    "public": {"public", "shared", "plans", "solvers", "data", "foundation"},
    "shared": {"shared", "data", "foundation"},
    "plans": {"plans", "foundation"},
    "solvers": {"solvers", "data", "foundation"},
    "data": {"data", "foundation"},
    "foundation": {"foundation"},
}
# Within the foundation, what may import accounting: accounting itself.
NO_ACCOUNTING = {"solvers", "_bounds", "_domain", "_data", "mechanisms", "losses",
                 "geometry", "_clipping", "_sums", "_validation"}
MAX_ESTIMATOR_LINES = 300


def layer_of(part):
    for layer, members in LAYERS.items():
        if part in members:
            return layer
    raise AssertionError(f"skdpopt/{part} is on no layer of the house")


def modules():
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE).with_suffix("").parts
        yield path, parts


def imports(path, parts):
    """(imported skdpopt module parts, names taken) of every import."""
    tree = ast.parse(path.read_text())
    package = parts[:-1]
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - node.level + 1]
                target = base + tuple(node.module.split(".")) if node.module else base
            elif node.module and node.module.split(".")[0] == "skdpopt":
                target = tuple(node.module.split(".")[1:])
            else:
                continue
            names = [alias.name for alias in node.names]
            if not target:  # "from skdpopt import x" or "from . import x"
                for name in names:
                    yield (name,), []
            else:
                yield target, names
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "skdpopt":
                    yield tuple(alias.name.split(".")[1:]), []


ALL = list(modules())
IDS = ["/".join(parts) for _, parts in ALL]


@pytest.mark.parametrize("path, parts", ALL, ids=IDS)
def test_imports_run_downwards(path, parts):
    here = layer_of(parts[0])
    for target, _ in imports(path, parts):
        if not target:
            continue
        there = layer_of(target[0])
        assert there in ALLOWED[here], (
            f"{'/'.join(parts)} ({here}) imports {'.'.join(target)} ({there})")


@pytest.mark.parametrize("path, parts", ALL, ids=IDS)
def test_no_accounting_below_the_plans(path, parts):
    if parts[0] not in NO_ACCOUNTING:
        return
    for target, _ in imports(path, parts):
        assert not target or target[0] != "accounting", (
            f"{'/'.join(parts)} imports {'.'.join(target)}: solvers, releases "
            "and data access decide no noise")


def test_plans_import_neither_solvers_nor_estimators():
    for path, parts in ALL:
        if parts[0] != "plans":
            continue
        for target, _ in imports(path, parts):
            assert target[0] not in LAYERS["solvers"] | LAYERS["public"], (
                f"{'/'.join(parts)} imports {'.'.join(target)}")


@pytest.mark.parametrize("path, parts", ALL, ids=IDS)
def test_no_private_name_of_another_part(path, parts):
    """A module takes only public names from another part of the package
    (a part's private names are its own business)."""
    for target, names in imports(path, parts):
        if not target or target[0] == parts[0]:
            continue
        private = [name for name in names if name.startswith("_")]
        assert not private, f"{'/'.join(parts)} takes {private} from {'.'.join(target)}"


def test_the_layers_cover_the_package():
    for _, parts in ALL:
        layer_of(parts[0])


def code_lines(path):
    """Lines holding code: not blank, not a comment, not a docstring."""
    source = path.read_text()
    docstrings = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef,
                             ast.AsyncFunctionDef)):
            body = node.body
            if (body and isinstance(body[0], ast.Expr)
                    and isinstance(body[0].value, ast.Constant)
                    and isinstance(body[0].value.value, str)):
                docstrings.update(range(body[0].lineno, body[0].end_lineno + 1))
    lines = set()
    skip = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT,
            tokenize.DEDENT, tokenize.ENDMARKER}
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type not in skip:
            lines.update(line for line in range(token.start[0], token.end[0] + 1)
                         if line not in docstrings)
    return len(lines)


def test_code_lines_counts_code_only():
    sample = PACKAGE.parent / "tests" / "test_layering.py"
    assert 0 < code_lines(sample) < len(sample.read_text().splitlines())


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_estimator_modules_are_thin(name):
    lines = code_lines(PACKAGE / f"{name}.py")
    assert lines <= MAX_ESTIMATOR_LINES, f"{name}.py has {lines} lines of code"
