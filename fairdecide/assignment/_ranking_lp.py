"""The two linear programs of a fair ranking (notation of :mod:`._setup`).

``solve_matrix``: the whole program over P (Singh & Joachims 2018): n*k variables, one
row per candidate and position (the assignment), one coupling row per position and group
defining the cumulative counts C_gj = C_g,j-1 + sum_{i in g} P_ij, and the criteria's
rows over C (or over P for Lipschitz pairs).

``solve_counts``: the same optimum over the counts alone, for criteria that read P only
through C (every group criterion). Given the counts c_gj, the best way to fill the places
group g receives is by merit, best member first: u_i v_j is supermodular (u sorted down,
v non-increasing), so the north-west corner rule solves each group's transport problem.
Filling the first C places of group g that way yields F_g(C), the sum of its best
floor(C) merits plus the fraction of the next: a concave piecewise-linear function with
slopes the sorted merits. Summing by parts, the utility of a ranking with counts C is

    sum_g sum_j w_j F_g(C_gj),    w_j = v_j - v_{j+1} >= 0,

so the program is, in 2 G k variables (C and a hypograph t_gj <= F_g(C_gj)):

    max sum_gj w_j t_gj  s.t.  sum_g C_gj = j,  0 <= C_gj - C_g,j-1 <= 1,
                               t_gj <= F_g(m) + u_g,(m+1) (C_gj - m) for the pieces m,

plus the criteria's rows over C. The pieces are added as cuts: start from those at the
sorted ranking, add the pieces at every (g, j) whose t_gj exceeds F_g(C_gj), re-solve
warm (dual simplex), until none does; then t = F(C) and the optimum is exact (each added
cut is a valid inequality, and no other piece is violated). The matrix is rebuilt from C
by the north-west corner rule, and candidates with equal merit in one group share their
rows (the average of theirs: the same counts, hence the same utility and criteria).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp

from fairdecide.assignment._setup import RankingSetup
from fairdecide.optimize.engine.chain import Case, highs_method, solve
from fairdecide.optimize.engine.master import Master
from fairdecide.optimize.engine.rounds import Rounds
from fairdecide.optimize.engine.tasks import LPTask

#: A piece of F counts as violated (its cut joins the master) when the hypograph
#: variable exceeds it by more than this share of 1 + |F| (HiGHS's round-off is below).
CUT_TOL = 1e-10


@dataclass
class Solved:
    """A program's answer: the matrix, the solver's utility and status, statistics."""

    P: np.ndarray | None
    utility: float
    optimal: bool
    status: str
    stats: dict = field(default_factory=dict)
    slack: float | None = None  # phase one: the smallest common tolerance
    lottery: Any = None  # the exposure program's answer (P is then None)


def _criterion_rows(setup: RankingSetup, criteria: list, epsilon: np.ndarray,
                    space_at: dict, base: int, phase_one: bool) -> tuple:
    """Every criterion's rows ``A x <= b + epsilon_c * eps`` placed in the program's
    columns: the criterion's space (C or P) where ``space_at`` says it lives, its aux
    variables from ``base`` on in criterion order; in phase one the tolerance is the
    program's last column s instead (``A x - eps s <= b``). Returns (A, hi, n_aux)."""
    built = [c.rows(setup) for c in criteria]
    n_aux = sum(r.n_aux for r in built)
    n_cols = base + n_aux + phase_one
    widths = {"counts": setup.n_groups * setup.k, "matrix": setup.n * setup.k}
    ii, jj, vv, hi, r, offset = [], [], [], [], 0, base
    for crit, rows, eps in zip(criteria, built, epsilon, strict=True):
        A = sp.coo_matrix(rows.A)
        width = widths[crit.space]
        col = np.where(A.col < width, space_at[crit.space] + A.col, offset + A.col - width)
        ii.append(r + A.row)
        jj.append(col)
        vv.append(A.data)
        if phase_one:
            on = np.flatnonzero(rows.eps)
            ii.append(r + on)
            jj.append(np.full(len(on), n_cols - 1))
            vv.append(-rows.eps[on])
            hi.append(rows.b)
        else:
            hi.append(rows.b + eps * rows.eps)
        r += A.shape[0]
        offset += rows.n_aux
    if not r:
        return sp.csr_matrix((0, n_cols)), np.zeros(0), n_aux
    A = sp.csr_matrix((np.concatenate(vv), (np.concatenate(ii), np.concatenate(jj))),
                      shape=(r, n_cols))
    return A, np.concatenate(hi), n_aux


