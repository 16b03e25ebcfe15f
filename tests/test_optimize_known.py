"""A bank of problems with known optimal values, for every trade-off and linear criterion."""


import cvxpy as cp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fairdecide import (
    DecisionProblem,
    Independence,
    Separation,
    TabularWorld,
    optimize_policy,
)
from fairdecide.datasets import make_tabular_problem
from fairdecide.exceptions import FairdecideError
from fairdecide.optimize import FairnessConstraint, MaxUtility, Mixture, UtilityConstraint

from .reference import (
    assert_between_chords,
    assert_recomputed,
    comparison_rows,
    reference_solve,
    utility_coefficients,
)

# One cell, two equal groups, P(y = 1 | z) = 0.8, 0.3, accuracy. With q_z = P(a = 1 | z):
# U = 0.45 + 0.3 q0 - 0.2 q1 and the independence deviation is F = 2 |q0 - q1|.
PROBLEM = DecisionProblem.classification(2)
WORLD = TabularWorld([[0.5, 0.5]], [[[0.2, 0.8], [0.7, 0.3]]])


def test_unconstrained_by_hand():
    res = optimize_policy(PROBLEM, WORLD)
    assert res.utility == pytest.approx(0.75)
    np.testing.assert_allclose(res.policy.table[0], [[0, 1], [1, 0]])
    assert res.status == "optimal"
    assert_recomputed(res, PROBLEM, WORLD)  # U = 0.45 + 0.3 q0 - 0.2 q1 at q = (1, 0)


@pytest.mark.parametrize("eps", [0.0, 0.3, 1.0, 1.9, 2.0, 5.0])
def test_epsilon_constraint_by_hand(eps):
    # Best: q0 = 1, q1 = 1 - eps / 2, so U = 0.55 + 0.1 min(eps, 2).
    res = optimize_policy(PROBLEM, WORLD, Independence(), epsilon=eps)
    assert res.utility == pytest.approx(0.55 + 0.1 * min(eps, 2.0), abs=1e-9)
    assert res.deviations["independence"] <= eps + 1e-9


@pytest.mark.parametrize(("lam", "fair"), [(0.05, False), (0.2, True), (0.5, True)])
def test_mixture_by_hand(lam, fair):
    # (1-lam) U - lam F is maximised unconstrained iff lam < 1/11, else at q0 = q1 = 1.
    res = optimize_policy(PROBLEM, WORLD, Independence(), lam=lam)
    want_u, want_f = (0.55, 0.0) if fair else (0.75, 2.0)
    assert res.utility == pytest.approx(want_u, abs=1e-9)
    assert res.deviations["independence"] == pytest.approx(want_f, abs=1e-9)
    assert res.objective == pytest.approx((1 - lam) * want_u - lam * want_f, abs=1e-9)


@pytest.mark.parametrize("slack", [0.0, 0.05, 0.1, 0.2, 0.3])
def test_utility_slack_by_hand(slack):
    # Lowering q1 costs 0.2 utility and saves 2 deviation per unit: min F = 2 - 10 slack.
    res = optimize_policy(PROBLEM, WORLD, Independence(), utility_slack=slack)
    assert res.deviations["independence"] == pytest.approx(max(0.0, 2 - 10 * slack), abs=1e-9)
    assert res.utility >= 0.75 - slack - 1e-9


@pytest.mark.parametrize(("tradeoff", "want_u", "want_f"), [
    (FairnessConstraint(0.3), 0.55 + 0.1 * 0.3, 0.3),       # q1 = 1 - eps / 2
    (FairnessConstraint((1.9,)), 0.55 + 0.1 * 1.9, 1.9),
    (Mixture(0.05), 0.75, 2.0),                              # lam < 1/11: unconstrained
    (Mixture(0.5), 0.55, 0.0),
    (UtilityConstraint(0.1), 0.65, 2.0 - 10 * 0.1),          # min F = 2 - 10 slack
    (UtilityConstraint(), None, 0.0),   # the smallest deviation; any q0 = q1 attains it
])
def test_tradeoff_objects_by_hand(tradeoff, want_u, want_f):
    # The trade-off objects solve the hand-solved problem above to its known optimum.
    res = optimize_policy(PROBLEM, WORLD, Independence(), tradeoff=tradeoff)
    if want_u is not None:
        assert res.utility == pytest.approx(want_u, abs=1e-9)
    assert res.deviations["independence"] == pytest.approx(want_f, abs=1e-9)


