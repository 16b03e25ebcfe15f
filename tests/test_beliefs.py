"""Unknown theta: posteriors, beliefs, and policies optimised under them."""

import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import fairdecide as fd
from fairdecide import (
    Belief,
    BootstrapPosterior,
    DecisionProblem,
    DirichletPosterior,
    FairdecideError,
    Independence,
    LoggedData,
    Separation,
    TabularPolicy,
    TabularWorld,
    evaluate_under_belief,
    optimize_policy,
)
from fairdecide.datasets import make_bail_problem, make_tabular_problem, sample_logged_data
from fairdecide.uncertainty.beliefs import cvar

IND = fd.Independence().label  # the criterion's name with its measure
SEP = fd.Separation().label  # the criterion's name with its measure


def small_data(seed=0, n=400, dep=False):
    problem, world = make_tabular_problem(4, 2, 2, 2, outcome_depends_on_action=dep,
                                          random_state=seed)
    return problem, world, sample_logged_data(problem, world, n, random_state=seed)


# ---------------------------------------------------------------------- posterior
def test_dirichlet_moments_match_analytic():
    problem, _, data = small_data()
    post = DirichletPosterior(prior=0.5).fit(data, problem)
    draws = post.sample_parameters(20_000, random_state=1)
    for key in ("p_xz", "p_y"):
        alpha = post.counts_[key] + 0.5
        axes = (0, 1) if key == "p_xz" else (-1,)
        a0 = alpha.sum(axis=axes, keepdims=True)
        mean = alpha / a0
        var = alpha * (a0 - alpha) / (a0**2 * (a0 + 1))
        stack = np.stack([d[key] for d in draws])
        se = np.sqrt(var / len(draws))
        assert np.all(np.abs(stack.mean(axis=0) - mean) <= 5 * se)
        np.testing.assert_allclose(stack.var(axis=0), var, rtol=0.1)


def test_dirichlet_sampling_is_reproducible():
    problem, _, data = small_data()
    post = DirichletPosterior().fit(data, problem)
    a = post.sample(3, random_state=7)
    b = post.sample(3, random_state=7)
    for wa, wb in zip(a, b, strict=True):
        np.testing.assert_array_equal(wa.p_xz, wb.p_xz)
        np.testing.assert_array_equal(wa.p_y, wb.p_y)


def test_mean_world_is_smoothed_mle():
    problem, _, data = small_data()
    post = DirichletPosterior(prior=0.5).fit(data, problem)
    mle = TabularWorld.from_data(data, problem, smoothing=0.5)
    np.testing.assert_allclose(post.mean_world().p_xz, mle.p_xz)
    np.testing.assert_allclose(post.mean_world().p_y, mle.p_y)


def test_papers_factorization_by_hand():
    problem = DecisionProblem.classification(2)
    data = LoggedData(x=[0, 0, 0, 1], z=[0, 1, 1, 0], y=[1, 1, 0, 0])
    post = DirichletPosterior(prior=1.0, factorization="papers").fit(data, problem)
    w = post.mean_world()
    # P(x) = (4, 2)/6; P(y | x=0) = (2, 3)/5; P(z | x=0, y=1) = (2, 2)/4, y=0: (1, 2)/3
    p_x0 = 4 / 6
    want_00 = p_x0 * (2 / 5 * 1 / 3 + 3 / 5 * 2 / 4)  # P(x=0, z=0)
    assert w.p_xz[0, 0] == pytest.approx(want_00)
    p_y1 = p_x0 * 3 / 5 * 2 / 4 / want_00
    assert w.p_y[0, 0, 1] == pytest.approx(p_y1)
    with pytest.raises(FairdecideError, match="prediction problems"):
        DirichletPosterior(factorization="papers").fit(
            data, DecisionProblem(np.eye(2), outcome_depends_on_action=True))


def test_log_density_prefers_the_mode():
    problem, _, data = small_data()
    post = DirichletPosterior(prior=2.0).fit(data, problem)
    mean = post.posterior_mean()
    far = {k: np.full_like(v, 1.0) / v.shape[-1] if k == "p_y" else
           np.full_like(v, 1.0 / v.size) for k, v in mean.items()}
    assert post.log_density(mean) > post.log_density(far)


