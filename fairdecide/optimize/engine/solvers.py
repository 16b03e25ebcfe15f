"""Solvers for assembled programs: the structured solver for large tabular programs
(:mod:`fairdecide.optimize.engine.structured`), HiGHS (in the one HiGHS wrapper,
:class:`~fairdecide.optimize.engine.highs_model.HighsModel`), cvxpy by name.

KL terms need an exponential-cone solver and go to Clarabel through cvxpy. highspy and
cvxpy are imported where first used, so ``import fairdecide`` stays fast.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from fairdecide.exceptions import FairdecideError, SolverError
from fairdecide.optimize.engine.rounds import Certificate
from fairdecide.optimize.program.policy_program import Program

__all__ = ["HIGHS_METHODS", "SolveResult", "check_solver", "solve_program"]

HIGHS_METHODS = {"highs": None, "highs-ds": "highs-ds", "highs-ipm": "highs-ipm"}
STRUCTURED = "structured"
#: the scenario-cut solver of beliefs (fairdecide.optimize.engine.scenario_cuts); a program it
#: hands back is solved as with the default
SCENARIOS = "scenarios"
#: the interior point over unit blocks (fairdecide.optimize.engine.unit_ipm)
UNIT_IPM = "unit-ipm"
#: the interior point in the policy's space for penalised beliefs with many terms
#: (fairdecide.optimize.engine.term_ipm); a program it does not take is solved as with
#: the default
TERM_IPM = "term-ipm"


@dataclass
class SolveResult:
    x: np.ndarray | None
    objective: float
    ok: bool
    status: str
    solver: str
    seconds: float
    iterations: int | None = None
    #: the solver's statistics and certificate by solver ("structured": its rounds and
    #: gap, or why it fell back; "interior_point": the uncrossed interior point's gap)
    details: dict[str, Any] | None = None
    #: d objective / d b_ub at the optimum (the inequality rows' duals), where the
    #: solver reports them at a vertex (HiGHS on the whole program)
    ub_duals: np.ndarray | None = None
    #: the master loop's certificate (the structured solver)
    certificate: Certificate | None = None

    @classmethod
    def of_model(cls, model: Any, ok: bool, status: str, solver: str, seconds: float,
                 iterations: int, details: dict[str, Any] | None = None, m_ub: int = 0
                 ) -> SolveResult:
        """The result of a solved HighsModel: its values and objective when ``ok``
        (otherwise HiGHS's status word), and the duals of its first ``m_ub`` rows (the
        inequality rows, as ``HighsModel.from_rows`` lays them out)."""
        return cls(model.values() if ok else None, model.objective if ok else np.nan, ok,
                   "optimal" if ok else status, solver, seconds, iterations, details,
                   model.row_duals()[:m_ub] if ok and m_ub else None)


def check_solver(solver: Any) -> None:
    """Raise unless ``solver`` is None, a HiGHS method name or an installed cvxpy solver."""
    if solver is None:
        return
    if not isinstance(solver, str):
        raise FairdecideError(f"solver must be a string such as 'highs', got {solver!r}")
    if solver.lower() in HIGHS_METHODS or solver.lower() in (STRUCTURED, SCENARIOS,
                                                              UNIT_IPM, TERM_IPM):
        return
    import cvxpy as cp

    if solver.upper() not in cp.installed_solvers():
        raise SolverError(
            f"solver {solver!r} is not usable here: use 'structured', 'scenarios', "
            "'unit-ipm', 'term-ipm', 'highs', 'highs-ds' or 'highs-ipm', or one of the "
            "installed cvxpy solvers "
            f"{cp.installed_solvers()}"
        )


def solve_program(prog: Program, solver: str | None = None, time_limit: float | None = None
                  ) -> SolveResult:
    """Solve ``prog``. ``solver`` None picks the structured solver for large tabular
    programs with few coupling rows and HiGHS otherwise; "structured" asks for it
    (falling back to HiGHS, and saying so, when it cannot certify an optimum); "highs"
    picks HiGHS's method by size; "highs-ds" and "highs-ipm" force one; any other name
    is passed to cvxpy."""
    from fairdecide.optimize.engine.structured import structured_suits

    if solver is not None and solver.lower() in (SCENARIOS, TERM_IPM):
        solver = None
    if prog.kl and (solver is None or solver.lower() in HIGHS_METHODS
                    or solver.lower() == STRUCTURED):
        solver = "CLARABEL"
    if (solver is not None and solver.lower() == STRUCTURED) or (
            solver is None and structured_suits(prog)):
        return _solve_structured(prog, time_limit)
    if solver is not None and solver.lower() == UNIT_IPM:
        return _solve_unit_ipm(prog, time_limit)
    if solver is None or solver.lower() in HIGHS_METHODS:
        return _solve_highs(prog, (solver or "highs").lower(), time_limit)
    return _solve_cvxpy(prog, solver, time_limit)


def _solve_structured(prog: Program, time_limit: float | None) -> SolveResult:
    """The structured solver, or HiGHS (stated in ``solver`` and ``details``) when it
    cannot certify an optimum."""
    from fairdecide.optimize.engine.structured import solve_structured

    t0 = time.perf_counter()
    run = solve_structured(prog, time_limit)
    seconds = time.perf_counter() - t0
    if run.ok or run.infeasible:
        rounds = run.certificate.rounds if run.certificate is not None else 0
        where = (f"structured: {run.details.get('working_units', 0)} of "
                 f"{run.details.get('units', 0)} units free, {rounds} rounds")
        return SolveResult(run.x, run.objective, run.ok, run.status, where, seconds,
                           run.iterations, {"structured": run.details}, run.ub_duals,
                           certificate=run.certificate)
    res = _solve_highs(prog, "highs", time_limit)
    res.seconds += seconds
    res.solver += f", after the structured solver fell back ({run.status})"
    res.details = {**(res.details or {}), "structured": run.details}
    return res


def _belief_interior(prog: Program, time_limit: float | None) -> SolveResult:
    """A belief's whole program where HiGHS's size rule picks the interior point: the
    interior point over unit blocks where its blocks are small enough (3.5-4x faster
    than HiGHS's on 32 scenarios of 1000 x 4 x 5 cells under epsilon 0.01 and lam 0.5,
    benchmarks/results/beliefs_unit_ipm.txt), HiGHS's without crossover otherwise."""
    from fairdecide.optimize.engine.unit_ipm import analyse

    layout = analyse(prog)
    if isinstance(layout, str):
        return _solve_interior(prog, time_limit)
    return _solve_unit_ipm(prog, time_limit, layout)


