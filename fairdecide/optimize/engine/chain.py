"""The solving chain: every solver declared once with its run, the one chooser, and the
one loop that runs what it chose.

Each solver is a :class:`Solver`: its name (what ``optimize_policy(solver=...)`` takes,
in any case, at the stages a user may name), the stage it works at, what it takes
(:attr:`Solver.cannot`: a case it refuses even when asked for), when the default chain
uses it (:attr:`Solver.default`: its size and shape thresholds; the rules are in
:mod:`fairdecide.optimize.engine.cases`), what it certifies, and its run
(:attr:`Solver.run`: a task in, a :class:`~fairdecide.optimize.engine.tasks.SolveResult`
or a :class:`~fairdecide.optimize.engine.tasks.HandBack` out). :func:`choose` reads a
:class:`~fairdecide.optimize.engine.cases.Case` (what a task looks like at a stage) and
the name asked for, and returns a :class:`Choice`: the solvers to try in order, why,
and why each other solver was passed over. :func:`solve` is the one loop, for every
stage: it offers a task to its stages in order, runs the chosen solvers until one
solves, and records the hand-backs (a certificate that fails, or a measured quantity the
declaration cannot know, such as the number of a belief's terms, out of range): the
next in the order then solves, and the hand-back joins the recorded reason.
``result.solver_choice`` keeps the choice and ``result.explain()`` says it in words. A
solver asked for by name that does not solve a program is a
:class:`~fairdecide.exceptions.SolverFallbackWarning` (:func:`fallback`'s words: the
solver asked, why, and the solver that took the program); one that names a solver
where a stage has none to name (a units table, a parametric family) is an error.

Every decision by a solver's name or a size is made here (and in the rules of
:mod:`~fairdecide.optimize.engine.cases`), and no other module reads one
(``tests/test_layout.py``): the HiGHS method of every model the package keeps warm
(:func:`highs_method`) included.

Stages. A belief (several scenarios) is first offered to the solvers that work in the
space of its scenarios or its policy without writing its whole program ("belief");
everything else, and a belief none of them takes, is an assembled
:class:`~fairdecide.optimize.program.policy_program.Program` ("program"). Constraint
generation's rounds ("cuts"), a units table ("units"), a Pareto frontier's tolerances
("tolerances"), a fair ranking's whole program ("ranking matrix") and a master a loop
keeps warm ("master") are the others.

Names. ``solver=None`` is the default chain. "highs" is HiGHS on the whole program with
its method chosen by size (never another solver); "highs-ds", "highs-ipm" and
"highs-ipm-no-crossover" force a method. Any other name that is not a solver of this
table goes to cvxpy if cvxpy has it installed ("CLARABEL", "SCS", ...); "HIGHS" is this
table's HiGHS in any case, not cvxpy's. docs/optimization.md tabulates the declarations.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any

from fairdecide.exceptions import FairdecideError, SolverError, SolverFallbackWarning
from fairdecide.optimize.engine import (
    cases,
    distributed_master,
    generation,
    scenario_cuts,
    solvers,
    structured,
    term_ipm,
    unit_ipm,
)
from fairdecide.optimize.engine.cases import Case
from fairdecide.optimize.engine.highs_model import (
    DUAL_SIMPLEX,
    INTERIOR_NO_CROSSOVER,
    INTERIOR_POINT,
)
from fairdecide.optimize.engine.tasks import HandBack, ProgramTask, SolveResult, Task

__all__ = ["BELIEF_SOLVERS", "SOLVERS", "Case", "Choice", "Solver", "check_asked", "choose",
           "fallback", "highs_method", "resolve_solver", "solve", "solve_program"]

#: The solver of programs with KL terms (an exponential cone), run without cvxpy.
CONE_SOLVER = "CLARABEL"

Refusal = Callable[[Case], "str | None"]
Run = Callable[[Any], "SolveResult | HandBack"]


@dataclass(frozen=True)
class Solver:
    """One solver's declaration (see the module)."""

    name: str
    stage: str
    summary: str
    #: the certificate it leaves in ``result.certificates["optimality"]`` (every solver
    #: leaves one: a duality gap and the largest violation, and whether both are within
    #: its bound): what bounds the optimum in it
    certifies: str
    cannot: Refusal
    default: Refusal
    #: what it does to a task of its stage
    run: Run
    thresholds: dict[str, float] = field(default_factory=dict)
    #: HiGHS's method, for HiGHS on a whole program (what solver="highs" may choose) or
    #: a model a loop keeps (:func:`highs_method`)
    method: Mapping[str, Any] | None = None


