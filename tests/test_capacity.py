"""Capacity (a bounded share of an action, overall or per group) and cohorts of exactly k.

Every expected answer is computed here, independently of the library's program code:
top-k by sorting the expected gains, a greedy fill of the cells by gain, a dense LP over
the policy table (tests/reference.py, with the capacity rows written here), shares
recomputed from the returned probabilities.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import fairdecide as fd
from fairdecide.datasets import make_tabular_problem
from tests.reference import reference_solve

GRANT = fd.DecisionProblem(np.array([[0.0, 0.0], [1.0, -1.0]]),
                           action_labels=("refuse", "grant"))


def _gains(problem, p_y):
    """Expected utility gain of action 1 over action 0 for each unit: sum_y
    P(y | 1, u) U(1, y) - P(y | 0, u) U(0, y) (p_y of shape (..., n_a, n_y))."""
    return p_y[..., 1, :] @ problem.utility[1] - p_y[..., 0, :] @ problem.utility[0]


def _shares(weights, groups, selected, per_group):
    """Share of the units selected (probability ``selected``), overall or per group."""
    if not per_group:
        return np.array([weights @ selected / weights.sum()])
    return np.array([weights[groups == g] @ selected[groups == g] / weights[groups == g].sum()
                     for g in np.unique(groups)])


# ----------------------------------------------------------------------------- (a) top-k
@given(n=st.integers(4, 16), k=st.integers(1, 15), seed=st.integers(0, 2**16))
def test_capacity_of_k_people_selects_the_top_k_by_gain(n, k, seed):
    """No fairness criterion, k places among n people (at_most = k / n): the optimum
    selects exactly the k people of largest positive expected gain (distinct gains)."""
    k = min(k, n - 1)
    rng = np.random.default_rng(seed)
    problem = fd.DecisionProblem(rng.normal(size=(2, 2)), outcome_depends_on_action=True)
    p_y = rng.dirichlet(np.ones(2), size=(n, 2))  # P(y | a, i)
    world = fd.SampleWorld(rng.normal(size=(n, 2)), rng.integers(0, 2, n), p_y)
    gain = _gains(problem, p_y)
    order = np.argsort(-gain)
    want = np.zeros(n)
    top = order[:k]
    want[top[gain[top] > 0]] = 1.0
    res = fd.optimize_policy(problem, world, fd.Capacity(1, at_most=k / n), epsilon=0.0)
    np.testing.assert_allclose(res.policy.table[:, 1], want, atol=1e-7)
    base = np.einsum("iy,y->i", p_y[:, 0], problem.utility[0])
    assert res.utility == pytest.approx((base + want * gain).mean(), abs=1e-9)


def test_a_tie_at_the_boundary_is_the_only_fraction():
    """Gains 0.9, 0.5, 0.5, 0.2, -0.4 and two places: the first is selected, the two tied
    at 0.5 share the second place, nobody else is."""
    gain = np.array([0.9, 0.5, 0.5, 0.2, -0.4])
    q = (1 - gain) / 2  # GRANT's gain is 1 - 2 P(y = 1)
    world = fd.SampleWorld(np.arange(5.0), [0, 1, 0, 1, 0], np.c_[1 - q, q])
    res = fd.optimize_policy(GRANT, world, fd.Capacity("grant", at_most=2 / 5), epsilon=0.0)
    p = res.policy.table[:, 1]
    assert p[0] == pytest.approx(1.0, abs=1e-8)
    assert p[1] + p[2] == pytest.approx(1.0, abs=1e-8)
    np.testing.assert_allclose(p[3:], 0.0, atol=1e-8)
    assert res.utility == pytest.approx((0.9 + 0.5) / 5, abs=1e-9)  # U(refuse) = 0


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_tabular_capacity_fills_cells_in_order_of_gain(seed):
    """A TabularWorld and a share c below the unconstrained one: the cells (x, z) are
    filled in order of gain up to mass c, the last one in part."""
    problem, world = make_tabular_problem(6, 2, random_state=seed)
    gain = _gains(problem, world.outcome_table(2))  # (n_x, n_z)
    mass = world.p_xz
    free_share = mass[gain > 0].sum()
    c = 0.5 * free_share
    want = np.zeros_like(gain)
    left = c
    for flat in np.argsort(-gain, axis=None):
        cell = np.unravel_index(flat, gain.shape)
        take = min(1.0, left / mass[cell])
        want[cell] = take
        left -= take * mass[cell]
        if left <= 0:
            break
    res = fd.optimize_policy(problem, world, fd.Capacity(1, at_most=c), epsilon=0.0)
    np.testing.assert_allclose(res.policy.table[:, :, 1], want, atol=1e-7)


# ------------------------------------------------- (b, c) with independence, per group
def _capacity_rows(world, n_a, actions, at_most=None, at_least=None, per_group=False):
    """Rows g @ vec(pi) <= b over pi[x, z, a] (x-major) for the bounded shares:
    P(a in A) = sum_{x, z} P(x, z) sum_{a in A} pi(a | x, z), or that given z."""
    n_x, n_z = world.p_xz.shape
    rows = []
    for g in ([None] if not per_group else range(n_z)):
        coef = np.zeros((n_x, n_z, n_a))
        for a in actions:
            if g is None:
                coef[:, :, a] = world.p_xz
            else:
                coef[:, g, a] = world.p_xz[:, g] / world.p_xz[:, g].sum()
        if at_most is not None:
            rows.append((coef.reshape(-1), at_most))
        if at_least is not None:
            rows.append((-coef.reshape(-1), -at_least))
    return rows


CASES = [  # (n_actions, intervention, actions, at_most factor, at_least, per_group)
    (2, False, [1], 0.5, None, False),
    (2, True, [1], 0.6, None, False),
    (3, False, [1, 2], 0.5, None, False),
    (2, False, [0], None, 0.7, False),
    (2, False, [1], 0.5, None, True),
    (3, True, [2], 0.7, 0.05, True),
]


@pytest.mark.parametrize(("n_a", "interv", "actions", "most", "least", "per_group"), CASES)
@pytest.mark.parametrize("seed", [3, 4])
def test_capacity_with_independence_equals_a_dense_reference_lp(
        n_a, interv, actions, most, least, per_group, seed):
    """max U s.t. independence <= 0.05 and the capacity rows: the library's optimum
    equals scipy's linprog over the policy table with the rows written here."""
    problem, world = make_tabular_problem(5, 2, n_a, 2, outcome_depends_on_action=interv,
                                          random_state=seed)
    # bounds below the shares of the optimum without the capacity, so that they bind
    free = fd.optimize_policy(problem, world, fd.Independence(), epsilon=0.05).policy.table
    share = np.einsum("xz,xza->za", world.p_xz, free)[:, actions].sum(axis=1)
    share = share / world.p_xz.sum(axis=0) if per_group else share.sum(keepdims=True)
    at_most = None if most is None else float(most * share.max())
    cap = fd.Capacity([problem.action_labels[a] for a in actions], at_most=at_most,
                      at_least=least, per_group=per_group)
    res = fd.optimize_policy(problem, world, [cap, fd.Independence()], epsilon=[0.0, 0.05])
    rows = _capacity_rows(world, n_a, actions, at_most, least, per_group)
    u_ref, _ = reference_solve(problem, world, "independence", epsilon=0.05, pi_rows=rows)
    assert res.utility == pytest.approx(u_ref, abs=1e-7)
    u_without, _ = reference_solve(problem, world, "independence", epsilon=0.05)
    assert u_ref < u_without - 1e-6  # the capacity binds
    # the capacity holds on the returned table, computed by hand
    pi = res.policy.table[:, :, actions].sum(axis=2)
    got = (np.einsum("xz,xz->z", world.p_xz, pi) / world.p_xz.sum(axis=0) if per_group
           else np.array([(world.p_xz * pi).sum()]))
    if at_most is not None:
        assert np.all(got <= at_most + 1e-8)
    if least is not None:
        assert np.all(got >= least - 1e-8)


