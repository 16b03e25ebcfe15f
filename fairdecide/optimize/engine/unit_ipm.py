"""The interior point over unit simplices and coupling rows: one Mehrotra loop, its
normal equations factored by the program's structure.

A belief's program (:mod:`fairdecide.optimize.engine._block_lp`) is one simplex per unit
and coupling rows: the scenarios' marginal definitions m_k = B_k pi, touched by the
policy, and the rest (utilities, deviation epigraphs, the trade-off's rows), which touch
only the other variables. Written out, each policy variable sits in K rows, and on tight
tolerances or penalties (where the optimum randomises in many units) HiGHS's interior
point spends most of its time on that dense block (benchmarks/results/beliefs.txt).

This solver is Mehrotra's predictor-corrector (:func:`mehrotra`) on

    min c . x   s.t.   A x = b,  x >= 0,    A = [E 0 0; G_pi G_v I]

(E: the simplex rows; I: a slack per inequality row). Each step's normal equations
A D A^T dy = r are solved one of three ways, by what the program is:

- **with the marginals substituted**
  (:class:`~fairdecide.optimize.engine._normal_marginals.MarginalNormal`), the whole
  program's way when every inner row (a row the policy touches) defines a group
  marginal m = B pi (:func:`~fairdecide.optimize.engine._normal_marginals.substitution`):
  m >= 0 holds for every policy, so m is free and is substituted out, and the coupling
  rows are the border alone. The simplices eliminated, one dense matrix is factored a
  step, D P D^T plus the other columns' part, with P the inner blocks' Gram, formed but
  never factored (1000 x 4 x 5 cells, K = 32: 672 rows, against four blocks of 160
  factored and inverted and the 672-row border after them; and 19 steps under lam 0.5
  against 25, the marginals' own columns, whose D grows to 1 / REGULARISATION, gone);
- **by rows** (:class:`~fairdecide.optimize.engine._normal_rows.RowNormal`): the
  simplices eliminated unit by unit, then the inner row blocks no unit links (one per
  group when the policy sees it), then the border rows' Schur complement. This is the
  whole program's way (:func:`solve_unit_ipm`). Before it factors anything, marginal
  rows that the rest of the program reads alike are merged
  (:mod:`fairdecide.optimize.engine._merge_rows`: independence reads P(z, a), so each
  pair of outcomes' rows becomes one, halving the inner blocks), and each absolute value
  of a deviation is one border row (the program writes D m + d = p - n). A block larger
  than ``MAX_BLOCK`` rows (a group-blind policy at many scenarios) is not taken:
  :func:`analyse` says why. Programs whose inner rows are not all marginals' (a
  capacity row on the policy, say) are solved this way;
- **by the policy's columns**
  (:class:`~fairdecide.optimize.engine._normal_columns.ColumnNormal`): a penalised
  belief's absolute values written over the policy itself, its marginals substituted
  (:mod:`fairdecide.optimize.engine.term_ipm`), one row per term: the rows far outnumber
  the policy's free columns, and Woodbury's identity leaves one dense matrix of their
  number to factor.

It stops at a relative primal-dual gap, primal and dual infeasibility all below ``TOL``,
without a crossover (the solution randomises on the optimal face, like HiGHS's interior
point without crossover); otherwise it says why (infeasible or unbounded programs, a
factorisation that fails, the iteration or time limit), and the caller hands the program
to HiGHS.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
import scipy.sparse as sp

from fairdecide._common.threads import one_blas_thread
from fairdecide.optimize.engine._block_lp import BlockLP, block_structure
from fairdecide.optimize.engine._merge_rows import Merge, merge_rows
from fairdecide.optimize.engine._normal_marginals import (
    MarginalNormal,
    Substitution,
    substitution,
)
from fairdecide.optimize.engine._normal_rows import RowNormal, row_blocks
from fairdecide.optimize.engine.highs_model import IPM_GAP_TOL
from fairdecide.optimize.engine.solvers import certified
from fairdecide.optimize.engine.tasks import HandBack, SolveResult

__all__ = ["Iterate", "NormalEquations", "analyse", "mehrotra", "run", "solve_unit_ipm",
           "system", "unit_ipm_suits"]

#: Stop when the relative gap and the relative primal and dual residuals are below this
#: (HiGHS's interior point without crossover stops at the same gap, IPM_GAP_TOL): the
#: known-answer bank asks deviations exact to 1e-9, which 1e-9 missed by 1e-9. Programs
#: without an interior (utility_slack = 0, whose floor is the optimum) may stall above
#: it and go to HiGHS.
TOL = 1e-10
MAX_ITER = 100
#: Largest block of inner rows (or border) factored densely.
MAX_BLOCK = 4000
#: Step back from the boundary by this share (Mehrotra).
STEP = 0.995
#: Primal regularisation: the normal equations use D = (Z / X + rho)^-1, so a variable
#: far from its bound (a marginal, whose z/x -> 0) weighs at most 1/rho and the block
#: elimination does not subtract numbers of that size from much smaller ones. The step
#: is then Newton's for a perturbed system; the residuals, recomputed exactly, decide.
REGULARISATION = 1e-9
#: Gondzio's centrality correctors a step (:func:`mehrotra`): on 32 scenarios of
#: 1000 x 4 x 5 cells, 14 steps against 19 under lam 0.5 (0.579 s against 0.601 s end
#: to end) and 13 against 19 under epsilon 0.01 (0.645 s against 0.716 s), the same
#: optima (``benchmarks/results/belief_lam_gondzio.txt``).
CORRECTORS = 2


Layout = tuple[BlockLP, list[np.ndarray], np.ndarray, Merge | None, Substitution | None]


def analyse(program: Any) -> Layout | str:
    """The program's unit blocks (its marginal rows merged where nothing tells them
    apart: :mod:`fairdecide.optimize.engine._merge_rows`), its inner row blocks and
    border rows (what :func:`solve_unit_ipm` factors), how to give the program's
    variables back, and its marginals when they can be substituted out (None
    otherwise); or why this solver does not take it."""
    lp = block_structure(program)
    if isinstance(lp, str):
        return lp
    if np.any(np.isfinite(lp.lo) & (lp.lo < lp.hi)):
        return "a coupling row bounded on both sides"
    if np.any((lp.l_v != 0.0) & np.isfinite(lp.l_v)) or np.any(np.isfinite(lp.u_v)):
        return "variable bounds other than v >= 0 or free"
    lp, merge = merge_rows(lp)
    blocks, border = row_blocks(lp)
    largest = max([len(border), *(len(b) for b in blocks)])
    if largest > MAX_BLOCK:
        return f"a block of {largest} rows to factor densely (at most {MAX_BLOCK})"
    sub = substitution(lp, blocks, border)
    return lp, blocks, border, merge, None if isinstance(sub, str) else sub


def unit_ipm_suits(program: Any) -> bool:
    """Whether ``program`` has unit blocks whose inner blocks and border are small
    enough to factor densely."""
    return not isinstance(analyse(program), str)


def run(task: Any) -> SolveResult | HandBack:
    """The solving chain's run of the interior point over unit blocks on the task's
    whole program (3.5-4x faster than HiGHS's on 32 scenarios of 1000 x 4 x 5 cells
    under epsilon 0.01 and lam 0.5, benchmarks/results/beliefs_unit_ipm.txt), or a
    hand-back when the program's blocks do not suit it or it does not converge."""
    program = task.built()
    t0 = time.perf_counter()
    x, objective, status, info = solve_unit_ipm(program, task.time_limit)
    if x is None:
        return HandBack(status, {"unit_ipm": {**info, "fallback_reason": status}})
    ub_duals, reduced = info.pop("ub_duals"), info.pop("reduced_costs")
    res = SolveResult(x, objective, True, "optimal", "unit interior point (no crossover)",
                      time.perf_counter() - t0, info.get("iterations"), {"unit_ipm": info},
                      ub_duals)
    worst = max(info["primal_residual"], info["dual_residual"])
    return certified(res, program, info.pop("absolute_gap"), worst, reduced, IPM_GAP_TOL)


