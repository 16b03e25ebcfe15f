"""Issue 51, finding 6: a typo stops the audit, a rare real value passes.

A rare label is suspect only when its form looks like a typo of a frequent one (text
among numbers, a case or spacing variant, one letter away): an item chosen 4 times among
80 is no typo. The audit stops on a suspect value at both doors (Python and the command
line), naming the column, the value, its rows and both ways on; the rule's constants are
pinned by cases on either side of each boundary. Each test fails on b19dcbc.
"""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fairdecide as fd
from fairdecide.cli import main
from fairdecide.exceptions import SuspiciousLabelError, SuspiciousLabelWarning
from fairdecide.labels import Labels, suspect_labels
from fairdecide.report import audit_report


def _column(counts: dict) -> list:
    """A column holding each label ``counts[label]`` times."""
    return [lab for lab, k in counts.items() for _ in range(k)]


def _suspects(column: list) -> list:
    codes, labels = Labels.factorize(column, "column")
    return [(s.label, s.count) for s in suspect_labels(codes, labels)]


def _warned(column: list) -> list[str]:
    """The SuspiciousLabelWarnings LoggedData gives for ``column`` as its outcome."""
    n = len(column)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fd.LoggedData(x=np.zeros(n), z=np.arange(n) % 2, y=column)
    return [str(w.message) for w in caught if issubclass(w.category, SuspiciousLabelWarning)]


