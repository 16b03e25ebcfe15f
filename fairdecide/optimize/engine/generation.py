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

from fairdecide.criteria._pairs import pair_keys
from fairdecide.criteria.base import Criterion
from fairdecide.optimize.engine._block_lp import (
    block_structure,
    marginal_definitions,
    unit_simplices,
)
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
#: Kept warm, a cut whose rows are all slack by more than this after a solve leaves the
#: program (its columns leave the dual), and comes back if violated again: the dual's
#: pricing runs over every column each iteration, and most cuts added early are slack
#: at the end (10,000 Adult people: 124,000 pairs generated, 4,400 carrying flow at the
#: optimum).
DROP_SLACK = 0.1
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
    # kept warm, the program starts without cuts and takes them as every later batch,
    # so that each cut's rows are known (and can be dropped once slack)
    none = {c: pools[c][:0] for c in gen}
    program = prog.build(_restricted(criteria, pools if warm is None else none), tradeoff)
    size = {"n_variables": program.n_variables, "n_constraints": program.n_constraints,
            "nnz": program.nnz}
    highs = None
    if warm is not None:
        highs = _WarmHighs(program, warm, prog.n_free)
        highs.add_cuts(prog, program, criteria, pools, size)
    added = dict.fromkeys(gen, 0)
    dropped = dict.fromkeys(gen, 0)
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
        if highs is not None:  # cuts slack by a margin leave (and may come back)
            for c, gone in highs.drop_slack(DROP_SLACK).items():
                keys = pair_keys(prog.free_of_unit[pools[c]], prog.n_free)
                out = np.isin(keys, gone)
                pools[c] = pools[c][~out]
                dropped[c] += int(out.sum())
        for c, new in fresh.items():
            pools[c] = np.concatenate([pools[c], new])
            added[c] += len(new)
        if highs is None:
            program = prog.build(_restricted(criteria, pools), tradeoff)
            size = {"n_variables": program.n_variables,
                    "n_constraints": program.n_constraints, "nnz": program.nnz}
            continue
        highs.add_cuts(prog, program, criteria, fresh, size)
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
            "cuts_added": int(added[c]), "cuts_dropped": int(dropped[c]),
            "search_seconds": t_search[c],
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


def _fixed_tolerances(program: Program) -> tuple[np.ndarray, np.ndarray, tuple]:
    """The program's bounds with each deviation f that only a tolerance row f <= epsilon
    bounds fixed at epsilon, and those (rows, columns). Such an f costs nothing and enters
    every other row with a negative sign (D - f <= b: it only loosens them; the cuts
    written later, Lipschitz's D_TV - f <= L d, too), so some optimum has f = epsilon,
    and its tolerance row is empty once f is a constant: the
    dual form leaves f out (one dense row of the dual fewer, each cut a column of two
    entries), and the row's price d U* / d epsilon is f's reduced cost
    (:meth:`DualForm.fixed_reduced_costs`)."""
    lb, ub = program.lb.copy(), program.ub.copy()
    rows_out, cols_out = [], []
    A = program.A_ub.tocsr()
    cols = program.A_ub.tocsc()
    eq = program.A_eq.tocsc()
    for r in program.tolerance_rows.tolist():
        lo, hi = A.indptr[r], A.indptr[r + 1]
        if hi - lo != 1 or A.data[lo] <= 0:
            continue
        f = int(A.indices[lo])
        eps = float(program.b_ub[r]) / float(A.data[lo])
        col = cols.data[cols.indptr[f]:cols.indptr[f + 1]]
        if (program.c[f] != 0 or eq.indptr[f + 1] > eq.indptr[f]
                or int((col > 0).sum()) != 1 or not lb[f] <= eps <= ub[f]):
            continue
        lb[f] = ub[f] = eps
        rows_out.append(r)
        cols_out.append(f)
    return lb, ub, (np.asarray(rows_out, dtype=np.int64), np.asarray(cols_out, dtype=np.int64))


