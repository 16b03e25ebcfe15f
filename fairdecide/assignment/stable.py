"""Stable matchings of candidates to programmes with capacities (many-to-one).

Candidates (students) rank the programmes (colleges) they find acceptable, most preferred
first; each programme j has q_j places and ranks the candidates it finds acceptable,
highest priority first. A pair (i, j) is acceptable when each lists the other. A matching
gives each candidate at most one acceptable programme and programme j at most q_j
candidates. The pair (i, j) **blocks** it when i prefers j to her assignment (any
programme to none) and j has a free place or ranks i above one of its candidates; a
matching without blocking pairs is **stable** (Gale and Shapley, 1962; Example 13 of the
book's fairness chapter).

:func:`deferred_acceptance` finds the candidate-optimal stable matching (every candidate
weakly prefers it to every other stable matching) by candidate-proposing deferred
acceptance, or the programme-optimal one; :func:`blocking_pairs` lists the blocking pairs
of any matching, exactly.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fairdecide._common.validation import check_choice
from fairdecide.exceptions import FairdecideError

__all__ = ["MatchingMarket", "blocking_pairs", "deferred_acceptance"]


def _as_lists(value: Any, name: str, n_items: int, what: str) -> tuple[tuple[int, ...], ...]:
    """A sequence of preference lists, each of distinct integer codes in range(n_items)."""
    if isinstance(value, str | bytes) or not hasattr(value, "__len__"):
        raise FairdecideError(
            f"{name} must be a sequence of preference lists (one list of {what} codes per "
            f"entry, most preferred first), got {type(value).__name__}")
    out = []
    for k, row in enumerate(value):
        if isinstance(row, str | bytes) or not hasattr(row, "__len__"):
            raise FairdecideError(
                f"{name}[{k}] must be a list of {what} codes, got {type(row).__name__}")
        arr = np.asarray(row, dtype=object).reshape(-1) if len(row) else np.zeros(0, int)
        if np.ndim(row) > 1:
            raise FairdecideError(f"{name}[{k}] must be a flat list of {what} codes")
        codes = []
        for v in arr:
            if isinstance(v, bool | np.bool_) or not isinstance(v, int | np.integer):
                raise FairdecideError(
                    f"{name}[{k}] must hold integer {what} codes, got {v!r}")
            if not 0 <= int(v) < n_items:
                raise FairdecideError(
                    f"{name}[{k}] has {what} code {int(v)}; valid codes are 0..{n_items - 1}")
            codes.append(int(v))
        if len(set(codes)) != len(codes):
            raise FairdecideError(f"{name}[{k}] lists a {what} twice: {codes}")
        out.append(tuple(codes))
    return tuple(out)


def _rank_matrix(lists: tuple[tuple[int, ...], ...], n_items: int) -> np.ndarray:
    """rank[a, b] = position of b in a's list (0 = first); n_items where b is not listed."""
    rank = np.full((len(lists), n_items), n_items, dtype=np.int64)
    rows = np.repeat(np.arange(len(lists)), [len(r) for r in lists])
    cols = np.fromiter((b for r in lists for b in r), dtype=np.int64, count=len(rows))
    pos = np.concatenate([np.arange(len(r)) for r in lists]) if len(rows) else rows
    rank[rows, cols] = pos
    return rank


