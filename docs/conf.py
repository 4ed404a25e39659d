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
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store", "*.png"]

myst_enable_extensions = ["dollarmath", "amsmath", "deflist", "colon_fence"]
myst_heading_anchors = 3

# numpy-style docstrings
napoleon_google_docstring = False
napoleon_numpy_docstring = True
napoleon_use_rtype = False
napoleon_preprocess_types = False

autodoc_default_options = {"members": True, "show-inheritance": True}
autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_typehints_format = "short"
autosummary_generate = False
# optional dependencies the docs build need not install
autodoc_mock_imports: list[str] = []

smartquotes = False   # option names keep their two hyphens
html_theme = "alabaster"
html_title = f"gpuppdp {release}"
html_static_path: list[str] = []
html_theme_options = {"description": "GPU-accelerated privacy-preserving data publishing",
                      "fixed_sidebar": True}
