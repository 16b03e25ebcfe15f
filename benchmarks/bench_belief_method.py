"""Small beliefs' whole programs: HiGHS's dual simplex beside the unit interior point, one
run (the solving chain's rule for a belief below HiGHS's size threshold).

HiGHS's size rule (``SIMPLEX_MAX_COLUMNS["policy"]``, 5,000 columns) was measured on
single worlds. A belief's program has a dense block (the scenarios' marginals and
criteria), and at 2,968 variables (separation over 8 scenarios of 100 x 4 x 5 cells) the
dual simplex took 1.3-2.5 s where the unit interior point took 0.1-0.2 s. This script
measures both on beliefs below the threshold: ``make_tabular_problem(n_x, 4, n_a, 2)``
with a Dirichlet posterior (prior 0.5) of 20 rows per cell, K scenarios, independence and
separation at 10% and 50% of the unconstrained optimum's deviation, and lam 0.5. Each
solve is ``optimize_policy(..., solver=...)`` end to end in this process (one warm-up
solve first), the two solvers alternating, ``--repeats`` times; the table gives medians,
the ratio, and the largest relative objective difference (the interior point stops at a
gap of 1e-10 without a crossover).

Usage::

    python benchmarks/bench_belief_method.py
    python benchmarks/bench_belief_method.py --quick
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
from _provenance import provenance
from bench_beliefs import tabular_belief

import fairdecide as fd
from fairdecide.datasets import make_tabular_problem

OUT = Path(__file__).parent / "results" / "belief_method.txt"
SOLVERS = ("highs-ds", "unit-ipm")


def timed(problem, world, crit, kw: dict, solver: str) -> tuple[float, float, int]:
    t0 = time.perf_counter()
    res = fd.optimize_policy(problem, world, crit, solver=solver, **kw)
    return time.perf_counter() - t0, float(res.objective), int(res.stats["n_variables"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    warnings.simplefilter("ignore", FutureWarning)
    sizes = [(30, 5, 4)] if args.quick else [
        (30, 5, 4), (30, 5, 32), (100, 5, 8), (100, 5, 32), (200, 5, 8),
        (100, 2, 8), (200, 2, 32), (500, 2, 8)]
    repeats = 1 if args.quick else args.repeats
    fd.optimize_policy(*make_tabular_problem(20, 2, 3, 2, random_state=1), fd.Independence(),
                       epsilon=0.01)
    lines = ["| belief | trade-off | variables | dual simplex s | unit IPM s | IPM / simplex "
             "| objective rel. diff |", "|---|---|---|---|---|---|---|"]
    for n_x, n_a, K in sizes:
        problem, world = tabular_belief(n_x, K, n_a)
        for crit in (fd.Independence(), fd.Separation()):
            top = fd.optimize_policy(problem, world, crit, lam=0.0).deviations[crit.label]
            for kw in ({"epsilon": 0.1 * top}, {"epsilon": 0.5 * top}, {"lam": 0.5}):
                times = {s: [] for s in SOLVERS}
                values, n_var = {}, 0
                for _ in range(repeats):
                    for s in SOLVERS:
                        t, values[s], n_var = timed(problem, world, crit, kw, s)
                        times[s].append(t)
                ds, ipm = (float(np.median(times[s])) for s in SOLVERS)
                diff = abs(values[SOLVERS[0]] - values[SOLVERS[1]]) / max(
                    1.0, abs(values[SOLVERS[0]]))
                (key, value), = kw.items()
                label = f"{key} = {value:.4g}" if key == "lam" else (
                    f"epsilon = {value / top:.0%} of {top:.3g}")
                lines.append(f"| {n_x} x 4 x {n_a}, K = {K} | {crit.label}, {label} | "
                             f"{n_var} | {ds:.3f} | {ipm:.3f} | {ipm / ds:.2f} | {diff:.1e} |")
                print(lines[-1], flush=True)
    header = provenance("Small beliefs' whole programs: HiGHS's dual simplex beside the unit "
                        "interior point", "bench_belief_method.py")
    text = "\n".join([*header, "", *lines, "",
                      f"seconds: optimize_policy(..., solver=...) end to end, median of "
                      f"{repeats}, the solvers alternating in one process"]) + "\n"
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
