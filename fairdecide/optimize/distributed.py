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
the least reduced cost d is the Lagrangian duality gap, certified at most 1e-9 of the
objective.

The policy is never collected: it is the mixture of the vertices that the master's duals
y_k pick, recomputed unit by unit when asked (:meth:`DistributedResult.action_proba`),
and it is **verified** by a further pass that recomputes M, hence the utility and every
deviation, from the units and that mixture, independently of the master; the checks are
the trade-off's own (as :func:`~fairdecide.optimize.optimize_policy` makes them), and a
failed check raises :class:`~fairdecide.exceptions.VerificationError`.

The units are a pandas DataFrame or a Dask DataFrame (``pip install 'fairdecide[dask]'``;
on Dask every pass runs on the workers) with a group column, a weight column
(P(x, z) of a cell, or 1/N of a person) and the outcome probabilities: columns
p_y(y) for prediction problems, p_y(a, y) for interventions.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp
from scipy.optimize import linprog

from fairdecide._dask import is_dask_frame
from fairdecide.criteria.base import Criterion, resolve_names
from fairdecide.exceptions import FairdecideError, SolverError, VerificationError
from fairdecide.optimize._unit_pass import (
    BLOCKS_PER_PARTITION,
    _arrays,
    _block_sizes,
    _map_parts,
    _masses,
    _mixture_part_with,
    _mixture_rows,
    _vertex_part,
    outcome_columns,
)
from fairdecide.optimize.progress import Progress, report, reporting
from fairdecide.optimize.result import Verification
from fairdecide.problem import DecisionProblem
from fairdecide.table import DecisionTable

__all__ = ["DistributedResult", "optimize_distributed", "outcome_columns"]

GAP = 1e-9
MAX_ROUNDS = 300

@dataclass
class DistributedResult:
    """The solution of :func:`optimize_distributed`.

    Attributes
    ----------
    utility : float
        Expected utility of the policy, recomputed from the units (verification pass).
    deviations : dict of str to float
        Each criterion's deviation, recomputed from the units' group marginal.
    marginal : ndarray of shape (n_groups, n_actions, n_outcomes)
        That marginal.
    gap : float
        The certified Lagrangian duality gap.
    rounds : int
        Master solves (each one pass over the units).
    columns : int
        Vertex columns of the final master.
    seconds : float
    verification : Verification
        The checks made on the recomputed marginal: the recomputed utility equals the
        master's (to 1e-7) and the trade-off's constraints hold within ``tol``. A failed
        check raises :class:`~fairdecide.exceptions.VerificationError`, so a returned
        result has passed them all.
    objective : float
        The trade-off's objective (to maximise).
    """

    utility: float
    deviations: dict
    marginal: np.ndarray
    gap: float
    rounds: int
    columns: int
    seconds: float
    verification: Verification
    objective: float
    problem: DecisionProblem = field(repr=False)
    duals: list = field(repr=False, default_factory=list)
    mixture: list = field(repr=False, default_factory=list)
    group: str = field(repr=False, default="z")
    weight: str = field(repr=False, default="w")

    @property
    def verified(self) -> bool:
        """Whether verification passed (always True: a failed verification raises)."""
        return self.verification.passed

    def action_proba(self, part: pd.DataFrame, partition: int = 0) -> np.ndarray:
        """pi(a | unit) of the units of partition ``partition`` of the units table (a
        pandas DataFrame: the whole table when it was one)."""
        z, w, p = _arrays(part, self.problem, self.group, self.weight)
        n_z = self.marginal.shape[0]
        return _mixture_rows(z, w, p, self.duals, self.mixture[partition], n_z,
                             self.problem.n_actions)


def _master(problem: DecisionProblem, p_zay: np.ndarray, criteria: list,
            lam: float | None, epsilon: Any) -> Any:
    """The in-memory program of a template world (one cell per group, the same
    policy-independent masses P(z) and P(z, y) or P(y | a, z)), whose rows on M are the
    master's."""
    from fairdecide.beliefs import Belief
    from fairdecide.optimize.program import PolicyProgram
    from fairdecide.optimize.shorthand import make_tradeoff
    from fairdecide.world import TabularWorld

    p_z = p_zay[:, 0, :].sum(axis=1)
    tot = p_zay.sum(axis=-1, keepdims=True)
    p_y = np.where(tot > 0, p_zay / np.where(tot > 0, tot, 1.0), 1.0 / p_zay.shape[-1])
    if not problem.outcome_depends_on_action:
        p_y = p_y[:, 0, :]
    world = TabularWorld(p_z[None, :] / p_z.sum(), p_y[None])
    tradeoff = make_tradeoff(len(criteria), lam, epsilon, None)
    belief = Belief.plug_in(world)
    prog = PolicyProgram(problem, belief, False)
    return prog.build(criteria, tradeoff), prog, tradeoff, belief


