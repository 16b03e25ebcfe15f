"""Progress of long solves: every round of a master loop, to logging and to a callback.

The loops that can run for minutes (the scenario cuts of a belief, the structured
solver's sifting, constraint generation for Lipschitz criteria, the distributed master)
report each round as a :class:`Progress`: the round, the restricted program's objective,
the certificate the loop stops on and the seconds since it began. Every report goes to
the logger ``fairdecide.optimize.progress`` at DEBUG (silent unless asked for), and to
the callback given to ``optimize_policy(..., progress=...)`` or, around any other call
that optimises (``pareto_frontier``, an estimator's ``fit``), to :func:`reporting`.
``progress=True`` shows a :class:`ProgressBar` on standard error instead of a callback.

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
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, TextIO

from fairdecide._common.validation import as_real
from fairdecide.exceptions import FairdecideError

__all__ = ["Progress", "ProgressBar", "report", "reporting"]

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


class ProgressBar:
    """A callback that shows the last round of a long solve on one line of ``stream``.

    On a terminal the line is rewritten in place; elsewhere (a log file, a notebook's
    captured output) a line is written at most every ``interval`` seconds. Call
    :meth:`close` at the end (``progress=True`` and :func:`reporting` do) to write the
    last round and end the line.

    Parameters
    ----------
    stream : file-like, optional
        Where the line goes; standard error by default.
    interval : float, default=0.5
        Least seconds between two lines written to a stream that is not a terminal.

    Examples
    --------
    >>> import io
    >>> import fairdecide as fd
    >>> from fairdecide.datasets import make_tabular_problem
    >>> problem, world = make_tabular_problem(3000, 3, 3, random_state=1)
    >>> out = io.StringIO()
    >>> bar = fd.optimize.ProgressBar(out, interval=0.0)
    >>> res = fd.optimize_policy(problem, world, fd.Independence(), epsilon=0.02,
    ...                          progress=bar)
    >>> bar.close()
    >>> out.getvalue().splitlines()[-1].startswith("structured: round")
    True
    """

    def __init__(self, stream: TextIO | None = None, interval: float = 0.5) -> None:
        self.interval = as_real(interval, "interval", low=0.0)
        if stream is not None and not callable(getattr(stream, "write", None)):
            raise FairdecideError(f"stream must be a writable text stream such as "
                                  f"sys.stderr or an io.StringIO, got {stream!r:.60}")
        self.stream = stream if stream is not None else sys.stderr
        is_tty = getattr(self.stream, "isatty", None)
        self.tty = bool(is_tty()) if callable(is_tty) else False  # a file-like's own word
        self.last: Progress | None = None
        self._shown: Progress | None = None
        self._written: float | None = None  # time.monotonic() of the last line
        self._width = 0

    @staticmethod
    def line(progress: Progress) -> str:
        """The text shown for ``progress``."""
        return (f"{progress.solver}: round {progress.round}, gap {progress.gap:.2e}, "
                f"objective {progress.objective:.10g}, {progress.seconds:.1f} s")

    def __call__(self, progress: Progress) -> None:
        self.last = progress
        now = time.monotonic()
        if self.tty or self._written is None or now - self._written >= self.interval:
            self._write(progress)
            self._written = now

    def _write(self, progress: Progress) -> None:
        text = self.line(progress)
        if self.tty:
            self.stream.write("\r" + text.ljust(self._width))
            self._width = len(text)
        else:
            self.stream.write(text + "\n")
        self.stream.flush()
        self._shown = progress

    def close(self) -> None:
        """Write the last round if it is not shown yet, and end the line."""
        if self.last is not None and self._shown is not self.last:
            self._write(self.last)
        if self.tty and self._width:
            self.stream.write("\n")
            self.stream.flush()
            self._width = 0


def report(progress: Progress) -> None:
    """Log ``progress`` at DEBUG and hand it to the callback in force, if any."""
    logger.debug("%s round %d: objective %.12g, gap %.3g, %.2f s %s", progress.solver,
                 progress.round, progress.objective, progress.gap, progress.seconds,
                 progress.details)
    callback = _CALLBACK.get()
    if callback is not None:
        callback(progress)


@contextlib.contextmanager
def reporting(callback: Callable[[Progress], Any] | bool | None) -> Iterator[None]:
    """Within the block, every round of a long solve calls ``callback(Progress)``.

    Parameters
    ----------
    callback : callable, bool or None
        Called with each :class:`Progress`; True shows a :class:`ProgressBar` on
        standard error, closed when the block ends; None (or False) keeps the callback
        of an enclosing block (if any), so ``optimize_policy(..., progress=None)``
        inside ``reporting(f)`` still reports to ``f``.

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
    if callback is not None and not isinstance(callback, bool) and not callable(callback):
        raise FairdecideError(f"progress must be a callable taking a Progress, True (a "
                              f"progress bar on standard error) or None; got "
                              f"{callback!r:.60}")
    if callback is None or callback is False:
        yield
        return
    bar = ProgressBar() if callback is True else None
    token = _CALLBACK.set(bar if bar is not None else callback)
    try:
        yield
    finally:
        _CALLBACK.reset(token)
        if bar is not None:
            bar.close()
