"""A Pareto frontier of one exact program, re-solved warm from tolerance to tolerance.

Along a frontier only the right-hand sides of the tolerance rows change (F_c <= epsilon,
:attr:`Program.tolerance_rows`). The program is built once and kept in one HiGHS model;
the tolerances are visited from the largest down, so each one only tightens rows of the
last optimum's basis, which stays dual feasible: the dual simplex restarts from it, where
a cold solve would start over (benchmarks/results/pareto_warm.txt). Every point is
verified on its decision tables as :func:`~fairdecide.optimize_policy` verifies, and a
point HiGHS does not solve (a tolerance below the smallest deviation) is left to the
caller, :func:`~fairdecide.optimize.pareto_frontier`, which hands it to
:func:`~fairdecide.optimize_policy` to be diagnosed as everywhere.

Only where the dual simplex is HiGHS's method for the program (small programs, two
actions, or ``solver="highs-ds"``): where it is the interior point, the dual simplex is
slow even warm, and each tolerance is solved alone, a belief's by the scenario cuts
when they suit it (300 x 4 x 5, K = 32, 11 tolerances: warm 92.6 s, alone 31.1 s).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from fairdecide.criteria.base import Criterion
from fairdecide.optimize.engine.chain import HIGHS_NAMES, Case, choose, resolve_solver
from fairdecide.optimize.engine.highs_model import HighsModel
from fairdecide.optimize.engine.solvers import SolveResult
from fairdecide.optimize.program.tradeoff import FairnessConstraint
from fairdecide.optimize.result import OptimizeResult
from fairdecide.optimize.routes.router import program_result
from fairdecide.optimize.routes.session import Session
from fairdecide.optimize.routes.setup import finish, tabular_session

__all__ = ["warm_frontier"]

#: The settings a warm frontier takes; any other keyword solves each tolerance alone.
WARM_KEYWORDS = frozenset({"group_blind", "solver", "tol"})


def warm_frontier(problem: Any, world: Any, criterion: Criterion,
                  epsilons: Sequence[float], kwargs: dict[str, Any]
                  ) -> list[OptimizeResult | None] | None:
    """One verified result per tolerance from one warm HiGHS model, in the order given
    (None for a tolerance HiGHS did not solve: the caller solves it alone);
    None when the tolerances are not one exact linear program on HiGHS's route (criteria
    with cuts, cones or linearisation; the structured solver's large programs; other
    solvers or settings): the caller then solves each alone."""
    if set(kwargs) - WARM_KEYWORDS:
        return None
    solver = resolve_solver(kwargs.get("solver"))  # any case: "HIGHS" is "highs"
    if solver is not None and solver not in HIGHS_NAMES:
        return None
    eps = np.asarray(epsilons, dtype=float)
    order = np.argsort(-eps, kind="stable")
    first = FairnessConstraint((float(eps[order[0]]),))
    session = tabular_session(problem, world, criterion, (None, None, None, None, first),
                              kwargs.get("group_blind", False), solver,
                              kwargs.get("tol", 1e-6), 1)
    if not all(c.linear and c.program and not c.cuts and not c.cone
               for c in session.capabilities):
        return None
    t0 = time.perf_counter()
    program = session.prog.build(session.criteria, first)
    build = time.perf_counter() - t0
    choice = choose(Case.of_program(program), solver)
    method = choice.order[0]
    if not len(program.tolerance_rows) or method != "highs-ds":
        return None  # warm starts are the simplex method's: see the module
    model = HighsModel.from_program(program)
    model.set_method(method)
    rows = program.tolerance_rows
    below = np.full(len(rows), -np.inf)  # tolerance rows are inequality rows
    results: list[OptimizeResult | None] = [None] * len(eps)
    previous = None
    for i in order:
        tradeoff = FairnessConstraint((float(eps[i]),))
        model.set_row_bounds(rows, below, np.full(len(rows), eps[i]))
        iterations, seconds = model.iterations, model.seconds
        ok, status = model.solve()
        if not ok:  # infeasible, or HiGHS failed: left to the caller, to be solved
            continue  # alone and diagnosed as everywhere
        name = (f"HiGHS ({method})" if previous is None else
                f"HiGHS (dual simplex, warm from epsilon {previous:g})")
        res = SolveResult.of_model(model, ok, status, name, model.seconds - seconds,
                                   model.iterations - iterations)
        point = Session(session.prog, session.criteria, session.names, tradeoff,
                        session.belief, solver, session.tol, session.max_iter)
        point.stats.update(build_seconds=build, solve_seconds=res.seconds,
                           solver_iterations=res.iterations, n_variables=program.n_variables,
                           n_constraints=program.n_constraints, nnz=program.nnz)
        point.solver_name, build = name, 0.0
        point.stats["solver_choice"] = {
            **choice.as_dict(), "reason": choice.reason + (
                "" if previous is None else "; warm from the last tolerance's basis")}
        results[i] = finish(point, program_result(point, res, program))
        model.set_method("highs-ds")
        previous = float(eps[i])
    return results