def _as_program(case: Case) -> Case:
    """The program stage's case of the same program."""
    return replace(case, stage="program")


def _run_terms(task: Any) -> SolveResult | HandBack:
    """The term interior point, under the chain's size rule for its terms."""
    return term_ipm.solve_term_ipm(task.prog, task.belief, task.tradeoff, task.criteria,
                                   partial(cases.term_sizes, asked=task.asked == "term-ipm"),
                                   task.time_limit)


def _run_rounds(task: Any) -> SolveResult | HandBack:
    """Constraint generation with each round's program solved by the program stage's
    choice (its belief-stage case told, so an asked belief-stage solver's refusal is
    said)."""
    belief = Case.of_belief(task.prog, task.tradeoff, task.criteria)
    return generation.generate(task, lambda program: solve(ProgramTask(
        program=program, asked=task.asked, time_limit=task.time_limit, belief=belief)))


_HIGHS_RUNS = {"highs-ipm-no-crossover": (solvers.run_interior, INTERIOR_NO_CROSSOVER,
                                          "HiGHS (interior point, no crossover)"),
               "highs-ds": (solvers.run_highs, DUAL_SIMPLEX, "HiGHS (highs-ds)"),
               "highs-ipm": (solvers.run_highs, INTERIOR_POINT, "HiGHS (highs-ipm)")}


def _highs(name: str, summary: str, default: Refusal, thresholds: dict | None = None
           ) -> Solver:
    """HiGHS on the whole program by the method its name says."""
    run, method, label = _HIGHS_RUNS[name]
    return Solver(name, "program", summary,
                  "HiGHS's gap and the unit simplices' Lagrangian gap", cases.kl, default,
                  partial(run, method=method, label=label), thresholds or {}, method)


def _cvxpy(name: str, summary: str = "", certifies: str = "",
           default: Refusal = cases.never) -> Solver:
    """A cvxpy solver by its name, its tangent relaxation solved by the dual simplex."""
    return Solver(name, "program", summary, certifies, cases.never, default,
                  partial(solvers.run_cvxpy, solver=name, relaxation=DUAL_SIMPLEX))


