"""Pareto frontiers: one warm program against a cold solve per tolerance, one run.

For each case, ``pareto_frontier`` (the program built once, its tolerance rows changed
from the largest tolerance down, each point re-solved by the dual simplex from the last
basis and verified) beside the route every frontier took before: ``optimize_policy``
once per tolerance, cold, by the default route. Both end to end, in one process, one
after the other; ``max |dU|`` compares the two frontiers' verified utilities. (Large
single worlds go to the structured solver, point by point, and are not measured here.)

With ``--landed REV`` each route of each case runs instead in fresh processes on the
package at git revision REV and on this one, alternating (``--repeats`` times, once for a
case over 10 s), into pareto_warm_vs_landed.txt: median seconds, the ratio this / landed
and whether the sums of the frontier's utilities agree (relative 1e-6).

Usage::

    python benchmarks/bench_pareto_warm.py            # the committed cases
    python benchmarks/bench_pareto_warm.py --quick    # small cases (CI)
    python benchmarks/bench_pareto_warm.py --landed 79b1da6 --repeats 3
"""

from __future__ import annotations

import argparse
import datetime
import platform
import shlex
import sys
import time
from pathlib import Path

import numpy as np
from _landed import Table, add_arguments, compare, landed_tree, runs
from bench_beliefs import tabular_belief

import fairdecide as fd
from fairdecide.datasets import make_tabular_problem
from fairdecide.optimize import pareto_frontier

OUT = Path(__file__).parent / "results" / "pareto_warm.txt"


def world_case(n_x: int, n_z: int):
    problem, world = make_tabular_problem(n_x, n_z, 5, 2, random_state=0)
    return problem, world


def belief_case(n_x: int, K: int):
    return tabular_belief(n_x, K)


CASES = {"world 200 x 4 x 5": lambda: world_case(200, 4),
         "belief 100 x 4 x 5, K = 8": lambda: belief_case(100, 8),
         "belief 300 x 4 x 5, K = 32": lambda: belief_case(300, 32)}
QUICK = {"world 50 x 3 x 5": lambda: world_case(50, 3),
         "belief 30 x 4 x 5, K = 4": lambda: belief_case(30, 4)}
CRITERIA = {"independence": fd.Independence, "separation": fd.Separation}


def tolerances(problem, world, crit, n_points: int) -> np.ndarray:
    top = fd.optimize_policy(problem, world, crit, lam=0.0).deviations[crit.label]
    # from 1% of the top: at exactly 0, a belief's separation is diagnosed infeasible
    # (smallest deviation about 4e-10, HiGHS's tolerance) by both routes alike
    return np.linspace(0.01 * top, top, n_points)


def run(name: str, problem, world, crit, n_points: int) -> str:
    eps = tolerances(problem, world, crit, n_points)
    t0 = time.perf_counter()
    warm = pareto_frontier(problem, world, crit, eps)
    warm_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    cold = [fd.optimize_policy(problem, world, crit, epsilon=float(e)) for e in eps]
    cold_s = time.perf_counter() - t0
    diff = float(np.max(np.abs(warm["utility"].to_numpy() - [r.utility for r in cold])))
    n_warm = int(warm["solver"].str.contains("warm").sum())
    return (f"| {name} | {crit.label} | {n_points} | {warm_s:.3f} | {cold_s:.3f} | "
            f"{cold_s / warm_s:.1f} | {diff:.1e} | {n_warm} | {cold[-1].solver.split(':')[0]} |")


def landed_case(name: str, criterion: str, route: str, n_points: int) -> dict:
    """One route ("warm" or "cold") of one case, timed after a small warm-up solve (for
    --landed: run in a fresh process on either tree's package); value: the sum of the
    frontier's utilities."""
    from fairdecide.datasets import make_tabular_problem

    problem, world = {**CASES, **QUICK}[name]()
    crit = CRITERIA[criterion]()
    fd.optimize_policy(*make_tabular_problem(20, 2, 3, 2, random_state=1), fd.Independence(),
                       epsilon=0.01)
    eps = tolerances(problem, world, crit, n_points)
    t0 = time.perf_counter()
    if route == "warm":
        front = pareto_frontier(problem, world, crit, eps)
        utilities, solver = front["utility"].to_numpy(), str(front["solver"].iloc[-1])
    else:
        cold = [fd.optimize_policy(problem, world, crit, epsilon=float(e)) for e in eps]
        utilities, solver = [r.utility for r in cold], cold[-1].solver
    return {"seconds": time.perf_counter() - t0, "value": float(np.sum(utilities)),
            "solver": solver.split(":")[0]}


def landed_main(args) -> None:
    """Each route of each case on the landed tree and this one (pareto_warm_vs_landed)."""
    out = (Path(args.out) if args.out != str(OUT)
           else OUT.with_name("pareto_warm_vs_landed.txt"))
    repeats = 1 if args.quick else args.repeats
    table = Table(out, "Pareto frontiers, warm and cold, against the landed version",
                  "bench_pareto_warm.py", args.landed,
                  [f"{args.points} tolerances from 1% of the unconstrained optimum's "
                   "deviation to all of it; warm = pareto_frontier, cold = optimize_policy per "
                   "tolerance; each in a fresh process after a small warm-up solve, "
                   + runs(repeats, "the sum of the frontier's utilities")
                   + "; note: the route of the last point"])
    with landed_tree(args.landed) as old:
        for name in (QUICK if args.quick else CASES):
            for criterion in CRITERIA:
                for route in ("warm", "cold"):
                    got = compare(old, "bench_pareto_warm",
                                  (name, criterion, route, args.points), repeats,
                                  timeout=args.timeout)
                    table.add(f"{name}, {criterion}, {route}", got, key="solver")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--points", type=int, default=11)
    parser.add_argument("--out", default=str(OUT))
    add_arguments(parser, "pareto_warm_vs_landed.txt")
    args = parser.parse_args()
    if args.landed:
        landed_main(args)
        return
    cases = list((QUICK if args.quick else CASES).items())
    lines = [
        f"# {Path(__file__).name}: Pareto frontiers, one warm program against a cold solve "
        "per tolerance",
        f"# command: python benchmarks/{Path(__file__).name} {shlex.join(sys.argv[1:])}",
        f"# date: {datetime.date.today()}, {platform.machine()}, python "
        f"{platform.python_version()}; one process, warm then cold for each case; "
        "tolerances evenly spaced from 1% of the unconstrained optimum's deviation to all of it",
        "",
        "| case | criterion | points | warm s | cold s | speed-up | max abs dU | warm points "
        "| cold route (last point) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    print("\n".join(lines), flush=True)
    for name, make in cases:
        problem, world = make()
        for crit in (c() for c in CRITERIA.values()):
            line = run(name, problem, world, crit, args.points)
            print(line, flush=True)
            lines.append(line)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
