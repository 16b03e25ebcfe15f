"""Properties of optimal policies (hypothesis, derandomised)."""

import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from fairdecide import (
    DecisionProblem,
    Independence,
    Separation,
    TabularWorld,
    optimize_policy,
)
from fairdecide.datasets import make_tabular_problem
from tests.reference import assert_recomputed, reference_solve

sizes = st.tuples(st.integers(1, 5), st.integers(1, 3), st.integers(2, 3), st.integers(2, 3))
linear_criteria = st.sampled_from([Independence(), Separation(), Independence(measure="max"),
                                   Separation(weighting="group")])


@given(seed=st.integers(0, 10_000), size=sizes, crit=linear_criteria,
       eps=st.floats(0, 1), blind=st.booleans())
def test_rows_on_simplex_and_verified(seed, size, crit, eps, blind):
    problem, world = make_tabular_problem(*size, random_state=seed)
    res = optimize_policy(problem, world, crit, epsilon=eps, group_blind=blind)
    t = res.policy.table
    assert np.all(t >= 0) and np.allclose(t.sum(axis=2), 1.0)
    # utility (einsum over P(x, z) pi P(y | x, z) U) and deviation recomputed by hand,
    # the deviation within eps
    assert_recomputed(res, problem, world, crit, epsilon=eps)
    if crit.weighting == "uniform":  # the optimum of the dense LP in tests/reference.py
        kind = "independence" if crit.given is None else "separation"
        want, _ = reference_solve(problem, world, kind, measure=crit.measure, epsilon=eps,
                                  blind=blind)
        assert res.utility == pytest.approx(want, abs=1e-7)
    if blind:
        assert res.policy.is_group_blind


@given(seed=st.integers(0, 10_000), size=sizes, crit=linear_criteria)
def test_large_epsilon_recovers_unconstrained(seed, size, crit):
    problem, world = make_tabular_problem(*size, random_state=seed)
    free = optimize_policy(problem, world)
    for eps in (1e6, np.inf):
        res = optimize_policy(problem, world, crit, epsilon=eps)
        assert res.utility == pytest.approx(free.utility, abs=1e-9)
    lam0 = optimize_policy(problem, world, crit, lam=0.0)
    assert lam0.utility == pytest.approx(free.utility, abs=1e-9)


@given(seed=st.integers(0, 10_000), size=sizes, crit=linear_criteria,
       eps=st.lists(st.floats(0, 2), min_size=2, max_size=4))
def test_utility_non_decreasing_in_epsilon(seed, size, crit, eps):
    problem, world = make_tabular_problem(*size, random_state=seed)
    utils = [optimize_policy(problem, world, crit, epsilon=e).utility for e in sorted(eps)]
    assert all(b >= a - 1e-9 for a, b in itertools.pairwise(utils))


@given(seed=st.integers(0, 10_000), n_z=st.integers(2, 4), crit=linear_criteria,
       eps=st.floats(0, 0.5))
def test_relabelling_groups_keeps_the_optimum(seed, n_z, crit, eps):
    problem, world = make_tabular_problem(4, n_z, 2, 2, random_state=seed)
    perm = np.random.default_rng(seed).permutation(n_z)
    world2 = TabularWorld(world.p_xz[:, perm], world.p_y[:, perm])
    a = optimize_policy(problem, world, crit, epsilon=eps)
    b = optimize_policy(problem, world2, crit, epsilon=eps)
    assert a.utility == pytest.approx(b.utility, abs=1e-9)


@given(seed=st.integers(0, 10_000), crit=linear_criteria, eps=st.floats(0, 0.5))
def test_relabelling_actions_keeps_the_optimum(seed, crit, eps):
    problem, world = make_tabular_problem(4, 2, 3, 2, random_state=seed)
    perm = np.random.default_rng(seed).permutation(3)
    problem2 = DecisionProblem(problem.utility[perm], outcome_depends_on_action=False)
    a = optimize_policy(problem, world, crit, epsilon=eps)
    b = optimize_policy(problem2, world, crit, epsilon=eps)
    assert a.utility == pytest.approx(b.utility, abs=1e-9)
    assert_recomputed(b, problem2, world, crit, epsilon=eps)  # by hand, within eps


@given(seed=st.integers(0, 10_000), crit=linear_criteria, lam=st.floats(0, 1))
def test_mixture_deviation_non_increasing_in_lambda(seed, crit, lam):
    problem, world = make_tabular_problem(4, 2, 2, 2, random_state=seed)
    lo = optimize_policy(problem, world, crit, lam=lam / 2)
    hi = optimize_policy(problem, world, crit, lam=lam)
    assert hi.deviations[crit.label] <= lo.deviations[crit.label] + 1e-8
    assert hi.utility <= lo.utility + 1e-8


@given(seed=st.integers(0, 10_000), eps=st.floats(0, 1))
def test_group_blind_never_beats_group_aware(seed, eps):
    problem, world = make_tabular_problem(4, 3, 2, 2, random_state=seed)
    aware = optimize_policy(problem, world, Independence(), epsilon=eps)
    blind = optimize_policy(problem, world, Independence(), epsilon=eps, group_blind=True)
    assert blind.utility <= aware.utility + 1e-9


@given(seed=st.integers(0, 10_000), crit=linear_criteria)
def test_pareto_frontier_is_monotone_and_ends_at_the_optimum(seed, crit):
    from fairdecide.optimize import pareto_frontier

    problem, world = make_tabular_problem(4, 2, 2, 2, random_state=seed)
    front = pareto_frontier(problem, world, crit, n_points=5)
    assert len(front) == 5 and front["epsilon"].iloc[0] == 0.0
    assert np.all(np.diff(front["utility"]) >= -1e-9)
    assert np.all(front["deviation"] <= front["epsilon"] + 1e-6)
    free = optimize_policy(problem, world)
    assert front["utility"].iloc[-1] == pytest.approx(free.utility, abs=1e-8)
