"""The Bayesian-fairness COMPAS experiment's building blocks (the full protocol is the
benchmark)."""

import numpy as np
import pytest

from fairdecide import DirichletPosterior, FairdecideError, LoggedData
from fairdecide.datasets import sample_logged_data
from fairdecide.experiments import bayesian_fairness as bf


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
    fitted = bf.fit_policies(train, problem, 1.0, n_samples=8, random_state=0)
    assert set(fitted) == {"plug-in", "Bayes", "bootstrap", "maximin", "constant"}
    values = {}
    for method, fit in fitted.items():
        assert fit.policy.is_group_blind
        values[method] = bf.objective_value(fit.policy, test_world, problem, 1.0)
    T, U, F = values["constant"]
    assert F == pytest.approx(0.0) and T == pytest.approx(U)
    # The majority class: nobody reoffends.
    assert U == pytest.approx(test_world.p_xz.ravel() @ test_world.p_y[..., 0].ravel())
    for T, U, F in values.values():
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
    sample = sample_logged_data(truth, problem, 50_000, random_state=0)
    assert isinstance(sample, LoggedData) and sample.x_labels == data.x_labels
    freq = np.bincount(sample.x * sample.n_z + sample.z, minlength=truth.p_xz.size)
    np.testing.assert_allclose(freq / sample.n, truth.p_xz.ravel(), atol=0.005)
