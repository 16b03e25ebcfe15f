"""Fair policies for populations too large for one machine: the program in the space of
its coupling rows, each iteration a map over units and a reduction.

A tabular program couples its units only through the group marginal
M[z, a, y] = sum_{u in z} w_u pi_ua p_u(y | a): utility and every linear criterion are
functions of M. The policies form a product of simplices whose vertices are the
deterministic policies, so (Dantzig-Wolfe) every policy is a mixture
pi = sum_k lambda_k pi^k of deterministic ones, and the program becomes a **master**
over the mixture weights lambda and M alone:

    M - sum_k lambda_k g_k = 0,   sum_k lambda_k = 1,   lambda >= 0,
    the criteria's rows and the trade-off's on M (as the in-memory program writes them),

with g_k = M(pi^k). Given the master's duals y on the rows of M and sigma on the
convexity row, the vertex of least reduced cost is found **unit by unit**,
a_u = argmin_a w_u sum_y y[z_u, a, y] p_u(y | a): a map over the units' partitions, and
its g a sum over them (a reduction). The units are split into blocks (a group's units in
a row range of a partition), each with its own convexity row, so one pass prices a
vertex per block; those that price out enter the master, which HiGHS re-solves (columns
in the thousands, whatever the population). The loop ends when no vertex prices out:
the least reduced cost d is the Lagrangian duality gap, and the loop stops on the
master loop's rule (:mod:`fairdecide.optimize.engine.rounds`: at most 1e-9 of the
objective); at most ``max_iter`` passes.

The policy is never collected: it is the mixture of the vertices that the master's duals
y_k pick (:class:`~fairdecide.policies.mixture.VertexMixturePolicy`), recomputed unit by
unit when asked. It is **verified** as every optimised policy is
(:func:`~fairdecide.optimize.verify.verify_solution`): its decision table in the units'
world (:class:`~fairdecide.worlds.frame.FrameWorld`, a further pass that sums the group
marginal from the units and that mixture, independently of the master) gives the utility
and every deviation, checked against the master's values and the trade-off's own
constraints; a failed check raises :class:`~fairdecide.exceptions.VerificationError`.

The units are a :class:`~fairdecide.worlds.frame.FrameWorld`: a pandas DataFrame or a Dask
DataFrame (``pip install 'fairdecide[dask]'``; on Dask every pass runs on the workers)
with a group column, a weight column (P(x, z) of a cell, or 1/N of a person) and the
outcome probabilities (:func:`~fairdecide.worlds.frame.outcome_columns`): columns p_<y>
for prediction problems, p_<a>_<y> for interventions. :func:`~fairdecide.optimize_policy`
takes one as its world: it validates the arguments as for every world, refuses the
settings the master cannot honour (:func:`fairdecide.optimize.routes.units.check_settings`),
and its route (:class:`~fairdecide.optimize.routes.units.UnitsRoute`) hands the table to
the solving chain, whose "units" stage runs :func:`run` (the HiGHS method of its master
is the chain's).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

import numpy as np
import scipy.sparse as sp

from fairdecide.exceptions import FairdecideError, SolverError
from fairdecide.optimize.engine._unit_pass import vertex_part
from fairdecide.optimize.engine.master import Master
from fairdecide.optimize.engine.rounds import Rounds
from fairdecide.optimize.engine.tasks import SolveResult, UnitsTask
from fairdecide.optimize.program.policy_program import PolicyProgram
from fairdecide.problem import DecisionProblem
from fairdecide.uncertainty.beliefs import Belief
from fairdecide.worlds.frame import BLOCKS_PER_PARTITION, map_partitions
from fairdecide.worlds.world import TabularWorld

__all__ = ["run"]


def _master(problem: DecisionProblem, p_zay: np.ndarray, criteria: list,
            tradeoff: Any) -> Any:
    """The in-memory program of a template world (one cell per group, the same
    policy-independent masses P(z) and P(z, y) or P(y | a, z)), whose rows on M are the
    master's."""
    p_z = p_zay[:, 0, :].sum(axis=1)
    tot = p_zay.sum(axis=-1, keepdims=True)
    p_y = np.where(tot > 0, p_zay / np.where(tot > 0, tot, 1.0), 1.0 / p_zay.shape[-1])
    if not problem.outcome_depends_on_action:
        p_y = p_y[:, 0, :]
    world = TabularWorld(p_z[None, :] / p_z.sum(), p_y[None])
    prog = PolicyProgram(problem, Belief.plug_in(world), False)
    return prog.build(criteria, tradeoff), prog


