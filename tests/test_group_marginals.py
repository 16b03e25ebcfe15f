"""The group marginal of a tabular policy over K scenarios, and a table from counts."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fairdecide import DecisionTable
from fairdecide.exceptions import FairdecideError
from fairdecide.worlds.table import scenario_marginals


def _loops(p_xz, rows, p_y):
    """M_k[z, a, y] = sum_x P_k(x, z) pi(a | x, z) P_k(y | [a,] x, z), by loops."""
    K, n_x, n_z = p_xz.shape
    n_a, n_y = rows.shape[2], p_y.shape[-1]
    M = np.zeros((K, n_z, n_a, n_y))
    for k in range(K):
        for x in range(n_x):
            for z in range(n_z):
                for a in range(n_a):
                    py = p_y[k, x, z] if p_y.ndim == 4 else p_y[k, x, z, a]
                    M[k, z, a] += p_xz[k, x, z] * rows[x, z, a] * py
    return M


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 4), st.integers(1, 4), st.integers(1, 3), st.integers(2, 3),
       st.integers(2, 3), st.booleans(), st.integers(0, 2**32 - 1))
def test_scenario_marginals_are_the_sums(K, n_x, n_z, n_a, n_y, intervention, seed):
    rng = np.random.default_rng(seed)
    p_xz = rng.dirichlet(np.ones(n_x * n_z), size=K).reshape(K, n_x, n_z)
    rows = rng.dirichlet(np.ones(n_a), size=(n_x, n_z))
    shape = (K, n_x, n_z, n_a) if intervention else (K, n_x, n_z)
    p_y = rng.dirichlet(np.ones(n_y), size=shape)
    M = scenario_marginals(p_xz, rows, p_y)
    np.testing.assert_allclose(M, _loops(p_xz, rows, p_y), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(M.sum(axis=(1, 2, 3)), 1.0, rtol=1e-12)


def test_a_table_from_counts():
    n = np.array([[[3, 1], [0, 0]], [[1, 1], [2, 2]]])
    table = DecisionTable.from_counts(n)
    np.testing.assert_array_equal(table.joint, n / 10)
    np.testing.assert_array_equal(table.group_marginal(), n / 10)
    for bad in (np.zeros((2, 2, 2)), np.full((1, 2, 2), np.nan), -n, np.ones(3)):
        with pytest.raises(FairdecideError):
            DecisionTable.from_counts(bad)


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 60), st.integers(0, 2**32 - 1))
def test_count_table_counts_rows_and_atoms(n, seed):
    from fairdecide import LoggedCounts, LoggedData
    from fairdecide.data.counts import count_table
    from fairdecide.datasets import make_bail_problem

    problem, world = make_bail_problem()
    rng = np.random.default_rng(seed)
    x = rng.choice(list(world.x_labels), n)
    z = rng.choice(list(world.group_labels), n)
    a = rng.choice(list(problem.action_labels), n)
    y = rng.choice(list(problem.outcome_labels), n)
    data = LoggedData(x, z, y, a, x_labels=world.x_labels, group_labels=world.group_labels)
    by_hand = np.zeros((len(world.x_labels), len(world.group_labels), problem.n_actions,
                        problem.n_outcomes))
    for row in zip(x, z, a, y, strict=True):  # row by row, labels looked up in the test
        by_hand[world.x_labels.index(row[0]), world.group_labels.index(row[1]),
                problem.action_labels.index(row[2]), problem.outcome_labels.index(row[3])] += 1
    np.testing.assert_array_equal(count_table(data, problem), by_hand)
    np.testing.assert_array_equal(count_table(LoggedCounts.from_data(data), problem), by_hand)
    np.testing.assert_array_equal(count_table(data, problem, actions=False),
                                  by_hand.sum(axis=2))


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 40), st.integers(1, 3), st.integers(2, 3), st.integers(2, 3),
       st.integers(0, 2**32 - 1))
def test_row_counts_are_the_sums(n, n_z, n_a, n_y, seed):
    from fairdecide.worlds.table import row_counts

    rng = np.random.default_rng(seed)
    z, y = rng.integers(n_z, size=n), rng.integers(n_y, size=n)
    rows = rng.dirichlet(np.ones(n_a), size=n)
    by_hand = np.zeros((n_z, n_a, n_y))
    for i in range(n):
        by_hand[z[i], :, y[i]] += rows[i]
    np.testing.assert_allclose(row_counts(z, rows, y, n_z, n_y), by_hand, rtol=1e-12)
