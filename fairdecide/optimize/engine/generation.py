"""Constraint generation for criteria whose rows are cuts (Lipschitz pairs).

A criterion that declares ``Capabilities.cuts`` has one family of rows too large to
write at once: the pairs of n individuals number n (n - 1) / 2. The program starts with
the criterion's initial cuts (each individual's nearest neighbours) and is solved; the
criterion then searches every cut exactly for those the solution violates by more than
the program's own deviation bound f (plus a cut tolerance), adds each unit's few most
violated, and the program is solved again, warm. HiGHS holds the program's dual
(:class:`~fairdecide.optimize.engine.dual_form.DualForm`, a row per policy column, a
column per cut), the new rows are appended to it as columns, and its dual simplex resumes
from the previous basis: on Adult (10,000 people, 124,000 pairs) the solves took 5.3 s
against 13.3 s in the row form (``benchmarks/results/lipschitz_lp.txt``). The loop ends
when a search
over all cuts finds none violated; that last search is the certificate (the exact
largest violation over all pairs, and how many were examined).

Each restricted program is a relaxation of the full one (it carries a subset of its
rows), so its optimum is at least as good; the final policy violates no cut by more than
the tolerance, so it is feasible for the full program up to that tolerance and hence
optimal for it. Without HiGHS (a cvxpy solver, or KL criteria) each round rebuilds and
re-solves the program cold.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from fairdecide.criteria.base import Criterion
from fairdecide.optimize.engine._block_lp import unit_simplices
from fairdecide.optimize.engine.dual_form import DualForm
from fairdecide.optimize.engine.rounds import Rounds, unseen_cuts
from fairdecide.optimize.engine.tasks import CutsTask, SolveResult
from fairdecide.optimize.program.assembly import Assembly, CriterionBlock
from fairdecide.optimize.program.policy_program import Program

__all__ = ["generate"]

#: Cuts added per unit and round: each unit's most violated. Adding every violated pair
#: at once is far slower (n = 3000 on Adult: 1.1 million rows, 46 s, against 37,500
#: rows in six rounds, 4.8 s).
PER_UNIT = 4
#: A cut counts as violated when it exceeds the program's bound by this share of tol.
CUT_TOL_SHARE = 0.1


def generate(task: CutsTask, solve_round: Callable[[Program], SolveResult] | None = None,
             warm: Mapping[str, Any] | None = None) -> SolveResult:
    """Solve the task's trade-off over its criteria for the fixed population of its
    PolicyProgram by constraint generation (see the module): cuts counted violated above
    ``CUT_TOL_SHARE * tol``, at most ``max_iter`` rounds. Each round's program is kept
    warm in HiGHS as its dual, solved by the method ``warm`` (the chain's
    "highs-dual-warm"), or, without it, rebuilt and solved by ``solve_round`` (the
    chain's program stage: "each round").

    Returns the last round's solve with the program whose columns locate its solution
    (the first one when rows were appended to a warm model), seconds and iterations
    summed over the rounds, the program's size, each generated criterion's certificate
    (keyed by its name) and the loop's ``"optimality"`` in ``certificates``, and the
    rounds in ``stats``."""
    prog, tradeoff, criteria, names = task.prog, task.tradeoff, task.criteria, task.names
    tol, max_iter = task.tol, task.max_iter
    units = prog.units
    seconds, iterations = 0.0, 0
    gen = [c for c, crit in enumerate(criteria) if crit.capabilities(prog.problem).cuts]
    pools = {c: criteria[c].initial_cuts(units) for c in gen}
    t_search = dict.fromkeys(gen, 0.0)
    program = prog.build(_restricted(criteria, pools), tradeoff)
    highs = _WarmHighs(program, warm) if warm is not None else None
    size = {"n_variables": program.n_variables, "n_constraints": program.n_constraints,
            "nnz": program.nnz}
    added = dict.fromkeys(gen, 0)
    cut_tol = CUT_TOL_SHARE * tol
    rounds, searches = Rounds("constraint generation", max_rounds=max_iter), {}
    last: dict[int, tuple[np.ndarray, float, np.ndarray | None]] = {}
    while True:
        res = highs.solve() if highs is not None else solve_round(program)
        seconds += res.seconds
        iterations += res.iterations or 0
        if not res.ok:
            res.seconds, res.iterations = seconds, iterations
            res.program, res.size = program, size
            return res
        pi, _ = prog.clean(res.x)
        rows = prog.policy(pi).proba(units)
        fresh = {}
        bound = {}
        for c in gen:
            threshold = _threshold(res, program, c, cut_tol)
            bound[c] = threshold - cut_tol
            t0 = time.perf_counter()
            touching = _touching(last.get(c), rows, threshold)
            found = criteria[c].violated_cuts(rows, units, threshold, PER_UNIT, touching)
            new = unseen_cuts(found.cuts, pools[c])
            if touching is not None and not len(new):  # nothing near the changes: all
                found = criteria[c].violated_cuts(rows, units, threshold, PER_UNIT)
                new = unseen_cuts(found.cuts, pools[c])
            t_search[c] += time.perf_counter() - t0
            searches[c] = (found, touching is None or not len(new))  # (search, over all)
            last[c] = (rows, threshold, found.pending)
            if len(new):
                fresh[c] = new
        # the optimality certificate's max_violation: by how much a row outside the
        # master exceeds the program's bound (the criterion's own certificate keeps its
        # deviation, max over all pairs)
        worst = max((max(0.0, float(found.max_violation) - bound[c])
                     for c, (found, _) in searches.items()), default=0.0)
        if rounds.next(float(res.objective), max_violation=worst, violated=bool(fresh),
                       new_cuts=sum(len(n) for n in fresh.values()),
                       cuts=sum(len(p) for p in pools.values())) or rounds.stop_reason():
            break
        for c, new in fresh.items():
            pools[c] = np.concatenate([pools[c], new])
            added[c] += len(new)
        if highs is None:
            program = prog.build(_restricted(criteria, pools), tradeoff)
            size = {"n_variables": program.n_variables,
                    "n_constraints": program.n_constraints, "nnz": program.nnz}
            continue
        # the program's marginal and deviation columns stay where they were: only the
        # new rows (and variables) go to HiGHS
        ext, point = Assembly.extending(prog, highs.model.n_cols, program.kept), prog.uniform()
        for c, new in fresh.items():
            piece = criteria[c].with_cuts(new)
            for k, f in enumerate(program.f_index[c]):
                piece.add_rows(CriterionBlock(ext, k, f, point), "exact")
        for key, value in highs.extend(ext).items():
            size[key] += value
    certificates = {}
    for c in gen:
        found, complete = searches[c]
        threshold = _threshold(res, program, c, cut_tol)
        if not complete:  # stopped at max_iter after a search near the changes only
            found = criteria[c].violated_cuts(rows, units, threshold, PER_UNIT)
        certificates[names[c]] = {
            "max_violation": float(found.max_violation), "pairs_checked": int(found.checked),
            "searched": found.what,
            "rounds": rounds.count, "cuts_in_program": len(pools[c]),
            "cuts_added": int(added[c]), "search_seconds": t_search[c],
            "certified": bool(found.max_violation <= threshold)}
    certificates["optimality"] = rounds.certificate.as_dict()
    res.seconds, res.iterations = seconds, iterations
    res.program, res.size, res.certificates = program, size, certificates
    res.stats = {"generation_rounds": rounds.count}
    return res


def _touching(last: tuple | None, rows: np.ndarray, threshold: float) -> np.ndarray | None:
    """The units whose cuts need searching again: those whose rows changed since the
    last search and those it left pending; None (all) after the first round, or when
    the threshold fell (a cut unchanged since could now exceed it)."""
    if last is None:
        return None
    prev, prev_threshold, pending = last
    if threshold < prev_threshold or prev.shape != rows.shape:
        return None
    changed = np.abs(rows - prev).max(axis=1) > 1e-12
    return changed if pending is None else changed | pending


def _restricted(criteria: list[Criterion], pools: dict[int, np.ndarray]
                ) -> list[Criterion]:
    """The criteria with each generated one restricted to its pool of cuts."""
    return [crit.with_cuts(pools[c]) if c in pools else crit
            for c, crit in enumerate(criteria)]


def _threshold(res: SolveResult, program: Program, c: int, cut_tol: float) -> float:
    """A cut counts as violated above the program's bound on criterion c (its smallest
    over the scenarios) plus the cut tolerance."""
    return min(float(res.x[f]) for f in program.f_index[c]) + cut_tol


class _WarmHighs:
    """The program kept warm in HiGHS as its dual
    (:class:`~fairdecide.optimize.engine.dual_form.DualForm`): the cuts outnumber the
    program's columns many times over, and each cut is a column of the dual, whose basis
    has a row per column of the program (per unit, with two actions folded)."""

    def __init__(self, program: Program, method: Mapping[str, Any]) -> None:
        # a row with one entry (the tolerance f <= epsilon) and a bound are the same to
        # the dual (a column with one entry), so the rows stay rows and their duals are
        # the tolerances' prices
        A_eq, b_eq, fold = program.A_eq, program.b_eq, None
        N = unit_simplices(program)
        if N and program.n_actions == 2:  # one dual row per unit, not two
            A_eq, b_eq = A_eq.tocsr()[N:], b_eq[N:]
            fold = np.arange(2 * N).reshape(N, 2)
        self.model = DualForm(program.c, program.lb, program.ub, program.A_ub, program.b_ub,
                              A_eq, b_eq, fold=fold, method=method)
        self.m_ub = program.A_ub.shape[0]

    def extend(self, ext: Assembly) -> dict[str, int]:
        """Append the extension's variables and rows; returns how many of each (and
        nonzeros) were added."""
        model = self.model
        n_new = ext.n - model.n_cols
        added = {"n_variables": n_new, "n_constraints": 0, "nnz": 0}
        if n_new:
            model.add_cols(np.zeros(n_new), np.concatenate(ext.lb_parts),
                           np.concatenate(ext.ub_parts))
        for rows, is_eq in ((ext.ub, False), (ext.eq, True)):
            A, b = rows.matrix(ext.n)
            if not A.shape[0]:
                continue
            added["n_constraints"] += A.shape[0]
            added["nnz"] += A.nnz
            model.add_rows(A, b if is_eq else np.full(len(b), -np.inf), b)
        return added

    def solve(self) -> SolveResult:
        model = self.model
        iterations, seconds = model.iterations, model.seconds
        ok, status = model.solve()
        if status.startswith("unbounded or infeasible"):
            # a policy program is bounded (the policy lies in simplices, and the
            # trade-off's other variables are bounded or priced upwards), so its dual is
            # infeasible only when the program is
            status = "infeasible (its dual is infeasible, and the program is bounded)"
        return SolveResult(model.values() if ok else None,
                           model.objective if ok else np.nan, ok, "optimal" if ok else status,
                           "HiGHS (warm dual simplex on the program's dual)",
                           model.seconds - seconds, model.iterations - iterations,
                           ub_duals=model.ub_duals()[:self.m_ub] if ok else None)
