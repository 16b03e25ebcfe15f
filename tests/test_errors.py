"""Bad input gets a clear error naming the argument, never a traceback from deep inside."""

import dataclasses

import numpy as np
import pytest

import fairdecide as fd
from fairdecide import (
    DecisionProblem,
    FairdecideError,
    FairDecisionPolicy,
    FairPolicyClassifier,
    Independence,
    InfeasibleToleranceError,
    Separation,
    SolverError,
    TabularPolicy,
    TabularWorld,
    VerificationError,
    optimize_policy,
)
from fairdecide.datasets import make_bail_problem, make_tabular_problem
from fairdecide.optimize import FairnessConstraint
from fairdecide.optimize.engine import chain
from fairdecide.optimize.engine.tasks import SolveResult
from tests.reference import assert_recomputed, reference_solve

IND = fd.Independence().label  # the criterion's name with its measure
SEP = fd.Separation().label  # the criterion's name with its measure

PROBLEM, WORLD = make_tabular_problem(3, 2, 2, 2, random_state=0)


def _highs_run(monkeypatch, run):
    """The solving chain's HiGHS dual simplex on the whole program (the default chain's
    solver for these small programs) replaced by ``run(program, real)``: ``real`` solves
    the program as the chain's own run would."""
    key = ("program", "highs-ds")
    solver = chain._BY_STAGE[key]

    def faked(task):
        return run(task.built(), lambda program: solver.run(
            chain.ProgramTask(program=program, time_limit=task.time_limit)))

    monkeypatch.setitem(chain._BY_STAGE, key, dataclasses.replace(solver, run=faked))


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"lam": 0.5, "epsilon": 0.1}, "exactly one trade-off"),
        ({}, "exactly one trade-off"),
        ({"lam": 1.5}, r"lam must lie in \[0, 1\]"),
        ({"epsilon": -0.1}, "epsilon must be >= 0"),
        ({"epsilon": np.nan}, "epsilon must be >= 0 .*; got nan$"),
        ({"epsilon": "0.1"}, "epsilon must be >= 0 .*; got '0.1'$"),
        ({"epsilon": [0.1, 0.2]}, "one per criterion"),
        ({"utility_slack": -1}, "utility_slack must be"),
        ({"epsilon": 0.1, "tol": 0}, "tol must be a positive"),
        ({"epsilon": 0.1, "solver": 3}, "solver must be a string"),
    ],
)
def test_tradeoff_arguments(kwargs, match):
    with pytest.raises(FairdecideError, match=match):
        optimize_policy(PROBLEM, WORLD, Independence(), **kwargs)


#: What every door says a tolerance may be (fairdecide.optimize.program.tradeoff.tolerances).
ALLOWED = ("epsilon must be >= 0 (inf for no bound): one number, or a list of them, one per "
           "criterion")
RNG = np.random.default_rng(0)
X, Z, Y, A = RNG.normal(size=(60, 2)), RNG.integers(0, 2, 60), RNG.integers(0, 2, 60), \
    RNG.integers(0, 2, 60)


@pytest.mark.parametrize(("call", "shown", "estimator"), [
    (lambda e: optimize_policy(PROBLEM, WORLD, Independence(), epsilon=e), "-1", False),
    (lambda e: optimize_policy(PROBLEM, WORLD, [Independence(), Separation()],
                               epsilon=[0.1, e]), "[0.1, -1] (entry 1, -1, is negative)",
     False),
    (lambda e: FairnessConstraint((0.1, e)), "(0.1, -1) (entry 1, -1, is negative)", False),
    (lambda e: FairPolicyClassifier(epsilon=e).fit(X, Y, sensitive_features=Z), "-1", True),
    (lambda e: FairPolicyClassifier(epsilon=[e]).fit(X, Y, sensitive_features=Z),
     "[-1] (entry 0, -1, is negative)", True),
    (lambda e: FairDecisionPolicy(epsilon=e).fit(X, Y, sensitive_features=Z, actions=A),
     "-1", True),
])
@pytest.mark.parametrize("minus_one", [-1, np.int64(-1)])
def test_a_negative_epsilon_is_named_as_written(call, shown, estimator, minus_one):
    """Issue 51: the error names epsilon, the value as the caller wrote it (-1, not
    np.int64(-1), nor the tuple the classifier's score family makes of it with its
    order constraint) and what is allowed, at every door."""
    with pytest.raises(FairdecideError) as info:
        call(minus_one)
    message = str(info.value)
    assert message.startswith(ALLOWED)
    assert message.endswith(f"; got {shown}")
    assert ("'auto'" in message) == estimator