def _defined_marginals(program: Program, coupling_start: int) -> np.ndarray:
    """The program's marginals m = B pi (:func:`marginal_definitions`) that appear in no
    row but their own, as (column, equality row) pairs for :class:`DualForm`, the rows
    numbered as in the equality rows it is given (where the coupling rows, those after
    the unit simplices, start at ``coupling_start``):
    written through pi, m and its row leave the dual, a dense row each fewer. A marginal
    that criteria's rows read stays (written through pi, each such row would hold all of
    B's entries)."""
    lp = block_structure(program)
    if isinstance(lp, str):
        return np.zeros((0, 2), dtype=np.int64)
    cols, rows = marginal_definitions(lp)
    alone = np.diff(lp.G_v.indptr)[cols] == 1
    n_pi = lp.n_units * lp.n_actions
    return np.column_stack([n_pi + cols[alone], coupling_start + rows[alone]])


class _WarmHighs:
    """The program kept warm in HiGHS as its dual
    (:class:`~fairdecide.optimize.engine.dual_form.DualForm`): the cuts outnumber the
    program's columns many times over, and each cut is a column of the dual, whose basis
    has a row per column of the program (per unit, with two actions folded)."""

    def __init__(self, program: Program, method: Mapping[str, Any], n_free: int) -> None:
        # the tolerance rows stay rows (their duals are the tolerances' prices); a
        # deviation fixed at its epsilon (_fixed_tolerances) leaves its row empty, and
        # solve() reads that price from the deviation's reduced cost instead
        A_eq, b_eq, fold = program.A_eq, program.b_eq, None
        N = unit_simplices(program)
        if N and program.n_actions == 2:  # one dual row per unit, not two
            A_eq, b_eq = A_eq.tocsr()[N:], b_eq[N:]
            fold = np.arange(2 * N).reshape(N, 2)
        lb, ub, self.tolerances = _fixed_tolerances(program)
        # folded, the simplices' rows are not given: the coupling rows come first
        defined = _defined_marginals(program, 0 if fold is not None else N)
        self.model = DualForm(program.c, lb, ub, program.A_ub, program.b_ub, A_eq, b_eq,
                              fold=fold, defined=defined, method=method)
        self.m_ub = program.A_ub.shape[0]
        self.n_pi, self.n_free = program.n_units * program.n_actions, int(n_free)
        # the cuts' inequality rows of P (DualForm's numbering), each one's criterion
        # and the key of its pair of free rows (-1: a row that names no pair)
        self.cut_rows = np.zeros(0, dtype=np.int64)
        self.cut_crit = np.zeros(0, dtype=np.int64)
        self.cut_keys = np.zeros(0, dtype=np.int64)

    def add_cuts(self, prog: Any, program: Program, criteria: list[Criterion],
                 cuts: Mapping[int, np.ndarray], size: dict[str, int]) -> None:
        """Append the rows of ``cuts`` (criterion -> pairs) to the program kept warm; the
        program's marginal and deviation columns stay where they were: only the new rows
        (and variables) go to HiGHS. ``size`` grows by what was added."""
        ext, point = Assembly.extending(prog, self.model.n_cols, program.kept), prog.uniform()
        crit_of_row = []
        for c, new in cuts.items():
            if not len(new):
                continue
            first = ext.ub.n
            piece = criteria[c].with_cuts(new)
            for k, f in enumerate(program.f_index[c]):
                piece.add_rows(CriterionBlock(ext, k, f, point), "exact")
            crit_of_row.append(np.full(ext.ub.n - first, c))
        start = self.model.n_ub_rows
        A_ub = self.extend(ext, size)
        if A_ub is not None and A_ub.shape[0]:
            self.cut_rows = np.concatenate([self.cut_rows,
                                            start + np.arange(A_ub.shape[0])])
            self.cut_crit = np.concatenate([self.cut_crit, *crit_of_row])
            self.cut_keys = np.concatenate([self.cut_keys, self._pair_keys(A_ub)])

    def _pair_keys(self, A: Any) -> np.ndarray:
        """Each row's pair of free policy rows a < b as a * n_free + b, when its policy
        entries lie on exactly two free rows, else -1."""
        A = A.tocsr()
        rows = np.repeat(np.arange(A.shape[0]), np.diff(A.indptr))
        on_pi = A.indices < self.n_pi
        r, free = rows[on_pi], A.indices[on_pi] // (self.n_pi // self.n_free)
        m = A.shape[0]
        lo = np.full(m, np.iinfo(np.int64).max)
        hi = np.full(m, -1)
        np.minimum.at(lo, r, free)
        np.maximum.at(hi, r, free)
        # a third free row between them shows as an entry on neither end
        other = np.zeros(m, dtype=bool)
        np.logical_or.at(other, r, (free != lo[r]) & (free != hi[r]))
        ok = (hi >= 0) & (lo < hi) & ~other
        return np.where(ok, lo * self.n_free + hi, -1)

    def drop_slack(self, margin: float) -> dict[int, np.ndarray]:
        """Drop the cuts whose rows were all slack by more than ``margin`` at the last
        solve; for each criterion, the keys of the pairs dropped (:func:`pair_keys`)."""
        live = self.cut_keys >= 0
        live[live] = np.isfinite(self.model.slacks(self.cut_rows[live]))
        if not live.any():
            return {}
        rows, keys, crit = self.cut_rows[live], self.cut_keys[live], self.cut_crit[live]
        slack = self.model.slacks(rows)
        # a pair leaves when the least slack of its rows (every scenario's) exceeds margin
        group = crit * (self.n_free * self.n_free) + keys
        uniq, inv = np.unique(group, return_inverse=True)
        least = np.full(len(uniq), np.inf)
        np.minimum.at(least, inv, slack)
        gone = least > margin
        if not gone.any():
            return {}
        self.model.drop_rows(rows[gone[inv]])
        out: dict[int, list] = {}
        for g in uniq[gone]:
            out.setdefault(int(g // (self.n_free * self.n_free)), []).append(
                int(g % (self.n_free * self.n_free)))
        return {c: np.asarray(v, dtype=np.int64) for c, v in out.items()}

    def extend(self, ext: Assembly, size: dict[str, int]) -> Any:
        """Append the extension's variables and rows; ``size`` grows by how many of
        each (and nonzeros) were added. Returns the inequality rows' matrix."""
        model = self.model
        n_new = ext.n - model.n_cols
        size["n_variables"] += n_new
        if n_new:
            model.add_cols(np.zeros(n_new), np.concatenate(ext.lb_parts),
                           np.concatenate(ext.ub_parts))
        A_ub = None
        for rows, is_eq in ((ext.ub, False), (ext.eq, True)):
            A, b = rows.matrix(ext.n)
            if not is_eq:
                A_ub = A
            if not A.shape[0]:
                continue
            size["n_constraints"] += A.shape[0]
            size["nnz"] += A.nnz
            model.add_rows(A, b if is_eq else np.full(len(b), -np.inf), b)
        return A_ub

    def solve(self) -> SolveResult:
        model = self.model
        iterations, seconds = model.iterations, model.seconds
        ok, status = model.solve()
        if status.startswith("unbounded or infeasible"):
            # a policy program is bounded (the policy lies in simplices, and the
            # trade-off's other variables are bounded or priced upwards), so its dual is
            # infeasible only when the program is
            status = "infeasible (its dual is infeasible, and the program is bounded)"
        ub_duals = None
        if ok:
            ub_duals = model.ub_duals()[:self.m_ub]
            rows, cols = self.tolerances
            if len(rows):  # a fixed deviation's price is its reduced cost
                at = np.searchsorted(model.fixed, cols)
                ub_duals[rows] = model.fixed_reduced_costs()[at]
        return SolveResult(model.values() if ok else None,
                           model.objective if ok else np.nan, ok, "optimal" if ok else status,
                           "HiGHS (warm dual simplex on the program's dual)",
                           model.seconds - seconds, model.iterations - iterations,
                           ub_duals=ub_duals)
