"""Birkhoff-von Neumann decompositions and the doubly-stochastic completion.

The matrices are built here as known mixtures of permutations; every check rebuilds the
matrix from the returned permutations with its own loop (not the result's ``matrix``).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from fairdecide.assignment import birkhoff_decomposition, complete_doubly_stochastic
from fairdecide.exceptions import FairdecideError


def _mixture(n: int, k: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    w = rng.dirichlet(np.ones(k))
    P = np.zeros((n, n))
    for r in range(k):
        P[np.arange(n), rng.permutation(n)] += w[r]
    return P


def _rebuild(weights, perms, n):
    out = np.zeros((n, n))
    for w, perm in zip(weights, perms, strict=True):
        for i in range(n):
            out[i, perm[i]] += w
    return out


@given(n=st.integers(1, 8), k=st.integers(1, 12), seed=st.integers(0, 2**16))
def test_the_permutations_and_weights_rebuild_the_matrix(n, k, seed):
    P = _mixture(n, k, seed)
    dec = birkhoff_decomposition(P)
    assert np.all(dec.weights > 0) and dec.weights.sum() == pytest.approx(1.0, abs=1e-12)
    for perm in dec.permutations:
        assert sorted(perm.tolist()) == list(range(n))
    np.testing.assert_allclose(_rebuild(dec.weights, dec.permutations, n), P, atol=1e-8)
    assert len(dec.weights) <= max(1, int((P > 1e-9).sum()))  # one entry zeroed a step


def test_a_permutation_matrix_is_its_own_decomposition():
    perm = np.array([2, 0, 3, 1])
    dec = birkhoff_decomposition(np.eye(4)[perm])
    assert dec.weights.tolist() == [1.0]
    assert dec.permutations[0].tolist() == perm.tolist()


def test_a_few_large_permutations_come_back_as_themselves():
    """A mixture of three permutations of 300 people with no entry in common decomposes
    into exactly those three, with their weights."""
    base = np.random.default_rng(3).permutation(300)
    perms = [(base + r) % 300 for r in range(3)]  # disjoint: row i's columns differ
    w = np.array([0.5, 0.3, 0.2])
    P = np.zeros((300, 300))
    for wr, perm in zip(w, perms, strict=True):
        P[np.arange(300), perm] += wr
    dec = birkhoff_decomposition(P)
    got = {tuple(p.tolist()): float(x) for x, p in zip(dec.weights, dec.permutations,
                                                       strict=True)}
    assert got == pytest.approx({tuple(p.tolist()): x for x, p in zip(w, perms,
                                                                       strict=True)})


def test_sampled_assignments_have_the_matrix_as_marginals():
    """10^4 draws: each frequency within 5 standard errors sqrt(p (1 - p) / N) of P."""
    P = _mixture(5, 7, seed=11)
    draws = birkhoff_decomposition(P).sample(10_000, random_state=0)
    freq = np.zeros_like(P)
    for i in range(5):
        freq[i] = np.bincount(draws[:, i], minlength=5) / len(draws)
    se = np.sqrt(P * (1 - P) / len(draws))
    assert np.all(np.abs(freq - P) <= 5 * se + 1e-12)


@given(n=st.integers(1, 6), m=st.integers(1, 6), seed=st.integers(0, 2**16))
def test_the_completion_is_doubly_stochastic_around_the_block(n, m, seed):
    rng = np.random.default_rng(seed)
    P = rng.random((n, m))
    P /= max(P.sum(axis=1).max(), P.sum(axis=0).max()) * rng.uniform(1.0, 2.0)
    Q = complete_doubly_stochastic(P)
    assert Q.shape == (n + m, n + m)
    np.testing.assert_allclose(Q[:n, :m], P)
    np.testing.assert_allclose(Q.sum(axis=0), 1.0, atol=1e-12)
    np.testing.assert_allclose(Q.sum(axis=1), 1.0, atol=1e-12)
    dec = birkhoff_decomposition(Q)
    block = _rebuild(dec.weights, dec.permutations, n + m)[:n, :m]
    np.testing.assert_allclose(block, P, atol=1e-8)


@pytest.mark.parametrize("P, match", [
    (np.ones((2, 3)) / 3, "square"),
    (np.array([[0.6, 0.4], [0.6, 0.6]]), "sum to one"),
    (np.array([[1.5, -0.5], [-0.5, 1.5]]), "negative"),
    (np.array([[np.nan, 1.0], [1.0, 0.0]]), "NaN"),
    (np.zeros((0, 0)), "non-empty"),
])
def test_the_decomposition_refuses_what_is_not_doubly_stochastic(P, match):
    with pytest.raises(FairdecideError, match=match):
        birkhoff_decomposition(P)


def test_the_completion_refuses_rows_over_one():
    with pytest.raises(FairdecideError, match=r"row 0 sums to 1\.2"):
        complete_doubly_stochastic([[0.6, 0.6], [0.1, 0.1]])
