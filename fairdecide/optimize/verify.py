"""Independent verification of an optimised policy from its decision tables."""

from __future__ import annotations

from typing import Any

import numpy as np

from fairdecide.beliefs import Belief, cvar
from fairdecide.exceptions import VerificationError
from fairdecide.optimize.result import Verification
from fairdecide.world import decision_table

__all__ = ["verify_solution"]


def verify_solution(
    policy: Any,
    belief: Belief,
    problem: Any,
    criteria: list,
    names: list[str],
    spec: Any,
    spec_values: dict,
    solver_values: dict | None,
    simplex_violation: float,
    tol: float,
    utility_tol: float,
    chance_delta: float | None = None,
) -> Verification:
    """Recompute utility and deviations from each scenario's decision table and check them.

    The recomputation uses only the policy table, the worlds and the problem (an einsum
    over the decision table), never the solver's matrices or reported values. Checks:
    rows on the simplex (the solver's raw rows within ``tol``), the solver's reported
    utilities and deviation bounds (when it reports them) against the recomputed ones,
    each fairness tolerance (mean, worst case or CVaR over scenarios) met within ``tol``,
    and the utility floor met.
    """
    U_k = np.zeros(belief.n_scenarios)
    F_ck = np.zeros((len(criteria), belief.n_scenarios))
    for k, world in enumerate(belief.worlds):
        table = decision_table(policy, world, problem)
        U_k[k] = table.utility(problem.utility)
        M = table.group_marginal()
        for c, crit in enumerate(criteria):
            F_ck[c, k] = crit.deviation_from_marginal(M, problem)
    U = belief.combine(U_k)
    dev = {n: belief.combine_deviation(F_ck[c]) for c, n in enumerate(names)}
    checks: dict[str, bool] = {
        "policy rows on the simplex": bool(
            simplex_violation <= max(tol, 1e-7)
            and np.all(policy.table >= 0)
            and np.allclose(policy.table.sum(axis=2), 1.0, atol=1e-9)
        )
    }
    solver_utility = None
    if solver_values is not None:
        su = np.asarray(solver_values["utility"], dtype=float)
        solver_utility = belief.combine(su)
        checks["solver utility matches recomputation"] = bool(
            np.all(np.abs(su - U_k) <= utility_tol))
        tight = (belief.aggregate == "mean" and spec.mode in ("mixture", "slack")
                 and spec_values.get("lam", 1.0) > 0)
        for c, (crit, n) in enumerate(zip(criteria, names, strict=True)):
            f = np.asarray(solver_values["f"][c], dtype=float)
            # f is an epigraph variable: an upper bound on the deviation, equal to it
            # wherever the objective penalises it.
            scale = 1.0 if crit.measure != "kl" else 10.0
            checks[f"{n}: solver bound holds"] = bool(np.all(F_ck[c] <= f + scale * tol))
            if tight:
                checks[f"{n}: solver value matches recomputation"] = bool(
                    np.all(np.abs(F_ck[c] - f) <= scale * tol))
    if spec.mode == "epsilon":
        for c, n in enumerate(names):
            if chance_delta is not None:
                value = cvar(F_ck[c], belief.weights, chance_delta)
                checks[f"CVaR of {n} <= epsilon"] = value <= spec.epsilon[c] + tol
            else:
                checks[f"{n} <= epsilon"] = dev[n] <= spec.epsilon[c] + tol
    if spec.mode == "slack":
        checks["utility >= U* - slack"] = U >= spec_values["utility_min"] - utility_tol
    v = Verification(U, dev, solver_utility, float(simplex_violation), checks, tol,
                     U_k, {n: F_ck[c] for c, n in enumerate(names)})
    if not v.passed:
        failed = [k for k, ok in checks.items() if not ok]
        raise VerificationError(
            f"the solver's policy failed verification ({'; '.join(failed)}): utility "
            f"{U:.9g}, deviations {dev}. The solver's answer is inaccurate; try "
            "solver='highs' (exact simplex/interior point with crossover) or loosen tol"
        )
    return v
