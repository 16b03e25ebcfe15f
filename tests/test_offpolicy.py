"""Off-policy value estimation (first part of the evaluation issue): estimators,
intervals, the logged-bandit generator and bad input."""

import warnings

import numpy as np
import pytest
from scipy.special import softmax
from scipy.stats import binom, chi2
from sklearn.linear_model import LogisticRegression

from fairdecide import FairdecideError, LoggedData, TabularPolicy, expected_utility
from fairdecide.datasets import (
    make_bail_problem,
    make_logged_bandit,
    make_tabular_problem,
    sample_logged_data,
)
from fairdecide.evaluation import (
    BanditData,
    InverseProbability,
    OffPolicyInputs,
    evaluate_policy,
)


@pytest.mark.parametrize("seed", range(3))
def test_tabular_exact_propensities_and_true_model_agree_with_exact_value(seed):
    problem, world = make_bail_problem()
    logging = TabularPolicy(np.random.default_rng(seed).dirichlet([2, 2], size=(5, 2)))
    data = sample_logged_data(problem, world, 20_000, policy=logging, random_state=seed)
    candidate = TabularPolicy(np.random.default_rng(seed + 9).dirichlet([1, 1], size=(5, 2)))
    exact = expected_utility(problem, world, candidate)
    for est in (evaluate_policy(problem, data, candidate, "ips"),
                evaluate_policy(problem, data, candidate, "snips"),
                evaluate_policy(problem, data, candidate, "dm", outcome_model=world),
                evaluate_policy(problem, data, candidate, "dr", outcome_model=world)):
        assert abs(est.value - exact) <= 4 * est.std_error, est


# Repeated-sampling checks. The full versions (60 and 40 repetitions) are in
# tests/test_slow_evaluation.py (``pytest -m slow``); the quick versions below run the
# first repetitions of the same simulations. With few repetitions a coverage count is
# noisy, so they accept any count that is not improbable (below probability 0.001) for
# intervals covering at least 85% of the time, the floor the slow tests assert, and add
# a sharper check of calibration: under a correct standard error the standardised errors
# (estimate - truth) / SE are about N(0, 1), so the sum of their squares is about
# chi-square with one degree of freedom per repetition.
QUICK_ALPHA = 1e-3


def _min_hits(reps, coverage=0.85, alpha=QUICK_ALPHA):
    """The fewest hits accepted out of ``reps`` intervals: P(Binomial(reps, coverage) <
    k) < alpha. (binom.ppf gives the smallest k with P(X <= k) >= alpha.)"""
    return int(binom.ppf(alpha, reps, coverage))


def _assert_calibrated(z, what):
    """Mean squared standardised error inside the central 1 - 2 alpha range of
    chi-square(reps) / reps."""
    z = np.asarray(z)
    lo, hi = chi2.ppf([QUICK_ALPHA, 1 - QUICK_ALPHA], len(z)) / len(z)
    assert lo <= np.mean(z**2) <= hi, (what, np.mean(z**2), lo, hi)


def _interval_runs(reps):
    """For each estimator and each of ``reps`` fresh logged samples of one generator:
    whether the 95% interval covered the true value V, the error value - V, and the
    standardised error (value - V) / std_error."""
    problem, _, truth = make_logged_bandit(10, random_state=0)
    # A candidate close enough to the logging policy for good overlap.
    policy = truth.nearby_policy(0.4, random_state=1)

    V = truth.value(policy, 1_000_000)
    hits = {"ips": [], "snips": [], "dr": [], "dm": []}
    errors = {k: [] for k in hits}
    zs = {k: [] for k in hits}
    for r in range(reps):
        _, data, _ = make_logged_bandit(2000, random_state=100 + r, truth=truth)
        for name in hits:
            est = evaluate_policy(problem, data, policy, name, random_state=r)
            lo, hi = est.confidence_interval(0.95)
            hits[name].append(lo <= V <= hi)
            errors[name].append(est.value - V)
            zs[name].append((est.value - V) / est.std_error)
    return hits, errors, zs


def test_interval_coverage_on_the_generator_quick():
    reps = 20
    hits, errors, zs = _interval_runs(reps)
    for name in hits:
        assert sum(hits[name]) >= _min_hits(reps), (name, sum(hits[name]))
        _assert_calibrated(zs[name], name)
        # Unbiased within sampling error of the repetitions (as in the slow test).
        err = np.array(errors[name])
        assert abs(err.mean()) <= 4 * err.std() / np.sqrt(len(err)) + 1e-3, name


