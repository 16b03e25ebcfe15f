"""The interior point over unit blocks (fairdecide.optimize.engine.unit_ipm): its normal
equations against a dense solve, its optima against HiGHS's on random beliefs, and its
hand-back on programs it cannot solve."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fairdecide import Belief, Independence, Separation, optimize_policy
from fairdecide.datasets import make_tabular_problem
from fairdecide.exceptions import SolverFallbackWarning
from fairdecide.optimize.engine._normal_columns import ColumnNormal
from fairdecide.optimize.engine._normal_rows import RowNormal
from fairdecide.optimize.engine.chain import solve_program
from fairdecide.optimize.engine.unit_ipm import (
    TOL,
    analyse,
    solve_unit_ipm,
    system,
    unit_ipm_suits,
)
from fairdecide.optimize.program.policy_program import PolicyProgram, Program
from fairdecide.optimize.program.tradeoff import FairnessConstraint, Mixture
from tests.test_structured import make_belief

#: HiGHS's optimum is exact to its tolerances (1e-9, relative to the objective's scale),
#: the interior point's to a relative gap and residuals of 1e-9: their objectives agree
#: to the sum, with a factor of five for the sum over a program's rows.
REL = 1e-8


def _program(n_x, n_z, n_a, K, blind, tradeoff, seed=0, criteria=None):
    problem, world = make_tabular_problem(n_x, n_z, n_a, 2, random_state=seed)
    worlds = make_belief(problem, world, K, np.random.default_rng(seed))
    prog = PolicyProgram(problem, Belief(worlds), group_blind=blind)
    return problem, worlds, prog.build(criteria or [Independence()], tradeoff)


@pytest.mark.parametrize("blind", [False, True])
def test_the_normal_equations_equal_a_dense_solve(blind):
    """The block elimination solves A D A^T dy = r as numpy's dense solve does, for a
    random positive D."""
    _, _, program = _program(12, 3, 3, 4, blind, Mixture(0.3), seed=1)
    lp, blocks, border, _, _ = analyse(program)
    ne = RowNormal(lp, lp.G_v, blocks, border)
    rng = np.random.default_rng(0)
    n = ne.G.shape[1]
    d = rng.uniform(0.05, 3.0, n)
    ne.factor(d)
    # A written out independently: the simplex rows, then the coupling rows with a slack
    # per inequality row
    ineq = np.flatnonzero(np.isinf(lp.lo))
    E = sp.kron(sp.identity(lp.n_units), np.ones((1, lp.n_actions)))
    top = sp.hstack([E, sp.csr_matrix((lp.n_units, n - lp.n_units * lp.n_actions))])
    slack = sp.csr_matrix((np.ones(len(ineq)), (ineq, np.arange(len(ineq)))),
                          shape=(lp.n_rows, len(ineq)))
    A = sp.vstack([top, sp.hstack([lp.G_pi, lp.G_v, slack])]).toarray()
    r = rng.normal(size=A.shape[0])
    want = np.linalg.solve(A @ np.diag(d) @ A.T, r)
    np.testing.assert_allclose(ne.solve(r), want, rtol=1e-8, atol=1e-8 * np.abs(want).max())


@pytest.mark.parametrize(("blind", "tradeoff"), [(False, Mixture(0.3)),
                                                (True, FairnessConstraint((0.02,)))])
def test_the_normal_equations_with_the_marginals_substituted_equal_a_dense_solve(
        blind, tradeoff):
    """With the group marginals substituted out (m = B pi), the normal equations of the
    border alone solve A D A^T dy = r as numpy's dense solve does, and the Newton step
    (written out so that B is applied once each way) meets its three equations, for a
    random positive D. A is written here from the program's coupling rows: the border
    rows' policy part is their marginal columns times m's definition, -G_v[:, m] G_pi."""
    _, _, program = _program(12, 3, 3, 4, blind, tradeoff, seed=1)
    layout = analyse(program)
    lp, _, _, _, sub = layout
    assert sub is not None
    ne, _, c, kept, free, way = system(layout)
    assert way.startswith("marginals substituted")
    G_pi, G_v = lp.G_pi.toarray(), lp.G_v.toarray()
    inner = np.flatnonzero(np.abs(G_pi).sum(axis=1) > 0)
    m_col = [int(np.flatnonzero(G_v[i])[0]) for i in inner]  # each inner row's marginal
    border = np.setdiff1d(np.arange(lp.n_rows), inner)
    pi_part = -G_v[np.ix_(border, m_col)] @ G_pi[inner]
    others = G_v[border][:, kept]
    ineq = np.flatnonzero(np.isinf(lp.lo[border]))
    slack = np.zeros((len(border), len(ineq)))
    slack[ineq, np.arange(len(ineq))] = 1.0
    E = np.kron(np.eye(lp.n_units), np.ones((1, lp.n_actions)))
    n = len(c)
    top = np.hstack([E, np.zeros((lp.n_units, n - E.shape[1]))])
    A = np.vstack([top, np.hstack([pi_part, others, -others[:, free], slack])])
    rng = np.random.default_rng(0)
    x, z = rng.uniform(0.1, 2.0, n), rng.uniform(0.1, 2.0, n)
    d = x / z
    ne.factor(d)
    r = rng.normal(size=A.shape[0])
    want = np.linalg.solve(A @ np.diag(d) @ A.T, r)
    np.testing.assert_allclose(ne.solve(r), want, rtol=1e-8, atol=1e-8 * np.abs(want).max())
    rp, rd, rc = rng.normal(size=A.shape[0]), rng.normal(size=n), rng.normal(size=n)
    dx, dy, dz = ne.direction(x, z, d, rp, rd, rc)
    for got, want_ in ((A @ dx, rp), (A.T @ dy + dz, rd), (z * dx + x * dz, rc)):
        np.testing.assert_allclose(got, want_, atol=1e-7 * max(1.0, np.abs(want_).max()))


def test_a_penalised_belief_is_solved_with_its_marginals_substituted():
    """A belief's whole program under lam: the interior point substitutes the group
    marginals (the border's one dense matrix a step, no inner block factored) and
    finds HiGHS's optimum."""
    problem, world = make_tabular_problem(30, 3, 4, 2, random_state=3)
    belief = Belief(make_belief(problem, world, 6, np.random.default_rng(3)))
    ipm = optimize_policy(problem, belief, Independence(), lam=0.4, solver="unit-ipm")
    ref = optimize_policy(problem, belief, Independence(), lam=0.4, solver="highs-ds")
    assert ipm.solver.startswith("unit interior point")
    assert ipm.stats["unit_ipm"]["normal_equations"].startswith("marginals substituted")
    assert abs(ipm.objective - ref.objective) <= REL * max(1.0, abs(ref.objective))


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), N=st.integers(1, 6), n_a=st.integers(2, 4),
       R=st.integers(1, 40), width=st.integers(1, 3))
