"""The privacy budget of one report and how it is split across the released tables.

A report that releases K tables, the k-th with a mechanism that is epsilon_k-differentially
private, is epsilon-differentially private with epsilon = sum_k epsilon_k (sequential
composition). :class:`PrivacyBudget` holds the total epsilon and the share of it each
named table receives, so that epsilon_k = share_k * epsilon, and states the guarantee in
plain words for the report.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from fairdecide._common.validation import as_real
from fairdecide.exceptions import FairdecideError

__all__ = ["PrivacyBudget"]

_SUM_TOL = 1e-9


@dataclass(frozen=True)
class PrivacyBudget:
    r"""A total privacy loss epsilon split across named released tables.

    Table k receives :math:`\varepsilon_k = s_k \varepsilon` with shares :math:`s_k > 0`,
    :math:`\sum_k s_k = 1`. Releasing every table once with an
    :math:`\varepsilon_k`-differentially private mechanism makes the whole release
    :math:`\varepsilon`-differentially private by sequential composition,
    :math:`\sum_k \varepsilon_k = \varepsilon`; anything computed from the released
    tables alone (rates, intervals, fairness deviations, off-policy values) is
    post-processing and costs nothing further.

    Parameters
    ----------
    epsilon : float
        The total privacy loss of the report, finite and > 0 (pure
        :math:`\varepsilon`-DP, :math:`\delta = 0`, for add/remove-one-row neighbours).
    shares : mapping of str to float, optional
        The share of ``epsilon`` given to each released table, each > 0, summing to 1.
        Default: one table, ``{"counts": 1.0}``.

    Examples
    --------
    >>> budget = PrivacyBudget(epsilon=1.0, shares={"groups": 0.5, "cells": 0.5})
    >>> budget.epsilon_of("cells")
    0.5
    >>> sum(budget.epsilons().values())
    1.0
    >>> PrivacyBudget.even(0.9, ["a", "b", "c"]).epsilon_of("b")
    0.3
    """

    epsilon: float
    shares: Mapping[str, float] = field(default_factory=lambda: {"counts": 1.0})

    def __post_init__(self) -> None:
        eps = as_real(self.epsilon, "epsilon", 0, None, low_open=True)
        if not isinstance(self.shares, Mapping):
            raise FairdecideError(
                "shares must be a mapping from table name to its share of epsilon, such "
                f"as {{'groups': 0.5, 'cells': 0.5}}; got {type(self.shares).__name__}")
        if not self.shares:
            raise FairdecideError("shares is empty: name at least one released table")
        clean: dict[str, float] = {}
        for name, share in self.shares.items():
            if not isinstance(name, str) or not name:
                raise FairdecideError(
                    f"shares must be keyed by non-empty table names (strings), got {name!r}")
            clean[name] = as_real(share, f"shares[{name!r}]", 0, 1, low_open=True)
        total = math.fsum(clean.values())
        if abs(total - 1.0) > _SUM_TOL:
            raise FairdecideError(
                f"shares must sum to 1, got {total:.12g} ({clean}); divide each by their "
                "sum, or use PrivacyBudget.even for an equal split")
        object.__setattr__(self, "epsilon", eps)
        object.__setattr__(self, "shares", MappingProxyType(clean))

    @classmethod
    def even(cls, epsilon: float, names: Iterable[str]) -> PrivacyBudget:
        """An equal split of ``epsilon`` across the tables ``names``.

        Parameters
        ----------
        epsilon : float
            The total privacy loss, finite and > 0.
        names : iterable of str
            The released tables, at least one, without repeats.

        Returns
        -------
        PrivacyBudget
        """
        if isinstance(names, str) or not isinstance(names, Iterable):
            raise FairdecideError(
                f"names must be a list of table names, got {type(names).__name__} {names!r}")
        names = list(names)
        if not names:
            raise FairdecideError("names is empty: name at least one released table")
        bad = [name for name in names if not isinstance(name, str) or not name]
        if bad:
            raise FairdecideError(
                f"names must be non-empty strings, got {bad[0]!r} among them")
        if len(set(names)) != len(names):
            raise FairdecideError(f"names has repeated table names: {names}")
        return cls(epsilon, {name: 1.0 / len(names) for name in names})

    def epsilon_of(self, name: str) -> float:
        """The privacy loss given to table ``name``: ``share[name] * epsilon``.

        Raises a FairdecideError for a table the budget does not name.
        """
        if not isinstance(name, str) or name not in self.shares:
            raise FairdecideError(
                f"name {name!r} is not a table of this privacy budget; its tables are "
                f"{sorted(self.shares)}")
        return self.shares[name] * self.epsilon

    def epsilons(self) -> dict[str, float]:
        """The privacy loss of every table, ``{name: share * epsilon}``."""
        return {name: self.epsilon_of(name) for name in self.shares}

    def describe(self) -> str:
        """One plain-English paragraph stating the guarantee, for the report.

        Examples
        --------
        >>> print(PrivacyBudget(1.0, {"groups": 0.25, "cells": 0.75}).describe())
        The released counts satisfy pure epsilon-differential privacy with a total
        epsilon of 1 (delta = 0)...
        """
        parts = [f"{name} epsilon = {eps:.4g} ({100 * self.shares[name]:.4g}%)"
                 for name, eps in self.epsilons().items()]
        n = len(parts)
        tables = "one released table" if n == 1 else f"{n} released tables"
        return (
            "The released counts satisfy pure epsilon-differential privacy with a total "
            f"epsilon of {self.epsilon:.4g} (delta = 0), for data sets that differ by "
            "adding or removing one logged row (one decision). Each released table is a "
            "contingency table in which one row changes one cell by 1, so its counts are "
            "released once with noise calibrated to sensitivity 1 at that table's "
            f"epsilon. The total is split across {tables} by sequential composition: "
            f"{'; '.join(parts)}; these add up to the total. Everything else in the "
            "report (rates, intervals, fairness deviations, off-policy values) is computed "
            "from the noisy tables alone, which is post-processing and uses no further "
            "privacy budget.")

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready description: total, shares, per-table epsilons and the guarantee."""
        return {
            "epsilon": self.epsilon,
            "delta": 0.0,
            "guarantee": "pure epsilon-differential privacy",
            "neighbours": "add or remove one row",
            "composition": "sequential",
            "shares": dict(self.shares),
            "epsilons": self.epsilons(),
        }
