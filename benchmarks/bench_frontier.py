"""Accuracy-fairness frontiers of fair classifiers, over seeds, in one run.

For each data set (Adult, COMPAS, German credit), constraint (DP = demographic parity,
EO = equalized odds) and seed (a 70/30 split stratified on y; encoders fitted on the
training part, as in bench_fairlearn.py), every method is fitted at each training
tolerance t of a grid and scored on the test part by exact expectations over its
randomised policy: accuracy, and the violation (DP difference, or EO difference =
max over y of the DP difference among those with label y).

Methods (the sensitive attribute is never a feature of the base model; all three read
it at decision time):

- ``FairPolicyClassifier(policy="score")``: one rule per bin of a cross-fitted logistic
  score and group, one LP. Its criterion is ``Independence()`` (F = 2 DP for two groups
  and two actions, so epsilon = 2 t bounds the training DP by t) or ``Separation()``
  (F = 2 (d_0 + d_1) >= 2 EO, so epsilon = 2 t bounds the training EO by t,
  conservatively);
- error-parity's ``RelaxedThresholdOptimizer`` on a logistic regression's scores, at
  tolerance t (its own definitions of DP and EO, l-inf);
- fairlearn's ``ThresholdOptimizer`` on the same prefit logistic regression: exact parity
  on the training ROC hulls, one point (no tolerance).

Reported per (data set, constraint, method, t): mean test accuracy and violation over
the seeds with their standard errors, mean fit time; per (data set, constraint,
method): the hypervolume of the frontier of its mean points, the area that they
dominate in (violation, accuracy) above a reference point (the largest violation and
the lowest accuracy over all methods of that data set and constraint); and, at each t,
whether the score family's mean point weakly dominates error-parity's within one
standard error (accuracy not lower by more than the larger s.e., violation not higher by
more than the larger s.e.).

Usage::

    FAIRDECIDE_DATA=/work/shared/data python benchmarks/bench_frontier.py
    FAIRDECIDE_DATA=/work/shared/data python benchmarks/bench_frontier.py --quick
"""

from __future__ import annotations

import argparse
import datetime
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_fairlearn
from bench_fairlearn import (
    accuracy,
    adult_frame,
    compas_frame,
    dp_difference,
    eo_difference,
    error_parity,
    fit_error_parity,
    fit_threshold_optimizer,
    git_state,
    make_split,
    nproc,
)

import fairdecide as fd
from fairdecide.datasets import load_german

ERROR_PARITY_MISSING = getattr(bench_fairlearn, "ERROR_PARITY_MISSING", "")

ROOT = Path(__file__).resolve().parents[1]
TOLERANCES = (0.005, 0.01, 0.02, 0.05, 0.1)
SEEDS = (0, 1, 2, 3, 4)
CRITERION = {"DP": "independence", "EO": "separation"}


def german_frame() -> tuple[pd.DataFrame, pd.Series, pd.Series]:
    df = load_german()
    y = (df["credit"] == "good").astype(int)
    X = df.drop(columns=["credit", "sex", "personal_status"])
    return X, y, df["sex"]


def violation(constraint: str, p: np.ndarray, y: np.ndarray, z: np.ndarray) -> float:
    return dp_difference(p, z) if constraint == "DP" else eo_difference(p, y, z)


def fit_score(s, constraint: str, t: float) -> tuple[np.ndarray, float, str]:
    t0 = time.perf_counter()
    clf = fd.FairPolicyClassifier(policy="score", criteria=CRITERION[constraint],
                                  epsilon=2 * t, random_state=0)
    clf.fit(s.X_train, s.y_train, sensitive_features=s.z_train)
    secs = time.perf_counter() - t0
    return (clf.predict_proba(s.X_test, sensitive_features=s.z_test)[:, 1], secs,
            clf.result_.status)


def run_error_parity(s, constraint: str, t: float, seed: int):
    proba, secs = fit_error_parity(s, constraint, t, seed)
    return np.clip(proba(s.X_test, s.z_test), 0, 1), secs, ""


def run_threshold_optimizer(s, constraint: str):
    proba, secs = fit_threshold_optimizer(s, constraint)
    return proba(s.X_test, s.z_test), secs, ""


