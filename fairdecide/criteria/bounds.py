"""A conditional-independence deviation bounded from ranges of its pieces, as a number
and as rows of a program.

Where the group conditionals P(t | c, z) and the group weights w_z(c) = P(z | c) are
known only within ranges (intervals from held-out rows,
:mod:`fairdecide.evaluation._bounds`; or their extremes over every world of a confidence
set, :mod:`fairdecide.criteria.over_set`), a criterion's deviation is bounded by

- ``g[z, z', c, t]``, a bound of |P(t | c, z) - P(t | c, z')| for two groups (from
  ranges [lo, hi] of the two rates: max(hi_z - lo_z', hi_z' - lo_z), clipped to [0, 1]);
- with ``reference="pairwise"``, g itself for every compared pair;
- with the pooled reference, since P(t | c) = sum_z' w_z' P(t | c, z'),

      P(t | c, z) - P(t | c) = sum_{z' != z} w_z' (P(t | c, z) - P(t | c, z')),

  |P(t | c, z) - P(t | c)| is at most the largest sum_{z' != z} v_z' g_zz' over
  0 <= v_z' <= (upper bound of w_z'), sum_z' v_z' <= 1 - (lower bound of w_z): a
  fractional knapsack (:func:`knapsack`), times the upper bound of w_z under
  ``weighting="group"``;

and the deviation is the sum (``"tv"``) or the largest (``"max"``) of these terms. With
two target values both have the same bound, so the rows keep the second (twice, for
"tv"). In a program the knapsack is its dual, min T mu + sum_z' cap_z' nu_z' subject to
mu + nu_z' >= g_zz', mu, nu >= 0, which is linear in the gaps: every feasible (mu, nu)
bounds the knapsack from above and the best equals it (:func:`write_bound_rows`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp

if TYPE_CHECKING:
    from fairdecide.criteria.base import ProgramBlock
    from fairdecide.problem import DecisionProblem

__all__ = ["bound_from_gaps", "compared_values", "gaps_from_ranges", "knapsack",
           "write_bound_rows"]


def compared_values(crit: Any, problem: DecisionProblem, n_c: int
                    ) -> np.ndarray:
    """The conditioning values the criterion compares (its ``given_values``, or all)."""
    codes = crit._given_codes(problem)
    return np.arange(n_c) if codes is None else np.unique(codes)


def gaps_from_ranges(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """g[z, z', c, t] = max(hi_z - lo_z', hi_z' - lo_z) clipped to [0, 1], the largest
    |P(t | c, z) - P(t | c, z')| of two rates within [lo, hi] (arrays (n_z, n_c, n_t));
    exact when the two groups' rates share no parameter."""
    return np.clip(np.maximum(hi[:, None] - lo[None, :], hi[None, :] - lo[:, None]),
                   0.0, 1.0)


def knapsack(gap: np.ndarray, cap: np.ndarray, total: np.ndarray) -> np.ndarray:
    """max sum_{z' != z} v_z' gap[z, z'] over 0 <= v_z' <= cap[z'], sum v <= total[z],
    for every (z, c, t): fill the largest gaps first. ``gap`` (n_z, n_z, n_c, n_t),
    ``cap`` and ``total`` (n_z, n_c)."""
    n_z = gap.shape[0]
    caps = np.broadcast_to(cap[None, :, :, None], gap.shape).copy()
    caps[np.arange(n_z), np.arange(n_z)] = 0.0  # a group is not compared with itself
    order = np.argsort(-gap, axis=1)
    g = np.take_along_axis(gap, order, axis=1)
    c = np.take_along_axis(caps, order, axis=1)
    before = np.cumsum(c, axis=1) - c
    room = np.clip(total[:, None, :, None] - before, 0.0, None)
    return (np.minimum(c, room) * g).sum(axis=1)


def bound_from_gaps(crit: Any, problem: DecisionProblem,
                    gap: np.ndarray, w_low: np.ndarray, w_high: np.ndarray) -> float:
    """The bound of ``crit``'s deviation (see the module) from the pair gaps ``gap``
    (n_z, n_z, n_c, n_t) and the ranges [w_low, w_high] of the group weights P(z | c)
    (n_z, n_c). The criterion has measure "tv" or "max", either reference."""
    compared = compared_values(crit, problem, gap.shape[2])
    if crit.reference == "pairwise":
        first, second = crit._pairs(gap.shape[0])
        block = gap[first, second][:, compared]
    else:
        block = knapsack(gap, w_high, 1.0 - w_low)
        if crit.weighting == "group":
            block = block * w_high[..., None]
        block = block[:, compared]
    if crit.measure == "max":
        return float(block.max(initial=0.0))
    return float(block.sum())


def write_bound_rows(block: ProgramBlock, crit: Any,
                     hi_cols: np.ndarray, lo_cols: np.ndarray, w_low: np.ndarray,
                     w_high: np.ndarray, active: np.ndarray) -> None:
    """Rows f >= the bound of ``crit``'s deviation (see the module) from variables that
    bound each group's rate from above (``hi_cols``) and below (``lo_cols``), both
    (n_z, n_c, n_t) column indices, and the constant weight ranges (n_z, n_c); only the
    (z, c) that are ``active`` (n_z, n_c) and compared enter."""
    _, n_c, n_t = hi_cols.shape
    compared = np.zeros(n_c, dtype=bool)
    compared[compared_values(crit, block.problem, n_c)] = True
    targets = [n_t - 1] if n_t == 2 else list(range(n_t))
    twice = 2.0 if n_t == 2 and crit.measure == "tv" else 1.0
    rows: list[tuple[list[int], list[float], float]] = []  # (cols, vals, rhs) of <= rows

    def gap_var(z: int, v: int, c: int, t: int) -> int:
        """g >= hi_z - lo_z' and g >= hi_z' - lo_z, g in [0, 1]."""
        g = int(block.new_vars(1, 0.0, 1.0)[0])
        rows.append(([int(hi_cols[z, c, t]), int(lo_cols[v, c, t]), g], [1.0, -1.0, -1.0],
                     0.0))
        rows.append(([int(hi_cols[v, c, t]), int(lo_cols[z, c, t]), g], [1.0, -1.0, -1.0],
                     0.0))
        return g

    terms: list[tuple[list[int], list[float]]] = []  # each term's bound, as an expression
    for c in np.flatnonzero(compared):
        on = np.flatnonzero(active[:, c])
        for t in targets:
            gaps = {(z, v): gap_var(z, v, c, t) for i, z in enumerate(on) for v in on[i + 1:]}
            if crit.reference == "pairwise":
                terms += [([g], [1.0]) for g in gaps.values()]
                continue
            for z in on:
                others = [v for v in on if v != z]
                if not others:
                    continue
                # the knapsack's dual: mu + nu_z' >= g_zz', the term T mu + cap . nu
                mu = int(block.new_vars(1)[0])
                nu = block.new_vars(len(others))
                for v, n in zip(others, nu, strict=True):
                    g = gaps[(min(z, v), max(z, v))]
                    rows.append(([g, mu, int(n)], [1.0, -1.0, -1.0], 0.0))
                scale = w_high[z, c] if crit.weighting == "group" else 1.0
                terms.append(([mu, *map(int, nu)],
                              [scale * (1.0 - w_low[z, c]),
                               *(scale * w_high[v, c] for v in others)]))
    if crit.measure == "max":
        for cols, vals in terms:
            rows.append(([*cols, block.f], [twice * v for v in vals] + [-1.0], 0.0))
    elif terms:
        cols = [c for cs, _ in terms for c in cs]
        vals = [twice * v for _, vs in terms for v in vs]
        rows.append(([*cols, block.f], [*vals, -1.0], 0.0))
    if not rows:
        return
    width = max(len(c) for c, _, _ in rows)
    cols = np.full((len(rows), width), block.f, dtype=np.int64)
    vals = np.zeros((len(rows), width))
    for r, (cs, vs, _) in enumerate(rows):
        cols[r, :len(cs)], vals[r, :len(vs)] = cs, vs
    used = np.unique(cols)
    mat = sp.csr_matrix((vals.reshape(-1), (np.repeat(np.arange(len(rows)), width),
                                            np.searchsorted(used, cols.reshape(-1)))),
                        shape=(len(rows), len(used)))
    block.add_ub_dense(mat, used, np.array([b for _, _, b in rows]))
