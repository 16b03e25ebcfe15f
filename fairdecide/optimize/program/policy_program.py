"""The policy optimisation program in matrix form, assembled from blocks.

Variables, in order: the free policy rows pi (n_free x n_actions, flattened), each
scenario's group marginal m_k = vec P(z, a, y) (n_z * n_a * n_y), then per criterion and
scenario its deviation variable f_ck and whatever auxiliary variables the criterion
adds, then the trade-off's variables (epigraphs, CVaR, violations).

Each criterion writes its own rows through a :class:`CriterionBlock` (over the marginal
columns, or over the policy columns for criteria that read policy rows); the trade-off
writes the objective and its constraints through the :class:`Assembly`. Introducing m
with its own defining equalities ``m = B pi`` keeps every group-fairness row sparse
(beside the same program with m substituted out, separation's has 1.66 to 3.00 times
fewer nonzeros and HiGHS's interior point took 1.47 to 3.42 times less time;
independence's is no faster: benchmarks/results/marginal_variables.txt). The program is
built directly as sparse matrices and handed to HiGHS
(:mod:`fairdecide.optimize.engine.solvers`, through the one HiGHS wrapper
:class:`~fairdecide.optimize.engine.highs_model.HighsModel`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp

from fairdecide.criteria.base import Criterion, Expansion
from fairdecide.optimize.program.assembly import Assembly, CriterionBlock, KLTerm
from fairdecide.policies.tabular import TabularPolicy
from fairdecide.problem import DecisionProblem
from fairdecide.worlds.world import world_arrays

if TYPE_CHECKING:
    from fairdecide.optimize.program.tradeoff import Tradeoff
    from fairdecide.policies.base import Policy
    from fairdecide.uncertainty.beliefs import Belief

__all__ = ["CriterionBlock", "PolicyProgram", "Program"]

@dataclass
class Program:
    """min c @ x  s.t.  A_ub x <= b_ub, A_eq x = b_eq, lb <= x <= ub, KL epigraphs.

    ``m_slices[k]`` locates scenario k's group marginal in x; ``f_index[c][k]`` the
    deviation variable of criterion c in scenario k.
    """

    c: np.ndarray
    A_ub: sp.csr_matrix
    b_ub: np.ndarray
    A_eq: sp.csr_matrix
    b_eq: np.ndarray
    lb: np.ndarray
    ub: np.ndarray
    m_slices: list[slice]
    f_index: list[list[int]]
    kl: list[KLTerm] = field(default_factory=list)
    n_actions: int = 0
    #: the policy's free rows: the first n_units * n_actions columns, and the first
    #: n_units equality rows are their simplices (the structured solver's blocks)
    n_units: int = 0
    #: the belief's scenarios, which share the policy columns
    n_scenarios: int = 1
    #: the rows of A_ub whose right-hand side is a criterion's tolerance (epsilon)
    tolerance_rows: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    #: the criterion whose tolerance each of those rows bounds
    tolerance_of: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    #: rows of a confidence set's duals (per unit and group) beside the coupling rows
    robust: bool = False
    #: the criteria's variables kept across rounds of constraint generation
    #: (:meth:`~fairdecide.optimize.program.assembly.CriterionBlock.kept_vars`)
    kept: dict = field(default_factory=dict)

    @property
    def n_variables(self) -> int:
        return len(self.c)

    def read_solution(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """At a solution ``x``: each scenario's group marginal, shape (K, n_m), and each
        criterion's deviation variable per scenario, shape (n_criteria, K)."""
        ms = np.stack([x[sl] for sl in self.m_slices])
        f = np.array([[x[i] for i in row] for row in self.f_index])
        return ms, f.reshape(len(self.f_index), len(self.m_slices))

    @property
    def unit_simplices(self) -> bool:
        """Whether the policy's free columns are unit simplices: there are some, and
        they lie in [0, 1] (no trust region)."""
        n_pi = self.n_units * self.n_actions
        return bool(self.n_units) and not (np.any(self.lb[:n_pi] != 0.0)
                                           or np.any(self.ub[:n_pi] < 1.0))

    @property
    def n_constraints(self) -> int:
        return self.A_ub.shape[0] + self.A_eq.shape[0]

    @property
    def nnz(self) -> int:
        return self.A_ub.nnz + self.A_eq.nnz


