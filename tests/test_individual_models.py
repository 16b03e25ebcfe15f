"""Outcome models of individuals: maximum likelihood as a SampleWorld, cross-fitting,
bootstrap refits as a Belief."""

import numpy as np
import pytest
from sklearn.linear_model import LinearRegression
from sklearn.neighbors import KNeighborsClassifier

import fairdecide as fd
from fairdecide.models import IndividualOutcomeModel
from tests.reference import assert_recomputed


def _logistic(x):
    return 1 / (1 + np.exp(-x))


def _data(n, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n, 2))
    z = np.where(rng.random_sample(n) < 0.4, "f", "m")
    a = rng.randint(2, size=n)
    truth = np.stack([_logistic(1.5 * X[:, 0] - 0.5), _logistic(-X[:, 1] + 0.3)], axis=1)
    y = (rng.random_sample(n) < truth[np.arange(n), a]).astype(int)
    return X, z, a, y, truth


INTERVENTION = fd.DecisionProblem([[0.0, 1.0], [-0.2, 0.8]])


def test_prediction_problem_recovers_the_truth():
    X, z, _, _, truth = _data(20000)
    rng = np.random.RandomState(1)
    y = (rng.random_sample(len(X)) < truth[:, 0]).astype(int)
    problem = fd.DecisionProblem.classification(2)
    world = IndividualOutcomeModel().fit(X, z, y, problem).world()
    assert world.p_y.shape == (len(X), 2) and world.group_labels == ("f", "m")
    assert np.max(np.abs(world.p_y[:, 1] - truth[:, 0])) < 0.03


@pytest.mark.parametrize("encoding", ["separate", "feature"])
def test_intervention_outcome_per_action(encoding):
    X, z, a, y, truth = _data(20000)
    if encoding == "feature":  # correctly specified: the action shifts the intercept
        rng = np.random.RandomState(2)
        truth = np.stack([_logistic(X[:, 0] - 0.5), _logistic(X[:, 0] + 0.7)], axis=1)
        y = (rng.random_sample(len(X)) < truth[np.arange(len(X)), a]).astype(int)
    model = IndividualOutcomeModel(action_encoding=encoding)
    world = model.fit(X, z, y, INTERVENTION, a=a).world()
    assert world.p_y.shape == (len(X), 2, 2)
    assert np.max(np.abs(world.p_y[:, :, 1] - truth)) < 0.05


def test_cross_fitting_predicts_each_row_from_a_model_that_did_not_see_it():
    X, z, _, _, truth = _data(400)
    y = (np.random.RandomState(3).random_sample(400) < truth[:, 0]).astype(int)
    problem = fd.DecisionProblem.classification(2)
    memorise = KNeighborsClassifier(n_neighbors=1)
    in_sample = IndividualOutcomeModel(memorise).fit(X, z, y, problem).world()
    honest = IndividualOutcomeModel(memorise, n_folds=5).fit(
        X, z, y, problem, random_state=0).world()
    np.testing.assert_array_equal(in_sample.p_y[:, 1], y)  # a 1-NN model remembers
    assert np.mean(honest.p_y[:, 1] != y) > 0.2  # out of fold, it cannot


def test_bootstrap_refits_form_a_belief_the_optimiser_takes():
    X, z, a, y, _ = _data(600)
    model = IndividualOutcomeModel().fit(X, z, y, INTERVENTION, a=a)
    belief = fd.Belief.from_refits(model, 8, random_state=0)
    assert belief.n_scenarios == 8
    spread = np.std([w.p_y for w in belief.worlds], axis=0)
    assert np.all(spread.max(axis=(1, 2)) > 0)  # resamples differ
    res = fd.optimize_policy(INTERVENTION, belief, fd.Independence(), epsilon=0.05)
    # the mean over the refits of the utility and of the deviation, recomputed by hand
    assert_recomputed(res, INTERVENTION, belief, fd.Independence(), epsilon=0.05)


def test_world_for_new_individuals():
    X, z, a, y, _ = _data(500)
    model = IndividualOutcomeModel().fit(X, z, y, INTERVENTION, a=a)
    new = model.world(X[:5] + 1.0, ["m", "f", "m", "f", "m"])
    assert new.n == 5 and new.group_labels == ("f", "m")
    np.testing.assert_allclose(new.p_y.sum(axis=2), 1.0)


@pytest.mark.parametrize(("call", "match"), [
    (lambda: IndividualOutcomeModel(LinearRegression()), "classifier must be a scikit-learn"),
    (lambda: IndividualOutcomeModel(action_encoding="both"), "action_encoding must be one"),
    (lambda: IndividualOutcomeModel(n_folds=1), "n_folds must be an integer >= 2"),
    (lambda: IndividualOutcomeModel().fit(*_data(50)[:2], _data(50)[3], INTERVENTION),
     "a .the logged actions. is needed"),
    (lambda: IndividualOutcomeModel().fit(_data(50)[0], _data(50)[1], _data(50)[3],
                                          INTERVENTION, a=np.r_[1, np.zeros(49, int)]
                                          ).world(),
     "logged 1 times"),
    (lambda: IndividualOutcomeModel().world(), r"call fit\(X, z, y, problem, a\) first"),
])
def test_errors(call, match):
    with pytest.raises(fd.FairdecideError, match=match):
        call()
