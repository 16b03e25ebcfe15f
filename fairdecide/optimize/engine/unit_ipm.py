"""An interior point for unit simplices and coupling rows: the dense block, factored by
its structure.

A belief's program (:mod:`fairdecide.optimize.engine._block_lp`) is one simplex per unit
and coupling rows: the scenarios' marginal definitions m_k = B_k pi, touched by the
policy, and the rest (utilities, deviation epigraphs, the trade-off's rows), which touch
only the other variables. Written out, each policy variable sits in K rows, and on tight
tolerances or penalties (where the optimum randomises in many units) HiGHS's interior
point spends most of its time on that dense block (benchmarks/results/beliefs.txt).

This solver is Mehrotra's predictor-corrector on

    min c . x   s.t.   A x = b,  x >= 0,    A = [E 0 0; G_pi G_v I]

(E: the simplex rows; I: a slack per inequality row), and it solves each step's normal
equations A D A^T dy = r by block elimination in the order the structure gives:

1. the simplex rows: one diagonal entry per unit (sigma_u = sum_a d_ua), eliminated
   with a rank-one correction per unit;
2. the **inner** rows (those a policy column touches), which fall into blocks no unit or
   other column links: with a policy that sees the group, one block per group (its
   marginal rows in every scenario), a few hundred rows each, formed as dense products
   of the columns that share a row pattern and factored by Cholesky;
3. the **border** rows (the rest), whose Schur complement (one dense matrix of their
   number) is factored last.

Before it factors anything, marginal rows that the rest of the program reads alike are
merged (:mod:`fairdecide.optimize.engine._merge_rows`: independence reads P(z, a), so
each pair of outcomes' rows becomes one, halving the inner blocks), and each absolute
value of a deviation is one border row (the program writes D m + d = p - n).

A block larger than ``MAX_BLOCK`` rows (a group-blind policy at many scenarios) is not
taken: :func:`analyse` says why and HiGHS solves the program. The solver stops at a
relative primal-dual gap, primal and dual infeasibility all below ``TOL``, without a
crossover (the solution randomises on the optimal face, like HiGHS's interior point
without crossover); it returns not ``ok`` with the reason when it does not (infeasible
or unbounded programs, a factorisation that fails, the iteration or time limit), and the
caller hands the program to HiGHS.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import scipy.linalg as sl
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from fairdecide._threads import one_blas_thread
from fairdecide.optimize.engine._block_lp import BlockLP, block_structure
from fairdecide.optimize.engine._merge_rows import Merge, column_keys, key_groups, merge_rows

__all__ = ["analyse", "solve_unit_ipm", "unit_ipm_suits"]

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


Layout = tuple[BlockLP, list[np.ndarray], np.ndarray, Merge | None]


def analyse(program: Any) -> Layout | str:
    """The program's unit blocks (its marginal rows merged where nothing tells them
    apart: :mod:`fairdecide.optimize.engine._merge_rows`), its inner row blocks and
    border rows (what :func:`solve_unit_ipm` factors), and how to give the program's
    variables back; or why this solver does not take it."""
    lp = block_structure(program)
    if isinstance(lp, str):
        return lp
    if np.any(np.isfinite(lp.lo) & (lp.lo < lp.hi)):
        return "a coupling row bounded on both sides"
    if np.any((lp.l_v != 0.0) & np.isfinite(lp.l_v)) or np.any(np.isfinite(lp.u_v)):
        return "variable bounds other than v >= 0 or free"
    lp, merge = merge_rows(lp)
    blocks, border = _row_blocks(lp)
    largest = max([len(border), *(len(b) for b in blocks)])
    if largest > MAX_BLOCK:
        return f"a block of {largest} rows to factor densely (at most {MAX_BLOCK})"
    return lp, blocks, border, merge


def unit_ipm_suits(program: Any) -> bool:
    """Whether ``program`` has unit blocks whose inner blocks and border are small
    enough to factor densely."""
    return not isinstance(analyse(program), str)


def _row_blocks(lp: BlockLP) -> tuple[list[np.ndarray], np.ndarray]:
    """The inner rows' blocks (rows linked through a unit's columns or another column)
    and the border rows (no policy column touches them)."""
    m = lp.n_rows
    Gp = lp.G_pi.tocsc()
    touched = np.zeros(m, dtype=bool)
    touched[Gp.indices] = True
    inner = np.flatnonzero(touched)
    pos = np.full(m, -1)
    pos[inner] = np.arange(len(inner))
    src, dst = [], []
    for M, per in ((Gp, lp.n_actions), (lp.G_v.tocsc(), 1)):
        col = np.repeat(np.arange(M.shape[1]) // per, np.diff(M.indptr))  # nondecreasing
        keep = touched[M.indices]
        ind, col = M.indices[keep], col[keep]
        if not len(col):
            continue
        # link each unit's (or column's) rows to its first: col is sorted already
        first = np.flatnonzero(np.r_[True, col[1:] != col[:-1]])
        lead = np.repeat(ind[first], np.diff(np.r_[first, len(col)]))
        src.append(pos[lead])
        dst.append(pos[ind])
    src, dst = np.concatenate(src), np.concatenate(dst)
    graph = sp.coo_matrix((np.ones(len(src)), (src, dst)), shape=(len(inner),) * 2)
    n_comp, label = connected_components(graph, directed=False)
    order = np.argsort(label, kind="stable")
    cuts = np.cumsum(np.bincount(label, minlength=n_comp))[:-1]
    return np.split(inner[order], cuts), np.flatnonzero(~touched)


class _Normal:
    """The normal equations A D A^T dy = r of the program, solved by block elimination
    (see the module)."""

    def __init__(self, lp: BlockLP, G_v: sp.spmatrix, blocks: list[np.ndarray],
                 border: np.ndarray) -> None:
        N, n_a, m = lp.n_units, lp.n_actions, lp.n_rows
        self.N, self.n_a, self.n_pi, self.m = N, n_a, N * n_a, m
        ineq = np.flatnonzero(np.isinf(lp.lo))
        slack = sp.csc_matrix((np.ones(len(ineq)), (ineq, np.arange(len(ineq)))),
                              shape=(m, len(ineq)))
        self.G = sp.hstack([lp.G_pi, G_v, slack], format="csr")
        self.GT = self.G.T.tocsr()
        self.Gp = lp.G_pi.tocsr()
        self.H_part = sp.hstack([G_v, slack], format="csc")
        self.blocks, self.border = blocks, border
        self.local = np.full(m, -1)
        block_of = np.full(m, -1)
        for b, rows in enumerate(self.blocks):
            self.local[rows], block_of[rows] = np.arange(len(rows)), b
        self.local[self.border] = np.arange(len(self.border))
        Gp = lp.G_pi.tocsc()
        # units by the union of their columns' rows
        unit_cols = sp.csc_matrix((np.ones(Gp.nnz), Gp.indices.copy(),
                                   Gp.indptr[::n_a].copy()), shape=(m, N))
        unit_cols.sum_duplicates()
        group_of = key_groups(column_keys(unit_cols, 1, values=False))
        self.unit_groups = []
        pos_in = np.zeros(N, dtype=np.int64)
        for q in range(group_of.max() + 1 if N else 0):
            units = np.flatnonzero(group_of == q)
            rows = unit_cols.indices[unit_cols.indptr[units[0]]:unit_cols.indptr[units[0] + 1]]
            pos_in[units] = np.arange(len(units))
            qloc = np.full(m, -1)
            qloc[rows] = np.arange(len(rows))
            self.unit_groups.append((units, rows, block_of[rows[0]] if len(rows) else -1,
                                     qloc))
        # policy columns by row pattern, unit group and action (each unit once a group)
        ckey = np.column_stack([column_keys(Gp, 2, values=False), np.repeat(group_of, n_a),
                                np.tile(np.arange(n_a), N)])
        cgroup = key_groups(ckey)
        order = np.argsort(cgroup, kind="stable")
        cuts = np.cumsum(np.bincount(cgroup))[:-1]
        self.col_groups = []
        for cols in np.split(order, cuts):
            rows = Gp.indices[Gp.indptr[cols[0]]:Gp.indptr[cols[0] + 1]]
            if not len(rows):
                continue
            dense = Gp[:, cols][rows].toarray()
            q = group_of[cols[0] // n_a]
            self.col_groups.append((cols, rows, block_of[rows[0]], dense,
                                    self.unit_groups[q][3][rows], _run(pos_in[cols // n_a]),
                                    q))

    def A(self, x: np.ndarray) -> np.ndarray:
        return np.concatenate([x[:self.n_pi].reshape(self.N, self.n_a).sum(axis=1),
                               self.G @ x])

    def AT(self, y: np.ndarray) -> np.ndarray:
        out = self.GT @ y[self.N:]
        out[:self.n_pi] += np.repeat(y[:self.N], self.n_a)
        return out

    def factor(self, d: np.ndarray) -> None:
        N, n_a, n_pi = self.N, self.n_a, self.n_pi
        self.d, self.scale = d, max(float(d.max(initial=0.0)), 1.0)
        dp = d[:n_pi].reshape(N, n_a)
        self.sigma = dp.sum(axis=1)
        P = [np.zeros((len(r), len(r))) for r in self.blocks]
        W = [np.zeros((len(rows), len(units))) for units, rows, _, _ in self.unit_groups]
        for cols, rows, b, dense, qrows, upos, q in self.col_groups:
            X = dense * d[cols]
            loc = self.local[rows]
            P[b][np.ix_(loc, loc)] += X @ dense.T
            W[q][qrows, upos] += X  # upos: a slice (a fancy index on both axes: 9x slower)
        for (units, rows, b, _), Wq in zip(self.unit_groups, W, strict=True):
            if b >= 0:
                loc = _run(self.local[rows])
                S = Wq / np.sqrt(self.sigma[units])
                SS = S @ S.T  # one product with its transpose: syrk
                if isinstance(loc, slice):
                    P[b][loc, loc] -= SS
                else:
                    P[b][np.ix_(loc, loc)] -= SS
        H = (self.H_part @ sp.diags(d[n_pi:]) @ self.H_part.T).tocsr()
        Hb = H[:, self.border].tocsr()
        R = Hb[self.border].toarray()
        self.Q, self.chol, PQ = [], [], []
        for b, rows in enumerate(self.blocks):
            P[b] += H[rows][:, rows].toarray()
            c = _cholesky(P[b], self.scale)
            Q = Hb[rows]
            self.chol.append(c)
            self.Q.append(Q)
            if len(self.border):
                Pinv = _inverse(c)
                PQ.append(np.ascontiguousarray((Q.T @ Pinv).T))  # P^-1 Q (P symmetric)
        if len(self.border) and self.blocks:
            # R -= sum_b Q_b' P_b^-1 Q_b, as one sparse-dense product (one pass over R)
            R -= sp.vstack(self.Q, format="csr").T.tocsr() @ np.vstack(PQ)
        self.cR = _cholesky(R, self.scale) if len(self.border) else None

    def solve(self, r: np.ndarray) -> np.ndarray:
        N, n_a, n_pi = self.N, self.n_a, self.n_pi
        dp = self.d[:n_pi]
        rS, rC = r[:N], r[N:] - self.Gp @ (np.repeat(r[:N] / self.sigma, n_a) * dp)
        y = np.zeros(self.m)
        t = [sl.cho_solve(c, rC[rows], check_finite=False)
             for c, rows in zip(self.chol, self.blocks, strict=True)]
        if self.cR is not None:
            rb = rC[self.border] - sum((Q.T @ tb for Q, tb in zip(self.Q, t, strict=True)),
                                       np.zeros(len(self.border)))
            y[self.border] = yB = sl.cho_solve(self.cR, rb, check_finite=False)
            t = [sl.cho_solve(c, rC[rows] - Q @ yB, check_finite=False)
                 for c, rows, Q in zip(self.chol, self.blocks, self.Q, strict=True)]
        for rows, tb in zip(self.blocks, t, strict=True):
            y[rows] = tb
        g = (self.Gp.T @ y) * dp
        return np.concatenate([(rS - g.reshape(N, n_a).sum(axis=1)) / self.sigma, y])


def _run(idx: np.ndarray) -> np.ndarray | slice:
    """``idx`` as a slice when it is a run of consecutive integers."""
    if len(idx) and np.array_equal(idx, np.arange(idx[0], idx[0] + len(idx))):
        return slice(int(idx[0]), int(idx[0]) + len(idx))
    return idx


def _inverse(c: tuple[np.ndarray, bool]) -> np.ndarray:
    """The inverse of the matrix whose Cholesky factor is ``c`` (scipy's cho_factor):
    LAPACK's potri, a third of the work of solving for the identity."""
    inv, info = sl.lapack.dpotri(c[0], lower=c[1])
    if info:
        raise np.linalg.LinAlgError("the normal equations are not positive definite")
    low = np.tril(inv) if c[1] else np.triu(inv).T
    return low + np.tril(low, -1).T


def _cholesky(P: np.ndarray, scale: float) -> Any:
    """Cholesky, with a growing diagonal shift where the matrix is numerically
    semidefinite: redundant rows (A D A^T singular) or the last iterations, whose
    entries span the range of D (``scale``: the largest, which sets the rounding error
    of a Schur complement). A shift changes the step, not the residuals, which are
    recomputed exactly each iteration."""
    for shift in (0.0, 1e-15, 1e-13, 1e-11, 1e-9):
        try:
            if shift:
                P = P.copy()
                P[np.diag_indices_from(P)] += shift * scale
            return sl.cho_factor(P, lower=True, check_finite=False)
        except np.linalg.LinAlgError:
            continue
    raise np.linalg.LinAlgError("the normal equations are not positive definite")


def solve_unit_ipm(program: Any, time_limit: float | None = None,
                   layout: Layout | str | None = None
                   ) -> tuple[np.ndarray | None, float, str, dict[str, Any]]:
    """Solve ``program`` (see the module): its variables, objective, status ("optimal",
    or why not) and statistics (iterations, final gap and residuals, seconds, and
    ``ub_duals``: d objective / d b_ub, the inequality rows' duals, at the interior
    optimum; where the optimum's duals are not unique, those of the optimal face's
    centre, a supergradient like any other). ``layout`` is :func:`analyse`'s answer, if
    the caller has it. Its BLAS runs on one thread (:func:`fairdecide._threads.one_blas_thread`:
    it alternates numpy's products with scipy's factorisations, whose two thread pools
    halved its speed on two cores)."""
    with one_blas_thread():
        return _interior_point(program, time_limit, layout)


def _interior_point(program: Any, time_limit: float | None,
                    layout: Layout | str | None
                    ) -> tuple[np.ndarray | None, float, str, dict[str, Any]]:
    t0 = time.perf_counter()
    layout = analyse(program) if layout is None else layout
    if isinstance(layout, str):
        return None, np.nan, layout, {}
    lp, blocks, border, merge = layout
    # a free variable v is v+ - v-, both >= 0 (its rows, and so the blocks, unchanged)
    free = np.flatnonzero(np.isinf(lp.l_v))
    G_v = sp.hstack([lp.G_v, -lp.G_v[:, free]], format="csc")
    ne = _Normal(lp, G_v, blocks, border)
    ineq = np.isinf(lp.lo)
    b = np.concatenate([np.ones(lp.n_units), np.where(ineq, lp.hi, lp.lo)])
    c = np.concatenate([lp.c_pi.ravel(), lp.c_v, -lp.c_v[free], np.zeros(int(ineq.sum()))])
    n = len(c)
    info: dict[str, Any] = {"setup_seconds": time.perf_counter() - t0}
    try:
        x, y, z = _start(ne, b, c)
        nb, nc = 1.0 + np.linalg.norm(b), 1.0 + np.linalg.norm(c)
        for it in range(MAX_ITER):
            rp, rd = b - ne.A(x), c - ne.AT(y) - z
            mu = x @ z / n
            pobj, dobj = c @ x, b @ y
            info.update(iterations=it, gap=abs(pobj - dobj) / (1.0 + abs(pobj)),
                        primal_residual=np.linalg.norm(rp) / nb,
                        dual_residual=np.linalg.norm(rd) / nc)
            if max(info["gap"], info["primal_residual"], info["dual_residual"]) < TOL:
                break
            if not np.isfinite(pobj) or (time_limit is not None
                                         and time.perf_counter() - t0 > time_limit):
                return None, np.nan, "not converged (time limit or overflow)", info
            d = 1.0 / (z / x + REGULARISATION)
            ne.factor(d)
            dx, dy, dz = _direction(ne, x, z, d, rp, rd, -x * z)
            ap, ad = _step(x, dx), _step(z, dz)
            sigma = ((x + ap * dx) @ (z + ad * dz) / n / mu) ** 3
            dx, dy, dz = _direction(ne, x, z, d, rp, rd, -x * z - dx * dz + sigma * mu)
            ap, ad = STEP * _step(x, dx), STEP * _step(z, dz)
            x, y, z = x + ap * dx, y + ad * dy, z + ad * dz
        else:
            return None, np.nan, f"not converged in {MAX_ITER} iterations", info
    except np.linalg.LinAlgError as exc:
        return None, np.nan, str(exc), info
    info["seconds"] = time.perf_counter() - t0
    # rows: the simplices, the equalities after them, then the inequalities (the
    # program's A_ub, in order); the objective was scaled by lp.scale
    m_ub = program.A_ub.shape[0]
    info["ub_duals"] = y[len(y) - m_ub:] / lp.scale if m_ub else np.zeros(0)
    # the certificate's inputs in the program's units: the policy columns' reduced costs
    # c - A^T y, recomputed from the duals, and the absolute primal-dual gap
    info["reduced_costs"] = (c - ne.AT(y))[:ne.n_pi] / lp.scale
    info["absolute_gap"] = abs(c @ x - b @ y) / lp.scale
    n_pi, n_v = ne.n_pi, lp.G_v.shape[1]
    v = x[n_pi:n_pi + n_v].copy()
    v[free] -= x[n_pi + n_v:n_pi + n_v + len(free)]
    if merge is not None:
        v = merge.other_values(x[:n_pi], v)
    x_prog = np.concatenate([x[:n_pi], v])
    return x_prog, float(program.c @ x_prog), "optimal", info


def _start(ne: _Normal, b: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, ...]:
    """Mehrotra's starting point: least-norm x and least-squares (y, z), shifted inside."""
    ne.factor(np.ones(len(c)))
    x = ne.AT(ne.solve(b))
    y = ne.solve(ne.A(c))
    z = c - ne.AT(y)
    x = x + max(-1.5 * x.min(), 0.0) + 1e-8
    z = z + max(-1.5 * z.min(), 0.0) + 1e-8
    xz = x @ z
    return x + 0.5 * xz / z.sum(), y, z + 0.5 * xz / x.sum()


def _direction(ne: _Normal, x: np.ndarray, z: np.ndarray, d: np.ndarray, rp: np.ndarray,
               rd: np.ndarray, rc: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The Newton step for A dx = rp, A^T dy + dz = rd, Z dx + X dz = rc, with D = d
    (the regularised X / Z) in the normal equations."""
    dy = ne.solve(rp + ne.A(d * (rd - rc / x)))
    dx = d * (ne.AT(dy) - rd + rc / x)
    return dx, dy, (rc - z * dx) / x


def _step(v: np.ndarray, dv: np.ndarray) -> float:
    """The longest step in [0, 1] that keeps v + step dv >= 0."""
    neg = dv < 0
    return min(1.0, float(np.min(-v[neg] / dv[neg]))) if neg.any() else 1.0
