"""The Bayesian (pymc) outcome model of individuals: recovery of a known logistic truth,
its posterior draws as the scenarios of a belief both optimiser routes take, interventions
under both action encodings, posterior spread against sample size, convergence reporting
and bad input."""

import sys

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

import fairdecide as fd
from fairdecide import Belief
from fairdecide.models import BayesianOutcomeModel, IndividualOutcomeModel
from tests.reference import assert_recomputed

pytest.importorskip("pymc", reason="BayesianOutcomeModel samples with pymc (the bayes extra)")
pytestmark = pytest.mark.filterwarnings(
    "ignore:PyTensor could not link to a BLAS:UserWarning")

PREDICTION = fd.DecisionProblem.classification(2)
INTERVENTION = fd.DecisionProblem([[0.0, 1.0], [-0.2, 0.8]])
TRUTH = np.array([1.5, -1.0, 0.3])  # logit P(y = 1 | x) = 1.5 x1 - x2 + 0.3


def _logistic(t):
    return 1 / (1 + np.exp(-t))


def _prediction_data(n, seed):
    """Group "f" has larger x1, so the true outcome rates (and independence) differ."""
    rng = np.random.RandomState(seed)
    z = np.where(rng.random_sample(n) < 0.4, "f", "m")
    X = rng.normal(size=(n, 2))
    X[:, 0] += 0.8 * (z == "f")
    p = _logistic(np.c_[X, np.ones(n)] @ TRUTH)
    return X, z, (rng.random_sample(n) < p).astype(int), p


def _intervention_data(n, encoding, seed=0):
    rng = np.random.RandomState(seed)
    X, z, _, _ = _prediction_data(n, seed + 1)
    a = rng.randint(2, size=n)
    if encoding == "separate":  # each action has its own slopes
        truth = np.stack([_logistic(1.5 * X[:, 0] - 0.5), _logistic(-X[:, 1] + 0.3)], axis=1)
    else:  # the action shifts the intercept (the "feature" model is then correct)
        truth = np.stack([_logistic(X[:, 0] - 0.5), _logistic(X[:, 0] + 0.7)], axis=1)
    y = (rng.random_sample(n) < truth[np.arange(n), a]).astype(int)
    return X, z, a, y, truth


@pytest.fixture(scope="module")
def fitted():
    X, z, y, p = _prediction_data(400, 0)
    model = BayesianOutcomeModel().fit(X, z, y, PREDICTION, random_state=0)
    return model, X, z, y, p


def test_recovers_a_known_logistic_truth(fitted):
    model, X, _, y, p = fitted
    assert model.coef_draws_.shape == (1000, 3, 2)
    np.testing.assert_array_equal(model.coef_draws_[:, :, 0], 0.0)  # identifiability
    assert model.rhat_max_ <= 1.01 and model.ess_min_ >= 200 and model.n_divergent_ == 0
    draws = model.coef_draws_[:, :, 1]
    mean, sd = draws.mean(axis=0), draws.std(axis=0)
    assert np.all(sd < 0.25)  # n = 400 pins each coefficient down (sd about 0.15)
    # The posterior is near Normal(MLE, sd^2) (400 rows, a prior of scale 2.5 against a
    # likelihood of scale 0.15 shifts it by under 1% of sd), and the MLE misses the truth
    # by a Normal(0, sd^2) error: the truth lies within 4 sd with probability > 0.9999.
    assert np.all(np.abs(mean - TRUTH) < 4 * sd)
    # The sampler computes that posterior: its mean is the MLE up to the Monte Carlo
    # error sd / sqrt(ESS) (< 0.07 sd) and the O(1/n) skew of the posterior.
    mle = LogisticRegression(C=1e8, max_iter=1000).fit(X, y)
    assert np.all(np.abs(mean - np.r_[mle.coef_[0], mle.intercept_]) < 0.25 * sd)
    # P(y = 1 | x) of the posterior mean: off by 0.07 at most (0.025 on average) here.
    world = model.posterior_mean_world()
    assert world.p_y.shape == (400, 2) and world.group_labels == ("f", "m")
    assert np.max(np.abs(world.p_y[:, 1] - p)) < 0.12
    assert np.mean(np.abs(world.p_y[:, 1] - p)) < 0.04


