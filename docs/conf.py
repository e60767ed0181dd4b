"""Sphinx configuration of the tinytc-py documentation (`make docs` → docs/_build/html)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
# autodoc reads the sources' classes: mypyc's native classes (Location, CompilerContext...) keep
# no docstrings (src/tinytc_py/compiled.py).
os.environ["TINYTC_PURE_PYTHON"] = "1"

project = "tinytc-py"
author = "the tinytc-py developers"
copyright = "2026, the tinytc-py developers"  # noqa: A001 - Sphinx's name for it
release = "0.1.0"

extensions = ["sphinx.ext.autodoc", "myst_parser"]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = ["_build", "_*.rst"]  # _name.rst: included by a page
myst_heading_anchors = 3

autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_default_options = {"undoc-members": False}
# The public names live in private modules but are documented (and used) as tinytc_py.X.
add_module_names = False

html_theme = "alabaster"
html_theme_options = {"description": "tensor language → SPIR-V, in Python"}
