"""The score family returns the flattest of its optimal policies (estimators/_flatten.py):
the same group rates, hence the same utility and deviations, and the least spread
max - min of each group's rule, against rates and an LP computed here."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import linprog

import fairdecide as fd
from tests.test_score_family import FixedScore


def _data(n=6000, seed=0):
    """Two groups whose scores separate the outcome differently: equalised odds then
    needs a rule inside a group's ROC curve (a face of optima), demographic parity does
    not."""
    rng = np.random.RandomState(seed)
    z = rng.randint(2, size=n)
    X = np.c_[rng.normal(size=n) * (1 + 0.8 * z) + 0.3 * z, rng.normal(size=n)]
    y = (rng.random_sample(n) < 1 / (1 + np.exp(-2 * X[:, 0]))).astype(int)
    return X, y, z


def _fit(criteria, eps, X, y, z):
    return fd.FairPolicyClassifier(policy="score", outcome_model=FixedScore(), n_bins=40,
                                   criteria=criteria, epsilon=eps, random_state=0).fit(
        X, y, sensitive_features=z)


def _counts(clf, X, y, z):
    """n(bin, group, outcome) of the training rows, binned here from the known score."""
    s = 1 / (1 + np.exp(-2 * X[:, 0]))
    b = clf._rule.cells.codes(s[:, None], warn=False)
    n = np.zeros((clf.result_.policy.table.shape[0], 2, 2))
    np.add.at(n, (b, z, y), 1.0)
    return n


def _rates(table, n):
    """P(a = 1 | z, y) of a policy table over the counted rows."""
    return np.einsum("bzy,bz->zy", n, table[:, :, 1]) / n.sum(axis=0)


def _least_spread(n_g, rates_g):
    """min pi_top - pi_bottom over non-decreasing pi in [0, 1] with these rates, by
    scipy's linprog over dense rows written here."""
    B = len(n_g)
    c = np.zeros(B)
    c[-1], c[0] = 1.0, -1.0
    A_ub = np.zeros((B - 1, B))
    for i in range(B - 1):
        A_ub[i, i], A_ub[i, i + 1] = 1.0, -1.0
    A_eq = (n_g / n_g.sum(axis=0)).T
    res = linprog(c, A_ub=A_ub, b_ub=np.zeros(B - 1), A_eq=A_eq, b_eq=rates_g,
                  bounds=[(0, 1)] * B, method="highs")
    assert res.status == 0
    return res.fun


@pytest.mark.parametrize("eps", [0.0, 0.01, 0.05])
def test_equalized_odds_optimum_is_the_flattest_with_its_rates(eps):
    X, y, z = _data()
    clf = _fit("equalized_odds_difference", eps, X, y, z)
    res = clf.result_
    assert res.stats.get("flattened") is True
    table = res.policy.table
    n = _counts(clf, X, y, z)
    rates = _rates(table, n)
    # the criterion recomputed here from the rates: max over y of the groups' gap
    assert np.abs(rates[0] - rates[1]).max() <= eps + 1e-7
    # accuracy from the rates equals the reported utility, which is the LP optimum
    acc = (n[:, :, 1].sum(0) * rates[:, 1] + n[:, :, 0].sum(0) * (1 - rates[:, 0])).sum() \
        / n.sum()
    assert res.utility == pytest.approx(acc, abs=1e-9)
    vertex = fd.FairPolicyClassifier(
        policy="score", outcome_model=FixedScore(), n_bins=40, monotone=False,
        criteria="equalized_odds_difference", epsilon=eps, random_state=0).fit(
        X, y, sensitive_features=z).result_
    assert res.utility == pytest.approx(vertex.utility, abs=1e-9)  # the order costs nothing
    for g in (0, 1):
        rule = table[:, g, 1]
        assert (np.diff(rule) >= -1e-9).all()  # monotone in the score
        spread = rule.max() - rule.min()
        assert spread == pytest.approx(_least_spread(n[:, g], rates[g]), abs=1e-7)


def test_a_threshold_optimum_is_left_as_it_is():
    """Under demographic parity each group's optimum is a threshold on the score (a
    point of its ROC curve): no other monotone rule has its rates, so the flattest is
    the threshold itself, whose spread is 1."""
    X, y, z = _data(seed=1)
    clf = _fit("demographic_parity_difference", 0.02, X, y, z)
    table = clf.result_.policy.table
    n = _counts(clf, X, y, z)
    rates = _rates(table, n)
    for g in (0, 1):
        rule = table[:, g, 1]
        assert rule.max() - rule.min() == pytest.approx(1.0, abs=1e-9)
        assert _least_spread(n[:, g], rates[g]) == pytest.approx(1.0, abs=1e-7)
