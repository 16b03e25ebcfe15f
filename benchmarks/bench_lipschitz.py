"""Lipschitz fairness at scale, part one: the exact all-pairs certificate.

Issue 11's benchmark will time the constraint-generation LP on Adult; this first part
times what certifies its answer: the largest violation max_{i<j} D_TV(pi_i, pi_j) -
L d(x_i, x_j) over all n (n - 1) / 2 pairs, and every pair above 0, by the blocked search
of ``fairdecide.criteria._pairs`` (a matrix-product screen with exact recomputation of
every candidate). The anchor, in the same run where it fits in memory, is the direct
computation: scipy's cdist for all distances and the full TV matrix.

Data: Adult's training features (numerics standardised, categoricals one-hot: 100
columns), the first n rows; the rows of a smooth policy, a logistic function of one
standardised feature with slope 0.5 (so L = 0.25 certifies it: TV <= 0.25 |x - x'|),
certified at L = 0.25 (no pair violates) and, up to n = 3000, at L = 0.02 (most pairs
do, and all are listed).

Usage::

    FAIRDECIDE_DATA=/work/shared/data python benchmarks/bench_lipschitz.py
    FAIRDECIDE_DATA=/work/shared/data python benchmarks/bench_lipschitz.py --part certificate
    FAIRDECIDE_DATA=/work/shared/data python benchmarks/bench_lipschitz.py --quick
    FAIRDECIDE_DATA=/work/shared/data python benchmarks/bench_lipschitz.py \
        --constants 0.2 --landed 6c20bcb

The LP part (the default) times ``optimize_policy`` by constraint generation on Adult, and
the all-pairs LP where it fits. With ``--landed REV`` constraint generation also runs on
the package as it was at git revision REV (a temporary worktree first on PYTHONPATH), in
the same run: the route landed before a change, beside it.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import resource
import shlex
import subprocess
import sys
import time
import tracemalloc
import warnings
from pathlib import Path

import numpy as np
from scipy.spatial.distance import cdist

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _landed import landed_tree
from bench_estimators import preprocess
from bench_fairlearn import adult_frame, git_state, nproc

from fairdecide.criteria._pairs import violated_pairs

ROOT = Path(__file__).resolve().parents[1]
DIRECT_LIMIT = 10_000  # the direct matrices need 2 n^2 floats: 1.6 GB at 10,000


def measure(fn):
    tracemalloc.start()
    t0 = time.perf_counter()
    out = fn()
    secs = time.perf_counter() - t0
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    return out, secs, peak


def direct(P, X, L):
    tv = 0.5 * np.abs(P[:, None, 0] - P[None, :, 0]) * 2  # two actions: TV = |p1 - p1'|
    v = tv - L * cdist(X, X)
    iu = np.triu_indices(len(P), 1)
    vals = v[iu]
    return float(vals.max()), int((vals > 0).sum())


def started() -> dict:
    """The command as typed (with the data folder), the start time and the load."""
    command = "python " + " ".join(shlex.quote(a) for a in sys.argv)
    if os.environ.get("FAIRDECIDE_DATA"):
        command = f"FAIRDECIDE_DATA={os.environ['FAIRDECIDE_DATA']} {command}"
    return {"command": command, "started": datetime.datetime.now().astimezone(),
            "load": os.getloadavg()[0]}


def preamble(title: str, run: dict) -> list[str]:
    """The results file's head: title, command, date, machine, versions."""
    return [
        title, "",
        f"command: {run['command']}",
        f"date:    {run['started']:%Y-%m-%d %H:%M %Z}",
        f"machine: nproc = {nproc()}, {platform.machine()}, {platform.system()}; "
        f"1-min load average {run['load']:.1f} at start, {os.getloadavg()[0]:.1f} at end",
        f"versions: python {platform.python_version()}, numpy {np.__version__}",
        f"          {git_state()}",
    ]


