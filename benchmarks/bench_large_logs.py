"""Evaluation defaults on large tabular logs: audit, estimate_deviation, evaluate_policy.

One million logged bail decisions (``sample_logged_data`` on ``make_bail_problem()``,
random logging with known propensities), and the calls a user makes with their defaults:

- ``audit(data, problem)``: three criteria, 500 bootstrap replicates, 2000 posterior draws;
- ``estimate_deviation(data, problem, Separation())`` for the logged decisions;
- ``estimate_deviation(data, problem, Separation(), candidate)``: importance weights;
- ``evaluate_policy(data, candidate, problem)`` on the same logs without propensities (the
  default DR with cross-fitted per-cell nuisances).

Each call runs once in a fresh process after a warm-up call on 1000 rows (imports are
not timed). Targets: audit and estimate_deviation under 10 s each at one million rows on
a 2-core machine. With ``--old DIR`` the same calls also run on another source tree (the
row-bootstrap implementation, e.g. ``git archive 3a3fd78 fairdecide | tar -x -C DIR``),
alternating old and new, for a speed-up measured in one session.

Usage::

    python benchmarks/bench_large_logs.py                     # n = 1,000,000
    python benchmarks/bench_large_logs.py --old /tmp/fd-old   # and the old implementation
    python benchmarks/bench_large_logs.py --quick             # n = 20,000 (CI)
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CALLS = r'''
import json, sys, time, warnings
sys.path.insert(0, sys.argv[1])
import numpy as np
import fairdecide
from fairdecide import Separation, TabularPolicy
from fairdecide.datasets import make_bail_problem, sample_logged_data
from fairdecide.evaluation import audit, estimate_deviation, evaluate_policy

assert fairdecide.__file__.startswith(sys.argv[1]), fairdecide.__file__
problem, world = make_bail_problem()
candidate = TabularPolicy(np.random.default_rng(2).dirichlet([2, 2], size=(5, 2)))

def cases(n):
    data = sample_logged_data(world, problem, n, random_state=0)
    bare = data.subset(np.arange(n))
    bare.propensity = None
    return {
        "audit": lambda: audit(data, problem, random_state=0),
        "deviation": lambda: estimate_deviation(data, problem, Separation(),
                                                random_state=0),
        "deviation_candidate": lambda: estimate_deviation(
            data, problem, Separation(), candidate, random_state=0),
        "evaluate_policy": lambda: evaluate_policy(bare, candidate, problem,
                                                   random_state=0),
    }

wanted = sys.argv[3].split(",")
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    for name, f in cases(1000).items():  # warm-up: imports and first calls
        if name in wanted:
            f()
    out = {}
    for name, f in cases(int(sys.argv[2])).items():
        if name in wanted:
            t0 = time.perf_counter()
            res = f()
            out[name] = time.perf_counter() - t0
print(json.dumps(out))
'''

LABELS = {
    "audit": "audit(data, problem)",
    "deviation": "estimate_deviation(data, problem, Separation())",
    "deviation_candidate": "estimate_deviation(..., Separation(), candidate)",
    "evaluate_policy": "evaluate_policy(data w/o propensities, candidate) [DR]",
}
# Figures committed with issue 8 for the row-bootstrap implementation, n = 1e6.
COMMITTED_OLD = {"audit": 131.0, "deviation": 123.0, "evaluate_policy": 44.0}
TARGET = {"audit": 10.0, "deviation": 10.0}


def run(tree: Path, n: int, names: list[str]) -> dict[str, float]:
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    res = subprocess.run([sys.executable, "-c", CALLS, str(tree), str(n), ",".join(names)],
                         capture_output=True, text=True, env=env, check=True)
    return json.loads(res.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--n", type=int, default=None)
    parser.add_argument("--old", default=None, help="source tree of another version")
    parser.add_argument("--old-cases", default="audit,deviation,evaluate_policy")
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results" /
                                             "large_logs.txt"))
    args = parser.parse_args()
    n = args.n or (20_000 if args.quick else 1_000_000)
    names = list(LABELS)
    new = run(ROOT, n, names)
    old = None
    if args.old:
        old_names = [c for c in args.old_cases.split(",") if c in LABELS]
        old = run(Path(args.old).resolve(), n, old_names)
        new2 = run(ROOT, n, names)  # new, old, new: the old run sits between two new ones
        new = {k: min(new[k], new2[k]) for k in new}
    lines = [f"Large tabular logs: bail problem, n = {n:,} rows, defaults; one call per "
             f"case in a fresh process after a warm-up ({platform.python_version()}, "
             f"{os.cpu_count()} CPUs)",
             "",
             f"{'call':58s} {'new s':>8s} {'old s':>8s} {'speed-up':>9s} {'target':>7s}"]
    for key, label in LABELS.items():
        o = old.get(key) if old else None
        o_txt = f"{o:8.2f}" if o is not None else f"{'-':>8s}"
        up = f"{o / new[key]:8.1f}x" if o is not None else f"{'-':>9s}"
        tgt = f"< {TARGET[key]:g} s" if key in TARGET else ""
        lines.append(f"{label:58s} {new[key]:8.2f} {o_txt} {up} {tgt:>7s}")
    if n == 1_000_000:
        lines += ["", "Against the figures committed for the row bootstrap at n = 1e6 "
                  "(issue 8: audit 131 s, estimate_deviation 123 s, evaluate_policy 44 s):"]
        for key, secs in COMMITTED_OLD.items():
            lines.append(f"  {LABELS[key]:56s} {secs:6.0f} s -> {new[key]:6.2f} s "
                         f"({secs / new[key]:.0f}x)")
    if args.quick:
        lines += ["", "(quick run: timings at small n say nothing about the targets)"]
    text = "\n".join(lines)
    print(text)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(text + "\n")


if __name__ == "__main__":
    main()