def test_per_group_capacity_bounds_every_group_and_the_deviation_is_the_excess():
    problem, world = make_tabular_problem(5, 3, random_state=8)
    cap = fd.Capacity(1, at_most=0.2, at_least=0.1, per_group=True)
    pi = fd.TabularPolicy(np.random.default_rng(0).dirichlet([1, 1], size=(5, 3)))
    share = (world.p_xz * pi.table[:, :, 1]).sum(axis=0) / world.p_xz.sum(axis=0)
    want = max(0.0, (share - 0.2).max(), (0.1 - share).max())
    assert cap.deviation(pi, world, problem) == pytest.approx(want, abs=1e-12)
    res = fd.optimize_policy(problem, world, cap, epsilon=0.0)
    got = (world.p_xz * res.policy.table[:, :, 1]).sum(axis=0) / world.p_xz.sum(axis=0)
    assert np.all((got <= 0.2 + 1e-8) & (got >= 0.1 - 1e-8))
    rows = _capacity_rows(world, 2, [1], 0.2, 0.1, per_group=True)
    u_ref, _ = reference_solve(problem, world, pi_rows=rows)
    assert res.utility == pytest.approx(u_ref, abs=1e-8)


#: Three cells, two groups; GRANT's gain 1 - 2 P(y = 1) is negative everywhere, so the
#: best policy grants nobody and a lower bound on the share granted binds. Gains by
#: cell (x, z): -0.2, -0.4 / -0.6, -0.1 / -0.8, -0.3.
FLOOR_MASS = np.array([[0.2, 0.1], [0.1, 0.2], [0.3, 0.1]])
FLOOR_Q = np.array([[0.6, 0.7], [0.8, 0.55], [0.9, 0.65]])


