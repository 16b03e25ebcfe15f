"""Progress of long solves: each loop reports every round it runs, in order, and its last
report is the certificate the result carries; nothing is reported without a callback
except to the DEBUG log."""

from __future__ import annotations

import io
import logging

import numpy as np
import pandas as pd
import pytest

import fairdecide as fd
from fairdecide.datasets import make_tabular_problem
from fairdecide.exceptions import FairdecideError
from fairdecide.optimize import (
    Progress,
    ProgressBar,
    outcome_columns,
    reporting,
)
from fairdecide.optimize.engine.rounds import GAP


def _rounds_in_order(seen: list[Progress], solver: str) -> None:
    assert seen and all(isinstance(p, Progress) for p in seen)
    assert {p.solver for p in seen} == {solver}
    assert [p.round for p in seen] == list(range(1, len(seen) + 1))
    assert all(np.isfinite(p.objective) and p.gap >= 0 for p in seen)
    assert np.all(np.diff([p.seconds for p in seen]) >= 0)


def two_scenarios(n_x: int) -> tuple[fd.DecisionProblem, fd.Belief]:
    """A belief of two worlds that share the cells and differ in the outcomes."""
    problem, world = make_tabular_problem(n_x, 2, 3, random_state=3)
    other = make_tabular_problem(n_x, 2, 3, random_state=4)[1]
    return problem, fd.Belief([world, fd.TabularWorld(world.p_xz, other.p_y)])


