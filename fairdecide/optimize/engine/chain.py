"""The solving chain: every solver of the engine declared once, and the one chooser.

Each solver is a :class:`Solver`: its name (what ``optimize_policy(solver=...)`` takes,
in any case), the stage it works at, what it takes (:attr:`Solver.cannot`: a case it
refuses even when asked for), when the default chain uses it (:attr:`Solver.default`:
its size and shape thresholds), and what it certifies. :func:`choose` reads a
:class:`Case` (what a program, or a belief before its program is written, looks like)
and the name asked for, and returns a :class:`Choice`: the solvers to try in order, why,
and why each other solver was passed over. A solver may still hand a case back at run
time (its certificate fails, or a measured quantity the declaration cannot know, such as
the number of a belief's terms, is out of range); the next in the order then solves,
and the hand-back joins the recorded reason. ``result.solver_choice`` keeps it and
``result.explain()`` says it in words. A solver asked for by name that does not solve a
program is a :class:`~fairdecide.exceptions.SolverFallbackWarning` (:func:`fallback`'s
words: the solver asked, why, and the solver that took the program), raised where every
program is solved (:func:`fairdecide.optimize.engine.solvers.solve_program`).

Stages. A belief (several scenarios) is first offered to the solvers that work in the
space of its scenarios or its policy without writing its whole program ("belief"
stage); everything else, and a belief none of them takes, is an assembled
:class:`~fairdecide.optimize.program.policy_program.Program` ("program" stage).

Names. ``solver=None`` is the default chain. "highs" is HiGHS on the whole program with
its method chosen by size (never another solver); "highs-ds", "highs-ipm" and
"highs-ipm-no-crossover" force a method. Any other name that is not a solver of this
table goes to cvxpy if cvxpy has it installed ("CLARABEL", "SCS", ...); "HIGHS" is this
table's HiGHS in any case, not cvxpy's. docs/optimization.md tabulates the declarations.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fairdecide.exceptions import FairdecideError, SolverError
from fairdecide.optimize.engine.highs_model import SIMPLEX_MAX_COLUMNS, method_by_size

__all__ = ["BELIEF_SOLVERS", "HIGHS_NAMES", "SOLVERS", "Case", "Choice", "Solver", "choose",
           "choose_for_cuts", "choose_for_units", "fallback", "resolve_solver"]

#: The cvxpy solver used for programs with KL terms (an exponential cone).
CONE_SOLVER = "CLARABEL"
#: Structured sifting: the least policy columns for the default chain to use it ...
STRUCTURED_MIN_COLUMNS = 5_000
#: ... and the most coupling rows per unit: beyond, the program is "a few dense rows over
#: many simplices" (e.g. Lipschitz pairs written out) and HiGHS is better.
STRUCTURED_MAX_ROWS_PER_UNIT = 0.25
#: The unit interior point on a belief with more than two actions from this many policy
#: columns, whatever HiGHS's size rule (measured on single worlds) says: beside HiGHS's
#: dual simplex on beliefs of 100 and 200 x 4 x 5 cells (2,000 and 4,000 policy columns,
#: 2,648-4,968 variables, 8 and 32 scenarios) it took 0.02-0.84 of the time (separation
#: under epsilon 10% of its top: 0.22 against 3.5 s); at 600 policy columns (30 x 4 x 5)
#: 0.71-2.04 (benchmarks/results/belief_method.txt). Two actions stay with the size rule
#: (0.55-2.34 there, tens of milliseconds either way).
BELIEF_IPM_MIN_COLUMNS = 2_000
#: The term interior point: its dense matrix is over the policy's free columns (n^3 / 3
#: flops a step), at most this many ...
TERM_MAX_COLUMNS = 2_000
#: ... used by default when the terms are at least this many times the columns, and
#: when the dense term matrix has at most this many numbers (both checked at run time).
TERMS_PER_COLUMN, TERM_MAX_ENTRIES = 8, 1e8


@dataclass(frozen=True)
class Case:
    """What the chooser reads. ``stage`` "belief": a belief's trade-off before its whole
    program is written (the scenarios, the trade-off's kind and the criteria's declared
    capabilities); "program": an assembled program (its size and shape)."""

    stage: str
    n_scenarios: int = 1
    n_actions: int = 2
    #: policy columns (units x actions)
    n_policy_columns: int = 0
    #: belief stage: the trade-off and the criteria
    aggregate: str = "mean"
    penalises: bool = False
    tight: bool = False
    chance: bool = False
    n_criteria: int = 0
    #: every criterion a linear function of the group marginal (no cone, no cuts)
    marginal_linear: bool = True
    #: program stage
    n_variables: int = 0
    kl: bool = False
    n_units: int = 0
    #: the policy columns lie in [0, 1] (no trust region): unit simplices
    unit_simplices: bool = False
    coupling_rows: int = 0
    #: a confidence set's dual rows (per unit and group) beside the coupling rows
    robust: bool = False
    #: program stage: the belief-stage fields above describe the program's trade-off and
    #: criteria (its program was written from :meth:`of_belief`'s case), so an asked
    #: belief-stage solver's refusal of it can be said
    described: bool = False

    @classmethod
    def of_belief(cls, prog: Any, tradeoff: Any, criteria: list) -> Case:
        """The belief stage's case of a PolicyProgram's ``tradeoff`` over ``criteria``:
        the belief's scenarios, the trade-off's kind and the criteria's declared
        capabilities."""
        caps = [c.capabilities(prog.problem) for c in criteria]
        return cls("belief", prog.K, prog.n_a, prog.n_free * prog.n_a,
                   aggregate=prog.aggregate, penalises=tradeoff.penalises_deviations,
                   tight=tradeoff.tight_deviations,
                   chance=tradeoff.chance_delta is not None, n_criteria=len(criteria),
                   marginal_linear=all(c.reads == "marginal" and c.linear and c.program
                                       and not c.cone and not c.cuts for c in caps))

    @classmethod
    def of_program(cls, prog: Any, belief: Case | None = None) -> Case:
        """The program stage's case of an assembled Program; ``belief``: the belief-stage
        case of the trade-off and criteria it was written for (:meth:`of_belief`), whose
        fields it carries (``described``)."""
        N, n_a = int(prog.n_units), int(prog.n_actions)
        n_pi = N * n_a
        simplices = bool(N) and not (np.any(prog.lb[:n_pi] != 0.0)
                                     or np.any(prog.ub[:n_pi] < 1.0))
        told = {} if belief is None else dict(
            aggregate=belief.aggregate, penalises=belief.penalises, tight=belief.tight,
            chance=belief.chance, n_criteria=belief.n_criteria,
            marginal_linear=belief.marginal_linear, described=True)
        return cls("program", int(prog.n_scenarios), n_a, n_pi,
                   n_variables=int(prog.n_variables), kl=bool(prog.kl), n_units=N,
                   unit_simplices=simplices,
                   coupling_rows=int(prog.A_eq.shape[0] - N + prog.A_ub.shape[0]),
                   robust=bool(prog.robust), **told)

    @property
    def simplex_by_size(self) -> bool:
        """Whether HiGHS's dual simplex is its method by size: two actions, or
        :func:`~fairdecide.optimize.engine.highs_model.method_by_size`'s rule for a
        policy program."""
        return (self.n_actions == 2
                or method_by_size(self.n_variables, "policy") == "highs-ds")


Refusal = Callable[[Case], "str | None"]


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
    thresholds: dict[str, float] = field(default_factory=dict)
    #: HiGHS on the whole program (what solver="highs" may choose)
    highs: bool = False


def _not_belief(case: Case) -> str | None:
    return "a single world (one scenario)" if case.n_scenarios < 2 else None


def _term_cannot(case: Case) -> str | None:
    return (_not_belief(case)
            or ("the worst case over scenarios (it takes their mean)"
                if case.aggregate != "mean" else None)
            or ("a trade-off that bounds deviations (it takes a penalty: lam)"
                if not case.penalises else None)
            or ("a chance constraint" if case.chance else None)
            or ("no criterion" if not case.n_criteria else None)
            or ("criteria other than linear ones of the group marginal"
                if not case.marginal_linear else None)
            or (f"{case.n_policy_columns} policy columns (its dense matrix takes at most "
                f"{TERM_MAX_COLUMNS})" if case.n_policy_columns > TERM_MAX_COLUMNS else None))


def _scenarios_cannot(case: Case) -> str | None:
    return _not_belief(case) or (
        "criteria other than linear ones of the group marginal"
        if not case.marginal_linear else None)


def _scenarios_default(case: Case) -> str | None:
    return ("a penalised deviation (lam, utility_slack) sits at kinks in many scenarios; "
            "measured slower than the whole program" if case.tight else None)


def _kl(case: Case) -> str | None:
    return "KL terms, which need an exponential-cone solver" if case.kl else None


def _structured_cannot(case: Case) -> str | None:
    return _kl(case) or ("no unit blocks" if not case.n_units else None) or (
        "a confidence set's dual rows (per unit, not coupling rows)" if case.robust
        else None)


def _structured_default(case: Case) -> str | None:
    if not case.unit_simplices:
        return "a trust region, not unit simplices"
    if case.n_policy_columns < STRUCTURED_MIN_COLUMNS:
        return f"{case.n_policy_columns} policy columns (< {STRUCTURED_MIN_COLUMNS})"
    if case.coupling_rows > STRUCTURED_MAX_ROWS_PER_UNIT * case.n_units:
        return (f"{case.coupling_rows} coupling rows over {case.n_units} units (more than "
                f"{STRUCTURED_MAX_ROWS_PER_UNIT} per unit)")
    return None


def _large_belief(case: Case) -> str | None:
    if case.n_scenarios < 2:
        return "a single world"
    return "HiGHS's size rule picks the dual simplex" if case.simplex_by_size else None


def _unit_ipm_default(case: Case) -> str | None:
    if (case.n_scenarios > 1 and case.n_actions > 2
            and case.n_policy_columns >= BELIEF_IPM_MIN_COLUMNS):
        return None
    return _large_belief(case)


def _simplex_default(case: Case) -> str | None:
    return None if case.simplex_by_size else (
        f"{case.n_variables} variables and {case.n_actions} actions: the interior point by "
        "size")


def _ipm_default(case: Case) -> str | None:
    if case.simplex_by_size:
        return "HiGHS's size rule picks the dual simplex"
    return "a belief: its interior point without crossover" if case.n_scenarios > 1 else None


def _cvxpy_default(case: Case) -> str | None:
    return None if case.kl else "only for KL terms (an exponential cone)"


def _never(case: Case) -> str | None:
    return None


SOLVERS: tuple[Solver, ...] = (
    Solver("term-ipm", "belief",
           "the unit interior point over a penalised belief's absolute-value terms, its "
           "normal equations in the policy's space (fairdecide.optimize.engine.term_ipm)",
           "Lagrange's bound at its duals", _term_cannot, _never,
           {"max_columns": TERM_MAX_COLUMNS, "terms_per_column": TERMS_PER_COLUMN,
            "max_entries": TERM_MAX_ENTRIES}),
    Solver("scenarios", "belief",
           "scenario cuts: a restricted master over units and Kelley cuts per scenario "
           "(fairdecide.optimize.engine.scenario_cuts)",
           "the master loop's gap", _scenarios_cannot, _scenarios_default),
    Solver("CLARABEL", "program", "Clarabel through cvxpy (exponential cones: KL terms)",
           "the tangent relaxation's bound (an LP, HiGHS)", _never, _cvxpy_default),
    Solver("structured", "program",
           "sifting over unit simplices from a binned start "
           "(fairdecide.optimize.engine.structured)",
           "the master loop's gap", _structured_cannot, _structured_default,
           {"min_columns": STRUCTURED_MIN_COLUMNS,
            "max_rows_per_unit": STRUCTURED_MAX_ROWS_PER_UNIT}),
    Solver("unit-ipm", "program",
           "Mehrotra's interior point over unit blocks with a dense border "
           "(fairdecide.optimize.engine.unit_ipm)",
           "its primal-dual gap and the unit simplices' Lagrangian gap",
           _structured_cannot, _unit_ipm_default,
           {"belief_min_columns": BELIEF_IPM_MIN_COLUMNS}),
    Solver("highs-ipm-no-crossover", "program",
           "HiGHS's interior point stopped at its gap, without crossover",
           "HiGHS's gap and the unit simplices' Lagrangian gap", _kl, _large_belief,
           highs=True),
    Solver("highs-ds", "program", "HiGHS's dual simplex on the whole program",
           "HiGHS's gap and the unit simplices' Lagrangian gap", _kl, _simplex_default,
           {"max_columns": SIMPLEX_MAX_COLUMNS["policy"]}, highs=True),
    Solver("highs-ipm", "program",
           "HiGHS's interior point with crossover on the whole program",
           "HiGHS's gap and the unit simplices' Lagrangian gap", _kl, _ipm_default,
           highs=True),
    Solver("highs-dual-warm", "cuts",
           "constraint generation's program kept warm in HiGHS as its dual, each cut a "
           "column (fairdecide.optimize.engine.generation)",
           "the cut loop's violation over every pair", _kl, _never),
    Solver("distributed", "units",
           "column generation over a units table's blocks, one pass over the units per "
           "round (fairdecide.optimize.distributed)",
           "the master loop's gap", _never, _never),
)
#: The stages whose solvers a user may name; the others are their route's own.
NAMEABLE = ("belief", "program")
_BY_NAME = {s.name.lower(): s for s in SOLVERS if s.stage in NAMEABLE}
#: The solvers of the belief stage.
BELIEF_SOLVERS = frozenset(s.name for s in SOLVERS if s.stage == "belief")
#: The names that mean HiGHS on the whole program (warm starts keep to these).
HIGHS_NAMES = frozenset({"highs"} | {s.name for s in SOLVERS if s.highs})


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
    import cvxpy as cp

    if name.upper() in cp.installed_solvers():
        return name.upper()
    names = ", ".join(repr(s.name) for s in SOLVERS
                      if s.name != CONE_SOLVER and s.stage in NAMEABLE)
    raise SolverError(
        f"solver {solver!r} is not usable here: use None (the default chain), 'highs' "
        f"(HiGHS, its method by size), {names}, or an installed cvxpy solver "
        f"{[s for s in cp.installed_solvers() if s != 'HIGHS']}")


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
    if asked is not None and named is None and asked != "highs":
        return Choice([asked], f"solver={asked!r} asked for (through cvxpy)", {})
    if asked == "highs":
        return _default([s for s in stage if s.highs], case, {},
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


def fallback(case: Case, asked: str | None, choice: Choice, solved_by: str) -> str | None:
    """What an asked solver's fallback says (a :class:`SolverFallbackWarning`), or None
    when the solver asked for solved the program of ``case`` (or none of this table was
    asked for: the default chain, "highs", a cvxpy solver): the solver asked, why it
    did not solve the program (it does not take it, as its declaration says, or it
    handed it back at run time), and which solver (``solved_by``, a name of the order
    of ``choice``) took it instead.

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
    if named.name in choice.handed_back:
        why = f"it handed the program back ({choice.handed_back[named.name]})"
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


def choose_for_cuts(case: Case, asked: str | None) -> Choice:
    """Constraint generation's solver for the program of ``case``: its program kept warm
    in HiGHS as its dual when the default chain or "highs" is asked for and there are no
    KL terms; otherwise (a named method such as "highs-ipm" is honoured: an order of
    "each round") every round is solved by :func:`choose`'s choice."""
    warm = next(s for s in SOLVERS if s.stage == "cuts")
    why = warm.cannot(case) or (None if asked in (None, "highs")
                                else "another solver was asked for")
    if why is None:
        return Choice([warm.name], "the default chain" if asked is None else
                      f"solver={asked!r} asked for", {}, stage="cuts")
    return Choice(["each round"], "each round of constraint generation is solved by the "
                  "program stage's choice", {warm.name: why}, stage="cuts")


def choose_for_units() -> Choice:
    """The solver of a units table (a FrameWorld): only the distributed master sums its
    decision table by group, one pass over the units per round."""
    return Choice(["distributed"], "a units table (FrameWorld): the distributed master",
                  {}, stage="units")


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
    return [next(s.name for s in SOLVERS if s.highs and s.default(case) is None)]