SOLVERS: tuple[Solver, ...] = (
    Solver("term-ipm", "belief",
           "the unit interior point over a penalised belief's absolute-value terms, its "
           "normal equations in the policy's space (fairdecide.optimize.engine.term_ipm)",
           "Lagrange's bound at its duals", cases.term_cannot, cases.never, _run_terms,
           {"max_columns": cases.TERM_MAX_COLUMNS,
            "terms_per_column": cases.TERMS_PER_COLUMN,
            "max_entries": cases.TERM_MAX_ENTRIES}),
    Solver("scenarios", "belief",
           "scenario cuts: a restricted master over units and Kelley cuts per scenario "
           "(fairdecide.optimize.engine.scenario_cuts)",
           "the master loop's gap", cases.scenarios_cannot, cases.scenarios_default,
           scenario_cuts.run),
    Solver(CONE_SOLVER, "program",
           "Clarabel on the program's cones, written directly (exponential cones: KL "
           "terms; fairdecide.optimize.engine.solvers.run_clarabel)",
           "the tangent relaxation's bound (an LP, HiGHS)", cases.never,
           cases.cvxpy_default, partial(solvers.run_clarabel, relaxation=DUAL_SIMPLEX)),
    Solver("structured", "program",
           "sifting over unit simplices from a binned start "
           "(fairdecide.optimize.engine.structured)",
           "the master loop's gap", cases.structured_cannot, cases.structured_default,
           structured.run,
           {"min_columns": cases.STRUCTURED_MIN_COLUMNS,
            "max_rows_per_unit": cases.STRUCTURED_MAX_ROWS_PER_UNIT}),
    Solver("unit-ipm", "program",
           "Mehrotra's interior point over unit blocks with a dense border "
           "(fairdecide.optimize.engine.unit_ipm)",
           "its primal-dual gap and the unit simplices' Lagrangian gap",
           cases.structured_cannot, cases.unit_ipm_default, unit_ipm.run,
           {"belief_min_columns": cases.BELIEF_IPM_MIN_COLUMNS}),
    _highs("highs-ipm-no-crossover",
           "HiGHS's interior point stopped at its gap, without crossover",
           cases.large_belief),
    _highs("highs-ds", "HiGHS's dual simplex on the whole program", cases.simplex_default,
           {"max_columns": cases.SIMPLEX_MAX_COLUMNS["policy"]}),
    _highs("highs-ipm", "HiGHS's interior point with crossover on the whole program",
           cases.ipm_default),
    Solver("highs-dual-warm", "cuts",
           "constraint generation's program kept warm in HiGHS as its dual, each cut a "
           "column (fairdecide.optimize.engine.generation)",
           "the cut loop's violation over every pair", cases.kl, cases.never,
           partial(generation.generate, warm=DUAL_SIMPLEX), method=DUAL_SIMPLEX),
    Solver("each round", "cuts",
           "constraint generation, each round's program rebuilt and solved by the "
           "program stage's choice (fairdecide.optimize.engine.generation)",
           "the cut loop's violation over every pair", cases.never, cases.never,
           _run_rounds),
    Solver("distributed", "units",
           "column generation over a units table's blocks, one pass over the units per "
           "round (fairdecide.optimize.engine.distributed_master)",
           "the master loop's gap", cases.never, cases.never,
           partial(distributed_master.run, method=DUAL_SIMPLEX), method=DUAL_SIMPLEX),
    Solver("highs-ds", "tolerances",
           "a Pareto frontier's program kept in one HiGHS model, each tolerance solved by "
           "the dual simplex from the last one's basis (fairdecide.optimize.engine.solvers)",
           "none: each point is verified on its decision tables",
           cases.warm_tolerances_cannot, cases.never,
           partial(solvers.run_warm_tolerance, method=DUAL_SIMPLEX, label="HiGHS (highs-ds)"),
           method=DUAL_SIMPLEX),
    Solver("highs-ds", "ranking matrix",
           "HiGHS's dual simplex on a fair ranking's whole program over P "
           "(fairdecide.assignment)", "none: the ranking is verified from its matrix",
           cases.never, cases.ranking_simplex_default,
           partial(solvers.run_lp, method=DUAL_SIMPLEX, label="HiGHS (highs-ds)"),
           {"max_columns": cases.SIMPLEX_MAX_COLUMNS["ranking matrix"]}, DUAL_SIMPLEX),
    Solver("highs-ipm", "ranking matrix",
           "HiGHS's interior point with crossover on a fair ranking's whole program over P "
           "(fairdecide.assignment)", "none: the ranking is verified from its matrix",
           cases.never, cases.ranking_ipm_default,
           partial(solvers.run_lp, method=INTERIOR_POINT, label="HiGHS (highs-ipm)"),
           method=INTERIOR_POINT),
    Solver("highs-ds", "master",
           "HiGHS's dual simplex on a restricted master a loop keeps warm, re-solved from "
           "its last basis as rows and columns join (the distributed master, constraint "
           "generation's dual, a ranking's cuts and rankings)", "its loop's certificate",
           cases.never, cases.never,
           partial(solvers.run_lp, method=DUAL_SIMPLEX, label="HiGHS (highs-ds)"),
           method=DUAL_SIMPLEX),
)
#: The stages whose solvers a user may name; the others are their route's own.
NAMEABLE = ("belief", "program")
_BY_NAME = {s.name.lower(): s for s in SOLVERS if s.stage in NAMEABLE}
_BY_STAGE = {(s.stage, s.name): s for s in SOLVERS}
#: The solvers of the belief stage.
BELIEF_SOLVERS = frozenset(s.name for s in SOLVERS if s.stage == "belief")
#: The names that mean HiGHS on the whole program.
_HIGHS_NAMES = frozenset({"highs"} | {s.name for s in SOLVERS
                                      if s.stage == "program" and s.method is not None})
#: What an asked solver is told where its stage has none to name.
_NOTHING_TO_NAME = {
    "units": "names a solver of in-memory programs; a FrameWorld is solved by the "
             "distributed master (Dantzig-Wolfe, HiGHS): leave solver=None",
    "parametric": "names a program solver; a parametric policy is optimised by the "
                  "gradient route (SLSQP / L-BFGS): leave solver=None",
}


