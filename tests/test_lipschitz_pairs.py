"""The exact all-pairs search for Lipschitz violations (the certificate of issue 11):
against a brute-force loop over every pair, planted violations, metrics, bad input."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial.distance import cdist

from fairdecide.criteria._pairs import PairMetric, violated_pairs
from fairdecide.exceptions import FairdecideError


def _rows(rng, n, k):
    p = rng.dirichlet(np.ones(k), size=n)
    return p


def _brute(P, X, L, dist):
    n = len(P)
    best, pairs = -np.inf, []
    for i in range(n):
        for j in range(i + 1, n):
            v = 0.5 * np.abs(P[i] - P[j]).sum() - L * dist(X[i], X[j])
            best = max(best, v)
            if v > 0:
                pairs.append((i, j))
    return best, pairs


@settings(max_examples=25, deadline=None, derandomize=True)
@given(n=st.integers(2, 40), d=st.integers(1, 4), k=st.integers(2, 4),
       L=st.sampled_from([0.3, 1.0, 5.0]), block=st.sampled_from([3, 7, 1024]),
       seed=st.integers(0, 10_000))
def test_matches_brute_force(n, d, k, L, block, seed):
    rng = np.random.RandomState(seed)
    P, X = _rows(rng, n, k), rng.normal(size=(n, d))
    found = violated_pairs(P, X, L, block=block)
    best, pairs = _brute(P, X, L, lambda a, b: np.linalg.norm(a - b))
    assert found.max_violation == pytest.approx(best, abs=1e-12)
    assert [tuple(p) for p in found.pairs] == pairs
    assert found.pairs_checked == n * (n - 1) // 2
    i, j = found.worst_pair
    assert i < j
    assert 0.5 * np.abs(P[i] - P[j]).sum() - L * np.linalg.norm(X[i] - X[j]) == \
        pytest.approx(best, abs=1e-12)


@settings(max_examples=40, deadline=None, derandomize=True)
@given(n=st.integers(2, 40), k=st.integers(2, 3), L=st.sampled_from([0.05, 0.3, 1.0]),
       block=st.sampled_from([3, 7, 1024]), per_unit=st.integers(1, 4),
       threshold=st.sampled_from([0.0, 0.1]), seed=st.integers(0, 10_000))
def test_per_unit_keeps_the_worst_pairs_of_each_individual(n, k, L, block, per_unit,
                                                           threshold, seed):
    # the search constraint generation runs: each individual's per_unit most violated
    # pairs above the threshold, the exact maximum over all pairs, and every violated
    # pair when nothing was left out; against brute force (vertices make ties and
    # crowded rows, small L makes most pairs violated)
    rng = np.random.RandomState(seed)
    P = np.eye(k)[rng.randint(0, k, n)] if seed % 2 else _rows(rng, n, k)
    X = rng.normal(size=(n, 2))
    found = violated_pairs(P, X, L, threshold=threshold, block=block, per_unit=per_unit)
    V = 0.5 * np.abs(P[:, None] - P[None]).sum(axis=2) - L * cdist(X, X)
    iu = np.triu_indices(n, 1)
    assert found.max_violation == pytest.approx(V[iu].max(), abs=1e-12)
    above = {(int(i), int(j)) for i, j in zip(*iu, strict=True) if V[i, j] > threshold}
    got = {tuple(map(int, p)) for p in found.pairs}
    assert got <= above
    assert np.allclose(found.violations, V[found.pairs[:, 0], found.pairs[:, 1]], atol=1e-12)
    if not found.truncated:
        assert got == above
    for u in range(n):  # an individual with violated pairs keeps min(per_unit, all)
        # of them among the pairs of either end, its worst one included
        mine = [V[min(u, w), max(u, w)] for w in range(n) if w != u
                and (min(u, w), max(u, w)) in above]
        if mine:
            kept = [found.violations[q] for q, p in enumerate(found.pairs) if u in p]
            assert len(kept) >= min(per_unit, len(mine))
            assert max(kept) == pytest.approx(max(mine), abs=1e-12)


def test_a_planted_violation_is_found_among_far_away_rows():
    # a smooth policy on 3000 people, certified; then one row changed: the checker finds
    # exactly the pairs it breaks
    rng = np.random.RandomState(0)
    X = rng.normal(size=(3000, 3)) * 10
    logits = 0.05 * X[:, 0]
    P = np.c_[1 / (1 + np.exp(logits)), 1 / (1 + np.exp(-logits))]
    clean = violated_pairs(P, X, constant=0.05, block=500)
    assert clean.max_violation <= 1e-12 and len(clean.pairs) == 0
    bad = P.copy()
    bad[1234] = [1.0, 0.0] if P[1234, 0] < 0.5 else [0.0, 1.0]
    found = violated_pairs(bad, X, constant=0.05, block=500)
    assert len(found.pairs) > 0
    assert all(1234 in pair for pair in found.pairs.tolist())
    # every pair reported violates, and the worst matches a direct computation
    tv = 0.5 * np.abs(bad[found.pairs[:, 0]] - bad[found.pairs[:, 1]]).sum(axis=1)
    d = np.linalg.norm(X[found.pairs[:, 0]] - X[found.pairs[:, 1]], axis=1)
    assert np.allclose(found.violations, tv - 0.05 * d) and np.all(found.violations > 0)
    others = np.setdiff1d(np.arange(3000), [1234])
    direct = (0.5 * np.abs(bad[others] - bad[1234]).sum(axis=1)
              - 0.05 * np.linalg.norm(X[others] - X[1234], axis=1))
    assert found.max_violation == pytest.approx(direct.max(), abs=1e-12)
    assert set(found.pairs[:, 0].tolist() + found.pairs[:, 1].tolist()) - {1234} == set(
        others[direct > 0].tolist())


def test_screening_does_not_lose_pairs_to_cancellation():
    # large feature values and tiny differences: ||a||^2 + ||b||^2 - 2 a.b cancels, the
    # exact recomputation keeps the answer right
    X = np.array([[1e6, 1e6], [1e6 + 1e-3, 1e6], [1e6, 1e6 + 2e-3]])
    P = np.array([[1.0, 0.0], [0.999, 0.001], [0.9, 0.1]])
    found = violated_pairs(P, X, constant=10.0)
    best, pairs = _brute(P, X, 10.0, lambda a, b: np.linalg.norm(a - b))
    assert found.max_violation == pytest.approx(best, abs=1e-9)
    assert [tuple(p) for p in found.pairs] == pairs


@pytest.mark.parametrize("kind", ["weighted", "mahalanobis", "callable"])
def test_metrics_match_scipy(kind):
    rng = np.random.RandomState(1)
    P, X = _rows(rng, 30, 3), rng.normal(size=(30, 3))
    w = np.array([2.0, 0.5, 0.0])
    A = rng.normal(size=(3, 3))
    M = A @ A.T
    if kind == "weighted":
        metric = PairMetric("weighted", weights=w)
        D = np.sqrt(((X[:, None, :] - X[None, :, :]) ** 2 * w).sum(axis=2))
    elif kind == "mahalanobis":
        metric = PairMetric("mahalanobis", matrix=M)
        D = cdist(X, X, "mahalanobis", VI=M)
    else:
        metric = PairMetric(lambda a, b: cdist(a, b, "cityblock"))
        D = cdist(X, X, "cityblock")
    found = violated_pairs(P, X, 0.4, metric, block=7)
    iu = np.triu_indices(30, 1)
    tv = 0.5 * np.abs(P[:, None] - P[None]).sum(axis=2)
    v = (tv - 0.4 * D)[iu]
    assert found.max_violation == pytest.approx(v.max(), abs=1e-9)
    assert len(found.pairs) == int((v > 0).sum())


def test_bad_input():
    P, X = np.full((3, 2), 0.5), np.zeros((3, 1))
    with pytest.raises(FairdecideError, match="X contains NaN"):
        violated_pairs(P, np.array([[0.0], [np.nan], [1.0]]), 1.0)
    with pytest.raises(FairdecideError, match="at least 2"):
        violated_pairs(P[:1], X[:1], 1.0)
    with pytest.raises(FairdecideError, match="constant"):
        violated_pairs(P, X, 0.0)
    with pytest.raises(FairdecideError, match="rows has 3"):
        violated_pairs(P, X[:2], 1.0)
    with pytest.raises(FairdecideError, match="metric must be one of"):
        violated_pairs(P, X, 1.0, PairMetric("cosine"))
    with pytest.raises(FairdecideError, match="weights"):
        violated_pairs(P, X, 1.0, PairMetric("weighted", weights=[-1.0]))
    with pytest.raises(FairdecideError, match="semi-definite"):
        violated_pairs(P, X, 1.0, PairMetric("mahalanobis", matrix=[[-1.0]]))
    with pytest.raises(FairdecideError, match="not symmetric"):
        violated_pairs(P, np.arange(3.0)[:, None], 1.0,
                       PairMetric(lambda a, b: np.maximum(a - b.T, 0) + (a - b.T) ** 2))
    with pytest.raises(FairdecideError, match="negative"):
        violated_pairs(P, np.arange(3.0)[:, None], 1.0, PairMetric(lambda a, b: a - b.T))
    with pytest.raises(FairdecideError, match="diagonal"):
        violated_pairs(P, X, 1.0, PairMetric(lambda a, b: np.ones((len(a), len(b)))))

    def boom(a, b):
        raise RuntimeError("no")

    with pytest.raises(FairdecideError, match="raised RuntimeError"):
        violated_pairs(P, X, 1.0, PairMetric(boom))


@settings(max_examples=40, deadline=None, derandomize=True)
@given(n=st.integers(3, 60), d=st.sampled_from([1, 3, 40, 120]),
       scale=st.sampled_from([1e-3, 1.0, 1e3]), offset=st.sampled_from([0.0, 1e4]),
       delta=st.sampled_from([1e-12, 1e-9, 1e-6]), block=st.sampled_from([4, 1024]),
       seed=st.integers(0, 10_000))
def test_the_single_precision_screen_keeps_pairs_at_the_boundary(n, d, scale, offset, delta,
                                                                 block, seed):
    """Pairs whose exact violation is a hair above or below 0 (one end's row set at
    L d (1 +- delta) from the other's), features of any scale, far from the origin and in
    many dimensions: the screen (single precision) must keep every pair whose exact
    violation (double precision, written here) exceeds the threshold, and the maximum."""
    rng = np.random.RandomState(seed)
    X = offset + scale * rng.normal(size=(n, d))
    dist0 = np.sqrt(((X[1:] - X[0]) ** 2).sum(axis=1))
    L = 0.4 / max(dist0.max(), 1e-300)
    sign = np.where(rng.rand(n - 1) < 0.5, 1.0, -1.0)
    p = np.r_[0.5, 0.5 + L * dist0 * (1.0 + sign * delta)]
    P = np.c_[p, 1.0 - p]
    found = violated_pairs(P, X, L, block=block)
    iu = np.triu_indices(n, 1)
    diff = X[iu[0]] - X[iu[1]]
    V = 0.5 * np.abs(P[iu[0]] - P[iu[1]]).sum(axis=1) - L * np.sqrt(
        np.einsum("ij,ij->i", diff, diff))
    want = {(int(i), int(j)) for i, j, v in zip(*iu, V, strict=True) if v > 0}
    assert {tuple(map(int, q)) for q in found.pairs} == want
    assert found.max_violation == pytest.approx(V.max(), abs=1e-15)


@settings(max_examples=40, deadline=None, derandomize=True)
@given(n=st.integers(2, 60), k=st.integers(2, 3), L=st.sampled_from([0.05, 0.3, 1.0]),
       block=st.sampled_from([2, 5, 1024]), levels=st.integers(1, 3),
       threshold=st.sampled_from([0.0, 1e-7, 0.1]), touch=st.booleans(),
       scale=st.sampled_from([1.0, 0.7]), seed=st.integers(0, 10_000))
def test_blocks_of_equal_rows_keep_the_exact_maximum(n, k, L, block, levels, threshold,
                                                      touch, scale, seed):
    # rows of a few values only (as a Lipschitz optimum's, mostly at a vertex), so that
    # whole blocks hold one row and are not screened: the maximum over all pairs (or
    # over the pairs touching the rows given) and every pair above the threshold are
    # still brute force's, also when every pair is slack (the maximum < 0) and when the
    # rows do not sum to 1 (scale: no shortcut for two actions)
    rng = np.random.RandomState(seed)
    values = rng.dirichlet(np.ones(k), size=levels) * scale
    P = values[rng.randint(0, levels, n)]
    X = rng.normal(size=(n, 2))
    touching = rng.random_sample(n) < 0.5 if touch else None
    if touching is not None and not touching.any():
        touching[0] = True
    found = violated_pairs(P, X, L, threshold=threshold, block=block, touching=touching)
    V = 0.5 * np.abs(P[:, None] - P[None]).sum(axis=2) - L * cdist(X, X)
    iu = np.triu_indices(n, 1)
    mask = np.ones(len(iu[0]), dtype=bool) if touching is None else (
        touching[iu[0]] | touching[iu[1]])
    if not mask.any():
        return
    assert found.max_violation == pytest.approx(V[iu][mask].max(), abs=1e-12)
    i, j = found.worst_pair
    assert V[i, j] == pytest.approx(found.max_violation, abs=1e-12)
    above = {(int(a), int(b)) for a, b, m in zip(*iu, mask, strict=True)
             if m and V[a, b] > threshold}
    assert {tuple(map(int, p)) for p in found.pairs} == above


def test_blocks_of_one_row_are_not_screened(monkeypatch):
    # a deterministic policy on 4,096 people at two actions, as the blocks of 1,024 fall
    # when its rows are put in order: of the 10 pairs of blocks, the 6 that hold one
    # row on both sides have D_TV = 0 everywhere and are not screened (a pair of the
    # others, screened, violates by more than their bound, 0)
    from fairdecide.criteria import _pair_screen

    screened = []
    block = _pair_screen.Screen.block

    def counted(self, a, b):
        screened.append((a.start, b.start))
        return block(self, a, b)

    monkeypatch.setattr(_pair_screen.Screen, "block", counted)
    rng = np.random.RandomState(0)
    n = 4096
    X = rng.normal(size=(n, 3))
    act = np.r_[np.zeros(2048, dtype=int), np.ones(2048, dtype=int)]
    rng.shuffle(act)
    P = np.eye(2)[act]
    found = violated_pairs(P, X, 0.3, threshold=1e-7)
    V = np.abs(P[:, None, 1] - P[None, :, 1]) - 0.3 * cdist(X, X)
    assert found.max_violation == pytest.approx(V[np.triu_indices(n, 1)].max(), abs=1e-12)
    assert len(screened) == 4
