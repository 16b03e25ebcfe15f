"""Fairness estimated from logs: the logged decisions' audit and candidate policies."""

import math

import numpy as np
import pandas as pd
import pytest

import fairdecide as fd
from fairdecide import (
    DecisionProblem,
    FairdecideError,
    Independence,
    LoggedCounts,
    LoggedData,
    Separation,
    Sufficiency,
    TabularPolicy,
)
from fairdecide.datasets import (
    make_bail_problem,
    make_logged_bandit,
    make_tabular_problem,
    sample_logged_data,
)
from fairdecide.evaluation import (
    BanditData,
    audit,
    estimate_deviation,
    log_marginal_likelihoods,
)
from fairdecide.evaluation.audit import _log_ml

IND = fd.Independence().label  # the criterion's name with its measure
SEP = fd.Separation().label  # the criterion's name with its measure
SUF = fd.Sufficiency().label  # the criterion's name with its measure


def test_dirichlet_multinomial_marginal_likelihood_by_hand():
    # Beta(1, 1) prior, a sequence with 3 ones and 2 zeros: 3! 2! / 6! ... times the
    # number of orderings is not included (sequence likelihood).
    assert _log_ml(np.array([3, 2]), 1.0) == pytest.approx(
        math.log(math.factorial(3) * math.factorial(2) / math.factorial(6)))


@pytest.mark.parametrize("seed", range(5))
def test_bayes_factor_detects_dependence_and_independence(seed):
    rng = np.random.default_rng(seed)
    n = 4000
    c = rng.integers(2, size=n)
    z = rng.integers(2, size=n)
    # Independent given c: t depends on c only.
    t = (rng.random(n) < 0.3 + 0.4 * c).astype(int)
    N = np.zeros((2, 2, 2))
    np.add.at(N, (z, c, t), 1)
    ind, dep = log_marginal_likelihoods(N)
    assert ind > dep
    # Dependent: t follows z.
    t = (rng.random(n) < 0.3 + 0.4 * z).astype(int)
    N = np.zeros((2, 2, 2))
    np.add.at(N, (z, c, t), 1)
    ind, dep = log_marginal_likelihoods(N)
    assert ind < dep - 50


def test_audit_of_a_group_blind_random_logging_policy():
    problem, world = make_bail_problem()
    data = sample_logged_data(problem, world, 20_000, random_state=1)
    table = audit(data, problem, n_boot=100, n_draws=500, random_state=0)
    row = table.set_index("criterion")
    # Actions were coin flips: independent of the group.
    assert row.loc[IND, "p_independent"] > 0.5
    assert row.loc[IND, "low"] <= 0.05
    # Outcomes differ by group among the released: not calibrated within groups.
    assert row.loc[SUF, "p_independent"] < 0.01
    assert row.loc[SUF, "low"] > 0
    for _, r in table.iterrows():
        assert r["low"] <= r["deviation"] <= r["high"] + 1e-12
        assert r["posterior_low"] <= r["posterior_mean"] <= r["posterior_high"]


def test_candidate_fairness_in_a_prediction_problem_matches_the_truth():
    problem, world = make_tabular_problem(4, 2, 2, 2, random_state=3)
    data = sample_logged_data(problem, world, 50_000, random_state=2)
    pi = TabularPolicy(np.random.default_rng(1).dirichlet([1, 1], size=(4, 2)))
    for crit in (Independence(), Separation()):
        est = estimate_deviation(problem, data, crit, pi, n_boot=200, random_state=0)
        exact = crit.deviation(pi, world, problem)
        assert est.low <= exact <= est.high
        assert abs(est.value - exact) < 0.03


def test_candidate_fairness_in_an_intervention_by_importance_weighting():
    problem, world = make_bail_problem()
    data = sample_logged_data(problem, world, 100_000, random_state=4)
    pi = TabularPolicy(np.random.default_rng(2).dirichlet([2, 2], size=(5, 2)))
    crit = Separation(weighting="group")
    est = estimate_deviation(problem, data, crit, pi, n_boot=100, random_state=0)
    assert abs(est.value - crit.deviation(pi, world, problem)) < 0.03
    no_prop = data.subset(np.arange(data.n))
    no_prop.propensity = None
    # Issue 40: without propensities, tabular logs are weighted by the cells' action
    # frequencies (the bail world logs by cell, so they are consistent), not refused.
    est = estimate_deviation(problem, no_prop, crit, pi, n_boot=100, random_state=0)
    assert abs(est.value - crit.deviation(pi, world, problem)) < 0.03
    bandit = BanditData.from_logged(no_prop, problem)
    with pytest.raises(FairdecideError, match="needs the logging propensities"):
        estimate_deviation(problem, bandit, crit, lambda X: pi.table[0, 0] + 0 * X[:, :2],
                           n_boot=10)


