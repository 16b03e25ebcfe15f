"""Stable and fair matchings of candidates to programmes (issue 26, Example 13).

A synthetic school-choice market: n candidates, m programmes of equal capacity
floor(0.8 n / m) (80% of the candidates can be placed), two groups (30% in group 1).
Candidates rank their 10 most preferred programmes (a common popularity plus a Gumbel
taste); every programme ranks all candidates by an exam score (normal, 0.5 lower on
average in group 1) plus programme-specific noise (sd 0.3).

1. **Deferred acceptance** (candidate-proposing): ``fd.deferred_acceptance`` beside the
   ``matching`` package's ``HospitalResident`` game (``solve(optimal="resident")``) on the
   same market; the two matchings are checked equal; seconds are the median of
   ``--repeats`` runs (the game's construction from dictionaries included for the
   package, the MatchingMarket's for fairdecide).
2. **The fair matching program** (``fd.optimize_matching``, default utility m - rank): with
   the stability rows and no group criterion (checked equal to deferred acceptance),
   with the stability rows and the per-programme gap between the groups' rates held to
   GAP (when a stable lottery cannot, the smallest gap it can, read from the error, is
   solved instead and named), and without the stability rows, with and without GAP.
   For each: seconds end to end (deferred acceptance, build, HiGHS, verification), the
   expected utility and its ratio to deferred acceptance's, the per-programme gap, the
   largest stability-row deficit, and the mean number of blocking pairs of 100 matchings
   drawn from the lottery (``result.sample``).
3. The same program on **markets with many stable matchings** (complete lists, a place
   for every candidate, independent priorities), where a gap criterion can move the
   lottery within the stable matchings: the gap is the smallest a stable lottery can
   meet, with and without the stability rows.

Every figure is recomputed here from the returned X and the draws (capacities, rates,
utility, blocking pairs); a failed check stops the run. BLAS and OpenMP are held at one
thread (threadpoolctl).

With ``--methods`` the script measures instead HiGHS's methods on the programs of the
lattice markets (``optimize_matching``'s own rows, ``matching_lp._model``): dual simplex
(the default), primal simplex, interior point crossed over to a basis and interior point
alone, one solve each with a time limit, on the stable program without a criterion, with
the gap, and on the program of the smallest gap (the one an infeasible gap solves). The
vertex methods' optima are checked to agree to 1e-7 (results/matching_methods.txt). The
stable programs are written over the market's rotations
(fairdecide/assignment/_rotations.py); optimize_matching solves them by the dual simplex.

With ``--landed REV`` the script instead times deferred acceptance and each program of
parts 2 and 3 (``fd.optimize_matching`` end to end, the gap found as above, untimed) in
fresh processes on the package at git revision REV and on this one, alternating
(``--repeats`` times, once for a case over 10 s), into matching_vs_landed.txt: median
seconds, the ratio this / landed and whether the utilities agree (relative 1e-6).

Usage: python benchmarks/bench_matching.py [--quick] [--repeats R] [--out FILE] [--methods]
       python benchmarks/bench_matching.py --landed 79b1da6 --repeats 3
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import shlex
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from _landed import Table, add_arguments, compare, landed_tree, runs
from _provenance import provenance
from threadpoolctl import threadpool_limits

import fairdecide as fd

OUT = Path(__file__).parent / "results" / "matching.txt"
GAP, LIST, DRAWS, TOL = 0.02, 10, 100, 1e-6
SIZES = [(100, 10), (500, 20), (1000, 30), (2000, 50)]
LATTICE_SIZES = [(100, 10), (300, 15), (500, 20), (1000, 50), (2000, 50)]
METHOD_SIZES = [(100, 10), (200, 10), (300, 15), (500, 20)]
METHODS = {  # HiGHS options of each method measured by --methods
    "dual simplex": {"solver": "simplex", "simplex_strategy": 1},
    "primal simplex": {"solver": "simplex", "simplex_strategy": 4},
    "IPM + crossover": {"solver": "ipm", "run_crossover": "on"},
    "IPM alone": {"solver": "ipm", "run_crossover": "off"},
}
METHOD_LIMIT = 60.0  # seconds allowed to each solve by --methods


def market(n: int, m: int, seed: int = 0) -> tuple[fd.MatchingMarket, np.ndarray]:
    rng = np.random.default_rng(seed)
    z = (rng.random(n) < 0.3).astype(int)
    taste = rng.normal(size=m)[None, :] + rng.gumbel(size=(n, m))
    cand = np.argsort(-taste, axis=1)[:, :min(LIST, m)]
    score = (rng.normal(size=n) - 0.5 * z)[:, None] + 0.3 * rng.normal(size=(n, m))
    prog = np.argsort(-score, axis=0).T
    cap = np.full(m, max(1, int(0.8 * n / m)))
    return fd.MatchingMarket(cand.tolist(), prog.tolist(), cap), z


def lattice_market(n: int, m: int, seed: int = 0) -> tuple[fd.MatchingMarket, np.ndarray]:
    """A market with many stable matchings: complete lists, n / m places per programme
    (a place for everyone), independent priorities (Ashlagi, Kanoria and Leshno, 2017:
    balanced random markets have large cores)."""
    rng = np.random.default_rng(seed)
    z = (rng.random(n) < 0.3).astype(int)
    cand = np.argsort(-rng.gumbel(size=(n, m)), axis=1)
    prog = np.argsort(-rng.normal(size=(n, m)), axis=0).T
    return fd.MatchingMarket(cand.tolist(), prog.tolist(), np.full(m, n // m)), z


def anchor_da(mk: fd.MatchingMarket) -> np.ndarray:
    """The matching package's resident-optimal matching, as programme codes."""
    from matching.games import HospitalResident

    acc = mk.acceptable
    rp = {i: [j for j in mk.candidate_prefs[i] if acc[i, j]]
          for i in range(mk.n_candidates)}
    hp = {j: [i for i in mk.programme_prefs[j] if acc[i, j]]
          for j in range(mk.n_programmes)}
    caps = {j: int(mk.capacities[j]) for j in hp}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        game = HospitalResident.create_from_dictionaries(rp, hp, caps, clean=True)
        solved = game.solve(optimal="resident")
    out = np.full(mk.n_candidates, -1)
    for h, residents in solved.items():
        for r in residents:
            out[r.name] = h.name
    return out


