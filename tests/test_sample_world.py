"""Worlds of individuals: the fixed-population program against an independent LP, and
against the tabular world it expands."""

import numpy as np
import pytest
from scipy.optimize import linprog

import fairdecide as fd
from fairdecide.datasets import make_bail_problem, make_tabular_problem
from fairdecide.policies import IndividualPolicy


def _random_world(seed: int, n: int = 12) -> fd.SampleWorld:
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n, 2))
    z = np.array(["f", "m"])[np.arange(n) % 2]
    p1 = 1 / (1 + np.exp(-2 * X[:, 0]))
    return fd.SampleWorld(X, z, np.column_stack([1 - p1, p1]), rng.uniform(0.5, 1.5, n))


def _independent_lp(world: fd.SampleWorld, U: np.ndarray, eps: float) -> float:
    """max sum_i w_i sum_a pi[i,a] q[i,a] s.t. sum_z sum_a |P(a|z) - P(a)| <= eps,
    written out with scipy's linprog (variables: pi, then one t per (z, a))."""
    n, A = world.n, U.shape[0]
    w, z = world.weights, world.z
    q = np.einsum("nay,ay->na", world.unit_outcomes(
        fd.DecisionProblem(U, outcome_depends_on_action=False)), U)
    groups = np.unique(z)
    n_t = len(groups) * A
    c = np.concatenate([-(w[:, None] * q).ravel(), np.zeros(n_t)])
    A_eq = np.zeros((n, n * A + n_t))
    for i in range(n):
        A_eq[i, i * A:(i + 1) * A] = 1
    rows = []
    for gi, g in enumerate(groups):
        Wg = w[z == g].sum()
        for a in range(A):
            coef = np.zeros(n * A + n_t)
            for i in range(n):
                coef[i * A + a] = (w[i] / Wg if z[i] == g else 0.0) - w[i]
            for sign in (1, -1):
                row = sign * coef
                row[n * A + gi * A + a] = -1
                rows.append(row)
    budget = np.zeros(n * A + n_t)
    budget[n * A:] = 1
    rows.append(budget)
    b_ub = np.zeros(len(rows))
    b_ub[-1] = eps
    res = linprog(c, A_ub=np.array(rows), b_ub=b_ub, A_eq=A_eq, b_eq=np.ones(n),
                  bounds=(0, None), method="highs")
    assert res.status == 0
    return -res.fun


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("eps", [0.0, 0.1, 0.3])
def test_fixed_population_lp_matches_an_independent_lp(seed, eps):
    world = _random_world(seed)
    problem = fd.DecisionProblem.classification(2)
    res = fd.optimize_policy(problem, world, fd.Independence(), epsilon=eps)
    assert isinstance(res.policy, IndividualPolicy) and res.status == "optimal"
    assert res.utility == pytest.approx(_independent_lp(world, problem.utility, eps), abs=1e-7)
    # recomputed from the decision table, independently of the solver
    assert fd.expected_utility(problem, world, res.policy) == pytest.approx(res.utility)
    assert fd.Independence().deviation(res.policy, world, problem) <= eps + 1e-7


def _as_individuals(world: fd.TabularWorld) -> fd.SampleWorld:
    n_x, n_z = world.p_xz.shape
    x, z = np.divmod(np.arange(n_x * n_z), n_z)
    p_y = world.p_y.reshape(n_x * n_z, *world.p_y.shape[2:])
    return fd.SampleWorld(np.eye(n_x)[x], [world.group_labels[g] for g in z], p_y,
                          world.p_xz.reshape(-1), group_labels=world.group_labels)


@pytest.mark.parametrize(("make", "criterion", "eps"), [
    (make_bail_problem, fd.Independence(), 0.05),
    (make_bail_problem, fd.Separation(), 0.05),  # not convex here: the same local optimum
    (lambda: make_tabular_problem(4, 3, 2, 2, random_state=3), fd.Separation(), 0.02),
    (lambda: make_tabular_problem(4, 2, 3, 3, random_state=4), fd.Independence("max"), 0.01),
])
def test_cells_as_individuals_give_the_tabular_optimum(make, criterion, eps):
    problem, world = make()
    people = _as_individuals(world)
    tab = fd.optimize_policy(problem, world, criterion, epsilon=eps)
    ind = fd.optimize_policy(problem, people, criterion, epsilon=eps)
    assert ind.utility == pytest.approx(tab.utility, abs=1e-7)
    assert ind.deviations == pytest.approx(tab.deviations, abs=1e-7)
    # the tabular policy, read per individual, has the same value in the sample world
    rows = IndividualPolicy(tab.policy.table.reshape(-1, problem.n_actions), people.X)
    assert fd.expected_utility(problem, people, rows) == pytest.approx(tab.utility)


def test_scenarios_of_the_same_individuals_form_a_belief():
    world = _random_world(5)
    rng = np.random.RandomState(0)
    scenarios = [world.with_outcomes(rng.dirichlet([2, 2], size=world.n)) for _ in range(4)]
    belief = fd.Belief(scenarios)
    problem = fd.DecisionProblem.classification(2)
    res = fd.optimize_policy(problem, belief, fd.Independence(), epsilon=0.1)
    each = [fd.expected_utility(problem, w, res.policy) for w in scenarios]
    assert res.utility == pytest.approx(np.mean(each))
    summary = fd.evaluate_under_belief(problem, belief, res.policy, fd.Independence())
    assert summary.values["utility"].to_numpy() == pytest.approx(each)
    table = fd.Independence().breakdown(res.policy, world, problem)
    assert set(table["group"]) == {"f", "m"}


def test_individual_policies_decide_only_for_their_people():
    world = _random_world(6)
    problem = fd.DecisionProblem.classification(2)
    res = fd.optimize_policy(problem, world)
    other = _random_world(7)
    with pytest.raises(fd.FairdecideError, match="only for the individuals it was made for"):
        fd.expected_utility(problem, other, res.policy)
    with pytest.raises(fd.FairdecideError, match="group_blind has no meaning"):
        fd.optimize_policy(problem, world, group_blind=True)


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"z": ["f"] * 12}, "have no weight"),  # with group_labels naming a second group
    ({"p_y": np.full((11, 2), 0.5)}, "p_y has 11 rows but X has 12"),
    ({"weights": -np.ones(12)}, "weights must be 12 non-negative"),
])
def test_sample_world_input_errors(kwargs, match):
    world = _random_world(8)
    args = {"X": world.X, "z": ["f", "m"] * 6, "p_y": world.p_y, "weights": None,
            "group_labels": ["f", "m"], **kwargs}
    with pytest.raises(fd.FairdecideError, match=match):
        fd.SampleWorld(args.pop("X"), args.pop("z"), args.pop("p_y"), args.pop("weights"),
                       **args)