def test_the_normal_equations_by_columns_equal_a_dense_solve(seed, N, n_a, R, width):
    """In the policy's space (Woodbury, then the step policy first): the solve and the
    Newton step equal numpy's dense solve of the system written out here, for random
    positive D and a random H with one entry per column (``width`` columns per row)."""
    rng = np.random.default_rng(seed)
    k = n_a - 1
    G = rng.normal(size=(R, N * k))
    H = sp.csr_matrix((rng.normal(size=R * width) + np.where(rng.random(R * width) < 0.5,
                                                             -2.0, 2.0),
                       (np.repeat(np.arange(R), width), np.arange(R * width))),
                      shape=(R, R * width))
    ne = ColumnNormal(N, n_a, G, H)
    # A written out: the simplex rows; the coupling rows, zero in each unit's first action
    G_pi = np.zeros((R, N, n_a))
    G_pi[:, :, 1:] = G.reshape(R, N, k)
    A = np.block([[np.kron(np.eye(N), np.ones((1, n_a))), np.zeros((N, R * width))],
                  [G_pi.reshape(R, N * n_a), H.toarray()]])
    n = A.shape[1]
    x, z = rng.uniform(1e-3, 2.0, n), rng.uniform(1e-3, 2.0, n)
    d = x / z
    ne.factor(d)
    r = rng.normal(size=A.shape[0])
    ADA = A @ np.diag(d) @ A.T
    want = np.linalg.solve(ADA, r)
    scale = np.abs(want).max() * np.linalg.cond(ADA)
    np.testing.assert_allclose(ne.solve(r), want, atol=1e-13 * scale)
    np.testing.assert_allclose(ne.A(x), A @ x, atol=1e-12 * np.abs(A).max() * n)
    np.testing.assert_allclose(ne.AT(r), A.T @ r, atol=1e-12 * np.abs(A).max() * n)
    rp, rd, rc = rng.normal(size=A.shape[0]), rng.normal(size=n), rng.normal(size=n)
    dx, dy, dz = ne.direction(x, z, d, rp, rd, rc)
    K = np.block([[A, np.zeros((A.shape[0], A.shape[0])), np.zeros((A.shape[0], n))],
                  [np.zeros((n, n)), A.T, np.eye(n)],
                  [np.diag(z), np.zeros((n, A.shape[0])), np.diag(x)]])
    want = np.linalg.solve(K, np.concatenate([rp, rd, rc]))
    got = np.concatenate([dx, dy, dz])
    np.testing.assert_allclose(got, want, atol=1e-13 * np.abs(want).max() * np.linalg.cond(K))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n_x=st.integers(4, 30), n_z=st.integers(2, 3), n_a=st.integers(2, 4),
       K=st.integers(2, 5), blind=st.booleans(),
       criterion=st.sampled_from(["independence", "separation", "max"]),
       tradeoff=st.sampled_from(["epsilon", "lam", "slack"]),
       aggregate=st.sampled_from(["mean", "worst"]),
       eps=st.sampled_from([0.0, 0.01, 0.05]), seed=st.integers(0, 1000))
