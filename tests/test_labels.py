"""Policies and worlds are paired with data and worlds by label, never silently by position."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fairdecide import (
    FairdecideError,
    Independence,
    LoggedData,
    TabularPolicy,
    Units,
    expected_utility,
    optimize_policy,
)
from fairdecide.datasets import make_bail_problem, sample_logged_data
from fairdecide.evaluation import evaluate_policy

PROBLEM, WORLD = make_bail_problem()


def _without_cell(data: LoggedData, label: str) -> LoggedData:
    """The rows of ``data`` outside cell ``label``, rebuilt so the cell is unknown (as
    when a data frame never contained it): the remaining cells' codes shift."""
    frame = data.to_frame()
    frame = frame[frame["x"] != label]
    return LoggedData(frame["x"], frame["z"], frame["y"], frame["a"],
                      propensity=frame["propensity"],
                      action_labels=PROBLEM.action_labels,
                      outcome_labels=PROBLEM.outcome_labels)


@pytest.fixture(scope="module")
def fair_policy():
    return optimize_policy(PROBLEM, WORLD, Independence(), epsilon=0.05).policy


def test_library_policies_carry_labels(fair_policy):
    assert fair_policy.x_labels == WORLD.x_labels
    assert fair_policy.group_labels == WORLD.group_labels
    data = sample_logged_data(PROBLEM, WORLD, 200, random_state=0)
    est = TabularPolicy.from_data(data, PROBLEM)
    assert est.x_labels == data.x_labels and est.group_labels == data.group_labels


def test_policy_follows_labels_when_a_cell_was_never_observed(fair_policy):
    data = _without_cell(sample_logged_data(PROBLEM, WORLD, 3000, random_state=1), "risk 2")
    assert data.n_x == 4 and "risk 2" not in data.x_labels
    rows = fair_policy.proba(data.units())
    # independent lookup: each row's labels -> the world's codes -> the policy table
    xw = np.array([WORLD.x_labels.index(data.x_labels[c]) for c in data.x])
    zw = np.array([WORLD.group_labels.index(data.group_labels[g]) for g in data.z])
    np.testing.assert_array_equal(rows, fair_policy.table[xw, zw])
    # so IPS with the logged propensities is the hand-computed importance-weighted mean
    est = evaluate_policy(PROBLEM, data, fair_policy, method="ips")
    a = data.action_codes(PROBLEM)
    y = data.outcome_codes(PROBLEM)
    want = np.mean(fair_policy.table[xw, zw, a] / data.propensity * PROBLEM.utility[a, y])
    assert est.value == pytest.approx(want, rel=1e-12)


def test_groups_matched_by_label_not_order(fair_policy):
    data = sample_logged_data(PROBLEM, WORLD, 500, random_state=2)
    frame = data.to_frame()
    flipped = LoggedData(frame["x"], frame["z"], frame["y"], frame["a"],
                         group_labels=["group B", "group A"])
    assert flipped.group_labels != data.group_labels
    np.testing.assert_array_equal(fair_policy.proba(flipped.units()),
                                  fair_policy.proba(data.units()))


def test_world_outcomes_matched_by_label():
    data = _without_cell(sample_logged_data(PROBLEM, WORLD, 500, random_state=3), "risk 0")
    got = WORLD.outcome_proba(data.units(), PROBLEM)
    xw = [WORLD.x_labels.index(data.x_labels[c]) for c in data.x]
    zw = [WORLD.group_labels.index(data.group_labels[g]) for g in data.z]
    np.testing.assert_array_equal(got, WORLD.outcome_table(2)[xw, zw])


def test_unlabelled_policy_of_other_size_is_refused():
    data = _without_cell(sample_logged_data(PROBLEM, WORLD, 500, random_state=4), "risk 4")
    unlabelled = TabularPolicy.constant(5, 2, [0.5, 0.5])
    with pytest.raises(FairdecideError, match=r"policy has 5 cells .* has 4.*x_labels"):
        evaluate_policy(PROBLEM, data, unlabelled, method="ips")


def test_labelled_policy_missing_a_cell_names_it():
    data = sample_logged_data(PROBLEM, WORLD, 300, random_state=5)
    partial = _without_cell(data, "risk 3")
    narrow = TabularPolicy.for_world(partial, [0.5, 0.5])
    with pytest.raises(FairdecideError, match=r"no row for the cell label\(s\) \['risk 3'\]"):
        expected_utility(PROBLEM, WORLD, narrow)
    with pytest.raises(FairdecideError, match="risk 3"):
        evaluate_policy(PROBLEM, data, narrow, method="ips")


def test_wider_labelled_policy_uses_only_matching_rows():
    table = np.zeros((6, 2, 2))
    table[..., 1] = 1.0
    table[5] = [[1.0, 0.0], [1.0, 0.0]]  # an extra cell the world does not have
    labels = ["risk 5", *WORLD.x_labels]  # ... listed first, so positions differ
    wide = TabularPolicy(table[[5, 0, 1, 2, 3, 4]], x_labels=labels,
                         group_labels=WORLD.group_labels)
    release_all = TabularPolicy.for_world(WORLD, [0.0, 1.0])
    assert expected_utility(PROBLEM, WORLD, wide) == expected_utility(PROBLEM, WORLD,
                                                                      release_all)