def test_bootstrap_worlds():
    problem, _, data = small_data(n=2000)
    boot = BootstrapPosterior(smoothing=0.5).fit(data, problem)
    K = 1000
    worlds = boot.sample(K, random_state=0)
    assert len(worlds) == K
    spread = np.std([w.p_xz for w in worlds], axis=0, ddof=1)
    # A resample's P(x, z) is (c + 0.5) / (n + 0.5 C) over the C cells, its count c
    # binomial(n, p) with p the data's cell frequency: its standard deviation is
    # sigma = sqrt(n p (1 - p)) / (n + 0.5 C). The sample standard deviation of K
    # resamples misses sigma by about sigma / sqrt(2 (K - 1)) (one standard error; the
    # counts are near normal, n p > 100): allow 4 of them, about 9% of sigma here.
    n, C = data.n, data.n_x * data.n_z
    p = np.zeros((data.n_x, data.n_z))
    np.add.at(p, (data.x, data.z), 1.0 / n)
    sigma = np.sqrt(n * p * (1 - p)) / (n + 0.5 * C)
    assert np.all(n * p > 100)
    np.testing.assert_array_less(np.abs(spread - sigma), 4 * sigma / np.sqrt(2 * (K - 1)))


@pytest.mark.parametrize(
    ("make", "match"),
    [
        (lambda: DirichletPosterior(prior=0), r"prior must be a finite number in \(0, inf\)"),
        (lambda: DirichletPosterior(prior="1"), "prior must be a real number, got str"),
        (lambda: DirichletPosterior(factorization="x"), "factorization must be one of"),
        (lambda: BootstrapPosterior(smoothing=0), r"smoothing \(> 0: resamples can miss"),
    ],
)
def test_posterior_bad_parameters(make, match):
    problem, _, data = small_data()
    with pytest.raises(FairdecideError, match=match):
        make().fit(data, problem)


def test_posterior_bad_data():
    problem = DecisionProblem.classification(2)
    unseen = LoggedData(x=[0, 1], z=["a", "a"], y=[0, 1], group_labels=["a", "b"])
    with pytest.raises(FairdecideError, match=r"group\(s\) \['b'\] have no rows"):
        DirichletPosterior().fit(unseen, problem)
    with pytest.raises(FairdecideError, match="at least one row"):
        LoggedData(x=[], z=[], y=[])
    with pytest.raises(FairdecideError, match="must be LoggedData"):
        DirichletPosterior().fit({"x": [0]}, problem)
    post = DirichletPosterior().fit(LoggedData(x=[0], z=[0], y=[1]), problem)
    with pytest.raises(FairdecideError, match="positive integer"):
        post.sample(0)


# ---------------------------------------------------------------------- beliefs
def test_belief_validation():
    _, world = make_bail_problem()
    other = make_tabular_problem(3, 2, 2, 3, outcome_depends_on_action=True,
                                 random_state=0)[1]
    with pytest.raises(FairdecideError, match="at least one world"):
        Belief(())
    with pytest.raises(FairdecideError, match="must share their units"):
        Belief((world, other))
    with pytest.raises(FairdecideError, match="aggregate must be"):
        Belief((world,), aggregate="median")
    with pytest.raises(FairdecideError, match="non-negative"):
        Belief((world, world), weights=[1, -1])
    with pytest.raises(FairdecideError, match=r"worlds\[0\] must be a World such as TabularWorld"):
        Belief(("world",))


def test_highest_density_draws_errors_and_selection():
    problem, _, data = small_data()
    post = DirichletPosterior().fit(data, problem)
    for delta in (0, 1, -0.5, 1.5):
        with pytest.raises(FairdecideError, match=r"delta must be a finite number in \(0, 1\)"):
            Belief.highest_density_draws(post, delta=delta)
    with pytest.raises(FairdecideError, match="no draw is kept"):
        Belief.highest_density_draws(post, delta=0.9, n_scenarios=1)
    cs = Belief.highest_density_draws(post, delta=0.25, n_scenarios=16, random_state=3)
    assert cs.n_scenarios == 12 and cs.aggregate == "worst"
    # The kept draws are the 12 most probable of the 16.
    params = post.sample_parameters(16, random_state=3)
    logp = sorted((post.log_density(p) for p in params), reverse=True)
    kept = sorted((post.log_density({"p_xz": w.p_xz, "p_y": w.p_y}) for w in cs.worlds),
                  reverse=True)
    np.testing.assert_allclose(kept, logp[:12])