def solve_unit_ipm(program: Any, time_limit: float | None = None,
                   layout: Layout | str | None = None
                   ) -> tuple[np.ndarray | None, float, str, dict[str, Any]]:
    """Solve ``program`` (see the module): its variables, objective, status ("optimal",
    or why not) and statistics (iterations, final gap and residuals, seconds, and
    ``ub_duals``: d objective / d b_ub, the inequality rows' duals, at the interior
    optimum; where the optimum's duals are not unique, those of the optimal face's
    centre, a supergradient like any other). ``layout`` is :func:`analyse`'s answer, if
    the caller has it. Its BLAS runs on one thread
    (:func:`fairdecide._common.threads.one_blas_thread`: it alternates numpy's products
    with scipy's factorisations, whose two thread pools halved its speed on two cores)."""
    with one_blas_thread():
        return _interior_point(program, time_limit, layout)


def system(layout: Layout) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, np.ndarray,
                                     str]:
    """The program of ``layout`` (:func:`analyse`) as min c . x s.t. A x = b, x >= 0:
    its normal equations (A by them), b, c, the other columns kept (all, or all but the
    substituted marginals) and which of them are free (each split into v+ - v-, the
    negative part after the kept columns), and the way the normal equations are solved,
    in words. x is (pi, the kept columns, their free ones' negatives, a slack per
    inequality row); A's rows are the simplices, then the coupling rows (the border's
    alone with the marginals substituted), in order."""
    lp, blocks, border, _, sub = layout
    # the marginals substituted, the rows are the border's; otherwise all of them
    rows = np.arange(lp.n_rows) if sub is None else sub.border
    kept = np.arange(lp.G_v.shape[1]) if sub is None else sub.others
    G_v = lp.G_v.tocsr()[rows][:, kept].tocsc()
    # a free variable v is v+ - v-, both >= 0 (its rows, and so the blocks, unchanged)
    free = np.flatnonzero(np.isinf(lp.l_v[kept]))
    G_v = sp.hstack([G_v, -G_v[:, free]], format="csc")
    ineq = np.isinf(lp.lo[rows])
    n_ineq = int(ineq.sum())
    b = np.concatenate([np.ones(lp.n_units), np.where(ineq, lp.hi[rows], lp.lo[rows])])
    c_v = lp.c_v[kept]
    if sub is None:
        ne: Any = RowNormal(lp, G_v, blocks, border)
        c_pi = lp.c_pi.ravel()
        way = f"by rows: {len(blocks)} inner blocks, {len(border)} border rows"
    else:
        slack = sp.csc_matrix((np.ones(n_ineq), (np.flatnonzero(ineq), np.arange(n_ineq))),
                              shape=(len(rows), n_ineq))
        ne = MarginalNormal(lp, sub, blocks, sp.hstack([G_v, slack], format="csc"))
        c_pi = sub.costs(lp)
        way = f"marginals substituted: {len(sub.inner)} marginals, {len(rows)} rows"
    c = np.concatenate([c_pi, c_v, -c_v[free], np.zeros(n_ineq)])
    return ne, b, c, kept, free, way


