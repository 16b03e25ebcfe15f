"""Support: whether logs say anything about the decisions a policy would make.

Importance weighting recovers a candidate policy's value or fairness only where the
logging policy took the candidate's actions; a decision (cell, group, action) that was
never logged carries no information, and every estimator either drops its mass
(importance weighting) or fills it from a model or prior (direct and Bayesian
estimates). On tabular data this is checked exactly from the counts.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from fairdecide.data.counts import LoggedCounts
from fairdecide.data.logged import LoggedData
from fairdecide.problem import DecisionProblem

__all__ = ["UNSUPPORTED_MASS", "warn_unsupported"]

UNSUPPORTED_MASS = 0.01  # warn when the candidate puts more on never-logged decisions


def warn_unsupported(data: Any, problem: DecisionProblem, target: np.ndarray) -> None:
    """Warn when, on tabular data, the evaluated policy puts probability on (cell, group,
    action) decisions that were never logged. Without known propensities the data say
    nothing about that mass, so importance weighting drops it and a model fills it from
    the prior or from other cells (no overlap). With known propensities, a decision not
    logged in a cell whose logged actions' propensities already sum to one had
    probability zero (no overlap, as before); in other cells it is merely absent from
    this sample (a uniform random policy logs every action somewhere), and weighting by
    the known propensities stays unbiased: a milder warning says so."""
    if not isinstance(data, LoggedData | LoggedCounts) or data.a is None:
        return
    a = data.action_codes(problem)
    cell = data.units().cell_group
    n_cells = data.n_x * data.n_z
    seen = np.zeros((n_cells, problem.n_actions), dtype=bool)
    seen[cell, a] = True
    if data.propensity is None:
        closed = np.ones(n_cells, dtype=bool)
    else:  # the logged actions' propensities sum to one: nothing else could be taken
        p = np.zeros((n_cells, problem.n_actions))
        p[cell, a] = data.propensity
        closed = p.sum(axis=1) >= 1 - 1e-6
    weights = None if data.weights is None else data.weights / data.weights.sum()
    unseen = target * ~seen[cell]

    def share(rows: np.ndarray) -> float:
        per = unseen[rows].sum(axis=1)
        return float(per.sum() / len(cell) if weights is None else weights[rows] @ per)

    missing, chance = share(closed[cell]), share(~closed[cell])
    never = [problem.action_labels[k] for k in range(problem.n_actions)
             if np.any(target[:, k] > 0) and not np.any(seen[:, k])]
    extra = f" (action(s) {never} never logged at all)" if never else ""
    if missing > UNSUPPORTED_MASS:
        warnings.warn(
            f"the evaluated policy puts {missing:.1%} of its probability on decisions "
            f"(cell, group, action) that were never logged{extra}: the logs say nothing "
            "about them, so importance-weighted estimates drop that mass and model-based "
            "ones extrapolate it. Treat the estimate as unsupported", stacklevel=3)
    elif chance > UNSUPPORTED_MASS:
        warnings.warn(
            f"the evaluated policy puts {chance:.1%} of its probability on decisions "
            f"(cell, group, action) that happen not to appear in these logs{extra}, "
            "though the known logging propensities leave them possible: weighting by "
            "those propensities stays unbiased, while model-based estimates (dm, the "
            "model part of dr, bayes) extrapolate them from other cells", stacklevel=3)
