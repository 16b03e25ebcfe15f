"""The world of the observed labels, and what epsilon bounds in a fitted classifier.

A prediction problem's criteria given the outcome (separation, sufficiency) compare rates
among those with each label. The estimators compute them on the training rows' own labels:
the world whose units are the rows, unit i with weight w_i (``sample_weight``, else 1/n)
and outcome distribution the point mass on its label,

    P(y | i) = [y = y_i],

so that the group marginal of a policy pi in it is

    M[z, a, y] = sum_i w_i pi(a | x_i, z_i) [z_i = z] [y_i = y] / sum_i w_i,

the empirical joint of the rows' predictions and labels: the marginal of which
``deviation_`` reports each criterion's deviation (:func:`label_deviations`). The softmax
family optimises in this world (:func:`label_world`; with ``uncertainty="worst"`` it is
one scenario beside the outcome model's bootstrap refits, so that the worst case bounds
it too); the tabular and score families' cells hold the label frequencies of their
training rows, the same marginal when the rows are predicted through the cells they
were counted in.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fairdecide.criteria import Criterion
from fairdecide.problem import DecisionProblem
from fairdecide.sample_world import SampleWorld
from fairdecide.table import DecisionTable, row_counts

__all__ = ["label_deviations", "label_world", "training_deviations", "world_deviations"]


def label_world(X: np.ndarray, z: np.ndarray, y: np.ndarray, n_groups: int,
                n_outcomes: int, weights: np.ndarray | None = None) -> SampleWorld:
    """The rows as units, each with the point mass on its label (module docstring);
    ``z`` and ``y`` codes, ``X`` what the policy reads."""
    return SampleWorld.from_codes(X, z, np.eye(n_outcomes)[y], weights,
                                  group_labels=tuple(range(n_groups)))


def label_deviations(criteria: list[Criterion], problem: DecisionProblem, rows: np.ndarray,
                     y: np.ndarray, z: np.ndarray, n_groups: int,
                     weights: np.ndarray | None = None) -> dict[str, float]:
    """Each criterion's deviation of the empirical joint M[z, a, y] of the rows'
    action probabilities ``rows`` (n, n_actions) and their labels (module docstring),
    ``weights`` the rows' (default equal); criteria of the group marginal only."""
    weighted = rows if weights is None else rows * weights[:, None]
    table = DecisionTable.from_counts(row_counts(z, weighted, y, n_groups,
                                                 problem.n_outcomes))
    return {c.label: float(c.deviation_from_table(table, problem)) for c in criteria}


def training_deviations(rule: Any, problem: DecisionProblem, rows: np.ndarray,
                        y: np.ndarray, z: np.ndarray, n_groups: int,
                        weights: np.ndarray | None = None) -> dict[str, float]:
    """A fitted classifier's ``deviation_``: each of the user's criteria
    (``rule.criteria``; not the score order the score family adds) on its training
    predictions ``rows``: those of the group marginal by :func:`label_deviations`; those
    of the policy rows (Lipschitz), which read no label, as the verified result reports
    them on the training units."""
    marginal = [c for c in rule.criteria if c.capabilities(problem).reads == "marginal"]
    out = label_deviations(marginal, problem, rows, y, z, n_groups, weights)
    return {c.label: out.get(c.label, rule.result.deviations[c.label])
            for c in rule.criteria}


def world_deviations(rule: Any, problem: DecisionProblem) -> dict[str, float]:
    """A fitted intervention policy's ``deviation_``: each of the user's criteria on the
    decision table of its training predictions in its plug-in training world
    (``rule.world``), J[u, a, y] = w_u pi(a | u) P(y | a, u): the outcome a row would
    have had under an action other than its logged one was never observed, so
    P(y | a, u) is the fitted outcome model (softmax family) or the outcome frequencies
    of the cell's rows that took action a (tabular family). Independence reads no
    outcome: its value is exact on the training rows."""
    from fairdecide.table import decision_table

    table = decision_table(rule.result.policy, rule.world, problem)
    return {c.label: float(c.deviation_from_table(table, problem)) for c in rule.criteria}
