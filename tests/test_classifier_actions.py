"""FairPolicyClassifier(actions=...): decisions that are not the classes (a "refer"
option beside deny and approve, for a binary outcome), against optima computed here."""

from __future__ import annotations

import numpy as np
import pytest

import fairdecide as fd
from tests.reference import reference_solve
from tests.test_score_family import FixedScore

ACTIONS = ["deny", "refer", "approve"]
#: U[a, y], y in (0 = default, 1 = repays): referring costs a little whatever happens
U = np.array([[0.8, 0.0], [0.55, 0.55], [0.0, 1.0]])


def _discrete(n=4000, seed=0):
    """One feature of four values, two groups, P(y = 1) rising with x and the group."""
    rng = np.random.RandomState(seed)
    z = rng.randint(2, size=n)
    x = rng.randint(4, size=n)
    y = (rng.random_sample(n) < 0.15 + 0.2 * x + 0.1 * z).astype(int)
    return x[:, None].astype(float), y, z


def _world_by_hand(x, y, z):
    """P(x, z) and P(y | x, z) counted here, without the library's counting code."""
    p_xz = np.zeros((4, 2))
    p_y = np.zeros((4, 2, 2))
    for i, g, o in zip(x[:, 0].astype(int), z, y, strict=True):
        p_xz[i, g] += 1
        p_y[i, g, o] += 1
    p_y /= p_y.sum(axis=-1, keepdims=True)
    return p_xz / p_xz.sum(), p_y


def test_without_criteria_each_cell_takes_its_best_action():
    """No fairness: each (x, z) gets argmax_a sum_y U[a, y] P(y | x, z), the frequencies
    counted here; predict returns those actions' labels."""
    X, y, z = _discrete()
    clf = fd.FairPolicyClassifier(policy="tabular", criteria=None, utility=U,
                                  actions=ACTIONS, random_state=0).fit(
        X, y, sensitive_features=z)
    _, p_y = _world_by_hand(X, y, z)
    best = np.argmax(np.einsum("ay,xzy->xza", U, p_y), axis=-1)
    assert list(clf.actions_) == ACTIONS and list(clf.classes_) == [0, 1]
    expected = np.array(ACTIONS)[best[X[:, 0].astype(int), z]]
    assert (clf.predict(X, sensitive_features=z) == expected).all()
    # every action is used somewhere: the example exercises the third action
    assert set(expected) == set(ACTIONS)


@pytest.mark.parametrize("eps", [0.0, 0.05, 0.15])
def test_independence_over_three_actions_matches_an_independent_lp(eps):
    """The optimum under independence (TV, every action's rate within the tolerance)
    equals tests/reference.py's dense LP over the world counted here."""
    X, y, z = _discrete(seed=1)
    clf = fd.FairPolicyClassifier(policy="tabular", criteria="independence", epsilon=eps,
                                  utility=U, actions=ACTIONS, random_state=0).fit(
        X, y, sensitive_features=z)
    p_xz, p_y = _world_by_hand(X, y, z)
    problem = fd.DecisionProblem(U, outcome_depends_on_action=False)
    u_ref, _ = reference_solve(problem, fd.TabularWorld(p_xz, p_y), "independence",
                               epsilon=eps)
    assert clf.result_.utility == pytest.approx(u_ref, abs=1e-7)
    # the deviation of the returned rows, recomputed from predict_proba on the rows
    P = clf.predict_proba(X, sensitive_features=z)
    rates = np.array([P[z == g].mean(axis=0) for g in (0, 1)])
    # Independence's TV deviation: sum over groups and actions of |P(a | z) - P(a)|
    assert np.abs(rates - P.mean(axis=0)).sum() <= eps + 1e-7


def test_score_family_orders_actions_by_their_gain_from_the_outcome():
    """With three actions in a shuffled order, each group's rule over the score bins
    never moves a higher bin towards an action that gains less from y = 1 (slopes
    deny -0.8 < refer 0 < approve 1): P(a in the top k of that order) rises with the
    bin, and the criterion is reported as held."""
    rng = np.random.RandomState(3)
    n = 3000
    z = rng.randint(2, size=n)
    X = np.c_[rng.normal(size=n) + 0.6 * z, rng.normal(size=n)]
    y = (rng.random_sample(n) < 1 / (1 + np.exp(-2 * X[:, 0]))).astype(int)
    order = [2, 0, 1]  # the rows of U in the order the actions are given
    clf = fd.FairPolicyClassifier(policy="score", outcome_model=FixedScore(),
                                  criteria="demographic_parity_difference", epsilon=0.05,
                                  utility=U[order], actions=[ACTIONS[i] for i in order],
                                  random_state=0).fit(X, y, sensitive_features=z)
    table = clf.result_.policy.table  # (bins, groups, actions in the given order)
    by_slope = table[:, :, [1, 2, 0]]  # deny, refer, approve
    upper = np.cumsum(by_slope[:, :, ::-1], axis=-1)[:, :, :-1]  # P(approve), P(refer+)
    assert (np.diff(upper, axis=0) >= -1e-9).all()
    assert clf.result_.deviations["score order"] <= 1e-9
    assert clf.result_.deviations["demographic_parity_difference"] <= 0.05 + 1e-9
    # the returned probabilities are in the order of actions_
    P = clf.predict_proba(X[:50], sensitive_features=z[:50])
    assert P.shape == (50, 3)
    assert (clf.predict(X[:50], sensitive_features=z[:50])
            == np.array(clf.actions_)[P.argmax(axis=1)]).all()


def test_score_scorer_and_certificate_read_the_actions():
    """score is the expected utility computed here; make_utility_scorer agrees; certify
    bounds the deviation of the three-action rows, which it recomputes."""
    X, y, z = _discrete(seed=2)
    clf = fd.FairPolicyClassifier(policy="tabular", epsilon=0.05, utility=U,
                                  actions=ACTIONS, random_state=0).fit(
        X, y, sensitive_features=z)
    P = clf.predict_proba(X, sensitive_features=z)
    by_hand = float(np.mean((P * U[:, y].T).sum(axis=1)))
    assert clf.score(X, y, sensitive_features=z) == pytest.approx(by_hand, abs=1e-12)
    scorer = fd.make_utility_scorer(U)
    assert scorer(clf, X, y, sensitive_features=z) == pytest.approx(by_hand, abs=1e-12)
    cert = fd.evaluation.certify_held_out(clf, X, y, sensitive_features=z, epsilon=0.5, delta=0.05)
    rates = np.array([P[z == g].mean(axis=0) for g in (0, 1)])
    dev = np.abs(rates - P.mean(axis=0)).sum()  # Independence's TV deviation
    assert cert.deviations["independence"] == pytest.approx(dev, abs=1e-9)
    assert cert.bounds["independence"] >= dev


@pytest.mark.parametrize("actions, utility, match", [
    (ACTIONS, None, "need utility"),
    (ACTIONS, np.eye(2), r"utility must have shape \(n_actions, n_classes\) = \(3, 2\)"),
    (["a", "a"], np.eye(2), "at least two distinct"),
    (["a"], np.eye(2)[:1], "at least two distinct"),
])
def test_bad_actions_are_refused_with_what_to_do(actions, utility, match):
    X, y, z = _discrete(n=200)
    with pytest.raises(fd.FairdecideError, match=match):
        fd.FairPolicyClassifier(actions=actions, utility=utility).fit(
            X, y, sensitive_features=z)
