"""One optimisation in progress, shared by the routes: the criteria and their declared
capabilities, the trade-off, the belief, the tolerances and the one way a policy is
evaluated (:class:`SessionBase`); a free (tabular) policy's program and the solver asked
for, and the tasks it gives the solving chain (:class:`Session`). The parametric
family's session (:class:`~fairdecide.optimize.routes.parametric.ParametricSession`)
and a units table's (:class:`~fairdecide.optimize.routes.units.UnitsSession`) are the
other kinds. A session holds what was asked, never what was found: a route gathers what
its solves return in a :class:`Tally` of its own and returns it.
"""

from __future__ import annotations

import abc
import copy
from typing import Any

import numpy as np

from fairdecide._common.validation import as_int, as_real, check_instance
from fairdecide.criteria.base import ByCriterion, Criterion, Expansion, as_criteria
from fairdecide.criteria.values import scenario_values
from fairdecide.exceptions import FairdecideError, SolverError
from fairdecide.optimize.engine.chain import solve
from fairdecide.optimize.engine.tasks import CutsTask, SolveResult, TradeoffTask
from fairdecide.optimize.program.policy_program import PolicyProgram
from fairdecide.optimize.program.shorthand import make_tradeoff
from fairdecide.optimize.program.tradeoff import MaxUtility, Tradeoff
from fairdecide.optimize.routes.base import RouteResult
from fairdecide.problem import DecisionProblem
from fairdecide.uncertainty.beliefs import Belief
from fairdecide.uncertainty.confidence import ConfidenceSet
from fairdecide.worlds.world import World

__all__ = ["Session", "SessionBase", "Tally", "as_belief", "check_settings", "common_input"]


class SessionBase(abc.ABC):
    """What every route needs, whatever the policy family: the problem, belief, criteria
    (with their capabilities), trade-off and tolerances, and the one way a policy is
    evaluated (:func:`fairdecide.criteria.values.scenario_values`, from the decision
    tables). A kind of session says what its parameters are (:meth:`policy_of`) and what
    it optimises (``kind``, which the router reads)."""

    #: "free" (free rows in memory), "parametric" or "units table"
    kind: str = "free"
    #: the statistics a route's tally starts from (:meth:`tally`)
    counters: tuple[str, ...] = ("solve_seconds",)

    def __init__(self, problem: DecisionProblem, belief: Belief, criteria: list[Criterion],
                 names: list[str], tradeoff: Tradeoff, tol: float, max_iter: int) -> None:
        self.problem, self.belief = problem, belief
        self.criteria, self.names, self.tradeoff = criteria, names, tradeoff
        self.tol, self.max_iter = tol, max_iter
        self.capabilities = [c.capabilities(problem) for c in criteria]
        self.utility_tol = tol * max(1.0, float(np.abs(problem.utility).max()))
        #: what setting the session up measured (``result.stats``: build seconds)
        self.setup: dict[str, Any] = {}
        #: the ConfidenceSet the value is the worst case over (a free policy's session)
        self.confidence: Any = None

    @abc.abstractmethod
    def policy_of(self, params: Any) -> Any:
        """The policy with parameters ``params`` (free rows, or a family's theta)."""

    def with_tradeoff(self, tradeoff: Tradeoff) -> SessionBase:
        """The same session for ``tradeoff`` (a route's trade-off with its utility floor
        set): a copy, the session itself unchanged."""
        if tradeoff is self.tradeoff:
            return self
        other = copy.copy(self)
        other.tradeoff = tradeoff
        return other

    def tally(self) -> Tally:
        """A route's record of its solves, from this kind's counters."""
        return Tally(self.counters)

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
    the solving chain's tasks of its trade-offs (:meth:`task`, :meth:`cuts_task`)."""

    counters = ("solve_seconds", "linearisation_steps", "solver_iterations")

    def __init__(self, prog: PolicyProgram, criteria: list[Criterion], names: list[str],
                 tradeoff: Tradeoff, belief: Belief, solver: str | None, tol: float,
                 max_iter: int) -> None:
        super().__init__(prog.problem, belief, criteria, names, tradeoff, tol, max_iter)
        self.prog, self.solver = prog, solver
        self.confidence = prog.confidence
        self.kind = prog.policy_class.kind
        if any(c.reads == "rows" for c in self.capabilities):
            prog.keep_unit_rows = True

    def restricted(self, criteria: list[Criterion], names: list[str], tradeoff: Tradeoff
                   ) -> Session:
        """The same problem, belief and settings with other criteria and trade-off."""
        return Session(self.prog, criteria, names, tradeoff, self.belief, self.solver,
                       self.tol, self.max_iter)

    def policy_of(self, params: np.ndarray) -> Any:
        """The policy with free rows ``params``."""
        return self.prog.policy(params)

    def task(self, tradeoff: Tradeoff, criteria: list[Criterion], *,
             point: np.ndarray | None = None, trust: float | None = None,
             how: Expansion = "exact", by_scenarios: bool = False,
             certify: bool = True) -> TradeoffTask:
        """The chain's task of ``tradeoff`` over ``criteria`` (expanded at the free rows
        ``point`` as ``how`` says, within a trust region of radius ``trust``), offered
        to the belief stage first when ``by_scenarios``
        (:func:`fairdecide.optimize.engine.chain.solve`); ``certify`` False where the
        caller discards the solver's certificate (:attr:`Task.certify`)."""
        return TradeoffTask(prog=self.prog, belief=self.belief, tradeoff=tradeoff,
                            criteria=criteria, point=point, trust=trust, how=how,
                            by_scenarios=by_scenarios, asked=self.solver, certify=certify)

    def cuts_task(self, tradeoff: Tradeoff, criteria: list[Criterion], names: list[str]
                  ) -> CutsTask:
        """The chain's task of constraint generation
        (:mod:`fairdecide.optimize.engine.generation`) on the session's program and
        settings."""
        return CutsTask(prog=self.prog, tradeoff=tradeoff, criteria=criteria, names=names,
                        tol=self.tol, max_iter=self.max_iter, asked=self.solver)

    def fail(self, res: SolveResult, what: str) -> SolverError:
        return SolverError(
            f"{res.solver} failed on the {what} program: {res.status}. Try another solver, "
            "e.g. solver='highs-ipm' or solver='CLARABEL'"
        )

    def utility_optimum(self, tally: Tally) -> np.ndarray:
        """Free rows of the utility-maximising policy (no fairness), solved by the
        chain (a belief's by its scenarios where a belief-stage solver takes it)."""
        found = self._best_utility(tally)
        return found.pi if found.pi is not None else self.prog.clean(found.x)[0]

    def floored(self, tally: Tally) -> Session:
        """The session for its trade-off with the utility floor set, if the trade-off
        needs the best utility U* (constrained utility): U* is solved first."""
        if not self.tradeoff.needs_utility_optimum:
            return self
        u_star = -self._best_utility(tally).objective
        return self.with_tradeoff(self.tradeoff.with_utility_optimum(u_star))

    def _best_utility(self, tally: Tally) -> SolveResult:
        found = tally.add(solve(self.task(MaxUtility(), [], by_scenarios=True)))
        if not found.ok:
            raise self.fail(found, "utility")
        return found


