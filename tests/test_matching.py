"""Stable and fair matchings (issue 26, Example 13), each against an independent answer:
brute force over all matchings of tiny markets, the ``matching`` package's deferred
acceptance, linear programs written here for scipy.optimize.linprog (the full seat-market
stable-matching polytope, without the library's pruning), and sampled frequencies within
five standard errors."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

import fairdecide as fd
from fairdecide.assignment._seats import seat_layout

SEEDS = st.integers(0, 2**32 - 1)


def random_market(seed: int, n_max: int = 6, m_max: int = 3, complete: bool = False,
                  cap_max: int = 3) -> fd.MatchingMarket:
    """Random strict lists (incomplete unless ``complete``) and capacities 0..cap_max."""
    rng = np.random.default_rng(seed)
    n, m = int(rng.integers(1, n_max + 1)), int(rng.integers(1, m_max + 1))
    cand = [rng.permutation(m)[: m if complete else rng.integers(0, m + 1)].tolist()
            for _ in range(n)]
    prog = [rng.permutation(n)[: n if complete else rng.integers(0, n + 1)].tolist()
            for _ in range(m)]
    return fd.MatchingMarket(cand, prog, rng.integers(0 if not complete else 1,
                                                      cap_max + 1, m))


def latin_market(n: int = 4) -> fd.MatchingMarket:
    """Candidate i ranks programmes i, i+1, ... (mod n); programme j ranks candidates j+1,
    j+2, ..., j: n stable matchings (the cyclic shifts), one place each."""
    cand = [[(i + k) % n for k in range(n)] for i in range(n)]
    prog = [[(j + 1 + k) % n for k in range(n)] for j in range(n)]
    return fd.MatchingMarket(cand, prog, [1] * n)


def all_matchings(market: fd.MatchingMarket):
    n = market.n_candidates
    options = [[-1, *np.flatnonzero(market.acceptable[i]).tolist()] for i in range(n)]
    for a in itertools.product(*options):
        a = np.array(a)
        counts = np.bincount(a[a >= 0], minlength=market.n_programmes)
        if np.all(counts <= market.capacities):
            yield a


def prefers_or_equal(market, i, j1, j2) -> bool:
    """Candidate i weakly prefers j1 to j2 (-1 = unmatched, below everything)."""
    r = np.r_[market.candidate_rank[i], market.n_programmes + 1]
    return r[j1] <= r[j2]


def blocking_brute(market, a) -> set:
    """The definition, pair by pair."""
    out = set()
    for i in range(market.n_candidates):
        for j in range(market.n_programmes):
            if not market.acceptable[i, j] or a[i] == j:
                continue
            if not prefers_or_equal(market, i, j, a[i]):
                continue
            held = np.flatnonzero(a == j)
            if len(held) < market.capacities[j] or any(
                    market.programme_rank[j, i] < market.programme_rank[j, k] for k in held):
                out.add((i, j))
    return out


def assignment_matrix(market, a) -> np.ndarray:
    X = np.zeros((market.n_candidates, market.n_programmes))
    X[np.flatnonzero(a >= 0), a[a >= 0]] = 1.0
    return X


# ------------------------------------------------------------------ deferred acceptance
@settings(max_examples=60, deadline=None)
@given(SEEDS)
def test_deferred_acceptance_is_the_candidate_optimal_stable_matching(seed):
    market = random_market(seed, n_max=5)
    stable = [a for a in all_matchings(market) if not blocking_brute(market, a)]
    best = fd.deferred_acceptance(market)
    worst = fd.deferred_acceptance(market, "programmes")
    assert any(np.array_equal(best, a) for a in stable)
    assert any(np.array_equal(worst, a) for a in stable)
    for a in stable:
        for i in range(market.n_candidates):
            assert prefers_or_equal(market, i, best[i], a[i])
            assert prefers_or_equal(market, i, a[i], worst[i])


@settings(max_examples=60, deadline=None)
@given(SEEDS)
def test_blocking_pairs_is_the_definition(seed):
    market = random_market(seed, n_max=5)
    rng = np.random.default_rng(seed)
    matchings = list(all_matchings(market))
    for k in rng.choice(len(matchings), size=min(5, len(matchings)), replace=False):
        a = matchings[k]
        assert set(map(tuple, fd.blocking_pairs(market, a).tolist())) == blocking_brute(
            market, a)


def _anchor(market: fd.MatchingMarket, optimal: str) -> np.ndarray:
    """The matching package's HospitalResident game on the market's mutually acceptable
    lists (it wants each hospital to rank exactly the residents that rank it; programmes
    without places or applicants, and candidates without lists, are left out)."""
    from matching.games import HospitalResident

    acc = market.acceptable
    live = {j for j in range(market.n_programmes)
            if market.capacities[j] > 0 and acc[:, j].any()}
    rp = {i: [j for j in market.candidate_prefs[i] if acc[i, j] and j in live]
          for i in range(market.n_candidates)}
    rp = {i: v for i, v in rp.items() if v}
    hp = {j: [i for i in market.programme_prefs[j] if acc[i, j] and i in rp] for j in live}
    hp = {j: v for j, v in hp.items() if v}
    out = np.full(market.n_candidates, -1)
    if not rp:
        return out
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        game = HospitalResident.create_from_dictionaries(
            rp, hp, {j: int(market.capacities[j]) for j in hp}, clean=True)
        for h, residents in game.solve(optimal=optimal).items():
            for r in residents:
                out[r.name] = h.name
    return out


@settings(max_examples=40, deadline=None)
@given(SEEDS)
def test_deferred_acceptance_agrees_with_the_matching_package(seed):
    pytest.importorskip("matching", reason="the matching package (test and bench extras) is the "
                        "anchor for deferred acceptance; install it to compare")
    market = random_market(seed, n_max=12, m_max=5)
    assert np.array_equal(fd.deferred_acceptance(market), _anchor(market, "resident"))
    assert np.array_equal(fd.deferred_acceptance(market, "programmes"),
                          _anchor(market, "hospital"))


# ------------------------------------------------------------------ the fair matching LP
def full_stable_lp(market, U, groups=None, gap=None, stability=True):
    """The fair matching program written out in full for linprog: one variable per
    acceptable (candidate, seat) pair, every Vande Vate / Rothblum row of the seat market
    (no pruning), per-programme group rate gaps. Returns the optimum or None."""
    n, m = market.n_candidates, market.n_programmes
    prog, no, _ = seat_layout(market.capacities)
    pairs = [(i, k) for i in range(n) for k in range(len(prog))
             if market.acceptable[i, prog[k]]]
    if not pairs:
        return 0.0
    col = {p: t for t, p in enumerate(pairs)}
    A, b = [], []

    def row(cells):
        r = np.zeros(len(pairs))
        for p, v in cells:
            r[col[p]] += v
        return r

    for i in range(n):
        A.append(row([((i, k), 1) for (i2, k) in pairs if i2 == i]))
        b.append(1)
    for k in range(len(prog)):
        A.append(row([((i, k), 1) for (i, k2) in pairs if k2 == k]))
        b.append(1)
    if stability:
        cr, pr = market.candidate_rank, market.programme_rank
        for (i, k) in pairs:
            j = prog[k]
            cells = [((i, k), 1)]
            cells += [((i, k2), 1) for (i2, k2) in pairs
                      if i2 == i and (cr[i, prog[k2]], no[k2]) < (cr[i, j], no[k])]
            cells += [((i2, k), 1) for (i2, k2) in pairs if k2 == k and pr[j, i2] < pr[j, i]]
            A.append(-row(cells))
            b.append(-1)
    if gap is not None:
        size = np.bincount(groups)
        for j in range(m):
            for g, h in itertools.combinations(range(len(size)), 2):
                r = row([((i, k), (groups[i] == g) / size[g] - (groups[i] == h) / size[h])
                         for (i, k) in pairs if prog[k] == j])
                A += [r, -r]
                b += [gap, gap]
    c = np.array([-U[i, prog[k]] for i, k in pairs])
    res = linprog(c, A_ub=np.array(A), b_ub=np.array(b), bounds=(0, 1), method="highs")
    return None if res.status == 2 else -res.fun


def increasing_utility(market, seed):
    """A random utility increasing in each candidate's preferences (positive steps)."""
    rng = np.random.default_rng(seed)
    steps = rng.random((market.n_candidates, market.n_programmes)) + 0.01
    order = np.argsort(-market.candidate_rank, axis=1)  # least preferred first
    U = np.zeros_like(steps)
    np.put_along_axis(U, order, np.cumsum(np.take_along_axis(steps, order, 1), axis=1), 1)
    return U


