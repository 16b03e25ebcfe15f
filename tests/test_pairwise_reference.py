"""Pairwise group comparisons (``reference="pairwise"``): every two groups' conditionals
compared with each other, Fairlearn's difference metrics when ``measure="max"``.

The deviation is checked against its definition written in tests/reference.py, the
optimum against an independent dense LP over the policy table, and the gradient terms
(tests/test_gradient_route.py) and program rows (tests/test_criterion_contract.py) by
their own suites, where these criteria are among the parametrised cases.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fairdecide as fd
from fairdecide.criteria.base import as_criteria
from fairdecide.datasets import make_tabular_problem
from fairdecide.exceptions import FairdecideError
from tests.reference import assert_recomputed, reference_solve


def _rates_by_hand(world, pi, weights):
    """P(a = 1 | c, z) per group from cell weights w(x, z) of the conditioning event c."""
    return (weights * pi[:, :, 1]).sum(axis=0) / weights.sum(axis=0)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), n_z=st.integers(2, 4))
def test_the_differences_are_the_largest_gaps_between_two_groups_rates(seed, n_z):
    """Demographic parity and equalized odds differences, from the rates of each group
    computed here: max over pairs (and outcomes) of |rate_z - rate_z'|."""
    problem, world = make_tabular_problem(5, n_z, 2, 2, random_state=seed)
    pi = np.random.default_rng(seed).dirichlet([1.0, 1.0], size=(5, n_z))
    policy = fd.TabularPolicy(pi)
    dp_rates = _rates_by_hand(world, pi, world.p_xz)
    dp = as_criteria("demographic_parity_difference")[0].deviation(policy, world, problem)
    assert dp == pytest.approx(dp_rates.max() - dp_rates.min(), abs=1e-12)
    gaps = []
    for y in (0, 1):
        r = _rates_by_hand(world, pi, world.p_xz * world.p_y[:, :, y])
        gaps.append(r.max() - r.min())
    eo = as_criteria("equalized_odds_difference")[0].deviation(policy, world, problem)
    assert eo == pytest.approx(max(gaps), abs=1e-12)
    # tv sums every pair's gap over both actions: twice the sum of the pairs' gaps
    tv = fd.Independence(reference="pairwise").deviation(policy, world, problem)
    pair_gaps = np.abs(dp_rates[:, None] - dp_rates[None, :])[np.triu_indices(n_z, 1)]
    assert tv == pytest.approx(2 * pair_gaps.sum(), abs=1e-12)


@pytest.mark.parametrize("kind", ["independence", "separation"])
@pytest.mark.parametrize("measure", ["tv", "max"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_optimum_is_the_independent_lps(kind, measure, seed):
    problem, world = make_tabular_problem(4, 3, 2, 2, random_state=seed)
    preset = fd.Independence if kind == "independence" else fd.Separation
    crit = preset(measure=measure, reference="pairwise")
    free = fd.optimize_policy(problem, world)
    eps = 0.4 * crit.deviation(free.policy, world, problem)
    res = fd.optimize_policy(problem, world, crit, epsilon=eps)
    want, _ = reference_solve(problem, world, kind, measure=measure, epsilon=eps,
                              pairwise=True)
    assert res.status == "optimal"
    assert res.utility == pytest.approx(want, abs=1e-7)
    assert_recomputed(res, problem, world, crit, epsilon=eps)


def test_two_groups_independence_pairwise_max_is_half_the_pooled_tv():
    """With two groups, sum_z sum_a |P(a|z) - P(a)| = 2 |P(1|0) - P(1|1)| (the pooled
    rate lies between the two), so the pooled TV is twice the pairwise max."""
    problem, world = make_tabular_problem(6, 2, 2, 2, random_state=3)
    pi = fd.TabularPolicy(np.random.default_rng(3).dirichlet([1, 1], size=(6, 2)))
    pooled = fd.Independence().deviation(pi, world, problem)
    pair = fd.Independence(measure="max", reference="pairwise").deviation(pi, world, problem)
    assert pooled == pytest.approx(2 * pair, abs=1e-12)


def test_the_softmax_family_meets_a_pairwise_tolerance():
    rng = np.random.RandomState(0)
    n = 400
    z = rng.randint(3, size=n)
    X = np.c_[rng.normal(size=n) + 0.7 * z, rng.normal(size=n)]
    p1 = 1 / (1 + np.exp(-X[:, 0]))
    world = fd.SampleWorld(X, z, np.c_[1 - p1, p1])
    problem = fd.DecisionProblem(np.eye(2), outcome_depends_on_action=False)
    crit = as_criteria("demographic_parity_difference")[0]
    res = fd.optimize_policy(problem, world, crit, epsilon=0.05,
                             policy=fd.LinearSoftmaxPolicy(include_z=True), random_state=0)
    assert res.status in ("optimal", "locally optimal")
    assert_recomputed(res, problem, world, crit, epsilon=0.05)


def test_breakdown_lists_each_pair_of_groups():
    problem, world = make_tabular_problem(3, 3, 2, 2, random_state=1)
    pi = fd.TabularPolicy(np.random.default_rng(1).dirichlet([1, 1], size=(3, 3)))
    crit = fd.Separation(measure="max", reference="pairwise")
    table = crit.breakdown(pi, world, problem)
    assert len(table) == 2 * 3 * 2  # outcomes x pairs x actions
    assert {"versus", "p_versus"} <= set(table.columns)
    assert "p_pooled" not in table.columns
    assert np.abs(table["difference"]).max() == pytest.approx(
        crit.deviation(pi, world, problem), abs=1e-12)
    np.testing.assert_allclose(table["difference"], table["p_group"] - table["p_versus"])


@pytest.mark.parametrize("kwargs", [dict(measure="kl"), dict(weighting="group")])
def test_pairwise_refuses_what_it_cannot_weigh(kwargs):
    with pytest.raises(FairdecideError, match="reference='pairwise'"):
        fd.Independence(reference="pairwise", **kwargs)
    with pytest.raises(FairdecideError, match="reference"):
        fd.Independence(reference="others")


def test_named_differences_and_their_labels():
    dp, eo = as_criteria(["demographic_parity_difference", "equalized_odds_difference"])
    assert dp == fd.Independence(measure="max", reference="pairwise",
                                 name="demographic_parity_difference")
    assert eo.label == "equalized_odds_difference"
    assert "reference='pairwise'" in repr(eo)
