"""FairPolicyClassifier(policy="score"): the fair policy over a scorer's bins and the group,
one linear program, against an LP written here."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest
from scipy.optimize import linprog
from sklearn.base import BaseEstimator, ClassifierMixin

import fairdecide as fd


class FixedScore(ClassifierMixin, BaseEstimator):
    """P(y = 1 | x) = sigmoid(2 x_0), whatever it is fitted on: the cross-fitted scores are
    then known to the test."""

    def fit(self, X, y, sample_weight=None):
        self.classes_ = np.unique(y)
        return self

    def predict_proba(self, X):
        p = 1 / (1 + np.exp(-2 * np.asarray(X)[:, 0]))
        return np.column_stack([1 - p, p])


def _data(n=2000, seed=0):
    rng = np.random.RandomState(seed)
    z = rng.randint(2, size=n)
    X = np.c_[rng.normal(size=n) + 0.8 * z, rng.normal(size=n)]
    y = (rng.random_sample(n) < 1 / (1 + np.exp(-2 * X[:, 0]))).astype(int)
    return X, y, z


def _lp_optimum(b, z, y, eps, monotone=False):
    """max accuracy of pi(1 | bin, group) s.t. sum_z sum_a |P(a | z) - P(a)| <= eps, from
    the counts, by scipy's linprog; ``monotone``: and pi(1 | bin, g) <= pi(1 | bin', g)
    for the next bin' seen with group g."""
    B, Z = b.max() + 1, z.max() + 1
    n = len(b)
    n_bz, n_bzy = np.zeros((B, Z)), np.zeros((B, Z, 2))
    np.add.at(n_bz, (b, z), 1)
    np.add.at(n_bzy, (b, z, y), 1)
    cells = [(i, g) for i in range(B) for g in range(Z) if n_bz[i, g] > 0]
    m = len(cells)  # variables: q_c = pi(1 | c), then t_(z, a) for the absolute values
    c = np.zeros(m + 2 * Z)
    for k, (i, g) in enumerate(cells):  # accuracy: q n(c, 1) + (1 - q) n(c, 0)
        c[k] = -(n_bzy[i, g, 1] - n_bzy[i, g, 0]) / n
    const = sum(n_bzy[i, g, 0] for i, g in cells) / n
    n_z = n_bz.sum(axis=0)
    A, rhs = [], []
    for g in range(Z):
        for a_sign, t_col in ((1, m + 2 * g), (-1, m + 2 * g + 1)):  # a = 1, a = 0
            row = np.zeros(m + 2 * Z)
            for k, (i, h) in enumerate(cells):  # P(1 | z=g) - P(1)
                row[k] = (n_bz[i, h] / n_z[g] if h == g else 0.0) - n_bz[i, h] / n
            for s in (1, -1):  # |a_sign row| <= t
                r = s * a_sign * row.copy()
                r[t_col] = -1
                A.append(r)
                rhs.append(0.0)
    tot = np.zeros(m + 2 * Z)
    tot[m:] = 1
    A.append(tot)
    rhs.append(eps)
    for g in range(Z) if monotone else ():
        ks = [k for k, (_, h) in enumerate(cells) if h == g]  # in bin order
        for lo, hi in itertools.pairwise(ks):
            row = np.zeros(m + 2 * Z)
            row[lo], row[hi] = 1.0, -1.0
            A.append(row)
            rhs.append(0.0)
    res = linprog(c, A_ub=np.array(A), b_ub=rhs, bounds=[(0, 1)] * m + [(0, None)] * 2 * Z,
                  method="highs")
    return const - res.fun


