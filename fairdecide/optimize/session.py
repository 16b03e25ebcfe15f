"""One optimisation in progress, shared by the routes: the program, the criteria and
their declared capabilities, the trade-off, the belief, solver settings and statistics.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fairdecide.beliefs import Belief
from fairdecide.criteria.base import Criterion, Expansion
from fairdecide.exceptions import SolverError
from fairdecide.optimize.program import PolicyProgram, Program
from fairdecide.optimize.scenario_cuts import (
    ScenarioRun,
    scenario_cuts_suit,
    solve_scenario_cuts,
)
from fairdecide.optimize.solvers import SolveResult, solve_program
from fairdecide.optimize.tradeoff import MaxUtility, Tradeoff
from fairdecide.values import scenario_values

__all__ = ["Session"]


class Session:
    """Carries one optimisation: what every route needs, and the one way it evaluates a
    policy (:func:`fairdecide.values.scenario_values`, from the decision tables)."""

    def __init__(self, prog: PolicyProgram, criteria: list[Criterion], names: list[str],
                 tradeoff: Tradeoff, belief: Belief, solver: str | None, tol: float,
                 max_iter: int, stats: dict[str, Any] | None = None) -> None:
        self.prog, self.criteria, self.names = prog, criteria, names
        self.tradeoff, self.belief = tradeoff, belief
        self.solver, self.tol, self.max_iter = solver, tol, max_iter
        self.problem = prog.problem
        self.capabilities = [c.capabilities(self.problem) for c in criteria]
        if any(c.reads == "rows" for c in self.capabilities):
            prog.keep_unit_rows = True
        self.stats: dict[str, Any] = stats if stats is not None else {
            "solve_seconds": 0.0, "linearisation_steps": 0, "solver_iterations": 0}
        self.solver_name = "none"
        self.last_program: Program | None = None
        self.utility_tol = tol * max(1.0, float(np.abs(self.problem.utility).max()))

    def restricted(self, criteria: list[Criterion], names: list[str], tradeoff: Tradeoff
                   ) -> Session:
        """The same problem, belief and settings with other criteria and trade-off; the
        statistics are shared."""
        return Session(self.prog, criteria, names, tradeoff, self.belief, self.solver,
                       self.tol, self.max_iter, self.stats)

    # ---------------------------------------------------------------- evaluation
    def policy_of(self, pi: np.ndarray) -> Any:
        """The policy with free rows ``pi``."""
        return self.prog.policy(pi)

    def evaluate(self, pi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Utility (K,) and deviations (n_criteria, K) of free rows ``pi`` per scenario."""
        return scenario_values(self.prog.policy(pi), self.belief.worlds, self.problem,
                               self.criteria)

    def merit(self, pi: np.ndarray, tradeoff: Tradeoff) -> float:
        """The exact objective of ``tradeoff`` (to minimise) at free rows ``pi``."""
        U, F = self.evaluate(pi)
        return tradeoff.merit(U, F, self.belief)

    def feasible(self, pi: np.ndarray, tradeoff: Tradeoff) -> bool:
        U, F = self.evaluate(pi)
        return tradeoff.feasible(U, F, self.belief, self.tol, self.utility_tol)

    # ---------------------------------------------------------------- solving
    def solve(self, tradeoff: Tradeoff, criteria: list[Criterion], *,
              point: np.ndarray | None = None, trust: float | None = None,
              how: Expansion = "exact") -> SolveResult:
        """Build and solve the program of ``tradeoff`` over ``criteria`` (expanded at the
        free rows ``point`` as ``how`` says, within a trust region of radius ``trust``)."""
        program = self.prog.build(criteria, tradeoff, point=point, how=how,
                                  trust=None if point is None else trust)
        self.last_program = program
        res = solve_program(program, self.solver)
        self.stats["solve_seconds"] += res.seconds
        self.stats["solver_iterations"] += res.iterations or 0
        self.stats.update(n_variables=program.n_variables,
                          n_constraints=program.n_constraints, nnz=program.nnz)
        self.solver_name = res.solver
        if res.details is not None:
            self.stats.update(res.details)
        return res

    def solve_by_scenarios(self, tradeoff: Tradeoff, criteria: list[Criterion]
                           ) -> ScenarioRun | None:
        """The belief's program solved in the space of its scenarios
        (:mod:`fairdecide.optimize.scenario_cuts`), or None when that solver does not
        suit the session or hands the program back."""
        if not scenario_cuts_suit(self):
            return None
        run = solve_scenario_cuts(self, tradeoff, criteria)
        if run is None:
            return None
        d = run.details
        self.stats["solve_seconds"] += d["seconds"]
        self.stats["solver_iterations"] += d["iterations"]
        self.stats["scenario_cuts"] = d
        self.solver_name = (f"scenario cuts: {d['working_units']} of {d['units']} units "
                            f"free, {d['cuts']} cuts, {d['rounds']} rounds")
        return run

    def fail(self, res: SolveResult, what: str) -> SolverError:
        return SolverError(
            f"{res.solver} failed on the {what} program: {res.status}. Try another solver, "
            "e.g. solver='highs-ipm' or solver='CLARABEL'"
        )

    def _utility_program(self) -> SolveResult:
        """The solved program of the utility-maximising policy (no fairness)."""
        res = self.solve(MaxUtility(), [])
        if not res.ok:
            raise self.fail(res, "utility")
        return res

    def utility_optimum(self) -> np.ndarray:
        """Free rows of the utility-maximising policy (no fairness)."""
        run = self.solve_by_scenarios(MaxUtility(), [])
        if run is not None:
            return run.pi
        return self.prog.clean(self._utility_program().x)[0]

    def with_utility_floor(self) -> None:
        """If the trade-off needs the best utility U* (constrained utility), solve it and
        fix the trade-off's floor."""
        if self.tradeoff.needs_utility_optimum:
            run = self.solve_by_scenarios(MaxUtility(), [])
            if run is not None:
                u_star = -run.objective
            else:
                u_star = -self._utility_program().objective
            self.tradeoff = self.tradeoff.with_utility_optimum(u_star)
