"""Programmes cloned into seats: the stable-matching rows of a many-to-one market.

Programme j with q_j places becomes q_j seats (j, 0), ..., (j, q_j - 1), each with j's
priorities; a candidate ranks the seats of one programme in seat order, at j's place in
her list. The stable matchings of this one-to-one market are those of the original, with
each programme's candidates seated in priority order (Roth and Sotomayor, 1990, ch. 5).
For one-to-one markets with strict, possibly incomplete lists, the stable matchings are
the vertices of the polytope (Vande Vate, 1989; Rothblum, 1992)

    x >= 0,  sum_k x_ik <= 1,  sum_i x_ik <= 1,
    x_ik + sum_{k' >_i k} x_ik' + sum_{i' >_k i} x_i'k >= 1   for every acceptable (i, k),

so a fractional x in it is a lottery over stable matchings. This module writes those
rows for a linear program (:func:`stable_program`) and recomputes them from a
candidates x seats matrix (:func:`stability_rows`).

The program keeps only the seat variables some stable matching can use: in the lattice
of stable matchings every candidate's programme lies between her candidate-optimal and
programme-optimal ones, and every seat's occupant between its occupants in those two
matchings (in the seat's priority order), while every stable matching matches the same
candidates and fills the same seats. The other variables are zero on the whole polytope;
with them fixed at zero, the rows that the fixed row and seat sums already satisfy are
dropped and the rest written over prefix-sum variables (two nonzeros a row).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp

from fairdecide.exceptions import SolverError

if TYPE_CHECKING:
    from fairdecide.assignment.stable import MatchingMarket


def seat_layout(capacities: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(programme of each seat, seat number within its programme, first seat of each
    programme)."""
    start = np.cumsum(capacities) - capacities
    prog = np.repeat(np.arange(len(capacities)), capacities)
    return prog, np.arange(len(prog)) - start[prog], start


def seat_priorities(market: MatchingMarket, assignment: np.ndarray) -> np.ndarray:
    """Priority rank (at its programme) of each seat's occupant when the programmes' seats
    are filled in priority order; -1 for an empty seat."""
    prog, _, start = seat_layout(market.capacities)
    out = np.full(len(prog), -1, dtype=np.int64)
    matched = np.flatnonzero(assignment >= 0)
    j = assignment[matched]
    pr = market.programme_rank[j, matched]
    order = np.lexsort((pr, j))
    j, pr = j[order], pr[order]
    place = np.arange(len(j)) - np.searchsorted(j, j, side="left")
    out[start[j] + place] = pr
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


