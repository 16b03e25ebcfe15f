"""The runs of HiGHS and of cvxpy on a whole program, and the certificates they leave:
HiGHS by a method the chain gives it (:func:`run_highs`, :func:`run_interior`, in the
one HiGHS wrapper, :class:`~fairdecide.optimize.engine.highs_model.HighsModel`), cvxpy
by a solver's name (:func:`run_cvxpy`: KL terms need an exponential cone, Clarabel),
a plain linear program (:func:`run_lp`) and a Pareto frontier's tolerances kept warm
(:func:`run_warm_tolerance`). Each is the run of a solver declared in
:mod:`fairdecide.optimize.engine.chain`, which chooses among them and gives each its
method; nothing here decides. cvxpy is imported where first used, so
``import fairdecide`` stays fast.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping
from typing import Any

import numpy as np
import scipy.sparse as sp

from fairdecide.exceptions import SolverError
from fairdecide.optimize.engine.highs_model import FEASIBILITY_TOL, IPM_GAP_TOL, HighsModel
from fairdecide.optimize.engine.rounds import GAP, Certificate, gap_shares
from fairdecide.optimize.engine.tasks import HandBack, ProgramTask, SolveResult
from fairdecide.optimize.program.policy_program import Program

__all__ = ["CONE_TOL", "certified", "run_cvxpy", "run_highs", "run_interior", "run_lp",
           "run_warm_tolerance"]


def run_highs(task: Any, method: Mapping[str, Any], label: str) -> SolveResult:
    """HiGHS on the task's whole program by ``method`` (an option set of
    :mod:`~fairdecide.optimize.engine.highs_model`), in the one HiGHS wrapper (its
    tolerances); ``label`` names it in ``result.solver``."""
    program = task.built()
    t0 = time.perf_counter()
    model = HighsModel.from_program(program, task.time_limit)
    model.set_method(method)
    ok, status = model.solve()
    # d objective / d b_ub: HiGHS's row duals of the inequality rows
    res = SolveResult.of_model(model, ok, status, label, time.perf_counter() - t0,
                               model.iterations, m_ub=program.A_ub.shape[0])
    return _with_certificate(res, program, model, 0.0)


def run_interior(task: Any, method: Mapping[str, Any], label: str) -> SolveResult:
    """HiGHS's interior point without crossover (``method``), for a belief's whole
    program.

    A belief's optimum randomises in many units, and crossing the interior solution over
    to a basis is then most of the work: on 32 scenarios of 1000 x 4 x 5 cells under
    epsilon 0.01, 486 s with crossover against 25 s without (137,520 crossover simplex
    iterations after 28 interior-point ones). The solution is stopped at a relative
    primal-dual gap of ``IPM_GAP_TOL`` and reported in ``details`` (the objective lies
    within about 1e-8 relative of the vertex's; the policy is verified on its decision
    tables like every other). ``solver="highs-ipm"`` still crosses over.
    """
    program = task.built()
    t0 = time.perf_counter()
    model = HighsModel.from_program(program, task.time_limit)
    model.set_method(method)
    ok, status = model.solve()
    seconds = time.perf_counter() - t0
    details = {"interior_point": model.accuracy()}
    iterations = details["interior_point"]["ipm_iterations"]
    # the inequality rows' duals at the interior optimum: those of the optimal face's
    # centre where they are not unique (a supergradient like any other)
    res = SolveResult.of_model(model, ok, status, label, seconds, iterations, details,
                               m_ub=program.A_ub.shape[0])
    return _with_certificate(res, program, model, IPM_GAP_TOL)


def run_lp(task: Any, method: Mapping[str, Any], label: str) -> SolveResult:
    """HiGHS by ``method`` on the task's linear program ``lo <= A x <= hi``,
    ``lb <= x <= ub`` (an :class:`~fairdecide.optimize.engine.tasks.LPTask`): its
    values and objective, its seconds in HiGHS."""
    model = HighsModel(task.c, task.lb, task.ub, task.A, task.lo, task.hi, task.time_limit)
    model.set_method(method)
    ok, status = model.solve()
    return SolveResult.of_model(model, ok, status, label, model.seconds, model.iterations)


def run_warm_tolerance(task: Any, method: Mapping[str, Any], label: str
                       ) -> SolveResult | HandBack:
    """One tolerance of a Pareto frontier (a
    :class:`~fairdecide.optimize.engine.tasks.TolerancesTask`): its program is kept in
    one HiGHS model from tolerance to tolerance (built on the first), only the tolerance
    rows' bounds change, and ``method`` (the dual simplex) restarts from the last
    optimum's basis, which stays dual feasible when the tolerances are visited from the
    largest down. A tolerance HiGHS does not solve is handed back."""
    program = task.program
    if task.model is None:
        task.model = HighsModel.from_program(program)
        task.model.set_method(method)
    model, rows = task.model, program.tolerance_rows
    # tolerance rows are inequality rows
    model.set_row_bounds(rows, np.full(len(rows), -np.inf), np.full(len(rows), task.epsilon))
    iterations, seconds = model.iterations, model.seconds
    ok, status = model.solve()
    if not ok:  # infeasible, or HiGHS failed: left to the caller
        return HandBack(f"HiGHS did not solve it ({status})")
    name = (label if task.previous is None else
            f"HiGHS (dual simplex, warm from epsilon {task.previous:g})")
    task.previous = task.epsilon
    res = SolveResult.of_model(model, ok, status, name, model.seconds - seconds,
                               model.iterations - iterations)
    res.program, res.size = program, {"n_variables": program.n_variables,
                                      "n_constraints": program.n_constraints,
                                      "nnz": program.nnz}
    return res


def _with_certificate(res: SolveResult, prog: Program, model: Any, gap_tol: float
                      ) -> SolveResult:
    """``res`` with a certificate of HiGHS's whole-program solve (:func:`certified`):
    its gap is HiGHS's relative primal-dual objective error times max(1, |objective|),
    its feasibility HiGHS's largest primal and dual infeasibilities, its reduced costs
    HiGHS's."""
    if not res.ok:
        return res
    acc = model.accuracy()
    gap = max(float(acc["gap"]), 0.0) * max(1.0, abs(res.objective))
    worst = max(acc["primal_infeasibility"], acc["dual_infeasibility"])
    return certified(res, prog, gap, worst, model.reduced_costs(), gap_tol)