def test_sampling_with_a_policy_of_other_action_count():
    three = TabularPolicy.for_world(WORLD, [0.2, 0.3, 0.5])
    with pytest.raises(FairdecideError, match="policy has 3 actions but the problem has 2"):
        sample_logged_data(PROBLEM, WORLD, 10, policy=three)
    with pytest.raises(FairdecideError, match="policy must be a TabularPolicy"):
        sample_logged_data(PROBLEM, WORLD, 10, policy=np.full((5, 2, 2), 0.5))


def test_sampling_follows_policy_labels():
    # the policy lists groups in the other order: group B always detained
    pi = TabularPolicy(np.stack([np.tile([[1.0, 0.0], [0.0, 1.0]], (5, 1, 1))])[0],
                       x_labels=WORLD.x_labels, group_labels=["group B", "group A"])
    data = sample_logged_data(PROBLEM, WORLD, 400, policy=pi, random_state=6)
    frame = data.to_frame()
    assert set(frame.loc[frame["z"] == "group B", "a"]) == {PROBLEM.action_labels[0]}
    assert set(frame.loc[frame["z"] == "group A", "a"]) == {PROBLEM.action_labels[1]}


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"x_labels": ["a"]}, "x_labels has 1 labels but the table has 2 cells"),
    ({"group_labels": ["f", "f"]}, "group_labels must be distinct"),
    ({"x_labels": "ab"}, "x_labels must be a sequence of labels"),
    ({"x_labels": [[1], [2]]}, "x_labels must be hashable"),
])
def test_bad_labels(kwargs, match):
    with pytest.raises(FairdecideError, match=match):
        TabularPolicy(np.full((2, 2, 2), 0.5), **kwargs)


def test_to_frame_names_cells_groups_and_actions(fair_policy):
    frame = fair_policy.to_frame(PROBLEM.action_labels)
    assert list(frame.columns) == list(PROBLEM.action_labels)
    assert frame.index.get_level_values("group").unique().tolist() == list(WORLD.group_labels)
    np.testing.assert_allclose(frame.to_numpy(), fair_policy.table.reshape(-1, 2))


@given(seed=st.integers(0, 10_000), n_x=st.integers(1, 6), n_z=st.integers(1, 3),
       data=st.data())
@settings(max_examples=40, deadline=None)
def test_label_matching_property(seed, n_x, n_z, data):
    """For any relabelling and any subset of cells and groups seen by the units, a labelled
    policy gives each unit the row of its labels."""
    rng = np.random.RandomState(seed)
    table = rng.dirichlet(np.ones(3), size=(n_x, n_z))
    x_labels = [f"c{i}" for i in rng.permutation(n_x)]
    z_labels = [f"g{i}" for i in rng.permutation(n_z)]
    policy = TabularPolicy(table, x_labels=x_labels, group_labels=z_labels)
    seen_x = data.draw(st.lists(st.sampled_from(x_labels), min_size=1, unique=True))
    seen_z = data.draw(st.lists(st.sampled_from(z_labels), min_size=1, unique=True))
    n = 20
    cell, group = rng.randint(len(seen_x), size=n), rng.randint(len(seen_z), size=n)
    units = Units(group=group, n_groups=len(seen_z), cell=cell, n_cells=len(seen_x),
                  cell_labels=tuple(seen_x), group_labels=tuple(seen_z))
    want = np.array([policy.table[x_labels.index(seen_x[c]), z_labels.index(seen_z[g])]
                     for c, g in zip(cell, group, strict=True)])
    np.testing.assert_array_equal(policy.proba(units), want)


def test_codes_of_an_owner_with_the_same_labels_need_no_lookup(monkeypatch):
    """Units.map_codes: an owner made for the same labels in the same order maps each
    code to itself without the label lookup (which built a pandas Index on every
    evaluation of a policy in its own world); labels in another order still go through
    the lookup and map by label."""
    from fairdecide.data.units import Units
    from fairdecide.labels import Labels

    units = Units(group=np.array([0, 1, 1]), n_groups=2, cell=np.array([2, 0, 1]),
                  n_cells=3, cell_labels=("a", "b", "c"), group_labels=(1, 2))
    looked_up = []
    real = Labels.map_to
    monkeypatch.setattr(Labels, "map_to", lambda self, *a, **k: looked_up.append(1)
                        or real(self, *a, **k))
    np.testing.assert_array_equal(units.map_codes(("a", "b", "c"), 3, "cell", "policy"),
                                  [0, 1, 2])
    np.testing.assert_array_equal(units.map_codes((1, 2), 2, "group", "policy"), [0, 1])
    assert looked_up == []
    np.testing.assert_array_equal(units.map_codes(("c", "a", "b"), 3, "cell", "policy"),
                                  [1, 2, 0])
    np.testing.assert_array_equal(units.map_codes((2, 1), 2, "group", "policy"), [1, 0])
    assert len(looked_up) == 2