class PolicyProgram:
    """Builds optimisation programs over free policy rows for one problem and the
    scenarios of a belief (which share the policy).

    Parameters
    ----------
    problem : DecisionProblem
    belief : Belief
        One world (plug-in) or several scenarios with the same units.
    group_blind : bool
        If True, units of the same cell share one policy row.
    policy_class : type, default=TabularPolicy
        A free policy class: ``free_layout(units, group_blind)`` says which free row each
        unit uses, ``from_unit_rows(units, rows)`` builds the policy.
    confidence : ConfidenceSet, optional
        Maximise the worst value over this set (the belief is then its centre alone).
    """

    def __init__(self, problem: DecisionProblem, belief: Belief, group_blind: bool,
                 policy_class: Any = TabularPolicy, confidence: Any = None) -> None:
        self.problem, self.group_blind = problem, bool(group_blind)
        self.worlds = list(belief.worlds)
        self.weights = np.asarray(belief.weights, dtype=float)
        self.aggregate = belief.aggregate
        self.policy_class = policy_class
        self.confidence = confidence
        #: units of zero weight get the best action's row unless a criterion reads the
        #: rows themselves (Lipschitz) or a confidence set may move weight onto them:
        #: then their rows are the program's
        self.keep_unit_rows = confidence is not None and not confidence.population_given
        self.units = units = self.worlds[0].units()
        n_a, n_y, n_z = problem.n_actions, problem.n_outcomes, units.n_groups
        self.n_a, self.n_y, self.n_z = n_a, n_y, n_z
        self.free_of_unit, self.n_free = policy_class.free_layout(units, group_blind)
        self.n_pi = self.n_free * n_a
        self.n_m = n_z * n_a * n_y
        self.K = len(self.worlds)
        self.U_m = np.tile(problem.utility.reshape(-1), n_z)
        self.B: list[sp.csr_matrix] = []
        self.unit_w: list[np.ndarray] = []
        self.unit_p_y: list[np.ndarray] = []
        n_u = units.n
        self.unit_weight = np.zeros(n_u)
        self.p_y_units = np.zeros((n_u, n_a, n_y))
        group = units.group
        layout: list[Any] = [None]  # the scenarios' shared pattern, once known
        for world, wk in zip(self.worlds, self.weights, strict=True):
            _, w, p_y = world_arrays(world, problem)
            # B: m[(z, a, y)] = sum_u [group(u) = z] w_u pi[free(u), a] P(y | a, u)
            self.B.append(_marginal_map(w[:, None, None] * p_y, group, self.free_of_unit,
                                        self.n_m, self.n_pi, layout))
            self.unit_w.append(w)
            self.unit_p_y.append(p_y)
            self.unit_weight += w
            self.p_y_units += wk * p_y

    # ------------------------------------------------------------------ policies
    def uniform(self) -> np.ndarray:
        """The uniform free rows, shape (n_free, n_a)."""
        return np.full((self.n_free, self.n_a), 1.0 / self.n_a)

    def marginals(self, pi: np.ndarray) -> np.ndarray:
        """Group marginals m_k of free policy rows ``pi`` (n_free, n_a): shape (K, n_m)."""
        flat = pi.reshape(-1)
        return np.stack([B @ flat for B in self.B])

    def utilities(self, ms: np.ndarray) -> np.ndarray:
        """Expected utility in each scenario, from marginals of shape (K, n_m)."""
        return ms @ self.U_m

    @cached_property
    def B_stacked(self) -> sp.csr_matrix:
        """Every scenario's marginal map, stacked: (K n_m, n_pi), all marginals at once."""
        return sp.vstack(self.B, format="csr")

    def mean_utility_prices(self) -> np.ndarray:
        """The belief's weighted utility per policy column, B' (w kron U_m): d/d pi of
        sum_k w_k U_k(pi), shape (n_pi,)."""
        return self.B_stacked.T @ np.kron(self.weights, self.U_m)

    def unit_rows(self, pi: np.ndarray) -> np.ndarray:
        """Each unit's row from the free rows; units of weight zero in every scenario get
        the row of the action with the best expected utility (unless ``keep_unit_rows``)."""
        units = pi[self.free_of_unit].copy()
        w_free = np.bincount(self.free_of_unit, weights=self.unit_weight, minlength=self.n_free)
        dead = w_free[self.free_of_unit] <= 0
        if dead.any() and not self.keep_unit_rows:
            value = np.einsum("uay,ay->ua", self.p_y_units, self.problem.utility)
            if self.group_blind:  # the mean over the groups sharing the row
                total = np.zeros((self.n_free, self.n_a))
                np.add.at(total, self.free_of_unit, value)
                value = total[self.free_of_unit]
            units[dead] = np.eye(self.n_a)[np.argmax(value[dead], axis=1)]
        return units

    def policy(self, pi: np.ndarray) -> Policy:
        """The policy of free rows ``pi``."""
        return self.policy_class.from_unit_rows(self.units, self.unit_rows(pi))

    def clean(self, x: np.ndarray) -> tuple[np.ndarray, float]:
        """Free policy rows from a solution vector: clipped and renormalised, with the
        largest simplex violation found before cleaning."""
        pi = x[: self.n_pi].reshape(self.n_free, self.n_a)
        viol = max(float(-pi.min(initial=0.0)), float(np.abs(pi.sum(axis=1) - 1).max()))
        pi = np.clip(pi, 0.0, None)
        return pi / pi.sum(axis=1, keepdims=True), viol

    # ------------------------------------------------------------------ building
    def build(self, criteria: Sequence[Criterion], tradeoff: Tradeoff, *,
              point: np.ndarray | None = None, how: Expansion = "exact",
              trust: float | None = None) -> Program:
        """Assemble the program of ``tradeoff`` over ``criteria``.

        Each criterion writes its rows at the expansion ``point`` (free rows; default
        uniform) as ``how`` says (see :meth:`Criterion.add_rows`); ``trust`` bounds every
        free row within that radius of the point (a trust region).
        """
        if point is None:
            point = self.uniform()
        asm = Assembly(self)
        # Simplex rows and each scenario's marginal definition.
        asm.eq.add_csr(np.arange(self.n_free + 1) * self.n_a, np.arange(self.n_pi),
                       np.ones(self.n_pi), np.ones(self.n_free))
        for k in range(self.K):
            # m_k - B_k pi = 0: each row of -B_k (policy columns) and then its marginal
            # column, which lies to the right of every policy column
            B = self.B[k]
            B.sum_duplicates()
            ends = B.indptr[1:]
            asm.eq.add_csr(B.indptr + np.arange(self.n_m + 1),
                           np.insert(B.indices, ends, asm.m_cols[k]),
                           np.insert(-B.data, ends, 1.0), np.zeros(self.n_m))
        f_index: list[list[int]] = []
        for crit in criteria:
            row = []
            for k in range(self.K):
                f = int(asm.new_vars(1)[0])
                row.append(f)
                crit.add_rows(CriterionBlock(asm, k, f, point), how)
            f_index.append(row)
        asm.F = np.array(f_index, dtype=int).reshape(len(criteria), self.K)
        tradeoff.write(asm)
        lb = np.concatenate(asm.lb_parts)
        ubd = np.concatenate(asm.ub_parts)
        if trust is not None:
            lb[: self.n_pi] = np.maximum(0.0, point.reshape(-1) - trust)
            ubd[: self.n_pi] = np.minimum(1.0, point.reshape(-1) + trust)
        cost = np.zeros(asm.n)
        for col, val in asm.costs.items():
            cost[col] = val
        A_eq, b_eq = asm.eq.matrix(asm.n)
        A_ub, b_ub = asm.ub.matrix(asm.n)
        m_slices = [slice(int(c[0]), int(c[0]) + self.n_m) for c in asm.m_cols]
        return Program(cost, A_ub, b_ub, A_eq, b_eq, lb, ubd, m_slices,
                       [list(map(int, r)) for r in asm.F], asm.kl, n_actions=self.n_a,
                       n_units=self.n_free, n_scenarios=self.K,
                       tolerance_rows=np.asarray(asm.tolerance_rows, dtype=np.int64),
                       tolerance_of=np.asarray(asm.tolerance_of, dtype=np.int64),
                       robust=asm.wrote_duals, kept=asm.kept)


