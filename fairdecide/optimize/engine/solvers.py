"""Running the chain's solvers on an assembled program: the structured solver for large
tabular programs (:mod:`fairdecide.optimize.engine.structured`), the interior point over
unit blocks, HiGHS (in the one HiGHS wrapper,
:class:`~fairdecide.optimize.engine.highs_model.HighsModel`), cvxpy by name. Which of them
solves is :func:`fairdecide.optimize.engine.chain.choose`'s decision, not this module's.

KL terms need an exponential-cone solver and go to Clarabel through cvxpy. highspy and
cvxpy are imported where first used, so ``import fairdecide`` stays fast.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from fairdecide.exceptions import SolverError, SolverFallbackWarning
from fairdecide.optimize.engine.chain import Case, choose, fallback, resolve_solver
from fairdecide.optimize.engine.highs_model import FEASIBILITY_TOL, IPM_GAP_TOL
from fairdecide.optimize.engine.rounds import GAP, Certificate, gap_shares
from fairdecide.optimize.program.policy_program import Program

__all__ = ["SolveResult", "highs_method", "solve_program"]


@dataclass
class SolveResult:
    x: np.ndarray | None
    objective: float
    ok: bool
    status: str
    solver: str
    seconds: float
    iterations: int | None = None
    #: the solver's statistics and certificate by solver ("structured": its rounds and
    #: gap, or why it fell back; "interior_point": the uncrossed interior point's gap)
    details: dict[str, Any] | None = None
    #: d objective / d b_ub at the optimum (the inequality rows' duals), where the
    #: solver reports them at a vertex (HiGHS on the whole program)
    ub_duals: np.ndarray | None = None
    #: the master loop's certificate (the structured solver)
    certificate: Certificate | None = None
    #: the chooser's choice (:meth:`fairdecide.optimize.engine.chain.Choice.as_dict`)
    choice: dict[str, Any] | None = None

    @classmethod
    def of_model(cls, model: Any, ok: bool, status: str, solver: str, seconds: float,
                 iterations: int, details: dict[str, Any] | None = None, m_ub: int = 0
                 ) -> SolveResult:
        """The result of a solved HighsModel: its values and objective when ``ok``
        (otherwise HiGHS's status word), and the duals of its first ``m_ub`` rows (the
        inequality rows, as ``HighsModel.from_rows`` lays them out)."""
        return cls(model.values() if ok else None, model.objective if ok else np.nan, ok,
                   "optimal" if ok else status, solver, seconds, iterations, details,
                   model.row_duals()[:m_ub] if ok and m_ub else None)


def solve_program(prog: Program, solver: str | None = None, time_limit: float | None = None,
                  *, belief: Case | None = None) -> SolveResult:
    """Solve ``prog`` by the solvers :func:`~fairdecide.optimize.engine.chain.choose`
    picks for it under ``solver`` (a name :func:`resolve_solver` accepts), in order: a
    solver that hands the program back (it cannot certify an optimum, or its blocks do
    not suit it) passes it to the next, and says so in ``solver``, ``details`` and
    ``choice``. ``belief``: the belief-stage case of the trade-off and criteria ``prog``
    was written for (:meth:`Case.of_belief`), so that an asked belief-stage solver's
    refusal can be said.

    A solver asked for by name that does not solve the program (it does not take it, or
    hands it back) is a :class:`~fairdecide.exceptions.SolverFallbackWarning` naming it,
    why, and the solver that solved instead (:func:`~fairdecide.optimize.engine.chain.
    fallback`): every program of every route and stage is solved here."""
    case, asked = Case.of_program(prog, belief), resolve_solver(solver)
    choice = choose(case, asked)
    spent, details, res = 0.0, {}, None
    for name in choice.order:
        t0 = time.perf_counter()
        res = _RUNNERS.get(name, _solve_cvxpy)(prog, name, time_limit)
        spent += time.perf_counter() - t0
        if isinstance(res, SolveResult):
            break
        why, info = res
        choice.handed_back[name] = why
        details.update(info)
    if not isinstance(res, SolveResult):
        raise SolverError(f"no solver took the program ({choice.handed_back})")
    note = fallback(case, asked, choice, name)
    if note is not None:
        warnings.warn(note, SolverFallbackWarning, stacklevel=2)
    res.seconds = spent
    for name, why in choice.handed_back.items():
        res.solver += f", after {name} handed the program back ({why})"
    if details:
        res.details = {**details, **(res.details or {})}
    res.choice = choice.as_dict()
    return res


#: A hand-back: why, and the solver's statistics.
HandBack = tuple[str, dict[str, Any]]


def _solve_structured(prog: Program, name: str, time_limit: float | None
                      ) -> SolveResult | HandBack:
    """The structured solver, or a hand-back when it cannot certify an optimum."""
    from fairdecide.optimize.engine.structured import solve_structured

    t0 = time.perf_counter()
    run = solve_structured(prog, time_limit)
    if not (run.ok or run.infeasible):
        return run.status, {"structured": run.details}
    rounds = run.certificate.rounds if run.certificate is not None else 0
    where = (f"structured: {run.details.get('working_units', 0)} of "
             f"{run.details.get('units', 0)} units free, {rounds} rounds")
    return SolveResult(run.x, run.objective, run.ok, run.status, where,
                       time.perf_counter() - t0, run.iterations, {"structured": run.details},
                       run.ub_duals, certificate=run.certificate)


def _solve_unit_ipm(prog: Program, name: str, time_limit: float | None
                    ) -> SolveResult | HandBack:
    """The interior point over unit blocks (3.5-4x faster than HiGHS's on 32 scenarios of
    1000 x 4 x 5 cells under epsilon 0.01 and lam 0.5,
    benchmarks/results/beliefs_unit_ipm.txt), or a hand-back when the program's blocks do
    not suit it or it does not converge."""
    from fairdecide.optimize.engine.unit_ipm import solve_unit_ipm

    t0 = time.perf_counter()
    x, objective, status, info = solve_unit_ipm(prog, time_limit)
    if x is None:
        return status, {"unit_ipm": {**info, "fallback_reason": status}}
    ub_duals, reduced = info.pop("ub_duals"), info.pop("reduced_costs")
    res = SolveResult(x, objective, True, "optimal", "unit interior point (no crossover)",
                      time.perf_counter() - t0, info.get("iterations"), {"unit_ipm": info},
                      ub_duals)
    worst = max(info["primal_residual"], info["dual_residual"])
    return _certified(res, prog, info.pop("absolute_gap"), worst, reduced, IPM_GAP_TOL)


def highs_method(prog: Program) -> str:
    """HiGHS's method for ``prog`` by size: "highs-ds" or "highs-ipm" (the chain's
    rule, :attr:`~fairdecide.optimize.engine.chain.Case.simplex_by_size`)."""
    return "highs-ds" if Case.of_program(prog).simplex_by_size else "highs-ipm"


def _solve_highs(prog: Program, method: str, time_limit: float | None) -> SolveResult:
    """HiGHS on the whole program by ``method`` ("highs-ds" or "highs-ipm"), in the one
    HiGHS wrapper (its tolerances)."""
    from fairdecide.optimize.engine.highs_model import HighsModel

    t0 = time.perf_counter()
    model = HighsModel.from_program(prog, time_limit)
    model.set_method(method)
    ok, status = model.solve()
    # d objective / d b_ub: HiGHS's row duals of the inequality rows
    res = SolveResult.of_model(model, ok, status, f"HiGHS ({method})",
                               time.perf_counter() - t0, model.iterations,
                               m_ub=prog.A_ub.shape[0])
    return _with_certificate(res, prog, model, 0.0)


def _solve_interior(prog: Program, name: str, time_limit: float | None) -> SolveResult:
    """HiGHS's interior point without crossover, for a belief's whole program.

    A belief's optimum randomises in many units, and crossing the interior solution over
    to a basis is then most of the work: on 32 scenarios of 1000 x 4 x 5 cells under
    epsilon 0.01, 486 s with crossover against 25 s without (137,520 crossover simplex
    iterations after 28 interior-point ones). The solution is stopped at a relative
    primal-dual gap of ``IPM_GAP_TOL`` and reported in ``details`` (the objective lies
    within about 1e-8 relative of the vertex's; the policy is verified on its decision
    tables like every other). ``solver="highs-ipm"`` still crosses over.
    """
    from fairdecide.optimize.engine.highs_model import HighsModel

    t0 = time.perf_counter()
    model = HighsModel.from_program(prog, time_limit)
    model.set_method("highs-ipm", crossover=False)
    ok, status = model.solve()
    seconds = time.perf_counter() - t0
    details = {"interior_point": model.accuracy()}
    iterations = details["interior_point"]["ipm_iterations"]
    # the inequality rows' duals at the interior optimum: those of the optimal face's
    # centre where they are not unique (a supergradient like any other)
    res = SolveResult.of_model(model, ok, status, "HiGHS (interior point, no crossover)",
                               seconds, iterations, details, m_ub=prog.A_ub.shape[0])
    return _with_certificate(res, prog, model, IPM_GAP_TOL)


def _with_certificate(res: SolveResult, prog: Program, model: Any, gap_tol: float
                      ) -> SolveResult:
    """``res`` with a certificate of HiGHS's whole-program solve (:func:`_certified`):
    its gap is HiGHS's relative primal-dual objective error times max(1, |objective|),
    its feasibility HiGHS's largest primal and dual infeasibilities, its reduced costs
    HiGHS's."""
    if not res.ok:
        return res
    acc = model.accuracy()
    gap = max(float(acc["gap"]), 0.0) * max(1.0, abs(res.objective))
    worst = max(acc["primal_infeasibility"], acc["dual_infeasibility"])
    return _certified(res, prog, gap, worst, model.reduced_costs(), gap_tol)


