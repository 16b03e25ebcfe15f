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


#: The package's floors, bottom first (docs/architecture.md): a module imports only its
#: own floor's modules and the floors below (imports under TYPE_CHECKING included: an
#: annotation that names a module above is an arrow up too).
FLOORS = [
    {"exceptions", "_common"}, {"labels"}, {"problem"}, {"data"}, {"policies"},
    {"worlds"}, {"models", "datasets", "privacy"}, {"uncertainty"}, {"criteria"},
    {"evaluation", "plot"}, {"optimize"},
    {"estimators", "experiments", "smoothness", "assignment"}, {"report"},
    {"demo"}, {"cli"}, {"__init__", "__main__"},
]


def _room(module: str) -> str:
    parts = module.split(".")
    return "__init__" if len(parts) == 1 else parts[1]


def _all_imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
    return {m for m in found if m == "fairdecide" or m.startswith("fairdecide.")}


def test_no_module_imports_a_floor_above_its_own():
    floor = {room: k for k, rooms in enumerate(FLOORS) for room in rooms}
    up = []
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(PACKAGE.parent).with_suffix("")
        here = "__init__" if rel.parts == ("fairdecide", "__init__") else (
            rel.parts[1] if len(rel.parts) > 1 else rel.parts[0])
        here = here.split(".")[0]
        assert here in floor, f"{rel}: a room no floor lists (add it to FLOORS)"
        for module in _all_imports(path):
            there = _room(module)
            if there in floor and floor[there] > floor[here]:
                up.append(f"{rel} -> {module}")
    assert not up, f"imports of a floor above: {up}"
