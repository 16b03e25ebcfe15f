"""A world whose units are the rows of a pandas or Dask DataFrame, read partition by
partition: a population too large for one machine, which
:func:`~fairdecide.optimize_policy` solves with the distributed solver
(:mod:`fairdecide.optimize.distributed`).

One row per unit: a group column (integer code 0..n_z-1), a weight column (P(x, z) of a
cell, or 1/N of a person; normalised to sum to one) and the outcome probabilities,
columns ``p_<y>`` for prediction problems or ``p_<a>_<y>`` for interventions
(:func:`outcome_columns`). What a policy may read of a unit: its group, its **block**
as the cell (partition i, row range r of :data:`BLOCKS_PER_PARTITION`, group z: the code
(i * BLOCKS_PER_PARTITION + r) * n_z + z), and as features its weight and outcome
probabilities.

The decision table of a policy in this world is its group marginal
M[z, a, y] = sum_{u in z} w_u pi(a | u) P(y | a, u), summed partition by partition (on
the workers for Dask) without collecting the units, together with the largest error of a
policy row off the simplex; every criterion that reads only the group marginal, and the
expected utility, are computed from it (:func:`~fairdecide.criteria.values.scenario_values`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from fairdecide._common.dask import is_dask_frame
from fairdecide._common.validation import as_int, check_instance
from fairdecide.data.units import Units
from fairdecide.exceptions import FairdecideError
from fairdecide.policies.mixture import VertexMixturePolicy
from fairdecide.problem import DecisionProblem
from fairdecide.worlds.table import DecisionTable
from fairdecide.worlds.world import World

if TYPE_CHECKING:
    from fairdecide.policies.base import Policy

__all__ = ["BLOCKS_PER_PARTITION", "MAX_GROUPS", "FrameWorld", "outcome_columns"]

#: Each partition's units are split into this many row ranges; a block is a range's
#: units of one group (the distributed solver gives each its own convexity row).
BLOCKS_PER_PARTITION = 16
#: Group codes the first pass over the units counts (0 .. MAX_GROUPS - 1).
MAX_GROUPS = 64


def outcome_columns(problem: DecisionProblem) -> list[str]:
    """The names of the outcome-probability columns the units table must have:
    ``p_<y>`` (prediction) or ``p_<a>_<y>`` (intervention), by code.

    Examples
    --------
    >>> import fairdecide as fd
    >>> from fairdecide.optimize import outcome_columns
    >>> outcome_columns(fd.DecisionProblem.classification(2))
    ['p_0', 'p_1']
    """
    check_instance(problem, "problem", DecisionProblem, "a DecisionProblem")
    if problem.outcome_depends_on_action:
        return [f"p_{a}_{y}" for a in range(problem.n_actions)
                for y in range(problem.n_outcomes)]
    return [f"p_{y}" for y in range(problem.n_outcomes)]


def frame_arrays(part: pd.DataFrame, problem: DecisionProblem, group: str, weight: str
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(z, w, p) of a partition; p of shape (n, n_a, n_y) for both kinds of problem."""
    z = part[group].to_numpy(dtype=np.int64)
    w = part[weight].to_numpy(dtype=float)
    p = part[outcome_columns(problem)].to_numpy(dtype=float)
    n_a, n_y = problem.n_actions, problem.n_outcomes
    p = p.reshape(len(z), n_a, n_y) if problem.outcome_depends_on_action else \
        np.broadcast_to(p[:, None, :], (len(z), n_a, n_y))
    return z, w, p


def unit_blocks(n: int, z: np.ndarray, n_z: int) -> np.ndarray:
    """Block of each unit of a partition (within it): its row range times n_z plus its
    group."""
    rng_id = (np.arange(n) * BLOCKS_PER_PARTITION) // max(n, 1)
    return rng_id * n_z + z