def _marginal_map(vals: np.ndarray, group: np.ndarray, free_of_unit: np.ndarray,
                  n_m: int, n_pi: int, layout: list[Any] | None = None) -> sp.csr_matrix:
    """B with m[(z, a, y)] = sum_u [group(u) = z] vals[u, a, y] pi[free(u), a]: from
    ``vals`` (units, actions, outcomes) = w_u P(y | a, u).

    With every entry nonzero (the usual case) the entries form a regular grid whose CSR
    pattern (:func:`_grid_pattern`) is the same in every scenario of a belief:
    ``layout`` (a one-item list, None at first) keeps it, so the next scenarios only
    gather or sum their values into it (COMPAS, K = 2048: the 2048 maps took 0.46 s
    as triplets).
    """
    n_u, n_a, n_y = vals.shape
    flat = vals.reshape(-1)
    if n_u and np.all(flat != 0.0):
        pattern = layout[0] if layout is not None else None
        if pattern is None:
            pattern = _grid_pattern(group, free_of_unit, n_a, n_y, n_m, n_pi)
            if layout is not None:
                layout[0] = pattern
        indptr, indices, source, into = pattern
        data = (flat[source] if into is None
                else np.bincount(into, weights=flat, minlength=len(indices)))
        return sp.csr_matrix((data, indices, indptr), shape=(n_m, n_pi))
    idx = np.flatnonzero(flat)
    uu, aa = idx // (n_a * n_y), idx // n_y % n_a
    rows = (group[uu] * n_a + aa) * n_y + idx % n_y
    return sp.csr_matrix((flat[idx], (rows, free_of_unit[uu] * n_a + aa)), shape=(n_m, n_pi))