def test_the_score_family_is_the_lp_over_bins_and_groups():
    X, y, z = _data()
    eps = 0.02
    clf = fd.FairPolicyClassifier(policy="score", outcome_model=FixedScore(), n_bins=10,
                                  epsilon=eps, random_state=0).fit(X, y, sensitive_features=z)
    assert clf.result_.status == "optimal"
    # the bins: ten quantile bins of the (known) scores
    s = 1 / (1 + np.exp(-2 * X[:, 0]))
    edges = np.unique(np.quantile(s, np.linspace(0, 1, 11)[1:-1]))
    b = np.searchsorted(edges, s, side="right")
    assert clf.result_.utility == pytest.approx(_lp_optimum(b, z, y, eps), abs=1e-9)
    # a new row gets its bin's and group's rule: rows of one bin and group agree
    p = clf.predict_proba(X, sensitive_features=z)
    for key in {(bi, g) for bi, g in zip(b, z, strict=True)}:
        rows = (b == key[0]) & (z == key[1])
        assert np.ptp(p[rows, 1]) < 1e-12
    # the fair optimum is below the unconstrained one, which is the LP with eps = inf
    free = fd.FairPolicyClassifier(policy="score", outcome_model=FixedScore(), n_bins=10,
                                   criteria=None, random_state=0).fit(
        X, y, sensitive_features=z)
    assert free.result_.utility == pytest.approx(_lp_optimum(b, z, y, 10.0), abs=1e-9)
    assert free.result_.utility > clf.result_.utility


def test_monotone_holds_each_groups_rule_in_score_order():
    """On few rows the bins' outcome rates are noisy and the free LP follows them out of
    score order; monotone=True is the LP with order rows, and its rule rises with the
    score in each group."""
    X, y, z = _data(n=240, seed=4)
    s = 1 / (1 + np.exp(-2 * X[:, 0]))
    edges = np.unique(np.quantile(s, np.linspace(0, 1, 21)[1:-1]))
    b = np.searchsorted(edges, s, side="right")
    fits = {mono: fd.FairPolicyClassifier(
        policy="score", outcome_model=FixedScore(), n_bins=20, epsilon=0.02,
        monotone=mono, random_state=0).fit(X, y, sensitive_features=z) for mono in (True, False)}
    for mono, clf in fits.items():
        assert clf.result_.status == "optimal"
        assert clf.result_.utility == pytest.approx(_lp_optimum(b, z, y, 0.02, mono), abs=1e-9)
    assert fits[True].result_.utility < fits[False].result_.utility - 1e-6  # binds here
    assert fits[True].result_.deviations["score order"] <= 1e-9
    grid = np.c_[np.linspace(-3, 4, 200), np.zeros(200)]
    for g in (0, 1):
        p = fits[True].predict_proba(grid, sensitive_features=np.full(200, g))[:, 1]
        assert np.all(np.diff(p) >= -1e-9)
    free = fits[False].predict_proba(grid, sensitive_features=np.zeros(200, int))[:, 1]
    assert np.any(np.diff(free) < -1e-6)  # the free rule does fall somewhere


def test_monotone_holds_without_criteria_too():
    """criteria=None: the order is the only constraint (the LP with order rows and no
    fairness bound), and it binds on these noisy bins."""
    X, y, z = _data(n=240, seed=4)
    s = 1 / (1 + np.exp(-2 * X[:, 0]))
    edges = np.unique(np.quantile(s, np.linspace(0, 1, 21)[1:-1]))
    b = np.searchsorted(edges, s, side="right")
    fits = {mono: fd.FairPolicyClassifier(
        policy="score", outcome_model=FixedScore(), n_bins=20, criteria=None,
        monotone=mono, random_state=0).fit(X, y, sensitive_features=z) for mono in (True, False)}
    for mono, clf in fits.items():
        assert clf.result_.utility == pytest.approx(_lp_optimum(b, z, y, 10.0, mono), abs=1e-9)
    assert fits[True].result_.utility < fits[False].result_.utility - 1e-6
    assert fits[True].result_.deviations == {"score order": pytest.approx(0.0, abs=1e-9)}
    assert "score order" not in fits[False].result_.deviations