@settings(max_examples=60, deadline=None)
@given(SEEDS, st.booleans())
def test_unconstrained_stable_optimum_is_deferred_acceptance(seed, default_utility):
    market = random_market(seed, n_max=9, m_max=4)
    U = None if default_utility else increasing_utility(market, seed)
    res = fd.optimize_matching(market, U)
    da = fd.deferred_acceptance(market)
    np.testing.assert_allclose(res.X, assignment_matrix(market, da), atol=1e-7)
    assert res.comparison()["better_off"] == res.comparison()["worse_off"] == 0
    assert res.stability_violation <= 1e-9


@settings(max_examples=40, deadline=None)
@given(SEEDS, st.sampled_from([None, 0.0, 0.3]))
def test_stable_lp_equals_the_full_polytope_lp(seed, gap):
    """Any utility (not monotone), with and without a per-programme gap: the library's
    pruned seat program has the optimum of the whole Rothblum polytope."""
    market = random_market(seed, n_max=6, m_max=3, complete=seed % 2 == 0)
    rng = np.random.default_rng(seed)
    U = rng.random((market.n_candidates, market.n_programmes))
    groups = np.arange(market.n_candidates) % 2
    use = gap is not None and market.n_candidates > 1
    ref = full_stable_lp(market, U, groups, gap if use else None)
    kwargs = {"groups": groups, "programme_gap": gap} if use else {}
    if ref is None:
        with pytest.raises(fd.InfeasibleToleranceError):
            fd.optimize_matching(market, U, **kwargs)
        return
    res = fd.optimize_matching(market, U, **kwargs)
    assert res.utility == pytest.approx(ref, abs=1e-7)