def run(task: UnitsTask, method: Mapping[str, Any]) -> SolveResult:
    """The master loop over the task's FrameWorld (see the module), its master solved by
    HiGHS's ``method``: the blocks' mixture weights over the vertex policies of the
    master's duals (``pi``, blocks x rounds; ``duals``: those vertices' prices), the
    master's own utility and deviation bounds, its certificate, and the task's trade-off
    with its utility floor set (``tradeoff``)."""
    t0 = time.perf_counter()
    world, problem, criteria, tradeoff = task.world, task.problem, task.criteria, task.tradeoff
    units, group, weight, total = world.frame, world.group, world.weight, world.total
    n_z, n_a, n_y = world.n_groups, problem.n_actions, problem.n_outcomes
    p_zay = world.masses
    program, prog = _master(problem, p_zay, criteria, tradeoff)
    n_pi, n_m, n_free = prog.n_pi, prog.n_m, prog.n_free
    if program.A_ub.shape[0] and abs(program.A_ub.tocsr()[:, :n_pi]).sum() > 0:
        raise FairdecideError("criteria: a criterion writes rows on the policy columns")
    block_ids = [np.flatnonzero(s > 0) for s in world.block_sizes]  # nonempty blocks
    offsets = np.cumsum([0] + [len(b) for b in block_ids])
    n_blocks = int(offsets[-1])
    cols_g: list[np.ndarray] = []  # columns: g (n_m,)
    cols_block: list[int] = []  # global block index of each column
    cols_round: list[int] = []  # which duals[k] made it
    duals: list[np.ndarray] = []

    def price(Ys: list[np.ndarray]) -> np.ndarray:
        """Each block's vertex for each set of duals in Ys (one pass over the units):
        (len(Ys), n_blocks, n_m)."""
        parts = map_partitions(units, vertex_part, problem, group, weight, np.array(Ys),
                               n_z)
        return np.concatenate([g[:, b] for g, b in zip(parts, block_ids, strict=True)],
                              axis=1) / total

    def add(G: np.ndarray, which: np.ndarray) -> None:
        k = len(duals) - 1
        for b in which:
            cols_g.append(G[b])
            cols_block.append(int(b))
            cols_round.append(k)

    starts = []
    for a in range(n_a):  # constant policies: deviation 0, so the master is feasible
        Y = np.zeros((n_z, n_a, n_y))
        Y[:, a, :] = -1.0
        starts.append(Y)
    starts.append(-prog.U_m.reshape(n_z, n_a, n_y))  # the unconstrained best
    for Y, G in zip(starts, price(starts), strict=True):
        duals.append(Y)
        add(G, np.arange(n_blocks))
    if tradeoff.needs_utility_optimum:  # U*: the unconstrained best's utility
        tradeoff = tradeoff.with_utility_optimum(float(prog.U_m @ np.sum(G, axis=0)))
        program = _master(problem, p_zay, criteria, tradeoff)[0]
    A_eq = program.A_eq.tocsr()[n_free:, n_pi:]  # marginal rows first, then the rest
    A_ub = program.A_ub.tocsr()[:, n_pi:]
    c_rest, lb, ub = program.c[n_pi:], program.lb[n_pi:], program.ub[n_pi:]
    # the master (engine/master.py), kept warm: the other columns (marginals, deviations,
    # the trade-off's) first, then the vertex columns as they price out; rows: the
    # inequalities, then the equalities (marginal definitions first) and a convexity row
    # per block; eq is where the equalities' duals start
    n_rest, n_eq, eq = A_eq.shape[1], A_eq.shape[0], A_ub.shape[0]
    b_eq = np.concatenate([program.b_eq[n_free:], np.ones(n_blocks)])
    model = Master(c_rest, lb, ub,
                   sp.vstack([A_ub, A_eq, sp.csr_matrix((n_blocks, n_rest))]),
                   np.concatenate([np.full(eq, -np.inf), b_eq]),
                   np.concatenate([program.b_ub, b_eq]))
    model.set_method(method)
    n_in = 0  # vertex columns in the model

    def grow() -> None:
        """Append the vertex columns found since the last solve: -g on the marginal
        rows, 1 on the block's convexity row."""
        nonlocal n_in
        new = slice(n_in, len(cols_g))
        G = np.array(cols_g[new]).T.reshape(n_m, -1)
        k = G.shape[1]
        col = sp.vstack([sp.csr_matrix((eq, k)), sp.csr_matrix(-G),
                         sp.csr_matrix((n_eq - n_m, k)),
                         sp.csr_matrix((np.ones(k), (cols_block[new], np.arange(k))),
                                       shape=(n_blocks, k))])
        model.add_cols(col, np.zeros(k), np.zeros(k), np.full(k, np.inf))
        n_in = len(cols_g)

    build = time.perf_counter() - t0  # the master and its start
    rounds = Rounds("distributed", max_rounds=task.max_iter)
    while True:
        grow()
        ok, status = model.solve()
        if not ok:
            raise SolverError(f"the master program failed: HiGHS says {status!r}")
        objective = model.objective
        y = model.row_duals()[eq:]
        Y = y[:n_m].reshape(n_z, n_a, n_y)
        sigma = y[n_eq:]
        duals.append(Y)
        G_new = price([Y])[0]
        # a block's vertex column (-g, e_b) has reduced cost g . y_m - sigma_b
        reduced = G_new @ y[:n_m] - sigma
        gap = float(np.sum(np.clip(-reduced, 0.0, None)))
        if rounds.next(objective, gap, columns=len(cols_g)):
            duals.pop()
            break
        if (why := rounds.stop_reason()) is not None:
            raise SolverError(f"the distributed master was {why}; raise max_iter")
        add(G_new, np.flatnonzero(reduced < 0))
    x = model.values()
    lam_cols = np.clip(x[n_rest:], 0.0, None)
    mix = np.zeros((n_blocks, len(duals)))
    np.add.at(mix, (np.array(cols_block), np.array(cols_round)), lam_cols)
    mix /= mix.sum(axis=1, keepdims=True)
    per = BLOCKS_PER_PARTITION * n_z
    lam_all = np.zeros((len(block_ids) * per, len(duals)))
    lam_all[:, 0] = 1.0  # blocks without units: any row on the simplex
    for i, b in enumerate(block_ids):  # partition i's blocks, then the next partition's
        lam_all[i * per + b] = mix[offsets[i]:offsets[i + 1]]
    # the master's own values, for verification to compare with the recomputed ones
    ms, f = program.read_solution(np.concatenate([np.zeros(n_pi), x[:n_rest]]))
    size = {"n_variables": n_rest + len(cols_g), "n_constraints": eq + n_eq + n_blocks,
            "nnz": A_ub.nnz + A_eq.nnz + int(np.count_nonzero(cols_g)) + len(cols_g)}
    return SolveResult(
        None, objective, True, "optimal",
        f"distributed (Dantzig-Wolfe over {len(block_ids)} partition(s))",
        time.perf_counter() - t0 - build, None,
        {"distributed": {"columns": len(cols_g), "blocks": n_blocks,
                         "partitions": len(block_ids)}},
        certificate=rounds.certificate, size=size, pi=lam_all,
        utility=prog.utilities(ms), f=f, stats={"build_seconds": build},
        tradeoff=tradeoff, duals=duals)