def _interior_point(program: Any, time_limit: float | None,
                    layout: Layout | str | None
                    ) -> tuple[np.ndarray | None, float, str, dict[str, Any]]:
    t0 = time.perf_counter()
    layout = analyse(program) if layout is None else layout
    if isinstance(layout, str):
        return None, np.nan, layout, {}
    lp, _, _, merge, sub = layout
    ne, b, c, kept, free, way = system(layout)
    run = mehrotra(ne, b, c, time_limit, t0, CORRECTORS)
    info = {"normal_equations": way, **run.info}
    if run.status != "optimal":
        return None, np.nan, run.status, info
    x, y = run.x, run.y
    # rows: the simplices, the equalities after them, then the inequalities (the
    # program's A_ub, in order); the objective was scaled by lp.scale
    m_ub = program.A_ub.shape[0]
    info["ub_duals"] = y[len(y) - m_ub:] / lp.scale if m_ub else np.zeros(0)
    # the certificate's inputs in the program's units: the policy columns' reduced costs
    # c - A^T y, recomputed from the duals, and the absolute primal-dual gap
    info["reduced_costs"] = (c - ne.AT(y))[:ne.n_pi] / lp.scale
    info["absolute_gap"] = abs(c @ x - b @ y) / lp.scale
    n_pi, n_v = ne.n_pi, len(kept)
    v = np.zeros(lp.G_v.shape[1])
    v[kept] = x[n_pi:n_pi + n_v]
    v[kept[free]] -= x[n_pi + n_v:n_pi + n_v + len(free)]
    if sub is not None:
        v[sub.cols] = sub.marginals(lp, x[:n_pi])
    if merge is not None:
        v = merge.other_values(x[:n_pi], v)
    x_prog = np.concatenate([x[:n_pi], v])
    return x_prog, float(program.c @ x_prog), "optimal", info


