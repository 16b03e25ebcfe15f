"""Coverage of the noise-aware rate interval on privately released counts (docs/privacy.md).

Each replication draws s ~ Binomial(n, p) successes of n people, splits each side (the
s successes and the n - s failures) at random over k released cells, releases the cells
with ``fd.privacy.release_counts`` (OpenDP's samplers, unseeded, as in use) at epsilon,
and asks ``rate_interval`` for the rate from the raw noisy sums with their noise
variance; "naive" is Wilson's interval on the clipped noisy counts, ignoring the noise.
A case's coverage is the share of replications whose interval holds p. The replication
is ``tests/test_privacy.py``'s ``_coverage`` helper, imported, so the test and this table
measure the same thing.

1. **The table**: the cases of ``test_privacy.COVERAGE_CASES``, both mechanisms, at 90%
   and 95%, over ``--reps`` replications per case (40,000; Monte-Carlo standard error
   sqrt(level (1 - level) / reps)).
2. **The grid**: n in 3..10,000, p in 0.02..0.5, epsilon in 0.05..1, one or three cells
   per side, both mechanisms, at 90%, 95% and 99%, over ``--grid-reps`` replications
   (4000); the lowest noise-aware coverage per level and where it occurred.

Usage: python benchmarks/bench_privacy_coverage.py [--quick] [--reps R] [--grid-reps R]
       [--out FILE]
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from pathlib import Path

import numpy as np
from _provenance import provenance
from scipy import stats
from threadpoolctl import threadpool_limits

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.test_privacy import (  # noqa: E402
    COVERAGE_CASES,
    MECHANISMS,
    WILSON_DIP,
    _coverage,
    coverage_floor,
)

TABLE_LEVELS = (0.9, 0.95)
#: test_noise_aware_interval_covers's check: 2000 replications, at least
#: tests.test_privacy.coverage_floor (the level minus WILSON_DIP minus four standard errors).
TEST_REPS = 2000
GRID_LEVELS = (0.9, 0.95, 0.99)
GRID = {"n": (3, 10, 30, 100, 1000, 10_000), "p": (0.02, 0.1, 0.3, 0.5),
        "epsilon": (0.05, 0.2, 1.0), "cells": (1, 3)}


def table(reps: int) -> list[str]:
    head = "      n      p  epsilon  k  " + "  ".join(
        f"{mech} {round(100 * lv)}%".rjust(19) for mech in MECHANISMS for lv in TABLE_LEVELS)
    lines = [head, "-" * len(head)]
    lowest = {lv: [2.0, 2.0] for lv in TABLE_LEVELS}  # noise-aware, naive
    chance = []  # (probability that the test's check fails at this coverage, where)
    for n, p, eps, k in COVERAGE_CASES:
        cells = []
        for mech in MECHANISMS:
            got = _coverage(n, p, eps, mech, TABLE_LEVELS, k, reps)
            for lv in TABLE_LEVELS:
                cells.append(f"{got[lv][0]:.3f} / {got[lv][1]:.3f}".rjust(19))
                lowest[lv] = [min(a, float(b)) for a, b in zip(lowest[lv], got[lv], strict=True)]
                floor = coverage_floor(lv, TEST_REPS)
                chance.append((float(stats.binom.cdf(np.ceil(floor * TEST_REPS) - 1,
                                                     TEST_REPS, got[lv][0])),
                               f"n = {n}, p = {p}, epsilon = {eps}, {mech}, "
                               f"{round(100 * lv)}%"))
        lines.append(f"{n:7d}  {p:5.2f}  {eps:7.2f}  {k}  " + "  ".join(cells))
        print(lines[-1], flush=True)
    se = "; ".join(f"{np.sqrt(lv * (1 - lv) / reps):.4f} at {round(100 * lv)}%"
                   for lv in TABLE_LEVELS)
    return [f"table: {reps:,} replications per case; each entry noise-aware / naive "
            f"coverage; Monte-Carlo standard error {se}", "", *lines, "",
            *(f"lowest {what} coverage in the table: " + ", ".join(
                f"{lowest[lv][w]:.3f} at {round(100 * lv)}%" for lv in TABLE_LEVELS)
              for w, what in enumerate(("noise-aware", "naive"))),
            f"chance that test_privacy's check ({TEST_REPS} replications, at least the level "
            f"minus {WILSON_DIP} minus 4 standard errors) fails by bad luck at these "
            "coverages: at most "
            f"{max(chance)[0]:.2g} for one check ({max(chance)[1]}), "
            f"{1 - np.prod([1 - c for c, _ in chance]):.2g} for any of the {len(chance)}"]


def grid(reps: int) -> list[str]:
    worst = {lv: (2.0, None) for lv in GRID_LEVELS}
    cases = list(itertools.product(GRID["n"], GRID["p"], GRID["epsilon"], GRID["cells"],
                                   MECHANISMS))
    for n, p, eps, k, mech in cases:
        got = _coverage(n, p, eps, mech, GRID_LEVELS, k, reps)
        for lv in GRID_LEVELS:
            if got[lv][0] < worst[lv][0]:
                worst[lv] = (got[lv][0], (n, p, eps, k, mech))
    out = [f"grid: {len(cases)} cases (n in {GRID['n']}, p in {GRID['p']}, epsilon in "
           f"{GRID['epsilon']}, cells per side in {GRID['cells']}, {', '.join(MECHANISMS)}), "
           f"{reps:,} replications each", "lowest noise-aware coverage:"]
    for lv in GRID_LEVELS:
        cover, (n, p, eps, k, mech) = worst[lv]
        se = np.sqrt(lv * (1 - lv) / reps)
        out.append(f"  at {round(100 * lv)}%: {cover:.3f} (standard error {se:.4f}) at n = {n}, "
                   f"p = {p}, epsilon = {eps}, {k} cell(s) per side, {mech}")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="500 replications, a small grid")
    ap.add_argument("--reps", type=int, default=40_000)
    ap.add_argument("--grid-reps", type=int, default=4000)
    ap.add_argument("--out", type=Path, default=Path(__file__).parent / "results"
                    / "privacy_coverage.txt")
    args = ap.parse_args()
    if args.quick:
        args.reps, args.grid_reps = 500, 200
        GRID.update(n=(3, 1000), p=(0.1,), epsilon=(0.1,), cells=(1, 3))
    t0 = time.perf_counter()
    with threadpool_limits(1):
        body = [*table(args.reps), "", *grid(args.grid_reps)]
    header = provenance("Coverage of the noise-aware rate interval on released counts",
                        "bench_privacy_coverage.py",
                        f"; {time.perf_counter() - t0:.0f} s")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join([*header, "", *body]) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
