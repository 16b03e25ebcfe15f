"""Independent verification of an optimised policy from its decision tables."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from fairdecide.criteria.base import ByCriterion, Criterion
from fairdecide.criteria.values import tables_values
from fairdecide.exceptions import VerificationError
from fairdecide.optimize.engine.highs_model import FEASIBILITY_TOL
from fairdecide.optimize.engine.solvers import CONE_TOL
from fairdecide.optimize.program.tradeoff import Tradeoff
from fairdecide.optimize.result import Verification
from fairdecide.policies.base import Policy
from fairdecide.problem import DecisionProblem
from fairdecide.uncertainty.beliefs import Belief

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
    solver: str = "the solver",
    over_set: bool = False,
) -> Verification:
    """Recompute utility and deviations from each scenario's decision table and check them.

    The recomputation uses only the policy, the worlds and the problem
    (:func:`fairdecide.criteria.values.tables_values`), never the solver's matrices or reported
    values. Checks: rows on the simplex (the solver's raw rows within ``tol``), the
    solver's reported utilities and deviation bounds (when it reports them) against the
    recomputed ones, and the trade-off's own constraints (each fairness tolerance as the
    mean, worst case or CVaR over scenarios; the utility floor) within ``tol``.

    ``over_set``: the program was over a confidence set, whose deviation variables bound
    each criterion over every world of the set and whose trade-off reads the set's value:
    only "solver bound holds" is checked here (the table's world is one of the set's);
    :func:`~fairdecide.optimize.guarantee.certify_over_set` checks the rest on the set.

    A check that fails raises VerificationError naming ``solver`` (the one that solved),
    each failed check with how far its recomputed value lies past its bound and the
    allowance, and the way out: a solver exact to HiGHS's tolerances, or a looser ``tol``.
    """
    U_k, F_ck, row_error = tables_values(policy, belief.worlds, problem, list(criteria))
    U = belief.combine(U_k)
    dev = ByCriterion({n: belief.combine_deviation(F_ck[c]) for c, n in enumerate(names)})
    # each check: (how far the recomputed value lies past its bound, the allowance)
    excess: dict[str, tuple[float, float]] = {
        "policy rows on the simplex": (float(row_error), 1e-9) if row_error > 1e-9 else
        (float(simplex_violation), max(tol, 1e-7))}
    solver_utility = None
    if solver_values is not None:
        su = np.asarray(solver_values["utility"], dtype=float)
        solver_utility = belief.combine(su)
        excess["solver utility matches recomputation"] = (
            float(np.max(np.abs(su - U_k))), utility_tol)
        tight = belief.aggregate == "mean" and tradeoff.tight_deviations and not over_set
        for c, (crit, n) in enumerate(zip(criteria, names, strict=True)):
            f = np.asarray(solver_values["f"][c], dtype=float)
            # f is an epigraph variable: an upper bound on the deviation, equal to it
            # wherever the objective penalises it. Cone solvers are less exact.
            scale = 10.0 if crit.capabilities(problem).cone else 1.0
            excess[f"{n}: solver bound holds"] = (float(np.max(F_ck[c] - f)), scale * tol)
            if tight:
                # the penalty prices each scenario's variable by its weight, so an
                # optimum within the solver's gap pins down their weighted mean, not each
                # one: an interior point leaves a scenario of weight w_k up to
                # gap / (lam w_k) above its deviation (Clarabel: 2.2e-6 at w_k = 0.022)
                w = np.asarray(belief.weights, dtype=float)
                excess[f"{n}: solver value matches recomputation"] = (
                    abs(float(w @ (f - F_ck[c]))), scale * tol)
    if not over_set:
        excess.update(tradeoff.excesses(U_k, F_ck, belief, names, tol, utility_tol))
    checks = {k: bool(over <= allowed) for k, (over, allowed) in excess.items()}
    v = Verification(U, dev, solver_utility, float(simplex_violation), checks, tol,
                     U_k, ByCriterion({n: F_ck[c] for c, n in enumerate(names)}))
    if not v.passed:
        failed = "; ".join(f"{k}: violated by {over:.3g} ({over / allowed:.3g} times the "
                           f"{allowed:.3g} allowed)"
                           for k, (over, allowed) in excess.items() if not checks[k])
        raise VerificationError(
            f"{solver}'s policy failed verification, recomputed from its decision table "
            f"({failed}): utility {U:.9g}, deviations {dev}. {solver}'s answer is not "
            f"accurate to tol; use solver=None or 'highs' (HiGHS: exact to "
            f"{FEASIBILITY_TOL:g}) or a solver with a tighter tolerance (e.g. 'CLARABEL', an "
            f"interior point to {CONE_TOL:g}), or loosen tol (now {tol:g}) if an error of "
            "that size is acceptable")
    return v