def per_cell_case(seed):
    """A small tabular intervention whose logging policy and outcome probabilities vary
    freely per cell (x, z): no additive structure for a model of one-hot x plus one-hot
    z to find. Returns the problem, the world, the logging and the candidate policies."""
    problem, world = make_tabular_problem(4, 3, 3, 2, outcome_depends_on_action=True,
                                          random_state=seed)
    rng = np.random.default_rng(seed)
    logging = TabularPolicy(0.8 * rng.dirichlet(np.ones(3), size=(4, 3)) + 0.2 / 3)
    candidate = TabularPolicy(rng.dirichlet(np.ones(3), size=(4, 3)))
    return problem, world, logging, candidate


def _cell_runs(reps, seed=0, n=3000):
    """DR, IPS and SNIPS with the default (cell) nuisances and no logged propensities on
    ``reps`` samples of the per-cell case: hits of the 95% interval and standardised
    errors per estimator."""
    problem, world, logging, candidate = per_cell_case(seed)
    V = expected_utility(problem, world, candidate)
    hits = {"dr": [], "ips": [], "snips": []}
    zs = {k: [] for k in hits}
    for r in range(reps):
        data = sample_logged_data(problem, world, n, policy=logging,
                                  random_state=1000 * seed + r)
        data.propensity = None  # the logging policy is unknown
        for name in hits:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                est = evaluate_policy(problem, data, candidate, name, random_state=r)
            lo, hi = est.confidence_interval(0.95)
            hits[name].append(lo <= V <= hi)
            zs[name].append((est.value - V) / est.std_error)
    return hits, zs


def test_default_nuisances_on_per_cell_tabular_data_quick():
    """Without propensities, on data whose logging policy and outcomes vary per cell, the
    default estimates are unbiased and their intervals calibrated (the additive logistic
    models once gave biases of several standard errors and 78% coverage)."""
    reps = 25
    hits, zs = _cell_runs(reps)
    for name in hits:
        assert sum(hits[name]) >= _min_hits(reps), (name, sum(hits[name]))
        _assert_calibrated(zs[name], name)
        z = np.asarray(zs[name])
        assert abs(z.mean()) <= 4 / np.sqrt(reps), (name, z.mean())


def test_weighting_by_cell_frequencies_equals_post_stratification():
    """IPS with the in-sample per-cell action frequencies is the post-stratified
    estimate: sum over cells of P(cell) sum_a pi(a | cell) (mean reward of a in cell)."""
    problem, world, logging, candidate = per_cell_case(1)
    data = sample_logged_data(problem, world, 2000, policy=logging, random_state=5)
    data.propensity = None
    est = evaluate_policy(problem, data, candidate, "ips")
    a, y = data.action_codes(problem), data.outcome_codes(problem)
    reward = problem.utility[a, y]
    total = 0.0
    for x in range(data.n_x):
        for z in range(data.n_z):
            rows = (data.x == x) & (data.z == z)
            for act in range(problem.n_actions):
                taken = rows & (a == act)
                if taken.any():
                    total += rows.mean() * candidate.table[x, z, act] * reward[taken].mean()
    assert est.value == pytest.approx(total, abs=1e-12)


def test_estimated_propensities_and_classifier_policy():
    problem, data, truth = make_logged_bandit(4000, random_state=3)
    no_p = BanditData(data.X, data.z, data.a, data.y)
    clf = LogisticRegression().fit(data.X, data.a)  # a classifier over actions as policy
    V = truth.value(lambda X: clf.predict_proba(X), 500_000)
    est = evaluate_policy(problem, no_p, clf, "dr", random_state=0)
    assert abs(est.value - V) <= 4 * est.std_error
    assert est.ess is not None and est.max_weight >= 1.0


def test_poor_overlap_warns():
    # Action 1 was logged 10 times in 1000, with propensity 0.01; the candidate always
    # takes it: ten weights of 100, an effective sample size of 10.
    a = (np.arange(1000) < 10).astype(int)
    inputs = OffPolicyInputs(np.ones(1000), a, np.tile([0.0, 1.0], (1000, 1)),
                             np.where(a == 1, 0.01, 0.99))
    with pytest.warns(UserWarning, match="poor overlap"):
        est = InverseProbability().estimate(inputs)
    assert est.ess == pytest.approx(10.0) and est.max_weight == pytest.approx(100.0)