def test_max_utility_object_by_hand():
    res = optimize_policy(PROBLEM, WORLD, tradeoff=MaxUtility())
    assert res.utility == pytest.approx(0.75, abs=1e-9)


@pytest.mark.parametrize(("criteria", "kwargs", "says"), [
    ([Independence()], {"tradeoff": Mixture(0.5), "epsilon": 0.1}, "not both"),
    ([Independence()], {"tradeoff": Mixture(0.5), "chance_delta": 0.1}, "not both"),
    ([Independence()], {"tradeoff": "epsilon"}, "trade-off object"),
    ([Independence()], {"tradeoff": MaxUtility()}, "takes no fairness criteria"),
    ([], {"tradeoff": Mixture(0.5)}, "at least one fairness criterion"),
    ([Independence(), Separation()], {"tradeoff": FairnessConstraint((0.1, 0.1, 0.1))},
     "3 tolerances for 2 criteria"),
])
def test_tradeoff_object_errors(criteria, kwargs, says):
    with pytest.raises(FairdecideError, match=says):
        optimize_policy(PROBLEM, WORLD, criteria, **kwargs)


def test_max_measure_by_hand():
    # max measure: |q0 - q1| / 2 <= eps  ->  q1 = 1 - 2 eps.
    res = optimize_policy(PROBLEM, WORLD, Independence(measure="max"), epsilon=0.1)
    assert res.utility == pytest.approx(0.55 + 0.2 * 0.2, abs=1e-9)


CASES = [
    # (seed, n_x, n_z, n_actions, n_outcomes)
    (0, 3, 2, 2, 2),
    (1, 4, 3, 2, 2),
    (2, 5, 2, 3, 2),
    (3, 3, 3, 3, 3),
    (4, 6, 2, 2, 3),
    (5, 2, 4, 4, 2),
]


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("kind", ["independence", "separation"])
@pytest.mark.parametrize("blind", [False, True])
def test_against_reference_lp(case, kind, blind):
    seed, n_x, n_z, n_a, n_y = case
    problem, world = make_tabular_problem(n_x, n_z, n_a, n_y, random_state=seed)
    crit = Independence() if kind == "independence" else Separation()
    free_u, _ = reference_solve(problem, world, blind=blind)
    res = optimize_policy(problem, world, group_blind=blind)
    assert res.utility == pytest.approx(free_u, abs=1e-8)
    for eps in (0.0, 0.05, 0.3):
        want_u, _ = reference_solve(problem, world, kind, epsilon=eps, blind=blind)
        res = optimize_policy(problem, world, crit, epsilon=eps, group_blind=blind)
        assert res.utility == pytest.approx(want_u, abs=1e-8)
        assert res.deviations[crit.label] <= eps + 1e-8
        assert res.policy.is_group_blind or not blind
    for lam in (0.1, 0.6):
        want_u, want_f = reference_solve(problem, world, kind, lam=lam, blind=blind)
        res = optimize_policy(problem, world, crit, lam=lam, group_blind=blind)
        assert res.objective == pytest.approx((1 - lam) * want_u - lam * want_f, abs=1e-8)
    for slack in (0.0, 0.02):
        _, want_f = reference_solve(problem, world, kind, slack=slack, blind=blind)
        res = optimize_policy(problem, world, crit, utility_slack=slack, group_blind=blind)
        assert res.deviations[crit.label] == pytest.approx(want_f, abs=1e-7)


@pytest.mark.parametrize("case", CASES[:4])
def test_max_measure_against_reference(case):
    seed, n_x, n_z, n_a, n_y = case
    problem, world = make_tabular_problem(n_x, n_z, n_a, n_y, random_state=seed)
    for kind, crit in (("independence", Independence(measure="max")),
                       ("separation", Separation(measure="max"))):
        want_u, _ = reference_solve(problem, world, kind, measure="max", epsilon=0.02)
        res = optimize_policy(problem, world, crit, epsilon=0.02)
        assert res.utility == pytest.approx(want_u, abs=1e-8)


