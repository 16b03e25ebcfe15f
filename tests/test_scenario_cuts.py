"""Beliefs solved in the space of their scenarios (scenario cuts) against the whole
program handed to HiGHS, and against known answers."""

from __future__ import annotations

import logging
from unittest import mock

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fairdecide import (
    Belief,
    Independence,
    Separation,
    optimize_policy,
)
from fairdecide.datasets import make_tabular_problem
from fairdecide.optimize.engine import scenario_cuts
from fairdecide.optimize.engine.rounds import GAP
from tests.reference import assert_between_chords
from tests.test_structured import make_belief as perturbed

REL = 1e-8


def engine_alone():
    """The master's hand-back by size lifted: these small programs are the engine's to
    solve here, not the whole program's (which a crowded master hands them to)."""
    return mock.patch.object(scenario_cuts, "WORKING_MIN", 10**9)


@settings(max_examples=40, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(n_x=st.integers(3, 25), n_z=st.integers(2, 3), n_a=st.integers(2, 4),
       K=st.integers(2, 6), aggregate=st.sampled_from(["mean", "worst"]),
       criterion=st.sampled_from(["independence", "separation", "both", "max"]),
       tradeoff=st.sampled_from(["epsilon", "lam", "slack"]),
       eps=st.sampled_from([0.0, 0.004, 0.03, 0.2]), blind=st.booleans(),
       intervention=st.booleans(), seed=st.integers(0, 10_000))
def test_same_optimum_as_the_whole_program(n_x, n_z, n_a, K, aggregate, criterion, tradeoff,
                                           eps, blind, intervention, seed):
    """The optimum (the trade-off's objective, recomputed from the decision tables by
    verification) equals the whole program's, solved by HiGHS, on random beliefs."""
    rng = np.random.RandomState(seed)
    problem, world = make_tabular_problem(n_x, n_z, n_a, 2, random_state=rng,
                                          outcome_depends_on_action=intervention)
    belief = Belief(perturbed(problem, world, K, rng), aggregate=aggregate)
    crits = {"independence": [Independence()], "separation": [Separation()],
             "both": [Independence(), Separation()],
             "max": [Independence(measure="max")]}[criterion]
    if intervention:  # separation is not linear there: another route's business
        crits = [Independence(measure=c.measure) for c in crits[:1]]
    kw = {"epsilon": {"epsilon": eps}, "lam": {"lam": 0.1 + eps},
          "slack": {"utility_slack": eps}}[tradeoff]
    with engine_alone():
        cuts = optimize_policy(problem, belief, crits, group_blind=blind,
                               solver="scenarios", **kw)
    whole = optimize_policy(problem, belief, crits, group_blind=blind, solver="highs", **kw)
    assert cuts.solver.startswith("scenario cuts")
    assert not whole.solver.startswith("scenario cuts")
    assert abs(cuts.objective - whole.objective) <= REL * max(1.0, abs(whole.objective))
    cert = cuts.certificates["optimality"]
    assert cert["solver"] == "scenario cuts" and cert["certified"]
    assert 0.0 <= cert["gap"] <= GAP * max(1.0, abs(cert["objective"]))


def test_identical_scenarios_give_the_plug_in_optimum():
    """A belief of K copies of one world is that world: the plug-in program (one
    scenario, another solver) has the same optimum for every trade-off."""
    problem, world = make_tabular_problem(30, 3, 3, 2, random_state=1)
    belief = Belief([world] * 4)
    for kw in ({"epsilon": 0.01}, {"lam": 0.4}, {"utility_slack": 0.02}):
        with engine_alone():
            many = optimize_policy(problem, belief, Separation(), solver="scenarios", **kw)
        one = optimize_policy(problem, world, Separation(), **kw)
        assert many.solver.startswith("scenario cuts")
        assert many.objective == pytest.approx(one.objective, rel=REL, abs=REL)


def test_utility_of_unconstrained_mean_belief_is_each_units_best_action():
    """Without criteria the Bayes-optimal policy takes, in every cell, the action of best
    posterior-mean utility: known in closed form."""
    rng = np.random.RandomState(3)
    problem, world = make_tabular_problem(12, 2, 3, 2, random_state=rng)
    worlds = perturbed(problem, world, 5, rng)
    res = optimize_policy(problem, Belief(worlds))
    assert res.solver.startswith("scenario cuts")
    value = np.mean([w.p_xz[..., None] * (w.p_y @ problem.utility.T) for w in worlds], axis=0)
    assert res.utility == pytest.approx(value.max(axis=-1).sum(), rel=1e-9)


def test_a_crowded_master_hands_the_program_back(caplog):
    """A master that may free no unit hands the program back at once, says why, and the
    whole program's optimum is returned."""
    problem, world = make_tabular_problem(20, 3, 3, 2, random_state=4)
    belief = Belief(perturbed(problem, world, 4, np.random.RandomState(4)))
    whole = optimize_policy(problem, belief, Separation(), epsilon=0.01, solver="highs")
    with mock.patch.multiple(scenario_cuts, WORKING_MIN=0, WORKING_SHARE=0.0), \
            caplog.at_level(logging.INFO, logger=scenario_cuts.__name__):
        back = optimize_policy(problem, belief, Separation(), epsilon=0.01)
    assert not back.solver.startswith("scenario cuts")
    assert "hand the program back" in caplog.text and "crowded" in caplog.text
    assert back.objective == pytest.approx(whole.objective, rel=REL, abs=REL)


def test_kl_and_named_solvers_take_the_whole_program():
    problem, world = make_tabular_problem(6, 2, 2, 2, random_state=0)
    belief = Belief(perturbed(problem, world, 3, np.random.RandomState(0)))
    named = optimize_policy(problem, belief, Independence(), epsilon=0.02, solver="highs")
    kl = optimize_policy(problem, belief, Independence(measure="kl"), epsilon=0.02)
    assert not named.solver.startswith("scenario cuts")
    assert not kl.solver.startswith("scenario cuts")


def test_default_route_takes_bounded_deviations_only():
    """By default a belief under epsilon (and the utility optimum) goes to scenario cuts;
    penalised deviations (lam, utility_slack) stay on the whole program, where they were
    measured faster (benchmarks/results/beliefs.txt)."""
    problem, world = make_tabular_problem(10, 2, 3, 2, random_state=2)
    belief = Belief(perturbed(problem, world, 3, np.random.RandomState(2)))
    assert optimize_policy(problem, belief, Independence(), epsilon=0.02
                           ).solver.startswith("scenario cuts")
    for kw in ({"lam": 0.5}, {"utility_slack": 0.01}):
        res = optimize_policy(problem, belief, Independence(), **kw)
        assert not res.solver.startswith("scenario cuts")


@pytest.mark.slow  # about 5 s: 100 cells, 8 scenarios, four solves
def test_a_tolerance_infeasible_only_numerically_is_met_within_tol():
    """Separation under a belief at epsilon = 0: its minimum is 0 (a constant policy),
    but HiGHS finds the program infeasible within its tolerances (smallest deviation
    about 4e-10). The tolerance is lifted by tol / 4 above the smallest deviation and the
    policy meets epsilon within tol, with at most the utility of epsilon = tol / 2."""
    from fairdecide import DirichletPosterior
    from fairdecide.datasets import sample_logged_data

    problem, world = make_tabular_problem(100, 4, 5, 2, random_state=0)
    data = sample_logged_data(problem, world, 8000, random_state=0)
    post = DirichletPosterior(prior=0.5).fit(data, problem)
    belief = Belief.from_posterior(post, 8, random_state=0)
    # HiGHS on the whole program (the default chain takes this belief to the unit
    # interior point, which meets epsilon = 0 within its own tolerance: checked below)
    res = optimize_policy(problem, belief, Separation(), epsilon=0.0, solver="highs")
    assert res.deviations["separation"] <= 1e-6
    lifted = res.stats["epsilon_solved"][0]
    assert 0.0 < lifted <= 0.5e-6
    looser = optimize_policy(problem, belief, Separation(), epsilon=0.5e-6, solver="highs")
    assert res.utility <= looser.utility + 1e-9
    default = optimize_policy(problem, belief, Separation(), epsilon=0.0)
    assert default.deviations["separation"] <= 1e-6
    assert default.utility <= looser.utility + 1e-9


@settings(max_examples=15, deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(n_x=st.integers(4, 15), n_a=st.integers(2, 3), K=st.integers(2, 5),
       aggregate=st.sampled_from(["mean", "worst"]), eps=st.floats(0.01, 0.2),
       criterion=st.sampled_from(["independence", "separation"]),
       seed=st.integers(0, 10_000))
def test_tolerance_price_is_a_supergradient(n_x, n_a, K, aggregate, eps, criterion, seed):
    """The master's tolerance-row duals price the whole belief: the price lies between
    the chords of U*(eps) to eps +- h, each end solved by HiGHS on the whole program."""
    rng = np.random.RandomState(seed)
    problem, world = make_tabular_problem(n_x, 2, n_a, 2, random_state=rng)
    belief = Belief(perturbed(problem, world, K, rng), aggregate=aggregate)
    crit = Independence() if criterion == "independence" else Separation()
    with engine_alone():
        res = optimize_policy(problem, belief, crit, epsilon=eps, solver="scenarios")
    assert res.solver.startswith("scenario cuts")
    assert_between_chords(res.stats["tolerance_prices"][criterion], res.utility,
                          lambda e: optimize_policy(problem, belief, crit, epsilon=e,
                                                    solver="highs").utility, eps)