def _grid_pattern(group: np.ndarray, free_of_unit: np.ndarray, n_a: int, n_y: int,
                  n_m: int, n_pi: int) -> tuple[np.ndarray, ...]:
    """The CSR pattern of B over the full grid of (unit, action, outcome) entries in C
    order: its indptr and indices, and for each CSR entry the grid entry it takes
    (``source``, when each unit has its own free row: no entry is shared) or, for each
    grid entry, the CSR entry it is summed into (``into``, when units share rows)."""
    n_u = len(group)
    uu = np.repeat(np.arange(n_u), n_a * n_y)
    aa = np.tile(np.repeat(np.arange(n_a), n_y), n_u)
    rows = (group[uu] * n_a + aa) * n_y + np.tile(np.arange(n_y), n_u * n_a)
    if n_u * n_a == n_pi and np.array_equal(free_of_unit, np.arange(n_u)):
        # column (u, a) holds its n_y distinct rows in grid order: written by columns
        # and converted, the entries' grid positions come out in CSR order (1.2 million
        # units: 0.3 s, against 1.5 s for the triplets)
        pos = sp.csc_matrix((np.arange(len(rows), dtype=float), rows,
                             np.arange(n_pi + 1) * n_y), shape=(n_m, n_pi)).tocsr()
        return pos.indptr, pos.indices, pos.data.astype(np.int64), None
    key = rows.astype(np.int64) * n_pi + free_of_unit[uu] * n_a + aa
    ukey, into = np.unique(key, return_inverse=True)
    indptr = np.concatenate([[0], np.cumsum(np.bincount(ukey // n_pi, minlength=n_m))])
    return indptr, ukey % n_pi, None, into.ravel()