def timed(f, repeats: int):
    times, out = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = f()
        times.append(time.perf_counter() - t0)
    return out, float(np.median(times))


def da_rows(n: int, m: int, repeats: int) -> list[str]:
    mk, _ = market(n, m)
    prefs = (mk.candidate_prefs, mk.programme_prefs, mk.capacities)
    ours, t_ours = timed(lambda: fd.deferred_acceptance(fd.MatchingMarket(*prefs)), repeats)
    theirs, t_theirs = timed(lambda: anchor_da(mk), repeats)
    assert np.array_equal(ours, theirs), "deferred acceptance differs from the matching package"
    assert len(fd.blocking_pairs(mk, ours)) == 0
    return [f"| {n} | {m} | {int(mk.capacities.sum())} | {t_ours:.4f} | {t_theirs:.4f} | "
            f"{t_theirs / t_ours:.0f} | {int((ours >= 0).sum())} | equal |"]


def check(res, mk: fd.MatchingMarket, z: np.ndarray, gap: float | None) -> dict:
    """Recompute capacities, utility, the gap and the draws' blocking pairs."""
    X = res.X
    assert np.all(X >= -TOL) and np.all(X.sum(axis=1) <= 1 + TOL)
    assert np.all(X.sum(axis=0) <= mk.capacities + TOL)
    U = np.where(mk.acceptable, mk.n_programmes - mk.candidate_rank, 0)
    utility = float((X * U).sum())
    assert abs(utility - res.utility) <= TOL * max(1.0, utility)
    rates = np.stack([X[z == g].sum(axis=0) / np.sum(z == g) for g in (0, 1)])
    prog_gap = float(np.abs(rates[0] - rates[1]).max())
    if gap is not None:
        assert prog_gap <= gap + TOL, (prog_gap, gap)
    draws = res.sample(DRAWS, random_state=0)
    blocking = []
    for a in draws:
        assert np.all(np.bincount(a[a >= 0], minlength=mk.n_programmes) <= mk.capacities)
        blocking.append(len(fd.blocking_pairs(mk, a)))
    return {"utility": utility, "gap": prog_gap, "blocking": float(np.mean(blocking))}