def resolve_solver(solver: Any) -> str | None:
    """The canonical name of ``solver`` (None, "highs", a name of :data:`SOLVERS`, or an
    installed cvxpy solver's upper-case name), read case-insensitively; raises one error
    naming every choice for anything else."""
    if solver is None:
        return None
    if not isinstance(solver, str):
        raise FairdecideError(f"solver must be a string such as 'highs', got {solver!r}")
    name = solver.strip().lower()
    if name == "highs" or name in _BY_NAME:
        return _BY_NAME[name].name if name in _BY_NAME else "highs"
    import cvxpy as cp  # optional and slow to import: only for a name not of this table

    if name.upper() in cp.installed_solvers():
        return name.upper()
    names = ", ".join(repr(s.name) for s in SOLVERS
                      if s.name != CONE_SOLVER and s.stage in NAMEABLE)
    raise SolverError(
        f"solver {solver!r} is not usable here: use None (the default chain), 'highs' "
        f"(HiGHS, its method by size), {names}, or an installed cvxpy solver "
        f"{[s for s in cp.installed_solvers() if s != 'HIGHS']}")


def check_asked(stage: str, solver: Any) -> None:
    """Refuse a ``solver`` asked for where ``stage`` ("units": a units table;
    "parametric": a parametric family) has no solver a user may name: an error naming
    the argument, cases.never a silent substitution."""
    if solver is not None:
        raise FairdecideError(f"solver={solver!r} {_NOTHING_TO_NAME[stage]}")


@dataclass
class Choice:
    """The solvers to try, in order, why the first, and why each other was passed over
    (``passed``: name -> reason); ``handed_back`` grows as solvers hand the case back."""

    order: list[str]
    reason: str
    passed: dict[str, str]
    handed_back: dict[str, str] = field(default_factory=dict)
    stage: str = "program"

    def as_dict(self) -> dict[str, Any]:
        return {"stage": self.stage, "order": list(self.order), "reason": self.reason,
                "passed_over": dict(self.passed), "handed_back": dict(self.handed_back)}


def choose(case: Case, asked: str | None) -> Choice:
    """The solvers for ``case`` under ``asked`` (a name from :func:`resolve_solver`).

    Belief stage: the asked belief-stage solver if it takes the case, or by default every
    belief-stage solver that takes it and whose default rule holds; the order may be
    empty (the whole program is then written). Program stage: an asked solver that takes
    the case, then HiGHS by size to take a hand-back (a cvxpy name: cvxpy alone);
    "highs": HiGHS by size; by default (or when the asked solver does not take the case)
    every solver whose default rule holds, in the table's order, ending with HiGHS.
    Cuts: the program kept warm as its dual by default or for "highs", each round by the
    program stage's choice otherwise. Units: the distributed master (an asked solver is
    an error, :func:`check_asked`). Tolerances: HiGHS's dual simplex kept warm when it
    is the program's first solver by default (or a HiGHS name is asked), none otherwise.
    A ranking's whole program, a master: HiGHS by size, or its dual simplex.
    """
    choice = _choose(case, asked)
    choice.stage = case.stage
    return choice


def _choose(case: Case, asked: str | None) -> Choice:
    stage = [s for s in SOLVERS if s.stage == case.stage]
    named = _BY_NAME.get(asked.lower()) if asked is not None else None
    others = "another solver was asked for"
    if case.stage == "belief":
        if asked is None:
            return _default(stage, case, {}, "the default chain")
        if named is None or named.stage != "belief":
            return Choice([], f"solver={asked!r} asked for", {s.name: others for s in stage})
        passed = {s.name: others for s in stage if s is not named}
        why = named.cannot(case)
        if why is not None:
            passed[named.name] = f"asked for, but it does not take {why}"
            return Choice([], f"solver={asked!r} asked for", passed)
        return Choice([named.name], f"solver={asked!r} asked for", passed)
    if case.stage == "cuts":
        warm, rounds = stage
        why = warm.cannot(case) or (None if asked in (None, "highs") else others)
        if why is None:
            return Choice([warm.name], "the default chain" if asked is None else
                          f"solver={asked!r} asked for", {})
        return Choice([rounds.name], "each round of constraint generation is solved by "
                      "the program stage's choice", {warm.name: why})
    if case.stage == "units":
        check_asked("units", asked)
        return Choice(["distributed"], "a units table (FrameWorld): the distributed master",
                      {})
    if case.stage == "tolerances":
        return _warm_tolerances(stage[0], case, asked)
    if case.stage != "program":
        return _default(stage, case, {}, "the default chain" if asked is None else
                        f"solver={asked!r} asked for")
    if asked is not None and named is None and asked != "highs":
        return Choice([asked], f"solver={asked!r} asked for (through cvxpy)", {})
    if asked == "highs":
        return _default([s for s in stage if s.name in _HIGHS_NAMES], case, {},
                        "solver='highs' asked for (HiGHS, its method by size)")
    passed = {}
    if named is not None and named.stage == "program":
        why = named.cannot(case)
        if why is None:
            tail = [n for n in _highs_order(case) if n != named.name]
            return Choice([named.name, *tail], f"solver={asked!r} asked for", {})
        passed[named.name] = f"asked for, but it does not take {why}"
    return _default(stage, case, passed, "the default chain" if asked is None else
                    f"solver={asked!r} asked for, solved by the default chain")


