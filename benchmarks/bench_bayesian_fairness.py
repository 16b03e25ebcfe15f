"""The Bayesian-fairness COMPAS experiment, solved exactly, against the published values.

Usage::

    python benchmarks/bench_bayesian_fairness.py            # 10 hold-out runs, 20 semi-synthetic
    python benchmarks/bench_bayesian_fairness.py --quick    # 2 and 2 runs

Needs the COMPAS file (FAIRDECIDE_DATA, or a download). Writes
benchmarks/results/bayesian_fairness_{holdout,semisynthetic}.csv and prints the tables.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd

from fairdecide.experiments import bayesian_fairness as bf

OUT = Path(__file__).parent / "results"


def holdout_table(df: pd.DataFrame) -> pd.DataFrame:
    g = df.groupby(["lambda", "method"])["T"]
    table = pd.DataFrame({"T mean": g.mean(), "T std": g.std(), "runs": g.size()})
    pub = []
    for lam, method in table.index:
        ref = bf.PUBLISHED.get(lam, {})
        value = ref.get(method, ref.get("all methods", np.nan))
        pub.append(value)
    table["published"] = pub
    table["ours - published"] = table["T mean"] - table["published"]
    return table


def semi_table(df: pd.DataFrame) -> pd.DataFrame:
    mean = df.groupby(["lambda", "n", "method"])["T"].mean().unstack("method")
    gap = mean["oracle"] - mean["constant"]
    for method in ("plug-in", "Bayes", "maximin"):
        mean[f"gap closed: {method}"] = (mean[method] - mean["constant"]) / gap
    return mean


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--data-home", default=None)
    parser.add_argument("--out-dir", default=str(OUT), help="where the CSV files go")
    args = parser.parse_args()
    out = Path(args.out_dir)
    runs, semi_runs = (2, 2) if args.quick else (10, 20)
    data, problem = bf.compas_data(args.data_home)
    print(f"{data}: {data.n_x} cells, {data.n_z} groups")
    out.mkdir(parents=True, exist_ok=True)

    t0 = time.perf_counter()
    hold = bf.holdout_experiment(data, problem, runs=runs)
    hold.to_csv(out / "bayesian_fairness_holdout.csv", index=False)
    elapsed = time.perf_counter() - t0
    print(f"\n## Hold-out protocol ({runs} runs, train 6000, test 1214; {elapsed:.0f} s)")
    with pd.option_context("display.float_format", "{:.4f}".format, "display.width", 140):
        print(holdout_table(hold).to_string())
    bayes = hold[hold["method"] == "Bayes"]
    print(f"\nBayes LP (32 scenarios, 141 cells x 12 groups, group-blind): seconds per "
          f"solve median {bayes['seconds'].median():.3f}, max {bayes['seconds'].max():.3f}")

    t0 = time.perf_counter()
    semi = bf.semi_synthetic_experiment(data, problem, runs=semi_runs)
    semi.to_csv(out / "bayesian_fairness_semisynthetic.csv", index=False)
    print(f"\n## Semi-synthetic protocol ({semi_runs} runs per n; truth = posterior mean of all "
          f"7214 rows; {time.perf_counter() - t0:.0f} s)")
    with pd.option_context("display.float_format", "{:.4f}".format, "display.width", 160):
        print(semi_table(semi).to_string())


if __name__ == "__main__":
    main()
