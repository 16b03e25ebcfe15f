"""The Lipschitz criterion for linear-softmax policies: a certificate from the weights.

A linear-softmax policy that does not read the group satisfies, for every pair of
individuals (seen or not), D_TV(pi(. | x), pi(. | x')) <= kappa d(x, x') with

    kappa = max_{a < b} ||G (W_a - W_b)||_2 / 4

over the feature columns of W, where G = R^{-1} S maps the metric (d = ||R' (x - x')||,
R R' = M: the identity for euclidean, diag(sqrt w) for weighted, the Cholesky factor of
M for Mahalanobis) and the policy's scaling S (1 / scale of a StandardScaler
transformer). Proof: the TV distance is half the L1 distance, which is at most half the
spread max_a v_a - min_a v_a of the logit differences v = W (phi(x') - phi(x)) (see
:meth:`~fairdecide.LinearSoftmaxPolicy.lipschitz_bound`), and by Cauchy-Schwarz
|(W_a - W_b)' S (x - x')| <= ||G (W_a - W_b)|| d(x, x'). The gradient route imposes
kappa <= L as smooth constraints on the weights.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from fairdecide.exceptions import FairdecideError

__all__ = ["softmax_bound", "softmax_constraints"]


def softmax_constraints(crit: Any, family: Any) -> Callable[[np.ndarray], tuple]:
    """theta -> (g, dg/dtheta), g_ab = L^2 - ||G (W_a - W_b)||^2 / 16 >= 0, a < b."""
    G, n_feat = softmax_map(crit, family)
    A, n_in = family.coef.shape
    pairs = [(a, b) for a in range(A) for b in range(a + 1, A)]
    L2 = crit.constant ** 2

    def constraints(theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        W = theta.reshape(A, n_in)[:, :n_feat]
        g, jac = np.empty(len(pairs)), np.zeros((len(pairs), theta.size))
        for r, (a, b) in enumerate(pairs):
            v = G @ (W[a] - W[b])
            g[r] = L2 - v @ v / 16
            d = G.T @ v / 8
            jac[r, a * n_in: a * n_in + n_feat] = -d
            jac[r, b * n_in: b * n_in + n_feat] = d
        return g, jac

    return constraints


def softmax_bound(crit: Any, policy: Any) -> float:
    """kappa of ``policy`` (see the module)."""
    G, n_feat = softmax_map(crit, policy)
    W = policy.coef[:, :n_feat]
    A = len(W)
    return max((float(np.linalg.norm(G @ (W[a] - W[b]))) / 4
                for a in range(A) for b in range(a + 1, A)), default=0.0)


def softmax_map(crit: Any, family: Any) -> tuple[np.ndarray, int]:
    """G = R^{-1} S and the number of feature columns."""
    if getattr(family, "include_z", False):
        raise FairdecideError(
            "Lipschitz fairness of a linear-softmax policy that reads the group "
            "(include_z=True) cannot be certified: two people with the same features "
            "in different groups are at distance 0. Use include_z=False")
    if getattr(family, "coef", None) is None:
        raise FairdecideError("the linear-softmax family has no coefficients yet")
    n_feat = family.coef.shape[1] - int(family.fit_intercept)
    transformer = family.transformer
    if transformer is None:
        S = np.ones(n_feat)
    elif getattr(transformer, "scale_", None) is not None and len(
            np.ravel(transformer.scale_)) == n_feat:
        S = 1.0 / np.asarray(transformer.scale_, dtype=float).ravel()
    else:
        raise FairdecideError(
            "Lipschitz fairness of a linear-softmax policy is certified through its "
            "weights, which needs the transformer's own Lipschitz map: give no "
            "transformer or a fitted StandardScaler (scale features in the world "
            "instead)")
    if callable(crit.metric):
        raise FairdecideError(
            "a callable metric gives no weight bound for a linear-softmax policy; "
            "use 'euclidean', 'weighted' or 'mahalanobis'")
    if crit.metric == "euclidean":
        R_inv = np.eye(n_feat)
    elif crit.metric == "weighted":
        w = crit.pair_metric.checked()
        if len(w) != n_feat or np.any(w <= 0):
            raise FairdecideError(
                f"weights must be {n_feat} positive numbers for a linear-softmax "
                "policy (a zero weight lets its feature move the policy freely)")
        R_inv = np.diag(1.0 / np.sqrt(w))
    else:
        M = np.asarray(crit.matrix, dtype=float)
        try:
            R_inv = np.linalg.inv(np.linalg.cholesky(M))
        except np.linalg.LinAlgError:
            raise FairdecideError(
                "matrix must be positive definite for a linear-softmax policy") from None
        if len(M) != n_feat:
            raise FairdecideError(f"matrix must be ({n_feat}, {n_feat})")
    return R_inv * S[None, :], n_feat
