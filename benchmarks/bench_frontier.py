"""Accuracy-fairness frontiers of fair classifiers, over seeds, in one run.

For each data set (Adult, COMPAS, German credit), constraint (DP = demographic parity,
EO = equalized odds) and seed (a 70/30 split stratified on y; encoders fitted on the
training part, as in bench_fairlearn.py), every method is fitted at each training
tolerance t of a grid (from t = 0, exact parity in training, the target of
ThresholdOptimizer's one point) and scored on the test part by exact expectations over its
randomised policy: accuracy, and the violation (DP difference, or EO difference =
max over y of the DP difference among those with label y). The sensitive attribute is
never a feature of a base model. Methods (``--methods`` keys in brackets):

- [score] ``FairPolicyClassifier(policy="score")``: one rule per bin of a cross-fitted
  logistic score and group, one LP; reads z to decide;
- [score-hgb] the same family on a gradient-boosted scorer
  (``outcome_model=HistGradientBoostingClassifier(random_state=seed)``, scikit-learn's
  defaults: 100 trees of at most 31 leaves, learning rate 0.1, the model class of
  FairGBM's defaults), to compare with FairGBM in its own model class;
- [softmax] ``FairPolicyClassifier(policy="softmax", group_blind=False)``: a linear
  softmax policy on the raw (encoded) features and z, the gradient route (locally
  optimal);
- [softmax-blind] the same with ``group_blind=True``: the raw features alone decide
  (z only measures fairness in training), as ExponentiatedGradient's and FairGBM's
  classifiers do;
  every fairdecide family (the table ``FAMILIES`` below) holds the named criterion
  "demographic_parity_difference" or "equalized_odds_difference" (the largest gap
  between the two groups' rates, given y for EO: exactly the test violation's
  definition) at epsilon = t;
- [error-parity] error-parity's ``RelaxedThresholdOptimizer`` on a logistic
  regression's scores at tolerance t (its own l-inf definitions of DP and EO); reads z;
- [error-parity-hgb] error-parity on that gradient-boosted scorer (fitted on the whole
  training part, as error-parity's LR is);
- [to] fairlearn's ``ThresholdOptimizer`` on the same prefit LR: exact parity on the
  training ROC hulls, one point (no tolerance, shown at t = 0); reads z;
- [eg] fairlearn's ``ExponentiatedGradient`` over the same LR with
  ``DemographicParity(difference_bound=t)`` / ``EqualizedOdds(difference_bound=t)``
  (each group's rate, given y for EO, within t of the pooled one: for two groups a
  difference of t / max_z P(z) or less; its other parameters fairlearn's defaults,
  eps = 0.01, max_iter = 50); its randomised classifier (``_pmf_predict``); decides
  without z;
- [fairgbm] FairGBM (``fairgbm.train`` with ``objective="constrained_cross_entropy"``,
  LightGBM's defaults otherwise: 100 trees of 31 leaves, learning rate 0.1, multiplier
  learning rate 0.1): for EO, ``constraint_type="FPR,FNR"`` with
  ``constraint_fpr_tolerance = constraint_fnr_tolerance = t``, which asks each group's
  FPR and FNR at score 0.5 to be within t of the largest group's (for two groups the
  EO difference at most t, on a differentiable proxy, in training); its decision is
  the deterministic P(y = 1 | x) >= 0.5 (the threshold its constraints are stated at);
  decides without z. FairGBM has no demographic-parity constraint (its group
  constraints are FPR, FNR or both), so it is not run for DP. Its scikit-learn wrapper
  calls ``check_X_y(force_all_finite=...)``, removed in scikit-learn 1.8, so it is
  called through its LightGBM-style ``train``.

A method whose package cannot be imported is reported missing, with the reason, and
skipped. Reported per (data set, constraint, method, t): mean test accuracy and
violation over the seeds with their standard errors, mean fit time (wall clock, fitting
the base model included); for fairdecide the solver status of every fit.

Every method runs on one thread: threadpoolctl limits BLAS and OpenMP to one thread
for the whole run, and FairGBM gets ``num_threads=1``. On this two-core machine, shared
with other work, two threads made one logistic-regression fit on Adult 15 times slower
(2.9 s against 0.18 s) and a FairGBM fit 5 to 15 times slower (measured), which would
time the machine's contention rather than the methods (fairdecide's own loops already
hold BLAS at one thread, fairdecide/_common/threads.py).

Per (data set, constraint):

- the hypervolume of each method's frontier of mean points: the area they dominate in
  (violation, accuracy), lower violation and higher accuracy better, above the
  reference point (the largest mean violation, the lowest mean accuracy over all
  methods of that data set and constraint);
- dominance within one standard error: point A weakly dominates point B if
  acc_A >= acc_B - se_acc and viol_A <= viol_B + se_viol, each se the larger of the two
  points' standard errors over seeds. A fairdecide frontier weakly dominates
  error-parity's at t if its point at t weakly dominates error-parity's point at t.
  ThresholdOptimizer has one point, so a frontier weakly dominates it if some point of
  the frontier does (the fairdecide point at the t where that holds is named); the
  report also lists, per t, whether the point at t does, because only small t aim at
  ThresholdOptimizer's exact parity.

Usage::

    FAIRDECIDE_DATA=/work/shared/data python benchmarks/bench_frontier.py
    FAIRDECIDE_DATA=/work/shared/data python benchmarks/bench_frontier.py --quick
    # a long run in parts: each part replaces its methods' rows of the CSV, the report
    # and the figure are rebuilt from the whole CSV
    # two runs' fairdecide points side by side (writes OUT_compare.txt)
    ... bench_frontier.py --compare benchmarks/results/frontier_before.csv
    ... bench_frontier.py --methods eg
    ... bench_frontier.py --methods score softmax error-parity to fairgbm
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import os
import shlex
import sys
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.ensemble import HistGradientBoostingClassifier
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _frontier_report import comparison, plot_frontiers, report
from _landed import Table, add_arguments, compare, landed_tree, runs
from bench_fairlearn import (
    ERROR_PARITY_MISSING,
    Split,
    accuracy,
    adult_frame,
    compas_frame,
    dp_difference,
    eo_difference,
    error_parity,
    fit_error_parity,
    fit_exponentiated_gradient,
    fit_threshold_optimizer,
    git_state,
    make_split,
    nproc,
    versions,
)

import fairdecide as fd
from fairdecide.datasets import load_german

try:  # optional (the bench extra, Linux only): reported missing otherwise
    import fairgbm

    FAIRGBM_MISSING = ""
except ImportError as exc:
    fairgbm, FAIRGBM_MISSING = None, f"{type(exc).__name__}: {exc}"

ROOT = Path(__file__).resolve().parents[1]
TOLERANCES = (0.0, 0.005, 0.01, 0.02, 0.05, 0.1)
SEEDS = (0, 1, 2, 3, 4)
#: each constraint's named criterion, held at epsilon = t (module docstring)
PAIRWISE = {"DP": "demographic_parity_difference", "EO": "equalized_odds_difference"}


@dataclass(frozen=True)
class Family:
    """A fairdecide family of the run: its ``policy``, whether the policy reads z, and
    whether its scorer is the gradient-boosted one (:func:`hgb`) instead of the
    estimator's default logistic regression."""

    policy: str
    group_blind: bool = False
    boosted: bool = False