def test_tradeoff_without_criteria():
    with pytest.raises(FairdecideError, match="epsilon needs at least one fairness criterion"):
        optimize_policy(PROBLEM, WORLD, epsilon=0.1)


def test_wrong_objects():
    with pytest.raises(FairdecideError, match="problem must be a DecisionProblem"):
        optimize_policy(np.eye(2), WORLD)
    with pytest.raises(FairdecideError,
                       match="world must be a World such as TabularWorld, a Belief or a "
                             "ConfidenceSet"):
        optimize_policy(PROBLEM, {"p_xz": 1})
    with pytest.raises(FairdecideError, match=r"criteria\[1\] is the unknown criterion name"):
        optimize_policy(PROBLEM, WORLD, [Independence(), "parity"], epsilon=0.1)
    with pytest.raises(FairdecideError, match="criteria must be a criterion"):
        optimize_policy(PROBLEM, WORLD, 3, epsilon=0.1)


def test_utility_of_wrong_shape_for_world():
    with pytest.raises(FairdecideError, match="2 outcomes but problem has 3"):
        optimize_policy(DecisionProblem(np.ones((2, 3))), WORLD)


def test_unknown_solver_is_named():
    with pytest.raises(SolverError, match="not usable here"):
        optimize_policy(PROBLEM, WORLD, Independence(), epsilon=0.1, solver="NOPE")


def test_solver_failure_is_reported(monkeypatch):
    def broken(prog, real):
        return SolveResult(None, np.nan, False, "numerical difficulties", "fake", 0.0)

    _highs_run(monkeypatch, broken)
    with pytest.raises(SolverError, match="fake failed on the epsilon program"):
        optimize_policy(PROBLEM, WORLD, Independence(), epsilon=0.1)


def test_wrong_solver_answer_fails_verification(monkeypatch):
    def lying(prog, real):
        res = real(prog)
        x = res.x.copy()
        x[prog.m_slices[0]] *= 1.01  # the reported marginal no longer matches the policy
        return SolveResult(x, res.objective, True, "optimal", "liar", 0.0)

    _highs_run(monkeypatch, lying)
    with pytest.raises(VerificationError, match="solver utility matches recomputation"):
        optimize_policy(PROBLEM, WORLD, Independence(), epsilon=0.1)


def test_solver_violating_tolerance_fails_verification(monkeypatch):
    def loose(prog, real):
        prog.b_ub[:] = 1e9  # the solver ignores every inequality, the tolerance included
        return real(prog)

    _highs_run(monkeypatch, loose)
    with pytest.raises(VerificationError, match="independence, TV summed vs pooled <= epsilon"):
        optimize_policy(PROBLEM, WORLD, Independence(), epsilon=0.0)


def test_a_verification_error_names_the_solver_each_violation_and_its_size(monkeypatch):
    """Issue 51: the error says which solver's answer failed, each failed check with by how
    much (here the tolerance: the policy of a solver that ignores every inequality is the
    utility optimum, whose independence is computed here without the solver), and the way
    out."""
    def loose(prog, real):
        prog.b_ub[:] = 1e9  # the solver ignores every inequality, the tolerance included
        return real(prog)

    best = optimize_policy(PROBLEM, WORLD).policy  # no criterion: the utility optimum
    over = Independence().deviation(best, WORLD, PROBLEM)
    assert over > 1e-3  # far beyond the allowance
    _highs_run(monkeypatch, loose)
    with pytest.raises(VerificationError) as info:
        optimize_policy(PROBLEM, WORLD, Independence(), epsilon=0.0)
    message = str(info.value)
    assert message.startswith("HiGHS (highs-ds)'s policy failed verification, recomputed "
                              "from its decision table (")
    assert f"{IND} <= epsilon: violated by {over:.3g} ({over / 1e-6:.3g} times the " \
           "1e-06 allowed)" in message
    assert message.endswith("use solver=None or 'highs' (HiGHS: exact to 1e-09) or a solver "
                            "with a tighter tolerance (e.g. 'CLARABEL', an interior point "
                            "to 1e-08), or loosen tol (now 1e-06) if an error of that size "
                            "is acceptable")


