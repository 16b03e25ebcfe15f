"""``ConfidenceSet.from_refits``: the bootstrap band of a fitted outcome model over its
individuals (issue 42, item 1). The band's defining property is checked on the same
refits, regenerated here; the maximin optimum against an independent LP over each
individual's interval; an intervention against the closed-form best action."""

from __future__ import annotations

import numpy as np
import pytest

import fairdecide as fd
from fairdecide.models import IndividualOutcomeModel
from tests.reference import interval_maximin

PROBLEM = fd.DecisionProblem.classification(2)


def _model(seed: int, n: int = 200, intervention: bool = False):
    rng = np.random.RandomState(seed)
    X, z = rng.normal(size=(n, 2)), rng.randint(0, 2, n)
    if not intervention:
        y = (X[:, 0] + 0.5 * z + rng.normal(size=n) > 0).astype(int)
        return IndividualOutcomeModel().fit(X, z, y, PROBLEM), PROBLEM
    problem = fd.DecisionProblem(utility=[[0.0, 0.0], [-1.0, 2.0]],
                                 outcome_depends_on_action=True)
    a = rng.randint(0, 2, n)
    y = (X[:, 0] + a * X[:, 1] + rng.normal(size=n) > 0).astype(int)
    return IndividualOutcomeModel().fit(X, z, y, problem, a=a), problem


@pytest.mark.parametrize("seed", [0, 1])
def test_the_band_holds_one_minus_delta_of_the_refits_and_no_narrower_band_does(seed):
    model, _ = _model(seed)
    B, delta = 60, 0.1
    cs = fd.ConfidenceSet.from_refits(model, delta, n_refits=B, random_state=seed)
    hat = model.world().p_y
    refits = np.stack([w.p_y for w in model.bootstrap_worlds(B, seed)])
    r = cs.radius[np.arange(len(hat)), model.z_]
    d = np.abs(refits - hat).sum(axis=-1)  # (B, n)
    inside = np.all(d <= r + 1e-12, axis=1).sum()
    assert inside >= np.ceil((1 - delta) * B)
    assert np.all(d.max(axis=0) > 0)  # every individual moves in some refit
    assert np.all(d.mean(axis=0) > 0)
    # the same shape 1% narrower leaves out more than delta of the refits
    assert np.all(d <= 0.99 * r, axis=1).sum() < np.ceil((1 - delta) * B)


def test_the_maximin_over_the_band_equals_the_lp_over_each_individuals_interval():
    model, problem = _model(2, n=80)
    cs = fd.ConfidenceSet.from_refits(model, 0.2, n_refits=40, random_state=2)
    res = fd.optimize_policy(problem, cs)
    n = len(model.z_)
    own = (np.arange(n), model.z_)
    p1, r = cs.ball_center[own][:, 1], cs.radius[own]
    expected = interval_maximin(problem.utility, np.full(n, 1.0 / n),
                                np.clip(p1 - r / 2, 0, 1), np.clip(p1 + r / 2, 0, 1))
    assert res.guarantee.value == pytest.approx(expected, abs=1e-7)
    text = " ".join(res.guarantee.sentences())
    assert "about 80%" in text and "approximation" in text


def test_an_intervention_over_the_band_takes_each_individuals_best_worst_action():
    model, problem = _model(3, n=60, intervention=True)
    cs = fd.ConfidenceSet.from_refits(model, 0.2, n_refits=40, random_state=3)
    res = fd.optimize_policy(problem, cs)
    n = len(model.z_)
    own = (np.arange(n), model.z_)
    p1, r = cs.ball_center[own][..., 1], cs.radius[own]  # (n, n_a)
    lo, hi = np.clip(p1 - r / 2, 0, 1), np.clip(p1 + r / 2, 0, 1)
    U = problem.utility
    worst = np.minimum(U[:, 0] + (U[:, 1] - U[:, 0]) * lo,
                       U[:, 0] + (U[:, 1] - U[:, 0]) * hi)  # (n, n_a)
    assert res.guarantee.value == pytest.approx(worst.max(axis=1).mean(), abs=1e-9)


def test_from_refits_names_what_is_wrong():
    model, _ = _model(4, n=50)
    with pytest.raises(fd.FairdecideError, match="at least 10"):
        fd.ConfidenceSet.from_refits(model, 0.1, n_refits=5)
    with pytest.raises(fd.FairdecideError, match="fitted IndividualOutcomeModel"):
        fd.ConfidenceSet.from_refits(IndividualOutcomeModel())
    with pytest.raises(fd.FairdecideError, match="fitted IndividualOutcomeModel"):
        fd.ConfidenceSet.from_refits("model")


def test_refits_already_drawn_give_the_same_band():
    model, _problem = _model(6, n=60)
    drawn = model.bootstrap_worlds(20, 6)
    fresh = fd.ConfidenceSet.from_refits(model, 0.1, n_refits=20, random_state=6)
    reused = fd.ConfidenceSet.from_refits(model, 0.1, refits=drawn)
    assert np.array_equal(fresh.radius, reused.radius)
    assert "20 refits" in reused.method
    with pytest.raises(fd.FairdecideError, match="refits must be a list"):
        fd.ConfidenceSet.from_refits(model, 0.1, refits=[*drawn[:1], "world"])
    other, _ = _model(7, n=30)
    with pytest.raises(fd.FairdecideError, match="refits must be a list"):
        fd.ConfidenceSet.from_refits(model, 0.1, refits=other.bootstrap_worlds(20, 0))
