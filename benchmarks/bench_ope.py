"""Off-policy estimators on the logged-bandit generator: bias, RMSE, 95% coverage, time.

The candidate policy is softmax(X @ W) with W the logging policy's coefficients plus
N(0, 0.4^2) noise (moderate overlap); the truth is integrated over 2e6 fresh individuals
with exact conditional expectations. Also the group gap V(z=1) - V(z=0) by DR.

Second table: tabular data whose logging policy and outcome probabilities vary freely per
cell (x, z) (4 cells x 3 groups, 3 actions, 3000 rows, three worlds), evaluated without
logged propensities with the default nuisances (per-cell frequencies), and for contrast
with logistic-regression nuisances on one-hot x plus one-hot z, the former default.

Third table: intervals for fairness deviations (``estimate_deviation``) on the bail world,
against the true deviation computed exactly from the world and the policy (decision
table): the logged decisions under coin-flip logging (independence is exactly 0) and
under a logging policy whose release rate rises with the cell x (small positive
independence and separation), and a candidate policy
evaluated from the by-cell logs by importance weighting; n in {2000, 20000}. For each:
the mean bias of the plug-in and of the bias-corrected estimate, and the coverage of the
percentile bootstrap interval (the former default), of the basic interval clipped at 0,
and of their union (the default now), all from the same 500 replicates.

Usage::

    python benchmarks/bench_ope.py                  # n in {1000, 10000, 100000}, 50 reps
    python benchmarks/bench_ope.py --quick          # n in {1000, 10000}, 10 reps
    python benchmarks/bench_ope.py --tables deviations --reps 300   # the third table only
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from fairdecide import Independence, Separation, Sufficiency, TabularPolicy, expected_utility
from fairdecide.datasets import (
    make_bail_problem,
    make_logged_bandit,
    make_tabular_problem,
    sample_logged_data,
)
from fairdecide.evaluation import estimate_deviation, evaluate_policy, evaluate_policy_by_group
from fairdecide.models.outcome import default_classifier

ESTIMATORS = ["dm", "ips", "snips", "dr"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--reps", type=int, default=None)
    parser.add_argument("--out", default=str(Path(__file__).parent / "results" / "ope.csv"))
    parser.add_argument("--tables", default="value,cells,deviations",
                        help="comma-separated subset of value,cells,deviations")
    args = parser.parse_args()
    tables = args.tables.split(",")
    out = Path(args.out)
    if "value" in tables:
        value_table(args)
    if "cells" in tables:
        cells = per_cell_table(args.reps or (10 if args.quick else 100),
                               out.with_name(out.stem + "_per_cell.csv"))
        print("\nPer-cell tabular data without logged propensities (3 worlds, n = 3000):")
        with pd.option_context("display.float_format", "{:.4f}".format,
                               "display.width", 140):
            print(cells.to_string())
    if "deviations" in tables:
        sizes = [2000] if args.quick else [2000, 20000]
        devs = deviation_table(args.reps or (10 if args.quick else 300), sizes,
                               out.with_name(out.stem + "_deviations.csv"))
        print("\nFairness deviations from logs (bail world): bias of the point estimate and "
              "coverage of 95% intervals, plug-in + percentile (before) against "
              "bias-corrected + union of percentile and basic (after):")
        with pd.option_context("display.float_format", "{:.4f}".format,
                               "display.width", 160):
            print(devs.to_string())


def value_table(args: argparse.Namespace) -> None:
    """Bias, RMSE, coverage and time of the value estimators on the bandit generator."""
    sizes = [1000, 10000] if args.quick else [1000, 10000, 100000]
    reps = args.reps or (10 if args.quick else 50)
    problem, _, truth = make_logged_bandit(10, random_state=0)
    policy = truth.nearby_policy(0.4, random_state=1)

    V = truth.value(policy, 2_000_000)
    gap_true = truth.value(policy, 2_000_000, group=1) - truth.value(policy, 2_000_000,
                                                                      group=0)
    print(f"true value {V:.5f}, true group gap {gap_true:.5f}")
    rows = []
    for n in sizes:
        for r in range(reps):
            _, data, _ = make_logged_bandit(n, random_state=10_000 + r, truth=truth)
            for name in ESTIMATORS:
                t0 = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    est = evaluate_policy(problem, data, policy, name, random_state=r)
                seconds = time.perf_counter() - t0
                lo, hi = est.confidence_interval(0.95)
                rows.append({"n": n, "rep": r, "estimator": name, "error": est.value - V,
                             "covered": lo <= V <= hi, "width": hi - lo,
                             "seconds": seconds})
            t0 = time.perf_counter()
            res = evaluate_policy_by_group(problem, data, policy, "dr", random_state=r)
            seconds = time.perf_counter() - t0
            gap = res.gaps().iloc[0]
            rows.append({"n": n, "rep": r, "estimator": "dr group gap",
                         "error": gap["gap"] - gap_true,
                         "covered": gap["low"] <= gap_true <= gap["high"],
                         "width": gap["high"] - gap["low"], "seconds": seconds})
        print(f"n = {n} done", flush=True)
    df = pd.DataFrame(rows)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    df.to_csv(args.out, index=False)
    g = df.groupby(["n", "estimator"])
    table = pd.DataFrame({
        "bias": g["error"].mean(),
        "rmse": g["error"].apply(lambda e: float(np.sqrt(np.mean(e**2)))),
        "coverage": g["covered"].mean(),
        "mean width": g["width"].mean(),
        "seconds/call": g["seconds"].median(),
        "reps": g.size(),
    })
    with pd.option_context("display.float_format", "{:.4f}".format, "display.width", 140):
        print(table.to_string())


def per_cell_table(reps: int, out: Path) -> pd.DataFrame:
    """Bias (in standard errors), coverage and RMSE on the per-cell tabular case."""
    rows = []
    for seed in range(3):
        problem, world = make_tabular_problem(4, 3, 3, 2, outcome_depends_on_action=True,
                                              random_state=seed)
        rng = np.random.default_rng(seed)
        logging = TabularPolicy(0.8 * rng.dirichlet(np.ones(3), size=(4, 3)) + 0.2 / 3)
        candidate = TabularPolicy(rng.dirichlet(np.ones(3), size=(4, 3)))
        V = expected_utility(problem, world, candidate)
        for r in range(reps):
            data = sample_logged_data(problem, world, 3000, policy=logging,
                                      random_state=1000 * seed + r)
            data.propensity = None
            for label, name, kwargs in (
                    ("dr (cells)", "dr", {}), ("ips (cells)", "ips", {}),
                    ("snips (cells)", "snips", {}),
                    ("dr (logistic)", "dr", {"outcome_model": default_classifier(),
                                             "logging_model": default_classifier()}),
                    ("ips (logistic)", "ips", {"logging_model": default_classifier()})):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    est = evaluate_policy(problem, data, candidate, name, random_state=r,
                                          **kwargs)
                lo, hi = est.confidence_interval(0.95)
                rows.append({"world": seed, "estimator": label, "error": est.value - V,
                             "z": (est.value - V) / est.std_error,
                             "covered": lo <= V <= hi})
    df = pd.DataFrame(rows)
    df.to_csv(out, index=False)
    g = df.groupby("estimator")
    return pd.DataFrame({
        "mean z (bias in SE)": g["z"].mean(),
        "sd z": g["z"].std(),
        "rmse": g["error"].apply(lambda e: float(np.sqrt(np.mean(e**2)))),
        "coverage": g["covered"].mean(),
        "runs": g.size(),
    })


def deviation_table(reps: int, sizes: list[int], out: Path) -> pd.DataFrame:
    """Bias and coverage of deviation estimates against the exact deviation."""
    problem, world = make_bail_problem()
    criteria = [Independence(), Separation(), Sufficiency()]
    coin = TabularPolicy.for_world(world, [0.5, 0.5])
    release = 0.44 + 0.03 * np.arange(world.n_x)[:, None] + np.zeros((1, world.n_z))
    by_cell = TabularPolicy(np.stack([1 - release, release], axis=-1))
    candidate = TabularPolicy(np.random.default_rng(2).dirichlet([2, 2], size=(world.n_x,
                                                                               world.n_z)))
    cases = [("logged, coin flips", coin, "logged"), ("logged, by cell", by_cell, "logged"),
             ("candidate, weighted", by_cell, candidate)]
    truth = {(label, c.label): c.deviation(logging if isinstance(pol, str) else pol, world,
                                           problem)
             for label, logging, pol in cases for c in criteria}
    rows = []
    for n in sizes:
        for r in range(reps):
            logs = {id(p): sample_logged_data(problem, world, n, policy=p,
                                              random_state=100_000 * r + n + k)
                    for k, p in enumerate((coin, by_cell))}
            for label, logging, pol in cases:
                for crit in criteria:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        est = estimate_deviation(problem, logs[id(logging)], crit, pol,
                                                 random_state=r)
                    true = truth[(label, crit.label)]
                    lo, hi = np.quantile(est.draws, [0.025, 0.975])
                    rows.append({"case": label, "criterion": crit.label, "n": n,
                                 "true": true, "plug_in_error": est.plug_in - true,
                                 "corrected_error": est.value - true,
                                 "percentile_covers": lo <= true <= hi,
                                 "basic_covers": max(0, 2 * est.plug_in - hi) <= true
                                 <= max(0, 2 * est.plug_in - lo),
                                 "union_covers": est.low <= true <= est.high,
                                 "percentile_width": hi - lo,
                                 "union_width": est.high - est.low})
    df = pd.DataFrame(rows)
    df.to_csv(out, index=False)
    g = df.groupby(["case", "criterion", "n"], sort=False)
    return pd.DataFrame({
        "true": g["true"].first(),
        "bias plug-in": g["plug_in_error"].mean(),
        "bias corrected": g["corrected_error"].mean(),
        "rmse plug-in": g["plug_in_error"].apply(lambda e: float(np.sqrt(np.mean(e**2)))),
        "rmse corrected": g["corrected_error"].apply(
            lambda e: float(np.sqrt(np.mean(e**2)))),
        "cover percentile": g["percentile_covers"].mean(),
        "cover basic": g["basic_covers"].mean(),
        "cover union": g["union_covers"].mean(),
        "width percentile": g["percentile_width"].mean(),
        "width union": g["union_width"].mean(),
        "runs": g.size(),
    })


if __name__ == "__main__":
    main()