def _check(problem: Any, units: Any, criteria: Any, group: str, weight: str) -> list:
    if not isinstance(problem, DecisionProblem):
        raise FairdecideError(f"problem must be a DecisionProblem, got {problem!r:.60}")
    if isinstance(criteria, Criterion):
        criteria = [criteria]
    if isinstance(criteria, str) or not isinstance(criteria, Sequence) or not criteria:
        raise FairdecideError(f"criteria must be a list of criteria, got {criteria!r}")
    for c in criteria:
        if not isinstance(c, Criterion):
            raise FairdecideError(f"criteria must be Criterion objects, got {c!r}")
        cap = c.capabilities(problem)
        if cap.reads != "marginal" or not cap.linear:
            raise FairdecideError(
                f"criteria: {c.label!r} is not a criterion of the group marginal linear in "
                "the policy for this problem, which the distributed solver needs")
    if not (isinstance(units, pd.DataFrame) or is_dask_frame(units)):
        raise FairdecideError(f"units must be a pandas or Dask DataFrame, got "
                              f"{type(units).__name__}")
    need = [group, weight, *outcome_columns(problem)]
    missing = [c for c in need if c not in units.columns]
    if missing:
        raise FairdecideError(f"units lacks the columns {missing}")
    return list(criteria)


def optimize_distributed(
    problem: DecisionProblem, units: Any, criteria: Sequence[Criterion], *,
    epsilon: Any = None, lam: float | None = None, group: str = "z", weight: str = "w",
    tol: float = 1e-7, max_rounds: int = MAX_ROUNDS, progress: Any = None,
) -> DistributedResult:
    """The optimal policy of a population given as a (Dask) table of units.

    Parameters
    ----------
    problem : DecisionProblem
    units : pandas or Dask DataFrame
        One row per unit: ``group`` (integer group code 0..n_z-1), ``weight`` (the
        unit's probability mass; normalised to sum to one) and the outcome
        probabilities :func:`outcome_columns`. On Dask, persist it first
        (``units.persist()``): every round reads it.
    criteria : list of Criterion
        Criteria of the group marginal linear in the policy for this problem
        (independence; separation in prediction problems), as their capabilities say.
    epsilon, lam : float
        The trade-off, as for :func:`~fairdecide.optimize_policy` (exactly one).
    tol : float, default=1e-7
        Verification tolerance on the recomputed deviations.
    max_rounds : int, default=300
    progress : callable, optional
        Called with a :class:`~fairdecide.optimize.progress.Progress` after every round
        (the master's objective, the duality gap, seconds, columns); every round is also
        logged at DEBUG to ``fairdecide.optimize.progress``.

    Returns
    -------
    DistributedResult

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> import fairdecide as fd
    >>> from fairdecide.optimize import optimize_distributed
    >>> rng = np.random.RandomState(0)
    >>> z = rng.randint(0, 2, 500)
    >>> p1 = 1 / (1 + np.exp(-rng.normal(size=500) - z))
    >>> units = pd.DataFrame({"z": z, "w": 1.0, "p_0": 1 - p1, "p_1": p1})
    >>> res = optimize_distributed(fd.DecisionProblem.classification(2), units,
    ...                            [fd.Independence()], epsilon=0.02)
    >>> res.verified, res.deviations["independence"] <= 0.02 + 1e-9
    (True, True)
    """
    with reporting(progress):
        return _optimize_distributed(problem, units, criteria, epsilon, lam, group, weight,
                                     tol, max_rounds)