def _certified(res: SolveResult, prog: Program, gap: float, worst: float,
               reduced_costs: np.ndarray, gap_tol: float) -> SolveResult:
    """``res`` with the certificate of a one-shot solve of the whole program: the
    duality gap is the larger of the solver's own primal-dual gap (``gap``, absolute)
    and the Lagrangian gap over the unit simplices at the solver's reduced costs (the
    master loops' certificate, :func:`~fairdecide.optimize.engine.rounds.gap_shares`,
    computed here from the solution, not reported by the solver); certified when it is
    within the stopping rule's bound (or ``gap_tol``, relative, for a solve stopped at
    its gap) and the solver's primal and dual infeasibilities (``worst``) within
    HiGHS's feasibility tolerance."""
    scale = max(1.0, abs(res.objective))
    N, n_a = int(prog.n_units), int(prog.n_actions)
    if N and Case.of_program(prog).unit_simplices:
        d = np.asarray(reduced_costs)[:N * n_a].reshape(N, n_a)
        gap = max(gap, gap_shares(d, np.clip(res.x[:N * n_a], 0.0, None).reshape(N, n_a))[1])
    bound = max(GAP, gap_tol) * scale
    res.certificate = Certificate(res.solver, float(res.objective), float(gap), bound,
                                  float(worst), 1, res.seconds,
                                  bool(gap <= bound and worst <= FEASIBILITY_TOL))
    return res


