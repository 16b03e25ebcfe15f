"""The held-out route (optimize_held_out) and the estimate reading of a confidence set
(issue 53, items 1 and 2), against computations written here: the safety test's bound
and value bound recomputed from the safety rows with scipy's root finder, the shrunk
policy's deviation in the true world against the candidate's, a set of radius 0 read at
its estimate against the plug-in optimum."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

import fairdecide as fd
from fairdecide.datasets import make_tabular_problem, sample_logged_data
from fairdecide.evaluation.held_out import value_lower_bound
from fairdecide.exceptions import FairdecideError
from fairdecide.uncertainty.regions import L1Balls
from tests.reference import kl_interval_by_roots

GAP = fd.Separation(measure="max", reference="pairwise")


@pytest.fixture(scope="module")
def case():
    problem, truth = make_tabular_problem(8, 3, 2, 2, random_state=3)
    data = sample_logged_data(problem, truth, 6000, random_state=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", fd.PriceWarning)
        res = fd.optimize_held_out(problem, data, GAP, epsilon=0.05, delta=0.1,
                                   random_state=2)
    return problem, truth, data, res


def test_the_safety_tests_bound_recomputed_from_the_safety_rows(case):
    """B = the largest pairwise gap's bound: per outcome and pair of groups, the smaller
    of the two kl intervals' widest difference and Hoeffding's two-sample bound;
    m = 2 outcomes x (3 groups + 3 pairs) statements (two actions: one coordinate), and
    2 value statements, each at delta / (m + 2)."""
    problem, _, data, res = case
    h = res.stats["held_out"]
    safe, pi = h["safety_rows"], h["candidate"]
    z, y = data.z[safe], data.outcome_codes(problem)[safe]
    p1 = pi.table[data.x[safe], z, 1]  # pi(1 | x_i, z_i)
    m = 2 * (3 + 3)
    level = np.log(2 * (m + 2) / 0.1)
    assert h["level"] == pytest.approx(level, rel=1e-12)
    bound = 0.0
    for yy in range(2):
        rate, n, ends = {}, {}, {}
        for g in range(3):
            rows = (z == g) & (y == yy)
            n[g], rate[g] = rows.sum(), p1[rows].mean()
            ends[g] = kl_interval_by_roots(rate[g], n[g], level)
        for g in range(3):
            for k in range(g + 1, 3):
                widest = max(ends[g][1] - ends[k][0], ends[k][1] - ends[g][0])
                direct = abs(rate[g] - rate[k]) + np.sqrt(level * (1 / n[g] + 1 / n[k]) / 2)
                bound = max(bound, min(widest, direct, 1.0))
    assert h["candidate_bounds"][GAP.label] == pytest.approx(bound, abs=1e-9)
    alpha = min(1.0, 0.05 / bound)
    assert h["alpha"] == pytest.approx(alpha, rel=1e-9)
    assert res.guarantee.deviations[GAP.label] == pytest.approx(alpha * bound, rel=1e-9)
    assert res.guarantee.deviations[GAP.label] <= 0.05 + 1e-12


def test_the_value_bound_recomputed_from_the_safety_rows(case):
    """alpha L(pi) + (1 - alpha) L(c): each L the kl lower end at one-sided level
    log((m + 2) / delta) of the rows' utilities rescaled from [min U, max U] to [0, 1]."""
    problem, _, data, res = case
    h = res.stats["held_out"]
    safe, pi = h["safety_rows"], h["candidate"]
    z, y = data.z[safe], data.outcome_codes(problem)[safe]
    rows = pi.table[data.x[safe], z]  # (n, 2)
    one_sided = np.log((12 + 2) / 0.1)
    U = problem.utility
    own = (rows * U[:, y].T).sum(axis=1)
    c = int(h["constant"].split("'")[1]) if "'" in h["constant"] else int(
        h["constant"].split()[-1])
    c_action = list(problem.action_labels).index(c)
    lo, width = U.min(), U.max() - U.min()
    lcb_pi = lo + width * kl_interval_by_roots((own.mean() - lo) / width, len(own), one_sided)[0]
    lcb_c = lo + width * kl_interval_by_roots((U[c_action, y].mean() - lo) / width, len(y),
                                  one_sided)[0]
    assert h["candidate_value_bound"] == pytest.approx(lcb_pi, abs=1e-9)
    assert h["constant_value_bound"] == pytest.approx(lcb_c, abs=1e-9)
    a = h["alpha"]
    assert res.guarantee.value == pytest.approx(a * lcb_pi + (1 - a) * lcb_c, abs=1e-9)