def programs(mk: fd.MatchingMarket, z: np.ndarray, lattice: bool) -> list[tuple]:
    """(label, stability, gap) of each program of a market: stable and unstable, without
    and with the gap (on a lattice market the smallest a stable lottery meets; where a
    stable lottery cannot meet it, the smallest it can, named in the label)."""
    target = GAP
    if lattice:  # the fairest stable lottery: the smallest gap any stable lottery meets
        try:
            fd.optimize_matching(mk, None, z, programme_gap=0.0)  # group by position: it
            # was named groups before (--landed runs this on older trees)
            target = 0.0
        except fd.InfeasibleToleranceError as exc:
            target = round(exc.smallest["programme_gap"], 4) + 1e-4
    out = []
    for name, stability, gap in [
            ("stable", True, None), (f"stable + gap {target:.4f}", True, target),
            ("unstable", False, None), (f"unstable + gap {target:.4f}", False, target)]:
        try:
            fd.optimize_matching(mk, None, z, programme_gap=gap, stability=stability)
        except fd.InfeasibleToleranceError as exc:  # solve at the smallest feasible gap
            gap = exc.smallest["programme_gap"] + 1e-9
            name = f"stable + smallest gap {gap:.4f} ({target} infeasible)"
        out.append((name, stability, gap))
    return out


def lp_rows(n: int, m: int, repeats: int, lattice: bool = False) -> list[str]:
    mk, z = (lattice_market if lattice else market)(n, m)
    da = fd.deferred_acceptance(mk)
    U = np.where(mk.acceptable, m - mk.candidate_rank, 0)
    da_utility = float(U[np.flatnonzero(da >= 0), da[da >= 0]].sum())
    lines = []
    for label, stability, gap in programs(mk, z, lattice):
        res, secs = timed(lambda s=stability, g=gap: fd.optimize_matching(
            mk, group=z, programme_gap=g, stability=s), repeats)
        if label == "stable":
            Xda = np.zeros_like(res.X)
            Xda[np.flatnonzero(da >= 0), da[da >= 0]] = 1.0
            assert np.abs(res.X - Xda).max() <= TOL, "stable optimum differs from DA"
        rows = [(label, res, secs)]
        if res.method.startswith("deferred acceptance"):  # beside it, the program it skips
            from unittest import mock

            from fairdecide.assignment import matching_lp

            with mock.patch.object(matching_lp, "follows_preferences", lambda *a: False):
                lp, lp_secs = timed(lambda: fd.optimize_matching(mk, group=z), repeats)
            assert abs(lp.utility - res.utility) <= 1e-7 * max(1.0, abs(lp.utility))
            rows.append(("stable, the program (no shortcut)", lp, lp_secs))
        for label, res, secs in rows:
            lines.append(_row(n, m, label, res, secs, mk, z, gap, da_utility))
    return lines


def landed_case(n: int, m: int, lattice: bool, i: int) -> dict:
    """Program i of :func:`programs` (i = -1: deferred acceptance) of a market, timed end
    to end on one thread after a small warm-up (for --landed: run in a fresh process on
    either tree's package)."""
    with threadpool_limits(limits=1):
        fd.optimize_matching(market(50, 5)[0])
        mk, z = (lattice_market if lattice else market)(n, m)
        if i < 0:
            t0 = time.perf_counter()
            da = fd.deferred_acceptance(mk)
            seconds = time.perf_counter() - t0
            U = np.where(mk.acceptable, m - mk.candidate_rank, 0)
            return {"seconds": seconds, "method": "",
                    "value": float(U[np.flatnonzero(da >= 0), da[da >= 0]].sum())}
        _, stability, gap = programs(mk, z, lattice)[i]
        t0 = time.perf_counter()
        res = fd.optimize_matching(mk, None, z, programme_gap=gap, stability=stability)
        return {"seconds": time.perf_counter() - t0, "value": float(res.utility),
                "method": res.method}


def landed_main(args, sizes, lattice_sizes) -> None:
    """Deferred acceptance and each program on the landed tree and this one."""
    out = args.out if args.out != OUT else OUT.with_name("matching_vs_landed.txt")
    repeats = 1 if args.quick else args.repeats
    table = Table(out, "Stable and fair matchings against the landed version",
                  "bench_matching.py", args.landed,
                  ["markets as in matching.txt (lattice: many stable matchings); "
                   "fd.deferred_acceptance, or fd.optimize_matching end to end, one thread, "
                   f"in a fresh process after a small warm-up; {runs(repeats, 'the utilities')}; "
                   "note: MatchingResult.method"])
    with landed_tree(args.landed) as old, threadpool_limits(limits=1):
        for lattice, grid in ((False, sizes), (True, lattice_sizes)):
            for n, m in grid:
                mk, z = (lattice_market if lattice else market)(n, m)
                labels = ["deferred acceptance"] + [p[0] for p in programs(mk, z, lattice)]
                for i, label in enumerate(labels, start=-1):
                    got = compare(old, "bench_matching", (n, m, lattice, i), repeats,
                                  timeout=args.timeout)
                    table.add(f"{'lattice ' if lattice else ''}{n} x {m}, {label}", got,
                              key="method" if i >= 0 else None)


