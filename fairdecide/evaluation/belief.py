"""The distribution of a policy's utility and deviations across a belief's scenarios."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from fairdecide._common.deprecation import old_order
from fairdecide._common.tables import result_table
from fairdecide._common.validation import as_float_array, check_instance
from fairdecide.criteria.base import Criterion, as_criteria, resolve_names
from fairdecide.criteria.values import scenario_values
from fairdecide.exceptions import FairdecideError
from fairdecide.policies.base import Policy
from fairdecide.problem import DecisionProblem
from fairdecide.uncertainty.beliefs import Belief
from fairdecide.worlds.world import World

__all__ = ["BeliefEvaluation", "evaluate_under_belief"]


@dataclass(frozen=True)
class BeliefEvaluation:
    """Utility and deviations of one policy in every scenario of a belief.

    Attributes
    ----------
    values : DataFrame
        One row per scenario, columns ``utility`` and each criterion's name.
    weights : ndarray of shape (K,)
    """

    values: pd.DataFrame
    weights: np.ndarray

    def summary(self, quantiles: Sequence[float] = (0.05, 0.5, 0.95)) -> pd.DataFrame:
        """Weighted mean, standard deviation, minimum, maximum and quantiles per column.

        Examples
        --------
        >>> from fairdecide import Belief, Independence, TabularPolicy, evaluate_under_belief
        >>> from fairdecide.datasets import make_bail_problem
        >>> problem, world = make_bail_problem()
        >>> ev = evaluate_under_belief(problem, Belief.plug_in(world),
        ...                            TabularPolicy.constant(5, 2, [0, 1]), Independence())
        >>> float(ev.summary().loc["independence, TV summed vs pooled", "mean"])
        0.0
        """
        q = as_float_array(quantiles, "quantiles", ndim=1)
        if q.size == 0:
            raise FairdecideError("quantiles must hold at least one value in [0, 1]")
        if np.any((q < 0) | (q > 1)):
            raise FairdecideError(f"quantiles must lie in [0, 1], got {list(quantiles)}")
        rows = {}
        w = self.weights
        for col in self.values.columns:
            v = self.values[col].to_numpy()
            mean = float(w @ v)
            order = np.argsort(v, kind="stable")
            cum = np.cumsum(w[order])
            qs = {f"q{p:g}": float(v[order][min(np.searchsorted(cum, p - 1e-12),
                                                len(v) - 1)]) for p in q}
            rows[col] = {"mean": mean, "std": float(np.sqrt(w @ (v - mean) ** 2)),
                         "min": float(v.min()), **qs, "max": float(v.max())}
        return result_table(rows).T


def evaluate_under_belief(
    problem: DecisionProblem,
    belief: Belief | World,
    policy: Policy,
    criteria: Criterion | Sequence[Criterion] = (),
) -> BeliefEvaluation:
    """Evaluate ``policy`` in every scenario of ``belief``: the distribution of its utility
    and of each criterion's deviation under the belief.

    Parameters
    ----------
    problem : DecisionProblem
    belief : Belief or World
        A world counts as a belief of one scenario (``Belief.plug_in``).
    policy : Policy
    criteria : criterion, name or sequence of them, optional
        (The order ``(policy, belief, problem, criteria)`` of earlier releases still
        works, with a DeprecationWarning.)

    Returns
    -------
    BeliefEvaluation
        ``.values`` per scenario, ``.summary()`` for mean and quantiles.
    """
    problem, belief, policy, criteria = old_order(
        "evaluate_under_belief", (problem, belief, policy, criteria),
        ("problem", "belief", "policy", "criteria"),
        ("policy", "belief", "problem", "criteria"), DecisionProblem)
    if isinstance(belief, World):
        belief = Belief.plug_in(belief)
    if not isinstance(belief, Belief):
        raise FairdecideError(
            f"belief must be a Belief or a World such as TabularWorld, got "
            f"{type(belief).__name__}")
    check_instance(problem, "problem", DecisionProblem, "a DecisionProblem")
    crits = as_criteria(criteria)
    names = resolve_names(crits)
    U, F = scenario_values(problem, belief.worlds, policy, crits)
    values = pd.DataFrame({"utility": U, **{n: F[c] for c, n in enumerate(names)}})
    return BeliefEvaluation(values.rename_axis("scenario"), belief.weights)
