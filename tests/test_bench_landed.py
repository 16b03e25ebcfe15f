"""benchmarks/_landed.py: a fresh process imports the tree it is given, and a case on two
trees alternates and is summarised by medians (the helpers every ``--landed`` benchmark
uses)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from _landed import TREE, call, fresh, row, versus

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


def test_versus_runs_a_long_case_once():
    """A first run longer than ``long`` on either tree: one run per tree, not repeats."""
    calls = []

    def run(tree):
        calls.append(tree)
        return {"seconds": 12.0 if tree == TREE else 1.0, "value": 0.0}

    got = versus(Path("/landed"), run, 5, long=10.0)
    assert len(calls) == 2 and got["repeats"] == 1
    assert len(versus(Path("/landed"), run, 3)["landed"]) and len(calls) == 2 + 6
