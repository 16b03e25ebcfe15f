"""Guarantees on new data (issue 25): how often a certified policy's test deviation
exceeds epsilon, over repeated random splits of Adult and COMPAS.

Each split is a 70/30 train/test split (stratified on y, seeded by the split's number,
encoders fitted on the training part; ``make_split`` of bench_fairlearn.py). On the
training part, per criterion and epsilon:

- ``guarantee``: ``FairPolicyClassifier(policy="score", epsilon=eps, guarantee=0.05)``:
  60% of each group's training rows fit the policy at a tightened tolerance, 40% test it;
  a policy is returned only if every upper confidence bound is <= eps (at delta = 0.05),
  else ``NotCertifiedError`` ("no policy certified");
- ``plain``: the same classifier without ``guarantee``, fitted on all training rows at
  eps (the deviation is then <= eps in the training world only).

The test deviation of a returned policy is the criterion's deviation of the test rows'
joint M[z, a, y] = (1/n) sum_i pi(a | x_i, z_i) [z_i = z, y_i = y], exactly what the
criterion computes (``make_fairness_scorer``). It estimates the population deviation
with the noise of 1,584 (COMPAS) or 13,567 (Adult) test rows, so a policy whose population
deviation equals eps exceeds it on the test rows about half the time: the share of test
violations is a noisy upper estimate of the share of population violations.

Reported per setting: the share of splits with no policy certified; among returned
policies, the share whose test deviation exceeds eps with its Clopper-Pearson 95%
interval (the guarantee promises a population violation share <= delta = 0.05); the
mean test deviation and expected test accuracy; the mean upper confidence bound; the
mean fit time. Criteria: Independence() (DP: for two groups F = 2 |P(a=1 | z=0) -
P(a=1 | z=1)|) and Separation() (EO: F = 2 (d_0 + d_1)), measure "tv". The epsilons sit
above the bound's predicted width on each dataset's safety part (printed in the header).

Usage::

    FAIRDECIDE_DATA=/work/shared/data python benchmarks/bench_guarantee.py
    FAIRDECIDE_DATA=/work/shared/data python benchmarks/bench_guarantee.py --quick
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
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_fairlearn import adult_frame, compas_frame, git_state, make_split, nproc

import fairdecide as fd
from fairdecide.estimators._guarantee import PASS_QUANTILE, predicted_widths, safety_split
from fairdecide.evaluation._bounds import level

ROOT = Path(__file__).resolve().parents[1]
DELTA = 0.05
SPLITS, QUICK_SPLITS = 200, 10
CRITERIA = {"DP": fd.Independence(), "EO": fd.Separation()}
EPSILONS = {("Adult", "DP"): (0.1, 0.2), ("Adult", "EO"): (0.3, 0.5),
            ("COMPAS", "DP"): (0.25, 0.4), ("COMPAS", "EO"): (0.7, 1.0)}
FRAMES = {"Adult": adult_frame, "COMPAS": compas_frame}


def fit_one(split, constraint: str, eps: float, guarantee: float | None, seed: int
            ) -> dict:
    crit = CRITERIA[constraint]
    clf = fd.FairPolicyClassifier(policy="score", criteria=crit, epsilon=eps,
                                  guarantee=guarantee, random_state=seed)
    row = {"dataset": split.name, "split": seed, "constraint": constraint, "epsilon": eps,
           "method": "plain" if guarantee is None else "guarantee"}
    start = time.perf_counter()
    try:
        clf.fit(split.X_train, split.y_train, sensitive_features=split.z_train)
    except fd.NotCertifiedError as err:
        row.update(returned=False, fit_s=time.perf_counter() - start,
                   ucb=err.smallest_epsilon)
        return row
    row["fit_s"] = time.perf_counter() - start
    p = clf.predict_proba(split.X_test, sensitive_features=split.z_test)[:, 1]
    dev = -fd.make_fairness_scorer(crit)(clf, split.X_test, split.y_test,
                                         sensitive_features=split.z_test)
    row.update(returned=True, test_dev=dev, violated=dev > eps,
               test_acc=float(np.mean(p * split.y_test + (1 - p) * (1 - split.y_test))))
    if guarantee is not None:
        row["ucb"] = clf.certificate_.bounds[crit.label]
    return row


def widths(split) -> list[str]:
    """The bound's predicted width on this split's safety part, as the fit computes it."""
    problem = fd.DecisionProblem.classification(2)
    cand, safe = safety_split(split.z_train, 0.4, np.random.RandomState(0))
    out = []
    for name, crit in CRITERIA.items():
        at = level([crit], problem, 2, DELTA)
        w = predicted_widths([crit], problem, split.z_train, split.y_train, cand, safe, 2,
                             at)[0]
        margin = 1 + PASS_QUANTILE / np.sqrt(2 * at * 0.6)
        out.append(f"  {split.name} {name}: {len(safe):,} safety rows, predicted width "
                   f"{w:.3f}; candidate tolerance max(0, eps - {w * margin:.3f})")
    return out


def clopper_pearson(k: int, n: int) -> str:
    if n == 0:
        return "-"
    ci = stats.binomtest(k, n).proportion_ci(0.95, method="exact")
    return f"[{ci.low:.3f}, {ci.high:.3f}]"


def table(df: pd.DataFrame) -> list[str]:
    head = (f"{'dataset':<7} {'constr':<6} {'eps':>5} {'method':<9} {'splits':>6} "
            f"{'not cert.':>9} {'violations':>10} {'share':>6} {'CP 95%':>15} "
            f"{'test dev':>8} {'max dev':>7} {'test acc':>8} {'UCB':>6} {'fit s':>6}")
    lines = [head, "-" * len(head)]
    keys = ["dataset", "constraint", "epsilon", "method"]
    for (name, constraint, eps, method), g in df.groupby(keys, sort=False):
        ret = g[g["returned"]]
        k, n = int(ret["violated"].sum()), len(ret)
        share = f"{k / n:.3f}" if n else "-"
        ucb = f"{ret['ucb'].mean():.3f}" if method == "guarantee" and n else "-"
        lines.append(
            f"{name:<7} {constraint:<6} {eps:>5g} {method:<9} {len(g):>6} "
            f"{1 - n / len(g):>9.3f} {f'{k}/{n}':>10} {share:>6} {clopper_pearson(k, n):>15} "
            f"{ret['test_dev'].mean() if n else np.nan:>8.4f} "
            f"{ret['test_dev'].max() if n else np.nan:>7.4f} "
            f"{ret['test_acc'].mean() if n else np.nan:>8.4f} {ucb:>6} "
            f"{g['fit_s'].mean():>6.2f}")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help=f"COMPAS only, {QUICK_SPLITS} splits")
    parser.add_argument("--splits", type=int, default=None)
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results" /
                                             "guarantee.txt"))
    args = parser.parse_args()
    n_splits = args.splits or (QUICK_SPLITS if args.quick else SPLITS)
    names = ["COMPAS"] if args.quick else ["Adult", "COMPAS"]
    command = "python " + " ".join(shlex.quote(a) for a in sys.argv)
    if os.environ.get("FAIRDECIDE_DATA"):
        command = f"FAIRDECIDE_DATA={os.environ['FAIRDECIDE_DATA']} {command}"
    started = datetime.datetime.now().astimezone()
    load_before = os.getloadavg()[0]
    state = git_state()  # at the start: the code that ran
    rows, width_lines, t0 = [], [], time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        for name in names:
            frame = FRAMES[name]()
            for seed in range(n_splits):
                split = make_split(name, *frame, None, seed=seed)
                if seed == 0:
                    width_lines += widths(split)
                for constraint in CRITERIA:
                    for eps in EPSILONS[name, constraint]:
                        for guarantee in (DELTA, None):
                            rows.append(fit_one(split, constraint, eps, guarantee, seed))
            print(f"{name}: {n_splits} splits done", file=sys.stderr)
    elapsed = time.perf_counter() - t0
    df = pd.DataFrame(rows)
    lines = [
        "Guarantees on new data: test violations of certified policies over random splits",
        "",
        f"command: {command}",
        f"date:    {started:%Y-%m-%d %H:%M %Z}; {elapsed / 60:.1f} min",
        f"machine: nproc = {nproc()}, {platform.machine()}, {platform.system()}; "
        f"1-min load average {load_before:.1f} at start, {os.getloadavg()[0]:.1f} at end",
        f"versions: python {platform.python_version()}, numpy {np.__version__}; "
        f"{state}",
        "",
        f"{n_splits} splits 70/30 (stratified on y, seed = split number) of "
        + " and ".join(names) + f"; delta = {DELTA}, safety_fraction = 0.4;",
        "the bound's width on split 0 (rates 1/2; the tolerance also leaves "
        f"{PASS_QUANTILE} sd of noise):",
        *width_lines,
        "",
        *table(df),
        "",
        "not cert.: share of splits where fit raised NotCertifiedError (no policy).",
        "violations: returned policies whose test deviation exceeds eps, of those returned;",
        "  CP 95%: Clopper-Pearson interval of their share (guarantee: population share "
        f"<= {DELTA}).",
        "test dev, max dev, test acc: mean and largest test deviation, mean expected test",
        "  accuracy, over returned policies. UCB: mean upper confidence bound (<= eps).",
        "fit s: mean wall clock of one fit (single process; the machine is shared).",
    ]
    if args.quick:
        lines += ["", f"(quick run: COMPAS, {n_splits} splits; not the benchmark's figures)"]
    text = "\n".join(lines)
    print(text)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text + "\n", encoding="utf-8")
    df.to_csv(out.with_suffix(".csv"), index=False, float_format="%.6g")


if __name__ == "__main__":
    main()