FAMILIES = {
    "fairdecide score": Family("score"),
    "fairdecide softmax": Family("softmax"),
    "fairdecide score (HGB)": Family("score", boosted=True),
    "fairdecide softmax (group-blind)": Family("softmax", group_blind=True),
}
FairFit = Callable[[Split, str, float, int], tuple[np.ndarray, float, str]]


def german_frame() -> tuple[pd.DataFrame, pd.Series, pd.Series]:
    df = load_german()
    y = (df["credit"] == "good").astype(int)
    X = df.drop(columns=["credit", "sex", "personal_status"])
    return X, y, df["sex"]


FRAMES = {"Adult": adult_frame, "COMPAS": compas_frame, "German": german_frame}


def violation(constraint: str, p: np.ndarray, y: np.ndarray, z: np.ndarray) -> float:
    return dp_difference(p, z) if constraint == "DP" else eo_difference(p, y, z)


# ---------------------------------------------------------------------------- methods
# Each fit returns P(positive decision) of the test rows, the fit time and a status.
def fairdecide_fit(method: str) -> FairFit:
    family = FAMILIES[method]

    def fit(s: Split, constraint: str, t: float, seed: int):
        t0 = time.perf_counter()
        clf = fd.FairPolicyClassifier(policy=family.policy, criteria=PAIRWISE[constraint],
                                      epsilon=t, group_blind=family.group_blind,
                                      outcome_model=hgb(seed) if family.boosted else None,
                                      random_state=0)
        clf.fit(s.X_train, s.y_train, sensitive_features=s.z_train)
        secs = time.perf_counter() - t0
        return (clf.predict_proba(s.X_test, sensitive_features=s.z_test)[:, 1], secs,
                clf.result_.status)

    return fit


