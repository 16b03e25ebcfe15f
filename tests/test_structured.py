"""The structured solver against the general HiGHS route and an independent LP.

The structured solver bins units only when a program is large; the tests shrink its
thresholds so that small random programs take the same path (coarse program, sifting,
certificate) that large ones do.
"""

from __future__ import annotations

from unittest import mock

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

from fairdecide import (
    Belief,
    Independence,
    Separation,
    TabularWorld,
    optimize_policy,
)
from fairdecide.datasets import make_tabular_problem
from fairdecide.exceptions import SolverFallbackWarning
from fairdecide.optimize.engine import structured
from fairdecide.optimize.engine._coarsen import _main_direction, sub_bins
from fairdecide.optimize.engine.chain import solve_program
from fairdecide.optimize.program.policy_program import PolicyProgram, Program
from fairdecide.optimize.program.tradeoff import FairnessConstraint, Mixture
from tests.reference import assert_between_chords

REL = 1e-9


def small_bins():
    """Bin every program (four bins at least) so the sifting path runs on small ones."""
    return mock.patch.multiple(structured, BINS_MIN=4, BINS_PER_ROW=0, BELIEF_BINS=4)


def agree(a: float, b: float) -> bool:
    return abs(a - b) <= REL * max(1.0, abs(b))


def make_belief(problem, world, K, rng):
    """K perturbed copies of ``world`` (the same cells and groups)."""
    worlds = []
    for _ in range(K):
        p_xz = world.p_xz * rng.uniform(0.5, 1.5, world.p_xz.shape)
        p_y = rng.dirichlet(np.ones(problem.n_outcomes), world.p_y.shape[:-1])
        worlds.append(TabularWorld(p_xz / p_xz.sum(), 0.5 * world.p_y + 0.5 * p_y))
    return worlds


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(n_x=st.integers(8, 40), n_z=st.integers(2, 3), n_a=st.integers(2, 4),
       criterion=st.sampled_from(["independence", "separation", "both", "max"]),
       tradeoff=st.sampled_from(["epsilon", "lam", "slack"]),
       eps=st.sampled_from([0.0, 0.003, 0.02, 0.1]), blind=st.booleans(),
       seed=st.integers(0, 10_000))
def test_structured_matches_the_general_route(n_x, n_z, n_a, criterion, tradeoff, eps, blind,
                                              seed):
    problem, world = make_tabular_problem(n_x, n_z, n_a, 2, random_state=seed)
    crits = {"independence": [Independence()], "separation": [Separation()],
             "both": [Independence(), Separation()],
             "max": [Independence(measure="max")]}[criterion]
    kw = {"epsilon": {"epsilon": eps}, "lam": {"lam": 0.3 + eps},
          "slack": {"utility_slack": eps}}[tradeoff]
    general = optimize_policy(problem, world, crits, group_blind=blind, solver="highs", **kw)
    with small_bins():
        fast = optimize_policy(problem, world, crits, group_blind=blind, solver="structured",
                               **kw)
    assert fast.solver.startswith("structured"), fast.solver
    assert agree(fast.objective, general.objective), (fast.objective, general.objective)
    # the returned policy is verified from its decision table (optimize_policy raises
    # otherwise); its deviations meet the tolerance as the general route's do
    if tradeoff == "epsilon":
        assert all(v <= eps + 1e-7 for v in fast.deviations.values())


@pytest.mark.parametrize("aggregate", ["mean", "worst"])
def test_structured_beliefs_match(aggregate):
    rng = np.random.default_rng(3)
    problem, world = make_tabular_problem(30, 3, 3, 2, random_state=1)
    belief = Belief(make_belief(problem, world, 6, rng), aggregate=aggregate)
    general = optimize_policy(problem, belief, Independence(), epsilon=0.01, solver="highs")
    with small_bins():
        fast = optimize_policy(problem, belief, Independence(), epsilon=0.01,
                               solver="structured")
    assert fast.solver.startswith("structured")
    assert agree(fast.objective, general.objective)
    assert fast.stats["structured"]["bins"] > 0


def test_ties_and_zero_probability_units():
    # duplicated cells tie exactly; cells of probability zero have no stake at all
    problem, world = make_tabular_problem(20, 2, 3, 2, random_state=5)
    p_xz = np.vstack([world.p_xz, world.p_xz, np.zeros((5, 2))])
    p_y = np.concatenate([world.p_y, world.p_y, world.p_y[:5]])
    tied = TabularWorld(p_xz / p_xz.sum(), p_y)
    for eps in (0.0, 0.01):
        general = optimize_policy(problem, tied, Separation(), epsilon=eps, solver="highs")
        with small_bins():
            fast = optimize_policy(problem, tied, Separation(), epsilon=eps,
                                   solver="structured")
        assert agree(fast.objective, general.objective)
        # zero-probability cells get the best action's row, as on the general route
        rows = fast.policy.proba(tied.units())
        np.testing.assert_allclose(rows[-10:], general.policy.proba(tied.units())[-10:])


