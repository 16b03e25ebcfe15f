"""The warm Pareto frontier (fairdecide.optimize.routes.warm_frontier) against each tolerance
solved alone by optimize_policy: the same verified optima, the route actually taken, the
tolerances' order kept, and the cold route wherever the warm one does not apply."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fairdecide import Belief, Independence, Separation, optimize_policy
from fairdecide.datasets import make_bail_problem, make_tabular_problem
from fairdecide.optimize import pareto_frontier
from tests.test_structured import make_belief as perturbed

# Both sides are optima of the same linear program, each verified from its decision
# tables at tol = 1e-6; the solvers' own feasibility tolerances are 1e-9 (warm) and
# 1e-7 (scipy), so the utilities may differ by about that times the largest utility.
AGREE = 1e-6


@settings(max_examples=30, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(n_x=st.integers(3, 30), n_z=st.integers(2, 3), n_a=st.integers(2, 3),
       criterion=st.sampled_from(["independence", "separation"]),
       world=st.sampled_from(["world", "mean", "worst"]), blind=st.booleans(),
       shares=st.lists(st.floats(0.0, 1.2), min_size=2, max_size=6),
       seed=st.integers(0, 10_000))
def test_warm_frontier_equals_each_tolerance_alone(n_x, n_z, n_a, criterion, world, blind,
                                                   shares, seed):
    problem, w = make_tabular_problem(n_x, n_z, 3, n_a, random_state=seed)
    if world != "world":
        w = Belief(perturbed(problem, w, 3, np.random.default_rng(seed)), aggregate=world)
    crit = Independence() if criterion == "independence" else Separation()
    top = optimize_policy(problem, w, crit, lam=0.0, group_blind=blind).deviations[crit.label]
    eps = [s * top for s in shares]  # unsorted, maybe repeated, beyond the top
    front = pareto_frontier(problem, w, crit, eps, group_blind=blind)
    assert front["epsilon"].tolist() == pytest.approx(eps)  # the order given
    for e, u, f in zip(eps, front["utility"], front["deviation"], strict=True):
        alone = optimize_policy(problem, w, crit, epsilon=e, group_blind=blind)
        assert abs(u - alone.utility) <= AGREE * max(1.0, abs(alone.utility))
        assert f <= e + 1e-6
    # the warm route was taken: every point after the first solve starts from a basis,
    # or was handed to optimize_policy (a point HiGHS alone did not solve)
    warm = front["solver"].str.contains("warm from epsilon")
    assert warm.sum() >= len(eps) - 1 - (~front["solver"].str.startswith("HiGHS")).sum()


def test_warm_frontier_by_hand():
    # One cell, two equal groups, P(y = 1 | z) = 0.8, 0.3, accuracy: the best utility
    # under independence eps is 0.55 + 0.1 min(eps, 2) (tests/test_optimize_known.py).
    from tests.test_optimize_known import PROBLEM, WORLD

    eps = [2.0, 0.0, 1.0, 0.3, 1.9]
    front = pareto_frontier(PROBLEM, WORLD, Independence(), eps)
    np.testing.assert_allclose(front["utility"], [0.55 + 0.1 * min(e, 2.0) for e in eps],
                               atol=1e-9)
    assert front["solver"].str.contains("warm").sum() == len(eps) - 1


@pytest.mark.parametrize("kwargs", [{"solver": "CLARABEL"}, {"max_iter": 50}])
def test_other_settings_solve_each_tolerance_alone(kwargs):
    problem, world = make_bail_problem()
    front = pareto_frontier(problem, world, Independence(), n_points=3, **kwargs)
    assert not front["solver"].str.contains("warm").any()
    for e, u in zip(front["epsilon"], front["utility"], strict=True):
        alone = optimize_policy(problem, world, Independence(), epsilon=e, **kwargs)
        assert u == pytest.approx(alone.utility, abs=1e-6)
