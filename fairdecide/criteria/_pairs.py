"""Pairs of individuals for Lipschitz (individual) fairness: metrics and the exact search
for every pair a policy treats more differently than their distance allows.

A policy is L-Lipschitz when D_TV(pi(. | x_i), pi(. | x_j)) <= L d(x_i, x_j) for every
pair (Dwork et al. 2012; the book's "fairness as smoothness"). Its violation on a pair is
v_ij = D_TV(i, j) - L d(i, j), and the certificate of a policy is max_{i<j} v_ij over
all n (n - 1) / 2 pairs (<= 0: the policy is L-Lipschitz on these individuals).

The search is blocked and vectorised. Built-in metrics (euclidean, weighted euclidean,
Mahalanobis) are the euclidean distance of linearly transformed features, so a block of
squared distances is one matrix product ||a||^2 + ||b||^2 - 2 a.b. That form loses
accuracy to cancellation, so it only screens: a pair is kept as a candidate when its
violation with the screened distance exceeds the threshold minus a bound on that
rounding error, and every candidate's distance is then recomputed directly from the
feature difference. The certificate is therefore exact to the rounding of the direct
difference, never to that of the product. Since D_TV <= 1, a pair farther apart than 1 / L
can never be violated, which the screen uses too.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from fairdecide._validation import as_float_array, as_real
from fairdecide.exceptions import FairdecideError

__all__ = ["PairMetric", "PairSearch", "violated_pairs"]

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
        if self.kind == "weighted":
            w = as_float_array(self.weights, "weights", ndim=1)
            if w.shape != (d,) or np.any(w < 0):
                raise FairdecideError(
                    f"weights must be {d} non-negative numbers (one per feature), got shape "
                    f"{w.shape}")
            return X * np.sqrt(w)
        M = as_float_array(self.matrix, "matrix", ndim=2)
        if M.shape != (d, d) or not np.allclose(M, M.T, atol=1e-10 * max(1.0, abs(M).max())):
            raise FairdecideError(
                f"matrix must be a symmetric ({d}, {d}) matrix, got shape {M.shape}")
        vals, vecs = np.linalg.eigh((M + M.T) / 2)
        if vals.min() < -1e-9 * max(1.0, vals.max()):
            raise FairdecideError(
                f"matrix must be positive semi-definite; its smallest eigenvalue is "
                f"{vals.min():.3g}")
        return X @ (vecs * np.sqrt(np.clip(vals, 0, None)))

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


def _tv_block(Pa: np.ndarray, Pb: np.ndarray) -> np.ndarray:
    """D_TV between every row of Pa and every row of Pb: half the L1 distance."""
    out = np.zeros((len(Pa), len(Pb)))
    for a in range(Pa.shape[1]):
        out += np.abs(Pa[:, a, None] - Pb[None, :, a])
    return out / 2


def _exact(T: np.ndarray | None, tv: np.ndarray, L: float, v: np.ndarray, ii: Any, jj: Any,
           s: int, t: int) -> np.ndarray:
    """Exact violations of block entries (ii, jj): the distance recomputed from the
    feature difference (built-in metrics), or the callable's own (already exact)."""
    ii, jj = np.asarray(ii), np.asarray(jj)
    if T is None:
        return v[ii, jj]
    diff = T[ii + s] - T[jj + t]
    return tv[ii, jj] - L * np.sqrt(np.einsum("ij,ij->i", diff, diff))


def violated_pairs(rows: Any, X: Any, constant: float, metric: PairMetric | None = None,
                   threshold: float = 0.0, block: int = BLOCK) -> PairSearch:
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
    sq = None if T is None else np.einsum("ij,ij->i", T, T)
    # rounding bound of the screened squared distance (Higham: |fl(a.b) - a.b| <=
    # d u |a| |b|), inflated; distances are recomputed exactly for every candidate
    u = 8.0 * np.finfo(float).eps * (1 + (0 if T is None else T.shape[1]))
    best, best_pair = -np.inf, (0, 1)
    found_i, found_j, found_v = [], [], []
    for s in range(0, n, block):
        a = slice(s, min(s + block, n))
        for t in range(s, n, block):
            b = slice(t, min(t + block, n))
            tv = _tv_block(P[a], P[b])
            if T is None:
                D = np.asarray(metric.kind(F[a], F[b]), dtype=float)
                if D.shape != tv.shape or not np.all(np.isfinite(D)) or np.any(D < 0):
                    raise FairdecideError(
                        "the metric callable returned a matrix of the wrong shape, or a "
                        "negative or non-finite distance")
                v = tv - L * D  # exact
            else:
                d2 = sq[a, None] + sq[None, b] - 2.0 * (T[a] @ T[b].T)
                err = u * (sq[a, None] + sq[None, b])
                v = tv - L * np.sqrt(np.clip(d2 - err, 0, None))  # >= the exact violation
            if s == t:
                v[np.tril_indices(len(v), 0, len(v[0]))] = -np.inf
            top = np.unravel_index(int(np.argmax(v)), v.shape)
            if not np.isfinite(v[top]):
                continue
            # v bounds every exact violation from above: a pair can exceed the threshold,
            # or the largest exact violation known (here or in earlier blocks), only if
            # its bound does; the block's top pair is always examined
            cut = max(best, float(_exact(T, tv, L, v, [top[0]], [top[1]], s, t)[0]))
            ii, jj = np.nonzero((v > threshold) | (v > cut))
            ii, jj = np.r_[ii, top[0]], np.r_[jj, top[1]]
            gi, gj = ii + s, jj + t
            exact = _exact(T, tv, L, v, ii, jj, s, t)
            k = int(np.argmax(exact))
            if exact[k] > best:
                best, best_pair = float(exact[k]), (int(gi[k]), int(gj[k]))
            keep = exact > threshold
            keep[-1] = False  # the block's top pair, appended once more above
            found_i.append(gi[keep])
            found_j.append(gj[keep])
            found_v.append(exact[keep])
    pairs = (np.stack([np.concatenate(found_i), np.concatenate(found_j)], axis=1)
             if found_i else np.zeros((0, 2), dtype=int))
    viol = np.concatenate(found_v) if found_v else np.zeros(0)
    order = np.lexsort((pairs[:, 1], pairs[:, 0])) if len(pairs) else np.zeros(0, int)
    return PairSearch(best, best_pair, pairs[order].astype(int), viol[order],
                      n * (n - 1) // 2)