# ------------------------------------------------------------------ the share and ratio
@pytest.mark.parametrize(("n", "count", "suspect"), [
    # rare means at most n / 1000 rows (RARE_LABEL_SHARE = 0.001) ...
    (20_000, 20, True), (20_000, 21, False), (50_000, 50, True), (50_000, 51, False),
    # ... and at least one row, whatever n (the limit is max(1, n / 1000))
    (500, 1, True), (500, 2, False), (21, 1, True),
])
def test_the_rare_share_is_one_row_in_a_thousand_and_at_least_one(n, count, suspect):
    column = _column({0: (n - count) // 2, 1: n - count - (n - count) // 2, "yes": count})
    assert len(column) == n
    assert _suspects(column) == ([("yes", count)] if suspect else [])
    assert len(_warned(column)) == int(suspect)  # LoggedData warns by the same rule


@pytest.mark.parametrize(("frequent", "suspect"), [(10, True), (9, False)])
def test_a_frequent_label_holds_ten_times_the_rare_ones_rows(frequent, suspect):
    # RARE_LABEL_RATIO = 10: "yes" (1 row) is compared with 0 only when 0 holds 10 rows
    assert _suspects(_column({0: frequent, "yes": 1})) == ([("yes", 1)] if suspect else [])


# ------------------------------------------------------------------ forms of a typo
@pytest.mark.parametrize(("counts", "label", "like"), [
    ({0: 4000, 1: 2999, "yes": 1}, "yes", "number"),  # text among numbers
    ({"0": 4000, "1": 2999, "yes": 1}, "yes", "number"),  # the same, read from a CSV
    ({"High": 3000, "Low": 4000, "high ": 2}, "high ", "'High'"),  # case and spacing
    ({"High": 3000, "Low": 4000, "H igh": 1}, "H igh", "'High'"),
    ({0: 3000, 1: 4000, "1.0": 1}, "1.0", "1"),  # the same number written otherwise
    ({"Low": 3000, "Medium": 2000, "High": 2000, "Meduim": 3}, "Meduim", "'Medium'"),
    ({"Low": 3000, "Medium": 2000, "High": 2000, "Medum": 1}, "Medum", "'Medium'"),
    ({"Low": 3000, "Medium": 2000, "High": 2000, "Highh": 1}, "Highh", "'High'"),
    ({"no risk": 3000, "high risk": 4000, "high rsik": 1}, "high rsik", "'high risk'"),
    ({"High": 3000, "Low": 4000, "3": 1}, "3", "text"),  # a number among text
    ({True: 3000, False: 4000, "maybe": 1}, "maybe", "truth value"),
    ({"High": 40, "Low": 30, "high": 1}, "high", "'High'"),  # few rows: 40 >= 10 * 1
])
def test_a_rare_label_shaped_like_a_typo_is_suspect(counts, label, like):
    codes, labels = Labels.factorize(_column(counts), "column")
    found = suspect_labels(codes, labels)
    assert [(s.label, s.count) for s in found] == [(label, counts[label])]
    assert like in found[0].reason


@pytest.mark.parametrize("counts", [
    {0: 6999, 1: 1},  # a rare outcome of a binary variable
    {"A": 4000, "B": 3000, "C": 2},  # a rare category named by one letter
    {"R51": 4000, "R55": 3000, "R54": 2},  # ids that differ in digits
    {"item_10": 4000, "item_11": 3000, "item_12": 1},
    {"cat_a": 4000, "cat_b": 3000, "cat_c": 1},
    {"High": 4000, "Low": 3000, "Unknown": 1},  # a rare word unlike the others
    {0: 4000, 1: 3000, 2: 1, 3: 1},  # rare numbers among numbers
    {0.5: 4000, 1.5: 3000, 2.25: 1},
    {("a", 1): 4000, ("b", 2): 3000, ("c", 3): 1},  # tuples: left alone
])
def test_a_rare_label_of_the_same_form_passes(counts):
    assert _suspects(_column(counts)) == []
    assert _warned(_column(counts)) == []


def test_an_80_armed_action_column_with_rare_arms_passes():
    # 80 items over 10,000 rows, as the Open Bandit sample: several arms are chosen a
    # handful of times (at most n / 1000 = 10), none is a typo.
    rng = np.random.default_rng(0)
    counts = rng.multinomial(10_000 - 80 * 4, rng.dirichlet(np.full(80, 0.6))) + 4
    counts[[10, 54, 56]] = [9, 4, 9]
    counts[0] += 10_000 - counts.sum()
    items = np.repeat(np.arange(80), counts)
    assert (np.bincount(items) <= 10).sum() >= 3  # independent: some arms are rare
    assert _suspects(list(items)) == []
    with warnings.catch_warnings():
        warnings.simplefilter("error", SuspiciousLabelWarning)
        fd.LoggedData(x=np.zeros(len(items)), z=np.arange(len(items)) % 2,
                      y=rng.integers(0, 2, len(items)), a=items)
        frame = pd.DataFrame({"x": 0, "z": np.arange(len(items)) % 2, "a": items,
                              "y": rng.integers(0, 2, len(items))})
        fd.LoggedCounts.from_frame(frame, features=["x"], group="z", action="a",
                                   outcome="y")
        rep = audit_report(frame, group="z", action="a", outcome="y", n_boot=50)
    assert rep.meta["action_labels"] == [str(i) for i in range(80)]


@settings(max_examples=60, deadline=None, derandomize=True)
@given(st.lists(st.integers(1, 400), min_size=2, max_size=30),
       st.sampled_from(["int", "float", "text"]))
def test_numbers_are_never_typos_of_numbers(counts, form):
    # however rare, a number among numbers has the form of the others
    values = {"int": lambda k: k, "float": lambda k: k + 0.5, "text": lambda k: str(k)}
    column = _column({values[form](k): c for k, c in enumerate(counts)})
    assert _suspects(column) == []


# ------------------------------------------------------------------ the audit stops
def _typo_frame(n: int = 3000) -> pd.DataFrame:
    rng = np.random.default_rng(1)
    z = rng.choice(["A", "B"], n)
    y = (rng.random(n) < 0.4).astype(int)
    a = np.where(rng.random(n) < 0.8, y, 1 - y)
    df = pd.DataFrame({"race": z, "flag": a, "recid": y.astype(object)})
    df.loc[1234, "recid"] = "yes"
    return df


def test_a_typo_stops_the_python_audit_naming_its_rows_and_both_ways_on():
    df = _typo_frame()
    with pytest.raises(SuspiciousLabelError) as caught:
        audit_report(df, group="race", action="flag", outcome="recid", n_boot=50)
    err = caught.value
    assert isinstance(err, fd.FairdecideError)
    message = str(err)
    for part in ("outcome column 'recid'", "'yes'", "only 1 row (index 1234)",
                 "outcome_labels=[0, 1, 'yes']", "accept_rare_labels=True"):
        assert part in message, (part, message)
    assert err.suspects == [{"column": "outcome column 'recid'", "value": "yes", "rows": 1,
                             "reason": err.suspects[0]["reason"]}]
    assert "--" not in message  # Python's words, not the command line's
    # declared labels without it: the typo is an error; with it, or accepted, it passes
    with pytest.raises(fd.FairdecideError, match=r"'yes' \(index 1234\)"):
        audit_report(df, group="race", action="flag", outcome="recid", n_boot=50,
                     outcome_labels=[0, 1])
    for kwargs in ({"outcome_labels": [0, 1, "yes"]}, {"accept_rare_labels": True}):
        rep = audit_report(df, group="race", action="flag", outcome="recid", n_boot=50,
                           **kwargs)
        assert rep.meta["outcome_labels"] == ["0", "1", "yes"]
    assert any("'yes'" in s and "index 1234" in s for s in rep.notes)  # kept: said so
    assert "'yes'" in rep.summary()


def test_a_typo_stops_the_command_line_on_one_line(tmp_path, capsys):
    path = tmp_path / "log.csv"
    _typo_frame().to_csv(path, index=False)
    base = ["audit", str(path), "--group", "race", "--action", "flag", "--outcome", "recid",
            "--n-boot", "50", "--quiet", "--json", str(tmp_path / "r.json")]
    assert main(base) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and err.startswith("fairdecide: error: ")
    for part in ("outcome column 'recid'", "'yes'", "index 1234",
                 "--outcome-labels 0,1,yes", "--accept-rare-labels"):
        assert part in err, (part, err)
    assert "accept_rare_labels" not in err and not (tmp_path / "r.json").exists()
    # accepted: the audit runs, the value's decisions are no longer the outcomes, and
    # the sentence in place of the values names that cause, not only the options
    assert main([*base, "--accept-rare-labels"]) == 0
    out = capsys.readouterr().out
    skipped = json.loads((tmp_path / "r.json").read_text())["skipped"]
    assert "only the outcome has yes" in skipped and skipped in out
    assert "--utility" in skipped


def test_a_typo_in_both_columns_names_both(tmp_path):
    df = _typo_frame()
    df["flag"] = df["flag"].astype(object)
    df.loc[77, "flag"] = "Yes "
    with pytest.raises(SuspiciousLabelError) as caught:
        audit_report(df, group="race", action="flag", outcome="recid", n_boot=50)
    message = str(caught.value)
    assert "action column 'flag'" in message and "outcome column 'recid'" in message
    assert "index 77" in message and "index 1234" in message
    assert [s["value"] for s in caught.value.suspects] == ["yes", "Yes "]


def test_a_typo_stops_a_private_audit_too():
    # a typo's own label would be released; the error is the data holder's alone
    pytest.importorskip("opendp")
    with pytest.raises(SuspiciousLabelError, match=r"index 1234"):
        audit_report(_typo_frame(), group="race", action="flag", outcome="recid",
                     n_boot=50, dp_epsilon=1.0)
    rep = audit_report(_typo_frame(), group="race", action="flag", outcome="recid",
                       n_boot=50, dp_epsilon=1.0, accept_rare_labels=True)
    kept = [s for s in rep.notes if "'yes'" in s]
    assert kept and not any(ch.isdigit() for ch in kept[0])  # no count is released


def test_compas_with_one_typo_stops_at_both_doors(data_dir, tmp_path, capsys):
    # The case of the issue: one "yes" among COMPAS's 0/1 outcomes.
    compas = next(data_dir.glob("compas-scores-two-years.csv*"))
    df = pd.read_csv(compas)
    df["two_year_recid"] = df["two_year_recid"].astype(object)
    df.loc[4017, "two_year_recid"] = "yes"
    args = {"group": "race", "action": "is_recid", "outcome": "two_year_recid"}
    with pytest.raises(SuspiciousLabelError, match=r"index 4017.*accept_rare_labels=True"):
        audit_report(df, **args, n_boot=50)
    path = tmp_path / "compas.csv"
    df.to_csv(path, index=False)
    cli = ["audit", str(path), "--group", "race", "--action", "is_recid", "--outcome",
           "two_year_recid", "--n-boot", "50", "--quiet"]
    assert main(cli) == 2
    err = capsys.readouterr().err
    assert "index 4017" in err and "--accept-rare-labels" in err
    assert "--outcome-labels 0,1,yes" in err
