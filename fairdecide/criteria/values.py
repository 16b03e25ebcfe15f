"""A policy's utility and deviations in every scenario, from the decision tables."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from fairdecide._common.deprecation import old_order
from fairdecide.criteria.base import Criterion, as_criteria
from fairdecide.exceptions import FairdecideError
from fairdecide.policies.base import Policy
from fairdecide.problem import DecisionProblem
from fairdecide.worlds.table import decision_table
from fairdecide.worlds.world import World

__all__ = ["scenario_values"]


def scenario_values(
    problem: DecisionProblem, worlds: Sequence[World], policy: Policy,
    criteria: Criterion | Sequence[Criterion] = (),
) -> tuple[np.ndarray, np.ndarray]:
    """Utility and every criterion's deviation of ``policy`` in each world, from the
    decision tables alone. The one place the library computes them: the optimiser's
    iterates, verification, :func:`~fairdecide.evaluate_under_belief` and the experiments
    call it.

    Parameters
    ----------
    problem : DecisionProblem
    worlds : sequence of World
        E.g. ``belief.worlds``, or ``[world]``.
    policy : Policy
    criteria : criterion, name or sequence of them, optional
        (The order ``(policy, worlds, problem, criteria)`` of earlier releases still
        works, with a DeprecationWarning.)

    Returns
    -------
    utility : ndarray of shape (K,)
    deviations : ndarray of shape (n_criteria, K)

    Examples
    --------
    >>> from fairdecide import Independence, TabularPolicy
    >>> from fairdecide.datasets import make_bail_problem
    >>> from fairdecide import scenario_values
    >>> problem, world = make_bail_problem()
    >>> U, F = scenario_values(problem, [world], TabularPolicy.constant(5, 2, [0, 1]),
    ...                        [Independence()])
    >>> U.shape, F.shape, float(F[0, 0])
    ((1,), (1, 1), 0.0)
    """
    problem, worlds, policy, criteria = old_order(
        "scenario_values", (problem, worlds, policy, criteria),
        ("problem", "worlds", "policy", "criteria"),
        ("policy", "worlds", "problem", "criteria"), DecisionProblem)
    U, F, _ = tables_values(policy, worlds, problem, as_criteria(criteria))
    return U, F


def tables_values(policy: Policy, worlds: Sequence[World], problem: DecisionProblem,
                  crits: list[Criterion]) -> tuple[np.ndarray, np.ndarray, float]:
    """:func:`scenario_values` and the largest error of the policy's rows off the
    simplex, read from the first world's table (verification checks it)."""
    if (isinstance(worlds, World | str | bytes) or not isinstance(worlds, Sequence)
            or not worlds):
        raise FairdecideError("worlds must be a non-empty sequence of worlds, e.g. "
                              "belief.worlds or [world]")
    U = np.zeros(len(worlds))
    F = np.zeros((len(crits), len(worlds)))
    row_error = 0.0
    for k, world in enumerate(worlds):
        table = decision_table(problem, world, policy)
        if k == 0:
            row_error = table.simplex_error()
        U[k] = table.utility(problem.utility)
        for c, crit in enumerate(crits):
            F[c, k] = crit.deviation_from_table(table, problem)
    if not (np.all(np.isfinite(U)) and np.all(np.isfinite(F))):
        raise FairdecideError("a utility or deviation is not finite: check the world's "
                              "probabilities and the criteria")
    return U, F, row_error
