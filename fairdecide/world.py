"""Worlds (the parameter theta) and the decision table they induce with a policy.

The decision table is the one object everything is computed from::

    J[u, a, y] = w[u] * pi(a | u) * P(y | a, u)

over units u. For a tabular world the units are the cells (x, z), flattened x-major
(u = x * n_z + z), with weight w = P(x, z).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from fairdecide._validation import as_float_array, check_distribution
from fairdecide.exceptions import FairdecideError
from fairdecide.problem import DecisionProblem

if TYPE_CHECKING:
    from fairdecide.data import LoggedData
    from fairdecide.policies import TabularPolicy

__all__ = ["DecisionTable", "TabularWorld", "decision_table", "expected_utility"]


class TabularWorld:
    """A known world over discrete features: P(x, z) and P(y | a, x, z).

    Parameters
    ----------
    p_xz : array-like of shape (n_x, n_z)
        Joint distribution of feature cell and group. Non-negative, sums to one; every
        group must have positive probability.
    p_y : array-like of shape (n_x, n_z, n_actions, n_outcomes) or (n_x, n_z, n_outcomes)
        Outcome distribution given action and cell, or given the cell alone when the
        outcome does not depend on the action (prediction problems). Each distribution
        over outcomes sums to one, including in cells of probability zero.
    x_labels, group_labels : sequence, optional
        Names of the cells and groups, used in tables.

    Examples
    --------
    >>> import numpy as np
    >>> from fairdecide import TabularWorld
    >>> world = TabularWorld(p_xz=[[0.3, 0.2], [0.1, 0.4]],
    ...                      p_y=[[[0.9, 0.1], [0.5, 0.5]], [[0.2, 0.8], [0.4, 0.6]]])
    >>> world.n_x, world.n_z, world.outcome_depends_on_action
    (2, 2, False)
    >>> world.p_z
    array([0.4, 0.6])
    """

    def __init__(
        self,
        p_xz: Any,
        p_y: Any,
        *,
        x_labels: Sequence[Any] | None = None,
        group_labels: Sequence[Any] | None = None,
    ) -> None:
        pxz = as_float_array(p_xz, "p_xz", ndim=2)
        py = as_float_array(p_y, "p_y", ndim=(3, 4))
        if py.shape[:2] != pxz.shape:
            raise FairdecideError(
                f"p_y must start with the shape of p_xz {pxz.shape}, got {py.shape}"
            )
        self.p_xz = check_distribution(pxz, "p_xz", axes=(0, 1))
        self.p_y = check_distribution(py, "p_y", axes=(py.ndim - 1,))
        empty = np.flatnonzero(self.p_xz.sum(axis=0) <= 0)
        if empty.size:
            raise FairdecideError(
                f"group(s) {empty.tolist()} have probability zero in p_xz; an empty group "
                "makes every fairness criterion vacuous. Drop the group or supply its data"
            )
        self.x_labels = tuple(range(self.n_x)) if x_labels is None else tuple(x_labels)
        self.group_labels = tuple(range(self.n_z)) if group_labels is None else tuple(group_labels)
        if len(self.x_labels) != self.n_x or len(self.group_labels) != self.n_z:
            raise FairdecideError(
                f"x_labels/group_labels lengths ({len(self.x_labels)}, {len(self.group_labels)})"
                f" must match p_xz shape {self.p_xz.shape}"
            )

    @classmethod
    def from_data(
        cls, data: LoggedData, problem: DecisionProblem, smoothing: float = 0.0
    ) -> TabularWorld:
        """Maximum-likelihood (optionally smoothed) world from logged data.

        With counts n(x, z), n(x, z, a, y) and additive smoothing alpha >= 0::

            P(x, z)        = (n(x, z) + alpha) / (n + alpha * n_x * n_z)
            P(y | a, x, z) = (n(x, z, a, y) + alpha) / (n(x, z, a) + alpha * n_outcomes)

        (without ``a`` for prediction problems). A cell-action pair never observed, with
        ``alpha = 0``, gets the pooled outcome frequencies of that action over all cells;
        an action never observed at all gets the uniform outcome distribution (with a
        warning). Such cells have P(x, z) = 0 unless smoothing is used, so they do not
        affect utility or fairness, but they never produce NaNs.

        Parameters
        ----------
        data : LoggedData
        problem : DecisionProblem
            Outcomes (and actions) of the data are matched to it by label.
        smoothing : float, default=0.0
            Additive (Laplace/Lidstone) smoothing alpha.
        """
        from fairdecide.models.counts import TabularCounts

        return TabularCounts.from_data(data, problem).mle_world(smoothing)

    @property
    def n_x(self) -> int:
        """Number of feature cells."""
        return self.p_xz.shape[0]

    @property
    def n_z(self) -> int:
        """Number of groups."""
        return self.p_xz.shape[1]

    @property
    def n_outcomes(self) -> int:
        """Number of outcomes."""
        return self.p_y.shape[-1]

    @property
    def outcome_depends_on_action(self) -> bool:
        """Whether ``p_y`` has an action axis."""
        return self.p_y.ndim == 4

    @property
    def p_z(self) -> np.ndarray:
        """Group probabilities P(z), shape (n_z,)."""
        return self.p_xz.sum(axis=0)

    def outcome_table(self, n_actions: int) -> np.ndarray:
        """P(y | a, x, z) with an action axis, shape (n_x, n_z, n_actions, n_outcomes)."""
        if self.outcome_depends_on_action:
            return self.p_y
        return np.broadcast_to(
            self.p_y[:, :, None, :], (self.n_x, self.n_z, n_actions, self.n_outcomes)
        )

    def check_problem(self, problem: DecisionProblem) -> None:
        """Raise if the world's shapes do not fit ``problem``."""
        if self.n_outcomes != problem.n_outcomes:
            raise FairdecideError(
                f"world has {self.n_outcomes} outcomes but problem has {problem.n_outcomes}"
            )
        if self.outcome_depends_on_action:
            if self.p_y.shape[2] != problem.n_actions:
                raise FairdecideError(
                    f"world has {self.p_y.shape[2]} actions but problem has {problem.n_actions}"
                )
            if not problem.outcome_depends_on_action and not np.allclose(
                self.p_y, self.p_y[:, :, :1, :]
            ):
                raise FairdecideError(
                    "problem says the outcome does not depend on the action, but the world's "
                    "p_y varies with the action; set outcome_depends_on_action=True"
                )

    def units(self, problem: DecisionProblem) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Unit weights (n_u,), groups (n_u,) and P(y | a, u) (n_u, n_a, n_y), x-major."""
        self.check_problem(problem)
        w = self.p_xz.reshape(-1)
        group = np.tile(np.arange(self.n_z), self.n_x)
        p_y = self.outcome_table(problem.n_actions).reshape(
            self.n_x * self.n_z, problem.n_actions, self.n_outcomes
        )
        return w, group, p_y

    def __repr__(self) -> str:
        kind = "P(y|a,x,z)" if self.outcome_depends_on_action else "P(y|x,z)"
        return f"TabularWorld(n_x={self.n_x}, n_z={self.n_z}, outcomes={self.n_outcomes}, {kind})"


@dataclass(frozen=True)
class DecisionTable:
    """The joint J[u, a, y] = w[u] pi(a | u) P(y | a, u) with each unit's group.

    Attributes
    ----------
    joint : ndarray of shape (n_units, n_actions, n_outcomes)
    group : ndarray of int, shape (n_units,)
    n_groups : int
    """

    joint: np.ndarray
    group: np.ndarray
    n_groups: int

    def group_marginal(self) -> np.ndarray:
        """P(z, a, y): the table summed within each group, shape (n_groups, n_a, n_y)."""
        n_a, n_y = self.joint.shape[1:]
        flat = self.joint.reshape(len(self.group), -1)
        out = np.zeros((self.n_groups, n_a * n_y))
        for g in range(self.n_groups):
            out[g] = flat[self.group == g].sum(axis=0)
        return out.reshape(self.n_groups, n_a, n_y)

    def utility(self, utility: np.ndarray) -> float:
        """Expected utility sum_{u,a,y} J[u,a,y] U[a,y]."""
        return float(np.einsum("uay,ay->", self.joint, utility))


def decision_table(
    policy: TabularPolicy, world: TabularWorld, problem: DecisionProblem
) -> DecisionTable:
    """The decision table of a tabular policy in a tabular world.

    Examples
    --------
    >>> from fairdecide import DecisionProblem, TabularPolicy, decision_table
    >>> from fairdecide.datasets import make_bail_problem
    >>> problem, world = make_bail_problem()
    >>> policy = TabularPolicy.constant(world.n_x, world.n_z, [0.5, 0.5])
    >>> J = decision_table(policy, world, problem)
    >>> round(float(J.joint.sum()), 12)
    1.0
    """
    _check_policy_fits(policy, world, problem)
    w, group, p_y = world.units(problem)
    pi = policy.table.reshape(-1, problem.n_actions)
    joint = w[:, None, None] * pi[:, :, None] * p_y
    return DecisionTable(joint=joint, group=group, n_groups=world.n_z)


def expected_utility(
    policy: TabularPolicy, world: TabularWorld, problem: DecisionProblem
) -> float:
    """Expected utility E[U] = sum_{x,z,a,y} P(x,z) pi(a|x,z) P(y|a,x,z) U(a,y).

    Examples
    --------
    >>> from fairdecide import TabularPolicy, expected_utility
    >>> from fairdecide.datasets import make_bail_problem
    >>> problem, world = make_bail_problem()
    >>> detain_all = TabularPolicy.constant(world.n_x, world.n_z, [1.0, 0.0])
    >>> expected_utility(detain_all, world, problem)
    0.0
    """
    return decision_table(policy, world, problem).utility(problem.utility)


def _check_policy_fits(policy: Any, world: TabularWorld, problem: DecisionProblem) -> None:
    table = getattr(policy, "table", None)
    if table is None:
        raise FairdecideError(f"policy must be a TabularPolicy, got {type(policy).__name__}")
    want = (world.n_x, world.n_z, problem.n_actions)
    if table.shape != want:
        raise FairdecideError(
            f"policy table has shape {table.shape} but world and problem need {want} "
            "(n_x, n_z, n_actions)"
        )