def solve_matrix(setup: RankingSetup, criteria: list, epsilon: np.ndarray,
                 phase_one: bool = False) -> Solved:
    """The whole program over P (see the module)."""
    n, k, G = setup.n, setup.k, setup.n_groups
    N, NC = n * k, G * k
    base = N + NC
    Ac, hi_c, n_aux = _criterion_rows(setup, criteria, epsilon, {"matrix": 0, "counts": N},
                                      base, phase_one)
    lo_c = np.full(len(hi_c), -np.inf)
    n_cols = base + n_aux + phase_one
    cols = np.arange(N)
    R = sp.csr_matrix((np.ones(N), (np.repeat(np.arange(n), k), cols)), shape=(n, n_cols))
    Cm = sp.csr_matrix((np.ones(N), (np.tile(np.arange(k), n), cols)), shape=(k, n_cols))
    # C_gj - C_g,j-1 - sum_{i in g} P_ij = 0: one coupling row per position and group
    gj = (setup.codes[:, None] * k + np.arange(k)[None, :]).ravel()
    later = np.arange(NC)[np.arange(NC) % k > 0]
    D = sp.csr_matrix((np.r_[-np.ones(N), np.ones(NC), -np.ones(len(later))],
                       (np.r_[gj, np.arange(NC), later], np.r_[cols, N + np.arange(NC),
                                                               N + later - 1])),
                      shape=(NC, n_cols))
    A = sp.vstack([R, Cm, D, Ac]).tocsr()
    lo = np.r_[np.ones(n) if k == n else np.full(n, -np.inf), np.ones(k), np.zeros(NC), lo_c]
    hi = np.r_[np.ones(n), np.ones(k), np.zeros(NC), hi_c]
    util = (setup.merits[:, None] * setup.positions[None, :]).ravel()
    c = np.zeros(n_cols)
    if phase_one:
        c[-1] = 1.0
    else:
        c[:N] = -util
    lb = np.r_[np.zeros(N), np.full(n_cols - N, -np.inf)]
    ub = np.r_[np.ones(N), np.full(n_cols - N, np.inf)]
    if phase_one:
        lb[-1] = 0.0
    # HiGHS by the method the solving chain chooses for the program's size
    res = solve(LPTask(stage="ranking matrix", c=c, lb=lb, ub=ub, A=A, lo=lo, hi=hi))
    stats = {"n_variables": n_cols, "n_constraints": A.shape[0], "nnz": A.nnz,
             "solve_seconds": res.seconds}
    if not res.ok:
        return Solved(None, np.nan, False, res.status, stats)
    x = res.x
    P = np.clip(x[:N].reshape(n, k), 0.0, 1.0)
    return Solved(P, -res.objective, True, res.status, stats,
                  slack=float(x[-1]) if phase_one else None)


def _pieces(setup: RankingSetup) -> list:
    """Per group: (members sorted by merit, best first; their merits; F at 0..n_g)."""
    out = []
    for g in range(setup.n_groups):
        idx = np.flatnonzero(setup.codes == g)
        idx = idx[np.argsort(-setup.merits[idx], kind="stable")]
        s = setup.merits[idx]
        out.append((idx, s, np.r_[0.0, np.cumsum(s)]))
    return out


def _F(piece: tuple, x: np.ndarray) -> np.ndarray:
    _, s, F = piece
    m = np.clip(np.floor(x).astype(np.intp), 0, len(s) - 1)
    return F[m] + s[m] * (x - m)


def _cuts(pieces: list, x: np.ndarray, which: np.ndarray, k: int, n_cols: int) -> tuple:
    """t_gj - u_g,(m+1) C_gj <= F_g(m) - u_g,(m+1) m for the pieces m = floor(C) and
    floor(C) - 1 at the counts ``which`` (a point at a breakpoint gets both sides)."""
    G = len(pieces)
    ii, jj, vv, rhs, r = [], [], [], [], 0
    for g, (_, s, F) in enumerate(pieces):
        sel = np.flatnonzero(which[g * k:(g + 1) * k])
        base = np.floor(x[g * k + sel] + 1e-9).astype(np.intp)
        for off in (0, -1):
            m = base + off
            ok = (m >= 0) & (m < len(s))
            j, m = sel[ok], m[ok]
            rows = r + np.arange(len(j))
            r += len(j)
            ii += [rows, rows]
            jj += [G * k + g * k + j, g * k + j]
            vv += [np.ones(len(j)), -s[m]]
            rhs.append(F[m] - s[m] * m)
    A = sp.csr_matrix((np.concatenate(vv), (np.concatenate(ii), np.concatenate(jj))),
                      shape=(r, n_cols))
    return A, np.concatenate(rhs)