def stable_program(market: MatchingMarket, best: np.ndarray, worst: np.ndarray):
    """The stable-matching polytope of the seat market as linear-program rows.

    ``best`` and ``worst`` are the candidate-optimal and programme-optimal stable
    matchings. Returns the slots (candidate, programme, seat) that carry a variable and
    the rows over columns [x (one per slot), C (candidate prefix sums), D (seat prefix
    sums)]: (A_eq rows = 0, A_ge rows >= 1, lower and upper bounds of all columns)."""
    n, m = market.n_candidates, market.n_programmes
    cap = market.capacities
    prog, seat_no, start = seat_layout(cap)
    crank, prank, acc = market.candidate_rank, market.programme_rank, market.acceptable
    occ_best, occ_worst = seat_priorities(market, best), seat_priorities(market, worst)
    if not np.array_equal(occ_best >= 0, occ_worst >= 0):
        raise SolverError("internal: the two extreme stable matchings fill different seats")
    Q = int(cap.max(initial=0)) + 1
    rows_n = np.arange(n)
    mb = np.where(best >= 0, crank[rows_n, np.maximum(best, 0)], -1)
    mw = np.where(worst >= 0, crank[rows_n, np.maximum(worst, 0)], -1)
    # candidate window: programmes between her best and worst stable partner
    pi, pj = np.nonzero(acc & (crank >= mb[:, None]) & (crank <= mw[:, None])
                        & (best >= 0)[:, None])
    fill = np.bincount(best[best >= 0], minlength=m)
    reps = fill[pj]
    si, sj = np.repeat(pi, reps), np.repeat(pj, reps)
    ss = np.arange(len(si)) - np.repeat(np.cumsum(reps) - reps, reps)
    sk = start[sj] + ss
    p_i = prank[sj, si]
    keep = (occ_worst[sk] <= p_i) & (p_i <= occ_best[sk])  # seat window
    si, sj, ss, sk, p_i = si[keep], sj[keep], ss[keep], sk[keep], p_i[keep]
    ns = len(si)
    key = crank[si, sj] * Q + ss
    big_c, big_d = m * Q + 1, n + 1
    c_order = np.lexsort((key, si))
    c_comp = si[c_order] * big_c + key[c_order]
    d_order = np.lexsort((p_i, sk))
    d_comp = sk[d_order] * big_d + p_i[d_order]
    # chains: C_t = C_{t-1} + x_t along each candidate's slots, D likewise along each seat's
    eq_r, eq_c, eq_v = [], [], []
    for block, (order, owner) in enumerate(((c_order, si), (d_order, sk))):
        t = np.arange(ns)
        own = owner[order]
        nf = np.r_[False, own[1:] == own[:-1]] if ns else np.zeros(0, bool)  # not first
        row = block * ns + t
        col = (block + 1) * ns + t
        eq_r += [row, row, row[nf]]
        eq_c += [col, order, col[nf] - 1]
        eq_v += [np.ones(ns), -np.ones(ns), -np.ones(int(nf.sum()))]
    A_eq = sp.csr_matrix((np.concatenate(eq_v), (np.concatenate(eq_r), np.concatenate(eq_c))),
                         shape=(2 * ns, 3 * ns))
    lb, ub = np.zeros(3 * ns), np.ones(3 * ns)
    last_c = np.r_[si[c_order][1:] != si[c_order][:-1], True] if ns else np.zeros(0, bool)
    last_d = np.r_[sk[d_order][1:] != sk[d_order][:-1], True] if ns else np.zeros(0, bool)
    lb[ns + np.flatnonzero(last_c)] = 1.0  # every stable matching matches these candidates
    lb[2 * ns + np.flatnonzero(last_d)] = 1.0  # ... and fills these seats
    worst_key = np.full(n, -1, dtype=np.int64)
    np.maximum.at(worst_key, si, key)
    # every acceptable (candidate, seat) pair whose row the fixed sums do not satisfy
    ri, rk = [], []
    for j in range(m):
        cand = np.flatnonzero(acc[:, j])
        cand = cand[np.argsort(prank[j, cand], kind="stable")]
        seats = np.arange(start[j], start[j] + cap[j])
        filled = occ_best[seats] >= 0
        lens = np.where(filled, np.searchsorted(prank[j, cand], occ_best[seats],
                                                side="right"), len(cand))
        ri.append(cand[np.arange(lens.sum()) - np.repeat(np.cumsum(lens) - lens, lens)])
        rk.append(np.repeat(seats, lens))
    ri = np.concatenate(ri) if ri else np.zeros(0, np.int64)
    rk = np.concatenate(rk) if rk else np.zeros(0, np.int64)
    rkey = crank[ri, prog[rk]] * Q + seat_no[rk]
    live = (worst_key[ri] < 0) | (rkey < worst_key[ri])
    ri, rk, rkey = ri[live], rk[live], rkey[live]
    tc = np.searchsorted(c_comp, ri * big_c + rkey, side="right") - 1
    has_c = (tc >= 0) & (si[c_order][np.maximum(tc, 0)] == ri) if ns else np.zeros(
        len(ri), bool)
    td = np.searchsorted(d_comp, rk * big_d + prank[prog[rk], ri], side="left") - 1
    has_d = (td >= 0) & (sk[d_order][np.maximum(td, 0)] == rk) if ns else np.zeros(
        len(ri), bool)
    if np.any(~has_c & ~has_d):
        raise SolverError("internal: a stable-matching row with no variable left in it")
    r = np.arange(len(ri))
    A_ge = sp.csr_matrix(
        (np.ones(int(has_c.sum() + has_d.sum())),
         (np.concatenate([r[has_c], r[has_d]]),
          np.concatenate([ns + tc[has_c], 2 * ns + td[has_d]]))), shape=(len(ri), 3 * ns))
    return (si, sj, ss), A_eq, A_ge, lb, ub
