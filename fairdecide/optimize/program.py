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
# simplex is erratic with more than two actions: benchmarks/bench_lp_scaling.py measured
# it 4-10x slower than the interior point (with crossover) on separation LPs with five
# actions from 1e4 variables (over 120 s against 4 s at 2e5), though up to 2.7x faster on
# some independence LPs. With two actions the dual simplex was faster in every case
# measured (1.2-2.3x at 4e4-8e4 variables, and on the 32-scenario Bayes LPs).
SIMPLEX_MAX_VARIABLES = 5_000
SCIPY_METHODS = {"highs": None, "highs-ds": "highs-ds", "highs-ipm": "highs-ipm"}


@dataclass
class KLTerm:
    """f_index >= sum_rows weight * kl_div(A_group m + b_group, A_pool m + b_pool)."""

    f_index: int
    m_slice: slice
    lin: LinearizedConditionals


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
    """Builds optimisation programs over tabular policies for one problem and a set of
    scenarios (worlds) that share the policy.

    Parameters
    ----------
    problem : DecisionProblem
    worlds : list of TabularWorld
        One world (plug-in) or several scenarios of a belief, all with the same cells.
    weights : array of shape (n_worlds,)
        Scenario weights (summing to one), used by the "mean" aggregate.
    group_blind : bool
        If True, one policy row per feature cell x is shared by all groups.
    """

    def __init__(self, problem: DecisionProblem, worlds: list[TabularWorld],
                 weights: np.ndarray, group_blind: bool):
        self.problem, self.worlds, self.group_blind = problem, list(worlds), bool(group_blind)
        self.weights = np.asarray(weights, dtype=float)
        first = self.worlds[0]
        n_a, n_y, n_z = problem.n_actions, problem.n_outcomes, first.n_z
        n_u = first.n_x * n_z
        self.n_a, self.n_y, self.n_z, self.n_x = n_a, n_y, n_z, first.n_x
        self.free_of_unit = np.arange(n_u) // n_z if group_blind else np.arange(n_u)
        self.n_free = first.n_x if group_blind else n_u
        self.n_pi = self.n_free * n_a
        self.n_m = n_z * n_a * n_y
        self.K = len(self.worlds)
        self.U_m = np.tile(problem.utility.reshape(-1), n_z)
        self.B: list[sp.csr_matrix] = []
        self.unit_weight = np.zeros(n_u)
        self.p_y_units = np.zeros((n_u, n_a, n_y))
        for world, wk in zip(self.worlds, self.weights, strict=True):
            w, group, p_y = world.units(problem)
            # B: m[(z, a, y)] = sum_u [group(u) = z] w_u pi[free(u), a] P(y | a, u)
            vals = w[:, None, None] * p_y
            uu, aa, yy = np.nonzero(vals)
            rows = (group[uu] * n_a + aa) * n_y + yy
            cols = self.free_of_unit[uu] * n_a + aa
            self.B.append(sp.csr_matrix((vals[uu, aa, yy], (rows, cols)),
                                        shape=(self.n_m, self.n_pi)))
            self.unit_weight += w
            self.p_y_units += wk * p_y

    # ------------------------------------------------------------------ evaluation
    def marginals(self, pi: np.ndarray) -> np.ndarray:
        """Group marginals m_k of free policy rows ``pi`` (n_free, n_a): shape (K, n_m)."""
        flat = pi.reshape(-1)
        return np.stack([B @ flat for B in self.B])

    def utilities(self, ms: np.ndarray) -> np.ndarray:
        """Expected utility in each scenario, from marginals of shape (K, n_m)."""
        return ms @ self.U_m

    def to_table(self, pi: np.ndarray) -> np.ndarray:
        """Full (n_x, n_z, n_a) table from free rows; cells of weight zero in every
        scenario get the row of the action with the best expected utility."""
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
        return units.reshape(self.n_x, self.n_z, self.n_a)

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
        lins: list[list[tuple[str, LinearizedConditionals]]],
        mode: str,
        *,
        aggregate: str = "mean",
        lam: float = 0.0,
        epsilon: list[float] | None = None,
        utility_min: float | None = None,
        chance_delta: float | None = None,
        trust: tuple[np.ndarray, float] | None = None,
        fix_mass: list[tuple[int, LinearizedConditionals]] = (),
    ) -> Program:
        """Assemble the program.

        ``lins[c][k]`` pairs criterion c's measure with its affine conditionals in
        scenario k. ``mode`` is one of "utility" (max U), "mixture" (max (1-lam) U -
        lam F), "epsilon" (max U s.t. F_c <= epsilon_c), "slack" (min F s.t. U >=
        utility_min) and "violation" (min sum_c max(0, F_c - epsilon_c)). Scenario values
        are aggregated by their weighted mean or (``aggregate="worst"``) their worst case,
        through epigraph variables. With ``chance_delta`` the epsilon constraints bound
        the conditional value at risk CVaR_{1-delta} of each deviation across scenarios
        (Rockafellar-Uryasev), a convex, conservative stand-in for P(F_c > epsilon_c) <=
        delta. ``fix_mass`` holds (scenario, conditionals) whose conditioning masses are
        held at their linearisation point: there the conditionals are exactly linear.
        """
        K, n_pi, n_m = self.K, self.n_pi, self.n_m
        w = self.weights
        eq, ub = _Rows(), _Rows()
        lb_parts = [np.zeros(n_pi), np.zeros(K * n_m)]
        ub_parts = [np.ones(n_pi), np.full(K * n_m, np.inf)]
        n = n_pi + K * n_m

        def new_vars(count: int, low: float = 0.0, high: float = np.inf) -> np.ndarray:
            nonlocal n
            idx = n + np.arange(count)
            n += count
            lb_parts.append(np.full(count, low))
            ub_parts.append(np.full(count, high))
            return idx

        m_cols = [n_pi + k * n_m + np.arange(n_m) for k in range(K)]
        # Simplex rows and each scenario's marginal definition.
        eq.add(np.repeat(np.arange(self.n_free), self.n_a), np.arange(n_pi),
               np.ones(n_pi), np.ones(self.n_free))
        for k in range(K):
            Bc = self.B[k].tocoo()
            eq.add(np.concatenate([np.arange(n_m), Bc.row]),
                   np.concatenate([m_cols[k], Bc.col]),
                   np.concatenate([np.ones(n_m), -Bc.data]), np.zeros(n_m))
        for k, lin in fix_mass:
            eq.add_dense(lin.A_mass, m_cols[k], lin.mass)
        f_index: list[list[int]] = []
        kl: list[KLTerm] = []
        for per_scenario in lins:
            row = []
            for k, (measure, lin) in enumerate(per_scenario):
                f = int(new_vars(1)[0])
                row.append(f)
                D = lin.A_group - lin.A_pool
                d = lin.b_group - lin.b_pool
                weight = lin.weight
                sizes = np.bincount(lin.block)
                if measure != "kl" and len(sizes) and np.all(sizes == 2):
                    # Two target values: both conditionals sum to one (exactly, also when
                    # linearised), so the two differences are opposite. Keep one row per
                    # block: |d_0| + |d_1| = 2 |d_1| and max(|d_0|, |d_1|) = |d_1|.
                    D, d, weight = D[1::2], d[1::2], weight[1::2] * (
                        2.0 if measure == "tv" else 1.0)
                n_r = len(d)
                if measure == "kl":
                    kl.append(KLTerm(f, slice(m_cols[k][0], m_cols[k][0] + n_m), lin))
                elif measure == "max":
                    Wd = weight[:, None] * D
                    fcol = np.full((n_r, 1), -1.0)
                    cols = np.append(m_cols[k], f)
                    ub.add_dense(np.hstack([Wd, fcol]), cols, -weight * d)
                    ub.add_dense(np.hstack([-Wd, fcol]), cols, weight * d)
                else:  # tv: |r| <= s, f = weight @ s
                    s = new_vars(n_r)
                    neg = -np.eye(n_r)
                    cols = np.concatenate([m_cols[k], s])
                    ub.add_dense(np.hstack([D, neg]), cols, -d)
                    ub.add_dense(np.hstack([-D, neg]), cols, d)
                    eq.add(np.zeros(n_r + 1, dtype=int), np.append(s, f),
                           np.append(-weight, 1.0), np.zeros(1))
            f_index.append(row)
        F = np.array(f_index, dtype=int).reshape(len(lins), K)
        objective: dict[int, float] = {}

        def add_cost(cols: Any, vals: Any) -> None:
            for col, val in zip(np.atleast_1d(cols), np.atleast_1d(vals), strict=True):
                objective[int(col)] = objective.get(int(col), 0.0) + float(val)

        def utility_row(k: int, scale: float) -> tuple[np.ndarray, np.ndarray]:
            return m_cols[k], scale * self.U_m

        def scenario_value(k: int) -> tuple[np.ndarray, np.ndarray]:
            """Columns and coefficients of the quantity maximised in scenario k."""
            if mode in ("utility", "epsilon"):
                return utility_row(k, 1.0)
            if mode == "mixture":
                cols, vals = utility_row(k, 1.0 - lam)
                return np.append(cols, F[:, k]), np.append(vals, np.full(F.shape[0], -lam))
            # slack: maximise minus the total deviation
            return F[:, k], -np.ones(F.shape[0])

        if mode == "violation":  # used with a single scenario only
            if K != 1:
                raise ValueError("the violation program takes one scenario")
            v = new_vars(F.shape[0])
            add_cost(v, np.ones(len(v)))
            for c in range(F.shape[0]):
                ub.add(np.zeros(2, dtype=int), np.array([F[c, 0], v[c]]),
                       np.array([1.0, -1.0]), np.array([epsilon[c]]))
        elif mode == "slack" and chance_delta is not None:
            # Minimise the sum over criteria of CVaR_{1-delta} of each deviation.
            for c in range(F.shape[0]):
                eta = int(new_vars(1, -np.inf)[0])
                v = new_vars(K)
                add_cost(eta, 1.0)
                add_cost(v, w / chance_delta)
                for k in range(K):  # v_k >= f_ck - eta
                    ub.add(np.zeros(3, dtype=int), np.array([F[c, k], eta, v[k]]),
                           np.array([1.0, -1.0, -1.0]), np.zeros(1))
        elif aggregate == "mean":
            for k in range(K):
                cols, vals = scenario_value(k)
                add_cost(cols, -w[k] * vals)
        else:  # worst case: maximise t with t <= value_k for every k
            t = int(new_vars(1, -np.inf)[0])
            add_cost(t, -1.0)
            for k in range(K):
                cols, vals = scenario_value(k)
                ub.add(np.zeros(len(cols) + 1, dtype=int), np.append(cols, t),
                       np.append(-vals, 1.0), np.zeros(1))
        if mode == "epsilon":
            for c in range(F.shape[0]):
                if not np.isfinite(epsilon[c]):
                    continue
                if chance_delta is not None:
                    eta = int(new_vars(1, -np.inf)[0])
                    v = new_vars(K)
                    for k in range(K):  # v_k >= f_ck - eta
                        ub.add(np.zeros(3, dtype=int), np.array([F[c, k], eta, v[k]]),
                               np.array([1.0, -1.0, -1.0]), np.zeros(1))
                    ub.add(np.zeros(K + 1, dtype=int), np.append(eta, v),
                           np.append(1.0, w / chance_delta), np.array([epsilon[c]]))
                elif aggregate == "mean":
                    ub.add(np.zeros(K, dtype=int), F[c], w, np.array([epsilon[c]]))
                else:
                    for k in range(K):
                        ub.add(np.zeros(1, dtype=int), np.array([F[c, k]]), np.ones(1),
                               np.array([epsilon[c]]))
        if mode == "slack" and utility_min is not None and np.isfinite(utility_min):
            if aggregate == "mean":
                cols = np.concatenate(m_cols)
                vals = np.concatenate([-w[k] * self.U_m for k in range(K)])
                ub.add(np.zeros(len(cols), dtype=int), cols, vals, np.array([-utility_min]))
            else:
                for k in range(K):
                    ub.add(np.zeros(n_m, dtype=int), m_cols[k], -self.U_m,
                           np.array([-utility_min]))
        lb = np.concatenate(lb_parts)
        ubd = np.concatenate(ub_parts)
        if trust is not None:
            pi0, radius = trust
            lb[:n_pi] = np.maximum(0.0, pi0.reshape(-1) - radius)
            ubd[:n_pi] = np.minimum(1.0, pi0.reshape(-1) + radius)
        cost = np.zeros(n)
        for col, val in objective.items():
            cost[col] = val
        A_eq, b_eq = eq.matrix(n)
        A_ub, b_ub = ub.matrix(n)
        m_slices = [slice(int(c[0]), int(c[0]) + n_m) for c in m_cols]
        return Program(cost, A_ub, b_ub, A_eq, b_eq, lb, ubd, m_slices,
                       [list(map(int, r)) for r in F], kl, n_actions=self.n_a)


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
        small = prog.n_variables <= SIMPLEX_MAX_VARIABLES
        method = "highs-ds" if small or prog.n_actions == 2 else "highs-ipm"
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
    for term in prog.kl:
        m = x[term.m_slice]
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
