"""Free policies of a fixed population: one distribution over actions per individual."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from fairdecide._common.validation import as_float_array, check_distribution
from fairdecide.exceptions import FairdecideError
from fairdecide.policies.base import Policy

if TYPE_CHECKING:
    from fairdecide.data.units import Units

__all__ = ["IndividualPolicy"]


class IndividualPolicy(Policy):
    """A stochastic policy with one free row pi(. | i) per individual of a known
    population (the fixed-population program of a :class:`~fairdecide.SampleWorld`).

    It decides only for the individuals it was made for: applying it to other units (other
    features, or another number of people) is an error. Policies that generalise to
    unseen people read the features instead.

    Parameters
    ----------
    table : array-like of shape (n, n_actions)
        ``table[i, a]`` = pi(a | i), rows on the simplex.
    features : array-like of shape (n, d)
        The features of the individuals, in row order (they identify the population).

    Examples
    --------
    >>> from fairdecide.policies import IndividualPolicy
    >>> pi = IndividualPolicy([[0.2, 0.8], [1.0, 0.0]], features=[[0.0], [1.0]])
    >>> pi.n, pi.n_actions
    (2, 2)
    """

    reads: ClassVar[frozenset[str]] = frozenset({"features"})
    kind: ClassVar[str] = "free"

    def __init__(self, table: Any, features: Any) -> None:
        arr = as_float_array(table, "table", ndim=2)
        if arr.shape[0] < 1 or arr.shape[1] < 2:
            raise FairdecideError(
                f"table must have shape (n, n_actions >= 2), got {arr.shape}")
        self.table = check_distribution(arr, "table (policy rows)", axes=(1,))
        X = as_float_array(features, "features", ndim=2)
        if len(X) != len(arr):
            raise FairdecideError(
                f"features has {len(X)} rows but table has {len(arr)} individuals")
        self.features = X

    @property
    def n(self) -> int:
        """Number of individuals."""
        return self.table.shape[0]

    @property
    def n_actions(self) -> int:
        """Number of actions."""
        return self.table.shape[1]

    def proba(self, units: Units) -> np.ndarray:
        """The rows of the same individuals (checked by their features, in order)."""
        X = units.features
        if X is None or X.shape != self.features.shape or not np.array_equal(
                X, self.features):
            raise FairdecideError(
                "an IndividualPolicy decides only for the individuals it was made for "
                f"({self.n} with the given features, in order); these units are others. "
                "Use a policy that reads features to decide for new people")
        return self.table

    @staticmethod
    def free_layout(units: Units, group_blind: bool = False) -> tuple[np.ndarray, int]:
        """One free row per individual."""
        if group_blind:
            raise FairdecideError(
                "group_blind has no meaning for a policy of individuals (each person has "
                "one group); make the features exclude the group and use a policy that "
                "reads features")
        if units.features is None:
            raise FairdecideError("an IndividualPolicy is optimised over individuals")
        return np.arange(units.n), int(units.n)

    @classmethod
    def from_unit_rows(cls, units: Units, rows: np.ndarray) -> IndividualPolicy:
        """The policy giving each unit its row."""
        return cls(rows, units.features)

    def __repr__(self) -> str:
        return f"IndividualPolicy(n={self.n}, n_actions={self.n_actions})"