def _warm_tolerances(warm: Solver, case: Case, asked: str | None) -> Choice:
    """A frontier's tolerances kept warm by HiGHS's dual simplex where the program
    stage's choice under ``asked`` puts it first (where the interior point is HiGHS's
    method, or another solver's, the dual simplex is slow even warm), none otherwise."""
    reason = "the default chain" if asked is None else f"solver={asked!r} asked for"
    why = (None if asked is None or asked in _HIGHS_NAMES else
           "another solver was asked for") or warm.cannot(case)
    if why is None:
        first = _choose(_as_program(case), asked).order[0]
        why = None if first == warm.name else (
            f"the program's first solver is {first}, not {warm.name}: each tolerance is "
            "solved alone")
    if why is not None:
        return Choice([], reason, {warm.name: why})
    return Choice([warm.name], f"{reason}: {warm.name}, warm from tolerance to tolerance",
                  {})


def fallback(case: Case, asked: str | None, choice: Choice, solved_by: str,
             belief: dict[str, Any] | None = None) -> str | None:
    """What an asked solver's fallback says (a :class:`SolverFallbackWarning`), or None
    when the solver asked for solved the program of ``case`` (or none of this table was
    asked for: the default chain, "highs", a cvxpy solver): the solver asked, why it
    did not solve the program (it does not take it, as its declaration says, or it
    handed it back at run time: at this stage, or at the belief stage, whose choice is
    ``belief``), and which solver (``solved_by``, a name of the order of ``choice``)
    took it instead.

    Examples
    --------
    >>> case = Case("program", n_scenarios=1, n_units=0)
    >>> print(fallback(case, "unit-ipm", choose(case, "unit-ipm"), "highs-ds"))
    ... # doctest: +ELLIPSIS
    solver='unit-ipm' did not solve this program: it does not take no unit blocks. \
highs-ds took it instead, the default chain's choice (result.explain() ...
    """
    named = _BY_NAME.get(asked.lower()) if asked is not None else None
    if named is None or named.name == solved_by:
        return None
    handed = {**(belief or {}).get("handed_back", {}), **choice.handed_back}
    if named.name in handed:
        why = f"it handed the program back ({handed[named.name]})"
    else:
        # a belief-stage solver's declaration reads the trade-off and criteria, which a
        # program's case holds when described (one world is refused whatever they are)
        told = named.stage == "program" or case.described or case.n_scenarios < 2
        refusal = named.cannot(case) if told else None
        if refusal is None and named.stage == "program":
            return None  # it took the program (and solved it or handed it back)
        why = (f"it does not take {refusal}" if refusal is not None else
               "it solves a belief before its program is written, and this program was "
               "written whole (result.solver_choice says why)")
    return (f"solver={asked!r} did not solve this program: {why}. {solved_by} took it "
            "instead, the default chain's choice (result.explain() says why each solver was "
            "or was not used); leave solver=None, or ask for a solver that takes the program")


def highs_method(case: Case) -> Mapping[str, Any]:
    """HiGHS's method for a model of ``case`` that its caller keeps and solves itself (a
    master kept warm, ``Case("master")``; a ranking's whole program): the method of the
    solver :func:`choose` puts first."""
    return _BY_STAGE[case.stage, choose(case, None).order[0]].method


def _default(candidates: list[Solver], case: Case, passed: dict[str, str], reason: str
             ) -> Choice:
    """Every candidate that takes ``case`` and whose default rule holds, in order (a
    program: ending with HiGHS by size, or the cone solver)."""
    order = []
    for s in candidates:
        if s.name in passed:
            continue
        why = s.cannot(case) or s.default(case)
        if why is None:
            order.append(s.name)
        else:
            passed[s.name] = why
    if case.stage == "program":
        order += [n for n in _highs_order(case) if n not in order]
    if order:
        reason += f": {order[0]}"
    return Choice(order, reason, {k: v for k, v in passed.items() if k not in order})


