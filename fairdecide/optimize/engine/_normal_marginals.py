"""The unit interior point's normal equations with the group marginals substituted out
(:mod:`fairdecide.optimize.engine.unit_ipm`).

A belief's program defines each scenario's group marginal by an equality row,
``G_pi[j] pi + m_j = 0`` (an **inner** row: the policy touches it), and reads the
marginals in the **border** rows (the deviations' absolute values, the epigraphs, the
tolerances), ``D m + O o = b``. The marginal m_j = B_j pi (B = -G_pi, entries >= 0)
is nonnegative for every policy, so its bound can go and m_j is a free variable that
sits in its own row only: substituting it leaves the program

    min (c_pi + B^T c_m) . pi + c_o . o   s.t.   E pi = 1,   D B pi + O o = b,

whose coupling rows are the border alone. Its normal equations, the simplices
eliminated unit by unit, are

    S = D P D^T + O D_o O^T,    P = B (D_pi - D_pi E^T Sigma^-1 E D_pi) B^T,

with P the inner blocks' Gram (:class:`~fairdecide.optimize.engine._normal_rows.InnerGram`,
one dense block per group), so the border's one dense matrix is factored and nothing
else: the rows' way (:class:`~fairdecide.optimize.engine._normal_rows.RowNormal`)
factored each inner block, inverted it, and formed D (P + d_m)^-1 D^T-like products
through the marginals' own columns, whose D = x / z grows to 1 / REGULARISATION (1e9)
as z -> 0, the Schur complement then the difference of numbers of that size. Here the
marginals carry no D at all. B is never multiplied out: D B has as many entries as B
times the border rows each marginal reaches (1000 x 4 x 5 cells, K = 32: 2.6 million
against 0.64 million), so products go through B and D in turn.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg as sl
import scipy.sparse as sp

from fairdecide.optimize.engine._block_lp import BlockLP
from fairdecide.optimize.engine._normal_rows import InnerGram, cholesky, gram_pattern

__all__ = ["MarginalNormal", "Substitution", "substitution"]


@dataclass
class Substitution:
    """The marginals of the inner rows: ``inner`` (the rows, in block order), ``cols``
    (each row's marginal column of G_v), ``others`` (the other columns of G_v) and
    ``border`` (the border rows, in order)."""

    inner: np.ndarray
    cols: np.ndarray
    others: np.ndarray
    border: np.ndarray

    def costs(self, lp: BlockLP) -> np.ndarray:
        """The policy's costs with the marginals' moved onto it: c_pi + B^T c_m."""
        B_T = -lp.G_piT[:, self.inner]
        return lp.c_pi.reshape(-1) + B_T @ lp.c_v[self.cols]

    def marginals(self, lp: BlockLP, pi: np.ndarray) -> np.ndarray:
        """The marginal columns' values at ``pi``: m = B pi."""
        return -(lp.G_pi[self.inner] @ pi)


def substitution(lp: BlockLP, blocks: list[np.ndarray], border: np.ndarray
                 ) -> Substitution | str:
    """The inner rows' marginals when every inner row is a marginal's definition (see
    the module): equal to 0, one column of G_v with entry 1 there and in no other inner
    row, bounded by 0 below (implied: no positive policy entry in the row) or free,
    unbounded above; or why not."""
    inner = np.concatenate(blocks) if blocks else np.zeros(0, dtype=np.int64)
    if not len(inner):
        return "no inner rows"
    if np.any(lp.lo[inner] != 0.0) or np.any(lp.hi[inner] != 0.0):
        return "an inner row that is not an equality to 0"
    Gr = lp.G_v.tocsr()
    sub = Gr[inner]
    if np.any(np.diff(sub.indptr) != 1) or np.any(sub.data != 1.0):
        return "an inner row without exactly one other column, at 1"
    cols = sub.indices
    if len(np.unique(cols)) != len(cols):  # each inner row's one column in no other
        return "a marginal column in two inner rows"
    if np.any(np.isfinite(lp.u_v[cols])) or np.any((lp.l_v[cols] != 0.0)
                                                    & np.isfinite(lp.l_v[cols])):
        return "a marginal column with bounds other than m >= 0"
    Gp = lp.G_pi.tocsr()[inner]
    if Gp.nnz and Gp.data.max() > 0.0:
        return "a marginal row with a positive policy entry (m >= 0 not implied)"
    others = np.setdiff1d(np.arange(lp.G_v.shape[1]), cols)
    return Substitution(inner, cols, others, border)


class MarginalNormal:
    """A D A^T dy = r for the program with its marginals substituted (see the module):
    A = [E 0; D B  O], rows the unit simplices then the border; ``others`` is O, the
    other columns (with a free one's negative and the inequality rows' slacks, as the
    caller lays them out), one dense factorisation of the border a step."""

    def __init__(self, lp: BlockLP, sub: Substitution, blocks: list[np.ndarray],
                 others: sp.spmatrix) -> None:
        N, n_a = lp.n_units, lp.n_actions
        self.N, self.n_a, self.n_pi = N, n_a, N * n_a
        self.gram = InnerGram(lp, blocks)
        # B over the inner rows in the order of ``sub.inner`` (the blocks' order)
        self.B = (-lp.G_pi.tocsr()[sub.inner]).tocsr()
        self.BT = self.B.T.tocsr()
        Dm = lp.G_v.tocsr()[sub.border][:, sub.cols]     # border x inner (sub.inner order)
        self.D, self.DT = Dm.tocsr(), Dm.T.tocsr()
        self.O = sp.csr_matrix(others)
        self.OT = self.O.T.tocsr()
        self.O_at = gram_pattern(self.O)       # O D_o O^T's entries, T @ d_o
        # each block's columns of D, for D_b P_b
        start = np.cumsum([0] + [len(b) for b in blocks])
        self.D_blocks = [Dm.tocsc()[:, start[b]:start[b + 1]].tocsr()
                         for b in range(len(blocks))]

    def A(self, x: np.ndarray) -> np.ndarray:
        n_pi = self.n_pi
        return np.concatenate([x[:n_pi].reshape(self.N, self.n_a).sum(axis=1),
                               self.D @ (self.B @ x[:n_pi]) + self.O @ x[n_pi:]])

    def AT(self, y: np.ndarray) -> np.ndarray:
        yS, yB = y[:self.N], y[self.N:]
        pi = self.BT @ (self.DT @ yB) + np.repeat(yS, self.n_a)
        return np.concatenate([pi, self.OT @ yB])

    def factor(self, d: np.ndarray) -> None:
        n_pi = self.n_pi
        self.d, self.scale = d, max(float(d.max(initial=0.0)), 1.0)
        self.sigma = d[:n_pi].reshape(self.N, self.n_a).sum(axis=1)
        P = self.gram.gram(d[:n_pi], self.sigma)
        # D P D^T: the blocks' D_b P_b side by side (border x inner), then through D once
        DP = np.hstack([Db @ Pb for Db, Pb in zip(self.D_blocks, P, strict=True)])
        S = self.D @ DP.T                  # D (D P)^T = D P D^T (P symmetric)
        i, j, T = self.O_at
        S[i, j] += T @ d[n_pi:]
        self.chol = cholesky(S, self.scale)

    def solve(self, r: np.ndarray) -> np.ndarray:
        N, n_a, n_pi = self.N, self.n_a, self.n_pi
        rS = r[:N]
        rB = r[N:] - self.D @ (self.B @ (np.repeat(rS / self.sigma, n_a) * self.d[:n_pi]))
        return self._back(rS, rB)[0]

    def _back(self, rS: np.ndarray, rB: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """dy from the simplices' right-hand side ``rS`` and the border's with the
        simplices eliminated, ``rB``; and (D B)^T dy_B, which A^T dy reads."""
        yB = sl.cho_solve(self.chol, rB, check_finite=False)
        t = self.BT @ (self.DT @ yB)
        g = (t * self.d[:self.n_pi]).reshape(self.N, self.n_a).sum(axis=1)
        return np.concatenate([(rS - g) / self.sigma, yB]), t

    def direction(self, x: np.ndarray, z: np.ndarray, d: np.ndarray, rp: np.ndarray,
                  rd: np.ndarray, rc: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The Newton step for A dx = rp, A^T dy + dz = rd, Z dx + X dz = rc, with
        D = d: dy from the normal equations (right-hand side rp + A w, w = D (rd - rc /
        x)), then dx = D (A^T dy) - w and dz. Written out, so that B and B^T are each
        applied once (the generic order, :func:`~fairdecide.optimize.engine._normal_rows.
        dual_first`, applies each twice: A w, then the simplices' elimination, and
        A^T dy after the solve)."""
        N, n_a, n_pi = self.N, self.n_a, self.n_pi
        w = d * (rd - rc / x)
        rS = rp[:N] + w[:n_pi].reshape(N, n_a).sum(axis=1)
        # rp_B + A_B w less the simplices' share, through B once
        v = w[:n_pi] - np.repeat(rS / self.sigma, n_a) * d[:n_pi]
        rB = rp[N:] + self.D @ (self.B @ v) + self.O @ w[n_pi:]
        dy, t = self._back(rS, rB)
        ATdy = np.concatenate([np.repeat(dy[:N], n_a) + t, self.OT @ dy[N:]])
        dx = d * ATdy - w
        return dx, dy, (rc - z * dx) / x