@pytest.mark.parametrize("aggregate", ["mean", "worst"])
def test_belief_goes_to_both_routes_and_verifies(fitted, aggregate):
    model = fitted[0]
    belief = Belief.from_posterior(model, 10, random_state=0, aggregate=aggregate)
    assert belief.n_scenarios == 10 and belief.aggregate == aggregate
    assert belief.label == "Bayes (10 draws)"
    spread = np.std([w.p_y[:, 1] for w in belief.worlds], axis=0)
    assert np.all(spread > 0)  # the draws differ
    lp = fd.optimize_policy(PREDICTION, belief, fd.Independence(), epsilon=0.05)
    grad = fd.optimize_policy(PREDICTION, belief, fd.Independence(), epsilon=0.05,
                              policy=fd.LinearSoftmaxPolicy(), random_state=0, n_restarts=1)
    for res in (lp, grad):
        # utility and independence recomputed by hand in each posterior draw, aggregated
        # by the belief (mean or worst case), the aggregate deviation within 0.05
        assert_recomputed(res, PREDICTION, belief, fd.Independence(), epsilon=0.05)
    assert grad.utility <= lp.utility + 1e-6  # the free policy is the upper bound


@pytest.mark.parametrize("encoding", ["separate", "feature"])
def test_intervention(encoding):
    X, z, a, y, truth = _intervention_data(600, encoding)
    model = BayesianOutcomeModel(action_encoding=encoding, draws=300, tune=300)
    model.fit(X, z, y, INTERVENTION, a=a, random_state=1)
    # 2 x 300 draws: r-hat's own noise is about 0.005, so allow 1.02 (the fit warns
    # above 1.01); found 1.010 (separate) and 1.001 (feature), no divergences
    assert model.rhat_max_ < 1.02 and model.ess_min_ >= 200 and model.n_divergent_ == 0
    shape = (600, 2, 3, 2) if encoding == "separate" else (600, 4, 2)
    assert model.coef_draws_.shape == shape
    world = model.posterior_mean_world()
    assert world.p_y.shape == (600, 2, 2)
    # about 300 rows per action: off the truth by 0.05 on average (found 0.051 and
    # 0.047), and close to the nearly unpenalised maximum-likelihood fit of the same
    # model (found 0.012 at most: the posterior mean of p against p at the mode)
    assert np.mean(np.abs(world.p_y[:, :, 1] - truth)) < 0.08
    mle = IndividualOutcomeModel(LogisticRegression(C=1e8, max_iter=1000),
                                 action_encoding=encoding).fit(X, z, y, INTERVENTION, a=a)
    assert np.max(np.abs(world.p_y - mle.world().p_y)) < 0.03
    belief = Belief.from_posterior(model, 8, random_state=0)
    res = fd.optimize_policy(INTERVENTION, belief, fd.Independence(), epsilon=0.05)
    assert_recomputed(res, INTERVENTION, belief, fd.Independence(), epsilon=0.05)


def test_posterior_spread_shrinks_with_more_data(fitted):
    big = fitted[0]  # 400 rows
    X, z, y, _ = _prediction_data(50, 3)
    small = BayesianOutcomeModel(draws=300, tune=300).fit(X, z, y, PREDICTION,
                                                          random_state=0)
    new_X = np.random.RandomState(4).normal(size=(30, 2))
    new_z = ["f", "m"] * 15
    spread = {}
    for name, model in (("small", small), ("big", big)):
        belief = Belief.from_posterior(model, 200, random_state=0, X=new_X, z=new_z)
        spread[name] = np.std([w.p_y[:, 1] for w in belief.worlds], axis=0).mean()
    # posterior sd ~ 1 / sqrt(n): 8 times the rows, about 1/2.8 of the spread
    assert spread["big"] < 0.6 * spread["small"]


def test_new_individuals_and_the_mean_world():
    X, z, y, _ = _prediction_data(60, 5)
    model = BayesianOutcomeModel(draws=50, tune=50, chains=1)
    with pytest.warns(UserWarning, match="effective sample size"):
        model.fit(X, z, y, PREDICTION, random_state=0)
    assert np.isfinite(model.rhat_max_) and model.ess_min_ < 100
    world = model.posterior_mean_world(X[:4] + 1.0, ["m", "f", "m", "m"])
    assert world.n == 4 and world.group_labels == ("f", "m")
    logits = np.einsum("nd,sdk->snk", np.c_[world.X, np.ones(4)], model.coef_draws_)
    p = np.exp(logits) / np.exp(logits).sum(axis=2, keepdims=True)
    np.testing.assert_allclose(world.p_y, p.mean(axis=0))  # the mean over all 50 draws
    with pytest.raises(fd.FairdecideError, match="X has 3 features but the model was"):
        Belief.from_posterior(model, 3, X=np.ones((2, 3)), z=["f", "m"])
    with pytest.raises(fd.FairdecideError, match=r"z \(the groups of the new"):
        Belief.from_posterior(model, 3, X=np.ones((2, 2)))
    with pytest.raises(fd.FairdecideError, match="n_scenarios must be <= 50"):
        Belief.from_posterior(model, 51)
    with pytest.raises(fd.FairdecideError, match="aggregate must be one of"):
        Belief.from_posterior(model, 3, aggregate="median")