def hgb(seed: int) -> HistGradientBoostingClassifier:
    return HistGradientBoostingClassifier(random_state=seed)


def run_error_parity(s: Split, constraint: str, t: float, seed: int):
    proba, secs = fit_error_parity(s, constraint, t, seed)
    return np.clip(proba(s.X_test, s.z_test), 0, 1), secs, ""


def run_error_parity_hgb(s: Split, constraint: str, t: float, seed: int):
    proba, secs = fit_error_parity(s, constraint, t, seed, base=lambda: hgb(seed))
    return np.clip(proba(s.X_test, s.z_test), 0, 1), secs, ""


def run_threshold_optimizer(s: Split, constraint: str, t: float, seed: int):
    proba, secs = fit_threshold_optimizer(s, constraint)
    return proba(s.X_test, s.z_test), secs, ""


def run_exponentiated_gradient(s: Split, constraint: str, t: float, seed: int):
    proba, secs = fit_exponentiated_gradient(s, constraint, t)
    return np.clip(proba(s.X_test), 0, 1), secs, ""


def run_fairgbm(s: Split, constraint: str, t: float, seed: int):
    assert constraint == "EO", "FairGBM has no demographic-parity constraint"
    params = {"objective": "constrained_cross_entropy", "constraint_type": "FPR,FNR",
              "constraint_fpr_tolerance": t, "constraint_fnr_tolerance": t,
              "seed": seed, "verbose": -1, "num_threads": 1}
    t0 = time.perf_counter()
    booster = fairgbm.train(params, fairgbm.Dataset(s.X_train, label=s.y_train,
                                                    constraint_group=s.z_train))
    secs = time.perf_counter() - t0
    return (booster.predict(s.X_test) >= 0.5).astype(float), secs, ""


@dataclass(frozen=True)
class Method:
    label: str  # its name in the tables and the figure
    fit: FairFit
    grid: bool = True  # fitted at each tolerance (else once, at t = 0)
    constraints: tuple[str, ...] = ("DP", "EO")
    missing: str = ""  # why it cannot run here


METHODS = {
    "score": Method("fairdecide score", fairdecide_fit("fairdecide score")),
    "softmax": Method("fairdecide softmax", fairdecide_fit("fairdecide softmax")),
    "softmax-blind": Method("fairdecide softmax (group-blind)",
                            fairdecide_fit("fairdecide softmax (group-blind)")),
    "error-parity": Method("error-parity", run_error_parity,
                           missing="" if error_parity is not None else ERROR_PARITY_MISSING),
    "eg": Method("ExponentiatedGradient", run_exponentiated_gradient),
    "score-hgb": Method("fairdecide score (HGB)", fairdecide_fit("fairdecide score (HGB)")),
    "error-parity-hgb": Method("error-parity (HGB)", run_error_parity_hgb,
                               missing="" if error_parity is not None
                               else ERROR_PARITY_MISSING),
    "fairgbm": Method("FairGBM", run_fairgbm, constraints=("EO",), missing=FAIRGBM_MISSING),
    "to": Method("ThresholdOptimizer", run_threshold_optimizer, grid=False),
}


