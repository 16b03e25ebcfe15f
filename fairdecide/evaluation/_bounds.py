"""Upper confidence bounds of group-fairness deviations from labelled rows.

A policy pi is held fixed (fitted on other rows). On n labelled rows, every conditional
the criterion compares is estimated by a mean of values in [0, 1]:

- the group conditional P(t | c, z) by the mean of pi(t | x_i, z_i) over the rows with
  group z and conditioning value c (c an outcome, or nothing for independence);
- the group weight w_z(c) = P(z | c) by the share of group z among the rows with c.

Each mean gets an interval from Hoeffding's relative-entropy (Chernoff) bound, which
holds for independent values in [0, 1] of mean mu (Hoeffding, 1963, Theorem 1):

    P(mean >= mu + t) <= exp(-n kl(mu + t, mu)),  kl(p, q) = p log(p/q) + (1-p) log((1-p)/(1-q))

and the same below. Inverted at level delta_j, the interval is {q : n kl(mean, q) <=
log(2 / delta_j)}; it is never wider than Hoeffding's additive mean +- sqrt(log(2 /
delta_j) / (2 n)) (Pinsker) and much narrower near 0 and 1. All m statements hold at
once with probability at least 1 - delta when delta_j = delta / m (union bound).

The difference of two groups' conditionals gets a second interval, from Hoeffding's
inequality for the difference of two independent means of values in [0, 1]:

    |(p_z - p_z') - (P(t | c, z) - P(t | c, z'))| <= sqrt(log(2 / delta_j) (1/n_z + 1/n_z') / 2)

about 30% narrower than the sum of the two groups' radii when the rates are near 1/2
(the kl intervals are narrower near 0 and 1). g_zz', the bound of
|P(t | c, z) - P(t | c, z')|, is the smaller of the two (both hold on the same event).

The deviation is then bounded on that event. The pooled conditional is
P(t | c) = sum_z' w_z' P(t | c, z'), so

    P(t | c, z) - P(t | c) = sum_{z' != z} w_z' (P(t | c, z) - P(t | c, z'))

and |P(t | c, z) - P(t | c)| is at most the largest sum_{z' != z} v_z' g_zz' over
0 <= v_z' <= (upper bound of w_z'), sum_{z'} v_z' <= 1 - (lower bound of w_z): a
fractional knapsack, solved greedily. With two groups the weights nearly cancel in the
total-variation deviation (sum_z |P_z - P| = |P_0 - P_1|): the bound is about
|p_0 - p_1| + r_01 per compared value and action, not the
|p_0 - p| + |p_1 - p| + r_0 + r_1 + 2 r_pool of comparing each group with a pooled
interval. With ``reference="pairwise"`` the criterion compares two groups directly, and
|P(t | c, z) - P(t | c, z')| <= g_zz' is all it needs (no weights).
"""

from __future__ import annotations

import numpy as np

from fairdecide.criteria.bounds import bound_from_gaps, compared_values, gaps_from_ranges
from fairdecide.criteria.conditional import ConditionalIndependence
from fairdecide.problem import DecisionProblem

__all__ = ["deviation_bound", "kl_interval", "level", "n_statements"]

_BISECTIONS = 60  # halves [0, 1] to below 1e-18: as fine as a float near 1 resolves


def kl_interval(mean: np.ndarray, n: np.ndarray, level: float
                ) -> tuple[np.ndarray, np.ndarray]:
    """The lowest and highest q in [0, 1] with n kl(mean, q) <= level, elementwise
    (``level`` = log(2 / delta_j) for a two-sided interval at delta_j); [0, 1] where
    n = 0. The returned ends are on the outer side of the exact roots (bisection keeps
    the end where n kl > level), so the interval is never narrower than the exact one.
    """
    mean = np.clip(np.asarray(mean, dtype=float), 0.0, 1.0)
    n = np.broadcast_to(np.asarray(n, dtype=float), mean.shape)
    high = _kl_upper(mean, n, level)
    low = 1.0 - _kl_upper(1.0 - mean, n, level)
    return low, high


