"""Group properties of smooth policies and meritocracy (issue 11): epsilon-parity, the
worst-case bias of L-Lipschitz policies against an independent all-pairs LP and the
transport dual, and meritocracy counts against a brute-force loop over every pair."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog
from scipy.spatial.distance import cdist

from fairdecide.exceptions import FairdecideError
from fairdecide.smoothness.meritocracy import meritocracy
from fairdecide.smoothness.parity import parity, worst_case_bias


def _tv(P):
    return 0.5 * np.abs(P[:, None, :] - P[None, :, :]).sum(axis=2)


def _all_pairs_lp(D, S, T, L, w=None):
    """max mean_S q - mean_T q s.t. |q_i - q_j| <= L D_ij for every pair, 0 <= q <= 1,
    written out over all pairs and solved by scipy (the reference for the generator)."""
    n = len(D)
    w = np.ones(n) if w is None else np.asarray(w, float)
    c = np.zeros(n)
    np.add.at(c, S, w[S] / w[S].sum())
    np.add.at(c, T, -w[T] / w[T].sum())
    i, j = np.triu_indices(n, 1)
    A = np.zeros((2 * len(i), n))
    k = np.arange(len(i))
    A[k, i], A[k, j] = 1, -1
    A[len(i) + k, i], A[len(i) + k, j] = -1, 1
    res = linprog(-c, A_ub=A, b_ub=np.r_[L * D[i, j], L * D[i, j]], bounds=(0, 1),
                  method="highs")
    assert res.status == 0
    return -res.fun


def _assert_lipschitz(res, D, L):
    """The returned policy, checked on every pair by brute force."""
    assert np.all(_tv(res.rows) <= L * D + 1e-9)
    assert res.certified and res.max_violation <= 1e-9


# --- parity -------------------------------------------------------------------------


def test_parity_by_hand_and_as_the_largest_event_difference():
    rows = np.array([[1.0, 0.0, 0.0], [0.5, 0.3, 0.2], [0.0, 1.0, 0.0], [0.2, 0.2, 0.6]])
    res = parity(rows, S=[0, 1], T=np.array([False, False, True, True]))
    assert res.mixture_s == pytest.approx([0.75, 0.15, 0.1])
    assert res.mixture_t == pytest.approx([0.1, 0.6, 0.3])
    assert res.tv == pytest.approx(0.65) and res.actions == (0,)
    best = max(res.mixture_s[list(A)].sum() - res.mixture_t[list(A)].sum()
               for r in range(4) for A in itertools.combinations(range(3), r))
    assert res.tv == pytest.approx(best)
    # weights, overlapping sets, and S = T
    w = [3.0, 1.0, 1.0, 1.0]
    res_w = parity(rows, [0, 1], [1, 2], weights=w)
    assert res_w.mixture_s == pytest.approx((3 * rows[0] + rows[1]) / 4)
    assert res_w.mixture_t == pytest.approx((rows[1] + rows[2]) / 2)
    assert parity(rows, [2, 3], [3, 2]).tv == 0 and parity(rows, [2, 3], [3, 2]).actions == ()
    assert "D_TV" in res.summary() and repr(res).startswith("ParityResult(tv=0.65")


@pytest.mark.parametrize("S, T, weights, match", [
    ([], [1], None, "S is empty"),
    ([0], np.zeros(4, bool), None, "T is empty"),
    ([0, 4], [1], None, "S has index 4, outside 0..3"),
    ([0], [-1], None, "T has index -1"),
    ([0, 0], [1], None, "more than once"),
    (np.ones(3, bool), [1], None, "mask of length 3"),
    ([0.0], [1], None, "integer indices"),
    ([[0]], [1], None, "1-d array"),
    ([0], [1], [1, -1, 1, 1], "non-negative"),
    ([0], [1], [1, 0, 1, 1], "zero on every member of T"),
    ([0], [1], [1, np.nan, 1, 1], "weights contains NaN"),
])
def test_parity_bad_sets_and_weights(S, T, weights, match):
    rows = np.full((4, 2), 0.5)
    with pytest.raises(FairdecideError, match=match):
        parity(rows, S, T, weights=weights)


def test_parity_bad_rows():
    with pytest.raises(FairdecideError, match="rows must sum to one"):
        parity([[0.5, 0.6], [1.0, 0.0]], [0], [1])
    with pytest.raises(FairdecideError, match="rows contains NaN"):
        parity([[np.nan, 1.0], [1.0, 0.0]], [0], [1])


# --- worst-case bias ----------------------------------------------------------------


def test_bias_on_a_line_by_hand():
    X = np.arange(4.0)  # people at 0, 1, 2, 3
    res = worst_case_bias(X, [0], [3], constant=0.1)
    assert res.value == pytest.approx(0.3, abs=1e-12)
    assert res.rows[0, 0] - res.rows[3, 0] == pytest.approx(0.3, abs=1e-12)
    _assert_lipschitz(res, cdist(X[:, None], X[:, None]), 0.1)
    assert res.emd == pytest.approx(3.0) and res.dwork_bound == pytest.approx(0.3)
    assert res.emd_truncated == pytest.approx(0.3)
    # L d >= 1: the bias is clipped at 1, and Dwork's bound (1.5) is not attained
    clipped = worst_case_bias(X, [0], [3], constant=0.5)
    assert clipped.value == pytest.approx(1.0) and clipped.dwork_bound == pytest.approx(1.5)
    assert clipped.emd_truncated == pytest.approx(1.0)
    # overlapping sets: mean(q0, q1) - mean(q1, q2) = (q0 - q2) / 2 <= L
    assert worst_case_bias(X, [0, 1], [1, 2], 0.1).value == pytest.approx(0.1, abs=1e-12)
    assert worst_case_bias(X, [1, 2], [2, 1], 0.1).value == pytest.approx(0.0, abs=1e-12)
    # weights: (3 q0 + q1) / 4 - q3 <= (3 (0.3) + 0.2) / 4
    res_w = worst_case_bias(X, [0, 1], [3], 0.1, weights_rows=[3, 1, 1, 1])
    assert res_w.value == pytest.approx(0.275, abs=1e-12)
    assert res_w.emd == pytest.approx((3 * 3 + 2) / 4)
    # more actions: the same value, the extra actions unused
    res3 = worst_case_bias(X, [0], [3], 0.1, n_actions=3)
    assert res3.rows.shape == (4, 3) and np.all(res3.rows[:, 2] == 0)
    assert res3.value == pytest.approx(0.3)
    assert "Dwork" in res.summary() and repr(res).startswith("BiasResult(value=0.3")
    row = res.to_frame().iloc[0]  # the result protocol: the numbers above, one row
    assert (row["bias"], row["dwork_bound"], row["emd_truncated"]) == pytest.approx(
        (0.3, 0.3, 0.3)) and bool(row["certified"])


@settings(max_examples=15)
@given(n=st.integers(2, 9), d=st.integers(1, 3), L=st.sampled_from([0.2, 0.7, 3.0]),
       metric=st.sampled_from(["euclidean", "weighted", "mahalanobis"]),
       weighted_rows=st.booleans(), seed=st.integers(0, 10_000))
def test_bias_matches_an_all_pairs_lp(n, d, L, metric, weighted_rows, seed):
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n, d))
    S = rng.choice(n, size=rng.randint(1, n + 1), replace=False)
    T = rng.choice(n, size=rng.randint(1, n + 1), replace=False)
    w = rng.uniform(0.5, 2.0, size=n) if weighted_rows else None
    kw, Y = {}, X
    if metric == "weighted":
        kw["weights"] = rng.uniform(0, 2, size=d)
        Y = X * np.sqrt(kw["weights"])
    elif metric == "mahalanobis":
        B = rng.normal(size=(d, d))
        kw["matrix"] = B @ B.T
        Y = X @ B
    D = cdist(Y, Y)
    res = worst_case_bias(X, S, T, L, metric, weights_rows=w, **kw)
    expected = _all_pairs_lp(D, S, T, L, w)
    assert res.value == pytest.approx(expected, abs=1e-8)
    _assert_lipschitz(res, D, L)
    assert parity(res.rows, S, T, weights=w).tv == pytest.approx(max(res.value, 0), abs=1e-12)
    # the transport dual: equal for a metric, and Dwork's bound above it
    assert res.emd_truncated == pytest.approx(res.value, abs=1e-8)
    assert res.value <= res.dwork_bound + 1e-9


def test_bias_by_constraint_generation_beyond_all_pairs():
    # n > 200: the first LP has nearest-neighbour pairs only; the exact search adds the
    # rest. The value is certified by the transport dual and the policy by brute force
    rng = np.random.RandomState(3)
    X = rng.normal(size=(300, 2))
    S = np.flatnonzero(X[:, 0] + 0.5 * rng.normal(size=300) > 0)
    T = np.setdiff1d(np.arange(300), S)
    res = worst_case_bias(X, S, T, constant=0.6)
    assert res.rounds > 1 and res.n_pairs < 300 * 299 // 2
    assert res.emd_truncated == pytest.approx(res.value, abs=1e-8)
    _assert_lipschitz(res, cdist(X, X), 0.6)
    assert 0 < res.value < 1


def test_bias_with_callable_metrics():
    rng = np.random.RandomState(4)
    X = rng.uniform(size=(230, 2))
    S, T = np.flatnonzero(X[:, 1] > 0.6), np.flatnonzero(X[:, 1] < 0.3)

    def l1(A, B):
        return cdist(A, B, "cityblock")

    res = worst_case_bias(X, S, T, constant=1.5, metric=l1)  # neighbours from the callable
    assert res.emd_truncated == pytest.approx(res.value, abs=1e-8)
    _assert_lipschitz(res, l1(X, X), 1.5)
    # squared euclidean is no metric: the LP over all pairs still holds, the transport
    # values only bound it
    Xs, Ss, Ts = X[:12], [0, 1, 2], [5, 6, 7, 8]

    def sq(A, B):
        return cdist(A, B, "sqeuclidean")

    res_sq = worst_case_bias(Xs, Ss, Ts, 2.0, metric=sq)
    assert res_sq.value == pytest.approx(_all_pairs_lp(sq(Xs, Xs), Ss, Ts, 2.0), abs=1e-8)
    assert res_sq.value <= res_sq.emd_truncated + 1e-9 <= res_sq.dwork_bound + 2e-9


def _negative(A, B):
    return -cdist(A, B)


def _asymmetric(A, B):
    return cdist(A, B) + np.arange(len(B))[None, :]


def _raising(A, B):
    raise RuntimeError("no distance today")


@pytest.mark.parametrize("X, S, T, L, kw, match", [
    ([[0.0], [np.nan], [1.0]], [0], [2], 1.0, {}, "X contains NaN"),
    ([[0.0], [np.inf], [1.0]], [0], [2], 1.0, {}, "X contains NaN or infinite"),
    ([[0.0]], [0], [0], 1.0, {}, "at least 2 individuals"),
    ([[0.0], [1.0]], [], [1], 1.0, {}, "S is empty"),
    ([[0.0], [1.0]], [0], [2], 1.0, {}, "T has index 2"),
    ([[0.0], [1.0]], [0], [1], 0.0, {}, "constant must be a finite number in"),
    ([[0.0], [1.0]], [0], [1], -1.0, {}, "constant"),
    ([[0.0], [1.0]], [0], [1], np.inf, {}, "constant"),
    ([[0.0], [1.0]], [0], [1], 1.0, {"n_actions": 1}, "n_actions must be an integer >= 2"),
    ([[0.0], [1.0]], [0], [1], 1.0, {"metric": "cosine"}, "metric must be one of"),
    ([[0.0], [1.0]], [0], [1], 1.0, {"metric": 3}, "metric must be one of"),
    ([[0.0], [1.0]], [0], [1], 1.0, {"metric": "weighted"}, "needs weights"),
    ([[0.0], [1.0]], [0], [1], 1.0, {"weights": [1.0]}, "weights is only used"),
    ([[0.0], [1.0]], [0], [1], 1.0, {"metric": "mahalanobis"}, "needs matrix"),
    ([[0.0], [1.0]], [0], [1], 1.0, {"metric": "weighted", "weights": [-1.0]},
     "non-negative"),
    ([[0.0], [1.0]], [0], [1], 1.0, {"weights_rows": [1.0, 0.0]}, "zero on every member"),
    ([[0.0], [1.0]], [0], [1], 1.0, {"metric": _negative}, "negative or non-finite"),
    ([[0.0], [1.0]], [0], [1], 1.0, {"metric": _asymmetric}, "not symmetric"),
    ([[0.0], [1.0]], [0], [1], 1.0, {"metric": _raising}, "raised RuntimeError"),
])
def test_bias_bad_input(X, S, T, L, kw, match):
    with pytest.raises(FairdecideError, match=match):
        worst_case_bias(X, S, T, L, **kw)


# --- meritocracy --------------------------------------------------------------------


def _brute_merit(p, v, tol):
    """Every violating pair (i, j), keyed worst first (gap, then worth gap)."""
    n = len(p)
    return {(i, j): (-(p[j] - p[i]), -(v[i] - v[j])) for i in range(n) for j in range(n)
            if v[i] > v[j] and p[j] > p[i] + tol}


def _check_against_brute(res, p, v, tol, max_pairs):
    brute = _brute_merit(p, v, tol)
    assert res.n_violations == len(brute) and res.meritocratic == (not brute)
    listed = [tuple(x) for x in res.pairs.tolist()]
    assert len(listed) == min(max_pairs, len(brute)) == len(set(listed))
    keys = [brute[x] for x in listed]  # KeyError: a listed pair does not violate
    assert keys == sorted(keys)
    if listed:
        rest = set(brute) - set(listed)
        assert all(brute[x] >= keys[-1] for x in rest)
        i, j = res.pairs.T
        assert np.array_equal(res.worths, np.c_[v[i], v[j]])
        assert np.allclose(res.gaps, p[j] - p[i]) and np.all(res.worth_gaps > 0)
    ties = np.unique(v, return_counts=True)[1]
    assert res.n_comparable == len(v) * (len(v) - 1) // 2 - (ties * (ties - 1) // 2).sum()


@settings(max_examples=40)
@given(n=st.integers(1, 30), levels=st.integers(1, 8), max_pairs=st.integers(0, 25),
       stochastic=st.booleans(), tol=st.sampled_from([0.0, 1e-9, 0.15]),
       seed=st.integers(0, 10_000))
def test_meritocracy_matches_brute_force(n, levels, max_pairs, stochastic, tol, seed):
    rng = np.random.RandomState(seed)
    v = rng.randint(0, levels, size=n).astype(float)  # few levels: many ties
    if stochastic:
        P = rng.dirichlet(np.ones(3), size=n)
        P[rng.rand(n) < 0.3] = P[0]  # repeated probabilities
        res = meritocracy(P, v, action=2, tol=tol, max_pairs=max_pairs)
        p = P[:, 2] / P.sum(axis=1)  # as checked: rows renormalised
    else:
        a = rng.randint(0, 3, size=n)
        res = meritocracy(a, v, action=1, tol=tol, max_pairs=max_pairs)
        p = (a == 1).astype(float)
    assert res.stochastic == stochastic
    _check_against_brute(res, p, v, tol, max_pairs)


def test_meritocracy_ties_and_threshold_rules():
    v = np.array([5.0, 3.0, 3.0, 1.0, 4.0])
    # selecting by a threshold on worth is meritocratic, whatever the tie-break
    assert meritocracy(v >= 4, v).meritocratic
    assert meritocracy([0, 1, 0, 0, 0], v).n_violations == 2  # 1 over 0 and over 4
    res = meritocracy([0, 1, 0, 0, 0], v)
    assert res.pairs.tolist() == [[0, 1], [4, 1]] and res.gaps.tolist() == [1.0, 1.0]
    assert meritocracy([1, 1, 0, 0, 1], v).meritocratic  # 1 over its tie 2: no violation
    same = meritocracy([1, 0, 1, 0], np.full(4, 2.0))
    assert same.meritocratic and same.n_comparable == 0
    rows = np.c_[1 - v / 10, v / 10]  # probability increasing in worth
    assert meritocracy(rows, v).meritocratic
    flipped = meritocracy(rows[:, ::-1], v, max_pairs=3)
    assert flipped.n_violations == 9 and len(flipped.pairs) == 3
    assert flipped.pairs[0].tolist() == [0, 3]  # the largest gap: 5 against 1
    text = flipped.summary()
    assert "9 of 9 pairs" in text and "6 more" in text
    assert repr(flipped) == ("MeritocracyResult(meritocratic=False, n_violations=9, "
                             "n_comparable=9)")
    # the count is exact far beyond the listed pairs
    rng = np.random.RandomState(0)
    big_v, big_a = rng.normal(size=3000), rng.randint(0, 2, 3000)
    big = meritocracy(big_a, big_v, max_pairs=5)
    sel, unsel = big_v[big_a == 1], big_v[big_a == 0]
    assert big.n_violations == int((unsel[:, None] > sel[None, :]).sum())
    assert big.worth_gaps[0] == pytest.approx(unsel.max() - sel.min())


@pytest.mark.parametrize("x, v, kw, match", [
    ([0, 1, 1], [1.0, 2.0], {}, "3 individuals but worths has 2"),
    ([0, 1], [1.0, np.nan], {}, "worths contains NaN"),
    ([0, 1], [1.0, 2.0], {"action": 2}, "action 2 is not an action of decisions_or_rows,"),
    ([[0.5, 0.5], [1.0, 0.0]], [1.0, 2.0], {"action": 2},
     "action 2 is not an action of decisions_or_rows .policy rows.. whose actions are 0..1"),
    ([0, 1], [1.0, 2.0], {"action": -1}, "action -1"),
    ([0, 1], [1.0, 2.0], {"action": True}, "action must be an integer"),
    ([0, 1], [1.0, 2.0], {"action": 1.0}, "action must be an integer"),
    ([[0.5, 0.6], [1.0, 0.0]], [1.0, 2.0], {}, "decisions_or_rows .policy rows. must sum to one"),
    ([[-0.5, 1.5], [1.0, 0.0]], [1.0, 2.0], {}, "negative probability"),
    ([0.5, 1.0], [1.0, 2.0], {}, "integer action codes"),
    ([0, np.nan], [1.0, 2.0], {}, "integer action codes"),
    (["a", "b"], [1.0, 2.0], {}, "integer action codes"),
    ([0, -1], [1.0, 2.0], {}, "decisions_or_rows has a negative action code"),
    (np.zeros((2, 2, 2)), [1.0, 2.0], {}, "1-d action codes or"),
    ([0, 1], [[1.0, 2.0]], {}, "worths must have 1"),
    ([[0, 1], [1]], [1.0, 2.0], {}, "decisions_or_rows could not be read"),
    ([0, 1], [1.0, 2.0], {"tol": 1.0}, "tol must be a finite number"),
    ([0, 1], [1.0, 2.0], {"tol": -1e-3}, "tol"),
    ([0, 1], [1.0, 2.0], {"max_pairs": -1}, "max_pairs must be a non-negative"),
    ([], [], {}, "empty"),
])
def test_meritocracy_bad_input(x, v, kw, match):
    with pytest.raises(FairdecideError, match=match):
        meritocracy(x, v, **kw)
