"""The trade-off keywords of :func:`~fairdecide.optimize.optimize_policy` (``lam``,
``epsilon``, ``utility_slack``, ``chance_delta``) as shorthand for the trade-off objects
of :mod:`fairdecide.optimize.program.tradeoff`, and a ``tradeoff=`` object checked against the
criteria: one place that turns what a caller gave into one validated :class:`Tradeoff`."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from fairdecide._common.validation import as_number
from fairdecide.criteria.base import as_criteria
from fairdecide.criteria.capacity import Capacity
from fairdecide.exceptions import FairdecideError
from fairdecide.optimize.program.tradeoff import (
    FairnessConstraint,
    MaxUtility,
    Mixture,
    Tradeoff,
    UtilityConstraint,
    tolerances,
)

__all__ = ["make_tradeoff"]


def make_tradeoff(n_criteria: int, lam: Any, epsilon: Any, utility_slack: Any,
                  chance_delta: Any = None, tradeoff: Any = None) -> Tradeoff:
    """The trade-off that optimize_policy's keyword arguments ask for, validated: a
    ``tradeoff`` object as given (checked against the criteria), or the one the keywords
    (its shorthand) describe."""
    given = [k for k, v in (("lam", lam), ("epsilon", epsilon), ("utility_slack", utility_slack))
             if v is not None]
    if tradeoff is not None:
        return _given_tradeoff(tradeoff, n_criteria, given + (
            ["chance_delta"] if chance_delta is not None else []))
    if n_criteria == 0:
        if given:
            raise FairdecideError(f"{given[0]} needs at least one fairness criterion")
        if chance_delta is not None:
            raise FairdecideError("chance_delta applies to the epsilon trade-off only")
        return MaxUtility()
    if len(given) != 1:
        raise FairdecideError(
            "give exactly one trade-off: lam (mixture (1-lam) U - lam F), epsilon "
            "(max U s.t. F <= epsilon) or utility_slack (min F s.t. U >= U* - slack); "
            f"got {given or 'none'}"
        )
    if chance_delta is not None and epsilon is None:
        raise FairdecideError("chance_delta applies to the epsilon trade-off only")
    if lam is not None:
        return Mixture(as_number(lam, "lam"))
    if epsilon is not None:
        delta = None
        if chance_delta is not None:
            delta = as_number(chance_delta, "chance_delta")
            if not 0.0 < delta < 1.0:
                raise FairdecideError(f"chance_delta must lie in (0, 1), got {chance_delta!r}")
        return FairnessConstraint(tolerances(epsilon, n_criteria), delta)
    s = as_number(utility_slack, "utility_slack")
    if not np.isfinite(s) or s < 0:
        raise FairdecideError(f"utility_slack must be a finite number >= 0, got {utility_slack!r}")
    return UtilityConstraint(s)


def _given_tradeoff(tradeoff: Any, n_criteria: int, keywords: list[str]) -> Tradeoff:
    """``tradeoff=`` checked: a Tradeoff, alone, that fits the number of criteria."""
    if not isinstance(tradeoff, Tradeoff):
        raise FairdecideError(
            "tradeoff must be a trade-off object (fairdecide.optimize.Mixture, "
            "FairnessConstraint, UtilityConstraint or MaxUtility), got "
            f"{type(tradeoff).__name__} {tradeoff!r}")
    if keywords:
        raise FairdecideError(
            f"give the trade-off once: tradeoff={tradeoff!r} or the keyword "
            f"{keywords[0]}, not both")
    if tradeoff.n_criteria == 0 and n_criteria:
        raise FairdecideError(
            f"{type(tradeoff).__name__}() takes no fairness criteria (got {n_criteria}); "
            "leave criteria out, or give another trade-off")
    if tradeoff.n_criteria is None and not n_criteria:
        raise FairdecideError(f"{tradeoff!r} needs at least one fairness criterion")
    eps = tradeoff.epsilon if tradeoff.bounds_deviations else None
    if eps is not None and len(eps) != n_criteria:
        if len(eps) != 1:
            raise FairdecideError(
                f"FairnessConstraint has {len(eps)} tolerances for {n_criteria} criteria: "
                "give one, or one per criterion")
        tradeoff = replace(tradeoff, epsilon=eps * n_criteria)
    return tradeoff


def with_capacity(criteria: Any, capacity: Any, tradeoff_args: tuple) -> tuple[Any, tuple]:
    """``optimize_policy(capacity=...)``: the capacities appended to the criteria as hard
    constraints (tolerance 0, whatever the fairness criteria's trade-off), so that the
    trade-off asked for becomes a :class:`FairnessConstraint` over every criterion.

    A capacity is a budget, not a preference: a trade-off that weighs deviations against
    utility (``lam``) or minimises them (``utility_slack``) would trade it off too, so
    those are refused with capacities. Returns (criteria, trade-off arguments)."""
    if capacity is None:
        return criteria, tradeoff_args
    caps = as_criteria(capacity, "capacity", kind=Capacity,
                       what='a Capacity such as Capacity("offer", at_most=0.1)')
    if not caps:
        return criteria, tradeoff_args
    crits = as_criteria(criteria)
    lam, epsilon, utility_slack, chance_delta, tradeoff = tradeoff_args
    fair = make_tradeoff(len(crits), lam, epsilon, utility_slack, chance_delta, tradeoff)
    if fair.n_criteria == 0:  # utility alone
        eps: tuple[float, ...] = ()
    elif fair.bounds_deviations:
        eps = fair.epsilon
    else:
        raise FairdecideError(
            f"capacity= is a hard budget; with {fair.describe([c.label for c in crits])!r} "
            "it would be traded against utility. Give the fairness criteria a tolerance "
            "(epsilon=...) instead, or pass the Capacity among the criteria to penalise "
            "its excess on purpose")
    hard = FairnessConstraint(eps + (0.0,) * len(caps), fair.chance_delta)
    return crits + caps, (None, None, None, None, hard)