def _solve_unit_ipm(prog: Program, time_limit: float | None, layout: Any = None
                    ) -> SolveResult:
    """The interior point over unit blocks (on :func:`unit_ipm.analyse`'s ``layout``,
    if the caller has it), or HiGHS by size (stated in ``solver`` and ``details``) when
    the program does not suit it or it does not converge."""
    from fairdecide.optimize.engine.unit_ipm import solve_unit_ipm

    t0 = time.perf_counter()
    x, objective, status, info = solve_unit_ipm(prog, time_limit, layout)
    if x is not None:
        ub_duals = info.pop("ub_duals")
        return SolveResult(x, objective, True, "optimal", "unit interior point (no crossover)",
                           time.perf_counter() - t0, info.get("iterations"),
                           {"unit_ipm": info}, ub_duals)
    res = _solve_highs(prog, "highs", time_limit, unit_ipm=False)
    res.seconds += time.perf_counter() - t0
    res.solver += f", after the unit interior point fell back ({status})"
    res.details = {**(res.details or {}), "unit_ipm": {**info, "fallback_reason": status}}
    return res


def highs_method(prog: Program) -> str:
    """HiGHS's method for ``prog``: the dual simplex with two actions, else by size
    (:data:`~fairdecide.optimize.engine.highs_model.SIMPLEX_MAX_COLUMNS`, "policy")."""
    from fairdecide.optimize.engine.highs_model import method_by_size

    return "highs-ds" if prog.n_actions == 2 else method_by_size(prog.n_variables, "policy")


