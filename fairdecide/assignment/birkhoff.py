"""Birkhoff-von Neumann: a doubly-stochastic matrix as a lottery over assignments.

A randomised ranking or matching is a matrix P of marginal probabilities, P[i, j] the
probability that person i receives place j. To act on it, one draws a single assignment
whose marginals are P. Birkhoff's theorem (1946) says every doubly-stochastic matrix (rows
and columns summing to one) is a convex combination of permutation matrices,

    P = sum_r w_r Pi_r,   w_r > 0,   sum_r w_r = 1,

and the constructive proof finds one: while P has mass left, a perfect matching exists on
its support (Hall's condition holds for a scaled doubly-stochastic matrix); take it, with
weight the smallest entry it uses, subtract, and repeat. Each step zeroes at least one
entry, so at most nnz(P) permutations are needed. Drawing permutation r with probability
w_r then gives person i place j with probability exactly P[i, j].

A rectangular or doubly-substochastic P (n people, m places, rows and columns summing to
at most one: top-k selection, places left empty) is first completed to a square
doubly-stochastic matrix of size n + m whose top-left block is P
(:func:`complete_doubly_stochastic`); the decomposition of the completion, read on its
first n rows and m columns, is a lottery over partial assignments with marginals P.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import sparse
from scipy.sparse.csgraph import maximum_bipartite_matching

from fairdecide._common.validation import as_float_array, as_int, as_real, check_random_state
from fairdecide.exceptions import FairdecideError

__all__ = ["BirkhoffDecomposition", "birkhoff_decomposition", "complete_doubly_stochastic"]

#: Row and column sums may miss one by this much per entry of the row (solver round-off).
SUM_TOL = 1e-7
#: A decomposition that misses P by more than this in some entry is an error.
RESIDUAL_TOL = 1e-6


@dataclass(frozen=True, eq=False)
class BirkhoffDecomposition:
    """A lottery over permutations: P = sum_r weights[r] Pi_r.

    Attributes
    ----------
    weights : ndarray of shape (m,)
        Positive, summing to one.
    permutations : ndarray of int, shape (m, n)
        ``permutations[r, i]`` is the column row i is assigned to in permutation r.
    residual : float
        The largest entry of |P - sum_r weights[r] Pi_r| (round-off only).
    """

    weights: np.ndarray
    permutations: np.ndarray
    residual: float

    @property
    def n(self) -> int:
        """Rows (and columns) of the decomposed matrix."""
        return int(self.permutations.shape[1])

    def matrix(self) -> np.ndarray:
        """sum_r weights[r] Pi_r, the matrix the lottery reproduces, shape (n, n)."""
        out = np.zeros((self.n, self.n))
        rows = np.broadcast_to(np.arange(self.n), self.permutations.shape)
        np.add.at(out, (rows, self.permutations),
                  np.broadcast_to(self.weights[:, None], self.permutations.shape))
        return out

    def sample(self, size: int = 1, random_state: Any = None) -> np.ndarray:
        """Draw ``size`` permutations, permutation r with probability weights[r].

        Returns
        -------
        ndarray of int, shape (size, n)
            Row s is one assignment: ``out[s, i]`` is row i's column.
        """
        size = as_int(size, "size", minimum=1)
        rng = check_random_state(random_state)
        return self.permutations[rng.choice(len(self.weights), size=size, p=self.weights)]

    def summary(self) -> str:
        """How many permutations, their largest weight and the round-off left."""
        return (f"Birkhoff-von Neumann decomposition of a {self.n} x {self.n} matrix: "
                f"{len(self.weights)} permutations, largest weight "
                f"{self.weights.max():.4g}, residual {self.residual:.2e}")

    def __repr__(self) -> str:
        return (f"BirkhoffDecomposition(n={self.n}, n_permutations={len(self.weights)}, "
                f"residual={self.residual:.2e})")


def _check_sums(P: np.ndarray, name: str, exact: bool) -> None:
    """Rows and columns sum to one (``exact``) or to at most one, within SUM_TOL per
    entry of the row or column."""
    if np.any(P < -SUM_TOL):
        i, j = np.argwhere(P < -SUM_TOL)[0]
        raise FairdecideError(f"{name} has a negative entry {P[i, j]:.3g} at ({i}, {j}): "
                              "give probabilities")
    for axis, what in ((1, "row"), (0, "column")):
        sums = P.sum(axis=axis)
        tol = SUM_TOL * max(1, P.shape[axis])
        bad = np.abs(sums - 1) > tol if exact else sums > 1 + tol
        if np.any(bad):
            k = int(np.argmax(bad))
            need = "sum to one" if exact else "sum to at most one"
            raise FairdecideError(
                f"{name}'s {what}s must {need}; {what} {k} sums to {sums[k]:.10g}")


def complete_doubly_stochastic(P: Any) -> np.ndarray:
    """A square doubly-stochastic matrix whose top-left block is P.

    For an n x m matrix P >= 0 with row sums r_i <= 1 and column sums c_j <= 1,

        Q = [[P,            diag(1 - r)],
             [diag(1 - c),  P^T        ]]

    of size (n + m) x (m + n) has every row and column summing to one: row i of the top
    has r_i + (1 - r_i), column j of the left has c_j + (1 - c_j), and the bottom rows
    and right columns are the same sums transposed.

    Parameters
    ----------
    P : array-like of shape (n, m)
        Nonnegative, rows and columns summing to at most one (within 1e-7 per entry).

    Returns
    -------
    ndarray of shape (n + m, n + m)

    Examples
    --------
    Two people, one place, each with probability one half:

    >>> from fairdecide.assignment import complete_doubly_stochastic
    >>> complete_doubly_stochastic([[0.5], [0.5]]).tolist()
    [[0.5, 0.5, 0.0], [0.5, 0.0, 0.5], [0.0, 0.5, 0.5]]
    """
    P = as_float_array(P, "P", ndim=2)
    if P.size == 0:
        raise FairdecideError(f"P must have at least one row and one column, got shape "
                              f"{P.shape}")
    _check_sums(P, "P", exact=False)
    P = np.clip(P, 0.0, None)
    n, m = P.shape
    r, c = P.sum(axis=1), P.sum(axis=0)
    out = np.zeros((n + m, m + n))
    out[:n, :m] = P
    out[:n, m:] = np.diag(np.clip(1 - r, 0.0, None))
    out[n:, :m] = np.diag(np.clip(1 - c, 0.0, None))
    out[n:, m:] = P.T
    return out


def _perfect(keys: np.ndarray, n: int) -> np.ndarray | None:
    """A perfect matching (row i -> column) on the entries ``keys`` (i * n + j), by
    Hopcroft-Karp, or None."""
    support = sparse.csr_matrix(
        (np.ones(len(keys)), keys % n, np.r_[0, np.cumsum(np.bincount(keys // n,
                                                                   minlength=n))]),
        shape=(n, n))
    perm = maximum_bipartite_matching(support, perm_type="column")
    return None if np.any(perm < 0) else perm.astype(np.intp)


def _bottleneck_matching(keys: np.ndarray, vals: np.ndarray, n: int) -> np.ndarray | None:
    """A perfect matching on the support whose smallest entry is largest: a binary search
    over the entries' values for the largest threshold t at which {vals >= t} still has
    a perfect matching (log2(nnz) Hopcroft-Karp runs, integer work only). Taking big
    shares first, a mixture of a few permutations comes back as about those few."""
    levels = np.unique(vals)  # ascending
    best = _perfect(keys, n)
    if best is None:
        return None
    lo, hi = 0, len(levels) - 1  # levels[lo] is feasible (the whole support)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        found = _perfect(keys[vals >= levels[mid]], n)
        if found is None:
            hi = mid - 1
        else:
            lo, best = mid, found
    return best


def birkhoff_decomposition(P: Any, *, tol: float = 1e-9) -> BirkhoffDecomposition:
    """Write a doubly-stochastic matrix as a lottery over permutations.

    Repeatedly take a perfect matching on the support {(i, j): P[i, j] > tol} of what is
    left, the one whose smallest entry is largest (a bottleneck matching: a binary search
    over the entries' values, each step a Hopcroft-Karp matching by
    :func:`scipy.sparse.csgraph.maximum_bipartite_matching`), give it the weight
    w = min_i P[i, pi(i)], and subtract w Pi; entries at or below ``tol`` are then
    dropped. Each step zeroes an entry, so at most nnz(P) steps (in practice far fewer: a
    mixture of a few permutations comes back as about those few); each costs
    O(log nnz) matchings on the support, so a dense P of large n is slow, a sparse one
    (an LP's vertex) is quick. The weights are finally scaled to sum to one.

    Parameters
    ----------
    P : array-like of shape (n, n)
        Doubly stochastic: nonnegative, every row and column summing to one (within 1e-7
        per entry). For rectangular or substochastic matrices, see
        :func:`complete_doubly_stochastic`.
    tol : float in [0, 1e-3], default=1e-9
        Entries at or below tol count as zero.

    Returns
    -------
    BirkhoffDecomposition

    Examples
    --------
    >>> import numpy as np
    >>> from fairdecide.assignment import birkhoff_decomposition
    >>> P = np.array([[0.5, 0.5, 0.0], [0.25, 0.25, 0.5], [0.25, 0.25, 0.5]])
    >>> dec = birkhoff_decomposition(P)
    >>> bool(np.allclose(dec.matrix(), P)), round(float(dec.weights.sum()), 12)
    (True, 1.0)
    >>> rankings = dec.sample(4, random_state=0)
    >>> rankings.shape, sorted(rankings[0].tolist())
    ((4, 3), [0, 1, 2])
    """
    P = as_float_array(P, "P", ndim=2)
    if P.shape[0] != P.shape[1] or P.size == 0:
        raise FairdecideError(
            f"P must be a non-empty square matrix, got shape {P.shape}; complete a "
            "rectangular or substochastic one with complete_doubly_stochastic")
    tol = as_real(tol, "tol", low=0.0, high=1e-3)
    _check_sums(P, "P", exact=True)
    n = P.shape[0]
    # the entries left, as sorted keys i * n + j with their values (O(nnz) per step)
    keys = np.flatnonzero(P > tol)
    vals = P.reshape(-1)[keys]
    weights, perms = [], []
    rows = np.arange(n)
    while len(keys):
        perm = _bottleneck_matching(keys, vals, n)
        if perm is None:  # no perfect matching on the support
            mass = vals.sum() / n
            if mass <= max(1e3 * tol, SUM_TOL):  # what is left is round-off
                break
            raise FairdecideError(
                f"P has no perfect matching on its support with {mass:.3g} of its mass "
                "left: it is not doubly stochastic within tol; check its row and column "
                "sums (or raise tol)")
        at = np.searchsorted(keys, rows * n + perm)
        w = float(vals[at].min())
        weights.append(w)
        perms.append(perm.astype(np.intp))
        vals[at] -= w
        keep = vals > tol
        keys, vals = keys[keep], vals[keep]
    if not weights:
        raise FairdecideError("P has no entry above tol: nothing to decompose")
    w = np.array(weights)
    dec = BirkhoffDecomposition(weights=w / w.sum(), permutations=np.array(perms),
                                residual=0.0)
    residual = float(np.abs(dec.matrix() - P).max())
    if residual > RESIDUAL_TOL:
        raise FairdecideError(
            f"the decomposition misses P by {residual:.3g} in some entry (more than "
            f"{RESIDUAL_TOL:g}): P is too far from doubly stochastic for tol={tol:g}; "
            "check its row and column sums")
    object.__setattr__(dec, "residual", residual)
    return dec
