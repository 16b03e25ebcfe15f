"""Diagnosis of infeasible tolerances: the smallest achievable deviation of each
criterion, reported in the error so the user knows what to ask for instead."""

from __future__ import annotations

from dataclasses import replace
from typing import NoReturn

import numpy as np

from fairdecide.criteria.base import ByCriterion
from fairdecide.exceptions import InfeasibleToleranceError
from fairdecide.optimize.engine.chain import solve
from fairdecide.optimize.program.tradeoff import (
    FairnessConstraint,
    UtilityConstraint,
    aggregated_deviations,
)
from fairdecide.optimize.routes.linearization import successive_linearization
from fairdecide.optimize.routes.session import Session, Tally

__all__ = ["lifted_tolerances", "raise_infeasible"]


def lifted_tolerances(session: Session, tally: Tally) -> FairnessConstraint:
    """The session's tolerances when the solver found them infeasible only numerically:
    every criterion's smallest achievable deviation (exact: linear criteria) is within a
    quarter of the verification tolerance of its epsilon (epsilon = 0 for a deviation
    whose minimum is 0 up to HiGHS's feasibility tolerance). Each is then raised to
    max(epsilon, smallest) + tol / 4, so a policy found for them meets the asked
    tolerances within tol, as verification checks. Otherwise the tolerances are truly
    infeasible and InfeasibleToleranceError is raised as by :func:`raise_infeasible`.
    Its solves are counted in the route's ``tally``."""
    tradeoff, tol = session.tradeoff, session.tol
    low = _smallest(session, None, tally)
    eps = np.asarray(tradeoff.epsilon, dtype=float)
    if np.all(low <= eps + tol / 4):
        return replace(tradeoff, epsilon=tuple(np.maximum(eps, low) + tol / 4))
    _raise(session, low)


def raise_infeasible(session: Session, pi_best: np.ndarray | None) -> None:
    """Raise InfeasibleToleranceError with each violated criterion's smallest deviation
    (exact for linear criteria; the best of a dedicated local search and the point of
    least violation, ``pi_best``, otherwise)."""
    _raise(session, _smallest(session, pi_best, session.tally()))


def _smallest(session: Session, pi_best: np.ndarray | None, tally: Tally) -> np.ndarray:
    """Each criterion's smallest achievable deviation (see raise_infeasible)."""
    belief, delta = session.belief, session.tradeoff.chance_delta
    smallest_of = UtilityConstraint(chance_delta=delta)
    F_best = None if pi_best is None else aggregated_deviations(
        session.evaluate(pi_best)[1], belief, delta)
    lows = []
    for k, (crit, name, caps) in enumerate(zip(session.criteria, session.names,
                                               session.capabilities, strict=True)):
        if caps.cuts:
            res = tally.add(solve(session.cuts_task(smallest_of, [crit], [name])))
            if not res.ok:
                raise session.fail(res, "minimum-deviation")
            low = float(res.objective)
        elif caps.linear:
            res = tally.add(solve(session.task(smallest_of, [crit])))
            if not res.ok:
                raise session.fail(res, "minimum-deviation")
            low = float(res.objective)
        else:
            sub = session.restricted([crit], [name], smallest_of)
            found = successive_linearization(sub, smallest_of, tally)
            low = float(aggregated_deviations(sub.evaluate(found.pi)[1], belief, delta)[0])
            if F_best is not None:
                low = min(low, float(F_best[k]))
        lows.append(low)
    return np.array(lows)


def _raise(session: Session, lows: np.ndarray) -> NoReturn:
    """InfeasibleToleranceError naming each criterion whose smallest deviation exceeds
    its tolerance (or the only criterion)."""
    eps, delta = session.tradeoff.epsilon, session.tradeoff.chance_delta
    smallest = ByCriterion({name: float(low) for k, (name, low) in enumerate(
        zip(session.names, lows, strict=True))
        if low > eps[k] + session.tol or len(session.criteria) == 1})
    if smallest:
        parts = ", ".join(f"{n} >= {v:.6g} (asked <= {eps[session.names.index(n)]:g})"
                          for n, v in smallest.items())
        local = not all(c.linear for c in session.capabilities)
        hint = (" (found by local search: the criterion is not convex, so the true "
                "minimum may be lower; policies that meet a criterion only by (nearly) "
                "never giving some group what others get are not sought)"
                if local else "")
        if delta is not None:
            hint += f" (as CVaR_{1 - delta:g} over the belief's scenarios)"
        msg = (f"epsilon is infeasible: the smallest achievable deviation is {parts}"
               f"{hint}. Raise epsilon to at least that value")
    else:
        smallest = ByCriterion({n: float("nan") for n in session.names})
        msg = ("epsilon is infeasible: each criterion can meet its tolerance alone, but "
               "not all together; raise some of the tolerances")
    raise InfeasibleToleranceError(msg, smallest)