def _solve_highs(prog: Program, name: str, time_limit: float | None,
                 unit_ipm: bool = True) -> SolveResult:
    """HiGHS on the whole program, in the one HiGHS wrapper (its tolerances): the method
    by size for "highs", or the one named."""
    from fairdecide.optimize.engine.highs_model import HighsModel

    method = HIGHS_METHODS[name] or highs_method(prog)
    if name == "highs" and method == "highs-ipm" and prog.n_scenarios > 1:
        return (_belief_interior(prog, time_limit) if unit_ipm
                else _solve_interior(prog, time_limit))
    t0 = time.perf_counter()
    model = HighsModel.from_program(prog, time_limit)
    model.set_method(method)
    ok, status = model.solve()
    # d objective / d b_ub: HiGHS's row duals of the inequality rows
    return SolveResult.of_model(model, ok, status, f"HiGHS ({method})",
                                time.perf_counter() - t0, model.iterations,
                                m_ub=prog.A_ub.shape[0])


def _solve_interior(prog: Program, time_limit: float | None) -> SolveResult:
    """HiGHS's interior point without crossover, for a belief's whole program.

    A belief's optimum randomises in many units, and crossing the interior solution over
    to a basis is then most of the work: on 32 scenarios of 1000 x 4 x 5 cells under
    epsilon 0.01, 486 s with crossover against 25 s without (137,520 crossover simplex
    iterations after 28 interior-point ones). The solution is stopped at a relative
    primal-dual gap of ``IPM_GAP_TOL`` and reported in ``details`` (the objective lies
    within about 1e-8 relative of the vertex's; the policy is verified on its decision
    tables like every other). ``solver="highs-ipm"`` still crosses over.
    """
    from fairdecide.optimize.engine.highs_model import HighsModel

    t0 = time.perf_counter()
    model = HighsModel.from_program(prog, time_limit)
    model.set_method("highs-ipm", crossover=False)
    ok, status = model.solve()
    seconds = time.perf_counter() - t0
    details = {"interior_point": model.accuracy()}
    iterations = details["interior_point"]["ipm_iterations"]
    # the inequality rows' duals at the interior optimum: those of the optimal face's
    # centre where they are not unique (a supergradient like any other)
    return SolveResult.of_model(model, ok, status, "HiGHS (interior point, no crossover)",
                                seconds, iterations, details, m_ub=prog.A_ub.shape[0])


def _solve_cvxpy(prog: Program, solver: str, time_limit: float | None) -> SolveResult:
    import cvxpy as cp

    x = cp.Variable(prog.n_variables)
    cons = [prog.A_eq @ x == prog.b_eq]
    if prog.A_ub.shape[0]:
        cons.append(prog.A_ub @ x <= prog.b_ub)
    fin_lb, fin_ub = np.isfinite(prog.lb), np.isfinite(prog.ub)
    cons.append(x[np.flatnonzero(fin_lb)] >= prog.lb[fin_lb])
    if fin_ub.any():
        cons.append(x[np.flatnonzero(fin_ub)] <= prog.ub[fin_ub])
    for term in prog.kl:
        m = x[term.cols]
        pg = term.A_group @ m + term.b_group
        pp = term.A_pool @ m + term.b_pool
        cons.append(x[term.f_index] >= term.weight @ cp.kl_div(pg, pp))
    problem = cp.Problem(cp.Minimize(prog.c @ x), cons)
    kwargs: dict[str, Any] = {}
    if solver.upper() == "HIGHS":
        kwargs["warm_start"] = False
    t0 = time.perf_counter()
    try:
        problem.solve(solver=solver.upper(), **kwargs)
    except cp.error.SolverError as exc:
        return SolveResult(None, np.nan, False, f"solver error: {exc}", solver.upper(),
                           time.perf_counter() - t0)
    except (ValueError, KeyError) as exc:
        raise SolverError(
            f"solver {solver!r} is not usable here ({exc}); installed cvxpy solvers are "
            f"{cp.installed_solvers()}"
        ) from None
    seconds = time.perf_counter() - t0
    ok = problem.status in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE) and x.value is not None
    return SolveResult(
        x=np.asarray(x.value) if ok else None,
        objective=float(problem.value) if ok else np.nan,
        ok=ok,
        status=str(problem.status),
        solver=f"cvxpy/{solver.upper()}",
        seconds=seconds,
        iterations=None,
    )
