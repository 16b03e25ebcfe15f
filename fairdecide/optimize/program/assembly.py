"""Assembling a program: variables, sparse rows, the objective, and the blocks that
criteria and trade-offs write into.

Criteria write their rows through a :class:`CriterionBlock` (over the scenario's
group-marginal columns, or over the free policy columns for criteria that read policy
rows); trade-offs write the objective and their constraints through the
:class:`Assembly`'s primitives.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from fairdecide.optimize.program.robust_value import robust_utility
from fairdecide.uncertainty.regions import ball_duals

__all__ = ["Assembly", "CriterionBlock", "KLTerm", "RowBlocks"]

Columns = tuple[np.ndarray, np.ndarray]


@dataclass
class KLTerm:
    """x[f] >= sum_r weight_r kl_div(A_group x[cols] + b_group, A_pool x[cols] + b_pool)."""

    f_index: int
    cols: np.ndarray
    A_group: np.ndarray
    b_group: np.ndarray
    A_pool: np.ndarray
    b_pool: np.ndarray
    weight: np.ndarray


class RowBlocks:
    """Accumulates sparse rows and right-hand sides: COO triplets, or whole CSR blocks
    (the simplex rows and the marginal definitions, millions of entries at scale, are
    written in CSR directly rather than sorted again from triplets). Each ``add`` owns
    its own rows, so the blocks stack in order."""

    def __init__(self) -> None:
        # each part: ("coo", rows, cols, vals) or ("csr", indptr, indices, data)
        self.parts: list[tuple[str, np.ndarray, np.ndarray, np.ndarray]] = []
        self.b: list[np.ndarray] = []
        self.n = 0

    def add(self, rows: np.ndarray, cols: np.ndarray, vals: np.ndarray, rhs: np.ndarray) -> None:
        self._append("coo", rows, cols, vals, rhs)

    def add_csr(self, indptr: np.ndarray, indices: np.ndarray, data: np.ndarray,
                rhs: np.ndarray) -> None:
        """Rows given in CSR form (``len(indptr) - 1`` of them; indices sorted within a
        row, no duplicates)."""
        self._append("csr", indptr, indices, data, rhs)

    def _append(self, kind: str, first: Any, second: Any, values: Any, rhs: Any) -> None:
        rhs = np.atleast_1d(np.asarray(rhs, dtype=float))
        self.parts.append((kind, np.asarray(first), np.asarray(second),
                           np.asarray(values, dtype=float)))
        self.b.append(rhs)
        self.n += len(rhs)

    def add_dense(self, mat: Any, cols: np.ndarray, rhs: np.ndarray) -> None:
        if sp.issparse(mat):
            coo = mat.tocoo()
            self.add(coo.row, cols[coo.col], coo.data, rhs)
            return
        rr, cc = np.nonzero(mat)
        self.add(rr, cols[cc], mat[rr, cc], rhs)

    def matrix(self, n_cols: int) -> tuple[sp.csr_matrix, np.ndarray]:
        if not self.parts:
            return sp.csr_matrix((0, n_cols)), np.zeros(0)
        blocks, run = [], []

        def flush() -> None:  # consecutive triplet parts: one COO -> CSR conversion
            if run:
                offsets = np.cumsum([0] + [len(b) for _, b in run])
                r = np.concatenate([p[1] + o for (p, _), o in zip(run, offsets, strict=False)])
                blocks.append(sp.csr_matrix(
                    (np.concatenate([p[3] for p, _ in run]),
                     (r, np.concatenate([p[2] for p, _ in run]))),
                    shape=(int(offsets[-1]), n_cols)))
                run.clear()

        for part, rhs in zip(self.parts, self.b, strict=True):
            if part[0] == "coo":
                run.append((part, rhs))
                continue
            flush()
            blocks.append(sp.csr_matrix((part[3], part[2], part[1]), shape=(len(rhs), n_cols)))
        flush()
        A = blocks[0] if len(blocks) == 1 else sp.vstack(blocks, format="csr")
        return A, np.concatenate(self.b)


class Assembly:
    """A program being assembled: variables, rows, objective, and the trade-off's
    primitives (scenario values aggregated by mean or worst case, tolerance rows, CVaR,
    utility floor, violations)."""

    def __init__(self, prog: Any) -> None:
        # prog: the PolicyProgram being built (its sizes, marginal maps and belief).
        self.prog = prog
        self.K, self.w, self.aggregate = prog.K, prog.weights, prog.aggregate
        self.eq, self.ub = RowBlocks(), RowBlocks()
        n_pi, n_m = prog.n_pi, prog.n_m
        self.lb_parts = [np.zeros(n_pi), np.zeros(self.K * n_m)]
        self.ub_parts = [np.ones(n_pi), np.full(self.K * n_m, np.inf)]
        self.n = n_pi + self.K * n_m
        self.m_cols = [n_pi + k * n_m + np.arange(n_m) for k in range(self.K)]
        self.pi_cols = np.arange(n_pi).reshape(prog.n_free, prog.n_a)
        self.kl: list[KLTerm] = []
        self.costs: dict[int, float] = {}
        self.F = np.zeros((0, self.K), dtype=int)
        #: the inequality rows whose right-hand side is a criterion's tolerance
        self.tolerance_rows: list[int] = []
        self.tolerance_of: list[int] = []  # the criterion of each tolerance row
        self._robust: Columns | None = None
        #: each criterion block's kept variables, by its deviation column (kept_vars)
        self.kept: dict[int, np.ndarray] = {}
        #: whether rows of a confidence set's duals were written (Program.robust)
        self.wrote_duals = False

    @classmethod
    def extending(cls, prog: Any, n_existing: int, kept: dict[int, np.ndarray] | None = None
                  ) -> Assembly:
        """An assembly of rows and variables to append to a built program of
        ``n_existing`` columns (constraint generation): new variables are numbered from
        there, the marginal and policy columns are the program's, and so are the
        criteria's ``kept`` variables (``Program.kept``)."""
        asm = cls(prog)
        asm.n, asm.lb_parts, asm.ub_parts = int(n_existing), [], []
        asm.kept = dict(kept or {})
        return asm

    # ------------------------------------------------------------------ primitives
    def new_vars(self, count: int, low: float = 0.0, high: float = np.inf) -> np.ndarray:
        idx = self.n + np.arange(count)
        self.n += count
        self.lb_parts.append(np.full(count, low))
        self.ub_parts.append(np.full(count, high))
        return idx

    def add_cost(self, cols: Any, vals: Any) -> None:
        for col, val in zip(np.atleast_1d(cols), np.atleast_1d(vals), strict=True):
            self.costs[int(col)] = self.costs.get(int(col), 0.0) + float(val)

    def scenario_utility(self, k: int, scale: float = 1.0) -> Columns:
        """Columns and coefficients of scenario k's expected utility (times ``scale``);
        over a confidence set, of its worst case (the rows of
        :mod:`~fairdecide.optimize.program.robust_value`, written once), or of the
        centre's where the set is read at its estimate (``ConfidenceSet.as_estimate``:
        the criteria are held over the set all the same)."""
        cs = self.prog.confidence
        if cs is None or cs.reading == "estimate":
            return self.m_cols[k], scale * self.prog.U_m
        if self._robust is None:
            self._robust = robust_utility(self)
        return self._robust[0], scale * self._robust[1]

    # ------------------------------------------------------------------ trade-off rows
    def maximize(self, value: Callable[[int], Columns]) -> None:
        """Maximise the belief's aggregate of the per-scenario ``value(k)``: its weighted
        mean, or its worst case through an epigraph variable t <= value(k)."""
        if self.aggregate == "mean":
            for k in range(self.K):
                cols, vals = value(k)
                self.add_cost(cols, -self.w[k] * vals)
            return
        t = int(self.new_vars(1, -np.inf)[0])
        self.add_cost(t, -1.0)
        for k in range(self.K):
            cols, vals = value(k)
            self.ub.add(np.zeros(len(cols) + 1, dtype=int), np.append(cols, t),
                        np.append(-vals, 1.0), np.zeros(1))

    def _cvar_rows(self, c: int) -> tuple[int, np.ndarray]:
        """eta and v_k >= f_ck - eta (Rockafellar-Uryasev): CVaR = eta + w @ v / delta."""
        eta = int(self.new_vars(1, -np.inf)[0])
        v = self.new_vars(self.K)
        for k in range(self.K):
            self.ub.add(np.zeros(3, dtype=int), np.array([self.F[c, k], eta, v[k]]),
                        np.array([1.0, -1.0, -1.0]), np.zeros(1))
        return eta, v

    def bound_deviation(self, c: int, epsilon: float, chance_delta: float | None) -> None:
        """Criterion c's aggregate deviation (mean, worst case, or CVaR_{1-delta}, a
        convex, conservative stand-in for P(F_c > epsilon) <= delta) <= epsilon. The
        rows' right-hand sides are epsilon (``tolerance_rows``)."""
        first = self.ub.n
        self._bound_deviation(c, epsilon, chance_delta)
        self.tolerance_rows.extend(range(first, self.ub.n))
        self.tolerance_of.extend([c] * (self.ub.n - first))

    def _bound_deviation(self, c: int, epsilon: float, chance_delta: float | None) -> None:
        if chance_delta is not None:
            eta, v = self._cvar_rows(c)
            self.ub.add(np.zeros(self.K + 1, dtype=int), np.append(eta, v),
                        np.append(1.0, self.w / chance_delta), np.array([epsilon]))
        elif self.aggregate == "mean":
            self.ub.add(np.zeros(self.K, dtype=int), self.F[c], self.w, np.array([epsilon]))
        else:
            for k in range(self.K):
                self.ub.add(np.zeros(1, dtype=int), np.array([self.F[c, k]]), np.ones(1),
                            np.array([epsilon]))

    def minimize_cvar_sum(self, chance_delta: float) -> None:
        """Minimise the sum over criteria of CVaR_{1-delta} of each deviation."""
        for c in range(self.F.shape[0]):
            eta, v = self._cvar_rows(c)
            self.add_cost(eta, 1.0)
            self.add_cost(v, self.w / chance_delta)

    def utility_floor(self, utility_min: float) -> None:
        """The belief's aggregate utility (mean, or every scenario's) >= utility_min."""
        parts = [self.scenario_utility(k) for k in range(self.K)]
        if self.aggregate == "mean":
            cols = np.concatenate([c for c, _ in parts])
            vals = np.concatenate([-self.w[k] * v for k, (_, v) in enumerate(parts)])
            self.ub.add(np.zeros(len(cols), dtype=int), cols, vals, np.array([-utility_min]))
        else:
            for cols, vals in parts:
                self.ub.add(np.zeros(len(cols), dtype=int), cols, -vals,
                            np.array([-utility_min]))

    def minimize_violation(self, epsilon: Sequence[float], chance_delta: float | None
                           ) -> None:
        """Minimise sum_c v_c with v_c >= aggregate deviation_c - epsilon_c, v_c >= 0."""
        v = self.new_vars(self.F.shape[0])
        self.add_cost(v, np.ones(len(v)))
        for c, eps in enumerate(epsilon):
            if not np.isfinite(eps):  # a switched-off tolerance is never violated
                continue
            if chance_delta is not None:
                eta, u = self._cvar_rows(c)
                self.ub.add(np.zeros(self.K + 2, dtype=int), np.concatenate([[eta], u, [v[c]]]),
                            np.concatenate([[1.0], self.w / chance_delta, [-1.0]]),
                            np.array([eps]))
            elif self.aggregate == "mean":
                self.ub.add(np.zeros(self.K + 1, dtype=int), np.append(self.F[c], v[c]),
                            np.append(self.w, -1.0), np.array([eps]))
            else:
                for k in range(self.K):
                    self.ub.add(np.zeros(2, dtype=int), np.array([self.F[c, k], v[c]]),
                                np.array([1.0, -1.0]), np.array([eps]))


