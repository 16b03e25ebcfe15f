"""A tabular program seen as one simplex per unit plus a few coupling rows, and the
restricted HiGHS model the structured solver grows (:mod:`fairdecide.optimize.engine.structured`).

The program (:class:`~fairdecide.optimize.program.policy_program.Program`) is

    min c_pi . pi + c_v . v   s.t.  sum_a pi_ua = 1, pi >= 0            (one row per unit)
                                    lo <= G_pi pi + G_v v <= hi          (coupling rows)
                                    l_v <= v <= u_v                      (other variables)

with pi the free policy rows (n units x n_a actions) and v everything else (group
marginals, deviations, epigraph and trade-off variables). The coupling rows are the
marginal definitions m = B pi, the criteria's rows and the trade-off's: a few per group,
action and outcome (times the scenarios of a belief), against one simplex per unit.

The restricted model keeps most units fixed at an *anchor* action and lets a working set
W move: for u in W and a != anchor(u), the variable delta_ua >= 0 moves mass from the
anchor to a, with sum_a delta_ua <= 1 (a bound when n_a = 2). Its column is
G_pi[:, (u, a)] - G_pi[:, (u, anchor)] and its cost c_ua - c_u,anchor; the fixed units
shift the coupling rows' bounds by their anchors' columns. Adding units keeps the last
solution feasible (delta = 0), so HiGHS resumes from its basis. Every coupling row also
has an elastic (artificial) column of cost ``penalty``, so the restricted model is never
infeasible; a solution using it is not a solution of the program.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from fairdecide.optimize.engine.master import Master

__all__ = ["BlockLP", "RestrictedModel", "block_structure", "marginal_definitions",
           "unit_simplices"]


@dataclass
class BlockLP:
    """The program split into unit simplices and coupling rows, the objective scaled so
    its largest cost is 1 (``scale`` times the program's)."""

    n_units: int
    n_actions: int
    G_pi: sp.csc_matrix        # coupling rows x policy columns
    G_piT: sp.csr_matrix       # its transpose, for pricing
    G_v: sp.csc_matrix         # coupling rows x other columns
    lo: np.ndarray
    hi: np.ndarray
    c_pi: np.ndarray           # (n_units, n_actions), scaled
    c_v: np.ndarray            # scaled
    l_v: np.ndarray
    u_v: np.ndarray
    scale: float
    inert: np.ndarray          # units with no cost and no coupling entry (weight zero)

    @property
    def n_rows(self) -> int:
        return self.G_pi.shape[0]

    def reduced_costs(self, y: np.ndarray) -> np.ndarray:
        """d = c_pi - G_pi^T y per unit and action, for row duals ``y``."""
        return self.c_pi - (self.G_piT @ y).reshape(self.n_units, self.n_actions)

    def at_actions(self, units: np.ndarray, actions: np.ndarray) -> tuple[np.ndarray, float]:
        """The coupling rows' activity and the cost of ``units``, each wholly at its
        entry of ``actions``."""
        cols = units * self.n_actions + actions
        act = np.asarray(self.G_pi[:, cols].sum(axis=1)).ravel()
        return act, float(self.c_pi.reshape(-1)[cols].sum())

    def anchored(self, anchors: np.ndarray, present: np.ndarray) -> tuple[np.ndarray, float]:
        """The coupling rows' activity and the cost of the ``present`` units at their
        anchors."""
        units = np.flatnonzero(present)
        return self.at_actions(units, anchors[units])


def marginal_definitions(lp: BlockLP, G_pi_rows: sp.csr_matrix | None = None
                         ) -> tuple[np.ndarray, np.ndarray]:
    """The columns of v that a coupling row defines from the policy, and those rows:
    v_j >= 0, unbounded above, with one entry, 1.0, among the rows the policy touches,
    in a row equal to 0 that holds no other column of v and no positive policy entry,
    so v_j = -G_pi[r] pi >= 0 for every policy (a group marginal m = B pi, B >= 0).
    The column may have entries in other rows (the criteria's that read it).
    ``G_pi_rows``: the caller's CSR copy of ``lp.G_pi``, if it has one (G_pi holds most
    of the program's entries; converting it twice doubled that cost)."""
    Gp = lp.G_pi.tocsr() if G_pi_rows is None else G_pi_rows
    Gv = lp.G_v.tocsc()
    inner = np.diff(Gp.indptr) > 0
    none = np.zeros(0, dtype=np.int64)
    in_inner = sp.csc_matrix((inner[Gv.indices].astype(float), Gv.indices.copy(),
                              Gv.indptr.copy()), shape=Gv.shape)
    in_inner.eliminate_zeros()
    one = np.flatnonzero((np.diff(in_inner.indptr) == 1) & (lp.l_v == 0.0)
                         & np.isinf(lp.u_v) & (lp.u_v > 0))
    if not len(one):
        return none, none
    row = in_inner.indices[in_inner.indptr[one]]
    ok = ((np.asarray(Gv[row, one]).ravel() == 1.0)
          & (np.diff(Gv.tocsr().indptr)[row] == 1)
          & (lp.lo[row] == 0.0) & (lp.hi[row] == 0.0))
    pos_max = np.maximum.reduceat(Gp.data, Gp.indptr[:-1][inner]) if Gp.nnz else np.zeros(0)
    no_pos = np.zeros(lp.n_rows, dtype=bool)
    no_pos[np.flatnonzero(inner)] = pos_max <= 0.0
    ok &= no_pos[row]
    return one[ok], row[ok]


def unit_simplices(program: Any) -> int:
    """N when the program's first N equality rows are one simplex per declared unit,
    sum_a pi_ua = 1 over columns u n_a ... u n_a + n_a - 1; 0 otherwise."""
    N, n_a = int(getattr(program, "n_units", 0)), int(program.n_actions)
    if N <= 0 or n_a < 2 or program.A_eq.shape[0] < N:
        return 0
    head = program.A_eq.tocsr()[:N]
    simplex = (np.array_equal(head.indptr, np.arange(N + 1) * n_a)
               and np.array_equal(head.indices, np.arange(N * n_a))
               and np.all(head.data == 1.0) and np.all(program.b_eq[:N] == 1.0))
    return N if simplex else 0


def block_structure(program: Any) -> BlockLP | str:
    """The program's block structure, or why it has none the structured solver can use."""
    N, n_a = int(getattr(program, "n_units", 0)), int(program.n_actions)
    if N <= 0 or n_a < 2:
        return "the program does not declare its policy units"
    if program.kl:
        return "KL deviations need an exponential-cone solver"
    n_pi = N * n_a
    A_eq = program.A_eq.tocsr()
    if not unit_simplices(program):
        return "the first rows are not one simplex per unit"
    if np.any(program.lb[:n_pi] != 0.0) or np.any(program.ub[:n_pi] < 1.0):
        return "the policy columns are bounded inside the simplex (a trust region)"
    # stacked by rows, then converted: scipy's vstack to CSC took 94 ms at 1.3 million
    # entries, this 35 ms
    G = sp.vstack([A_eq[N:], program.A_ub.tocsr()], format="csr").tocsc()
    m_ub = program.A_ub.shape[0]
    lo = np.concatenate([program.b_eq[N:], np.full(m_ub, -np.inf)])
    hi = np.concatenate([program.b_eq[N:], program.b_ub])
    big = float(np.abs(program.c).max(initial=0.0))
    scale = 1.0 / big if big > 0 else 1.0
    c = np.asarray(program.c, dtype=float) * scale
    G_pi = G[:, :n_pi].tocsc()
    c_pi = c[:n_pi].reshape(N, n_a)
    empty = (np.diff(G_pi.indptr) == 0).reshape(N, n_a).all(axis=1)
    inert = empty & ~np.any(c_pi != 0.0, axis=1)
    return BlockLP(N, n_a, G_pi, G_pi.T.tocsr(), G[:, n_pi:].tocsc(), lo, hi, c_pi,
                   c[n_pi:], np.asarray(program.lb[n_pi:], float),
                   np.asarray(program.ub[n_pi:], float), scale, inert)


class RestrictedModel(Master):
    """The structured solver's master: the other columns, the elastic columns of every
    coupling row and the moves of the working units (see the module). The units with
    ``present[u]`` are in the model, at their anchors until they join the working set
    (:class:`~fairdecide.optimize.engine.master.WorkingSet`, scaled: HiGHS sees
    z = t_u delta, with columns and costs of order one, so its dual tolerance (1e-9) is
    relative to each unit's stake rather than absolute; a cell of weight 1e-5 would
    otherwise be optimal only to 1e-4 of its own costs).
    """

    def __init__(self, lp: BlockLP, anchors: np.ndarray, present: np.ndarray,
                 penalty: float, time_limit: float | None = None) -> None:
        self.lp = lp
        self.act, self.constant = lp.anchored(anchors, present)
        super().__init__(lp.c_v, lp.l_v, lp.u_v, lp.G_v, lp.lo - self.act, lp.hi - self.act,
                         elastic=np.ones(lp.n_rows, dtype=bool), penalty=penalty,
                         time_limit=time_limit)
        work = self.working_set(lp.G_pi, lp.n_actions, anchors, lp.c_pi, scaled=True)
        work.track(np.arange(lp.n_rows), sp.identity(lp.n_rows, format="csr"))

    @property
    def anchors(self) -> np.ndarray:
        return self.work.anchors

    def reanchor(self, units: np.ndarray, new: np.ndarray) -> None:
        """Move ``units``, not working yet, to anchors ``new`` before they join the
        working set: the coupling rows' bounds and the constant follow. A working unit
        can take any row, so the last restricted solution stays feasible (this is a
        change of variables for it); chosen as each unit's best action at the last
        duals, its moves start dual feasible and the dual simplex only repairs the rows
        (at COMPAS scale, one pivot per unit that really moves, not one per unit)."""
        units = np.asarray(units, dtype=np.int64)
        change = new != self.anchors[units]
        units, new = units[change], np.asarray(new)[change]
        if not len(units):
            return
        lp = self.lp
        (act_new, cost_new), (act_old, cost_old) = (lp.at_actions(units, new),
                                                    lp.at_actions(units, self.anchors[units]))
        delta = act_new - act_old
        self.constant += cost_new - cost_old
        self.act = self.act + delta
        rows = np.flatnonzero(delta)
        self.set_row_bounds(rows, lp.lo[rows] - self.act[rows],
                                  lp.hi[rows] - self.act[rows])
        self.anchors[units] = new

    def add_bins(self, lp: BlockLP, anchors: np.ndarray) -> np.ndarray:
        """Take ``lp`` (this model's program followed by new super-units, whose members
        are already at ``anchors``, one per new super-unit) and let the new super-units
        move; their indices."""
        self.lp = lp
        new = self.work.extend(lp.G_pi, anchors, lp.c_pi)
        self.work.free(new)
        return new

    def solution(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Other columns v, elastic values, every unit's policy row and the coupling
        rows' duals."""
        x = self.values()
        return (x[: self.n_x], self.elastic(x), self.work.policy(x),
                self.row_duals()[: self.lp.n_rows])