def test_cvar():
    assert cvar([1, 2, 3, 4], [0.25] * 4, 0.25) == pytest.approx(4)
    assert cvar([1, 2, 3, 4], [0.25] * 4, 0.999999) == pytest.approx(2.5, abs=1e-5)


# ---------------------------------------------------------------------- optimisation
CRITS = [Independence(), Separation(), Separation(weighting="group"),
         Independence(measure="max")]


@given(seed=st.integers(0, 1000), crit=st.sampled_from(CRITS), eps=st.floats(0, 0.5),
       lam=st.floats(0, 1))
def test_one_scenario_equals_plug_in(seed, crit, eps, lam):
    problem, world = make_tabular_problem(4, 2, 2, 2, random_state=seed)
    for kw in ({"epsilon": eps}, {"lam": lam}, {"utility_slack": eps / 10}):
        plug = optimize_policy(problem, world, crit, **kw)
        for agg in ("mean", "worst"):
            res = optimize_policy(problem, Belief((world,), aggregate=agg), crit, **kw)
            assert res.objective == pytest.approx(plug.objective, abs=1e-8)


@given(seed=st.integers(0, 1000), crit=st.sampled_from(CRITS), eps=st.floats(0, 0.5))
def test_identical_scenarios_agree(seed, crit, eps):
    problem, world = make_tabular_problem(4, 2, 2, 2, random_state=seed)
    plug = optimize_policy(problem, world, crit, epsilon=eps)
    for agg in ("mean", "worst"):
        res = optimize_policy(problem, Belief((world,) * 3, aggregate=agg), crit, epsilon=eps)
        assert res.utility == pytest.approx(plug.utility, abs=1e-8)


def belief_for(seed, k=6):
    problem, _, data = small_data(seed, n=150)
    post = DirichletPosterior().fit(data, problem)
    return problem, Belief.from_posterior(post, k, random_state=seed)


@given(seed=st.integers(0, 1000), crit=st.sampled_from(CRITS), lam=st.floats(0, 1))
def test_maximin_value_at_most_bayes_value(seed, crit, lam):
    problem, belief = belief_for(seed)
    bayes = optimize_policy(problem, belief, crit, lam=lam)
    worst = optimize_policy(problem, belief.with_aggregate("worst"), crit, lam=lam)
    assert worst.objective <= bayes.objective + 1e-9
    # And each is optimal for its own aggregate when evaluated on the other's policy.
    ev = evaluate_under_belief(problem, belief, bayes.policy, crit).values
    v_bayes_policy = ((1 - lam) * ev["utility"] - lam * ev[crit.label]).min()
    assert worst.objective >= v_bayes_policy - 1e-8


def mixture_world(belief):
    """The world whose decision table is the belief's mean decision table."""
    w = belief.weights
    p_xz = sum(wk * world.p_xz for wk, world in zip(w, belief.worlds, strict=True))
    joint = sum(wk * world.p_xz[..., None] * world.p_y
                for wk, world in zip(w, belief.worlds, strict=True))
    return TabularWorld(p_xz, joint / p_xz[..., None])


@pytest.mark.parametrize("seed", range(3))
def test_bayes_utility_is_linear_in_theta(seed):
    problem, belief = belief_for(seed)
    bayes = optimize_policy(problem, belief)
    mixed = optimize_policy(problem, mixture_world(belief))
    assert bayes.utility == pytest.approx(mixed.utility, abs=1e-9)


