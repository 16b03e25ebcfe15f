"""One optimisation in progress, shared by the routes: the criteria and their declared
capabilities, the trade-off, the belief, the tolerances, statistics and the one way a
policy is evaluated (:class:`SessionBase`); a free (tabular) policy's program and solver
settings (:class:`Session`). The parametric family's session
(:class:`~fairdecide.optimize.routes.parametric.ParametricSession`) is the other kind.
"""

from __future__ import annotations

import abc
from typing import Any

import numpy as np

from fairdecide.criteria.base import ByCriterion, Criterion, Expansion
from fairdecide.criteria.values import scenario_values
from fairdecide.exceptions import SolverError
from fairdecide.optimize.engine.chain import BELIEF_SOLVERS, Case, choose, resolve_solver
from fairdecide.optimize.engine.generation import generate
from fairdecide.optimize.engine.scenario_cuts import ScenarioRun, solve_scenario_cuts
from fairdecide.optimize.engine.solvers import SolveResult, solve_program
from fairdecide.optimize.engine.term_ipm import solve_term_ipm
from fairdecide.optimize.program.policy_program import PolicyProgram, Program
from fairdecide.optimize.program.tradeoff import MaxUtility, Tradeoff
from fairdecide.problem import DecisionProblem
from fairdecide.uncertainty.beliefs import Belief

__all__ = ["Session", "SessionBase"]


