"""The Lipschitz criterion in optimize_policy: exact against an all-pairs LP written here,
certified by constraint generation, combined with group criteria; bad input."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog
from scipy.spatial.distance import cdist

import fairdecide as fd
from fairdecide.datasets import make_bail_problem
from fairdecide.exceptions import FairdecideError
from fairdecide.policies import IndividualPolicy
from tests.reference import assert_between_chords, assert_recomputed


def _world(n: int, n_a: int, seed: int, d: int = 2, weights=None):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    z = np.arange(n) % 2
    if n_a == 2:
        p = 1 / (1 + np.exp(-3 * X[:, 0] - z))
        p_y = np.c_[1 - p, p]
        problem = fd.DecisionProblem.classification(2)
    else:  # an intervention: each action's success probability depends on x
        p = 1 / (1 + np.exp(-X @ rng.normal(size=(d, n_a)) * 2))
        p_y = np.stack([1 - p, p], axis=2)
        utility = np.c_[np.zeros(n_a), 1 - 0.1 * np.arange(n_a)]
        problem = fd.DecisionProblem(utility, outcome_depends_on_action=True)
    return problem, fd.SampleWorld(X, z, p_y, weights)


def _reference(problem, world, L, D=None, independence=None):
    """max sum_i w_i sum_a pi_ia r_ia s.t. D_TV(pi_i, pi_j) <= L d_ij for all pairs (and
    sum_z sum_a |P(a | z) - P(a)| <= independence), written independently."""
    n, n_a = world.n, problem.n_actions
    w = world.weights
    r = np.einsum("iay,ay->ia", world.unit_outcomes(problem), problem.utility)
    D = cdist(world.X, world.X) if D is None else D
    iu, ju = np.triu_indices(n, 1)
    m = len(iu)
    n_pi, n_t = n * n_a, m * n_a
    nv = n_pi + n_t
    rows, cols, vals, b = [], [], [], []
    k = 0
    for p in range(m):
        i, j = iu[p], ju[p]
        for a in range(n_a):
            t = n_pi + p * n_a + a
            for s in (1.0, -1.0):  # s (pi_ia - pi_ja) - t <= 0
                rows += [k, k, k]
                cols += [i * n_a + a, j * n_a + a, t]
                vals += [s, -s, -1.0]
                b.append(0.0)
                k += 1
        rows += [k] * n_a
        cols += [n_pi + p * n_a + a for a in range(n_a)]
        vals += [0.5] * n_a
        b.append(L * D[i, j])
        k += 1
    A = np.zeros((k, nv))
    A[rows, cols] = vals
    A_ub, b_ub = A, np.array(b)
    if independence is not None:  # u_za >= |P(a|z) - P(a)|, sum u <= eps
        z = world.z
        n_z = z.max() + 1
        extra = n_z * n_a
        A_ub = np.hstack([A_ub, np.zeros((len(A_ub), extra))])
        nv += extra
        more, rhs = [], []
        for g in range(n_z):
            wz = w * (z == g)
            for a in range(n_a):
                lin = np.zeros(nv)
                lin[np.arange(n) * n_a + a] = wz / wz.sum() - w
                u = np.zeros(nv)
                u[nv - extra + g * n_a + a] = 1.0
                more += [lin - u, -lin - u]
                rhs += [0.0, 0.0]
        tot = np.zeros(nv)
        tot[nv - extra:] = 1.0
        A_ub = np.vstack([A_ub, np.array(more), tot])
        b_ub = np.r_[b_ub, rhs, independence]
    A_eq = np.zeros((n, nv))
    for i in range(n):
        A_eq[i, i * n_a: (i + 1) * n_a] = 1.0
    c = np.zeros(nv)
    c[:n_pi] = -(w[:, None] * r).ravel()
    res = linprog(c, A_ub=A_ub, b_ub=b_ub, A_eq=A_eq, b_eq=np.ones(n),
                  bounds=[(0, None)] * nv, method="highs")
    assert res.status == 0
    return -res.fun


def _brute_violation(rows, X, L, D=None):
    D = cdist(X, X) if D is None else D
    tv = 0.5 * np.abs(rows[:, None, :] - rows[None, :, :]).sum(axis=2)
    v = tv - L * D
    iu = np.triu_indices(len(rows), 1)
    return max(0.0, float(v[iu].max()))


@settings(max_examples=12, deadline=None)
@given(n=st.integers(3, 14), n_a=st.sampled_from([2, 3, 5]), L=st.floats(0.05, 2.0),
       seed=st.integers(0, 10_000))
def test_generation_matches_an_all_pairs_lp_written_here(n, n_a, L, seed):
    problem, world = _world(n, n_a, seed)
    res = fd.optimize_policy(problem, world, fd.Lipschitz(constant=L), epsilon=0.0)
    ref = _reference(problem, world, L)
    assert res.utility == pytest.approx(ref, rel=1e-7, abs=1e-9)
    assert _brute_violation(res.policy.table, world.X, L) <= 1e-7
    cert = res.certificates["lipschitz"]
    assert cert["pairs_checked"] == n * (n - 1) // 2
    assert cert["certified"] and cert["max_violation"] <= 1e-7
    assert res.deviations["lipschitz"] == pytest.approx(
        _brute_violation(res.policy.table, world.X, L), abs=1e-12)


@pytest.mark.parametrize("drop, seed", [(0.0, 0), (0.0, 1), (1e-3, 2), (1e-3, 3)])
def test_cuts_that_leave_the_program_keep_the_optimum(monkeypatch, drop, seed):
    # kept warm, generation drops cuts slack by more than DROP_SLACK after each solve
    # (here every slack one, the most churn) and takes them back when violated again:
    # the optimum is still the all-pairs LP's, written here, and the policy is certified
    # by brute force over all pairs
    from fairdecide.optimize.engine import generation

    monkeypatch.setattr(generation, "DROP_SLACK", drop)
    problem, world = _world(40, 2, seed)
    res = fd.optimize_policy(problem, world, fd.Lipschitz(constant=0.15), epsilon=0.0)
    cert = res.certificates["lipschitz"]
    assert cert["cuts_dropped"] > 0
    assert f"{cert['cuts_dropped']:,} dropped once slack" in res.summary()
    assert cert["cuts_in_program"] == cert["cuts_added"] - cert["cuts_dropped"] + len(
        fd.Lipschitz(constant=0.15).initial_cuts(world.units()))
    assert res.utility == pytest.approx(_reference(problem, world, 0.15), rel=1e-7)
    assert _brute_violation(res.policy.table, world.X, 0.15) <= 1e-7


@settings(max_examples=8, deadline=None)
@given(n=st.integers(4, 12), n_a=st.sampled_from([2, 3]), L=st.floats(0.05, 0.5),
       eps=st.floats(0.01, 0.2), seed=st.integers(0, 10_000))
def test_generation_prices_its_tolerance(n, n_a, L, eps, seed):
    # constraint generation reports d U* / d epsilon from the dual's columns: a
    # supergradient of the concave frontier, between the chords to eps +- h, each end
    # solved on its own (and with an independence tolerance beside it, both prices)
    problem, world = _world(n, n_a, seed)

    def solve(e, e_ind=None):
        if e_ind is None:
            return fd.optimize_policy(problem, world, fd.Lipschitz(constant=L), epsilon=e)
        return fd.optimize_policy(problem, world, [fd.Lipschitz(constant=L),
                                                   fd.Independence()], epsilon=[e, e_ind])

    res = solve(eps)
    assert res.certificates["optimality"]["solver"] == "constraint generation"
    assert_between_chords(res.stats["tolerance_prices"]["lipschitz"], res.utility,
                          lambda e: solve(e).utility, eps)
    both = solve(eps, 0.05)
    prices = both.stats["tolerance_prices"]
    assert_between_chords(prices["lipschitz"], both.utility,
                          lambda e: solve(e, 0.05).utility, eps)
    assert_between_chords(prices["independence"], both.utility,
                          lambda e: solve(eps, e).utility, 0.05)


def test_all_pairs_written_at_once_agrees_and_group_criteria_combine():
    problem, world = _world(40, 2, 3)
    gen = fd.optimize_policy(problem, world, [fd.Lipschitz(constant=0.3), fd.Independence()],
                             epsilon=[0.0, 0.05])
    full = fd.optimize_policy(problem, world,
                              [fd.Lipschitz(constant=0.3, pairs="all"), fd.Independence()],
                              epsilon=[0.0, 0.05])
    ref = _reference(problem, world, 0.3, independence=0.05)
    assert gen.utility == pytest.approx(ref, rel=1e-7)
    assert full.utility == pytest.approx(ref, rel=1e-7)
    assert gen.deviations["independence"] <= 0.05 + 1e-7
    assert "lipschitz" in gen.certificates and "lipschitz" not in full.certificates
    assert gen.certificates["optimality"]["solver"] == "constraint generation"
    unconstrained = fd.optimize_policy(problem, world)
    assert gen.utility < unconstrained.utility - 1e-6  # the constraints bind


def test_summary_and_mixture_report_the_certificate():
    problem, world = _world(30, 2, 5)
    res = fd.optimize_policy(problem, world, fd.Lipschitz(constant=0.2), lam=0.3)
    text = res.summary()
    assert "lipschitz certificate" in text and f"{30 * 29 // 2:,} pairs" in text
    assert "generation rounds" in text
    # the penalised deviation is the certified largest violation, recomputed
    assert res.deviations["lipschitz"] == pytest.approx(
        _brute_violation(res.policy.table, world.X, 0.2), abs=1e-9)
    # a positive epsilon allows D_TV <= L d + epsilon
    loose = fd.optimize_policy(problem, world, fd.Lipschitz(constant=0.2), epsilon=0.1)
    assert 0.0 < loose.deviations["lipschitz"] <= 0.1 + 1e-7


def test_a_planted_violation_is_found_by_the_deviation():
    problem, world = _world(200, 2, 7)
    res = fd.optimize_policy(problem, world, fd.Lipschitz(constant=0.5), epsilon=0.0)
    rows = res.policy.table.copy()
    D = cdist(world.X, world.X)
    i, j = np.unravel_index(np.argmin(D + np.eye(len(D)) * 1e9), D.shape)
    rows[i] = [1.0, 0.0]
    rows[j] = [0.0, 1.0]
    planted = IndividualPolicy(rows, world.X)
    crit = fd.Lipschitz(constant=0.5)
    got = crit.deviation(planted, world, problem)
    assert got == pytest.approx(_brute_violation(rows, world.X, 0.5), abs=1e-12)
    assert got >= 1.0 - 0.5 * D[i, j] - 1e-12
    assert crit.deviation(res.policy, world, problem) <= 1e-7


@pytest.mark.parametrize("how", ["weighted", "mahalanobis", "callable"])
def test_metrics_give_the_optimum_of_the_transformed_features(how):
    problem, world = _world(25, 2, 11, d=3)
    w = np.array([1.0, 4.0, 0.25])
    if how == "weighted":
        crit = fd.Lipschitz("weighted", constant=0.3, weights=w)
    elif how == "mahalanobis":
        crit = fd.Lipschitz("mahalanobis", constant=0.3, matrix=np.diag(w))
    else:
        def crit_metric(A, B):
            return cdist(A * np.sqrt(w), B * np.sqrt(w))
        crit = fd.Lipschitz(crit_metric, constant=0.3)
    res = fd.optimize_policy(problem, world, crit, epsilon=0.0)
    D = cdist(world.X * np.sqrt(w), world.X * np.sqrt(w))
    assert res.utility == pytest.approx(_reference(problem, world, 0.3, D), rel=1e-7)
    assert _brute_violation(res.policy.table, world.X, 0.3, D) <= 1e-7


def test_beliefs_and_zero_weight_individuals():
    problem, world = _world(30, 2, 13, weights=np.r_[np.zeros(3), np.ones(27)])
    other = world.with_outcomes(np.clip(world.p_y[:, ::-1] * 0.5 + 0.25, 0, 1))
    belief = fd.Belief([world, other], [0.5, 0.5])
    res = fd.optimize_policy(problem, belief, fd.Lipschitz(constant=0.4), epsilon=0.0)
    # individuals of zero weight keep their program rows, so the policy stays smooth
    assert _brute_violation(res.policy.table, world.X, 0.4) <= 1e-7
    # the mean utility is linear in the outcome tables: the optimum is that of the world
    # with the scenarios' mean outcomes, solved by the LP written here
    mean = world.with_outcomes((world.p_y + other.p_y) / 2)
    assert res.utility == pytest.approx(_reference(problem, mean, 0.4), rel=1e-7)
    assert_recomputed(res, problem, belief, fd.Lipschitz(constant=0.4), epsilon=0.0,
                      by_hand={"lipschitz": lambda p, w, rows: _brute_violation(
                          rows, w.X, 0.4)})


def test_routes_say_what_they_need():
    problem, world = _world(8, 2, 17)
    with pytest.raises(FairdecideError, match="pairs='all'"):
        fd.optimize_policy(problem, world, [fd.Lipschitz(constant=0.5), fd.Sufficiency()],
                           epsilon=[0.0, 0.5])
    res = fd.optimize_policy(problem, world,
                             [fd.Lipschitz(constant=0.5, pairs="all"), fd.Sufficiency()],
                             epsilon=[0.0, 0.5])
    assert res.status == "locally optimal"
    assert _brute_violation(res.policy.table, world.X, 0.5) <= 1e-6


def test_given_pairs_bound_only_those_pairs():
    problem, world = _world(20, 2, 19)
    pairs = np.array([[0, 1], [2, 5], [7, 3]])
    res = fd.optimize_policy(problem, world, fd.Lipschitz(constant=0.1, pairs=pairs),
                             epsilon=0.0)
    rows, D = res.policy.table, cdist(world.X, world.X)
    for i, j in pairs:
        assert 0.5 * np.abs(rows[i] - rows[j]).sum() <= 0.1 * D[i, j] + 1e-7
    with pytest.raises(FairdecideError, match="refers to individual 25"):
        fd.optimize_policy(problem, world, fd.Lipschitz(pairs=[[0, 25]]), epsilon=0.0)


def test_bad_input():
    problem, world = _world(10, 2, 23)
    for bad in (0.0, -1.0, np.nan, np.inf, "1"):
        with pytest.raises(FairdecideError, match="constant"):
            fd.Lipschitz(constant=bad)
    with pytest.raises(FairdecideError, match="metric"):
        fd.Lipschitz("manhattan")
    with pytest.raises(FairdecideError, match="weights"):
        fd.Lipschitz("weighted", weights=[1.0, -1.0])
    with pytest.raises(FairdecideError, match="positive semi-definite"):
        fd.Lipschitz("mahalanobis", matrix=[[1.0, 0.0], [0.0, -1.0]])
    with pytest.raises(FairdecideError, match="weights must be of size 2"):
        fd.optimize_policy(problem, world, fd.Lipschitz("weighted", weights=[1.0, 1, 1]),
                           epsilon=0.0)
    with pytest.raises(FairdecideError, match="pairs"):
        fd.Lipschitz(pairs=[[1, 1]])
    with pytest.raises(FairdecideError, match="pairs"):
        fd.Lipschitz(pairs=[0.5, 1.5])

    # issue 23, item 8: these raised numpy's ValueError or were accepted
    with pytest.raises(FairdecideError, match=r"pairs must be .* got rows of different"):
        fd.Lipschitz(pairs=[[0, 1], [2]])
    with pytest.raises(FairdecideError, match=r"pairs must be None, 'all', .* got the string"):
        fd.Lipschitz(pairs="some")
    with pytest.raises(FairdecideError, match="metric must be one of"):
        fd.Lipschitz(metric=np.array(["euclidean", "weighted"]))
    with pytest.raises(FairdecideError, match="name must be a string"):
        fd.Lipschitz(name=3)

    def negative(A, B):
        return -cdist(A, B)

    def asymmetric(A, B):
        return cdist(A, B) + np.arange(len(B))[None, :] * (len(A) == len(B))

    def raising(A, B):
        raise RuntimeError("no distance today")

    for metric, match in ((negative, "negative"), (asymmetric, "symmetric"),
                          (raising, "raised RuntimeError")):
        with pytest.raises(FairdecideError, match=match):
            fd.optimize_policy(problem, world, fd.Lipschitz(metric), epsilon=0.0)
    one = fd.SampleWorld([[0.0]], [0], [[0.5, 0.5]])
    with pytest.raises(FairdecideError, match="at least 2"):
        fd.optimize_policy(problem, one, fd.Lipschitz(), epsilon=0.0)
    tab_problem, tab_world = make_bail_problem()
    with pytest.raises(FairdecideError, match="SampleWorld"):
        fd.optimize_policy(tab_problem, tab_world, fd.Lipschitz(), epsilon=0.0)


@pytest.mark.parametrize("metric", ["euclidean", "weighted", "scaled"])
def test_softmax_policies_are_certified_by_their_weights(metric):
    from sklearn.preprocessing import StandardScaler

    problem, world = _world(150, 2, 29)
    L, w = 0.15, np.array([2.0, 0.5])
    if metric == "weighted":
        crit, family = fd.Lipschitz("weighted", constant=L, weights=w), fd.LinearSoftmaxPolicy()
        D = lambda A, B: cdist(A * np.sqrt(w), B * np.sqrt(w))  # noqa: E731
    else:
        crit, D = fd.Lipschitz(constant=L), cdist
        family = fd.LinearSoftmaxPolicy(transformer=StandardScaler().fit(world.X * 3.0)
                                        if metric == "scaled" else None)
    res = fd.optimize_policy(problem, world, [crit, fd.Independence()], epsilon=[0.0, 0.05],
                             policy=family, n_restarts=2, random_state=0)
    cert = res.certificates["lipschitz"]
    assert cert["certified"] and cert["lipschitz_bound"] <= L * (1 + 1e-9)
    assert res.deviations["independence"] <= 0.05 + 1e-6
    # the bound holds for people the policy never saw
    rng = np.random.default_rng(0)
    A, B = rng.normal(size=(500, 2)) * 2, rng.normal(size=(500, 2)) * 2
    pa, pb = res.policy.action_proba(A), res.policy.action_proba(B)
    tv = 0.5 * np.abs(pa - pb).sum(axis=1)
    assert np.all(tv <= cert["lipschitz_bound"] * np.diag(D(A, B)) + 1e-12)
    # a smooth policy on the population: the free rows do at least as well
    free = fd.optimize_policy(problem, world, [crit, fd.Independence()], epsilon=[0.0, 0.05])
    assert res.utility <= free.utility + 1e-9
    assert "weight bound" in res.summary()


def test_softmax_cases_without_a_certificate_are_refused():
    problem, world = _world(40, 2, 31)
    for crit, family, match in (
            (fd.Lipschitz(constant=0.2), fd.LinearSoftmaxPolicy(include_z=True), "include_z"),
            (fd.Lipschitz(cdist, constant=0.2), fd.LinearSoftmaxPolicy(), "callable"),
            (fd.Lipschitz("weighted", weights=[1.0, 0.0], constant=0.2),
             fd.LinearSoftmaxPolicy(), "positive")):
        with pytest.raises(FairdecideError, match=match):
            fd.optimize_policy(problem, world, crit, epsilon=0.0, policy=family,
                               n_restarts=1)


@pytest.mark.parametrize("seed", [0, 1])
def test_the_dual_of_two_actions_and_pairs_alone_is_a_network(monkeypatch, seed):
    # with two actions and Lipschitz pairs alone, the warm dual has one row per person:
    # the deviation bound is fixed at epsilon and the marginals are written through the
    # policy (no dense row); an independence tolerance beside it keeps the marginals it
    # reads, and its own bound. Each optimum is the all-pairs LP's, written here
    from fairdecide.optimize.engine import generation

    models = []
    warm = generation._WarmHighs

    class Spy(warm):
        def __init__(self, *args, **kw):
            super().__init__(*args, **kw)
            models.append(self.model)

    monkeypatch.setattr(generation, "_WarmHighs", Spy)
    problem, world = _world(30, 2, seed)
    res = fd.optimize_policy(problem, world, fd.Lipschitz(constant=0.2), epsilon=0.0)
    assert models[-1].model.n_rows == world.n
    assert res.utility == pytest.approx(_reference(problem, world, 0.2), rel=1e-7)
    both = fd.optimize_policy(problem, world, [fd.Lipschitz(constant=0.2),
                                               fd.Independence()], epsilon=[0.0, 0.05])
    assert models[-1].model.n_rows > world.n
    assert both.utility == pytest.approx(_reference(problem, world, 0.2, independence=0.05),
                                         rel=1e-7)
