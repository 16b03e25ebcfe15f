"""A coarse copy of a block program, whose duals start the structured solver.

Units that touch the same coupling rows with proportional coefficients take the same
decision at any prices. So units are grouped by the rows they touch (their group, in a
tabular world) and, within a group, binned along the main direction of their normalised
coefficients and costs (for two outcomes in a prediction problem: P(y = 1 | x, z)). Each
bin becomes one super-unit whose columns and costs are the sums of its members': a
policy constant within bins is a policy of the program, so the coarse program is a
restriction of it (never infeasible when a bin-constant policy is feasible) and its
duals approximate the program's, at a small fraction of its size.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import scipy.sparse as sp

from fairdecide.optimize.engine._block_lp import BlockLP

__all__ = ["add_bins", "sub_bins", "with_bins"]


def with_bins(lp: BlockLP, active: np.ndarray, n_bins: int) -> tuple[BlockLP, np.ndarray]:
    """The program's units followed by about ``n_bins`` super-units of its ``active``
    units (bins), and each active unit's bin (numbered from ``lp.n_units``)."""
    n_a = lp.n_actions
    label = _bins(lp, active, n_bins)
    n_c = int(label.max()) + 1
    # S maps each policy column (u, a) of an active unit to super-column (bin(u), a)
    rows = (active[:, None] * n_a + np.arange(n_a)).ravel()
    cols = (label[:, None] * n_a + np.arange(n_a)).ravel()
    S = sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(lp.n_units * n_a, n_c * n_a))
    G = sp.hstack([lp.G_pi, lp.G_pi @ S], format="csc")
    c = np.zeros((n_c, n_a))
    np.add.at(c, label, lp.c_pi[active])
    return replace(lp, n_units=lp.n_units + n_c, G_pi=G, G_piT=None,
                   c_pi=np.vstack([lp.c_pi, c]),
                   inert=np.concatenate([lp.inert, np.zeros(n_c, dtype=bool)])
                   ), label + lp.n_units


def add_bins(lp: BlockLP, members: np.ndarray, label: np.ndarray) -> BlockLP:
    """``lp`` followed by new super-units, one per value of ``label`` (0, 1, ...): the
    sums of the program's units ``members`` that carry it."""
    n_a = lp.n_actions
    k = int(label.max()) + 1
    cols = (members[:, None] * n_a + np.arange(n_a)).ravel()
    to = (label[:, None] * n_a + np.arange(n_a)).ravel()
    S = sp.csr_matrix((np.ones(len(cols)), (np.arange(len(cols)), to)),
                      shape=(len(cols), k * n_a))
    c = np.zeros((k, n_a))
    np.add.at(c, label, lp.c_pi[members])
    return replace(lp, n_units=lp.n_units + k,
                   G_pi=sp.hstack([lp.G_pi, (lp.G_pi[:, cols] @ S).tocsc()], format="csc"),
                   c_pi=np.vstack([lp.c_pi, c]),
                   inert=np.concatenate([lp.inert, np.zeros(k, dtype=bool)]))


