"""Labels to codes, in one place (fairdecide.labels), whatever the container and dtype.

The reference in these tests is written independently: a Python dict from each distinct
value (sorted) to its position, applied row by row, which is what labels-to-codes means.
The same logged data as pandas frames of every dtype and as Dask frames made from them
must give the same counts, worlds, audits and off-policy values.
"""

from __future__ import annotations

import pickle

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fairdecide as fd
from fairdecide.datasets import make_bail_problem, make_tabular_problem, sample_logged_data
from fairdecide.evaluation import audit, evaluate_policy
from fairdecide.exceptions import FairdecideError
from fairdecide.labels import Labels

FIELDS = ("x", "z", "a", "y", "propensity", "weights")
LABEL_FIELDS = ("x_labels", "group_labels", "action_labels", "outcome_labels")


def reference(values: list) -> tuple[list[int], tuple]:
    """Codes by a dict over the sorted distinct values, row by row."""
    labels = tuple(sorted(set(values)))
    index = {v: i for i, v in enumerate(labels)}
    return [index[v] for v in values], labels


scalars = st.one_of(st.integers(-5, 5), st.sampled_from(["a", "b", "c", "10", "9"]))


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(-50, 50), min_size=1, max_size=40),
       st.sampled_from(["list", "numpy", "object", "series", "category"]))
def test_factorize_is_the_dict_reference(values, container):
    data = {"list": values, "numpy": np.array(values),
            "object": np.array(values, dtype=object), "series": pd.Series(values),
            "category": pd.Series(values, dtype="category")}[container]
    codes, labels = Labels.factorize(data, "v")
    ref_codes, ref_labels = reference(values)
    assert labels == ref_labels and codes.tolist() == ref_codes
    assert all(type(v) is int for v in labels)  # numpy scalars become Python ones
    assert labels.encode(data, "v").tolist() == ref_codes


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.sampled_from(["p", "q"])), min_size=1,
                max_size=30))
def test_tuples_stay_whole(values):
    codes, labels = Labels.factorize(values, "cells")
    ref_codes, ref_labels = reference(values)
    assert labels == ref_labels and codes.tolist() == ref_codes


@settings(max_examples=100, deadline=None)
@given(st.lists(scalars, min_size=1, max_size=30))
def test_mixed_types_keep_their_first_order(values):
    codes, labels = Labels.factorize(values, "v")
    try:
        ref_codes, ref_labels = reference(values)
    except TypeError:  # unsortable: first appearance
        ref_labels = tuple(dict.fromkeys(values))
        ref_codes = [ref_labels.index(v) for v in values]
    assert labels == ref_labels and codes.tolist() == ref_codes


def test_text_matches_labels_that_are_not_text():
    """Dask stores object columns as strings: '0' finds the outcome 0."""
    assert Labels([0, 1, 10]).encode(["10", "0", 1], "y").tolist() == [2, 0, 1]
    # two labels with one text form: no guessing, the text must match exactly
    with pytest.raises(FairdecideError, match=r"y contains value '2' \(row 0\)"):
        Labels([1, "1", 2.0, "2.0"]).encode(["2"], "y")
    assert Labels([1, "1"]).encode(["1", 1], "y").tolist() == [1, 0]


def test_errors_name_the_argument_and_row():
    with pytest.raises(FairdecideError, match=r"z has 1 missing values \(first at row 2\)"):
        Labels.factorize(["a", "b", None], "z")
    with pytest.raises(FairdecideError, match="z has an unhashable value"):
        Labels.factorize(["a", ["b"]], "z")
    with pytest.raises(FairdecideError, match="z has an infinite value at row 1"):
        Labels.factorize([1.0, np.inf], "z")
    with pytest.raises(FairdecideError, match=r"z contains value 'c' \(row 1\) that is not"):
        Labels.factorize(["a", "c"], "z", labels=["a", "b"])
    with pytest.raises(FairdecideError, match="labels given for z must be distinct"):
        Labels.factorize(["a"], "z", labels=["a", "a"])
    with pytest.raises(FairdecideError, match="the policy has no row for the cell"):
        Labels(["lo", "mid"]).map_to(("lo", "hi"), "cell", "policy")


