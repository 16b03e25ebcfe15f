"""The unit interior point's normal equations by the program's rows: unit simplices,
inner row blocks and a border (:mod:`fairdecide.optimize.engine.unit_ipm`).

The program is A = [E 0 0; G_pi G_v I] (E: the simplex rows; I: a slack per inequality
row), and A D A^T dy = r is solved by block elimination in the order the structure gives:

1. the simplex rows: one diagonal entry per unit (sigma_u = sum_a d_ua), eliminated
   with a rank-one correction per unit;
2. the **inner** rows (those a policy column touches), which fall into blocks no unit or
   other column links: with a policy that sees the group, one block per group (its
   marginal rows in every scenario), a few hundred rows each, formed as dense products
   of the columns that share a row pattern and factored by Cholesky;
3. the **border** rows (the rest), whose Schur complement (one dense matrix of their
   number) is factored last.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.linalg as sl
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from fairdecide.optimize.engine._block_lp import BlockLP
from fairdecide.optimize.engine._merge_rows import column_keys, key_groups

__all__ = ["InnerGram", "RowNormal", "cholesky", "dual_first", "gram_pattern", "row_blocks"]


def row_blocks(lp: BlockLP) -> tuple[list[np.ndarray], np.ndarray]:
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


class InnerGram:
    """B D B^T over the inner rows with the unit simplices eliminated,

        P = G_pi (D_pi - D_pi E^T Sigma^-1 E D_pi) G_pi^T,    Sigma = E D_pi E^T,

    one dense matrix per inner block (:func:`row_blocks`), formed as dense products of
    the policy columns that share a row pattern (one unit group's action, say) and one
    rank-``units`` correction per group of units touching the same rows (BLAS syrk).
    The part of the normal equations that both of the unit interior point's ways by
    rows share (:class:`RowNormal`, and
    :class:`~fairdecide.optimize.engine._normal_marginals.MarginalNormal`)."""

    def __init__(self, lp: BlockLP, blocks: list[np.ndarray]) -> None:
        N, n_a, m = lp.n_units, lp.n_actions, lp.n_rows
        self.N, self.n_a, self.m = N, n_a, m
        self.blocks = blocks
        self.local = np.full(m, -1)
        self.block_of = np.full(m, -1)
        for b, rows in enumerate(blocks):
            self.local[rows], self.block_of[rows] = np.arange(len(rows)), b
        block_of = self.block_of
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
            # runs as slices, strided too (one action's rows among a group's): a fancy
            # index copies (1000 x 4 x 5 cells, K = 32: 6.9 ms of CPU a step, 7.6 ms
            # with fancy indices, 2.8 ms of either in the products)
            self.col_groups.append((cols, rows, block_of[rows[0]], dense,
                                    _run(self.unit_groups[q][3][rows]),
                                    _run(pos_in[cols // n_a]), q,
                                    _square(_run(self.local[rows]))))

    def gram(self, d_pi: np.ndarray, sigma: np.ndarray) -> list[np.ndarray]:
        """P for the policy columns' ``d_pi`` (N n_a) and the simplices' ``sigma`` (N),
        one dense matrix per inner block."""
        P = [np.zeros((len(r), len(r))) for r in self.blocks]
        W = [np.zeros((len(rows), len(units))) for units, rows, _, _ in self.unit_groups]
        root_d, root_s = np.sqrt(d_pi), 1.0 / np.sqrt(sigma)
        for cols, _rows, b, dense, qrows, upos, q, at in self.col_groups:
            X = dense * root_d[cols]
            P[b][at] += X @ X.T  # syrk
            # W holds D_pi B^T scaled by Sigma^-1/2, unit by unit
            W[q][qrows, upos] += X * (root_d[cols] * root_s[cols // self.n_a])
        for (_units, rows, b, _), Wq in zip(self.unit_groups, W, strict=True):
            if b >= 0:
                P[b][_square(_run(self.local[rows]))] -= Wq @ Wq.T  # syrk
        return P


class RowNormal:
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
        self.inner = InnerGram(lp, blocks)
        self.local = self.inner.local.copy()
        self.local[self.border] = np.arange(len(self.border))
        self._other_pattern(self.inner.block_of)

    def _other_pattern(self, block_of: np.ndarray) -> None:
        """H = H_part D_o H_part^T has a fixed pattern: its entries are T d_o, one row of T
        per entry (h_ik h_jk in column k), and the pieces the elimination reads (each
        block's, the border's, and each block's rows by the border's columns) are fixed
        positions among them."""
        m = self.m
        hi, hj, self.T = gram_pattern(self.H_part)
        bi, bj = block_of[hi], block_of[hj]
        border = np.zeros(m, dtype=bool)
        border[self.border] = True
        both = border[hi] & border[hj]
        self.at_border = (self.local[hi[both]], self.local[hj[both]], np.flatnonzero(both))
        self.at_block, self.at_q = [], []
        for q, rows in enumerate(self.blocks):
            inner = (bi == q) & (bj == q)
            self.at_block.append((self.local[hi[inner]], self.local[hj[inner]],
                                  np.flatnonzero(inner)))
            side = np.flatnonzero((bi == q) & border[hj])   # sorted by (hi, hj)
            counts = np.bincount(self.local[hi[side]], minlength=len(rows))
            self.at_q.append((side, self.local[hj[side]], np.r_[0, np.cumsum(counts)]))

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
        self.sigma = d[:n_pi].reshape(N, n_a).sum(axis=1)
        P = self.inner.gram(d[:n_pi], self.sigma)
        h = self.T @ d[n_pi:]                                  # H's entries
        li, lj, e = self.at_border
        R = np.zeros((len(self.border), len(self.border)))
        R[li, lj] = h[e]
        self.Q, self.chol, PQ = [], [], []
        nb = len(self.border)
        for b, rows in enumerate(self.blocks):
            li, lj, e = self.at_block[b]
            P[b][li, lj] += h[e]
            c = cholesky(P[b], self.scale)
            side, cols, ptr = self.at_q[b]
            Q = sp.csr_matrix((h[side], cols, ptr), shape=(len(rows), nb))
            self.chol.append(c)
            self.Q.append(Q)
            if len(self.border):
                Pinv = _inverse(c)
                PQ.append(np.ascontiguousarray((Q.T @ Pinv).T))  # P^-1 Q (P symmetric)
        if len(self.border) and self.blocks:
            # R -= sum_b Q_b' P_b^-1 Q_b, as one sparse-dense product (one pass over R)
            R -= sp.vstack(self.Q, format="csr").T.tocsr() @ np.vstack(PQ)
        self.cR = cholesky(R, self.scale) if len(self.border) else None

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


    def direction(self, x: np.ndarray, z: np.ndarray, d: np.ndarray, rp: np.ndarray,
                  rd: np.ndarray, rc: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return dual_first(self, x, z, d, rp, rd, rc)


def gram_pattern(H: sp.spmatrix) -> tuple[np.ndarray, np.ndarray, sp.csr_matrix]:
    """The entries of H D H^T for any diagonal D = diag(d): their rows ``i``, columns
    ``j`` and the matrix ``T`` with (H D H^T)[i, j] = T @ d (one row of T per entry:
    h_ik h_jk in column k), so that each step forms them by one sparse product instead
    of a sparse matrix product."""
    Hc = sp.csc_matrix(H)
    m = Hc.shape[0]
    lens = np.diff(Hc.indptr)
    sq = lens * lens
    col = np.repeat(np.arange(Hc.shape[1]), sq)
    k = np.arange(len(col)) - np.repeat(np.cumsum(sq) - sq, sq)
    size, start = np.repeat(lens, sq), np.repeat(Hc.indptr[:-1], sq)
    a, b = start + k // np.maximum(size, 1), start + k % np.maximum(size, 1)
    key = Hc.indices[a].astype(np.int64) * m + Hc.indices[b]
    uniq, entry = np.unique(key, return_inverse=True)
    T = sp.csr_matrix((Hc.data[a] * Hc.data[b], (entry, col)), shape=(len(uniq), Hc.shape[1]))
    return uniq // m, uniq % m, T


def dual_first(ne: Any, x: np.ndarray, z: np.ndarray, d: np.ndarray, rp: np.ndarray,
               rd: np.ndarray, rc: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The Newton step for A dx = rp, A^T dy + dz = rd, Z dx + X dz = rc, with D = d,
    by normal equations ``ne`` (factored): dy first, then dx and dz."""
    dy = ne.solve(rp + ne.A(d * (rd - rc / x)))
    dx = d * (ne.AT(dy) - rd + rc / x)
    return dx, dy, (rc - z * dx) / x


def _run(idx: np.ndarray) -> np.ndarray | slice:
    """``idx`` as a slice when it is an increasing arithmetic progression (consecutive
    integers, or one action's rows among a group's, every n_a-th), so that indexing
    by it is a view, not a copy.

    Examples
    --------
    >>> _run(np.array([3, 4, 5])), _run(np.array([1, 6, 11])), _run(np.array([0, 2, 3]))
    (slice(3, 6, 1), slice(1, 12, 5), array([0, 2, 3]))
    """
    if not len(idx):
        return idx
    step = int(idx[1] - idx[0]) if len(idx) > 1 else 1
    if step > 0 and np.array_equal(idx, idx[0] + step * np.arange(len(idx))):
        return slice(int(idx[0]), int(idx[-1]) + 1, step)
    return idx


def _square(idx: np.ndarray | slice) -> tuple:
    """The index of the square block ``idx`` x ``idx``."""
    return (idx, idx) if isinstance(idx, slice) else np.ix_(idx, idx)


def _inverse(c: tuple[np.ndarray, bool]) -> np.ndarray:
    """The inverse of the matrix whose Cholesky factor is ``c`` (scipy's cho_factor):
    LAPACK's potri, a third of the work of solving for the identity."""
    inv, info = sl.lapack.dpotri(c[0], lower=c[1])
    if info:
        raise np.linalg.LinAlgError("the normal equations are not positive definite")
    low = np.tril(inv) if c[1] else np.triu(inv).T
    return low + np.tril(low, -1).T


def cholesky(P: np.ndarray, scale: float) -> Any:
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
