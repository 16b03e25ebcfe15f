"""The estimators' fit as strategies (issue 52, item 5): one strategy per (policy family,
uncertainty), chosen once, each declaring what it optimises over and what it
certifies; the declarations are checked against what a fit does."""

import numpy as np
import pytest

import fairdecide as fd
from fairdecide.estimators import _cells, _softmax
from fairdecide.estimators._fitting import (
    STRATEGIES,
    UNCERTAINTY,
    _one_each,
    strategy_for,
)

# what exists, written out here (not read from the code under test)
TAKES = {
    "softmax": ("plug-in", "mean", "worst", "refit-band"),
    "tabular": ("plug-in", "mean", "worst", "certified"),
    "score": ("plug-in", "mean", "worst"),
}
#: old names kept one release: the new one
RENAMED = {("softmax", "certified"): "refit-band"}


@pytest.mark.parametrize("family", sorted(TAKES))
@pytest.mark.parametrize("uncertainty", UNCERTAINTY)
def test_every_pair_maps_to_exactly_one_strategy_or_names_the_valid_ones(family,
                                                                         uncertainty):
    if (family, uncertainty) in RENAMED:
        new = RENAMED[family, uncertainty]
        with pytest.warns(DeprecationWarning, match=f"use uncertainty={new!r}"):
            s = strategy_for(family, uncertainty, intervention=False)
        assert s is STRATEGIES[family, new]
        return
    if uncertainty in TAKES[family]:
        s = strategy_for(family, uncertainty, intervention=False)
        assert s is STRATEGIES[family, uncertainty]
        assert (s.family, s.uncertainty) == (family, uncertainty)
        assert s.guarantee in (None, "exact", "approximate")
        assert s.world_kind and s.summary and s.certifies
        return
    with pytest.raises(fd.FairdecideError) as err:
        strategy_for(family, uncertainty, intervention=False)
    msg = str(err.value)
    assert f"the {family!r} family, which takes " in msg
    assert all(repr(u) in msg for u in TAKES[family])
    others = [f for f, takes in TAKES.items() if uncertainty in takes]
    assert all(f"policy={f!r}" in msg for f in others)


def test_the_strategies_are_the_pairs_and_the_values_are_uncertainty():
    assert set(STRATEGIES) == {(f, u) for f, takes in TAKES.items() for u in takes}
    assert set(UNCERTAINTY) == {u for takes in TAKES.values() for u in takes}
    with pytest.raises(RuntimeError, match="two strategies"):
        _one_each(STRATEGIES["score", "mean"], STRATEGIES["score", "mean"])


def test_an_unknown_value_and_a_score_intervention_are_refused_by_name():
    with pytest.raises(fd.FairdecideError, match="uncertainty must be one of"):
        strategy_for("tabular", "bayes", intervention=False)
    with pytest.raises(fd.FairdecideError, match="prediction problems"):
        strategy_for("score", "plug-in", intervention=True)
    assert strategy_for("tabular", "worst", intervention=True) is STRATEGIES[
        "tabular", "worst"]


def _people(n=240, seed=0):
    rng = np.random.RandomState(seed)
    z = rng.randint(2, size=n)
    X = np.c_[np.round(rng.normal(size=n) + z).clip(-1, 2), rng.normal(size=n)]
    X[:, 1] = np.round(X[:, 1]).clip(-1, 1)
    y = (X[:, 0] + rng.normal(size=n) > 0.5).astype(int)
    return X, y, z


@pytest.mark.filterwarnings("ignore:the certified policy's estimated")  # its price
@pytest.mark.parametrize("key", sorted(STRATEGIES), ids="-".join)
def test_a_fit_gives_what_its_strategy_declares(key, monkeypatch):
    """The world handed to optimize_policy is of the declared kind, and
    result_.guarantee is None, exact or approximate as declared."""
    family, uncertainty = key
    strategy = STRATEGIES[key]
    seen = []
    for module in (_softmax, _cells):
        real = module.optimize_policy

        def spy(problem, world, *args, _real=real, **kwargs):
            seen.append(type(world).__name__)
            return _real(problem, world, *args, **kwargs)

        monkeypatch.setattr(module, "optimize_policy", spy)
    X, y, z = _people()
    clf = fd.FairPolicyClassifier(policy=family, uncertainty=uncertainty, epsilon=0.3,
                                  n_scenarios=10, random_state=0)
    clf.fit(X, y, sensitive_features=z)
    assert seen == [strategy.world_kind]
    g = clf.result_.guarantee
    if strategy.guarantee is None:
        assert g is None
    else:
        assert g is not None and g.approximate == (strategy.guarantee == "approximate")
        assert all(b <= 0.3 + 1e-6 for b in g.deviations.values())


def test_certified_with_the_softmax_family_warns_and_fits_the_refit_band():
    """'certified' meant the softmax family's band until it was named 'refit-band'
    (the tabular family's 'certified' holds exactly over a confidence set): the old name
    works one release, with a DeprecationWarning naming the new one."""
    X, y, z = _people()
    params = dict(policy="softmax", epsilon=0.3, n_scenarios=10, random_state=0)
    with pytest.warns(DeprecationWarning, match="use uncertainty='refit-band'"):
        old = fd.FairPolicyClassifier(uncertainty="certified", **params).fit(
            X, y, sensitive_features=z)
    new = fd.FairPolicyClassifier(uncertainty="refit-band", **params).fit(
        X, y, sensitive_features=z)
    assert np.array_equal(old.predict_proba(X, sensitive_features=z),
                          new.predict_proba(X, sensitive_features=z))
    assert old.result_.guarantee.approximate
    assert old.result_.guarantee.value == new.result_.guarantee.value
