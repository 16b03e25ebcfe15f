"""Beliefs solved in the space of their scenarios: unit simplices, scenario cuts, pricing.

A belief's program shares one policy across K scenarios. Scenario k sees the policy only
through its group marginal m_k = B_k pi (n_z x n_a x n_y numbers), its utility
U_k = U . m_k and each criterion's deviation F_ck(m_k), which for the linear group
criteria is a convex piecewise-linear function of m_k: a weighted sum (or max) of
|D_r m_k + d_r|, as the criterion writes it (:meth:`CriterionBlock.add_abs_epigraph`).
Written out, the program carries every m_k with its defining rows and every absolute
value with its epigraph: K x (n_m + rows) coupling rows that each policy variable
touches K times, a dense block that the simplex method crosses row by row
(benchmarks/results/beliefs.txt).

This solver never writes them. Its restricted master holds, besides the trade-off's own
rows (written by the trade-off, as in every program):

- one variable u_k per scenario, its utility, defined by one row;
- one variable f_ck per criterion and scenario, bounded below by **cuts**
  f_ck >= g . m_k + h, each a piece of F_ck that is exact where it was taken (Kelley);
- the policy as anchors: every unit sits at one action except the **working** units,
  which may move mass to their other actions (one row sum <= 1 each).

Each round solves the master (HiGHS, warm), recomputes every m_k from the policy, adds a
cut wherever F_ck exceeds f_ck, and prices every fixed unit with the master's duals:
with Y_k = nu_k U + sum of the cuts' duals times their g, unit u's reduced costs are
d_u = (sum_k B_k^T Y_k)_u, and it joins the working set when an action beats its anchor.
Nothing leaves the master, so rounds end.

**Certificate.** With no cut violated (F_ck <= f_ck + cut tolerance) the master's policy
is feasible for the whole program and its objective is exact; the sum over fixed units of
d_u,anchor - min_a d_ua is the Lagrangian duality gap of the master's duals for the whole
program. Both are reported (``result.certificates["optimality"]``); the loop stops on
the master loop's rule (:mod:`fairdecide.optimize.engine.rounds`).

**Feasibility.** The trade-off's rows have elastic columns of large cost, so a master is
never infeasible; a certified optimum that still uses them is handed back (``None``) and
the general route decides (an infeasible tolerance is then diagnosed as everywhere).
"""

from __future__ import annotations

import logging
import time
from typing import Any

import numpy as np
import scipy.sparse as sp

from fairdecide.criteria.base import Criterion
from fairdecide.optimize.engine.highs_model import FEASIBILITY_TOL
from fairdecide.optimize.engine.master import Master
from fairdecide.optimize.engine.rounds import (
    ELASTIC_COST,
    ELASTIC_ZERO,
    Rounds,
    gap_shares,
)
from fairdecide.optimize.engine.tasks import HandBack, SolveResult
from fairdecide.optimize.program._scenario_terms import NotSuited, Terms, record
from fairdecide.optimize.program.assembly import Assembly, RowBlocks

__all__ = ["run", "solve_scenario_cuts"]

#: A hand-back and its reason at INFO (each round goes to fairdecide.optimize.progress).
logger = logging.getLogger(__name__)

#: A piece is cut off where it exceeds its bound by more than this (times max(1, value)):
#: ten times the master's feasibility tolerance, within which HiGHS may leave a cut.
CUT_TOL = 10 * FEASIBILITY_TOL
#: Elastic cost relative to the largest utility; an elastic total below FEASIBLE is zero.
PENALTY, FEASIBLE = ELASTIC_COST, ELASTIC_ZERO
#: The master hands the program back once more units than this work (at least
#: WORKING_MIN): its optimum then randomises in many units (tight tolerances, penalties)
#: and HiGHS on the whole program is faster (benchmarks/results/beliefs.txt).
WORKING_SHARE, WORKING_MIN = 0.25, 50
#: Rounds in a row that may add cuts without moving the master's objective.
STALL = 5
#: Most units set free per round.
JOIN_MAX = 20
#: Re-anchor once this many units have joined since the last anchoring.
REANCHOR = 100
#: ... provided the gap has fallen below this share of the objective (at least 1) by
#: then; otherwise the optimum randomises in many units (a tight tolerance), the master
#: grows dense and the whole program is faster (300 x 4 x 5, K = 32, epsilon 0.01: gap
#: 0.6 at the first re-anchor, master 50 s without converging, HiGHS 8.7 s; epsilon 0.05:
#: gap 5e-5, certified in 12 rounds, 0.4 s).
PROGRESS = 1e-2
#: ... and hand it back when, in two rounds in a row with units working, the gap exceeds
#: this share of the objective (at least 1): the anchors and the working units cannot
#: meet the cuts (the master leans on its elastic columns) and the optimum randomises in
#: many units. With 32 scenarios of 300 and 1000 x 4 x 5 cells the relative gap in the
#: rounds after units joined was 7.5 to 1,400 under epsilon 0.01 and 0.015 (and 300 x 4 x 5
#: at 0.02), each handed back at the re-anchor two rounds later; at most 0.03 where the
#: cuts certified or went on (0.02 to 0.05). A small belief whose master leans on its
#: elastic columns for one round and then recovers is not handed back, nor a belief of
#: at most WORKING_MIN units (never crowded: its whole master is small).
DIVERGED = 1.0
#: ... or at once, in the first such round, when it exceeds this share: there the
#: rounds that went on to certify had at most 0.05 once units worked, and the hand-backs
#: 7.5 to 164 in their first diverged round (32 scenarios of 300 and 1000 x 4 x 5 cells,
#: epsilon 0.05 to 0.01, by hand), whose second round cost 0.06 to 0.14 s.
SEVERE = 5.0


