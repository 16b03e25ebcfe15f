"""The policy :func:`~fairdecide.optimize_policy` returns for a FrameWorld: in each block of
units, a mixture of deterministic policies, each the action of least reduced cost under
one set of the master's duals."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from fairdecide.exceptions import FairdecideError
from fairdecide.policies.base import Policy

if TYPE_CHECKING:
    import pandas as pd

    from fairdecide.data.units import Units

__all__ = ["VertexMixturePolicy"]


def least_cost_actions(p: np.ndarray, Y: np.ndarray, z: np.ndarray) -> np.ndarray:
    """Each unit's action of least reduced cost under marginal duals Y[z, a, y]:
    argmin_a w_u sum_y Y[z_u, a, y] P(y | a, u).

    The weight w_u >= 0 scales a unit's costs alike and is left out, and the sum runs
    elementwise in a fixed order: the pricing pass and the policy (which sees the weight
    normalised, and P as features) must pick the same action bit for bit, and a factor
    or a summation order that differs between them turned near-ties of one ulp into
    different vertices (a policy that did not reproduce its master)."""
    n_a, n_y = Y.shape[1], Y.shape[2]
    best, action = None, np.zeros(len(z), dtype=np.int64)
    for a in range(n_a):  # one action at a time, on 1-d arrays (a 3-d gather was slower)
        score = p[:, a, 0] * Y[:, a, 0][z]
        for y in range(1, n_y):
            score += p[:, a, y] * Y[:, a, y][z]
        if best is None:
            best = score
        else:  # strictly less: ties keep the first action, as argmin does
            better = score < best
            action[better] = a
            best = np.where(better, score, best)
    return action


class VertexMixturePolicy(Policy):
    """pi(a | u) = sum_k lam[b_u, k] 1[a = a_k(u)]: in the block b_u of unit u, the
    mixture with weights lam[b_u, .] of the deterministic policies
    a_k(u) = argmin_a w_u sum_y Y_k[z_u, a, y] P(y | a, u), one per set of duals Y_k.

    It reads a unit's block as its cell, its group, and its weight and outcome
    probabilities as features, as a :class:`~fairdecide.worlds.frame.FrameWorld` presents
    them; :meth:`frame_proba` gives the rows of one partition of the units table. The
    policy is never collected: a few dual arrays and a (blocks x duals) weight table
    stand for every unit's row.

    Parameters
    ----------
    duals : list of ndarray of shape (n_groups, n_actions, n_outcomes)
    lam : ndarray of shape (n_blocks, len(duals))
        Rows on the simplex: each block's mixture weights.
    world : FrameWorld, optional
        The units table the policy was optimised on (for :meth:`frame_proba`).
    """

    reads: ClassVar[frozenset[str]] = frozenset({"cell", "group", "features"})
    kind: ClassVar[str] = "free"

    def __init__(self, duals: list[np.ndarray], lam: np.ndarray, world: Any = None
                 ) -> None:
        self.world = world
        self.duals = [np.asarray(Y, dtype=float) for Y in duals]
        self.lam = np.asarray(lam, dtype=float)
        if (not self.duals or self.lam.ndim != 2 or self.lam.shape[1] != len(self.duals)
                or any(Y.ndim != 3 or Y.shape != self.duals[0].shape for Y in self.duals)):
            raise FairdecideError("a vertex mixture needs duals of one shape (n_groups, "
                                  "n_actions, n_outcomes) and lam of shape (n_blocks, "
                                  "len(duals))")

    @property
    def n_actions(self) -> int:
        return self.duals[0].shape[1]

    def proba(self, units: Units) -> np.ndarray:
        if units.cell is None or units.features is None:
            raise FairdecideError(
                "a VertexMixturePolicy reads each unit's block (cell), weight and outcome "
                "probabilities (features), as a FrameWorld presents them; use "
                "frame_proba(partition, index) on the units table")
        n_z, n_a, n_y = self.duals[0].shape
        if units.n_cells != len(self.lam) or units.n_groups != n_z or \
                units.features.shape[1] != 1 + n_a * n_y:
            raise FairdecideError(
                f"these units have {units.n_cells} blocks, {units.n_groups} groups and "
                f"{units.features.shape[1]} features; the policy was made for {len(self.lam)}"
                f" blocks, {n_z} groups and {1 + n_a * n_y} features (the same units table,"
                " partitioned the same way)")
        p = units.features[:, 1:].reshape(units.n, n_a, n_y)
        rows = np.zeros((units.n, n_a))
        at = np.arange(units.n)
        for k, Y in enumerate(self.duals):
            weight_k = self.lam[units.cell, k]
            if np.any(weight_k > 0):
                rows[at, least_cost_actions(p, Y, units.group)] += weight_k
        return rows

    def frame_proba(self, part: pd.DataFrame, index: int = 0) -> np.ndarray:
        """pi(a | unit) of the units of partition ``index`` (a pandas DataFrame: the whole
        table when it was one) of the units table the policy was optimised on."""
        if self.world is None:
            raise FairdecideError("this policy was not made on a units table; use proba")
        return self.proba(self.world.part_units(part, index)[0])

    def __repr__(self) -> str:
        return (f"VertexMixturePolicy({len(self.duals)} vertex policies over "
                f"{len(self.lam)} blocks)")