@settings(max_examples=15, deadline=None)
@given(SEEDS, st.sampled_from([0.0, 0.3]))
def test_interior_point_route_equals_the_full_polytope_lp(seed, gap):
    """Large programs with a criterion go to the interior point crossed over
    (IPM_MIN_COLUMNS); forced here on small markets, it has the optimum of the whole
    Rothblum polytope (linprog), reports infeasibility, returns a vertex that passes
    every check, and the smallest gap it reports is feasible."""
    from fairdecide.assignment import matching_lp

    market = random_market(seed, n_max=7, m_max=3, complete=seed % 2 == 0)
    if market.n_candidates < 2:
        return
    U = np.random.default_rng(seed).random((market.n_candidates, market.n_programmes))
    groups = np.arange(market.n_candidates) % 2
    ref = full_stable_lp(market, U, groups, gap)
    saved = matching_lp.IPM_MIN_COLUMNS
    matching_lp.IPM_MIN_COLUMNS = 0
    try:
        if ref is None:
            with pytest.raises(fd.InfeasibleToleranceError) as info:
                fd.optimize_matching(market, U, groups=groups, programme_gap=gap)
            t = info.value.smallest["programme_gap"]
            assert full_stable_lp(market, U, groups, t + 1e-7) is not None
            return
        res = fd.optimize_matching(market, U, groups=groups, programme_gap=gap)
    finally:
        matching_lp.IPM_MIN_COLUMNS = saved
    assert res.method == "interior point + crossover"
    assert res.utility == pytest.approx(ref, abs=1e-7)
    assert res.stability_violation <= 1e-9

@settings(max_examples=30, deadline=None)
@given(SEEDS, st.sampled_from([0.0, 0.2]))
def test_unstable_lp_and_group_criteria_against_linprog(seed, gap):
    market = random_market(seed, n_max=8, m_max=4)
    rng = np.random.default_rng(seed)
    U = rng.random((market.n_candidates, market.n_programmes))
    groups = np.arange(market.n_candidates) % 2
    use = market.n_candidates > 1
    ref = full_stable_lp(market, U, groups, gap if use else None, stability=False)
    res = fd.optimize_matching(market, U, groups=groups if use else None,
                           programme_gap=gap if use else None, stability=False)
    assert res.utility == pytest.approx(ref, abs=1e-7)
    X = res.X
    assert np.all(X.sum(axis=1) <= 1 + 1e-9)
    assert np.all(X.sum(axis=0) <= market.capacities + 1e-9)
    if use:  # the criterion recomputed here from X
        rates = np.array([X[groups == g].sum(axis=0) / np.sum(groups == g) for g in (0, 1)])
        assert np.abs(rates[0] - rates[1]).max() <= gap + 1e-9


