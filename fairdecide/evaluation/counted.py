"""Off-policy inputs from counts: the estimators' tabular forms on a LoggedCounts.

Each atom (a distinct cell, group, action, outcome and known propensity) becomes one
entry of :class:`~fairdecide.evaluation.OffPolicyInputs` weighted by its number of rows,
so every estimate is the one on the expanded rows. The nuisances are functions of the
counts:

- propensities: the known ones, else the cells' in-sample action frequencies, exactly as
  on rows for ``ips`` and ``snips`` (with the cell-mean rewards for the efficient
  influence function);
- outcome values for ``dm`` and ``dr``: the saturated cell model
  (:class:`~fairdecide.models.outcome.CellFrequencies`) fitted in-sample to the weighted
  atoms (a known World if given), and for ``dr`` without known propensities the smoothed
  cell frequencies of the actions. On rows these models are cross-fitted over random
  folds, which a table of counts cannot reproduce; with a saturated model the in-sample
  fit is consistent and its bias is of order cells / n.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fairdecide.evaluation.ope import (
    DirectMethod,
    DoublyRobust,
    FullInformation,
    InverseProbability,
    OffPolicyInputs,
    SelfNormalized,
)
from fairdecide.exceptions import FairdecideError
from fairdecide.models.outcome import CellFrequencies
from fairdecide.policies import as_policy
from fairdecide.policies.adapters import check_rows
from fairdecide.problem import DecisionProblem
from fairdecide.worlds.world import World

__all__ = ["prepare_counts"]


def _frequencies(cells: np.ndarray, labels: np.ndarray, c: np.ndarray, n_cells: int,
                 n_classes: int, smoothing: float | None) -> np.ndarray:
    """P(label | cell) of every atom's cell: in-sample, weighted by the counts; raw
    frequencies (``smoothing`` None) or the smoothed CellFrequencies."""
    if smoothing is None:
        counts = np.zeros((n_cells, n_classes))
        np.add.at(counts, (cells, labels), c)
        return (counts / np.maximum(counts.sum(axis=1, keepdims=True), 1e-300))[cells]
    model = CellFrequencies(n_cells, n_classes, smoothing)
    return model.fit(cells[:, None], labels, sample_weight=c).predict_proba(cells[:, None])


def _outcome_values(data: Any, cells: np.ndarray, a: np.ndarray, y: np.ndarray,
                    problem: DecisionProblem, n_cells: int, world: Any, units: Any
                    ) -> np.ndarray:
    U = problem.utility
    if world is not None:
        return np.einsum("nay,ay->na", world.outcome_proba(units, problem), U)
    c = data.weights
    if not problem.outcome_depends_on_action:
        return _frequencies(cells, y, c, n_cells, problem.n_outcomes, 0.5) @ U.T
    q = np.zeros((len(c), problem.n_actions))
    for k in range(problem.n_actions):
        took = a == k
        if not np.any(took):
            raise FairdecideError(
                f"action {problem.action_labels[k]!r} was never logged: its outcomes "
                "cannot be modelled; use method='ips' or 'snips'")
        model = CellFrequencies(n_cells, problem.n_outcomes, 0.5)
        model.fit(cells[took, None], y[took], sample_weight=c[took])
        q[:, k] = model.predict_proba(cells[:, None]) @ U[k]
    return q


def prepare_counts(data: Any, policy: Any, problem: DecisionProblem, est: Any,
                   outcome_model: Any, logging_model: Any) -> OffPolicyInputs:
    """The weighted inputs of ``est`` on the atoms of ``data`` (see the module
    docstring)."""
    if logging_model is not None:
        raise FairdecideError(
            "logging_model: on LoggedCounts the logging policy is the known propensities "
            "or the cells' action frequencies; a classifier needs the rows (LoggedData)")
    if outcome_model is not None and not isinstance(outcome_model, World):
        raise FairdecideError(
            "outcome_model: on LoggedCounts it must be a known World (or None for the "
            "saturated cell model); a classifier needs the rows (LoggedData)")
    units = data.units()
    target = check_rows(as_policy(policy, problem).proba(units), units.n,
                        problem.n_actions)
    y = data.outcome_codes(problem)
    a = data.action_codes(problem)
    full = isinstance(est, FullInformation)
    if a is None:
        if not full:
            raise FairdecideError(
                "the data have no logged actions: only the full-information estimate of a "
                "prediction problem (method='full' or 'auto') works without them")
        a = np.zeros(len(y), dtype=int)
    c = data.weights
    cells = units.cell_group
    n_cells = units.n_cells * units.n_groups
    reward = problem.utility[a, y]
    propensity, q = data.propensity, None
    if full:
        if problem.outcome_depends_on_action:
            raise FairdecideError(
                "the full-information estimate needs a prediction problem (an outcome that "
                "does not depend on the action); use 'dr'")
        q = problem.utility[:, y].T
    elif isinstance(est, DirectMethod | DoublyRobust):
        q = _outcome_values(data, cells, a, y, problem, n_cells, outcome_model, units)
        if propensity is None and isinstance(est, DoublyRobust):
            propensity = _frequencies(cells, a, c, n_cells, problem.n_actions,
                                      0.5)[np.arange(len(a)), a]
    elif propensity is None and isinstance(est, InverseProbability | SelfNormalized):
        propensity = _frequencies(cells, a, c, n_cells, problem.n_actions,
                                  None)[np.arange(len(a)), a]
        sums = np.zeros((n_cells, problem.n_actions))
        counts = np.zeros_like(sums)
        np.add.at(sums, (cells, a), c * reward)
        np.add.at(counts, (cells, a), c)
        q = (sums / np.maximum(counts, 1.0))[cells]
    elif propensity is None:
        raise FairdecideError(
            f"the {getattr(est, 'name', type(est).__name__)} estimator on LoggedCounts "
            "needs known propensities")
    taken = target[np.arange(len(a)), a]
    if propensity is not None and not isinstance(est, DirectMethod | FullInformation) \
            and np.all(taken == 0):
        raise FairdecideError(
            "the evaluated policy never takes any logged action: the data say nothing "
            "about it (no overlap). Use a model-based method (method='dm')")
    return OffPolicyInputs(reward, a, target, propensity, q, weight=c)
