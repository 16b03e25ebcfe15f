"""The master loops' one stopping rule and certificate (fairdecide.optimize.engine.rounds).

The rule is checked on its own; the certificate is checked against the optimum of the
whole program found by HiGHS (another solver, on the whole program): in every round of
every column loop, the master's objective minus the optimum is at most the round's
duality gap (the Lagrangian bound: objective - gap <= optimum), and the last round's
objective is the optimum."""

from __future__ import annotations

import pytest

import fairdecide as fd
from fairdecide.datasets import make_tabular_problem
from fairdecide.optimize.engine.highs_model import FEASIBILITY_TOL
from fairdecide.optimize.engine.rounds import GAP, Rounds
from fairdecide.optimize.progress import Progress
from tests.test_distributed import PRED, in_memory, population
from tests.test_progress import lipschitz_population, two_scenarios


def test_the_rule_certifies_below_the_bound_and_only_without_violated_cuts():
    rounds = Rounds("test", max_rounds=4, scale=10.0)
    assert not rounds.next(objective=-20.0, gap=GAP * 20.0 * 1.5)   # above GAP |obj|
    assert rounds.stop_reason() is None
    assert not rounds.next(objective=-20.0, gap=0.0, violated=True)  # a cut violated
    assert rounds.next(objective=-20.0, gap=GAP * 20.0 * 0.5)
    cert = rounds.certificate
    # in the program's units: the loop's objective divided by its scale
    assert cert.certified and cert.rounds == 3 and cert.solver == "test"
    assert cert.objective == -2.0 and cert.gap == pytest.approx(GAP * 1.0)
    assert cert.bound == pytest.approx(GAP * 2.0)
    # a unit joins the master above the loop's bound shared over the units
    assert rounds.unit_threshold(4) == pytest.approx(GAP * 20.0 / 4)
    # below |objective| 1 the bound is absolute
    assert not rounds.next(objective=0.5, gap=1.5 * GAP)
    assert "not certified after 4 rounds" in rounds.stop_reason()


def test_a_time_limit_stops_the_loop_uncertified():
    rounds = Rounds("test", time_limit=0.0)
    rounds.next(objective=1.0, gap=1.0)
    assert "time limit" in rounds.stop_reason()
    assert not rounds.certificate.certified


def _every_round_bounds_the_optimum(seen: list[Progress], optimum: float) -> None:
    # HiGHS's optimum is exact to its feasibility tolerance (relative to the objective)
    tol = 10 * FEASIBILITY_TOL * max(1.0, abs(optimum))
    assert seen
    for p in seen:
        assert p.objective - optimum <= p.gap + tol, (p.round, p.objective, p.gap)
    assert seen[-1].objective == pytest.approx(optimum, abs=tol)


def test_structured_rounds_and_certificate_bound_the_optimum():
    problem, world = make_tabular_problem(2000, 3, 3, random_state=1)
    seen: list[Progress] = []
    res = fd.optimize_policy(problem, world, fd.Independence(), epsilon=0.01,
                             solver="structured", progress=seen.append)
    whole = fd.optimize_policy(problem, world, fd.Independence(), epsilon=0.01,
                               solver="highs")
    assert len(seen) > 1  # sifting took rounds, each of them checked
    _every_round_bounds_the_optimum(seen, -whole.utility)
    cert = res.certificates["optimality"]
    assert cert["certified"] and cert["solver"] == "structured"
    assert cert["objective"] == seen[-1].objective and cert["rounds"] == len(seen)
    assert "optimality    : certified by structured" in res.summary()


def test_scenario_cut_rounds_bound_the_optimum_of_the_belief():
    problem, belief = two_scenarios(40)
    seen: list[Progress] = []
    res = fd.optimize_policy(problem, belief, fd.Independence(), epsilon=0.02,
                             progress=seen.append)
    whole = fd.optimize_policy(problem, belief, fd.Independence(), epsilon=0.02,
                               solver="highs")
    assert res.solver.startswith("scenario cuts")
    _every_round_bounds_the_optimum(seen, -whole.utility)
    assert res.certificates["optimality"]["certified"]


def test_distributed_rounds_bound_the_optimum_of_the_same_population():
    units, z, w, p = population(600, 3, 5, PRED)
    seen: list[Progress] = []
    res = fd.optimize_policy(PRED, fd.FrameWorld(units, PRED), [fd.Independence()],
                             epsilon=0.02, progress=seen.append)
    whole = in_memory(PRED, z, w, p, 3, fd.Independence(), epsilon=0.02, solver="highs")
    _every_round_bounds_the_optimum(seen, -whole.utility)
    cert = res.certificates["optimality"]
    assert cert["certified"] and cert["rounds"] == len(seen)


def test_constraint_generation_certifies_by_its_separation_oracle():
    problem, world = lipschitz_population()
    res = fd.optimize_policy(problem, world, fd.Lipschitz(constant=0.3), epsilon=0.0)
    cert, pairs = res.certificates["optimality"], res.certificates["lipschitz"]
    assert cert["solver"] == "constraint generation" and cert["certified"]
    assert cert["gap"] == 0.0 and cert["rounds"] == pairs["rounds"]
    assert cert["max_violation"] == pytest.approx(pairs["max_violation"], abs=1e-12)
    # the master's objective is the verified utility (minimised: its negation)
    assert -cert["objective"] == pytest.approx(res.utility, abs=1e-9)