def _optimize_distributed(problem: Any, units: Any, criteria: Any, epsilon: Any, lam: Any,
                          group: str, weight: str, tol: Any, max_rounds: Any
                          ) -> DistributedResult:
    t0 = time.perf_counter()
    criteria = _check(problem, units, criteria, group, weight)
    tol = float(tol)
    n_a, n_y = problem.n_actions, problem.n_outcomes
    stats = np.sum(_map_parts(units, _masses, problem, group, weight), axis=0)
    total, present = stats[0], stats[1:65]
    if not total > 0:
        raise FairdecideError("the units' weights must have a positive sum")
    n_z = int(np.flatnonzero(present)[-1]) + 1
    if n_z < 2 or np.any(present[:n_z] == 0):
        raise FairdecideError(f"groups must be coded 0..n_z-1 with at least two, each with "
                              f"units; found units in groups {np.flatnonzero(present)}")
    p_zay = stats[65:].reshape(64, n_a, n_y)[:n_z] / total
    program, prog, tradeoff, belief = _master(problem, p_zay, criteria, lam, epsilon)
    n_pi, n_m, n_free = prog.n_pi, prog.n_m, prog.n_free
    if program.A_ub.shape[0] and abs(program.A_ub.tocsr()[:, :n_pi]).sum() > 0:
        raise FairdecideError("criteria: a criterion writes rows on the policy columns")
    A_eq = program.A_eq.tocsr()[n_free:, n_pi:]  # marginal rows first, then the rest
    A_ub = program.A_ub.tocsr()[:, n_pi:]
    c_rest, lb, ub = program.c[n_pi:], program.lb[n_pi:], program.ub[n_pi:]
    sizes = _map_parts(units, _block_sizes, group, n_z)
    block_ids = [np.flatnonzero(s > 0) for s in sizes]  # nonempty blocks per partition
    offsets = np.cumsum([0] + [len(b) for b in block_ids])
    n_blocks = int(offsets[-1])
    cols_g: list[np.ndarray] = []  # columns: g (n_m,)
    cols_block: list[int] = []  # global block index of each column
    cols_round: list[int] = []  # which duals[k] made it
    duals: list[np.ndarray] = []

    def price(Y: np.ndarray) -> np.ndarray:
        parts = _map_parts(units, _vertex_part, problem, group, weight, Y, n_z)
        return np.concatenate([g[b] for g, b in zip(parts, block_ids, strict=True)]) / total

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
    for Y in starts:
        duals.append(Y)
        add(price(Y), np.arange(n_blocks))
    rounds, gap, res = 0, np.inf, None
    while True:
        rounds += 1
        C = len(cols_g)
        G = np.array(cols_g).T
        conv = sp.csr_matrix((np.ones(C), (cols_block, np.arange(C))), shape=(n_blocks, C))
        n_rest = A_eq.shape[1]
        lam_part = sp.vstack([sp.csr_matrix(-G), sp.csr_matrix((A_eq.shape[0] - n_m, C)),
                              conv])
        rest_part = sp.vstack([A_eq, sp.csr_matrix((n_blocks, n_rest))])
        Aeq = sp.hstack([lam_part, rest_part]).tocsr()
        beq = np.concatenate([program.b_eq[n_free:], np.ones(n_blocks)])
        kw = {}
        if A_ub.shape[0]:
            kw = {"A_ub": sp.hstack([sp.csr_matrix((A_ub.shape[0], C)), A_ub]).tocsr(),
                  "b_ub": program.b_ub}
        res = linprog(np.append(np.zeros(C), c_rest), A_eq=Aeq, b_eq=beq,
                      bounds=np.column_stack([np.append(np.zeros(C), lb),
                                              np.append(np.full(C, np.inf), ub)]),
                      method="highs", **kw)
        if res.status != 0:
            raise SolverError(f"the master program failed: {res.message}")
        y = res.eqlin.marginals
        Y = y[:n_m].reshape(n_z, n_a, n_y)
        sigma = y[-n_blocks:]
        duals.append(Y)
        G_new = price(Y)
        # a block's vertex column (-g, e_b) has reduced cost g . y_m - sigma_b
        reduced = G_new @ y[:n_m] - sigma
        gap = float(np.sum(np.clip(-reduced, 0.0, None)))
        report(Progress("distributed", rounds, float(res.fun), gap,
                        time.perf_counter() - t0, {"columns": len(cols_g)}))
        if gap <= GAP * max(1.0, abs(res.fun)):
            duals.pop()
            break
        if rounds >= max_rounds:
            raise SolverError(f"not certified after {max_rounds} rounds (gap {gap:.3g})")
        add(G_new, np.flatnonzero(reduced < 0))
    lam_cols = np.clip(res.x[:len(cols_g)], 0.0, None)
    mix = np.zeros((n_blocks, len(duals)))
    np.add.at(mix, (np.array(cols_block), np.array(cols_round)), lam_cols)
    mix /= mix.sum(axis=1, keepdims=True)
    per_part = []
    for i, b in enumerate(block_ids):  # each partition's lam[block, k] over all its blocks
        full = np.zeros((BLOCKS_PER_PARTITION * n_z, len(duals)))
        full[b] = mix[offsets[i]:offsets[i + 1]]
        per_part.append(full)
    # Verification: M recomputed from the units and the mixture, then U and F from it.
    M = (np.sum(_map_parts(units, _mixture_part_with, problem, group, weight, duals, n_z,
                           per_part=per_part), axis=0) / total).reshape(n_z, n_a, n_y)
    table = DecisionTable.from_marginal(M)
    utility = float(np.einsum("zay,ay->", M, problem.utility))
    names = resolve_names(criteria)
    devs = {n: float(c.deviation_from_table(table, problem))
            for n, c in zip(names, criteria, strict=True)}
    master_u = float(prog.U_m @ res.x[len(cols_g):len(cols_g) + n_m])
    U_k, F_ck = np.array([utility]), np.array([[d] for d in devs.values()])
    checks = {"solver utility matches recomputation":
              bool(abs(utility - master_u) <= 1e-7 * max(1.0, abs(utility)))}
    checks.update(tradeoff.checks(U_k, F_ck, belief, names, tol, 1e-7))
    verification = Verification(utility, devs, master_u, 0.0, checks, tol, U_k,
                                {n: F_ck[c] for c, n in enumerate(names)})
    if not verification.passed:
        failed = [k for k, ok in checks.items() if not ok]
        raise VerificationError(
            f"the distributed policy failed verification ({'; '.join(failed)}): utility "
            f"{utility:.9g} recomputed from the units against the master's "
            f"{master_u:.9g}, deviations {devs}. Raise max_rounds, loosen tol, or solve "
            "the population in memory with optimize_policy if it fits")
    return DistributedResult(utility, devs, M, gap, rounds, len(cols_g),
                             time.perf_counter() - t0, verification, -float(res.fun),
                             problem, duals, per_part, group, weight)