def test_equal_opportunity_against_reference():
    problem, world = make_tabular_problem(5, 3, 2, 2, random_state=11)
    want_u, _ = reference_solve(problem, world, "separation", epsilon=0.05, outcomes=[1])
    res = optimize_policy(problem, world, Separation(outcomes=[1]), epsilon=0.05)
    assert res.utility == pytest.approx(want_u, abs=1e-8)
    # Equal opportunity is weaker than full separation.
    full = optimize_policy(problem, world, Separation(), epsilon=0.05)
    assert res.utility >= full.utility - 1e-9


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_kl_against_direct_cvxpy_model(seed):
    problem, world = make_tabular_problem(4, 2, 2, 2, random_state=seed)
    n_x, n_z, n_a = 4, 2, 2
    pi = cp.Variable((n_x * n_z, n_a), nonneg=True)
    flat = cp.reshape(pi, (n_x * n_z * n_a,), order="C")
    u = utility_coefficients(problem, world)
    p_z = world.p_xz.sum(axis=0)
    terms = []
    for z in range(n_z):
        cond = []
        pool = []
        for a in range(n_a):
            gz = np.zeros(n_x * n_z * n_a)
            gp = np.zeros(n_x * n_z * n_a)
            for x in range(n_x):
                gz[(x * n_z + z) * n_a + a] = world.p_xz[x, z] / p_z[z]
                for z2 in range(n_z):
                    gp[(x * n_z + z2) * n_a + a] = world.p_xz[x, z2]
            cond.append(gz @ flat)
            pool.append(gp @ flat)
        terms.append(cp.sum(cp.kl_div(cp.hstack(cond), cp.hstack(pool))))
    eps = 0.01
    prob = cp.Problem(cp.Maximize(u @ flat), [cp.sum(pi, axis=1) == 1, sum(terms) <= eps])
    prob.solve(solver="CLARABEL")
    res = optimize_policy(problem, world, Independence(measure="kl"), epsilon=eps)
    assert res.utility == pytest.approx(prob.value, abs=1e-6)
    assert res.deviations["independence"] <= eps + 1e-6


def test_reference_rows_agree_with_library_deviation():
    # Guards the reference model itself: its rows reproduce the library's deviation.
    problem, world = make_tabular_problem(3, 2, 2, 2, random_state=5)
    rng = np.random.default_rng(0)
    from fairdecide import TabularPolicy

    pi = TabularPolicy(rng.dirichlet(np.ones(2), size=(3, 2)))
    for kind, crit in (("independence", Independence()), ("separation", Separation())):
        G = comparison_rows(problem, world, kind)
        assert np.abs(G @ pi.table.reshape(-1)).sum() == pytest.approx(
            crit.deviation(pi, world, problem))


@pytest.mark.parametrize("solver", ["highs-ds", "highs-ipm", "CLARABEL", "HIGHS"])
def test_every_solver_agrees(solver):
    problem, world = make_tabular_problem(6, 3, 3, 2, random_state=8)
    want_u, _ = reference_solve(problem, world, "separation", epsilon=0.1)
    tol = 1e-4 if solver == "CLARABEL" else 1e-6
    res = optimize_policy(problem, world, Separation(), epsilon=0.1, solver=solver, tol=tol)
    assert res.utility == pytest.approx(want_u, abs=10 * tol)


# The hand-solved problem above on every solver the router can be asked for, as a world
# and as beliefs of identical scenarios (whose mean and worst equal the world's values).
# The tolerance is the one asked of the solver: HiGHS's simplex and interior point with
# crossover are exact to 1e-9 here; Clarabel is an interior-point conic solver without
# crossover, asked for tol = 1e-6.
HAND_SOLVED = [
    ({}, [], 0.75, None),
    ({"epsilon": 0.3}, [Independence()], 0.58, 0.3),
    ({"epsilon": 0.0}, [Independence()], 0.55, 0.0),
    ({"lam": 0.05}, [Independence()], 0.75, 2.0),
    ({"lam": 0.5}, [Independence()], 0.55, 0.0),
    ({"utility_slack": 0.1}, [Independence()], 0.65, 1.0),
    ({"tradeoff": FairnessConstraint(1.9)}, [Independence()], 0.74, 1.9),
]
# "highs-ipm-no-crossover": HiGHS's interior point without crossover, the default for a
# large belief's whole program when the interior point over unit blocks hands it back.
SOLVERS = [None, "highs", "highs-ds", "highs-ipm", "structured", "scenarios", "unit-ipm",
           "term-ipm", "CLARABEL", "highs-ipm-no-crossover"]
NO_CROSSOVER = "highs-ipm-no-crossover"


