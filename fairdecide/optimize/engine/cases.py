"""What the solving chain's chooser reads of a task, and what each solver declares it
takes: :class:`Case` (a task's shape at a stage) and the refusal and default rules of
the declarations in :mod:`fairdecide.optimize.engine.chain`, with their size and shape
thresholds. A rule takes a case and says why a solver does not take it, or does not
solve it by default, or None. With the chain, the one place a decision reads a size
(``tests/test_layout.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["BELIEF_IPM_MIN_COLUMNS", "SIMPLEX_MAX_COLUMNS", "STRUCTURED_MAX_ROWS_PER_UNIT",
           "STRUCTURED_MIN_COLUMNS", "TERMS_PER_COLUMN", "TERM_MAX_COLUMNS",
           "TERM_MAX_ENTRIES", "Case", "cvxpy_default", "ipm_default", "kl",
           "large_belief", "never", "not_belief", "ranking_ipm_default",
           "ranking_simplex_default", "scenarios_cannot", "scenarios_default",
           "simplex_by_size", "simplex_default", "structured_cannot",
           "structured_default", "term_cannot", "term_sizes", "unit_ipm_default",
           "warm_tolerances_cannot"]

#: HiGHS's dual simplex up to this many columns, its interior point (with crossover)
#: above: one table for the one idea, each threshold measured on its own family of
#: programs.
#:
#: - "policy" (the fairness LPs over policy rows): above 5,000 the dual simplex is
#:   erratic with more than two actions (benchmarks/bench_lp_scaling.py measured it
#:   4-10x slower than the interior point on separation LPs with five actions from 1e4
#:   variables, over 120 s against 4 s at 2e5, though up to 2.7x faster on some
#:   independence LPs); with two actions the dual simplex was faster in every case
#:   measured (1.2-2.3x at 4e4-8e4 variables, and on the 32-scenario Bayes LPs), so
#:   it keeps two actions (:func:`simplex_by_size`).
#: - "ranking matrix" (the whole Singh-Joachims program over P): 200 x 200 took 0.47 s
#:   with the interior point and 0.53 s with the dual simplex; 500 x 500, 4.5 s and
#:   7.1 s.
SIMPLEX_MAX_COLUMNS = {"policy": 5_000, "ranking matrix": 40_000}
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
#: when the dense term matrix has at most this many numbers (both measured at run time,
#: :func:`term_sizes`).
TERMS_PER_COLUMN, TERM_MAX_ENTRIES = 8, 1e8


@dataclass(frozen=True)
class Case:
    """What the chooser reads. ``stage`` "belief": a belief's trade-off before its whole
    program is written (the scenarios, the trade-off's kind and the criteria's declared
    capabilities); "program" (and "cuts", "tolerances"): an assembled program (its size
    and shape); "units": a units table; "ranking matrix", "master": a linear program of
    ``n_variables`` columns."""

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
    #: rows whose right-hand side is a criterion's tolerance (a frontier moves them)
    tolerance_rows: int = 0
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
    def of_program(cls, prog: Any, belief: Case | None = None, stage: str = "program"
                   ) -> Case:
        """The case of an assembled Program at ``stage``; ``belief``: the belief-stage
        case of the trade-off and criteria it was written for (:meth:`of_belief`), whose
        fields it carries (``described``)."""
        N, n_a = int(prog.n_units), int(prog.n_actions)
        told = {} if belief is None else dict(
            aggregate=belief.aggregate, penalises=belief.penalises, tight=belief.tight,
            chance=belief.chance, n_criteria=belief.n_criteria,
            marginal_linear=belief.marginal_linear, described=True)
        return cls(stage, int(prog.n_scenarios), n_a, N * n_a,
                   n_variables=int(prog.n_variables), kl=bool(prog.kl), n_units=N,
                   unit_simplices=prog.unit_simplices,
                   coupling_rows=int(prog.A_eq.shape[0] - N + prog.A_ub.shape[0]),
                   robust=bool(prog.robust), tolerance_rows=len(prog.tolerance_rows),
                   **told)



def simplex_by_size(case: Case) -> bool:
    """Whether HiGHS's dual simplex is its method by size for a policy program: two
    actions, or at most ``SIMPLEX_MAX_COLUMNS["policy"]`` variables."""
    return case.n_actions == 2 or case.n_variables <= SIMPLEX_MAX_COLUMNS["policy"]


def term_sizes(terms: int, columns: int, asked: bool) -> str | None:
    """Why the term interior point does not take ``terms`` absolute values over
    ``columns`` free policy columns (measured by it at run time), or None: a dense term
    matrix of more than ``TERM_MAX_ENTRIES`` numbers, or (unless ``asked``) fewer than
    ``TERMS_PER_COLUMN`` terms per column."""
    if terms * columns > TERM_MAX_ENTRIES:
        return (f"a dense term matrix of {terms * columns:.3g} numbers "
                f"(> {TERM_MAX_ENTRIES:.3g})")
    if not (asked or terms >= TERMS_PER_COLUMN * columns):
        return (f"{terms} terms over {columns} free policy columns (fewer than "
                f"{TERMS_PER_COLUMN} per column)")
    return None



def not_belief(case: Case) -> str | None:
    return "a single world (one scenario)" if case.n_scenarios < 2 else None


def term_cannot(case: Case) -> str | None:
    return (not_belief(case)
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


def scenarios_cannot(case: Case) -> str | None:
    return not_belief(case) or (
        "criteria other than linear ones of the group marginal"
        if not case.marginal_linear else None)


def scenarios_default(case: Case) -> str | None:
    return ("a penalised deviation (lam, utility_slack) sits at kinks in many scenarios; "
            "measured slower than the whole program" if case.tight else None)


def kl(case: Case) -> str | None:
    return "KL terms, which need an exponential-cone solver" if case.kl else None


def structured_cannot(case: Case) -> str | None:
    return kl(case) or ("no unit blocks" if not case.n_units else None) or (
        "a confidence set's dual rows (per unit, not coupling rows)" if case.robust
        else None)


def structured_default(case: Case) -> str | None:
    if not case.unit_simplices:
        return "a trust region, not unit simplices"
    if case.n_policy_columns < STRUCTURED_MIN_COLUMNS:
        return f"{case.n_policy_columns} policy columns (< {STRUCTURED_MIN_COLUMNS})"
    if case.coupling_rows > STRUCTURED_MAX_ROWS_PER_UNIT * case.n_units:
        return (f"{case.coupling_rows} coupling rows over {case.n_units} units (more than "
                f"{STRUCTURED_MAX_ROWS_PER_UNIT} per unit)")
    return None


def large_belief(case: Case) -> str | None:
    if case.n_scenarios < 2:
        return "a single world"
    return "HiGHS's size rule picks the dual simplex" if simplex_by_size(case) else None


def unit_ipm_default(case: Case) -> str | None:
    if (case.n_scenarios > 1 and case.n_actions > 2
            and case.n_policy_columns >= BELIEF_IPM_MIN_COLUMNS):
        return None
    return large_belief(case)


def simplex_default(case: Case) -> str | None:
    return None if simplex_by_size(case) else (
        f"{case.n_variables} variables and {case.n_actions} actions: the interior point by "
        "size")


def ipm_default(case: Case) -> str | None:
    if simplex_by_size(case):
        return "HiGHS's size rule picks the dual simplex"
    return "a belief: its interior point without crossover" if case.n_scenarios > 1 else None


def cvxpy_default(case: Case) -> str | None:
    return None if case.kl else "only for KL terms (an exponential cone)"


def never(case: Case) -> str | None:
    return None


def warm_tolerances_cannot(case: Case) -> str | None:
    """A frontier moves the tolerance rows of an LP."""
    return kl(case) or ("no tolerance rows" if not case.tolerance_rows else None)


def ranking_simplex_default(case: Case) -> str | None:
    limit = SIMPLEX_MAX_COLUMNS["ranking matrix"]
    return None if case.n_variables <= limit else (
        f"{case.n_variables} columns (> {limit}): the interior point by size")


def ranking_ipm_default(case: Case) -> str | None:
    limit = SIMPLEX_MAX_COLUMNS["ranking matrix"]
    return None if case.n_variables > limit else (
        f"{case.n_variables} columns (<= {limit}): the dual simplex by size")