class Tally:
    """What a route's solves found, gathered as each returns: seconds and iterations
    summed; the last program's size, the last solve's solver, choice, details and
    certificate of optimality; each criterion's own certificates; anything the route
    adds (``stats``). The route hands it back in its :class:`RouteResult`
    (:meth:`result`): no session carries it."""

    def __init__(self, counters: tuple[str, ...] = ("solve_seconds",)) -> None:
        self.stats: dict[str, Any] = dict.fromkeys(counters, 0)
        self.stats["solve_seconds"] = 0.0
        self.certificates: dict[str, dict[str, Any]] = {}
        self.solver = "none"

    def add(self, found: SolveResult) -> SolveResult:
        """Count ``found`` (a solve of the solving chain) in; returns it."""
        st = self.stats
        st["solve_seconds"] += found.seconds
        if "solver_iterations" in st:
            st["solver_iterations"] += found.iterations or 0
        if found.size is not None:
            st.update(found.size)
        self.solver = found.solver
        if found.choice is not None:
            st["solver_choice"] = found.choice
        if found.details is not None:
            st.update(found.details)
        st.update(found.stats)
        if found.certificate is not None:
            self.certificates["optimality"] = found.certificate.as_dict()
        else:  # this program's solver certifies nothing: an earlier program's must go
            self.certificates.pop("optimality", None)
        self.certificates.update(found.certificates or {})
        return found

    def price_tolerances(self, duals: np.ndarray, tolerance_of: np.ndarray,
                         names: list[str]) -> None:
        """``stats["tolerance_prices"]``: for each criterion, d U* / d epsilon_c from
        ``duals`` (d objective / d b, the program minimising -U) of its tolerance rows
        (``tolerance_of``: each row's criterion; one row, or one per scenario)."""
        if len(duals):
            self.stats["tolerance_prices"] = ByCriterion({
                n: float(-duals[tolerance_of == c].sum()) + 0.0  # not -0.0
                for c, n in enumerate(names) if np.any(tolerance_of == c)})

    def result(self, pi: Any, violation: float, status: str,
               solver_values: dict[str, Any] | None, tradeoff: Tradeoff) -> RouteResult:
        """The route's answer with what its solves found."""
        return RouteResult(pi, violation, status, solver_values, tradeoff, self.solver,
                           self.stats, self.certificates)


def common_input(problem: Any, world: Any, criteria: Any, tradeoff_args: tuple, tol: Any,
                 max_iter: Any) -> tuple[Belief, list, Tradeoff]:
    """What every kind of session validates alike: the world as a belief, the criteria,
    the trade-off, ``tol`` and ``max_iter``."""
    belief = as_belief(problem, world)
    crits = as_criteria(criteria)
    tradeoff = make_tradeoff(len(crits), *tradeoff_args)
    check_settings(tol, max_iter)
    return belief, crits, tradeoff


def as_belief(problem: Any, world: Any) -> Belief:
    check_instance(problem, "problem", DecisionProblem, "a DecisionProblem")
    if isinstance(world, World):
        belief = Belief.plug_in(world)
    elif isinstance(world, Belief):
        belief = world
    elif isinstance(world, ConfidenceSet):  # the program takes the set; tables its centre
        belief = Belief.plug_in(world.center, label="the confidence set's centre")
    else:
        raise FairdecideError(
            f"world must be a World such as TabularWorld, a Belief or a ConfidenceSet; got "
            f"{type(world).__name__}")
    for w in belief.worlds:
        w.check_problem(problem)
    return belief


def check_settings(tol: Any, max_iter: Any) -> None:
    try:
        as_real(tol, "tol", low=0, low_open=True)
    except FairdecideError:
        raise FairdecideError(f"tol must be a positive number, got {tol!r}") from None
    if tol > 1e-2:
        raise FairdecideError(
            f"tol must be at most 0.01, got {tol!r}: it is how far a verified utility or "
            "deviation may miss its bound, so a larger tol would pass constraints that do "
            "not hold")
    as_int(max_iter, "max_iter", minimum=1)
