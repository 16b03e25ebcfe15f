"""A policy's off-policy value within each group, and the gaps between groups."""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from fairdecide._common.deprecation import DEPRECATED, old_order, renamed
from fairdecide._common.tables import result_table
from fairdecide._common.validation import as_real
from fairdecide.data.counts import LoggedCounts
from fairdecide.data.logged import BanditData, LoggedData
from fairdecide.evaluation.logged import warn_summary
from fairdecide.evaluation.offpolicy import _prepare
from fairdecide.evaluation.ope import OffPolicyInputs, ValueEstimate
from fairdecide.exceptions import FairdecideError
from fairdecide.problem import DecisionProblem

__all__ = ["GroupValues", "evaluate_policy_by_group"]


@dataclass(frozen=True)
class GroupValues:
    """A policy's estimated value overall and within each group, with the gaps.

    Attributes
    ----------
    overall : ValueEstimate
    groups : dict
        Group label (the data's label; the code for BanditData) -> ValueEstimate of
        E[U | z] (the method applied to that group's rows; nuisance models are fitted
        on all rows, cross-fitted), in code order.
    """

    overall: ValueEstimate
    groups: dict

    def gaps(self, level: float = 0.95) -> pd.DataFrame:
        """Every group's value minus the first group's (the reference), with standard
        errors (rows of different groups are disjoint: variances add) and normal
        intervals at ``level`` (in (0, 1)); groups are named by their labels.

        Examples
        --------
        >>> from fairdecide.evaluation import GroupValues, ValueEstimate
        >>> res = GroupValues(ValueEstimate(0.5, 0.01, "ips", 200),
        ...                   {0: ValueEstimate(0.4, 0.03, "ips", 100),
        ...                    1: ValueEstimate(0.6, 0.04, "ips", 100)})
        >>> res.gaps(level=0.95)[["gap", "std_error"]].round(3).to_dict("records")
        [{'gap': 0.2, 'std_error': 0.05}]
        """
        from scipy import stats

        level = as_real(level, "level", 0, 1, low_open=True, high_open=True)
        if len(self.groups) < 2:
            raise FairdecideError(
                f"gaps need at least two groups with rows; these values have "
                f"{len(self.groups)} (group {list(self.groups)})")
        z = float(stats.norm.ppf(0.5 + level / 2))
        keys = list(self.groups)
        ref = self.groups[keys[0]]
        rows = []
        for g in keys[1:]:
            est = self.groups[g]
            gap = est.value - ref.value
            se = float(np.hypot(est.std_error, ref.std_error))
            rows.append({"group": g, "reference": keys[0], "gap": gap, "std_error": se,
                         "low": gap - z * se, "high": gap + z * se})
        return result_table(rows)


def evaluate_policy_by_group(
    problem: DecisionProblem, data: LoggedData | BanditData, policy: Any,
    method: str | Any = "auto", *, outcome_model: Any = None, logging_model: Any = None,
    n_folds: int = 5, random_state: Any = None, estimator: Any = DEPRECATED,
) -> GroupValues:
    """Value of ``policy`` overall and per group (see :func:`evaluate_policy` for the
    arguments), with :meth:`GroupValues.gaps` between groups.

    ``estimator=`` is the deprecated name of ``method=``, and ``(data, policy, problem,
    method)`` the deprecated order: both still work, with a DeprecationWarning.

    Examples
    --------
    >>> from fairdecide import TabularPolicy
    >>> from fairdecide.datasets import make_bail_problem, sample_logged_data
    >>> from fairdecide.evaluation import evaluate_policy_by_group
    >>> problem, world = make_bail_problem()
    >>> data = sample_logged_data(problem, world, 4000, random_state=0)
    >>> res = evaluate_policy_by_group(problem, data, TabularPolicy.constant(5, 2, [0, 1]),
    ...                                "ips")
    >>> list(res.groups), list(res.gaps().columns)[:3]
    (['group A', 'group B'], ['group', 'reference', 'gap'])
    >>> res.gaps()[["group", "reference"]].to_dict("records")
    [{'group': 'group B', 'reference': 'group A'}]
    """
    problem, data, policy, method = old_order(
        "evaluate_policy_by_group", (problem, data, policy, method),
        ("problem", "data", "policy", "method"), ("data", "policy", "problem", "method"),
        DecisionProblem)
    method = renamed("evaluate_policy_by_group", "estimator", estimator, "method", method,
                     "auto")
    inputs, bandit, est = _prepare(data, policy, problem, method, outcome_model,
                                   logging_model, n_folds, random_state)
    z = bandit.z  # per row, or per atom of LoggedCounts
    names = None
    if isinstance(data, LoggedData | LoggedCounts):
        names = data.group_labels
        empty = [data.group_labels[g] for g in range(data.n_z) if not np.any(z == g)]
        if empty:
            warnings.warn(f"group(s) {empty} have no rows: their value cannot be estimated "
                          "and they are left out", stacklevel=2)
    groups = {}
    for g in np.unique(z):
        rows = z == g
        sub = OffPolicyInputs(
            inputs.reward[rows], inputs.action[rows], inputs.target[rows],
            None if inputs.propensity is None else inputs.propensity[rows],
            None if inputs.q is None else inputs.q[rows],
            None if inputs.weight is None else inputs.weight[rows])
        name = int(g) if names is None else names[int(g)]
        try:
            groups[name] = est.estimate(sub)
        except FairdecideError as exc:
            raise FairdecideError(f"group {name!r}: {exc}") from None
    overall = est.estimate(inputs)
    warn_summary(data, policy, problem, overall)
    return GroupValues(overall, groups)