def test_labels_are_tuples_that_pickle():
    codes, labels = Labels.factorize(np.array([3, 1, 3], dtype=np.int64), "x")
    assert codes.tolist() == [1, 0, 1]
    assert labels == (1, 3) and repr(labels) == "(1, 3)" and hash(labels) == hash((1, 3))
    back = pickle.loads(pickle.dumps(labels))
    assert back == labels and isinstance(back, Labels)
    assert labels.index(3) == 1  # still a tuple's index


def test_logged_data_from_dask_says_what_to_use():
    dd = pytest.importorskip("dask.dataframe")
    problem, world = make_bail_problem()
    ddf = dd.from_pandas(sample_logged_data(problem, world, 50, random_state=0).to_frame(),
                         npartitions=2)
    with pytest.raises(FairdecideError, match=r"LoggedCounts.from_frame"):
        fd.LoggedData.from_frame(ddf, features=["x"], group="z", outcome="y", action="a")


def test_malformed_subsets_and_empty_frames():
    problem, world = make_bail_problem()
    data = sample_logged_data(problem, world, 20, random_state=0)
    with pytest.raises(FairdecideError, match="rows is a boolean mask of shape"):
        data.subset(np.ones(7, dtype=bool))
    with pytest.raises(FairdecideError, match="rows must index the data's 20 rows"):
        data.subset([25])
    empty = data.to_frame().iloc[:0]
    with pytest.raises(FairdecideError, match="the DataFrame has no rows"):
        fd.LoggedCounts.from_frame(empty, features=["x"], group="z", outcome="y", action="a")


# ----------------------------------------------------------- the same data, every dtype
def _as(df: pd.DataFrame, dtype: str, cols: str = "xzay") -> pd.DataFrame:
    out = df.copy()
    for col in cols:
        if dtype == "object":
            out[col] = out[col].astype(object)
        elif dtype == "int":
            out[col] = out[col].astype(np.int64)
        else:
            out[col] = out[col].astype({"category": "category", "string": "string",
                                        "pyarrow": "string[pyarrow]"}[dtype])
    return out


def _everything(df, problem, dask: bool):
    if dask:
        import dask.dataframe as dd

        df = dd.from_pandas(df, npartitions=3)
    counts = fd.LoggedCounts.from_frame(df, features=["x"], group="z", action="a",
                                        outcome="y", propensity="propensity")
    world = fd.TabularWorld.from_data(counts, problem, smoothing=0.5)
    policy = fd.TabularPolicy.for_world(world, np.linspace(0.2, 0.8, problem.n_actions)
                                        / np.linspace(0.2, 0.8, problem.n_actions).sum())
    return (counts, world, audit(counts, problem, n_boot=50, n_draws=200, random_state=0),
            evaluate_policy(problem, counts, policy, "ips"))


def _same_results(r1, r2) -> None:
    (c1, w1, a1, v1), (c2, w2, a2, v2) = r1, r2
    for k in FIELDS:
        np.testing.assert_array_equal(getattr(c1, k), getattr(c2, k))
    for k in LABEL_FIELDS:
        assert getattr(c1, k) == getattr(c2, k)
    np.testing.assert_array_equal(w1.p_xz, w2.p_xz)
    np.testing.assert_array_equal(w1.p_y, w2.p_y)
    pd.testing.assert_frame_equal(a1, a2)
    assert (v1.value, v1.std_error) == (v2.value, v2.std_error)


@pytest.mark.parametrize("dtype", ["object", "category", "string", "pyarrow"])
def test_text_labels_the_same_in_pandas_and_dask_of_every_dtype(dtype):
    pytest.importorskip("dask.dataframe")
    problem, world = make_bail_problem()
    df = sample_logged_data(problem, world, 3000, random_state=0).to_frame()
    base = _everything(df, problem, dask=False)
    # the bail problem's outcomes are numbers: its text columns are x, z and a
    _same_results(_everything(_as(df, dtype, "xza"), problem, dask=False), base)
    _same_results(_everything(_as(df, dtype, "xza"), problem, dask=True), base)