def test_against_an_independent_lp():
    # Independence, TV, epsilon: an LP written here from the world's arrays, without
    # the program's marginal variables, with scipy's HiGHS.
    problem, world = make_tabular_problem(25, 2, 2, 2, random_state=11)
    eps = 0.02
    n_x, n_z, n_a = 25, 2, 2
    p_xz, p_y, U = world.p_xz, world.p_y, problem.utility
    value = np.einsum("xzy,ay->xza", p_y, U) * p_xz[:, :, None]     # per cell and action
    p_z = p_xz.sum(axis=0)
    n_pi = n_x * n_z * n_a
    # variables: pi (x, z, a), t (z, a) with t >= |P(a|z) - P(a)|
    n = n_pi + n_z * n_a
    c = np.concatenate([-value.ravel(), np.zeros(n_z * n_a)])
    rows, b = [], []
    for z in range(n_z):
        for a in range(n_a):
            r = np.zeros(n)
            for x in range(n_x):
                for zz in range(n_z):
                    coef = (p_xz[x, zz] / p_z[z] if zz == z else 0.0) - p_xz[x, zz]
                    r[(x * n_z + zz) * n_a + a] = coef
            t = np.zeros(n)
            t[n_pi + z * n_a + a] = 1.0
            rows += [r - t, -r - t]
            b += [0.0, 0.0]
    r = np.zeros(n)  # F = sum_z sum_a |P(a | z) - P(a)| <= eps
    r[n_pi:] = 1.0
    rows.append(r)
    b.append(eps)
    A_eq = sp.kron(sp.identity(n_x * n_z), np.ones((1, n_a)))
    A_eq = sp.hstack([A_eq, sp.csr_matrix((n_x * n_z, n_z * n_a))])
    ref = linprog(c, A_ub=np.array(rows), b_ub=b, A_eq=A_eq, b_eq=np.ones(n_x * n_z),
                  bounds=(0, None), method="highs")
    assert ref.status == 0
    with small_bins():
        fast = optimize_policy(problem, world, Independence(), epsilon=eps,
                               solver="structured")
    assert fast.utility == pytest.approx(-ref.fun, rel=1e-9)


def test_infeasible_program_is_certified():
    problem, world = make_tabular_problem(30, 2, 3, 2, random_state=2)
    prog = PolicyProgram(problem, Belief.plug_in(world), group_blind=False)
    base = prog.build([Independence()], FairnessConstraint((0.05,)))
    # a row no policy meets: P(a = 0) >= 1.5
    w = np.zeros(base.n_variables)
    w[: prog.n_pi: prog.n_a] = np.repeat(prog.unit_weight, 1)[prog.free_of_unit]
    A_ub = sp.vstack([base.A_ub, sp.csr_matrix(-w)], format="csr")
    bad = Program(base.c, A_ub, np.append(base.b_ub, -1.5), base.A_eq, base.b_eq, base.lb,
                  base.ub, base.m_slices, base.f_index, n_actions=base.n_actions,
                  n_units=base.n_units)
    with small_bins():
        run = structured.solve_structured(bad)
    assert run.infeasible and not run.ok
    assert solve_program(bad, "highs").status.startswith("infeasible")


def test_structured_reports_its_certificate_and_falls_back():
    problem, world = make_tabular_problem(40, 2, 3, 2, random_state=4)
    with small_bins():
        res = optimize_policy(problem, world, Separation(), lam=0.5, solver="structured")
    info, cert = res.stats["structured"], res.certificates["optimality"]
    assert info["bins"] > 0 and cert["rounds"] >= 1 and cert["certified"]
    assert 0 <= cert["gap"] <= cert["bound"]
    assert info["working_units"] <= info["units"]
    # a program without unit blocks is solved by HiGHS, and the result says so
    prog = PolicyProgram(problem, Belief.plug_in(world), group_blind=False)
    p = prog.build([Separation()], Mixture(0.5))
    p.n_units = 0
    with pytest.warns(SolverFallbackWarning, match="^solver='structured' did not solve this "
                      "program: it does not take no unit blocks. highs-ds took it instead"):
        res2 = solve_program(p, "structured")
    assert res2.ok and res2.solver.startswith("HiGHS")
    assert res2.choice["passed_over"]["structured"] == (
        "asked for, but it does not take no unit blocks")
    assert agree(-res2.objective, res.objective)


def test_automatic_choice_by_size():
    small = make_tabular_problem(10, 2, 2, 2, random_state=0)
    res = optimize_policy(*small, Independence(), epsilon=0.01)
    assert res.solver.startswith("HiGHS")
    big = make_tabular_problem(1500, 2, 2, 2, random_state=0)
    res = optimize_policy(*big, Independence(), epsilon=0.01)
    assert res.solver.startswith("structured")


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 120), n_parent=st.integers(1, 4), n_best=st.integers(1, 3),
       parts=st.integers(2, 9), seed=st.integers(0, 10_000))
