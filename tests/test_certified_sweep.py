"""Certified means certified, at every door (issue 51): over a confidence set, every
result either carries a certified bound of each criterion within epsilon, or raised an
error naming what a set certifies.

The sweep crosses the policy family (tabular; softmax over the refits' band), the
criterion (the defaults Independence(), Separation(), Sufficiency(), and the largest
pairwise gaps), the kind of set (population estimated, given, pooled over the groups)
and the door (optimize_policy, FairPolicyClassifier, pareto_frontier). A bound is also
checked against the criterion's deviation in random worlds of the set, computed here
from the decision table of each world (not by the code that states the bound).
"""

from __future__ import annotations

import numpy as np
import pytest

import fairdecide as fd
from fairdecide.datasets import make_tabular_problem, sample_logged_data

EPS = 0.1
TOL = 1e-6
CRITERIA = {
    "independence": fd.Independence(),
    "separation": fd.Separation(),
    "sufficiency": fd.Sufficiency(),
    "independence gap": fd.Independence(measure="max", reference="pairwise"),
    "separation gap": fd.Separation(measure="max", reference="pairwise"),
}
#: The words of the refusal: it names the forms a set certifies.
REFUSAL = r"cannot be certified over this ConfidenceSet.*certifies independence"


def _set(kind: str, seed: int = 3):
    problem, truth = make_tabular_problem(3, 2, 2, 2, random_state=seed)
    data = sample_logged_data(problem, truth, 3000, random_state=seed)
    cs = fd.ConfidenceSet.from_data(data, problem, delta=0.1, pooled=kind == "pooled",
                                    population=truth if kind == "given" else None)
    return problem, cs


def _inside(h, r, rng):
    """A random distribution within L1 distance r of h (a point of the ball)."""
    q = rng.dirichlet(np.ones(len(h)))
    t = min(1.0, r / max(np.abs(q - h).sum(), 1e-300)) * rng.uniform()
    return (1 - t) * h + t * q


def _random_worlds(cs, n, rng):
    """Worlds of the set: the population and every outcome conditional inside its ball
    (a pooled set's cells share one conditional across their groups)."""
    n_x, n_z = cs.center.n_x, cs.center.n_z
    for _ in range(n):
        p_z = _inside(cs.center.p_z, cs.group_radius, rng)
        cond = np.stack([_inside(cs.center.p_x_given_z[:, z], cs.cell_radius[z], rng)
                         for z in range(n_z)], axis=1)
        p_y = np.stack([[_inside(cs.ball_center[x, z], cs.radius[x, z], rng)
                         for z in range(n_z)] for x in range(n_x)])
        if cs.pooled:
            p_y = np.repeat(p_y[:, :1], n_z, axis=1)
        world = fd.TabularWorld(cond * p_z, p_y)
        assert cs.contains(world)
        yield world


def _check(result, crit, cs, problem, rng):
    """The result's certified bound is within epsilon, at least the estimate's
    deviation, and at least the deviation in random worlds of the set."""
    (bound,) = result.guarantee.deviations.values()
    assert bound is not None and bound <= EPS + TOL
    assert result.deviations[crit.label] <= bound + TOL  # the centre is a world of it
    for world in _random_worlds(cs, 20, rng):
        assert crit.deviation(result.policy, world, problem) <= bound + TOL


@pytest.mark.parametrize("kind", ["estimated", "given", "pooled"])
@pytest.mark.parametrize("name", list(CRITERIA))
def test_optimize_policy_over_a_set_certifies_or_refuses(kind, name):
    problem, cs = _set(kind)
    crit = CRITERIA[name]
    blind = kind == "pooled"
    reads_outcome = name not in ("independence", "independence gap")
    if name == "sufficiency" or (blind and reads_outcome):
        match = "pooled=False" if blind and reads_outcome else REFUSAL
        with pytest.raises(fd.FairdecideError, match=match):
            fd.optimize_policy(problem, cs, crit, epsilon=EPS, group_blind=blind)
        return
    res = fd.optimize_policy(problem, cs, crit, epsilon=EPS, group_blind=blind)
    _check(res, crit, cs, problem, np.random.RandomState(0))


@pytest.mark.parametrize("kind", ["estimated", "given"])
@pytest.mark.parametrize("name", ["independence", "separation gap", "sufficiency"])
def test_pareto_frontier_over_a_set_certifies_every_point_or_refuses(kind, name):
    problem, cs = _set(kind)
    crit = CRITERIA[name]
    if name == "sufficiency":
        with pytest.raises(fd.FairdecideError, match=REFUSAL):
            fd.pareto_frontier(problem, cs, crit, n_points=3)
        return
    front = fd.pareto_frontier(problem, cs, crit, [0.02, EPS])
    assert (front["certified deviation"] <= front["epsilon"] + TOL).all()
    assert front.attrs["criterion"] == crit.label
    # the default tolerances run up to the unconstrained policy's certified bound
    top = fd.optimize_policy(problem, cs, crit, lam=0.0).guarantee.deviations[crit]
    default = fd.pareto_frontier(problem, cs, crit, n_points=2)
    assert default["epsilon"].iloc[-1] == pytest.approx(top)
    assert (default["certified deviation"] <= default["epsilon"] + TOL).all()


def _people(n, seed):
    rng = np.random.RandomState(seed)
    X = np.round(rng.normal(size=(n, 2))).clip(-1, 1)
    z = rng.randint(0, 2, n)
    y = (X[:, 0] + 0.4 * z + rng.normal(size=n) > 0).astype(int)
    return X, z, y


