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

from fairdecide.data import LoggedData
from fairdecide.problem import DecisionProblem

__all__ = ["UNSUPPORTED_MASS", "warn_unsupported"]

UNSUPPORTED_MASS = 0.01  # warn when the candidate puts more on never-logged decisions


def warn_unsupported(data: Any, problem: DecisionProblem, target: np.ndarray) -> None:
    """Warn when, on tabular data, the evaluated policy puts probability on (cell, group,
    action) decisions that were never logged: the data say nothing about that mass, so
    importance weighting drops it and a model fills it from the prior or from other cells
    (no overlap)."""
    from fairdecide.logged_counts import LoggedCounts

    if not isinstance(data, LoggedData | LoggedCounts) or data.a is None:
        return
    a = data.action_codes(problem)
    cell = data.units().cell_group
    seen = np.zeros((data.n_x * data.n_z, problem.n_actions), dtype=bool)
    seen[cell, a] = True
    per = (target * ~seen[cell]).sum(axis=1)
    missing = float(per.mean() if data.weights is None else
                    data.weights @ per / data.weights.sum())
    if missing > UNSUPPORTED_MASS:
        never = [problem.action_labels[k] for k in range(problem.n_actions)
                 if np.any(target[:, k] > 0) and not np.any(seen[:, k])]
        extra = f" (action(s) {never} never logged at all)" if never else ""
        warnings.warn(
            f"the evaluated policy puts {missing:.1%} of its probability on decisions "
            f"(cell, group, action) that were never logged{extra}: the logs say nothing "
            "about them, so importance-weighted estimates drop that mass and model-based "
            "ones extrapolate it. Treat the estimate as unsupported", stacklevel=3)
