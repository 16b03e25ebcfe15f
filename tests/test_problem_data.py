import numpy as np
import pandas as pd
import pytest

from fairdecide import DecisionProblem, FairdecideError, LoggedData


def test_problem_shapes_and_labels():
    p = DecisionProblem([[1, 0, 2], [0, 1, 3]], action_labels=["no", "yes"],
                        outcome_labels=["a", "b", "c"], outcome_depends_on_action=False)
    assert (p.n_actions, p.n_outcomes) == (2, 3)
    assert list(p.outcome_codes(["c", "a"])) == [2, 0]
    assert "prediction" in repr(p)
    with pytest.raises(FairdecideError, match="unknown outcome 'd'"):
        p.outcome_codes(["d"])


@pytest.mark.parametrize(
    ("utility", "match"),
    [
        ([1, 2], "2 dimensions"),
        ([[1, 2]], "n_actions >= 2"),
        ([[1, np.nan], [0, 1]], "NaN"),
        ([["a", "b"], ["c", "d"]], "numeric"),
    ],
)
def test_problem_rejects_bad_utility(utility, match):
    with pytest.raises(FairdecideError, match=match):
        DecisionProblem(utility)


def test_problem_label_count_must_match():
    with pytest.raises(FairdecideError, match="action_labels has 3 labels"):
        DecisionProblem(np.eye(2), action_labels=["a", "b", "c"])
    with pytest.raises(FairdecideError, match="distinct"):
        DecisionProblem(np.eye(2), outcome_labels=["a", "a"])


def test_problem_utility_is_read_only():
    p = DecisionProblem(np.eye(2))
    with pytest.raises(ValueError, match="read-only"):
        p.utility[0, 0] = 5


def test_logged_data_codes_and_labels():
    d = LoggedData(x=[3, 1, 3], z=["m", "f", "f"], y=[1, 0, 1], a=["no", "no", "yes"])
    assert d.x_labels == (1, 3) and list(d.x) == [1, 0, 1]
    assert d.group_labels == ("f", "m") and list(d.z) == [1, 0, 0]
    assert d.action_labels == ("no", "yes")
    frame = d.to_frame()
    assert list(frame["z"]) == ["m", "f", "f"] and list(frame["a"]) == ["no", "no", "yes"]


def test_logged_data_declared_labels_keep_unseen_values():
    d = LoggedData(x=["b"], z=[0], y=[0], x_labels=["a", "b", "c"], group_labels=[0, 1])
    assert d.n_x == 3 and d.n_z == 2 and list(d.x) == [1]
    with pytest.raises(FairdecideError, match="not among the labels given"):
        LoggedData(x=["q"], z=[0], y=[0], x_labels=["a", "b"])


def test_logged_data_errors():
    with pytest.raises(FairdecideError, match="same length"):
        LoggedData(x=[0, 1], z=[0], y=[0, 1])
    with pytest.raises(FairdecideError, match="missing"):
        LoggedData(x=[0, np.nan], z=[0, 1], y=[0, 1])
    with pytest.raises(FairdecideError, match="missing"):
        LoggedData(x=[0, 1], z=[None, 1], y=[0, 1])
    with pytest.raises(FairdecideError, match="at least one row"):
        LoggedData(x=[], z=[], y=[])
    with pytest.raises(FairdecideError, match=r"propensity must lie in \(0, 1\]"):
        LoggedData(x=[0, 1], z=[0, 1], y=[0, 1], a=[0, 1], propensity=[0.5, 0.0])


def test_from_frame_combines_features():
    df = pd.DataFrame({"f1": ["a", "a", "b", "b"], "f2": [0, 1, 0, 0],
                       "g": ["x", "y", "x", "y"], "out": [1, 0, 1, 1], "act": [0, 1, 1, 0]})
    d = LoggedData.from_frame(df, features=["f1", "f2"], group="g", outcome="out",
                              action="act")
    assert d.x_labels == (("a", 0), ("a", 1), ("b", 0))
    assert list(d.x) == [0, 1, 2, 2]
    single = LoggedData.from_frame(df, features="f1", group="g", outcome="out")
    assert single.x_labels == ("a", "b") and single.a is None


def test_from_frame_errors_name_the_column():
    df = pd.DataFrame({"f": [1, None], "g": [0, 1], "y": [0, 1]})
    with pytest.raises(FairdecideError, match="'f' has 1 missing"):
        LoggedData.from_frame(df, features=["f"], group="g", outcome="y")
    with pytest.raises(FairdecideError, match=r"group='nope' is not a column of the DataFrame"):
        LoggedData.from_frame(df, features=["f"], group="nope", outcome="y")
    with pytest.raises(FairdecideError, match="DataFrame"):
        LoggedData.from_frame({"f": [1]}, features=["f"], group="g", outcome="y")


def test_from_frame_keeps_categorical_groups():
    df = pd.DataFrame({"f": [0, 1], "y": [0, 1],
                       "g": pd.Categorical(["b", "b"], categories=["a", "b"])})
    d = LoggedData.from_frame(df, features=["f"], group="g", outcome="y")
    assert d.group_labels == ("a", "b")


def test_data_outcomes_match_problem_by_label():
    p = DecisionProblem(np.eye(2), outcome_labels=["no", "yes"], action_labels=["n", "y"])
    d = LoggedData(x=[0, 0], z=[0, 0], y=["yes", "no"], a=["y", "n"])
    assert list(d.outcome_codes(p)) == [1, 0]
    assert list(d.action_codes(p)) == [1, 0]
    bad = LoggedData(x=[0], z=[0], y=["maybe"])
    with pytest.raises(FairdecideError, match="unknown outcome 'maybe'"):
        bad.outcome_codes(p)


def test_subset():
    d = LoggedData(x=[0, 1, 2], z=[0, 1, 0], y=[1, 1, 0])
    s = d.subset([2, 0])
    assert list(s.x) == [2, 0] and s.x_labels == d.x_labels
    with pytest.raises(FairdecideError, match="no rows"):
        d.subset(np.zeros(3, dtype=bool))