def test_an_inaccurate_cvxpy_solve_is_an_error_that_says_so():
    """Issue 51: SCS at its default accuracy breaks the tolerance on the bail problem
    (docs/optimization.md says what happens): the error names it, the size, and the way
    out; a policy outside the tolerance is never returned."""
    pytest.importorskip("cvxpy")
    import cvxpy as cp

    if "SCS" not in cp.installed_solvers():
        pytest.skip("SCS is not installed")
    problem, world = make_bail_problem()
    try:
        res = optimize_policy(problem, world, Independence(), epsilon=0.05, solver="SCS")
    except VerificationError as err:
        message = str(err)
        assert message.startswith("cvxpy/SCS's policy failed verification")
        assert f"{IND} <= epsilon: violated by" in message
        assert "use solver=None or 'highs'" in message
    else:  # a more accurate SCS: its policy is within the tolerance, and checked
        assert res.deviations["independence"] <= 0.05 + 1e-6 and res.verification.passed


def test_infeasible_epsilon_linear_reports_minimum(monkeypatch):
    # Independence is always feasible (constant policies); force the solver to say no.
    def refuse(prog, real):
        is_epsilon = prog.A_ub.shape[0] > 0 and np.any(prog.c[prog.m_slices[0]] != 0)
        if is_epsilon:
            return SolveResult(None, np.nan, False, "infeasible", "fake", 0.0)
        return real(prog)

    _highs_run(monkeypatch, refuse)
    with pytest.raises(InfeasibleToleranceError, match="smallest achievable deviation is "
                       r"independence, TV summed vs pooled >= 0 \(asked <= 0.1\)") as info:
        optimize_policy(PROBLEM, WORLD, Independence(), epsilon=0.1)
    assert info.value.smallest["independence"] == pytest.approx(0.0, abs=1e-9)


def test_duplicate_criteria_get_distinct_names():
    res = optimize_policy(PROBLEM, WORLD, [Separation(), Separation(measure="max")],
                          epsilon=[0.1, 0.05])
    assert set(res.deviations) == {SEP, "separation, largest gap vs pooled"}
    # the same criterion twice is told apart by a number
    twice = optimize_policy(PROBLEM, WORLD, [Separation(), Separation()], epsilon=[0.1, 0.05])
    assert set(twice.deviations) == {SEP, "separation, TV summed vs pooled#2"}


def test_policy_mismatch_errors():
    problem, world = make_bail_problem()
    with pytest.raises(FairdecideError, match=r"policy has 2 cells but .* has 5"):
        Independence().deviation(TabularPolicy(np.full((2, 2, 2), 0.5)), world, problem)
    with pytest.raises(FairdecideError, match="must be a fairdecide Policy such as TabularPolicy"):
        Independence().deviation(np.full((5, 2, 2), 0.5), world, problem)


def test_empty_group_in_world():
    with pytest.raises(FairdecideError, match="probability zero"):
        TabularWorld([[0.5, 0.0], [0.5, 0.0]], np.full((2, 2, 2), 0.5))