@pytest.mark.parametrize("crit", [GAP, fd.Independence(), fd.Separation(),
                                  fd.Independence(measure="max")],
                         ids=lambda c: c.label)
def test_the_shrunk_policys_deviation_is_alpha_times_the_candidates_in_the_truth(case,
                                                                                  crit):
    """A constant rule moves every group's rate alike: in the true world (not the data),
    every deviation of alpha pi + (1 - alpha) c is alpha times pi's."""
    problem, truth, data, _ = case
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", fd.PriceWarning)
        res = fd.optimize_held_out(problem, data, crit, epsilon=0.03, random_state=4)
    h = res.stats["held_out"]
    a, pi = h["alpha"], h["candidate"]
    const = (res.policy.table - a * pi.table) / (1 - a) if a < 1 else None
    if const is not None:  # the rest is one constant rule, the same in every cell
        assert np.allclose(const, const[0, 0], atol=1e-9)
        assert sorted(const[0, 0].round(9).tolist()) == [0.0, 1.0]
    assert crit.deviation(res.policy, truth, problem) == pytest.approx(
        a * crit.deviation(pi, truth, problem), abs=1e-12)


def test_with_no_tolerance_the_route_is_the_best_constant_rule(case):
    problem, truth, data, _ = case
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", fd.PriceWarning)
        res = fd.optimize_held_out(problem, data, GAP, epsilon=0.0, random_state=0)
    assert res.stats["held_out"]["alpha"] == 0.0
    table = res.policy.table
    assert np.allclose(table, table[0, 0]) and sorted(table[0, 0].tolist()) == [0.0, 1.0]
    assert GAP.deviation(res.policy, truth, problem) == 0.0


@settings(max_examples=60, deadline=None, derandomize=True)
@given(n=st.integers(1, 400), k=st.integers(0, 400), delta=st.floats(0.001, 0.5))
def test_the_value_bound_is_below_the_exact_binomial_one(n, k, delta):
    """On 0/1 values the relative-entropy bound inverts Chernoff's bound of the binomial
    tail, which is above the exact tail: its lower end is at most Clopper-Pearson's
    one-sided lower end at the same level, and above the mean minus Hoeffding's
    additive radius."""
    k = min(k, n)
    v = np.r_[np.ones(k), np.zeros(n - k)]
    lcb = value_lower_bound(v, 0.0, 1.0, float(np.log(1 / delta)))
    cp = stats.beta.ppf(delta, k, n - k + 1) if k else 0.0
    assert lcb <= cp + 1e-9
    assert lcb >= k / n - np.sqrt(np.log(1 / delta) / (2 * n)) - 1e-9


def test_the_value_bound_rescales_utilities():
    v = np.array([-1.0, 3.0, 3.0, -1.0, 3.0])
    level = float(np.log(20))
    scaled = value_lower_bound((v + 1) / 4, 0.0, 1.0, level)
    assert value_lower_bound(v, -1.0, 3.0, level) == pytest.approx(-1 + 4 * scaled)


def test_the_guarantee_says_it_came_from_a_held_out_test(case):
    _, _, _, res = case
    g = res.guarantee
    assert g.kind.source == "held-out" and g.kind.where == "by the held-out test"
    words = " ".join(g.sentences())
    assert "rows the policy was not fitted on" in words
    assert "upper confidence bound from the held-out rows" in words
    assert "by the held-out test" in res.summary()
    assert g.price.plug_in_bounds[GAP.label] == res.stats["held_out"]["candidate_bounds"][
        GAP.label]


