"""A units table's optimisation (a :class:`~fairdecide.worlds.frame.FrameWorld`): its
session, the settings its master cannot honour, and its route, which hands the table to
the solving chain's distributed master
(:mod:`fairdecide.optimize.engine.distributed_master`; the theory is told in
:mod:`fairdecide.optimize.distributed`)."""

from __future__ import annotations

from typing import Any, ClassVar

from fairdecide._common.validation import as_bool
from fairdecide.criteria.base import Capabilities, Criterion, resolve_names
from fairdecide.exceptions import FairdecideError
from fairdecide.optimize.engine.chain import check_asked, solve
from fairdecide.optimize.engine.tasks import UnitsTask
from fairdecide.optimize.program.tradeoff import Tradeoff
from fairdecide.optimize.routes.base import Route, RouteResult
from fairdecide.optimize.routes.session import SessionBase, common_input
from fairdecide.problem import DecisionProblem
from fairdecide.uncertainty.beliefs import Belief
from fairdecide.worlds.frame import FrameWorld
from fairdecide.worlds.world import World

__all__ = ["UnitsRoute", "UnitsSession", "check_settings", "is_units_table", "units_session"]


def is_units_table(world: Any) -> bool:
    """Whether ``world`` (a World or a Belief) holds a world that sums its decision table
    by group (``units_in_memory = False``: a FrameWorld)."""
    worlds = world.worlds if isinstance(world, Belief) else [world]
    return any(isinstance(w, World) and not w.units_in_memory for w in worlds)


def check_settings(belief: Belief, criteria: list[Criterion], problem: DecisionProblem,
                   tradeoff: Tradeoff, group_blind: Any, solver: Any, policy: Any,
                   n_restarts: Any, random_state: Any) -> None:
    """Settings of :func:`~fairdecide.optimize_policy` the distributed master cannot
    honour are errors naming the argument, not ignored (the arguments themselves are
    validated by optimize_policy, as for every world)."""
    if belief.n_scenarios != 1:
        raise FairdecideError(
            f"world: a belief of {belief.n_scenarios} scenarios over units tables is not "
            "supported; the distributed solver optimises one FrameWorld: pass it as world")
    if policy is not None:
        raise FairdecideError(
            "policy: a FrameWorld is optimised over its free policies (a vertex mixture per "
            "block of units); a parametric family needs its units in memory (a "
            "SampleWorld): leave policy=None")
    check_asked("units", solver)
    if group_blind:
        raise FairdecideError(
            "group_blind: the distributed solver prices each unit with its group; a "
            "group-blind policy of a units table is not supported (drop the group from "
            "what the policy reads by fitting P(y | x) without it, or use a TabularWorld)")
    if tradeoff.chance_delta is not None:
        raise FairdecideError(
            "chance_delta bounds a deviation's spread over a belief's scenarios; a "
            "FrameWorld is one world: drop chance_delta")
    if n_restarts is not None or random_state is not None:
        raise FairdecideError(
            "n_restarts and random_state apply to parametric policies (policy=...); the "
            "distributed solver is deterministic")
    for c in criteria:
        cap = c.capabilities(problem)
        if cap.reads != "marginal" or not cap.linear:
            raise FairdecideError(
                f"criteria: {c.label!r} is not a criterion of the group marginal linear in "
                "the policy for this problem, which the distributed solver needs")


def units_session(problem: Any, world: Any, criteria: Any, tradeoff_args: tuple,
                  group_blind: Any, solver: Any, tol: Any, max_iter: Any, policy: Any,
                  n_restarts: Any, random_state: Any) -> UnitsSession:
    """Validate the input as for every world (:func:`~fairdecide.optimize.routes.
    session.common_input`), and refuse the settings the distributed master cannot
    honour."""
    belief, crits, tradeoff = common_input(problem, world, criteria, tradeoff_args, tol,
                                           max_iter)
    check_settings(belief, crits, problem, tradeoff, as_bool(group_blind, "group_blind"),
                   solver, policy, n_restarts, random_state)
    return UnitsSession(problem, belief, crits, resolve_names(crits), tradeoff,
                        float(tol), int(max_iter))


class UnitsSession(SessionBase):
    """An optimisation of a FrameWorld: its parameters are the vertex policies' prices
    (the master's duals) and the blocks' mixture weights over them."""

    kind = "units table"

    def __init__(self, problem: DecisionProblem, belief: Belief, criteria: list[Criterion],
                 names: list[str], tradeoff: Tradeoff, tol: float, max_iter: int) -> None:
        super().__init__(problem, belief, criteria, names, tradeoff, tol, max_iter)
        self.world: FrameWorld = belief.worlds[0]

    def policy_of(self, params: Any) -> Any:
        """The world's free policy of ``params``: (the vertices' prices, the mixture
        weights, blocks x vertices)."""
        duals, weights = params
        return self.world.free_policy()(duals, weights, self.world)


class UnitsRoute(Route):
    """A units table (a FrameWorld) by the distributed master: the chain's "units"
    stage."""

    name: ClassVar[str] = "distributed master"

    def refuses(self, capabilities: list[Capabilities], kind: str) -> str | None:
        return None if kind == "units table" else "needs a units table (FrameWorld)"

    def solve(self, session: UnitsSession) -> RouteResult:
        tally = session.tally()
        found = tally.add(solve(UnitsTask(
            world=session.world, problem=session.problem, criteria=session.criteria,
            tradeoff=session.tradeoff, max_iter=session.max_iter)))
        return tally.result((found.duals, found.pi), 0.0, "optimal",
                            {"utility": found.utility, "f": found.f}, found.tradeoff)
