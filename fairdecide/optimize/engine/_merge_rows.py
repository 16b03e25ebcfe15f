"""Merging coupling rows whose marginal variables nothing else tells apart (a presolve
of the unit interior point, :mod:`fairdecide.optimize.engine.unit_ipm`).

A scenario's marginal m_j = P(z, a, y) is defined by one equality row
m_j - B_j pi = 0 (B_j >= 0, so m_j >= 0 holds for every policy in the simplices). When
the rest of the program reads m_j only through rows where m_j and m_j' (another
outcome y' of the same group and action) enter alike, as independence reads
P(z, a) = sum_y P(z, a, y), the two definitions can be one row over their sum,

    M - (B_j + B_j') pi = 0,   M >= 0,

with each m_j's cost moved onto the policy columns first (c_j m_j = c_j B_j pi). The
program is the same (every policy and value of the other variables that is feasible
in one is in the other, at the same objective), and its inner blocks have half the rows
(1000 x 4 x 5, K = 32: 160 instead of 320 per group). :class:`Merge` gives each m_j
back from the policy. Which rows merge is read from the program's matrix (columns with
the same entries outside their defining row, rows touched by the same units), for any
criterion.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import scipy.sparse as sp

from fairdecide.optimize.engine._block_lp import BlockLP, marginal_definitions

__all__ = ["Merge", "column_keys", "key_groups", "merge_rows"]


@dataclass
class Merge:
    """How to give back the program's variables: the other columns kept (``keep``,
    indices into the program's), and the marginal columns whose value is -B_j pi
    (``cols``, with their rows of G_pi as ``rows``)."""

    n_v: int
    keep: np.ndarray
    cols: np.ndarray
    rows: sp.csr_matrix

    def other_values(self, pi: np.ndarray, v: np.ndarray) -> np.ndarray:
        """The program's other variables from the merged program's ``v`` and the
        policy columns ``pi``."""
        out = np.zeros(self.n_v)
        out[self.keep] = v
        out[self.cols] = -(self.rows @ pi)
        return out


def column_keys(M: sp.csc_matrix, seed: int = 0, values: bool = True) -> np.ndarray:
    """A key per column of ``M`` that equal columns share (their entries' values too, or
    only their row patterns): two random projections and the count of entries (a
    collision of distinct columns would need two float hashes to agree)."""
    rng = np.random.default_rng(seed)
    if not values:
        M = sp.csc_matrix((np.ones_like(M.data), M.indices.copy(), M.indptr.copy()),
                          shape=M.shape)
    return np.column_stack([M.T @ rng.random((M.shape[0], 2)), np.diff(M.indptr)])


def key_groups(keys: np.ndarray) -> np.ndarray:
    """A group number per row of ``keys`` (:func:`column_keys`' keys), equal rows sharing
    one, numbered in the order of the sorted rows as np.unique(axis=0, return_inverse)
    numbers them; by a lexsort, which np.unique's comparison of rows as bytes took 54 ms
    against at 20,000 rows.

    Examples
    --------
    >>> key_groups(np.array([[2.0, 1.0], [1.0, 0.0], [2.0, 1.0]])).tolist()
    [1, 0, 1]
    """
    order = np.lexsort(keys.T[::-1])
    srt = keys[order]
    new = np.r_[True, np.any(srt[1:] != srt[:-1], axis=1)]
    out = np.empty(len(keys), dtype=np.int64)
    out[order] = np.cumsum(new) - 1
    return out


def merge_rows(lp: BlockLP) -> tuple[BlockLP, Merge | None]:
    """``lp`` with its mergeable marginal rows merged (see the module), or ``lp`` and
    None when no two rows merge."""
    m, n_a = lp.n_rows, lp.n_actions
    Gp, Gv = lp.G_pi.tocsr(), lp.G_v.tocsc()
    inner = np.diff(Gp.indptr) > 0
    # the candidates: the marginals' columns and their defining rows
    cols, row = marginal_definitions(lp, Gp)
    if len(cols) < 2:
        return lp, None
    Gvr = Gv.tocsr()
    # group: the same entries outside the defining row, the same units touching the row
    outside = (sp.diags((~inner).astype(float)) @ Gv[:, cols]).tocsc()
    units = sp.csr_matrix((np.ones(Gp.nnz), Gp.indices // n_a, Gp.indptr),
                          shape=(m, lp.n_units))[row]
    units.sum_duplicates()
    units.data[:] = 1.0
    key = np.column_stack([column_keys(outside, 3), column_keys(units.T.tocsc(), 4)])
    group = key_groups(key)
    size = np.bincount(group)
    merged = size[group] >= 2
    if not merged.any():
        return lp, None
    cols, row, group = cols[merged], row[merged], group[merged]
    order = np.argsort(group, kind="stable")
    cols, row, group = cols[order], row[order], group[order]
    first = np.r_[True, group[1:] != group[:-1]]
    rep_row = row[first][np.cumsum(first) - 1]           # each member's merged row
    # costs onto the policy: c_j m_j = -c_j G_pi[r_j] pi
    R = Gp[row]
    c_pi = lp.c_pi.reshape(-1) - R.T @ lp.c_v[cols]
    c_v = lp.c_v.copy()
    c_v[cols] = 0.0
    # rows: each member's into its group's first, the others kept, in order
    target = np.arange(m)
    target[row] = rep_row
    kept = np.ones(m, dtype=bool)
    kept[row[~first]] = False
    new_index = np.cumsum(kept) - 1
    S = sp.csr_matrix((np.ones(m), (new_index[target], np.arange(m))),
                      shape=(int(kept.sum()), m))
    keep = np.setdiff1d(np.arange(Gv.shape[1]), cols[~first])
    G_pi = (S @ Gp).tocsc()
    G_v = (S @ Gvr).tocsc()[:, keep]
    c_pi = c_pi.reshape(lp.n_units, n_a)
    empty = (np.diff(G_pi.indptr) == 0).reshape(lp.n_units, n_a).all(axis=1)
    out = replace(lp, G_pi=G_pi, G_piT=G_pi.T.tocsr(), G_v=G_v, lo=lp.lo[kept],
                  hi=lp.hi[kept], c_pi=c_pi, c_v=c_v[keep], l_v=lp.l_v[keep],
                  u_v=lp.u_v[keep], inert=empty & ~np.any(c_pi != 0.0, axis=1))
    return out, Merge(Gv.shape[1], keep, cols, R.tocsr())
