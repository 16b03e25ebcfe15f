"""The policy optimisation program in matrix form, and the solvers that take it.

Variables, in order: the free policy rows pi (n_free x n_actions, flattened), the group
marginal m = vec P(z, a, y) (n_z * n_a * n_y), then per criterion its deviation f_k and
auxiliary variables, then per-criterion violation variables when minimising violation.

Introducing m with its own defining equalities ``m = B pi`` keeps every fairness row
sparse: the criteria touch only the few entries of m (see SOLVERS.md: this cut nonzeros
and interior-point time several-fold). The program is built directly as sparse matrices
and handed to HiGHS through scipy (no modelling-layer canonicalisation on the hot path);
cvxpy is used for KL terms (exponential cone) or when the user names a cvxpy solver.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linprog

from fairdecide.criteria.base import LinearizedConditionals
from fairdecide.exceptions import SolverError
from fairdecide.problem import DecisionProblem
from fairdecide.world import TabularWorld

__all__ = ["PolicyProgram", "Program", "SolveResult", "solve_program"]

# Below this many variables HiGHS's dual simplex is fast and exact. Above it the dual
# simplex is erratic: benchmarks/bench_lp_scaling.py measured it 4-10x slower than the
# interior point (with crossover) on separation LPs from 1e4 variables (over 120 s
# against 4 s at 2e5), though up to 2.7x faster on some independence LPs.
SIMPLEX_MAX_VARIABLES = 5_000
SCIPY_METHODS = {"highs": None, "highs-ds": "highs-ds", "highs-ipm": "highs-ipm"}


@dataclass
class KLTerm:
    """f_index >= sum_rows weight * kl_div(A_group m + b_group, A_pool m + b_pool)."""

    f_index: int
    lin: LinearizedConditionals


@dataclass
class Program:
    """min c @ x  s.t.  A_ub x <= b_ub, A_eq x = b_eq, lb <= x <= ub, KL epigraphs."""

    c: np.ndarray
    A_ub: sp.csr_matrix
    b_ub: np.ndarray
    A_eq: sp.csr_matrix
    b_eq: np.ndarray
    lb: np.ndarray
    ub: np.ndarray
    m_slice: slice
    f_index: list[int]
    kl: list[KLTerm] = field(default_factory=list)

    @property
    def n_variables(self) -> int:
        return len(self.c)

    @property
    def n_constraints(self) -> int:
        return self.A_ub.shape[0] + self.A_eq.shape[0]

    @property
    def nnz(self) -> int:
        return self.A_ub.nnz + self.A_eq.nnz


@dataclass
class SolveResult:
    x: np.ndarray | None
    objective: float
    ok: bool
    status: str
    solver: str
    seconds: float
    iterations: int | None = None


class _Rows:
    """Accumulates sparse rows (COO triplets) and right-hand sides."""

    def __init__(self) -> None:
        self.r: list[np.ndarray] = []
        self.c: list[np.ndarray] = []
        self.v: list[np.ndarray] = []
        self.b: list[np.ndarray] = []
        self.n = 0

    def add(self, rows: np.ndarray, cols: np.ndarray, vals: np.ndarray, rhs: np.ndarray) -> None:
        self.r.append(np.asarray(rows) + self.n)
        self.c.append(np.asarray(cols))
        self.v.append(np.asarray(vals, dtype=float))
        self.b.append(np.asarray(rhs, dtype=float))
        self.n += len(rhs)

    def add_dense(self, mat: np.ndarray, cols: np.ndarray, rhs: np.ndarray) -> None:
        rr, cc = np.nonzero(mat)
        self.add(rr, cols[cc], mat[rr, cc], rhs)

    def matrix(self, n_cols: int) -> tuple[sp.csr_matrix, np.ndarray]:
        if not self.r:
            return sp.csr_matrix((0, n_cols)), np.zeros(0)
        A = sp.csr_matrix(
            (np.concatenate(self.v), (np.concatenate(self.r), np.concatenate(self.c))),
            shape=(self.n, n_cols),
        )
        return A, np.concatenate(self.b)


class PolicyProgram:
    """Builds optimisation programs over tabular policies for one problem and world.

    Parameters
    ----------
    problem, world : the decision problem and the (known) tabular world.
    group_blind : bool
        If True, one policy row per feature cell x is shared by all groups.
    """

    def __init__(self, problem: DecisionProblem, world: TabularWorld, group_blind: bool):
        w, group, p_y = world.units(problem)
        self.problem, self.world, self.group_blind = problem, world, bool(group_blind)
        n_a, n_y, n_z = problem.n_actions, problem.n_outcomes, world.n_z
        n_u = len(w)
        self.n_a, self.n_y, self.n_z = n_a, n_y, n_z
        self.free_of_unit = np.arange(n_u) // n_z if group_blind else np.arange(n_u)
        self.n_free = world.n_x if group_blind else n_u
        self.n_pi = self.n_free * n_a
        self.n_m = n_z * n_a * n_y
        # B: m[(z, a, y)] = sum_u [group(u) = z] w_u pi[free(u), a] P(y | a, u)
        vals = w[:, None, None] * p_y
        uu, aa, yy = np.nonzero(vals)
        rows = (group[uu] * n_a + aa) * n_y + yy
        cols = self.free_of_unit[uu] * n_a + aa
        self.B = sp.csr_matrix((vals[uu, aa, yy], (rows, cols)), shape=(self.n_m, self.n_pi))
        self.U_m = np.tile(problem.utility.reshape(-1), n_z)
        self.unit_weight = w
        self.p_y_units = p_y

    # ------------------------------------------------------------------ evaluation
    def marginal(self, pi: np.ndarray) -> np.ndarray:
        """The flattened group marginal m of free policy rows ``pi`` (n_free, n_a)."""
        return self.B @ pi.reshape(-1)

    def utility(self, m: np.ndarray) -> float:
        return float(self.U_m @ m)

    def to_table(self, pi: np.ndarray) -> np.ndarray:
        """Full (n_x, n_z, n_a) table from free rows; zero-weight cells get the greedy row."""
        units = pi[self.free_of_unit].copy()
        w_free = np.bincount(self.free_of_unit, weights=self.unit_weight, minlength=self.n_free)
        dead = w_free[self.free_of_unit] <= 0
        if dead.any():
            value = np.einsum("uay,ay->ua", self.p_y_units, self.problem.utility)
            if self.group_blind:  # the mean over the groups sharing the row
                total = np.zeros((self.n_free, self.n_a))
                np.add.at(total, self.free_of_unit, value)
                value = total[self.free_of_unit]
            units[dead] = np.eye(self.n_a)[np.argmax(value[dead], axis=1)]
        return units.reshape(self.world.n_x, self.n_z, self.n_a)

    def clean(self, x: np.ndarray) -> tuple[np.ndarray, float]:
        """Free policy rows from a solution vector: clipped and renormalised, with the
        largest simplex violation found before cleaning."""
        pi = x[: self.n_pi].reshape(self.n_free, self.n_a)
        viol = max(float(-pi.min(initial=0.0)), float(np.abs(pi.sum(axis=1) - 1).max()))
        pi = np.clip(pi, 0.0, None)
        return pi / pi.sum(axis=1, keepdims=True), viol

    # ------------------------------------------------------------------ building
    def build(
        self,
        lins: list[tuple[Any, LinearizedConditionals]],
        mode: str,
        *,
        lam: float = 0.0,
        epsilon: list[float] | None = None,
        utility_min: float | None = None,
        trust: tuple[np.ndarray, float] | None = None,
        fix_mass: list[LinearizedConditionals] = (),
    ) -> Program:
        """Assemble the program.

        ``lins`` pairs each criterion's measure with its affine conditionals. ``mode`` is
        one of "utility" (max U), "mixture" (min -(1-lam) U + lam sum f), "epsilon"
        (max U s.t. f_k <= epsilon_k), "slack" (min sum f s.t. U >= utility_min) and
        "violation" (min sum max(0, f_k - epsilon_k)). ``fix_mass`` holds the
        conditioning masses P(c, z) of criteria at their linearisation point: the program
        is then restricted to policies with the same masses, on which the conditionals
        are exactly linear.
        """
        n_pi, n_m = self.n_pi, self.n_m
        m0 = n_pi
        n = n_pi + n_m
        eq, ub = _Rows(), _Rows()
        lb_parts = [np.zeros(n_pi), np.zeros(n_m)]
        ub_parts = [np.ones(n_pi), np.full(n_m, np.inf)]
        cost_parts = [np.zeros(n_pi), np.zeros(n_m)]
        # Simplex rows and the marginal's definition.
        eq.add(np.repeat(np.arange(self.n_free), self.n_a), np.arange(n_pi),
               np.ones(n_pi), np.ones(self.n_free))
        Bc = self.B.tocoo()
        eq.add(np.concatenate([np.arange(n_m), Bc.row]),
               np.concatenate([m0 + np.arange(n_m), Bc.col]),
               np.concatenate([np.ones(n_m), -Bc.data]), np.zeros(n_m))
        m_cols = m0 + np.arange(n_m)
        for lin in fix_mass:
            eq.add_dense(lin.A_mass, m_cols, lin.mass)
        f_index: list[int] = []
        kl: list[KLTerm] = []
        for measure, lin in lins:
            f = n
            n += 1
            f_index.append(f)
            lb_parts.append(np.zeros(1))
            ub_parts.append(np.full(1, np.inf))
            cost_parts.append(np.zeros(1))
            D = lin.A_group - lin.A_pool
            d = lin.b_group - lin.b_pool
            n_r = len(d)
            if measure == "kl":
                kl.append(KLTerm(f, lin))
            elif measure == "max":
                Wd = lin.weight[:, None] * D
                fcol = np.full((n_r, 1), -1.0)
                ub.add_dense(np.hstack([Wd, fcol]), np.append(m_cols, f), -lin.weight * d)
                ub.add_dense(np.hstack([-Wd, fcol]), np.append(m_cols, f), lin.weight * d)
            else:  # tv: |r| <= s, f = weight @ s
                s = n + np.arange(n_r)
                n += n_r
                lb_parts.append(np.zeros(n_r))
                ub_parts.append(np.full(n_r, np.inf))
                cost_parts.append(np.zeros(n_r))
                neg = -np.eye(n_r)
                cols = np.concatenate([m_cols, s])
                ub.add_dense(np.hstack([D, neg]), cols, -d)
                ub.add_dense(np.hstack([-D, neg]), cols, d)
                eq.add(np.zeros(n_r + 1, dtype=int), np.append(s, f),
                       np.append(-lin.weight, 1.0), np.zeros(1))
        lb = np.concatenate(lb_parts)
        ubd = np.concatenate(ub_parts)
        cost = np.concatenate(cost_parts)
        if mode == "utility":
            cost[m_cols] = -self.U_m
        elif mode == "mixture":
            cost[m_cols] = -(1.0 - lam) * self.U_m
            cost[f_index] = lam
        elif mode == "epsilon":
            cost[m_cols] = -self.U_m
            ubd[f_index] = np.asarray(epsilon, dtype=float)
        elif mode == "slack":
            cost[f_index] = 1.0
            if utility_min is not None and np.isfinite(utility_min):
                ub.add(np.zeros(n_m, dtype=int), m_cols, -self.U_m, np.array([-utility_min]))
        elif mode == "violation":
            v = n + np.arange(len(f_index))
            n += len(f_index)
            lb = np.append(lb, np.zeros(len(v)))
            ubd = np.append(ubd, np.full(len(v), np.inf))
            cost = np.append(cost, np.ones(len(v)))
            for k, f in enumerate(f_index):
                ub.add(np.zeros(2, dtype=int), np.array([f, v[k]]), np.array([1.0, -1.0]),
                       np.array([epsilon[k]]))
        else:
            raise ValueError(f"unknown mode {mode!r}")
        if trust is not None:
            pi0, radius = trust
            lb[:n_pi] = np.maximum(0.0, pi0.reshape(-1) - radius)
            ubd[:n_pi] = np.minimum(1.0, pi0.reshape(-1) + radius)
        A_eq, b_eq = eq.matrix(n)
        A_ub, b_ub = ub.matrix(n)
        return Program(cost, A_ub, b_ub, A_eq, b_eq, lb, ubd, slice(m0, m0 + n_m), f_index, kl)


# ---------------------------------------------------------------------- solving
def solve_program(prog: Program, solver: str | None = None, time_limit: float | None = None
                  ) -> SolveResult:
    """Solve ``prog``. ``solver`` None/"highs" picks HiGHS's method by size;
    "highs-ds" and "highs-ipm" force one; any other name is passed to cvxpy."""
    if prog.kl and (solver is None or solver.lower() in SCIPY_METHODS):
        solver = "CLARABEL"
    if solver is None or solver.lower() in SCIPY_METHODS:
        return _solve_scipy(prog, (solver or "highs").lower(), time_limit)
    return _solve_cvxpy(prog, solver, time_limit)


def _solve_scipy(prog: Program, name: str, time_limit: float | None) -> SolveResult:
    method = SCIPY_METHODS[name]
    if method is None:
        method = "highs-ds" if prog.n_variables <= SIMPLEX_MAX_VARIABLES else "highs-ipm"
    options: dict[str, Any] = {"presolve": True}
    if time_limit is not None:
        options["time_limit"] = float(time_limit)
    bounds = np.column_stack([prog.lb, prog.ub])
    bounds = np.where(np.isinf(bounds), None, bounds)
    t0 = time.perf_counter()
    res = linprog(
        prog.c,
        A_ub=prog.A_ub if prog.A_ub.shape[0] else None,
        b_ub=prog.b_ub if prog.A_ub.shape[0] else None,
        A_eq=prog.A_eq,
        b_eq=prog.b_eq,
        bounds=bounds,
        method=method,
        options=options,
    )
    seconds = time.perf_counter() - t0
    names = {0: "optimal", 1: "iteration or time limit", 2: "infeasible", 3: "unbounded",
             4: "numerical difficulties"}
    ok = res.status == 0 and res.x is not None
    return SolveResult(
        x=res.x if ok else None,
        objective=float(res.fun) if ok else np.nan,
        ok=ok,
        status=names.get(res.status, str(res.status)) + ("" if ok else f": {res.message}"),
        solver=f"HiGHS ({method})",
        seconds=seconds,
        iterations=int(getattr(res, "nit", 0) or 0),
    )


def _solve_cvxpy(prog: Program, solver: str, time_limit: float | None) -> SolveResult:
    import cvxpy as cp

    x = cp.Variable(prog.n_variables)
    cons = [prog.A_eq @ x == prog.b_eq]
    if prog.A_ub.shape[0]:
        cons.append(prog.A_ub @ x <= prog.b_ub)
    fin_lb, fin_ub = np.isfinite(prog.lb), np.isfinite(prog.ub)
    cons.append(x[np.flatnonzero(fin_lb)] >= prog.lb[fin_lb])
    if fin_ub.any():
        cons.append(x[np.flatnonzero(fin_ub)] <= prog.ub[fin_ub])
    m = x[prog.m_slice]
    for term in prog.kl:
        L = term.lin
        pg = L.A_group @ m + L.b_group
        pp = L.A_pool @ m + L.b_pool
        cons.append(x[term.f_index] >= L.weight @ cp.kl_div(pg, pp))
    problem = cp.Problem(cp.Minimize(prog.c @ x), cons)
    kwargs: dict[str, Any] = {}
    if solver.upper() == "HIGHS":
        kwargs["warm_start"] = False
    t0 = time.perf_counter()
    try:
        problem.solve(solver=solver.upper(), **kwargs)
    except cp.error.SolverError as exc:
        return SolveResult(None, np.nan, False, f"solver error: {exc}", solver.upper(),
                           time.perf_counter() - t0)
    except (ValueError, KeyError) as exc:
        raise SolverError(
            f"solver {solver!r} is not usable here ({exc}); installed cvxpy solvers are "
            f"{cp.installed_solvers()}"
        ) from None
    seconds = time.perf_counter() - t0
    ok = problem.status in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE) and x.value is not None
    return SolveResult(
        x=np.asarray(x.value) if ok else None,
        objective=float(problem.value) if ok else np.nan,
        ok=ok,
        status=str(problem.status),
        solver=f"cvxpy/{solver.upper()}",
        seconds=seconds,
        iterations=None,
    )
