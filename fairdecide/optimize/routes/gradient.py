"""The gradient route: parametric policies (linear-softmax) under the book's trade-offs.

Method. Utility and every criterion are functions of the scenarios' group marginals
M_k(theta) (:mod:`fairdecide.optimize.routes.parametric`). A criterion supplies its deviation
as smooth terms r(M) combined by a sum of absolute values (TV), a maximum of absolute
values (max), a plain sum (KL) or max(0, max_i r_i) (a capacity's excess)
(:mod:`fairdecide.criteria.terms`). The optimiser writes |r_i| and the max through
epigraph variables (t_i >= r_i, t_i >= -r_i), the
worst case over scenarios through one more (sigma <= V_k for every k), and solves the
resulting smooth program in (theta, t, sigma) by sequential quadratic programming
(SciPy's SLSQP) with analytic gradients. Nothing is smoothed, so the deviation the
search bounds is the exact one; SQP meets the constraints to machine precision at
convergence, where an augmented Lagrangian would need a final repair. Without
epigraph variables or constraints (utility alone, KL mixtures, mean over scenarios) it
runs L-BFGS. The family's penalty (``LinearSoftmaxPolicy(l2=...)``) is added to the
objective.

Every end point is evaluated exactly from its decision tables; starts (theta = 0, or the
policy's own coefficients, then random ones under ``random_state``) are compared on that
exact objective. An end point that misses a tolerance by a little is re-solved with the
tolerance tightened by twice the miss; if no start meets the tolerances, the error names
the smallest deviation each criterion reached. The problem is not convex in theta: the
result is a local optimum.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, ClassVar

import numpy as np

from fairdecide._common.threads import one_blas_thread
from fairdecide._common.validation import check_random_state
from fairdecide.criteria.base import ByCriterion, Capabilities
from fairdecide.exceptions import FairdecideError, InfeasibleToleranceError
from fairdecide.optimize.program.tradeoff import (
    MaxUtility,
    UtilityConstraint,
    aggregated_deviations,
)
from fairdecide.optimize.routes.base import Route, RouteResult
from fairdecide.optimize.routes.gradient_program import run_program as _run
from fairdecide.optimize.routes.parametric import ParametricSession
from fairdecide.optimize.routes.session import Tally

__all__ = ["GradientRoute", "best_utility"]


def _starts(session: ParametricSession, tally: Tally) -> list[np.ndarray]:
    """theta = 0 (or the policy's own coefficients), then the utility optimum reached
    from it, then random starts N(0, 1 / n_inputs) under ``random_state``."""
    theta0 = session.template.parameters
    starts = [theta0]
    if session.n_restarts >= 2:
        if "utility_start" not in session.cache:
            session.cache["utility_start"] = _run(session, tally, MaxUtility(), [],
                                                  theta0)[0]
        starts.append(session.cache["utility_start"])
    rng = check_random_state(session.random_state)
    scale = 1.0 / np.sqrt(max(1, session.template.coef.shape[1]))
    return starts + [rng.normal(0.0, scale, theta0.size)
                     for _ in range(session.n_restarts - 2)]


def best_utility(session: ParametricSession, tally: Tally) -> float:
    """U*: the best (mean or worst-case) utility the search finds in the family."""
    best = -np.inf
    for theta0 in _starts(session, tally):
        theta, _, _ = _run(session, tally, MaxUtility(), [], theta0)
        U, _ = session.evaluate(theta)
        best = max(best, session.belief.combine(U))
    return best


@dataclass
class _EndPoint:
    theta: np.ndarray
    converged: bool
    merit: float
    miss: float
    feasible: bool


def _solve_from(session: ParametricSession, tally: Tally, theta0: np.ndarray,
                continuation: bool) -> _EndPoint:
    """One start: with ``continuation``, first the tolerances relaxed toward the start's
    own deviations (halfway, a fifth, a twentieth of the gap), then the trade-off itself;
    an end point that misses a constraint is re-solved with it tightened by twice the
    miss (at most twice)."""
    tr, every = session.tradeoff, list(range(len(session.criteria)))
    if continuation and tr.bounds_deviations:
        agg = aggregated_deviations(session.evaluate(theta0)[1], session.belief,
                                    tr.chance_delta)
        for share in (0.5, 0.2, 0.05):
            theta0 = _run(session, tally, tr.relaxed(agg, share), every, theta0)[0]
    limit = tr.violation_tol(session.tol, session.utility_tol)
    target = tr
    for _ in range(3):
        theta, ok, _ = _run(session, tally, target, every, theta0)
        U, F = session.evaluate(theta)
        miss = tr.violation(U, F, session.belief)
        if miss <= limit:
            break
        target, theta0 = target.tightened(miss), theta
    return _EndPoint(theta, ok, tr.merit(U, F, session.belief), miss, miss <= limit)


def search(session: ParametricSession, tally: Tally) -> RouteResult:
    """Multi-start search (the utility-optimum start with continuation in epsilon); if
    no start meets the constraints, a start from the least total deviation; the best
    exactly-feasible end point, with what the searches found (``tally``)."""
    ends = [_solve_from(session, tally, theta0, continuation=i == 1)
            for i, theta0 in enumerate(_starts(session, tally))]
    if not any(e.feasible for e in ends) and session.tradeoff.bounds_deviations:
        every = list(range(len(session.criteria)))
        least = min(ends, key=lambda e: e.miss).theta
        for theta0 in (session.template.parameters, least):
            fair = _run(session, tally, UtilityConstraint(), every, theta0)[0]
            U, F = session.evaluate(fair)
            miss = session.tradeoff.violation(U, F, session.belief)
            if miss <= session.tol:
                ends += [_EndPoint(fair, True, session.tradeoff.merit(U, F, session.belief),
                                   miss, True), _solve_from(session, tally, fair, False)]
                break
    feasible = [e for e in ends if e.feasible]
    if not feasible:
        _raise_infeasible(session, tally, min(ends, key=lambda e: e.miss).theta)
    best = min(feasible, key=lambda e: e.merit)
    tally.stats["converged"] = best.converged
    status = "locally optimal" if best.converged else "stopped at max_iter (not converged)"
    return tally.result(best.theta, 0.0, status, None, session.tradeoff)


def _raise_infeasible(session: ParametricSession, tally: Tally, theta_least: np.ndarray
                      ) -> None:
    """The smallest deviation (or the best utility) the search reached, in the error."""
    tr, belief = session.tradeoff, session.belief
    if tr.utility_floor is not None:
        U, _ = session.evaluate(theta_least)
        raise FairdecideError(
            f"utility_slack could not be met: the search reached utility "
            f"{belief.combine(U):.6g} against the floor U* - slack = {tr.utility_floor:.6g}")
    smallest = ByCriterion()
    for c, name in enumerate(session.names):
        reached = [aggregated_deviations(session.evaluate(theta_least)[1], belief, None)[c]]
        for theta0 in (session.template.parameters, theta_least):
            theta, _, _ = _run(session, tally, UtilityConstraint(), [c], theta0)
            reached.append(aggregated_deviations(session.evaluate(theta)[1], belief,
                                                 None)[c])
        smallest[name] = float(min(reached))
    bounds = tr.deviation_bounds(len(session.names))
    parts = ", ".join(f"{n} >= {v:.6g} (asked <= {bounds[session.names.index(n)]:g})"
                      for n, v in smallest.items())
    raise InfeasibleToleranceError(
        f"epsilon could not be met by this policy family: the smallest deviation the "
        f"gradient search reached is {parts}. It is a local search: raise epsilon to at "
        "least that value, add restarts (n_restarts), or give the policy more features",
        smallest)


class GradientRoute(Route):
    """Parametric policies by SQP / L-BFGS on the epigraph form (a local optimum)."""

    name: ClassVar[str] = "gradient"

    def refuses(self, capabilities: list[Capabilities], kind: str) -> str | None:
        if kind != "parametric":
            return "needs a parametric policy such as LinearSoftmaxPolicy"
        if not all((c.gradient and c.reads == "marginal") or c.parametric
                   for c in capabilities):
            return ("needs every criterion to give its deviation as gradient terms of the "
                    "group marginal (Capabilities.gradient) or to constrain the parameters "
                    "(Capabilities.parametric)")
        return None

    def solve(self, session: Any) -> RouteResult:
        # One BLAS thread: the route's products are skinny (people x inputs x a few
        # columns); with two threads on a busy two-core machine the workers spin, and
        # phi' s for 31,655 x 4 inputs took 67 ms against 0.4 ms with one (measured).
        with one_blas_thread():
            tally = session.tally()
            if session.tradeoff.needs_utility_optimum:  # U*: the best the search finds
                session = session.with_tradeoff(session.tradeoff.with_utility_optimum(
                    best_utility(session, tally)))
            found = search(session, tally)
            policy = session.policy_of(found.pi)
            return replace(found, certificates={
                name: crit.parameter_certificate(policy)
                for crit, name, caps in zip(session.criteria, session.names,
                                            session.capabilities, strict=True)
                if caps.parametric})
