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


#: The solving chain: the one place a solver is picked (issue 52, item 3).
CHAIN = {"optimize/engine/chain.py", "optimize/engine/cases.py"}
#: What a module outside the chain may take from it: the loop, the chooser and its
#: case, the resolution of a name, the refusal of one, the method of a kept model.
CHAIN_DOORS = {"solve", "solve_program", "choose", "Choice", "Case", "resolve_solver",
               "check_asked", "highs_method"}


def _decisions(path: Path, names: set[str]) -> list[str]:
    """Where the source at ``path`` decides by a solver's name or the chain's sizes: a
    solver's name compared or handed to a call (a progress label, Rounds(...), aside; a
    statistics key is neither), the asked solver compared, a name or size rule taken
    from the chain other than through its doors."""
    tree = ast.parse(path.read_text())
    found = []

    def named(node: ast.AST) -> bool:
        return isinstance(node, ast.Constant) and node.value in names

    def asked(node: ast.AST) -> bool:
        return (isinstance(node, ast.Name) and node.id in ("solver", "asked")) or (
            isinstance(node, ast.Attribute) and node.attr in ("solver", "asked"))

    for node in ast.walk(tree):
        where = f"{path.relative_to(PACKAGE)}:{getattr(node, 'lineno', 0)}"
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            parts = [e for s in sides for e in (s.elts if isinstance(s, ast.Tuple | ast.Set
                                                                     | ast.List) else [s])]
            if any(named(p) for p in parts):
                found.append(f"{where}: compares a solver's name")
            if any(asked(s) for s in sides):
                found.append(f"{where}: reads the asked solver")
        elif isinstance(node, ast.Call):
            callee = getattr(node.func, "id", getattr(node.func, "attr", ""))
            args = [*node.args, *(k.value for k in node.keywords)]
            if callee != "Rounds" and any(named(a) for a in args):
                found.append(f"{where}: hands {callee} a solver's name")
        elif isinstance(node, ast.ImportFrom) and node.module in (
                "fairdecide.optimize.engine.chain", "fairdecide.optimize.engine.cases",
                "fairdecide.optimize.engine.highs_model"):
            taken = {a.name for a in node.names}
            if node.module.endswith("highs_model"):
                taken &= {"SIMPLEX_MAX_COLUMNS", "method_by_size"}
            else:
                taken -= CHAIN_DOORS
            if taken:
                found.append(f"{where}: takes {sorted(taken)} from the chain")
        elif (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
              and node.value.id in ("chain", "cases") and node.attr not in CHAIN_DOORS):
            found.append(f"{where}: reads {node.value.id}.{node.attr}")
    return found


def test_solver_names_and_size_rules_are_read_only_in_the_chain():
    """Issue 52, item 3: which solver runs, and with which HiGHS method, is decided in
    the chain alone. No other module compares a solver's name or hands one to a call,
    reads the solver asked for, or takes a size threshold or a rule from the chain: the
    distributed master, constraint generation's warm dual, the warm frontier and a
    ranking's programs go through its doors (on b19dcbc: "highs-ds" in distributed.py,
    dual_form.py and _exposure_lp.py, method_by_size in _ranking_lp.py, HIGHS_NAMES in
    warm_frontier.py, a dispatch on "term-ipm" in session.py, the chain's thresholds in
    term_ipm.py, solver= refused in distributed.py and parametric.py)."""
    from fairdecide.optimize.engine import chain

    names = {s.name for s in chain.SOLVERS} | {"highs"}
    found = [f for p in sorted(PACKAGE.rglob("*.py"))
             if str(p.relative_to(PACKAGE)) not in CHAIN for f in _decisions(p, names)]
    assert found == []


def test_one_call_reaches_highs_within_six_layers():
    """Issue 52, item 4: optimize_policy hands its program to HiGHS through at most six
    functions of fairdecide.optimize, itself and HighsModel.solve included
    (optimize_policy, _optimize, the route, the chain's loop, the solver's run, HiGHS):
    eight on b19dcbc (Route.solve, the route's run, Session.solve, solve_program,
    _solve_highs between)."""
    import sys

    from fairdecide import Independence, optimize_policy
    from fairdecide.datasets import make_bail_problem

    problem, world = make_bail_problem()
    depths = []

    def watch(frame, event, arg):
        code = frame.f_code
        if (event == "call" and code.co_name == "solve"
                and code.co_filename.endswith("highs_model.py")):
            depth, f = 0, frame
            while f is not None:
                depth += "/fairdecide/optimize/" in f.f_code.co_filename
                f = f.f_back
            depths.append(depth)

    sys.setprofile(watch)
    try:
        optimize_policy(problem, world, Independence(), epsilon=0.05)
    finally:
        sys.setprofile(None)
    assert depths and max(depths) <= 6, depths


def test_a_session_carries_nothing_a_route_found():
    """Issue 52, item 4: a route returns what its solves found (statistics, the solver,
    its certificates, the trade-off it solved) and the session holds none of it: the
    same session solved twice gives the same figures twice and is left as it was (on
    b19dcbc the session's shared ``stats`` grew with every solve, and its trade-off took
    the utility floor)."""
    from fairdecide import Independence
    from fairdecide.datasets import make_bail_problem
    from fairdecide.optimize.routes.router import choose_route
    from fairdecide.optimize.routes.setup import tabular_session

    problem, world = make_bail_problem()
    session = tabular_session(problem, world, Independence(),
                              (None, None, 0.05, None, None), False, None, 1e-6, 200)
    before = dict(vars(session))
    route = choose_route(session.capabilities, "free")
    first, second = route.solve(session), route.solve(session)
    assert vars(session) == before and "stats" not in before
    assert session.tradeoff.utility_floor is None  # the floor is the route's, returned
    assert first.tradeoff.utility_floor == second.tradeoff.utility_floor is not None
    assert first.stats["solver_iterations"] == second.stats["solver_iterations"] > 0
    assert first.certificates["optimality"]["certified"] and first.solver.startswith("HiGHS")
