"""The one restricted master: a HiGHS model kept warm round after round, the elastic
columns that keep it feasible, and the policy as units at anchors with a working set that
moves.

:class:`Master` is the master of every decomposition that keeps its own: the structured
solver's (:class:`~fairdecide.optimize.engine._block_lp.RestrictedModel`), the scenario
cuts' (:mod:`fairdecide.optimize.engine.scenario_cuts`), the distributed solver's vertex
columns (:mod:`fairdecide.optimize.engine.distributed_master`) and the ranking cut loop's
(:mod:`fairdecide.assignment._ranking_lp`). Each loop grows it (cuts as rows, units or
vertices as columns) and stops on the master loop's one rule
(:mod:`fairdecide.optimize.engine.rounds`). Constraint generation of Lipschitz pairs and
the smoothness bias keep theirs as its dual
(:class:`~fairdecide.optimize.engine.dual_form.DualForm`, a cut is a dual column).

**No presolve.** A master is solved cold once (or again after a re-anchoring) and warm
after that. HiGHS 1.16's presolve, at the engine's tolerances (1e-9), stalled on a cold
scenario-cut master after a re-anchoring (separation, 32 scenarios of 300 x 4 x 5 cells,
epsilon 0.12: 2,245 rows x 1,533 columns, 43,619 dual simplex iterations and no optimum
after 20 s), which it solves in 0.33 s and 1,622 iterations without presolve.

**Elastic columns.** Rows marked elastic get an artificial column per side that can be
violated (:func:`elastic_columns`), of cost ``penalty``: the master is never infeasible,
and a solution using them is not a solution of the program. Phase one
(:meth:`Master.set_phase`) prices them alone.

A policy program's units each choose a row on the simplex, and a master sees the policy
only through a linear **image** P pi: the coupling rows G_pi pi (structured), or the
scenarios' group marginals B pi (scenario cuts). Every unit sits at an *anchor* action
except the working units W: for u in W and each a != anchor(u), a move column
delta_ua >= 0 shifts mass from the anchor to a, with sum_a delta_ua <= 1 (a bound when
n_a = 2). Its image is P[:, (u, a)] - P[:, (u, anchor)] (:func:`move_columns`), and the
master's rows read the image through **maps** L (row block = L times the image: the
identity on the coupling rows, or a scenario's utility and its cuts). The fixed units'
image, P at the anchors, is a constant the master moves into its row bounds.

Scaled moves (the structured master): unit u's columns are z = t_u delta, t_u the mean
1-norm of its move columns (or of their costs), so that HiGHS's dual tolerance is
relative to each unit's stake.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from fairdecide.optimize.engine.highs_model import HighsModel

__all__ = ["Master", "WorkingSet", "elastic_columns", "move_columns", "other_actions",
           "rows_from_moves"]


def elastic_columns(lo: np.ndarray, hi: np.ndarray) -> sp.csc_matrix:
    """A master's elastic (artificial) columns for rows ``lo <= A x <= hi``: +e on each
    row that can be too low (finite lo), -e on each that can be too high (finite hi).

    Examples
    --------
    >>> elastic_columns(np.array([0.0, -np.inf]), np.array([0.0, 1.0])).toarray()
    array([[ 1., -1.,  0.],
           [ 0.,  0., -1.]])
    """
    up, down = np.flatnonzero(np.isfinite(lo)), np.flatnonzero(np.isfinite(hi))
    rows = np.concatenate([up, down])
    vals = np.concatenate([np.ones(len(up)), -np.ones(len(down))])
    return sp.csc_matrix((vals, (rows, np.arange(len(rows)))), shape=(len(lo), len(rows)))


def other_actions(n_a: int) -> np.ndarray:
    """Row b: the actions other than b, in order (a unit anchored at b moves its mass to
    these, one column each)."""
    return np.array([[a for a in range(n_a) if a != b] for b in range(n_a)], dtype=np.int64)


def move_columns(P: sp.spmatrix, anchors: np.ndarray, units: np.ndarray, n_a: int
                 ) -> tuple[sp.csc_matrix, np.ndarray, np.ndarray]:
    """For each of ``units`` (anchored at ``anchors[u]``) and each other action a, the
    column of P (image x policy columns u n_a + a) minus its anchor's: the change of the
    image when the unit moves mass from its anchor to a; with the policy columns moved
    to and from (both (k (n_a - 1),))."""
    to = (units[:, None] * n_a + other_actions(n_a)[anchors[units]]).ravel()
    frm = np.repeat(units * n_a + anchors[units], n_a - 1)
    return (P[:, to] - P[:, frm]).tocsc(), to, frm


def rows_from_moves(n_units: int, n_a: int, anchors: np.ndarray, units: np.ndarray,
                    moves: np.ndarray) -> np.ndarray:
    """Every unit's row of a restricted master's solution: its anchor, minus what the
    working ``units`` moved away (``moves``: (len(units), n_a - 1), in the order of
    :func:`other_actions`).

    Examples
    --------
    >>> rows_from_moves(2, 3, np.array([0, 2]), np.array([1]), np.array([[0.25, 0.0]]))
    array([[1.  , 0.  , 0.  ],
           [0.25, 0.  , 0.75]])
    """
    pi = np.zeros((n_units, n_a))
    pi[np.arange(n_units), anchors] = 1.0
    if len(units):
        pi[units[:, None], other_actions(n_a)[anchors[units]]] = moves
        pi[units, anchors[units]] = 1.0 - moves.sum(axis=1)
    return pi


class Master(HighsModel):
    """min c.x + penalty sum(e) (+ the working moves' costs)  s.t.
    lo <= A x + E e (+ moves) <= hi,  lb <= x <= ub: a
    :class:`~fairdecide.optimize.engine.highs_model.HighsModel` (kept warm, grown by
    rows and columns) with elastic columns and a working set (see the module).

    Parameters
    ----------
    c, lb, ub : ndarray of shape (n,)
    A : sparse matrix of shape (m, n)
    lo, hi : ndarray of shape (m,)
    elastic : ndarray of bool, shape (m,), optional
        The rows with elastic columns (none without).
    penalty : float, default=0
        Their cost.
    time_limit : float, optional
        Seconds allowed to each solve.

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> master = Master(np.array([1.0]), np.zeros(1), np.full(1, np.inf),
    ...                 sp.csr_matrix([[1.0]]), np.array([2.0]), np.array([np.inf]),
    ...                 elastic=np.array([True]), penalty=10.0)
    >>> master.solve(), round(master.objective, 9), master.elastic(master.values()).tolist()
    ((True, 'optimal'), 2.0, [0.0])
    """

    def __init__(self, c: np.ndarray, lb: np.ndarray, ub: np.ndarray, A: Any,
                 lo: np.ndarray, hi: np.ndarray, *, elastic: np.ndarray | None = None,
                 penalty: float = 0.0, time_limit: float | None = None) -> None:
        A = sp.csc_matrix(A)
        rows = np.zeros(A.shape[0], dtype=bool) if elastic is None else np.asarray(elastic)
        E = elastic_columns(np.where(rows, lo, -np.inf), np.where(rows, hi, np.inf))
        self.c, self.penalty = np.asarray(c, dtype=float), float(penalty)
        self.n_x, self.n_e = A.shape[1], E.shape[1]
        super().__init__(np.concatenate([self.c, np.full(self.n_e, self.penalty)]),
                         np.concatenate([lb, np.zeros(self.n_e)]),
                         np.concatenate([ub, np.full(self.n_e, np.inf)]),
                         sp.hstack([A, E], format="csc"), lo, hi, time_limit,
                         presolve=False)
        self.work: WorkingSet | None = None

    def working_set(self, image: sp.spmatrix, n_actions: int, anchors: np.ndarray,
                    cost: np.ndarray | None = None, scaled: bool = False) -> WorkingSet:
        """The policy's units at ``anchors`` (a :class:`WorkingSet` over this master)."""
        self.work = WorkingSet(self, image, n_actions, anchors, cost, scaled)
        return self.work

    def elastic(self, x: np.ndarray) -> np.ndarray:
        """The elastic columns' values in a solution ``x``."""
        return x[self.n_x: self.n_x + self.n_e]

    def set_phase(self, phase_one: bool, penalty: float | None = None) -> None:
        """Phase one (only the elastic columns cost, 1 each) or the program's costs
        with elastic ``penalty``."""
        if penalty is not None:
            self.penalty = float(penalty)
        cost = np.zeros(self.n_cols)
        if phase_one:
            cost[self.n_x: self.n_x + self.n_e] = 1.0
        else:
            cost[: self.n_x] = self.c
            cost[self.n_x: self.n_x + self.n_e] = self.penalty
            if self.work is not None:
                cost[self.work.cols.reshape(-1)] = self.work.move_costs()
        self.set_costs(np.arange(len(cost)), cost)


class WorkingSet:
    """The anchors and working units of a restricted master kept in ``model`` (see the
    module).

    Parameters
    ----------
    model : HighsModel
        The master; move columns and the rows that bound each unit's moves are appended.
    image : sparse matrix of shape (n_image, n_units n_actions)
        P, the policy's image.
    n_actions : int
    anchors : ndarray of int, shape (n_units,)
    cost : ndarray of shape (n_units, n_actions), optional
        The policy's cost; a move costs c_ua - c_u,anchor (0 without).
    scaled : bool, default=False
        Scale each unit's moves by its size t_u.
    """

    def __init__(self, model: HighsModel, image: sp.spmatrix, n_actions: int,
                 anchors: np.ndarray, cost: np.ndarray | None = None,
                 scaled: bool = False) -> None:
        self.model, self.image, self.n_a = model, sp.csc_matrix(image), int(n_actions)
        self.anchors, self.scaled = np.asarray(anchors, dtype=np.int64), bool(scaled)
        self.cost = None if cost is None else np.asarray(cost, dtype=float).reshape(-1)
        n_units = self.image.shape[1] // self.n_a
        self.in_work = np.zeros(n_units, dtype=bool)
        self.units = np.zeros(0, dtype=np.int64)             # working, in column order
        self.cols = np.zeros((0, self.n_a - 1), dtype=np.int64)
        self.size = np.zeros(0)                              # t_u (1 unscaled)
        self.moves_image = sp.csc_matrix((self.image.shape[0], 0))
        self._map_rows = np.zeros(0, dtype=np.int64)
        self._maps = sp.csr_matrix((0, self.image.shape[0]))  # L of _map_rows, stacked

    @property
    def n_units(self) -> int:
        return len(self.anchors)

    @property
    def n_moves(self) -> int:
        return len(self.units) * (self.n_a - 1)

    def map_rows(self, rows: np.ndarray, L: sp.spmatrix) -> sp.csr_matrix:
        """Master ``rows`` that read the image through ``L`` (len(rows) x n_image): the
        working units' moves enter them (here for the moves already in the master,
        returned as entries over the model's columns; rows added after this call must be
        registered with :meth:`track`)."""
        L = sp.csr_matrix(L)
        coo = sp.coo_matrix(L @ self.moves_image
                            @ sp.diags(1.0 / np.repeat(self.size, self.n_a - 1)))
        return sp.csr_matrix((coo.data, (coo.row, self.cols.reshape(-1)[coo.col])),
                             shape=(L.shape[0], self.model.n_cols))

    def track(self, rows: np.ndarray, L: sp.spmatrix) -> None:
        """Register master ``rows`` reading the image through ``L``: every later move
        enters them."""
        self._map_rows = np.concatenate([self._map_rows, np.asarray(rows, dtype=np.int64)])
        self._maps = sp.vstack([self._maps, sp.csr_matrix(L)], format="csr")

    def free(self, units: np.ndarray) -> None:
        """Let ``units`` (fixed until now) move away from their anchors: n_a - 1 columns
        each (and a row bounding their sum when n_a > 2)."""
        units = np.asarray(units, dtype=np.int64)
        if not len(units):
            return
        n_a, k = self.n_a, len(units)
        M, to, frm = move_columns(self.image, self.anchors, units, n_a)
        cost = np.zeros(M.shape[1]) if self.cost is None else self.cost[to] - self.cost[frm]
        size = self._sizes(M, cost) if self.scaled else np.ones(k)
        per_col = np.repeat(size, n_a - 1)
        mapped = self._maps @ (M @ sp.diags(1.0 / per_col))
        idx = _add_moves(self.model, k, n_a, self._map_rows, mapped, cost / per_col, per_col,
                         size)
        self.cols = np.vstack([self.cols, idx.reshape(k, n_a - 1)])
        self.units = np.concatenate([self.units, units])
        self.size = np.concatenate([self.size, size])
        self.moves_image = sp.hstack([self.moves_image, M], format="csc")
        self.in_work[units] = True

    def move_costs(self) -> np.ndarray:
        """The working moves' costs as the master holds them (scaled)."""
        if self.cost is None or not len(self.units):
            return np.zeros(self.n_moves)
        _, to, frm = move_columns(self.image, self.anchors, self.units, self.n_a)
        return (self.cost[to] - self.cost[frm]) / np.repeat(self.size, self.n_a - 1)

    def retire(self, units: np.ndarray) -> None:
        """Hold the moves of working ``units`` at zero."""
        cols = self.cols[np.isin(self.units, units)].reshape(-1)
        self.model.set_col_bounds(cols, np.zeros(len(cols)), np.zeros(len(cols)))

    def extend(self, image: sp.spmatrix, anchors: np.ndarray, cost: np.ndarray | None
               ) -> np.ndarray:
        """Take ``image`` (the old one followed by new units' columns) and the new units'
        ``anchors`` (and costs); the new units' indices."""
        new = np.arange(self.n_units, self.n_units + len(anchors))
        self.image = sp.csc_matrix(image)
        self.anchors = np.concatenate([self.anchors, anchors])
        self.cost = None if cost is None else np.asarray(cost, dtype=float).reshape(-1)
        self.in_work = np.concatenate([self.in_work, np.zeros(len(anchors), dtype=bool)])
        return new

    def moves(self, x: np.ndarray) -> np.ndarray:
        """The working units' moves delta (len(units), n_a - 1) in a solution ``x``."""
        return np.clip(x[self.cols], 0.0, None) / self.size[:, None]

    def policy(self, x: np.ndarray) -> np.ndarray:
        """Every unit's row in a solution ``x`` of the master."""
        return rows_from_moves(self.n_units, self.n_a, self.anchors, self.units,
                               self.moves(x))

    def moved(self, pi: np.ndarray) -> np.ndarray:
        """Working units whose row is a vertex other than their anchor."""
        u = self.units
        return u[(pi[u].max(axis=1) >= 1.0 - 1e-9)
                 & (np.argmax(pi[u], axis=1) != self.anchors[u])]

    def _sizes(self, M: sp.csc_matrix, cost: np.ndarray) -> np.ndarray:
        # each column's L1 norm (a reduceat over the columns' starts fails when the last
        # columns are empty)
        norm = np.asarray(abs(M).sum(axis=0)).ravel()
        size = np.maximum(norm, np.abs(cost)).reshape(-1, self.n_a - 1).mean(axis=1)
        return np.where(size > 0, size, 1.0)


def _add_moves(model: HighsModel, k: int, n_a: int, rows: np.ndarray, mapped: sp.spmatrix,
               cost: np.ndarray, upper: np.ndarray, unit_upper: np.ndarray) -> np.ndarray:
    """Append the n_a - 1 move columns of each of ``k`` units: entries ``mapped`` on the
    master's ``rows`` and, with more than two actions, a new row per unit, the sum of its
    moves at most ``unit_upper``; the columns' indices."""
    n = k * (n_a - 1)
    mapped = sp.csc_matrix(mapped)
    A = sp.csc_matrix((mapped.data, rows[mapped.indices], mapped.indptr),
                      shape=(model.n_rows, n))
    if n_a > 2:
        own = model.add_rows(sp.csr_matrix((k, model.n_cols)), np.full(k, -np.inf),
                             unit_upper)
        A = sp.vstack([A[: own[0]], sp.csc_matrix(
            (np.ones(n), np.repeat(np.arange(k), n_a - 1), np.arange(n + 1)),
            shape=(k, n))], format="csc")
    return model.add_cols(A, cost, np.zeros(n), upper)
