"""The decision table of a policy in a world, and everything computed from it.

    J[u, a, y] = w[u] * pi(a | u) * P(y | a, u)

Expected utility, every criterion's deviation and the verification of optimised policies
are functions of this one table (:func:`fairdecide.criteria.values.scenario_values` computes them
in every scenario of a belief).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from fairdecide._common.deprecation import old_order
from fairdecide._common.validation import check_instance
from fairdecide.data.units import Units
from fairdecide.exceptions import FairdecideError
from fairdecide.policies.base import Policy
from fairdecide.problem import DecisionProblem
from fairdecide.worlds.world import World, world_arrays

__all__ = ["DecisionTable", "decision_table", "expected_utility", "marginal_utility",
           "row_counts", "scenario_marginals"]


@dataclass(frozen=True, eq=False)
class DecisionTable:
    """The joint J[u, a, y] = w[u] pi(a | u) P(y | a, u) with each unit's group.

    Attributes
    ----------
    joint : ndarray of shape (n_units, n_actions, n_outcomes)
    group : ndarray of int, shape (n_units,)
    n_groups : int
    rows : ndarray of shape (n_units, n_actions), optional
        The policy's rows pi(. | u), for criteria that read them (individual fairness).
    units : Units, optional
        What the policy read of each unit (cells, features).
    """

    joint: np.ndarray
    group: np.ndarray
    n_groups: int
    rows: np.ndarray | None = None
    units: Units | None = None
    row_error: float | None = None

    @classmethod
    def from_marginal(cls, M: np.ndarray) -> DecisionTable:
        """A table whose units are the groups themselves, J[z, a, y] = M[z, a, y]: enough
        for every criterion that reads only the group marginal (estimates from logs)."""
        M = np.asarray(M, dtype=float)
        if M.ndim != 3 or not np.all(np.isfinite(M)) or np.any(M < 0):
            raise FairdecideError(
                "a group marginal P(z, a, y) must be a finite, non-negative array of shape "
                f"(n_groups, n_actions, n_outcomes), got shape {M.shape}")
        return cls(joint=M, group=np.arange(M.shape[0]), n_groups=M.shape[0])

    @classmethod
    def from_counts(cls, counts: np.ndarray) -> DecisionTable:
        """The table of a count table n(z, a, y) (logged decisions, or weighted rows):
        :meth:`from_marginal` of n / sum(n).

        Examples
        --------
        >>> from fairdecide import DecisionTable
        >>> DecisionTable.from_counts([[[3, 1], [0, 0]], [[1, 1], [2, 2]]]).joint[0, 0]
        array([0.3, 0.1])
        """
        n = np.asarray(counts, dtype=float)
        total = float(n.sum()) if n.size and np.all(np.isfinite(n)) else np.nan
        if not total > 0:
            raise FairdecideError(
                "counts n(z, a, y) must be finite and non-negative with a positive total, "
                f"got shape {n.shape} and total {total}")
        return cls.from_marginal(n / total)

    def simplex_error(self) -> float:
        """The largest error of a policy row off the simplex (a negative entry or a row
        sum other than one): from :attr:`rows`, or ``row_error`` where the world summed
        the table without keeping the rows (0 if neither is known)."""
        if self.rows is not None:
            return float(max(np.max(np.abs(self.rows.sum(axis=1) - 1.0), initial=0.0),
                             -min(float(self.rows.min(initial=0.0)), 0.0)))
        return float(self.row_error or 0.0)

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
        return float(marginal_utility(self.joint, utility))


def _check_pair(policy: Any, world: Any, problem: Any) -> None:
    check_instance(problem, "problem", DecisionProblem, "a DecisionProblem")
    if not isinstance(world, World):
        raise FairdecideError(
            f"world must be a World such as TabularWorld, got {type(world).__name__}")
    if not isinstance(policy, Policy):
        raise FairdecideError(
            f"policy must be a fairdecide Policy such as TabularPolicy, got "
            f"{type(policy).__name__}")


def decision_table(problem: DecisionProblem, world: World, policy: Policy) -> DecisionTable:
    """The decision table of ``policy`` in ``world``.

    Parameters
    ----------
    problem : DecisionProblem
    world : World
    policy : Policy
        (The order ``(policy, world, problem)`` of earlier releases still works, with a
        DeprecationWarning.)

    Examples
    --------
    >>> from fairdecide import DecisionProblem, TabularPolicy, decision_table
    >>> from fairdecide.datasets import make_bail_problem
    >>> problem, world = make_bail_problem()
    >>> policy = TabularPolicy.constant(world.n_x, world.n_z, [0.5, 0.5])
    >>> J = decision_table(problem, world, policy)
    >>> round(float(J.joint.sum()), 12)
    1.0
    """
    problem, world, policy = old_order("decision_table", (problem, world, policy),
                                       ("problem", "world", "policy"),
                                       ("policy", "world", "problem"), DecisionProblem)
    _check_pair(policy, world, problem)
    if policy.n_actions != problem.n_actions:
        raise FairdecideError(
            f"policy has {policy.n_actions} actions but the problem has {problem.n_actions}")
    if not world.units_in_memory:  # a world that sums its table by group
        return world.summed_table(policy, problem)
    units, w, p_y = world_arrays(world, problem)
    pi = policy.proba(units)
    joint = w[:, None, None] * pi[:, :, None] * p_y
    return DecisionTable(joint=joint, group=units.group, n_groups=units.n_groups, rows=pi,
                         units=units)


def scenario_marginals(p_xz: np.ndarray, rows: np.ndarray, p_y: np.ndarray) -> np.ndarray:
    """The group marginals of a tabular policy in K scenarios of a tabular world:

        M_k[z, a, y] = sum_x P_k(x, z) pi(a | x, z) P_k(y | [a,] x, z)

    ``p_xz`` (K, n_x, n_z), ``rows`` pi (n_x, n_z, n_a), ``p_y`` (K, n_x, n_z, n_y) in a
    prediction problem or (K, n_x, n_z, n_a, n_y) in an intervention; the result has shape
    (K, n_z, n_a, n_y), and each M_k is what :meth:`DecisionTable.group_marginal` gives
    for scenario k (the experiments' and scenario SGD's many scenarios at once).
    """
    if p_y.ndim == 4:
        return np.einsum("kxz,xza,kxzy->kzay", p_xz, rows, p_y)
    return np.einsum("kxz,xza,kxzay->kzay", p_xz, rows, p_y)


def row_counts(z: np.ndarray, rows: np.ndarray, y: np.ndarray, n_groups: int,
               n_outcomes: int) -> np.ndarray:
    """The counts of individual rows, decisions as probabilities:

        n(z, a, y) = sum_i pi(a | x_i) [z_i = z, y_i = y]

    ``z``, ``y`` codes (n,), ``rows`` pi(. | x_i) (n, n_a); one-hot rows count decisions
    taken. :meth:`DecisionTable.from_counts` of them is the rows' group marginal (the
    scorers', the displays')."""
    out = np.zeros((n_groups, rows.shape[1], n_outcomes))
    np.add.at(out, (z, slice(None), y), rows)
    return out


def marginal_utility(M: np.ndarray, utility: np.ndarray) -> np.ndarray:
    """Expected utility of a table over (units or groups, actions, outcomes):

        E[U] = sum_{z,a,y} M[..., z, a, y] U[a, y]

    one number per leading index (scenarios), a 0-d array for one table."""
    return np.einsum("...zay,ay->...", M, np.asarray(utility, dtype=float))


def expected_utility(problem: DecisionProblem, world: World, policy: Policy) -> float:
    """Expected utility E[U] = sum_{u,a,y} w[u] pi(a|u) P(y|a,u) U(a,y).

    Parameters
    ----------
    problem : DecisionProblem
    world : World
    policy : Policy
        (The order ``(policy, world, problem)`` of earlier releases still works, with a
        DeprecationWarning.)

    Examples
    --------
    >>> from fairdecide import TabularPolicy, expected_utility
    >>> from fairdecide.datasets import make_bail_problem
    >>> problem, world = make_bail_problem()
    >>> detain_all = TabularPolicy.constant(world.n_x, world.n_z, [1.0, 0.0])
    >>> expected_utility(problem, world, detain_all)
    0.0
    """
    problem, world, policy = old_order("expected_utility", (problem, world, policy),
                                       ("problem", "world", "policy"),
                                       ("policy", "world", "problem"), DecisionProblem)
    return decision_table(problem, world, policy).utility(problem.utility)
