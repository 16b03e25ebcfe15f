"""The program's sparse rows and marginal maps against dense computations written here."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from fairdecide.optimize.program.assembly import RowBlocks
from fairdecide.optimize.program.policy_program import _marginal_map


@settings(max_examples=60, deadline=None)
@given(kinds=st.lists(st.sampled_from(["coo", "csr"]), min_size=1, max_size=6),
       n_cols=st.integers(1, 9), seed=st.integers(0, 10_000))
def test_rows_in_triplets_and_csr_blocks_stack_in_order(kinds, n_cols, seed):
    rng = np.random.default_rng(seed)
    rows, dense = RowBlocks(), []
    for kind in kinds:
        k = int(rng.integers(1, 4))
        block = rng.integers(-2, 3, (k, n_cols)).astype(float)
        block[rng.random(block.shape) < 0.5] = 0.0
        rhs = rng.normal(size=k)
        if kind == "coo":  # duplicated triplets are summed
            r, c = np.nonzero(block)
            r, c, v = np.r_[r, r], np.r_[c, c], np.r_[block[r, c], block[r, c]] / 2
            rows.add(r, c, v, rhs)
        else:
            csr = sp.csr_matrix(block)
            rows.add_csr(csr.indptr, csr.indices, csr.data, rhs)
        dense.append((block, rhs))
    A, b = rows.matrix(n_cols)
    np.testing.assert_allclose(A.toarray(), np.vstack([d for d, _ in dense]), atol=1e-15)
    np.testing.assert_array_equal(b, np.concatenate([r for _, r in dense]))
    assert A.shape == (rows.n, n_cols)


@settings(max_examples=60, deadline=None)
@given(n_u=st.integers(1, 12), n_z=st.integers(1, 3), n_a=st.integers(1, 3),
       n_y=st.integers(1, 3), zeros=st.booleans(), shared=st.booleans(),
       seed=st.integers(0, 10_000))
def test_marginal_map_is_the_group_marginal(n_u, n_z, n_a, n_y, zeros, shared, seed):
    rng = np.random.default_rng(seed)
    vals = rng.random((n_u, n_a, n_y))
    if zeros:
        vals[rng.random(vals.shape) < 0.4] = 0.0
    group = rng.integers(0, n_z, n_u)
    # each unit its own free row, or several units sharing rows (a group-blind policy)
    free = rng.integers(0, max(1, n_u // 2), n_u) if shared else np.arange(n_u)
    n_free = int(free.max()) + 1
    pi = rng.dirichlet(np.ones(n_a), n_free)

    def by_loops(v):
        m = np.zeros((n_z, n_a, n_y))
        for u in range(n_u):
            for a in range(n_a):
                for y in range(n_y):
                    m[group[u], a, y] += v[u, a, y] * pi[free[u], a]
        return m.ravel()

    B = _marginal_map(vals, group, free, n_z * n_a * n_y, n_free * n_a)
    np.testing.assert_allclose(B @ pi.ravel(), by_loops(vals), atol=1e-14)
    # a belief's scenarios share the pattern: the second map reuses the first's
    layout = [None]
    other = rng.random(vals.shape) + 0.1
    for v in (vals, other):
        B = _marginal_map(v, group, free, n_z * n_a * n_y, n_free * n_a, layout)
        np.testing.assert_allclose(B @ pi.ravel(), by_loops(v), atol=1e-14)
    assert layout[0] is not None
