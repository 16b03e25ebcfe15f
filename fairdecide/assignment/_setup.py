"""The data of one ranking problem, validated once: merits, group codes, position weights.

Every criterion of :mod:`fairdecide.assignment.exposure` and both programs of
:mod:`fairdecide.assignment._ranking_lp` read this object; the public entry points build
it from user input (:func:`ranking_setup`) and the private code works on clean arrays.

Notation. n candidates with merits u_i and groups g_i; k <= n positions with weights
v_1 >= ... >= v_k >= 0; a ranking policy P (n x k), P_ij = P(candidate i at position j),
rows summing to 1 (k = n) or at most 1 (k < n), columns to 1. The group-position counts
c_gj = sum_{i in g} P_ij and their cumulative sums C_gj = sum_{l <= j} c_gl (the
expected number of group g's members among the first j positions) are what the group
criteria read: with w_j = v_j - v_{j+1} (v_{k+1} = 0), group g's total exposure is
sum_j v_j c_gj = sum_j w_j C_gj (summation by parts).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from fairdecide._common.validation import as_float_array, as_int
from fairdecide.exceptions import FairdecideError
from fairdecide.labels import Labels


def dcg_weights(k: int) -> np.ndarray:
    """v_j = 1 / log2(1 + j), j = 1..k: the discount of DCG."""
    return 1.0 / np.log2(2.0 + np.arange(k))


@dataclass(frozen=True, eq=False)
class RankingSetup:
    """Validated inputs of a ranking program (see the module)."""

    merits: np.ndarray      # (n,)
    codes: np.ndarray       # (n,) group codes 0..G-1
    labels: Labels          # group labels in code order
    positions: np.ndarray   # (k,) v_j, non-increasing, >= 0

    @property
    def n(self) -> int:
        return len(self.merits)

    @property
    def k(self) -> int:
        return len(self.positions)

    @property
    def n_groups(self) -> int:
        return len(self.labels)

    @property
    def sizes(self) -> np.ndarray:
        """n_g, members of each group."""
        return np.bincount(self.codes, minlength=self.n_groups)

    @property
    def steps(self) -> np.ndarray:
        """w_j = v_j - v_{j+1} >= 0 (v_{k+1} = 0): exposure = sum_j w_j C_gj."""
        return self.positions - np.r_[self.positions[1:], 0.0]

    def counts(self, P: np.ndarray) -> np.ndarray:
        """c_gj = sum_{i in g} P_ij, shape (G, k)."""
        out = np.zeros((self.n_groups, P.shape[1]))
        np.add.at(out, self.codes, P)
        return out

    def group_exposure(self, e: np.ndarray) -> np.ndarray:
        """Average exposure of each group's members from the candidates' exposures e."""
        return np.bincount(self.codes, e, self.n_groups) / self.sizes

    def group_merit(self) -> np.ndarray:
        """Average merit of each group's members."""
        return np.bincount(self.codes, self.merits, self.n_groups) / self.sizes

    def utility(self, P: np.ndarray) -> float:
        """sum_ij u_i v_j P_ij."""
        return float(self.merits @ P @ self.positions)

    def tie_classes(self) -> np.ndarray | None:
        """Each candidate's class of interchangeable candidates (the same merit and the
        same group), or None when every candidate is alone in hers."""
        key = np.unique(np.stack([self.codes.astype(float), self.merits], axis=1), axis=0,
                        return_inverse=True)[1].ravel()
        return key if key.max(initial=-1) + 1 < self.n else None

    def tie_average(self, x: np.ndarray) -> np.ndarray:
        """``x`` (one entry or one row per candidate) averaged over each class of
        interchangeable candidates (:meth:`tie_classes`); ``x`` itself when there is
        none."""
        return average_over(self.tie_classes(), x)

    def sorted_utility(self) -> float:
        """The utility of the sort by merit, sum_j v_j u_(j), without its matrix."""
        return float(np.sort(self.merits)[::-1][: self.k] @ self.positions)

    def sorted_matrix(self) -> np.ndarray:
        """The deterministic ranking by merit (ties by index): the unconstrained optimum."""
        order = np.argsort(-self.merits, kind="stable")[: self.k]
        P = np.zeros((self.n, self.k))
        P[order, np.arange(self.k)] = 1.0
        return P


def average_over(classes: np.ndarray | None, x: np.ndarray) -> np.ndarray:
    """``x`` (one entry or one row per candidate) averaged over each class of
    ``classes`` (an integer per candidate); ``x`` itself when ``classes`` is None.

    Examples
    --------
    >>> average_over(np.array([0, 1, 0]), np.array([1.0, 5.0, 3.0])).tolist()
    [2.0, 5.0, 2.0]
    """
    if classes is None:
        return x
    size = np.bincount(classes)
    total = np.zeros((len(size), *x.shape[1:]))
    np.add.at(total, classes, x)
    return (total / size.reshape(-1, *(1,) * (x.ndim - 1)))[classes]


def ranking_setup(merits: Any, group: Any, positions: Any = None, k: Any = None
                  ) -> RankingSetup:
    """Validate the public inputs of a ranking (errors name the argument)."""
    u = as_float_array(merits, "merits", ndim=1)
    n = len(u)
    if n == 0:
        raise FairdecideError("merits is empty: give at least one candidate")
    if group is None:
        raise FairdecideError("group is required: give each candidate's group label (one "
                              "per merit)")
    codes, labels = Labels.factorize(group, "group")
    if len(codes) != n:
        raise FairdecideError(f"merits has {n} candidates but group has {len(codes)}: "
                              "give one group label per candidate")
    if positions is None:
        kk = n if k is None else as_int(k, "k", minimum=1, maximum=n)
        v = dcg_weights(kk)
    else:
        v = as_float_array(positions, "positions", ndim=1)
        if len(v) == 0 or len(v) > n:
            raise FairdecideError(f"positions must hold 1 to n = {n} position weights "
                                  f"(one per position), got {len(v)}")
        if k is not None and as_int(k, "k", minimum=1, maximum=n) != len(v):
            raise FairdecideError(f"k = {k} but positions has {len(v)} weights: give one "
                                  "of them, or both of the same length")
        if np.any(v < 0) or np.any(np.diff(v) > 0):
            raise FairdecideError("positions must be non-negative and non-increasing "
                                  "(v_1 >= v_2 >= ... >= 0): the top position is worth the "
                                  "most")
        if not np.any(v > 0):
            raise FairdecideError("positions are all zero: no position has any exposure")
    return RankingSetup(u, np.asarray(codes, dtype=np.intp), labels, v)
