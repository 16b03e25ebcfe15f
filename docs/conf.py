"""Sphinx configuration of the fairdecide documentation site.

Build (warnings are errors): ``docs/build.sh OUTDIR``, or
``python -m sphinx -W --keep-going -b html docs OUTDIR``.

The Markdown pages are read by myst-parser, the API reference is autodoc + numpydoc
(generated in memory by the ``fairdecide-api`` directive below, so nothing is written
into the source tree), and sphinx-gallery runs every script in ``examples/`` into
``docs/auto_examples/`` (git-ignored).
"""

from __future__ import annotations

import importlib
import inspect
import os
import re
import sys
import tempfile
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import Directive
from docutils.statemachine import StringList

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE / "_ext"))

from pipes_escape import escape_pipes  # noqa: E402

import fairdecide  # noqa: E402

# -- Project -------------------------------------------------------------------------
project = "fairdecide"
author = "fairdecide developers"
copyright = "fairdecide developers"
release = getattr(fairdecide, "__version__", "0.1.0")
version = release

extensions = [
    "myst_parser",
    "numpydoc",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
    "sphinx_gallery.gen_gallery",
]

root_doc = "index"
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = [
    "_build",
    "build",
    "auto_examples/*.ipynb",
    "auto_examples/*.py",
    "auto_examples/*.zip",
    "auto_examples/*.json",
    "auto_examples/*.md5",
    "**/*.codeobj.json",
]
templates_path = ["_templates"]
html_static_path = ["_static"] if (HERE / "_static").is_dir() else []

# -- Markdown (myst-parser) --------------------------------------------------------------
# dollarmath: $...$ and $$...$$ render as math; heading anchors let pages link to
# sections of other pages (page.md#a-section).
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "deflist"]
myst_heading_anchors = 3
myst_dmath_double_inline = True

# -- API reference (autodoc + numpydoc) --------------------------------------------------
autodoc_typehints = "none"  # the numpydoc Parameters sections carry the types
autodoc_member_order = "bysource"
autodoc_default_options = {"members": True}
autosummary_generate = False  # the fairdecide-api directive writes nothing to disk
numpydoc_show_class_members = False  # autodoc documents the members themselves
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False

# -- Theme ---------------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"fairdecide {release}"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "secondary_sidebar_items": ["page-toc"],
}
html_show_sourcelink = False

# -- Gallery (sphinx-gallery) ----------------------------------------------------------------
# The examples are plain scripts: every one is executed (filename_pattern matches all),
# in file-name order. Figures saved by examples go to a scratch folder, not into the
# source tree. Examples that need the public data sets read them from $FAIRDECIDE_DATA
# (docs/build.sh points it at ../shared/data when that exists, as .ci/run does).
FIGURES = Path(tempfile.mkdtemp(prefix="fairdecide-figures-"))
os.environ["FAIRDECIDE_FIGURES"] = str(FIGURES)
os.environ.setdefault("MPLBACKEND", "Agg")


sphinx_gallery_conf = {
    "examples_dirs": str(ROOT / "examples"),
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"\.py$",  # execute every example, not only plot_*.py
    "ignore_pattern": r"(__init__|conftest)\.py$",
    "within_subsection_order": "FileNameSortKey",
    "write_computation_times": False,  # would write sg_execution_times.rst into docs/
    "download_all_examples": False,
    "show_signature": False,
    "remove_config_comments": True,
    "image_scrapers": ("matplotlib", "saved_figures.scraper"),  # docs/_ext/
    "reset_modules": ("matplotlib",),
    "capture_repr": (),
    "min_reported_time": 0,
}


# -- The fairdecide-api directive ----------------------------------------------------------
# One API page per public module lists the module's ``__all__`` in a summary table and
# documents each object. An object also exported by ``fairdecide`` itself is documented
# once, on the ``fairdecide`` page, and linked from the subpackage's page, so every
# object has a single canonical entry (no duplicate-description warnings) and a name
# added to an ``__all__`` appears without editing any page.
TOP_LEVEL = "fairdecide"


def _kind(obj: object) -> str:
    if inspect.isclass(obj):
        return "exception" if issubclass(obj, BaseException) else "class"
    if inspect.isfunction(obj) or inspect.isbuiltin(obj) or inspect.ismethod(obj):
        return "function"
    return "data"


def _top_level_ids() -> dict[int, str]:
    top = importlib.import_module(TOP_LEVEL)
    return {id(getattr(top, name)): name for name in top.__all__}


