"""Pair rows of the Lipschitz criterion: D_TV(pi_i, pi_j) - f <= bound_ij, written over a
program block's free policy columns."""

from __future__ import annotations

import itertools

import numpy as np
import scipy.sparse as sp

from fairdecide.criteria.base import ProgramBlock

__all__ = ["write_pair_rows"]

#: With at most this many actions a pair's D_TV <= c is written without auxiliary
#: variables, one row per non-empty proper subset S of actions:
#: sum_{a in S} pi_ia - pi_ja <= c (D_TV is the largest such sum); otherwise with
#: t_a >= |pi_ia - pi_ja| and sum_a t_a / 2 <= c.
SUBSET_ACTIONS = 4


def _subsets(n_a: int) -> np.ndarray:
    """0/1 masks of the non-empty proper subsets of the actions, shape (2^n_a - 2, n_a)."""
    return np.array([m for m in itertools.product((0, 1), repeat=n_a)
                     if 0 < sum(m) < n_a], dtype=float)


def write_pair_rows(block: ProgramBlock, pairs: np.ndarray, bound: np.ndarray) -> None:
    """Rows D_TV(pi_i, pi_j) - f <= bound_ij for each pair (i, j) of units, over the
    block's free policy columns; pairs sharing a free row, and pairs whose bound is at
    least 1, are left out (they can never bind)."""
    fi, fj = block.free_of_unit[pairs[:, 0]], block.free_of_unit[pairs[:, 1]]
    keep = (fi != fj) & (bound < 1.0)
    fi, fj, bound = fi[keep], fj[keep], bound[keep]
    m = len(fi)
    if not m:
        return
    n_free, n_a = block.pi_cols.shape
    f_local = n_free * n_a  # local column of f after the flattened policy columns
    if n_a <= SUBSET_ACTIONS:
        S = _subsets(n_a)
        ns = len(S)
        sr, sa = np.nonzero(S)  # (subset, action) entries
        p = np.repeat(np.arange(m), len(sr))
        r = p * ns + np.tile(sr, m)
        a = np.tile(sa, m)
        rows = np.concatenate([r, r, np.arange(m * ns)])
        cols = np.concatenate([fi[p] * n_a + a, fj[p] * n_a + a, np.full(m * ns, f_local)])
        vals = np.concatenate([np.ones(len(r)), -np.ones(len(r)), -np.ones(m * ns)])
        mat = sp.csr_matrix((vals, (rows, cols)), shape=(m * ns, f_local + 1))
        block.add_ub_dense(mat, np.append(block.pi_cols.reshape(-1), block.f),
                           np.repeat(bound, ns))
        return
    t = block.new_vars(m * n_a)  # t[p, a] >= |pi_ia - pi_ja|
    p = np.repeat(np.arange(m), n_a)
    a = np.tile(np.arange(n_a), m)
    r = np.arange(m * n_a)
    n_loc = f_local + 1 + m * n_a
    for sign in (1.0, -1.0):
        mat = sp.csr_matrix(
            (np.concatenate([np.full(m * n_a, sign), np.full(m * n_a, -sign),
                             -np.ones(m * n_a)]),
             (np.tile(r, 3), np.concatenate([fi[p] * n_a + a, fj[p] * n_a + a,
                                              f_local + 1 + r]))),
            shape=(m * n_a, n_loc))
        block.add_ub_dense(mat, np.concatenate([block.pi_cols.reshape(-1), [block.f], t]),
                           np.zeros(m * n_a))
    mat = sp.csr_matrix(
        (np.concatenate([np.full(m * n_a, 0.5), -np.ones(m)]),
         (np.concatenate([p, np.arange(m)]), np.concatenate([f_local + 1 + r,
                                                              np.full(m, f_local)]))),
        shape=(m, n_loc))
    block.add_ub_dense(mat, np.concatenate([block.pi_cols.reshape(-1), [block.f], t]), bound)
