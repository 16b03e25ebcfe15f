"""Errors raised by fairdecide.

Every error names the argument or quantity at fault and says what to do about it.
"""

from __future__ import annotations

__all__ = [
    "FairdecideError",
    "InfeasibleToleranceError",
    "SolverError",
    "VerificationError",
]


class FairdecideError(ValueError):
    """Base class of the errors fairdecide raises on purpose."""


class InfeasibleToleranceError(FairdecideError):
    """No policy meets the requested fairness tolerance.

    Attributes
    ----------
    smallest : dict[str, float]
        The smallest deviation found for each criterion whose tolerance could not be met.
    """

    def __init__(self, message: str, smallest: dict[str, float]):
        super().__init__(message)
        self.smallest = dict(smallest)


class SolverError(FairdecideError):
    """The optimisation solver failed or returned an unusable answer."""


class VerificationError(FairdecideError):
    """A solver's answer failed the independent recomputation from the decision table."""
