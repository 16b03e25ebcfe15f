"""Pairs of individuals for Lipschitz (individual) fairness: metrics and the exact search
for every pair a policy treats more differently than their distance allows.

A policy is L-Lipschitz when D_TV(pi(. | x_i), pi(. | x_j)) <= L d(x_i, x_j) for every
pair (Dwork et al. 2012; the book's "fairness as smoothness"). Its violation on a pair is
v_ij = D_TV(i, j) - L d(i, j), and the certificate of a policy is max_{i<j} v_ij over
all n (n - 1) / 2 pairs (<= 0: the policy is L-Lipschitz on these individuals).

The search is blocked and vectorised. Built-in metrics (euclidean, weighted euclidean,
Mahalanobis) are the euclidean distance of linearly transformed features, so a block of
squared distances is one matrix product ||a||^2 + ||b||^2 - 2 a.b. That form loses
accuracy to cancellation, so it only screens, in single precision (half the memory
traffic; :class:`~fairdecide.criteria._pair_screen.Screen` states the rounding it allows
for): a pair is kept as a candidate when its screened violation exceeds the threshold
minus a bound on that rounding error, and every candidate's D_TV and distance are then
recomputed in double precision directly from the rows and the feature difference. The
certificate is therefore exact to the rounding of the direct difference, never to that
of the product. Since D_TV <= 1, a pair farther apart than 1 / L can never be violated,
which the screen uses too.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from fairdecide._common.validation import as_float_array, as_real
from fairdecide.criteria._pair_screen import Screen, as_is, screened_top, top_per_unit, tv_block
from fairdecide.exceptions import FairdecideError

__all__ = ["PairMetric", "PairSearch", "nearest_pairs", "pair_distances", "pair_keys",
           "violated_pairs"]

METRICS = ("euclidean", "weighted", "mahalanobis")
BLOCK = 1024


@dataclass(frozen=True)
class PairMetric:
    """A distance between individuals: ``"euclidean"``; ``"weighted"`` with non-negative
    ``weights`` w (d = sqrt(sum_k w_k (x_k - y_k)^2)); ``"mahalanobis"`` with a symmetric
    positive semi-definite ``matrix`` M (d = sqrt((x - y)' M (x - y))); or a callable
    ``f(A, B) -> (len(A), len(B))`` distance matrix, checked on a sample of the rows
    (finite, non-negative, symmetric, zero on the diagonal)."""

    kind: str | Callable[[np.ndarray, np.ndarray], Any] = "euclidean"
    weights: Any = None
    matrix: Any = None

    def transform(self, X: np.ndarray) -> np.ndarray | None:
        """Features whose euclidean distance is this metric (None for a callable)."""
        if callable(self.kind):
            return None
        if self.kind not in METRICS:
            raise FairdecideError(
                f"metric must be one of {METRICS} or a callable f(A, B) returning the "
                f"distance matrix, got {self.kind!r}")
        d = X.shape[1]
        if self.kind == "euclidean":
            return X
        param = self.checked()
        if len(param) != d:
            what = "weights must be" if self.kind == "weighted" else "matrix must be"
            raise FairdecideError(
                f"{what} of size {d} (one per feature), got {len(param)}")
        if self.kind == "weighted":
            return X * np.sqrt(param)
        return X @ param

    def checked(self) -> np.ndarray:
        """The metric's parameter, validated: the weights (non-negative), or a factor R
        of the matrix (symmetric positive semi-definite, M = R R'), so that the distance
        is the euclidean one of X R."""
        if self.kind == "weighted":
            w = as_float_array(self.weights, "weights", ndim=1)
            if not len(w) or np.any(w < 0):
                raise FairdecideError(
                    "weights must be non-negative numbers, one per feature")
            return w
        M = as_float_array(self.matrix, "matrix", ndim=2)
        if M.shape[0] != M.shape[1] or not len(M) or not np.allclose(
                M, M.T, atol=1e-10 * max(1.0, abs(M).max())):
            raise FairdecideError(
                f"matrix must be a non-empty symmetric square matrix, got shape {M.shape}")
        vals, vecs = np.linalg.eigh((M + M.T) / 2)
        if vals.min() < -1e-9 * max(1.0, vals.max()):
            raise FairdecideError(
                f"matrix must be positive semi-definite; its smallest eigenvalue is "
                f"{vals.min():.3g}")
        return vecs * np.sqrt(np.clip(vals, 0, None))

    def check_callable(self, X: np.ndarray, sample: int = 64) -> None:
        """Raise unless the callable metric behaves as a distance on a sample of rows."""
        rows = X[: min(sample, len(X))]
        try:
            D = np.asarray(self.kind(rows, rows), dtype=float)
        except Exception as exc:  # the user's function: report what it raised
            raise FairdecideError(
                f"the metric callable raised {type(exc).__name__}: {exc}") from exc
        k = len(rows)
        if D.shape != (k, k):
            raise FairdecideError(
                f"the metric callable must return a ({k}, {k}) distance matrix for {k} rows "
                f"against themselves, got shape {D.shape}")
        if not np.all(np.isfinite(D)) or np.any(D < 0):
            raise FairdecideError("the metric callable returned a negative or non-finite "
                                  "distance")
        scale = max(1.0, float(np.abs(D).max()))
        if not np.allclose(D, D.T, atol=1e-9 * scale, rtol=0):
            raise FairdecideError("the metric callable is not symmetric: d(x, y) != d(y, x)")
        if np.abs(np.diag(D)).max() > 1e-9 * scale:
            raise FairdecideError("the metric callable is not zero on the diagonal: "
                                  "d(x, x) != 0")


@dataclass
class PairSearch:
    """The outcome of a search: the largest violation over all pairs (its pair), the
    pairs whose violation exceeds the threshold, and how many pairs were examined."""

    max_violation: float
    worst_pair: tuple[int, int]
    pairs: np.ndarray          # (k, 2) int, i < j
    violations: np.ndarray     # (k,)
    pairs_checked: int
    truncated: bool = False    # per_unit may have left out pairs above the threshold


def _exact(T: np.ndarray | None, P: np.ndarray, L: float, v: np.ndarray, ii: Any, jj: Any,
           s: int, t: int) -> np.ndarray:
    """Exact violations of block entries (ii, jj): D_TV and the distance recomputed from
    the rows and the feature difference (built-in metrics), or the callable's block
    (already exact)."""
    ii, jj = np.asarray(ii), np.asarray(jj)
    if T is None:
        return v[ii, jj]
    diff = T[ii + s] - T[jj + t]
    tv = 0.5 * np.abs(P[ii + s] - P[jj + t]).sum(axis=1)
    return tv - L * np.sqrt(np.einsum("ij,ij->i", diff, diff))


def violated_pairs(rows: Any, X: Any, constant: float, metric: PairMetric | None = None,
                   threshold: float = 0.0, block: int = BLOCK, per_unit: int | None = None,
                   touching: np.ndarray | None = None) -> PairSearch:
    """Every pair i < j with D_TV(rows_i, rows_j) - constant d(x_i, x_j) > ``threshold``,
    and the exact largest violation over all pairs.

    Parameters
    ----------
    rows : array-like of shape (n, n_actions)
        pi(. | x_i) of each individual (rows on the simplex).
    X : array-like of shape (n, d)
        Features (scaled as the metric should see them).
    constant : float > 0
        L.
    metric : PairMetric, optional
        Default: euclidean.
    threshold : float, default=0
        Pairs above it are returned (constraint generation adds them).
    per_unit : int, optional
        Return only each individual's ``per_unit`` most violated pairs above the
        threshold (a pair is kept when it is among the most violated of either end;
        ``truncated`` is False when none was dropped). The largest violation is exact
        either way. Constraint generation uses it to add a few cuts per person a round
        instead of millions.
    touching : ndarray of bool, shape (n,), optional
        Examine only the pairs with at least one end among these individuals (those
        whose rows changed); the largest violation is then over those pairs.

    Examples
    --------
    >>> import numpy as np
    >>> rows = np.array([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]])
    >>> X = np.array([[0.0], [0.5], [3.0]])
    >>> found = violated_pairs(rows, X, constant=1.0)
    >>> found.pairs.tolist(), found.max_violation   # TV 1 at distance 0.5
    ([[0, 1]], 0.5)
    """
    P = as_float_array(rows, "rows", ndim=2)
    F = as_float_array(X, "X", ndim=(1, 2))
    F = F[:, None] if F.ndim == 1 else F
    n = len(P)
    if len(F) != n:
        raise FairdecideError(f"rows has {n} individuals but X has {len(F)}")
    if n < 2:
        raise FairdecideError("Lipschitz fairness compares pairs: it needs at least 2 "
                              f"individuals, got {n}")
    L = as_real(constant, "constant", low=0.0, low_open=True)
    threshold = as_real(threshold, "threshold")
    metric = PairMetric() if metric is None else metric
    T = metric.transform(F)
    if T is None:
        metric.check_callable(F)
    # the individuals touched come first; pairs (p, q), p < q, with p among them. Each
    # part is in the order of its rows, so that equal rows (a deterministic policy's, or
    # those a Lipschitz constraint holds at one value) fill whole blocks: a pair of
    # blocks whose rows all lie within a small D_TV of each other is not screened
    n_rows = n if touching is None else int(np.count_nonzero(touching))
    parts = ([np.arange(n)] if touching is None
             else [np.flatnonzero(touching), np.flatnonzero(~touching)])
    perm = np.concatenate([part[_row_order(P[part])] for part in parts])
    P, F = P[perm], F[perm]
    T = None if T is None else T[perm]
    screen = None if T is None else Screen(T, P, L)
    lo, hi = _block_ranges(P, block)
    state = {"best": -np.inf, "best_pair": (0, 1), "truncated": False}
    found_i, found_j, found_v = [], [], []

    def visit(s: int, t: int) -> None:
        a = slice(s, min(s + block, n_rows))
        b = slice(t, min(t + block, n))
        if T is None:
            D = np.asarray(metric.kind(F[a], F[b]), dtype=float)
            v = tv_block(P[a], P[b])
            if D.shape != v.shape or not np.all(np.isfinite(D)) or np.any(D < 0):
                raise FairdecideError(
                    "the metric callable returned a matrix of the wrong shape, or a "
                    "negative or non-finite distance")
            v -= L * D  # exact
            lower = as_is
        else:
            v, lower = screen.block(a, b), screen.lower
        if s == t:
            v[np.tril_indices(len(v), 0, len(v[0]))] = -np.inf
        top = np.unravel_index(int(np.argmax(v)), v.shape)
        if not np.isfinite(v[top]):
            return
        # v bounds every exact violation from above (up to ``lower``): a pair can
        # exceed the threshold, or the largest exact violation known (here or in
        # earlier blocks), only if its bound does; the block's top pair is always
        # examined
        cut = max(state["best"], float(_exact(T, P, L, v, [top[0]], [top[1]], s, t)[0]))
        lo_t, lo_c = lower(threshold), lower(cut)
        if v[top] <= lo_t and v[top] <= lo_c:  # no bound above either
            ii = jj = np.zeros(0, dtype=np.int64)
        elif per_unit is None:
            ii, jj = np.nonzero(v > min(lo_t, lo_c))
        else:
            ii, jj, dropped = screened_top(v, lo_t, lo_c, per_unit)
            state["truncated"] |= dropped
        ii, jj = np.r_[ii, top[0]], np.r_[jj, top[1]]
        exact = _exact(T, P, L, v, ii, jj, s, t)
        gi, gj = perm[ii + s], perm[jj + t]
        gi, gj = np.minimum(gi, gj), np.maximum(gi, gj)
        k = int(np.argmax(exact))
        if exact[k] > state["best"]:
            state["best"], state["best_pair"] = float(exact[k]), (int(gi[k]), int(gj[k]))
        keep = exact > threshold
        keep[-1] = False  # the block's top pair, appended once more above
        found_i.append(gi[keep])
        found_j.append(gj[keep])
        found_v.append(exact[keep])

    # a pair of blocks whose D_TV bound is at most the threshold holds no pair above
    # it; it is screened at the end only if it could hold the largest violation
    later = []
    for s in range(0, n_rows, block):
        for t in range(s, n, block):
            bound = _tv_bound(lo, hi, s // block, t // block)
            if bound <= threshold:
                later.append((bound, s, t))
            else:
                visit(s, t)
    for bound, s, t in sorted(later, reverse=True):
        if bound > state["best"]:  # otherwise no pair of it can beat the largest
            visit(s, t)
    best, best_pair, truncated = state["best"], state["best_pair"], state["truncated"]
    pairs = (np.stack([np.concatenate(found_i), np.concatenate(found_j)], axis=1)
             if found_i else np.zeros((0, 2), dtype=int))
    viol = np.concatenate(found_v) if found_v else np.zeros(0)
    if per_unit is not None and len(pairs):
        keep = top_per_unit(pairs, viol, per_unit)
        truncated |= len(keep) < len(pairs)
        pairs, viol = pairs[keep], viol[keep]
    order = np.lexsort((pairs[:, 1], pairs[:, 0])) if len(pairs) else np.zeros(0, int)
    checked = n_rows * (n_rows - 1) // 2 + n_rows * (n - n_rows)
    return PairSearch(best, best_pair, pairs[order].astype(int), viol[order], checked,
                      bool(truncated))


def _row_order(P: np.ndarray) -> np.ndarray:
    """An order of the rows that puts equal rows together (by the last action's
    probability, then the one before, ...)."""
    return np.lexsort(P.T)


def _block_ranges(P: np.ndarray, block: int) -> tuple[np.ndarray, np.ndarray]:
    """Each block's smallest and largest probability of each action, (n_blocks, n_a)."""
    starts = np.arange(0, len(P), block)
    return np.minimum.reduceat(P, starts, axis=0), np.maximum.reduceat(P, starts, axis=0)


def _tv_bound(lo: np.ndarray, hi: np.ndarray, a: int, b: int) -> float:
    """A bound of D_TV(p, q) over p in block a and q in block b, from above in floating
    point too: |p_k - q_k| <= max(hi_a - lo_b, hi_b - lo_a) per action, each difference
    rounded no higher than the bound's (rounding is monotone), and the sum inflated by
    its own rounding; 0 exactly when both blocks hold one and the same row."""
    gap = np.maximum(hi[a] - lo[b], hi[b] - lo[a])
    total = 0.5 * float(np.maximum(gap, 0.0).sum())
    return total * (1 + 4 * len(gap) * np.finfo(float).eps)


def pair_keys(pairs: np.ndarray, n: int) -> np.ndarray:
    """Unordered pairs (k, 2) of indices below ``n`` as int64 keys min * n + max, so that
    (i, j) and (j, i) share one key (``key // n, key % n`` gives the pair back)."""
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    a, b = np.minimum(pairs[:, 0], pairs[:, 1]), np.maximum(pairs[:, 0], pairs[:, 1])
    return a * int(n) + b


def pair_distances(X: np.ndarray, pairs: np.ndarray, metric: PairMetric,
                   transformed: np.ndarray | None = None) -> np.ndarray:
    """d(x_i, x_j) for each pair (i, j), computed directly from the feature difference
    (built-in metrics) or by the callable on small blocks."""
    i, j = pairs[:, 0], pairs[:, 1]
    T = metric.transform(X) if transformed is None else transformed
    if T is not None:
        diff = T[i] - T[j]
        return np.sqrt(np.einsum("ij,ij->i", diff, diff))
    out = np.empty(len(i))
    step = 64
    for s in range(0, len(i), step):
        a, b = i[s: s + step], j[s: s + step]
        D = np.asarray(metric.kind(X[a], X[b]), dtype=float)
        if D.shape != (len(a), len(b)):
            raise FairdecideError(
                "the metric callable returned a matrix of the wrong shape")
        out[s: s + step] = np.diagonal(D)
    if not np.all(np.isfinite(out)) or np.any(out < 0):
        raise FairdecideError("the metric callable returned a negative or non-finite "
                              "distance")
    return out


def nearest_pairs(X: np.ndarray, k: int, metric: PairMetric, max_distance: float = np.inf,
                  block: int = BLOCK) -> np.ndarray:
    """Each individual's ``k`` nearest neighbours as pairs (i < j, distinct), keeping
    only pairs closer than ``max_distance`` (farther pairs can never bind)."""
    n = len(X)
    k = min(k, n - 1)
    T = metric.transform(X)
    if T is not None:
        from sklearn.neighbors import NearestNeighbors

        dist, ind = NearestNeighbors(n_neighbors=k + 1).fit(T).kneighbors(T)
    else:
        dist, ind = np.empty((n, k + 1)), np.empty((n, k + 1), dtype=int)
        for s in range(0, n, block):
            D = np.asarray(metric.kind(X[s: s + block], X), dtype=float)
            idx = np.argpartition(D, k, axis=1)[:, : k + 1]
            ind[s: s + block] = idx
            dist[s: s + block] = np.take_along_axis(D, idx, axis=1)
    i = np.repeat(np.arange(n), ind.shape[1])
    j = ind.reshape(-1)
    ok = (i != j) & (dist.reshape(-1) < max_distance)
    a, b = np.minimum(i[ok], j[ok]), np.maximum(i[ok], j[ok])
    key = np.unique(a.astype(np.int64) * n + b)
    return np.stack([key // n, key % n], axis=1).astype(int)