def certificate_part(args) -> None:
    run = started()
    X, _, _ = adult_frame()
    A = preprocess(X).fit_transform(X)
    sizes = [1000, 3000] if args.quick else [1000, 3000, 10_000, 30_000]
    lines = []
    head = (f"{'n':>6} {'L':>5} {'pairs':>12} {'max violation':>14} {'violated':>10} "
            f"{'search s':>9} {'peak MB':>8} {'direct s':>9} {'direct MB':>9} {'agree':>6}")
    for n in sizes:
        F = A[:n]
        x0 = (F[:, -5] - F[:, -5].mean()) / F[:, -5].std()  # a standardised numeric
        p1 = 1 / (1 + np.exp(-0.5 * x0))
        P = np.c_[1 - p1, p1]
        # at L = 0.02 most pairs violate: their list alone would take 24 bytes a pair
        for L in (0.25, 0.02) if n <= 3000 else (0.25,):
            found, secs, peak = measure(lambda F=F, P=P, L=L: violated_pairs(P, F, L))
            row = (f"{n:>6} {L:>5} {found.pairs_checked:>12,} {found.max_violation:>14.6f} "
                   f"{len(found.pairs):>10,} {secs:>9.2f} {peak:>8.0f}")
            if n <= DIRECT_LIMIT:
                (best, count), dsecs, dpeak = measure(lambda F=F, P=P, L=L: direct(P, F, L))
                agree = abs(best - found.max_violation) < 1e-9 and count == len(found.pairs)
                row += f" {dsecs:>9.2f} {dpeak:>9.0f} {'yes' if agree else 'NO':>6}"
            else:
                row += f" {'-':>9} {'-':>9} {'-':>6}"
            print(row, flush=True)
            lines.append(row)
    text = "\n".join([
        *preamble("Lipschitz certificate: the exact all-pairs search against the direct "
                  "computation", run),
        f"data: Adult features, first n rows, {A.shape[1]} columns; policy "
        "p(a=1 | x) = logistic(0.5 x_k), x_k a standardised numeric",
        "",
        head, "-" * len(head), *lines, "",
        "pairs: n (n - 1) / 2, all examined; violated: pairs with TV - L d > 0; search s /",
        "peak MB: the blocked search (tracemalloc peak of Python allocations); direct: cdist",
        "and the full TV matrix (only up to n = 10,000: 2 n^2 floats); agree: same maximum",
        "(1e-9) and the same number of violated pairs.",
    ]) + "\n"
    print(text)
    Path(args.out).write_text(text)


# ---------------------------------------------------------------------- part two: the LP
LP_SIZES = (1000, 3000, 10_000, 30_000)
FULL_LIMIT = 1000  # all pairs in one program: 500k pairs, 1M rows at n = 1000


def adult_world(n: int):
    """The first n Adult rows as a SampleWorld: payoffs from a logistic regression
    fitted on every row, features as the distance sees them, z = sex."""
    from sklearn.linear_model import LogisticRegression

    import fairdecide as fd

    X, y, z = adult_frame()
    if n > len(X):  # X[:n] would silently be every row, under a larger n
        raise SystemExit(f"n = {n:,} is more than Adult's {len(X):,} rows here; use "
                         f"--sizes {len(X)} for all of them")
    A = preprocess(X).fit_transform(X)
    clf = LogisticRegression(max_iter=2000).fit(A, np.asarray(y))
    world = fd.SampleWorld(A[:n], np.asarray(z)[:n], clf.predict_proba(A[:n]))
    return fd.DecisionProblem.classification(2), world