def test_group_criteria_met_exactly_and_cost_utility():
    rng = np.random.default_rng(0)
    n, m = 30, 3
    cand = [rng.permutation(m).tolist() for _ in range(n)]
    score = rng.normal(size=n) + 0.8 * (np.arange(n) % 2)  # group 1 scores higher
    prog = [np.argsort(-score).tolist()] * m
    market = fd.MatchingMarket(cand, prog, [5, 5, 5])
    groups = np.where(np.arange(n) % 2, "b", "a")
    free = fd.optimize_matching(market, groups=groups, stability=False)
    fair = fd.optimize_matching(market, groups=groups, stability=False, rate_gap=0.0,
                            programme_gap=0.05, min_share={"a": 0.45})
    X, size = fair.X, 15
    ra, rb = X[groups == "a"].sum(0) / size, X[groups == "b"].sum(0) / size
    assert abs(ra.sum() - rb.sum()) <= 1e-9
    assert np.abs(ra - rb).max() <= 0.05 + 1e-9
    assert np.all(X[groups == "a"].sum(0) >= 0.45 * X.sum(0) - 1e-9)
    assert fair.deviations["programme_gap"] == pytest.approx(np.abs(ra - rb).max())
    assert fair.utility <= free.utility + 1e-9
    assert "programme_gap" in fair.summary()


def test_infeasible_gap_reports_the_smallest_feasible_one():
    market = latin_market(4)
    groups = [0, 0, 1, 1]
    with pytest.raises(fd.InfeasibleToleranceError) as info:
        fd.optimize_matching(market, groups=groups, programme_gap=0.0, rate_gap=None,
                         min_share={0: 0.9})
    market = fd.MatchingMarket([[0], [0], [1], [1]], [[0, 1, 2, 3], [0, 1, 2, 3]], [1, 1])
    with pytest.raises(fd.InfeasibleToleranceError) as info:
        fd.optimize_matching(market, groups=groups, programme_gap=0.1)
    t = info.value.smallest["programme_gap"]
    assert t == pytest.approx(0.5)  # candidates 0 and 2 are matched in every stable matching
    assert fd.optimize_matching(market, groups=groups, programme_gap=t + 1e-9).utility > 0


# ------------------------------------------------------------------ sampling
def _frequencies(draws, m):
    return np.stack([(draws == j).mean(axis=0) for j in range(m)], axis=1)


def test_stable_lottery_samples_stable_matchings_with_its_marginals():
    market = latin_market(4)
    res = fd.optimize_matching(market, groups=[0, 1, 0, 1], programme_gap=0.0)
    assert np.all((res.X > 0.01) & (res.X < 0.99) | (res.X < 1e-9))  # a real lottery
    assert np.ptp(res.X[[0, 2]].sum(0) - res.X[[1, 3]].sum(0)) <= 1e-9
    size = 10_000
    draws = res.sample(size, random_state=0)
    se = np.sqrt(res.X * (1 - res.X) / size)
    assert np.all(np.abs(_frequencies(draws, 4) - res.X) <= 5 * se + 1e-12)
    for a in np.unique(draws, axis=0):
        assert len(fd.blocking_pairs(market, a)) == 0


@settings(max_examples=40, deadline=None)
@given(SEEDS)
def test_every_draw_of_a_stable_lottery_is_stable(seed):
    """Markets whose programmes rank the candidates against the candidates' tastes (many
    stable matchings) and a per-programme gap halfway between the unconstrained optimum's
    and the smallest feasible one (X fractional): every distinct draw has no blocking
    pair and the draws' frequencies are within 5 SE of X."""
    rng = np.random.default_rng(seed)
    n, m = int(rng.integers(4, 10)), int(rng.integers(2, 4))
    taste = rng.random((n, m))
    market = fd.MatchingMarket(
        np.argsort(-taste, axis=1).tolist(),
        np.argsort(taste + 0.3 * rng.random((n, m)), axis=0).T.tolist(),
        rng.integers(1, 3, m))
    if seed % 2:  # a cyclic market, relabelled: n stable matchings at least
        n = m = int(rng.integers(3, 7))
        cp, pp = rng.permutation(n), rng.permutation(n)  # new codes of candidates, programmes
        latin = latin_market(n)
        cand = [None] * n
        prog = [None] * n
        for i, row in enumerate(latin.candidate_prefs):
            cand[cp[i]] = [int(pp[j]) for j in row]
        for j, row in enumerate(latin.programme_prefs):
            prog[pp[j]] = [int(cp[i]) for i in row]
        market = fd.MatchingMarket(cand, prog, [1] * n)
    U, groups = rng.random((n, m)), np.arange(n) % 2
    free = fd.optimize_matching(market, U, groups=groups).deviations["programme_gap"]
    try:
        fd.optimize_matching(market, U, groups=groups, programme_gap=0.0)
        smallest = 0.0
    except fd.InfeasibleToleranceError as exc:
        smallest = exc.smallest["programme_gap"]
    res = fd.optimize_matching(market, U, groups=groups, programme_gap=(free + smallest) / 2)
    draws = res.sample(4000, random_state=0)
    for a in np.unique(draws, axis=0):
        assert len(fd.blocking_pairs(market, a)) == 0
    se = np.sqrt(res.X * (1 - res.X) / 4000)
    assert np.all(np.abs(_frequencies(draws, m) - res.X) <= 5 * se + 1e-12)


