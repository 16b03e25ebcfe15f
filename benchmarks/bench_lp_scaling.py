"""Time optimize_policy against a raw scipy.optimize.linprog(method="highs") on the same LP.

For each size the LP that fairdecide builds (policy rows, group-marginal variables,
fairness rows; epsilon = 0.01, binding) is also handed directly to
``scipy.optimize.linprog``: once with ``method="highs"`` (HiGHS chooses; in practice the
dual simplex) and once with ``method="highs-ipm"`` (the method fairdecide picks above
5,000 variables with more than two actions). fairdecide's time is end to end: building
the program, solving, cleaning the policy and verifying it from the decision table.

Usage::

    python benchmarks/bench_lp_scaling.py                 # full grid (takes a while)
    python benchmarks/bench_lp_scaling.py --quick         # n_x in {100, 1000}
    python benchmarks/bench_lp_scaling.py --time-limit 60 # cap each raw solve

Writes benchmarks/results/lp_scaling.csv and prints a markdown table.
"""

from __future__ import annotations

import argparse
import itertools
import time
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.optimize import linprog

from fairdecide import Belief, Independence, Separation, optimize_policy
from fairdecide.datasets import make_tabular_problem
from fairdecide.optimize.program import PolicyProgram
from fairdecide.optimize.tradeoff import FairnessConstraint

EPSILON = 0.01


def raw_solve(prog, method: str, time_limit: float) -> tuple[float, float, str]:
    bounds = np.column_stack([prog.lb, prog.ub])
    bounds = np.where(np.isinf(bounds), None, bounds)
    t0 = time.perf_counter()
    res = linprog(prog.c, A_ub=prog.A_ub, b_ub=prog.b_ub, A_eq=prog.A_eq, b_eq=prog.b_eq,
                  bounds=bounds, method=method, options={"time_limit": time_limit})
    seconds = time.perf_counter() - t0
    return seconds, float(res.fun) if res.status == 0 else np.nan, res.message[:40]


def one_case(n_x: int, n_z: int, n_a: int, kind: str, time_limit: float) -> dict:
    problem, world = make_tabular_problem(n_x, n_z, n_a, 2, random_state=0)
    crit = Independence() if kind == "independence" else Separation()
    t0 = time.perf_counter()
    res = optimize_policy(problem, world, crit, epsilon=EPSILON)
    fd_seconds = time.perf_counter() - t0
    # The same LP, built the same way, handed to linprog directly.
    pp = PolicyProgram(problem, Belief.plug_in(world), group_blind=False)
    prog = pp.build([crit], FairnessConstraint((EPSILON,)))
    raw_ds, fun_ds, _ = raw_solve(prog, "highs", time_limit)
    raw_ipm, fun_ipm, _ = raw_solve(prog, "highs-ipm", time_limit)
    agree = np.isnan(fun_ipm) or abs(-fun_ipm - res.utility) <= 1e-6
    return {
        "criterion": kind, "n_x": n_x, "n_z": n_z, "n_actions": n_a,
        "variables": prog.n_variables, "fairdecide_s": fd_seconds,
        "fd_solver": res.solver, "fd_solve_s": res.stats["solve_seconds"],
        "raw_highs_s": raw_ds if not np.isnan(fun_ds) else np.inf,
        "raw_highs_ipm_s": raw_ipm if not np.isnan(fun_ipm) else np.inf,
        "same_optimum": bool(agree),
        "utility": res.utility,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="n_x in {100, 1000} only")
    parser.add_argument("--time-limit", type=float, default=120.0,
                        help="seconds allowed to each raw linprog solve (default 120)")
    parser.add_argument("--out", default=str(Path(__file__).parent / "results" /
                                             "lp_scaling.csv"))
    args = parser.parse_args()
    sizes = [100, 1000] if args.quick else [100, 1000, 10000]
    rows = []
    for kind, n_x, n_z, n_a in itertools.product(["independence", "separation"], sizes,
                                                 [2, 4], [2, 5]):
        row = one_case(n_x, n_z, n_a, kind, args.time_limit)
        rows.append(row)
        print(f"{kind:12s} n_x={n_x:6d} n_z={n_z} n_a={n_a}: fairdecide "
              f"{row['fairdecide_s']:.3f} s, raw highs {row['raw_highs_s']:.3f} s, "
              f"raw highs-ipm {row['raw_highs_ipm_s']:.3f} s", flush=True)
    df = pd.DataFrame(rows)
    best_raw = df[["raw_highs_s", "raw_highs_ipm_s"]].min(axis=1)
    df["overhead_vs_same_method"] = df["fairdecide_s"] / np.where(
        df["fd_solver"].str.contains("ipm"), df["raw_highs_ipm_s"], df["raw_highs_s"])
    df["ratio_vs_raw_highs"] = df["fairdecide_s"] / df["raw_highs_s"]
    df["ratio_vs_best_raw"] = df["fairdecide_s"] / best_raw
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    df.to_csv(args.out, index=False)
    cols = ["criterion", "n_x", "n_z", "n_actions", "variables", "fairdecide_s",
            "fd_solver", "raw_highs_s", "raw_highs_ipm_s", "overhead_vs_same_method",
            "ratio_vs_raw_highs", "same_optimum"]
    print()
    print(df[cols].to_markdown(index=False, floatfmt=".3g"))
    big = df[best_raw > 0.1]
    print(f"\nwhere the faster raw solve takes > 0.1 s: max fairdecide / best raw = "
          f"{big['ratio_vs_best_raw'].max():.2f}, max overhead over the same method = "
          f"{big['overhead_vs_same_method'].max():.2f}")


if __name__ == "__main__":
    main()
