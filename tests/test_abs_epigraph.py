"""The program's absolute values (CriterionBlock.add_abs_epigraph, kind "sum"): with the
policy held at random rows, the least deviation variable the program allows in each
scenario is the criterion's deviation written from its definition (tests/reference.py,
over the world's own arrays), and each absolute value is one equality row."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fairdecide import Belief, Independence, Separation
from fairdecide.datasets import make_tabular_problem
from fairdecide.optimize.engine.chain import solve_program
from fairdecide.optimize.program.policy_program import PolicyProgram
from fairdecide.optimize.program.tradeoff import Mixture
from tests.reference import deviation_by_hand, marginal_by_hand
from tests.test_structured import make_belief

CRITERIA = {"independence": Independence(), "by group": Independence(weighting="group"),
            "pairwise": Independence(reference="pairwise"), "separation": Separation()}


@settings(max_examples=20, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(n_x=st.integers(2, 12), n_z=st.integers(2, 3), n_a=st.integers(2, 4),
       K=st.integers(1, 4), criterion=st.sampled_from(sorted(CRITERIA)),
       seed=st.integers(0, 1000))
def test_least_deviation_variable_is_the_deviation(n_x, n_z, n_a, K, criterion, seed):
    problem, world = make_tabular_problem(n_x, n_z, n_a, 2, random_state=seed)
    rng = np.random.default_rng(seed)
    worlds = make_belief(problem, world, K, rng)
    crit = CRITERIA[criterion]
    prog = PolicyProgram(problem, Belief(worlds), group_blind=False)
    # the penalty minimises each scenario's deviation variable; the policy is held fixed
    program = prog.build([crit], Mixture(0.5))
    rows = rng.dirichlet(np.ones(n_a), n_x * n_z)
    program.lb[: prog.n_pi] = program.ub[: prog.n_pi] = rows.reshape(-1)
    res = solve_program(program, "highs-ds")
    assert res.ok
    _, f = program.read_solution(res.x)
    want = [deviation_by_hand(marginal_by_hand(problem, w, rows), crit, problem)
            for w in worlds]
    # HiGHS's primal feasibility tolerance (1e-7 absolute per row) over a sum of at most
    # n_z * n_a * n_y absolute values of rows of order one
    np.testing.assert_allclose(f[0], want, rtol=0, atol=1e-7 * 2 * n_z * n_a * 2)
    # one equality per absolute value, no inequality rows: nothing else bounds f here
    assert program.A_ub.shape[0] == 0