@pytest.mark.parametrize("bad, match", [
    (lambda p, d: fd.optimize_held_out(p, d, fd.Sufficiency(), epsilon=0.1),
     "sufficiency"),
    (lambda p, d: fd.optimize_held_out(p, d, fd.Independence(measure="kl"), epsilon=0.1),
     "measure='kl'"),
    (lambda p, d: fd.optimize_held_out(p, d, fd.Lipschitz(constant=0.2), epsilon=0.1),
     "Lipschitz"),
    (lambda p, d: fd.optimize_held_out(p, d, [GAP, GAP], epsilon=[0.1, 0.2, 0.3]),
     "epsilon"),
])
def test_what_the_route_cannot_certify_is_refused_by_name(case, bad, match):
    problem, _, data, _ = case
    with pytest.raises(FairdecideError, match=match):
        bad(problem, data)


def test_an_intervention_is_refused_naming_the_set_route():
    problem, truth = make_tabular_problem(4, 2, 2, 2, outcome_depends_on_action=True,
                                          random_state=0)
    data = sample_logged_data(problem, truth, 500, random_state=0)
    with pytest.raises(FairdecideError, match=r"ConfidenceSet\.from_data"):
        fd.optimize_held_out(problem, data, fd.Independence(), epsilon=0.1)


def test_one_group_is_refused():
    problem = fd.DecisionProblem.classification(2)
    data = fd.LoggedData(x=[0, 1] * 50, z=[0] * 100, y=[0, 1, 1, 0] * 25)
    with pytest.raises(FairdecideError, match="at least two"):
        fd.optimize_held_out(problem, data, fd.Independence(), epsilon=0.1)


# ---------------------------------------------------------------- the estimate reading
@pytest.fixture(scope="module")
def set_case():
    problem, truth = make_tabular_problem(6, 2, 2, 2, random_state=5)
    data = sample_logged_data(problem, truth, 4000, random_state=0)
    return problem, data, fd.ConfidenceSet.from_data(data, problem, delta=0.1)


@pytest.mark.parametrize("crit", [GAP, fd.Independence()], ids=lambda c: c.label)
def test_the_estimate_reading_keeps_the_fairness_certified_and_states_the_worst_value(
        set_case, crit):
    problem, _, cs = set_case
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", fd.PriceWarning)
        maximin = fd.optimize_policy(problem, cs, crit, epsilon=0.05)
        estimate = fd.optimize_policy(problem, cs.as_estimate(), crit, epsilon=0.05)
    center = cs.center
    u_est = fd.expected_utility(problem, center, estimate.policy)
    # it maximised the centre's value over the same feasible set as the maximin
    assert u_est >= fd.expected_utility(problem, center, maximin.policy) - 1e-7
    # the guarantee states the worst value over the set, recomputed in closed form
    assert estimate.guarantee.value == pytest.approx(
        cs.worst_value(estimate.policy, problem), abs=1e-9)
    assert estimate.guarantee.value <= maximin.guarantee.value + 1e-7
    bound = crit.over_set(cs, problem).bound(estimate.policy)
    assert bound <= 0.05 + 1e-7
    assert estimate.guarantee.deviations[crit.label] == pytest.approx(bound, abs=1e-9)
    assert estimate.guarantee.reading == "estimate"
    assert any("chosen for its" in s for s in estimate.guarantee.sentences())


def test_a_set_of_radius_zero_read_at_its_estimate_is_the_plug_in_optimum(set_case):
    """With every ball of radius 0 and the population given, the set is its centre: the
    estimate reading, the maximin and the plug-in program agree."""
    problem, _, cs = set_case
    point = fd.ConfidenceSet(cs.center, L1Balls(cs.center.p_y,
                                                np.zeros(cs.center.p_y.shape[:-1])))
    plug = fd.optimize_policy(problem, cs.center, GAP, epsilon=0.02)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", fd.PriceWarning)
        est = fd.optimize_policy(problem, point.as_estimate(), GAP, epsilon=0.02)
    assert est.utility == pytest.approx(plug.utility, abs=1e-7)
    assert est.guarantee.value == pytest.approx(plug.utility, abs=1e-7)