class CriterionBlock:
    """What a criterion sees and writes for one scenario of the program.

    Attributes
    ----------
    problem : DecisionProblem
    units : Units
        The scenario's units (groups, cells, features).
    unit_weights : ndarray of shape (n_units,)
    unit_outcomes : ndarray of shape (n_units, n_actions, n_outcomes)
    n_groups : int
    f : int
        The deviation variable the criterion must bound from above.
    m_cols : ndarray of shape (n_groups * n_actions * n_outcomes,)
        Columns of the group marginal P(z, a, y), flattened z-major.
    marginal : ndarray of shape (n_groups, n_actions, n_outcomes)
        The group marginal at the expansion point.
    pi_cols : ndarray of shape (n_free, n_actions)
        Columns of the free policy rows; unit u uses row ``free_of_unit[u]``.
    free_of_unit : ndarray of int, shape (n_units,)
    point : ndarray of shape (n_free, n_actions)
        The free rows at the expansion point.
    """

    def __init__(self, asm: Assembly, k: int, f: int, point: np.ndarray) -> None:
        prog = asm.prog
        self._asm = asm
        self.problem = prog.problem
        self.units = prog.units
        self.unit_weights = prog.unit_w[k]
        self.unit_outcomes = prog.unit_p_y[k]
        self.n_groups = prog.n_z
        self.f = f
        self.m_cols = asm.m_cols[k]
        self.marginal = (prog.B[k] @ point.reshape(-1)).reshape(prog.n_z, prog.n_a, prog.n_y)
        self.pi_cols = asm.pi_cols
        self.free_of_unit = prog.free_of_unit
        self.point = point

    def new_vars(self, count: int, low: float = 0.0, high: float = np.inf) -> np.ndarray:
        """``count`` new variables with bounds [low, high]; returns their columns."""
        return self._asm.new_vars(count, low, high)

    def kept_vars(self, count: int, low: float = 0.0, high: float = np.inf
                  ) -> tuple[np.ndarray, bool]:
        """The criterion's variables kept across rounds (see
        :class:`~fairdecide.criteria.base.ProgramBlock`), keyed by its deviation column."""
        kept = self._asm.kept.get(self.f)
        if kept is not None:
            return kept, False
        cols = self.new_vars(count, low, high)
        self._asm.kept[self.f] = cols
        return cols, True

    def ball_minimum(self, cols: np.ndarray, vals: np.ndarray, center: np.ndarray,
                     radius: np.ndarray) -> Columns:
        """The minimum over L1 balls as dual rows (:func:`~fairdecide.optimize.program.
        robust_value.ball_duals`)."""
        return ball_duals(self._asm, cols, vals, center, radius)

    def add_ub_dense(self, mat: Any, cols: np.ndarray, rhs: np.ndarray) -> None:
        """Rows ``mat @ x[cols] <= rhs`` (``mat`` dense or scipy sparse)."""
        self._asm.ub.add_dense(mat, cols, rhs)

    def add_eq_dense(self, mat: Any, cols: np.ndarray, rhs: np.ndarray) -> None:
        """Rows ``mat @ x[cols] == rhs``."""
        self._asm.eq.add_dense(mat, cols, rhs)

    def add_abs_epigraph(self, D: Any, d: np.ndarray, cols: np.ndarray, weight: np.ndarray,
                         kind: str = "sum") -> None:
        """f >= sum_r weight_r |D_r x[cols] + d_r| (``kind="sum"``: the equality
        D_r x[cols] + d_r = p_r - n_r per row, p, n >= 0, and f = sum_r weight_r
        (p_r + n_r)) or f >= max_r weight_r |D_r x[cols] + d_r| (``"max"``)."""
        asm, n_r = self._asm, len(d)
        if kind == "max":
            Wd = D.multiply(weight[:, None]).tocsr() if sp.issparse(D) else weight[:, None] * D
            fcol = np.full((n_r, 1), -1.0)
            c = np.append(cols, self.f)
            asm.ub.add_dense(_hstack(Wd, fcol), c, -weight * d)
            asm.ub.add_dense(_hstack(-Wd, fcol), c, weight * d)
            return
        # D x + d = p - n with p, n >= 0, and f = sum_r weight_r (p_r + n_r): one
        # equality per term (not two inequalities around an epigraph variable), so
        # the coupling rows an interior point factors are half as many
        pn = asm.new_vars(2 * n_r)
        eye = sp.identity(n_r, format="csr") if sp.issparse(D) else np.eye(n_r)
        asm.eq.add_dense(_hstack(_hstack(D, -eye), eye), np.concatenate([cols, pn]), -d)
        asm.eq.add(np.zeros(2 * n_r + 1, dtype=int), np.append(pn, self.f),
                   np.concatenate([-weight, -weight, [1.0]]), np.zeros(1))

    def add_kl(self, cols: np.ndarray, A_group: np.ndarray, b_group: np.ndarray,
               A_pool: np.ndarray, b_pool: np.ndarray, weight: np.ndarray) -> None:
        """f >= sum_r weight_r KL-divergence terms of two affine maps of x[cols] (an
        exponential-cone program)."""
        self._asm.kl.append(KLTerm(self.f, cols, A_group, b_group, A_pool, b_pool, weight))


def _hstack(a: Any, b: Any) -> Any:
    if sp.issparse(a) or sp.issparse(b):
        return sp.hstack([sp.csr_matrix(a), sp.csr_matrix(b)], format="csr")
    return np.hstack([a, b])
