"""Sphinx configuration of the skdpopt documentation.

Build from the repository root (see README.md)::

    python3 -m sphinx -W --keep-going -b html docs docs/_build/html

The example gallery executes every script in ``examples/``; set the
environment variable ``SKDPOPT_DOCS_NO_GALLERY=1`` (or pass
``-D plot_gallery=0``) to build the pages without running them.
"""

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE / "sphinxext"))

from public_api import write_api_lists  # noqa: E402

import skdpopt  # noqa: E402

project = "skdpopt"
author = "the skdpopt developers"
copyright = "the skdpopt developers"  # noqa: A001
release = skdpopt.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
    "myst_parser",
    "sphinx_gallery.gen_gallery",
    "bench_tables",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
templates_path = ["_templates"]
# Underscored files are fragments (generated lists, the page template,
# the benchmarks' generated tables): they are included or copied, never
# built as pages on their own.
exclude_patterns = ["_build", "_*.rst", "**/_*.rst", "benchmarks/_generated"]

# -- API reference ------------------------------------------------------------
# The lists of public names are written from ``__all__`` at every build, so a
# new estimator appears in the reference as soon as it is exported.
API_LISTS = write_api_lists(HERE)
autosummary_generate = ["api.rst", *API_LISTS]
autodoc_default_options = {"members": True, "inherited-members": False}
autodoc_typehints = "none"
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
# Warnings from these checks fail the build (-W): every parameter of every
# public callable is documented, with a description, in signature order.
numpydoc_validation_checks = {"PR01", "PR02", "PR03", "PR07", "GL08"}
# Methods inherited from scikit-learn, documented there.
numpydoc_validation_exclude = {r"\.set_\w+_request$", r"\.get_params$",
                               r"\.set_params$", r"\.score$",
                               r"\.__init__$"}


def skip_member(app, what, name, obj, skip, options):
    # scikit-learn's generated metadata-routing setters (set_score_request,
    # ...) are documented in scikit-learn's own reference.
    if name.startswith("set_") and name.endswith("_request"):
        return True
    return skip


def setup(app):
    app.connect("autodoc-skip-member", skip_member)


# -- Markdown pages (privacy arguments, benchmark tables) -------------------
myst_enable_extensions = ["dollarmath"]
myst_heading_anchors = 3

# -- Example gallery --------------------------------------------------------
sphinx_gallery_conf = {
    "examples_dirs": str(ROOT / "examples"),
    "gallery_dirs": "auto_examples",
    # Run every script, not only those named plot_*.
    "filename_pattern": r".*\.py$",
    "within_subsection_order": "gallery_order.QuickstartFirst",
    "plot_gallery": os.environ.get("SKDPOPT_DOCS_NO_GALLERY", "") in ("", "0"),
    "download_all_examples": False,
    "remove_config_comments": True,
    "show_memory": False,
    "min_reported_time": 1,
    # "Examples using X" on each API page.
    "doc_module": ("skdpopt",),
    "backreferences_dir": "generated/backreferences",
    "inspect_global_variables": False,
}

# -- HTML -------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"skdpopt {release}"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
}
# Pages without sub-pages need no left sidebar; their tables get the width.
html_sidebars = {page: [] for page in
                 ["index", "getting_started", "user_guide"]}
html_static_path = []
html_show_sourcelink = False
