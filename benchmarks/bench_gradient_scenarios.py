"""The gradient route on beliefs with many scenarios: exact epigraphs against smoothing.

Past ``EPIGRAPH_LIMIT`` epigraph variables (scenarios x terms) the gradient route smooths
the deviations as an upper bound instead of adding epigraph variables, because SLSQP's
dense subproblems grow with the cube of the variables. This script solves the same
problems both ways in one run (the exact form by raising the limit) and reports time and
the verified utility and deviation of each.

Problem: 1,000 people with three features and two groups, P(y = 1 | x) logistic, a
belief of K scenarios that perturb it (normal noise, sd 0.1, clipped), prediction with
accuracy utility, a linear-softmax policy reading the group, separation <= 0.04.

With ``--landed REV`` each case (both forms) runs instead in fresh processes on the
package at git revision REV and on this one, alternating (``--repeats`` times, once for a
case over 10 s), into gradient_scenarios_vs_landed.txt: median seconds, the ratio this /
landed and whether the objectives agree (relative 1e-6; a local optimum of SLSQP from
the same starts, so a changed path can move it a little: the table then says so).

Usage::

    python benchmarks/bench_gradient_scenarios.py [--quick] [--out FILE]
    python benchmarks/bench_gradient_scenarios.py --landed 79b1da6 --repeats 3
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np
from _landed import Table, add_arguments, compare, landed_tree, runs

import fairdecide as fd
import fairdecide.optimize.routes.gradient_program as program


def belief(n: int, K: int, aggregate: str) -> fd.Belief:
    rng = np.random.RandomState(10)
    z = rng.randint(0, 2, n)
    X = rng.normal(size=(n, 3)) + 0.7 * z[:, None]
    p1 = 1 / (1 + np.exp(-(X @ np.linspace(1.0, -0.5, 3))))
    base = fd.SampleWorld(X, z, np.c_[1 - p1, p1])
    noise = np.random.RandomState(11)
    worlds = [base.with_outcomes(np.c_[1 - p, p]) for p in
              (np.clip(p1 + noise.normal(0, 0.1, n), 0.01, 0.99) for _ in range(K))]
    return fd.Belief(worlds, aggregate=aggregate)


def solve(b: fd.Belief, exact: bool) -> tuple[float, fd.OptimizeResult]:
    limit = program.EPIGRAPH_LIMIT
    program.EPIGRAPH_LIMIT = 10**9 if exact else limit
    try:
        t0 = time.perf_counter()
        res = fd.optimize_policy(fd.DecisionProblem.classification(2), b, fd.Separation(),
                                 epsilon=0.04, policy=fd.LinearSoftmaxPolicy(include_z=True),
                                 random_state=0)
        return time.perf_counter() - t0, res
    finally:
        program.EPIGRAPH_LIMIT = limit


ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "gradient_scenarios.txt"


def landed_case(n: int, K: int, aggregate: str, exact: bool) -> dict:
    """One form of one case, timed after a small warm-up solve (for --landed: run in a
    fresh process on either tree's package)."""
    solve(belief(50, 2, aggregate), exact)
    seconds, res = solve(belief(n, K, aggregate), exact)
    return {"seconds": seconds, "value": float(res.objective),
            "note": f"U {res.utility:.5f}, separation {res.deviations['separation']:.6f}"}


def landed_main(args, n: int, cases) -> None:
    """Each case and form on the landed tree and this one."""
    out = Path(args.out) if args.out else OUT.with_name("gradient_scenarios_vs_landed.txt")
    repeats = 1 if args.quick else args.repeats
    table = Table(out, "Gradient route, many scenarios, against the landed version",
                  "bench_gradient_scenarios.py", args.landed,
                  ["separation <= 0.04, LinearSoftmaxPolicy(include_z=True), random_state=0; "
                   "optimize_policy end to end in a fresh process after a small warm-up; "
                   + runs(repeats, "the objectives")])
    with landed_tree(args.landed) as old:
        for K, aggregate in cases:
            for exact in (True, False):
                got = compare(old, "bench_gradient_scenarios", (n, K, aggregate, exact),
                              repeats, timeout=args.timeout)
                table.add(f"n = {n}, K = {K}, {aggregate}, "
                          f"{'epigraph' if exact else 'smoothed'}", got, key="note")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (seconds)")
    parser.add_argument("--out", default=None, help=f"default: {OUT.relative_to(ROOT)}")
    add_arguments(parser, "gradient_scenarios_vs_landed.txt")
    args = parser.parse_args()
    n, cases = (200, [(12, "mean")]) if args.quick else (
        1000, [(20, "worst"), (50, "mean")])
    if args.landed:
        landed_main(args, n, cases)
        return
    lines = ["Gradient route, many scenarios: exact epigraph form vs smoothed upper bound",
             "", f"command: python benchmarks/bench_gradient_scenarios.py"
             f"{' --quick' if args.quick else ''}",
             f"date:    {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}",
             f"machine: nproc = {os.cpu_count()}, 1-min load average "
             f"{os.getloadavg()[0]:.1f} at start", "",
             f"{n} people, separation <= 0.04, LinearSoftmaxPolicy(include_z=True), "
             "random_state=0, 3 starts", "",
             f"{'K':>4} {'aggregate':>9} {'form':>9} {'seconds':>8} {'utility':>9} "
             f"{'separation':>10} {'smoothing mu':>12}"]
    for K, aggregate in cases:
        b = belief(n, K, aggregate)
        for exact in (True, False):
            seconds, res = solve(b, exact)
            mu = res.stats.get("smoothing")
            lines.append(f"{K:>4} {aggregate:>9} {'epigraph' if exact else 'smoothed':>9} "
                         f"{seconds:8.1f} {res.utility:9.5f} "
                         f"{res.deviations['separation']:10.6f} "
                         f"{'-' if mu is None else f'{mu:.2e}':>12}")
            print(lines[-1], flush=True)
    lines.append(f"\n1-min load average at end {os.getloadavg()[0]:.1f}; every result "
                 "verified on its decision tables (separation <= 0.04 + tol).")
    text = "\n".join(lines)
    print(text)
    out = Path(args.out) if args.out else OUT
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text + "\n")


if __name__ == "__main__":
    main()
