"""Worlds (the parameter theta): the units a world declares, and the tabular world.

A world is seen by the rest of the library only through its **units** (the World
protocol): each unit u has a weight w[u], a group z[u], an outcome table P(y | a, u), and
what a policy may read of it (a cell index, feature vectors). The decision table

    J[u, a, y] = w[u] * pi(a | u) * P(y | a, u)

(:mod:`fairdecide.worlds.table`) is built from these alone. For a tabular world the units are
the cells (x, z), flattened x-major (u = x * n_z + z), with weight w = P(x, z).
"""

from __future__ import annotations

import abc
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from fairdecide._common.validation import as_float_array, check_distribution
from fairdecide.data.tabular_counts import TabularCounts
from fairdecide.data.units import Units
from fairdecide.exceptions import FairdecideError
from fairdecide.policies.tabular import TabularPolicy
from fairdecide.problem import DecisionProblem

if TYPE_CHECKING:
    from fairdecide.data.logged import LoggedData

__all__ = ["TabularWorld", "Units", "World", "world_arrays"]


class World(abc.ABC):
    """The World protocol: a world declares its units.

    Subclasses implement :meth:`units`, :meth:`unit_weights`, :meth:`unit_outcomes` and
    :meth:`check_problem`, and hold ``group_labels``; everything else in the library
    (decision tables, verification, beliefs, optimisation) reads worlds through these.
    :meth:`outcome_proba` (P(y | a, .) of individuals outside the world's own units) is an
    optional capability, used when a world serves as a known outcome model.
    """

    group_labels: tuple
    #: Whether the units can be held in memory as arrays (the decision table over every
    #: unit); False for a world that sums its table by group (:meth:`summed_table`).
    units_in_memory: ClassVar[bool] = True

    @abc.abstractmethod
    def units(self) -> Units:
        """The units and what a policy may read of them."""

    @abc.abstractmethod
    def unit_weights(self) -> np.ndarray:
        """Weights w[u] >= 0 summing to one, shape (n_units,)."""

    @abc.abstractmethod
    def unit_outcomes(self, problem: DecisionProblem) -> np.ndarray:
        """P(y | a, u), shape (n_units, n_actions, n_outcomes); raises if the world does
        not fit ``problem``."""

    @abc.abstractmethod
    def check_problem(self, problem: DecisionProblem) -> None:
        """Raise a clear error if the world does not fit ``problem``."""

    @abc.abstractmethod
    def outcome_shape(self) -> tuple[int, ...]:
        """Shape of the world's outcome parameters (scenarios of a belief share it)."""

    def summed_table(self, policy: Any, problem: DecisionProblem) -> Any:
        """The decision table of ``policy`` summed by group, for a world that declares
        ``units_in_memory = False`` (:class:`~fairdecide.worlds.frame.FrameWorld`);
        :func:`fairdecide.worlds.table.decision_table` calls it, after checking the pair."""
        raise FairdecideError(f"{type(self).__name__} has its units in memory: use "
                              "fairdecide.decision_table(problem, world, policy)")

    def free_policy(self) -> type:
        """The policy family with one free row per unit group that the exact program
        optimises over (a class with ``free_layout`` and ``from_unit_rows``; a world that
        sums its table by group names the distributed solver's family instead)."""
        raise FairdecideError(
            f"{type(self).__name__} declares no free policy family to optimise over")

    def outcome_proba(self, units: Units, problem: DecisionProblem) -> np.ndarray:
        """P(y | a, .) of other individuals, shape (n, n_actions, n_outcomes)."""
        raise FairdecideError(
            f"{type(self).__name__} cannot predict outcomes of individuals outside its own "
            "units; use a fitted outcome model")

    @property
    def n_groups(self) -> int:
        """Number of groups."""
        return len(self.group_labels)


