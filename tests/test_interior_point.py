"""A belief's whole program by HiGHS's interior point without crossover (the default route
of large beliefs the scenario cuts do not take) against the dual simplex's vertex."""

from __future__ import annotations

from unittest import mock

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fairdecide import Belief, Independence, Separation, optimize_policy
from fairdecide.datasets import make_tabular_problem
from fairdecide.optimize.engine import cases, scenario_cuts, unit_ipm
from fairdecide.optimize.engine.highs_model import FEASIBILITY_TOL, IPM_GAP_TOL
from tests.test_structured import make_belief as perturbed


def no_unit_ipm():
    """The interior point over unit blocks kept out (it takes these beliefs first)."""
    return mock.patch.object(unit_ipm, "analyse", lambda prog: "kept out by the test")


@settings(max_examples=30, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(n_x=st.integers(3, 20), n_z=st.integers(2, 3), n_a=st.integers(3, 4),
       K=st.integers(2, 6), aggregate=st.sampled_from(["mean", "worst"]),
       criterion=st.sampled_from(["independence", "separation", "max"]),
       tradeoff=st.sampled_from(["epsilon", "lam"]),
       eps=st.sampled_from([0.0, 0.01, 0.1]), blind=st.booleans(), seed=st.integers(0, 999))
def test_same_optimum_as_the_vertex(n_x, n_z, n_a, K, aggregate, criterion, tradeoff, eps,
                                    blind, seed):
    """The uncrossed interior point's optimum equals the dual simplex's to the accuracy
    HiGHS certifies for it: its relative primal-dual gap (at most IPM_GAP_TOL) plus the
    feasibility tolerance (FEASIBILITY_TOL, relative) the interior point is held to.
    utility_slack is two programs, the second's optimum as sensitive to the first's
    floor as its trade-off is steep; it is checked against known answers instead
    (tests/test_optimize_known.py, solver "interior")."""
    rng = np.random.RandomState(seed)
    problem, world = make_tabular_problem(n_x, n_z, n_a, 2, random_state=rng)
    belief = Belief(perturbed(problem, world, K, rng), aggregate=aggregate)
    crits = {"independence": [Independence()], "separation": [Separation()],
             "max": [Independence(measure="max")]}[criterion]
    kw = {"epsilon": {"epsilon": eps}, "lam": {"lam": 0.1 + eps},
          }[tradeoff]
    ipm = optimize_policy(problem, belief, crits, group_blind=blind,
                          solver="highs-ipm-no-crossover", **kw)
    vertex = optimize_policy(problem, belief, crits, group_blind=blind, solver="highs-ds",
                             **kw)
    assert ipm.solver == "HiGHS (interior point, no crossover)"
    acc = ipm.stats["interior_point"]
    assert acc["crossover_iterations"] == 0 and acc["gap"] <= 10 * IPM_GAP_TOL
    assert acc["primal_infeasibility"] <= FEASIBILITY_TOL
    bound = (acc["gap"] + FEASIBILITY_TOL) * max(1.0, abs(vertex.objective))
    assert abs(ipm.objective - vertex.objective) <= bound


def test_a_handed_back_belief_takes_the_interior_point():
    """A belief whose program the dual simplex would not take by size, under a tolerance
    the scenario cuts hand back, reaches the interior point with the same optimum."""
    rng = np.random.RandomState(3)
    problem, world = make_tabular_problem(40, 3, 4, 2, random_state=rng)
    belief = Belief(perturbed(problem, world, 4, rng))
    with mock.patch.dict(cases.SIMPLEX_MAX_COLUMNS, {"policy": 0}), \
            mock.patch.object(scenario_cuts, "WORKING_MIN", 0):
        unit = optimize_policy(problem, belief, Separation(), epsilon=0.0)
        with no_unit_ipm():
            res = optimize_policy(problem, belief, Separation(), epsilon=0.0)
    want = optimize_policy(problem, belief, Separation(), epsilon=0.0, solver="highs-ds")
    assert unit.solver == "unit interior point (no crossover)"
    assert unit.objective == pytest.approx(want.objective, abs=1e-8)
    assert res.solver.startswith("HiGHS (interior point, no crossover)")
    assert res.solver_choice["handed_back"] == {"unit-ipm": "kept out by the test"}
    assert res.objective == pytest.approx(want.objective, abs=1e-8)


def test_forced_interior_point_still_crosses_over():
    rng = np.random.RandomState(0)
    problem, world = make_tabular_problem(5, 2, 3, 2, random_state=rng)
    belief = Belief(perturbed(problem, world, 3, rng))
    res = optimize_policy(problem, belief, Independence(), lam=0.2, solver="highs-ipm")
    assert res.solver == "HiGHS (highs-ipm)" and "interior_point" not in res.stats
