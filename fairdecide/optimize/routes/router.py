"""Optimisation routes and the router that picks one from declared capabilities.

A route (:class:`~fairdecide.optimize.routes.base.Route`) says which criteria
capabilities and policy kinds it accepts, and solves a session. The routes are listed in
:data:`ROUTES`, in the order they are tried; the first that accepts solves. The exact LP
route takes criteria that are all linear for the problem; constraint generation those
with generated rows (cuts); successive linearisation any criterion that supplies program
rows (first-order and fixed-mass expansions); the gradient route parametric policies.
Which solver then solves each program is the solving chain's decision
(:mod:`fairdecide.optimize.engine.chain`).
"""

from __future__ import annotations

from typing import Any, ClassVar

from fairdecide.criteria.base import Capabilities
from fairdecide.exceptions import FairdecideError
from fairdecide.optimize.routes.base import Route, RouteResult
from fairdecide.optimize.routes.gradient import GradientRoute
from fairdecide.optimize.routes.infeasible import lifted_tolerances, raise_infeasible
from fairdecide.optimize.routes.linearization import successive_linearization
from fairdecide.optimize.routes.session import Session

__all__ = ["ROUTES", "GenerationRoute", "LinearRoute", "LinearizationRoute", "choose_route",
           "program_result"]


class LinearRoute(Route):
    """One linear (or exponential-cone) program: globally optimal."""

    name: ClassVar[str] = "exact program"

    def refuses(self, capabilities: list[Capabilities], policy_kind: str) -> str | None:
        if policy_kind != "free":
            return "needs a free (tabular) policy"
        if not all(c.linear and c.program for c in capabilities):
            return "needs every criterion linear in the policy"
        if any(c.cuts for c in capabilities):
            return "criteria with generated rows (cuts) go to constraint generation"
        return None

    def run(self, session: Session) -> RouteResult:
        tr = session.tradeoff
        run = session.solve_by_scenarios(tr, session.criteria)
        if run is not None:  # a belief, solved in the space of its scenarios
            pi, viol = session.prog.clean(run.pi.reshape(-1))
            return RouteResult(pi, viol, "optimal",
                               {"utility": run.utility, "f": run.f,
                                "objective": run.objective})
        res = session.solve(tr, session.criteria)
        if not res.ok and tr.bounds_deviations and res.status.startswith("infeasible"):
            # infeasible only within the solver's tolerances (e.g. epsilon = 0 for a
            # deviation whose minimum is 0), or truly (then this raises)
            lifted = lifted_tolerances(session)
            res = session.solve(lifted, session.criteria)
            session.stats["epsilon_solved"] = lifted.epsilon
        return program_result(session, res, session.last_program)


class GenerationRoute(Route):
    """Constraint generation (:mod:`fairdecide.optimize.engine.generation`): the exact program
    over the cuts the policy violates, grown until none is, certified over all cuts."""

    name: ClassVar[str] = "constraint generation"

    def refuses(self, capabilities: list[Capabilities], policy_kind: str) -> str | None:
        if policy_kind != "free":
            return "needs a free (tabular or fixed-population) policy"
        if not any(c.cuts for c in capabilities):
            return "needs a criterion with generated rows (cuts)"
        if not all(c.linear and c.program for c in capabilities):
            return "needs every criterion linear in the policy"
        return None

    def run(self, session: Session) -> RouteResult:
        found = session.generate(session.tradeoff, session.criteria, session.names)
        for name, certificate in found.certificates.items():
            session.certify(name, certificate)
        return program_result(session, found.res, found.program)


def program_result(session: Session, res: Any, program: Any) -> RouteResult:
    """The free rows and the solver's own values of one solved program."""
    tr = session.tradeoff
    if not res.ok:
        if tr.bounds_deviations and res.status.startswith("infeasible"):
            raise_infeasible(session, None)
        raise session.fail(res, tr.kind)
    prog = session.prog
    pi, viol = prog.clean(res.x)
    ms, f = program.read_solution(res.x)
    values = {"utility": prog.utilities(ms), "f": f, "objective": res.objective}
    if res.ub_duals is not None:
        session.price_tolerances(res.ub_duals[program.tolerance_rows], program.tolerance_of)
    return RouteResult(pi, viol, "optimal", values)


class LinearizationRoute(Route):
    """Successive linearisation with a trust region and exact fixed-mass corrections,
    multi-start: every iterate feasible and verified, a local optimum."""

    name: ClassVar[str] = "successive linearisation"

    def refuses(self, capabilities: list[Capabilities], policy_kind: str) -> str | None:
        if policy_kind != "free":
            return "needs a free (tabular) policy"
        if not all(c.program for c in capabilities):
            return "needs every criterion to supply program rows"
        if any(c.cuts for c in capabilities):
            return ("cannot grow generated rows (cuts) between its steps; for a small "
                    "population write every pair at once (e.g. Lipschitz(pairs='all'))")
        return None

    def run(self, session: Session) -> RouteResult:
        found = successive_linearization(session, session.tradeoff)
        # its programs' certificates are the linearised steps', not the result's: a local
        # optimum of a criterion that is not convex is not certified
        session.stats.get("certificates", {}).pop("optimality", None)
        if found.pi is None:
            raise_infeasible(session, found.least_violation)
        return RouteResult(found.pi, found.violation, found.status)


#: Every route, in the order they are tried.
ROUTES: tuple[Route, ...] = (LinearRoute(), GenerationRoute(), LinearizationRoute(),
                             GradientRoute())


def choose_route(capabilities: list[Capabilities], policy_kind: str) -> Route:
    """The first route of :data:`ROUTES` that takes the criteria and policy kind."""
    reasons = []
    for route in ROUTES:
        why = route.refuses(capabilities, policy_kind)
        if why is None:
            return route
        reasons.append(f"{route.name}: {why}")
    raise FairdecideError(
        "no optimisation route takes these criteria and this policy (" + "; ".join(reasons)
        + "). A criterion must supply program rows (Capabilities.program)")

