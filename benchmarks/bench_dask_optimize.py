"""Fair policies for populations beyond one machine: optimize_policy on a Dask FrameWorld at
up to 1e8 units, beside the in-memory exact route at a size that fits, in one run.

A population of N people (two groups, P(y = 1) logistic in a score and the group, the
bail-like utility [[1, -1], [-0.5, 0.5]] of a prediction problem) is written as Parquet
(chunks of 5 million units). For each size, in a fresh process:

- ``memory``: ``optimize_policy`` on the ``SampleWorld`` of the same people (the exact
  LP route, the structured solver at this size), up to ``--memory-max`` units;
- ``pandas``: ``optimize_policy(problem, FrameWorld(units, problem), ...)`` on the units
  read into one pandas DataFrame (the FrameWorld's first pass is timed with the solve);
- ``dask``: the same on ``dask.dataframe.read_parquet(...).persist()``
  over a LocalCluster of two single-threaded worker processes (the client's peak memory
  is reported; the workers hold the units).

With ``--landed REV``, the dask route also runs on the package as it was at git revision
REV (checked out in a temporary worktree), in the same run: the route landed before a
change, beside it (through ``optimize_distributed`` on a revision without ``FrameWorld``).

Each route maximises utility subject to separation <= 0.02 and reports its time, the
master rounds (passes over the units), the recomputed utility and deviation, and whether
verification passed; the utilities of the routes agree to 1e-9 on each size.

Usage::

    python benchmarks/bench_dask_optimize.py --units 1e6 1e7 1e8 \\
        --out benchmarks/results/dask_optimize.txt
    python benchmarks/bench_dask_optimize.py --units 1e8 --landed 5307494 \\
        --out benchmarks/results/dask_optimize_1e8.txt
    python benchmarks/bench_dask_optimize.py --quick --out /tmp/o.txt   # 2e4 units (CI)
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import numpy as np
from _landed import landed_tree
from bench_dask import run_route  # the same fresh-process runner (benchmarks/ is on the path)

ROOT = Path(__file__).resolve().parents[1]
CHUNK = 5_000_000


def generate(folder: Path, n: int, seed: int = 0) -> None:
    import pandas as pd

    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    for k, start in enumerate(range(0, n, CHUNK)):
        m = min(CHUNK, n - start)
        z = (rng.random(m) < 0.4).astype(np.int8)
        p1 = 1.0 / (1.0 + np.exp(-rng.normal(size=m) - 0.8 * z))
        pd.DataFrame({"z": z, "w": np.ones(m), "p_0": 1.0 - p1, "p_1": p1}).to_parquet(
            folder / f"part{k:04d}.parquet", index=False)


ROUTE = r'''
import json, resource, sys, time, warnings
import numpy as np
sys.path.insert(0, sys.argv[1])
import fairdecide as fd
route, folder = sys.argv[2], sys.argv[3]

def solve(problem, units, crit, eps):
    if hasattr(fd, "FrameWorld"):  # the front door (a revision before it: the old one)
        return fd.optimize_policy(problem, fd.FrameWorld(units, problem), crit, epsilon=eps)
    from fairdecide.optimize import optimize_distributed
    return optimize_distributed(problem, units, [crit], epsilon=eps)

def outcome(res):
    # an OptimizeResult verified (it raises otherwise) with its certificate, or before
    # issue 24 a DistributedResult carrying its own rounds and verified flag
    d = res.stats["distributed"] if hasattr(res, "stats") else vars(res)
    rounds = (res.certificates["optimality"]["rounds"]
              if "optimality" in getattr(res, "certificates", {}) else d["rounds"])
    return dict(utility=res.utility, deviation=res.deviations["separation"],
                rounds=rounds, columns=d["columns"],
                verified=getattr(res, "verified", True))
problem = fd.DecisionProblem([[1.0, -1.0], [-0.5, 0.5]], outcome_depends_on_action=False)
crit, eps = fd.Separation(), 0.02
out = {}
t0 = time.perf_counter()
if route == "memory":
    import pandas as pd
    df = pd.read_parquet(folder)
    world = fd.SampleWorld(np.zeros((len(df), 1)), df["z"].to_numpy(),
                           df[["p_0", "p_1"]].to_numpy())
    del df
    t0 = time.perf_counter()
    res = fd.optimize_policy(problem, world, crit, epsilon=eps)
    out.update(utility=res.utility, deviation=res.deviations["separation"], rounds=None,
               verified=True, solver=res.solver)
elif route == "pandas":
    import pandas as pd
    units = pd.read_parquet(folder)
    t0 = time.perf_counter()
    res = solve(problem, units, crit, eps)
    out.update(utility=res.utility, deviation=res.deviations["separation"],
               rounds=res.certificates["optimality"]["rounds"], verified=True,
               columns=res.stats["distributed"]["columns"])
else:
    import dask.dataframe as dd
    from dask.distributed import Client, LocalCluster, wait
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                           dashboard_address=None, memory_limit="10GiB")
    client = Client(cluster)
    units = dd.read_parquet(folder).persist()
    wait(units)
    out["load_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    res = solve(problem, units, crit, eps)
    out.update(outcome(res))
    client.close(); cluster.close()
out["solve_s"] = time.perf_counter() - t0
out["peak_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps(out))
'''


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--units", type=float, nargs="+", default=[1e6, 1e7, 1e8])
    parser.add_argument("--memory-max", type=float, default=1e6)
    parser.add_argument("--data-dir", type=Path, default=None)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--quick", action="store_true", help="2e4 units (CI)")
    parser.add_argument("--landed", default=None, metavar="REV",
                        help="also run the dask route on the package at git revision REV")
    args = parser.parse_args()
    sizes = [2e4] if args.quick else args.units
    base = args.data_dir or Path(tempfile.mkdtemp())
    lines = [f"# bench_dask_optimize.py{' --quick' if args.quick else ''}: max utility "
             f"s.t. separation <= 0.02 over N people; {os.cpu_count()} cores; each route in "
             "a fresh process",
             *([f"# dask, landed: the same route on the package at git revision "
                f"{args.landed}"] if args.landed else []), "",
             "| units | route | load s | solve s | rounds | utility | separation | "
             "verified | peak MiB |", "|" + "---|" * 9]
    with landed_tree(args.landed) as landed:
        for n in (int(s) for s in sizes):
            folder = base / f"units_{n}"
            if not folder.exists():
                t = time.perf_counter()
                generate(folder, n)
                print(f"generated {n} units in {time.perf_counter() - t:.1f} s", flush=True)
            routes = (["memory", "pandas", "dask"] if n <= args.memory_max else
                      ["pandas", "dask"] if n <= 10 * args.memory_max else ["dask"])
            if landed:
                routes.append("dask, landed")
            utilities = []
            for route in routes:
                r = (run_route("dask", folder, ROUTE, landed) if route == "dask, landed" else
                     run_route(route, folder, ROUTE))
                utilities.append(r["utility"])
                lines.append(
                    f"| {n:.0e} | {route} | "
                    f"{format(r['load_s'], '.1f') if 'load_s' in r else '-'} | "
                    f"{r['solve_s']:.1f} | {r['rounds'] if r['rounds'] is not None else '-'} | "
                    f"{r['utility']:.10f} | {r['deviation']:.10f} | {r['verified']} | "
                    f"{r['peak_mib']:.0f} |")
                print(lines[-1], flush=True)
            spread = max(utilities) - min(utilities)
            lines.append(f"| {n:.0e} | largest utility difference between routes | | | | "
                         f"{spread:.2e} | | | |")
            if spread > 1e-9:
                raise SystemExit(f"the routes disagree at {n} units by {spread:.3g}")
    text = "\n".join(lines) + "\n"
    args.out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