def _malformed_cases():
    """The protocol-level entry points: scenario_values, as_policy, Units, Capabilities,
    decision_table, evaluate_under_belief, pareto_frontier, optimize_policy's solver."""
    from fairdecide import (
        Belief,
        Capabilities,
        DecisionTable,
        Units,
        decision_table,
        evaluate_under_belief,
        pareto_frontier,
        scenario_values,
    )
    from fairdecide.criteria import block_divergence
    from fairdecide.optimize import FairnessConstraint, UtilityConstraint
    from fairdecide.policies import as_policy
    from fairdecide.uncertainty.beliefs import cvar

    policy = TabularPolicy.constant(3, 2, [0.5, 0.5])
    cases = [
        (lambda: scenario_values(PROBLEM, [WORLD], np.eye(2)), "fairdecide Policy"),
        (lambda: scenario_values(PROBLEM, [{"p": 1}], policy), "must be a World"),
        (lambda: scenario_values(PROBLEM, WORLD, policy), "non-empty sequence of worlds"),
        (lambda: scenario_values(PROBLEM, [], policy), "non-empty sequence of worlds"),
        (lambda: scenario_values(PROBLEM, [WORLD], policy, ["parity"]),
         r"criteria\[0\] is the unknown criterion name"),
        (lambda: scenario_values(np.eye(2), [WORLD], policy), "problem"),
        (lambda: decision_table(PROBLEM, "world", policy), "must be a World"),
        (lambda: as_policy(42, PROBLEM), "policy must be a TabularPolicy, a fitted"),
        (lambda: as_policy(policy, "problem"), "problem must be a DecisionProblem"),
        (lambda: Units(group=[0, 1], n_groups=0), "n_groups must be a positive integer"),
        (lambda: Units(group=[0, 2], n_groups=2), "unknown group code 2"),
        (lambda: Units(group=[0.5], n_groups=1), "integer codes"),
        (lambda: Units(group=[0, 1], n_groups=2, cell=[0]), "cell and n_cells together"),
        (lambda: Units(group=[0, 1], n_groups=2, cell=[0], n_cells=1), "1 entries"),
        (lambda: Units(group=[0], n_groups=1, features=[[np.nan]]), "NaN"),
        (lambda: Units(group=[0], n_groups=1, features=[[1.0], [2.0]]), "2 rows"),
        (lambda: Capabilities(reads="cells"), "reads must be"),
        (lambda: Capabilities(linear="yes"), "linear must be True or False"),
        (lambda: Capabilities(reads=np.array(["rows", "marginal"])),
         "reads must be one of 'marginal', 'rows'"),
        (lambda: block_divergence([[0.5, 0.5]], [0.5, 0.5], np.array(["tv", "kl"])),
         "measure must be one of 'tv', 'kl', 'max'"),
        (lambda: optimize_policy(PROBLEM, WORLD, "parity", epsilon=0.1),
         r"criteria\[0\] is the unknown criterion name 'parity'"),
        (lambda: optimize_policy(PROBLEM, WORLD, solver="simplex"),
         "solver 'simplex' is not usable here: use None"),
        (lambda: optimize_policy(PROBLEM, WORLD, solver=3), "solver must be a string"),
        (lambda: evaluate_under_belief("problem", WORLD, policy), "problem must be"),
        (lambda: evaluate_under_belief(PROBLEM, [WORLD], policy), "belief must be a Belief"),
        (lambda: Belief((WORLD,), weights=[np.inf]), "weights contains NaN or infinite"),
        (lambda: Belief((WORLD,), weights=[-1.0]), "non-negative numbers"),
        (lambda: pareto_frontier(PROBLEM, WORLD, "parity"), "one fairness criterion"),
        (lambda: optimize_policy(PROBLEM, WORLD, Independence(), epsilon=0.1, max_iter=0),
         "max_iter must be a positive integer"),
        (lambda: optimize_policy(PROBLEM, WORLD, Independence(), lam="half"),
         "lam must be a number"),
        (lambda: cvar([1.0, 2.0], [0.5, 0.5], 0.0), r"delta must lie in \(0, 1\]"),
        (lambda: cvar([], [], 0.5), "non-empty"),
        (lambda: cvar([np.nan, 1.0], [0.5, 0.5], 0.5), "finite"),
        (lambda: FairnessConstraint((-0.1,)), "epsilon must be >= 0"),
        (lambda: FairnessConstraint((0.1,), chance_delta=1.5), "chance_delta must lie"),
        (lambda: UtilityConstraint(slack=-1.0), "slack must be a finite number"),
        (lambda: pareto_frontier(PROBLEM, WORLD, Independence(), n_points="x"),
         "n_points must be an integer"),
        (lambda: DecisionTable.from_marginal(np.full((2, 2, 2), np.nan)), "finite"),
    ]
    return cases


@pytest.mark.parametrize(("call", "match"), _malformed_cases(),
                         ids=[m for _, m in _malformed_cases()])
def test_new_entry_points_reject_malformed_input(call, match):
    with pytest.raises(FairdecideError, match=match):
        call()