def test_the_score_family_default_scorer_and_more_classes():
    rng = np.random.RandomState(3)
    n = 1500
    z = rng.randint(2, size=n)
    X = rng.normal(size=(n, 2)) + z[:, None]
    y = np.digitize(X[:, 0] + 0.5 * rng.normal(size=n), [0.3, 1.2])  # three classes
    clf = fd.FairPolicyClassifier(policy="score", epsilon=0.05, random_state=0).fit(
        X, y, sensitive_features=z)
    assert clf.result_.status == "optimal"
    assert clf.result_.deviations["independence"] <= 0.05 + 1e-9
    p = clf.predict_proba(X[:10], sensitive_features=z[:10])
    np.testing.assert_allclose(p.sum(axis=1), 1.0)


def test_the_score_family_is_for_predictions():
    rng = np.random.RandomState(0)
    X, a = rng.normal(size=(200, 2)), rng.randint(2, size=200)
    y = rng.randint(2, size=200).astype(float)
    with pytest.raises(fd.FairdecideError, match=r"policy='score' .* prediction problems"):
        fd.FairDecisionPolicy(policy="score").fit(X, y, actions=a,
                                                  sensitive_features=rng.randint(2, size=200))


def test_sparse_one_hot_features_go_to_the_scorer():
    """A Pipeline with OneHotEncoder's default (sparse) output, as scikit-learn's linear
    models take it: the score family's policy is the one the dense matrix gives."""
    import pandas as pd
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import OneHotEncoder

    rng = np.random.RandomState(1)
    n = 1200
    df = pd.DataFrame({"job": rng.choice(["a", "b", "c", "d"], n),
                       "edu": rng.choice(["lo", "mid", "hi"], n)})
    z = rng.randint(2, size=n)
    y = (rng.random_sample(n) < 0.3 + 0.3 * (df["job"] == "a") + 0.2 * z).astype(int)
    fits = {}
    for sparse in (True, False):
        pre = ColumnTransformer([("oh", OneHotEncoder(sparse_output=sparse),
                                  ["job", "edu"])])
        pipe = Pipeline([("pre", pre), ("clf", fd.FairPolicyClassifier(
            policy="score", epsilon=0.02, random_state=0))])
        fits[sparse] = pipe.fit(df, y, clf__sensitive_features=z)
    assert fits[True][-1].result_.utility == pytest.approx(fits[False][-1].result_.utility,
                                                           rel=1e-9)
    proba = {k: f[-1].predict_proba(f[0].transform(df), sensitive_features=z)
             for k, f in fits.items()}
    np.testing.assert_allclose(proba[True], proba[False], atol=1e-9)


def test_the_softmax_family_reads_sparse_features_densely(monkeypatch):
    """policy="softmax" takes the sparse matrix and fits what the dense one gives; past
    DENSE_LIMIT entries it says to use the score family."""
    import scipy.sparse as sp

    from fairdecide.estimators import _inputs

    X, y, z = _data(n=400, seed=2)
    fits = [fd.FairPolicyClassifier(policy="softmax", epsilon=0.05, random_state=0).fit(
        M, y, sensitive_features=z) for M in (sp.csr_matrix(X), X)]
    np.testing.assert_allclose(
        fits[0].predict_proba(sp.csr_matrix(X[:20]), sensitive_features=z[:20]),
        fits[1].predict_proba(X[:20], sensitive_features=z[:20]), atol=1e-12)
    monkeypatch.setattr(_inputs, "DENSE_LIMIT", 100)
    with pytest.raises(fd.FairdecideError, match=r"sparse .* use policy='score'"):
        fd.FairPolicyClassifier(policy="softmax").fit(sp.csr_matrix(X), y,
                                                      sensitive_features=z)