def run(datasets: list[str], keys: list[str], seeds: tuple[int, ...],
        tols: tuple[float, ...], constraints: tuple[str, ...], stamp: str) -> pd.DataFrame:
    methods = [METHODS[k] for k in keys if not METHODS[k].missing]
    records, warmed = [], False
    for data in datasets:
        X, y, z = FRAMES[data]()
        for seed in seeds:
            s = make_split(data, X, y, z, None, seed=seed)
            if not warmed:  # first calls pay one-off costs (imports, HiGHS): not timed
                small = dataclasses.replace(s, X_train=s.X_train[:600],
                                            y_train=s.y_train[:600], z_train=s.z_train[:600])
                for m in methods:
                    m.fit(small, m.constraints[-1], 0.05, seed)
                warmed = True
            for constraint in constraints:
                t0 = time.perf_counter()
                for m in methods:
                    if constraint not in m.constraints:
                        continue
                    for t in tols if m.grid else (0.0,):
                        p, secs, status = m.fit(s, constraint, t, seed)
                        records.append(dict(
                            data=data, constraint=constraint, method=m.label, seed=seed,
                            tol=t, accuracy=accuracy(p, s.y_test),
                            violation=violation(constraint, p, s.y_test, s.z_test),
                            seconds=secs, status=status, run=stamp))
                print(f"  {data} {constraint} seed {seed}: {time.perf_counter() - t0:.0f} s",
                      file=sys.stderr, flush=True)
    return pd.DataFrame(records)


def merged(new: pd.DataFrame, csv: Path, datasets: list[str], labels: list[str]
           ) -> pd.DataFrame:
    """The earlier CSV's rows, those of the methods and data sets just run replaced."""
    if not csv.exists():
        return new
    old = pd.read_csv(csv)
    if "run" not in old:
        old["run"] = "an earlier run"
    old = old[~(old["method"].isin(labels) & old["data"].isin(datasets))]
    return pd.concat([old, new], ignore_index=True)


LANDED_TOLERANCES = (0.0, 0.01, 0.05)


def landed_case(data: str, constraint: str, key: str, seed: int) -> dict:
    """The fits of one fairdecide family at LANDED_TOLERANCES on one split, timed as
    :func:`run` times them (the base model's fit included), after a small untimed fit,
    one thread (for --landed: run in a fresh process on either tree's package); value:
    the sum of the test accuracies."""
    warnings.filterwarnings("ignore", category=UserWarning)
    warnings.filterwarnings("ignore", category=FutureWarning)
    method = METHODS[key]
    X, y, z = FRAMES[data]()
    s = make_split(data, X, y, z, None, seed=seed)
    small = dataclasses.replace(s, X_train=s.X_train[:600], y_train=s.y_train[:600],
                                z_train=s.z_train[:600])
    seconds, value, statuses = 0.0, 0.0, set()
    with threadpool_limits(limits=1):
        method.fit(small, constraint, 0.05, seed)
        for t in LANDED_TOLERANCES:
            p, secs, status = method.fit(s, constraint, t, seed)
            seconds, value = seconds + secs, value + accuracy(p, s.y_test)
            statuses.add(status)
    return {"seconds": seconds, "value": float(value), "status": ", ".join(sorted(statuses))}


