"""What every optimisation route is: :class:`Route` (what it accepts, how it solves a
session) and :class:`RouteResult` (what it found). The routes themselves are listed in
:mod:`fairdecide.optimize.routes.router`."""

from __future__ import annotations

import abc
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from fairdecide.criteria.base import Capabilities

__all__ = ["Route", "RouteResult"]


@dataclass(frozen=True)
class RouteResult:
    """What a route found: free rows, the raw simplex violation, a status word and (for
    one-program routes) the solver's own values to check against the recomputation."""

    pi: np.ndarray
    violation: float
    status: str
    solver_values: dict[str, Any] | None = None


class Route(abc.ABC):
    """An optimisation route."""

    name: ClassVar[str] = ""

    @abc.abstractmethod
    def refuses(self, capabilities: list[Capabilities], policy_kind: str) -> str | None:
        """None if the route takes these criteria and policy kind, else why not."""

    @abc.abstractmethod
    def run(self, session: Any) -> RouteResult:
        """Solve the session's trade-off (its utility floor, if any, already set)."""

    def solve(self, session: Any) -> RouteResult:
        """Set the trade-off's utility floor if it needs the best utility U*, then run."""
        session.with_utility_floor()
        return self.run(session)
