"""The scikit-learn estimators on Adult, beside Fairlearn's estimators, in one run.

Every method is a scikit-learn Pipeline fitted on the same DataFrame (string categories;
``sex`` is the group, never a feature; ``fnlwgt`` dropped), 70/30 split stratified on y,
seed 42; the preprocessing (one-hot categoricals, standardised numerics) is inside each
pipeline and included in its fit time. Demographic parity with a training bound of 0.01
on the difference of positive rates: ``FairPolicyClassifier(epsilon=0.02)`` (for two
groups and two actions Independence's F = 2 DP; see bench_fairlearn.py),
``ExponentiatedGradient(LR, DemographicParity(difference_bound=0.01))`` (decides without
the group, like ``group_blind=True``) and ``ThresholdOptimizer(LR, "demographic_parity")``
(reads the group, exact parity on the training ROC hull).

Also measured, in the same run:

- the estimator's overhead: ``FairPolicyClassifier(policy="softmax").fit`` against the
  same computation written by hand (StandardScaler, IndividualOutcomeModel, optimize_policy with a
  LinearSoftmaxPolicy, the same seed and max_iter) on the encoded training matrix, best
  of three alternated runs each;
- each family named: ``policy="score"`` (what ``policy="auto"`` fits when the policy
  reads the group: the fair policy over the bins of a cross-fitted logistic score and
  the group, one linear program, the relaxed post-processing ThresholdOptimizer solves on
  its ROC hull) and ``policy="softmax"`` (what ``"auto"`` fits with ``group_blind=True``),
  and the score family group-blind (one rule per bin for every group: why "auto" does
  not choose it then);
- ``uncertainty="mean"`` (8 scenarios, the mean over them: for the score family, draws
  of the bins' exact Dirichlet posterior);
- a GridSearchCV over epsilon in {0.01, 0.02, 0.05, 0.1} with 3 folds, the groups routed
  as metadata, scored by the expected-utility and fairness scorers and refitted by
  ``best_utility_within(0.03)`` (no Fairlearn anchor: ExponentiatedGradient takes about
  30 s per fit here, 12 fits would dominate the run).

Metrics are exact expectations over each randomised policy (fairdecide:
``predict_proba``; Fairlearn: ``_pmf_predict``): accuracy = mean(p y + (1-p)(1-y)),
DP difference = max - min over groups of mean p.

Usage::

    FAIRDECIDE_DATA=/work/shared/data python benchmarks/bench_estimators.py
    FAIRDECIDE_DATA=/work/shared/data python benchmarks/bench_estimators.py --quick
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import shlex
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import sklearn
from fairlearn.postprocessing import ThresholdOptimizer
from fairlearn.reductions import DemographicParity, ExponentiatedGradient
from sklearn.compose import ColumnTransformer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, train_test_split
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_fairlearn import accuracy, adult_frame, dp_difference, git_state, nproc

import fairdecide as fd

ROOT = Path(__file__).resolve().parents[1]
SEED = 42
QUICK_ROWS = 4000
EPSILON = 0.02  # Independence F = 2 DP: training DP difference <= 0.01
L2 = fd.FairPolicyClassifier().l2  # the by-hand computation uses the estimator's default


def preprocess(X):
    categorical = [c for c in X.columns if not pd.api.types.is_numeric_dtype(X[c])]
    numeric = [c for c in X.columns if c not in categorical]
    return ColumnTransformer([
        ("cat", OneHotEncoder(handle_unknown="ignore", sparse_output=False), categorical),
        ("num", StandardScaler(), numeric)])


def timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help=f"{QUICK_ROWS:,} Adult rows, no ExponentiatedGradient or search")
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results" /
                                             "estimators.txt"))
    args = parser.parse_args()
    command = "python " + " ".join(shlex.quote(a) for a in sys.argv)
    if os.environ.get("FAIRDECIDE_DATA"):
        command = f"FAIRDECIDE_DATA={os.environ['FAIRDECIDE_DATA']} {command}"
    started = datetime.datetime.now().astimezone()
    load_before = os.getloadavg()[0]

    X, y, z = adult_frame()
    if args.quick:
        keep = np.random.RandomState(SEED).choice(len(X), QUICK_ROWS, replace=False)
        X, y, z = X.iloc[keep], y.iloc[keep], z.iloc[keep]
    X_tr, X_te, y_tr, y_te, z_tr, z_te = train_test_split(
        X, y.to_numpy(), z.to_numpy(), test_size=0.3, stratify=y, random_state=SEED)
    rows = []

    def record(name, reads_z, seconds, p_test, p_train, note=""):
        rows.append((name, reads_z, seconds, accuracy(p_test, y_te),
                     dp_difference(p_test, z_te), dp_difference(p_train, z_tr), note))
        print(f"  {name}: {seconds:.1f} s", flush=True)

    lr, secs = timed(lambda: Pipeline([("pre", preprocess(X)), ("lr", LogisticRegression(
        max_iter=5000))]).fit(X_tr, y_tr))
    record("LogisticRegression (unconstrained)", "no", secs, lr.predict(X_te),
           lr.predict(X_tr))

    with sklearn.config_context(enable_metadata_routing=True):
        for blind in (False, True):  # policy="auto": the score family, the softmax blind
            clf = fd.FairPolicyClassifier(epsilon=EPSILON, group_blind=blind, random_state=0)
            clf.set_fit_request(sensitive_features=True)
            clf.set_predict_proba_request(sensitive_features=True)
            pipe, secs = timed(lambda clf=clf: Pipeline(
                [("pre", preprocess(X)), ("clf", clf)]).fit(
                X_tr, y_tr, sensitive_features=z_tr))
            res = pipe[-1].result_
            record(f"FairPolicyClassifier(epsilon={EPSILON}"
                   + (", group_blind=True)" if blind else ")"), "no" if blind else "yes", secs,
                   pipe.predict_proba(X_te, sensitive_features=z_te)[:, 1],
                   pipe.predict_proba(X_tr, sensitive_features=z_tr)[:, 1],
                   f"status {res.status!r}; verified deviation "
                   f"{res.deviations['independence']:.4f}")
        for family, blind in (("score", False), ("softmax", False), ("score", True)):
            clf = fd.FairPolicyClassifier(policy=family, epsilon=EPSILON, group_blind=blind,
                                          random_state=0)
            clf.set_fit_request(sensitive_features=True)
            clf.set_predict_proba_request(sensitive_features=True)
            pipe, secs = timed(lambda clf=clf: Pipeline(
                [("pre", preprocess(X)), ("clf", clf)]).fit(X_tr, y_tr,
                                                            sensitive_features=z_tr))
            res = pipe[-1].result_
            bins = (f" ({res.policy.table.shape[0]} bins of a cross-fitted LR score)"
                    if family == "score" else "")
            record(f"FairPolicyClassifier(policy='{family}', epsilon={EPSILON}"
                   + (", group_blind=True)" if blind else ")"), "no" if blind else "yes",
                   secs, pipe.predict_proba(X_te, sensitive_features=z_te)[:, 1],
                   pipe.predict_proba(X_tr, sensitive_features=z_tr)[:, 1],
                   f"status {res.status!r}; verified deviation "
                   f"{res.deviations['independence']:.4f}{bins}")
        bayes = fd.FairPolicyClassifier(epsilon=EPSILON, uncertainty="mean", n_scenarios=8,
                                        random_state=0)
        bayes.set_fit_request(sensitive_features=True)
        bayes.set_predict_proba_request(sensitive_features=True)
        pipe, secs = timed(lambda: Pipeline([("pre", preprocess(X)), ("clf", bayes)]).fit(
            X_tr, y_tr, sensitive_features=z_tr))
        res = pipe[-1].result_
        record(f"FairPolicyClassifier(epsilon={EPSILON}, uncertainty='mean', 8 scenarios)",
               "yes",
               secs, pipe.predict_proba(X_te, sensitive_features=z_te)[:, 1],
               pipe.predict_proba(X_tr, sensitive_features=z_tr)[:, 1],
               f"status {res.status!r}; mean deviation over scenarios "
               f"{res.deviations['independence']:.4f}")

    # the estimator's overhead: the same computation written by hand, same encoded matrix
    enc = preprocess(X).fit(X_tr)
    A_tr = enc.transform(X_tr)
    def estimator():
        return fd.FairPolicyClassifier(policy="softmax", epsilon=EPSILON, random_state=0).fit(
            A_tr, y_tr, sensitive_features=z_tr)

    def by_hand():
        from fairdecide.models import IndividualOutcomeModel

        scaled = StandardScaler().fit_transform(A_tr)
        problem = fd.DecisionProblem.classification(2)
        seed = np.random.RandomState(0).randint(2**31 - 1)
        world = IndividualOutcomeModel().fit(scaled, z_tr, y_tr, problem,
                                             random_state=seed).world()
        return fd.optimize_policy(problem, world, fd.Independence(), epsilon=EPSILON,
                                  policy=fd.LinearSoftmaxPolicy(include_z=True, l2=L2),
                                  n_restarts=1, random_state=seed, max_iter=500)

    # alternated, best of three each (one run is at the mercy of the machine's load)
    secs_est, secs_hand = np.inf, np.inf
    for _ in range(3):
        est, secs = timed(estimator)
        secs_est = min(secs_est, secs)
        direct, secs = timed(by_hand)
        secs_hand = min(secs_hand, secs)
    overhead = (f"estimator fit {secs_est:.2f} s, by hand {secs_hand:.2f} s (ratio "
                f"{secs_est / secs_hand:.2f}, best of 3 alternated runs each); utilities "
                f"{est.result_.utility:.6f} and {direct.utility:.6f}")

    if not args.quick:
        to, secs = timed(lambda: Pipeline([("pre", preprocess(X)), ("to", ThresholdOptimizer(
            estimator=LogisticRegression(max_iter=5000), constraints="demographic_parity",
            predict_method="predict_proba"))]).fit(X_tr, y_tr, to__sensitive_features=z_tr))
        pre, to_ = to[0], to[-1]
        record("fairlearn ThresholdOptimizer(LR, demographic_parity)", "yes", secs,
               to_._pmf_predict(pre.transform(X_te), sensitive_features=z_te)[:, 1],
               to_._pmf_predict(pre.transform(X_tr), sensitive_features=z_tr)[:, 1])
        eg, secs = timed(lambda: Pipeline([("pre", preprocess(X)), ("eg", ExponentiatedGradient(
            LogisticRegression(max_iter=5000),
            constraints=DemographicParity(difference_bound=0.01)))]).fit(
            X_tr, y_tr, eg__sensitive_features=z_tr))
        record("fairlearn ExponentiatedGradient(LR, DP(difference_bound=0.01))", "no", secs,
               eg[-1]._pmf_predict(eg[0].transform(X_te))[:, 1],
               eg[-1]._pmf_predict(eg[0].transform(X_tr))[:, 1])

    search_lines = []
    if not args.quick:
        with sklearn.config_context(enable_metadata_routing=True):
            clf = (fd.FairPolicyClassifier(random_state=0)
                   .set_fit_request(sensitive_features=True)
                   .set_predict_proba_request(sensitive_features=True))
            search = GridSearchCV(
                Pipeline([("pre", preprocess(X)), ("clf", clf)]),
                {"clf__epsilon": [0.01, 0.02, 0.05, 0.1]}, cv=3,
                scoring={"utility": fd.make_utility_scorer(),
                         "fairness": fd.make_fairness_scorer("independence")},
                refit=fd.best_utility_within(0.03))
            _, secs = timed(lambda: search.fit(X_tr, y_tr, sensitive_features=z_tr))
        cv = search.cv_results_
        search_lines = [
            f"GridSearchCV, 4 epsilons x 3 folds + refit, groups routed as metadata: "
            f"{secs:.1f} s; chose epsilon {search.best_params_['clf__epsilon']}",
            "  epsilon  mean val utility  mean val deviation (F = 2 DP)",
            *[f"  {p['clf__epsilon']:<7}  {u:.4f}            {-f:.4f}" for p, u, f in zip(
                cv["params"], cv["mean_test_utility"], cv["mean_test_fairness"], strict=True)],
        ]

    load_after = os.getloadavg()[0]
    head = f"{'method':<66} {'z at decision':>13} {'fit s':>6} {'test acc':>8} " \
           f"{'test DP':>7} {'train DP':>8}"
    table = [head, "-" * len(head)]
    for name, reads, secs, acc, dp, tdp, note in rows:
        table.append(f"{name:<66} {reads:>13} {secs:6.1f} {acc:8.4f} {dp:7.4f} {tdp:8.4f}")
        if note:
            table.append(f"    -> {note}")
    lines = [
        "The scikit-learn estimators beside Fairlearn's, Adult, demographic parity",
        "",
        f"command: {command}",
        f"date:    {started:%Y-%m-%d %H:%M %Z}",
        f"machine: nproc = {nproc()}, {platform.machine()}, {platform.system()}; "
        f"1-min load average {load_before:.1f} at start, {load_after:.1f} at end",
        f"versions: python {platform.python_version()}, scikit-learn {sklearn.__version__}",
        f"          {git_state()}",
        f"data: Adult, {len(X):,} rows ({len(X_tr):,} train / {len(X_te):,} test), group = sex",
        "",
        *table,
        "",
        f"overhead of the estimator over the hand-written computation: {overhead}",
        "",
        *search_lines,
        "",
        "fit s: one wall-clock fit of the whole pipeline (single run; on a loaded machine",
        "expect run-to-run differences of 2x). test acc, test DP: exact expectations over",
        "each randomised policy on the test rows; train DP on the training rows.",
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    Path(args.out).write_text(text)


if __name__ == "__main__":
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        main()
