"""The Bayesian-fairness COMPAS experiment's building blocks (the full protocol is the
benchmark)."""

import numpy as np
import pytest

from fairdecide import DirichletPosterior, FairdecideError, LoggedData, TabularPolicy
from fairdecide.datasets import sample_logged_data
from fairdecide.experiments import bayesian_fairness as bf
from fairdecide.experiments.scenario_sgd import ScenarioSGD, scenario_gradient


@pytest.fixture(scope="module")
def compas(data_dir):
    return bf.compas_data(data_dir, download=False)


def test_compas_cells_and_groups(compas):
    data, problem = compas
    assert data.n == 7214
    assert data.n_x == 141  # observed combinations of the six clipped features
    assert data.n_z == 12  # sex x race
    assert not problem.outcome_depends_on_action


def test_one_holdout_run(compas):
    data, problem = compas
    order = np.random.default_rng(0).permutation(data.n)
    train, test = data.subset(order[:6000]), data.subset(order[6000:])
    with pytest.raises(FairdecideError, match="allow_empty_groups=True"):
        DirichletPosterior(0.5, "papers").fit(test, problem)
    test_world = DirichletPosterior(0.5, "papers", allow_empty_groups=True).fit(
        test, problem).mean_world()
    fitted = bf.fit_policies(train, problem, 0.5, n_scenarios=8, random_state=0)
    assert set(fitted) == {"plug-in", "Bayes", "bootstrap", "maximin", "constant"}
    values = {}
    for method, fit in fitted.items():
        assert fit.policy.is_group_blind
        values[method] = bf.objective_value(fit.policy, test_world, problem, 0.5)
    T, U, F = values["constant"]
    assert F == pytest.approx(0.0) and T == pytest.approx(U)
    # The majority class: nobody reoffends.
    assert U == pytest.approx(test_world.p_xz.ravel() @ test_world.p_y[..., 0].ravel())
    for T, U, F in values.values():  # lam 0.5 is the papers' lambda 1: T = U - F
        assert T == pytest.approx(U - F)
        assert 0.4 < U < 0.75


def test_lambda_zero_is_pure_accuracy(compas):
    data, problem = compas
    train = data.subset(np.arange(3000))
    fit = bf.fit_policies(train, problem, 0.0, methods=("plug-in",))["plug-in"]
    world = DirichletPosterior(0.5, "papers", allow_empty_groups=True).fit(
        train, problem).mean_world()
    # The plug-in policy predicts the more likely outcome of each cell under the model.
    p1 = (world.p_xz[..., None] * world.p_y).sum(axis=1)
    want = np.argmax(p1, axis=1)
    seen = world.p_xz.sum(axis=1) > 0
    got = fit.policy.table[:, 0, :].argmax(axis=1)
    clear = np.abs(p1[:, 1] - p1[:, 0]) > 1e-12
    np.testing.assert_array_equal(got[seen & clear], want[seen & clear])


def test_semi_synthetic_samples_match_truth(compas):
    data, problem = compas
    truth = DirichletPosterior(0.5, "papers").fit(data, problem).mean_world()
    sample = sample_logged_data(problem, truth, 50_000, random_state=0)
    assert isinstance(sample, LoggedData) and sample.x_labels == data.x_labels
    freq = np.bincount(sample.x * sample.n_z + sample.z, minlength=truth.p_xz.size)
    np.testing.assert_allclose(freq / sample.n, truth.p_xz.ravel(), atol=0.005)


def test_posterior_values_match_objective_value(compas):
    data, problem = compas
    post = DirichletPosterior(0.5, "papers", allow_empty_groups=True).fit(
        data.subset(np.arange(500)), problem)
    worlds = post.sample(3, random_state=0)
    p1 = np.random.default_rng(0).uniform(size=data.n_x)
    rows = np.repeat(np.c_[1 - p1, p1][:, None, :], data.n_z, axis=1)
    policy = TabularPolicy(rows, x_labels=data.x_labels, group_labels=data.group_labels)
    got = bf.posterior_values(policy, bf.scenario_arrays(worlds), problem, 0.5)
    want = [bf.objective_value(policy, w, problem, 0.5)[0] for w in worlds]
    np.testing.assert_allclose(got, want, rtol=1e-12)
    small = TabularPolicy.constant(3, data.n_z, [1.0, 0.0])
    with pytest.raises(FairdecideError, match="TabularPolicy"):
        bf.posterior_values(small, bf.scenario_arrays(worlds), problem, 0.5)