def _kl_upper(p: np.ndarray, n: np.ndarray, level: float) -> np.ndarray:
    inside = p.copy()  # n kl(p, q) <= level holds here
    outside = np.ones_like(p)  # and fails here (or q = 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        for _ in range(_BISECTIONS):
            q = 0.5 * (inside + outside)
            kl = (np.where(p > 0, p * np.log(p / q), 0.0)
                  + np.where(p < 1, (1 - p) * np.log((1 - p) / (1 - q)), 0.0))
            ok = n * kl <= level
            inside = np.where(ok, q, inside)
            outside = np.where(ok, outside, q)
    return np.where(n > 0, outside, 1.0)


def _coordinates(n: int) -> int:
    """Statements per distribution of n values: with two, one interval gives both."""
    return 1 if n == 2 else n


def n_statements(criteria: list[ConditionalIndependence], problem: DecisionProblem,
                 n_groups: int) -> int:
    """How many interval statements the bound of ``criteria`` rests on: per compared
    conditioning value (shared by criteria that compare it), the conditionals of every
    group and the differences of every pair of groups, and the group weights where a
    criterion compares with the pooled conditional. Fixed by the problem and the number
    of groups, not by the data, as the union bound needs."""
    if n_groups < 2:
        return 0
    values, weighted = set(), set()
    for crit in criteria:
        n_c = 1 if crit.given is None else problem.n_outcomes
        keys = {(crit.given, int(c)) for c in compared_values(crit, problem, n_c)}
        values |= keys
        if crit.reference == "pooled":
            weighted |= keys
    pairs = n_groups * (n_groups - 1) // 2
    return (len(values) * (n_groups + pairs) * _coordinates(problem.n_actions)
            + len(weighted) * _coordinates(n_groups))


def level(criteria: list[ConditionalIndependence], problem: DecisionProblem,
          n_groups: int, delta: float) -> float:
    """log(2 m / delta): the level of each two-sided interval when all m statements are
    to hold at once with probability at least 1 - delta (with one group there is
    nothing to compare, m = 0, and the bound is 0 at any level)."""
    return float(np.log(2 * max(n_statements(criteria, problem, n_groups), 1) / delta))


def deviation_bound(crit: ConditionalIndependence, problem: DecisionProblem,
                    counts: np.ndarray, labels: np.ndarray, level: float) -> float:
    """An upper bound of ``crit``'s deviation in the population, valid whenever every
    interval at ``level`` holds (module docstring).

    ``counts`` n(z, a, y) = sum_i pi(a | x_i, z_i) [z_i = z, y_i = y] of the rows that
    estimate the conditionals (:func:`fairdecide.worlds.table.row_counts`); ``labels`` the
    numbers of rows per (z, y) that estimate the group weights (the same rows, or more
    rows of the same population). The criterion has target "action", given None or
    "outcome", measure "tv" or "max", either reference.
    """
    N = crit.reshape_marginal(counts)  # (n_z, n_c, n_t): sums of pi per (z, c)
    size = N.sum(axis=-1)  # rows per (z, c), since each row of pi sums to one
    with np.errstate(divide="ignore", invalid="ignore"):
        rate = np.where(size[..., None] > 0, N / size[..., None], 0.5)
    low, high = kl_interval(rate, size[..., None], level)
    gap = _pair_gaps(rate, size, low, high, level)  # (n_z, n_z, n_c, n_t)
    n_zc = crit.reshape_marginal(labels[:, None, :]).sum(axis=-1)  # (n_z, n_c)
    n_c = n_zc.sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        share = np.where(n_c > 0, n_zc / n_c, 0.5)
    w_low, w_high = kl_interval(share, n_c[None, :], level)
    return bound_from_gaps(crit, problem, gap, w_low, w_high)


def _pair_gaps(rate: np.ndarray, size: np.ndarray, low: np.ndarray, high: np.ndarray,
               level: float) -> np.ndarray:
    """g[z, z', c, t], the bound of |P(t | c, z) - P(t | c, z')|: the smaller of the
    intervals' widest difference and Hoeffding's bound of the difference (module
    docstring), at most 1."""
    from_intervals = gaps_from_ranges(low, high)
    with np.errstate(divide="ignore"):
        inv = np.where(size > 0, 1.0 / size, np.inf)[..., None]  # (n_z, n_c, 1)
    radius = np.sqrt(level * (inv[:, None] + inv[None, :]) / 2.0)
    direct = np.abs(rate[:, None] - rate[None, :]) + radius
    return np.clip(np.minimum(from_intervals, direct), 0.0, 1.0)
