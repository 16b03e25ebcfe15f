"""What every optimisation route is: :class:`Route` (what it accepts, how it solves a
session) and :class:`RouteResult` (what it found, returned: the policy's parameters, the
trade-off solved, the solver and the statistics and certificates of its solves). The
routes themselves are listed in :mod:`fairdecide.optimize.routes.router`."""

from __future__ import annotations

import abc
from dataclasses import dataclass, field
from typing import Any, ClassVar

from fairdecide.criteria.base import Capabilities

__all__ = ["Route", "RouteResult"]


@dataclass(frozen=True)
class RouteResult:
    """What a route found: the policy's parameters (free rows; a family's theta; a units
    table's vertex prices and mixture weights), the raw simplex violation, a status word
    and (for one-program routes) the solver's own values to check against the
    recomputation; the trade-off it solved (its utility floor set), the solver in words,
    the statistics of its solves and their certificates."""

    pi: Any
    violation: float
    status: str
    solver_values: dict[str, Any] | None = None
    tradeoff: Any = None
    solver: str = "none"
    stats: dict[str, Any] = field(default_factory=dict)
    certificates: dict[str, dict[str, Any]] = field(default_factory=dict)


class Route(abc.ABC):
    """An optimisation route."""

    name: ClassVar[str] = ""

    @abc.abstractmethod
    def refuses(self, capabilities: list[Capabilities], kind: str) -> str | None:
        """None if the route takes these criteria and kind of session, else why not."""

    @abc.abstractmethod
    def solve(self, session: Any) -> RouteResult:
        """Solve the session's trade-off (its utility floor set first, if it needs the
        best utility U*) and return what was found."""
