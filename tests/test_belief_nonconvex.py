"""Beliefs of several scenarios with criteria that are not convex in the policy
(sufficiency; separation when the outcome depends on the action): successive
linearisation over all scenarios at once, checked against brute force over a grid."""

import functools

import numpy as np
import pytest

from fairdecide import (
    Belief,
    DirichletPosterior,
    Separation,
    Sufficiency,
    evaluate_under_belief,
    optimize_policy,
)
from fairdecide.datasets import make_bail_problem, make_tabular_problem, sample_logged_data
from tests.reference import assert_recomputed
from tests.test_nonlinear import brute_force, grid_policies


def scenarios(seed, k=3):
    """A small intervention and k posterior draws of its world."""
    problem, world = make_tabular_problem(2, 2, 2, 2, outcome_depends_on_action=True,
                                          random_state=seed)
    data = sample_logged_data(problem, world, 400, random_state=seed)
    post = DirichletPosterior(prior=1.0).fit(data, problem)
    return problem, post.sample(k, random_state=seed)


def grid(problem, worlds, kind):
    """Utility and group-weighted TV deviation of every grid policy in every scenario:
    arrays of shape (K, G), computed independently of the library."""
    out = [brute_force(problem, w, kind, "group") for w in worlds]
    return np.array([u for u, _ in out]), np.array([f for _, f in out])


@functools.cache
def scenario_grid(seed, kind):
    """grid() over scenarios(seed), computed once per (seed, kind) and read-only: the
    separation grid is shared by the mean and mixture tests, the sufficiency grid by the
    maximin and sufficiency tests."""
    problem, worlds = scenarios(seed)
    U, F = grid(problem, worlds, kind)
    U.setflags(write=False)
    F.setflags(write=False)
    return U, F


def min_group_share(problem, worlds):
    """For every grid policy, the smallest share P(z | a) of any group among the
    recipients of any action, over the scenarios."""
    pis = grid_policies(4).reshape(-1, 2, 2, 2)
    shares = []
    for w in worlds:
        J = np.einsum("xz,gxza->gza", w.p_xz, pis)
        shares.append(J / np.maximum(J.sum(axis=1, keepdims=True), 1e-300))
    return np.min(np.array(shares), axis=(0, 2, 3))


SEEDS = [0, pytest.param(1, marks=pytest.mark.slow), pytest.param(2, marks=pytest.mark.slow)]


@pytest.mark.parametrize("seed", SEEDS)
def test_bayes_mean_separation_beats_grid(seed):
    problem, worlds = scenarios(seed)
    crit = Separation(weighting="group")
    U, F = scenario_grid(seed, "separation")
    eps = 0.05
    belief = Belief(tuple(worlds))
    res = optimize_policy(problem, belief, crit, epsilon=eps)
    assert res.status == "locally optimal"
    # the scenario mean of the utility and of the deviation, recomputed by hand, and the
    # mean deviation within eps
    assert_recomputed(res, problem, belief, crit, epsilon=eps)
    ok = F.mean(axis=0) <= eps
    assert res.utility >= U.mean(axis=0)[ok].max() - 1e-6


@pytest.mark.slow  # 8 s: keeps the default run under three minutes (issue 9 added ~50 s)
def test_bayes_mean_sufficiency_beats_grid_without_near_segregation():
    """Sufficiency can be met (nearly) vacuously by (nearly) segregating groups across
    actions, which the local search does not seek (documented). Against every grid policy
    that gives each group at least 5% of each action's recipients in every scenario, the
    result must be at least as good."""
    crit = Sufficiency(weighting="group")
    eps, compared = 0.05, 0
    for seed in range(3):
        problem, worlds = scenarios(seed)
        U, F = scenario_grid(seed, "sufficiency")
        belief = Belief(tuple(worlds))
        res = optimize_policy(problem, belief, crit, epsilon=eps)
        assert_recomputed(res, problem, belief, crit, epsilon=eps)
        ok = (F.mean(axis=0) <= eps) & (min_group_share(problem, worlds) >= 0.05)
        if ok.any():
            compared += 1
            assert res.utility >= U.mean(axis=0)[ok].max() - 1e-6
    assert compared >= 1


@pytest.mark.parametrize("seed", SEEDS)
def test_maximin_epsilon_beats_grid(seed):
    problem, worlds = scenarios(seed)
    crit = Sufficiency(weighting="group")
    U, F = scenario_grid(seed, "sufficiency")
    eps = 0.05
    belief = Belief(tuple(worlds), aggregate="worst")
    res = optimize_policy(problem, belief, crit, epsilon=eps)
    # the worst scenario's utility and deviation, recomputed by hand in each scenario;
    # the worst deviation within eps
    assert_recomputed(res, problem, belief, crit, epsilon=eps)
    ok = F.max(axis=0) <= eps
    assert res.utility >= U.min(axis=0)[ok].max() - 1e-6


@pytest.mark.parametrize("seed", SEEDS[:2])
def test_bayes_mixture_beats_grid(seed):
    problem, worlds = scenarios(seed)
    lam = 0.3
    U, F = scenario_grid(seed, "separation")
    res = optimize_policy(problem, Belief(tuple(worlds)), Separation(weighting="group"),
                          lam=lam)
    best = ((1 - lam) * U - lam * F).mean(axis=0).max()
    assert res.objective >= best - 1e-6


def test_identical_scenarios_give_the_plug_in_answer():
    problem, world = make_bail_problem()
    for crit in (Sufficiency(), Separation()):
        one = optimize_policy(problem, world, crit, epsilon=0.1)
        two = optimize_policy(problem, Belief((world, world)), crit, epsilon=0.1)
        assert two.utility == pytest.approx(one.utility, abs=1e-6)


@pytest.mark.slow  # 8 s, as above
def test_readme_bayesian_separation_on_bail():
    """README's Bayesian example: separation in an intervention, Bayes and maximin."""
    problem, world = make_bail_problem()
    data = sample_logged_data(problem, world, 2000, random_state=0)
    posterior = DirichletPosterior(prior=0.5).fit(data, problem)
    belief = Belief.from_posterior(posterior, 8, random_state=0)
    bayes = optimize_policy(problem, belief, Separation(), lam=0.3)
    worst = Belief.highest_density_draws(posterior, delta=0.25, n_scenarios=8, random_state=0)
    maximin = optimize_policy(problem, worst, Separation(), lam=0.3)
    # utility and separation recomputed by hand in each scenario: mean, and worst case
    u, f = assert_recomputed(bayes, problem, belief, Separation())
    assert_recomputed(maximin, problem, worst, Separation())
    # The mean objective, recomputed scenario by scenario, is what was optimised, and it
    # is at least that of the plug-in optimum evaluated under the same belief.
    ev = evaluate_under_belief(problem, belief, bayes.policy, Separation()).values
    mean_obj = float((0.7 * ev["utility"] - 0.3 * ev[Separation().label]).mean())
    assert bayes.objective == pytest.approx(0.7 * u - 0.3 * f[Separation().label])
    assert mean_obj == pytest.approx(0.7 * u - 0.3 * f[Separation().label])
    plug = optimize_policy(problem, posterior.mean_world(), Separation(), lam=0.3)
    ev_plug = evaluate_under_belief(problem, belief, plug.policy, Separation()).values
    assert mean_obj >= float((0.7 * ev_plug["utility"] - 0.3 * ev_plug[Separation().label]).mean()
                             ) - 1e-6