def _solve_cvxpy(prog: Program, solver: str, time_limit: float | None) -> SolveResult:
    """A cvxpy solver by its name (KL terms: exponential cones)."""
    import cvxpy as cp

    x = cp.Variable(prog.n_variables)
    cons = [prog.A_eq @ x == prog.b_eq]
    if prog.A_ub.shape[0]:
        cons.append(prog.A_ub @ x <= prog.b_ub)
    fin_lb, fin_ub = np.isfinite(prog.lb), np.isfinite(prog.ub)
    cons.append(x[np.flatnonzero(fin_lb)] >= prog.lb[fin_lb])
    if fin_ub.any():
        cons.append(x[np.flatnonzero(fin_ub)] <= prog.ub[fin_ub])
    for term in prog.kl:
        m = x[term.cols]
        pg = term.A_group @ m + term.b_group
        pp = term.A_pool @ m + term.b_pool
        cons.append(x[term.f_index] >= term.weight @ cp.kl_div(pg, pp))
    problem = cp.Problem(cp.Minimize(prog.c @ x), cons)
    t0 = time.perf_counter()
    try:
        problem.solve(solver=solver.upper())
    except cp.error.SolverError as exc:
        return SolveResult(None, np.nan, False, f"solver error: {exc}", solver.upper(),
                           time.perf_counter() - t0)
    except (ValueError, KeyError) as exc:
        raise SolverError(
            f"solver {solver!r} is not usable here ({exc}); installed cvxpy solvers are "
            f"{cp.installed_solvers()}"
        ) from None
    seconds = time.perf_counter() - t0
    ok = problem.status in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE) and x.value is not None
    res = SolveResult(
        x=np.asarray(x.value) if ok else None,
        objective=float(problem.value) if ok else np.nan,
        ok=ok,
        status=str(problem.status),
        solver=f"cvxpy/{solver.upper()}",
        seconds=seconds,
        iterations=None,
    )
    return _relaxation_certificate(res, prog, time_limit) if ok else res


