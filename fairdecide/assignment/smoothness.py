"""Smoothness of a ranking: candidates of similar merit get similar rows.

The book's "fairness as smoothness" (Dwork et al. 2012) for rankings: two candidates
whose merits (or features) are close should face nearly the same distribution over
positions, whichever side of a cut-off they fall on.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from fairdecide._common.validation import as_float_array, as_real, check_instance
from fairdecide.assignment._criterion import RankingCriterion, Rows
from fairdecide.assignment._setup import RankingSetup
from fairdecide.exceptions import FairdecideError

__all__ = ["RankingLipschitz"]

#: Most auxiliary variables (pairs x columns) the pair rows may add to the program.
MAX_PAIR_COLUMNS = 2_000_000


@dataclass(frozen=True)
class RankingLipschitz(RankingCriterion):
    """Near-identical candidates get near-identical rows: D_TV(P_i, P_i') <= L d(i, i').

    Rows are read as distributions over the k positions and "not placed" (mass
    1 - sum_j P_ij, zero when k = n). The deviation is the largest violation::

        F = max(0, max_{(i, i')} [D_TV(P_i, P_i') - L d(i, i')])

    over the given pairs, or over every pair that can bind (L |u_i - u_i'| < 1, since
    D_TV <= 1) with d the merit distance |u_i - u_i'|, within ``max_distance`` if given.
    Its rows need the whole matrix, so a program with it is solved over P (practical to a
    few hundred candidates).

    Parameters
    ----------
    constant : float > 0, default=1.0
        L.
    pairs : array-like of shape (m, 2), optional
        Pairs of candidate indices (default: see above).
    distances : array-like of shape (m,), optional
        d of each pair (default: the merit distance).
    max_distance : float > 0, optional
        Without ``pairs``: only pairs whose merits differ by at most this.
    name : str, optional
        Label in results (default "ranking lipschitz").

    Examples
    --------
    >>> import numpy as np
    >>> from fairdecide.assignment import RankingLipschitz
    >>> P = np.eye(2)            # merits 1.0 and 0.9: TV 1 at distance 0.1
    >>> RankingLipschitz(constant=2.0).deviation(P, [1.0, 0.9], ["a", "b"])
    0.8
    """

    constant: float = 1.0
    pairs: Any = None
    distances: Any = None
    max_distance: float | None = None
    name: str | None = None
    space = "matrix"
    default_name = "ranking lipschitz"

    def __post_init__(self) -> None:
        object.__setattr__(self, "constant",
                           as_real(self.constant, "constant", low=0.0, low_open=True))
        if self.pairs is not None:
            p = np.asarray(self.pairs)
            if p.ndim != 2 or p.shape[1] != 2 or p.dtype.kind not in "iu":
                raise FairdecideError("pairs must be an (m, 2) integer array of candidate "
                                      f"indices, got shape {p.shape} dtype {p.dtype}")
            object.__setattr__(self, "pairs", tuple(map(tuple, p.tolist())))
        if self.distances is not None:
            if self.pairs is None:
                raise FairdecideError("distances need pairs: give one distance per pair")
            d = as_float_array(self.distances, "distances", ndim=1)
            if len(d) != len(self.pairs) or np.any(d < 0):
                raise FairdecideError("distances must hold one non-negative distance per "
                                      f"pair ({len(self.pairs)})")
            object.__setattr__(self, "distances", tuple(d.tolist()))
        if self.max_distance is not None:
            object.__setattr__(self, "max_distance", as_real(
                self.max_distance, "max_distance", low=0.0, low_open=True))
        if self.name is not None:
            check_instance(self.name, "name", str, "a string (the label in results) or None")

    def pair_arrays(self, setup: RankingSetup) -> tuple[np.ndarray, np.ndarray]:
        """(pairs (m, 2), distances (m,)) on these candidates."""
        u = setup.merits
        if self.pairs is not None:
            p = np.asarray(self.pairs, dtype=np.intp).reshape(-1, 2)
            if len(p) and (p.min() < 0 or p.max() >= setup.n):
                raise FairdecideError(f"pairs has a candidate index outside 0..{setup.n - 1}")
            d = (np.abs(u[p[:, 0]] - u[p[:, 1]]) if self.distances is None
                 else np.asarray(self.distances))
            return p, d
        order = np.argsort(u, kind="stable")
        us = u[order]
        ends = np.searchsorted(us, us + 1.0 / self.constant, side="left")  # L d < 1
        if self.max_distance is not None:
            ends = np.minimum(ends, np.searchsorted(us, us + self.max_distance, "right"))
        counts = np.maximum(ends - np.arange(setup.n) - 1, 0)
        a = np.repeat(np.arange(setup.n), counts)
        b = a + 1 + np.arange(len(a)) - np.repeat(np.cumsum(counts) - counts, counts)
        p = np.stack([order[a], order[b]], axis=1)
        return p, np.abs(u[p[:, 0]] - u[p[:, 1]])

    def _deviation(self, P: np.ndarray, setup: RankingSetup) -> float:
        p, d = self.pair_arrays(setup)
        if not len(p):
            return 0.0
        rest = 1.0 - P.sum(axis=1)
        tv = 0.5 * (np.abs(P[p[:, 0]] - P[p[:, 1]]).sum(axis=1)
                    + np.abs(rest[p[:, 0]] - rest[p[:, 1]]))
        return float(max(0.0, np.max(tv - self.constant * d)))

    def rows(self, setup: RankingSetup) -> Rows:
        """e_pj >= |P_ij - P_i'j| (and the "not placed" mass when k < n), sum_j e_pj <=
        2 (L d + epsilon); aux e, one per pair and column."""
        p, d = self.pair_arrays(setup)
        n, k, m = setup.n, setup.k, len(p)
        kk = k + (k < setup.n)
        if m * kk > MAX_PAIR_COLUMNS:
            raise FairdecideError(
                f"RankingLipschitz would write {m} pairs x {kk} columns = {m * kk} auxiliary "
                f"variables (at most {MAX_PAIR_COLUMNS}): give fewer pairs (pairs=, a "
                "smaller max_distance or a larger constant) or fewer candidates")
        N = n * k
        r = np.arange(m * k)
        pi, pj = np.repeat(p[:, 0], k), np.repeat(p[:, 1], k)
        col = np.tile(np.arange(k), m)
        aux = N + np.arange(m)[:, None] * kk + np.arange(k)[None, :]
        D = sp.csr_matrix((np.r_[np.ones(m * k), -np.ones(m * k)],
                           (np.r_[r, r], np.r_[pi * k + col, pj * k + col])),
                          shape=(m * k, N + m * kk))
        E = sp.csr_matrix((-np.ones(m * k), (r, aux.ravel())), shape=(m * k, N + m * kk))
        blocks = [D + E, -D + E]
        if kk > k:  # the "not placed" mass: |r_i' - r_i| with r_i = sum_j P_ij
            rr = np.repeat(np.arange(m), k)
            R = sp.csr_matrix((np.r_[-np.ones(m * k), np.ones(m * k)],
                               (np.r_[rr, rr], np.r_[pi * k + col, pj * k + col])),
                              shape=(m, N + m * kk))
            Er = sp.csr_matrix((-np.ones(m), (np.arange(m), N + np.arange(m) * kk + k)),
                               shape=(m, N + m * kk))
            blocks += [R + Er, -R + Er]
        S = sp.csr_matrix((np.ones(m * kk), (np.repeat(np.arange(m), kk),
                                             N + np.arange(m * kk))), shape=(m, N + m * kk))
        A = sp.vstack([*blocks, S]).tocsr()
        zeros = np.zeros(A.shape[0] - m)
        return Rows(A, np.r_[zeros, 2 * self.constant * d],
                    np.r_[zeros, np.full(m, 2.0)], n_aux=m * kk)
