"""``certify_policy``: what any given policy is guaranteed over a confidence set, against
the per-conditional worst case computed here from the set's intervals, and against the
maximin result's own guarantee."""

from __future__ import annotations

import numpy as np
import pytest

import fairdecide as fd
from fairdecide.datasets import make_tabular_problem, sample_logged_data
from tests.reference import separation_over_set_by_brute_force

SEP = fd.Separation(measure="max", reference="pairwise")


def _case(seed: int, population: bool):
    problem, truth = make_tabular_problem(4, 2, 2, 2, random_state=seed)
    data = sample_logged_data(problem, truth, 400, random_state=seed)
    cs = fd.ConfidenceSet.from_data(data, problem, delta=0.1,
                                    population=truth if population else None)
    return problem, truth, data, cs


def _worst_by_interval_ends(policy, cs, problem) -> float:
    """Population given, two outcomes: each cell's value is linear in its P(y = 1),
    which lies in [centre - r/2, centre + r/2] clipped to [0, 1]; the worst is at an end."""
    pi = policy.table  # (n_x, n_z, n_a)
    p1 = cs.ball_center[..., 1]
    lo, hi = np.clip(p1 - cs.radius / 2, 0, 1), np.clip(p1 + cs.radius / 2, 0, 1)
    U = problem.utility

    def value(p):
        theta = np.stack([1 - p, p], axis=-1)
        return np.einsum("xza,ay,xzy->xz", pi, U, theta)

    return float((cs.center.p_xz * np.minimum(value(lo), value(hi))).sum())


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_given_policys_certified_value_is_its_worst_at_the_interval_ends(seed):
    problem, truth, data, cs = _case(seed, population=True)
    plug = fd.optimize_policy(problem, fd.TabularWorld.from_data(data, problem),
                              fd.Independence(), epsilon=0.05)
    g = fd.certify_policy(problem, cs, plug.policy, fd.Independence())
    assert g.value == pytest.approx(_worst_by_interval_ends(plug.policy, cs, problem),
                                    abs=1e-10)
    # population given: independence does not read the outcome, the same in every world
    assert g.deviations["independence"] == pytest.approx(
        fd.Independence().deviation(plug.policy, truth, problem), abs=1e-9)
    # the maximin policy is certified at least as high as this one
    best = fd.optimize_policy(problem, cs, fd.Independence(), epsilon=0.05)
    assert best.guarantee.value >= g.value - 1e-9


def test_certify_policy_repeats_the_maximin_results_guarantee():
    """Both doors state the maximin policy's worst value at the interval ends and its
    largest separation gap over every vertex world of the set, each computed here."""
    problem, _truth, _data, cs = _case(3, population=True)
    res = fd.optimize_policy(problem, cs, SEP, epsilon=0.1)
    g = fd.certify_policy(problem, cs, res.policy, SEP)
    value = _worst_by_interval_ends(res.policy, cs, problem)
    gap = separation_over_set_by_brute_force(res.policy.table, cs)
    for guarantee in (g, res.guarantee):
        (bound,) = guarantee.deviations.values()
        assert guarantee.value == pytest.approx(value, abs=1e-9)
        assert bound == pytest.approx(gap, abs=1e-9)
    assert gap <= 0.1 + 1e-7


def test_what_the_set_does_not_certify_is_said_not_raised():
    problem, _truth, _data, cs = _case(4, population=False)
    always = fd.TabularPolicy.constant(cs.center.n_x, cs.center.n_z, [0.0, 1.0])
    kl, suff = fd.Separation(measure="kl"), fd.Sufficiency()
    g = fd.certify_policy(problem, cs, always, [kl, suff, fd.Separation()])
    assert g.deviations[kl] is None and "no bound over the set" in g.uncertified[kl]
    assert any("NOT certified" in s for s in g.sentences())
    # a constant policy meets separation in every world, exactly (its rates are its own)
    assert g.deviations[fd.Separation()] == pytest.approx(0.0, abs=1e-12)
    # and its sufficiency is bounded over the whole set for the given policy: at least
    # its deviation in every world whose conditionals sit at the ends of their intervals
    # (the population given by the centre)
    p1 = cs.ball_center[..., 1]
    lo, hi = np.clip(p1 - cs.radius / 2, 0, 1), np.clip(p1 + cs.radius / 2, 0, 1)
    rng = np.random.RandomState(0)
    for _ in range(40):
        p = np.where(rng.rand(*p1.shape) < 0.5, lo, hi)
        world = fd.TabularWorld(cs.center.p_xz, np.stack([1 - p, p], axis=-1))
        assert suff.deviation(always, world, problem) <= g.deviations[suff] + 1e-12
    # a constant policy's worst value: every conditional at its worst end, the
    # population at its worst too: below the estimate's
    assert g.value <= fd.expected_utility(problem, cs.center, always) + 1e-12


