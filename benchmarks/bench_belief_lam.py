"""Penalised and tight beliefs: which solver the chain picks, and where the time goes.

Independence on ``make_tabular_problem(n_x, 4, 5)`` with a Dirichlet posterior of
20 x cells logged rows, K scenarios (bench_beliefs.py's case), under ``lam`` and
``epsilon``. For each case and repeat, one process, in turn:

- ``default``: ``optimize_policy`` with the default chain, end to end; the solver that
  solved, the belief stage's order and hand-backs (``result.solver_choice``), and the
  time split: the program's build and solve (``stats``), and the belief stage's attempt
  before it handed the program back (the rest);
- ``scenarios``: ``solver="scenarios"`` with each round's progress recorded: the rounds
  and working units when the scenario cuts hand the program back (or certify), and
  the seconds until then.

Usage::

    python benchmarks/bench_belief_lam.py --quick
    python benchmarks/bench_belief_lam.py --sizes 300 1000 --repeats 2 \\
        --out benchmarks/results/belief_lam_chain.txt
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from _provenance import provenance
from bench_beliefs import tabular_case

import fairdecide as fd

OUT = Path(__file__).parent / "results" / "belief_lam_chain.txt"


def run(problem, belief, crits, kw, solver=None):
    seen = []
    t0 = time.perf_counter()
    res = fd.optimize_policy(problem, belief, crits, solver=solver,
                             progress=lambda p: seen.append((time.perf_counter() - t0, p)),
                             **kw)
    return time.perf_counter() - t0, res, seen


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--sizes", type=int, nargs="*", default=None)
    parser.add_argument("--scenarios", type=int, default=None)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--out", default=str(OUT))
    args = parser.parse_args()
    sizes = args.sizes or ([60] if args.quick else [300, 1000])
    K = args.scenarios or (8 if args.quick else 32)
    tradeoffs = [{"lam": 0.5}, {"epsilon": 0.05}, {"epsilon": 0.01}]
    lines = provenance("bench_belief_lam.py: the chain's choice for penalised and tight "
                       "beliefs, and where the time goes", "bench_belief_lam.py",
                       f"; K = {K}; one process, cases in turn")
    lines += ["", "| case | trade-off | repeat | default s | build s | program solve s | "
              "belief stage s | solver | belief stage: order, handed back | "
              "scenarios asked s | scenario rounds | working units at the end | "
              "scenarios outcome |", "|---" * 13 + "|"]
    print("\n".join(lines), flush=True)
    for n_x in sizes:
        problem, belief, crits, _ = tabular_case(n_x, K)
        for kw in tradeoffs:
            for rep in range(args.repeats):
                s, res, _ = run(problem, belief, crits, kw)
                st = res.stats
                choice = res.solver_choice
                stage = choice.get("belief_stage", choice) if choice else {}
                build = st.get("build_seconds", 0.0)
                solve = st.get("solve_seconds", 0.0)
                belief_s = max(s - build - solve, 0.0) if stage.get("handed_back") else 0.0
                sc_s, sc, seen = run(problem, belief, crits, kw, "scenarios")
                last = seen[-1][1] if seen else None
                outcome = ("certified" if sc.solver.startswith("scenario cuts")
                           else "handed back")
                line = (f"| independence {n_x} x 4 x 5 | "
                        f"{', '.join(f'{k}={v:g}' for k, v in kw.items())} | {rep} | "
                        f"{s:.3f} | {build:.3f} | {solve:.3f} | {belief_s:.3f} | "
                        f"{res.solver.split(':')[0]} | {stage.get('order')}, "
                        f"{list(stage.get('handed_back', {}))} | {sc_s:.3f} | "
                        f"{last.round if last else '-'} | "
                        f"{last.details.get('working_units', '-') if last else '-'} | "
                        f"{outcome} |")
                print(line, flush=True)
                lines.append(line)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