@settings(max_examples=25, deadline=None)
@given(SEEDS, st.booleans())
def test_capacities_never_exceeded_in_x_or_any_draw(seed, stability):
    market = random_market(seed, n_max=8, m_max=3, cap_max=2)
    rng = np.random.default_rng(seed)
    U = rng.random((market.n_candidates, market.n_programmes))
    groups = np.arange(market.n_candidates) % 2
    kwargs = ({"groups": groups, "programme_gap": 0.2}
              if market.n_candidates > 1 and not stability else {})
    res = fd.optimize_matching(market, U, stability=stability, **kwargs)
    assert np.all(res.X.sum(axis=0) <= market.capacities + 1e-9)
    draws = res.sample(200, random_state=seed % 1000)
    for a in draws:
        market.check_assignment(a)  # acceptable pairs, no programme over capacity
        assert np.all(np.bincount(a[a >= 0], minlength=market.n_programmes)
                      <= market.capacities)


def test_birkhoff_lottery_marginals_without_stability():
    rng = np.random.default_rng(5)
    n, m = 8, 3
    market = fd.MatchingMarket([rng.permutation(m).tolist() for _ in range(n)],
                               [rng.permutation(n).tolist() for _ in range(m)], [2, 2, 1])
    res = fd.optimize_matching(market, groups=np.arange(n) % 2, programme_gap=0.0,
                           stability=False)
    assert not np.all((res.X < 1e-9) | (res.X > 1 - 1e-9))
    size = 10_000
    draws = res.sample(size, random_state=1)
    se = np.sqrt(res.X * (1 - res.X) / size)
    assert np.all(np.abs(_frequencies(draws, m) - res.X) <= 5 * se + 1e-12)
    assert all(np.all(np.bincount(a[a >= 0], minlength=m) <= market.capacities)
               for a in draws)


# ------------------------------------------------------------------ input checks
@pytest.mark.parametrize(("args", "match"), [
    (([[0, 0]], [[0]], [1]), "twice"),
    (([[2]], [[0]], [1]), "programme code 2"),
    (([[0]], [[0]], [1, 1]), "capacities"),
    (([[0]], [[0]], [-1]), "capacities"),
    (([[0.5]], [[0]], [1]), "integer"),
    (([], [[0]], [1]), "candidate_prefs"),
    (([[0]], "ab", [1]), "programme_prefs"),
])
def test_market_rejects_malformed_lists(args, match):
    with pytest.raises(fd.FairdecideError, match=match):
        fd.MatchingMarket(*args)


def test_assignment_and_arguments_checked():
    market = fd.MatchingMarket([[0], [0, 1]], [[0, 1], [1]], [1, 1])
    with pytest.raises(fd.FairdecideError, match="not mutually acceptable"):
        fd.blocking_pairs(market, [1, -1])
    with pytest.raises(fd.FairdecideError, match="over its capacity"):
        fd.blocking_pairs(market, [0, 0])
    with pytest.raises(fd.FairdecideError, match="groups is needed"):
        fd.optimize_matching(market, programme_gap=0.1)
    with pytest.raises(fd.FairdecideError, match="utility must have shape"):
        fd.optimize_matching(market, np.ones((3, 2)))
    with pytest.raises(fd.FairdecideError, match="min_share names group"):
        fd.optimize_matching(market, groups=[0, 1], min_share={"x": 0.5})
