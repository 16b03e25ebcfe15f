"""epsilon bounds what a fitted estimator predicts on the rows it was fitted on, measured
on their labels (issue 40, finding 3), and ``deviation_`` reports that deviation.

Every deviation here is recomputed in this file from ``predict_proba`` of the training
rows and their labels, by the criteria's formulas written out with loops over groups
and labels, not through fairdecide's criterion code. The bound is epsilon plus the
verification tolerance of :func:`fairdecide.optimize_policy` (``tol``, 1e-6).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fairdecide as fd

#: optimize_policy's verification tolerance (its ``tol`` default)
TOL = 1e-6
FAMILIES = ("score", "softmax", "tabular")
CRITERIA = ("independence", "separation", "sufficiency")


def rates(p, cond, z):
    """{group: P(a | cond, group)} and the pooled P(a | cond), each a vector over
    actions, from the rows where ``cond`` holds (groups with no such row left out)."""
    pooled = p[cond].mean(axis=0)
    return {g: p[cond & (z == g)].mean(axis=0) for g in np.unique(z)
            if (cond & (z == g)).any()}, pooled


def deviation(p, y, z, criterion):
    """A criterion's total-variation deviation (uniform weights) of the rows' action
    probabilities ``p`` (n, n_actions) and labels ``y``:

    - independence: sum_z sum_a |P(a | z) - P(a)|
    - separation: sum_y sum_z sum_a |P(a | y, z) - P(a | y)|
    - sufficiency: sum_a sum_z sum_y |P(y | a, z) - P(y | a)|, with
      P(y | a, z) = sum_{i in z, y_i = y} p_ia / sum_{i in z} p_ia, over the (a, z) of
      probability P(a, z) above 1e-12 (a conditional on an event of probability zero
      constrains nothing: the criterion's convention, MASS_TOL)
    - demographic_parity_difference / equalized_odds_difference: the largest gap
      max |P(a | [y,] z) - P(a | [y,] z')| between two groups' rates
    """
    p, y, z = np.asarray(p, float), np.asarray(y), np.asarray(z, dtype=object)
    everyone = np.ones(len(y), dtype=bool)
    if criterion == "independence":
        by_group, pooled = rates(p, everyone, z)
        return sum(np.abs(r - pooled).sum() for r in by_group.values())
    if criterion == "separation":
        return sum(np.abs(r - pooled).sum()
                   for v in np.unique(y) for by_group, pooled in [rates(p, y == v, z)]
                   for r in by_group.values())
    if criterion == "sufficiency":
        labels = np.unique(y)
        onehot = (y[:, None] == labels[None, :]).astype(float)
        total = 0.0
        for a in range(p.shape[1]):
            mass = p[:, a]
            if mass.sum() / len(p) <= 1e-12:
                continue
            pooled = (mass[:, None] * onehot).sum(axis=0) / mass.sum()
            for g in np.unique(z):
                m = mass[z == g]
                if m.sum() / len(p) > 1e-12:
                    total += np.abs((m[:, None] * onehot[z == g]).sum(axis=0) / m.sum()
                                    - pooled).sum()
        return total
    if criterion in ("demographic_parity_difference", "equalized_odds_difference"):
        conds = ([everyone] if criterion.startswith("demographic")
                 else [y == v for v in np.unique(y)])
        gaps = []
        for cond in conds:
            by_group, _ = rates(p, cond, z)
            r = np.array(list(by_group.values()))
            gaps.append((r.max(axis=0) - r.min(axis=0)).max())
        return max(gaps)
    raise ValueError(criterion)


def _data(n=300, seed=0, shift=1.0):
    rng = np.random.RandomState(seed)
    z = rng.randint(2, size=n)
    X = np.c_[rng.normal(size=n) + shift * z, rng.normal(size=n)]
    y = (rng.random_sample(n) < 1 / (1 + np.exp(-2 * X[:, 0] + 0.5))).astype(int)
    return X, y, z


def _check(clf, X, y, z, criterion, eps, sample_weight=None):
    """The in-sample bound, then deviation_ against the recomputation."""
    p = clf.predict_proba(X, sensitive_features=z)
    dev = deviation(p, y, z, criterion)
    assert dev <= eps + TOL, f"in-sample {criterion} {dev:.6f} > epsilon {eps}"
    assert clf.deviation_[criterion] == pytest.approx(dev, abs=1e-9)
    return dev


@pytest.mark.parametrize("criterion", CRITERIA)
@pytest.mark.parametrize("policy", FAMILIES)
@settings(max_examples=2, deadline=None, derandomize=True)
@given(seed=st.integers(0, 10_000), eps=st.sampled_from([0.02, 0.05, 0.1]))
def test_epsilon_holds_on_the_training_predictions(policy, criterion, seed, eps):
    """Each family and criterion: predict_proba of the training rows meets epsilon on
    their labels, and deviation_ is that deviation. Sufficiency is not convex in the
    policy, and a constant rule need not meet it (its deviation is the groups' gap in
    base rates), so a fit may find no feasible policy and say so
    (InfeasibleToleranceError); a policy it returns meets epsilon all the same."""
    X, y, z = _data(seed=seed)
    if policy == "tabular":
        X = np.round(X).clip(-2, 2)
    clf = fd.FairPolicyClassifier(policy=policy, criteria=criterion, epsilon=eps,
                                  random_state=seed)
    try:
        clf.fit(X, y, sensitive_features=z)
    except fd.InfeasibleToleranceError:
        assert criterion == "sufficiency"
        return
    _check(clf, X, y, z, criterion, eps)


def _calibration_gap(n=300, seed=0):
    """Two groups of the same size and the same base rate (half of each positive), so the
    constant rule has sufficiency 0 and every tolerance is feasible; the first feature
    ranks a group's labels sharply in group 0 and loosely in group 1, so the best
    predictor is calibrated differently in the two (its sufficiency about 0.62)."""
    rng = np.random.RandomState(seed)
    z = np.arange(n) % 2
    X = rng.normal(size=(n, 2))
    score = np.where(z == 0, 3.0, 0.5) * X[:, 0] + 0.5 * rng.normal(size=n)
    y = np.zeros(n, dtype=int)
    for g in (0, 1):
        rows = np.flatnonzero(z == g)
        y[rows[np.argsort(score[rows])[len(rows) // 2:]]] = 1
    return X, y, z


@pytest.mark.parametrize("eps", [0.05, 0.2])
def test_softmax_sufficiency_meets_a_binding_epsilon(eps):
    """The softmax family under sufficiency where a policy meeting epsilon exists (the
    parametrised test above draws data where none does, and checks only that the fit
    says so): the unconstrained fit breaks epsilon, the constrained one meets it on the
    training predictions (recomputed here) and predicts better than the constant rule
    (mean probability of the true label above 1/2)."""
    X, y, z = _calibration_gap()
    free = fd.FairPolicyClassifier(policy="softmax", random_state=0).fit(
        X, y, sensitive_features=z)
    assert deviation(free.predict_proba(X, sensitive_features=z), y, z,
                     "sufficiency") > eps
    clf = fd.FairPolicyClassifier(policy="softmax", criteria="sufficiency", epsilon=eps,
                                  random_state=0).fit(X, y, sensitive_features=z)
    _check(clf, X, y, z, "sufficiency", eps)
    p = clf.predict_proba(X, sensitive_features=z)
    assert p[np.arange(len(y)), y].mean() > 0.5


@pytest.mark.parametrize("policy", FAMILIES)
def test_the_fairness_scorer_on_the_training_rows_is_deviation_(policy):
    """One answer per question: make_fairness_scorer on the training rows gives
    deviation_ (minus it), the same number by the scorer's door."""
    X, y, z = _data(seed=2)
    if policy == "tabular":
        X = np.round(X).clip(-2, 2)
    clf = fd.FairPolicyClassifier(policy=policy, criteria="separation", epsilon=0.05,
                                  random_state=0).fit(X, y, sensitive_features=z)
    score = fd.make_fairness_scorer("separation")(clf, X, y, sensitive_features=z)
    assert -score == pytest.approx(clf.deviation_["separation"], abs=1e-12)
    assert -score == pytest.approx(deviation(clf.predict_proba(X, sensitive_features=z),
                                             y, z, "separation"), abs=1e-9)


@pytest.mark.parametrize("criterion", ["demographic_parity_difference",
                                       "equalized_odds_difference"])
@pytest.mark.parametrize("policy", ["score", "softmax"])
def test_pairwise_differences_hold_in_sample_with_sample_weights(policy, criterion):
    """The pairwise differences bench_frontier holds, with sample weights: the weighted
    rates of the training predictions meet epsilon."""
    X, y, z = _data(n=500, seed=3)
    w = np.random.RandomState(1).uniform(0.5, 2.0, size=len(y))
    clf = fd.FairPolicyClassifier(policy=policy, criteria=criterion, epsilon=0.03,
                                  random_state=0).fit(X, y, sensitive_features=z,
                                                      sample_weight=w)
    p = clf.predict_proba(X, sensitive_features=z)
    # weighted rates: repeat the recomputation's means with weights
    conds = ([np.ones(len(y), bool)] if criterion.startswith("demographic")
             else [y == 0, y == 1])
    gaps = [abs(np.average(p[c & (z == 0), 1], weights=w[c & (z == 0)])
                - np.average(p[c & (z == 1), 1], weights=w[c & (z == 1)])) for c in conds]
    assert max(gaps) <= 0.03 + TOL
    assert clf.deviation_[criterion] == pytest.approx(max(gaps), abs=1e-9)


@pytest.mark.parametrize("policy", FAMILIES)
def test_the_worst_case_includes_the_labelled_rows(policy):
    """uncertainty="worst": the labelled training rows, in the cells or bins a
    prediction puts them in, are one scenario of every family's worst case (beside the
    outcome model's bootstrap refits, or the posterior's confidence set), so epsilon
    holds on the training predictions there too."""
    X, y, z = _data(n=300, seed=5)
    if policy == "tabular":
        X = np.round(X).clip(-2, 2)
    clf = fd.FairPolicyClassifier(policy=policy, criteria="separation", epsilon=0.05,
                                  uncertainty="worst", n_scenarios=4, random_state=0
                                  ).fit(X, y, sensitive_features=z)
    _check(clf, X, y, z, "separation", 0.05)


def test_pipeline_gridsearch_in_sample_deviation_meets_the_chosen_epsilon():
    """Finding 3's Pipeline: 600 rows, two groups, GridSearchCV over epsilon 0.02 and
    0.1 with the groups routed; the refitted best pipeline's predictions on the rows it
    was refitted on meet its epsilon (79b1da6: the score family's was 0.118 at epsilon
    0.1 on these rows, the issue's Pipeline 0.113)."""
    import sklearn
    from sklearn.model_selection import GridSearchCV
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import StandardScaler

    rng = np.random.RandomState(1)
    n = 600
    z = rng.randint(2, size=n)
    X = np.c_[rng.normal(size=n) + 1.2 * z, rng.normal(size=n), rng.normal(size=n)]
    y = (X[:, 0] + 0.5 * X[:, 1] + rng.normal(size=n) > 0.8).astype(int)
    for policy in FAMILIES:
        with sklearn.config_context(enable_metadata_routing=True):
            clf = (fd.FairPolicyClassifier(policy=policy, random_state=0)
                   .set_fit_request(sensitive_features=True)
                   .set_predict_proba_request(sensitive_features=True)
                   .set_score_request(sensitive_features=True))
            search = GridSearchCV(Pipeline([("scale", StandardScaler()), ("clf", clf)]),
                                  {"clf__epsilon": [0.02, 0.1]}, cv=3)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)  # unseen tabular cells
                search.fit(X if policy != "tabular" else np.round(X), y,
                           sensitive_features=z)
            Xs = X if policy != "tabular" else np.round(X)
            eps = search.best_params_["clf__epsilon"]
            p = search.best_estimator_.predict_proba(Xs, sensitive_features=z)
        dev = deviation(p, y, z, "independence")
        assert dev <= eps + TOL, f"{policy}: in-sample {dev:.4f} > epsilon {eps}"
        assert search.best_estimator_[-1].deviation_["independence"] == pytest.approx(
            dev, abs=1e-9)


def _logged_tabular(n=800, seed=0):
    rng = np.random.RandomState(seed)
    z = rng.randint(2, size=n)
    X = rng.randint(3, size=(n, 1)).astype(float)
    a = rng.randint(2, size=n)
    p1 = 0.2 + 0.25 * X[:, 0] + 0.1 * z
    y = np.where(a == 1, (rng.random_sample(n) < p1).astype(int), 0)
    return X, y, a, z


def test_decision_policy_deviation_is_of_its_training_predictions():
    """FairDecisionPolicy's deviation_: independence (reads no outcome) on the training
    predictions exactly; separation in the tabular world of the logged rows, P(y | a,
    cell, group) the outcome frequencies of the rows of that cell and group that took
    a (counted here with loops), since an outcome under another action was never
    observed."""
    X, y, a, z = _logged_tabular()
    pol = fd.FairDecisionPolicy(policy="tabular", criteria=["independence", "separation"],
                                epsilon=0.05, n_bins=5, utility=[[0.0, 0.0], [-1.0, 1.0]],
                                random_state=0).fit(X, y, actions=a, sensitive_features=z)
    p = pol.predict_proba(X, sensitive_features=z)
    assert pol.deviation_["independence"] == pytest.approx(
        deviation(p, y, z, "independence"), abs=1e-9)
    assert pol.deviation_["independence"] <= 0.05 + TOL
    # M[z, a, y] = (1/n) sum_i pi(a | i) P(y | a, cell_i, z_i)
    M = np.zeros((2, 2, 2))
    for i in range(len(y)):
        for act in (0, 1):
            same = (X[:, 0] == X[i, 0]) & (z == z[i]) & (a == act)
            py1 = y[same].mean()
            M[z[i], act] += p[i, act] * np.array([1 - py1, py1]) / len(y)
    sep = 0.0
    for v in (0, 1):
        pooled = M[:, :, v].sum(axis=0) / M[:, :, v].sum()
        sep += sum(np.abs(M[g, :, v] / M[g, :, v].sum() - pooled).sum() for g in (0, 1))
    assert pol.deviation_["separation"] == pytest.approx(sep, abs=1e-9)
    assert sep <= 0.05 + TOL


def _adult(data_dir):
    """Adult's first 20,000 complete training rows, sex the group (not a feature),
    numeric columns standardised and the others one-hot encoded (finding 3's setting)."""
    from sklearn.compose import ColumnTransformer
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    from fairdecide.datasets import load_adult

    df = load_adult(data_dir).dropna().reset_index(drop=True).iloc[:20_000]
    y = (df["income"] == ">50K").astype(int).to_numpy()
    z = df["sex"].to_numpy()
    X = df.drop(columns=["income", "sex", "fnlwgt"])
    num = list(X.select_dtypes("number").columns)
    cat = [c for c in X.columns if c not in num]
    pre = ColumnTransformer([
        ("num", StandardScaler(), num),
        ("cat", OneHotEncoder(handle_unknown="ignore", sparse_output=False), cat)])
    return pre.fit_transform(X), y, z


@pytest.mark.slow
@pytest.mark.parametrize(("criterion", "eps"), [("independence", 0.02),
                                                ("separation", 0.04),
                                                ("sufficiency", 0.04)])
@pytest.mark.parametrize("policy", FAMILIES)
def test_finding_3_table_on_adult(data_dir, policy, criterion, eps):
    """Finding 3's table (79b1da6: score 0.0155 / 0.0424, softmax 0.0200 / 0.1744),
    with the tabular family and sufficiency beside it: every cell within epsilon on the
    training rows' labels. The softmax family finds no policy with sufficiency <= 0.04
    here (its search stops near 0.7) and says so. Real data: skipped without it (the
    data_dir fixture), required in CI."""
    X, y, z = _adult(data_dir)
    clf = fd.FairPolicyClassifier(policy=policy, criteria=criterion, epsilon=eps,
                                  random_state=0)
    if (policy, criterion) == ("softmax", "sufficiency"):
        with pytest.raises(fd.InfeasibleToleranceError, match="sufficiency"):
            clf.fit(X, y, sensitive_features=z)
        return
    clf.fit(X, y, sensitive_features=z)
    _check(clf, X, y, z, criterion, eps)
