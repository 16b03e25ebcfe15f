"""Penalised and tight beliefs: seconds end to end, against the landed version, and lam
against epsilon at the deviation lam reached.

Independence on ``make_tabular_problem(n_x, 4, 5)`` with a Dirichlet posterior of
20 x cells logged rows, K scenarios (bench_beliefs.py's case), through
``optimize_policy`` with the default chain. Trade-offs: ``lam`` 0.5 and 0.2, epsilon
0.05 and 0.01, and epsilon set to the deviation each ``lam`` reached (this version's
first run of it, rounded up to three significant digits and at least 1e-6): issue 41's
"lam on a belief no slower than epsilon at the same deviation".

Each case runs in a fresh process (import and a small warm-up solve first, untimed), the
landed version (``--landed REV``, a git worktree) and this one in turn, ``--repeats``
times; the table gives the medians (seconds, and the process's CPU seconds, which a
loaded machine inflates less), the ratio this / landed, whether the objectives agree
(relative 1e-6: the unit interior point stops at a gap of 1e-10 without a crossover),
and this version's solver, belief stage (the solvers tried and handed back, and their
seconds before the hand-back) and deviation. With ``--reference METHOD`` each case is
also solved once by HiGHS on the whole program (``solver=METHOD``, e.g.
``highs-ipm-no-crossover``: an independent solver, not the chain's; its dual simplex did
not finish lam 0.5 at 1000 x 4 x 5 in 300 s), in a fresh process of this tree, and the
table gives its seconds and this version's objective less HiGHS's.

Usage::

    python benchmarks/bench_belief_lam.py --quick
    python benchmarks/bench_belief_lam.py --sizes 300 1000 --repeats 3 --landed 2acbeaf \\
        --out benchmarks/results/belief_lam_unit_ipm.txt
    python benchmarks/bench_belief_lam.py --sizes 1000 --repeats 5 --landed b19dcbc \\
        --reference highs-ipm-no-crossover \\
        --out benchmarks/results/belief_lam_marginals_reference.txt
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
from _landed import TREE, landed_tree
from _provenance import provenance

OUT = Path(__file__).parent / "results" / "belief_lam_unit_ipm.txt"

#: One case on the package of the tree given: warm up, build the belief, time, print JSON.
ONE_CASE = r"""
import json, os, sys, time
tree, n_x, K, kw = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), json.loads(sys.argv[4])
sys.path.insert(0, tree + "/benchmarks")
import fairdecide as fd
if os.environ.get("BENCH_IPM_DESIGN"):
    import _ipm_designs
    _ipm_designs.use(os.environ["BENCH_IPM_DESIGN"])
from fairdecide.datasets import make_tabular_problem
from bench_beliefs import tabular_case
fd.optimize_policy(*make_tabular_problem(20, 2, 3, 2, random_state=1), fd.Independence(),
                   epsilon=0.01)
problem, belief, crits, _ = tabular_case(n_x, K)
t0, c0 = time.perf_counter(), time.process_time()
res = fd.optimize_policy(problem, belief, crits, **kw)
seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
choice = res.solver_choice or {}
stage = choice.get("belief_stage", choice)
build, solve = res.stats.get("build_seconds", 0.0), res.stats.get("solve_seconds", 0.0)
print(json.dumps({"seconds": seconds, "cpu": cpu, "objective": float(res.objective),
                  "iterations": res.stats.get("solver_iterations"),
                  "solver": res.solver.split(":")[0],
                  "order": stage.get("order", []),
                  "handed_back": list(stage.get("handed_back", {})),
                  "stage_seconds": (max(seconds - build - solve, 0.0)
                                    if stage.get("handed_back") else 0.0),
                  "deviation": float(res.deviations["independence"])}))
