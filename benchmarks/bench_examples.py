"""Wall time of the examples the documentation quotes, as a person runs them.

Each example runs as ``python examples/NAME.py`` in a fresh process (imports and data
reading included), with ``FAIRDECIDE_DATA`` set for those that read real data, figures
written to a scratch folder (``FAIRDECIDE_FIGURES``) and matplotlib's non-interactive
backend, one BLAS thread, ``--repeats`` alternated rounds; the table gives the best and
the median. A failing example stops the run.

Usage::

    FAIRDECIDE_DATA=../shared/data python benchmarks/bench_examples.py
    python benchmarks/bench_examples.py --quick --out /tmp/examples.txt   # CI: one, once
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _provenance import provenance

ROOT = Path(__file__).resolve().parents[1]
#: The examples whose run time docs/estimators.md quotes.
EXAMPLES = ["fair_classifier_gridsearch_adult", "refer_option_adult", "bail_policy_compas",
            "pareto_frontier_plot"]


def run(name: str, env: dict[str, str]) -> float:
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, str(ROOT / "examples" / f"{name}.py")], env=env,
                          cwd=ROOT, capture_output=True, text=True)
    seconds = time.perf_counter() - t0
    if done.returncode:
        raise SystemExit(f"examples/{name}.py failed:\n{done.stderr[-2000:]}")
    return seconds


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="pareto_frontier_plot, once")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--examples", nargs="+", default=EXAMPLES)
    ap.add_argument("--out", type=Path, default=Path(__file__).parent / "results"
                    / "examples.txt")
    args = ap.parse_args()
    if args.quick:
        args.examples, args.repeats = ["pareto_frontier_plot"], 1
    with tempfile.TemporaryDirectory() as figures:
        env = {**os.environ, "FAIRDECIDE_FIGURES": figures, "MPLBACKEND": "Agg",
               "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
        seconds: dict[str, list[float]] = {name: [] for name in args.examples}
        for _ in range(args.repeats):
            for name in args.examples:
                seconds[name].append(run(name, env))
                print(f"{name}: {seconds[name][-1]:.1f} s", flush=True)
    load = os.getloadavg()[0]
    lines = [*provenance("Wall time of the examples the documentation quotes",
                         "bench_examples.py", f"; 1-min load average {load:.1f} at the end"),
             f"# python examples/NAME.py in a fresh process, {args.repeats} alternated "
             "round(s), one BLAS thread", "",
             "| example | best s | median s |", "|---|---|---|"]
    lines += [f"| {name}.py | {min(t):.1f} | {statistics.median(t):.1f} |"
              for name, t in seconds.items()]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(lines) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
