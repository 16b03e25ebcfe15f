"""What the solving chain is given and what it gives back.

A **task** is something to solve and the stages it is offered at, in order: a
trade-off over criteria for a free policy (:class:`TradeoffTask`: a belief first in the
space of its scenarios, then its whole program), an assembled program
(:class:`ProgramTask`), constraint generation's cuts (:class:`CutsTask`), a units table
(:class:`UnitsTask`), a Pareto frontier's tolerances kept warm
(:class:`TolerancesTask`), or a plain linear program (:class:`LPTask`: a fair
ranking's). Its **case** (:class:`~fairdecide.optimize.engine.cases.Case`) is what the
chooser reads of it at a stage.
Every solver's run takes a task and returns one of two things: a
:class:`SolveResult`, what it found, or a :class:`HandBack`, why it gave the task back
(the next solver of the order then runs). The chain
(:mod:`fairdecide.optimize.engine.chain`) chooses and runs; this module only holds.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from fairdecide.optimize.engine.rounds import Certificate

__all__ = ["CutsTask", "HandBack", "LPTask", "ProgramTask", "SolveResult", "Task",
           "TolerancesTask", "TradeoffTask", "UnitsTask"]


@dataclass
class SolveResult:
    """What a solver found (every stage's solvers return one, or a :class:`HandBack`).

    A program's solvers give its solution vector ``x`` (``program``: the program whose
    columns locate it); a belief-stage solver, which writes no program, gives the policy
    rows ``pi`` with its own ``utility`` and deviation bounds ``f``.
    """

    x: np.ndarray | None
    objective: float
    ok: bool
    status: str
    #: the solver, in words (``result.solver``)
    solver: str
    seconds: float
    iterations: int | None = None
    #: the solver's statistics by solver ("structured": its rounds and gap, or why it
    #: fell back; "interior_point": the uncrossed interior point's gap)
    details: dict[str, Any] | None = None
    #: d objective / d b_ub at the optimum (the inequality rows' duals), where the
    #: solver reports them
    ub_duals: np.ndarray | None = None
    #: the certificate of optimality it leaves (``result.certificates["optimality"]``)
    certificate: Certificate | None = None
    #: the chooser's choice (:meth:`fairdecide.optimize.engine.chain.Choice.as_dict`)
    choice: dict[str, Any] | None = None
    #: the program whose columns locate ``x``
    program: Any = None
    #: the program's size (n_variables, n_constraints, nnz)
    size: dict[str, int] | None = None
    #: a belief-stage solver's policy rows (n_free, n_actions), utilities (K,) and
    #: deviation bounds (n_criteria, K)
    pi: np.ndarray | None = None
    utility: np.ndarray | None = None
    f: np.ndarray | None = None
    #: a belief-stage solver's duals of the trade-off's tolerance rows and each row's
    #: criterion (d objective / d epsilon)
    tolerance_duals: tuple[np.ndarray, np.ndarray] | None = None
    #: each criterion's own certificate, by name (constraint generation's cuts)
    certificates: dict[str, dict[str, Any]] | None = None
    #: further figures of the run for ``result.stats`` (constraint generation's rounds)
    stats: dict[str, Any] = field(default_factory=dict)
    #: the trade-off it solved, when the run completed it (a units table's utility floor)
    tradeoff: Any = None
    #: the vertices of a units table's mixture policy (the master's duals per round)
    duals: list[np.ndarray] | None = None

    @classmethod
    def of_model(cls, model: Any, ok: bool, status: str, solver: str, seconds: float,
                 iterations: int, details: dict[str, Any] | None = None, m_ub: int = 0
                 ) -> SolveResult:
        """The result of a solved HighsModel: its values and objective when ``ok``
        (otherwise HiGHS's status word), and the duals of its first ``m_ub`` rows (the
        inequality rows, as ``HighsModel.from_rows`` lays them out)."""
        return cls(model.values() if ok else None, model.objective if ok else np.nan, ok,
                   "optimal" if ok else status, solver, seconds, iterations, details,
                   model.row_duals()[:m_ub] if ok and m_ub else None)


@dataclass(frozen=True)
class HandBack:
    """A solver gave the task back: why (it joins ``result.solver_choice``), and its
    statistics so far."""

    why: str
    details: dict[str, Any] = field(default_factory=dict)


@dataclass(kw_only=True)
class Task:
    """Something to solve: the solver asked for (:func:`~fairdecide.optimize.engine.
    chain.resolve_solver`'s name, None for the default chain), a time limit, and whether
    the solver's certificate of optimality is wanted."""

    #: the stages the task is offered at, in order
    stages: ClassVar[tuple[str, ...]] = ()
    asked: str | None = None
    time_limit: float | None = None
    #: False where the caller discards the certificate (successive linearisation's
    #: steps, whose programs' optima are not the result's): a solver whose certificate
    #: is a second solve (a cone solver's tangent relaxation, an LP) then leaves none
    certify: bool = True


@dataclass(kw_only=True)
class TradeoffTask(Task):
    """``tradeoff`` over ``criteria`` for the free policy of ``prog`` (a PolicyProgram
    of ``belief``), expanded at ``point`` as ``how`` says within a trust region of
    radius ``trust``; offered to the belief stage first when ``by_scenarios``."""

    prog: Any
    belief: Any
    tradeoff: Any
    criteria: list
    point: np.ndarray | None = None
    trust: float | None = None
    how: str = "exact"
    by_scenarios: bool = False
    #: the whole program, written when the program stage is reached
    program: Any = None

    @property
    def stages(self) -> tuple[str, ...]:
        return ("belief", "program") if self.by_scenarios else ("program",)

    def built(self) -> Any:
        """The whole program (written once)."""
        if self.program is None:
            self.program = self.prog.build(
                self.criteria, self.tradeoff, point=self.point, how=self.how,
                trust=None if self.point is None else self.trust)
        return self.program


@dataclass(kw_only=True)
class ProgramTask(Task):
    """An assembled program; ``belief``: the belief-stage case (a
    :class:`~fairdecide.optimize.engine.cases.Case`) of the trade-off and criteria it
    was written for, if any (so an asked belief-stage solver's refusal of it can be
    said)."""

    stages = ("program",)
    program: Any
    belief: Any = None

    def built(self) -> Any:
        return self.program


@dataclass(kw_only=True)
class CutsTask(Task):
    """Constraint generation of ``tradeoff`` over ``criteria`` (named ``names``), some
    of whose rows are cuts, for the fixed population of ``prog``; cuts count violated
    above a share of ``tol``, at most ``max_iter`` rounds."""

    stages = ("cuts",)
    prog: Any
    tradeoff: Any
    criteria: list
    names: list[str]
    tol: float
    max_iter: int


@dataclass(kw_only=True)
class UnitsTask(Task):
    """``tradeoff`` over ``criteria`` for the units table ``world`` (a FrameWorld), at
    most ``max_iter`` passes over its units."""

    stages = ("units",)
    world: Any
    problem: Any
    criteria: list
    tradeoff: Any
    max_iter: int


@dataclass(kw_only=True)
class TolerancesTask(Task):
    """One tolerance of a Pareto frontier: ``program`` (an epsilon trade-off over one
    criterion) with its tolerance rows at ``epsilon``. The HiGHS model is kept in the
    task from tolerance to tolerance (``model``, ``previous``: the last tolerance it
    solved)."""

    stages = ("tolerances",)
    program: Any
    epsilon: float = 0.0
    model: Any = None
    previous: float | None = None


@dataclass(kw_only=True)
class LPTask(Task):
    """min c @ x s.t. lo <= A x <= hi, lb <= x <= ub, of the family ``stage`` ("ranking
    matrix": the whole program of a fair ranking)."""

    stage: str
    c: np.ndarray
    lb: np.ndarray
    ub: np.ndarray
    A: Any
    lo: np.ndarray
    hi: np.ndarray

    @property
    def stages(self) -> tuple[str, ...]:
        return (self.stage,)