def test_audit_bad_input():
    problem = DecisionProblem(np.eye(2))
    empty = LoggedData(x=[0, 1], z=[0, 0], y=[0, 1], a=[0, 1], group_labels=[0, 1])
    with pytest.raises(FairdecideError, match="have no rows"):
        audit(empty, problem)
    no_actions = LoggedData(x=[0, 1], z=[0, 1], y=[0, 1])
    with pytest.raises(FairdecideError, match="logged actions"):
        audit(no_actions, problem)
    data = LoggedData(x=[0, 1, 0, 1], z=[0, 1, 1, 0], y=[0, 1, 1, 0], a=[0, 1, 0, 1])
    with pytest.raises(FairdecideError, match="n_boot"):
        estimate_deviation(problem, data, Sufficiency(), n_boot=1)
    with pytest.raises(FairdecideError, match="prior must be a finite number in \\(0"):
        audit(data, problem, prior=0)


def test_candidate_fairness_with_numeric_features():
    from scipy.special import expit

    from fairdecide.datasets import make_logged_bandit
    from fairdecide.evaluation import BanditData

    problem, data, truth = make_logged_bandit(40_000, random_state=7)
    policy = truth.nearby_policy(0.3, random_state=2)

    # The true group marginal P(z, a, y) of the policy, by integration over fresh draws.
    X, z = truth.draw_features(1_000_000, np.random.RandomState(0))
    probs = policy(X)
    p1 = expit(X[:, :3] @ truth.outcome_coef.T + truth.outcome_intercept)
    M = np.zeros((2, 2, 2))
    for g in range(2):
        for a in range(2):
            M[g, a, 1] = np.mean((z == g) * probs[:, a] * p1[:, a])
            M[g, a, 0] = np.mean((z == g) * probs[:, a] * (1 - p1[:, a]))
    crit = Separation(weighting="group")
    exact = crit.deviation_from_marginal(M, problem)
    est = estimate_deviation(problem, data, crit, policy, n_boot=100, random_state=0)
    assert est.low <= exact <= est.high
    # Without propensities a logging model estimates them.
    bare = BanditData(data.X, data.z, data.a, data.y)
    with pytest.raises(FairdecideError, match="logging_model"):
        estimate_deviation(problem, bare, crit, policy, n_boot=10)
    from sklearn.linear_model import LogisticRegression

    est2 = estimate_deviation(problem, bare, crit, policy, n_boot=50,
                              logging_model=LogisticRegression(), random_state=0)
    assert abs(est2.value - exact) < 0.05


def test_bayes_factor_uses_only_the_compared_conditioning_values():
    # Actions independent of the group when y = 1, strongly dependent when y = 0.
    rng = np.random.default_rng(0)
    n = 6000
    z = rng.integers(2, size=n)
    y = rng.integers(2, size=n)
    p_act = np.where(y == 1, 0.5, np.where(z == 1, 0.9, 0.1))
    a = (rng.random(n) < p_act).astype(int)
    data = LoggedData(x=np.zeros(n, int), z=z, y=y, a=a)
    problem = DecisionProblem.classification(2)
    table = audit(data, problem, [Separation(outcomes=[1]), Separation(outcomes=[0])],
                  n_boot=20, n_draws=100, random_state=0).set_index("criterion")
    assert table.loc["separation[y=1], TV summed vs pooled", "p_independent"] > 0.5
    assert table.loc["separation[y=0], TV summed vs pooled", "p_independent"] < 1e-6


def _row_contributions(data, problem, policy):
    """Per-row contributions to P(z, a, y) (n, n_z * n_a * n_y), computed row by row."""
    a, y, z = data.action_codes(problem), data.outcome_codes(problem), data.z
    shape = (data.n_z, problem.n_actions, problem.n_outcomes)
    V = np.zeros((data.n, *shape))
    rows = np.arange(data.n)
    if policy == "logged":
        V[rows, z, a, y] = 1.0
    elif not problem.outcome_depends_on_action:
        probs = policy.proba(data.units())
        for act in range(problem.n_actions):
            V[rows, z, act, y] = probs[:, act]
    else:
        probs = policy.proba(data.units())
        V[rows, z, a, y] = probs[rows, a] / data.propensity
    return V.reshape(data.n, -1)