def test_same_optimum_as_highs(n_x, n_z, n_a, K, blind, criterion, tradeoff, aggregate,
                               eps, seed):
    problem, world = make_tabular_problem(n_x, n_z, n_a, 2, random_state=seed)
    worlds = make_belief(problem, world, K, np.random.default_rng(seed))
    belief = Belief(worlds, aggregate=aggregate)
    crit = {"independence": Independence(), "separation": Separation(),
            "max": Independence(measure="max")}[criterion]
    kw = {"epsilon": {"epsilon": eps}, "lam": {"lam": 0.1 + eps},
          "slack": {"utility_slack": eps}}[tradeoff]
    ipm = optimize_policy(problem, belief, crit, group_blind=blind, solver="unit-ipm", **kw)
    ref = optimize_policy(problem, belief, crit, group_blind=blind, solver="highs-ds", **kw)
    tol = REL * max(1.0, abs(ref.objective))
    if tradeoff == "slack":
        # the least deviation under U >= U* - slack moves with U*, which the interior
        # point finds to its tolerance (TOL of |U*|): the frontier's slope there, from
        # HiGHS at a slack 1e-6 larger, scales that error
        wider = optimize_policy(problem, belief, crit, group_blind=blind,
                                solver="highs-ds", utility_slack=eps + 1e-6)
        slope = abs(ref.objective - wider.objective) / 1e-6
        tol += slope * 10 * TOL * max(1.0, abs(ref.utility))
    assert abs(ipm.objective - ref.objective) <= tol
    if tradeoff == "slack" and eps == 0.0 and "unit-ipm handed the program back" in ipm.solver:
        # a floor at the utility optimum leaves the program no interior: the interior
        # point may stall there and hand it to HiGHS, as it says
        assert "not converged" in ipm.solver
        return
    assert ipm.solver.startswith("unit interior point")
    assert ipm.stats["unit_ipm"]["gap"] < 1e-9



@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n_x=st.integers(4, 30), n_z=st.integers(2, 3), n_a=st.integers(2, 4),
       K=st.integers(2, 5), tradeoff=st.sampled_from(["epsilon", "lam"]),
       eps=st.sampled_from([0.0, 0.01, 0.05]), seed=st.integers(0, 1000))
def test_without_gondzios_correctors_the_same_optimum(n_x, n_z, n_a, K, tradeoff, eps, seed):
    # the unit interior point takes Gondzio's correctors (CORRECTORS; the tests above
    # compare it with HiGHS); plain Mehrotra, without them (benchmarks/_ipm_designs.py's
    # "plain"), stops at the same optimum as HiGHS's dual simplex too

    from fairdecide.optimize.engine import unit_ipm

    problem, world = make_tabular_problem(n_x, n_z, n_a, 2, random_state=seed)
    belief = Belief(make_belief(problem, world, K, np.random.default_rng(seed)))
    kw = {"epsilon": {"epsilon": eps}, "lam": {"lam": 0.1 + eps}}[tradeoff]
    ref = optimize_policy(problem, belief, Independence(), solver="highs-ds", **kw)
    steps = []
    plain = unit_ipm.mehrotra

    def counted(*args, **kwargs):
        run = plain(*args[:5], correctors=0)
        steps.append(run.info.get("iterations"))
        return run

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(unit_ipm, "mehrotra", counted)
        ipm = optimize_policy(problem, belief, Independence(), solver="unit-ipm", **kw)
    assert steps and ipm.solver.startswith("unit interior point")
    assert abs(ipm.objective - ref.objective) <= REL * max(1.0, abs(ref.objective))

