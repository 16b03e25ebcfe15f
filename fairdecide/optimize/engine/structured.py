"""The structured solver: tabular programs solved in the space of their coupling rows.

A tabular fairness program is one simplex per unit (cell, or individual of a fixed
population) tied together by a few coupling rows: the group marginals, the criteria's
rows and the trade-off's (:mod:`fairdecide.optimize.engine._block_lp`). Given prices y for the
coupling rows, each unit's best action is an argmin of its reduced costs
d_ua = c_ua - G_ua . y, and an optimum randomises in at most as many units as there are
binding coupling rows. The solver works on that structure, by *sifting*:

1. **A coarse start.** Units are binned (:mod:`fairdecide.optimize.engine._coarsen`): each
   bin is a super-unit whose columns are its members' sums, so the program over bins is
   a restriction of the real one, small enough for HiGHS to solve at once.
2. **Pricing.** With the restricted program's duals y, every unit still following its
   bin gets its share of the duality gap, viol_u = pi_u . d_u - min_a d_ua (zero when
   its bin's row uses only its best actions).
3. **Splitting.** A bin with a violating member is retired, and its members are
   re-anchored at their best actions under y and shared among about ``SPLIT_PARTS``
   sub-bins (same best action, nearby margins to the next action), which are split in
   turn; runs of one unit join the working set W and move on their own. HiGHS resumes
   from its basis, and since every new column then prices at zero or above it only
   repairs the rows. A split keeps the last restricted solution feasible only up to
   the bins' rows (a sub-bin cannot take its parent's mixed row), so the objective may
   rise between rounds; but each round splits a bin or adds units to W and neither is
   undone, so the loop ends. (Small programs go to W whole, with no bins.)

**Certificate.** When sum_u viol_u meets the master loop's stopping rule
(:mod:`fairdecide.optimize.engine.rounds`: at most 1e-9 of the objective; the sum runs
over every unit, the working ones included), the restricted solution with the duals
(y, mu_u = min_a d_ua) is primal feasible, dual feasible for the whole program up to
that sum, and complementary: optimal. The sum is exactly the
duality gap (restricted primal minus the Lagrangian bound at y) and is reported in
``result.certificates["optimality"]``.

**Feasibility.** Each coupling row has an elastic column of large cost, so a restricted
program is never infeasible. If the certified optimum still uses it, phase one
minimises the elastic total alone, certified the same way: a positive minimum proves the
program infeasible; zero means the penalty was too small, which is then raised.

The solver falls back to the general HiGHS route (and the result says so) when the
program has no usable block structure or a restricted solve fails.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fairdecide.optimize.engine._block_lp import RestrictedModel, block_structure
from fairdecide.optimize.engine._coarsen import add_bins, sub_bins, with_bins
from fairdecide.optimize.engine.rounds import (
    ELASTIC_COST,
    ELASTIC_ZERO,
    Certificate,
    Rounds,
    gap_shares,
)
from fairdecide.optimize.engine.tasks import HandBack, SolveResult

__all__ = ["StructuredRun", "run", "solve_structured"]

# When the default chain uses this solver (its size and shape thresholds) is declared in
# fairdecide.optimize.engine.chain.
#: Bins (super-units) of the coarse program: this many per coupling row, at least
#: BINS_MIN.
BINS_PER_ROW, BINS_MIN = 8, 400
#: Bins of a belief's program: its coupling rows grow with the scenarios, and a coarse
#: program of 8 bins per row would be the whole one. 100 bins freed fewer units than 400
#: on 32-scenario beliefs (300 x 4 x 5 cells, lam = 0.5: 13 s against 24 s).
BELIEF_BINS = 100
#: A bin with members that want other rows is split into about this many sub-bins (by
#: their best action and their margin to the next), until runs of one unit remain: at
#: 100,000 x 12 x 5 (K = 1) splitting into single units freed 22,368 units whose
#: re-solve took 14,790 dual simplex iterations.
SPLIT_PARTS = 8
#: An elastic total below this counts as zero; the elastic cost relative to the largest
#: program cost (the restricted masters' shared constants), how much and how often it may
#: be raised.
FEASIBLE, PENALTY = ELASTIC_ZERO, ELASTIC_COST
PENALTY_STEP, PENALTY_RAISES = 1e3, 2


@dataclass
class StructuredRun:
    """What the structured solver found: the program's solution vector and objective
    (or ``ok`` False with the reason, or ``infeasible``), with its statistics."""

    x: np.ndarray | None
    objective: float
    ok: bool
    status: str
    infeasible: bool = False
    iterations: int = 0
    details: dict[str, Any] = field(default_factory=dict)
    certificate: Certificate | None = None
    #: d objective / d b_ub: the inequality rows' duals at the certified optimum
    ub_duals: np.ndarray | None = None


def run(task: Any) -> SolveResult | HandBack:
    """The solving chain's run of the structured solver on the task's whole program, or
    a hand-back when it cannot certify an optimum."""
    t0 = time.perf_counter()
    found = solve_structured(task.built(), task.time_limit)
    if not (found.ok or found.infeasible):
        return HandBack(found.status, {"structured": found.details})
    rounds = found.certificate.rounds if found.certificate is not None else 0
    where = (f"structured: {found.details.get('working_units', 0)} of "
             f"{found.details.get('units', 0)} units free, {rounds} rounds")
    return SolveResult(found.x, found.objective, found.ok, found.status, where,
                       time.perf_counter() - t0, found.iterations,
                       {"structured": found.details}, found.ub_duals,
                       certificate=found.certificate)


def solve_structured(program: Any, time_limit: float | None = None) -> StructuredRun:
    """Solve ``program`` by sifting over its units (see the module).

    Returns an optimal run with its certificate in ``details`` (``gap``: the duality gap
    in the program's objective units), an infeasible one (certified by phase one), or a
    run that is not ``ok`` with the reason (the caller falls back to the general route).
    """
    t0 = time.perf_counter()
    lp = block_structure(program)
    if isinstance(lp, str):
        return StructuredRun(None, np.nan, False, lp)
    N, n_a = lp.n_units, lp.n_actions
    active = np.flatnonzero(~lp.inert)
    n_bins = (BELIEF_BINS if program.n_scenarios > 1
              else max(BINS_MIN, BINS_PER_ROW * lp.n_rows))
    details: dict[str, Any] = {"units": N, "coupling_rows": lp.n_rows, "bins": 0,
                               "sub_bins": 0}
    if len(active) > 2 * n_bins:
        model_lp, bin_of = with_bins(lp, active, n_bins)
        details["bins"] = model_lp.n_units - N
        first = np.arange(N, model_lp.n_units)
    else:
        model_lp, bin_of, first = lp, np.zeros(0, dtype=np.int64), active
    # a unit of a bin follows its bin (anchor and moves) until the bin is split
    member = np.full(N, -1, dtype=np.int64)
    member[active[: len(bin_of)]] = bin_of
    anchors = np.argmin(model_lp.c_pi, axis=1)
    anchors[:N] = np.where(member >= 0, anchors[np.maximum(member, 0)], anchors[:N])
    present = np.zeros(model_lp.n_units, dtype=bool)
    present[first] = True
    model = RestrictedModel(model_lp, anchors, present, PENALTY, time_limit=time_limit)
    model.work.free(first)
    phase_one, raises = False, 0
    rounds = Rounds("structured", time_limit=time_limit, scale=lp.scale)
    while True:
        ok, status = model.solve()
        if not ok:
            return _not_ok(f"a restricted program was {status}", details, model.iterations)
        v, e, rows, y = model.solution()
        own = np.where(member >= 0, member, np.arange(N))
        d = (lp.c_pi if not phase_one else 0.0) - (lp.G_piT @ y).reshape(N, n_a)
        viol, gap = gap_shares(d, rows[own], lp.inert)
        value = model.objective
        value += 0.0 if phase_one else model.constant
        in_work = model.work.in_work[:N]  # (bins come after the units)
        if rounds.next(value, gap, working_units=int(in_work.sum()), phase_one=phase_one):
            elastic = float(e.sum())
            if elastic <= FEASIBLE:
                if phase_one:  # feasible after all: back to the costs, a larger penalty
                    phase_one = False
                    model.set_phase(False, model.penalty * PENALTY_STEP)
                    continue
                break
            if phase_one:  # certified least elastic total > 0: infeasible
                details.update(rounds=rounds.count, least_elastic=elastic)
                return StructuredRun(None, np.nan, False,
                                     f"infeasible (phase one certified an elastic total "
                                     f"of {elastic:.3g} on the coupling rows)",
                                     infeasible=True, iterations=model.iterations,
                                     details=details)
            raises += 1
            if raises > PENALTY_RAISES:
                return _not_ok("the elastic penalty kept rising", details, model.iterations)
            phase_one = True
            model.set_phase(True)
            continue
        if (why := rounds.stop_reason()) is not None:
            return _not_ok(why, details, model.iterations)
        bad = (viol > rounds.unit_threshold(len(active))) & ~in_work
        split = np.unique(member[bad & (member >= 0)])
        loose = np.flatnonzero(bad & (member < 0))
        if len(split):
            model.work.free(_split(model, member, split, d, details))
        model.work.free(loose)
    x = np.concatenate([rows[own].reshape(-1), v])
    objective = float(program.c @ x)
    details.update(working_units=int(in_work.sum()), elastic_penalty=model.penalty,
                   seconds=time.perf_counter() - t0, highs_seconds=model.seconds)
    # the master's row duals price the coupling rows (the equalities after the
    # simplices, then the inequalities) in the scaled objective; the gap certifies them
    # as duals of the whole program to the stopping rule
    m_ub = program.A_ub.shape[0]
    ub_duals = y[lp.n_rows - m_ub:] / lp.scale if m_ub else np.zeros(0)
    return StructuredRun(x, objective, True, "optimal", iterations=model.iterations,
                         details=details, certificate=rounds.certificate,
                         ub_duals=ub_duals)


def _split(model: RestrictedModel, member: np.ndarray, split: np.ndarray,
           d: np.ndarray, details: dict[str, Any]) -> np.ndarray:
    """Retire the bins ``split`` and share their members among sub-bins
    (:func:`~fairdecide.optimize.engine._coarsen.sub_bins`), each anchored at its
    members' best action at the last prices (``d``: the reduced costs); updates
    ``member`` and returns the members that move on their own."""
    freed = np.flatnonzero(np.isin(member, split))
    parent = member[freed]
    model.work.retire(split)
    member[freed] = -1
    best = np.argmin(d[freed], axis=1)
    model.reanchor(freed, best)
    two = np.partition(d[freed], 1, axis=1)
    label = sub_bins(parent, best, two[:, 1] - two[:, 0], SPLIT_PARTS)
    shared = label >= 0
    details["sub_bins"] += int(label.max(initial=-1)) + 1
    if shared.any():
        lab = label[shared]
        first = np.unique(lab, return_index=True)[1]
        new = model.add_bins(add_bins(model.lp, freed[shared], lab), best[shared][first])
        member[freed[shared]] = new[lab]
    return freed[~shared]


def _not_ok(reason: str, details: dict[str, Any], iterations: int) -> StructuredRun:
    details["fallback_reason"] = reason
    return StructuredRun(None, np.nan, False, reason, iterations=iterations,
                         details=details)
