"""benchmarks/_landed.py: a fresh process imports the tree it is given, and a case on two
trees alternates and is summarised by medians (the helpers every ``--landed`` benchmark
uses)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from _landed import TREE, call, compare, fresh, row, runs, versus

PRINT_PACKAGE = ("import json, fairdecide; "
                 "print(json.dumps([fairdecide.MARK, fairdecide.__file__]))")


def test_fresh_imports_the_given_tree_before_the_installed_package(tmp_path):
    """A stand-in package in a temporary tree wins over the editable install of this one
    (a landed tree is found only through PYTHONPATH)."""
    (tmp_path / "fairdecide").mkdir()
    (tmp_path / "fairdecide" / "__init__.py").write_text("MARK = 'stand-in'\n")
    mark, file = fresh(tmp_path, PRINT_PACKAGE)
    assert mark == "stand-in"
    assert Path(file).resolve() == (tmp_path / "fairdecide" / "__init__.py").resolve()


def test_call_refuses_a_package_from_another_tree(tmp_path):
    """A tree without the package falls through to the installed one: call says so
    instead of timing the wrong code."""
    with pytest.raises(SystemExit, match="imported"):
        call(tmp_path, "builtins", "dict")  # {} with the package's file


def test_versus_alternates_and_takes_medians():
    """Seconds 1, 5, 3 on the landed tree and 2, 2, 9 on this one: medians 3 and 2,
    ratio 2/3; the calls alternate landed, this; the last values are compared."""
    old = Path("/landed")
    seconds = {old: iter([1.0, 5.0, 3.0]), TREE: iter([2.0, 2.0, 9.0])}
    order = []

    def run(tree):
        order.append(tree)
        return {"seconds": next(seconds[tree]), "value": 1.0 + (1e-5 if tree == TREE else 0)}

    got = versus(old, run, 3)
    assert order == [old, TREE] * 3
    assert (got["landed_s"], got["this_s"]) == (3.0, 2.0)
    assert got["ratio"] == pytest.approx(2 / 3)
    assert not got["agree"]  # 1e-5 apart, beyond the default 1e-6
    assert versus(old, lambda t: {"seconds": 1.0, "value": 1.0 + 1e-7}, 1)["agree"]
    assert got["repeats"] == 3
    assert "| 3 | no (1 landed, 1.00001 this) |" in row("case", got)
    both = {**got, "landed": {**got["landed"], "solver": "a"}, "this": {**got["this"],
                                                                         "solver": "b"}}
    assert row("case", both, key="solver").endswith("| this: b; landed: a |")


def test_versus_runs_a_long_case_once():
    """A first run longer than ``long`` on either tree: one run per tree, not repeats."""
    calls = []

    def run(tree):
        calls.append(tree)
        return {"seconds": 12.0 if tree == TREE else 1.0, "value": 0.0}

    got = versus(Path("/landed"), run, 5, long=10.0)
    assert len(calls) == 2 and got["repeats"] == 1
    assert len(versus(Path("/landed"), run, 3)["landed"]) and len(calls) == 2 + 6


def test_a_run_past_its_timeout_is_stopped_and_reported_as_longer(tmp_path):
    """A fresh process past its timeout is killed; the row says the landed run took more
    than the timeout, bounds the ratio by it, and compares no values."""
    assert fresh(tmp_path, "import time; time.sleep(30)", timeout=0.5)["stopped"] == 0.5
    got = versus(Path("/landed"), lambda tree: (
        {"seconds": 2.0, "value": 1.0, "solver": "b"} if tree == TREE else
        {"seconds": float("inf"), "value": float("nan"), "stopped": 100.0}), 3, long=10.0)
    assert got["repeats"] == 1 and got["agree"] is None
    assert row("case", got, key="solver") == (
        "| case | > 100 | 2.000 | < 0.02 | 1 | - (a run stopped) | this: b; landed: stopped "
        "after 100 s |")


def test_the_tables_runner_sentence_states_what_compare_does():
    """Every ``*_vs_landed.txt`` note says how its cases ran through runs(): the number
    of seconds after which compare runs a case once, and the relative agreement versus
    checks, read here from their signatures."""
    import inspect

    long = inspect.signature(compare).parameters["long"].default
    rel = inspect.signature(versus).parameters["rel"].default
    said = runs(5, "the objectives")
    assert said.startswith("median of up to 5 runs per tree")
    assert f"first run took over {long:g} s" in said
    assert said.endswith(f"values: the objectives (relative {rel:.0e})".replace("e-0", "e-"))
