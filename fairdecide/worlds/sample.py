"""A world of individuals: features, groups, weights and outcome probabilities per person.

The units are the individuals themselves (not cells): unit i has features X[i], group
z[i], weight w[i] (default 1/n) and outcome probabilities P(y | a, i). Every part of the
library that reads worlds through the World protocol (decision tables, criteria,
beliefs, verification, the optimiser) takes it unchanged. Its free policy family is
:class:`~fairdecide.policies.IndividualPolicy`, one row per individual (the
fixed-population program); policies that generalise to unseen people read the features.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from fairdecide._common.validation import as_float_array, check_distribution, check_instance
from fairdecide.data.units import Units
from fairdecide.exceptions import FairdecideError
from fairdecide.labels import Labels
from fairdecide.policies.individual import IndividualPolicy
from fairdecide.problem import DecisionProblem
from fairdecide.worlds.world import World

__all__ = ["SampleWorld"]


class SampleWorld(World):
    """A known population of individuals.

    Parameters
    ----------
    X : array-like of shape (n, d)
        Features of each individual (what feature-reading policies see).
    z : array-like of shape (n,)
        Group of each individual (any labels; sorted distinct values unless
        ``group_labels`` is given).
    p_y : array-like of shape (n, n_actions, n_outcomes) or (n, n_outcomes)
        P(y | a, i) for each individual; the 2-d form when the outcome does not depend on
        the action (prediction problems).
    weights : array-like of shape (n,), optional
        Non-negative weights (normalised to sum to one); default 1/n each.
    group_labels : sequence, optional
        The labels of the groups, in code order.

    Examples
    --------
    >>> from fairdecide import DecisionProblem, Independence, SampleWorld, optimize_policy
    >>> problem = DecisionProblem.classification(2)
    >>> world = SampleWorld(X=[[0.1], [0.9], [0.2], [0.8]], z=["a", "a", "b", "b"],
    ...                     p_y=[[0.9, 0.1], [0.2, 0.8], [0.7, 0.3], [0.6, 0.4]])
    >>> world.n, world.group_labels, world.outcome_depends_on_action
    (4, ('a', 'b'), False)
    >>> res = optimize_policy(problem, world, Independence(), epsilon=0.0)
    >>> res.status, round(res.utility, 4), round(res.deviations["independence"], 6)
    ('optimal', 0.7, 0.0)
    """

    def __init__(self, X: Any, z: Any, p_y: Any, weights: Any = None, *,
                 group_labels: Sequence[Any] | None = None) -> None:
        X = as_float_array(X, "X", ndim=(1, 2))
        if X.ndim == 1:
            X = X[:, None]
        n = len(X)
        if n == 0:
            raise FairdecideError("X has no rows: a SampleWorld needs individuals")
        codes, labels = Labels.factorize(z, "z", group_labels)
        if len(codes) != n:
            raise FairdecideError(f"z has {len(codes)} entries but X has {n} rows")
        self._build(X, codes, labels, p_y, weights)

    @classmethod
    def from_codes(cls, X: np.ndarray, z: np.ndarray, p_y: Any, weights: Any = None, *,
                   group_labels: Sequence[Any]) -> SampleWorld:
        """A world of individuals already checked: ``X`` a finite (n, d) float array and
        ``z`` their group codes into ``group_labels`` (as a fitted model holds them); only
        ``p_y`` and ``weights`` are checked."""
        world = cls.__new__(cls)
        world._build(X, z, Labels.trusted(group_labels), p_y, weights)
        return world

    def _build(self, X: np.ndarray, codes: np.ndarray, labels: Labels, p_y: Any,
               weights: Any) -> None:
        n = len(X)
        py = as_float_array(p_y, "p_y", ndim=(2, 3))
        if len(py) != n:
            raise FairdecideError(f"p_y has {len(py)} rows but X has {n}")
        self.p_y = check_distribution(py, "p_y", axes=(py.ndim - 1,))
        if weights is None:
            w = np.full(n, 1.0 / n)
        else:
            w = as_float_array(weights, "weights", ndim=1)
            if w.shape != (n,) or np.any(w < 0) or w.sum() <= 0:
                raise FairdecideError(
                    f"weights must be {n} non-negative numbers, not all zero")
            w = w / w.sum()
        mass = np.bincount(codes, weights=w, minlength=len(labels))
        if np.any(mass <= 0):
            empty = [labels[g] for g in np.flatnonzero(mass <= 0)]
            raise FairdecideError(
                f"group(s) {empty} have no weight: an empty group makes every fairness "
                "criterion vacuous; drop it from group_labels")
        self.X, self.z, self.weights = X, codes, w
        self.group_labels = labels
        self._units = Units(group=codes, n_groups=len(labels), features=X,
                            group_labels=labels)

    @property
    def n(self) -> int:
        """Number of individuals."""
        return len(self.X)

    @property
    def outcome_depends_on_action(self) -> bool:
        """True when p_y has an action axis."""
        return self.p_y.ndim == 3

    @property
    def n_outcomes(self) -> int:
        """Number of outcomes."""
        return self.p_y.shape[-1]

    def free_policy(self) -> type:
        """The free policy family of individuals: one row per person."""
        return IndividualPolicy

    def check_problem(self, problem: DecisionProblem) -> None:
        """Raise unless the outcome axis (and action axis, if any) fits ``problem``."""
        check_instance(problem, "problem", DecisionProblem, "a DecisionProblem")
        if self.n_outcomes != problem.n_outcomes:
            raise FairdecideError(
                f"world has {self.n_outcomes} outcomes but problem has {problem.n_outcomes}")
        # an action-free p_y is also a valid world for an intervention (y ignores a)
        if self.outcome_depends_on_action and self.p_y.shape[1] != problem.n_actions:
            raise FairdecideError(
                f"p_y has {self.p_y.shape[1]} actions but problem has {problem.n_actions}")
        if self.outcome_depends_on_action and not problem.outcome_depends_on_action:
            spread = np.abs(self.p_y - self.p_y[:, :1]).max()
            if spread > 1e-9:
                raise FairdecideError(
                    "problem says the outcome does not depend on the action, but p_y "
                    "varies with the action; set outcome_depends_on_action=True")

    def outcome_shape(self) -> tuple[int, ...]:
        """The shape of ``p_y``."""
        return self.p_y.shape

    def units(self) -> Units:
        """The individuals as units: groups and features."""
        return self._units

    def unit_weights(self) -> np.ndarray:
        """The individuals' weights, summing to one."""
        return self.weights

    def unit_outcomes(self, problem: DecisionProblem) -> np.ndarray:
        """P(y | a, i), shape (n, n_actions, n_outcomes)."""
        self.check_problem(problem)
        if self.outcome_depends_on_action:
            return self.p_y
        return np.broadcast_to(self.p_y[:, None, :],
                               (self.n, problem.n_actions, self.n_outcomes))

    def with_outcomes(self, p_y: Any) -> SampleWorld:
        """The same individuals with other outcome probabilities (a scenario of a
        belief)."""
        return SampleWorld.from_codes(self.X, self.z, p_y, self.weights,
                                      group_labels=self.group_labels)

    def __repr__(self) -> str:
        kind = "P(y|a,i)" if self.outcome_depends_on_action else "P(y|i)"
        return (f"SampleWorld(n={self.n}, features={self.X.shape[1]}, "
                f"groups={len(self.group_labels)}, outcomes={self.n_outcomes}, {kind})")