class NormalEquations(Protocol):
    """A D A^T dy = r for one program's A, by its structure: ``factor(d)`` once a step,
    then ``direction`` (or ``solve(r)``); ``A`` and ``AT`` its products, ``n_pi`` its
    policy columns."""

    n_pi: int

    def A(self, x: np.ndarray) -> np.ndarray: ...

    def AT(self, y: np.ndarray) -> np.ndarray: ...

    def factor(self, d: np.ndarray) -> None: ...

    def solve(self, r: np.ndarray) -> np.ndarray: ...

    def direction(self, x: np.ndarray, z: np.ndarray, d: np.ndarray, rp: np.ndarray,
                  rd: np.ndarray, rc: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The Newton step (dx, dy, dz) for A dx = rp, A^T dy + dz = rd,
        Z dx + X dz = rc, with D = d (the regularised X / Z), once factored."""


@dataclass
class Iterate:
    """The last iterate (x, y, z) of :func:`mehrotra`, its status ("optimal", or why
    not) and statistics (iterations, relative gap and residuals, seconds)."""

    x: np.ndarray | None
    y: np.ndarray | None
    z: np.ndarray | None
    status: str
    info: dict[str, Any] = field(default_factory=dict)


def mehrotra(ne: NormalEquations, b: np.ndarray, c: np.ndarray,
             time_limit: float | None = None, t0: float | None = None,
             correctors: int = 0) -> Iterate:
    """Mehrotra's predictor-corrector on min c . x s.t. A x = b, x >= 0, A given by its
    normal equations ``ne``; stops at a relative gap and residuals below ``TOL``. The
    last iterate is returned also when it does not converge (its status says why).

    With ``correctors`` > 0, up to that many of Gondzio's centrality correctors a step
    (J. Gondzio, "Multiple centrality corrections in a primal-dual method for linear
    programming", Comput. Optim. Appl. 6, 1996; :func:`_centred`), each one more
    solve with the step's factorisation; the unit interior point takes ``CORRECTORS``."""
    t0 = time.perf_counter() if t0 is None else t0
    n = len(c)
    info: dict[str, Any] = {"setup_seconds": time.perf_counter() - t0}
    x = y = z = None
    status = f"not converged in {MAX_ITER} iterations"
    try:
        x, y, z = _start(ne, b, c)
        nb, nc = 1.0 + np.linalg.norm(b), 1.0 + np.linalg.norm(c)
        for it in range(MAX_ITER + 1):
            rp, rd = b - ne.A(x), c - ne.AT(y) - z
            mu = x @ z / n
            pobj, dobj = c @ x, b @ y
            info.update(iterations=it, gap=abs(pobj - dobj) / (1.0 + abs(pobj)),
                        primal_residual=np.linalg.norm(rp) / nb,
                        dual_residual=np.linalg.norm(rd) / nc)
            if max(info["gap"], info["primal_residual"], info["dual_residual"]) < TOL:
                status = "optimal"
                break
            if not np.isfinite(pobj) or (time_limit is not None
                                         and time.perf_counter() - t0 > time_limit):
                status = "not converged (time limit or overflow)"
                break
            if it == MAX_ITER:
                break
            d = 1.0 / (z / x + REGULARISATION)
            ne.factor(d)
            dx, dy, dz = ne.direction(x, z, d, rp, rd, -x * z)
            ap, ad = _step(x, dx), _step(z, dz)
            sigma = ((x + ap * dx) @ (z + ad * dz) / n / mu) ** 3
            dx, dy, dz = ne.direction(x, z, d, rp, rd, -x * z - dx * dz + sigma * mu)
            if correctors:
                dx, dy, dz = _centred(ne, x, z, d, rp, (dx, dy, dz), sigma * mu,
                                      correctors)
            ap, ad = STEP * _step(x, dx), STEP * _step(z, dz)
            x, y, z = x + ap * dx, y + ad * dy, z + ad * dz
    except np.linalg.LinAlgError as exc:
        status = str(exc)
    info["seconds"] = time.perf_counter() - t0
    return Iterate(x, y, z, status, info)


def _centred(ne: NormalEquations, x: np.ndarray, z: np.ndarray, d: np.ndarray,
             rp: np.ndarray, step: tuple[np.ndarray, np.ndarray, np.ndarray], target: float,
             correctors: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Gondzio's centrality correctors for ``step`` (dx, dy, dz): at the longer lengths
    min(1, 1.5 a + 0.1), the products x_i z_i outside [0.1 target, 10 target] are pulled
    back into it, the correction for those solved with the step's factorisation, and
    kept while it lengthens the step by 1% or more."""
    dx, dy, dz = step
    ap, ad = _step(x, dx), _step(z, dz)
    zero_p, zero_d = np.zeros_like(rp), np.zeros_like(x)
    for _ in range(correctors):
        tp, td = min(1.0, 1.5 * ap + 0.1), min(1.0, 1.5 * ad + 0.1)
        v = (x + tp * dx) * (z + td * dz)
        t = np.maximum(np.clip(v, 0.1 * target, 10 * target) - v, -10 * target)
        cx, cy, cz = ne.direction(x, z, d, zero_p, zero_d, t)
        nx, ny, nz = dx + cx, dy + cy, dz + cz
        nap, nad = _step(x, nx), _step(z, nz)
        if nap + nad < 1.01 * (ap + ad):
            break
        dx, dy, dz, ap, ad = nx, ny, nz, nap, nad
    return dx, dy, dz


def _start(ne: NormalEquations, b: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, ...]:
    """Mehrotra's starting point: least-norm x and least-squares (y, z), shifted inside."""
    ne.factor(np.ones(len(c)))
    x = ne.AT(ne.solve(b))
    y = ne.solve(ne.A(c))
    z = c - ne.AT(y)
    x = x + max(-1.5 * x.min(), 0.0) + 1e-8
    z = z + max(-1.5 * z.min(), 0.0) + 1e-8
    xz = x @ z
    return x + 0.5 * xz / z.sum(), y, z + 0.5 * xz / x.sum()


def _step(v: np.ndarray, dv: np.ndarray) -> float:
    """The longest step in [0, 1] that keeps v + step dv >= 0."""
    neg = dv < 0
    return min(1.0, float(np.min(-v[neg] / dv[neg]))) if neg.any() else 1.0