def certified(res: SolveResult, prog: Program, gap: float, worst: float,
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
    if N and prog.unit_simplices:
        d = np.asarray(reduced_costs)[:N * n_a].reshape(N, n_a)
        gap = max(gap, gap_shares(d, np.clip(res.x[:N * n_a], 0.0, None).reshape(N, n_a))[1])
    bound = max(GAP, gap_tol) * scale
    res.certificate = Certificate(res.solver, float(res.objective), float(gap), bound,
                                  float(worst), 1, res.seconds,
                                  bool(gap <= bound and worst <= FEASIBILITY_TOL))
    return res


def run_cvxpy(task: Any, solver: str, relaxation: Mapping[str, Any]) -> SolveResult:
    """A cvxpy solver by its name on the task's whole program (KL terms: exponential
    cones), certified by its tangent relaxation solved by HiGHS's ``relaxation``
    method (:func:`_relaxation_certificate`) unless the task asks for no certificate."""
    import cvxpy as cp

    prog, time_limit = task.built(), task.time_limit
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
    if not (ok and task.certify):
        return res
    return _relaxation_certificate(res, prog, time_limit, relaxation)


def run_clarabel(task: Any, relaxation: Mapping[str, Any]) -> SolveResult:
    """Clarabel on the task's whole program written as its cones directly
    (:func:`conic_form`), certified like a cvxpy solve by its tangent relaxation solved
    by HiGHS's ``relaxation`` method (:func:`_relaxation_certificate`) unless the task
    asks for no certificate (``task.certify``: successive linearisation's steps).

    The same solver cvxpy would call, without cvxpy's canonicalisation: successive
    linearisation with KL terms solves two such programs a step, and cvxpy compiled
    each one afresh: by hand, 10 to 20 ms of the 13 to 23 ms a solve took on a
    21-variable program (``make_tabular_problem(3, 2, 2, 2)``), against 1 to 3 ms here
    (0.5 ms of it in Clarabel); end to end in
    benchmarks/results/sufficiency_kl_vs_landed.txt. Clarabel's default tolerances are
    cvxpy's (``CONE_TOL``).
    ``clarabel`` is imported where first used; it is installed with cvxpy (which
    requires it), a requirement of the package."""
    import clarabel  # with cvxpy; imported here so that ``import fairdecide`` stays fast

    prog = task.built()
    P, q, A, b, sizes = conic_form(prog)
    settings = clarabel.DefaultSettings()
    settings.verbose = False
    if task.time_limit is not None:
        settings.time_limit = float(task.time_limit)
    n_zero, n_nonneg, n_exp = sizes
    cones = ([clarabel.ZeroConeT(n_zero)] if n_zero else []) + (
        [clarabel.NonnegativeConeT(n_nonneg)] if n_nonneg else []) + [
        clarabel.ExponentialConeT() for _ in range(n_exp)]
    t0 = time.perf_counter()
    solution = clarabel.DefaultSolver(P, q, A, b, cones, settings).solve()
    seconds = time.perf_counter() - t0
    status = str(solution.status)
    ok = status in ("Solved", "AlmostSolved")
    x = np.asarray(solution.x)[:prog.n_variables] if ok else None
    res = SolveResult(x, float(prog.c @ x) if ok else np.nan, ok,
                      "optimal" if status == "Solved" else
                      "optimal (inaccurate)" if ok else status.lower(), "Clarabel",
                      seconds, int(solution.iterations))
    if not (ok and task.certify):
        return res
    return _relaxation_certificate(res, prog, task.time_limit, relaxation)


def conic_form(prog: Program) -> tuple[sp.csc_matrix, np.ndarray, sp.csc_matrix,
                                       np.ndarray, tuple[int, int, int]]:
    """``prog`` as Clarabel's min q . v s.t. b - A v in K (P = 0), K = zero cone x
    nonnegative cone x exponential cones; v = (x, s), one s_r per KL entry.

    Rows: the equalities; then the inequalities, the finite bounds and each KL term's
    epigraph x[f] >= sum_r w_r (s_r - g_r + p_r); then (-s_r, g_r, p_r) in the
    exponential cone {(u, v, w): v exp(u / v) <= w}, which is s_r >= g_r log(g_r / p_r),
    so that w_r (s_r - g_r + p_r) bounds w_r kl(g_r, p_r) (g = A_group x[cols] + b_group,
    p likewise over the pool). Returns (P, q, A, b, (zero rows, nonnegative rows,
    exponential cones))."""
    n = prog.n_variables
    R = sum(len(t.weight) for t in prog.kl)
    fl, fu = np.flatnonzero(np.isfinite(prog.lb)), np.flatnonzero(np.isfinite(prog.ub))
    rows, cols, vals, rhs = [], [], [], []
    row = 0

    def add(r: np.ndarray, c: np.ndarray, v: np.ndarray, b: np.ndarray) -> None:
        nonlocal row
        rows.append(r + row)
        cols.append(c)
        vals.append(v)
        rhs.append(b)
        row += len(b)

    for M, b in ((prog.A_eq, prog.b_eq), (prog.A_ub, prog.b_ub)):
        M = sp.csr_matrix(M)
        add(np.repeat(np.arange(M.shape[0]), np.diff(M.indptr)), M.indices, M.data, b)
    add(np.arange(len(fl)), fl, -np.ones(len(fl)), -prog.lb[fl])
    add(np.arange(len(fu)), fu, np.ones(len(fu)), prog.ub[fu])
    cones, epi, off = [], ([], [], [], []), n
    for k, t in enumerate(prog.kl):
        r, w = len(t.weight), t.weight
        s = np.arange(off, off + r)
        # the epigraph's row: w on its s_r, w (A_pool - A_group) on the policy side, -x[f]
        c = np.concatenate([s, t.cols, [t.f_index]])
        epi[0].append(np.full(len(c), k))
        epi[1].append(c)
        epi[2].append(np.concatenate([w, w @ (t.A_pool - t.A_group), [-1.0]]))
        epi[3].append(w @ t.b_group - w @ t.b_pool)
        gi, gj = np.nonzero(t.A_group)
        pi_, pj = np.nonzero(t.A_pool)
        cones.append((np.concatenate([3 * np.arange(r), 3 * gi + 1, 3 * pi_ + 2]),
                      np.concatenate([s, t.cols[gj], t.cols[pj]]),
                      np.concatenate([np.ones(r), -t.A_group[gi, gj], -t.A_pool[pi_, pj]]),
                      np.column_stack([np.zeros(r), t.b_group, t.b_pool]).ravel()))
        off += r
    if prog.kl:
        add(np.concatenate(epi[0]), np.concatenate(epi[1]), np.concatenate(epi[2]),
            np.array(epi[3]))
    n_zero, n_nonneg = prog.A_eq.shape[0], row - prog.A_eq.shape[0]
    for cone in cones:
        add(*cone)
    N = n + R
    A = sp.csc_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                      shape=(row, N))
    q = np.concatenate([prog.c, np.zeros(R)])
    return sp.csc_matrix((N, N)), q, A, np.concatenate(rhs), (n_zero, n_nonneg, R)


def _relaxation_certificate(res: SolveResult, prog: Program, time_limit: float | None,
                            method: Mapping[str, Any]) -> SolveResult:
    """``res`` (a cvxpy solve) with a certificate that does not trust the cone solver: a
    lower bound on the optimum from the **tangent relaxation** at its solution x*, each
    KL epigraph f >= sum_r w_r kl(g_r, p_r) replaced by its tangent plane at (g*, p*),

        f >= sum_r w_r [log(g*_r / p*_r) g_r + (1 - g*_r / p*_r) p_r]

    (kl(g, p) = g log(g / p) - g + p is convex and homogeneous of degree one, so the
    plane passes through 0 and lies below it everywhere: every point of the program
    satisfies the relaxation), an LP solved by HiGHS (``method``). The gap is
    c . x* minus that LP's optimum; the largest violation is x*'s in the program's own
    rows, bounds and KL epigraphs, recomputed here. Certified within the cone solver's
    tolerance, ``CONE_TOL`` (Clarabel's gap and feasibility tolerances as cvxpy sets
    them). A program without KL terms is its own relaxation."""
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
    lower = run_highs(ProgramTask(program=relax, time_limit=time_limit), method, "HiGHS")
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

