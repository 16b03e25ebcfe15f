"""Meritocracy: no one is favoured over someone worthier (book definitions 3.3.1, 3.3.2).

Individuals have worths v_i (for example their expected merit). A selection a (a_i = 1:
selected) is meritocratic when v_i > v_j and a_j = 1 imply a_i = 1. A stochastic policy
is meritocratic in expectation when v_i > v_j implies pi(a* | x_i) >= pi(a* | x_j) for the
favourable action a*. Each violation is a pair (i, j) with v_i > v_j whose less worthy
member j is favoured: p_j > p_i + tol, where p_i = pi(a* | x_i) (or 1[a_i = a*]). Equal
worths never violate.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from typing import Any

import numpy as np

from fairdecide._common.validation import as_float_array, as_int, as_real, check_distribution
from fairdecide.exceptions import FairdecideError

__all__ = ["MeritocracyResult", "meritocracy"]


@dataclass(frozen=True, eq=False)
class MeritocracyResult:
    """Whether decisions respect the order of worth, and the pairs where they do not.

    Attributes
    ----------
    meritocratic : bool
        No violating pair.
    n_violations : int
        Exact number of pairs (i, j) with v_i > v_j and p_j > p_i + tol.
    n_comparable : int
        Number of pairs with different worths.
    pairs : ndarray of shape (m, 2)
        Up to ``max_pairs`` violating pairs (i, j), i the worthier and j the favoured one,
        worst first: by the gap p_j - p_i, then by the worth difference v_i - v_j.
    worths : ndarray of shape (m, 2)
        (v_i, v_j) of each listed pair.
    gaps : ndarray of shape (m,)
        p_j - p_i (1 for selections).
    action : int
        The favourable action a*.
    stochastic : bool
        Whether rows of a stochastic policy (rather than decisions) were checked.
    tol : float
    """

    meritocratic: bool
    n_violations: int
    n_comparable: int
    pairs: np.ndarray
    worths: np.ndarray
    gaps: np.ndarray
    action: int
    stochastic: bool
    tol: float

    @property
    def worth_gaps(self) -> np.ndarray:
        """v_i - v_j of each listed pair."""
        return self.worths[:, 0] - self.worths[:, 1]

    def summary(self, top: int = 5) -> str:
        """A readable report, with the ``top`` worst pairs."""
        what = "policy (in expectation)" if self.stochastic else "decisions"
        share = self.n_violations / self.n_comparable if self.n_comparable else 0.0
        lines = [
            f"meritocracy of {what}, favourable action {self.action}",
            f"  meritocratic  : {'yes' if self.meritocratic else 'no'}",
            f"  violations    : {self.n_violations} of {self.n_comparable} pairs with "
            f"different worths ({share:.2%})",
        ]
        for (i, j), (vi, vj), g in list(zip(self.pairs, self.worths, self.gaps,
                                            strict=True))[:top]:
            lines.append(f"  {j:>6} (worth {vj:.4g}) favoured over {i} (worth {vi:.4g}) "
                         f"by {g:.4g}")
        if self.n_violations > min(top, len(self.pairs)):
            lines.append(f"  ... {self.n_violations - min(top, len(self.pairs))} more")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return (f"MeritocracyResult(meritocratic={self.meritocratic}, n_violations="
                f"{self.n_violations}, n_comparable={self.n_comparable})")


def _favoured(value: Any, action: Any) -> tuple[np.ndarray, int, bool]:
    """p_i = pi(action | x_i) from rows, or 1[a_i = action] from action codes."""
    try:
        arr = np.asarray(value)
    except ValueError as exc:  # ragged nested lists
        raise FairdecideError(f"decisions_or_rows could not be read as an array: {exc}") from None
    if arr.ndim == 2:
        name = "decisions_or_rows (policy rows)"
        P = check_distribution(as_float_array(arr, name, ndim=2), name, axes=(1,))
        k = P.shape[1]
    elif arr.ndim == 1:
        if arr.dtype == bool:
            arr = arr.astype(np.intp)
        if arr.dtype.kind not in "iuf" or (arr.dtype.kind == "f" and not np.all(
                np.isfinite(arr) & (arr == np.round(arr)))):
            raise FairdecideError(
                f"decisions_or_rows (1-d) must hold integer action codes, got {arr.dtype} "
                "values (NaN, infinite or fractional ones included?); for probabilities "
                "pass the (n, n_actions) rows of the policy")
        codes = arr.astype(np.intp)
        if codes.size and codes.min() < 0:
            raise FairdecideError(f"decisions_or_rows has a negative action code "
                                  f"{codes.min()}")
        k, name = max(2, int(codes.max()) + 1 if codes.size else 2), "decisions_or_rows"
    else:
        raise FairdecideError("decisions_or_rows must be 1-d action codes or (n, n_actions) "
                              f"rows of a policy, got shape {arr.shape}")
    if isinstance(action, bool | np.bool_) or not isinstance(action, int | np.integer):
        raise FairdecideError(f"action must be an integer action code, got {action!r}")
    a = int(action)
    if not 0 <= a < k:
        raise FairdecideError(f"action {a} is not an action of {name}, whose actions are "
                              f"0..{k - 1}")
    if arr.ndim == 2:
        return P[:, a], a, True
    return (codes == a).astype(float), a, False


def _levels(r: np.ndarray, u: np.ndarray, M: int):
    """Every pair s < t with r_s >= u_t, grouped as in a merge sort: at the level of
    blocks of width 2b, each t in the right half of a block meets the left half, sorted
    by (r, position descending); the pairs of t are the slice [lo_t, hi_t) of that order.

    Yields (sorted left positions, right positions t, lo, hi) for b = 1, 2, 4, ...
    """
    n = len(r)
    pos = np.arange(n)
    b = 1
    while b < n:
        w = 2 * b
        blk, off = pos // w, pos % w
        left = off < b
        key = (blk[left] * M + r[left]) * w + (w - 1 - off[left])
        order = np.argsort(key, kind="stable")
        skey, spos = key[order], pos[left][order]
        t, bt = pos[~left], blk[~left]
        lo = np.searchsorted(skey, (bt * M + u[t]) * w)
        yield spos, t, lo, (bt + 1) * b  # a right half's block has a full left half
        b = w


def _best(gap: np.ndarray, wgap: np.ndarray, k: int) -> np.ndarray:
    """Indices of the k largest (gap, wgap) in lexicographic order, largest first: O(m)
    selection by gap, then by wgap among the ties at the k-th gap, then a sort of k."""
    keep = np.arange(len(gap))
    if len(gap) > k:
        g = np.partition(gap, len(gap) - k)[len(gap) - k]  # the k-th largest gap
        above, tie = np.flatnonzero(gap > g), np.flatnonzero(gap == g)
        need = k - len(above)
        if need < len(tie):
            tie = tie[np.argpartition(-wgap[tie], need - 1)[:need]]
        keep = np.r_[above, tie]
    return keep[np.lexsort((-wgap[keep], -gap[keep]))]


def _worst(heads: list, runs: list, ps: np.ndarray, vs: np.ndarray, k: int) -> np.ndarray:
    """The k worst pairs, as (t, s) positions in worth order, by a heap over the cursors
    (t, a slice [lo, hi) of a level's sorted run, read downwards) whose head is among the
    k worst heads. Along a cursor the gap, then the worth gap, never increase, so a pair
    of another cursor is never worse than the k-th one listed."""
    if not heads:
        return np.zeros((0, 2), dtype=np.intp)
    lev, t, lo, at = (np.concatenate(x) for x in zip(*heads, strict=True))

    def entry(level: int, tt: int, low: int, i: int) -> tuple:
        s = runs[level][i]
        return (-(ps[s] - ps[tt]), -(vs[tt] - vs[s]), level, tt, low, i)

    s = np.array([runs[m][i] for m, i in zip(lev, at, strict=True)], dtype=np.intp)
    best = _best(ps[s] - ps[t], vs[t] - vs[s], k)
    heap = [entry(int(lev[m]), int(t[m]), int(lo[m]), int(at[m])) for m in best]
    heapq.heapify(heap)
    out = []
    while heap and len(out) < k:
        _, _, level, tt, low, i = heapq.heappop(heap)
        out.append((tt, runs[level][i]))
        if i > low:
            heapq.heappush(heap, entry(level, tt, low, i - 1))
    return np.array(out, dtype=np.intp).reshape(-1, 2)


def meritocracy(decisions_or_rows: Any, worths: Any, *, action: int = 1, tol: float = 1e-9,
                max_pairs: int = 10_000) -> MeritocracyResult:
    """Check that no one is favoured over someone worthier.

    A pair (i, j) violates meritocracy when v_i > v_j and p_j > p_i + tol, with
    p_i = 1[a_i = a*] for decisions (definition 3.3.1: the worthier i is passed over for
    the selected j) and p_i = pi(a* | x_i) for a policy's rows (3.3.2, in expectation).

    Parameters
    ----------
    decisions_or_rows : array-like of shape (n,) or (n, n_actions)
        Action codes (or booleans: selected), or rows of a stochastic policy.
    worths : array-like of shape (n,)
        v_i, finite.
    action : int, default=1
        The favourable action a*.
    tol : float in [0, 1), default=1e-9
        Probability differences up to tol are not violations.
    max_pairs : int >= 0, default=10_000
        How many violating pairs to list (worst first); the count is always exact.

    Returns
    -------
    MeritocracyResult

    Notes
    -----
    Sorting by (v, p) puts the less worthy member of every pair first and makes equal
    worths harmless (within a tie p ascends, so p_s > p_t + tol never holds for s < t).
    The violations are then the pairs s < t with p_s > p_t + tol, inversions with a
    threshold, counted level by level as in a merge sort (each pair meets at the level of
    the highest bit where s and t differ): O(n log^2 n) time in numpy. The worst pairs are
    listed by merging the per-level sorted runs in a heap, O(k log k) more for
    k = ``max_pairs`` (and O(n log n) memory); ties in both gaps are listed by (i, j).

    Examples
    --------
    Person 1 is selected over the worthier person 2; 3 over 2 is no violation (a tie):

    >>> worth = [3.0, 1.0, 2.0, 2.0]
    >>> res = meritocracy([1, 1, 0, 1], worth)
    >>> res.meritocratic, res.n_violations, res.pairs.tolist(), res.worths.tolist()
    (False, 1, [[2, 1]], [[2.0, 1.0]])
    >>> meritocracy([[0.2, 0.8], [0.9, 0.1], [0.5, 0.5], [0.5, 0.5]], worth).n_violations
    0
    """
    p, a, stochastic = _favoured(decisions_or_rows, action)
    v = as_float_array(worths, "worths", ndim=1)
    if len(v) != len(p):
        raise FairdecideError(f"decisions_or_rows has {len(p)} individuals but worths has "
                              f"{len(v)}: give one worth per individual")
    tol = as_real(tol, "tol", low=0.0, high=1.0, high_open=True)
    k = as_int(max_pairs, "max_pairs", minimum=0)
    n = len(p)
    if n == 0:
        raise FairdecideError("decisions_or_rows and worths are empty: give at least one "
                              "individual")
    order = np.lexsort((p, v))
    ps, vs = p[order], v[order]
    uniq = np.unique(ps)
    r = np.searchsorted(uniq, ps)
    u = np.searchsorted(uniq, ps + tol, side="right")
    _, ties = np.unique(vs, return_counts=True)
    comparable = n * (n - 1) // 2 - int((ties * (ties - 1) // 2).sum())
    count, runs, heads = 0, [], []
    for level, (spos, t, lo, hi) in enumerate(_levels(r, u, len(uniq) + 1)):
        count += int((hi - lo).sum())
        has = hi > lo
        if not (k and has.any()):
            runs.append(None)
            continue
        runs.append(spos)
        t, lo, hi = t[has], lo[has], hi[has]
        s = spos[hi - 1]  # each cursor's head: its worst pair
        best = _best(ps[s] - ps[t], vs[t] - vs[s], k)
        heads.append((np.full(len(best), level), t[best], lo[best], hi[best] - 1))
    listed = _worst(heads, runs, ps, vs, k)
    i, j = order[listed[:, 0]], order[listed[:, 1]]
    tidy = np.lexsort((j, i, v[j] - v[i], p[i] - p[j]))  # the heap's order, ties by (i, j)
    i, j = i[tidy], j[tidy]
    return MeritocracyResult(
        meritocratic=count == 0, n_violations=count, n_comparable=comparable,
        pairs=np.stack([i, j], axis=1), worths=np.stack([v[i], v[j]], axis=1),
        gaps=p[j] - p[i], action=a, stochastic=stochastic, tol=tol)