def test_bayes_fairness_is_mean_of_deviations_not_deviation_of_mean():
    problem, belief = belief_for(4, k=8)
    res = optimize_policy(problem, belief, Independence(), lam=0.3)
    per = res.scenarios()
    assert res.deviations["independence"] == pytest.approx(
        float(belief.weights @ per[IND]))
    assert res.utility == pytest.approx(float(belief.weights @ per["utility"]))
    # A policy whose scenario deviations differ from its deviation in the mean world.
    pi = TabularPolicy(np.random.default_rng(0).dirichlet([1, 1], size=(4, 2)))
    mean_dev = evaluate_under_belief(problem, belief, pi, Independence()).values[
        IND].mean()
    assert mean_dev > Independence().deviation(pi, mixture_world(belief), problem) + 1e-6


def test_worst_case_against_brute_force():
    problem, world = make_tabular_problem(2, 2, 2, 2, random_state=3)
    data = sample_logged_data(problem, world, 60, random_state=1)
    belief = Belief.from_posterior(DirichletPosterior().fit(data, problem), 4,
                                   random_state=2, aggregate="worst")
    lam = 0.4
    res = optimize_policy(problem, belief, Separation(), lam=lam)
    # Every policy with P(a = 1 | x, z) on a 21-point grid, evaluated exactly.
    q = np.array(list(itertools.product(np.linspace(0, 1, 21), repeat=4))).reshape(-1, 2, 2)
    pis = np.stack([1 - q, q], axis=-1)  # (G, x, z, a)
    values = []
    for w in belief.worlds:
        J = np.einsum("xz,gxza,xzy->gzay", w.p_xz, pis, w.p_y)
        U = np.einsum("gzay,ay->g", J, problem.utility)
        N = np.swapaxes(J, -1, -2)  # (g, z, y, a)
        cond = N / N.sum(-1, keepdims=True)
        pool = N.sum(1) / N.sum((1, 3))[..., None]
        F = np.abs(cond - pool[:, None]).sum(axis=(1, 2, 3))
        values.append((1 - lam) * U - lam * F)
    best_grid = np.min(values, axis=0).max()
    assert res.objective >= best_grid - 1e-9
    ev = evaluate_under_belief(problem, belief, res.policy, Separation()).values
    assert res.objective == pytest.approx(
        ((1 - lam) * ev["utility"] - lam * ev[SEP]).min())


def test_chance_constraint_via_cvar():
    problem, belief = belief_for(5, k=20)
    eps, delta = 0.05, 0.2
    res = optimize_policy(problem, belief, Separation(), epsilon=eps, chance_delta=delta)
    devs = res.scenarios()[SEP].to_numpy()
    assert cvar(devs, belief.weights, delta) <= eps + 1e-6
    # CVaR bounds the chance: P(F > eps) <= delta under the belief.
    assert float(belief.weights @ (devs > eps + 1e-9)) <= delta
    mean = optimize_policy(problem, belief, Separation(), epsilon=eps)
    worst = optimize_policy(problem, belief.with_aggregate("worst"), Separation(),
                            epsilon=eps)
    # CVaR lies between the mean and the maximum, and so does the utility it allows.
    assert worst.utility <= res.utility + 1e-9 <= mean.utility + 2e-9


def test_chance_and_belief_errors():
    problem, belief = belief_for(0)
    with pytest.raises(FairdecideError, match="epsilon trade-off only"):
        optimize_policy(problem, belief, Independence(), lam=0.5, chance_delta=0.1)
    with pytest.raises(FairdecideError, match=r"chance_delta must lie in \(0, 1\)"):
        optimize_policy(problem, belief, Independence(), epsilon=0.1, chance_delta=1.0)
    _, world = make_bail_problem()
    with pytest.raises(FairdecideError, match="TabularWorld, a Belief or a ConfidenceSet"):
        optimize_policy(problem, [world], Independence(), epsilon=0.1)


def test_evaluate_under_belief_summary():
    problem, belief = belief_for(1, k=10)
    res = optimize_policy(problem, belief, Independence(), epsilon=0.1)
    ev = evaluate_under_belief(problem, belief, res.policy, [Independence(), Separation()])
    summary = ev.summary()
    assert list(summary.index) == ["utility", IND, SEP]
    assert summary.loc["utility", "mean"] == pytest.approx(res.utility)
    assert summary.loc[IND, "mean"] <= 0.1 + 1e-6
    assert (summary["min"] <= summary["q0.5"]).all() and (
        summary["q0.5"] <= summary["max"]).all()
