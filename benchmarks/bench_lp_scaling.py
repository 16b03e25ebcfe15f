"""Time the structured solver, the general HiGHS route and raw linprog on the same LP.

For each size the LP that fairdecide builds (policy rows, group-marginal variables,
fairness rows; epsilon = 0.01, binding) is also handed directly to
``scipy.optimize.linprog``: once with ``method="highs"`` (HiGHS chooses; in practice the
dual simplex) and once with ``method="highs-ipm"`` (the method fairdecide picks above
5,000 variables with more than two actions). fairdecide's time is end to end: building
the program, solving, cleaning the policy and verifying it from the decision table,
once with ``solver="structured"`` (the sifting solver of
:mod:`fairdecide.optimize.engine.structured`) and once with ``solver="highs"`` (the general
route). ``--scenarios 32`` adds a belief of 32 Dirichlet-perturbed copies of the world
(Bayes mean). The structured and general optima must agree to 1e-9 (relative).

With ``--landed REV`` the default route (``optimize_policy`` without ``solver=``) also
runs, end to end, on the package as it was at git revision REV (a temporary worktree),
and again on this package, each in a fresh process after one small warm-up solve (so
neither pays the imports), in the same run: the route landed before a change, beside it.

Usage::

    python benchmarks/bench_lp_scaling.py                 # full grid (takes a while)
    python benchmarks/bench_lp_scaling.py --quick         # n_x in {100, 1000}
    python benchmarks/bench_lp_scaling.py --time-limit 60 # cap each raw solve
    python benchmarks/bench_lp_scaling.py --sizes 1000 10000 100000 --groups 2 4 12 \
        --scenarios 1 32 --general-max 250000
    python benchmarks/bench_lp_scaling.py --sizes 10000 100000 --groups 2 12 \
        --actions 5 --criteria independence separation --general-max 0 --landed 5307494

Writes benchmarks/results/lp_scaling.csv and prints a markdown table.
"""

from __future__ import annotations

import argparse
import itertools
import time
from pathlib import Path

import numpy as np
import pandas as pd
from _landed import TREE, fresh, landed_tree
from scipy.optimize import linprog

from fairdecide import Belief, Independence, Separation, TabularWorld, optimize_policy
from fairdecide.datasets import make_tabular_problem
from fairdecide.optimize.program.policy_program import PolicyProgram
from fairdecide.optimize.program.tradeoff import FairnessConstraint

EPSILON = 0.01
#: One case on the package first on PYTHONPATH, public API only (it also runs on older
#: revisions): a warm-up solve, then the default route timed end to end.
ONE_CASE = """
import json, sys, time
from fairdecide import Belief, Independence, Separation, optimize_policy
from fairdecide.datasets import make_tabular_problem
n_x, n_z, n_a, kind = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
eps = float(sys.argv[5])
crit = Independence() if kind == "independence" else Separation()
warm = make_tabular_problem(50, 2, n_a, 2, random_state=1)
optimize_policy(warm[0], Belief.plug_in(warm[1]), crit, epsilon=0.01)
problem, world = make_tabular_problem(n_x, n_z, n_a, 2, random_state=0)
belief = Belief.plug_in(world)
t0 = time.perf_counter()
res = optimize_policy(problem, belief, crit, epsilon=eps)
print(json.dumps({"seconds": time.perf_counter() - t0, "objective": res.objective,
                  "solver": res.solver}))
"""


def raw_solve(prog, method: str, time_limit: float) -> tuple[float, float, str]:
    bounds = np.column_stack([prog.lb, prog.ub])
    bounds = np.where(np.isinf(bounds), None, bounds)
    t0 = time.perf_counter()
    res = linprog(prog.c, A_ub=prog.A_ub, b_ub=prog.b_ub, A_eq=prog.A_eq, b_eq=prog.b_eq,
                  bounds=bounds, method=method, options={"time_limit": time_limit})
    seconds = time.perf_counter() - t0
    return seconds, float(res.fun) if res.status == 0 else np.nan, res.message[:40]


def make_belief(world, K: int) -> Belief:
    """The world itself (K = 1), or K posterior-like Dirichlet perturbations of it."""
    if K == 1:
        return Belief.plug_in(world)
    rng = np.random.default_rng(0)
    conc = 50.0 * world.p_xz.size
    worlds = []
    for _ in range(K):
        p_xz = rng.dirichlet(conc * world.p_xz.ravel() + 1e-3).reshape(world.p_xz.shape)
        p_y = rng.gamma(50 * world.p_y + 1e-3)
        worlds.append(TabularWorld(p_xz, p_y / p_y.sum(axis=-1, keepdims=True)))
    return Belief(worlds)


def timed(f):
    t0 = time.perf_counter()
    out = f()
    return time.perf_counter() - t0, out


