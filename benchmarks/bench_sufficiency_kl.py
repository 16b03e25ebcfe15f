"""Sufficiency with KL by successive linearisation: seconds end to end beside the
landed version, in the same run (issue 54, item 3).

Cases, all through ``optimize_policy`` (the public API, so that either tree runs them):

- **single**: ``make_tabular_problem(3, 2, 2, 2, random_state=5)`` (6 units, a
  12-variable policy) under ``Sufficiency(measure="kl")`` at epsilon 0.05 and at lam 0.5,
  and the same under total variation beside it;
- **random**: 29 problems of 2 or 3 cells, problem ``i`` (0..28) being
  ``make_tabular_problem(2 + i % 2, 2, 2, 2, random_state=i)``, each solved under KL at
  one epsilon and one lam drawn by ``numpy.random.default_rng(1000 + i)``: epsilon
  uniform on [0.01, 0.1] and lam uniform on [0.1, 1], in that order, rounded to three
  decimals. A pair's seconds are its epsilon's plus its lam's; the table gives each
  problem and the medians.

Each case runs in a fresh process per tree (after a small KL solve that loads cvxpy and
the package, untimed), the landed tree (``--landed REV``) and this one in turn. The
seconds are wall and the process's CPU seconds (which a loaded machine inflates less);
the objectives are compared to ``--rel`` (relative, default 1e-6): the method finds a local
optimum, so two trees may end at different ones; where they differ, the table gives
both, and which is better.

Usage::

    python benchmarks/bench_sufficiency_kl.py --landed b19dcbc
    python benchmarks/bench_sufficiency_kl.py --quick           # this tree, 5 problems
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
from _landed import TREE, fresh, landed_tree
from _provenance import provenance

OUT = Path(__file__).parent / "results" / "sufficiency_kl_vs_landed.txt"

#: The problems of one case on the package first on PYTHONPATH: warm up, then each
#: (problem args, trade-off) timed; JSON lines of seconds, objective, status and steps.
ONE_CASE = r"""
import json, sys, time, warnings
warnings.simplefilter("ignore")
import fairdecide as fd
from fairdecide.datasets import make_tabular_problem
from fairdecide.exceptions import FairdecideError
jobs = json.loads(sys.argv[1])
fd.optimize_policy(*make_tabular_problem(2, 2, 2, 2, random_state=99),
                   fd.Sufficiency(measure="kl"), lam=0.3)
out = []
for (n_x, seed, measure, kw) in jobs:
    problem, world = make_tabular_problem(n_x, 2, 2, 2, random_state=seed)
    t0, c0 = time.perf_counter(), time.process_time()
    try:
        res = fd.optimize_policy(problem, world, fd.Sufficiency(measure=measure), **kw)
        got = {"objective": float(res.objective), "status": res.status,
               "steps": int(res.stats.get("linearisation_steps", 0)),
               "deviation": float(list(res.deviations.values())[0])}
    except FairdecideError as exc:
        got = {"objective": None, "status": type(exc).__name__, "steps": 0,
               "deviation": None}
    got["seconds"], got["cpu"] = time.perf_counter() - t0, time.process_time() - c0
    out.append(got)
print(json.dumps(out))
"""


def random_jobs(n: int) -> list[tuple[int, int, dict, dict]]:
    """Problem i's (n_x, seed, epsilon trade-off, lam trade-off), i < n (see the module)."""
    jobs = []
    for i in range(n):
        rng = np.random.default_rng(1000 + i)
        eps = round(float(rng.uniform(0.01, 0.1)), 3)
        lam = round(float(rng.uniform(0.1, 1.0)), 3)
        jobs.append((2 + i % 2, i, {"epsilon": eps}, {"lam": lam}))
    return jobs


def run(tree: Path, jobs: list) -> list[dict]:
    got = fresh(tree, ONE_CASE, json.dumps(jobs))
    return got if isinstance(got, list) else [got]


