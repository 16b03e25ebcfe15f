"""IndividualOutcomeModel.fit fits: the classifiers exist after fit and give the worlds."""

from __future__ import annotations

import pickle

import numpy as np
from sklearn.linear_model import LogisticRegression

from fairdecide import DecisionProblem
from fairdecide.models import IndividualOutcomeModel


def _rows(seed: int = 0):
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(300, 2))
    z = rng.randint(2, size=300)
    a = rng.randint(2, size=300)
    y = (rng.random_sample(300) < 1 / (1 + np.exp(-X[:, 0] - a))).astype(int)
    return X, z, a, y


def test_fit_fits_and_the_worlds_use_those_classifiers():
    X, z, a, y = _rows()
    problem = DecisionProblem([[1, 0], [0, 1]], outcome_depends_on_action=True)
    clf = LogisticRegression(C=0.5)
    model = IndividualOutcomeModel(clf, action_encoding="separate").fit(X, z, y, problem, a)
    assert len(model.models_) == 2
    X_new = np.random.RandomState(1).normal(size=(7, 2))
    # the same classifier fitted by hand on each action's rows
    by_hand = np.stack([LogisticRegression(C=0.5).fit(X[a == k], y[a == k]).predict_proba(X_new)
                        for k in range(2)], axis=1)
    np.testing.assert_allclose(model.world(X_new, z[:7]).p_y, by_hand, rtol=1e-12)
    np.testing.assert_allclose(
        model.world().p_y,
        np.stack([LogisticRegression(C=0.5).fit(X[a == k], y[a == k]).predict_proba(X)
                  for k in range(2)], axis=1), rtol=1e-12)
    # a fitted model pickles (its classifiers are objects, not closures)
    back = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(back.world(X_new, z[:7]).p_y, model.world(X_new, z[:7]).p_y)


def test_one_classifier_with_the_action_as_a_feature():
    X, z, a, y = _rows(2)
    problem = DecisionProblem([[1, 0], [0, 1]], outcome_depends_on_action=True)
    model = IndividualOutcomeModel(action_encoding="feature").fit(X, z, y, problem, a)
    assert len(model.models_) == 1
    design = np.hstack([X, np.eye(2)[a]])
    hand = LogisticRegression(max_iter=1000).fit(design, y)  # the default classifier
    for k in range(2):
        under = np.hstack([X, np.tile(np.eye(2)[k], (len(X), 1))])
        np.testing.assert_allclose(model.world().p_y[:, k], hand.predict_proba(under),
                                   rtol=1e-10)
