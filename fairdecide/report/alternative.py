"""The values in the audit report: the logged decisions on every row, and a fair
alternative fitted on one half of the rows and evaluated on the other.

The logged decisions were not fitted to anything, so their value (the mean of U(a_i,
y_i), linear in the group table) and deviation (the criteria table's) use every row:
the same numbers as ``evaluate_policy(problem, data, "logged")`` and ``audit``. The
unconstrained best and the fair policy are fitted on the training half's world and
evaluated on the test half, so overfitting does not flatter them.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd

from fairdecide.criteria.presets import Independence, Separation, Sufficiency
from fairdecide.data.tabular_counts import TabularCounts
from fairdecide.evaluation.deviation import corrected_interval, deviation_of
from fairdecide.optimize import optimize_policy, pareto_frontier
from fairdecide.report import tables as tb
from fairdecide.worlds.world import TabularWorld

__all__ = ["CRITERIA", "decisions", "linear_value", "logged_row", "policies", "train_world"]

CRITERIA = {"independence": Independence(), "separation": Separation(),
            "sufficiency": Sufficiency()}


def train_world(C: np.ndarray, data: Any, problem: Any) -> Any:
    """The (smoothed) maximum-likelihood world of a cell table."""
    n_y = C if problem.outcome_depends_on_action else C.sum(axis=2)
    counts = TabularCounts(C.sum(axis=(2, 3)), n_y, data.x_labels, data.group_labels,
                           problem.action_labels)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # unseen actions: reported as weak overlap
        p_xz, p_y = counts.mle_parameters(0.5)
    return TabularWorld(p_xz, p_y, x_labels=data.x_labels, group_labels=data.group_labels)


def linear_value(W: np.ndarray, table: np.ndarray, release: Any, level: float,
                  problem: Any) -> tuple[float, float, float]:
    """A value linear in a count table, sum W T / sum T, with the delta-method interval
    of :func:`tables.linear_value`: from the exact table, or from the raw (unclipped)
    private release and its noise variance; clipped to [min U, max U], where a utility
    per person lies whatever the noise did (all of it, centred, when the release's noisy
    total is not positive)."""
    raw = table if release is None else np.asarray(release.values, dtype=float)
    var = 0.0 if release is None else float(release.noise_variance)
    U = problem.utility
    lo, hi = float(U.min()), float(U.max())
    if float(raw.sum()) <= 0:
        # a private release whose noisy total is not positive says nothing about the
        # mean (sum W T / sum T would divide by zero or flip sign): the whole range
        return (lo + hi) / 2, lo, hi
    return tuple(float(np.clip(v, lo, hi)) for v in tb.linear_value(W, raw, var, level))


def logged_row(est: dict, releases: dict, problem: Any, criteria: pd.DataFrame,
                crit_name: str, level: float) -> dict:
    """The logged decisions on every row: their value, the mean of U(a_i, y_i), linear in
    the group table G[z, a, y] (the delta-method interval of :func:`tables.linear_value`,
    from the raw release when private), and the criterion's deviation as the criteria
    table has it. The same numbers as ``evaluate_policy(problem, data, "logged")`` and
    ``estimate_deviation``/``audit``: the logged decisions are not fitted, so nothing is
    held out for them."""
    G = est["group"]
    value, lo, hi = linear_value(tb.value_weights(None, problem, G.shape), G,
                                  releases.get("group"), level, problem)
    dev = criteria.set_index("criterion").loc[CRITERIA[crit_name].label]
    return {"policy": "logged decisions", "evaluated_on": "all rows", "value": value,
            "value_low": lo, "value_high": hi, "deviation": float(dev["deviation"]),
            "deviation_low": float(dev["low"]), "deviation_high": float(dev["high"]),
            "unsupported": 0.0}


def policies(est: dict, reps: dict, problem: Any, crit_name: str, epsilon: float,
              group_blind: bool, data: Any, level: float, n_points: int, release: Any
              ) -> dict:
    """The fair alternative, fitted on the training half and evaluated on the test half.

    A value linear in the cell table (any policy in a prediction problem) gets the
    delta-method interval of :func:`tables.linear_value`, from the raw release when
    private (unbiased: no clipping); a policy's value in an intervention (the cell model)
    gets the percentile interval of the replicate tables.
    """
    crit = CRITERIA[crit_name]
    world = train_world(est["train"], data, problem)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        best = optimize_policy(problem, world, group_blind=group_blind)
        fair = optimize_policy(problem, world, crit, epsilon=epsilon,
                               group_blind=group_blind)
        front = pareto_frontier(problem, world, crit, n_points=n_points,
                                group_blind=group_blind)
    notes = list(dict.fromkeys(" ".join(str(w.message).split()) for w in caught))
    C, R = est["test"], reps["test"]
    limits = []
    if release is not None:
        raw_n = float(np.sum(release.values))
        sd = float(np.sqrt(release.noise_variance * release.values.size))
        if raw_n < 5 * sd:
            limits.append(
                f"The private test-half table is mostly noise (its total is {raw_n:.0f} "
                f"with a noise standard deviation of {sd:.0f}): the values and deviations "
                "of the policies are not informative. Use a larger dp_epsilon, fewer "
                "features or more rows")
    rows = []
    for name, pi in (("unconstrained best", best.policy.table),
                     (f"fair ({crit.label} <= {epsilon:g})", fair.policy.table)):
        W = tb.value_weights(pi, problem, C.shape)
        if W is not None:
            value, lo, hi = linear_value(W, C, release, level, problem)
        else:
            value = tb.policy_value(C, pi, problem)
            lo, hi = (float(q) for q in np.quantile(tb.replicate_values(
                R, lambda T, p=pi: tb.policy_value(T, p, problem)),
                [(1 - level) / 2, (1 + level) / 2]))

        def marginal(T: np.ndarray, p: Any = pi) -> np.ndarray:
            return tb.policy_marginal(T, p, problem)

        plug = deviation_of(crit, marginal(C), problem)
        draws = tb.replicate_values(R, lambda T, m=marginal: deviation_of(crit, m(T), problem))
        dev, dlo, dhi = corrected_interval(plug, draws, level)
        rows.append({"policy": name, "evaluated_on": "test half", "value": value,
                     "value_low": lo, "value_high": hi, "deviation": dev,
                     "deviation_low": dlo, "deviation_high": dhi,
                     "unsupported": tb.unsupported_mass(C, pi)})
    return {"table": pd.DataFrame(rows), "fair": fair, "best": best, "notes": notes,
            "limits": limits,
            "frontier": front[["epsilon", "utility", "deviation"]].reset_index(drop=True)}


def decisions(pol: dict, problem: Any, data: Any, est: dict, min_cell: int | None
               ) -> pd.DataFrame:
    """The fair alternative's decisions: P(action) per cell and group, with the cell's
    share of its group in the training table (not shown for a cell of 1 to min_cell - 1
    rows without privacy: with the group's size it would give the count)."""
    table = np.asarray(pol["fair"].policy.table)
    n_xz = est["train"].sum(axis=(2, 3))
    share = n_xz / np.maximum(n_xz.sum(axis=0, keepdims=True), 1e-12)
    if min_cell is not None:
        share = np.where((n_xz > 0) & (n_xz < min_cell), np.nan, share)
    rows = []
    for x, cell in enumerate(data.x_labels):
        for z, g in enumerate(data.group_labels):
            row = {"cell": str(cell), "group": str(g), "share": float(share[x, z])}
            for a, lab in enumerate(problem.action_labels):
                row[f"P({lab})"] = float(table[x, z, a])
            rows.append(row)
    return pd.DataFrame(rows)
