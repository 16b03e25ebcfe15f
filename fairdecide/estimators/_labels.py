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
family optimises in this world (:func:`label_world`) when a criterion reads the outcome
(:func:`reads_outcome`); with independence alone, whose deviation reads no label, in its
outcome model's world as before (its smoother utility overfits less on few rows). The
tabular and score families' cells hold the label frequencies of their training rows,
the same marginal when the rows are predicted through the cells they were counted in
(:func:`with_labels` for the score family's two binnings). Under
``uncertainty="worst"`` the labelled rows are one more scenario in every family.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fairdecide.criteria import Criterion
from fairdecide.criteria.base import ByCriterion, resolve_names
from fairdecide.problem import DecisionProblem
from fairdecide.uncertainty.beliefs import Belief
from fairdecide.worlds.sample import SampleWorld
from fairdecide.worlds.table import DecisionTable, decision_table, row_counts

__all__ = ["label_deviations", "label_world", "reads_outcome", "training_deviations",
           "with_labels", "world_deviations"]


def label_world(X: np.ndarray, z: np.ndarray, y: np.ndarray, n_groups: int,
                n_outcomes: int, weights: np.ndarray | None = None) -> SampleWorld:
    """The rows as units, each with the point mass on its label (module docstring);
    ``z`` and ``y`` codes, ``X`` what the policy reads."""
    return SampleWorld.from_codes(X, z, np.eye(n_outcomes)[y], weights,
                                  group_labels=tuple(range(n_groups)))


def with_labels(world: Any, labelled: Any, uncertainty: str) -> Any:
    """The estimator's world (or belief) with ``labelled``, the training rows with their
    labels in the units a prediction puts them in (:func:`label_world`; the score and
    tabular families' cells of the labelled rows), as one more scenario of a worst
    case, so that every tolerance holds on what the classifier predicts for its
    training rows (``deviation_``) as well as in the estimator's own world.

    ``world`` is the out-of-fold scores' bins (the score family's plug-in world: their
    outcome rates are honest for new rows, as each row is scored by a fit that did not
    see it, while a training row is predicted through the bin of the fold fits' mean
    score) or a belief's scenarios (bootstrap refits of the softmax family's outcome
    model, posterior draws of the tabular and score families' cells). The program
    holds every tolerance in both and maximises the worse utility (the labelled rows',
    from scores that saw them, is the optimistic one for the score family). A "worst"
    belief takes
    ``labelled`` as one more scenario; a "mean" belief keeps its mean and adds none
    (a mean deviation bounds no single world)."""
    if uncertainty == "plug-in":
        return Belief((world, labelled), aggregate="worst",
                      label="the estimated world and the labelled rows")
    if uncertainty == "worst":
        return Belief((*world.worlds, labelled), aggregate="worst",
                      label=f"{world.label} and the labelled rows")
    return world


def reads_outcome(criterion: Criterion) -> bool:
    """Whether a criterion's deviation reads the outcome: a conditional independence
    whose target or conditioning variable is the outcome (separation, sufficiency,
    ``"equalized_odds_difference"``; their public fields ``target`` and ``given``), not
    independence nor the criteria of the policy rows (Lipschitz, capacity)."""
    return "outcome" in (getattr(criterion, "target", None), getattr(criterion, "given", None))


def label_deviations(criteria: list[Criterion], problem: DecisionProblem, rows: np.ndarray,
                     y: np.ndarray, z: np.ndarray, n_groups: int,
                     weights: np.ndarray | None = None) -> dict[str, float]:
    """Each criterion's deviation of the empirical joint M[z, a, y] of the rows'
    action probabilities ``rows`` (n, n_actions) and their labels (module docstring),
    ``weights`` the rows' (default equal); criteria of the group marginal only."""
    weighted = rows if weights is None else rows * weights[:, None]
    table = DecisionTable.from_counts(row_counts(z, weighted, y, n_groups,
                                                 problem.n_outcomes))
    return ByCriterion({n: float(c.deviation_from_table(table, problem))
                        for n, c in zip(resolve_names(criteria), criteria, strict=True)})


def training_deviations(rule: Any, problem: DecisionProblem, rows: np.ndarray,
                        y: np.ndarray, z: np.ndarray, n_groups: int,
                        weights: np.ndarray | None = None) -> dict[str, float]:
    """A fitted classifier's ``deviation_``: each of the user's criteria
    (``rule.criteria``; not the score order the score family adds) on its training
    predictions ``rows``: those of the group marginal by :func:`label_deviations`; those
    of the policy rows (Lipschitz), which read no label, as the verified result reports
    them on the training units."""
    names = resolve_names(rule.criteria)
    on_marginal = [c.capabilities(problem).reads == "marginal" for c in rule.criteria]
    marginal = [c for c, m in zip(rule.criteria, on_marginal, strict=True) if m]
    values = iter(label_deviations(marginal, problem, rows, y, z, n_groups,
                                   weights).values())
    return ByCriterion({n: next(values) if m else rule.result.deviations[n]
                        for n, m in zip(names, on_marginal, strict=True)})


def world_deviations(rule: Any, problem: DecisionProblem) -> dict[str, float]:
    """A fitted intervention policy's ``deviation_``: each of the user's criteria on the
    decision table of its training predictions in its plug-in training world
    (``rule.world``), J[u, a, y] = w_u pi(a | u) P(y | a, u): the outcome a row would
    have had under an action other than its logged one was never observed, so
    P(y | a, u) is the fitted outcome model (softmax family) or the outcome frequencies
    of the cell's rows that took action a (tabular family). Independence reads no
    outcome: its value is exact on the training rows."""
    table = decision_table(problem, rule.world, rule.result.policy)
    return ByCriterion({n: float(c.deviation_from_table(table, problem))
                        for n, c in zip(resolve_names(rule.criteria), rule.criteria,
                                        strict=True)})