class _Master(Assembly):
    """The trade-off's part of the master: u_k (scenario utilities), f_ck (deviations)
    and whatever the trade-off adds, written by the trade-off itself."""

    def __init__(self, prog: Any, n_criteria: int) -> None:
        self.prog = prog
        self.K, self.w, self.aggregate = prog.K, prog.weights, prog.aggregate
        self.eq, self.ub = RowBlocks(), RowBlocks()
        self.lb_parts, self.ub_parts = [np.full(self.K, -np.inf)], [np.full(self.K, np.inf)]
        self.n = self.K
        self.kl, self.costs, self.tolerance_rows, self.tolerance_of = [], {}, [], []
        self.F = self.new_vars(n_criteria * self.K).reshape(n_criteria, self.K)

    def scenario_utility(self, k: int, scale: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
        return np.array([k]), np.array([scale])


def run(task: Any) -> SolveResult | HandBack:
    """The solving chain's run of the scenario cuts on a belief's trade-off (a
    :class:`~fairdecide.optimize.engine.tasks.TradeoffTask`)."""
    return solve_scenario_cuts(task.prog, task.tradeoff, task.criteria, task.time_limit)


def solve_scenario_cuts(prog: Any, tradeoff: Any, criteria: list[Criterion],
                        time_limit: float | None = None) -> SolveResult | HandBack:
    """Solve ``tradeoff`` over ``criteria`` for the belief of ``prog`` (a PolicyProgram;
    see the module): the policy rows (n_free, n_a), the master's own utilities (K,) and
    deviation bounds (n_criteria, K), its objective, certificate and the duals of the
    trade-off's tolerance rows (at a certified optimum, the whole program's). A
    hand-back says why not: the criteria do not suit the solver, the loop stalls, or the
    master cannot be certified feasible (the chain then solves the whole program)."""
    t0 = time.perf_counter()
    try:
        terms = record(criteria, prog, CUT_TOL)
    except NotSuited as exc:
        return HandBack(f"criteria it cannot record as cuts ({exc})")
    K, n_m, n_a, N = prog.K, prog.n_m, prog.n_a, prog.n_free
    B = prog.B_stacked                                                    # (K n_m, N n_a)
    BT = B.T.tocsr()

    asm = _Master(prog, len(criteria))
    tradeoff.write(asm)

    def start(anchors: np.ndarray, units: np.ndarray, cuts: tuple | None
              ) -> tuple[_State, dict[str, Any]]:
        """A master with every unit at ``anchors``, ``units`` free, and ``cuts``."""
        at_anchors = np.zeros(N * n_a)  # every unit's row: its anchor
        at_anchors[np.arange(N) * n_a + anchors] = 1.0
        m_fixed = B @ at_anchors                                          # (K n_m,)
        model, layout = _initial_model(asm, terms, prog, m_fixed, time_limit)
        state = _State(model, layout["util_row0"], K, n_m, n_a, B, prog.U_m, anchors,
                       m_fixed)
        state.work.free(units)
        if cuts is not None:
            state.add_cuts(*cuts)
        return state, layout

    # anchors: each unit's best action for the belief's mean utility
    value = prog.mean_utility_prices()
    state, layout = start(np.argmax(value.reshape(N, n_a), axis=1),
                          np.zeros(0, dtype=np.int64), None)
    model, anchored, seconds, iterations, restarts = state.model, 0, 0.0, 0, 0
    rounds, stalled, last = Rounds("scenario cuts", time_limit=time_limit), 0, np.nan
    diverged = 0
    while True:
        ok, status = model.solve()
        if not ok:
            return HandBack(f"its master was not solved ({status})")
        x, y = model.values(), model.row_duals()
        pi = state.work.policy(x)
        m = B @ pi.reshape(-1)
        new = []
        for c, t in enumerate(terms):
            cols = layout["s_cols"][c] if t.kind == "sum" else asm.F[c, t.scenario]
            bad, g, h = t.cuts(m, x[cols])
            if len(bad):
                new.append((cols[bad], g, h))
        # pricing: each scenario's marginal priced by the master's duals, then every
        # fixed unit's reduced costs against its anchor
        d = (BT @ state.marginal_prices(y)).reshape(N, n_a)
        viol, gap = gap_shares(d, state.work.anchors, state.work.in_work)
        objective = model.objective
        if rounds.next(objective, gap, violated=bool(new),
                       new_cuts=sum(len(n[0]) for n in new),
                       working_units=len(state.work.units)):
            break
        join = np.flatnonzero(viol > rounds.unit_threshold(N))
        stalled = stalled + 1 if (not len(join) and objective == last) else 0
        reanchor = len(state.work.units) - anchored >= REANCHOR
        # the master is as hard as the whole program: too many units work, the gap
        # falls too slowly, or its simplex stalled from the warm basis
        scale = max(1.0, abs(objective))
        diverged = (diverged + 1 if N > WORKING_MIN and len(state.work.units)
                    and gap > DIVERGED * scale else 0)
        crowded = len(state.work.units) > max(WORKING_MIN, WORKING_SHARE * N) or (
            reanchor and gap > PROGRESS * scale) or model.cold_restarts or diverged >= 2 or (
            diverged and gap > SEVERE * scale)
        why = rounds.stop_reason()
        if why is not None or stalled >= STALL or crowded:
            logger.info("scenario cuts hand the program back after %d rounds (%s)",
                        rounds.count, "crowded" if crowded else "stalled"
                        if stalled >= STALL else why)
            return HandBack("the master grew crowded" if crowded else
                            f"stalled for {STALL} rounds" if stalled >= STALL else why)
        last = objective
        if len(join) > JOIN_MAX:  # the most violated first: the duals move as they join
            join = join[np.argsort(-viol[join], kind="stable")[:JOIN_MAX]]
        moved = state.work.moved(pi)
        if reanchor and len(moved):
            # re-anchor: units the master moved whole sit at their new action, only the
            # fractional ones stay free, the cuts (valid everywhere) are kept
            seconds, iterations = seconds + model.seconds, iterations + model.iterations
            frac = np.flatnonzero(pi.max(axis=1) < 1.0 - 1e-9)
            cuts = (state.cut_target, state.G, state.cut_h)
            state, layout = start(np.argmax(pi, axis=1), np.union1d(frac, join), cuts)
            model, anchored, restarts = state.model, len(state.work.units), restarts + 1
        else:
            state.work.free(join)
        if new:
            state.add_cuts(np.concatenate([n[0] for n in new]),
                           sp.vstack([n[1] for n in new], format="csr"),
                           np.concatenate([n[2] for n in new]))
    elastic = float(model.elastic(x).sum())
    if elastic > FEASIBLE * layout["scale"]:
        return HandBack("its certified master still uses elastic columns (the tolerance may "
                        "be infeasible)")
    details = {"working_units": int(state.work.in_work.sum()), "units": N,
               "cuts": state.n_cuts, "restarts": restarts,
               "seconds": time.perf_counter() - t0,
               "highs_seconds": seconds + model.seconds,
               "iterations": iterations + model.iterations}
    # the master's first rows are the trade-off's inequalities, as the assembly wrote them
    rows = np.asarray(asm.tolerance_rows, dtype=np.int64)
    return SolveResult(None, objective, True, "optimal",
                       f"scenario cuts: {details['working_units']} of {N} units free, "
                       f"{details['cuts']} cuts, {rounds.certificate.rounds} rounds",
                       details["seconds"], details["iterations"], {"scenario_cuts": details},
                       certificate=rounds.certificate, pi=pi, utility=x[:K], f=x[asm.F],
                       tolerance_duals=(y[rows], np.asarray(asm.tolerance_of,
                                                            dtype=np.int64)))


def _initial_model(asm: _Master, terms: list[Terms], prog: Any, m_fixed: np.ndarray,
                   time_limit: float | None) -> tuple[Master, dict[str, Any]]:
    """The first master: the trade-off's rows with elastic columns, the utility rows
    u_k = U . m_k, and for each criterion summing absolute values one variable per
    value with f_ck = sum_r weight_r s_r (the cuts come later)."""
    K, n0 = prog.K, asm.n
    A_ub, b_ub = asm.ub.matrix(n0)
    A_eq, b_eq = asm.eq.matrix(n0)
    m_ub, m_eq = A_ub.shape[0], A_eq.shape[0]
    scale = max(1.0, float(np.abs(prog.U_m).max()))
    cost = np.zeros(n0)
    for col, val in asm.costs.items():
        cost[col] = val
    # s columns of the summing criteria, after the trade-off's
    s_cols, blocks, n_s = [], [], 0
    for c, t in enumerate(terms):
        if t.kind != "sum":
            s_cols.append(None)
            continue
        idx = n0 + n_s + np.arange(len(t.d))
        s_cols.append(idx)
        # row (c, k): f_ck - sum_r weight_r s_r = 0
        r = np.concatenate([np.arange(K), t.scenario])
        col = np.concatenate([asm.F[c], idx])
        v = np.concatenate([np.ones(K), -t.weight])
        blocks.append((r, col, v))
        n_s += len(t.d)
    n_cols = n0 + n_s
    top = sp.hstack([sp.vstack([A_ub, A_eq]), sp.csr_matrix((m_ub + m_eq, n_s))])
    util = sp.csr_matrix((np.ones(K), (np.arange(K), np.arange(K))), shape=(K, n_cols))
    fdef = [sp.csr_matrix((v, (r, col)), shape=(K, n_cols)) for r, col, v in blocks]
    u_fixed = m_fixed.reshape(K, -1) @ prog.U_m
    n_f = K * len(fdef)
    lo0 = np.concatenate([np.full(m_ub, -np.inf), b_eq, u_fixed, np.zeros(n_f)])
    hi0 = np.concatenate([b_ub, b_eq, u_fixed, np.zeros(n_f)])
    model = Master(np.concatenate([cost, np.zeros(n_s)]),
                   np.concatenate([*asm.lb_parts, np.zeros(n_s)]),
                   np.concatenate([*asm.ub_parts, np.full(n_s, np.inf)]),
                   sp.vstack([top, util, *fdef], format="csc"), lo0, hi0,
                   elastic=np.arange(len(lo0)) < m_ub + m_eq, penalty=PENALTY * scale,
                   time_limit=time_limit)
    return model, {"util_row0": m_ub + m_eq, "s_cols": s_cols, "scale": scale}


class _State:
    """The master's growing parts: its cuts (target column, g over the K marginals, h)
    and the working units (a
    :class:`~fairdecide.optimize.engine.master.WorkingSet` over the marginals
    B pi, read by the utility rows and every cut)."""

    def __init__(self, master: Master, util_row0: int, K: int, n_m: int, n_a: int,
                 B: sp.csr_matrix, U_m: np.ndarray, anchors: np.ndarray,
                 m_fixed: np.ndarray) -> None:
        self.model, self.util_row0, self.K, self.U_m = master, util_row0, K, U_m
        self.m_fixed = m_fixed
        self.work = master.working_set(B, n_a, anchors)
        Ublock = sp.kron(sp.identity(K), U_m[None, :], format="csr")      # (K, K n_m)
        self.work.track(util_row0 + np.arange(K), -Ublock)
        self.cut_rows = np.zeros(0, dtype=np.int64)
        self.G = sp.csr_matrix((0, K * n_m))
        self.cut_target = np.zeros(0, dtype=np.int64)
        self.cut_h = np.zeros(0)

    @property
    def n_cuts(self) -> int:
        return len(self.cut_rows)

    def marginal_prices(self, y: np.ndarray) -> np.ndarray:
        """The price of every scenario's marginal (K n_m,): nu_k U plus the cuts' duals
        times their g."""
        Y = np.kron(y[self.util_row0:self.util_row0 + self.K], self.U_m)
        if self.n_cuts:
            Y += self.G.T @ y[self.cut_rows]
        return Y

    def add_cuts(self, target: np.ndarray, G: sp.csr_matrix, h: np.ndarray) -> None:
        """Rows x[target] - g . (the moves' marginal) >= g . m_fixed + h."""
        model, n = self.model, len(target)
        A = sp.csr_matrix((np.ones(n), (np.arange(n), target)), shape=(n, model.n_cols))
        A = A + self.work.map_rows(np.zeros(n, dtype=np.int64), -G)
        rows = model.add_rows(A, G @ self.m_fixed + h, np.full(n, np.inf))
        self.work.track(rows, -G)
        self.cut_rows = np.concatenate([self.cut_rows, rows])
        self.G = sp.vstack([self.G, G], format="csr")
        self.cut_target = np.concatenate([self.cut_target, target])
        self.cut_h = np.concatenate([self.cut_h, h])
