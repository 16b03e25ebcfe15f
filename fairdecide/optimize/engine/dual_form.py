"""A program with far more rows than columns, solved warm through its dual.

Constraint generation (Lipschitz pairs) grows a program whose rows outnumber its
columns many times over: 30,000 people carry 60,000 policy columns and 900,000 pair
rows. A simplex method's basis has one row per row of the program it is given. Its dual
has one row per column of the program, and a cut is a new dual *column*.
:class:`DualForm` keeps that dual in the one HiGHS wrapper
(:class:`~fairdecide.optimize.engine.highs_model.HighsModel`) and reads the program's
solution back from the dual's row duals. Solved cold, the final Adult program of 10,000
people (123,948 pairs) took 3.1 s in the row form and 2.4 s as the folded dual
(``benchmarks/results/lipschitz_dual_form.txt``); the gain is in the warm rounds of
constraint generation, where the row form's re-solves grew with the pairs: its solves
took 13.3 s against 5.3 s at 10,000 people, and 393 s against 96 s at 30,000
(``benchmarks/results/lipschitz_lp.txt``, one run).

The program (P) and the dual (D) that HiGHS sees, with w = -(the inequality rows'
multipliers), s and t the bounds' multipliers (only for finite bounds):

    (P)  min c.x   s.t.  A_ub x <= b_ub,  A_eq x = b_eq,  lb <= x <= ub
    (D)  min b_ub.w - b_eq.v - lb.s + ub.t
         s.t. -A_ub^T w + A_eq^T v + s - t = c,   w, s, t >= 0, v free

D's optimum is minus P's, its reduced costs are P's slacks, and with x = -(D's row
duals): b_ub + A_ub x_D >= 0 is A_ub x <= b_ub, -lb - x_D >= 0 is x >= lb, and so on, so
x is P's solution to D's dual feasibility tolerance (``DUAL_ANSWER_TOL``) and P's
inequality duals are -w. D unbounded is P infeasible.

**Folded simplices.** D has a row per column of P, so a unit with two actions costs two
rows although it has one degree of freedom. Given column pairs (a, b) whose row
x_a + x_b = 1 the caller leaves out of A_eq, the form substitutes x_a = 1 - x_b
everywhere (rows, costs, bounds) before dualising: x = T x' + x0 over the kept columns
x'. On the 10,000-person program above the folded dual solved in 2.4 s, the unfolded
one in 9.3 s.

**Fixed columns.** A column whose bounds are equal (lb = ub, in no fold) is a constant:
x_j = lb_j goes into x0 like the folds' ones, and D has no row for it. Its price, the
slope of P's optimum in its value, is its reduced cost c_j - A_j^T y
(:meth:`DualForm.fixed_reduced_costs`). Constraint generation fixes a deviation bound f
that only its tolerance row bounds (``generation._fixed_tolerances``): the dense row f
would otherwise have an entry in every cut's column.

**Defined columns.** A column m that one equality row r defines from the others
(``defined``: pairs (m, r)), m = (b_r - sum_{j != m} a_rj x_j) / a_rm, is written through
them (its row of T is the row's, its x0 the rest) and leaves D with its row r; its bounds
are the caller's to vouch for (implied by the others'). Constraint generation defines
the program's marginals this way (``generation._defined_marginals``: m = sum w pi with w
>= 0, in no inequality row): each was a dense row of D. With two actions and Lipschitz
cuts alone, D is then a network's node-arc matrix with a bound column per unit: on
30,000 Adult people the warm solves took 15.4 s against 90.6 s at c86c27c
(``benchmarks/results/lipschitz_fixed_deviation.txt``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import scipy.sparse as sp

from fairdecide.optimize.engine.highs_model import DUAL_ANSWER_TOL, HighsModel

__all__ = ["DualForm"]


class DualForm:
    """min c.x s.t. A_ub x <= b_ub, A_eq x = b_eq, lb <= x <= ub, held as its dual
    (see the module); rows of P are appended as columns of D, columns of P as rows. D is
    solved by HiGHS's ``method``, as the solving chain chose it for a master kept warm
    (:func:`fairdecide.optimize.engine.chain.highs_method`).

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> from fairdecide.optimize.engine.chain import Case, highs_method
    >>> form = DualForm(np.array([-1.0, -1.0]), np.zeros(2), np.full(2, np.inf),
    ...                 sp.csr_matrix([[1.0, 2.0], [3.0, 1.0]]), np.array([4.0, 6.0]),
    ...                 sp.csr_matrix((0, 2)), np.zeros(0),
    ...                 method=highs_method(Case("master")))
    >>> form.solve()
    (True, 'optimal')
    >>> np.round(form.values(), 9).tolist(), round(form.objective, 9)
    ([1.6, 1.2], -2.8)
    """

    def __init__(self, c: np.ndarray, lb: np.ndarray, ub: np.ndarray, A_ub: Any,
                 b_ub: np.ndarray, A_eq: Any, b_eq: np.ndarray,
                 time_limit: float | None = None, fold: np.ndarray | None = None,
                 defined: np.ndarray | None = None, *,
                 method: Mapping[str, Any]) -> None:
        c = np.asarray(c, dtype=float)
        lo, hi = np.asarray(lb, dtype=float), np.asarray(ub, dtype=float)
        # a column fixed by its bounds (and in no fold) is a constant, not a row of D
        folded = np.zeros(len(c), dtype=bool)
        if fold is not None and len(fold):
            folded[np.asarray(fold).reshape(-1)] = True
        defined = (np.zeros((0, 2), dtype=np.int64) if defined is None
                   else np.asarray(defined, dtype=np.int64).reshape(-1, 2))
        folded[defined[:, 0]] = True
        self.fixed = np.flatnonzero(np.isfinite(lo) & (lo == hi) & ~folded)
        self._fixed_cost = c[self.fixed]
        A_eq = sp.csr_matrix(A_eq)
        b_eq = np.asarray(b_eq, dtype=float)
        kept = self._fold(len(c), fold, lo, defined[:, 0])
        if len(defined):  # x_m = (b_r - sum_{j != m} a_rj x_j) / a_rm, row r leaves
            self._define(defined, A_eq, b_eq)
            rest = np.ones(A_eq.shape[0], dtype=bool)
            rest[defined[:, 1]] = False
            A_eq, b_eq = A_eq[rest], b_eq[rest]
        if fold is not None and len(fold):  # x_b in [1 - ub_a, 1 - lb_a] too
            a, b = fold[:, 0], fold[:, 1]
            lo, hi = lo.copy(), hi.copy()
            lo[b], hi[b] = np.maximum(lo[b], 1.0 - hi[a]), np.minimum(hi[b], 1.0 - lo[a])
        self.constant = float(c @ self.x0)
        c, lo, hi = self.T.T @ c, lo[kept], hi[kept]
        # the fixed columns' entries in P's rows, for their reduced costs: the inequality
        # rows' in the order they come, the equality rows' beside their columns v of D
        self._fixed_ub = [self._fixed_part(A_ub)]
        self._fixed_eq = [self._fixed_part(A_eq)]
        A_ub, b_ub = self._substituted(A_ub, b_ub)
        A_eq, b_eq = self._substituted(A_eq, b_eq)
        n = len(c)
        has_lo, has_hi = np.flatnonzero(np.isfinite(lo)), np.flatnonzero(np.isfinite(hi))
        eye = sp.identity(n, format="csc")
        A_ub, A_eq = sp.csr_matrix(A_ub), sp.csr_matrix(A_eq)
        self.m_ub, m_eq = A_ub.shape[0], A_eq.shape[0]
        # D's columns: v (free), s, t, then w, so cuts (new w) go at the end
        M = sp.hstack([A_eq.T, eye[:, has_lo], -eye[:, has_hi], -A_ub.T], format="csc")
        cost = np.concatenate([-np.asarray(b_eq, float), -lo[has_lo], hi[has_hi],
                               np.asarray(b_ub, float)])
        low = np.concatenate([np.full(m_eq, -np.inf),
                              np.zeros(len(has_lo) + len(has_hi) + self.m_ub)])
        self.model = HighsModel(cost, low, np.full(len(cost), np.inf), M, c, c,
                                time_limit=time_limit, dual_tol=DUAL_ANSWER_TOL)
        self.model.set_method(method)
        # the column w of each inequality row of P, in the order they came; -1 once dropped
        self._ub_col = np.arange(self.model.n_cols - self.m_ub, self.model.n_cols)
        # the column v of each equality row of P (never dropped)
        self._eq_col = np.arange(m_eq)

    def _fold(self, n: int, fold: np.ndarray | None, lo: np.ndarray,
              defined: np.ndarray) -> np.ndarray:
        """x = T x' + x0: x_a = 1 - x_b for each folded pair, x_j = lo_j for each fixed
        column (the defined columns' rows come from :meth:`_define`); returns the
        columns kept."""
        gone = np.zeros(n, dtype=bool)
        if fold is not None and len(fold):
            gone[fold[:, 0]] = True
        gone[self.fixed] = True
        gone[defined] = True
        kept = np.flatnonzero(~gone)
        at = np.full(n, -1, dtype=np.int64)
        at[kept] = np.arange(len(kept))
        rows, cols, vals = [kept], [at[kept]], [np.ones(len(kept))]
        self.x0 = np.zeros(n)
        self.x0[self.fixed] = lo[self.fixed]
        if fold is not None and len(fold):
            rows.append(fold[:, 0])
            cols.append(at[fold[:, 1]])
            vals.append(-np.ones(len(fold)))
            self.x0[fold[:, 0]] = 1.0
        self.T = sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows),
                                                         np.concatenate(cols))),
                               shape=(n, len(kept)))
        return kept

    def _define(self, defined: np.ndarray, A_eq: sp.csr_matrix, b_eq: np.ndarray) -> None:
        """Each defined column m, by its equality row r, in terms of the others (which
        no definition may name): x_m = (b_r - A_r,-m x) / a_rm over x = T x' + x0."""
        n = self.T.shape[0]
        m, r = defined[:, 0], defined[:, 1]
        rows = A_eq[r].tocoo()
        a = np.asarray(A_eq[r, m]).reshape(-1)
        other = rows.col != m[rows.row]
        if np.any(np.isin(rows.col[other], m)) or np.any(a == 0):
            raise ValueError("a defined column's row must name it and no other defined one")
        if np.any(np.isin(rows.col[other], self.fixed)):
            # its row leaves D, and with it the row's share of a fixed column's price
            raise ValueError("a defined column's row must not name a fixed column")
        S = sp.csr_matrix((-rows.data[other] / a[rows.row[other]],
                           (m[rows.row[other]], rows.col[other])), shape=(n, n))
        self.T = (self.T + S @ self.T).tocsr()
        self.x0 = self.x0 + S @ self.x0
        self.x0[m] += b_eq[r] / a

    def _fixed_part(self, A: Any) -> sp.csr_matrix:
        """The fixed columns of rows A (before substitution)."""
        return sp.csr_matrix(A)[:, self.fixed]

    def _substituted(self, A: Any, b: np.ndarray) -> tuple[sp.csr_matrix, np.ndarray]:
        """Rows A x (<)= b over the kept columns: A T x' (<)= b - A x0."""
        A = sp.csr_matrix(A)
        return (A @ self.T).tocsr(), np.asarray(b, dtype=float) - A @ self.x0

    @property
    def n_cols(self) -> int:
        """Columns of P."""
        return self.T.shape[0]

    def add_cols(self, cost: np.ndarray, lb: np.ndarray, ub: np.ndarray) -> None:
        """Append columns to P that no existing row touches (their rows come with
        :meth:`add_rows`): rows of D, with their bounds' multipliers."""
        cost, lb, ub = (np.asarray(a, dtype=float) for a in (cost, lb, ub))
        k = len(cost)
        if not k:
            return
        self.T = sp.block_diag([self.T, sp.identity(k)], format="csr")
        self.x0 = np.concatenate([self.x0, np.zeros(k)])
        start = self.model.n_rows
        self.model.add_rows(sp.csr_matrix((k, self.model.n_cols)), cost, cost)
        has_lo, has_hi = np.flatnonzero(np.isfinite(lb)), np.flatnonzero(np.isfinite(ub))
        cols = sp.hstack([sp.identity(k, format="csc")[:, has_lo],
                          -sp.identity(k, format="csc")[:, has_hi]], format="csc")
        full = sp.vstack([sp.csc_matrix((start, cols.shape[1])), cols], format="csc")
        self.model.add_cols(full, np.concatenate([-lb[has_lo], ub[has_hi]]),
                            np.zeros(cols.shape[1]), np.full(cols.shape[1], np.inf))

    def add_rows(self, A: Any, lo: np.ndarray, hi: np.ndarray) -> None:
        """Append rows lo <= A x <= hi of P (A over its current columns): an inequality
        row (lo = -inf) is one column w of D, an equality a free column v."""
        if not A.shape[0]:
            return
        part = self._fixed_part(A)
        A, shift = self._substituted(A, np.zeros(A.shape[0]))
        lo, hi = np.asarray(lo, dtype=float) + shift, np.asarray(hi, dtype=float) + shift
        eq = lo == hi
        if np.any(np.isfinite(lo) & ~eq):
            raise ValueError("DualForm takes rows A x <= b and A x = b only")
        ub_rows = np.flatnonzero(~eq)
        if len(ub_rows):
            self._ub_col = np.concatenate([self._ub_col,
                                           self.model.n_cols + np.arange(len(ub_rows))])
            self._fixed_ub.append(part[ub_rows])
            self.model.add_cols(-A[ub_rows].T, hi[ub_rows], np.zeros(len(ub_rows)),
                                np.full(len(ub_rows), np.inf))
        if eq.any():
            k = int(eq.sum())
            self._eq_col = np.concatenate([self._eq_col, self.model.n_cols + np.arange(k)])
            self._fixed_eq.append(part[eq])
            self.model.add_cols(A[eq].T, -hi[eq], np.full(k, -np.inf), np.full(k, np.inf))

    @property
    def n_ub_rows(self) -> int:
        """Inequality rows of P given so far (dropped ones included)."""
        return len(self._ub_col)

    def slacks(self, rows: np.ndarray) -> np.ndarray:
        """b - A x of P's inequality ``rows`` (indices in the order they came) at the
        last solve: their columns' reduced costs in D; inf for a dropped row."""
        cols = self._ub_col[np.asarray(rows, dtype=np.int64)]
        out = np.full(len(cols), np.inf)
        live = cols >= 0
        out[live] = self.model.reduced_costs()[cols[live]]
        return out

    def drop_rows(self, rows: np.ndarray) -> None:
        """Take P's inequality ``rows`` out (their columns of D are deleted). Rows slack
        at the last solve have nonbasic columns in D, so the basis of the rest stays and
        the next solve is warm; P's solution stays optimal without them."""
        rows = np.asarray(rows, dtype=np.int64)
        cols = self._ub_col[rows]
        cols = np.unique(cols[cols >= 0])
        if not len(cols):
            return
        self.model.delete_cols(cols)
        self._ub_col[rows] = -1
        live = self._ub_col >= 0
        self._ub_col[live] -= np.searchsorted(cols, self._ub_col[live])
        self._eq_col -= np.searchsorted(cols, self._eq_col)

    def solve(self) -> tuple[bool, str]:
        """Solve D from its last basis; (P optimal, status word), with D unbounded read
        as P infeasible and D infeasible as P unbounded (or infeasible). By the method
        it was given: the chain gives a master the dual simplex, which was faster than
        the primal simplex (for which a cut keeps the basis feasible) over generation's
        rounds when this form was written."""
        hs = self.model._hs
        ok, status = self.model.solve()
        said = self.model.h.getModelStatus()
        if said == hs.HighsModelStatus.kUnbounded:
            return False, "infeasible (the dual program is unbounded)"
        if said == hs.HighsModelStatus.kInfeasible:
            return False, "unbounded or infeasible (the dual program is infeasible)"
        return ok, status

    @property
    def objective(self) -> float:
        """P's optimal value."""
        return self.constant - self.model.objective

    @property
    def iterations(self) -> int:
        return self.model.iterations

    @property
    def seconds(self) -> float:
        return self.model.seconds

    def values(self) -> np.ndarray:
        """P's solution x = T x' + x0, x' = -(D's row duals)."""
        return self.T @ -self.model.row_duals() + self.x0

    def fixed_reduced_costs(self) -> np.ndarray:
        """The reduced costs c_j - A_j^T y of P's fixed columns (``fixed``, HiGHS's sign)
        at the last solve: d objective / d x_j, the price of moving column j's value
        (with P's duals y_ub = -w, y_eq = v)."""
        w = self.model.values()
        y_ub = np.zeros(len(self._ub_col))
        live = self._ub_col >= 0
        y_ub[live] = -w[self._ub_col[live]]
        F_ub = sp.vstack(self._fixed_ub, format="csr")
        F_eq = sp.vstack(self._fixed_eq, format="csr")
        return self._fixed_cost - F_ub.T @ y_ub - F_eq.T @ w[self._eq_col]

    def ub_duals(self) -> np.ndarray:
        """P's inequality-row duals (HiGHS's sign: <= 0 on a minimisation), in the order
        the rows were added (0 for a dropped row)."""
        w = self.model.values()
        out = np.zeros(len(self._ub_col))
        live = self._ub_col >= 0
        out[live] = -w[self._ub_col[live]]
        return out
