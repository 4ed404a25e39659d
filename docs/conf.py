"""Sphinx configuration for the gpuppdp documentation.

Build (warnings are errors):  sphinx-build -W --keep-going -b html docs docs/_build/html
"""

from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))   # the checkout's gpuppdp, ahead of an installed one
sys.path.insert(0, HERE)                    # the local extension (cliref)

project = "gpuppdp"
author = "the gpuppdp authors"
copyright = "2026, the gpuppdp authors"

import re  # noqa: E402

import gpuppdp  # noqa: E402

release = version = gpuppdp.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.napoleon",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
    "myst_parser",
    "cliref",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store"]

myst_enable_extensions = ["dollarmath", "amsmath", "deflist", "colon_fence"]
myst_heading_anchors = 3

# numpy-style docstrings
napoleon_google_docstring = False
napoleon_numpy_docstring = True
napoleon_use_rtype = False
napoleon_use_ivar = True   # "Attributes" as fields: no second entry beside a property
napoleon_preprocess_types = False

autodoc_default_options: dict = {}   # :members: and :show-inheritance: where wanted
autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_typehints_format = "short"
autodoc_preserve_defaults = True   # defaults as written in the source, not their repr
autosummary_generate = False
# optional dependencies the docs build need not install
autodoc_mock_imports: list[str] = []

smartquotes = False   # option names keep their two hyphens
html_theme = "alabaster"
html_title = f"gpuppdp {release}"
html_static_path: list[str] = []
html_theme_options = {"description": "GPU-accelerated privacy-preserving data publishing",
                      "fixed_sidebar": True}


# -- docstrings as the package writes them ------------------------------------------------------
# The package's numpy-style docstrings are read as they are (no edit to the package for the
# docs); two hooks smooth what napoleon would otherwise turn into docutils warnings.

_FIELD_SECTIONS = {"parameters", "other parameters", "attributes", "returns", "yields",
                   "raises", "warns"}
_ENTRY = re.compile(r"^(?P<names>[\w*][\w*, ]*?) : (?P<text>.+)$")


def _is_prose(text: str) -> bool:
    """A ``name : text`` whose text is a sentence, not a type (napoleon would take it for
    one): it opens an inline literal or a bracket it does not close, or is a long phrase."""
    unbalanced = text.count("``") % 2 or text.count("(") != text.count(")") \
        or text.count("[") != text.count("]")
    return bool(unbalanced) or len(text.split()) > 8


def numpy_entries(app, what, name, obj, options, lines):
    """Before napoleon: in the field sections, join a list of names wrapped over two lines
    (``a, b, c,`` / ``d, e``) and move a description written after ``name :`` below it."""
    out, section, i = [], None, 0
    while i < len(lines):
        line = lines[i]
        if i + 1 < len(lines) and lines[i + 1].strip() and set(lines[i + 1].strip()) == {"-"}:
            section = line.strip().lower()
        elif section in _FIELD_SECTIONS and line and not line[0].isspace():
            while line.rstrip().endswith(",") and i + 1 < len(lines) and lines[i + 1] \
                    and not lines[i + 1][0].isspace():
                i += 1
                line = line.rstrip() + " " + lines[i].strip()
            match = _ENTRY.match(line)
            if match and section != "raises" and _is_prose(match["text"]):
                out += [match["names"], "    " + match["text"]]
                i += 1
                continue
        out.append(line)
        i += 1
    lines[:] = out


_FOOTNOTE = re.compile(r"^(\s*)\.\. \[([^\]]+)\] ")
_CITED = re.compile(r"\[([0-9]+|[A-Za-z][\w.-]*)\]_")


def local_references(app, what, name, obj, options, lines):
    """After napoleon: a docstring's ``.. [1]`` references become a list of its own and
    ``[1]_`` plain text, so that two docstrings on one page may both have a [1]."""
    for i, line in enumerate(lines):
        line = _CITED.sub(r"[\1]", line)
        lines[i] = _FOOTNOTE.sub(lambda m: f"{m[1]}-  [{m[2]}] ", line)


def setup(app):
    app.connect("autodoc-process-docstring", numpy_entries, priority=100)     # before napoleon
    app.connect("autodoc-process-docstring", local_references, priority=900)  # after it