def test_bad_input():
    problem, data, _ = make_logged_bandit(200, random_state=0)
    good = lambda X: np.full((len(X), 2), 0.5)  # noqa: E731
    with pytest.raises(FairdecideError, match=r"propensity must lie|propensities must lie"):
        evaluate_policy(problem,
                        BanditData(data.X, data.z, data.a, data.y,
                                   np.where(np.arange(200) == 3, 0.0, data.propensity)),
                        good, "ips")
    with pytest.raises(FairdecideError, match="shape"):
        evaluate_policy(problem, data, lambda X: np.full((len(X), 3), 1 / 3), "ips")
    with pytest.raises(FairdecideError, match="simplex"):
        evaluate_policy(problem, data, lambda X: np.full((len(X), 2), 0.7), "ips")
    with pytest.raises(FairdecideError, match="same length"):
        BanditData(data.X[:10], data.z, data.a, data.y)
    with pytest.raises(FairdecideError, match="method must be one of"):
        evaluate_policy(problem, data, good, "magic")
    with pytest.raises(FairdecideError, match="never takes any logged action"):
        evaluate_policy(problem, data, lambda X: np.eye(2)[1 - data.a], "ips")
    with pytest.raises(FairdecideError, match=r"clip \(a cap on importance weights, >= 1\)"):
        InverseProbability(clip=0)
    with pytest.raises(FairdecideError, match=r"propensity must lie in \(0, 1\]"):
        OffPolicyInputs(np.ones(2), np.zeros(2, int), np.full((2, 2), 0.5), np.array([0.5, 1.5]))
    tabular_problem, world = make_bail_problem()
    logged = sample_logged_data(tabular_problem, world, 100, random_state=0)
    with pytest.raises(FairdecideError, match="needs tabular LoggedData"):
        evaluate_policy(problem, data, TabularPolicy.constant(5, 2, [0.5, 0.5]), "ips")
    # The same policy on tabular LoggedData is accepted, and its estimate is right.
    coin = TabularPolicy.constant(5, 2, [0.5, 0.5])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = evaluate_policy(tabular_problem, logged, coin, "ips")
    assert est.std_error > 0
    assert abs(est.value - expected_utility(tabular_problem, world, coin)) <= 4 * est.std_error


def _group_runs(reps):
    """For each of ``reps`` fresh logged samples: whether group 0's interval covers its
    true value and the gap's interval the true gap, and both standardised errors. Checks
    in every repetition that the overall value is the group-size-weighted mean."""
    from fairdecide.evaluation import evaluate_policy_by_group

    problem, _, truth = make_logged_bandit(10, random_state=0)
    policy = truth.nearby_policy(0.4, random_state=1)

    v0 = truth.value(policy, 1_000_000, group=0)
    v1 = truth.value(policy, 1_000_000, group=1)
    hits, gap_hits, z0, z_gap = [], [], [], []
    for r in range(reps):
        _, data, _ = make_logged_bandit(3000, random_state=500 + r, truth=truth)
        res = evaluate_policy_by_group(problem, data, policy, "dr", random_state=r)
        lo0, hi0 = res.groups[0].confidence_interval()
        hits.append(lo0 <= v0 <= hi0)
        z0.append((res.groups[0].value - v0) / res.groups[0].std_error)
        gap = res.gaps().iloc[0]
        gap_hits.append(gap["low"] <= v1 - v0 <= gap["high"])
        z_gap.append((gap["gap"] - (v1 - v0)) / gap["std_error"])
        # The overall value is the group-size-weighted mean of the group values.
        n0 = res.groups[0].n
        assert res.overall.value == pytest.approx(
            (n0 * res.groups[0].value + res.groups[1].n * res.groups[1].value) / data.n)
    return hits, gap_hits, z0, z_gap


def test_group_values_and_gap_cover_the_truth_quick():
    reps = 15
    hits, gap_hits, z0, z_gap = _group_runs(reps)
    assert sum(hits) >= _min_hits(reps), sum(hits)
    assert sum(gap_hits) >= _min_hits(reps), sum(gap_hits)
    _assert_calibrated(z0, "group 0")
    _assert_calibrated(z_gap, "gap")


def test_full_information_in_prediction_problems():
    problem, world = make_tabular_problem(4, 2, 2, 2, random_state=1)
    data = sample_logged_data(problem, world, 20_000, random_state=0)
    pi = TabularPolicy(np.random.default_rng(3).dirichlet([1, 1], size=(4, 2)))
    est = evaluate_policy(problem, data, pi)  # auto -> full information
    assert est.method == "full information" and est.ess is None
    assert abs(est.value - expected_utility(problem, world, pi)) <= 4 * est.std_error
    with pytest.raises(FairdecideError, match="needs a prediction problem"):
        bail, bail_world = make_bail_problem()
        evaluate_policy(bail, sample_logged_data(bail, bail_world, 100, random_state=0),
                        TabularPolicy.constant(5, 2, [0.5, 0.5]), "full")