def _highs_order(case: Case) -> list[str]:
    """HiGHS by size: the method its size rule picks (a large belief: no crossover);
    the cone solver for KL terms."""
    if case.kl:
        return [CONE_SOLVER]
    return [next(s.name for s in SOLVERS if s.stage == "program" and s.method is not None
                 and s.default(case) is None)]


def _case(task: Any, stage: str) -> Case:
    """The case of ``task`` at ``stage``."""
    if stage == "belief":
        return Case.of_belief(task.prog, task.tradeoff, task.criteria)
    if stage == "program":
        belief = (task.belief if isinstance(task, ProgramTask) else
                  Case.of_belief(task.prog, task.tradeoff, task.criteria))
        return Case.of_program(task.built(), belief)
    if stage == "cuts":  # KL terms are written by the criteria that declare a cone
        return Case("cuts", kl=any(c.capabilities(task.prog.problem).cone
                                   for c in task.criteria))
    if stage == "tolerances":
        return Case.of_program(task.program, stage="tolerances")
    if stage == "units":
        return Case("units", n_criteria=len(task.criteria))
    return Case(stage, n_variables=len(task.c))


def _solver(stage: str, name: str) -> Solver:
    """The declared solver ``name`` of ``stage``, or a cvxpy solver asked by name."""
    return _BY_STAGE.get((stage, name)) or _cvxpy(name)


def _offered(case: Case, asked: str | None) -> bool:
    """Whether a task is offered to the belief stage: a belief, or a belief-stage solver
    asked for (its refusal of one world is then recorded)."""
    return case.n_scenarios >= 2 or asked in BELIEF_SOLVERS


def solve(task: Task) -> SolveResult | None:
    """Solve ``task`` (see the module): at each of its stages in order, the solvers
    :func:`choose` picks under the task's asked solver run until one solves; a solver
    that hands the task back (it cannot certify an optimum, or a quantity it measures is
    out of range) passes it to the next, and says so in ``solver``, ``details`` and
    ``choice``. None when no solver of any stage took it (a frontier's tolerance the
    warm model does not solve); a program no solver took is an error.

    A solver asked for by name that does not solve a program (it does not take it, or
    hands it back) is a :class:`~fairdecide.exceptions.SolverFallbackWarning` naming it,
    why, and the solver that solved instead (:func:`fallback`): every program of every
    route and stage is solved here."""
    asked, before, spent, details = task.asked, None, 0.0, {}
    for stage in task.stages:
        case = _case(task, stage)
        if stage == "belief" and not _offered(case, asked):
            continue
        choice = choose(case, asked)
        for name in choice.order:
            t0 = time.perf_counter()
            found = _solver(stage, name).run(task)
            if isinstance(found, HandBack):
                spent += time.perf_counter() - t0
                choice.handed_back[name] = found.why
                details.update(found.details)
                continue
            if stage == "program":
                note = fallback(case, asked, choice, name, before)
                if note is not None:
                    warnings.warn(note, SolverFallbackWarning, stacklevel=2)
                program = task.built()
                found.program = program if found.program is None else found.program
                found.size = found.size or {"n_variables": program.n_variables,
                                            "n_constraints": program.n_constraints,
                                            "nnz": program.nnz}
            found.seconds += spent
            for handed, why in choice.handed_back.items():
                found.solver += f", after {handed} handed the program back ({why})"
            if details:
                found.details = {**details, **(found.details or {})}
            found.choice = choice.as_dict()
            if before is not None:
                found.choice["belief_stage"] = before
            return found
        if stage == "program":
            raise SolverError(f"no solver took the program ({choice.handed_back})")
        before = choice.as_dict() if stage == "belief" else None
    return None


def solve_program(program: Any, solver: str | None = None, time_limit: float | None = None,
                  *, belief: Case | None = None) -> SolveResult:
    """Solve an assembled ``program`` by the program stage's choice under ``solver`` (a
    name :func:`resolve_solver` accepts; see :func:`solve`). ``belief``: the belief-stage
    case of the trade-off and criteria ``program`` was written for
    (:meth:`Case.of_belief`), so that an asked belief-stage solver's refusal can be
    said."""
    return solve(ProgramTask(program=program, asked=resolve_solver(solver),
                             time_limit=time_limit, belief=belief))
