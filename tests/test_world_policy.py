import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from fairdecide import (
    DecisionProblem,
    FairdecideError,
    LoggedData,
    TabularPolicy,
    TabularWorld,
    decision_table,
    expected_utility,
)
from fairdecide.datasets import make_bail_problem, make_tabular_problem, sample_logged_data


def test_world_validation_errors():
    good_y = np.full((2, 2, 2), 0.5)
    with pytest.raises(FairdecideError, match="negative probability"):
        TabularWorld([[0.6, -0.1], [0.25, 0.25]], good_y)
    with pytest.raises(FairdecideError, match="must sum to one"):
        TabularWorld([[0.5, 0.5], [0.5, 0.5]], good_y)
    with pytest.raises(FairdecideError, match="NaN"):
        TabularWorld([[np.nan, 0.5], [0.25, 0.25]], good_y)
    with pytest.raises(FairdecideError, match="start with the shape"):
        TabularWorld([[0.25, 0.25], [0.25, 0.25]], np.full((3, 2, 2), 0.5))
    with pytest.raises(FairdecideError, match="p_y must sum to one"):
        TabularWorld([[0.25, 0.25], [0.25, 0.25]], np.full((2, 2, 2), 0.4))
    with pytest.raises(FairdecideError, match=r"group\(s\) \[1\] have probability zero"):
        TabularWorld([[0.5, 0.0], [0.5, 0.0]], good_y)


def test_world_checks_problem_shape():
    world = TabularWorld([[0.5], [0.5]], np.full((2, 1, 3), 1 / 3))
    with pytest.raises(FairdecideError, match="3 outcomes but problem has 2"):
        world.check_problem(DecisionProblem(np.eye(2)))
    act = TabularWorld([[0.5], [0.5]], np.array([[[[1, 0], [0, 1]]], [[[1, 0], [0, 1]]]]))
    with pytest.raises(FairdecideError, match="varies with the action"):
        act.check_problem(DecisionProblem(np.eye(2), outcome_depends_on_action=False))


def test_mle_equals_hand_counts():
    problem = DecisionProblem([[0, -1], [1, 0]])
    data = LoggedData(x=[0, 0, 0, 1, 1, 1], z=[0, 0, 1, 1, 1, 1], a=[1, 1, 0, 1, 1, 0],
                      y=[0, 1, 0, 1, 1, 0])
    w = TabularWorld.from_data(data, problem)
    np.testing.assert_allclose(w.p_xz, [[2 / 6, 1 / 6], [0, 3 / 6]])
    np.testing.assert_allclose(w.p_y[0, 0, 1], [0.5, 0.5])
    np.testing.assert_allclose(w.p_y[1, 1, 1], [0.0, 1.0])
    np.testing.assert_allclose(w.p_y[1, 1, 0], [1.0, 0.0])
    # cell (0, 0) never saw action 0: pooled frequencies of action 0 (two rows, both y=0)
    np.testing.assert_allclose(w.p_y[0, 0, 0], [1.0, 0.0])
    # cell (1, 0) was never seen at all: pooled per action (action 1: y = 0, 1, 1, 1)
    np.testing.assert_allclose(w.p_y[1, 0, 1], [0.25, 0.75])
    assert np.all(np.isfinite(w.p_y))


def test_smoothing_formula():
    problem = DecisionProblem(np.eye(2), outcome_depends_on_action=False)
    data = LoggedData(x=[0, 0, 1], z=[0, 1, 1], y=[1, 1, 0])
    w = TabularWorld.from_data(data, problem, smoothing=1.0)
    np.testing.assert_allclose(w.p_xz, (np.array([[1, 1], [0, 1]]) + 1) / 7)
    np.testing.assert_allclose(w.p_y[0, 0], [1 / 3, 2 / 3])
    np.testing.assert_allclose(w.p_y[1, 0], [0.5, 0.5])
    with pytest.raises(FairdecideError, match="smoothing"):
        TabularWorld.from_data(data, problem, smoothing=-1)


def test_from_data_errors():
    problem = DecisionProblem(np.eye(2))
    data = LoggedData(x=[0, 1], z=[0, 0], y=[0, 1])
    with pytest.raises(FairdecideError, match="needs actions"):
        TabularWorld.from_data(data, problem)
    empty_group = LoggedData(x=[0, 1], z=[0, 0], y=[0, 1], group_labels=[0, 1])
    pred = DecisionProblem(np.eye(2), outcome_depends_on_action=False)
    with pytest.raises(FairdecideError, match=r"group\(s\) \[1\] have no rows"):
        TabularWorld.from_data(empty_group, pred)


