"""DualForm: a program solved through its dual, grown by rows and columns, against
scipy's linprog on the whole program written here."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

from fairdecide.optimize.engine.chain import Case, highs_method
from fairdecide.optimize.engine.dual_form import DualForm

#: The method the chain gives a master kept warm, as constraint generation asks for it.
MASTER = highs_method(Case("master"))


def _program(seed: int, n_units: int, extra: int, m: int):
    """Two-action unit simplices, a few other columns (some free, some fixed) and random
    inequality rows; returns the pieces and the simplex rows."""
    rng = np.random.default_rng(seed)
    n = 2 * n_units + extra
    c = rng.normal(size=n)
    simplex = sp.csr_matrix((np.ones(2 * n_units), (np.repeat(np.arange(n_units), 2),
                                                    np.arange(2 * n_units))), shape=(n_units, n))
    A = sp.random(m, n, density=0.5, random_state=seed, format="csr")
    A.data = rng.normal(size=A.nnz)
    b = rng.uniform(0.1, 2.0, size=m)
    lb = np.r_[np.zeros(2 * n_units), rng.choice([-np.inf, -1.0, 0.0], size=extra)]
    ub = np.r_[np.ones(2 * n_units), rng.choice([np.inf, 1.0, 2.0], size=extra)]
    fixed = rng.random(extra) < 0.2
    lb[2 * n_units:][fixed] = ub[2 * n_units:][fixed] = 0.5
    return c, lb, ub, A, b, simplex


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), n_units=st.integers(1, 5), extra=st.integers(0, 3),
       m=st.integers(1, 8), fold=st.booleans(), first=st.integers(0, 8))
def test_the_dual_gives_linprogs_optimum_as_rows_are_added(seed, n_units, extra, m, fold,
                                                           first):
    c, lb, ub, A, b, simplex = _program(seed, n_units, extra, m)
    n = len(c)
    ref = linprog(c, A_ub=A.toarray(), b_ub=b, A_eq=simplex.toarray(), b_eq=np.ones(n_units),
                  bounds=list(zip(lb, ub, strict=True)), method="highs")
    pairs = np.arange(2 * n_units).reshape(n_units, 2) if fold else None
    eq = sp.csr_matrix((0, n)) if fold else simplex
    first = min(first, m)
    form = DualForm(c, lb, ub, A[:first], b[:first], eq,
                    np.zeros(0) if fold else np.ones(n_units), fold=pairs,
                    method=MASTER)
    form.solve()  # then the rest of the rows, warm, and unit 0's simplex once more as
    # an equality row (redundant: folded, it is 0 = 0)
    form.add_rows(sp.vstack([A[first:], simplex[:1]]), np.r_[np.full(m - first, -np.inf), 1.0],
                  np.r_[b[first:], 1.0])
    ok, status = form.solve()
    assert ok == (ref.status == 0), (status, ref.message)
    if not ok:
        # an infeasible program whose dual is infeasible too can only be told apart
        # from an unbounded one by solving it
        assert status.startswith({2: ("infeasible", "unbounded or infeasible"),
                                  3: ("unbounded",)}[ref.status])
        return
    x, y = form.values(), form.ub_duals()
    assert form.objective == pytest.approx(ref.fun, rel=1e-9, abs=1e-9)
    assert c @ x == pytest.approx(ref.fun, rel=1e-9, abs=1e-9)
    assert np.all(A @ x <= b + 1e-9)
    assert np.allclose(simplex @ x, 1.0, atol=1e-9)
    assert np.all(x >= lb - 1e-9) and np.all(x <= ub + 1e-9)
    # the rows' duals: signed as HiGHS's (<= 0 on a minimisation), complementary to the
    # slacks
    assert len(y) == m and np.all(y <= 1e-9)  # the equality row is not among them
    assert np.allclose(y * (b - A @ x), 0.0, atol=1e-8)



@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), n_units=st.integers(1, 4), m=st.integers(1, 8),
       first=st.integers(0, 8), fold=st.booleans())
def test_a_fixed_column_is_a_constant_priced_by_its_reduced_cost(seed, n_units, m, first,
                                                                  fold):
    # a column fixed by its bounds (lb = ub) leaves the dual; its value is still x, and
    # its reduced cost is the optimum's slope in that value: V(v) is convex (a right-hand
    # side), so the price lies between the chords to v - h and v + h, each end solved by
    # linprog on the whole program written here, rows added after the first solve too;
    # the column is in an equality row as well (x_0 + x_j = 1)
    c, lb, ub, A, b, simplex = _program(seed, n_units, 1, m)
    n = len(c)
    j = n - 1
    lb[j] = ub[j] = 0.5
    first = min(first, m)
    tie = sp.csr_matrix(([1.0, 1.0], ([0, 0], [0, j])), shape=(1, n))
    eqs = sp.vstack([simplex, tie], format="csr")

    def whole(v):
        lo, hi = lb.copy(), ub.copy()
        lo[j] = hi[j] = v
        return linprog(c, A_ub=A.toarray(), b_ub=b, A_eq=eqs.toarray(),
                       b_eq=np.ones(n_units + 1), bounds=list(zip(lo, hi, strict=True)),
                       method="highs")

    h = 1e-4
    refs = [whole(v) for v in (0.5 - h, 0.5, 0.5 + h)]
    if any(r.status != 0 for r in refs):
        return
    pairs = np.arange(2 * n_units).reshape(n_units, 2) if fold else None
    form = DualForm(c, lb, ub, A[:first], b[:first], tie if fold else eqs,
                    np.ones(1 if fold else n_units + 1), fold=pairs, method=MASTER)
    assert form.fixed.tolist() == [j]
    form.solve()
    form.add_rows(A[first:], np.full(m - first, -np.inf), b[first:])
    assert form.solve()[0]
    assert form.values()[j] == 0.5
    assert form.objective == pytest.approx(refs[1].fun, rel=1e-9, abs=1e-9)
    (price,) = form.fixed_reduced_costs()
    lo, hi = ((refs[1].fun - refs[0].fun) / h, (refs[2].fun - refs[1].fun) / h)
    assert lo - 1e-6 <= price <= hi + 1e-6


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), n_units=st.integers(1, 4), m=st.integers(1, 8),
       first=st.integers(0, 8), fold=st.booleans(), n_def=st.integers(1, 3))
def test_defined_columns_are_written_through_the_others(seed, n_units, m, first, fold,
                                                        n_def):
    # columns m_k defined by an equality row each (m_k = sum_j w_kj pi_j, w >= 0, the
    # marginals constraint generation's programs carry) leave the dual with their rows;
    # the optimum and every column's value are linprog's on the whole program written
    # here, rows added after the first solve too
    c, lb, ub, A, b, simplex = _program(seed, n_units, 0, m)
    rng = np.random.default_rng(seed + 1)
    n_pi = 2 * n_units
    W = rng.uniform(0.0, 1.0, size=(n_def, n_pi)) * (rng.random((n_def, n_pi)) < 0.7)
    c = np.r_[c, rng.normal(size=n_def)]
    lb, ub = np.r_[lb, np.zeros(n_def)], np.r_[ub, np.full(n_def, np.inf)]
    A = sp.hstack([A, sp.csr_matrix((m, n_def))], format="csr")
    simplex = sp.hstack([simplex, sp.csr_matrix((n_units, n_def))], format="csr")
    defs = sp.csr_matrix(np.hstack([-W, np.eye(n_def)]))
    eqs = sp.vstack([simplex, defs], format="csr")
    ref = linprog(c, A_ub=A.toarray(), b_ub=b, A_eq=eqs.toarray(),
                  b_eq=np.r_[np.ones(n_units), np.zeros(n_def)],
                  bounds=list(zip(lb, ub, strict=True)), method="highs")
    if ref.status != 0:
        return
    first = min(first, m)
    pairs = np.arange(n_pi).reshape(n_units, 2) if fold else None
    given_eq = defs if fold else eqs
    rows = np.arange(n_def) + (0 if fold else n_units)
    form = DualForm(c, lb, ub, A[:first], b[:first], given_eq,
                    np.r_[np.zeros(0) if fold else np.ones(n_units), np.zeros(n_def)],
                    fold=pairs, defined=np.c_[n_pi + np.arange(n_def), rows], method=MASTER)
    form.solve()
    form.add_rows(A[first:], np.full(m - first, -np.inf), b[first:])
    assert form.solve()[0]
    x = form.values()
    assert form.objective == pytest.approx(ref.fun, rel=1e-9, abs=1e-9)
    assert c @ x == pytest.approx(ref.fun, rel=1e-9, abs=1e-9)
    assert np.allclose(x[n_pi:], W @ x[:n_pi], atol=1e-9)
    assert np.all(A @ x <= b + 1e-9) and np.allclose(simplex @ x, 1.0, atol=1e-9)

def test_columns_added_later_join_the_rows_that_follow():
    # min -x0 - x1 s.t. x0 + x1 <= 1 (optimum -1), then a column t (cost 0.5,
    # 0 <= t <= 0.5) with rows x0 - t <= 0.25 and x1 <= 0.1: x0 = 0.25 + t, so the
    # objective is -0.35 - 0.5 t, least at t = 0.5: x = (0.75, 0.1), objective -0.6
    form = DualForm(np.array([-1.0, -1.0]), np.zeros(2), np.full(2, np.inf),
                    sp.csr_matrix([[1.0, 1.0]]), np.array([1.0]), sp.csr_matrix((0, 2)),
                    np.zeros(0), method=MASTER)
    assert form.solve()[0] and form.objective == pytest.approx(-1.0)
    form.add_cols(np.array([0.5]), np.zeros(1), np.array([0.5]))
    form.add_rows(sp.csr_matrix([[1.0, 0.0, -1.0], [0.0, 1.0, 0.0]]),
                  np.full(2, -np.inf), np.array([0.25, 0.1]))
    assert form.solve()[0]
    assert form.values() == pytest.approx([0.75, 0.1, 0.5], abs=1e-9)
    assert form.objective == pytest.approx(-0.6, abs=1e-12)


def test_an_infeasible_program_is_said_so():
    form = DualForm(np.array([1.0]), np.array([0.0]), np.array([1.0]),
                    sp.csr_matrix([[-1.0]]), np.array([-2.0]), sp.csr_matrix((0, 1)),
                    np.zeros(0), method=MASTER)
    ok, status = form.solve()
    assert not ok and status.startswith("infeasible")


def test_rows_that_are_ranges_are_refused():
    form = DualForm(np.array([1.0]), np.array([0.0]), np.array([1.0]),
                    sp.csr_matrix((0, 1)), np.zeros(0), sp.csr_matrix((0, 1)), np.zeros(0),
                    method=MASTER)
    with pytest.raises(ValueError, match="A x <= b and A x = b only"):
        form.add_rows(sp.csr_matrix([[1.0]]), np.array([0.0]), np.array([1.0]))


@settings(max_examples=50, deadline=None)
@given(seed=st.integers(0, 10_000), n_pool=st.integers(0, 40), n_cuts=st.integers(0, 40),
       wide=st.booleans())
def test_generation_keeps_the_cuts_not_yet_in_the_pool(seed, n_pool, n_cuts, wide):
    from fairdecide.optimize.engine.rounds import unseen_cuts as _unseen

    rng = np.random.default_rng(seed)
    top = 2**40 if wide else 30  # wide: integer keys would overflow, rows compared whole
    pool = rng.integers(0, 30, size=(n_pool, 2))
    cuts = np.vstack([rng.integers(0, 30, size=(n_cuts, 2)),
                      np.array([[top, 1]] * wide, dtype=np.int64).reshape(-1, 2)])
    expected = [c for c in cuts.tolist() if c not in pool.tolist()]
    assert _unseen(cuts, pool).tolist() == expected


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), n_units=st.integers(1, 5), extra=st.integers(0, 3),
       m=st.integers(2, 10), fold=st.booleans())
def test_slack_rows_dropped_keep_the_optimum_and_the_basis(seed, n_units, extra, m, fold):
    # dropping rows slack at the optimum leaves it optimal (a relaxation whose optimum
    # is still feasible) and the basis of the rest (no simplex iteration); their duals
    # read 0, the others keep their places; added back, linprog's optimum again
    c, lb, ub, A, b, simplex = _program(seed, n_units, extra, m)
    n = len(c)
    ref = linprog(c, A_ub=A.toarray(), b_ub=b, A_eq=simplex.toarray(), b_eq=np.ones(n_units),
                  bounds=list(zip(lb, ub, strict=True)), method="highs")
    if ref.status != 0:
        return
    pairs = np.arange(2 * n_units).reshape(n_units, 2) if fold else None
    form = DualForm(c, lb, ub, A, b, sp.csr_matrix((0, n)) if fold else simplex,
                    np.zeros(0) if fold else np.ones(n_units), fold=pairs, method=MASTER)
    assert form.solve()[0]
    x, y = form.values(), form.ub_duals()
    slack = form.slacks(np.arange(m))
    assert np.allclose(slack, b - A @ x, atol=1e-9)
    gone = np.flatnonzero(slack > 1e-6)
    before = form.iterations
    form.drop_rows(gone)
    assert form.solve()[0]
    assert form.iterations == before
    assert form.objective == pytest.approx(ref.fun, rel=1e-9, abs=1e-9)
    assert np.isinf(form.slacks(gone)).all()
    y2 = form.ub_duals()
    assert len(y2) == m and np.all(y2[gone] == 0.0)
    assert np.allclose(np.delete(y2, gone), np.delete(y, gone), atol=1e-9)
    form.add_rows(A[gone], np.full(len(gone), -np.inf), b[gone])
    assert form.solve()[0]
    assert form.objective == pytest.approx(ref.fun, rel=1e-9, abs=1e-9)
    assert form.n_ub_rows == m + len(gone)


def test_a_definition_that_names_a_fixed_column_is_refused():
    # x2 = x0 + x1 defined by its row, x1 fixed: the row would leave the dual with its
    # share of x1's price, so DualForm says so instead
    eq = sp.csr_matrix([[-1.0, -1.0, 1.0]])
    with pytest.raises(ValueError, match="must not name a fixed column"):
        DualForm(np.array([1.0, 0.0, -1.0]), np.array([0.0, 0.5, 0.0]),
                 np.array([1.0, 0.5, np.inf]), sp.csr_matrix((0, 3)), np.zeros(0), eq,
                 np.zeros(1), defined=np.array([[2, 0]]), method=MASTER)