class _BrokenWorld(TabularWorld):
    """A World implementation whose unit weights or outcomes are wrong."""

    def __init__(self, weights=None, outcomes=None):
        super().__init__(WORLD.p_xz, WORLD.p_y)
        self._w, self._p = weights, outcomes

    def unit_weights(self):
        return super().unit_weights() if self._w is None else np.asarray(self._w)

    def unit_outcomes(self, problem):
        return super().unit_outcomes(problem) if self._p is None else np.asarray(self._p)


@pytest.mark.parametrize(("world", "match"), [
    (_BrokenWorld(weights=np.r_[np.nan, np.full(5, 0.2)]), "finite, non-negative and sum"),
    (_BrokenWorld(weights=np.r_[-0.2, np.full(5, 0.24)]), "finite, non-negative and sum"),
    (_BrokenWorld(weights=np.full(4, 0.25)), r"has shape \(4,\)"),
    (_BrokenWorld(outcomes=np.full((6, 2, 2), np.nan)), "finite probabilities"),
    (_BrokenWorld(outcomes=np.full((6, 3, 2), 0.5)), "the units and problem need"),
])
def test_a_world_that_breaks_the_protocol_is_an_error_not_a_number(world, match):
    """Deviations, utilities and the optimiser refuse a world whose weights or outcome
    table are not distributions (a NaN weight once gave a deviation of 0.0 silently)."""
    policy = TabularPolicy.constant(3, 2, [0.5, 0.5])
    with pytest.raises(FairdecideError, match=match):
        Independence().deviation(policy, world, PROBLEM)
    with pytest.raises(FairdecideError, match=match):
        optimize_policy(PROBLEM, world, Independence(), epsilon=0.1)


def test_max_iter_accepts_whole_numbers():
    # epsilon 0.002 binds: the unconstrained optimum's deviation is 0.0058
    res = optimize_policy(PROBLEM, WORLD, Independence(), epsilon=0.002, max_iter=10.0)
    # the optimum of the dense LP of tests/reference.py, and the values by hand
    want, _ = reference_solve(PROBLEM, WORLD, "independence", epsilon=0.002)
    assert res.utility == pytest.approx(want, abs=1e-9)
    assert_recomputed(res, PROBLEM, WORLD, Independence(), epsilon=0.002)


def test_cases_named_in_issue_8():
    """The malformed calls the issue lists, each refused with a message naming the
    argument."""
    from fairdecide import Belief, LoggedData, scenario_values

    with pytest.raises(FairdecideError, match="n_classes must be an integer >= 2, got 1"):
        DecisionProblem.classification(1)
    with pytest.raises(FairdecideError, match=r"n_x must be a whole number, got 2\.7"):
        TabularPolicy.constant(2.7, 2, [0.5, 0.5])
    with pytest.raises(FairdecideError, match="n_z must be an integer, got str '2'"):
        TabularPolicy.group_blind([[0.5, 0.5]], "2")
    with pytest.raises(FairdecideError, match="max_iter must be a positive integer, got 0"):
        optimize_policy(PROBLEM, WORLD, Independence(), epsilon=0.1, max_iter=0)
    with pytest.raises(FairdecideError, match="propensity was given without the logged"):
        LoggedData(x=[0, 1], z=[0, 1], y=[0, 1], propensity=[0.5, 0.5])
    with pytest.raises(FairdecideError, match=r"propensity at row 1 is 4\.94e-324"):
        LoggedData(x=[0, 1], z=[0, 1], y=[0, 1], a=[0, 1], propensity=[0.5, 5e-324])
    with pytest.raises(FairdecideError, match="worlds must be a non-empty sequence"):
        scenario_values(PROBLEM, WORLD, TabularPolicy.for_world(WORLD, [0.5, 0.5]))
    with pytest.raises(FairdecideError, match="worlds must be a sequence of World"):
        Belief(WORLD)
    with pytest.raises(FairdecideError, match="tol must be a positive number"):
        optimize_policy(PROBLEM, WORLD, Independence(), epsilon=0.1, tol=[1e-6])
    with pytest.raises(FairdecideError, match="lam must be a number, got str"):
        optimize_policy(PROBLEM, WORLD, Independence(), lam="0.5")