def test_unseen_action_warns_and_is_uniform():
    problem = DecisionProblem(np.eye(3, 2))
    data = LoggedData(x=[0, 0], z=[0, 0], y=[0, 1], a=[0, 1])
    with pytest.warns(UserWarning, match=r"actions \[2\] never appear"):
        w = TabularWorld.from_data(data, problem)
    np.testing.assert_allclose(w.p_y[0, 0, 2], [0.5, 0.5])


def test_mle_recovers_truth_from_large_sample():
    problem, world = make_bail_problem()
    data = sample_logged_data(problem, world, 200_000, random_state=1)
    est = TabularWorld.from_data(data, problem)
    np.testing.assert_allclose(est.p_xz, world.p_xz, atol=0.005)
    n_cell = np.zeros((5, 2, 2))
    np.add.at(n_cell, (data.x, data.z, data.a), 1)
    se = np.sqrt(world.p_y * (1 - world.p_y) / n_cell[..., None])
    assert np.all(np.abs(est.p_y - world.p_y) <= 5 * se + 1e-12)


def test_policy_validation_and_helpers():
    with pytest.raises(FairdecideError, match="must sum to one"):
        TabularPolicy(np.full((2, 2, 2), 0.4))
    with pytest.raises(FairdecideError, match="negative"):
        TabularPolicy([[[1.5, -0.5]]])
    with pytest.raises(FairdecideError, match="3 dimensions"):
        TabularPolicy([[0.5, 0.5]])
    pi = TabularPolicy([[[0.3, 0.7], [1.0, 0.0]]])
    assert not pi.is_group_blind
    np.testing.assert_allclose(pi.action_proba([0, 0], [1, 0]), [[1, 0], [0.3, 0.7]])
    with pytest.raises(FairdecideError, match="unknown group code 2"):
        pi.action_proba([0], [2])
    with pytest.raises(FairdecideError, match="unknown feature cell code 1"):
        pi.action_proba([1], [0])
    with pytest.raises(FairdecideError, match="same length"):
        pi.action_proba([0, 0], [0])


def test_sample_frequencies():
    pi = TabularPolicy([[[0.2, 0.3, 0.5]]])
    acts = pi.sample(np.zeros(50_000, int), np.zeros(50_000, int), random_state=3)
    np.testing.assert_allclose(np.bincount(acts, minlength=3) / 50_000, [0.2, 0.3, 0.5],
                               atol=0.01)


def test_expected_utility_by_hand():
    problem = DecisionProblem([[1, 0], [0, 1]], outcome_depends_on_action=False)
    world = TabularWorld([[0.5, 0.5]], [[[0.8, 0.2], [0.3, 0.7]]])
    pi = TabularPolicy([[[1.0, 0.0], [0.25, 0.75]]])
    # group 0 predicts 0: accuracy 0.8; group 1 predicts 1 w.p. 0.75: 0.25*0.3 + 0.75*0.7
    want = 0.5 * 0.8 + 0.5 * (0.25 * 0.3 + 0.75 * 0.7)
    assert expected_utility(problem, world, pi) == pytest.approx(want)
    with pytest.raises(FairdecideError, match=r"policy has 2 cells .* has 1; without labels"):
        expected_utility(problem, world, TabularPolicy(np.full((2, 2, 2), 0.5)))


@given(seed=st.integers(0, 10_000), n_x=st.integers(1, 5), n_z=st.integers(1, 3),
       n_a=st.integers(2, 4), dep=st.booleans())
def test_decision_table_is_a_distribution(seed, n_x, n_z, n_a, dep):
    problem, world = make_tabular_problem(n_x, n_z, n_a, 3, outcome_depends_on_action=dep,
                                          random_state=seed)
    rng = np.random.default_rng(seed)
    pi = TabularPolicy(rng.dirichlet(np.ones(n_a), size=(n_x, n_z)))
    J = decision_table(problem, world, pi)
    assert J.joint.min() >= 0
    assert J.joint.sum() == pytest.approx(1.0)
    M = J.group_marginal()
    np.testing.assert_allclose(M.sum(axis=(1, 2)), world.p_z)
    np.testing.assert_allclose(M.sum(axis=2), np.einsum("xz,xza->za", world.p_xz, pi.table))


def test_no_warning_from_clean_inputs():
    problem, world = make_bail_problem()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        expected_utility(problem, world, TabularPolicy.constant(5, 2, [0.5, 0.5]))
