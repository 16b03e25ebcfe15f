"""Stable and fair matchings (issue 26, Example 13), each against an independent answer:
brute force over all matchings of tiny markets, the ``matching`` package's deferred
acceptance, linear programs written here for scipy.optimize.linprog (the full seat-market
stable-matching polytope, without the library's pruning, and every group criterion from
its definition), and sampled counts within their binomial intervals at a family-wise
level of 1e-6 (exact binomial quantiles, Bonferroni over the entries)."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from scipy.optimize import linprog

import fairdecide as fd
from fairdecide.assignment._seats import seat_layout
from fairdecide.assignment.matching_lp import follows_preferences

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


def full_market(rng: np.random.Generator, programmes: tuple[int, int],
                places: tuple[int, int]) -> fd.MatchingMarket:
    """Complete lists and a place for everyone (many stable matchings): a number of
    programmes in ``programmes`` and places in ``places`` each (numpy's half-open
    ranges), random lists on both sides."""
    m = int(rng.integers(*programmes))
    cap = rng.integers(*places, m)
    n = int(cap.sum())
    return fd.MatchingMarket([rng.permutation(m).tolist() for _ in range(n)],
                             [rng.permutation(n).tolist() for _ in range(m)], cap)


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


def _closed_set_matchings(market):
    """The rotations of ``market`` and the matching (programme per candidate) of each set
    of rotations closed under their precedence pairs, eliminated from the
    candidate-optimal matching."""
    from fairdecide.assignment._rotations import rotations
    from fairdecide.assignment._seats import seated

    rot = rotations(market, fd.deferred_acceptance(market),
                    fd.deferred_acceptance(market, "programmes"))
    assert rot.n_rotations <= 12
    prog = np.r_[seat_layout(market.capacities)[0], -1]  # seat -1: unmatched
    start = seated(market, fd.deferred_acceptance(market))
    found = []
    for chosen in itertools.product([False, True], repeat=rot.n_rotations):
        chosen = np.array(chosen, dtype=bool)
        if np.any(chosen[rot.later] & ~chosen[rot.earlier]):
            continue  # not closed
        seat = start.copy()
        for r in np.flatnonzero(chosen):  # in the order found: a topological order
            at = rot.rotation == r
            seat[rot.candidate[at]] = rot.seat_in[at]
        found.append(tuple(prog[seat]))
    return rot, found


@pytest.mark.parametrize("seed", [10, 41, 73, 82, 169, 302])
def test_every_closed_set_is_stable_where_the_second_kind_of_precedence_binds(seed):
    """Complete lists and a place for everyone (11 to 16 candidates): markets where a
    rotation moving a candidate past a seat must follow the one that gave the seat a
    preferred occupant, a precedence the candidates' own order of rotations does not
    imply (found by search: 6 of the first 400 such markets). Every closed set's
    matching has no blocking pair (counted by definition), and no two are the same;
    without those pairs some set closed under the rest is unstable."""
    market = full_market(np.random.default_rng(seed), (3, 6), (1, 5))
    _, found = _closed_set_matchings(market)
    assert len(found) == len(set(found))
    for a in found:
        assert not blocking_brute(market, np.array(a))


@settings(max_examples=60, deadline=None)
@given(SEEDS, st.booleans())
def test_the_rotations_closed_sets_are_exactly_the_stable_matchings(seed, complete):
    """The rotation poset (fairdecide.assignment._rotations) against brute force: every
    set of rotations closed under its precedence pairs, eliminated from the
    candidate-optimal matching, gives a stable matching, and each stable matching of the
    market (every matching, its blocking pairs counted by definition) comes from exactly
    one closed set."""
    rng = np.random.default_rng(seed)
    if complete:
        market = full_market(rng, (2, 4), (1, 3))
    else:
        market = random_market(seed, n_max=6, m_max=3)
    _, found = _closed_set_matchings(market)
    stable = {tuple(a) for a in all_matchings(market) if not blocking_brute(market, a)}
    assert len(found) == len(set(found)) == len(stable)
    assert set(found) == stable
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
def full_stable_lp(market, U, groups=None, *, rate_gap=None, programme_gap=None,
                   min_share=None, stability=True, smallest_gap=False):
    """The fair matching program written out in full for linprog: one variable per
    acceptable (candidate, seat) pair, every Vande Vate / Rothblum row of the seat market
    (no pruning), and every group criterion of optimize_matching written from its
    definition over the rates r_gj = (1 / n_g) sum_{i in g} X_ij of every pair of groups:
    |sum_j r_gj - sum_j r_hj| <= rate_gap, |r_gj - r_hj| <= programme_gap,
    sum_{i in g} X_ij >= s_g sum_i X_ij (``min_share``: {group code: s_g}).

    Returns the optimum, or None when the program is infeasible. With ``smallest_gap``
    it returns instead the smallest t that the given gaps can share (both bounded by t,
    with the other rows kept), or None."""
    n, m = market.n_candidates, market.n_programmes
    prog, no, _ = seat_layout(market.capacities)
    pairs = [(i, k) for i in range(n) for k in range(len(prog))
             if market.acceptable[i, prog[k]]]
    col = {p: t for t, p in enumerate(pairs)}
    nv = len(pairs) + (1 if smallest_gap else 0)  # t is the last column
    A, b = [], []

    def row(cells, t=0.0):
        r = np.zeros(nv)
        for p, v in cells:
            r[col[p]] += v
        if t:
            r[-1] = t
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
    if groups is not None:
        groups = np.asarray(groups)
        size = np.bincount(groups)
        present = np.flatnonzero(size)
        for gap, per_programme in ((programme_gap, True), (rate_gap, False)):
            if gap is None:
                continue
            for g, h in itertools.combinations(present, 2):
                for js in ([[j] for j in range(m)] if per_programme else [range(m)]):
                    r = row([((i, k), (groups[i] == g) / size[g] - (groups[i] == h) / size[h])
                             for (i, k) in pairs if prog[k] in js])
                    if smallest_gap:  # r - t <= 0, -r - t <= 0
                        A += [r - row([], 1.0), -r - row([], 1.0)]
                        b += [0, 0]
                    else:
                        A += [r, -r]
                        b += [gap, gap]
        for g, s in (min_share or {}).items():  # s sum_i X_ij - sum_{i in g} X_ij <= 0
            for j in range(m):
                A.append(row([((i, k), s - (groups[i] == g)) for (i, k) in pairs
                              if prog[k] == j]))
                b.append(0)
    if smallest_gap:
        c = np.zeros(nv)
        c[-1] = 1.0
    else:
        c = np.array([-U[i, prog[k]] for i, k in pairs])
    if not nv:
        return 0.0
    res = linprog(c, A_ub=np.array(A).reshape(-1, nv), b_ub=np.array(b), bounds=(0, None),
                  method="highs")
    if res.status == 2:
        return None
    assert res.status == 0, res.message
    return res.fun if smallest_gap else -res.fun


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
@given(SEEDS, st.booleans())
def test_the_deferred_acceptance_shortcut_equals_the_stable_program(seed, default_utility):
    """Issue 41: without a group criterion and with a utility that follows the
    candidates' preferences, no program is solved; the stable program (forced) reaches
    the same utility, and a utility that does not follow them still goes to the program."""
    from unittest import mock

    from fairdecide.assignment import matching_lp

    market = random_market(seed, n_max=9, m_max=4)
    U = None if default_utility else increasing_utility(market, seed)
    fast = fd.optimize_matching(market, U)
    assert fast.method.startswith("deferred acceptance")
    with mock.patch.object(matching_lp, "follows_preferences", lambda market, U: False):
        lp = fd.optimize_matching(market, U)
    assert not lp.method.startswith("deferred acceptance")
    assert fast.utility == pytest.approx(lp.utility, abs=1e-7 * max(1.0, abs(lp.utility)))
    # reversed preferences: the utility falls where the candidates' preferences rise
    Ur = np.where(market.acceptable, market.candidate_rank + 1.0, 0.0)
    if not matching_lp.follows_preferences(market, Ur):
        assert not fd.optimize_matching(market, Ur).method.startswith("deferred")


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
    ref = full_stable_lp(market, U, groups, programme_gap=gap if use else None)
    kwargs = {"group": groups, "programme_gap": gap} if use else {}
    if ref is None:
        with pytest.raises(fd.InfeasibleToleranceError):
            fd.optimize_matching(market, U, **kwargs)
        return
    res = fd.optimize_matching(market, U, **kwargs)
    assert res.utility == pytest.approx(ref, abs=1e-7)


@settings(max_examples=20, deadline=None)
@given(SEEDS)
def test_many_stable_matchings_against_the_full_polytope_lp(seed):
    """Markets with many stable matchings (complete lists, a place for everyone: up to
    20 candidates and 80 rotations' worth of lattice), a random utility and the
    per-programme gap at half the unconstrained optimum's: optimize_matching's optimum
    over the rotations is linprog's over every Vande Vate / Rothblum row, or both are
    infeasible with the same smallest gap. Rotations moving a candidate past a seat
    whose occupant changed earlier (the poset's second kind of precedence) bind here:
    without them a 100 x 10 market's answer failed its stability check."""
    rng = np.random.default_rng(seed)
    market = full_market(rng, (3, 6), (2, 5))
    n, m = market.n_candidates, market.n_programmes
    U = rng.random((n, m))
    groups = np.arange(n) % 2
    free = recomputed_deviations(fd.optimize_matching(market, U).X, groups, [])
    gap = 0.5 * free["programme_gap"]
    ref = full_stable_lp(market, U, groups, programme_gap=gap)
    got = _solve_or_smallest(market, U, groups, {"programme_gap": gap})
    if ref is None:
        t = full_stable_lp(market, U, groups, programme_gap=gap, smallest_gap=True)
        assert got == pytest.approx({"programme_gap": t}, abs=1e-7)
        return
    assert got.utility == pytest.approx(ref, abs=1e-7)
    assert got.stability_violation <= 1e-9


def recomputed_deviations(X, groups, min_share):
    """The group criteria of X, from their definitions: the largest difference between
    two groups' rates of being matched, and of getting each programme, and each named
    group's smallest share of a programme's expected intake (programmes with an intake)."""
    size = np.bincount(groups)
    present = np.flatnonzero(size)
    rates = np.array([X[groups == g].sum(axis=0) / size[g] for g in present])
    out = {"rate_gap": float(np.ptp(rates.sum(axis=1))),
           "programme_gap": float(np.ptp(rates, axis=0).max())}
    intake = X.sum(axis=0)
    has = intake > 1e-9
    out["min_share"] = {g: float((X[groups == g][:, has].sum(axis=0) / intake[has]).min(
        initial=1.0)) for g in min_share}
    return out


def _solve_or_smallest(market, U, groups, kwargs):
    """optimize_matching's result, or the ``smallest`` of the InfeasibleToleranceError it
    raises."""
    try:
        return fd.optimize_matching(market, U, groups, **kwargs)
    except fd.InfeasibleToleranceError as exc:
        return exc.smallest


#: Each criterion absent (None) or set against the unconstrained optimum X0: a gap at a
#: multiple of X0's (0: as small as can be; 0.5: binding; 1.5: slack), a minimum share
#: moved that fraction of the way from X0's share of the group up to 1 (binding when
#: positive).
CRITERIA = st.fixed_dictionaries({
    "rate_gap": st.sampled_from([None, 0.0, 0.5, 1.5]),
    "programme_gap": st.sampled_from([None, 0.0, 0.5, 1.5]),
    "min_share": st.sampled_from([None, 0.1, 0.3, 0.6]),
})


@settings(max_examples=80, deadline=None)
@given(SEEDS, CRITERIA, st.booleans(), st.integers(2, 3))
def test_every_group_criterion_against_the_full_polytope_lp(seed, criteria, stability,
                                                            n_groups):
    """rate_gap, programme_gap and min_share, alone and together, with and without the
    stability rows, over two or three groups, binding, slack and infeasible: the optimum
    of optimize_matching is linprog's on the program written from the definitions
    (full_stable_lp); where linprog finds no feasible point, optimize_matching raises,
    and the smallest gap it reports is the smallest that linprog finds the given gaps can
    share (none when min_share cannot be met with any gap); its deviations are the ones
    recomputed here from X."""
    rng = np.random.default_rng(seed)
    market = (contested_market(rng, cyclic=seed % 4 == 1) if seed % 2
              else random_market(seed, n_max=6, m_max=3, complete=seed % 3 == 0))
    n = market.n_candidates
    U = rng.random((n, market.n_programmes))
    groups = rng.integers(0, n_groups, n)
    free = recomputed_deviations(
        fd.optimize_matching(market, U, stability=stability).X, groups, [groups[0]])
    kwargs = {k: None if criteria[k] is None else criteria[k] * free[k]
              for k in ("rate_gap", "programme_gap")}
    share = criteria["min_share"]
    base = free["min_share"][groups[0]]
    shares = None if share is None else {int(groups[0]): base + share * (1 - base)}
    kwargs.update(min_share=shares, stability=stability)
    ref = full_stable_lp(market, U, groups, **kwargs)
    named = [k for k in ("rate_gap", "programme_gap") if kwargs[k] is not None]
    t = full_stable_lp(market, U, groups, **kwargs, smallest_gap=True) if named else None
    res = _solve_or_smallest(market, U, groups, kwargs)
    if ref is None:
        assert res == ({} if t is None else pytest.approx(dict.fromkeys(named, t),
                                                          abs=1e-7))
        return
    if stability and not (named or shares) and follows_preferences(market, U):
        assert res.method.startswith("deferred acceptance")  # no program
    else:
        assert res.method == ("dual simplex over the rotations of the stable matchings"
                              if stability else "dual simplex")
    assert res.utility == pytest.approx(ref, abs=1e-7)
    _assert_deviations(res, groups, kwargs)


def _assert_deviations(res, groups, kwargs) -> None:
    """The bounds hold on X and the result's deviations are the ones recomputed here
    (reported with two groups or more)."""
    shares = kwargs["min_share"] or {}
    mine = recomputed_deviations(res.X, groups, shares)
    for name in ("rate_gap", "programme_gap"):
        if kwargs[name] is not None:
            assert mine[name] <= kwargs[name] + 1e-9
    for g, s in shares.items():
        assert mine["min_share"][g] >= s - 1e-9
    if len(np.unique(groups)) == 1:
        assert res.deviations == {}
        return
    for name in ("rate_gap", "programme_gap"):
        assert res.deviations[name] == pytest.approx(mine[name], abs=1e-9)
    for g in shares:
        assert res.deviations["min_share"][g] == pytest.approx(mine["min_share"][g],
                                                               abs=1e-9)


@settings(max_examples=30, deadline=None)
@given(SEEDS, st.sampled_from([0.0, 0.2]))
def test_unstable_lp_and_group_criteria_against_linprog(seed, gap):
    market = random_market(seed, n_max=8, m_max=4)
    rng = np.random.default_rng(seed)
    U = rng.random((market.n_candidates, market.n_programmes))
    groups = np.arange(market.n_candidates) % 2
    use = market.n_candidates > 1
    ref = full_stable_lp(market, U, groups, programme_gap=gap if use else None,
                         stability=False)
    res = fd.optimize_matching(market, U, group=groups if use else None,
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
    free = fd.optimize_matching(market, group=groups, stability=False)
    fair = fd.optimize_matching(market, group=groups, stability=False, rate_gap=0.0,
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
        fd.optimize_matching(market, group=groups, programme_gap=0.0, rate_gap=None,
                         min_share={0: 0.9})
    market = fd.MatchingMarket([[0], [0], [1], [1]], [[0, 1, 2, 3], [0, 1, 2, 3]], [1, 1])
    with pytest.raises(fd.InfeasibleToleranceError) as info:
        fd.optimize_matching(market, group=groups, programme_gap=0.1)
    t = info.value.smallest["programme_gap"]
    assert t == pytest.approx(0.5)  # candidates 0 and 2 are matched in every stable matching
    assert fd.optimize_matching(market, group=groups, programme_gap=t + 1e-9).utility > 0


# ------------------------------------------------------------------ sampling
def assert_frequencies_match(draws: np.ndarray, X: np.ndarray, tail: float = 1e-6) -> None:
    """Each count of candidate i drawn into programme j is Binomial(size, X_ij): it must lie
    within the central interval holding all but ``tail`` of that law, split over the
    entries (Bonferroni), so the check fails by chance with probability below ``tail``."""
    size = len(draws)
    counts = np.stack([(draws == j).sum(axis=0) for j in range(X.shape[1])], axis=1)
    p = np.clip(X, 0.0, 1.0)
    a = tail / (2 * X.size)
    assert np.all(counts >= stats.binom.ppf(a, size, p)), (counts, size * p)
    assert np.all(counts <= stats.binom.isf(a, size, p)), (counts, size * p)


def test_stable_lottery_samples_stable_matchings_with_its_marginals():
    market = latin_market(4)
    res = fd.optimize_matching(market, group=[0, 1, 0, 1], programme_gap=0.0)
    assert np.all((res.X > 0.01) & (res.X < 0.99) | (res.X < 1e-9))  # a real lottery
    assert np.ptp(res.X[[0, 2]].sum(0) - res.X[[1, 3]].sum(0)) <= 1e-9
    draws = res.sample(10_000, random_state=0)
    assert_frequencies_match(draws, res.X)
    for a in np.unique(draws, axis=0):
        assert len(fd.blocking_pairs(market, a)) == 0


def contested_market(rng: np.random.Generator, cyclic: bool) -> fd.MatchingMarket:
    """A market with many stable matchings: programmes rank the candidates against the
    candidates' tastes (4 to 9 candidates, 2 or 3 programmes of 1 or 2 places) or, with
    ``cyclic``, a latin market of 3 to 6 relabelled at random (n stable matchings)."""
    if not cyclic:
        n, m = int(rng.integers(4, 10)), int(rng.integers(2, 4))
        taste = rng.random((n, m))
        return fd.MatchingMarket(
            np.argsort(-taste, axis=1).tolist(),
            np.argsort(taste + 0.3 * rng.random((n, m)), axis=0).T.tolist(),
            rng.integers(1, 3, m))
    n = int(rng.integers(3, 7))
    cp, pp = rng.permutation(n), rng.permutation(n)  # new codes of candidates, programmes
    latin = latin_market(n)
    cand: list = [None] * n
    prog: list = [None] * n
    for i, row in enumerate(latin.candidate_prefs):
        cand[cp[i]] = [int(pp[j]) for j in row]
    for j, row in enumerate(latin.programme_prefs):
        prog[pp[j]] = [int(cp[i]) for i in row]
    return fd.MatchingMarket(cand, prog, [1] * n)


def fractional_stable_lottery(seed: int):
    """(market, result) with X fractional (some entry in (1e-6, 1 - 1e-6)): the optimum
    of a random utility over the stable lotteries of a contested market whose groups'
    per-programme gap is bounded between the smallest feasible one and the gap of the
    last optimum found, until the optimum is no longer one matching (each integral
    optimum found is cut off by the next, smaller bound); a new market when the smallest
    gap is itself met by one stable matching."""
    rng = np.random.default_rng(seed)
    for _ in range(20):
        market = contested_market(rng, cyclic=bool(rng.integers(2)))
        n, m = market.n_candidates, market.n_programmes
        U, groups = rng.random((n, m)), np.arange(n) % 2
        res = fd.optimize_matching(market, U, group=groups)
        try:
            fd.optimize_matching(market, U, group=groups, programme_gap=0.0)
            smallest = 0.0
        except fd.InfeasibleToleranceError as exc:
            smallest = exc.smallest["programme_gap"]
        while res.deviations["programme_gap"] - smallest > 1e-6:
            if np.any((res.X > 1e-6) & (res.X < 1 - 1e-6)):
                return market, res
            gap = (res.deviations["programme_gap"] + smallest) / 2
            res = fd.optimize_matching(market, U, group=groups, programme_gap=gap)
    raise AssertionError(f"no contested market with a fractional optimum from seed {seed}")


@settings(max_examples=40, deadline=None)
@given(SEEDS)
def test_every_draw_of_a_stable_lottery_is_stable(seed):
    """Contested markets and a per-programme gap between the smallest feasible one and
    the unconstrained optimum's, lowered until the optimum X is fractional (asserted):
    every distinct draw has no blocking pair and every entry's count over the draws is
    within its binomial interval at X."""
    market, res = fractional_stable_lottery(seed)
    assert np.any((res.X > 1e-6) & (res.X < 1 - 1e-6))
    draws = res.sample(4000, random_state=0)
    for a in np.unique(draws, axis=0):
        assert len(fd.blocking_pairs(market, a)) == 0
    assert_frequencies_match(draws, res.X)


@settings(max_examples=25, deadline=None)
@given(SEEDS, st.booleans())
def test_capacities_never_exceeded_in_x_or_any_draw(seed, stability):
    market = random_market(seed, n_max=8, m_max=3, cap_max=2)
    rng = np.random.default_rng(seed)
    U = rng.random((market.n_candidates, market.n_programmes))
    groups = np.arange(market.n_candidates) % 2
    kwargs = ({"group": groups, "programme_gap": 0.2}
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
    res = fd.optimize_matching(market, group=np.arange(n) % 2, programme_gap=0.0,
                           stability=False)
    assert not np.all((res.X < 1e-9) | (res.X > 1 - 1e-9))
    draws = res.sample(10_000, random_state=1)
    assert_frequencies_match(draws, res.X)
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
    with pytest.raises(fd.FairdecideError, match="group is needed"):
        fd.optimize_matching(market, programme_gap=0.1)
    with pytest.raises(fd.FairdecideError, match="utility must have shape"):
        fd.optimize_matching(market, np.ones((3, 2)))
    with pytest.raises(fd.FairdecideError, match="min_share names group"):
        fd.optimize_matching(market, group=[0, 1], min_share={"x": 0.5})