def _row(n, m, label, res, secs, mk, z, gap, da_utility) -> str:
    """One row of the program table, every figure recomputed by :func:`check`."""
    got, comp = check(res, mk, z, gap), res.comparison()
    return (f"| {n} | {m} | {label} | {secs:.3f} | {got['utility']:.1f} | "
            f"{got['utility'] / da_utility:.4f} | {got['gap']:.4f} | "
            f"{res.stability_violation:.3f} | {got['blocking']:.1f} | "
            f"{comp['better_off']} | {comp['worse_off']} | {res.method} |")


def method_rows(n: int, m: int, limit: float, which: list[str]) -> list[str]:
    """One solve by each of METHODS named in ``which`` of the three programs of a
    lattice market."""
    from fairdecide.assignment import matching_lp

    mk, z = lattice_market(n, m)
    U = fd.assignment.rank_utility(mk)
    program = matching_lp._program(mk, U, True, fd.deferred_acceptance(mk))
    codes = z.astype(np.int64)

    def model(gap, shared, limit=limit):
        return matching_lp._model(program, codes, 2, m, None, gap, {}, shared, limit)

    probe = model(0.0, True, None)  # the smallest gap, by the library's own choice
    assert probe.solve()[0]
    target = round(float(probe.values()[-1]), 4) + 1e-4
    lines = []
    for name, gap, shared in (("stable", None, False), (f"stable + gap {target:.4f}", target,
                              False), ("smallest gap", 0.0, True)):
        chosen = "dual simplex"
        times, objs = {}, {}
        for method, options in METHODS.items():
            if method not in which:
                continue
            mdl = model(gap, shared)
            for key, value in options.items():
                mdl.h.setOptionValue(key, value)
            t0 = time.perf_counter()
            ok, status = mdl.solve()
            times[method] = time.perf_counter() - t0
            if ok:
                objs[method] = mdl.objective
            elif "time limit" not in status and method != "IPM alone":
                raise AssertionError(f"{method} on {n} x {m} {name}: {status}")
        vertex = [objs[k] for k in ("dual simplex", "primal simplex", "IPM + crossover")
                  if k in objs]
        ref = vertex[0] if vertex else float("nan")
        assert all(abs(v - ref) <= 1e-7 * max(1.0, abs(ref)) for v in vertex), (name, objs)
        alone = abs(objs["IPM alone"] - ref) if "IPM alone" in objs else float("nan")
        cols = len(program.c) + 2 * m + (1 if shared else 0)
        cells = ["-" if k not in times else f"> {limit:.0f}" if k not in objs else
                 f"{times[k]:.2f}" for k in METHODS]
        best = min((k for k in objs if k != "IPM alone"), key=times.get, default="none")
        ratio = times.get("dual simplex", np.nan) / times.get("IPM + crossover", np.nan)
        ratio = ("-" if "IPM + crossover" not in objs or "dual simplex" not in times else
                 f"{ratio:.1f}" if "dual simplex" in objs else f"> {ratio:.1f}")
        lines.append(f"| {n} | {m} | {name} | {cols} | {' | '.join(cells)} | {ratio} | "
                     f"{'-' if np.isnan(alone) else f'{alone:.1e}'} | {best} | {chosen} |")
        print(lines[-1], flush=True)
    return lines


