"""The Bayesian-fairness COMPAS experiment, solved exactly, against the published values.

Usage::

    python benchmarks/bench_bayesian_fairness.py            # 10 hold-out runs, 20 semi-synthetic
    python benchmarks/bench_bayesian_fairness.py --quick    # 2 and 2 runs

    # the number of posterior scenarios K, each policy's value on held-out draws, SGD:
    python benchmarks/bench_bayesian_fairness.py --scenarios 32 128 512 \\
        --runs-by-k 128:5 512:3 --held-out 1000 --sgd --sgd-runs 5 --lambdas 0.5 1 \\
        --report benchmarks/results/bayesian_fairness_scenarios.txt

Needs the COMPAS file (FAIRDECIDE_DATA, or a download). Writes
benchmarks/results/bayesian_fairness_{holdout,semisynthetic}.csv (with --scenarios:
bayesian_fairness_scenarios_{holdout,semisynthetic}.csv) and prints the tables; with
--report also a text file with the command, date and machine.

With --scenarios, the Bayes (and, up to --maximin-max, maximin) policies are fitted on
each K of draws; "in" is a policy's mean T over the draws it was fitted on and "ho" its
mean T over --held-out posterior draws independent of them (its posterior value
estimated honestly); T is the true value (test world or known truth). SGD is the
stochastic gradient over fresh draws (fairdecide.experiments.scenario_sgd).
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import resource
import shlex
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from fairdecide.experiments import bayesian_fairness as bf
from fairdecide.experiments.scenario_sgd import ScenarioSGD

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


def sweep_table(df: pd.DataFrame) -> pd.DataFrame:
    """Per (lambda, n, K): mean T of every method over the runs where K was fitted (the
    K-free methods over the same runs), Bayes' in-sample and held-out value, SGD's."""
    if "n" not in df:
        df = df.assign(n=0)
    out = []
    for K in sorted(df.loc[df["method"] == "Bayes", "K"].unique()):
        runs = df[(df["method"] == "Bayes") & (df["K"] == K)][["n", "run"]].drop_duplicates()
        sub = df.merge(runs, on=["n", "run"])
        sub = sub[(sub["K"] == K) | ~sub["method"].isin(["Bayes", "maximin"])]
        for (lam, n), g in sub.groupby(["lambda", "n"]):
            by = g.groupby("method")
            T, ho = by["T"].mean(), by["held-out"].mean()
            bayes = g[g["method"] == "Bayes"]
            sgd_runs = int((g["method"] == "SGD").sum())
            out.append({
                "lambda": lam, "n": n, "K": int(K), "runs": len(bayes),
                **{m: T.get(m, np.nan) for m in ("constant", "plug-in", "maximin",
                                                   "Bayes", "SGD", "oracle")},
                "Bayes in": bayes["in-sample"].mean(), "Bayes ho": ho.get("Bayes", np.nan),
                "const ho": ho.get("constant", np.nan), "SGD ho": ho.get("SGD", np.nan),
                "SGD runs": sgd_runs,
                "Bayes s med": bayes["seconds"].median(), "Bayes s max": bayes["seconds"].max()})
    table = pd.DataFrame(out).set_index(["lambda", "n", "K"]).sort_index()
    return table.dropna(axis=1, how="all")


def paired_table(df: pd.DataFrame) -> pd.DataFrame:
    """Per (lambda, n, K): the Bayes policy's T minus the constant policy's T on the same
    run (same training data and truth), its mean, standard error over runs, and in how
    many runs Bayes was better by more than 1e-9."""
    if "n" not in df:
        df = df.assign(n=0)
    key = ["n", "run", "lambda"]
    const = df[df["method"] == "constant"][[*key, "T"]].rename(columns={"T": "constant"})
    bayes = df[df["method"] == "Bayes"].merge(const, on=key)
    bayes["diff"] = bayes["T"] - bayes["constant"]
    g = bayes.groupby(["lambda", "n", "K"])["diff"]
    return pd.DataFrame({"runs": g.size(), "Bayes - constant": g.mean(),
                         "std err": g.std(ddof=1) / np.sqrt(g.size()),
                         "Bayes better": g.apply(lambda d: int((d > 1e-9).sum()))})


def timing_table(df: pd.DataFrame) -> pd.DataFrame:
    """Seconds per solve (median, max), solver routes and iterations, per method and K."""
    fit = df[df["method"].isin(["Bayes", "maximin", "bootstrap", "SGD"])]
    rows = []
    for (method, K), g in fit.groupby(["method", "K"]):
        rows.append({"method": method, "K": int(K), "solves": len(g),
                     "s median": g["seconds"].median(), "s max": g["seconds"].max(),
                     # the route's name, without each run's own counts after ':'
                     "solver": ", ".join(sorted({str(v).split(":")[0]
                                                 for v in g["solver"]})),
                     "iterations median": g["iterations"].median()})
    return pd.DataFrame(rows).set_index(["method", "K"])


def parse_runs_by_k(items: list[str]) -> dict[int, int]:
    out = {}
    for item in items:
        k, _, r = item.partition(":")
        try:
            out[int(k)] = int(r)
        except ValueError:
            raise SystemExit(f"--runs-by-k takes K:RUNS pairs such as 512:3, got {item!r}"
                             ) from None
    return out


def preamble(run: dict) -> list[str]:
    """Command, date, machine and versions, as the other results files give them."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_fairlearn import git_state, nproc

    return [
        f"command: {run['command']}",
        f"date:    {run['started']:%Y-%m-%d %H:%M %Z}",
        f"machine: nproc = {nproc()}, {platform.machine()}, {platform.system()}; "
        f"1-min load average {run['load']:.1f} at start, {os.getloadavg()[0]:.1f} at end; "
        "the machine may be shared (times are as measured)",
        f"versions: python {platform.python_version()}, numpy {np.__version__}",
        f"          {git_state()}",
        f"peak resident memory of this process: "
        f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--data-home", default=None)
    parser.add_argument("--out-dir", default=str(OUT), help="where the CSV files go")
    parser.add_argument("--protocol", choices=("both", "holdout", "semi"), default="both")
    parser.add_argument("--scenarios", type=int, nargs="+", default=None, metavar="K",
                        help="numbers of posterior scenarios (default: 32, the old tables)")
    parser.add_argument("--runs-by-k", nargs="*", default=[], metavar="K:RUNS",
                        help="fit K only in the first RUNS runs (large K are slow)")
    parser.add_argument("--held-out", type=int, default=None, metavar="H",
                        help="held-out posterior draws (default 1000 with --scenarios)")
    parser.add_argument("--maximin-max", type=int, default=None,
                        help="fit maximin only for K up to this")
    parser.add_argument("--sgd", action="store_true", help="add the stochastic gradient")
    parser.add_argument("--sgd-runs", type=int, default=None)
    parser.add_argument("--runs", type=int, default=None, help="hold-out runs")
    parser.add_argument("--semi-runs", type=int, default=None)
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 300, 1000, 3000, 6000])
    parser.add_argument("--lambdas", type=float, nargs="+", default=[0.0, 0.5, 1.0],
                        help="the papers' weights lambda of T = U - lambda F (each solved "
                        "as the mixture lam = lambda / (1 + lambda), the library's lam)")
    parser.add_argument("--report", default=None, help="text file for the tables")
    args = parser.parse_args()
    command = "python " + " ".join(shlex.quote(a) for a in sys.argv)
    if os.environ.get("FAIRDECIDE_DATA"):
        command = f"FAIRDECIDE_DATA={os.environ['FAIRDECIDE_DATA']} {command}"
    run = {"command": command, "started": datetime.datetime.now().astimezone(),
           "load": os.getloadavg()[0]}
    out = Path(args.out_dir)
    runs, semi_runs = (2, 2) if args.quick else (10, 20)
    runs, semi_runs = args.runs or runs, args.semi_runs or semi_runs
    sweep = args.scenarios is not None
    held = args.held_out if args.held_out is not None else (1000 if sweep else 0)
    options = dict(lams=tuple(bf.lam_of(v) for v in args.lambdas),
                   scenarios=args.scenarios, held_out=held,
                   runs_by_k=parse_runs_by_k(args.runs_by_k), maximin_max=args.maximin_max,
                   sgd=ScenarioSGD() if args.sgd else None, sgd_runs=args.sgd_runs)
    stem = "bayesian_fairness_scenarios" if sweep else "bayesian_fairness"
    data, problem = bf.compas_data(args.data_home)
    lines = [f"{data}: {data.n_x} cells, {data.n_z} groups"]
    print(lines[0])
    out.mkdir(parents=True, exist_ok=True)

    def show(text: str) -> None:
        print(text, flush=True)
        lines.append(text)

    fmt = ("display.float_format", "{:.4f}".format, "display.width", 200,
           "display.max_columns", 30)
    if args.protocol in ("both", "holdout"):
        t0 = time.perf_counter()
        hold = bf.holdout_experiment(data, problem, runs=runs, **options)
        hold.to_csv(out / f"{stem}_holdout.csv", index=False)
        show(f"\n## Hold-out protocol ({runs} runs, train 6000, test 1214; "
             f"{time.perf_counter() - t0:.0f} s)")
        with pd.option_context(*fmt):
            show(sweep_table(hold).to_string() if sweep else holdout_table(hold).to_string())
            if sweep:
                show("\nBayes minus constant, paired by run\n"
                     + paired_table(hold).to_string())
                show("\nTimes per solve (s)\n" + timing_table(hold).to_string())
        bayes = hold[hold["method"] == "Bayes"]
        if not sweep:
            show(f"\nBayes LP (32 scenarios, 141 cells x 12 groups, group-blind): seconds per "
                 f"solve median {bayes['seconds'].median():.3f}, max "
                 f"{bayes['seconds'].max():.3f}")

    if args.protocol in ("both", "semi"):
        t0 = time.perf_counter()
        semi = bf.semi_synthetic_experiment(data, problem, runs=semi_runs,
                                            sizes=tuple(args.sizes), **options)
        semi.to_csv(out / f"{stem}_semisynthetic.csv", index=False)
        show(f"\n## Semi-synthetic protocol ({semi_runs} runs per n; truth = posterior mean "
             f"of all 7214 rows; {time.perf_counter() - t0:.0f} s)")
        with pd.option_context(*fmt):
            show(sweep_table(semi).to_string() if sweep else semi_table(semi).to_string())
            if sweep:
                show("\nBayes minus constant, paired by run\n"
                     + paired_table(semi).to_string())
                show("\nTimes per solve (s)\n" + timing_table(semi).to_string())
    if args.report:
        Path(args.report).write_text("\n".join(
            ["Bayesian fairness on COMPAS: posterior scenarios K, held-out posterior value, "
             "SGD", "", *preamble(run), "", *lines]) + "\n")


if __name__ == "__main__":
    main()
