"""The estimators' words (issue 52, item 6): the column of X holding the group is
``group_column`` (the scikit-learn metadata stays ``sensitive_features``); its old name
``sensitive_feature`` works one release and warns, naming the new one."""

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone

import fairdecide as fd
from fairdecide.evaluation import certify_held_out as certify

NEW = "use group_column='g'"


def _frame(n=300, seed=0):
    rng = np.random.RandomState(seed)
    z = rng.randint(2, size=n)
    X = np.c_[rng.normal(size=n) + z, rng.normal(size=n)]
    y = (X[:, 0] + rng.normal(size=n) > 0.5).astype(int)
    return pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "g": z}), y, z


def test_the_classifier_takes_sensitive_feature_one_release_with_a_warning():
    frame, y, z = _frame()
    old = fd.FairPolicyClassifier(sensitive_feature="g", epsilon=0.05, random_state=0)
    assert old.get_params()["sensitive_feature"] == "g"
    assert old.get_params()["group_column"] is None
    with pytest.warns(DeprecationWarning, match=NEW) as record:
        old.fit(frame, y)
    assert record[0].filename == __file__  # points at the caller's fit
    new = fd.FairPolicyClassifier(group_column="g", epsilon=0.05, random_state=0)
    new.fit(frame, y)
    # the column is the group, not a feature, and gives the same policy either way
    assert list(old.feature_names_in_) == list(new.feature_names_in_) == ["a", "b"]
    assert np.array_equal(old.predict_proba(frame), new.predict_proba(frame))
    by_metadata = fd.FairPolicyClassifier(epsilon=0.05, random_state=0).fit(
        frame[["a", "b"]], y, sensitive_features=z)
    assert np.array_equal(new.predict_proba(frame),
                          by_metadata.predict_proba(frame[["a", "b"]], sensitive_features=z))
    # scikit-learn's parameter protocol keeps both names
    assert clone(old).get_params()["sensitive_feature"] == "g"
    moved = clone(new).set_params(group_column=None, sensitive_feature="g")
    with pytest.warns(DeprecationWarning, match=NEW):
        moved.fit(frame, y)
    # held-out groups read from the old name's column too
    cert = certify(old, frame, y, epsilon=1.5, delta=0.1)
    assert cert == certify(new, frame, y, epsilon=1.5, delta=0.1)


def test_both_names_at_once_are_refused_naming_the_new_one():
    frame, y, _ = _frame()
    with pytest.raises(fd.FairdecideError, match="give group_column only"):
        fd.FairPolicyClassifier(group_column="g", sensitive_feature="g").fit(frame, y)


def test_the_decision_policy_takes_sensitive_feature_one_release_with_a_warning():
    frame, y, _ = _frame(400, 1)
    a = np.random.RandomState(2).randint(2, size=len(y))
    params = dict(policy="tabular", epsilon=0.1, random_state=0)
    with pytest.warns(DeprecationWarning, match=NEW):
        old = fd.FairDecisionPolicy(sensitive_feature="g", **params).fit(frame, y, actions=a)
    new = fd.FairDecisionPolicy(group_column="g", **params).fit(frame, y, actions=a)
    assert new.group_labels_ == old.group_labels_ == (0, 1)
    assert np.array_equal(old.predict_proba(frame), new.predict_proba(frame))


@pytest.mark.parametrize("make", [fd.make_utility_scorer, fd.make_fairness_scorer])
def test_the_scorers_take_sensitive_feature_one_release_with_a_warning(make):
    frame, y, z = _frame()
    clf = fd.FairPolicyClassifier(group_column="g", epsilon=0.05, random_state=0).fit(
        frame, y)
    with pytest.warns(DeprecationWarning, match=NEW) as record:
        old = make(sensitive_feature="g")
    assert record[0].filename == __file__
    assert old(clf, frame, y) == make(group_column="g")(clf, frame, y)
    by_metadata = fd.FairPolicyClassifier(epsilon=0.05, random_state=0).fit(
        frame[["a", "b"]], y, sensitive_features=z)
    assert old(clf, frame, y) == make()(by_metadata, frame[["a", "b"]], y,
                                         sensitive_features=z)
    with pytest.raises(fd.FairdecideError, match="give group_column only"):
        make(group_column="g", sensitive_feature="g")
