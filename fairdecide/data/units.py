"""Units: what a policy may read of each unit of a world or logged individual.

The lowest layer of the data model: worlds declare their units, logged data present their
individuals as units, and policies map units to rows of the simplex.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fairdecide._common.validation import as_code_array, as_float_array, as_int
from fairdecide.exceptions import FairdecideError
from fairdecide.labels import Labels

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
    cell_labels, group_labels : tuple, optional
        The label of each cell code and group code (a world's or the data's labels).
        Labelled policies and worlds are matched to the units through them
        (:meth:`map_codes`), so a policy built for one world applies to data that saw
        only some of its cells.
    """

    group: np.ndarray
    n_groups: int
    cell: np.ndarray | None = None
    n_cells: int | None = None
    features: np.ndarray | None = None
    cell_labels: tuple | None = None
    group_labels: tuple | None = None

    def __post_init__(self) -> None:
        n_groups = as_int(self.n_groups, "n_groups", minimum=1)
        group = as_code_array(self.group, "group", n_groups, "group")
        object.__setattr__(self, "group", group)
        object.__setattr__(self, "n_groups", n_groups)
        if (self.cell is None) != (self.n_cells is None):
            raise FairdecideError("give cell and n_cells together, or neither")
        if self.cell is not None:
            n_cells = as_int(self.n_cells, "n_cells", minimum=1)
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
        for name, n in (("cell_labels", self.n_cells), ("group_labels", self.n_groups)):
            labels = getattr(self, name)
            if labels is not None:
                labels = tuple(labels)
                if n is None or len(labels) != n:
                    raise FairdecideError(
                        f"{name} has {len(labels)} labels but there are {n} codes")
                object.__setattr__(self, name, labels)

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

    def map_codes(self, owner_labels: tuple | None, n_owner: int, what: str,
                  owner: str) -> np.ndarray:
        """For each of these units' cell (``what="cell"``) or group codes, the code of
        the same label in an ``owner`` (a policy or world) numbered by ``owner_labels``.

        Labels are matched when both sides have them; otherwise the numbering must agree
        in size, and is taken as the same. A label the owner lacks, or a size mismatch
        without labels, raises an error saying which.
        """
        mine = self.cell_labels if what == "cell" else self.group_labels
        n_mine = self.n_cells if what == "cell" else self.n_groups
        plural = "cells" if what == "cell" else "groups"
        if owner_labels is None or mine is None:
            if n_mine != n_owner:
                raise FairdecideError(
                    f"the {owner} has {n_owner} {plural} but the data or world it is "
                    f"applied to has {n_mine}; without labels on both sides they cannot "
                    f"be matched: build the {owner} with x_labels/group_labels (the "
                    "labels of the world or data it was made for)")
            return np.arange(n_owner)
        if tuple(mine) == tuple(owner_labels):
            # the owner was made for these labels (the usual case, on every evaluation of
            # a policy in its own world): no lookup, which built a pandas Index each time
            return np.arange(n_owner)
        return Labels.trusted(mine).map_to(owner_labels, what, owner, plural)

    def same_as(self, other: Units) -> bool:
        """Whether ``other`` describes the same units (same groups, cells and features, and
        the same labels where both have them)."""

        def same(a: np.ndarray | None, b: np.ndarray | None) -> bool:
            if a is None or b is None:
                return a is b
            return a.shape == b.shape and bool(np.array_equal(a, b))

        return (self.n_groups == other.n_groups and self.n_cells == other.n_cells
                and same(self.group, other.group) and same(self.cell, other.cell)
                and same(self.features, other.features)
                and _same_labels(self.cell_labels, other.cell_labels)
                and _same_labels(self.group_labels, other.group_labels))


def _same_labels(a: tuple | None, b: tuple | None) -> bool:
    return a is None or b is None or a == b
