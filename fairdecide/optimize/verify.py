"""Independent verification of an optimised policy from its decision table."""

from __future__ import annotations

from typing import Any

import numpy as np

from fairdecide.exceptions import VerificationError
from fairdecide.optimize.result import Verification
from fairdecide.world import decision_table

__all__ = ["verify_solution"]


def verify_solution(
    policy: Any,
    world: Any,
    problem: Any,
    criteria: list,
    names: list[str],
    spec: Any,
    spec_values: dict,
    solver_values: dict | None,
    simplex_violation: float,
    tol: float,
    utility_tol: float,
) -> Verification:
    """Recompute utility and deviations from the decision table and check the solution.

    The recomputation uses only the policy table, the world and the problem (an einsum
    over the decision table), never the solver's matrices or reported values. Checks:
    rows on the simplex (the solver's raw rows within ``tol``), the solver's reported
    utility and deviations (when it reports them) within tolerance of the recomputed ones,
    each fairness tolerance met within ``tol``, and the utility floor met.
    """
    table = decision_table(policy, world, problem)
    U = table.utility(problem.utility)
    M = table.group_marginal()
    dev = {n: c.deviation_from_marginal(M, problem) for c, n in zip(criteria, names, strict=True)}
    checks: dict[str, bool] = {
        "policy rows on the simplex": bool(
            simplex_violation <= max(tol, 1e-7)
            and np.all(policy.table >= 0)
            and np.allclose(policy.table.sum(axis=2), 1.0, atol=1e-9)
        )
    }
    solver_utility = None
    if solver_values is not None:
        solver_utility = float(solver_values["utility"])
        checks["solver utility matches recomputation"] = abs(solver_utility - U) <= utility_tol
        for k, (c, n) in enumerate(zip(criteria, names, strict=True)):
            f = float(solver_values["f"][k])
            # The solver's f_k is an epigraph variable: an upper bound on the deviation,
            # equal to it wherever it is penalised.
            scale = 1.0 if c.measure != "kl" else 10.0
            checks[f"{n}: solver bound holds"] = dev[n] <= f + scale * tol
            if spec.mode in ("mixture", "slack") and spec_values.get("lam", 1.0) > 0:
                checks[f"{n}: solver value matches recomputation"] = (
                    abs(dev[n] - f) <= scale * tol
                )
    if spec.mode == "epsilon":
        for k, n in enumerate(names):
            checks[f"{n} <= epsilon"] = dev[n] <= spec.epsilon[k] + tol
    if spec.mode == "slack":
        checks["utility >= U* - slack"] = U >= spec_values["utility_min"] - utility_tol
    v = Verification(U, dev, solver_utility, float(simplex_violation), checks, tol)
    if not v.passed:
        failed = [k for k, ok in checks.items() if not ok]
        raise VerificationError(
            f"the solver's policy failed verification ({'; '.join(failed)}): utility "
            f"{U:.9g}, deviations {dev}. The solver's answer is inaccurate; try "
            "solver='highs' (exact simplex/interior point with crossover) or loosen tol"
        )
    return v
