"""Guarantees on new data: the deviation bound of evaluation.certify_held_out against
independent computations and by simulation, and FairPolicyClassifier(guarantee=)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from scipy.optimize import linprog

import fairdecide as fd
from fairdecide.criteria.bounds import knapsack as _knapsack
from fairdecide.estimators._guarantee import safety_split
from fairdecide.evaluation import HeldOutGuarantee, certify_held_out
from fairdecide.evaluation._bounds import kl_interval, n_statements
from fairdecide.evaluation.certify import bound_rows
from fairdecide.worlds.table import row_counts
from tests.reference import kl_interval_by_roots

IND = fd.Independence().label  # the criterion's name with its measure
SEP = fd.Separation().label  # the criterion's name with its measure

CLS2 = fd.DecisionProblem.classification(2)


# ---------------------------------------------------------------------- the intervals
def test_kl_interval_matches_the_roots_of_the_divergence():
    rng = np.random.RandomState(0)
    p = np.r_[rng.uniform(size=30), 0.0, 1.0, 0.5]
    n = np.r_[rng.randint(1, 2000, size=30), 50, 50, 1]
    level = np.log(2 * 6 / 0.05)
    low, high = kl_interval(p, n, level)
    for i in range(len(p)):
        lo, hi = kl_interval_by_roots(p[i], n[i], level)
        # the same interval, never narrower (the bisection keeps the outer end)
        assert lo - 1e-12 <= low[i] <= lo + 1e-12 or low[i] == 0.0 == lo
        assert hi - 1e-12 <= high[i] <= hi + 1e-12
        assert low[i] <= lo + 1e-15 and high[i] >= hi - 1e-15
    # the closed form at a mean of 0: n log(1 / (1 - q)) = level
    assert high[30] == pytest.approx(1 - np.exp(-level / 50), abs=1e-12)
    # never wider than Hoeffding's additive interval
    r = np.sqrt(level / (2 * n))
    assert np.all(high <= np.minimum(p + r, 1) + 1e-12)
    assert np.all(low >= np.maximum(p - r, 0) - 1e-12)


def test_kl_interval_without_rows_is_everything():
    low, high = kl_interval(np.array([0.3, 0.5]), np.array([0, 0]), 3.0)
    assert low.tolist() == [0.0, 0.0] and high.tolist() == [1.0, 1.0]


@pytest.mark.parametrize("delta", [0.2, 0.05 / 4, 0.05 / 21])
def test_kl_interval_misses_with_probability_at_most_delta_exactly(delta):
    """The interval at level log(2 / delta) around the mean of n Bernoulli(p) draws
    misses p with probability at most delta (Chernoff's bound on each side). The miss
    probability is summed exactly over the binomial's outcomes, so the comparison has no
    sampling error; at the levels the bound uses (delta split over 4 and 21 statements)
    it is 0.2 to 0.45 of delta on this grid, and the interval at half the level misses
    far more than delta, which the same comparison catches."""
    level = np.log(2 / delta)
    grid = [(n, p) for n in (1, 5, 20, 50, 200, 1000) for p in (0.01, 0.05, 0.2, 0.5, 0.8)]
    too_narrow = []
    for n, p in grid:
        k = np.arange(n + 1)
        pmf = stats.binom.pmf(k, n, p)
        low, high = kl_interval(k / n, np.full(n + 1, n), level)
        assert pmf[(p < low) | (p > high)].sum() <= delta + 1e-12, (n, p)
        low, high = kl_interval(k / n, np.full(n + 1, n), level / 2)
        too_narrow.append(pmf[(p < low) | (p > high)].sum())
    if delta < 0.05:
        assert max(too_narrow) > 2 * delta


def test_knapsack_matches_a_linear_program():
    rng = np.random.RandomState(1)
    n_z, n_c, n_t = 4, 2, 3
    gap = rng.uniform(size=(n_z, n_z, n_c, n_t))
    cap = rng.uniform(0.05, 0.6, size=(n_z, n_c))
    total = rng.uniform(0.3, 1.0, size=(n_z, n_c))
    got = _knapsack(gap, cap, total)
    for z in range(n_z):
        others = [o for o in range(n_z) if o != z]
        for c in range(n_c):
            for t in range(n_t):
                lp = linprog(-gap[z, others, c, t], A_ub=np.ones((1, n_z - 1)),
                             b_ub=[total[z, c]], bounds=[(0, cap[o, c]) for o in others],
                             method="highs")
                assert got[z, c, t] == pytest.approx(-lp.fun, abs=1e-9)


def test_statements_are_counted_per_compared_value():
    # two groups, two actions: per value 2 conditionals + 1 difference + 1 weight
    assert n_statements([fd.Independence()], CLS2, 2) == 4
    assert n_statements([fd.Independence(), fd.Independence(measure="max")], CLS2, 2) == 4
    assert n_statements([fd.Separation()], CLS2, 2) == 8
    # three groups and three actions: per value (3 + 3) * 3 + 3 = 21; shared values once
    cls3 = fd.DecisionProblem.classification(3)
    crits = [fd.Separation(), fd.Separation(outcomes=[1])]
    assert n_statements(crits, cls3, 3) == 3 * 21
    assert n_statements([fd.Separation(outcomes=[1])], cls3, 3) == 21
    assert n_statements([fd.Independence()], CLS2, 1) == 0
    # comparing two groups directly needs no weights
    pairwise = fd.Separation(reference="pairwise")
    assert n_statements([pairwise], CLS2, 2) == 6
    assert n_statements([pairwise], cls3, 3) == 3 * 18
    assert n_statements([pairwise, fd.Separation()], cls3, 3) == 3 * 21


def test_two_group_bound_by_hand():
    """Independence with two groups: every term is the knapsack of one other group,
    min(upper w_z', 1 - lower w_z) g, with g the smaller of the intervals' widest
    difference and Hoeffding's bound of the difference, summed over both actions
    (tv) or the largest (max)."""
    rng = np.random.RandomState(2)
    n = 400
    z = (rng.uniform(size=n) < 0.3).astype(int)
    y = rng.randint(2, size=n)
    p1 = np.clip(0.4 + 0.2 * z + 0.3 * rng.uniform(-1, 1, size=n), 0, 1)
    rows = np.c_[1 - p1, p1]
    delta = 0.1
    level = np.log(2 * 4 / delta)
    n_z = np.bincount(z)
    rate = np.array([p1[z == g].mean() for g in (0, 1)])
    lo, hi = np.array([kl_interval_by_roots(rate[g], n_z[g], level) for g in (0, 1)]).T
    w_lo, w_hi = kl_interval_by_roots(n_z[0] / n, n, level)  # the share of group 0
    g = min(max(hi[0] - lo[1], hi[1] - lo[0]),
            abs(rate[0] - rate[1]) + np.sqrt(level * (1 / n_z[0] + 1 / n_z[1]) / 2), 1.0)
    upper_w = [w_hi, 1 - w_lo]
    lower_w = [w_lo, 1 - w_hi]
    terms = [min(upper_w[1 - k], 1 - lower_w[k]) * g for k in (0, 1)]
    cert = bound_rows([fd.Independence(), fd.Independence(measure="max")], CLS2, rows, y, z,
                      2, delta, 1.0)
    assert cert.bounds[IND] == pytest.approx(2 * sum(terms), abs=1e-9)
    max_gap = fd.Independence(measure="max").label
    assert cert.bounds[max_gap] == pytest.approx(max(terms), abs=1e-9)
    # the pairwise reference reads g alone, at the level of 3 statements (no weight)
    level = np.log(2 * 3 / delta)
    lo, hi = np.array([kl_interval_by_roots(rate[g], n_z[g], level) for g in (0, 1)]).T
    g = min(max(hi[0] - lo[1], hi[1] - lo[0]),
            abs(rate[0] - rate[1]) + np.sqrt(level * (1 / n_z[0] + 1 / n_z[1]) / 2), 1.0)
    pair = bound_rows([fd.Independence(reference="pairwise"),
                       fd.Independence(measure="max", reference="pairwise")], CLS2, rows, y,
                      z, 2, delta, 1.0)
    assert list(pair.bounds.values()) == pytest.approx([2 * g, g], abs=1e-9)
    # and the held-out deviations are the library's own, from the rows' joint
    M = row_counts(z, rows, y, 2, 2) / n
    assert cert.deviations[IND] == pytest.approx(
        fd.Independence().deviation_from_marginal(M, CLS2), abs=1e-12)


# ---------------------------------------------------------------------- coverage
def _population(n_groups, n_actions, seed):
    """A population over x in 0..4, groups z, outcomes y in {0, 1}, and a fractional
    policy pi(a | x, z): P(x, z, y) and pi, so that every conditional is exact."""
    rng = np.random.RandomState(seed)
    p_xzy = rng.dirichlet(np.ones(5 * n_groups * 2) * 3).reshape(5, n_groups, 2)
    policy = rng.dirichlet(np.ones(n_actions), size=(5, n_groups))
    return p_xzy, policy


def _draws_failing(crits, p_xzy, policy, n, delta, n_draws, seed, statistic="bound"):
    """How many of n_draws samples of n rows give some bound below its population
    deviation (or, for ``statistic="plug-in"``, some held-out deviation below it)."""
    _, n_z, n_y = p_xzy.shape
    n_a = policy.shape[-1]
    problem = fd.DecisionProblem.classification(n_a) if n_a == n_y else fd.DecisionProblem(
        np.zeros((n_a, n_y)), outcome_depends_on_action=False)
    M = np.einsum("xzy,xza->zay", p_xzy, policy)
    truth = [c.deviation_from_marginal(M, problem) for c in crits]
    assert min(truth) > 0.02  # a population where the bound has something to cover
    rng = np.random.RandomState(seed)
    flat = p_xzy.reshape(-1)
    failing = 0
    for _ in range(n_draws):
        cell = rng.choice(flat.size, size=n, p=flat)
        x, z, y = np.unravel_index(cell, p_xzy.shape)
        cert = bound_rows(crits, problem, policy[x, z], y, z, n_z, delta, 1.0)
        got = cert.bounds if statistic == "bound" else cert.deviations
        failing += any(v < t for v, t in zip(got.values(), truth, strict=True))
    return failing


#: The guarantee's delta in the coverage tests (FairPolicyClassifier's examples and
#: bench_guarantee use 0.05) and the probability, if the failure share were exactly
#: delta, that the count of failures exceeds the allowance binom.isf(_TAIL, n, delta)
#: (31 of 300 at 0.05).
DELTA = 0.05
_TAIL = 1e-4

#: The first case in the default run; the other two (3-5 s each) in the slow run.
COVERAGE = [
    ([fd.Independence(), fd.Independence(measure="max")], 3, 2),
    pytest.param([fd.Separation(weighting="group"), fd.Separation(measure="max", outcomes=[1])],
                 2, 3, marks=pytest.mark.slow),
    pytest.param([fd.Independence(reference="pairwise"),
                  fd.Separation(measure="max", reference="pairwise")], 3, 3,
                 marks=pytest.mark.slow),
]


@pytest.mark.parametrize(("crits", "n_groups", "n_actions"), COVERAGE,
                         ids=["independence-3-groups", "separation-3-actions", "pairwise"])
def test_bounds_cover_the_population_deviation(crits, n_groups, n_actions):
    """Over independent samples the bounds fall below the population deviation in at
    most a share delta of them: the count of failures is compared with the allowance of
    the binomial (n_draws, delta) law, exceeded with probability 1e-4 (31 of 300 at
    0.05). This checks the claim, not how tight the bound is: the bound is a union over
    its statements of intervals each at delta / K, and no failure occurs here (a count of
    0, against 15 expected were the share exactly delta). The sharp checks are the exact
    interval test above, which would catch an interval at half its level, and the
    plug-in check below, which shows this comparison catches a statistic that does not
    cover."""
    p_xzy, policy = _population(n_groups, n_actions, seed=3)
    n_draws = 300
    failing = _draws_failing(crits, p_xzy, policy, 200, DELTA, n_draws, seed=4)
    assert failing <= stats.binom.isf(_TAIL, n_draws, DELTA)


def test_the_coverage_check_catches_a_statistic_that_does_not_cover():
    p_xzy, policy = _population(3, 2, seed=3)
    crits = COVERAGE[0][0]
    failing = _draws_failing(crits, p_xzy, policy, 200, DELTA, 100, seed=5,
                             statistic="plug-in")
    assert failing > stats.binom.isf(_TAIL, 100, DELTA)


@settings(max_examples=40, deadline=None, derandomize=True)
@given(st.integers(0, 10_000), st.integers(2, 4), st.sampled_from(["tv", "max"]),
       st.sampled_from(["uniform", "group"]))
def test_bound_is_at_least_the_held_out_deviation_and_grows_as_delta_falls(
        seed, n_groups, measure, weighting):
    rng = np.random.RandomState(seed)
    n = rng.randint(n_groups, 300)
    z = rng.randint(n_groups, size=n)
    y = rng.randint(2, size=n)
    rows = rng.dirichlet(np.ones(2), size=n)
    crits = [fd.Independence(measure=measure, weighting=weighting),
             fd.Separation(measure=measure, weighting=weighting),
             fd.Separation(measure=measure, reference="pairwise")]
    loose = bound_rows(crits, CLS2, rows, y, z, n_groups, 0.5, 1.0)
    tight = bound_rows(crits, CLS2, rows, y, z, n_groups, 0.01, 1.0)
    for name in loose.bounds:
        assert loose.bounds[name] >= loose.deviations[name] - 1e-12
        assert tight.bounds[name] >= loose.bounds[name] - 1e-12
        assert np.isfinite(tight.bounds[name])


# ---------------------------------------------------------------------- the classifier
def _data(n, seed=0):
    rng = np.random.RandomState(seed)
    z = rng.randint(2, size=n)
    X = np.c_[rng.normal(size=n) + z, rng.normal(size=n)]
    y = (X[:, 0] + rng.normal(size=n) > 0.5).astype(int)
    return X, y, z


def test_certified_policy_is_the_candidate_fit_and_its_certificate_is_reproducible():
    X, y, z = _data(6000)
    clf = fd.FairPolicyClassifier(policy="score", epsilon=0.3, guarantee=0.05,
                                  random_state=0).fit(X, y, sensitive_features=z)
    cert = clf.certificate_
    assert isinstance(cert, HeldOutGuarantee) and cert.certified
    assert cert.bounds["independence"] <= 0.3
    assert cert.delta == 0.05 and cert.epsilon == 0.3
    # the split: 40% of each group held out, seeded by random_state
    cand, safe = safety_split(z, 0.4, np.random.RandomState(0))
    assert cert.n_rows == len(safe)
    for g in (0, 1):
        assert np.sum(z[safe] == g) == round(0.4 * np.sum(z == g))
    # the policy is a plain fit on the candidate rows at the tightened tolerance, at
    # which the constraint binds (the training deviation is that tolerance)
    tight = clf.result_.deviations["independence"]
    assert 0.01 < tight < 0.3 - cert.bounds["independence"] + cert.deviations["independence"]
    plain = fd.FairPolicyClassifier(policy="score", epsilon=tight, random_state=0).fit(
        X[cand], y[cand], sensitive_features=z[cand])
    np.testing.assert_allclose(clf.predict_proba(X, sensitive_features=z),
                               plain.predict_proba(X, sensitive_features=z), atol=1e-9)
    # the certificate: the safety rows' bound, the group weights from all rows
    labels = np.zeros((2, 2))
    np.add.at(labels, (z, y), 1.0)
    again = bound_rows([fd.Independence()], clf.problem_,
                       clf.predict_proba(X[safe], sensitive_features=z[safe]), y[safe],
                       z[safe], 2, 0.05, 0.3, labels=labels)
    assert again == cert
    assert "certified at epsilon = 0.3" in cert.summary()


def test_the_softmax_family_is_certified_on_its_held_out_rows():
    X, y, z = _data(4000, seed=3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        clf = fd.FairPolicyClassifier(policy="softmax", epsilon=0.35, guarantee=0.1,
                                      max_iter=100, random_state=0).fit(
            X, y, sensitive_features=z)
    assert clf.certificate_.certified


def test_held_out_rows_in_cells_the_candidate_rows_missed_are_no_warning():
    """The tabular family meets cells on the held-out rows that its candidate rows never
    reached (six features, three bins each): they take the group's average rule,
    silently in fit (the held-out rows are the estimator's own, not the user's new
    data), as predict_proba says on the same rows. The many cells fit noise, so only a
    wide tolerance is certified."""
    rng = np.random.RandomState(3)
    z = rng.randint(2, size=4000)
    X = np.c_[rng.normal(size=4000) + z, rng.normal(size=(4000, 5))]
    y = (X[:, 0] + rng.normal(size=4000) > 0.5).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        clf = fd.FairPolicyClassifier(policy="tabular", n_bins=3, epsilon=1.2,
                                      guarantee=0.1, random_state=0).fit(
            X, y, sensitive_features=z)
    assert clf.certificate_.certified
    _, safe = safety_split(z, 0.4, np.random.RandomState(0))
    with pytest.warns(UserWarning, match="never seen in training"):
        clf.predict_proba(X[safe], sensitive_features=z[safe])


def test_without_guarantee_there_is_no_certificate():
    X, y, z = _data(300)
    clf = fd.FairPolicyClassifier(policy="score", random_state=0).fit(
        X, y, sensitive_features=z)
    assert clf.certificate_ is None


def test_a_failed_safety_test_says_no_policy_certified():
    X, y, z = _data(2000)
    clf = fd.FairPolicyClassifier(policy="score", epsilon=0.3, guarantee=0.05,
                                  random_state=0)
    with pytest.raises(fd.NotCertifiedError, match="no policy certified") as info:
        clf.fit(X, y, sensitive_features=z)
    err = info.value
    assert isinstance(err, fd.FairdecideError)
    assert err.bounds["independence"] > 0.3
    assert err.smallest_epsilon == max(err.bounds.values())
    assert not err.certificate.certified
    assert f"{err.smallest_epsilon:.4g}" in str(err)
    assert not hasattr(clf, "result_")  # nothing unsafe is left on the estimator


def test_a_tolerance_below_the_bounds_width_is_refused_before_fitting():
    X, y, z = _data(300)
    with pytest.raises(fd.NotCertifiedError, match="no policy certified") as info:
        fd.FairPolicyClassifier(policy="score", epsilon=0.05, guarantee=0.05,
                                random_state=0).fit(X, y, sensitive_features=z)
    assert info.value.bounds == {} and info.value.certificate is None
    assert info.value.smallest_epsilon > 0.05


@pytest.mark.parametrize("bad", [0, 1, 1.5, -0.1, float("nan"), float("inf"), "0.05", True,
                                 [0.05]])
def test_guarantee_must_be_a_probability(bad):
    X, y, z = _data(100)
    with pytest.raises(fd.FairdecideError, match="guarantee"):
        fd.FairPolicyClassifier(guarantee=bad).fit(X, y, sensitive_features=z)


@pytest.mark.parametrize("bad", [0, 1, float("nan"), "0.4"])
def test_safety_fraction_must_be_a_share(bad):
    X, y, z = _data(100)
    with pytest.raises(fd.FairdecideError, match="safety_fraction"):
        fd.FairPolicyClassifier(guarantee=0.05, safety_fraction=bad).fit(
            X, y, sensitive_features=z)


@pytest.mark.parametrize(("params", "match"), [
    ({"criteria": "sufficiency"}, "not supported with a guarantee"),
    ({"criteria": fd.Lipschitz(constant=1.0)}, "Lipschitz is not supported"),
    ({"criteria": fd.Independence(measure="kl")}, "measure='kl'"),
    ({"criteria": None}, "criteria is empty"),
    ({"lam": 0.5}, "one epsilon"),
    ({"utility_slack": 0.01}, "one epsilon"),
    ({"epsilon": None, "lam": 0.5}, "one epsilon"),
    ({"epsilon": -0.1}, "epsilon"),
])
def test_unsupported_settings_are_named(params, match):
    X, y, z = _data(100)
    with pytest.raises(fd.FairdecideError, match=match):
        fd.FairPolicyClassifier(guarantee=0.05, **params).fit(X, y, sensitive_features=z)


def test_sample_weight_is_refused_with_a_guarantee():
    X, y, z = _data(100)
    with pytest.raises(fd.FairdecideError, match="sample_weight"):
        fd.FairPolicyClassifier(guarantee=0.05).fit(X, y, sensitive_features=z,
                                                     sample_weight=np.ones(100))


# ---------------------------------------------------------------------- certify
def test_certify_bounds_a_fitted_classifier_on_held_out_rows():
    X, y, z = _data(4000)
    clf = fd.FairPolicyClassifier(policy="score", criteria="separation", epsilon=0.05,
                                  random_state=0).fit(X[:2000], y[:2000],
                                                      sensitive_features=z[:2000])
    cert = certify_held_out(clf, X[2000:], y[2000:], sensitive_features=z[2000:], epsilon=0.05)
    assert list(cert.bounds) == [SEP]  # the estimator's own criteria
    assert not cert.certified and cert.smallest_epsilon == cert.bounds["separation"]
    rows = clf.predict_proba(X[2000:], sensitive_features=z[2000:])
    assert cert == bound_rows([fd.Separation()], clf.problem_, rows, y[2000:], z[2000:], 2,
                              0.05, 0.05)
    # criteria named, and the groups read from the estimator's column of X
    import pandas as pd

    frame = pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "g": z})
    clf2 = fd.FairPolicyClassifier(policy="score", group_column="g",
                                   random_state=0).fit(frame[:2000], y[:2000])
    cert2 = certify_held_out(clf2, frame[2000:], y[2000:], epsilon=1.5,
                    criteria=["independence", "separation"], delta=0.1)
    assert cert2.certified and set(cert2.bounds) == {IND, SEP}


def test_certify_names_what_is_wrong():
    X, y, z = _data(200)
    with pytest.raises(fd.FairdecideError, match=r"estimator .* \(fit it first"):
        certify_held_out(fd.FairPolicyClassifier(), X, y, sensitive_features=z, epsilon=0.1)
    clf = fd.FairPolicyClassifier(policy="score", random_state=0).fit(
        X, y, sensitive_features=z)
    with pytest.raises(fd.FairdecideError, match="sensitive_features"):
        certify_held_out(clf, X, y, epsilon=0.1)
    with pytest.raises(fd.FairdecideError, match="delta"):
        certify_held_out(clf, X, y, sensitive_features=z, epsilon=0.1, delta=1.0)
    with pytest.raises(fd.FairdecideError, match="sufficiency"):
        certify_held_out(clf, X, y, sensitive_features=z, epsilon=0.1, criteria="sufficiency")