def test_certify_policy_names_a_wrong_argument():
    problem, truth, _data, cs = _case(5, population=True)
    always = fd.TabularPolicy.constant(cs.center.n_x, cs.center.n_z, [1.0, 0.0])
    with pytest.raises(fd.FairdecideError, match="confidence"):
        fd.certify_policy(problem, truth, always)
    with pytest.raises(fd.FairdecideError, match="policy"):
        fd.certify_policy(problem, cs, always.table)
    with pytest.raises(fd.FairdecideError, match="problem"):
        fd.certify_policy("accuracy", cs, always)
    three = fd.TabularPolicy.constant(cs.center.n_x, cs.center.n_z, [0.2, 0.3, 0.5])
    with pytest.raises(fd.FairdecideError, match="3 actions but the problem has 2"):
        fd.certify_policy(problem, cs, three)


def test_a_group_blind_certified_estimator_pools_the_cells_outcomes():
    rng = np.random.RandomState(1)
    X = np.round(rng.normal(size=(2000, 2))).clip(-1, 2)
    z = rng.randint(0, 3, 2000)
    y = (X[:, 0] + 0.5 * z + rng.normal(size=2000) > 0).astype(int)
    parity = fd.Independence(measure="max", reference="pairwise")
    clf = fd.FairPolicyClassifier(policy="tabular", criteria=[parity], epsilon=0.1,
                                  uncertainty="certified", group_blind=True
                                  ).fit(X, y, sensitive_features=z)
    problem = fd.DecisionProblem.classification(2)
    data = fd.LoggedData(x=[tuple(r) for r in X], z=z, y=y)
    pooled = fd.ConfidenceSet.from_data(data, problem, delta=0.1, pooled=True)
    direct = fd.optimize_policy(problem, pooled, parity, epsilon=0.1, group_blind=True)
    assert clf.result_.guarantee.value == pytest.approx(direct.guarantee.value, abs=1e-9)
    assert "pooled" in clf.result_.guarantee.method
    # separation reads each group's outcomes: the set is per cell and group
    sep = fd.FairPolicyClassifier(policy="tabular", criteria=[SEP], epsilon=0.5,
                                  uncertainty="certified", group_blind=True
                                  ).fit(X, y, sensitive_features=z)
    assert "pooled" not in sep.result_.guarantee.method
    assert sep.result_.guarantee.deviations["separation"] <= 0.5 + 1e-6


def test_a_certified_softmax_estimator_states_its_band_guarantee():
    rng = np.random.RandomState(2)
    n = 400
    X, z = rng.normal(size=(n, 2)), rng.randint(0, 2, n)
    X[:, 0] += 0.7 * z
    y = (X[:, 0] + rng.normal(size=n) > 0).astype(int)
    parity = fd.Independence(measure="max", reference="pairwise")
    clf = fd.FairPolicyClassifier(policy="softmax", criteria=[parity], epsilon=0.1,
                                  uncertainty="refit-band", n_scenarios=12,
                                  random_state=0).fit(X, y, sensitive_features=z)
    g = clf.result_.guarantee
    assert g.approximate and "bootstrap band over 12 refits" in g.method
    assert "about 90%" in g.sentences()[0]
    # independence reads no outcome: over the band (the training people, given) its
    # bound is the policy's own gap between the groups' rates on those people
    rate1 = clf.predict_proba(X, sensitive_features=z)[:, 1]
    gap = abs(rate1[z == 0].mean() - rate1[z == 1].mean())
    assert g.deviations["independence"] == pytest.approx(gap, abs=1e-6)
    assert 0.0 < g.value < 1.0
    with pytest.raises(fd.FairdecideError, match="n_scenarios >= 10"):
        fd.FairPolicyClassifier(policy="softmax", uncertainty="refit-band",
                                n_scenarios=4).fit(X, y, sensitive_features=z)
    with pytest.raises(fd.FairdecideError, match="'score' family"):
        fd.FairPolicyClassifier(policy="score", uncertainty="certified").fit(
            X, y, sensitive_features=z)
