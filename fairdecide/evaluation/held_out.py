"""The pieces of a held-out (safety) test, shared by the estimators' ``guarantee`` and
:func:`~fairdecide.optimize_held_out`: the split of the rows, the width the test's bound
is predicted to have before the policy is fitted, and a lower confidence bound of a
mean utility.

A held-out test in the manner of Seldonian algorithms (Thomas et al., 2019, "Preventing
undesirable behavior of intelligent machines"): a candidate policy is fitted on one part
of the rows (the candidate part), and its own group rates and value are bounded on the
other (the safety part). Given the groups of all rows (which alone decide the split),
the two parts are independent samples, so the candidate's values pi(a | x_i, z_i) on the
safety rows of a (group, outcome) cell are independent draws with mean the population's
P(a | c, z): every interval of :mod:`fairdecide.evaluation._bounds` holds with its
probability.
"""

from __future__ import annotations

import numpy as np

from fairdecide.evaluation._bounds import deviation_bound, kl_interval, n_statements
from fairdecide.problem import DecisionProblem

__all__ = ["PASS_QUANTILE", "held_out_levels", "predicted_widths", "safety_split",
           "value_lower_bound"]

#: The candidate's tolerance is epsilon - w - PASS_QUANTILE s (at least 0), s the
#: predicted standard deviation of the held-out deviation about the candidate's: a
#: policy whose candidate deviation is at its tolerance then passes the safety test about
#: 19 times in 20 when the bound is as wide as predicted.
PASS_QUANTILE = 1.645


def safety_split(z: np.ndarray, fraction: float, rng: np.random.RandomState
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Candidate and safety row indices: in each group, a random ``fraction`` of its rows
    (rounded; at least one, and one left, when the group has two or more) to safety.

    The split is stratified by group only: one stratified on the outcome too would fix
    each group's mix of outcomes in the safety part, and its P(a | z) would no longer be
    a mean of independent draws.

    Examples
    --------
    >>> import numpy as np
    >>> cand, safe = safety_split(np.array([0, 0, 0, 0, 1, 1]), 0.5,
    ...                           np.random.RandomState(0))
    >>> len(cand), len(safe), sorted(np.r_[cand, safe].tolist())
    (3, 3, [0, 1, 2, 3, 4, 5])
    """
    safe = []
    for g in np.unique(z):
        rows = rng.permutation(np.flatnonzero(z == g))
        k = round(fraction * len(rows))
        if len(rows) >= 2:
            k = min(max(k, 1), len(rows) - 1)
        safe.append(rows[:k] if len(rows) >= 2 else rows[:0])
    mask = np.zeros(len(z), dtype=bool)
    mask[np.concatenate(safe)] = True
    return np.flatnonzero(~mask), np.flatnonzero(mask)


def predicted_widths(crits: list, problem: DecisionProblem, z: np.ndarray, y: np.ndarray,
                     cand: np.ndarray, safe: np.ndarray, n_groups: int, at: float
                     ) -> list[float]:
    """Each criterion's bound on safety rows whose every conditional equals 1/n_actions
    (then the deviation is 0 and the bound is all width, near its widest): the safety
    cells' sizes predicted from the candidate part's outcome shares within each group
    and the safety part's group sizes, the label counts from the candidate part's shares
    scaled to all rows. Only the candidate rows and the groups are read, so the fitted
    policy stays independent of the safety rows' features and outcomes."""
    labels = np.zeros((n_groups, problem.n_outcomes))
    np.add.at(labels, (z[cand], y[cand]), 1.0)
    in_group = labels.sum(axis=1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        mix = np.where(in_group > 0, labels / in_group, 0.0)
    safe_sizes = np.bincount(z[safe], minlength=n_groups)[:, None] * mix
    counts = np.repeat(safe_sizes[:, None, :] / problem.n_actions, problem.n_actions, axis=1)
    all_labels = labels * (len(z) / len(cand))
    return [deviation_bound(c, problem, counts, all_labels, at) for c in crits]


def held_out_levels(criteria: list, problem: DecisionProblem, n_groups: int, delta: float,
                    n_values: int) -> tuple[float, float]:
    """The levels of a test whose m fairness statements (two-sided intervals,
    :func:`~fairdecide.evaluation._bounds.n_statements`) and ``n_values`` one-sided value
    bounds all hold at once with probability at least 1 - delta: each gets
    delta / (m + n_values) (union bound), so the two-sided intervals' level is
    log(2 (m + n_values) / delta) and the one-sided bounds' log((m + n_values) / delta).

    Examples
    --------
    >>> import fairdecide as fd
    >>> problem = fd.DecisionProblem.classification(2)
    >>> two, one = held_out_levels([fd.Independence()], problem, 2, 0.1, 2)
    >>> round(two, 4), round(one, 4)  # 2 groups, 1 pair, 1 weight: m = 4; and 2 values
    (4.7875, 4.0943)
    """
    share = delta / (n_statements(criteria, problem, n_groups) + n_values)
    return float(np.log(2.0 / share)), float(np.log(1.0 / share))


def value_lower_bound(values: np.ndarray, low: float, high: float, level: float) -> float:
    """A lower confidence bound of the mean of independent ``values`` in [low, high]:
    Hoeffding's relative-entropy (Chernoff) bound on the values rescaled to [0, 1],

        low + (high - low) min {q : n kl(mean, q) <= level},

    which fails with probability at most exp(-level) (Hoeffding, 1963, Theorem 1).

    Examples
    --------
    >>> import numpy as np
    >>> v = np.r_[np.ones(80), np.zeros(20)]
    >>> lcb = value_lower_bound(v, 0.0, 1.0, float(np.log(1 / 0.05)))
    >>> bool(0.68 < lcb < 0.8)
    True
    """
    values = np.asarray(values, dtype=float)
    if high <= low or len(values) == 0:
        return float(low if len(values) == 0 else values.mean())
    s = np.clip((values - low) / (high - low), 0.0, 1.0)
    lo, _ = kl_interval(np.array([s.mean()]), np.array([float(len(s))]), level)
    return float(low + (high - low) * lo[0])