def hypervolume(points: np.ndarray, ref: tuple[float, float]) -> float:
    """Area dominated by (violation, accuracy) points (lower violation, higher accuracy
    better) and bounded by ``ref`` = (largest violation, lowest accuracy)."""
    pts = sorted((v, a) for v, a in points if v <= ref[0] and a >= ref[1])
    area, best = 0.0, ref[1]
    for k, (v, a) in enumerate(pts):  # sweep in violation; accuracy staircase
        best = max(best, a)
        nxt = pts[k + 1][0] if k + 1 < len(pts) else ref[0]
        area += (nxt - v) * (best - ref[1])
    return area


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="COMPAS and German, one seed, two tolerances, DP only")
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "frontier"))
    args = parser.parse_args()
    frames = {"COMPAS": compas_frame, "German": german_frame}
    if not args.quick:
        frames = {"Adult": adult_frame, **frames}
    seeds = SEEDS[:1] if args.quick else SEEDS
    tols = (0.01, 0.05) if args.quick else TOLERANCES
    constraints = ("DP",) if args.quick else ("DP", "EO")
    warnings.filterwarnings("ignore", category=UserWarning)
    records = []
    started = datetime.datetime.now().astimezone()
    for data, frame in frames.items():
        X, y, z = frame()
        for seed in seeds:
            s = make_split(data, X, y, z, None, seed=seed)
            for constraint in constraints:
                runs = [("fairdecide score", t, fit_score, (s, constraint, t))
                        for t in tols]
                if error_parity is not None:
                    runs += [("error-parity", t, run_error_parity, (s, constraint, t, seed))
                             for t in tols]
                runs.append(("ThresholdOptimizer", 0.0, run_threshold_optimizer,
                             (s, constraint)))
                for method, t, fit, fit_args in runs:
                    p, secs, status = fit(*fit_args)
                    records.append(dict(
                        data=data, constraint=constraint, method=method, seed=seed, tol=t,
                        accuracy=accuracy(p, s.y_test),
                        violation=violation(constraint, p, s.y_test, s.z_test),
                        seconds=secs, status=status))
                print(f"  {data} {constraint} seed {seed}", flush=True)
    df = pd.DataFrame(records)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    df.to_csv(out.with_suffix(".csv"), index=False)
    lines = report(df, args, started)
    out.with_suffix(".txt").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


def report(df: pd.DataFrame, args, started) -> list[str]:
    n = df.groupby(["data", "constraint", "method", "tol"]).size().max()
    lines = [
        "# bench_frontier.py: accuracy-fairness frontiers, test figures over seeds",
        f"# command: python benchmarks/bench_frontier.py{' --quick' if args.quick else ''}",
        f"# date: {started:%Y-%m-%d %H:%M %Z}; machine: nproc = {nproc()}; "
        f"{git_state()}",
        f"# {n} seeds per point; mean (standard error over seeds); error-parity: "
        f"{'available' if error_parity is not None else ERROR_PARITY_MISSING}",
        "# statuses of the score family: "
        + ", ".join(f"{k} {v}" for k, v in df[df.method == "fairdecide score"]
                     ["status"].value_counts().items()), ""]
    g = df.groupby(["data", "constraint", "method", "tol"])
    stats = g.agg(acc=("accuracy", "mean"), acc_se=("accuracy", "sem"),
                  viol=("violation", "mean"), viol_se=("violation", "sem"),
                  seconds=("seconds", "mean")).reset_index().fillna(0.0)
    for (data, constraint), part in stats.groupby(["data", "constraint"], sort=False):
        lines += [f"## {data}, {constraint}", "",
                  "| method | t | test accuracy | test violation | fit s |",
                  "|---|---|---|---|---|"]
        for r in part.itertuples():
            lines.append(f"| {r.method} | {r.tol:g} | {r.acc:.4f} ({r.acc_se:.4f}) | "
                         f"{r.viol:.4f} ({r.viol_se:.4f}) | {r.seconds:.2f} |")
        ref = (part["viol"].max(), part["acc"].min())
        hv = {m: hypervolume(q[["viol", "acc"]].to_numpy(), ref)
              for m, q in part.groupby("method")}
        lines += ["", "hypervolume (reference: largest violation "
                  f"{ref[0]:.4f}, lowest accuracy {ref[1]:.4f}): "
                  + ", ".join(f"{m} {v:.2e}" for m, v in sorted(hv.items(),
                                                                key=lambda kv: -kv[1]))]
        score = part[part.method == "fairdecide score"].set_index("tol")
        ep = part[part.method == "error-parity"].set_index("tol")
        if len(ep):
            dom = []
            for t in score.index:
                a, b = score.loc[t], ep.loc[t]
                se_a, se_v = max(a.acc_se, b.acc_se), max(a.viol_se, b.viol_se)
                ok = a.acc >= b.acc - se_a and a.viol <= b.viol + se_v
                dom.append(f"{t:g}: {'yes' if ok else 'no'}")
            lines.append("score family weakly dominates error-parity within one s.e., by t: "
                         + ", ".join(dom))
        lines.append("")
    return lines


if __name__ == "__main__":
    main()
