"""Sets around an estimated distribution, and the worst point of one: the pieces of a
:class:`~fairdecide.uncertainty.confidence.ConfidenceSet`.

- :func:`weissman_radius`: the L1 radius holding a multinomial with probability 1 - d
  (Weissman et al. 2003);
- :func:`clopper_pearson`: the exact binomial interval;
- :func:`worst_in_ball`: the minimiser of a linear cost over the intersection of an L1
  ball and the simplex, in closed form.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fairdecide.exceptions import FairdecideError

__all__ = ["clopper_pearson", "weissman_radius", "worst_in_ball"]


def weissman_radius(n: Any, m: int, delta: float) -> np.ndarray:
    """The L1 radius r holding an m-outcome multinomial estimated from n draws with
    probability at least 1 - delta (Weissman et al. 2003): sqrt(2 (ln(2^m - 2) -
    ln delta) / n); 2 (the whole simplex) where n = 0.

    Examples
    --------
    >>> float(weissman_radius(1000, 2, 0.05).round(4))
    0.0859
    """
    n = np.asarray(n, dtype=float)
    if m < 2:
        raise FairdecideError(f"a multinomial needs at least 2 outcomes, got {m}")
    log_terms = m * np.log(2.0) + np.log1p(-2.0 ** (1 - m))  # ln(2^m - 2), stably
    with np.errstate(divide="ignore"):
        r = np.sqrt(2.0 * (log_terms - np.log(delta)) / n)
    return np.where(n > 0, np.minimum(r, 2.0), 2.0)


def clopper_pearson(k: Any, n: Any, delta: float) -> tuple[np.ndarray, np.ndarray]:
    """The exact (Clopper-Pearson) interval holding a binomial proportion with
    probability at least 1 - delta, from k successes in n trials; [0, 1] where n = 0.

    Examples
    --------
    >>> [round(float(v), 4) for v in clopper_pearson(5, 100, 0.05)]
    [0.0164, 0.1128]
    """
    from scipy import stats

    k, n = np.asarray(k, dtype=float), np.asarray(n, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        lo = np.where(k > 0, stats.beta.ppf(delta / 2, k, n - k + 1), 0.0)
        hi = np.where(k < n, stats.beta.ppf(1 - delta / 2, k + 1, n - k), 1.0)
    return np.where(n > 0, lo, 0.0), np.where(n > 0, hi, 1.0)


def worst_in_ball(cost: np.ndarray, center: np.ndarray, radius: np.ndarray) -> np.ndarray:
    """argmin of cost . theta over {theta in the simplex, ||theta - center||_1 <= radius},
    for each row (last axis: outcomes): mass min(radius / 2, 1 - center_j*) moved to the
    cheapest outcome j* from the dearest ones in turn.

    Examples
    --------
    >>> worst_in_ball(np.array([1.0, 0.0, 2.0]), np.array([0.5, 0.2, 0.3]), np.array(0.4))
    array([0.4, 0.4, 0.2])
    """
    cost, center = np.asarray(cost, dtype=float), np.asarray(center, dtype=float)
    shape = np.broadcast_shapes(cost.shape, center.shape)
    c = np.broadcast_to(cost, shape).reshape(-1, shape[-1])
    theta = np.broadcast_to(center, shape).reshape(-1, shape[-1]).copy()
    r = np.broadcast_to(np.asarray(radius, dtype=float), shape[:-1]).reshape(-1)
    rows = np.arange(len(theta))
    cheapest = np.argmin(c, axis=1)
    move = np.minimum(r / 2.0, 1.0 - theta[rows, cheapest])
    theta[rows, cheapest] += move
    left = move.copy()
    for j in np.argsort(-c, axis=1, kind="stable").T:  # dearest first
        take = np.where(j == cheapest, 0.0, np.minimum(left, theta[rows, j]))
        theta[rows, j] -= take
        left -= take
    return theta.reshape(shape)
