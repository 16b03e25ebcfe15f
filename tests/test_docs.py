"""The documentation's code runs, and the site's pages stay complete.

- The ```python blocks of each user guide, docs/how_to_add_a_criterion.md and
  docs/optimization.md run
  verbatim, in order, in one namespace per page (later blocks use earlier names), as
  README.md's do (tests/test_readme.py). A block fails its page's test by raising.
- The criterion of how_to_add_a_criterion.md is under fifty lines of code.
- Every result file in benchmarks/results/ (.txt, .md) is included by docs/benchmarks.md,
  every benchmark script is listed there, and every public subpackage has an API page.

The Sphinx build itself (docs/build.sh, warnings as errors) runs in CI, not here.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
import sys
import types
from pathlib import Path

import pytest

import fairdecide

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
RUN_PAGES = [
    "guides/fit_a_fair_policy.md",
    "guides/decide_under_uncertainty.md",
    "guides/evaluate_historical_decisions.md",
    "guides/scikit_learn.md",
    "how_to_add_a_criterion.md",
    "optimization.md",
]

_FENCE = re.compile(r"^```python[ \t]*\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)


def python_blocks(page: Path) -> list[tuple[int, str]]:
    """(first code line number, source) of each ```python block of ``page``."""
    text = page.read_text(encoding="utf-8")
    return [(text.count("\n", 0, m.start(1)) + 1, m.group(1)) for m in _FENCE.finditer(text)]


@pytest.mark.parametrize("page", RUN_PAGES)
def test_page_code_runs(page: str) -> None:
    import sklearn

    path = DOCS / page
    blocks = python_blocks(path)
    assert blocks, f"no ```python blocks in {path}"
    # A real module, so that dataclasses defined on the page can find their module.
    module = types.ModuleType("fairdecide_docs_page")
    sys.modules[module.__name__] = module
    try:
        for line, source in blocks:
            # Pad with blank lines so tracebacks give the page's own line numbers.
            exec(compile("\n" * (line - 1) + source, str(path), "exec"), module.__dict__)
    finally:
        del sys.modules[module.__name__]
        sklearn.set_config(enable_metadata_routing=False)


def test_new_criterion_is_under_fifty_lines() -> None:
    blocks = python_blocks(DOCS / "how_to_add_a_criterion.md")
    criterion = next(src for _, src in blocks if "class FourFifths" in src)
    code = [line for line in criterion.splitlines() if line.strip()]
    assert len(code) < 50, f"the worked criterion has {len(code)} non-blank lines"


def test_benchmark_results_and_scripts_are_on_the_benchmarks_page() -> None:
    page = (DOCS / "benchmarks.md").read_text(encoding="utf-8")
    results = ROOT / "benchmarks" / "results"
    for f in sorted([*results.glob("*.txt"), *results.glob("*.md")]):
        assert f"{{literalinclude}} ../benchmarks/results/{f.name}" in page, (
            f"docs/benchmarks.md does not include {f.name}")
    for script in sorted((ROOT / "benchmarks").glob("bench_*.py")):
        assert f"`{script.name}`" in page, f"docs/benchmarks.md does not list {script.name}"


def test_every_public_subpackage_has_an_api_page() -> None:
    api = DOCS / "api"
    index = (api / "index.rst").read_text(encoding="utf-8")
    for info in pkgutil.iter_modules(fairdecide.__path__):
        if not info.ispkg or info.name.startswith("_"):
            continue
        module = importlib.import_module(f"fairdecide.{info.name}")
        if not getattr(module, "__all__", None) or info.name == "experiments":
            continue
        page = api / f"{info.name}.rst"
        assert page.is_file(), f"fairdecide.{info.name} has no page docs/api/{page.name}"
        assert f".. fairdecide-api:: fairdecide.{info.name}" in page.read_text("utf-8")
        assert re.search(rf"^   {info.name}$", index, re.MULTILINE), (
            f"docs/api/index.rst does not list {info.name}")


def test_escape_pipes_keeps_literals() -> None:
    sys.path.insert(0, str(DOCS / "_ext"))
    try:
        from pipes_escape import escape_pipes
    finally:
        sys.path.remove(str(DOCS / "_ext"))
    lines = ["F = sum_z |P(a | z) - P(a)|, ``a | b`` and :math:`|x|`", "",
             ">>> print('|x|')", "|x|", "", "Example::", "", "    |y|"]
    out = escape_pipes(lines)
    assert out[0] == r"F = sum_z \|P(a \| z) - P(a)\|, ``a | b`` and :math:`|x|`"
    assert out[2:5] == lines[2:5] and out[7] == lines[7]
