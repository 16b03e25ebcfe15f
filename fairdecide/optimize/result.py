"""Results of policy optimisation, with their certificate of verification."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from fairdecide._common.tables import result_table
from fairdecide.criteria.base import ByCriterion
from fairdecide.optimize.engine.rounds import describe
from fairdecide.policies.base import Policy

__all__ = ["OptimizeResult", "Verification"]


@dataclass(frozen=True)
class Verification:
    """Independent recomputation of a solution from its decision table.

    Attributes
    ----------
    utility : float
        Expected utility recomputed from the decision table.
    deviations : dict[str, float]
        Each criterion's deviation recomputed from the decision table.
    solver_utility : float or None
        The utility the solver reported (None for successive linearisation, where every
        iterate is evaluated from the decision table anyway).
    max_simplex_violation : float
        Largest negative entry or row-sum error of the raw solver policy before cleaning.
    checks : dict[str, bool]
        Each check performed and whether it passed.
    tol : float
    scenario_utilities : ndarray of shape (K,)
        Utility in each scenario of the belief (one entry for a plug-in world).
    scenario_deviations : dict[str, ndarray of shape (K,)]
        Each criterion's deviation in each scenario.
    """

    utility: float
    deviations: dict[str, float]
    solver_utility: float | None
    max_simplex_violation: float
    checks: dict[str, bool]
    tol: float
    scenario_utilities: np.ndarray | None = None
    scenario_deviations: dict[str, np.ndarray] | None = None

    @property
    def passed(self) -> bool:
        return all(self.checks.values())


@dataclass(frozen=True)
class OptimizeResult:
    """The optimised policy with its utility, deviations and solver statistics.

    Attributes
    ----------
    policy : Policy
    utility : float
        Expected utility, recomputed from the decision table (with a belief: the mean or
        worst case over its scenarios).
    deviations : dict[str, float]
        Deviation of each criterion, recomputed from the decision table (with a belief:
        the mean or worst case over scenarios of each scenario's deviation).
    objective : float
        The trade-off's objective value (see ``tradeoff``).
    status : str
        "optimal" (one LP or convex program, solved to optimality) or "locally optimal"
        (successive linearisation converged; the criterion is not convex in the policy).
    tradeoff : str
        Which of the book's trade-offs was solved, with its parameter.
    solver : str
    stats : dict
        Solver statistics: seconds for building and solving, iterations, variables,
        constraints, nonzeros, linearisation steps or generation rounds, and the
        constraint-generation certificates (see :attr:`certificates`). Under
        ``epsilon``, where the solver reports the tolerance rows' duals (every linear
        program's solver: HiGHS on the whole program, with or without crossover, the
        interior point over unit blocks, the structured solver and the scenario cuts;
        not cvxpy's solvers, successive linearisation or the gradient route),
        ``tolerance_prices``: for each criterion the utility one more unit of its
        tolerance would buy, d U* / d epsilon_c (a supergradient where U* has a kink).
    verification : Verification
    guarantee : Guarantee or None
        Over a :class:`~fairdecide.uncertainty.confidence.ConfidenceSet`: the set's level
        1 - delta, the certified lower bound of the true value and upper bounds of the deviations
        (:class:`~fairdecide.optimize.guarantee.Guarantee`); ``utility`` and
        ``deviations`` are then the policy's at the set's centre (the estimate).
    """

    policy: Policy
    utility: float
    deviations: dict[str, float]
    objective: float
    status: str
    tradeoff: str
    solver: str
    stats: dict = field(default_factory=dict)
    verification: Verification | None = None
    guarantee: Any = None

    def summary(self) -> str:
        """A readable report of the result."""
        # over a confidence set the utility and deviations are the estimate's (the set's
        # centre); what holds over the set follows under "guarantee"
        at = "" if self.guarantee is None else " (at the estimate)"
        lines = [
            f"fairdecide policy optimisation: {self.tradeoff}",
            f"  status        : {self.status} ({self.solver})",
            *([f"  chosen by     : {self.solver_choice['reason']}"]
              if self.solver_choice else []),
            f"  utility       : {self.utility:.6g}{at}",
        ]
        for name, val in self.deviations.items():
            lines.append(f"  {name:<14}: {val:.6g}{at}")
        st = self.stats
        if "n_parameters" in st:  # a parametric family (the gradient route)
            lines.append(f"  policy        : {st['n_parameters']} parameters, "
                         f"{st.get('iterations', 0)} solver iterations over all starts")
            lines.append(f"  time          : solve {st.get('solve_seconds', np.nan):.3f} s")
        else:
            lines.append(
                f"  program       : {st.get('n_variables', '?')} variables, "
                f"{st.get('n_constraints', '?')} constraints, {st.get('nnz', '?')} nonzeros"
            )
            # the loop around the solver, where there was one
            steps = (f", {st['generation_rounds']} generation rounds"
                     if "generation_rounds" in st
                     else f", {st['linearisation_steps']} linearisation steps"
                     if st.get("linearisation_steps") else "")
            lines.append(
                f"  time          : build {st.get('build_seconds', np.nan):.3f} s, "
                f"solve {st.get('solve_seconds', np.nan):.3f} s{steps}"
            )
        for name, cert in self.certificates.items():
            if name == "optimality":  # the master loop's (engine/rounds.py)
                lines.append(f"  optimality    : {describe(cert)}")
                continue
            if "lipschitz_bound" in cert:  # a parametric policy, certified by its weights
                lines.append(
                    f"  {name} certificate: weight bound {cert['lipschitz_bound']:.6g} <= L "
                    f"= {cert['constant']:g} (every pair of individuals, seen or not)")
                continue
            searched = cert.get("searched", "pairs")
            found = (f"certified bound {cert['max_violation']:.3g} over every world of the "
                     "confidence set" if searched != "pairs" else
                     f"largest violation {cert['max_violation']:.3g}")
            lines.append(
                f"  {name} certificate: {found}, searched over all "
                f"{cert['pairs_checked']:,} {searched} (in {cert['search_seconds']:.2f} s); "
                f"{cert['cuts_in_program']:,} cuts in the final program "
                f"({cert['cuts_added']:,} generated in {cert['rounds']} rounds"
                + (f", {cert['cuts_dropped']:,} dropped once slack"
                   if cert.get("cuts_dropped") else "") + ")")
        g = self.guarantee
        if g is not None:  # over a confidence set: what is certified, and its price
            lines.append(f"  guarantee     : {'best' if g.optimistic else 'certified'} "
                         f"{g.utility} {g.value:.6g} with probability "
                         f"{g.kind.probability(g.level)} ({g.method})")
            for name, bound in g.deviations.items():
                lines.append(f"  {name:<14}: " + ("NOT certified" if bound is None else
                                                  f"at most {bound:.6g} {g.kind.where}"))
            if g.price is not None:
                p = g.price
                lines.append(f"  price         : estimated {p.estimated:.6g}; {p.constant} "
                             f"{p.constant_estimated:.6g} (certified "
                             f"{p.constant_certified:.6g}); plug-in "
                             + ("not fitted" if p.plug_in_estimated is None else
                                f"{p.plug_in_estimated:.6g} (certified "
                                f"{p.plug_in_certified:.6g})")
                             + ("; BELOW THE CONSTANT RULE" if p.below_constant else ""))
        if self.verification is not None:
            v = self.verification
            word = "passed" if v.passed else "FAILED"
            lines.append(
                f"  verification  : {word} (recomputed from the decision table, tol {v.tol:g}; "
                f"simplex error {v.max_simplex_violation:.1e})"
            )
        return "\n".join(lines)

    @property
    def certificates(self) -> dict[str, dict]:
        """What the solver proved. ``"optimality"``, where a master loop solved the
        program (the structured solver, scenario cuts, constraint generation,
        the master of a FrameWorld; :mod:`fairdecide.optimize.engine.rounds`) or HiGHS
        solved it whole (one "round": the larger of HiGHS's primal-dual objective error
        and the Lagrangian gap over the unit simplices at its reduced costs, and its
        largest infeasibility as ``max_violation``): ``solver``,
        ``objective`` (the program's, minimised), ``gap`` (the Lagrangian duality gap of
        its last duals: objective - optimum <= gap), ``bound`` (the gap the stopping rule
        accepts, 1e-9 max(1, |objective|)), ``max_violation`` (of a row not in the
        master), ``rounds``, ``seconds`` and ``certified``.

        For each criterion solved by constraint generation (Lipschitz), its
        certificate: ``max_violation`` (the exact largest violation over all pairs, its
        deviation before clipping at 0; for a criterion held over a confidence set, its
        exact bound over every world of the set), ``pairs_checked`` (how many members
        of the family were searched: pairs, or the group rates a set's worst worlds were
        searched for), ``searched`` (what they are), ``rounds``,
        ``cuts_in_program`` (pairs in the final program), ``cuts_added``,
        ``cuts_dropped`` (pairs that left the program once slack, constraint generation
        kept warm), ``search_seconds`` and ``certified`` (no pair exceeds the program's
        bound). For a
        parametric policy certified by its weights: ``lipschitz_bound`` (kappa),
        ``constant`` (L) and ``certified`` (kappa <= L)."""
        return ByCriterion(self.stats.get("certificates", {}))

    @property
    def solver_choice(self) -> dict:
        """Which solver solved the last program and why: the solving chain's choice
        (:mod:`fairdecide.optimize.engine.chain`). ``stage`` ("belief", "program",
        "cuts", "units" or "tolerances"), ``order`` (the solvers to try, first to
        last), ``reason``, ``passed_over`` (each other solver of the stage and why it
        was not used) and ``handed_back`` (a solver that gave the program back, and
        why); a belief that none of the belief-stage solvers took has ``belief_stage``,
        their choice. Empty for a parametric family (the gradient route solves no
        program)."""
        return dict(self.stats.get("solver_choice", {}))

    def explain(self) -> str:
        """How the result was found, in sentences: the solver, why it was chosen and
        what it certified, and how the numbers were checked.

        Examples
        --------
        >>> import fairdecide as fd
        >>> from fairdecide.datasets import make_bail_problem
        >>> problem, world = make_bail_problem()
        >>> res = fd.optimize_policy(problem, world, fd.Independence(), epsilon=0.05)
        >>> print(res.explain().splitlines()[0])
        Solved by HiGHS (highs-ds), the first solver of the default chain for this program.
        """
        choice = self.solver_choice
        lines = []
        if not choice:
            lines.append(f"Solved by {self.solver}.")
        else:
            asked = ("the default chain" if choice["reason"].startswith("the default")
                     else choice["reason"].split(":")[0])
            lines.append(f"Solved by {self.solver}, the first solver of {asked} for this "
                         "program." if choice["reason"].startswith("the default") else
                         f"Solved by {self.solver} ({asked}).")
            for name, why in choice.get("handed_back", {}).items():
                lines.append(f"{name} was tried first and handed the program back: {why}.")
            belief = choice.get("belief_stage")
            if belief:
                for name, why in {**belief["passed_over"], **belief["handed_back"]}.items():
                    lines.append(f"The belief's solver {name} was not used: {why}.")
            passed = choice.get("passed_over", {})
            if passed:
                lines.append("Passed over: " + "; ".join(f"{n} ({w})" for n, w in
                                                        passed.items()) + ".")
        if self.status == "locally optimal":
            lines.append("The result is a local optimum: a criterion is not convex in the "
                         "policy, so it was found by successive linearisation, each step "
                         "one program solved as above; no certificate of global optimality "
                         "is claimed.")
        cert = self.certificates.get("optimality")
        if cert is not None:
            word = "certified" if cert["certified"] else "could NOT certify"
            lines.append(f"{cert['solver']} {word} optimality: duality gap {cert['gap']:.3g} "
                         f"(bound {cert['bound']:.3g}).")
        if self.guarantee is not None:
            lines.extend(self.guarantee.sentences())
        v = self.verification
        if v is not None:
            lines.append(f"The utility and every deviation were recomputed from the "
                         f"policy's decision table, independently of the solver (tolerance "
                         f"{v.tol:g}).")
        return "\n".join(lines)

    def scenarios(self) -> pd.DataFrame:
        """Utility and each deviation in every scenario of the belief (one row each)."""
        v = self.verification
        if v is None or v.scenario_utilities is None:
            return self.to_frame()
        cols = {"utility": v.scenario_utilities}
        cols.update(v.scenario_deviations or {})
        return result_table(cols).rename_axis("scenario")

    def to_frame(self) -> pd.DataFrame:
        """One-row DataFrame: utility and each deviation."""
        return result_table([{"utility": self.utility, **self.deviations}])

    def __repr__(self) -> str:
        parts = [self.status, f"utility={self.utility:.6g}"]
        parts += [f"{k}={v:.4g}" for k, v in self.deviations.items()]
        return f"OptimizeResult({', '.join(parts)})"