def test_sub_bins_share_members_by_best_action_and_margin(n, n_parent, n_best, parts, seed):
    rng = np.random.default_rng(seed)
    parent = rng.integers(0, n_parent, n)
    best = rng.integers(0, n_best, n)
    margin = rng.random(n)
    label = sub_bins(parent, best, margin, parts)
    for p in np.unique(parent):
        for b in np.unique(best):
            group = (parent == p) & (best == b)
            size = int(group.sum())
            if not size:
                continue
            labs = label[group]
            # a run of one moves alone; otherwise at most `parts` sub-bins of the group
            if -(-size // parts) == 1:
                assert np.all(labs == -1)
                continue
            assert np.all(labs >= 0) and len(np.unique(labs)) <= parts
            # no sub-bin crosses a parent or an action, and each is a run of margins
            for lab in np.unique(labs):
                inside = label == lab
                assert np.all(group[inside])
                lo, hi = margin[inside].min(), margin[inside].max()
                between = group & (margin > lo) & (margin < hi)
                assert np.all(label[between] == lab)


@settings(max_examples=20, deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(n_x=st.integers(20, 60), n_a=st.integers(2, 4), parts=st.integers(2, 3),
       criterion=st.sampled_from(["independence", "separation"]),
       eps=st.sampled_from([0.0, 0.005, 0.03]), seed=st.integers(0, 10_000))
def test_bins_split_in_levels_reach_the_same_optimum(n_x, n_a, parts, criterion, eps, seed):
    # two or three sub-bins a split: bins of tens of units are split over several
    # rounds, each level re-anchored at the last prices, before single units move
    problem, world = make_tabular_problem(n_x, 2, n_a, 2, random_state=seed)
    crit = Independence() if criterion == "independence" else Separation()
    general = optimize_policy(problem, world, crit, epsilon=eps, solver="highs")
    with small_bins(), mock.patch.object(structured, "SPLIT_PARTS", parts):
        fast = optimize_policy(problem, world, crit, epsilon=eps, solver="structured")
    assert fast.solver.startswith("structured"), fast.solver
    assert agree(fast.objective, general.objective), (fast.objective, general.objective)
    assert fast.certificates["optimality"]["certified"]


def test_sub_bins_are_made_and_counted():
    problem, world = make_tabular_problem(50, 2, 3, 2, random_state=2)
    general = optimize_policy(problem, world, Separation(), epsilon=0.005, solver="highs")
    with small_bins(), mock.patch.object(structured, "SPLIT_PARTS", 2):
        fast = optimize_policy(problem, world, Separation(), epsilon=0.005,
                               solver="structured")
    assert fast.stats["structured"]["sub_bins"] > 0
    assert fast.certificates["optimality"]["rounds"] >= 3
    assert agree(fast.objective, general.objective)


@settings(max_examples=15, deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(n_x=st.integers(15, 40), n_a=st.integers(2, 3), eps=st.floats(0.01, 0.2),
       criterion=st.sampled_from(["independence", "separation"]),
       seed=st.integers(0, 10_000))
def test_binned_tolerance_price_is_a_supergradient(n_x, n_a, eps, criterion, seed):
    # the price read from a binned, split master lies between the chords of U*(eps),
    # each U* from HiGHS on the whole program
    problem, world = make_tabular_problem(n_x, 2, n_a, 2, random_state=seed)
    crit = Independence() if criterion == "independence" else Separation()
    with small_bins():
        res = optimize_policy(problem, world, crit, epsilon=eps, solver="structured")
    assert res.solver.startswith("structured")
    assert_between_chords(res.stats["tolerance_prices"][criterion], res.utility,
                          lambda e: optimize_policy(problem, world, crit, epsilon=e,
                                                    solver="highs").utility, eps)


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10_000), n_a=st.integers(2, 4), n_rows=st.integers(2, 8),
       m=st.integers(5, 60))
def test_bins_follow_the_profiles_main_direction(seed, n_a, n_rows, m):
    # units whose profiles (coefficients side by side, then costs; positive, summing
    # to 1, so already normalised) lie on a line c + t_i d (+ noise 1e-9), sum(d) = 0:
    # the score is the coordinate along d, as numpy's SVD of the centred profiles,
    # written here densely, says
    rng = np.random.default_rng(seed)
    k = n_a * n_rows + n_a
    c = rng.uniform(1.0, 2.0, size=k)
    c /= c.sum()
    d = rng.uniform(-1.0, 1.0, size=k)
    d = (d - d.mean()) * 0.5 * c.min() / np.abs(d - d.mean()).max()
    t = rng.uniform(-1.0, 1.0, size=m)
    prof = c + t[:, None] * d + 1e-9 * rng.random((m, k))
    G = sp.csr_matrix(prof[:, :n_a * n_rows].reshape(m * n_a, n_rows))
    cost = prof[:, n_a * n_rows:]
    score = _main_direction(G, cost, np.arange(m), n_a)
    dense = prof / np.abs(prof).sum(axis=1, keepdims=True)
    dense -= dense.mean(axis=0)
    top = np.linalg.svd(dense, full_matrices=False)[2][0]
    expected = dense @ top
    assert np.abs(np.abs(score) - np.abs(expected)).max() <= 1e-6 * np.abs(expected).max()
    assert abs(np.corrcoef(score, t)[0, 1]) > 1 - 1e-6
