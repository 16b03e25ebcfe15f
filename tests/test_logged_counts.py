"""LoggedCounts: the sufficient statistics of tabular logs, in memory and on Dask.

Every function that accepts them gives what it gives on the rows they count: exactly
(to floating-point rounding) for the world, the posterior, the audit, estimate_deviation
and the ips, snips, full and Bayesian values, whose tabular forms are functions of the
counts; dm and dr, cross-fitted on rows, use the in-sample saturated cell model on counts
and agree to the order of cells / n. The Dask route (a LocalCluster of processes) builds
the same object as the in-memory one.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import fairdecide as fd
from fairdecide.datasets import make_bail_problem, sample_logged_data
from fairdecide.evaluation import (
    audit,
    estimate_deviation,
    evaluate_policy,
    evaluate_policy_by_group,
)
from fairdecide.exceptions import FairdecideError

PROBLEM, WORLD = make_bail_problem()
DATA = sample_logged_data(PROBLEM, WORLD, 6000, random_state=0)
POLICY = fd.TabularPolicy(np.random.default_rng(2).dirichlet([2, 2], size=(5, 2)))
FIELDS = ("x", "z", "a", "y", "propensity", "weights")


def same(c1: fd.LoggedCounts, c2: fd.LoggedCounts) -> bool:
    return all(np.array_equal(getattr(c1, k), getattr(c2, k)) for k in FIELDS) and all(
        getattr(c1, k) == getattr(c2, k) for k in
        ("x_labels", "group_labels", "action_labels", "outcome_labels"))


def test_counts_from_a_frame_are_the_rows_counts():
    df = DATA.to_frame()
    counts = fd.LoggedCounts.from_frame(df, features=["x"], group="z", action="a",
                                        outcome="y", propensity="propensity")
    assert same(counts, fd.LoggedCounts.from_data(DATA))
    assert counts.n == DATA.n and counts.weights.sum() == DATA.n
    # several features: the cells are the sorted combinations that occur, as on rows
    df["x2"] = np.where(np.arange(len(df)) % 3 == 0, "odd", "even")
    rows = fd.LoggedData.from_frame(df, features=["x", "x2"], group="z", action="a",
                                    outcome="y")
    counts = fd.LoggedCounts.from_frame(df, features=["x", "x2"], group="z", action="a",
                                        outcome="y")
    assert same(counts, fd.LoggedCounts.from_data(rows)) and counts.x_labels == rows.x_labels
    back = counts.to_frame()
    assert back["count"].sum() == len(df) and len(back) == len(counts.weights)


def test_functions_give_the_rows_results():
    c = fd.LoggedCounts.from_data(DATA)
    np.testing.assert_array_equal(fd.TabularWorld.from_data(DATA, PROBLEM).p_y,
                                  fd.TabularWorld.from_data(c, PROBLEM).p_y)
    p1, p2 = fd.DirichletPosterior().fit(DATA, PROBLEM), fd.DirichletPosterior().fit(c,
                                                                                     PROBLEM)
    for key in p1.counts_:
        np.testing.assert_array_equal(p1.counts_[key], p2.counts_[key])
    a1, a2 = audit(DATA, PROBLEM, random_state=0), audit(c, PROBLEM, random_state=0)
    pd.testing.assert_frame_equal(a1, a2, rtol=1e-12)
    for policy in ("logged", POLICY):
        e1 = estimate_deviation(PROBLEM, DATA, fd.Separation(), policy, random_state=0)
        e2 = estimate_deviation(PROBLEM, c, fd.Separation(), policy, random_state=0)
        assert (e1.value, e1.low, e1.high) == pytest.approx((e2.value, e2.low, e2.high),
                                                            rel=1e-12)
    bare = DATA.subset(np.arange(DATA.n))
    bare.propensity = None
    for data in (DATA, bare):
        for est in ("ips", "snips", "bayes"):
            r1 = evaluate_policy(PROBLEM, data, POLICY, est, random_state=0)
            r2 = evaluate_policy(PROBLEM, fd.LoggedCounts.from_data(data), POLICY, est,
                                 random_state=0)
            assert r1.value == pytest.approx(r2.value, rel=1e-12)
            assert r1.std_error == pytest.approx(r2.std_error, rel=1e-10)
            assert r1.confidence_interval() == pytest.approx(r2.confidence_interval(),
                                                            rel=1e-10)
        for est in ("dm", "dr"):  # cross-fitted on rows, in-sample saturated on counts
            r1 = evaluate_policy(PROBLEM, data, POLICY, est, random_state=0)
            r2 = evaluate_policy(PROBLEM, fd.LoggedCounts.from_data(data), POLICY, est,
                                 random_state=0)
            assert abs(r1.value - r2.value) < 0.2 * r1.std_error
            assert r2.std_error == pytest.approx(r1.std_error, rel=0.02)
    g1 = evaluate_policy_by_group(PROBLEM, DATA, POLICY, "ips").gaps()
    g2 = evaluate_policy_by_group(PROBLEM, c, POLICY, "ips").gaps()
    pd.testing.assert_frame_equal(g1, g2, rtol=1e-10)
    worlds = [fd.TabularWorld.from_data(d, PROBLEM, smoothing=0.5) for d in (DATA, c)]
    fair = [fd.optimize_policy(PROBLEM, w, fd.Independence(), epsilon=0.05) for w in worlds]
    assert fair[0].utility == pytest.approx(fair[1].utility, rel=1e-9)
    assert fd.Independence().deviation(fair[1].policy, worlds[1], PROBLEM) <= 0.05 + 1e-7


def test_prediction_full_information():
    clf = fd.DecisionProblem.classification(2)
    world = fd.TabularWorld(np.full((3, 2), 1 / 6), np.array(
        [[[0.8, 0.2], [0.6, 0.4]], [[0.5, 0.5], [0.3, 0.7]], [[0.2, 0.8], [0.1, 0.9]]]))
    data = sample_logged_data(clf, world, 3000, random_state=1)
    pi = fd.TabularPolicy.for_world(world, [0.3, 0.7])
    r1 = evaluate_policy(clf, data, pi, "full")
    r2 = evaluate_policy(clf, fd.LoggedCounts.from_data(data), pi, "full")
    assert (r1.value, r1.std_error) == pytest.approx((r2.value, r2.std_error), rel=1e-12)


def test_counts_refuse_what_needs_rows():
    c = fd.LoggedCounts.from_data(DATA)
    with pytest.raises(FairdecideError, match="BootstrapPosterior resamples rows"):
        fd.BootstrapPosterior().fit(c, PROBLEM)
    with pytest.raises(FairdecideError, match="logging_model"):
        from sklearn.linear_model import LogisticRegression
        evaluate_policy(PROBLEM, c, POLICY, "ips", logging_model=LogisticRegression())
    df = DATA.to_frame()
    df["propensity"] = np.random.RandomState(0).uniform(0.2, 0.8, len(df))
    with pytest.raises(FairdecideError, match="vary within cells"):
        fd.LoggedCounts.from_frame(df, features=["x"], group="z", action="a", outcome="y",
                                   propensity="propensity")
    df.loc[3, "z"] = None
    with pytest.raises(FairdecideError, match="'z' has 1 missing"):
        fd.LoggedCounts.from_frame(df, features=["x"], group="z", action="a", outcome="y")
    with pytest.raises(FairdecideError, match="group='g' is not a column"):
        fd.LoggedCounts.from_frame(df, features=["x"], group="g", action="a", outcome="y")


@pytest.mark.slow  # 4-12 s: runs with CI's slow tests
def test_dask_local_cluster_gives_the_same_counts_and_results(tmp_path):
    """A Parquet folder of four partitions, counted on a LocalCluster of two worker
    processes: the same LoggedCounts as in memory, hence the same results."""
    import dask.dataframe as dd
    from dask.distributed import Client, LocalCluster

    df = DATA.to_frame()
    for k, part in enumerate(np.array_split(np.arange(len(df)), 4)):
        df.iloc[part].to_parquet(tmp_path / f"part{k}.parquet")
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=":0") as cluster, Client(cluster):
        ddf = dd.read_parquet(str(tmp_path))
        assert ddf.npartitions == 4
        counts = fd.LoggedCounts.from_frame(ddf, features=["x"], group="z", action="a",
                                            outcome="y", propensity="propensity")
    assert same(counts, fd.LoggedCounts.from_data(DATA))
    r1 = evaluate_policy(PROBLEM, DATA, POLICY, "ips")
    r2 = evaluate_policy(PROBLEM, counts, POLICY, "ips")
    assert r1.confidence_interval() == pytest.approx(r2.confidence_interval(), rel=1e-12)
    pd.testing.assert_frame_equal(audit(DATA, PROBLEM, random_state=0),
                                  audit(counts, PROBLEM, random_state=0), rtol=1e-12)


@pytest.mark.slow  # 5-8 s (a LocalCluster of two processes), as the cluster test above
def test_the_docs_example_runs(capsys):
    """The Dask example of docs/data.md, verbatim."""
    import re
    from pathlib import Path

    page = (Path(__file__).resolve().parents[1] / "docs" / "data.md").read_text()
    blocks = [b for b in re.findall(r"```python\n(.*?)```", page, flags=re.S)
              if "LoggedCounts" in b]
    assert len(blocks) == 1
    exec(compile(blocks[0], "docs/data.md", "exec"), {"__name__": "__docs__"})
    assert "LoggedCounts(n=6000" in capsys.readouterr().out
