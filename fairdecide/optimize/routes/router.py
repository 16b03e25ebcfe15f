"""Optimisation routes and the router that picks one from declared capabilities.

A route (:class:`~fairdecide.optimize.routes.base.Route`) says which criteria
capabilities and kinds of session it accepts, and solves a session. The routes are
listed in :data:`ROUTES`, in the order they are tried; the first that accepts solves.
The exact LP route takes criteria that are all linear for the problem; constraint
generation those with generated rows (cuts); successive linearisation any criterion
that supplies program rows (first-order and fixed-mass expansions); the gradient route
parametric policies; the distributed master a units table. Which solver then solves
each program is the solving chain's decision (:mod:`fairdecide.optimize.engine.chain`):
a route hands it a task (:func:`fairdecide.optimize.engine.chain.solve`) and gathers
what comes back.
"""

from __future__ import annotations

from typing import ClassVar

from fairdecide.criteria.base import Capabilities
from fairdecide.exceptions import FairdecideError
from fairdecide.optimize.engine.chain import solve
from fairdecide.optimize.engine.tasks import SolveResult
from fairdecide.optimize.routes.base import Route, RouteResult
from fairdecide.optimize.routes.gradient import GradientRoute
from fairdecide.optimize.routes.infeasible import lifted_tolerances, raise_infeasible
from fairdecide.optimize.routes.linearization import successive_linearization
from fairdecide.optimize.routes.session import Session, Tally
from fairdecide.optimize.routes.units import UnitsRoute

__all__ = ["ROUTES", "GenerationRoute", "LinearRoute", "LinearizationRoute", "choose_route",
           "program_result"]


class LinearRoute(Route):
    """One linear (or exponential-cone) program: globally optimal."""

    name: ClassVar[str] = "exact program"

    def refuses(self, capabilities: list[Capabilities], kind: str) -> str | None:
        if kind != "free":
            return "needs a free (tabular) policy"
        if not all(c.linear and c.program for c in capabilities):
            return "needs every criterion linear in the policy"
        if any(c.cuts for c in capabilities):
            return "criteria with generated rows (cuts) go to constraint generation"
        return None

    def solve(self, session: Session) -> RouteResult:
        tally = session.tally()
        session = session.floored(tally)
        # a belief is offered to the solvers in the space of its scenarios first
        found = tally.add(solve(session.task(session.tradeoff, session.criteria,
                                             by_scenarios=True)))
        if (not found.ok and session.tradeoff.bounds_deviations
                and found.status.startswith("infeasible")):
            # infeasible only within the solver's tolerances (e.g. epsilon = 0 for a
            # deviation whose minimum is 0), or truly (then this raises)
            lifted = lifted_tolerances(session, tally)
            found = tally.add(solve(session.task(lifted, session.criteria)))
            tally.stats["epsilon_solved"] = lifted.epsilon
        return program_result(session, found, tally)


class GenerationRoute(Route):
    """Constraint generation (:mod:`fairdecide.optimize.engine.generation`): the exact program
    over the cuts the policy violates, grown until none is, certified over all cuts."""

    name: ClassVar[str] = "constraint generation"

    def refuses(self, capabilities: list[Capabilities], kind: str) -> str | None:
        if kind != "free":
            return "needs a free (tabular or fixed-population) policy"
        if not any(c.cuts for c in capabilities):
            return "needs a criterion with generated rows (cuts)"
        if not all(c.linear and c.program for c in capabilities):
            return "needs every criterion linear in the policy"
        return None

    def solve(self, session: Session) -> RouteResult:
        tally = session.tally()
        session = session.floored(tally)
        found = tally.add(solve(session.cuts_task(session.tradeoff, session.criteria,
                                                  session.names)))
        return program_result(session, found, tally)


def program_result(session: Session, found: SolveResult, tally: Tally) -> RouteResult:
    """The free rows and the solver's own values of one solve: a program's (its
    solution vector read through the program), or a belief-stage solver's (its own
    rows and values); the tolerances' prices from their rows' duals."""
    tr = session.tradeoff
    if not found.ok:
        if tr.bounds_deviations and found.status.startswith("infeasible"):
            raise_infeasible(session, None)
        raise session.fail(found, tr.kind)
    prog = session.prog
    if found.pi is not None:  # a belief, solved in the space of its scenarios
        pi, viol = prog.clean(found.pi.reshape(-1))
        values = {"utility": found.utility, "f": found.f, "objective": found.objective}
        duals = found.tolerance_duals
    else:
        program = found.program
        pi, viol = prog.clean(found.x)
        ms, f = program.read_solution(found.x)
        values = {"utility": prog.utilities(ms), "f": f, "objective": found.objective}
        duals = None if found.ub_duals is None else (
            found.ub_duals[program.tolerance_rows], program.tolerance_of)
    if duals is not None:
        tally.price_tolerances(*duals, session.names)
    return tally.result(pi, viol, "optimal", values, tr)


class LinearizationRoute(Route):
    """Successive linearisation with a trust region and exact fixed-mass corrections,
    multi-start: every iterate feasible and verified, a local optimum."""

    name: ClassVar[str] = "successive linearisation"

    def refuses(self, capabilities: list[Capabilities], kind: str) -> str | None:
        if kind != "free":
            return "needs a free (tabular) policy"
        if not all(c.program for c in capabilities):
            return "needs every criterion to supply program rows"
        if any(c.cuts for c in capabilities):
            return ("cannot grow generated rows (cuts) between its steps; for a small "
                    "population write every pair at once (e.g. Lipschitz(pairs='all'))")
        return None

    def solve(self, session: Session) -> RouteResult:
        tally = session.tally()
        session = session.floored(tally)
        found = successive_linearization(session, session.tradeoff, tally)
        # its programs' certificates are the linearised steps', not the result's: a local
        # optimum of a criterion that is not convex is not certified
        tally.certificates.pop("optimality", None)
        if found.pi is None:
            raise_infeasible(session, found.least_violation)
        return tally.result(found.pi, found.violation, found.status, None, session.tradeoff)


#: Every route, in the order they are tried.
ROUTES: tuple[Route, ...] = (LinearRoute(), GenerationRoute(), LinearizationRoute(),
                             GradientRoute(), UnitsRoute())


def choose_route(capabilities: list[Capabilities], kind: str) -> Route:
    """The first route of :data:`ROUTES` that takes the criteria and kind of session."""
    reasons = []
    for route in ROUTES:
        why = route.refuses(capabilities, kind)
        if why is None:
            return route
        reasons.append(f"{route.name}: {why}")
    raise FairdecideError(
        "no optimisation route takes these criteria and this policy (" + "; ".join(reasons)
        + "). A criterion must supply program rows (Capabilities.program)")