def _first_pass(part: pd.DataFrame, problem: DecisionProblem, group: str, weight: str
                ) -> np.ndarray:
    """[total weight, units per group (MAX_GROUPS), sum of w P(y | a) per (z, a, y), units
    per (row range, group)] of one partition, its values checked."""
    z, w, p = frame_arrays(part, problem, group, weight)
    n_a, n_y, G = problem.n_actions, problem.n_outcomes, MAX_GROUPS
    if len(z) and (z.min() < 0 or z.max() >= G):
        raise FairdecideError(f"group: the column {group!r} must hold group codes from 0 to "
                              f"{G - 1}; found {z.min()} to {z.max()}")
    if not (np.all(np.isfinite(w)) and np.all(w >= 0)):
        raise FairdecideError(f"weight: the column {weight!r} must be finite and >= 0")
    bad = ~np.all(np.isfinite(p) & (p >= 0), axis=(1, 2)) | np.any(
        np.abs(p.sum(axis=2) - 1.0) > 1e-6, axis=1)
    if np.any(bad):
        raise FairdecideError(
            f"units: the outcome columns {outcome_columns(problem)} must hold probabilities "
            f"(finite, >= 0, summing to one over the outcomes); row "
            f"{part.index[np.flatnonzero(bad)[0]]} does not")
    out = np.zeros((G, n_a, n_y))
    np.add.at(out, z, w[:, None, None] * p)
    per_group = np.bincount(z, minlength=G).astype(float)
    per_range = np.bincount(unit_blocks(len(z), z, G), minlength=BLOCKS_PER_PARTITION * G)
    return np.concatenate([[float(w.sum())], per_group, out.reshape(-1), per_range])


def map_partitions(units: Any, fn: Any, *args: Any, per_part: list | None = None) -> list:
    """fn(partition, *args) for each partition, in order, on the workers for Dask (a
    pandas DataFrame is one partition); with ``per_part``, fn(partition, per_part[i],
    *args) for partition i."""
    dask_frame = is_dask_frame(units)
    parts = units.to_delayed() if dask_frame else [units]
    extra = [()] * len(parts) if per_part is None else [(x,) for x in per_part]
    if len(extra) != len(parts):
        raise FairdecideError("per_part must have one entry per partition")
    if dask_frame:
        import dask

        return list(dask.compute(*[dask.delayed(fn)(d, *x, *args)
                                   for d, x in zip(parts, extra, strict=True)]))
    return [fn(d, *x, *args) for d, x in zip(parts, extra, strict=True)]


def _part_units(part: pd.DataFrame, index: int, problem: DecisionProblem, group: str,
                weight: str, n_z: int, n_parts: int, total: float
                ) -> tuple[Units, np.ndarray, np.ndarray]:
    """The units of partition ``index``, their normalised weights and P(y | a, u)."""
    z, w, p = frame_arrays(part, problem, group, weight)
    per = BLOCKS_PER_PARTITION * n_z
    cell = index * per + unit_blocks(len(z), z, n_z)
    w = w / total
    features = np.column_stack([w, p.reshape(len(z), -1)])
    return Units(group=z, n_groups=n_z, cell=cell, n_cells=n_parts * per,
                 features=features), w, p


def _part_table(part: pd.DataFrame, index: int, policy: Policy, problem: DecisionProblem,
                group: str, weight: str, n_z: int, n_parts: int, total: float
                ) -> np.ndarray:
    """[M (flattened), row error] of one partition under ``policy``."""
    n_m = n_z * problem.n_actions * problem.n_outcomes
    if len(part) == 0:
        return np.zeros(n_m + 1)
    units, w, p = _part_units(part, index, problem, group, weight, n_z, n_parts, total)
    rows = np.asarray(policy.proba(units), dtype=float)
    table = DecisionTable(w[:, None, None] * rows[:, :, None] * p, units.group, n_z,
                          rows=rows)
    return np.append(table.group_marginal().reshape(-1), table.simplex_error())


def _check_columns(frame: Any, problem: DecisionProblem, group: Any, weight: Any) -> None:
    """Refuse a units table without the named columns, or with columns of the wrong type
    (read from the frame's dtypes, without a pass)."""
    columns = list(frame.columns)
    for arg, name in (("group", group), ("weight", weight)):
        try:
            found = name in columns
        except TypeError:  # unhashable
            found = False
        if not found:
            raise FairdecideError(f"{arg} must name a column of units; got {name!r}, the "
                                  f"columns are {columns}")
    missing = [c for c in outcome_columns(problem) if c not in columns]
    if missing:
        raise FairdecideError(f"units lacks the columns {missing} (the outcome "
                              "probabilities problem needs, see outcome_columns)")
    if not pd.api.types.is_integer_dtype(frame.dtypes[group]):
        raise FairdecideError(f"group: the column {group!r} must hold integer group codes, "
                              f"not {frame.dtypes[group]}; cast it with .astype(int)")
    for arg, name in [("weight", weight)] + [("units", c) for c in outcome_columns(problem)]:
        dtype = frame.dtypes[name]
        if not pd.api.types.is_numeric_dtype(dtype) or pd.api.types.is_bool_dtype(dtype):
            raise FairdecideError(f"{arg}: the column {name!r} must be numeric, not {dtype}")


