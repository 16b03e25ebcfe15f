"""The group side of smoothness (docs/smoothness.md): the worst-case bias LP by constraint
generation, and the exact meritocracy count.

1. **worst_case_bias**: random normal features (n x d), S and T split by a noisy
   threshold on the first feature (x_0 + 0.5 e > 0, e standard normal), Euclidean
   distance, constant L. For each case: the rounds of constraint generation, the pairs
   in the final LP, seconds in HiGHS (``stats["lp_seconds"]``), in the exact all-pairs
   searches (``stats["search_seconds"]``) and end to end, and the certificate (the
   largest violation over all pairs, <= 1e-9).
2. **meritocracy**: n worths (standard normal) and, for "rows", probabilities of the
   favourable action uniform on [0, 1], for "decisions", random 0/1 decisions; seconds
   of one exact count, and the count, checked against the expected number of violating
   pairs (half of the pairs for rows; for decisions, n1 n0 / 2) within 1%.

One BLAS thread (threadpoolctl); one run each.

With ``--landed REV`` each case runs instead in fresh processes on the package at git
revision REV and on this one, alternating (``--repeats`` times, once for a case over
10 s), into smoothness_vs_landed.txt: median seconds end to end, the ratio this / landed
and whether the values (the bias LP's optimum; the count) agree.

Usage::

    python benchmarks/bench_smoothness.py [--quick] [--out FILE]
    python benchmarks/bench_smoothness.py --landed 79b1da6 --repeats 3
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np
from _landed import Table, add_arguments, compare, landed_tree, runs
from _provenance import provenance
from threadpoolctl import threadpool_limits

# from the top level, where older trees (--landed) kept them too
from fairdecide import meritocracy, worst_case_bias

CASES = [(150, 2, 1.0), (2000, 3, 0.5), (2000, 3, 2.0), (5000, 5, 0.3), (10_000, 5, 0.3),
         (10_000, 5, 0.05)]
MERIT_SIZES = [100_000, 1_000_000]


def bias_input(n: int, d: int) -> tuple[np.ndarray, np.ndarray]:
    """n x d normal features and S, a noisy threshold on the first."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, d))
    return X, X[:, 0] + 0.5 * rng.normal(size=n) > 0


def merit_input(n: int) -> dict:
    """Each input of the meritocracy count at size n: (argument, worths, expected)."""
    rng = np.random.default_rng(1)
    worth = rng.normal(size=n)
    p = rng.uniform(size=n)
    decisions = (rng.uniform(size=n) < 0.5).astype(int)
    n1 = int(decisions.sum())
    return {"rows": (np.c_[1 - p, p], worth, n * (n - 1) / 4),
            "decisions": (decisions, worth, n1 * (n - n1) / 2)}


def bias_rows(cases: list[tuple[int, int, float]]) -> list[str]:
    out = ["| n | d | L | rounds | pairs in final LP | LP s | search s | total s | "
           "largest violation | value |", "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for n, d, L in cases:
        X, S = bias_input(n, d)
        t0 = time.perf_counter()
        res = worst_case_bias(X, S, ~S, L)
        total = time.perf_counter() - t0
        if res.max_violation > 1e-9:
            raise SystemExit(f"n = {n}, L = {L}: not certified ({res.max_violation:.3g})")
        out.append(f"| {n:,} | {d} | {L} | {res.rounds} | {res.n_pairs:,} | "
                   f"{res.stats['lp_seconds']:.2f} | {res.stats['search_seconds']:.2f} | "
                   f"{total:.2f} | {res.max_violation:.1e} | {res.value:.4f} |")
        print(out[-1], flush=True)
    return out


def merit_rows(sizes: list[int]) -> list[str]:
    out = ["| n | input | seconds | violating pairs | expected |", "|---:|---|---:|---:|---:|"]
    for n in sizes:
        for name, (arg, worth, expected) in merit_input(n).items():
            t0 = time.perf_counter()
            res = meritocracy(arg, worth, max_pairs=10)
            seconds = time.perf_counter() - t0
            if abs(res.n_violations - expected) > 0.01 * expected:
                raise SystemExit(f"{name}, n = {n}: {res.n_violations} violating pairs, "
                                 f"expected about {expected:.4g}")
            out.append(f"| {n:,} | {name} | {seconds:.2f} | {res.n_violations:,} | "
                       f"{expected:.4g} |")
            print(out[-1], flush=True)
    return out


def landed_case(kind: str, n: int, d: int = 0, L: float = 0.0) -> dict:
    """worst_case_bias on (n, d, L), or (kind "rows" / "decisions") one meritocracy count
    at n, timed end to end on one thread after a small warm-up (for --landed: run in a
    fresh process on either tree's package)."""
    with threadpool_limits(1):
        X, S = bias_input(50, 2)
        worst_case_bias(X, S, ~S, 1.0)
        if kind == "bias":
            X, S = bias_input(n, d)
            t0 = time.perf_counter()
            res = worst_case_bias(X, S, ~S, L)
            return {"seconds": time.perf_counter() - t0, "value": float(res.value),
                    "note": f"{res.rounds} rounds, {res.n_pairs:,} pairs"}
        arg, worth, _ = merit_input(n)[kind]
        t0 = time.perf_counter()
        res = meritocracy(arg, worth, max_pairs=10)
        return {"seconds": time.perf_counter() - t0, "value": float(res.n_violations),
                "note": ""}


def landed_main(args, cases, sizes) -> None:
    """Each case on the landed tree and this one (smoothness_vs_landed.txt)."""
    out = (args.out if args.out != OUT else OUT.with_name("smoothness_vs_landed.txt"))
    repeats = 1 if args.quick else args.repeats
    todo = ([(f"worst_case_bias n = {n:,}, d = {d}, L = {L}", ("bias", n, d, L))
             for n, d, L in cases]
            + [(f"meritocracy n = {n:,}, {kind}", (kind, n)) for n in sizes
               for kind in ("rows", "decisions")])
    table = Table(out, "The group side of smoothness against the landed version",
                  "bench_smoothness.py", args.landed,
                  ["seconds end to end, one BLAS thread, in a fresh process after a small "
                   "warm-up; " + runs(repeats, "the bias LP's optimum")
                   + ", the count of violating pairs"])
    with landed_tree(args.landed) as old:
        for label, a in todo:
            got = compare(old, "bench_smoothness", a, repeats, timeout=args.timeout)
            table.add(label, got, key="note" if a[0] == "bias" else None)


OUT = Path(__file__).parent / "results" / "smoothness.txt"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="the two smallest cases, n = 1e5")
    ap.add_argument("--out", type=Path, default=OUT)
    add_arguments(ap, "smoothness_vs_landed.txt")
    args = ap.parse_args()
    cases, sizes = (CASES[:2], MERIT_SIZES[:1]) if args.quick else (CASES, MERIT_SIZES)
    if args.landed:
        landed_main(args, cases, sizes)
        return
    load = os.getloadavg()[0]
    with threadpool_limits(1):
        bias, merit = bias_rows(cases), merit_rows(sizes)
    lines = [*provenance("The group side of smoothness: worst_case_bias and meritocracy",
                         "bench_smoothness.py", "; one BLAS thread, one run each; 1-min load "
                         f"average {load:.1f} at the start, {os.getloadavg()[0]:.1f} at "
                         "the end (other jobs share the 2 cores)"), "",
             "## worst_case_bias (random normal features, S: x_0 + 0.5 e > 0, T: the rest)",
             "", *bias, "", "## meritocracy (exact count of violating pairs)", "", *merit]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(lines) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