class SessionBase(abc.ABC):
    """What every route needs, whatever the policy family: the problem, belief, criteria
    (with their capabilities), trade-off, tolerances and statistics, and the one way a
    policy is evaluated (:func:`fairdecide.criteria.values.scenario_values`, from the decision
    tables). A kind of session says what its parameters are (:meth:`policy_of`)."""

    def __init__(self, problem: DecisionProblem, belief: Belief, criteria: list[Criterion],
                 names: list[str], tradeoff: Tradeoff, tol: float, max_iter: int,
                 stats: dict[str, Any]) -> None:
        self.problem, self.belief = problem, belief
        self.criteria, self.names, self.tradeoff = criteria, names, tradeoff
        self.tol, self.max_iter = tol, max_iter
        self.capabilities = [c.capabilities(problem) for c in criteria]
        self.utility_tol = tol * max(1.0, float(np.abs(problem.utility).max()))
        self.stats = stats
        self.solver_name = "none"
        #: the ConfidenceSet the value is the worst case over (a free policy's session)
        self.confidence: Any = None

    def certify(self, name: str, certificate: dict[str, Any]) -> None:
        """Keep ``certificate`` as ``result.certificates[name]`` ("optimality": the master
        loop's, :mod:`fairdecide.optimize.engine.rounds`; a criterion's name: its own)."""
        self.stats.setdefault("certificates", {})[name] = certificate

    @abc.abstractmethod
    def policy_of(self, params: np.ndarray) -> Any:
        """The policy with parameters ``params`` (free rows, or a family's theta)."""

    def evaluate(self, params: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Exact utilities (K,) and deviations (n_criteria, K) of the policy at
        ``params``, from its decision tables in every scenario."""
        return scenario_values(self.problem, self.belief.worlds, self.policy_of(params),
                               self.criteria)

    def merit(self, params: np.ndarray, tradeoff: Tradeoff) -> float:
        """The exact objective of ``tradeoff`` (to minimise) at ``params``."""
        U, F = self.evaluate(params)
        return tradeoff.merit(U, F, self.belief)

    def feasible(self, params: np.ndarray, tradeoff: Tradeoff) -> bool:
        U, F = self.evaluate(params)
        return tradeoff.feasible(U, F, self.belief, self.tol, self.utility_tol)


class Session(SessionBase):
    """A free (tabular) policy's optimisation: its program, the solver asked for, and
    the routes' ways to solve it."""

    def __init__(self, prog: PolicyProgram, criteria: list[Criterion], names: list[str],
                 tradeoff: Tradeoff, belief: Belief, solver: str | None, tol: float,
                 max_iter: int, stats: dict[str, Any] | None = None) -> None:
        super().__init__(prog.problem, belief, criteria, names, tradeoff, tol, max_iter,
                         stats if stats is not None else {
                             "solve_seconds": 0.0, "linearisation_steps": 0,
                             "solver_iterations": 0})
        self.prog, self.solver = prog, solver
        self.confidence = prog.confidence
        if any(c.reads == "rows" for c in self.capabilities):
            prog.keep_unit_rows = True
        self.last_program: Program | None = None

    def restricted(self, criteria: list[Criterion], names: list[str], tradeoff: Tradeoff
                   ) -> Session:
        """The same problem, belief and settings with other criteria and trade-off; the
        statistics are shared."""
        return Session(self.prog, criteria, names, tradeoff, self.belief, self.solver,
                       self.tol, self.max_iter, self.stats)

    # ---------------------------------------------------------------- evaluation
    def policy_of(self, params: np.ndarray) -> Any:
        """The policy with free rows ``params``."""
        return self.prog.policy(params)

    # ---------------------------------------------------------------- solving
    def solve(self, tradeoff: Tradeoff, criteria: list[Criterion], *,
              point: np.ndarray | None = None, trust: float | None = None,
              how: Expansion = "exact") -> SolveResult:
        """Build and solve the program of ``tradeoff`` over ``criteria`` (expanded at the
        free rows ``point`` as ``how`` says, within a trust region of radius ``trust``)."""
        program = self.prog.build(criteria, tradeoff, point=point, how=how,
                                  trust=None if point is None else trust)
        self.last_program = program
        res = solve_program(program, self.solver,
                            belief=self.belief_case(tradeoff, criteria))
        self.stats["solve_seconds"] += res.seconds
        self.stats["solver_iterations"] += res.iterations or 0
        self.stats.update(n_variables=program.n_variables,
                          n_constraints=program.n_constraints, nnz=program.nnz)
        self.solver_name = res.solver
        self._record_choice(res.choice)
        if res.details is not None:
            self.stats.update(res.details)
        if res.certificate is not None:
            self.certify("optimality", res.certificate.as_dict())
        else:  # this program's solver certifies nothing: an earlier program's must go
            self.stats.get("certificates", {}).pop("optimality", None)
        return res

    def generate(self, tradeoff: Tradeoff, criteria: list[Criterion], names: list[str]
                 ) -> Any:
        """Constraint generation (:func:`fairdecide.optimize.engine.generation.generate`)
        on the session's program and settings, its statistics kept in the session's."""
        found = generate(self.prog, tradeoff, criteria, names, solver=self.solver,
                         tol=self.tol, max_iter=self.max_iter)
        stats = dict(found.stats)
        self.stats["solve_seconds"] += stats.pop("solve_seconds")
        self.stats["solver_iterations"] += stats.pop("solver_iterations")
        self.solver_name = stats.pop("solver_name", self.solver_name)
        self.stats.update(stats)
        return found

    def _record_choice(self, choice: dict | None) -> None:
        """Keep the program stage's choice as ``stats["solver_choice"]``, after what
        the belief stage recorded (its solvers passed over or handed back)."""
        if choice is None:
            return
        before = self.stats.get("solver_choice")
        if before is not None and before["stage"] == "belief":
            choice = {**choice, "belief_stage": before}
        self.stats["solver_choice"] = choice

    def belief_case(self, tradeoff: Tradeoff, criteria: list[Criterion]) -> Case:
        """The chain's belief-stage case (:meth:`Case.of_belief`): the belief's
        scenarios, the trade-off's kind and the criteria's declared capabilities."""
        return Case.of_belief(self.prog, tradeoff, criteria)

    def solve_by_scenarios(self, tradeoff: Tradeoff, criteria: list[Criterion]
                           ) -> ScenarioRun | None:
        """The belief's program solved without writing its scenarios' marginals, by the
        belief-stage solvers the chain chooses
        (:mod:`fairdecide.optimize.engine.chain`): in the policy's space
        (:mod:`fairdecide.optimize.engine.term_ipm`) or in the space of its scenarios
        (:mod:`fairdecide.optimize.engine.scenario_cuts`); None when none takes the
        session or every one hands the program back."""
        asked = resolve_solver(self.solver)
        if self.prog.K < 2 and asked not in BELIEF_SOLVERS:
            return None  # nothing to choose (an asked one's refusal is recorded below)
        choice = choose(self.belief_case(tradeoff, criteria), asked)
        run = None
        for name in choice.order:
            if name == "term-ipm":
                run = solve_term_ipm(self.prog, self.belief, tradeoff, criteria,
                                     asked == "term-ipm")
            else:
                run = solve_scenario_cuts(self.prog, tradeoff, criteria)
            if not isinstance(run, str):
                break
            choice.handed_back[name], run = run, None
        self.stats["solver_choice"] = choice.as_dict()
        if run is None:
            return None
        d = run.details
        if name == "term-ipm":
            self.stats["term_ipm"] = d
            self.solver_name = (f"term interior point: {d['terms']} terms over "
                                f"{d['columns']} policy columns, {d['iterations']} steps")
        else:
            self.stats["scenario_cuts"] = d
            self.solver_name = (f"scenario cuts: {d['working_units']} of {d['units']} "
                                f"units free, {d['cuts']} cuts, {run.certificate.rounds} "
                                "rounds")
        self.stats["solve_seconds"] += d["seconds"]
        self.stats["solver_iterations"] += d["iterations"]
        self.certify("optimality", run.certificate.as_dict())
        if run.tolerance_duals is not None:
            self.price_tolerances(*run.tolerance_duals)
        return run

    def price_tolerances(self, duals: np.ndarray, tolerance_of: np.ndarray) -> None:
        """``stats["tolerance_prices"]``: for each criterion, d U* / d epsilon_c from
        ``duals`` (d objective / d b, the program minimising -U) of its tolerance rows
        (``tolerance_of``: each row's criterion; one row, or one per scenario)."""
        if len(duals):
            self.stats["tolerance_prices"] = ByCriterion({
                n: float(-duals[tolerance_of == c].sum()) + 0.0  # not -0.0
                for c, n in enumerate(self.names) if np.any(tolerance_of == c)})

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