@pytest.mark.parametrize(("per_group", "want"), [
    # overall 0.45: cell (1, 1) (gain -0.1, mass 0.2), (0, 0) (-0.2, 0.2), then half of
    # (2, 1) (-0.3, 0.1): utility -0.02 - 0.04 - 0.015 = -0.075
    (False, [[1.0, 0.0], [0.0, 1.0], [0.0, 0.5]]),
    # each group 0.45: group 0 (mass 0.6) needs 0.27: (0, 0) and 0.07 / 0.1 of (1, 0);
    # group 1 (mass 0.4) needs 0.18: 0.9 of (1, 1); utility -0.04 - 0.042 - 0.018 = -0.1
    (True, [[1.0, 0.0], [0.7, 0.9], [0.0, 0.0]]),
])
def test_a_binding_lower_bound_on_the_share_is_met_exactly(per_group, want):
    """at_least binds (every gain is negative): the optimum fills the cells of least loss
    up to the bound, overall or within each group, solved by hand above; a policy below
    the bound deviates by its shortfall."""
    world = fd.TabularWorld(FLOOR_MASS, np.stack([1 - FLOOR_Q, FLOOR_Q], axis=-1))
    cap = fd.Capacity("grant", at_least=0.45, per_group=per_group)
    res = fd.optimize_policy(GRANT, world, cap, epsilon=0.0)
    np.testing.assert_allclose(res.policy.table[:, :, 1], want, atol=1e-8)
    assert res.utility == pytest.approx(-0.1 if per_group else -0.075, abs=1e-9)
    # granting 0.3 of everyone falls 0.15 short of the bound; granting 0.3 in group 0
    # and 0.5 in group 1 falls short in group 0 only, or overall by 0.45 - 0.38 = 0.07
    rows = np.zeros((3, 2, 2))
    rows[:, 0, 1], rows[:, 1, 1] = 0.3, 0.5
    rows[..., 0] = 1 - rows[..., 1]
    assert cap.deviation(fd.TabularPolicy(rows), world, GRANT) == pytest.approx(
        0.15 if per_group else 0.07, abs=1e-12)


def test_capacity_in_every_scenario_of_a_worst_case_belief():
    """Two scenarios of the same people with different weights: the worst case bounds
    each scenario's share (recomputed from its weights)."""
    rng = np.random.default_rng(5)
    n = 12
    X, z = rng.normal(size=(n, 1)), np.arange(n) % 2
    q = rng.uniform(0.05, 0.45, n)
    worlds = [fd.SampleWorld(X, z, np.c_[1 - q, q], weights=rng.uniform(0.5, 2, n))
              for _ in range(2)]
    belief = fd.Belief(tuple(worlds), aggregate="worst")
    res = fd.optimize_policy(GRANT, belief, fd.Capacity("grant", at_most=0.25), epsilon=0.0)
    for w in worlds:
        share = _shares(w.weights, w.z, res.policy.table[:, 1], per_group=False)
        assert share[0] <= 0.25 + 1e-8


# ------------------------------------------------------------- (g) capacity= keyword
@given(n=st.integers(4, 14), k=st.integers(1, 13), seed=st.integers(0, 2**16))
def test_the_capacity_keyword_alone_selects_the_top_k(n, k, seed):
    """``capacity=`` with no criteria: the k people of largest positive gain, as the
    sort computes it here."""
    k = min(k, n - 1)
    rng = np.random.default_rng(seed)
    q = rng.uniform(0, 1, n)
    world = fd.SampleWorld(rng.normal(size=(n, 1)), rng.integers(0, 2, n), np.c_[1 - q, q])
    gain = 1 - 2 * q  # GRANT: U(grant, y) = 1 - 2y, U(refuse) = 0
    top = np.argsort(-gain)[:k]
    want = np.zeros(n)
    want[top[gain[top] > 0]] = 1.0
    res = fd.optimize_policy(GRANT, world, capacity=fd.Capacity("grant", at_most=k / n))
    np.testing.assert_allclose(res.policy.table[:, 1], want, atol=1e-7)
    assert list(res.deviations) == ["capacity[grant]"]


