"""A criterion's deviation as smooth terms of the group marginal, for the gradient route.

The gradient route optimises policies with parameters theta (linear-softmax). It needs
each deviation F as a function of the group marginal m = vec P(z, a, y) together with
its derivative. TV and max deviations are not differentiable where a difference is zero,
so a criterion gives its deviation as *terms* r(m), each smooth in m, and says how they
combine:

- ``"abs-sum"``: F = sum_i |r_i(m)|  (TV);
- ``"abs-max"``: F = max_i |r_i(m)|  (max);
- ``"sum"``:     F = sum_i r_i(m)    (KL: each term is already smooth);
- ``"hinge-max"``: F = max(0, max_i r_i(m))  (the excess over one-sided bounds, as
  :class:`~fairdecide.criteria.capacity.Capacity`'s).

The optimiser writes |r_i| and the max through epigraph variables (t_i >= r_i,
t_i >= -r_i; only t >= r_i and t >= 0 for "hinge-max"), so every function it sees is
smooth and nothing is approximated.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

if TYPE_CHECKING:
    from fairdecide.problem import DecisionProblem

__all__ = ["MarginalTerms", "conditional_terms"]

Combine = Literal["abs-sum", "abs-max", "sum", "hinge-max"]


@dataclass(frozen=True)
class MarginalTerms:
    """Terms r(m) of a deviation and their Jacobian dr/dm at one marginal.

    Attributes
    ----------
    combine : {"abs-sum", "abs-max", "sum", "hinge-max"}
    values : ndarray of shape (n_terms,)
    jacobian : ndarray of shape (n_terms, n_z * n_a * n_y)
    """

    combine: Combine
    values: np.ndarray
    jacobian: np.ndarray

    def deviation(self) -> float:
        """F from the terms (equals the criterion's exact deviation)."""
        r = self.values
        if r.size == 0:
            return 0.0
        if self.combine == "hinge-max":
            return float(max(0.0, r.max()))
        if self.combine == "abs-sum":
            return float(np.abs(r).sum())
        if self.combine == "abs-max":
            return float(np.abs(r).max())
        return float(r.sum())


def conditional_terms(crit: Any, M: np.ndarray, problem: DecisionProblem) -> MarginalTerms:
    """Terms of a conditional-independence deviation at the group marginal ``M``
    (``crit`` is a :class:`~fairdecide.criteria.ConditionalIndependence`; this module
    does not import it, which imports this one).

    With N[z, c, t] the joint of group, conditioning value and target, D = sum_t N,
    p_g = N / D, p_p = sum_z N / sum_{z, t} N and weight w (1, or D / sum_z D):

    - TV and max: r_(z,c,t) = w(z, c) (p_g - p_p)[z, c, t];
    - KL: r_(z,c,t) = w(z, c) p_g log(p_g / p_p) (0 where p_g = 0);
    - pairwise reference (TV and max): r_(z,z',c,t) = p_g[z, c, t] - p_g[z', c, t] for
      z < z';

    over the pairs (z, c) the criterion compares (positive mass, in ``given_values``).
    The Jacobian is analytic: dp_g[z,c,t] / dN[z,c,t'] = (1[t = t'] - p_g[z,c,t]) / D[z,c],
    dp_p[c,t] / dN[z',c,t'] = (1[t = t'] - p_p[c,t]) / sum_z D[z,c], and for
    w = D / sum_z D, dw / dN[z',c,t'] = 1[z = z'] / sum_z D - D / (sum_z D)^2; the map
    from m to N is a fixed reshaping (:meth:`ConditionalIndependence.reshape_marginal`).
    """
    n_z = M.shape[0]
    P = crit._pieces(np.asarray(M, dtype=float), problem)
    N, D, Dp = P["N"], P["D"], P["Dp"]
    n_c, n_t = N.shape[1], N.shape[2]
    pg, pp, active = P["p_group"], P["p_pool"], P["active"]
    safe_D = np.where(D > 0, D, 1.0)
    safe_Dp = np.where(Dp > 0, Dp, 1.0)
    eye_z, eye_c, eye_t = np.eye(n_z), np.eye(n_c), np.eye(n_t)
    # Derivatives with respect to N[z', c', t'] (the last three axes).
    d_pg = np.einsum("zy,cd,zcts->zctyds", eye_z, eye_c,
                     (eye_t[None, None] - pg[..., None]) / safe_D[..., None, None])
    d_pp = np.einsum("cd,cts->ctds", eye_c, (eye_t[None] - pp[..., None])
                     / safe_Dp[:, None, None])
    d_pp = np.broadcast_to(d_pp[None, :, :, None], (n_z, n_c, n_t, n_z, n_c, n_t))
    if crit.weighting == "group":
        w = np.where(active, D / safe_Dp[None, :], 0.0)
        d_w = (np.einsum("zy,cd->zcyd", eye_z, eye_c) / safe_Dp[None, :, None, None]
               - np.einsum("zc,cd->zcd", D / safe_Dp[None, :] ** 2, eye_c)[:, :, None, :])
        d_w = np.broadcast_to(d_w[..., None], (n_z, n_c, n_z, n_c, n_t))
    else:
        w = active.astype(float)
        d_w = np.zeros((n_z, n_c, n_z, n_c, n_t))
    if crit.measure == "kl":
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(pg > 0, pg / np.where(pp > 0, pp, 1.0)[None], 1.0)
            log_r = np.log(ratio)
            base = np.where(pg > 0, pg * log_r, 0.0)
            d_base = (np.where(pg > 0, log_r + 1.0, 0.0)[..., None, None, None] * d_pg
                      - np.where(pg > 0, ratio, 0.0)[..., None, None, None] * d_pp)
        combine: Combine = "sum"
    elif crit.reference == "pairwise":  # unweighted differences of two groups
        zi, zj = crit._pairs(n_z)
        both = active[zi] & active[zj]
        base = pg[zi] - pg[zj]
        d_r = (d_pg[zi] - d_pg[zj]).reshape(len(zi) * n_c * n_t, n_z * n_c * n_t)
        keep = np.repeat(both[..., None], n_t, axis=2).reshape(-1)
        return _chained(crit, problem, n_z, "abs-sum" if crit.measure == "tv" else "abs-max",
                        base.reshape(-1)[keep], d_r[keep])
    else:
        base = pg - pp[None]
        d_base = d_pg - d_pp
        combine = "abs-sum" if crit.measure == "tv" else "abs-max"
    r = w[..., None] * base
    d_r = w[..., None, None, None, None] * d_base + base[..., None, None, None] * d_w[:, :, None]
    keep = np.repeat(active[..., None], n_t, axis=2).reshape(-1)
    d_r = d_r.reshape(n_z * n_c * n_t, n_z * n_c * n_t)[keep]
    return _chained(crit, problem, n_z, combine, r.reshape(-1)[keep], d_r)


def _chained(crit: Any, problem: DecisionProblem, n_z: int, combine: Combine,
             values: np.ndarray, d_r: np.ndarray) -> MarginalTerms:
    """The terms with their Jacobian in N chained through the fixed map m -> N."""
    n_a, n_y = problem.n_actions, problem.n_outcomes
    n_m = n_z * n_a * n_y
    R = crit.reshape_marginal(np.eye(n_m).reshape(n_m, n_z, n_a, n_y)).reshape(n_m, -1)
    return MarginalTerms(combine, values, d_r @ R.T)
