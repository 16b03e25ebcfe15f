"""Programmes cloned into seats: the stable-matching rows of a many-to-one market.

Programme j with q_j places becomes q_j seats (j, 0), ..., (j, q_j - 1), each with j's
priorities; a candidate ranks the seats of one programme in seat order, at j's place in
her list. The stable matchings of this one-to-one market are those of the original, with
each programme's candidates seated in priority order (Roth and Sotomayor, 1990, ch. 5).
For one-to-one markets with strict, possibly incomplete lists, the stable matchings are
the vertices of the polytope (Vande Vate, 1989; Rothblum, 1992)

    x >= 0,  sum_k x_ik <= 1,  sum_i x_ik <= 1,
    x_ik + sum_{k' >_i k} x_ik' + sum_{i' >_k i} x_i'k >= 1   for every acceptable (i, k),

so a fractional x in it is a lottery over stable matchings. This module recomputes
those rows from a candidates x seats matrix (:func:`stability_rows`), the check of every
stable lottery's result; the program itself is written over the market's rotations
(:mod:`fairdecide.assignment._rotations`), whose image is the same polytope.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from fairdecide.assignment.stable import MatchingMarket


def seat_layout(capacities: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(programme of each seat, seat number within its programme, first seat of each
    programme)."""
    start = np.cumsum(capacities) - capacities
    prog = np.repeat(np.arange(len(capacities)), capacities)
    return prog, np.arange(len(prog)) - start[prog], start


def seated(market: MatchingMarket, assignment: np.ndarray) -> np.ndarray:
    """Each candidate's seat when every programme seats its candidates in priority
    order (-1 unmatched)."""
    _, _, start = seat_layout(market.capacities)
    out = np.full(market.n_candidates, -1, dtype=np.int64)
    matched = np.flatnonzero(assignment >= 0)
    j = assignment[matched]
    order = np.lexsort((market.programme_rank[j, matched], j))
    j, who = j[order], matched[order]
    out[who] = start[j] + np.arange(len(j)) - np.searchsorted(j, j, side="left")
    return out


def split_into_seats(market: MatchingMarket, X: np.ndarray) -> np.ndarray:
    """A candidates x seats matrix with programme sums X: each programme's candidates laid
    end to end in priority order on [0, q_j] and cut at the whole numbers (seat s gets the
    part in [s, s + 1)). Seat sums are at most one when X's column sums are at most q_j."""
    n = market.n_candidates
    prog, _, start = seat_layout(market.capacities)
    out = np.zeros((n, len(prog)))
    for j in range(market.n_programmes):
        q = int(market.capacities[j])
        if q == 0:
            continue
        order = np.argsort(market.programme_rank[j], kind="stable")
        x = np.clip(X[order, j], 0.0, 1.0)
        hi = np.cumsum(x)
        lo = hi - x
        s0 = np.minimum(np.floor(lo).astype(np.int64), q - 1)
        first = np.minimum(hi, s0 + 1.0) - lo
        rest = x - first
        out[order, start[j] + s0] += first
        more = rest > 0
        s1 = np.minimum(s0[more] + 1, q - 1)
        out[order[more], start[j] + s1] += rest[more]
    return out


def stability_rows(market: MatchingMarket, seats: np.ndarray) -> np.ndarray:
    """The left-hand side of every stable-matching row of the seat market, from a
    candidates x seats matrix: an (n, S) array, NaN where (i, seat) is not acceptable.

    row(i, k) = x_ik + sum of i's mass on seats she prefers to k + sum of k's mass on
    candidates of higher priority than i."""
    prog, _, start = seat_layout(market.capacities)
    S = len(prog)
    E = np.zeros((S, market.n_programmes))
    E[np.arange(S), prog] = 1.0
    X = seats @ E
    order = np.argsort(market.candidate_rank, axis=1, kind="stable")
    Xs = np.take_along_axis(X, order, axis=1)
    above_prog = np.empty_like(X)
    np.put_along_axis(above_prog, order, np.cumsum(Xs, axis=1) - Xs, axis=1)
    cum = np.cumsum(seats, axis=1) - seats  # exclusive, along all seats
    within = cum - cum[:, start[prog]] if S else cum  # seats of the same programme above
    rows = seats + above_prog[:, prog] + within
    for j in range(market.n_programmes):
        cols = slice(start[j], start[j] + market.capacities[j])
        pord = np.argsort(market.programme_rank[j], kind="stable")
        block = seats[pord, cols]
        higher = np.empty_like(block)
        higher[pord] = np.cumsum(block, axis=0) - block
        rows[:, cols] += higher
    rows[~market.acceptable[:, prog]] = np.nan
    return rows