def sub_bins(parent: np.ndarray, best: np.ndarray, margin: np.ndarray, parts: int
             ) -> np.ndarray:
    """Split the members of bins (``parent``) into about ``parts`` sub-bins each: by
    their best action at the last prices, then in runs of their ``margin`` (how much
    the next action costs more), so that members that would switch together at nearby
    prices stay together. A label per member (0, 1, ...), or -1 for members of a run of
    one, who move on their own."""
    order = np.lexsort((margin, best, parent))
    p, b = parent[order], best[order]
    start = np.r_[True, (p[1:] != p[:-1]) | (b[1:] != b[:-1])]
    group = np.cumsum(start) - 1
    size = np.bincount(group)
    pos = np.arange(len(order)) - np.flatnonzero(start)[group]
    chunk = -(-size // parts)
    run = group.astype(np.int64) * (int(size.max(initial=1)) + 1) + pos // chunk[group]
    label = np.full(len(order), -1, dtype=np.int64)
    shared = chunk[group] > 1
    if shared.any():
        label[order[shared]] = np.unique(run[shared], return_inverse=True)[1].ravel()
    return label


def _bins(lp: BlockLP, active: np.ndarray, n_bins: int) -> np.ndarray:
    """A super-unit label for each active unit (see the module)."""
    n_a = lp.n_actions
    G = lp.G_piT[(active[:, None] * n_a + np.arange(n_a)).ravel()].tocsr()  # unit-major
    G.sort_indices()
    # the rows a unit touches: its first and last row and how many it has (a key, not a
    # proof: it only decides which units may share a bin)
    per_unit = G.indptr[::n_a]
    counts = np.diff(G.indptr).reshape(-1, n_a).sum(axis=1)
    first = np.where(counts > 0, G.indices[np.minimum(per_unit[:-1], max(G.nnz - 1, 0))]
                     if G.nnz else 0, -1)
    key = (first.astype(np.int64) + 1) * (int(counts.max(initial=0)) + 1) + counts
    _, klass = np.unique(key, return_inverse=True)
    label = np.zeros(len(active), dtype=np.int64)
    sizes = np.bincount(klass)
    next_label = 0
    for k, size in enumerate(sizes):
        members = np.flatnonzero(klass == k)
        bins = int(max(1, round(n_bins * size / len(active))))
        score = _main_direction(G, lp.c_pi[active[members]], members, n_a)
        if bins >= size:
            label[members] = next_label + np.arange(size)
            next_label += size
            continue
        order = np.argsort(score, kind="stable")
        label[members[order]] = next_label + (np.arange(size) * bins) // size
        next_label += bins
    return label


def _main_direction(G: sp.csr_matrix, cost: np.ndarray, members: np.ndarray, n_a: int
                    ) -> np.ndarray:
    """Each member's coordinate along the first principal direction of its normalised
    coefficients and costs.

    A member's profile is its n_a rows of G side by side (over the columns any member
    uses), then its n_a costs, divided by its 1-norm; the profiles are centred and the
    direction found by power iteration. The profiles stay sparse (a unit touches a few
    of the rows its class uses) and the centring is applied inside each product:
    (P - 1 mu') v = P v - (mu . v) 1."""
    idx = (members[:, None] * n_a + np.arange(n_a)).ravel()
    block = G[idx].tocsr()
    block.sort_indices()
    m = len(members)
    present = np.zeros(G.shape[1], dtype=bool)
    present[block.indices] = True
    n_used = int(present.sum())
    col = (np.cumsum(present) - 1)[block.indices]
    row = np.repeat(np.arange(len(idx)), np.diff(block.indptr))
    # row r of block is member r // n_a, action r % n_a: column (r % n_a) n_used + col,
    # then the member's n_a costs; written straight into CSR (a member's entries are in
    # column order), each member's entries shifted by the costs before them
    end = block.indptr[n_a::n_a]  # where each member's block entries end
    at = np.arange(block.nnz) + (row // n_a) * n_a
    cost_at = (end + np.arange(m) * n_a)[:, None] + np.arange(n_a)
    data, indices = np.empty(block.nnz + m * n_a), np.empty(block.nnz + m * n_a, np.int64)
    data[at], indices[at] = block.data, (row % n_a) * n_used + col
    data[cost_at.ravel()], indices[cost_at.ravel()] = cost.ravel(), np.tile(
        n_a * n_used + np.arange(n_a), m)
    P = sp.csr_matrix((data, indices, np.r_[0, end + (np.arange(m) + 1) * n_a]),
                      shape=(m, n_a * n_used + n_a))
    mass = np.asarray(abs(P).sum(axis=1)).ravel()
    P = sp.diags(1.0 / np.where(mass > 0, mass, 1.0)) @ P
    mu = np.asarray(P.mean(axis=0)).ravel()
    if P.shape[1] == 0 or not np.any(P.data):
        return np.zeros(m)
    v = np.random.default_rng(0).standard_normal(P.shape[1])
    for _ in range(8):  # power iteration on the centred profiles' P^T P
        w = P @ v - mu @ v
        v = P.T @ w - mu * w.sum()
        norm = np.linalg.norm(v)
        if norm == 0:
            return np.zeros(m)
        v /= norm
    return P @ v - mu @ v
