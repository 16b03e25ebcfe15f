"""Tabular policies: one distribution over actions per feature cell and group."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from fairdecide._common.tables import result_table
from fairdecide._common.validation import (
    as_code_array,
    as_float_array,
    as_int,
    as_real,
    check_distribution,
    check_instance,
)
from fairdecide.data.logged import LoggedData
from fairdecide.exceptions import FairdecideError
from fairdecide.labels import Labels
from fairdecide.policies.base import Policy, draw_rows
from fairdecide.problem import DecisionProblem

if TYPE_CHECKING:
    from fairdecide.data.units import Units

__all__ = ["TabularPolicy"]


class TabularPolicy(Policy):
    """A stochastic policy with one free row pi(. | x, z) per cell.

    Parameters
    ----------
    table : array-like of shape (n_x, n_z, n_actions)
        ``table[x, z, a]`` = pi(a | x, z). Each row must be on the simplex (non-negative,
        summing to one within 1e-6; rows are renormalised exactly).
    x_labels, group_labels : sequence, optional
        The label of each cell and group, in table order: those of the world or data the
        policy is made for. A labelled policy is applied to data or a world by matching
        labels, so it acts on the right cells when the data saw only some of them, and a
        cell it has no row for is an error. Without labels, the numbering is taken to be
        the world's or data's and the number of cells and groups must agree. Policies
        found by the optimiser or estimated from data carry their labels.

    Attributes
    ----------
    table : ndarray of shape (n_x, n_z, n_actions)
    x_labels, group_labels : tuple or None

    Examples
    --------
    >>> from fairdecide import TabularPolicy
    >>> pi = TabularPolicy.group_blind([[0.2, 0.8], [1.0, 0.0]], n_z=3)
    >>> pi.table.shape, pi.is_group_blind
    ((2, 3, 2), True)
    >>> pi.action_proba(x=[0, 1], z=[2, 0])
    array([[0.2, 0.8],
           [1. , 0. ]])
    """

    reads: ClassVar[frozenset[str]] = frozenset({"cell", "group"})
    kind: ClassVar[str] = "free"

    def __init__(self, table: Any, *, x_labels: Any = None, group_labels: Any = None) -> None:
        arr = as_float_array(table, "table", ndim=3)
        if min(arr.shape) < 1 or arr.shape[2] < 2:
            raise FairdecideError(
                f"table must have shape (n_x, n_z, n_actions >= 2), got {arr.shape}"
            )
        self.table = check_distribution(arr, "table (policy rows)", axes=(2,))
        self.x_labels = _labels(x_labels, arr.shape[0], "x_labels", "cells (table.shape[0])")
        self.group_labels = _labels(group_labels, arr.shape[1], "group_labels",
                                    "groups (table.shape[1])")

    @classmethod
    def group_blind(cls, table: Any, n_z: int, *, x_labels: Any = None,
                    group_labels: Any = None) -> TabularPolicy:
        """A policy that ignores the group: ``table`` of shape (n_x, n_actions) is used for
        every group."""
        arr = as_float_array(table, "table", ndim=2)
        n_z = as_int(n_z, "n_z", minimum=1)
        return cls(np.repeat(arr[:, None, :], n_z, axis=1), x_labels=x_labels,
                   group_labels=group_labels)

    @classmethod
    def for_world(cls, world: Any, proba: Any) -> TabularPolicy:
        """The same action distribution ``proba`` in every cell and group of ``world`` (a
        TabularWorld or LoggedData), labelled with its cells and groups.

        Examples
        --------
        >>> from fairdecide import TabularPolicy
        >>> from fairdecide.datasets import make_bail_problem
        >>> problem, world = make_bail_problem()
        >>> TabularPolicy.for_world(world, [0.0, 1.0]).group_labels
        ('group A', 'group B')
        """
        labels = [getattr(world, name, None) for name in ("x_labels", "group_labels")]
        if labels[0] is None or labels[1] is None:
            raise FairdecideError(
                "world must be a TabularWorld or LoggedData (with x_labels and "
                f"group_labels), got {type(world).__name__}")
        return cls.constant(len(labels[0]), len(labels[1]), proba, x_labels=labels[0],
                            group_labels=labels[1])

    def with_labels(self, x_labels: Any = None, group_labels: Any = None) -> TabularPolicy:
        """The same table with the given cell and group labels."""
        return TabularPolicy(self.table, x_labels=x_labels, group_labels=group_labels)

    @classmethod
    def from_data(cls, data: Any, problem: Any, smoothing: float = 0.0) -> TabularPolicy:
        """The logged decisions' action rates per cell: pi(a | x, z) = (n(x, z, a) +
        smoothing) / (n(x, z) + smoothing * n_actions); cells never seen get the uniform
        row.

        This is a policy that decides at random within each cell (x, z) with the logged
        rates: not the logged decisions themselves, which may have used more than the
        cells (a score, an interview) and are valued by
        ``evaluate_policy(problem, data, "logged")``. On COMPAS (flags from the score
        text, cells age and charge degree) the cell policy's accuracy is 0.535 while the
        flags' own is 0.651. The policy declares ``summarises_logs``, so
        :func:`~fairdecide.evaluation.evaluate_policy` warns, naming both values, when
        they differ by more than two standard errors.

        Examples
        --------
        >>> from fairdecide import DecisionProblem, LoggedData, TabularPolicy
        >>> data = LoggedData(x=[0, 0, 0, 1], z=[0, 0, 0, 0], y=[0, 1, 1, 0], a=[1, 1, 0, 0])
        >>> TabularPolicy.from_data(data, DecisionProblem.classification(2)).table[:, 0]
        array([[0.33333333, 0.66666667],
               [1.        , 0.        ]])
        """
        check_instance(data, "data", LoggedData, "LoggedData")
        check_instance(problem, "problem", DecisionProblem, "a DecisionProblem")
        codes = data.action_codes(problem)
        if codes is None:
            raise FairdecideError("the data have no actions (a) to estimate a policy from")
        alpha = as_real(smoothing, "smoothing", low=0)
        counts = np.zeros((data.n_x, data.n_z, problem.n_actions))
        np.add.at(counts, (data.x, data.z, codes), 1.0)
        counts += alpha
        total = counts.sum(axis=2, keepdims=True)
        table = np.where(total > 0, counts / np.where(total > 0, total, 1.0),
                         1.0 / problem.n_actions)
        policy = cls(table, x_labels=data.x_labels, group_labels=data.group_labels)
        policy.summarises_logs = True
        return policy

    @classmethod
    def constant(cls, n_x: int, n_z: int, proba: Any, *, x_labels: Any = None,
                 group_labels: Any = None) -> TabularPolicy:
        """The same action distribution ``proba`` in every cell (see also
        :meth:`for_world`, which takes the cells and labels from a world)."""
        n_x = as_int(n_x, "n_x", minimum=1)
        n_z = as_int(n_z, "n_z", minimum=1)
        p = as_float_array(proba, "proba", ndim=1)
        if len(p) < 2:
            raise FairdecideError(
                f"proba must give a probability for each of >= 2 actions, got {p.tolist()}")
        return cls(np.broadcast_to(p, (n_x, n_z, len(p))).copy(), x_labels=x_labels,
                   group_labels=group_labels)

    @property
    def n_x(self) -> int:
        """Number of feature cells."""
        return self.table.shape[0]

    @property
    def n_z(self) -> int:
        """Number of groups."""
        return self.table.shape[1]

    @property
    def n_actions(self) -> int:
        """Number of actions."""
        return self.table.shape[2]

    @property
    def is_group_blind(self) -> bool:
        """True if every cell's row is the same for all groups (within 1e-9)."""
        return bool(np.allclose(self.table, self.table[:, :1, :], atol=1e-9, rtol=0))

    def action_proba(self, x: Any, z: Any) -> np.ndarray:
        """Action probabilities for individuals with cell codes ``x`` and group codes ``z``.

        Returns
        -------
        ndarray of shape (n, n_actions)
        """
        xc = as_code_array(x, "x", self.n_x, "feature cell")
        zc = as_code_array(z, "z", self.n_z, "group")
        if len(xc) != len(zc):
            raise FairdecideError(f"x and z must have the same length, got {len(xc)}, {len(zc)}")
        return self.table[xc, zc]

    def proba(self, units: Units) -> np.ndarray:
        """Rows pi(. | x, z) of units given by their cell and group codes, matched by
        label when both the policy and the units have labels (:meth:`Units.map_codes`)."""
        if units.cell is None:
            raise FairdecideError(
                "a TabularPolicy reads cell codes: it needs tabular LoggedData or a "
                "TabularWorld to act on, not numeric features")
        xi = units.map_codes(self.x_labels, self.n_x, "cell", "policy")
        zi = units.map_codes(self.group_labels, self.n_z, "group", "policy")
        return self.table[xi[units.cell], zi[units.group]]

    # ------------------------------------------------------------------ free rows
    @staticmethod
    def free_layout(units: Units, group_blind: bool = False) -> tuple[np.ndarray, int]:
        """Which free row (LP variable row) each unit uses, and how many there are: one
        per cell and group, or one per cell when ``group_blind``."""
        if units.cell is None:
            raise FairdecideError("a TabularPolicy is optimised over units with cell codes")
        if group_blind:
            return units.cell, int(units.n_cells)
        return units.cell_group, int(units.n_cells * units.n_groups)

    @classmethod
    def from_unit_rows(cls, units: Units, rows: np.ndarray) -> TabularPolicy:
        """The policy whose row in each unit's (cell, group) is ``rows[u]``; every cell and
        group must be covered."""
        table = np.full((units.n_cells, units.n_groups, rows.shape[1]), np.nan)
        table[units.cell, units.group] = rows
        if np.isnan(table).any():
            raise FairdecideError("the units do not cover every (cell, group) of the table")
        return cls(table, x_labels=units.cell_labels, group_labels=units.group_labels)

    def sample(self, x: Any, z: Any, random_state: Any = None) -> np.ndarray:
        """Draw one action code per individual from pi(. | x, z).

        Examples
        --------
        >>> from fairdecide import TabularPolicy
        >>> TabularPolicy.constant(1, 1, [0.0, 1.0]).sample([0, 0], [0, 0], random_state=0)
        array([1, 1])
        """
        return draw_rows(self.action_proba(x, z), random_state)

    def to_frame(self, action_labels: Any = None) -> Any:
        """The table as a DataFrame: one row per (cell, group), one column per action
        (named by ``action_labels`` if given), indexed by the labels.

        Examples
        --------
        >>> from fairdecide import TabularPolicy
        >>> pi = TabularPolicy([[[0.2, 0.8]]], x_labels=["low"], group_labels=["f"])
        >>> pi.to_frame(["detain", "release"])
                   detain  release
        cell group
        low  f        0.2      0.8
        """
        import pandas as pd

        cells = self.x_labels or tuple(range(self.n_x))
        groups = self.group_labels or tuple(range(self.n_z))
        names = tuple(range(self.n_actions)) if action_labels is None else tuple(action_labels)
        if len(names) != self.n_actions:
            raise FairdecideError(
                f"action_labels has {len(names)} labels but the policy has "
                f"{self.n_actions} actions")
        index = pd.MultiIndex.from_product([cells, groups], names=["cell", "group"])
        return result_table(self.table.reshape(-1, self.n_actions), index=index,
                            columns=list(names))

    def __repr__(self) -> str:
        blind = ", group-blind" if self.is_group_blind else ""
        labelled = ", labelled" if self.x_labels is not None else ""
        return (f"TabularPolicy(n_x={self.n_x}, n_z={self.n_z}, n_actions={self.n_actions}"
                f"{blind}{labelled})")


def _labels(given: Any, n: int, name: str, what: str) -> tuple | None:
    if given is None:
        return None
    if not hasattr(given, "__len__"):
        raise FairdecideError(f"{name} must be a sequence of labels, got {given!r}")
    labels = Labels(given, name)
    if len(labels) != n:
        raise FairdecideError(f"{name} has {len(labels)} labels but the table has {n} {what}")
    return labels