def solve_counts(setup: RankingSetup, criteria: list, epsilon: np.ndarray,
                 phase_one: bool = False) -> Solved:
    """The program over the counts, with the pieces of F as cuts (see the module)."""
    n, k, G = setup.n, setup.k, setup.n_groups
    NC = G * k
    base = 2 * NC
    Ac, hi_c, n_aux = _criterion_rows(setup, criteria, epsilon, {"counts": 0}, base,
                                      phase_one)
    lo_c = np.full(len(hi_c), -np.inf)
    n_cols = base + n_aux + phase_one
    J = np.arange(1, k + 1)
    sizes = setup.sizes
    lbC = np.concatenate([np.maximum(0, J - (n - sizes[g])) for g in range(G)])
    ubC = np.concatenate([np.minimum(J, sizes[g]) for g in range(G)])
    lb = np.r_[lbC, np.full(n_cols - NC, -np.inf)].astype(float)
    ub = np.r_[ubC, np.full(n_cols - NC, np.inf)].astype(float)
    if phase_one:
        lb[-1] = 0.0
    w = setup.steps
    c = np.zeros(n_cols)
    if phase_one:
        c[-1] = 1.0
    else:
        c[NC:2 * NC] = -np.tile(w, G)
    S = sp.hstack([sp.hstack([sp.identity(k)] * G), sp.csr_matrix((k, n_cols - NC))])
    step = sp.eye(k) - sp.eye(k, k=-1)
    Dm = sp.hstack([sp.block_diag([step] * G), sp.csr_matrix((NC, n_cols - NC))])
    pieces = _pieces(setup)
    sort = setup.sorted_matrix()
    x0 = np.cumsum(setup.counts(sort), axis=1).ravel()
    live = np.tile(w > 0, G)
    A0, b0 = _cuts(pieces, x0, live, k, n_cols)
    A = sp.vstack([S, Dm, Ac, A0]).tocsr()
    lo = np.r_[J, np.zeros(NC), lo_c, np.full(len(b0), -np.inf)].astype(float)
    hi = np.r_[J, np.ones(NC), hi_c, b0].astype(float)
    model = Master(c, lb, ub, A, lo, hi)
    model.set_method(highs_method(Case("master")))
    # the master loop's one stopping rule (optimize/engine/rounds.py): a cut loop is
    # certified when no piece is violated beyond CUT_TOL
    rounds = Rounds("ranking cuts")
    while True:
        optimal, status = model.solve()
        if not optimal:
            break
        z = model.values()
        x, t = z[:NC], z[NC:2 * NC]
        Fx = np.concatenate([_F(pieces[g], x[g * k:(g + 1) * k]) for g in range(G)])
        over = np.where(live, t - Fx, -np.inf)
        bad = over > CUT_TOL * (1.0 + np.abs(Fx))
        certified = rounds.next(model.objective, max_violation=max(0.0, float(over.max(
            initial=0.0))), violated=bool(bad.any()), cuts=model.n_rows)
        if phase_one or certified or rounds.stop_reason():
            break
        Ac2, bc = _cuts(pieces, x, bad, k, n_cols)
        model.add_rows(Ac2, np.full(len(bc), -np.inf), bc)
    stats = {"n_variables": n_cols, "n_constraints": model.n_rows,
             "cut_rounds": rounds.count, "solve_seconds": model.seconds}
    if rounds.certificate is not None:
        stats["certificate"] = rounds.certificate.as_dict()
    if not optimal:
        return Solved(None, np.nan, False, status, stats)
    if not phase_one and bad.any():
        return Solved(None, np.nan, False, f"cuts {rounds.stop_reason()}", stats)
    P = fill(setup, pieces, x.reshape(G, k))
    return Solved(P, -model.objective, True, status, stats,
                  slack=float(z[-1]) if phase_one else None)


def fill(setup: RankingSetup, pieces: list, C: np.ndarray) -> np.ndarray:
    """The matrix with cumulative counts C (G, k), each group's places filled by merit
    (north-west corner), rows of equal (merit, group) averaged."""
    P = np.zeros((setup.n, setup.k))
    for g, (idx, _, _) in enumerate(pieces):
        Cg = np.clip(np.maximum.accumulate(np.clip(C[g], 0.0, None)), 0.0, len(idx))
        pts = np.unique(np.r_[np.arange(len(idx) + 1.0), Cg, 0.0])
        pts = pts[pts <= Cg[-1]]
        if len(pts) < 2:
            continue
        mid = (pts[1:] + pts[:-1]) / 2
        member = np.minimum(np.floor(mid).astype(np.intp), len(idx) - 1)
        pos = np.minimum(np.searchsorted(Cg, mid, side="right"), setup.k - 1)
        np.add.at(P, (idx[member], pos), np.diff(pts))
    return np.clip(setup.tie_average(P), 0.0, 1.0)
