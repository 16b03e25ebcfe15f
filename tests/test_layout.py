"""The package's layout as the design reads (docs/architecture.md): checked on the
source's imports, so a change that breaks it fails here, not in a drawing."""

from __future__ import annotations

import ast
from pathlib import Path

import fairdecide

PACKAGE = Path(fairdecide.__file__).parent
OPTIMIZE = PACKAGE / "optimize"


def _imports(path: Path) -> set[str]:
    """Modules and names a source file imports at run time (``module`` and
    ``module.name``); imports under ``if TYPE_CHECKING:`` are annotations only."""
    tree = ast.parse(path.read_text())
    typing_only = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If)
                   and getattr(node.test, "id", None) == "TYPE_CHECKING"
                   for n in ast.walk(node)}
    found = set()
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{a.name}" for a in node.names)
    return found


def _users(folder: Path, prefix: str) -> set[str]:
    return {str(p.relative_to(PACKAGE)) for p in folder.rglob("*.py")
            if any(m.startswith(prefix) for m in _imports(p))}


def test_only_the_wrapper_builds_highs_models():
    """highspy, and scipy's linprog (HiGHS with scipy's own tolerances), appear in one
    module: every tolerance is set in one place (issue 24)."""
    users = {str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py")
             if {"highspy", "scipy.optimize.linprog"} & _imports(p)}
    assert users == {"optimize/engine/highs_model.py"}


def test_program_engine_routes_are_layered():
    """program/ (what is solved) imports neither engine/ nor routes/; engine/ (what
    solves it) does not import routes/ (how a session is solved)."""
    assert _users(OPTIMIZE / "program", "fairdecide.optimize.engine") == set()
    assert _users(OPTIMIZE / "program", "fairdecide.optimize.routes") == set()
    assert _users(OPTIMIZE / "engine", "fairdecide.optimize.routes") == set()


def test_a_moved_name_warns_and_works():
    import warnings

    import fairdecide.models as models
    from fairdecide.data import TabularCounts

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        moved = models.TabularCounts
    assert moved is TabularCounts
    assert any(issubclass(w.category, DeprecationWarning)
               and "fairdecide.data.TabularCounts" in str(w.message) for w in caught)
