"""Linear-softmax policies: probabilities, Jacobian, the Lipschitz certificate, and use
with sample worlds and off-policy evaluation."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fairdecide as fd
from fairdecide.data.units import Units
from fairdecide.datasets import make_logged_bandit
from fairdecide.evaluation import evaluate_policy


def _policy(seed, A=3, d=2, include_z=False, n_groups=2, scale=1.0):
    rng = np.random.RandomState(seed)
    width = d + (n_groups if include_z else 0) + 1
    return fd.LinearSoftmaxPolicy(include_z, True, scale * rng.normal(size=(A, width)),
                                  n_groups=n_groups if include_z else None)


@pytest.mark.parametrize("include_z", [False, True])
def test_jacobian_matches_finite_differences(include_z):
    pi = _policy(0, include_z=include_z)
    rng = np.random.RandomState(1)
    units = Units(group=rng.randint(2, size=6), n_groups=2, features=rng.normal(size=(6, 2)))
    J = pi.jacobian(units)
    theta, h = pi.parameters, 1e-6
    for k in range(theta.size):
        up, down = theta.copy(), theta.copy()
        up[k] += h
        down[k] -= h
        fd_k = (pi.with_parameters(up).proba(units) - pi.with_parameters(down).proba(units))
        np.testing.assert_allclose(J[:, :, k], fd_k / (2 * h), atol=1e-7)


@given(seed=st.integers(0, 10_000), A=st.integers(2, 4), d=st.integers(1, 4),
       include_z=st.booleans(), scale=st.floats(0.1, 10.0))
@settings(max_examples=60, deadline=None)
def test_lipschitz_bound_holds_for_every_pair(seed, A, d, include_z, scale):
    pi = _policy(seed, A, d, include_z, scale=scale)
    rng = np.random.RandomState(seed + 1)
    X, Y = rng.normal(size=(50, d)) * 3, rng.normal(size=(50, d)) * 3
    zx = rng.randint(2, size=50) if include_z else None
    zy = rng.randint(2, size=50) if include_z else None
    gap = np.abs(pi.action_proba(X, zx) - pi.action_proba(Y, zy)).sum(axis=1)
    dist = np.linalg.norm(pi.inputs(X, zx) - pi.inputs(Y, zy), axis=1)
    assert np.all(gap <= pi.lipschitz_bound() * dist + 1e-12)


def test_lipschitz_bound_is_tight_for_two_actions():
    pi = fd.LinearSoftmaxPolicy(coef=[[0.0, 0.0, 0.0], [3.0, -4.0, 0.0]])
    direction = np.array([3.0, -4.0]) / 5.0  # along W[1] - W[0], from pi = (1/2, 1/2)
    step = 1e-4
    gap = np.abs(pi.action_proba([[0, 0]]) - pi.action_proba([step * direction])).sum()
    assert pi.lipschitz_bound() == pytest.approx(2.5)
    assert gap / step == pytest.approx(pi.lipschitz_bound(), rel=1e-3)


def test_on_a_sample_world_and_in_off_policy_evaluation():
    rng = np.random.RandomState(2)
    X = rng.normal(size=(40, 2))
    world = fd.SampleWorld(X, np.where(X[:, 1] > 0, "f", "m"),
                           np.column_stack([1 - 1 / (1 + np.exp(-X[:, 0])),
                                            1 / (1 + np.exp(-X[:, 0]))]))
    problem = fd.DecisionProblem.classification(2)
    pi = fd.LinearSoftmaxPolicy(coef=[[0.0, 0.0, 0.0], [2.0, 0.0, 0.0]])
    p = pi.action_proba(X)
    want = np.mean((p * world.p_y).sum(axis=1))  # accuracy: sum_a pi(a|x) P(y=a|x)
    assert fd.expected_utility(problem, world, pi) == pytest.approx(want)
    assert fd.Independence().deviation(pi, world, problem) >= 0

    bproblem, data, _ = make_logged_bandit(400, random_state=0)
    policy = fd.LinearSoftmaxPolicy(coef=0.1 * np.random.RandomState(3).normal(size=(2, 5)))
    est = evaluate_policy(bproblem, data, policy, "ips")
    probs = policy.action_proba(data.X)
    r = bproblem.utility[data.a, data.y]
    want = np.mean(probs[np.arange(data.n), data.a] / data.propensity * r)
    assert est.value == pytest.approx(want, rel=1e-12)


def test_family_and_errors():
    fam = fd.LinearSoftmaxPolicy(include_z=True, n_groups=3)
    with pytest.raises(fd.FairdecideError, match="no coefficients yet"):
        fam.action_proba([[0.0]])
    pi = fam.initialized(n_actions=2, n_features=4)
    assert pi.coef.shape == (2, 4 + 3 + 1) and pi.reads == {"features", "group"}
    np.testing.assert_allclose(pi.action_proba(np.zeros((2, 4)), [0, 2]), 0.5)
    with pytest.raises(fd.FairdecideError, match="this policy reads the group: give z"):
        pi.action_proba(np.zeros((2, 4)))
    with pytest.raises(fd.FairdecideError, match="include_z=True needs n_groups"):
        fd.LinearSoftmaxPolicy(include_z=True).initialized(2, 4)
    with pytest.raises(fd.FairdecideError, match="include_z=True with coef needs n_groups"):
        fd.LinearSoftmaxPolicy(include_z=True, coef=np.zeros((2, 3)))
    with pytest.raises(fd.FairdecideError, match="reads features"):
        fd.expected_utility(fd.datasets.make_bail_problem()[0], fd.datasets.make_bail_problem()[1],
                            pi)
    draws = fd.LinearSoftmaxPolicy(coef=[[0.0, 0.0], [0.0, np.log(3)]]).sample(
        np.zeros((4000, 1)), random_state=0)
    assert abs(draws.mean() - 0.75) < 0.03
