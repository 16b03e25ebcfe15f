"""Pareto frontiers: one warm program against a cold solve per tolerance, one run.

For each case, ``pareto_frontier`` (the program built once, its tolerance rows changed
from the largest tolerance down, each point re-solved by the dual simplex from the last
basis and verified) beside the route every frontier took before: ``optimize_policy``
once per tolerance, cold, by the default route. Both end to end, in one process, one
after the other; ``max |dU|`` compares the two frontiers' verified utilities. (Large
single worlds go to the structured solver, point by point, and are not measured here.)

Usage::

    python benchmarks/bench_pareto_warm.py            # the committed cases
    python benchmarks/bench_pareto_warm.py --quick    # small cases (CI)
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

import fairdecide as fd
from fairdecide.datasets import make_tabular_problem, sample_logged_data
from fairdecide.optimize import pareto_frontier

OUT = Path(__file__).parent / "results" / "pareto_warm.txt"


def world_case(n_x: int, n_z: int):
    problem, world = make_tabular_problem(n_x, n_z, 5, 2, random_state=0)
    return problem, world


def belief_case(n_x: int, K: int):
    problem, world = make_tabular_problem(n_x, 4, 5, 2, random_state=0)
    data = sample_logged_data(world, problem, 20 * n_x * 4, random_state=0)
    post = fd.DirichletPosterior(prior=0.5).fit(data, problem)
    return problem, fd.Belief.from_posterior(post, K, random_state=0)


def run(name: str, problem, world, crit, n_points: int) -> str:
    top = fd.optimize_policy(problem, world, crit, lam=0.0).deviations[crit.label]
    # from 1% of the top: at exactly 0, a belief's separation is diagnosed infeasible
    # (smallest deviation about 4e-10, HiGHS's tolerance) by both routes alike
    eps = np.linspace(0.01 * top, top, n_points)
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--points", type=int, default=11)
    parser.add_argument("--out", default=str(OUT))
    args = parser.parse_args()
    if args.quick:
        cases = [("world 50 x 3 x 5", lambda: world_case(50, 3)),
                 ("belief 30 x 4 x 5, K = 4", lambda: belief_case(30, 4))]
    else:
        cases = [("world 200 x 4 x 5", lambda: world_case(200, 4)),
                 ("belief 100 x 4 x 5, K = 8", lambda: belief_case(100, 8)),
                 ("belief 300 x 4 x 5, K = 32", lambda: belief_case(300, 32))]
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
        for crit in (fd.Independence(), fd.Separation()):
            line = run(name, problem, world, crit, args.points)
            print(line, flush=True)
            lines.append(line)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