def agree(a: dict, b: dict, rel: float) -> str:
    """Whether two runs' objectives agree to ``rel`` (relative to max(1, |b|)); where
    not, both, and which tree's is higher (the objective is maximised)."""
    x, y = a["objective"], b["objective"]
    if x is None or y is None:
        return "yes" if x is y else f"no ({a['status']} / {b['status']})"
    if abs(x - y) <= rel * max(1.0, abs(y)):
        return "yes"
    return f"no: {y:.8g} landed, {x:.8g} this ({'this' if x > y else 'landed'} higher)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--landed", default=None, metavar="REV")
    parser.add_argument("--problems", type=int, default=29)
    parser.add_argument("--repeats", type=int, default=3,
                        help="runs per tree of each single case (the median is given)")
    parser.add_argument("--rel", type=float, default=1e-6)
    parser.add_argument("--quick", action="store_true", help="5 problems, 1 repeat")
    parser.add_argument("--out", default=str(OUT))
    args = parser.parse_args()
    n, repeats = (5, 1) if args.quick else (args.problems, args.repeats)
    lines = provenance("bench_sufficiency_kl.py: sufficiency by successive linearisation, "
                       "KL (and TV beside it), end to end beside the landed version",
                       "bench_sufficiency_kl.py",
                       f"; landed: {args.landed or '-'}; fresh process per case and tree, "
                       f"objectives compared to relative {args.rel:g}")
    head = ["| case | landed s | this s | this / landed | landed CPU s | this CPU s | "
            "objectives agree | this: status, steps | landed: status, steps |",
            "|---" * 9 + "|"]
    print("\n".join([*lines, "", *head]), flush=True)
    rows: list[str] = []

    def write() -> None:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text("\n".join([*lines, "", *head, *rows]) + "\n")

    def add(row: str) -> None:
        rows.append(row)
        print(row, flush=True)
        write()

    with landed_tree(args.landed) as old:
        trees = [("landed", old), ("this", TREE)] if old is not None else [("this", TREE)]
        singles = [(3, 5, m, kw) for m in ("kl", "tv")
                   for kw in ({"epsilon": 0.05}, {"lam": 0.5})]
        for job in singles:
            runs: dict[str, list[dict]] = {name: [] for name, _ in trees}
            for _ in range(repeats):
                for name, tree in trees:
                    runs[name] += run(tree, [job])
            add(line(f"{job[2].upper()} {job[3]}, make_tabular_problem(3, 2, 2, 2, "
                     "random_state=5)", runs, args.rel))
        pairs: dict[str, list[float]] = {name: [] for name, _ in trees}
        pairs_cpu: dict[str, list[float]] = {name: [] for name, _ in trees}
        differ = 0
        for n_x, seed, eps, lam in random_jobs(n):
            runs = {name: run(tree, [(n_x, seed, "kl", eps), (n_x, seed, "kl", lam)])
                    for name, tree in trees}
            for name, got in runs.items():
                pairs[name].append(sum(g["seconds"] for g in got))
                pairs_cpu[name].append(sum(g["cpu"] for g in got))
            for k, kw in enumerate((eps, lam)):
                one = {name: [got[k]] for name, got in runs.items()}
                row = line(f"random {seed}: {n_x} x 2 x 2 x 2, {kw}", one, args.rel)
                differ += "| no" in row
                add(row)
        med = {name: float(np.median(p)) for name, p in pairs.items()}
        cpu = {name: float(np.median(p)) for name, p in pairs_cpu.items()}
        ratio = f"{med['this'] / med['landed']:.2f}" if "landed" in med else "-"
        landed_s = f"{med['landed']:.3f}" if "landed" in med else "-"
        landed_cpu = f"{cpu['landed']:.3f}" if "landed" in cpu else "-"
        add(f"| median of the {n} random problems' epsilon + lam pairs | {landed_s} | "
            f"{med['this']:.3f} | {ratio} | {landed_cpu} | {cpu['this']:.3f} | "
            f"{f'{2 * n - differ} of {2 * n} solves agree' if old is not None else '-'} | "
            "- | - |")


def line(case: str, runs: dict[str, list[dict]], rel: float) -> str:
    """One row: median seconds per tree, ratio, agreement, status and steps."""
    med = {name: float(np.median([r["seconds"] for r in rs])) for name, rs in runs.items()}
    cpu = {name: float(np.median([r["cpu"] for r in rs])) for name, rs in runs.items()}
    this = runs["this"][-1]
    landed = runs.get("landed", [None])[-1]
    said = (f"{this['status']}, {this['steps']}", "-" if landed is None else
            f"{landed['status']}, {landed['steps']}")
    if landed is None:
        return (f"| {case} | - | {med['this']:.3f} | - | - | {cpu['this']:.3f} | - | "
                f"{said[0]} | - |")
    return (f"| {case} | {med['landed']:.3f} | {med['this']:.3f} | "
            f"{med['this'] / med['landed']:.2f} | {cpu['landed']:.3f} | {cpu['this']:.3f} | "
            f"{agree(this, landed, rel)} | {said[0]} | {said[1]} |")


if __name__ == "__main__":
    main()