@pytest.mark.parametrize("seed", [3, 4])
def test_the_capacity_keyword_is_a_hard_row_beside_a_fairness_tolerance(seed):
    """epsilon=0.05 for independence and capacity= a bound below the free share: the
    optimum equals linprog over the policy table with the capacity row written here, and
    the capacity is not given the fairness tolerance."""
    problem, world = make_tabular_problem(5, 2, 2, 2, random_state=seed)
    free = fd.optimize_policy(problem, world, fd.Independence(), epsilon=0.05).policy.table
    at_most = 0.7 * float((world.p_xz * free[:, :, 1]).sum())
    cap = fd.Capacity(problem.action_labels[1], at_most=at_most)
    res = fd.optimize_policy(problem, world, fd.Independence(), epsilon=0.05, capacity=cap)
    rows = _capacity_rows(world, 2, [1], at_most, None, False)
    u_ref, _ = reference_solve(problem, world, "independence", epsilon=0.05, pi_rows=rows)
    assert res.utility == pytest.approx(u_ref, abs=1e-7)
    assert (world.p_xz * res.policy.table[:, :, 1]).sum() <= at_most + 1e-8
    assert "capacity" in res.tradeoff and "<= 0" in res.tradeoff


def test_the_capacity_keyword_refuses_trade_offs_that_would_trade_it_off():
    problem, world = make_tabular_problem(4, 2, random_state=0)
    cap = fd.Capacity(1, at_most=0.2)
    for kwargs in ({"lam": 0.5}, {"utility_slack": 0.01}):
        with pytest.raises(fd.FairdecideError, match="hard budget"):
            fd.optimize_policy(problem, world, fd.Independence(), capacity=cap, **kwargs)
    with pytest.raises(fd.FairdecideError, match=r"capacity.*must be a Capacity"):
        fd.optimize_policy(problem, world, capacity=fd.Independence())


# ----------------------------------------------------------------------- (f) softmax
@pytest.mark.parametrize("per_group", [False, True])
def test_softmax_policy_respects_a_capacity(per_group):
    rng = np.random.default_rng(1)
    n = 60
    X, z = rng.normal(size=(n, 2)), rng.integers(0, 2, n)
    q = 1 / (1 + np.exp(2 * X[:, 0] - 0.5 * z))  # P(default)
    world = fd.SampleWorld(X, z, np.c_[1 - q, q])
    free = fd.optimize_policy(GRANT, world, policy=fd.LinearSoftmaxPolicy())
    free_share = _shares(world.weights, z, free.policy.action_proba(X, z)[:, 1], per_group)
    bound = 0.6 * float(free_share.min())
    cap = fd.Capacity("grant", at_most=bound, per_group=per_group)
    res = fd.optimize_policy(GRANT, world, cap, epsilon=0.0, policy=fd.LinearSoftmaxPolicy())
    share = _shares(world.weights, z, res.policy.action_proba(X, z)[:, 1], per_group)
    excess = max(0.0, float((share - bound).max()))
    assert excess <= 1e-6  # the route's verification tolerance
    assert res.deviations[cap.label] == pytest.approx(excess, abs=1e-12)
    # a softmax policy is one of the fixed population's policies: never better
    lp = fd.optimize_policy(GRANT, world, cap, epsilon=0.0)
    assert res.utility <= lp.utility + 1e-9


# ----------------------------------------------------------------------- (d) sampler
@st.composite
def fractional_cohorts(draw):
    """p = a convex combination of random k-subsets of n people: sum p = k, p in [0, 1]."""
    n = draw(st.integers(1, 30))
    k = draw(st.integers(0, n))
    m = draw(st.integers(1, 5))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    lam = rng.dirichlet(np.ones(m))
    p = np.zeros(n)
    for weight in lam:
        p[rng.choice(n, size=k, replace=False)] += weight
    return np.clip(p, 0.0, 1.0), k


@given(fractional_cohorts(), st.integers(0, 2**16))
def test_every_cohort_has_exactly_k_members(cohort, seed):
    p, k = cohort
    rng = np.random.RandomState(seed)
    for _ in range(20):
        picked = fd.sample_cohort(p, random_state=rng)
        assert picked.dtype == bool and picked.sum() == k
        assert not np.any(picked[p == 0]) and np.all(picked[p == 1])
    assert fd.sample_cohort(p, k=k, random_state=seed).sum() == k