def test_scenario_gradient_is_the_derivative(compas):
    data, problem = compas
    post = DirichletPosterior(0.5, "papers", allow_empty_groups=True).fit(
        data.subset(np.arange(500)), problem)
    p_xz, p_y = bf.scenario_arrays(post.sample(2, random_state=1))
    rng = np.random.default_rng(1)
    p1 = rng.uniform(0.1, 0.9, size=(data.n_x, data.n_z))
    rows = np.stack([1 - p1, p1], axis=-1)
    value, grad = scenario_gradient(rows, p_xz, p_y, problem, bf.balance(), 0.5)
    direction = rng.normal(size=rows.shape)
    direction -= direction.mean(axis=-1, keepdims=True)  # stay on the simplex
    h = 1e-7
    up, _ = scenario_gradient(rows + h * direction, p_xz, p_y, problem, bf.balance(), 0.5)
    assert (up - value) / h == pytest.approx(np.sum(grad * direction), rel=1e-4, abs=1e-9)


def test_scenario_sgd_gives_a_group_blind_policy(compas):
    data, problem = compas
    post = DirichletPosterior(0.5, "papers", allow_empty_groups=True).fit(
        data.subset(np.arange(1000)), problem)
    res = ScenarioSGD(steps=10, batch=2).solve(post, problem, bf.balance(), 0.5,
                                               random_state=0)
    assert res.policy.is_group_blind and res.draws == 20 and res.steps == 10
    assert res.to_frame().iloc[0][["steps", "draws"]].tolist() == [10, 20]
    assert "10 steps over 20 scenario draws" in res.summary()
    np.testing.assert_allclose(res.policy.table.sum(axis=-1), 1.0)
    with pytest.raises(FairdecideError, match="batch"):
        ScenarioSGD(batch=0)
    with pytest.raises(FairdecideError, match="posterior"):
        ScenarioSGD().solve(object(), problem, bf.balance(), 0.5)


def test_scenario_sweep_rows(compas):
    data, problem = compas
    df = bf.semi_synthetic_experiment(
        data, problem, sizes=(300,), lams=(0.5,), runs=2, scenarios=(4, 8), held_out=50,
        runs_by_k={8: 1}, maximin_max=4, sgd=ScenarioSGD(steps=5, batch=2), sgd_runs=1)
    counts = df.groupby(["method", "K"]).size().to_dict()
    assert counts == {("Bayes", 4): 2, ("Bayes", 8): 1, ("maximin", 4): 2,
                      ("plug-in", 1): 2, ("constant", 0): 2, ("oracle", 0): 2,
                      ("SGD", 10): 1}
    assert df["held-out"].notna().all()
    bayes = df[df["method"] == "Bayes"]
    assert bayes["in-sample"].notna().all() and (bayes["solver"] != "").all()
    assert (df["lam"] == 0.5).all() and (df["lambda"] == 1.0).all()  # the papers' weight
    with pytest.raises(FairdecideError, match="scenarios"):
        bf.holdout_experiment(data, problem, runs=1, scenarios=(0,))


def test_one_lam_convention_in_the_experiment():
    """Issue 40: lam is the mixture weight of (1 - lam) U - lam F everywhere, the
    experiments included; the papers' lambda of T = U - lambda F is lam / (1 - lam), and
    the gradient of the experiment's SGD is that of the mixture (checked against the
    mixture written here)."""
    assert bf.papers_lambda(1 / 3) == 0.5 and bf.lam_of(0.5) == pytest.approx(1 / 3)
    with pytest.raises(FairdecideError, match="lam"):
        bf.papers_lambda(1.0)  # no finite papers' lambda
    from fairdecide import DecisionProblem, Independence
    problem = DecisionProblem.classification(2)
    p_xz = np.array([[[0.3, 0.2], [0.1, 0.4]]])
    p_y = np.array([[[[0.8, 0.2], [0.6, 0.4]], [[0.3, 0.7], [0.1, 0.9]]]])
    rows = np.array([[[0.9, 0.1], [0.7, 0.3]], [[0.2, 0.8], [0.4, 0.6]]])
    M = np.einsum("kxz,xza,kxzy->kzay", p_xz, rows, p_y)[0]
    U = M[:, 0, 0].sum() + M[:, 1, 1].sum()  # accuracy, read off the marginal here
    F = Independence().deviation_from_marginal(M, problem)  # (the weighting is tested)
    for lam in (0.0, 0.25, 1.0):
        value, _ = scenario_gradient(rows, p_xz, p_y, problem, Independence(), lam)
        assert value == pytest.approx((1 - lam) * U - lam * F)