def one_case(n_x: int, n_z: int, n_a: int, kind: str, K: int, time_limit: float,
             general_max: int, landed: Path | None = None) -> dict:
    problem, world = make_tabular_problem(n_x, n_z, n_a, 2, random_state=0)
    belief = make_belief(world, K)
    crit = Independence() if kind == "independence" else Separation()
    st_s, res = timed(lambda: optimize_policy(problem, belief, crit, epsilon=EPSILON,
                                              solver="structured"))
    info = res.stats.get("structured", {})
    pp = PolicyProgram(problem, belief, group_blind=False)
    prog = pp.build([crit], FairnessConstraint((EPSILON,)))
    row = {
        "criterion": kind, "n_x": n_x, "n_z": n_z, "n_actions": n_a, "K": K,
        "variables": prog.n_variables, "structured_s": st_s,
        "structured_solver": res.solver,
        "rounds": res.certificates.get("optimality", {}).get("rounds"),
        "free_units": info.get("working_units"), "units": info.get("units"),
        "utility": res.utility,
    }
    if landed is not None and K == 1:
        now, old = (fresh(t, ONE_CASE, n_x, n_z, n_a, kind, EPSILON)
                    for t in (TREE, landed))
        row.update(default_s=now["seconds"], landed_s=old["seconds"],
                   landed_solver=old["solver"],
                   landed_rel_diff=abs(now["objective"] - old["objective"])
                   / max(1.0, abs(old["objective"])))
    if prog.n_variables <= general_max:
        gen_s, gen = timed(lambda: optimize_policy(problem, belief, crit, epsilon=EPSILON,
                                                   solver="highs"))
        row.update(general_s=gen_s, general_solver=gen.solver,
                   rel_diff=abs(res.objective - gen.objective) / max(1.0, abs(gen.objective)))
        raw_ds, fun_ds, _ = raw_solve(prog, "highs-ds", time_limit)
        raw_ipm, fun_ipm, _ = raw_solve(prog, "highs-ipm", time_limit)
        row.update(raw_ds_s=raw_ds if not np.isnan(fun_ds) else np.inf,
                   raw_ipm_s=raw_ipm if not np.isnan(fun_ipm) else np.inf)
    else:
        row.update(general_s=np.nan, general_solver="not run", rel_diff=np.nan,
                   raw_ds_s=np.nan, raw_ipm_s=np.nan)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="n_x in {100, 1000} only")
    parser.add_argument("--sizes", type=int, nargs="+", default=None)
    parser.add_argument("--groups", type=int, nargs="+", default=[2, 4])
    parser.add_argument("--actions", type=int, nargs="+", default=[2, 5])
    parser.add_argument("--scenarios", type=int, nargs="+", default=[1])
    parser.add_argument("--criteria", nargs="+", default=["independence", "separation"])
    parser.add_argument("--time-limit", type=float, default=120.0,
                        help="seconds allowed to each raw linprog solve (default 120)")
    parser.add_argument("--general-max", type=int, default=250_000,
                        help="largest program (variables) also given to the general route "
                             "and raw HiGHS")
    parser.add_argument("--out", default=str(Path(__file__).parent / "results" /
                                             "lp_scaling.csv"))
    parser.add_argument("--landed", default=None, metavar="REV",
                        help="also run the default route on the package at git revision "
                             "REV, and on this one, each in a fresh process (K = 1)")
    args = parser.parse_args()
    sizes = args.sizes or ([100, 1000] if args.quick else [100, 1000, 10000])
    rows = []
    with landed_tree(args.landed) as landed:
        for kind, K, n_x, n_z, n_a in itertools.product(args.criteria, args.scenarios, sizes,
                                                        args.groups, args.actions):
            row = one_case(n_x, n_z, n_a, kind, K, args.time_limit, args.general_max, landed)
            rows.append(row)
            print(f"{kind:12s} K={K:3d} n_x={n_x:6d} n_z={n_z:2d} n_a={n_a}: "
                  f"{row['variables']:8d} vars, structured {row['structured_s']:.3f} s "
                  f"({row['rounds']} rounds, {row['free_units']} of {row['units']} units free), "
                  f"general {row['general_s']:.3f} s, raw ds {row['raw_ds_s']:.3f} s, "
                  f"raw ipm {row['raw_ipm_s']:.3f} s, rel diff {row['rel_diff']:.1e}"
                  + (f"; fresh process: default {row['default_s']:.3f} s, landed "
                     f"{row['landed_s']:.3f} s ({row['landed_s'] / row['default_s']:.1f}x), "
                     f"rel diff {row['landed_rel_diff']:.1e}" if "landed_s" in row else ""),
                  flush=True)
    df = pd.DataFrame(rows)
    best = df[["general_s", "raw_ds_s", "raw_ipm_s"]].min(axis=1)
    df["speedup_vs_best_general"] = best / df["structured_s"]
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    df.to_csv(args.out, index=False)
    cols = ["criterion", "K", "n_x", "n_z", "n_actions", "variables", "structured_s",
            "general_s", "raw_ds_s", "raw_ipm_s", "speedup_vs_best_general", "rel_diff",
            "structured_solver"]
    if "landed_s" in df:
        df["landed_over_default"] = df["landed_s"] / df["default_s"]
        cols[7:7] = ["default_s", "landed_s", "landed_over_default", "landed_rel_diff"]
    print()
    print(df[cols].to_markdown(index=False, floatfmt=".3g"))
    agree = df["rel_diff"].dropna()
    if len(agree):
        print(f"\nlargest relative objective difference, structured vs general: "
              f"{agree.max():.2e}")


if __name__ == "__main__":
    main()
