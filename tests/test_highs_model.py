"""The one HiGHS wrapper: its warm re-solves, cold restarts and infeasibility answers
agree with an independent solve (that no other module builds a HiGHS model is checked in
tests/test_layout.py)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

from fairdecide.optimize.engine import highs_model
from fairdecide.optimize.engine.highs_model import HighsModel


def _random_lp(seed: int, n: int, m: int):
    """min c x  s.t.  A x <= b (feasible at x0), sum x = 1 (a simplex), 0 <= x <= 1."""
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(m, n))
    x0 = rng.dirichlet(np.ones(n))
    b = A @ x0 + rng.uniform(0.0, 0.2, m)
    return rng.normal(size=n), A, b


def _model(c, A, b):
    n, m = len(c), len(b)
    return HighsModel(c, np.zeros(n), np.ones(n), np.vstack([A, np.ones((1, n))]),
                      np.r_[np.full(m, -np.inf), 1.0], np.r_[b, 1.0])


def _linprog(c, A, b):
    res = linprog(c, A_ub=A, b_ub=b, A_eq=np.ones((1, len(c))), b_eq=[1.0],
                  bounds=(0, 1), method="highs")
    assert res.status == 0
    return res.fun


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(2, 12), m=st.integers(1, 8),
       k=st.integers(1, 6))
def test_warm_resolve_after_growing_equals_a_cold_solve(seed, n, m, k):
    """Columns then rows appended to a solved model: the warm optimum equals scipy's
    cold one on the grown program, and the row duals certify it (c - A^T y >= 0 at
    the bounds' sides, and b . y + bounds = objective)."""
    c, A, b = _random_lp(seed, n + k, m + 1)
    model = _model(c[:n], A[:m, :n], b[:m])
    model.solve()  # optimal or infeasible: either leaves a basis to resume from
    model.add_cols(np.vstack([A[:m, n:], np.ones((1, k))]), c[n:], np.zeros(k), np.ones(k))
    model.add_rows(A[m:], [-np.inf], b[m:])
    ok, status = model.solve()
    assert ok, status
    # the grown program's rows: A[:m], the simplex row, then the appended row
    full_A = np.vstack([A[:m], np.ones((1, n + k)), A[m:]])
    ref = linprog(c, A_ub=np.vstack([A[:m], A[m:]]), b_ub=b, A_eq=np.ones((1, n + k)),
                  b_eq=[1.0], bounds=(0, 1), method="highs")
    assert model.objective == pytest.approx(ref.fun, abs=1e-8)
    x, y = model.values(), model.row_duals()
    assert np.all(full_A[:m] @ x <= b[:m] + 1e-8) and abs(x.sum() - 1) < 1e-8
    d = c - full_A.T @ y  # reduced costs: >= 0 where x sits at 0, <= 0 where at 1
    assert np.all(d[x < 1e-9] >= -1e-8) and np.all(d[x > 1 - 1e-9] <= 1e-8)


def test_a_stalled_warm_start_restarts_cold(monkeypatch):
    """A warm re-solve over its iteration allowance is solved again from scratch, to the
    same optimum, and counted."""
    monkeypatch.setattr(highs_model, "WARM_ITERATIONS_MIN", 1)
    monkeypatch.setattr(highs_model, "WARM_ITERATIONS", 0)
    c, A, b = _random_lp(3, 40, 12)
    model = _model(c, A, b)
    assert model.solve()[0] and model.cold_restarts == 0
    model.set_costs(np.arange(40), -c)  # the opposite corner: many pivots from the basis
    ok, _ = model.solve()
    assert ok and model.cold_restarts == 1
    assert model.objective == pytest.approx(_linprog(-c, A, b), abs=1e-9)


def test_an_infeasible_program_says_infeasible():
    """Presolve's "infeasible or unbounded" is resolved: x >= 0, sum x = 1 and
    sum x <= 0.5 has no point, and the model says so in words the router reads."""
    model = HighsModel(np.ones(3), np.zeros(3), np.full(3, np.inf),
                       sp.csr_matrix(np.ones((2, 3))), np.array([1.0, -np.inf]),
                       np.array([1.0, 0.5]))
    ok, status = model.solve()
    assert not ok and status.startswith("infeasible")


def test_an_optimisation_prints_nothing_to_standard_output(fresh_imports):
    """highspy 1.16 prints its banner when a Highs() is built, before output_flag can be
    unset; the library's one HiGHS wrapper builds its instances silently. A fresh process,
    because the banner comes once per process: the one of tests/conftest.py, which solves
    the bail problem under independence (and prints nothing else)."""
    assert "highspy" in fresh_imports["release_counts"]  # HiGHS was loaded and ran
    assert fresh_imports["stdout"] == ""