def test_an_infeasible_program_is_handed_to_highs():
    """No interior point converges on a program no policy meets: HiGHS takes it and says
    it is infeasible, and the result says the interior point handed it back."""
    problem, world = make_tabular_problem(20, 2, 3, 2, random_state=2)
    prog = PolicyProgram(problem, Belief.plug_in(world), group_blind=False)
    base = prog.build([Independence()], FairnessConstraint((0.05,)))
    w = np.zeros(base.n_variables)  # P(a = 0) >= 1.5
    w[: prog.n_pi: prog.n_a] = prog.unit_weight[prog.free_of_unit]
    bad = Program(base.c, sp.vstack([base.A_ub, sp.csr_matrix(-w)], format="csr"),
                  np.append(base.b_ub, -1.5), base.A_eq, base.b_eq, base.lb, base.ub,
                  base.m_slices, base.f_index, n_actions=base.n_actions,
                  n_units=base.n_units)
    x, _, status, _ = solve_unit_ipm(bad)
    assert x is None and status != "optimal"
    with pytest.warns(SolverFallbackWarning, match="^solver='unit-ipm' did not solve this "
                      "program: it handed the program back"):
        res = solve_program(bad, "unit-ipm")
    assert not res.ok and res.status.startswith("infeasible")
    assert "after unit-ipm handed the program back" in res.solver
    assert res.choice["handed_back"]["unit-ipm"] == res.details["unit_ipm"]["fallback_reason"]


def test_programs_without_small_unit_blocks_are_not_taken():
    _, _, program = _program(10, 2, 3, 2, False, Mixture(0.3))
    assert unit_ipm_suits(program)
    program.n_units = 0  # no unit blocks declared
    assert not unit_ipm_suits(program)
    with pytest.warns(SolverFallbackWarning, match="^solver='unit-ipm' did not solve this "
                      "program: it does not take no unit blocks. highs-ds took it instead"):
        res = solve_program(program, "unit-ipm")
    assert res.ok and res.solver.startswith("HiGHS")
    assert res.choice["passed_over"]["unit-ipm"] == (
        "asked for, but it does not take no unit blocks")


@settings(max_examples=20, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(n_x=st.integers(3, 15), n_z=st.integers(2, 3), n_a=st.integers(2, 4),
       K=st.integers(1, 4), criterion=st.sampled_from(["independence", "separation"]),
       tradeoff=st.sampled_from(["epsilon", "lam"]),
       aggregate=st.sampled_from(["mean", "worst"]), seed=st.integers(0, 1000))
def test_merged_rows_give_back_a_solution_of_the_program(n_x, n_z, n_a, K, criterion,
                                                          tradeoff, aggregate, seed):
    """The interior point merges the marginal rows that nothing else tells apart
    (independence reads P(z, a); separation and the worst case's utility rows read
    every outcome): the variables it gives back satisfy the program's own rows, and its
    objective is HiGHS's on the program as built."""
    problem, world = make_tabular_problem(n_x, n_z, n_a, 2, random_state=seed)
    belief = Belief(make_belief(problem, world, K, np.random.default_rng(seed)),
                    aggregate=aggregate)
    crit = Independence() if criterion == "independence" else Separation()
    tr = FairnessConstraint((0.02,)) if tradeoff == "epsilon" else Mixture(0.3)
    program = PolicyProgram(problem, belief, group_blind=False).build([crit], tr)
    _, blocks, _, merge, _ = analyse(program)
    n_m = n_z * n_a * 2
    marginal_rows = sum(len(b) for b in blocks)
    # the inner rows are the marginals' definitions: independence under the mean reads
    # P(z, a) only (its utility is a cost), so the outcomes' rows merge in pairs at
    # least (with two actions, the rows of the action it does not write merge across
    # scenarios too); the worst case's utility rows read every outcome: nothing merges
    if criterion == "independence" and aggregate == "mean":
        assert marginal_rows <= K * n_m // 2
    if aggregate == "worst":
        assert marginal_rows == K * n_m and merge is None
    x, objective, status, _ = solve_unit_ipm(program)
    assert status == "optimal"
    scale = max(1.0, float(np.abs(x).max()))
    np.testing.assert_allclose(program.A_eq @ x, program.b_eq, atol=1e-8 * scale)
    if program.A_ub.shape[0]:
        assert np.all(program.A_ub @ x <= program.b_ub + 1e-8 * scale)
    assert np.all(x >= program.lb - 1e-8)
    ref = solve_program(program, "highs-ds")
    assert abs(objective - ref.objective) <= REL * max(1.0, abs(ref.objective))
