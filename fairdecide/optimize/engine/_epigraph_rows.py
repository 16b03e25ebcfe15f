"""Substituting the epigraph variables out of the unit interior point's border (a
presolve of :mod:`fairdecide.optimize.engine.unit_ipm`, issue 54 item 2).

A penalised belief's program defines each scenario's total deviation by one border row,

    t_k - sum_r (p_r + n_r) = 0,   t_k >= 0,

with t_k in no other row and a cost c_k on it. Solving the row for t_k moves its cost
onto the row's other columns (c_k t_k = sum_r c_k (p_r + n_r)) and the row and t_k go:
t_k >= 0 is implied when every other column of the row is >= 0 and enters with the
sign opposite to t_k's, and the right-hand side is 0. The program is the same (every
feasible point of one gives one of the other at the same objective); its border has one
row fewer per scenario (1000 x 4 x 5 cells, K = 32: 640 rows instead of 672), and the
columns p_r, n_r then sit in one border row each, so O D_o O^T is diagonal there.
:class:`Epigraphs` gives each t_k back.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import scipy.sparse as sp

from fairdecide.optimize.engine._block_lp import BlockLP

__all__ = ["Epigraphs", "eliminate_epigraphs"]


@dataclass
class Epigraphs:
    """How to give back the eliminated columns: ``keep`` (the other columns kept, indices
    into the program's), ``cols`` (the eliminated t_k) and ``rows`` (their rows, less
    t_k, over the program's columns, divided by -t_k's coefficient: t = rows @ v)."""

    n_v: int
    keep: np.ndarray
    cols: np.ndarray
    rows: sp.csr_matrix

    def other_values(self, v: np.ndarray) -> np.ndarray:
        """The program's other variables from the reduced program's ``v``."""
        out = np.zeros(self.n_v)
        out[self.keep] = v
        out[self.cols] = self.rows @ out
        return out


def eliminate_epigraphs(lp: BlockLP) -> tuple[BlockLP, Epigraphs | None]:
    """``lp`` without its epigraph rows and columns (see the module), or ``lp`` and None
    when it has none."""
    Gp, Gv = lp.G_pi.tocsr(), lp.G_v.tocsc()
    Gvr = Gv.tocsr()
    counts = np.diff(Gv.indptr)
    # a candidate: a column >= 0 (unbounded above) in exactly one row, that row an
    # equality to 0 with no policy entry
    one = np.flatnonzero((counts == 1) & (lp.l_v == 0.0) & np.isinf(lp.u_v))
    if not len(one):
        return lp, None
    row = Gv.indices[Gv.indptr[one]]
    coef = Gv.data[Gv.indptr[one]]
    ok = ((lp.lo[row] == 0.0) & (lp.hi[row] == 0.0) & (np.diff(Gp.indptr)[row] == 0)
          & (np.diff(Gvr.indptr)[row] >= 2))
    # one epigraph column per row
    _, first = np.unique(row, return_index=True)
    single = np.zeros(len(one), dtype=bool)
    single[first] = True
    ok &= single
    for i in np.flatnonzero(ok):
        r = row[i]
        lo, hi = Gvr.indptr[r], Gvr.indptr[r + 1]
        others = Gvr.indices[lo:hi] != one[i]
        cols_r, vals_r = Gvr.indices[lo:hi][others], Gvr.data[lo:hi][others]
        # t = -(vals . v) / coef >= 0 for all v >= 0: every -vals / coef >= 0, v >= 0
        if (np.any(-vals_r / coef[i] < 0.0) or np.any(lp.l_v[cols_r] != 0.0)
                or np.isin(cols_r, one).any()):
            ok[i] = False
    if not ok.any():
        return lp, None
    cols, row, coef = one[ok], row[ok], coef[ok]
    # t_k = R[k] @ v, R the rows less t_k, over -coef
    R = sp.diags(-1.0 / coef) @ Gvr[row]
    R = R.tolil()
    R[np.arange(len(cols)), cols] = 0.0
    R = R.tocsr()
    R.eliminate_zeros()
    c_v = lp.c_v + R.T @ lp.c_v[cols]
    keep_rows = np.ones(lp.n_rows, dtype=bool)
    keep_rows[row] = False
    keep = np.setdiff1d(np.arange(Gv.shape[1]), cols)
    G_pi = Gp[keep_rows].tocsc()
    out = replace(lp, G_pi=G_pi, G_piT=G_pi.T.tocsr(),
                  G_v=Gvr[keep_rows][:, keep].tocsc(), lo=lp.lo[keep_rows],
                  hi=lp.hi[keep_rows], c_v=c_v[keep], l_v=lp.l_v[keep], u_v=lp.u_v[keep])
    return out, Epigraphs(Gv.shape[1], keep, cols, R)
