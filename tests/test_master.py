"""The one restricted master (fairdecide/optimize/engine/master.py): its working set
against the whole program solved by scipy's linprog, written out here, and its elastic
columns on a hand-solved infeasible pair of rows."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import linprog

from fairdecide.optimize.engine.master import Master, rows_from_moves


def _case(seed: int, n_units: int, n_a: int):
    rng = np.random.default_rng(seed)
    m, n_cuts = 3, 2
    P = sp.random(m, n_units * n_a, density=0.6, random_state=rng, format="csc")
    c_pi = rng.normal(size=(n_units, n_a))
    c_y = rng.normal(size=m)
    G = rng.normal(size=(n_cuts, m))
    # cuts G (P pi) <= b, feasible at the uniform policy
    b = G @ (P @ np.full(n_units * n_a, 1.0 / n_a)) + rng.uniform(0.05, 0.3, n_cuts)
    return P, c_pi, c_y, G, b, rng.integers(0, n_a, n_units)


def _whole(P, c_pi, c_y, G, b) -> float:
    """min c_y . y + c_pi . pi  s.t.  y = P pi, G y <= b, pi on its simplices."""
    m, n = P.shape
    n_units, n_a = c_pi.shape
    A_eq = sp.vstack([sp.hstack([sp.identity(m), -P]),
                      sp.hstack([sp.csr_matrix((n_units, m)),
                                 sp.kron(sp.identity(n_units), np.ones((1, n_a)))])])
    A_ub = sp.hstack([sp.csr_matrix(G), sp.csr_matrix((len(b), n))])
    res = linprog(np.r_[c_y, c_pi.ravel()], A_ub=A_ub, b_ub=b, A_eq=A_eq,
                  b_eq=np.r_[np.zeros(m), np.ones(n_units)],
                  bounds=[(None, None)] * m + [(0, None)] * n, method="highs")
    assert res.status == 0
    return float(res.fun)


@pytest.mark.parametrize("n_a", [2, 3])
@pytest.mark.parametrize("scaled", [False, True])
@pytest.mark.parametrize("seed", range(4))
def test_a_master_with_every_unit_working_is_the_whole_program(seed, scaled, n_a):
    """Units freed in two batches, the cut rows added between them (so the first batch's
    moves enter them through map_rows, the second's through track): the master's
    optimum is linprog's on the whole program, and the policy it reads back reproduces
    its rows (y = P pi, G y <= b) and its objective."""
    n_units = 6
    P, c_pi, c_y, G, b, anchors = _case(seed, n_units, n_a)
    m = P.shape[0]
    fixed = P @ rows_from_moves(n_units, n_a, anchors, np.zeros(0, int),
                                np.zeros((0, n_a - 1))).ravel()
    # rows y - P (moves) = P (anchors): y is the image of the policy
    master = Master(c_y, np.full(m, -np.inf), np.full(m, np.inf), sp.identity(m), fixed,
                    fixed)
    work = master.working_set(P, n_a, anchors, c_pi, scaled=scaled)
    work.track(np.arange(m), -sp.identity(m))
    work.free(np.arange(0, n_units, 2))
    assert master.solve()[0]
    # cuts G y <= b read y, not the moves: their entries on the moves are zero
    Gy = sp.hstack([sp.csr_matrix(G), sp.csr_matrix((len(b), master.n_cols - m))])
    master.add_rows(Gy, np.full(len(b), -np.inf), b)
    work.free(np.arange(1, n_units, 2))
    ok, status = master.solve()
    assert ok, status
    x = master.values()
    pi = work.policy(x)
    constant = float(c_pi[np.arange(n_units), anchors].sum())
    whole = _whole(P, c_pi, c_y, G, b)
    assert master.objective + constant == pytest.approx(whole, abs=1e-8)
    np.testing.assert_allclose(pi.sum(axis=1), 1.0, atol=1e-9)
    assert pi.min() >= -1e-9
    np.testing.assert_allclose(x[:m], P @ pi.ravel(), atol=1e-8)
    assert np.all(G @ x[:m] <= b + 1e-8)
    assert c_y @ x[:m] + (c_pi * pi).sum() == pytest.approx(whole, abs=1e-8)


def test_rows_that_read_the_image_take_the_moves_already_working():
    """map_rows gives a row reading the image through L its entries on the moves that
    are in the master: L (P[:, to] - P[:, from]) per move (scaled by 1 / t_u)."""
    n_units, n_a = 4, 3
    P, c_pi, c_y, G, _, anchors = _case(11, n_units, n_a)
    m = P.shape[0]
    master = Master(c_y, np.full(m, -np.inf), np.full(m, np.inf), sp.identity(m),
                    np.zeros(m), np.zeros(m))
    work = master.working_set(P, n_a, anchors, c_pi, scaled=True)
    work.free(np.array([1, 3]))
    A = work.map_rows(np.zeros(2, dtype=int), G).toarray()
    Pd = P.toarray()
    for k, u in enumerate([1, 3]):
        others = [a for a in range(n_a) if a != anchors[u]]
        for j, a in enumerate(others):
            move = Pd[:, u * n_a + a] - Pd[:, u * n_a + anchors[u]]
            col = work.cols[k, j]
            np.testing.assert_allclose(A[:, col], G @ move / work.size[k], atol=1e-12)
    assert not A[:, :master.n_x + master.n_e].any()


def test_elastic_columns_price_an_infeasible_pair_of_rows():
    """x >= 2 and x <= 1 cannot both hold: the least elastic total is 1, priced at the
    penalty, then alone in phase one, then at a raised penalty (hand-solved)."""
    A = sp.csr_matrix([[1.0], [1.0]])
    master = Master(np.zeros(1), np.zeros(1), np.full(1, np.inf), A,
                    np.array([2.0, -np.inf]), np.array([np.inf, 1.0]),
                    elastic=np.array([True, True]), penalty=10.0)
    assert master.n_e == 2
    assert master.solve()[0]
    assert master.objective == pytest.approx(10.0)
    assert master.elastic(master.values()).sum() == pytest.approx(1.0)
    master.set_phase(True)
    assert master.solve()[0]
    assert master.objective == pytest.approx(1.0)
    master.set_phase(False, penalty=100.0)
    assert master.solve()[0]
    assert master.objective == pytest.approx(100.0)


def test_a_stalled_warm_start_restarts_in_a_fresh_instance(monkeypatch):
    """A warm re-solve stopped by the iteration limit is solved again cold in a new
    HiGHS instance with the model's options and every row and column added since: the
    optimum is linprog's on the LP written out here, and the restart is counted. (A new
    instance, not clearSolver: HiGHS 1.16 stalled after clearSolver on a scenario-cut
    master, see HighsModel.solve.)"""
    from fairdecide.optimize.engine import highs_model
    from fairdecide.optimize.engine.highs_model import FEASIBILITY_TOL, HighsModel

    rng = np.random.default_rng(5)
    n, m = 30, 12
    A = rng.uniform(0.1, 1.0, size=(m, n))
    b = A.sum(axis=1) * 0.4
    model = HighsModel(rng.normal(size=n), np.zeros(n), np.ones(n), A,
                       np.full(m, -np.inf), b)
    model.set_method(highs_model.DUAL_SIMPLEX)
    assert model.solve()[0]
    # a row and a column added, every cost changed: the warm solve has work to do
    row = rng.uniform(0.1, 1.0, size=n)
    model.add_rows(row[None, :], np.array([-np.inf]), np.array([row.sum() * 0.3]))
    col = rng.uniform(0.1, 1.0, size=m + 1)
    model.add_cols(sp.csc_matrix(col[:, None]), np.array([-1.0]), np.zeros(1), np.ones(1))
    c = rng.normal(size=n + 1)
    model.set_costs(np.arange(n + 1), c)
    monkeypatch.setattr(highs_model, "WARM_ITERATIONS", 0)
    monkeypatch.setattr(highs_model, "WARM_ITERATIONS_MIN", 1)
    first = model.h
    ok, status = model.solve()
    assert ok, status
    assert model.cold_restarts == 1 and model.h is not first
    assert model.h.getOptionValue("primal_feasibility_tolerance")[1] == FEASIBILITY_TOL
    assert model.h.getOptionValue("simplex_strategy")[1] == 1
    dense = np.column_stack([np.vstack([A, row]), col])
    ref = linprog(c, A_ub=dense, b_ub=np.r_[b, row.sum() * 0.3], bounds=[(0, 1)] * (n + 1),
                  method="highs")
    assert ref.status == 0
    assert model.objective == pytest.approx(ref.fun, abs=1e-9)