# a solver that does not take a case leaves it to the default chain, and says so in a
# SolverFallbackWarning (tests/test_chain.py); here the value is the point
@pytest.mark.filterwarnings("ignore::fairdecide.exceptions.SolverFallbackWarning")
@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("model", ["world", "mean", "worst"])
@pytest.mark.parametrize(("kwargs", "criteria", "want_u", "want_f"), HAND_SOLVED)
def test_hand_solved_on_every_solver(solver, model, kwargs, criteria, want_u, want_f):
    from fairdecide import Belief

    world = WORLD if model == "world" else Belief((WORLD, WORLD, WORLD), aggregate=model)
    tol = 1e-6 if solver == "CLARABEL" else 1e-9
    res = optimize_policy(PROBLEM, world, criteria, tol=max(tol, 1e-7), **kwargs,
                          solver=solver)
    assert res.utility == pytest.approx(want_u, abs=tol)
    if want_f is not None:
        assert res.deviations["independence"] == pytest.approx(want_f, abs=tol)
    if solver in ("structured", "scenarios", NO_CROSSOVER, "unit-ipm") and model != "world":
        assert res.solver.startswith({"structured": "structured", "scenarios": "scenario cuts",
                                      NO_CROSSOVER: "HiGHS (interior point",
                                      "unit-ipm": "unit interior point"}[solver])
    if solver == "term-ipm" and model == "mean" and "lam" in kwargs:
        # the penalty under a mean belief is the term interior point's (asked for, it
        # takes the program whatever its size); everything else goes the default way
        assert res.solver.startswith("term interior point")


# ------------------------------------------------------------------ dual values
@pytest.mark.filterwarnings("ignore::fairdecide.exceptions.SolverFallbackWarning")
@pytest.mark.parametrize("solver", ["highs", "unit-ipm", "structured", "scenarios",
                                    NO_CROSSOVER])
@pytest.mark.parametrize("model", ["world", "mean", "worst"])
@pytest.mark.parametrize(("eps", "price"), [(0.3, 0.1), (1.0, 0.1), (1.9, 0.1), (5.0, 0.0)])
def test_tolerance_price_by_hand(solver, model, eps, price):
    # U*(eps) = 0.55 + 0.1 min(eps, 2): each unit of tolerance is worth 0.1 utility below
    # 2 and nothing above; under the worst case it is spread over the scenarios' rows
    from fairdecide import Belief
    from fairdecide.optimize.engine.highs_model import IPM_GAP_TOL
    from fairdecide.optimize.engine.unit_ipm import TOL

    world = WORLD if model == "world" else Belief((WORLD, WORLD, WORLD), aggregate=model)
    res = optimize_policy(PROBLEM, world, Independence(), epsilon=eps, solver=solver)
    # HiGHS's duals at a vertex are exact; the interior points' to their dual residual
    # and gap (TOL or IPM_GAP_TOL, relative to the objective, at most 1 here), summed
    # over <= 3 rows; the structured solver's and the scenario cuts' are their masters'
    # vertex duals, certified to the stopping rule's gap (1e-9 of the objective)
    tol = {"highs": 1e-12, "structured": 1e-9, "scenarios": 1e-9,
           NO_CROSSOVER: 10 * IPM_GAP_TOL}.get(solver, 10 * TOL)
    if solver == NO_CROSSOVER:
        assert res.solver.startswith("HiGHS (interior point, no crossover")
    assert res.solver.startswith("unit interior point") == (solver == "unit-ipm")
    assert res.solver.startswith("structured") == (solver == "structured")
    # the scenario cuts take beliefs (a world is one program, solved by HiGHS)
    assert res.solver.startswith("scenario cuts") == (solver == "scenarios"
                                                      and model != "world")
    assert res.stats["tolerance_prices"]["independence"] == pytest.approx(price, abs=tol)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), crit=st.sampled_from(["independence", "separation"]),
       eps=st.floats(0.02, 0.3),
       solver=st.sampled_from(["highs", "unit-ipm", "structured"]))
def test_tolerance_price_is_a_supergradient_of_the_frontier(seed, crit, eps, solver):
    # U*(eps) is concave, so its price p at eps lies between the slopes of the chords to
    # eps - h and eps + h, each U* solved on its own (to 1e-9 each: the slack 4e-9 / h)
    problem, world = make_tabular_problem(6, 2, 3, random_state=seed)
    criterion = Independence() if crit == "independence" else Separation()

    def u_star(e):
        return optimize_policy(problem, world, criterion, epsilon=e, solver=solver)

    res = u_star(eps)
    p = res.stats["tolerance_prices"][crit]
    assert_between_chords(p, res.utility, lambda e: u_star(e).utility, eps)
    assert p >= -1e-12