def api_lines(modname: str) -> list[str]:
    """reStructuredText documenting the public names of ``modname``."""
    module = importlib.import_module(modname)
    names = list(getattr(module, "__all__", ()))
    if not names:
        raise ValueError(f"{modname} has no __all__ to document")
    top_ids = {} if modname == TOP_LEVEL else _top_level_ids()
    own = [n for n in names if id(getattr(module, n)) not in top_ids]
    shared = [n for n in names if id(getattr(module, n)) in top_ids]
    lines = [f".. currentmodule:: {modname}", ""]
    if own:
        lines += [".. autosummary::", "   :nosignatures:", ""]
        lines += [f"   {n}" for n in own]
        lines.append("")
    if shared:
        refs = ", ".join(f":py:obj:`{TOP_LEVEL}.{top_ids[id(getattr(module, n))]}`"
                         for n in shared)
        lines += [f"Also exported here, and documented with the top-level names: {refs}.",
                  ""]
    for n in own:
        obj = getattr(module, n)
        kind = _kind(obj)
        if kind == "data":
            # autodata would print the docstring of the value's type (tuple, dict)
            lines += [f".. py:data:: {n}", f"   :type: {type(obj).__name__}"]
            if len(repr(obj)) <= 80:
                lines.append(f"   :value: {obj!r}")
        else:
            lines.append(f".. auto{kind}:: {n}")
            if kind in ("class", "exception") and obj.__bases__ != (object,):
                lines.append("   :show-inheritance:")
        lines.append("")
    return lines


class FairdecideApi(Directive):
    """``.. fairdecide-api:: fairdecide.evaluation``: the module's public API."""

    required_arguments = 1
    has_content = False

    def run(self) -> list[nodes.Node]:
        source = self.state_machine.input_lines.source(
            self.lineno - self.state_machine.input_offset - 1)
        content = StringList(api_lines(self.arguments[0]), source=source)
        node = nodes.container()
        self.state.nested_parse(content, self.content_offset, node)
        return node.children


# -- Gallery titles ------------------------------------------------------------------------
# The examples' docstrings open with a one-sentence summary (sometimes wrapped over two
# lines) rather than a reST title. sphinx-gallery then writes a page whose label is not
# followed by a section, which every thumbnail's :ref: needs. This turns the opening
# paragraph of each generated example page into its title, when it is not one already.
_LABEL = re.compile(r"^\.\. _sphx_glr_auto_examples_\S+:\n\n", re.MULTILINE)


def _title_gallery_pages(app, docname: str, source: list[str]) -> None:
    if not docname.startswith("auto_examples/") or docname.endswith("/index"):
        return
    text = source[0]
    match = _LABEL.search(text)
    if match is None:
        return
    start = match.end()
    end = text.find("\n\n", start)
    paragraph = text[start:end]
    lines = paragraph.splitlines()
    underline = re.compile(r"^([=\-~^\"'`#*+:.])\1+\s*$")
    if (len(lines) >= 2 and underline.match(lines[1])) or underline.match(lines[0]):
        return  # already a title (the docstring is reST)
    title = " ".join(line.strip() for line in lines)
    rest_end = text.find(".. GENERATED FROM PYTHON SOURCE LINES", end)
    rest_end = len(text) if rest_end < 0 else rest_end
    rest = "\n".join(escape_pipes(text[end:rest_end].split("\n")))
    source[0] = (text[:start] + title + "\n" + "=" * len(title) + rest
                 + text[rest_end:])


# -- Plain-text formulas in docstrings ---------------------------------------------------
# The docstrings write formulas as plain text, with |x| for an absolute value or a norm
# ("F = sum_z |P(a | z) - P(a)|"). In reST, |text| is a substitution reference, an error.
# fairdecide defines no substitutions, so a bar in prose is escaped to render as written;
# inline literals, math roles, doctest blocks, literal blocks, directives' content and
# tables are left alone. This changes how text renders, never which warnings are shown.


def _escape_docstring_pipes(app, what, name, obj, options, lines: list[str]) -> None:
    lines[:] = escape_pipes(lines)


# scikit-learn adds set_<method>_request methods to every estimator (metadata routing);
# their docstrings link into scikit-learn's own documentation. They are documented there.
_SKLEARN_REQUEST = re.compile(r"^set_\w+_request$")


def _skip_member(app, what, name, obj, skip, options):
    if what == "class" and _SKLEARN_REQUEST.match(name):
        return True
    return None


def _remove_figures(app, exception) -> None:
    import shutil

    shutil.rmtree(FIGURES, ignore_errors=True)


def setup(app):
    app.add_directive("fairdecide-api", FairdecideApi)
    app.connect("source-read", _title_gallery_pages)
    # Before numpydoc (priority 500) turns the docstring into reST.
    app.connect("autodoc-process-docstring", _escape_docstring_pipes, priority=400)
    app.connect("autodoc-skip-member", _skip_member)
    app.connect("build-finished", _remove_figures)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
