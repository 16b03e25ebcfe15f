"""Progress of long solves: every round of a master loop, to logging and to a callback.

The loops that can run for minutes (the scenario cuts of a belief, the structured
solver's sifting, constraint generation for Lipschitz criteria, the distributed master)
report each round as a :class:`Progress`: the round, the restricted program's objective,
the certificate the loop stops on and the seconds since it began. Every report goes to
the logger ``fairdecide.optimize.progress`` at DEBUG (silent unless asked for), and to
the callback given to ``optimize_policy(..., progress=...)``,
``optimize_distributed(..., progress=...)`` or, around any other call that optimises
(``pareto_frontier``, an estimator's ``fit``), to :func:`reporting`.

Examples
--------
>>> import fairdecide as fd
>>> from fairdecide.datasets import make_tabular_problem
>>> problem, world = make_tabular_problem(6, 2, 2, random_state=0)
>>> belief = fd.Belief([world, world], aggregate="mean")
>>> seen = []
>>> res = fd.optimize_policy(problem, belief, fd.Independence(), epsilon=0.01,
...                          progress=seen.append)
>>> seen[-1].solver, seen[-1].gap <= 1e-9 * max(1.0, abs(seen[-1].objective))
('scenario cuts', True)
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from fairdecide.exceptions import FairdecideError

__all__ = ["Progress", "report", "reporting"]

logger = logging.getLogger(__name__)

_CALLBACK: contextvars.ContextVar[Callable[[Progress], Any] | None] = contextvars.ContextVar(
    "fairdecide_progress", default=None)


@dataclass(frozen=True)
class Progress:
    """One round of a long solve.

    Attributes
    ----------
    solver : str
        Which loop: "scenario cuts", "structured", "constraint generation",
        "distributed" or "bias LP" (smoothness).
    round : int
        The round, from 1.
    objective : float
        The restricted program's objective, which the loop minimises: the negated
        trade-off objective once the restricted program is feasible (elastic penalties
        included before).
    gap : float
        What the loop stops on (:mod:`fairdecide.optimize.engine.rounds`): the
        Lagrangian duality gap (scenario cuts, structured, distributed), or the largest
        violation of an unseen cut (constraint generation, smoothness' bias LP).
    seconds : float
        Since the loop began.
    details : dict
        The loop's own counts (working units, cuts, columns).
    """

    solver: str
    round: int
    objective: float
    gap: float
    seconds: float
    details: dict = field(default_factory=dict)


def report(progress: Progress) -> None:
    """Log ``progress`` at DEBUG and hand it to the callback in force, if any."""
    logger.debug("%s round %d: objective %.12g, gap %.3g, %.2f s %s", progress.solver,
                 progress.round, progress.objective, progress.gap, progress.seconds,
                 progress.details)
    callback = _CALLBACK.get()
    if callback is not None:
        callback(progress)


@contextlib.contextmanager
def reporting(callback: Callable[[Progress], Any] | None) -> Iterator[None]:
    """Within the block, every round of a long solve calls ``callback(Progress)``.

    Parameters
    ----------
    callback : callable or None
        Called with each :class:`Progress`; None keeps the callback of an enclosing
        block (if any), so ``optimize_policy(..., progress=None)`` inside
        ``reporting(f)`` still reports to ``f``.

    Examples
    --------
    >>> import fairdecide as fd
    >>> from fairdecide.datasets import make_tabular_problem
    >>> from fairdecide.optimize import reporting
    >>> problem, world = make_tabular_problem(3000, 3, 3, random_state=1)
    >>> rounds = []
    >>> with reporting(rounds.append):
    ...     frontier = fd.pareto_frontier(problem, world, fd.Independence(), [0.05, 0.02])
    >>> sorted({p.solver for p in rounds})
    ['structured']
    """
    if callback is not None and not callable(callback):
        raise FairdecideError(f"progress must be a callable taking a Progress, or None; got "
                              f"{callback!r:.60}")
    if callback is None:
        yield
        return
    token = _CALLBACK.set(callback)
    try:
        yield
    finally:
        _CALLBACK.reset(token)