@pytest.mark.parametrize("policy", ["score", "tabular"])
def test_intersectional_groups_are_the_combinations(policy):
    """Two sensitive columns: each combination is a group, and independence holds across
    the four combinations, recomputed by hand from the training rows."""
    rng = np.random.RandomState(7)
    n = 3000
    sex, race = rng.randint(2, size=n), rng.randint(2, size=n)
    X = np.c_[rng.normal(size=n) + sex - 0.5 * race, rng.normal(size=n)]
    y = (X[:, 0] + 0.5 * rng.normal(size=n) > 0.3).astype(int)
    S = np.c_[sex, race]
    clf = fd.FairPolicyClassifier(policy=policy, epsilon=0.03, random_state=0).fit(
        X, y, sensitive_features=S)
    assert set(clf.group_labels_) == {(0, 0), (0, 1), (1, 0), (1, 1)}
    p = clf.predict_proba(X, sensitive_features=S)[:, 1]
    rates = np.array([p[(sex == a) & (race == b)].mean() for a in (0, 1) for b in (0, 1)])
    # independence (TV, uniform weights): sum over the 4 groups and 2 actions of
    # |P(a | g) - P(a)|, P(a) the population's rate
    dev = 2 * np.abs(rates - p.mean()).sum()
    # epsilon bounds what the fitted classifier predicts on its training rows, and
    # deviation_ reports that deviation (both families predict a training row through
    # the cell or bin the program counted it in)
    assert dev <= 0.03 + 1e-6
    assert dev == pytest.approx(clf.deviation_["independence"], abs=1e-9)
    with pytest.raises(fd.FairdecideError, match="not among the groups in the training"):
        clf.predict_proba(X[:2], sensitive_features=[[0, 2], [1, 1]])


def test_sample_weight_counts_like_repeated_rows():
    """Integer weights and the rows repeated that many times give the same weighted
    counts, so the same program: the scores are known (FixedScore) and take eight values,
    which the bins keep as they are."""
    rng = np.random.RandomState(5)
    n = 300
    z = rng.randint(2, size=n)
    X = np.c_[rng.randint(8, size=n) / 4.0 - 1.0 + 0.3 * z, rng.normal(size=n)]
    y = (rng.random_sample(n) < 1 / (1 + np.exp(-2 * X[:, 0]))).astype(int)
    w = rng.randint(1, 4, size=n)
    rep = np.repeat(np.arange(n), w)
    kw = dict(policy="score", outcome_model=FixedScore(), n_bins=20,
              criteria="demographic_parity_difference", epsilon=0.03, random_state=0)
    weighted = fd.FairPolicyClassifier(**kw).fit(X, y, sensitive_features=z, sample_weight=w)
    repeated = fd.FairPolicyClassifier(**kw).fit(X[rep], y[rep], sensitive_features=z[rep])
    assert weighted.result_.utility == pytest.approx(repeated.result_.utility, abs=1e-9)
    with warnings.catch_warnings():  # the fold fits' mean score finds its training bin
        warnings.simplefilter("error")
        np.testing.assert_allclose(weighted.predict_proba(X, sensitive_features=z),
                                   repeated.predict_proba(X, sensitive_features=z),
                                   atol=1e-7)
    with pytest.raises(fd.FairdecideError, match=r"sample_weight .* uncertainty='mean'"):
        fd.FairPolicyClassifier(**kw, uncertainty="mean").fit(
            X, y, sensitive_features=z, sample_weight=w)


@pytest.mark.parametrize("blind, family", [(False, "score"), (True, "softmax")])
def test_auto_policy_is_the_score_family_unless_group_blind(blind, family):
    """policy="auto" (the default): the score family when the rule reads the group; the
    softmax family with group_blind=True, whose rule then gives every group the same
    probabilities on the same features."""
    X, y, z = _data(n=600, seed=2)
    clf = fd.FairPolicyClassifier(epsilon=0.05, group_blind=blind, random_state=0).fit(
        X, y, sensitive_features=z)
    assert clf.policy == "auto" and clf._rule.family == family
    if blind:
        p0 = clf.predict_proba(X[:20], sensitive_features=np.zeros(20, int))
        p1 = clf.predict_proba(X[:20], sensitive_features=np.ones(20, int))
        assert np.array_equal(p0, p1)
    with pytest.raises(fd.FairdecideError, match="policy must be one of"):
        fd.FairPolicyClassifier(policy="best").fit(X, y, sensitive_features=z)
