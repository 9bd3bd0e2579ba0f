"""Sphinx configuration: the guides (Markdown, through MyST) and the API reference.

Build with ``make docs`` (``sphinx-build -W --keep-going -b html docs docs/_build/html``).
Warnings are errors, and :func:`check_documented` turns every public name of the API
pages that has no docstring, or no example (in its own docstring or elsewhere in its
module), into
a warning, so an undocumented or broken public name fails the build.
"""

from __future__ import annotations

import inspect
import sys
from pathlib import Path

from sphinx.util import logging

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

project = "pevpm"
author = "the pevpm authors"
copyright = "2026, the pevpm authors"

extensions = ["sphinx.ext.autodoc", "sphinx.ext.napoleon", "myst_parser"]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "img/README*"]
myst_heading_anchors = 3
# Guides link to source files and examples outside docs/; those are plain links.
suppress_warnings = ["myst.xref_missing"]

autodoc_default_options = {"members": True, "undoc-members": True, "show-inheritance": True}
autodoc_member_order = "bysource"
autodoc_typehints = "signature"
napoleon_google_docstring = True
napoleon_numpy_docstring = True

html_theme = "alabaster"
html_title = "pevpm"
html_static_path: list[str] = []

#: Objects that must have a docstring in the API pages.
DOCUMENTED_KINDS = ("module", "class", "exception", "function", "method", "property")
#: Objects that must also show an example (their own, or a ``>>>`` line elsewhere in
#: their module that names them).
EXAMPLE_KINDS = ("class", "exception", "function")

_log = logging.getLogger("pevpm.docs")


def _module_examples(obj) -> str:
    """Every example line (``>>>``/``...``) in the docstrings of ``obj``'s module."""
    module = sys.modules.get(getattr(obj, "__module__", "") or "")
    try:
        source = inspect.getsource(module) if module else ""
    except (OSError, TypeError):
        source = ""
    return "\n".join(line for line in source.splitlines() if line.lstrip().startswith(
        (">>>", "... ")))


def check_documented(app, what, name, obj, options, lines) -> None:
    """Warn about a public name without a docstring, or without an example."""
    short = name.rsplit(".", 1)[-1]
    if short.startswith("_") or what not in DOCUMENTED_KINDS:
        return
    target = obj.fget if isinstance(obj, property) else obj
    home = getattr(target, "__module__", None)
    if what != "module" and home and not name.startswith(home + "."):
        return  # an imported name: checked where it is defined
    own = inspect.getdoc(obj) if not isinstance(obj, property) else inspect.getdoc(obj.fget)
    if not own or not any(line.strip() for line in lines):
        _log.warning(f"{name}: public {what} without a docstring", type="pevpm",
                     subtype="undocumented")
        return
    if what in EXAMPLE_KINDS and ">>>" not in own and short not in _module_examples(obj):
        _log.warning(f"{name}: public {what} without an example (>>> in its docstring "
                     "or its module's)", type="pevpm", subtype="no-example")


def setup(app):
    app.connect("autodoc-process-docstring", check_documented)
    return {"parallel_read_safe": True}
