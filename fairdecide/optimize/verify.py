"""Independent verification of an optimised policy from its decision tables."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from fairdecide.beliefs import Belief
from fairdecide.criteria.base import ByCriterion, Criterion
from fairdecide.exceptions import VerificationError
from fairdecide.optimize.program.tradeoff import Tradeoff
from fairdecide.optimize.result import Verification
from fairdecide.policies.base import Policy
from fairdecide.problem import DecisionProblem
from fairdecide.values import tables_values

__all__ = ["verify_solution"]


def verify_solution(
    policy: Policy,
    belief: Belief,
    problem: DecisionProblem,
    criteria: Sequence[Criterion],
    names: Sequence[str],
    tradeoff: Tradeoff,
    solver_values: dict[str, Any] | None,
    simplex_violation: float,
    tol: float,
    utility_tol: float,
) -> Verification:
    """Recompute utility and deviations from each scenario's decision table and check them.

    The recomputation uses only the policy, the worlds and the problem
    (:func:`fairdecide.values.tables_values`), never the solver's matrices or reported
    values. Checks: rows on the simplex (the solver's raw rows within ``tol``), the
    solver's reported utilities and deviation bounds (when it reports them) against the
    recomputed ones, and the trade-off's own constraints (each fairness tolerance as the
    mean, worst case or CVaR over scenarios; the utility floor) within ``tol``.
    """
    U_k, F_ck, row_error = tables_values(policy, belief.worlds, problem, list(criteria))
    U = belief.combine(U_k)
    dev = ByCriterion({n: belief.combine_deviation(F_ck[c]) for c, n in enumerate(names)})
    checks: dict[str, bool] = {
        "policy rows on the simplex": bool(simplex_violation <= max(tol, 1e-7)
                                           and row_error <= 1e-9)
    }
    solver_utility = None
    if solver_values is not None:
        su = np.asarray(solver_values["utility"], dtype=float)
        solver_utility = belief.combine(su)
        checks["solver utility matches recomputation"] = bool(
            np.all(np.abs(su - U_k) <= utility_tol))
        tight = belief.aggregate == "mean" and tradeoff.tight_deviations
        for c, (crit, n) in enumerate(zip(criteria, names, strict=True)):
            f = np.asarray(solver_values["f"][c], dtype=float)
            # f is an epigraph variable: an upper bound on the deviation, equal to it
            # wherever the objective penalises it. Cone solvers are less exact.
            scale = 10.0 if crit.capabilities(problem).cone else 1.0
            checks[f"{n}: solver bound holds"] = bool(np.all(F_ck[c] <= f + scale * tol))
            if tight:
                # the penalty prices each scenario's variable by its weight, so an
                # optimum within the solver's gap pins down their weighted mean, not each
                # one: an interior point leaves a scenario of weight w_k up to
                # gap / (lam w_k) above its deviation (Clarabel: 2.2e-6 at w_k = 0.022)
                w = np.asarray(belief.weights, dtype=float)
                checks[f"{n}: solver value matches recomputation"] = bool(
                    abs(float(w @ (f - F_ck[c]))) <= scale * tol)
    checks.update(tradeoff.checks(U_k, F_ck, belief, names, tol, utility_tol))
    v = Verification(U, dev, solver_utility, float(simplex_violation), checks, tol,
                     U_k, ByCriterion({n: F_ck[c] for c, n in enumerate(names)}))
    if not v.passed:
        failed = [k for k, ok in checks.items() if not ok]
        raise VerificationError(
            f"the solver's policy failed verification ({'; '.join(failed)}): utility "
            f"{U:.9g}, deviations {dev}. The solver's answer is inaccurate; try "
            "solver='highs' (exact simplex/interior point with crossover) or loosen tol"
        )
    return v