@pytest.mark.slow
def test_the_claims_hold_at_least_as_often_as_stated():
    """Over 100 data sets drawn from a known world at delta = 0.2, the fairness claim
    (the true gap within its certified bound) and the value claim (the true value above
    its certified one) break together in no more than delta of them: the one-sided
    Clopper-Pearson 99% lower end of the break rate is below delta."""
    problem, truth = make_tabular_problem(5, 2, 2, 2, random_state=11)
    breaks, reps = 0, 100
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", fd.PriceWarning)
        for i in range(reps):
            data = sample_logged_data(problem, truth, 2000, random_state=100 + i)
            res = fd.optimize_held_out(problem, data, GAP, epsilon=0.05, delta=0.2,
                                       random_state=i)
            g = res.guarantee
            broke = (GAP.deviation(res.policy, truth, problem) > g.deviations[GAP.label]
                     + 1e-9 or fd.expected_utility(problem, truth, res.policy)
                     < g.value - 1e-9)
            breaks += bool(broke)
    low = stats.beta.ppf(0.01, breaks, reps - breaks + 1) if breaks else 0.0
    assert low <= 0.2, f"{breaks} of {reps} replicates broke a claim at delta = 0.2"


# ---------------------------------------------------------------- rows needed
def test_the_closed_form_rows_are_rows_over_alpha_squared(case):
    """Were the whole bound to shrink as 1 / sqrt(rows), alpha B = epsilon at rows /
    alpha^2; the guarantee's note says it."""
    _, _, data, res = case
    h = res.stats["held_out"]
    assert 0 < h["alpha"] < 1
    assert h["rows_for_epsilon"] == int(np.ceil(data.n / h["alpha"] ** 2))
    assert f"{h['rows_for_epsilon']:,} rows" in res.guarantee.sentences()[-1]


@pytest.fixture(scope="module")
def small():
    problem, truth = make_tabular_problem(3, 2, 2, 2, random_state=1)
    return problem, sample_logged_data(problem, truth, 800, random_state=0)


def test_rows_needed_is_the_first_size_where_half_the_simulations_certify_unshrunk(small):
    """The table's sizes double from rows / 4 until alpha = 1 in half of the simulations,
    then halve the last doubling in log scale: the answer is the smallest size tried
    that reached it, every smaller size tried did not, and its value is that row's."""
    problem, data = small
    need = fd.rows_needed(problem, data, GAP, epsilon=0.1, n_sims=2, random_state=0)
    table = need.table.set_index("rows")
    assert need.rows is not None and table.loc[need.rows, "share_alpha_1"] >= 0.5
    assert (table.loc[table.index < need.rows, "share_alpha_1"] < 0.5).all()
    assert table.index.min() == data.n // 4
    assert need.value == table.loc[need.rows, "value"]
    assert need.certified <= need.value + 1e-9 or need.certified == pytest.approx(
        table.loc[need.rows, "certified"])
    assert f"{need.rows:,} rows" in need.sentence()


def test_rows_needed_with_no_tolerance_to_meet_is_the_first_size(small):
    """epsilon = inf: every candidate is certified unshrunk (alpha = 1) at any size."""
    problem, data = small
    need = fd.rows_needed(problem, data, GAP, epsilon=float("inf"), n_sims=2,
                          random_state=0)
    assert need.rows == data.n // 4 and len(need.table) == 1


def test_rows_needed_says_when_no_size_tried_was_enough(small):
    problem, data = small
    need = fd.rows_needed(problem, data, GAP, epsilon=0.0005, n_sims=2, max_rows=1600,
                          random_state=0)
    assert need.rows is None and need.value is None
    assert "Up to 1,600 rows" in need.sentence()
