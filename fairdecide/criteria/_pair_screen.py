"""The screen of the Lipschitz pair search (:mod:`fairdecide.criteria._pairs`): upper
bounds of every violation in a block of pairs, in single precision with the rounding
they allow for stated, and the block entries a search recomputes exactly (the pairs
above the threshold, or each row's and column's few largest)."""

from __future__ import annotations

import numpy as np

__all__ = ["Screen", "as_is", "screened_top", "top_per_unit", "tv_block"]


def tv_block(Pa: np.ndarray, Pb: np.ndarray) -> np.ndarray:
    """D_TV between every row of Pa and every row of Pb: half the L1 distance."""
    out = np.subtract(Pa[:, 0, None], Pb[None, :, 0])
    np.abs(out, out=out)
    step = np.empty_like(out)
    for a in range(1, Pa.shape[1]):
        np.subtract(Pa[:, a, None], Pb[None, :, a], out=step)
        out += np.abs(step, out=step)
    out *= 0.5
    return out


def as_is(c: float) -> float:
    """An exact block's bounds are compared with c itself."""
    return c


class Screen:
    """Upper bounds of every violation in a block, in single precision: the screen of
    the built-in metrics (see the module), half the memory traffic of double precision
    and its matrix product twice as fast; every candidate is recomputed in double.

    With u = 2^-24, features centred then rounded (x^ = fl(x - mean)) and D_TV over rows
    rounded to single: the product form s = |x^|^2 + |y^|^2 - 2 x^.y^ is within
    (d + 6) u (|x^|^2 + |y^|^2) of |x^ - y^|^2 (Higham: |fl(a.b) - a.b| <= gamma_d |a||b|),
    rounding moved each point by at most u |x| (so d(x, y) >= |x^ - y^| - u (|x| + |y|)),
    and D_TV is within 3 n_a u of the double one (with two actions it is read as
    |p_1 - q_1|, within 3 u of the double half-sum when the rows sum to 1 within
    1e-12). ``block`` returns
    tv - L (sqrt(max(s - err, 0)) (1 - 8 u) - 1.05 u (|x| + |y|)) with those allowances
    inflated, each float operation's rounding included; its last subtraction rounds
    relative to its result, which :meth:`lower` allows for on the value compared with.
    """

    U = float(np.finfo(np.float32).eps) / 2

    def __init__(self, T: np.ndarray, P: np.ndarray, L: float) -> None:
        C = T - T.mean(axis=0)
        self.T = C.astype(np.float32)
        norms = np.sqrt(np.einsum("ij,ij->i", C, C))
        self.sq = (norms ** 2).astype(np.float32)
        self.nrm = norms.astype(np.float32)
        self.P = P.astype(np.float32)
        u = self.U
        self.err = np.float32(1.01 * (T.shape[1] + 10) * u)
        self.slope = np.float32(L * (1 - 8 * u))
        self.shift = np.float32(1.05 * L * u)
        self.tv_err = 3 * P.shape[1] * u
        # two actions whose rows sum to 1 (to far below u): D_TV is |p_1 - q_1|
        self.two = P.shape[1] == 2 and float(np.abs(P.sum(axis=1) - 1).max()) <= 1e-12

    def block(self, a: slice, b: slice) -> np.ndarray:
        v = self.T[a] @ self.T[b].T
        v *= -2.0
        both = self.sq[a, None] + self.sq[None, b]
        v += both
        both *= self.err
        v -= both
        np.maximum(v, 0.0, out=v)
        np.sqrt(v, out=v)
        v *= self.slope
        np.add(self.nrm[a, None], self.nrm[None, b], out=both)
        both *= self.shift
        v -= both                      # <= L d(x, y)
        if self.two:  # D_TV = |p_1 - q_1|: one pass instead of five
            tv = np.subtract(self.P[a, 1, None], self.P[None, b, 1])
            return np.subtract(np.abs(tv, out=tv), v, out=v)
        return np.subtract(tv_block(self.P[a], self.P[b]), v, out=v)

    def lower(self, c: float) -> float:
        """What a block's bound is compared with for "the exact violation may exceed c":
        c less the D_TV allowance and the last subtraction's rounding (relative to a
        result near c, or larger than 2 (1 + |c|) and then above c anyway)."""
        return c - self.tv_err - 2 * self.U * (1 + abs(c)) if np.isfinite(c) else c


def screened_top(v: np.ndarray, threshold: float, cut: float, m: int
                  ) -> tuple[np.ndarray, np.ndarray, bool]:
    """Block entries to recompute exactly: each row's and each column's ``m`` largest
    screened bounds above the threshold, and every entry that could beat ``cut`` (the
    largest exact violation known). Read from the entries above the lower of the two
    (one pass over the block; they are a few hundred of its million entries once the
    policy is nearly Lipschitz)."""
    n_cols = v.shape[1]
    flat = np.flatnonzero(v > min(threshold, cut))
    ii, jj = np.divmod(flat, n_cols)
    vals = v.ravel()[flat]
    above = vals > threshold
    r, c, va = ii[above], jj[above], vals[above]
    crowded_r = np.bincount(r, minlength=v.shape[0]) > m
    crowded_c = np.bincount(c, minlength=n_cols) > m
    dropped = bool(crowded_r.any() or crowded_c.any())
    # a row (column) with at most m entries above the threshold keeps them all, so
    # every entry above it is kept unless both its row and its column are crowded;
    # crowded rows and columns keep their m largest
    keep = ~(crowded_r[r] & crowded_c[c])
    for line, crowded in ((r, crowded_r), (c, crowded_c)):
        sub = np.flatnonzero(crowded[line])
        if len(sub):
            keep[sub[_largest_per_line(line[sub], va[sub], m)]] = True
    pick = vals > cut
    pick[np.flatnonzero(above)[keep]] = True
    return ii[pick], jj[pick], dropped


def _largest_per_line(line: np.ndarray, vals: np.ndarray, m: int) -> np.ndarray:
    """Which entries are among the ``m`` largest ``vals`` of their ``line`` (block rows or
    columns, < 2^15 of them): the entries grouped by a radix sort of the line, then m
    rounds of each group's maximum (a tie keeps every entry at it: a few more
    candidates, never fewer)."""
    order = np.argsort(line.astype(np.int16) if line.max() < 2**15 else line, kind="stable")
    ls, vs = line[order], vals[order].astype(float)
    starts = np.flatnonzero(np.r_[True, ls[1:] != ls[:-1]])
    sizes = np.diff(np.r_[starts, len(vs)])
    keep = np.zeros(len(vs), dtype=bool)
    for _ in range(m):
        top = np.repeat(np.maximum.reduceat(vs, starts), sizes)
        hit = (vs == top) & (vs > -np.inf)
        keep |= hit
        vs[hit] = -np.inf
    out = np.zeros(len(vs), dtype=bool)
    out[order] = keep
    return out


def top_per_unit(pairs: np.ndarray, viol: np.ndarray, m: int) -> np.ndarray:
    """Indices of the pairs among the ``m`` most violated of either of their ends."""
    rank_of = np.argsort(-viol, kind="stable")
    ends = np.concatenate([pairs[rank_of, 0], pairs[rank_of, 1]])
    which = np.concatenate([rank_of, rank_of])
    place = np.tile(np.arange(len(viol)), 2)
    order = np.lexsort((place, ends))  # by end, most violated first within an end
    e = ends[order]
    first = np.r_[0, np.flatnonzero(np.diff(e)) + 1]
    rank = np.arange(len(e)) - np.repeat(first, np.diff(np.r_[first, len(e)]))
    return np.unique(which[order][rank < m])