class FrameWorld(World):
    """The units of a pandas or Dask DataFrame (see the module's description).

    Building it reads the units once (on the workers for Dask): it checks the columns and
    their values, finds the groups and the total weight, and keeps what every policy
    shares, the masses sum_{u in z} w_u P(y | a, u) and the blocks' sizes. Its
    :meth:`summed_table` (what :func:`~fairdecide.worlds.table.decision_table` returns for it)
    never collects the units; :meth:`units` does (all partitions, in order): use it on
    populations that fit in memory. :func:`~fairdecide.optimize_policy` solves it with the
    distributed solver; its free policies are
    :class:`~fairdecide.policies.mixture.VertexMixturePolicy` (:meth:`free_policy`).

    Parameters
    ----------
    units : pandas or Dask DataFrame
        One row per unit: ``group`` (integer group code 0..n_z-1, at least two groups),
        ``weight`` (the unit's probability mass; normalised to sum to one) and the outcome
        probabilities :func:`outcome_columns` of ``problem``. On Dask, persist it first
        (``units.persist()``): every pass of the solver reads it. Kept as ``frame``.
    problem : DecisionProblem
        Says which outcome columns the units have; the world fits problems with the same
        actions and outcome columns.
    group, weight : str, default "z" and "w"
        Column names.

    Examples
    --------
    >>> import pandas as pd
    >>> import fairdecide as fd
    >>> units = pd.DataFrame({"z": [0, 1, 1], "w": [1.0, 2.0, 1.0],
    ...                       "p_0": [0.5, 0.2, 0.9], "p_1": [0.5, 0.8, 0.1]})
    >>> world = fd.FrameWorld(units, fd.DecisionProblem.classification(2))
    >>> world.n_groups, world.total
    (2, 4.0)
    """

    units_in_memory = False

    def __init__(self, units: Any, problem: DecisionProblem, group: str = "z",
                 weight: str = "w") -> None:
        check_instance(problem, "problem", DecisionProblem, "a DecisionProblem")
        if not (isinstance(units, pd.DataFrame) or is_dask_frame(units)):
            raise FairdecideError(f"units must be a pandas or Dask DataFrame, got "
                                  f"{type(units).__name__}")
        _check_columns(units, problem, group, weight)
        frame = units
        self.frame, self.problem = frame, problem
        self.group, self.weight = group, weight
        self.n_parts = frame.npartitions if is_dask_frame(frame) else 1
        parts = map_partitions(frame, _first_pass, problem, group, weight)
        n_a, n_y, G = problem.n_actions, problem.n_outcomes, MAX_GROUPS
        stats = np.sum([p[:1 + G + G * n_a * n_y] for p in parts], axis=0)
        self.total = float(stats[0])
        if not self.total > 0:
            raise FairdecideError(f"weight: the column {weight!r} must have a positive sum")
        present = stats[1:1 + G]
        n_z = int(np.flatnonzero(present)[-1]) + 1
        if n_z < 2 or np.any(present[:n_z] == 0):
            raise FairdecideError(
                f"group: the codes of column {group!r} must be 0..n_z-1 with at least two "
                f"groups, each with units; found units in groups {np.flatnonzero(present)}")
        self.group_labels = tuple(range(n_z))
        #: sum_{u in z} w_u P(y | a, u) / total, shape (n_groups, n_actions, n_outcomes):
        #: the group marginal's masses, which no policy changes
        self.masses = stats[1 + G:].reshape(G, n_a, n_y)[:n_z] / self.total
        per = BLOCKS_PER_PARTITION
        #: units of each block (row range r, group z: index r * n_groups + z) of each
        #: partition, shape (n_parts, BLOCKS_PER_PARTITION * n_groups)
        self.block_sizes = np.array([p[1 + G + G * n_a * n_y:].reshape(per, G)[:, :n_z]
                                     .reshape(-1) for p in parts])

    def free_policy(self) -> type:
        """The distributed solver's free policies: in each block of units, a mixture of
        deterministic policies (:class:`~fairdecide.policies.mixture.VertexMixturePolicy`;
        built by the solver from its master's duals, not from rows of a program)."""
        return VertexMixturePolicy

    def units(self) -> Units:
        parts = [u for u, _, _ in self._indexed()]
        first = parts[0]
        return Units(group=np.concatenate([u.group for u in parts]),
                     n_groups=first.n_groups, cell=np.concatenate([u.cell for u in parts]),
                     n_cells=first.n_cells,
                     features=np.vstack([u.features for u in parts]))

    def part_units(self, part: pd.DataFrame, index: int = 0
                   ) -> tuple[Units, np.ndarray, np.ndarray]:
        """The units of partition ``index`` of the table (``part``: that partition as a
        pandas DataFrame; the whole table when it is one), their normalised weights and
        P(y | a, u), as the solver and its policies read them. ``part``'s columns and
        values are checked as the table's were."""
        if not isinstance(part, pd.DataFrame):
            raise FairdecideError("part must be a pandas DataFrame (one partition of the "
                                  f"units table), got {type(part).__name__}")
        index = as_int(index, "index", minimum=0)
        if index >= self.n_parts:
            raise FairdecideError(f"index must be below the table's {self.n_parts} "
                                  f"partition(s), got {index}")
        try:
            _check_columns(part, self.problem, self.group, self.weight)
            _first_pass(part, self.problem, self.group, self.weight)
        except FairdecideError as exc:
            raise FairdecideError(f"part: {exc}") from None
        return self._part(part, index)

    def _part(self, part: pd.DataFrame, index: int) -> tuple[Units, np.ndarray, np.ndarray]:
        """:meth:`part_units` of a partition of the table itself (checked when it was
        read)."""
        return _part_units(part, index, self.problem, self.group, self.weight,
                           self.n_groups, self.n_parts, self.total)

    def _indexed(self) -> list[tuple[Units, np.ndarray, np.ndarray]]:
        parts = (self.frame.to_delayed() if is_dask_frame(self.frame) else [self.frame])
        return [self._part(d.compute() if is_dask_frame(self.frame) else d, i)
                for i, d in enumerate(parts)]

    def unit_weights(self) -> np.ndarray:
        return np.concatenate([w for _, w, _ in self._indexed()])

    def unit_outcomes(self, problem: DecisionProblem) -> np.ndarray:
        self.check_problem(problem)
        return np.concatenate([p for _, _, p in self._indexed()])

    def check_problem(self, problem: DecisionProblem) -> None:
        check_instance(problem, "problem", DecisionProblem, "a DecisionProblem")
        if outcome_columns(problem) != outcome_columns(self.problem):
            raise FairdecideError(
                f"the units table has the outcome columns {outcome_columns(self.problem)}; "
                f"this problem needs {outcome_columns(problem)}")
        if problem.n_actions != self.problem.n_actions:
            raise FairdecideError(
                f"problem has {problem.n_actions} actions; this FrameWorld was built for "
                f"{self.problem.n_actions}: build FrameWorld(units, problem) with this problem")

    def outcome_shape(self) -> tuple[int, ...]:
        return (len(outcome_columns(self.problem)),)

    def summed_table(self, policy: Policy, problem: DecisionProblem) -> DecisionTable:
        """The group marginal of ``policy``, summed over the partitions (on the workers
        for Dask), as a :class:`~fairdecide.worlds.table.DecisionTable` of the groups, with the
        largest row error off the simplex it found."""
        self.check_problem(problem)
        n_z, n_a, n_y = self.n_groups, problem.n_actions, problem.n_outcomes
        per_part = list(range(self.n_parts))
        out = map_partitions(self.frame, _part_table, policy, problem, self.group,
                             self.weight, n_z, self.n_parts, self.total, per_part=per_part)
        M = np.sum([o[:-1] for o in out], axis=0).reshape(n_z, n_a, n_y)
        table = DecisionTable.from_marginal(M)
        return DecisionTable(table.joint, table.group, table.n_groups,
                             row_error=max(float(o[-1]) for o in out))

    def __repr__(self) -> str:
        kind = "Dask" if is_dask_frame(self.frame) else "pandas"
        return (f"FrameWorld({kind}, {self.n_parts} partition(s), n_z={self.n_groups}, "
                f"columns {outcome_columns(self.problem)})")
