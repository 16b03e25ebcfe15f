"""The exposure program of optimize_ranking (formulation="exposure"): the same optimum as
the programs over the counts and the whole matrix, answered as a lottery of rankings.

Every expected figure is computed here: the optimum by the library's other programs
(each verified on its matrix, and checked against scipy's linprog in test_ranking.py),
hand-solved instances, the lottery's mean exposure and marginals recomputed by plain
loops over its rankings, and sampled rankings checked against the marginals within five
standard errors.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fairdecide as fd
from fairdecide.assignment import ExposureParity, MeritExposure, TopShare, optimize_ranking


def dcg(k):
    return 1.0 / np.log2(2.0 + np.arange(k))


def exposure_by_hand(lottery, v):
    """e_i = sum_r w_r v_{position of i in ranking r}, by loops."""
    e = np.zeros(lottery.rankings.shape[1])
    for w, ranking in zip(lottery.weights, lottery.rankings, strict=True):
        for j, i in enumerate(ranking[: len(v)]):
            e[i] += w * v[j]
    return e


def tie_averaged(e, u, g):
    """Each candidate's exposure replaced by the mean over the candidates of her group
    with her merit (interchangeable candidates are treated alike), by loops."""
    out = np.empty_like(e)
    for i in range(len(e)):
        alike = [j for j in range(len(e)) if g[j] == g[i] and u[j] == u[i]]
        out[i] = np.mean(e[alike])
    return out


def instance(n, n_groups, seed, ties=False):
    rng = np.random.default_rng(seed)
    g = np.array(["a", "b", "c"])[rng.integers(0, n_groups, n)]
    u = rng.uniform(0.1, 1.0, n) * np.where(g == "a", 0.6, 1.0)
    return (np.round(u, 1) if ties else u), g


def smallest(err):
    """The smallest common tolerance an InfeasibleToleranceError names."""
    return float(re.search(r"common to all criteria is ([-0-9.e+]+) \(", str(err)).group(1))


CRITERIA = {"parity": [ExposureParity()], "merit": [MeritExposure()],
            "both": [ExposureParity(), MeritExposure()]}


@settings(max_examples=60, deadline=None, derandomize=True)
@given(n=st.integers(2, 14), k_less=st.integers(0, 4), n_groups=st.integers(1, 3),
       which=st.sampled_from(sorted(CRITERIA)), eps=st.sampled_from([0.0, 0.01, 0.1]),
       ties=st.booleans(), weights=st.sampled_from(["dcg", "ones", "steps"]),
       seed=st.integers(0, 2**16))
def test_same_optimum_as_the_counts_program(n, k_less, n_groups, which, eps, ties, weights,
                                            seed):
    """Utility and deviations agree with formulation="counts" to 1e-9 (top-k included;
    position weights DCG's, all equal, or with ties and zeros); where the counts program
    finds no ranking, the exposure program raises the same error with the same smallest
    tolerance."""
    u, g = instance(n, n_groups, seed, ties)
    k = max(1, n - k_less)
    v = {"dcg": dcg(k), "ones": np.ones(k),
         "steps": np.sort(np.round(np.random.default_rng(seed).uniform(0, 1, k), 1))[::-1]}
    v = v[weights] if v[weights].max() > 0 else dcg(k)
    crit = CRITERIA[which]
    try:
        want = optimize_ranking(u, g, crit, epsilon=eps, positions=v, formulation="counts")
    except fd.InfeasibleToleranceError as err:
        with pytest.raises(fd.InfeasibleToleranceError) as got:
            optimize_ranking(u, g, crit, epsilon=eps, positions=v, formulation="exposure")
        assert smallest(got.value) == pytest.approx(smallest(err), abs=1e-8)
        return
    res = optimize_ranking(u, g, crit, epsilon=eps, positions=v, formulation="exposure")
    scale = max(1.0, want.utility)
    assert abs(res.utility - want.utility) <= 1e-9 * scale
    for c in crit:
        assert res.deviations[c.label] <= eps + 1e-9
    lot = res.lottery
    assert lot.n_rankings <= len(set(g.tolist()))  # at most G rankings (<= n)
    assert lot.weights.min() > 0 and abs(lot.weights.sum() - 1) <= 1e-12
    e = tie_averaged(exposure_by_hand(lot, v), u, g)
    np.testing.assert_allclose(res.exposure, e, atol=1e-12)
    assert float(u @ e) == pytest.approx(res.utility, abs=1e-12 * scale)


def test_two_candidates_share_the_top_at_parity():
    """One candidate per group, v = (1, 0.5), exact parity: each must get exposure 0.75,
    so each is first half of the time: utility 0.75 * (1 + 0.2) = 0.9."""
    res = optimize_ranking([1.0, 0.2], ["a", "b"], ExposureParity(), positions=[1.0, 0.5])
    assert res.formulation == "exposure"
    assert res.utility == pytest.approx(0.9, abs=1e-12)
    np.testing.assert_allclose(res.exposure, [0.75, 0.75], atol=1e-12)
    assert sorted(res.lottery.weights.tolist()) == pytest.approx([0.5, 0.5], abs=1e-12)
    np.testing.assert_allclose(res.matrix, [[0.5, 0.5], [0.5, 0.5]], atol=1e-12)


def test_a_two_group_optimum_mixes_two_merges():
    """Group a holds the two best; with exact parity over v = (1, 1/2, 1/3, 1/4) the
    groups' exposure totals must each be 25/24. The optimum is then the best pair of
    rankings that merge the groups' sorted lists (brute force over all rankings' mixtures
    of two, by hand below), since parity is one row."""
    import itertools

    u = np.array([1.0, 0.9, 0.5, 0.4])
    g = np.array(["a", "a", "b", "b"])
    v = np.array([1.0, 1 / 2, 1 / 3, 1 / 4])
    res = optimize_ranking(u, g, ExposureParity(), positions=v)
    best = -np.inf
    perms = [np.array(p) for p in itertools.permutations(range(4))]
    for p, q in itertools.combinations_with_replacement(perms, 2):
        ep, eq = v[np.argsort(p)], v[np.argsort(q)]  # p[j]: candidate at position j
        dp, dq = ep[:2].sum() - ep[2:].sum(), eq[:2].sum() - eq[2:].sum()
        if dp == dq:
            if abs(dp) < 1e-12:
                best = max(best, u @ ep, u @ eq)
            continue
        lam = dq / (dq - dp)  # lam dp + (1 - lam) dq = 0
        if 0 <= lam <= 1:
            best = max(best, lam * (u @ ep) + (1 - lam) * (u @ eq))
    assert res.utility == pytest.approx(best, abs=1e-12)


def test_the_lottery_reproduces_its_marginals():
    """The marginal matrix built from the lottery: rows and columns sum to one (rows to
    at most one for top-k), its exposures are the lottery's, and sampled rankings show
    each candidate at each position with its probability within five standard errors."""
    u, g = instance(40, 3, 7)
    res = optimize_ranking(u, g, ExposureParity(), epsilon=0.01, k=10)
    P = res.matrix
    assert np.abs(P.sum(axis=0) - 1).max() <= 1e-12 and P.sum(axis=1).max() <= 1 + 1e-12
    np.testing.assert_allclose(P @ dcg(10), exposure_by_hand(res.lottery, dcg(10)),
                               atol=1e-12)
    np.testing.assert_allclose(res.selection_probability(4), P[:, :4].sum(axis=1),
                               atol=1e-12)
    draws = res.sample(20_000, random_state=0)
    assert draws.shape == (20_000, 10)
    assert all(len(set(d)) == 10 for d in draws[:200])
    freq = np.zeros_like(P)
    np.add.at(freq, (draws, np.broadcast_to(np.arange(10), draws.shape)), 1.0)
    freq /= len(draws)
    se = np.sqrt(np.maximum(P * (1 - P), 1e-12) / len(draws))
    assert np.all(np.abs(freq - P) <= 5 * se + 1e-12)


def test_the_matrix_is_built_only_when_asked():
    """At 3000 candidates the result keeps the lottery (m x n integers), not the 72 MB
    matrix, until .matrix is read; exposures and selection come from the lottery."""
    u, g = instance(3000, 2, 3)
    res = optimize_ranking(u, g, ExposureParity(), epsilon=0.001)
    assert "matrix" not in vars(res) and res.marginals is None
    e = exposure_by_hand(res.lottery, dcg(3000))
    np.testing.assert_allclose(res.exposure, e, atol=1e-12)
    assert abs(e[g == "a"].mean() - e[g == "b"].mean()) <= 0.001 + 1e-9
    assert "matrix" not in vars(res)


def test_the_default_chain_records_its_choice():
    """Exposure criteria alone (or none): the exposure program; with TopShare the counts
    program; the reason is in stats. formulation="exposure" with TopShare is refused."""
    u, g = instance(12, 2, 1)
    assert optimize_ranking(u, g, ExposureParity(), epsilon=0.05).formulation == "exposure"
    assert optimize_ranking(u, g).formulation == "exposure"
    res = optimize_ranking(u, g, [ExposureParity(), TopShare("a", at_least=0.2)],
                           epsilon=0.05)
    assert res.formulation == "counts"
    assert "counts" in res.stats["formulation_reason"]
    with pytest.raises(fd.FairdecideError, match="formulation='exposure' cannot take"):
        optimize_ranking(u, g, TopShare("a", at_least=0.2), formulation="exposure")


def test_infeasible_merit_exposure_names_the_same_tolerance():
    """Group a's merit is 20 times b's: exposure in proportion to merit is out of reach
    at epsilon 0; both programs name the same smallest tolerance (printed to 6 digits),
    and just above it (plus 1e-5)
    both find a ranking."""
    u = np.r_[np.full(3, 2.0), np.full(3, 0.1)]
    g = ["a"] * 3 + ["b"] * 3
    tols = []
    for form in ("counts", "exposure"):
        with pytest.raises(fd.InfeasibleToleranceError) as err:
            optimize_ranking(u, g, MeritExposure(), formulation=form)
        tols.append(smallest(err.value))
    assert tols[1] == pytest.approx(tols[0], abs=1e-8) and tols[0] > 0
    res = [optimize_ranking(u, g, MeritExposure(), epsilon=tols[0] + 1e-5, formulation=f)
           for f in ("counts", "exposure")]
    assert res[1].utility == pytest.approx(res[0].utility, abs=1e-9)


def test_without_criteria_the_lottery_is_the_sort():
    u, g = instance(30, 2, 5)
    res = optimize_ranking(u, g, k=7)
    assert res.lottery.n_rankings == 1
    np.testing.assert_array_equal(res.sample(1, random_state=0)[0], np.argsort(-u)[:7])
    assert res.utility == pytest.approx(res.unconstrained_utility, abs=1e-12)


@pytest.mark.parametrize("formulation", ["exposure", "counts"])
def test_both_ranking_loops_leave_the_master_loops_certificate(formulation):
    """The exposure program's generation and the counts program's cut loop stop by the
    master loops' rule and say so: a certified certificate whose objective is the
    program's (minus the utility), checked against the utility recomputed from the
    answer, and shown by summary()."""
    u, g = instance(40, 2, 3)
    res = optimize_ranking(u, g, ExposureParity(), epsilon=0.01, formulation=formulation)
    cert = res.stats["certificate"]
    assert cert["certified"] and 0.0 <= cert["gap"] <= cert["bound"]
    assert cert["solver"] == {"exposure": "exposure generation",
                              "counts": "ranking cuts"}[formulation]
    assert -cert["objective"] == pytest.approx(float(u @ res.exposure), abs=1e-9)
    assert "optimality    : certified by" in res.summary()