def methods_main(args) -> None:
    sizes = METHOD_SIZES[:1] if args.quick else METHOD_SIZES
    if args.sizes:
        sizes = [tuple(int(v) for v in size.split("x")) for size in args.sizes]
    out = args.out if args.out != OUT else OUT.with_name("matching_methods.txt")
    lines = [
        "# HiGHS's methods on the fair matching programs of markets with many stable matchings",
        f"# command: python {shlex.join(['benchmarks/bench_matching.py', *sys.argv[1:]])}",
        f"# date: {datetime.datetime.now():%Y-%m-%d %H:%M}; machine: nproc {os.cpu_count()}, "
        f"{platform.machine()}, python {platform.python_version()}; one thread "
        "(threadpoolctl)",
        "# seconds of one HiGHS solve (presolve on, as optimize_matching solves) of the "
        "program optimize_matching builds; limit "
        f"{args.limit:.0f} s; columns = LP columns; ds / ipm+x = dual simplex over IPM + "
        "crossover; IPM alone = |its objective - the simplex's| (not a vertex);",
        "# '-' = not run (--which); the optima of dual simplex, primal simplex and IPM + "
        "crossover agree to 1e-7 (checked); fastest = fastest vertex method; chosen = "
        "optimize_matching's (the dual simplex, over the rotations)",
        "",
        "| n | m | program | columns | dual simplex | primal simplex | IPM + crossover | "
        "IPM alone | ds / ipm+x | IPM alone error | fastest | chosen |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    print("\n".join(lines), flush=True)
    with threadpool_limits(limits=1):
        for n, m in sizes:
            lines += method_rows(n, m, args.limit, args.which or list(METHODS))
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text("\n".join(lines) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the two smallest sizes")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--methods", action="store_true",
                        help="measure HiGHS's methods instead (results/matching_methods.txt)")
    parser.add_argument("--limit", type=float, default=METHOD_LIMIT,
                        help="--methods: seconds allowed to each solve")
    parser.add_argument("--sizes", nargs="+", metavar="NxM",
                        help="--methods: markets to measure, e.g. 1000x50")
    parser.add_argument("--which", nargs="+", choices=list(METHODS), metavar="METHOD",
                        help=f"--methods: a subset of {list(METHODS)}")
    add_arguments(parser, "matching_vs_landed.txt", repeats=None)
    args = parser.parse_args()
    if args.methods:
        methods_main(args)
        return
    sizes = SIZES[:2] if args.quick else SIZES
    lattice_sizes = LATTICE_SIZES[:1] if args.quick else LATTICE_SIZES
    if args.landed:
        landed_main(args, sizes, lattice_sizes)
        return
    try:
        import matching
        anchor = f"matching {matching.__version__}"
    except ImportError:
        sys.exit("the matching package (pyproject's bench extra) is the anchor: "
                 "pip install -e '.[bench]'")
    lines = [
        *provenance("Stable and fair matchings (issue 26, Example 13)", "bench_matching.py",
                    f"; anchor: {anchor}; one thread (threadpoolctl)"),
        f"# market: n candidates (30% in group 1), m programmes of floor(0.8 n / m) places, "
        f"lists of the {LIST} most preferred programmes, programmes rank by an exam score "
        "(group 1 0.5 sd lower) plus noise",
        "",
        f"## Deferred acceptance (candidate-proposing), median of {args.repeats} runs",
        "",
        "| n | m | places | fairdecide s | matching s | ratio | matched | matchings |",
        "|---|---|---|---|---|---|---|---|",
    ]
    print("\n".join(lines), flush=True)

    def flush(new):
        print("\n".join(new), flush=True)
        lines.extend(new)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text("\n".join(lines) + "\n")

    with threadpool_limits(limits=1):
        fd.optimize_matching(market(50, 5)[0])  # warm-up: imports and first calls
        for n, m in sizes:
            flush(da_rows(n, m, args.repeats))
        flush([
            "",
            f"## The fair matching program (median of {args.repeats} solves)",
            "# utility = sum_ij (m - rank_i(j)) X_ij, recomputed from X; / DA = its ratio to "
            "deferred acceptance's; gap = max_j |r_0j - r_1j| (group rates per programme);",
            "# violation = largest deficit of a stable-matching row of the seat market; "
            f"blocking = mean blocking pairs of {DRAWS} sampled matchings; better/worse = "
            "candidates better / worse off in expectation than under DA; method = "
            "MatchingResult.method (stable programs: over the rotations of the stable "
            "matchings, see --methods)",
            "",
            "| n | m | program | seconds | utility | / DA | gap | violation | blocking | "
            "better | worse | method |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|",
        ])
        for n, m in sizes:
            flush(lp_rows(n, m, args.repeats))
        flush([
            "",
            "## Markets with many stable matchings (complete lists, a place for everyone, "
            "independent priorities), the same program",
            "# stable + gap = the smallest per-programme gap a stable lottery can meet "
            "(read from InfeasibleToleranceError.smallest at gap 0, rounded up); unstable + "
            "gap = the same gap without the stability rows",
            "",
            "| n | m | program | seconds | utility | / DA | gap | violation | blocking | "
            "better | worse | method |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|",
        ])
        for n, m in lattice_sizes:
            flush(lp_rows(n, m, args.repeats, lattice=True))


if __name__ == "__main__":
    main()