@pytest.mark.parametrize("blind", [False, True])
@pytest.mark.parametrize("name", list(CRITERIA))
def test_the_tabular_estimator_certifies_or_refuses(blind, name):
    X, z, y = _people(3000, 4)
    crit = CRITERIA[name]
    clf = fd.FairPolicyClassifier(policy="tabular", criteria=[crit], epsilon=EPS,
                                  uncertainty="certified", group_blind=blind)
    if name == "sufficiency":
        with pytest.raises(fd.FairdecideError, match=REFUSAL):
            clf.fit(X, y, sensitive_features=z)
        return
    clf.fit(X, y, sensitive_features=z)
    (bound,) = clf.result_.guarantee.deviations.values()
    assert bound is not None and bound <= EPS + TOL
    assert clf.result_.guarantee.price is not None


@pytest.mark.parametrize("name", ["independence gap", "separation gap", "separation"])
def test_the_softmax_estimator_certifies_over_its_band_or_refuses(name):
    rng = np.random.RandomState(2)
    n = 300
    X, z = rng.normal(size=(n, 2)), rng.randint(0, 2, n)
    X[:, 0] += 0.7 * z
    y = (X[:, 0] + rng.normal(size=n) > 0).astype(int)
    clf = fd.FairPolicyClassifier(policy="softmax", criteria=[CRITERIA[name]], epsilon=EPS,
                                  uncertainty="refit-band", n_scenarios=10, random_state=0)
    try:
        clf.fit(X, y, sensitive_features=z)
    except fd.NotCertifiedError as err:  # the maximin held epsilon in the refits only
        assert "not over their band" in str(err) and "policy='tabular'" in str(err)
        assert all(b is None or b > EPS for b in err.bounds.values())
        return
    (bound,) = clf.result_.guarantee.deviations.values()
    assert bound is not None and bound <= EPS + TOL


def test_the_issues_adult_case_is_certified_within_epsilon_and_priced(data_dir):
    """Issue 51, finding 2: FairPolicyClassifier(policy="tabular",
    uncertainty="certified", epsilon=0.05) on 10,000 Adult rows (sex routed, a Pipeline
    with OneHotEncoder) returned "optimal" with independence bounded by 1.159 over the
    set. Now the bound is the program's and within epsilon, and the price says the
    certified policy is estimated below the majority class."""
    from sklearn import config_context
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import OneHotEncoder

    from fairdecide.datasets import load_adult

    adult = load_adult(data_dir).dropna().reset_index(drop=True)
    rows = adult.iloc[np.random.RandomState(0).permutation(len(adult))[:10_000]]
    y = (rows["income"] == ">50K").to_numpy().astype(int)
    with config_context(enable_metadata_routing=True):
        clf = fd.FairPolicyClassifier(policy="tabular", uncertainty="certified",
                                      epsilon=0.05).set_fit_request(sensitive_features=True)
        pipe = Pipeline([("encode", ColumnTransformer([(
            "onehot", OneHotEncoder(handle_unknown="ignore", sparse_output=False),
            ["education", "marital_status", "relationship"])])), ("fair", clf)])
        with pytest.warns(fd.PriceWarning, match="below always 0's"):
            pipe.fit(rows, y, sensitive_features=rows["sex"].to_numpy())
    g = pipe[-1].result_.guarantee
    (bound,) = g.deviations.values()
    assert bound <= 0.05 + TOL
    majority = max(y.mean(), 1 - y.mean())
    assert g.price.constant == "always 0"
    assert g.price.constant_estimated == pytest.approx(majority, abs=1e-12)
    assert g.price.below_constant and g.price.estimated < majority
    assert any("WARNING: at the estimate this certified policy is worth less" in s
               for s in g.sentences())


@pytest.mark.parametrize("kind", ["estimated", "given"])
@pytest.mark.parametrize("name", ["independence", "separation", "separation gap"])
def test_penalised_and_slack_tradeoffs_over_a_set_read_the_certified_bounds(kind, name):
    # b19dcbc failed verification here ("solver value matches recomputation"): the
    # program's deviation variable bounds the criterion over the set, not at the centre
    problem, cs = _set(kind)
    crit = CRITERIA[name]
    lam = 0.3
    res = fd.optimize_policy(problem, cs, crit, lam=lam)
    (bound,) = res.guarantee.deviations.values()
    assert res.objective == pytest.approx((1 - lam) * res.guarantee.value - lam * bound,
                                          abs=1e-6)
    # no policy does better on the certified trade-off: not the constant rules, not the
    # plug-in policy of the same penalty (their certified values and bounds over the set)
    for a in range(problem.n_actions):
        const = fd.TabularPolicy.constant(cs.center.n_x, cs.center.n_z,
                                          np.eye(problem.n_actions)[a])
        g = fd.certify_policy(problem, cs, const, crit)
        (b,) = g.deviations.values()
        assert (1 - lam) * g.value - lam * b <= res.objective + 1e-6
    slack = fd.optimize_policy(problem, cs, crit, utility_slack=0.05)
    (b,) = slack.guarantee.deviations.values()
    assert slack.objective == pytest.approx(b, abs=1e-6)
    best = fd.optimize_policy(problem, cs).guarantee.value
    assert slack.guarantee.value >= best - 0.05 - 1e-6