def landed_main(args) -> None:
    """Each fairdecide family's fits on each data set and constraint, on the landed tree
    and this one (OUT_vs_landed.txt)."""
    keys = [k for k in args.methods if METHODS[k].label in FAMILIES]
    datasets = args.datasets or (["COMPAS", "German"] if args.quick else list(FRAMES))
    repeats = 1 if args.quick else args.repeats
    table = Table(Path(f"{args.out}_vs_landed.txt"),
                  "Fair classifiers' fit times against the landed version",
                  "bench_frontier.py", args.landed,
                  ["FairPolicyClassifier fits (the base model's fit included) at t = "
                   f"{', '.join(f'{t:g}' for t in LANDED_TOLERANCES)} on seed {SEEDS[0]}'s "
                   "split, summed, one thread, in a fresh process after a small untimed fit; "
                   + runs(repeats, "the sum of the test accuracies")])
    with landed_tree(args.landed) as old:
        for data in datasets:
            for constraint in ("DP", "EO"):
                for key in keys:
                    got = compare(old, "bench_frontier", (data, constraint, key, SEEDS[0]),
                                  repeats, timeout=args.timeout)
                    table.add(f"{data} {constraint}, {METHODS[key].label}", got,
                              key="status")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="COMPAS and German, one seed, two tolerances")
    parser.add_argument("--methods", nargs="+", choices=list(METHODS), default=list(METHODS),
                        help="run these methods only; the other rows of --out's CSV, if "
                             "present, are kept (not with --quick)")
    parser.add_argument("--datasets", nargs="+", choices=list(FRAMES), default=None,
                        help="run these data sets only (kept rows as for --methods)")
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "frontier"),
                        help="writes OUT.csv, OUT.txt and OUT.png")
    parser.add_argument("--compare", metavar="BEFORE_CSV", default=None,
                        help="run nothing: write OUT_compare.txt, the fairdecide families' "
                             "points of BEFORE_CSV against those of OUT.csv")
    parser.add_argument("--figure", nargs="*", default=None,
                        help="more copies of the figure (default docs/images/frontier.png, "
                             "none with --quick)")
    add_arguments(parser, "OUT_vs_landed.txt (the fairdecide families' fits only)")
    args = parser.parse_args()
    if args.landed:
        landed_main(args)
        return
    if args.compare:
        out = Path(args.out)
        lines = comparison(pd.read_csv(args.compare), pd.read_csv(out.with_suffix(".csv")),
                           list(FAMILIES), [
            "# bench_frontier.py --compare: the fairdecide families' points of two runs",
            f"# before: {args.compare}; after: "
            f"{os.path.relpath(out.with_suffix('.csv'), ROOT)} (the same splits)",
            "# mean over seeds (the larger standard error of the two runs in brackets)"])
        Path(f"{out}_compare.txt").write_text("\n".join(lines) + "\n")
        print("\n".join(lines))
        return
    datasets = args.datasets or (["COMPAS", "German"] if args.quick else list(FRAMES))
    seeds = SEEDS[:1] if args.quick else SEEDS
    tols = (0.01, 0.05) if args.quick else TOLERANCES
    figures = args.figure if args.figure is not None else (
        [] if args.quick else [str(ROOT / "docs" / "images" / "frontier.png")])
    started = datetime.datetime.now().astimezone()
    command = shlex.join(["python", "benchmarks/bench_frontier.py", *sys.argv[1:]])
    warnings.filterwarnings("ignore", category=UserWarning)
    warnings.filterwarnings("ignore", category=FutureWarning)
    t0 = time.perf_counter()
    with threadpool_limits(limits=1):  # every method on one thread (module docstring)
        df = run(datasets, args.methods, seeds, tols, ("DP", "EO"),
                 f"{started:%Y-%m-%d %H:%M:%S}")
    wall = time.perf_counter() - t0
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    if not args.quick and (set(args.methods) != set(METHODS) or args.datasets):
        df = merged(df, out.with_suffix(".csv"), datasets,
                    [METHODS[k].label for k in args.methods])
    df.to_csv(out.with_suffix(".csv"), index=False)
    header = [
        "# bench_frontier.py: accuracy-fairness frontiers, test figures over seeds",
        f"# command: {command}",
        f"# date: {started:%Y-%m-%d %H:%M %Z}; machine: nproc = {nproc()}; {git_state()}",
        f"# this run: {wall / 60:.1f} min; {len(seeds)} seeds per point; tolerances "
        f"{', '.join(f'{t:g}' for t in tols)}; mean (standard error over seeds)",
        f"# versions: {versions()}" + ("" if fairgbm is None else
                                       f", fairgbm {fairgbm.__version__}"),
        *(f"# {m.label}: missing ({m.missing})" for m in METHODS.values() if m.missing),
        *(["# FairGBM: EO only (its group constraints are FPR and FNR; none for "
           "demographic parity)"] if fairgbm is not None else [])]
    lines = report(df, header, [m.label for m in METHODS.values()], list(FAMILIES))
    out.with_suffix(".txt").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    plot_frontiers(df, [out.with_suffix(".png"), *map(Path, figures)],
                   [m.label for m in METHODS.values()],
                   single={m.label for m in METHODS.values() if not m.grid})


if __name__ == "__main__":
    main()
