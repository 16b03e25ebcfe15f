"""Logs larger than memory: counting on Dask against the in-memory routes, in one run.

Generated bail decisions (``make_bail_problem``'s world: five risk cells, two groups,
detain/release logged at random with propensity 0.5, three outcomes) are written as a
folder of Parquet files in chunks of at most 5 million rows, never held in memory whole.
Each route runs in a fresh process and reports its wall time and its peak resident
memory (the client's, for Dask: the scheduler runs in it too; the workers are other
processes):

- ``rows``: pandas reads the folder, ``LoggedData.from_frame``, then ``audit`` and
  ``evaluate_policy(..., "dr")`` (cross-fitted) on the rows: the in-memory route a user
  has today;
- ``counts``: pandas reads the folder, ``LoggedCounts.from_frame`` counts it, then the
  same calls on the counts (``dr`` with the in-sample saturated cell model);
- ``dask``: a LocalCluster of two single-threaded worker processes reads the folder with
  ``dask.dataframe.read_parquet`` and ``LoggedCounts.from_frame`` counts it on the
  workers; the same calls on the counts.

The in-memory routes run only up to ``--memory-max`` rows. Throughput per core is rows
per second divided by the cores the route uses (1 for pandas, 2 for the cluster).
Targets (issue 14): 1e8 rows with the client under 1 GiB, and per-core throughput within
2x of the in-memory route.

Usage::

    python benchmarks/bench_dask.py --rows 1e7 1e8 --out benchmarks/results/dask.txt
    python benchmarks/bench_dask.py --quick --out /tmp/dask.txt   # 2e5 rows (CI)
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
CHUNK = 5_000_000


def generate(folder: Path, n: int, seed: int = 0) -> None:
    """``n`` logged rows of the bail world as Parquet files of at most CHUNK rows."""
    import pandas as pd

    sys.path.insert(0, str(ROOT))
    from fairdecide.datasets import make_bail_problem

    problem, world = make_bail_problem()
    p_xz = np.asarray(world.p_xz)
    p_y = np.asarray(world.outcome_table(problem.n_actions))  # (x, z, a, y)
    n_x, n_z = p_xz.shape
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    for k, start in enumerate(range(0, n, CHUNK)):
        m = min(CHUNK, n - start)
        cell = rng.choice(n_x * n_z, size=m, p=p_xz.ravel())
        x, z = np.divmod(cell, n_z)
        a = rng.integers(0, 2, size=m)
        cdf = np.cumsum(p_y[x, z, a], axis=1)
        y = (rng.random(m)[:, None] > cdf).sum(axis=1)
        pd.DataFrame({"x": x.astype(np.int8), "z": z.astype(np.int8),
                      "a": np.asarray(problem.action_labels, dtype=object)[a],
                      "y": y.astype(np.int8), "propensity": np.full(m, 0.5)}
                     ).to_parquet(folder / f"part{k:04d}.parquet", index=False)


ROUTE = r'''
import json, resource, sys, time, warnings
import numpy as np
sys.path.insert(0, sys.argv[1])
import fairdecide as fd
from fairdecide.datasets import make_bail_problem
from fairdecide.evaluation import audit, evaluate_policy
route, folder = sys.argv[2], sys.argv[3]
problem, _ = make_bail_problem()
policy = fd.TabularPolicy(np.random.default_rng(2).dirichlet([2, 2], size=(5, 2)))
args = dict(features=["x"], group="z", action="a", outcome="y", propensity="propensity")
out = {}
t0 = time.perf_counter()
if route == "dask":
    import dask.dataframe as dd
    from dask.distributed import Client, LocalCluster
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                           dashboard_address=":0", memory_limit="8GiB")
    client = Client(cluster)
    out["cluster_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    data = fd.LoggedCounts.from_frame(dd.read_parquet(folder), **args)
    client.close(); cluster.close()
else:
    import pandas as pd
    df = pd.read_parquet(folder)
    build = fd.LoggedData.from_frame if route == "rows" else fd.LoggedCounts.from_frame
    data = build(df, **args)
    del df
out["load_s"] = time.perf_counter() - t0
t1 = time.perf_counter()
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    table = audit(data, problem, random_state=0)
out["audit_s"] = time.perf_counter() - t1
t1 = time.perf_counter()
est = evaluate_policy(data, policy, problem, "dr", random_state=0)
out["dr_s"] = time.perf_counter() - t1
out["total_s"] = out["load_s"] + out["audit_s"] + out["dr_s"]
out["n"] = data.n
out["dr"] = [est.value, *est.confidence_interval()]
out["separation"] = [float(v) for v in table.iloc[1][["deviation", "low", "high"]]]
out["peak_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps(out))
'''


def run_route(route: str, folder: Path, code: str = ROUTE, root: Path = ROOT) -> dict:
    """Run ``code`` (a route script printing one JSON line) in a fresh process, with the
    package of the source tree ``root``."""
    run = subprocess.run([sys.executable, "-c", code, str(root), route, str(folder)],
                         capture_output=True, text=True)
    if run.returncode:
        raise SystemExit(f"route {route} failed:\n{run.stderr[-3000:]}")
    return json.loads(run.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=float, nargs="+", default=[1e7, 1e8])
    parser.add_argument("--memory-max", type=float, default=1e7)
    parser.add_argument("--data-dir", type=Path, default=None,
                        help="where the Parquet folders go (default: a temporary folder)")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--quick", action="store_true", help="2e5 rows (CI)")
    args = parser.parse_args()
    sizes = [2e5] if args.quick else args.rows
    base = args.data_dir or Path(tempfile.mkdtemp())
    lines = [f"# bench_dask.py{' --quick' if args.quick else ''}: generated bail logs "
             f"as Parquet; {os.cpu_count()} cores; each route in a fresh process", "",
             "| rows | route | load s | audit s | dr s | total s | rows/s per core | "
             "peak MiB | DR value [95%] | separation [95%] |", "|" + "---|" * 10]
    for n in (int(s) for s in sizes):
        folder = base / f"bail_{n}"
        if not folder.exists():
            t = time.perf_counter()
            generate(folder, n)
            print(f"generated {n} rows in {time.perf_counter() - t:.1f} s", flush=True)
        routes = ["rows", "counts", "dask"] if n <= args.memory_max else ["dask"]
        for route in routes:
            r = run_route(route, folder)
            cores = 2 if route == "dask" else 1
            lines.append(
                f"| {n:.0e} | {route} | {r['load_s']:.1f} | {r['audit_s']:.1f} | "
                f"{r['dr_s']:.1f} | {r['total_s']:.1f} | "
                f"{n / r['total_s'] / cores:,.0f} | {r['peak_mib']:.0f} | "
                f"{r['dr'][0]:.5f} [{r['dr'][1]:.5f}, {r['dr'][2]:.5f}] | "
                f"{r['separation'][0]:.5f} [{r['separation'][1]:.5f}, "
                f"{r['separation'][2]:.5f}] |")
            print(lines[-1], flush=True)
    text = "\n".join(lines) + "\n"
    args.out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