@dataclass(frozen=True, eq=False)
class MatchingMarket:
    """Candidates, programmes, their preference lists and the programmes' capacities.

    Parameters
    ----------
    candidate_prefs : sequence of n sequences of int
        ``candidate_prefs[i]``: the programmes candidate i finds acceptable, most preferred
        first (codes 0..m-1, each at most once; may be empty).
    programme_prefs : sequence of m sequences of int
        ``programme_prefs[j]``: the candidates programme j finds acceptable, highest
        priority first (codes 0..n-1).
    capacities : array-like of int, shape (m,)
        q_j >= 0 places of programme j.

    Attributes
    ----------
    candidate_rank : ndarray of int, shape (n, m)
        Position of j in i's list, m where i does not list j.
    programme_rank : ndarray of int, shape (m, n)
        Position of i in j's list, n where j does not list i.
    acceptable : ndarray of bool, shape (n, m)
        Mutually acceptable pairs: the only pairs a matching may use or that may block.

    Examples
    --------
    >>> import fairdecide as fd
    >>> market = fd.MatchingMarket([[0, 1], [0], [1, 0]], [[1, 2, 0], [0, 2]], [1, 1])
    >>> market.n_candidates, market.n_programmes, int(market.acceptable.sum())
    (3, 2, 5)
    """

    candidate_prefs: Any
    programme_prefs: Any
    capacities: Any
    candidate_rank: np.ndarray = field(init=False, repr=False)
    programme_rank: np.ndarray = field(init=False, repr=False)
    acceptable: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        m = len(self.programme_prefs) if hasattr(self.programme_prefs, "__len__") else 0
        n = len(self.candidate_prefs) if hasattr(self.candidate_prefs, "__len__") else 0
        if isinstance(self.candidate_prefs, str | bytes) or n == 0:
            raise FairdecideError(
                "candidate_prefs must hold one preference list per candidate, got none")
        if isinstance(self.programme_prefs, str | bytes) or m == 0:
            raise FairdecideError(
                "programme_prefs must hold one priority list per programme, got none")
        cand = _as_lists(self.candidate_prefs, "candidate_prefs", m, "programme")
        prog = _as_lists(self.programme_prefs, "programme_prefs", n, "candidate")
        try:
            cap = np.asarray(self.capacities)
        except (TypeError, ValueError):
            cap = np.asarray([None])
        if cap.ndim != 1 or len(cap) != m:
            raise FairdecideError(
                f"capacities must hold one capacity per programme ({m}), got shape "
                f"{np.shape(cap)}")
        if cap.dtype.kind not in "iuf" or not np.all(np.isfinite(cap)) or np.any(
                cap != np.round(cap)) or np.any(cap < 0):
            raise FairdecideError(
                f"capacities must be non-negative whole numbers, got {cap.tolist()!r:.200}")
        object.__setattr__(self, "candidate_prefs", cand)
        object.__setattr__(self, "programme_prefs", prog)
        object.__setattr__(self, "capacities", cap.astype(np.int64))
        crank, prank = _rank_matrix(cand, m), _rank_matrix(prog, n)
        for arr in (crank, prank):
            arr.setflags(write=False)
        acc = (crank < m) & (prank.T < n)
        acc.setflags(write=False)
        object.__setattr__(self, "candidate_rank", crank)
        object.__setattr__(self, "programme_rank", prank)
        object.__setattr__(self, "acceptable", acc)
        self.capacities.setflags(write=False)

    @property
    def n_candidates(self) -> int:
        return len(self.candidate_prefs)

    @property
    def n_programmes(self) -> int:
        return len(self.programme_prefs)

    def check_assignment(self, assignment: Any, name: str = "assignment") -> np.ndarray:
        """``assignment`` as a valid matching: shape (n,), codes -1 (unmatched) or 0..m-1,
        only acceptable pairs, no programme over its capacity."""
        n, m = self.n_candidates, self.n_programmes
        try:
            arr = np.asarray(assignment)
        except (TypeError, ValueError):
            arr = np.asarray([None])
        if arr.ndim != 1 or len(arr) != n:
            raise FairdecideError(
                f"{name} must hold one programme code (or -1) per candidate ({n}), got shape "
                f"{arr.shape}")
        if arr.dtype.kind not in "iuf" or not np.all(np.isfinite(arr)) or np.any(
                arr != np.round(arr)):
            raise FairdecideError(f"{name} must hold integer programme codes or -1")
        a = arr.astype(np.int64)
        if np.any((a < -1) | (a >= m)):
            bad = int(a[(a < -1) | (a >= m)][0])
            raise FairdecideError(
                f"{name} has programme code {bad}; valid codes are -1 (unmatched) and "
                f"0..{m - 1}")
        matched = np.flatnonzero(a >= 0)
        bad = ~self.acceptable[matched, a[matched]]
        if np.any(bad):
            i = int(matched[bad][0])
            raise FairdecideError(
                f"{name} gives candidate {i} programme {int(a[i])}, a pair that is not "
                "mutually acceptable")
        counts = np.bincount(a[matched], minlength=m)
        over = counts > self.capacities
        if np.any(over):
            j = int(np.argmax(over))
            raise FairdecideError(
                f"{name} gives programme {j} {int(counts[j])} candidates, over its capacity "
                f"{int(self.capacities[j])}")
        return a

    def __repr__(self) -> str:
        return (f"MatchingMarket({self.n_candidates} candidates, {self.n_programmes} "
                f"programmes, {int(self.capacities.sum())} places, "
                f"{int(self.acceptable.sum())} acceptable pairs)")


