"""Units: what a policy may read of each unit of a world or logged individual.

The lowest layer of the data model: worlds declare their units, logged data present their
individuals as units, and policies map units to rows of the simplex.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fairdecide._validation import as_code_array, as_float_array
from fairdecide.exceptions import FairdecideError

__all__ = ["Units"]


@dataclass(frozen=True, eq=False)
class Units:
    """What a policy may read of each unit (or logged individual).

    Attributes
    ----------
    group : ndarray of int, shape (n_units,)
        Group code z of each unit.
    n_groups : int
    cell : ndarray of int, shape (n_units,), optional
        Cell code x of each unit (tabular worlds and data).
    n_cells : int, optional
    features : ndarray of shape (n_units, n_features), optional
        Numeric features (sample-based worlds, numeric logs).
    """

    group: np.ndarray
    n_groups: int
    cell: np.ndarray | None = None
    n_cells: int | None = None
    features: np.ndarray | None = None

    def __post_init__(self) -> None:
        n_groups = _count(self.n_groups, "n_groups")
        group = as_code_array(self.group, "group", n_groups, "group")
        object.__setattr__(self, "group", group)
        object.__setattr__(self, "n_groups", n_groups)
        if (self.cell is None) != (self.n_cells is None):
            raise FairdecideError("give cell and n_cells together, or neither")
        if self.cell is not None:
            n_cells = _count(self.n_cells, "n_cells")
            cell = as_code_array(self.cell, "cell", n_cells, "cell")
            if len(cell) != len(group):
                raise FairdecideError(
                    f"cell has {len(cell)} entries but group has {len(group)}")
            object.__setattr__(self, "cell", cell)
            object.__setattr__(self, "n_cells", n_cells)
        if self.features is not None:
            X = as_float_array(self.features, "features", ndim=2)
            if len(X) != len(group):
                raise FairdecideError(
                    f"features has {len(X)} rows but group has {len(group)}")
            object.__setattr__(self, "features", X)

    @property
    def cell_group(self) -> np.ndarray:
        """Index of each unit's (cell, group) pair, cell * n_groups + group, in
        range(n_cells * n_groups); needs cells."""
        if self.cell is None:
            raise FairdecideError("these units have no cells")
        return self.cell * self.n_groups + self.group

    @property
    def n(self) -> int:
        """Number of units."""
        return len(self.group)

    def same_as(self, other: Units) -> bool:
        """Whether ``other`` describes the same units (same groups, cells and features)."""

        def same(a: np.ndarray | None, b: np.ndarray | None) -> bool:
            if a is None or b is None:
                return a is b
            return a.shape == b.shape and bool(np.array_equal(a, b))

        return (self.n_groups == other.n_groups and self.n_cells == other.n_cells
                and same(self.group, other.group) and same(self.cell, other.cell)
                and same(self.features, other.features))


def _count(value: object, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
        raise FairdecideError(f"{name} must be a positive integer, got {value!r}")
    return int(value)