@pytest.mark.parametrize("dtype", ["int", "object", "category"])
def test_number_labels_the_same_in_pandas_and_dask(dtype):
    """Integer labels (12 cells, so text order would differ from number order): the frame
    LoggedData.to_frame writes keeps them integers, and so does Dask; an object column
    of numbers, which Dask turns into text, still finds the problem's actions and
    outcomes, and its world is the same world by label."""
    pytest.importorskip("dask.dataframe")
    problem, world = make_tabular_problem(12, 3, 2, 2, random_state=0)
    df = sample_logged_data(problem, world, 4000, random_state=0).to_frame()
    assert all(df[c].dtype == np.int64 for c in "xzay")
    base = _everything(df, problem, dask=False)
    _same_results(_everything(_as(df, dtype), problem, dask=False), base)
    res = _everything(_as(df, dtype), problem, dask=True)
    if dtype != "object":
        _same_results(res, base)
        return
    counts, w, _, value = res
    assert counts.x_labels == tuple(sorted(str(v) for v in range(12)))  # Dask's text
    order = [int(v) for v in counts.x_labels]  # its cells, by label, in base's numbering
    np.testing.assert_array_equal(w.p_xz, base[1].p_xz[order])
    np.testing.assert_array_equal(w.p_y, base[1].p_y[order])
    assert value.value == pytest.approx(base[3].value, rel=1e-12)
    # with Dask's string conversion off (docs/data.md), the numbers stay numbers
    import dask

    with dask.config.set({"dataframe.convert-string": False}):
        _same_results(_everything(_as(df, dtype), problem, dask=True), base)


junk = st.one_of(st.none(), st.floats(allow_nan=True), st.integers(), st.text(max_size=3),
                 st.lists(st.integers(), max_size=2), st.dictionaries(st.text(max_size=1),
                                                                     st.integers(),
                                                                     max_size=1),
                 st.tuples(st.integers()), st.just(np.inf), st.just(pd.NA))


@settings(max_examples=200, deadline=None)
@given(st.one_of(junk, st.lists(junk, max_size=6)), st.one_of(st.none(), junk,
                                                              st.lists(junk, max_size=4)))
def test_malformed_values_and_labels_get_a_clear_error(values, labels):
    """Anything: codes that index the labels and read back the values, or a
    FairdecideError (never numpy's or pandas' own exceptions)."""
    try:
        codes, found = Labels.factorize(values, "v", labels)
    except FairdecideError:
        return
    assert len(codes) == len(values) and all(0 <= c < len(found) for c in codes)
    for c, v in zip(codes, values, strict=True):  # by value, or text by its text form
        assert found[c] == v or (isinstance(v, str) and str(found[c]) == v)


def test_sample_world_from_codes_is_the_world_from_labels():
    rng = np.random.default_rng(0)
    X, p_y = rng.normal(size=(30, 2)), rng.dirichlet([1, 1], size=30)
    z = rng.choice(["b", "a", "c"], size=30)
    by_label = fd.SampleWorld(X, z, p_y)
    codes = np.array([by_label.group_labels.index(g) for g in z])
    by_code = fd.SampleWorld.from_codes(X, codes, p_y, group_labels=("a", "b", "c"))
    assert by_code.group_labels == by_label.group_labels == ("a", "b", "c")
    np.testing.assert_array_equal(by_code.z, by_label.z)
    np.testing.assert_array_equal(by_code.weights, by_label.weights)
    again = by_code.with_outcomes(p_y[:, ::-1])
    np.testing.assert_array_equal(again.z, codes)
    np.testing.assert_allclose(again.p_y, p_y[:, ::-1], rtol=1e-14)  # rows renormalised


def test_a_policy_with_its_units_labels_reads_them_without_a_lookup(monkeypatch):
    """A policy built for a world's units carries the same labels in the same order: its
    rows are read by position, without pandas' lookup (0.3 ms of each decision table's
    0.7 ms on a 12-variable problem, which successive linearisation builds a few hundred
    times); labels in another order are still matched by value."""
    problem, world = make_tabular_problem(3, 2, 2, 2, random_state=0)
    table = np.random.default_rng(0).dirichlet(np.ones(2), size=(3, 2))
    policy = fd.TabularPolicy(table, x_labels=world.x_labels,
                              group_labels=world.group_labels)
    expected = fd.decision_table(problem, world, policy).joint

    def no_lookup(*args, **kwargs):
        raise AssertionError("labels looked up")

    with monkeypatch.context() as mp:
        mp.setattr(Labels, "map_to", no_lookup)
        same = fd.decision_table(problem, world, policy).joint
    assert np.array_equal(same, expected)
    # the cells in reverse order: matched by label, the same table
    flipped = fd.TabularPolicy(table[::-1], x_labels=tuple(world.x_labels)[::-1],
                               group_labels=world.group_labels)
    assert np.allclose(fd.decision_table(problem, world, flipped).joint, expected)
