"""Errors raised by fairdecide.

Every error names the argument or quantity at fault and says what to do about it.
"""

from __future__ import annotations

__all__ = [
    "FairdecideError",
    "InfeasibleToleranceError",
    "NotCertifiedError",
    "PriceWarning",
    "SolverError",
    "SolverFallbackWarning",
    "SuspiciousLabelError",
    "SuspiciousLabelWarning",
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
        self.smallest = type(smallest)(smallest)  # a ByCriterion keeps its lookups


class NotCertifiedError(FairdecideError):
    """No policy certified: the held-out safety test could not show, at the requested
    confidence, that the fitted policy's deviations are within the tolerance (the
    estimators' ``guarantee``). Nothing unsafe is returned.

    Attributes
    ----------
    bounds : dict[str, float]
        The upper confidence bound each criterion reached on the safety rows (empty when
        the tolerance left no room for the bound's width, and no policy was fitted).
    smallest_epsilon : float
        The smallest tolerance the safety test would have passed with this policy (the
        largest bound); without a policy, the predicted width of the bound, below which
        no tolerance can pass on this many rows.
    certificate : HeldOutGuarantee or None
        The failed held-out guarantee (None when no policy was fitted).
    """

    def __init__(self, message: str, bounds: dict[str, float], smallest_epsilon: float,
                 certificate: object = None):
        super().__init__(message)
        self.bounds = type(bounds)(bounds)  # a ByCriterion keeps its short-name lookups
        self.smallest_epsilon = float(smallest_epsilon)
        self.certificate = certificate


class SolverError(FairdecideError):
    """The optimisation solver failed or returned an unusable answer."""


class VerificationError(FairdecideError):
    """A solver's answer failed the independent recomputation from the decision table."""


class PriceWarning(UserWarning):
    """A certified policy is estimated to be worth less than the best constant rule (one
    action for everyone): its confidence set is too wide for the guarantee to pay
    (:class:`~fairdecide.optimize.price.Price`)."""


class SuspiciousLabelError(FairdecideError):
    """The audit stops: a column has a rare value whose form looks like a typo of a
    frequent one (a lone ``"yes"`` among 0s and 1s, ``"Meduim"`` beside ``"Medium"``;
    :func:`~fairdecide.labels.suspect_labels` gives the rule). The message names the
    column, the value, its rows, and both ways on: correct the rows, or, if the value is
    real, declare every value (``outcome_labels=``, ``action_labels=``) or pass
    ``accept_rare_labels=True``.

    Attributes
    ----------
    suspects : list of dict
        One per suspect value: ``column``, ``value``, ``rows`` (its row count), ``reason``.
    command_line : str
        The same message naming the command's options (``--outcome-labels``,
        ``--accept-rare-labels``) instead of the keyword arguments.
    """

    def __init__(self, message: str, suspects: list[dict], command_line: str):
        super().__init__(message)
        self.suspects = [dict(s) for s in suspects]
        self.command_line = command_line


class SolverFallbackWarning(UserWarning):
    """A solver asked for by name (``solver=...``) did not solve a program: it does not
    take it (its declaration in :mod:`fairdecide.optimize.engine.chain` says why) or
    handed it back at run time, and another solver of the chain solved it. The message
    names the solver asked, why and the solver that solved; ``result.solver_choice`` and
    ``result.explain()`` keep it. Leave ``solver=None`` for the default chain, or ask for
    a solver that takes the program."""


class SuspiciousLabelWarning(UserWarning):
    """A variable has a rare value whose form looks like a typo of a frequent one (a
    single ``"yes"`` among thousands of 0s and 1s; :func:`~fairdecide.labels.suspect_labels`
    gives the rule). Declare the expected labels (``outcome_labels=``, ``action_labels=``)
    to make any other value an error instead. The audit stops on such a value
    (:class:`SuspiciousLabelError`)."""