"""


def fresh(tree: Path, n_x: int, K: int, kw: dict, design: str | None = None) -> dict:
    env = dict(os.environ, PYTHONPATH=str(tree))
    if design:  # this tree with a design of benchmarks/_ipm_designs.py in its place
        env["BENCH_IPM_DESIGN"] = design
    out = subprocess.run([sys.executable, "-c", ONE_CASE, str(tree), str(n_x), str(K),
                          json.dumps(kw)], env=env, cwd=tempfile.gettempdir(),
                         capture_output=True, text=True)
    if out.returncode:
        raise SystemExit(f"{kw} at {n_x} on {tree} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def round_up(value: float) -> float:
    """``value`` rounded up to three significant digits, at least 1e-6."""
    value = max(value, 1e-6)
    step = 10.0 ** (math.floor(math.log10(value)) - 2)
    return math.ceil(value / step - 1e-9) * step


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="60 x 4 x 5, K = 8, 1 repeat")
    parser.add_argument("--sizes", type=int, nargs="*", default=None)
    parser.add_argument("--scenarios", type=int, default=None)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--landed", default=None, metavar="REV",
                        help="also run the version at this git revision, in turn")
    parser.add_argument("--reference", default=None, metavar="METHOD",
                        help="also solve each case once with solver=METHOD (HiGHS)")
    parser.add_argument("--design", default=None, choices=("gondzio", "plain"),
                        help="also run this tree with a design of the unit interior "
                             "point (benchmarks/_ipm_designs.py), in turn")
    parser.add_argument("--out", default=str(OUT))
    args = parser.parse_args()
    sizes = args.sizes or ([60] if args.quick else [300, 1000])
    K = args.scenarios or (8 if args.quick else 32)
    repeats = 1 if args.quick else args.repeats
    lines = provenance("bench_belief_lam.py: penalised and tight beliefs end to end, "
                       "against the landed version, and lam against epsilon at lam's "
                       "deviation", "bench_belief_lam.py",
                       f"; K = {K}; landed: {args.landed or '-'}; fresh process per run, "
                       "medians")
    lines += ["", "| case | trade-off | landed s | this s | this / landed | landed CPU s | "
              "this CPU s | objectives agree | this solver | belief stage: order, handed "
              "back, s | deviation |"
              + (f" {args.reference} s | this - {args.reference} |" if args.reference
                 else "")
              + (f" this steps | {args.design} s | {args.design} CPU s | {args.design} "
                 f"steps | {args.design} agrees |" if args.design else ""),
              "|---" * (11 + 2 * bool(args.reference) + 4 * bool(args.design)) + "|"]
    print("\n".join(lines), flush=True)
    with landed_tree(args.landed) as old:
        trees = [("landed", old), ("this", TREE)] if old is not None else [("this", TREE)]
        if args.design:
            trees.append((args.design, TREE))
        for n_x in sizes:
            cases = [{"lam": 0.5}, {"lam": 0.2}, {"epsilon": 0.05}, {"epsilon": 0.01}]
            done: list[dict] = []
            while cases:
                kw = cases.pop(0)
                runs: dict[str, list[dict]] = {name: [] for name, _ in trees}
                for _ in range(repeats):
                    for name, tree in trees:
                        runs[name].append(fresh(tree, n_x, K, {
                            k: v for k, v in kw.items() if k != "at_lam"},
                            name if name == args.design else None))
                this = runs["this"][0]
                if "lam" in kw:  # epsilon at the deviation lam reached, after the rest
                    cases.append({"epsilon": round_up(this["deviation"]),
                                  "at_lam": kw["lam"]})
                done.append(kw)
                med = {n: float(np.median([r["seconds"] for r in rs])) for n, rs in
                       runs.items()}
                cpu = {n: float(np.median([r["cpu"] for r in rs])) for n, rs in
                       runs.items()}
                landed = runs.get("landed")
                agree = ("-" if not landed else str(abs(landed[0]["objective"] -
                                                        this["objective"])
                                                    <= 1e-6 * max(1.0, abs(this["objective"]))))
                label = ", ".join(f"{k}={v:g}" for k, v in kw.items() if k != "at_lam")
                if "at_lam" in kw:
                    label += f" (lam={kw['at_lam']:g}'s deviation)"
                ratio = f"{med['this'] / med['landed']:.2f}" if landed else "-"
                landed_s = f"{med['landed']:.3f}" if landed else "-"
                landed_cpu = f"{cpu['landed']:.3f}" if landed else "-"
                line = (f"| independence {n_x} x 4 x 5 | {label} | "
                        f"{landed_s} | {med['this']:.3f} | "
                        f"{ratio} | {landed_cpu} | {cpu['this']:.3f} | {agree} | "
                        f"{this['solver']} | {this['order']}, "
                        f"{this['handed_back']}, {this['stage_seconds']:.2f} | "
                        f"{this['deviation']:.3g} |")
                if args.reference:
                    ref = fresh(TREE, n_x, K, {**{k: v for k, v in kw.items()
                                                  if k != "at_lam"},
                                               "solver": args.reference})
                    line += (f" {ref['seconds']:.3f} |"
                             f" {this['objective'] - ref['objective']:.2e} |")
                if args.design:
                    other = runs[args.design][0]
                    same = abs(other["objective"] - this["objective"]) <= 1e-6 * max(
                        1.0, abs(this["objective"]))
                    line += (f" {this['iterations']} | {med[args.design]:.3f} |"
                             f" {cpu[args.design]:.3f} | {other['iterations']} | {same} |")
                print(line, flush=True)
                lines.append(line)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