def test_bootstrap_interval_on_request():
    problem, data, truth = make_logged_bandit(3000, random_state=2)

    def policy(X):
        return softmax(X @ truth.logging_coef, axis=1)

    normal = evaluate_policy(problem, data, policy, "dr", random_state=0)
    B = 1000
    boot = evaluate_policy(problem, data, policy, "dr", interval="bootstrap", n_boot=B,
                           random_state=0)
    assert boot.interval == "bootstrap" and len(boot.draws) == B
    assert boot.value == pytest.approx(normal.value)
    # Both standard errors estimate sd(estimate) from the same rows; they differ by the
    # bootstrap's Monte Carlo error. The standard deviation s of B draws has standard
    # error sqrt(m4 - s^4) / (2 s sqrt(B)) (delta method; m4 the draws' fourth central
    # moment), computed here from the draws: allow 4 of them (about 9% of s).
    d = np.asarray(boot.draws)
    s = d.std(ddof=1)
    se_s = np.sqrt(np.mean((d - d.mean()) ** 4) - s**4) / (2 * s * np.sqrt(B))
    assert boot.std_error == pytest.approx(s)
    assert abs(boot.std_error - normal.std_error) <= 4 * se_s
    lo, hi = boot.confidence_interval(0.9)
    assert lo < boot.value < hi
    with pytest.raises(FairdecideError, match="interval must be"):
        evaluate_policy(problem, data, policy, "dr", interval="jackknife")


@pytest.mark.parametrize("seed", range(3))
def test_bayesian_value_tabular_covers_the_truth(seed):
    problem, world = make_bail_problem()
    data = sample_logged_data(problem, world, 3000, random_state=seed)
    pi = TabularPolicy(np.random.default_rng(seed).dirichlet([1, 1], size=(5, 2)))
    est = evaluate_policy(problem, data, pi, "bayes", n_draws=300, random_state=seed)
    assert est.interval == "posterior" and len(est.draws) == 300
    lo, hi = est.confidence_interval(0.99)
    assert lo <= expected_utility(problem, world, pi) <= hi


def test_bayesian_bootstrap_value_with_numeric_features():
    problem, data, truth = make_logged_bandit(2000, random_state=4)

    def policy(X):
        return softmax(X @ truth.logging_coef, axis=1)

    est = evaluate_policy(problem, data, policy, "bayes", n_draws=40, random_state=0)
    V = truth.value(policy, 500_000)
    assert abs(est.value - V) <= 4 * est.std_error
    assert est.method == "bayes (Bayesian bootstrap)"


def test_empirical_policy_from_logs():
    problem, world = make_bail_problem()
    logging = TabularPolicy(np.random.default_rng(0).dirichlet([2, 2], size=(5, 2)))
    data = sample_logged_data(problem, world, 100_000, policy=logging, random_state=0)
    est = TabularPolicy.from_data(data, problem)
    np.testing.assert_allclose(est.table, logging.table, atol=0.02)
    with pytest.raises(FairdecideError, match="no actions"):
        TabularPolicy.from_data(LoggedData(x=[0], z=[0], y=[0]), problem)


def test_group_without_rows_warns():
    from fairdecide.evaluation import evaluate_policy_by_group

    problem, world = make_bail_problem()
    data = sample_logged_data(problem, world, 500, random_state=0)
    only_a = data.subset(data.z == 0)
    with pytest.warns(UserWarning, match=r"group\(s\) \['group B'\] have no rows"):
        res = evaluate_policy_by_group(problem, only_a,
                                       TabularPolicy.constant(5, 2, [0.5, 0.5]), "ips")
    assert list(res.groups) == ['group A']


