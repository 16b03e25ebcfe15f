"""Diagnosis of infeasible tolerances: the smallest achievable deviation of each
criterion, reported in the error so the user knows what to ask for instead."""

from __future__ import annotations

import numpy as np

from fairdecide.exceptions import InfeasibleToleranceError
from fairdecide.optimize.generation import generate
from fairdecide.optimize.linearization import successive_linearization
from fairdecide.optimize.session import Session
from fairdecide.optimize.tradeoff import UtilityConstraint, aggregated_deviations

__all__ = ["raise_infeasible"]


def raise_infeasible(session: Session, pi_best: np.ndarray | None) -> None:
    """Raise InfeasibleToleranceError with each violated criterion's smallest deviation
    (exact for linear criteria; the best of a dedicated local search and the point of
    least violation, ``pi_best``, otherwise)."""
    tradeoff, belief = session.tradeoff, session.belief
    eps, delta = tradeoff.epsilon, tradeoff.chance_delta
    smallest_of = UtilityConstraint(chance_delta=delta)
    F_best = None if pi_best is None else aggregated_deviations(
        session.evaluate(pi_best)[1], belief, delta)
    smallest = {}
    for k, (crit, name, caps) in enumerate(zip(session.criteria, session.names,
                                               session.capabilities, strict=True)):
        if caps.cuts:
            res = generate(session, smallest_of, [crit], [name]).res
            if not res.ok:
                raise session.fail(res, "minimum-deviation")
            low = float(res.objective)
        elif caps.linear:
            res = session.solve(smallest_of, [crit])
            if not res.ok:
                raise session.fail(res, "minimum-deviation")
            low = float(res.objective)
        else:
            sub = session.restricted([crit], [name], smallest_of)
            found = successive_linearization(sub, smallest_of)
            low = float(aggregated_deviations(sub.evaluate(found.pi)[1], belief, delta)[0])
            if F_best is not None:
                low = min(low, float(F_best[k]))
        if low > eps[k] + session.tol or len(session.criteria) == 1:
            smallest[name] = low
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
        smallest = {n: float("nan") for n in session.names}
        msg = ("epsilon is infeasible: each criterion can meet its tolerance alone, but "
               "not all together; raise some of the tolerances")
    raise InfeasibleToleranceError(msg, smallest)
