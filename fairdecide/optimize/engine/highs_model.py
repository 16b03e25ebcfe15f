"""One HiGHS model kept warm between solves: the place for the engine's tolerances.

The decomposition solvers grow a restricted program round by round: rows (cuts) and
columns (units set free) are appended, bounds change, and HiGHS resumes from its last
basis. :class:`HighsModel` is that model: built once from sparse arrays, grown in place,
solved, and read back (values, row duals, iteration counts). Its tolerances are set here
and nowhere else.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import numpy as np
import scipy.sparse as sp

__all__ = ["DUAL_ANSWER_TOL", "DUAL_SIMPLEX", "FEASIBILITY_TOL", "INTERIOR_NO_CROSSOVER",
           "INTERIOR_POINT", "HighsModel"]

#: Primal and dual feasibility tolerances of every restricted program. HiGHS's default
#: (1e-7) would leave coupling rows violated by that much, and reduced costs
#: (the certificates' gaps) unresolved below it.
FEASIBILITY_TOL = 1e-9
#: The dual feasibility tolerance of a program whose answer is its row duals: the
#: worst-case bias LP of fairdecide.smoothness.parity reads the policy q as the duals of a flow
#: program and searches for pairs it violates by more than 1e-9, so the pairs already in
#: it must hold to less than that.
DUAL_ANSWER_TOL = 1e-10
#: Simplex iterations a warm re-solve may take per row and column of the program (at
#: least WARM_ITERATIONS_MIN) before it is restarted cold. Degenerate restricted masters
#: can stall from a warm basis: a 419 x 609 scenario-cut master took 387,259 dual
#: simplex iterations (37 s) where a few hundred usually suffice.
WARM_ITERATIONS, WARM_ITERATIONS_MIN = 2, 2_000
#: Relative primal-dual objective gap at which the interior point stops when it is not
#: crossed over to a basis (HiGHS's default is 1e-8); measured on a 32-scenario belief of
#: 1000 x 4 x 5 cells it costs 33 iterations against 28.
IPM_GAP_TOL = 1e-10

#: HiGHS's methods, as the options that set them (:meth:`HighsModel.set_method`). Which
#: one a model takes is the solving chain's decision (its solvers' ``method``,
#: :func:`fairdecide.optimize.engine.chain.highs_method`), never this module's.
#: The dual simplex, from the last basis:
DUAL_SIMPLEX = MappingProxyType({"solver": "simplex", "simplex_strategy": 1})
#: The interior point, crossed over to a basis:
INTERIOR_POINT = MappingProxyType({"solver": "ipm", "run_crossover": "on",
                                   "ipm_optimality_tolerance": IPM_GAP_TOL})
#: The interior point stopped at a relative primal-dual gap of IPM_GAP_TOL, not crossed
#: over:
INTERIOR_NO_CROSSOVER = MappingProxyType({"solver": "ipm", "run_crossover": "off",
                                          "ipm_optimality_tolerance": IPM_GAP_TOL})


def _new_highs(highspy: Any) -> Any:
    """A silent HiGHS instance. highspy's ``Highs()`` enables its Python callbacks when
    built, a call that prints HiGHS's banner to standard output before ``output_flag``
    can be unset (highspy 1.16; it would corrupt a CLI's JSON output). The core class
    under it has every method used here (``run`` is the same method) and prints nothing;
    versions without it fall back to ``Highs()``."""
    try:
        from highspy._core import _Highs
    except ImportError:  # pragma: no cover - older highspy layouts
        return highspy.Highs()
    return _Highs()


class HighsModel:
    """min c @ x  s.t.  row_lo <= A x <= row_hi,  lb <= x <= ub, warm between solves.

    Parameters
    ----------
    c, lb, ub : ndarray of shape (n_cols,)
    A : scipy sparse matrix of shape (n_rows, n_cols)
    row_lo, row_hi : ndarray of shape (n_rows,)
    time_limit : float, optional
        Seconds allowed to each solve.
    dual_tol : float, default FEASIBILITY_TOL
        Dual feasibility tolerance (DUAL_ANSWER_TOL where the row duals are the answer).
    presolve : bool, default=True
        Let HiGHS presolve a cold solve (a warm one never is).
    """

    def __init__(self, c: np.ndarray, lb: np.ndarray, ub: np.ndarray, A: Any,
                 row_lo: np.ndarray, row_hi: np.ndarray, time_limit: float | None = None,
                 dual_tol: float = FEASIBILITY_TOL, presolve: bool = True) -> None:
        import highspy

        self._hs = highspy
        # every option set, so that a cold restart's fresh instance has them too
        self._options: dict[str, Any] = {
            "output_flag": False, "primal_feasibility_tolerance": FEASIBILITY_TOL,
            "dual_feasibility_tolerance": float(dual_tol),
            "presolve": "choose" if presolve else "off"}
        if time_limit is not None:
            self._options["time_limit"] = float(time_limit)
        h = self._configured()
        A = sp.csc_matrix(A)
        A.sort_indices()
        lp = highspy.HighsLp()
        lp.num_col_, lp.num_row_ = A.shape[1], A.shape[0]
        lp.col_cost_ = np.asarray(c, dtype=float)
        lp.col_lower_ = np.asarray(lb, dtype=float)
        lp.col_upper_ = np.asarray(ub, dtype=float)
        lp.row_lower_ = np.asarray(row_lo, dtype=float)
        lp.row_upper_ = np.asarray(row_hi, dtype=float)
        lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
        lp.a_matrix_.start_ = A.indptr.astype(np.int32)
        lp.a_matrix_.index_ = A.indices.astype(np.int32)
        lp.a_matrix_.value_ = A.data.astype(float)
        h.passModel(lp)
        self.h = h
        self.n_rows, self.n_cols = A.shape
        self.iterations, self.seconds, self.cold_restarts = 0, 0.0, 0
        self._warm = False  # a basis from an earlier solve

    @classmethod
    def from_rows(cls, c: np.ndarray, lb: np.ndarray, ub: np.ndarray, A_ub: Any,
                  b_ub: np.ndarray, A_eq: Any, b_eq: np.ndarray,
                  time_limit: float | None = None) -> HighsModel:
        """min c @ x  s.t.  A_ub x <= b_ub, A_eq x = b_eq, lb <= x <= ub: the inequality
        rows first (row duals ``[:len(b_ub)]``), then the equality rows."""
        m_ub = A_ub.shape[0]
        return cls(c, lb, ub, sp.vstack([A_ub, A_eq]),
                   np.concatenate([np.full(m_ub, -np.inf), b_eq]),
                   np.concatenate([b_ub, b_eq]), time_limit)

    @classmethod
    def from_program(cls, program: Any, time_limit: float | None = None) -> HighsModel:
        """The model of an assembled
        :class:`~fairdecide.optimize.program.policy_program.Program`, rows as
        :meth:`from_rows` lays them out."""
        return cls.from_rows(program.c, program.lb, program.ub, program.A_ub,
                             program.b_ub, program.A_eq, program.b_eq, time_limit)

    # ------------------------------------------------------------------ growing
    def add_rows(self, A: Any, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        """Append rows ``lo <= A x <= hi`` (A over the current columns); their indices."""
        A = sp.csr_matrix(A)
        A.sort_indices()
        k = A.shape[0]
        if k:
            self.h.addRows(k, np.asarray(lo, float), np.asarray(hi, float), A.nnz,
                           A.indptr[:-1].astype(np.int32), A.indices.astype(np.int32),
                           A.data.astype(float))
        idx = self.n_rows + np.arange(k)
        self.n_rows += k
        return idx

    def add_cols(self, A: Any, cost: np.ndarray, lb: np.ndarray, ub: np.ndarray
                 ) -> np.ndarray:
        """Append columns (A over the current rows) with costs and bounds; their indices."""
        A = sp.csc_matrix(A)
        A.sort_indices()
        k = A.shape[1]
        if k:
            self.h.addCols(k, np.asarray(cost, float), np.asarray(lb, float),
                           np.asarray(ub, float), A.nnz, A.indptr[:-1].astype(np.int32),
                           A.indices.astype(np.int32), A.data.astype(float))
        idx = self.n_cols + np.arange(k)
        self.n_cols += k
        return idx

    def delete_cols(self, cols: np.ndarray) -> None:
        """Delete columns (the later ones move down to fill the gaps); a basis in which
        they are all nonbasic stays the basis of the rest, so the next solve is warm."""
        cols = np.unique(np.asarray(cols, dtype=np.int32))
        if len(cols):
            self.h.deleteCols(len(cols), cols)
            self.n_cols -= len(cols)

    def set_row_bounds(self, rows: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> None:
        rows = np.asarray(rows, dtype=np.int32)
        if len(rows):
            self.h.changeRowsBounds(len(rows), rows, np.asarray(lo, float),
                                    np.asarray(hi, float))

    def set_col_bounds(self, cols: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> None:
        cols = np.asarray(cols, dtype=np.int32)
        if len(cols):
            self.h.changeColsBounds(len(cols), cols, np.asarray(lo, float),
                                    np.asarray(hi, float))

    def set_costs(self, cols: np.ndarray, cost: np.ndarray) -> None:
        cols = np.asarray(cols, dtype=np.int32)
        if len(cols):
            self.h.changeColsCost(len(cols), cols, np.asarray(cost, float))

    def set_method(self, method: Mapping[str, Any]) -> None:
        """The next solves' method: one of this module's option sets (DUAL_SIMPLEX,
        INTERIOR_POINT, INTERIOR_NO_CROSSOVER), as the solving chain chose it."""
        for name, value in method.items():
            self.h.setOptionValue(name, value)
        self._options.update(method)

    def _configured(self) -> Any:
        """A new HiGHS instance with this model's options (no model yet)."""
        h = _new_highs(self._hs)
        for name, value in self._options.items():
            h.setOptionValue(name, value)
        return h

    # ------------------------------------------------------------------ solving
    def solve(self) -> tuple[bool, str]:
        """Run HiGHS from the last basis; (optimal, status word). A warm start that
        stalls (more than WARM_ITERATIONS per row and column, at least
        WARM_ITERATIONS_MIN, simplex iterations) is dropped and the program solved
        again from scratch (``cold_restarts``)."""
        limit = max(WARM_ITERATIONS_MIN, WARM_ITERATIONS * (self.n_rows + self.n_cols))
        # only a warm start is limited: a first solve (or a crossover) takes what it needs
        self.h.setOptionValue("simplex_iteration_limit",
                              int(limit) if self._warm else 2**31 - 1)
        t0 = time.perf_counter()
        self.h.run()
        self.iterations += int(self.h.getInfo().simplex_iteration_count)
        status = self.h.getModelStatus()
        if status == self._hs.HighsModelStatus.kIterationLimit:
            # a fresh instance: after clearSolver, HiGHS 1.16 still stalled in the same
            # program (18,558 iterations in 10 s without an optimum, where a fresh
            # instance took 1,860 and 0.7 s: a scenario-cut master, separation over 32
            # scenarios of 300 x 4 x 5 cells, epsilon 0.12)
            self.cold_restarts += 1
            lp = self.h.getLp()
            self.h = self._configured()
            self.h.passModel(lp)
            self.h.run()
            self.iterations += int(self.h.getInfo().simplex_iteration_count)
            status = self.h.getModelStatus()
        if status == self._hs.HighsModelStatus.kUnboundedOrInfeasible:
            # presolve could not tell which: the simplex without it says
            self.h.setOptionValue("presolve", "off")
            self.h.run()
            self.h.setOptionValue("presolve", self._options["presolve"])
            self.iterations += int(self.h.getInfo().simplex_iteration_count)
            status = self.h.getModelStatus()
        self.seconds += time.perf_counter() - t0
        self._warm = True
        return (status == self._hs.HighsModelStatus.kOptimal,
                self.h.modelStatusToString(status).lower())

    def accuracy(self) -> dict[str, float | int]:
        """The last solve's certificate as HiGHS reports it: the relative primal-dual
        objective gap, the largest primal and dual infeasibilities, interior-point and
        crossover iterations."""
        info = self.h.getInfo()
        return {"gap": float(info.primal_dual_objective_error),
                "primal_infeasibility": float(info.max_primal_infeasibility),
                "dual_infeasibility": float(info.max_dual_infeasibility),
                "ipm_iterations": int(info.ipm_iteration_count),
                "crossover_iterations": int(info.crossover_iteration_count)}

    @property
    def objective(self) -> float:
        return float(self.h.getInfo().objective_function_value)

    def values(self) -> np.ndarray:
        return np.asarray(self.h.getSolution().col_value)

    def reduced_costs(self) -> np.ndarray:
        """The columns' reduced costs c - A^T y at the last solve."""
        return np.asarray(self.h.getSolution().col_dual)

    def row_duals(self) -> np.ndarray:
        """Row duals y with reduced costs c - A^T y (HiGHS's sign convention)."""
        return np.asarray(self.h.getSolution().row_dual)