@pytest.mark.parametrize("case", ["logged", "prediction", "intervention"])
def test_count_bootstrap_is_the_row_bootstrap(case):
    from fairdecide.evaluation.deviation import marginal_atoms

    if case == "prediction":
        problem, world = make_tabular_problem(4, 2, 2, 3, random_state=0)
    else:
        problem, world = make_bail_problem()
    data = sample_logged_data(problem, world, 400, random_state=1)
    n_x = data.n_x
    policy = "logged" if case == "logged" else TabularPolicy(
        np.random.default_rng(0).dirichlet([1, 1], size=(n_x, 2)))
    atoms = marginal_atoms(data, problem, policy, None, 0)
    assert atoms.grouped and len(atoms.counts) < data.n / 4
    V = _row_contributions(data, problem, policy)
    # Same point estimate as the mean of the row contributions.
    np.testing.assert_allclose(atoms.marginal().ravel(), V.mean(axis=0), atol=1e-12)
    # Same bootstrap law: the row bootstrap of a mean has covariance Cov(v) / n exactly.
    boot = atoms.bootstrap(4000, np.random.RandomState(0)).reshape(4000, -1)
    np.testing.assert_allclose(boot.mean(axis=0), V.mean(axis=0),
                               atol=4 * np.sqrt(V.var(axis=0).max() / data.n / 4000))
    expected = np.cov(V.T, bias=True) / data.n
    diag = np.diag(expected)
    live = diag > 1e-9
    ratio = np.diag(np.cov(boot.T))[live] / diag[live]
    assert np.all(np.abs(ratio - 1) < 0.12), ratio
    np.testing.assert_allclose(np.cov(boot.T), expected, atol=0.12 * diag.max())


def test_rows_are_their_own_atoms_when_propensities_vary_within_cells():
    from fairdecide.evaluation.deviation import marginal_atoms

    problem, world = make_bail_problem()
    data = sample_logged_data(problem, world, 300, random_state=2)
    data.propensity = data.propensity * np.random.default_rng(0).uniform(0.9, 1.0, data.n)
    pi = TabularPolicy.constant(5, 2, [0.3, 0.7])
    atoms = marginal_atoms(data, problem, pi, None, 0)
    assert not atoms.grouped and len(atoms.counts) == data.n
    V = _row_contributions(data, problem, pi)
    np.testing.assert_allclose(atoms.marginal().ravel(), V.mean(axis=0), atol=1e-12)
    est = estimate_deviation(problem, data, Separation(), pi, n_boot=20, random_state=0)
    assert est.low <= est.value <= est.high


def test_deviation_is_bias_corrected_with_percentile_and_basic_intervals():
    problem, world = make_bail_problem()
    data = sample_logged_data(problem, world, 2000, random_state=3)
    est = estimate_deviation(problem, data, Separation(), n_boot=200, random_state=0)
    q_lo, q_hi = np.quantile(est.draws, [0.025, 0.975])
    assert est.plug_in == pytest.approx(
        Separation().deviation_from_marginal(
            np.histogramdd(np.c_[data.z, data.action_codes(problem),
                                 data.outcome_codes(problem)],
                           bins=(2, 2, 2))[0] / data.n, problem))
    assert est.bias == pytest.approx(est.draws.mean() - est.plug_in)
    assert est.value == pytest.approx(max(0.0, est.plug_in - est.bias))
    assert est.low == pytest.approx(max(0.0, min(q_lo, 2 * est.plug_in - q_hi)))
    assert est.high == pytest.approx(max(q_hi, 2 * est.plug_in - q_lo))
    # Near a zero deviation (coin-flip logging ignores the group) |.| biases the plug-in
    # upward, and the correction pulls it down.
    ind = estimate_deviation(problem, data, Independence(), n_boot=200, random_state=0)
    assert ind.bias > 0 and ind.value < ind.plug_in and ind.low == 0.0


def _deviation_runs(reps, n, candidate=False, n_boot=200):
    """Separation and sufficiency (clearly positive) estimated from ``reps`` samples of
    by-cell logs of the bail world, for the logged decisions or (``candidate``) a
    candidate by importance weighting: hits of the 95% interval and the errors of the
    plug-in and corrected estimates against the exact deviation."""
    problem, world = make_bail_problem()
    release = 0.44 + 0.03 * np.arange(world.n_x)[:, None] + np.zeros((1, world.n_z))
    logging = TabularPolicy(np.stack([1 - release, release], axis=-1))
    pi = TabularPolicy(np.random.default_rng(2).dirichlet([2, 2], size=(5, 2)))
    target = pi if candidate else logging
    crits = [Separation(), Sufficiency()]
    truth = {c.label: c.deviation(target, world, problem) for c in crits}
    hits = {c.label: [] for c in crits}
    errors = {c.label: [] for c in crits}
    for r in range(reps):
        data = sample_logged_data(problem, world, n, policy=logging, random_state=500 + r)
        for c in crits:
            est = estimate_deviation(problem, data, c, pi if candidate else "logged",
                                     n_boot=n_boot, random_state=r)
            hits[c.label].append(est.low <= truth[c.label] <= est.high)
            errors[c.label].append((est.plug_in - truth[c.label],
                                    est.value - truth[c.label]))
    return hits, errors