def _relaxation_certificate(res: SolveResult, prog: Program, time_limit: float | None
                            ) -> SolveResult:
    """``res`` (a cvxpy solve) with a certificate that does not trust the cone solver: a
    lower bound on the optimum from the **tangent relaxation** at its solution x*, each
    KL epigraph f >= sum_r w_r kl(g_r, p_r) replaced by its tangent plane at (g*, p*),

        f >= sum_r w_r [log(g*_r / p*_r) g_r + (1 - g*_r / p*_r) p_r]

    (kl(g, p) = g log(g / p) - g + p is convex and homogeneous of degree one, so the
    plane passes through 0 and lies below it everywhere: every point of the program
    satisfies the relaxation), an LP solved by HiGHS's dual simplex. The gap is
    c . x* minus that LP's optimum; the largest violation is x*'s in the program's own
    rows, bounds and KL epigraphs, recomputed here. Certified within the cone solver's
    tolerance, ``CONE_TOL`` (Clarabel's gap and feasibility tolerances as cvxpy sets
    them). A program without KL terms is its own relaxation."""
    import dataclasses

    import scipy.sparse as sp

    x = res.x
    rows, rhs, worst = [], [], 0.0
    for term in prog.kl:
        m = x[term.cols]
        g = np.maximum(term.A_group @ m + term.b_group, _KL_FLOOR)
        p = np.maximum(term.A_pool @ m + term.b_pool, _KL_FLOOR)
        kl = g * np.log(g / p) - g + p
        worst = max(worst, float(term.weight @ kl - x[term.f_index]))
        a_g, a_p = term.weight * np.log(g / p), term.weight * (1.0 - g / p)
        row = np.zeros(prog.n_variables)
        row[term.cols] = a_g @ term.A_group + a_p @ term.A_pool
        row[term.f_index] -= 1.0
        rows.append(row)
        rhs.append(-(a_g @ term.b_group + a_p @ term.b_pool))
    relax = dataclasses.replace(
        prog, kl=[], A_ub=sp.vstack([prog.A_ub, sp.csr_matrix(np.array(rows).reshape(
            len(rows), prog.n_variables))], format="csr"),
        b_ub=np.concatenate([prog.b_ub, rhs]))
    lower = _solve_highs(relax, "highs-ds", time_limit)
    worst = max(worst, *_violations(prog, x))
    gap = max(res.objective - lower.objective, 0.0) if lower.ok else np.inf
    bound = CONE_TOL * max(1.0, abs(res.objective))
    res.certificate = Certificate(res.solver, float(res.objective), float(gap), bound,
                                  float(worst), 1, res.seconds,
                                  bool(gap <= bound and worst <= CONE_TOL))
    return res


def _violations(prog: Program, x: np.ndarray) -> tuple[float, ...]:
    """The largest violation of ``x``'s equality rows, inequality rows and bounds."""
    return (float(np.max(np.abs(prog.A_eq @ x - prog.b_eq), initial=0.0)),
            float(np.max(prog.A_ub @ x - prog.b_ub, initial=0.0)),
            float(np.max(prog.lb - x, initial=0.0)), float(np.max(x - prog.ub, initial=0.0)))


#: The tangent plane of kl at a zero probability is vertical; the certificate takes it
#: at this probability instead (a plane below kl all the same, the bound a little looser).
_KL_FLOOR = 1e-12
#: cvxpy's Clarabel stops at relative gap and feasibility 1e-8: the certificate of a
#: cone solve is within that, not HiGHS's 1e-9.
CONE_TOL = 1e-8


_RUNNERS = {
    "structured": _solve_structured,
    "unit-ipm": _solve_unit_ipm,
    "highs-ipm-no-crossover": _solve_interior,
    "highs-ds": _solve_highs,
    "highs-ipm": _solve_highs,
}