def test_prediction_problem_without_logged_actions():
    from fairdecide import Separation
    from fairdecide.evaluation import estimate_deviation

    problem, world = make_tabular_problem(3, 2, 2, 2, random_state=0)
    logged = sample_logged_data(problem, world, 5000, random_state=0)
    bare = LoggedData(x=logged.to_frame()["x"], z=logged.to_frame()["z"],
                      y=logged.to_frame()["y"], x_labels=logged.x_labels,
                      group_labels=logged.group_labels)
    pi = TabularPolicy(np.random.default_rng(0).dirichlet([1, 1], size=(3, 2)))
    est = evaluate_policy(problem, bare, pi)
    assert abs(est.value - expected_utility(problem, world, pi)) <= 4 * est.std_error
    dev = estimate_deviation(problem, bare, Separation(), pi, n_boot=50, random_state=0)
    assert dev.low <= dev.value <= dev.high
    with pytest.raises(FairdecideError, match="no logged actions"):
        evaluate_policy(problem, bare, pi, "ips")


def test_bayes_with_an_action_never_logged_is_a_clear_error():
    problem, data, _ = make_logged_bandit(300, random_state=0)
    only0 = BanditData(data.X[data.a == 0], data.z[data.a == 0], data.a[data.a == 0],
                       data.y[data.a == 0], data.propensity[data.a == 0])
    with pytest.raises(FairdecideError, match="logged 0 times"):
        evaluate_policy(problem, only0, lambda X: np.full((len(X), 2), 0.5), "bayes",
                        n_draws=10)
    with pytest.raises(FairdecideError, match=r"own \(credible\) interval"):
        evaluate_policy(problem, data, lambda X: np.full((len(X), 2), 0.5), "bayes",
                        interval="bootstrap")


def test_classifier_policy_with_action_labels():
    problem, world = make_bail_problem()
    data = sample_logged_data(problem, world, 3000, random_state=1)
    frame = data.to_frame()
    X = np.hstack([np.eye(5)[data.x], np.eye(2)[data.z]])
    clf = LogisticRegression().fit(X, frame["a"])  # classes_ are 'detain', 'release'
    assert set(clf.classes_) == {"detain", "release"}
    est = evaluate_policy(problem, data, clf, "ips")
    # The same probabilities as a callable, columns put in the problem's action order.
    cols = [list(problem.action_labels).index(c) for c in clf.classes_]

    def in_action_order(X_):
        raw = clf.predict_proba(X_)
        out = np.empty_like(raw)
        out[:, cols] = raw
        return out

    by_callable = evaluate_policy(problem, data, in_action_order, "ips")
    assert est.value == by_callable.value and est.std_error == by_callable.std_error

    # A classifier listing its classes in the other order gives the same estimate.
    class Reversed:
        classes_ = clf.classes_[::-1]

        def predict_proba(self, X_):
            return clf.predict_proba(X_)[:, ::-1]

    assert evaluate_policy(problem, data, Reversed(), "ips").value == est.value

    # The features are one-hot cell and group, so the classifier is a tabular policy:
    # its exact value covered by the estimate.
    every_cell = np.hstack([np.repeat(np.eye(5), 2, axis=0), np.tile(np.eye(2), (5, 1))])
    table = in_action_order(every_cell).reshape(5, 2, 2)  # rows (x, z) in x-major order
    exact = expected_utility(problem, world, TabularPolicy(table))
    assert abs(est.value - exact) <= 4 * est.std_error


def test_bayesian_bootstrap_on_tabular_data_uses_the_cell_model(monkeypatch):
    # A policy reading the features of tabular data: the Bayesian bootstrap refits the
    # default nuisance (the per-cell frequencies), never the logistic model.
    import fairdecide.models.outcome as outcome

    def no_logistic():
        raise AssertionError("the logistic default was used on tabular data")

    monkeypatch.setattr(outcome, "default_classifier", no_logistic)
    problem, world = make_tabular_problem(4, 3, 3, 2, outcome_depends_on_action=True,
                                          random_state=1)
    data = sample_logged_data(problem, world, 3000, random_state=1)
    table = np.random.default_rng(1).dirichlet(np.ones(3), size=(4, 3))
    n_x = data.n_x

    def policy(X):  # X is one-hot cell then one-hot group
        return table[X[:, :n_x].argmax(axis=1), X[:, n_x:].argmax(axis=1)]

    est = evaluate_policy(problem, data, policy, "bayes", n_draws=40, random_state=0)
    assert est.method == "bayes (Bayesian bootstrap)"
    exact = evaluate_policy(problem, data, TabularPolicy(table), "bayes", n_draws=200,
                            random_state=0)
    V = expected_utility(problem, world, TabularPolicy(table))
    assert abs(est.value - V) <= 4 * est.std_error
    # Same saturated model: the two posteriors agree up to prior and Monte Carlo error.
    assert abs(est.value - exact.value) <= 0.5 * exact.std_error