def test_inclusion_frequencies_match_the_probabilities():
    p = np.array([0.1, 0.9, 0.5, 0.25, 0.75, 1.0, 0.0, 0.3, 0.2])  # sums to 4
    n_draws = 10_000
    rng = np.random.RandomState(0)
    counts = np.zeros(len(p))
    for _ in range(n_draws):
        counts += fd.sample_cohort(p, random_state=rng)
    freq = counts / n_draws
    se = np.sqrt(p * (1 - p) / n_draws)
    assert np.all(np.abs(freq - p) <= 4 * se)  # exact where p is 0 or 1 (se = 0)


@pytest.mark.parametrize(("p", "k", "match"), [
    ([0.5, 1.2, 0.3], None, r"\[0, 1\]; p\[1\]"),
    ([0.5, -0.1, 0.6], None, r"\[0, 1\]; p\[1\]"),
    ([0.5, np.nan, 0.5], None, "p contains NaN"),
    ([0.5, 0.6, 0.3], None, "whole number"),
    ([0.5, 0.5, 1.0], 3, "k is 3 but p sums to 2"),
    ([0.5, 0.5], 1.5, "k must be a whole number"),
    ([0.5, 0.5], 3, "k must be <= 2"),
    ([], None, "p must hold one"),
    ([[0.5, 0.5]], None, "p must have 1 dimensions"),
])
def test_sampler_refuses_bad_probabilities(p, k, match):
    with pytest.raises(fd.FairdecideError, match=match):
        fd.sample_cohort(p, k=k)


def test_capacity_refuses_bad_bounds_and_unknown_actions():
    with pytest.raises(fd.FairdecideError, match="at_most or at_least"):
        fd.Capacity("grant")
    with pytest.raises(fd.FairdecideError, match=r"at_least .* must not exceed at_most"):
        fd.Capacity("grant", at_most=0.2, at_least=0.3)
    # issue 40: a count where a share is asked for says how to write the share
    with pytest.raises(fd.FairdecideError, match=r"at_most is a share of the people, in "
                       r"\[0, 1\], got 3; for 3 places among n people, use at_most=3 / n"):
        fd.Capacity("grant", at_most=3)  # a count, not a share
    with pytest.raises(fd.FairdecideError, match=r"at_least \(a share of the people; k "
                       r"places among n: k / n\) must be a finite number in \[0"):
        fd.Capacity("grant", at_least=-0.5)
    with pytest.raises(fd.FairdecideError, match="actions must not repeat"):
        fd.Capacity(["grant", "grant"], at_most=0.2)
    world = fd.SampleWorld([[0.0], [1.0]], [0, 1], [[0.5, 0.5], [0.2, 0.8]])
    with pytest.raises(fd.FairdecideError, match="actions"):
        fd.Capacity("lend", at_most=0.5).deviation(
            fd.policies.IndividualPolicy([[1, 0], [0, 1]], [[0.0], [1.0]]), world, GRANT)
    assert fd.Capacity("grant", at_most=0.5) == fd.Capacity(["grant"], at_most=0.5)


def test_gradient_terms_are_the_excesses_and_their_exact_jacobian():
    """The softmax route's terms: F = max(0, max_i r_i) equals the deviation, and r is
    affine in the marginal with the given Jacobian (checked along random directions)."""
    problem, world = make_tabular_problem(4, 2, 3, 2, random_state=1)
    cap = fd.Capacity([1, 2], at_most=0.3, at_least=0.2, per_group=True)
    pi = fd.TabularPolicy(np.random.default_rng(2).dirichlet([1, 1, 1], size=(4, 2)))
    M = fd.decision_table(problem, world, pi).group_marginal()
    terms = cap.gradient_terms(M, problem)
    assert terms.combine == "hinge-max"
    assert terms.deviation() == pytest.approx(cap.deviation(pi, world, problem), abs=1e-12)
    share = (M[:, 1:].sum(axis=(1, 2)) / M.sum(axis=(1, 2)))
    np.testing.assert_allclose(terms.values, np.r_[share - 0.3, 0.2 - share], atol=1e-12)
    rng = np.random.default_rng(3)
    for _ in range(3):
        d = rng.normal(size=M.shape)
        d -= d.mean(axis=(1, 2), keepdims=True)  # keeps each group's mass
        moved = cap.gradient_terms(M + 1e-3 * d, problem).values
        np.testing.assert_allclose(moved - terms.values, terms.jacobian @ (1e-3 * d.ravel()),
                                   atol=1e-12)
