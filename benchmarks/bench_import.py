"""Time ``import fairdecide`` against ``import numpy, scipy.sparse, pandas`` (the anchor).

Each repetition starts two fresh interpreters, one per statement, in alternating order,
with ``python -X importtime``; the time of a statement is the sum of the cumulative
times of its top-level imports (microseconds, as printed by -X importtime). The ratio
fairdecide / anchor is taken pair by pair, so a noisy machine moves both alike.

Usage::

    python benchmarks/bench_import.py            # 21 pairs
    python benchmarks/bench_import.py --quick    # 5 pairs

Writes benchmarks/results/import_time.txt (or --out) and prints the same summary.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
from pathlib import Path

STATEMENTS = {"fairdecide": "import fairdecide",
              "anchor": "import numpy, scipy.sparse, pandas"}
HEAVY = ("sklearn", "scipy.stats", "scipy.optimize", "cvxpy", "highspy", "pymc", "matplotlib")


def import_seconds(statement: str) -> float:
    """Seconds spent importing in a fresh interpreter, from -X importtime."""
    err = subprocess.run([sys.executable, "-X", "importtime", "-c", statement],
                         capture_output=True, text=True, check=True).stderr
    total = 0
    for line in err.splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        _, cumulative, name = (part for part in line.split(":", 1)[1].split("|"))
        if not name.startswith("  "):  # " name": a top-level import (one leading space)
            total += int(cumulative)
    return total / 1e6


def heavy_modules() -> list[str]:
    code = ("import sys, fairdecide; "
            f"print(','.join(m for m in {HEAVY!r} if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    return [m for m in out.split(",") if m]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="5 pairs")
    parser.add_argument("--pairs", type=int, default=21)
    parser.add_argument("--out", default=str(Path(__file__).parent / "results" /
                                             "import_time.txt"))
    args = parser.parse_args()
    n = 5 if args.quick else args.pairs
    import_seconds(STATEMENTS["fairdecide"])  # warm the file cache
    import_seconds(STATEMENTS["anchor"])
    times: dict[str, list[float]] = {k: [] for k in STATEMENTS}
    ratios = []
    for i in range(n):
        order = list(STATEMENTS) if i % 2 == 0 else list(reversed(STATEMENTS))
        got = {k: import_seconds(STATEMENTS[k]) for k in order}
        for k, v in got.items():
            times[k].append(v)
        ratios.append(got["fairdecide"] / got["anchor"])
    lines = [f"{n} pairs of fresh interpreters, python -X importtime, {sys.version.split()[0]}"]
    for k, stmt in STATEMENTS.items():
        v = times[k]
        lines.append(f"{stmt:40s} median {statistics.median(v):.3f} s "
                     f"(min {min(v):.3f}, max {max(v):.3f})")
    lines.append(f"ratio fairdecide / anchor, pair by pair: median "
                 f"{statistics.median(ratios):.2f} (min {min(ratios):.2f}, "
                 f"max {max(ratios):.2f}); target <= 1.2")
    heavy = heavy_modules()
    lines.append("heavy modules loaded by import fairdecide: " + (", ".join(heavy) or "none"))
    text = "\n".join(lines)
    print(text)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(text + "\n")


if __name__ == "__main__":
    main()