def _padded(lists: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    lengths = np.array([len(r) for r in lists], dtype=np.int64)
    out = np.full((len(lists), max(1, int(lengths.max(initial=0)))), -1, dtype=np.int64)
    for k, r in enumerate(lists):
        out[k, :len(r)] = r
    return out, lengths


def _propose(lists: np.ndarray, lengths: np.ndarray, receiver_rank: np.ndarray,
             capacity: np.ndarray) -> np.ndarray:
    """Deferred acceptance, proposers' side: each round every free proposer with a list
    left proposes to the next receiver on it; each receiver keeps its best ``capacity``
    proposers held so far (``receiver_rank[r, p]``, lower is better) and rejects the rest.
    The lists hold only mutually acceptable receivers. Returns each proposer's receiver
    (-1 for none)."""
    n_prop = len(lists)
    nxt = np.zeros(n_prop, dtype=np.int64)
    match = np.full(n_prop, -1, dtype=np.int64)
    while True:
        active = np.flatnonzero((match < 0) & (nxt < lengths))
        if not active.size:
            return match
        match[active] = lists[active, nxt[active]]
        nxt[active] += 1
        held = np.flatnonzero(match >= 0)
        recv = match[held]
        order = np.lexsort((receiver_rank[recv, held], recv))
        held, recv = held[order], recv[order]
        place = np.arange(len(held)) - np.searchsorted(recv, recv, side="left")
        match[held[place >= capacity[recv]]] = -1


def deferred_acceptance(market: MatchingMarket, proposing: str = "candidates") -> np.ndarray:
    """The candidate-optimal (or programme-optimal) stable matching, by deferred acceptance.

    Candidate-proposing (Gale and Shapley, 1962): each free candidate proposes to her most
    preferred programme that has not yet rejected her; programme j holds the q_j
    highest-priority proposals it has received so far and rejects the others; this repeats
    until no free candidate has a programme left to propose to. The result is stable and
    every candidate weakly prefers it to any other stable matching. Programme-proposing
    runs the same procedure on the market with each programme cloned into q_j seats (a
    seat proposes down its programme's priority list; a candidate ranks the seats of one
    programme in seat order): the programme-optimal stable matching, the worst stable
    matching for every candidate. Each round is vectorised over the proposers.

    Parameters
    ----------
    market : MatchingMarket
    proposing : {"candidates", "programmes"}, default "candidates"

    Returns
    -------
    ndarray of int, shape (n,)
        The programme of each candidate, -1 for unmatched.

    Examples
    --------
    >>> import fairdecide as fd
    >>> market = fd.MatchingMarket(
    ...     candidate_prefs=[[0, 1], [0, 1], [0, 1]],
    ...     programme_prefs=[[2, 1, 0], [0, 1, 2]], capacities=[1, 2])
    >>> fd.deferred_acceptance(market)
    array([1, 1, 0])
    >>> len(fd.blocking_pairs(market, [1, 1, 0]))
    0
    """
    if not isinstance(market, MatchingMarket):
        raise FairdecideError(
            f"market must be a MatchingMarket, got {type(market).__name__}")
    check_choice(proposing, "proposing", ("candidates", "programmes"))
    n, m = market.n_candidates, market.n_programmes
    acc = market.acceptable
    if proposing == "candidates":
        lists, lengths = _padded([np.array([j for j in r if acc[i, j]], dtype=np.int64)
                                  for i, r in enumerate(market.candidate_prefs)])
        return _propose(lists, lengths, market.programme_rank, market.capacities)
    cap = market.capacities
    seat_prog = np.repeat(np.arange(m), cap)
    seat_no = np.arange(len(seat_prog)) - np.repeat(np.cumsum(cap) - cap, cap)
    plists = [np.array([i for i in r if acc[i, j]], dtype=np.int64)
              for j, r in enumerate(market.programme_prefs)]
    lists, lengths = _padded([plists[j] for j in seat_prog] or [np.zeros(0, np.int64)])
    if not len(seat_prog):
        return np.full(n, -1, dtype=np.int64)
    # a candidate ranks seat s of programme j at rank(j) * Q + s
    rank = (market.candidate_rank[:, seat_prog] * (int(cap.max()) + 1) + seat_no[None, :])
    seat_of = _propose(lists, lengths, rank, np.ones(n, dtype=np.int64))
    out = np.full(n, -1, dtype=np.int64)
    taken = seat_of >= 0
    out[seat_of[taken]] = seat_prog[taken]
    return out


def blocking_pairs(market: MatchingMarket, assignment: Any) -> np.ndarray:
    """The pairs (i, j) that block a matching, exactly.

    (i, j) blocks when it is mutually acceptable, i prefers j to her assignment (every
    acceptable programme is preferred to none), and j has a free place or ranks i above
    the lowest-priority candidate it was given:

        rank_i(j) < rank_i(mu(i))  and
        ( |mu^-1(j)| < q_j  or  rank_j(i) < max_{i' in mu^-1(j)} rank_j(i') ).

    Parameters
    ----------
    market : MatchingMarket
    assignment : array-like of int, shape (n,)
        Each candidate's programme, -1 for unmatched; a matching of ``market`` (acceptable
        pairs only, capacities respected).

    Returns
    -------
    ndarray of int, shape (k, 2)
        The blocking pairs (candidate, programme), in candidate order; empty when the
        matching is stable.

    Examples
    --------
    >>> import fairdecide as fd
    >>> market = fd.MatchingMarket([[0, 1], [0, 1]], [[0, 1], [0, 1]], [1, 1])
    >>> fd.blocking_pairs(market, [1, 0]).tolist()
    [[0, 0]]
    """
    if not isinstance(market, MatchingMarket):
        raise FairdecideError(
            f"market must be a MatchingMarket, got {type(market).__name__}")
    a = market.check_assignment(assignment)
    n, m = market.n_candidates, market.n_programmes
    crank = np.concatenate([market.candidate_rank, np.full((n, 1), m)], axis=1)
    own = crank[np.arange(n), a]  # a = -1 reads the last column: m, below every programme
    prefers = market.acceptable & (market.candidate_rank < own[:, None])
    matched = np.flatnonzero(a >= 0)
    counts = np.bincount(a[matched], minlength=m)
    worst = np.full(m, -1, dtype=np.int64)
    np.maximum.at(worst, a[matched], market.programme_rank[a[matched], matched])
    open_ = counts < market.capacities
    accepts = open_[None, :] | (market.programme_rank.T < worst[None, :])
    return np.argwhere(prefers & accepts).astype(np.int64)