def lipschitz_population() -> tuple[fd.DecisionProblem, fd.SampleWorld]:
    """40 people in two groups whose outcome rises with the first feature."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 2))
    z = np.arange(40) % 2
    p = 1 / (1 + np.exp(-3 * X[:, 0] - z))
    return fd.DecisionProblem.classification(2), fd.SampleWorld(X, z, np.c_[1 - p, p])


def test_scenario_cuts_report_every_round_and_end_certified():
    problem, belief = two_scenarios(30)
    seen: list[Progress] = []
    res = fd.optimize_policy(problem, belief, fd.Independence(), epsilon=0.02,
                             progress=seen.append)
    assert res.solver.startswith("scenario cuts")
    _rounds_in_order(seen, "scenario cuts")
    cert = res.certificates["optimality"]
    assert len(seen) == cert["rounds"]
    last = seen[-1]
    assert last.gap == cert["gap"] and last.objective == cert["objective"]
    assert last.gap <= GAP * max(1.0, abs(last.objective))
    # the master minimises -U: its last objective is the verified utility
    assert -last.objective == pytest.approx(res.utility, abs=1e-9)


def test_structured_sifting_reports_its_rounds():
    problem, world = make_tabular_problem(2000, 3, 3, random_state=1)
    seen: list[Progress] = []
    res = fd.optimize_policy(problem, world, fd.Independence(), epsilon=0.01,
                             solver="structured", progress=seen.append)
    _rounds_in_order(seen, "structured")
    assert len(seen) == res.certificates["optimality"]["rounds"] > 1
    assert seen[-1].gap <= GAP * max(1.0, abs(seen[-1].objective))
    assert -seen[-1].objective == pytest.approx(res.utility, abs=1e-9)


def test_constraint_generation_reports_the_largest_violation():
    problem, world = lipschitz_population()
    seen: list[Progress] = []
    res = fd.optimize_policy(problem, world, fd.Lipschitz(constant=0.3), epsilon=0.0,
                             progress=seen.append)
    _rounds_in_order(seen, "constraint generation")
    cert = res.certificates["lipschitz"]
    assert len(seen) == cert["rounds"] == res.stats["generation_rounds"]
    # each report's gap is that round's largest violation; the last is the certificate's
    assert seen[-1].gap == pytest.approx(cert["max_violation"], abs=1e-12)
    assert seen[0].gap > seen[-1].gap
    assert seen[-1].details["new_cuts"] == 0


def test_distributed_master_reports_and_pareto_frontier_through_reporting():
    rng = np.random.RandomState(2)
    z = rng.randint(0, 2, 400)
    p1 = 1 / (1 + np.exp(-rng.normal(size=400) - z))
    problem = fd.DecisionProblem.classification(2)
    units = pd.DataFrame(dict(zip(["z", "w", *outcome_columns(problem)],
                                  [z, np.ones(400), 1 - p1, p1], strict=True)))
    seen: list[Progress] = []
    res = fd.optimize_policy(problem, fd.FrameWorld(units, problem), [fd.Independence()],
                             epsilon=0.02, progress=seen.append)
    _rounds_in_order(seen, "distributed")
    assert len(seen) == res.certificates["optimality"]["rounds"]
    assert -seen[-1].objective == pytest.approx(res.objective, abs=1e-12)
    assert seen[-1].details["columns"] == res.stats["distributed"]["columns"]

    # pareto_frontier calls optimize_policy(progress=None) for each tolerance of a large
    # world (structured solver): the enclosing block's callback stays in force
    prob, world = make_tabular_problem(3000, 3, 3, random_state=1)
    frontier_rounds: list[Progress] = []
    with reporting(frontier_rounds.append):
        frontier = fd.pareto_frontier(prob, world, fd.Independence(), [0.05, 0.02])
    assert {p.solver for p in frontier_rounds} == {"structured"}
    assert sum(p.round == 1 for p in frontier_rounds) == len(frontier) == 2
    n_reported = len(frontier_rounds)
    fd.optimize_policy(prob, world, fd.Independence(), epsilon=0.05)
    assert len(frontier_rounds) == n_reported  # the callback is gone once the block ends


def test_silent_without_a_callback_except_the_debug_log(caplog):
    problem, world = make_tabular_problem(10, 2, 2, random_state=0)
    belief = fd.Belief([world, world])
    with caplog.at_level(logging.INFO, logger="fairdecide.optimize.progress"):
        fd.optimize_policy(problem, belief, fd.Independence(), epsilon=0.01)
    assert not caplog.records
    with caplog.at_level(logging.DEBUG, logger="fairdecide.optimize.progress"):
        fd.optimize_policy(problem, belief, fd.Independence(), epsilon=0.01)
    assert any("scenario cuts round 1" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize("bad", [1, "print", [print]])
def test_a_progress_that_is_not_callable_is_named(bad):
    problem, world = make_tabular_problem(5, 2, 2, random_state=0)
    with pytest.raises(FairdecideError, match="progress must be a callable"):
        fd.optimize_policy(problem, world, fd.Independence(), epsilon=0.1, progress=bad)


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _structured_rounds(progress) -> tuple[fd.OptimizeResult, list[Progress]]:
    """A structured solve of several rounds, each round to ``progress`` and kept."""
    problem, world = make_tabular_problem(2000, 3, 3, random_state=1)
    seen: list[Progress] = []

    def both(p: Progress) -> None:
        seen.append(p)
        if progress is not None:
            progress(p)

    res = fd.optimize_policy(problem, world, fd.Independence(), epsilon=0.01,
                             solver="structured", progress=both)
    return res, seen


def test_progress_bar_writes_a_line_a_round_to_a_log():
    out = io.StringIO()
    bar = ProgressBar(out, interval=0.0)
    res, seen = _structured_rounds(bar)
    bar.close()
    lines = out.getvalue().splitlines()
    assert len(lines) == len(seen) == res.certificates["optimality"]["rounds"] > 1
    for k, (line, p) in enumerate(zip(lines, seen, strict=True), start=1):
        assert line.startswith(f"structured: round {k}, gap {p.gap:.2e}, ")
    assert out.getvalue().endswith("\n")


def test_progress_bar_throttles_a_log_and_close_writes_the_last_round():
    out = io.StringIO()
    bar = ProgressBar(out, interval=1e9)
    _, seen = _structured_rounds(bar)
    assert out.getvalue().splitlines() == [ProgressBar.line(seen[0])]
    bar.close()
    assert out.getvalue().splitlines() == [ProgressBar.line(seen[0]),
                                           ProgressBar.line(seen[-1])]
    bar.close()  # closing twice writes nothing more
    assert len(out.getvalue().splitlines()) == 2


def test_progress_bar_rewrites_one_line_on_a_terminal():
    out = _Terminal()
    bar = ProgressBar(out)
    _, seen = _structured_rounds(bar)
    text = out.getvalue()
    assert text.count("\r") == len(seen) and "\n" not in text
    bar.close()
    text = out.getvalue()
    assert text.endswith("\n")
    assert text.rsplit("\r", 1)[-1].rstrip() == ProgressBar.line(seen[-1])


def test_progress_true_shows_the_bar_on_stderr(capsys):
    problem, world = make_tabular_problem(2000, 3, 3, random_state=1)
    res = fd.optimize_policy(problem, world, fd.Independence(), epsilon=0.01,
                             solver="structured", progress=True)
    err = capsys.readouterr().err.splitlines()
    rounds = res.certificates["optimality"]["rounds"]
    assert err and err[-1].startswith(f"structured: round {rounds}, gap ")
    # False is silent, like None
    fd.optimize_policy(problem, world, fd.Independence(), epsilon=0.01,
                       solver="structured", progress=False)
    assert "round" not in capsys.readouterr().err


@pytest.mark.parametrize("bad", [-1.0, "often", np.nan])
def test_progress_bar_interval_is_checked(bad):
    with pytest.raises(FairdecideError, match="interval must be"):
        ProgressBar(io.StringIO(), interval=bad)