def run_case(n: int, L: float, how: str) -> dict:
    """One case in this process: build the world, solve, report."""
    import fairdecide as fd

    if how == "baseline":
        adult_world(n)
        return {"peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}
    problem, world = adult_world(n)
    crit = fd.Lipschitz(constant=L, pairs="all" if how == "all pairs" else None)
    t0 = time.perf_counter()
    res = fd.optimize_policy(problem, world, crit, epsilon=0.0)
    secs = time.perf_counter() - t0
    free = fd.optimize_policy(problem, world)
    cert = res.certificates.get("lipschitz", {})
    check = crit.certificate(res.policy.table, world.X)  # all pairs, for both routes
    return {"seconds": secs, "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
            / 1024, "utility": res.utility, "unconstrained": free.utility,
            "rounds": cert.get("rounds", 1), "pairs_in_lp": cert.get(
                "cuts_in_program", n * (n - 1) // 2), "max_violation": check.max_violation,
            "pairs_checked": check.pairs_checked, "solve_s": res.stats["solve_seconds"],
            "search_s": cert.get("search_seconds", 0.0),
            "rows": res.stats.get("n_constraints", 0)}


def lp_part(args) -> None:
    run = started()
    sizes = LP_SIZES[:2] if args.quick else (args.sizes or LP_SIZES)
    head = (f"{'n':>6} {'L':>4} {'method':<22} {'seconds':>8} {'solve s':>8} "
            f"{'search s':>8} {'peak MB':>8} {'rounds':>6} {'pairs in LP':>12} "
            f"{'utility':>10} {'max violation':>14} {'vs full':>9}")
    lines = []

    def case(n, L, how, tree=None):
        env = None if tree is None else dict(os.environ, PYTHONPATH=str(tree))
        out = subprocess.run([sys.executable, __file__, "--case", json.dumps([n, L, how])],
                             capture_output=True, text=True, check=False, env=env)
        if out.returncode:
            raise SystemExit(f"case {n} {L} {how} failed:\n{out.stderr[-3000:]}")
        return json.loads(out.stdout.strip().splitlines()[-1])

    with landed_tree(args.landed) as landed:
        base = case(1000, 0.0, "baseline")
        for n in sizes:
            for L in (args.constants if n <= 10_000 and not args.quick
                      else args.constants[:1]):
                lines.extend(_lp_rows(case, n, L, args, landed))
    text = "\n".join([
        *preamble("Lipschitz fairness on Adult: the LP by constraint generation beside the "
                  "all-pairs LP", run),
        "problem: max accuracy s.t. D_TV(pi_i, pi_j) <= L ||x_i - x_j||_2 for all pairs of",
        "the first n Adult rows (numerics standardised, categoricals one-hot: 100",
        "columns); P(y | x) from a logistic regression on all 45,222 rows",
        f"baseline: a process that only loads the data and fits the payoffs peaks at "
        f"{base['peak_mb']:.0f} MB",
        *([f"landed: constraint generation on the package at git revision {args.landed}, "
           "same run"] if args.landed else []),
        "",
        head, "-" * len(head), *lines, "",
        "seconds: optimize_policy end to end (nearest neighbours, every solve and search,",
        "verification); solve s / search s: its HiGHS solves and pair searches; peak MB:",
        "the process's resident peak; pairs in LP: pairs whose rows the final program",
        "carries; max violation: the exact largest D_TV - L d over all n (n - 1) / 2",
        "pairs of the returned policy (<= 0: certified L-Lipschitz); vs full: relative",
        "utility difference from the all-pairs LP (landed: from this tree's generation).",
    ]) + "\n"
    print(text)
    Path(args.out).write_text(text)


def _lp_rows(case, n: int, L: float, args, landed) -> list[str]:
    """The table's rows for one n and L: all pairs (where it fits), constraint
    generation, and generation on the landed tree."""
    lines = []
    full = case(n, L, "all pairs") if n <= args.full_limit else None
    gen = case(n, L, "generation")
    old = case(n, L, "generation", landed) if landed is not None else None
    for how, r in (("all pairs", full), ("constraint generation", gen),
                   ("generation, landed", old)):
        if r is None:
            continue
        anchor = full if how != "generation, landed" else gen
        rel = ("" if anchor is None else
               f"{abs(r['utility'] - anchor['utility']) / abs(anchor['utility']):.1e}")
        row = (f"{n:>6} {L:>4} {how:<22} {r['seconds']:>8.2f} {r['solve_s']:>8.2f} "
               f"{r['search_s']:>8.2f} {r['peak_mb']:>8.0f} {r['rounds']:>6} "
               f"{r['pairs_in_lp']:>12,} {r['utility']:>10.6f} "
               f"{r['max_violation']:>14.2e} {rel:>9}")
        print(row, flush=True)
        lines.append(row)
    lines.append(f"{'':>6} {'':>4} unconstrained utility {gen['unconstrained']:.6f}; "
                 f"{gen['pairs_checked']:,} pairs certified")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=("lp", "certificate"), default="lp")
    parser.add_argument("--quick", action="store_true",
                        help="n in {1000, 3000} and the first constant only")
    parser.add_argument("--constants", type=float, nargs="+", default=[0.2, 0.5])
    parser.add_argument("--sizes", type=int, nargs="+", help="n values (default: all)")
    parser.add_argument("--full-limit", type=int, default=FULL_LIMIT,
                        help="largest n for the all-pairs LP")
    parser.add_argument("--landed", default=None, metavar="REV",
                        help="also run constraint generation on the package at git "
                             "revision REV, in the same run")
    parser.add_argument("--case", help=argparse.SUPPRESS)
    parser.add_argument("--out")
    args = parser.parse_args()
    if args.case:
        n, L, how = json.loads(args.case)
        print(json.dumps(run_case(n, L, how)))
        return
    name = "lipschitz_lp.txt" if args.part == "lp" else "lipschitz.txt"
    args.out = args.out or str(ROOT / "benchmarks" / "results" / name)
    (lp_part if args.part == "lp" else certificate_part)(args)


if __name__ == "__main__":
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        main()
