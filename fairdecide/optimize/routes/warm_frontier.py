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

Whether the tolerances are kept warm is the solving chain's decision (its "tolerances"
stage, :mod:`fairdecide.optimize.engine.chain`): only where the dual simplex is the
program's first solver (small programs, two actions, or ``solver="highs-ds"``); where
it is the interior point, the dual simplex is slow even warm, and each tolerance is
solved alone, a belief's by the scenario cuts when they suit it (300 x 4 x 5, K = 32,
11 tolerances: warm 92.6 s, alone 31.1 s).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from fairdecide.criteria.base import Criterion
from fairdecide.optimize.engine.chain import Case, choose, resolve_solver, solve
from fairdecide.optimize.engine.tasks import TolerancesTask
from fairdecide.optimize.program.tradeoff import FairnessConstraint
from fairdecide.optimize.result import OptimizeResult
from fairdecide.optimize.routes.router import program_result
from fairdecide.optimize.routes.setup import finish, tabular_session

__all__ = ["warm_frontier"]

#: The settings a warm frontier takes; any other keyword solves each tolerance alone.
WARM_KEYWORDS = frozenset({"group_blind", "solver", "tol"})


def warm_frontier(problem: Any, world: Any, criterion: Criterion,
                  epsilons: Sequence[float], kwargs: dict[str, Any]
                  ) -> list[OptimizeResult | None] | None:
    """One verified result per tolerance from one warm HiGHS model, in the order given
    (None for a tolerance HiGHS did not solve: the caller solves it alone);
    None when the tolerances are not one exact linear program the solving chain keeps
    warm (criteria with cuts, cones or linearisation; programs whose first solver is
    not HiGHS's dual simplex; other solvers or settings): the caller then solves each
    alone."""
    if set(kwargs) - WARM_KEYWORDS:
        return None
    solver = resolve_solver(kwargs.get("solver"))  # any case: "HIGHS" is "highs"
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
    if not choose(Case.of_program(program, stage="tolerances"), solver).order:
        return None  # warm starts are the dual simplex's where it is the method: see above
    task = TolerancesTask(program=program, asked=solver)
    results: list[OptimizeResult | None] = [None] * len(eps)
    for i in order:
        task.epsilon = float(eps[i])
        res = solve(task)
        if res is None:  # infeasible, or HiGHS failed: left to the caller, to be solved
            continue  # alone and diagnosed as everywhere
        point = session.with_tradeoff(FairnessConstraint((task.epsilon,)))
        tally = point.tally()
        tally.add(res)
        tally.stats["build_seconds"], build = build, 0.0
        results[i] = finish(point, program_result(point, res, tally))
    return results