def _bad(n=40):
    X, z, y, _ = _prediction_data(n, 6)
    a = np.arange(n) % 2
    return X, z, y, a


@pytest.mark.parametrize(("call", "match"), [
    (lambda X, z, y, a: BayesianOutcomeModel().fit(np.r_[X[:-1], [[np.nan, 0]]], z, y,
                                                   PREDICTION), "X contains NaN"),
    (lambda X, z, y, a: BayesianOutcomeModel().fit(X, z[:-1], y, PREDICTION),
     "X has 40 rows but z has 39"),
    (lambda X, z, y, a: BayesianOutcomeModel().fit(X, z, y[:-1], PREDICTION),
     "X has 40 rows but z has 40 and y 39"),
    (lambda X, z, y, a: BayesianOutcomeModel().fit(X, z, np.zeros(40, int), PREDICTION),
     "y has one outcome .0. in all 40 rows"),
    (lambda X, z, y, a: BayesianOutcomeModel().fit(X, z, y + 5, PREDICTION),
     "y contains unknown outcome"),
    (lambda X, z, y, a: BayesianOutcomeModel().fit(X, z, y, INTERVENTION),
     "a .the logged actions. is needed"),
    (lambda X, z, y, a: BayesianOutcomeModel().fit(X, z, y, INTERVENTION, a=a + 7),
     "a contains unknown action"),
    (lambda X, z, y, a: BayesianOutcomeModel().fit(X, z, y, INTERVENTION, a=a[:-1]),
     "X has 40 rows but a has 39"),
    (lambda X, z, y, a: BayesianOutcomeModel().fit(X, z, y, INTERVENTION,
                                                   a=np.r_[1, np.zeros(39, int)]),
     "logged 1 times"),
    (lambda X, z, y, a: BayesianOutcomeModel().fit(X, z, y, "classification"),
     "problem must be a DecisionProblem"),
    (lambda X, z, y, a: BayesianOutcomeModel(prior_scale=0), "prior_scale must be"),
    (lambda X, z, y, a: BayesianOutcomeModel(action_encoding="both"),
     "action_encoding must be one"),
    (lambda X, z, y, a: BayesianOutcomeModel(draws=0), "draws must be a positive"),
    (lambda X, z, y, a: BayesianOutcomeModel(tune=-1), "tune must be a non-negative"),
    (lambda X, z, y, a: BayesianOutcomeModel(chains=1.5), "chains must be a whole"),
    (lambda X, z, y, a: Belief.from_posterior(BayesianOutcomeModel()),
     r"call fit\(X, z, y, problem"),
])
def test_errors(call, match):
    with pytest.raises(fd.FairdecideError, match=match):
        call(*_bad())


def test_without_pymc_the_error_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "pymc", None)  # import pymc now fails
    X, z, y, _ = _bad()
    with pytest.raises(ImportError, match=r'pip install "fairdecide\[bayes\]"'):
        BayesianOutcomeModel().fit(X, z, y, PREDICTION)


def test_import_fairdecide_does_not_import_pymc(fresh_imports):
    # a fresh interpreter after `import fairdecide, fairdecide.models` (tests/conftest.py)
    loaded = set(fresh_imports["import fairdecide, fairdecide.models"])
    assert "fairdecide.models.bayesian" in loaded  # the step did import the model
    assert not loaded & {"pymc", "pytensor", "arviz"}


def test_the_deprecated_belief_door_warns_and_gives_the_same_belief(fitted):
    model = fitted[0]
    with pytest.warns(DeprecationWarning, match=r"Belief.from_posterior\(model"):
        old = model.belief(6, random_state=3)
    new = Belief.from_posterior(model, 6, random_state=3)
    assert old.label == new.label and old.aggregate == new.aggregate
    for a, b in zip(old.worlds, new.worlds, strict=True):
        np.testing.assert_array_equal(a.p_y, b.p_y)