def world_arrays(world: World, problem: DecisionProblem
                 ) -> tuple[Units, np.ndarray, np.ndarray]:
    """A world's units, weights and outcome table, checked: weights finite, non-negative
    and summing to one over the units; P(y | a, u) of shape (n_units, n_actions,
    n_outcomes), finite, non-negative, each row summing to one."""
    units = world.units()
    w = np.asarray(world.unit_weights(), dtype=float)
    p_y = np.asarray(world.unit_outcomes(problem), dtype=float)
    name = type(world).__name__
    if w.shape != (units.n,):
        raise FairdecideError(
            f"{name}.unit_weights() has shape {w.shape}; its units need ({units.n},)")
    # w >= 0 is False for NaN; an infinite weight makes the sum infinite
    if not (np.all(w >= 0) and abs(w.sum() - 1.0) <= 1e-6):
        raise FairdecideError(
            f"{name}.unit_weights() must be finite, non-negative and sum to one "
            f"(sum {w.sum():.6g})")
    want = (units.n, problem.n_actions, problem.n_outcomes)
    if p_y.shape != want:
        raise FairdecideError(
            f"{name}.unit_outcomes() has shape {p_y.shape}; the units and problem need {want}")
    # p_y >= 0 is False for NaN; an infinite entry makes its row's sum infinite (the
    # sums' largest error then NaN or inf, never <= 1e-6)
    if not (np.all(p_y >= 0) and (p_y.size == 0
                                  or np.abs(p_y.sum(axis=2) - 1.0).max() <= 1e-6)):
        raise FairdecideError(
            f"{name}.unit_outcomes() must hold finite probabilities summing to one over "
            "the outcomes")
    return units, w, p_y


class TabularWorld(World):
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
        for name, labels in (("x_labels", self.x_labels), ("group_labels", self.group_labels)):
            if len(set(labels)) != len(labels):
                raise FairdecideError(f"{name} must be distinct, got {list(labels)!r}")

    @classmethod
    def from_data(
        cls, data: LoggedData, problem: DecisionProblem, smoothing: float = 0.0,
        weights: np.ndarray | None = None,
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
        weights : ndarray of shape (data.n,), optional
            Non-negative weights of the rows in the counts (the estimators'
            ``sample_weight``, checked there); n is then the total weight.
        """
        counts = TabularCounts.from_data(data, problem, weights=weights)
        p_xz, p_y = counts.mle_parameters(smoothing)
        return cls(p_xz, p_y, x_labels=counts.x_labels, group_labels=counts.group_labels)

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

    @property
    def p_x_given_z(self) -> np.ndarray:
        """What each group is made of, P(x | z), shape (n_x, n_z)."""
        return self.p_xz / self.p_z

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

    def outcome_shape(self) -> tuple[int, ...]:
        """The shape of ``p_y``."""
        return self.p_y.shape

    def free_policy(self) -> type:
        """Tabular policies: one row per cell and group."""
        return TabularPolicy

    def units(self) -> Units:
        """The cells as units, x-major (u = x * n_z + z)."""
        if getattr(self, "_units", None) is None:  # built once: the shape never changes
            self._units = Units(group=np.tile(np.arange(self.n_z), self.n_x),
                                n_groups=self.n_z,
                                cell=np.repeat(np.arange(self.n_x), self.n_z),
                                n_cells=self.n_x, cell_labels=self.x_labels,
                                group_labels=self.group_labels)
        return self._units

    def unit_weights(self) -> np.ndarray:
        """P(x, z) of every cell, x-major, shape (n_x * n_z,)."""
        return self.p_xz.reshape(-1)

    def unit_outcomes(self, problem: DecisionProblem) -> np.ndarray:
        """P(y | a, x, z) of every cell, x-major, shape (n_x * n_z, n_actions, n_outcomes)."""
        self.check_problem(problem)
        return self.outcome_table(problem.n_actions).reshape(
            self.n_x * self.n_z, problem.n_actions, self.n_outcomes)

    def outcome_proba(self, units: Units, problem: DecisionProblem) -> np.ndarray:
        """P(y | a, x, z) of individuals given by their cell and group codes, matched to
        the world's cells and groups by label (see :meth:`Units.map_codes`)."""
        self.check_problem(problem)
        if units.cell is None:
            raise FairdecideError(
                f"this TabularWorld ({self.n_x} cells, {self.n_z} groups) needs individuals "
                "with cell and group codes (tabular LoggedData), not numeric features")
        xi = units.map_codes(self.x_labels, self.n_x, "cell", "world")
        zi = units.map_codes(self.group_labels, self.n_z, "group", "world")
        return self.outcome_table(problem.n_actions)[xi[units.cell], zi[units.group]]

    def __repr__(self) -> str:
        kind = "P(y|a,x,z)" if self.outcome_depends_on_action else "P(y|x,z)"
        return f"TabularWorld(n_x={self.n_x}, n_z={self.n_z}, outcomes={self.n_outcomes}, {kind})"