@pytest.mark.parametrize("candidate", [False, True])
def test_deviation_intervals_cover_quick(candidate):
    from scipy.stats import binom

    reps = 15
    hits, _ = _deviation_runs(reps, 2000, candidate)
    for name, h in hits.items():
        # Fewer hits than this has probability < 1% if the coverage is 85% or more.
        assert sum(h) >= binom.ppf(0.01, reps, 0.85), (name, sum(h))


def _zero_deviation_runs(reps, n, n_boot=200):
    """Independence of coin-flip logging on the bail world (exactly 0, the boundary):
    hits of the 95% interval, and plug-in and corrected estimates."""
    problem, world = make_bail_problem()
    hits, plug, corrected = [], [], []
    for r in range(reps):
        data = sample_logged_data(problem, world, n, random_state=900 + r)
        est = estimate_deviation(problem, data, Independence(), n_boot=n_boot,
                                 random_state=r)
        hits.append(est.low == 0.0)
        plug.append(est.plug_in)
        corrected.append(est.value)
    return hits, np.array(plug), np.array(corrected)


def test_zero_deviation_is_covered_and_less_biased_quick():
    from scipy.stats import binom

    reps = 10
    hits, plug, corrected = _zero_deviation_runs(reps, 2000, n_boot=100)
    assert sum(hits) >= binom.ppf(0.01, reps, 0.85)
    # (The percentile interval never reaches 0.) The correction lowers the estimates.
    assert corrected.mean() < 0.85 * plug.mean()


# ------------------------------------------------------------------ no problem needed
def test_audit_needs_no_utility_nor_kind():
    # The audit reads only the labels of a problem: without one (the data's labels), and
    # with problems that differ in utility and kind, the table is the same, number for
    # number; and it is the audit of the counts n(z, a, y) counted here by hand.
    problem, world = make_bail_problem()
    data = sample_logged_data(problem, world, 3000, random_state=5)
    kw = {"n_boot": 50, "n_draws": 100, "random_state": 0}
    bare = audit(data, **kw)
    assert list(bare["criterion"]) == [IND, SEP, SUF]
    other = DecisionProblem(-7 * problem.utility + 3, outcome_depends_on_action=False,
                            action_labels=problem.action_labels,
                            outcome_labels=problem.outcome_labels)
    for given in (problem, other):
        pd.testing.assert_frame_equal(audit(data, given, **kw), bare)
    frame = data.to_frame()
    counts = np.zeros((2, 2, 3))
    for (z, a, y), n in frame.groupby(["z", "a", "y"]).size().items():
        counts[data.group_labels.index(z), data.action_labels.index(a),
               data.outcome_labels.index(y)] = n
    plug = Independence().deviation_from_marginal(counts / counts.sum(), problem)
    assert bare.set_index("criterion").loc[IND, "plug_in"] == pytest.approx(plug)


def test_audit_without_a_problem_on_counts_and_numeric_features():
    problem, world = make_bail_problem()
    data = sample_logged_data(problem, world, 2000, random_state=6)
    kw = {"n_boot": 30, "n_draws": 50, "random_state": 1}
    pd.testing.assert_frame_equal(audit(LoggedCounts.from_data(data), **kw),
                                  audit(data, **kw))
    bproblem, bandit, _ = make_logged_bandit(2000, random_state=0)
    pd.testing.assert_frame_equal(audit(bandit, **kw), audit(bandit, bproblem, **kw))


def test_audit_without_a_problem_says_what_is_missing():
    one = LoggedData(x=[0, 0, 0, 0], z=["f", "m", "f", "m"], a=["flag"] * 4, y=[0, 1, 1, 0])
    with pytest.raises(FairdecideError, match=r"single logged action \('flag'\); give "
                       "problem="):
        audit(one)
    # with a problem naming the other action the same data can be audited
    table = audit(one, DecisionProblem(np.zeros((2, 2)), action_labels=["flag", "pass"]),
                  n_boot=10, n_draws=10, random_state=0)
    assert (table["plug_in"] == 0).all()
    no_actions = LoggedData(x=[0, 0], z=["f", "m"], y=[0, 1])
    with pytest.raises(FairdecideError, match="logged actions"):
        audit(no_actions)
    with pytest.raises(FairdecideError, match="data must be"):
        audit(np.zeros((3, 3)))
