"""Beliefs: the scenario-cut solver beside the whole program handed to HiGHS, one run.

For each case the belief's program is solved three or four ways, in one process, one
after the other:

- ``default``: ``optimize_policy`` with the default solver, end to end (build, solve,
  verify on every scenario's decision table): for a belief of linear group criteria under
  epsilon the scenario-cut solver (:mod:`fairdecide.optimize.engine.scenario_cuts`), unless it
  hands the program back (``solver`` then names the route that solved it), under lam
  HiGHS on the whole program (above 5,000 variables its interior point without
  crossover);
- ``landed``: ``optimize_policy(..., solver=<HiGHS's method by size>)``, the route every
  belief took before issue 24 (the whole program, dual simplex or interior point with
  crossover), end to end; skipped above ``--landed-max`` variables;
- ``raw ds`` / ``raw ipm``: the same whole program handed to ``scipy.optimize.linprog``
  (HiGHS dual simplex, interior point), ``--time-limit`` seconds each (inf: not finished);
- ``HiGHS ipm, no crossover``: the whole program by HiGHS's interior point without
  crossover, the default route for these beliefs before the unit interior point;
- ``unit-ipm``: ``optimize_policy(..., solver="unit-ipm")`` end to end, the interior
  point over unit blocks (:mod:`fairdecide.optimize.engine.unit_ipm`), and its objective's
  relative difference from the best finished whole-program optimum (raw dual simplex,
  raw interior point, else HiGHS's without crossover).

``speed-up`` is the fastest other route's time over the default's; ``rel diff`` compares
the default's objective with the best finished whole-program
optimum. Cases: independence on ``make_tabular_problem(n_x, 4, 5)`` with a Dirichlet
posterior fitted on 20 x cells logged rows, and with
``--compas K ...`` the Bayesian-fairness experiment's program (COMPAS, balance,
group-blind, posterior of the whole data) at lambda 0.5 and 1.

With ``--landed REV`` the default route of each case (``optimize_policy`` end to end, the
belief built first, untimed) runs instead in fresh processes on the package at git
revision REV and on this one, alternating (``--repeats`` times, once for a case over
10 s), into beliefs_vs_landed.txt: median seconds, the ratio this / landed, whether the
objectives agree (relative 1e-6) and each tree's solver.

Usage::

    python benchmarks/bench_beliefs.py                       # 300 and 1000 cells, K = 32
    python benchmarks/bench_beliefs.py --quick               # 100 cells, K = 8
    python benchmarks/bench_beliefs.py --sizes 1000 --epsilon --match-lam  # lam beside
        # the constraint form at the deviation lam's optimum reached
    FAIRDECIDE_DATA=... python benchmarks/bench_beliefs.py --sizes --compas 32 128 512 2048
    FAIRDECIDE_DATA=... python benchmarks/bench_beliefs.py --landed 79b1da6 \
        --epsilon 0.05 0.03 0.01 --lams 0.5 --compas 32 128 512 --repeats 3
"""

from __future__ import annotations

import argparse
import datetime
import platform
import shlex
import sys
import time
from pathlib import Path

import numpy as np
from _landed import Table, add_arguments, compare, landed_tree, runs
from scipy.optimize import linprog

import fairdecide as fd
from fairdecide.datasets import make_tabular_problem, sample_logged_data
from fairdecide.optimize.program.policy_program import PolicyProgram
from fairdecide.optimize.program.shorthand import make_tradeoff

OUT = Path(__file__).parent / "results" / "beliefs.txt"


def tabular_belief(n_x: int, K: int, n_a: int = 5):
    """The synthetic belief of these benchmarks: ``make_tabular_problem(n_x, 4, n_a, 2)``
    (seed 0), a Dirichlet posterior (prior 0.5) of 20 logged rows per cell, K scenarios;
    (problem, belief)."""
    problem, world = make_tabular_problem(n_x, 4, n_a, 2, random_state=0)
    # by keyword: the order was (world, problem) before (--landed runs this on older trees)
    data = sample_logged_data(problem=problem, world=world, n=20 * n_x * 4, random_state=0)
    post = fd.DirichletPosterior(prior=0.5).fit(data, problem)
    return problem, fd.Belief.from_posterior(post, K, random_state=0)


def tabular_case(n_x: int, K: int):
    return (*tabular_belief(n_x, K), [fd.Independence()], False)


def compas_case(K: int):
    from fairdecide.experiments import bayesian_fairness as bf

    data, problem = bf.compas_data()
    post = fd.DirichletPosterior(bf.PRIOR, bf.FACTORIZATION,
                                 allow_empty_groups=True).fit(data, problem)
    return problem, fd.Belief.from_posterior(post, K, random_state=0), [bf.balance()], True


def raw(problem, belief, crits, blind, kw, method, limit):
    prog = PolicyProgram(problem, belief, blind).build(
        crits, make_tradeoff(len(crits), kw.get("lam"), kw.get("epsilon"), None))
    bounds = np.where(np.isinf(np.column_stack([prog.lb, prog.ub])), None,
                      np.column_stack([prog.lb, prog.ub]))
    t0 = time.perf_counter()
    res = linprog(prog.c, A_ub=prog.A_ub, b_ub=prog.b_ub, A_eq=prog.A_eq, b_eq=prog.b_eq,
                  bounds=bounds, method=method, options={"time_limit": limit})
    seconds = time.perf_counter() - t0
    ok = res.status == 0
    return (seconds if ok else np.inf), (-float(res.fun) if ok else np.nan), prog


def run_case(name, problem, belief, crits, blind, kw, args):
    # the engine's internals, this tree's only (landed_case runs on either tree)
    from fairdecide.optimize.engine.cases import Case, simplex_by_size
    from fairdecide.optimize.engine.chain import solve_program

    t0 = time.perf_counter()
    res = fd.optimize_policy(problem, belief, crits, group_blind=blind, **kw)
    cuts_s = time.perf_counter() - t0
    ds_s, ds_v, prog = raw(problem, belief, crits, blind, kw, "highs-ds", args.time_limit)
    ipm_s, ipm_v, _ = raw(problem, belief, crits, blind, kw, "highs-ipm", args.time_limit)
    n_var = prog.n_variables
    landed_s = np.nan
    if n_var <= args.landed_max:
        t0 = time.perf_counter()
        fd.optimize_policy(problem, belief, crits, group_blind=blind,
                           solver="highs-ds" if simplex_by_size(Case.of_program(prog))
                           else "highs-ipm", **kw)
        landed_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    unit = fd.optimize_policy(problem, belief, crits, group_blind=blind, solver="unit-ipm",
                              **kw)
    unit_s = time.perf_counter() - t0
    # HiGHS's interior point without crossover on the whole program: the default route
    # for these beliefs before the unit interior point (the program's objective is -U
    # or the trade-off's negation)
    nox = solve_program(prog, "highs-ipm-no-crossover", args.time_limit)
    nox_s = nox.seconds if nox.ok else np.inf
    best = ds_v if np.isfinite(ds_v) else ipm_v if np.isfinite(ipm_v) else (
        -nox.objective if nox.ok else np.nan)

    def rel_to_best(value):
        return abs(value - best) / max(1.0, abs(best)) if np.isfinite(best) else np.nan

    rel, unit_rel = rel_to_best(res.objective), rel_to_best(unit.objective)
    unit_note = "" if unit.solver.startswith("unit") else " (fell back)"
    d = {**res.stats.get("scenario_cuts", {}),
         **res.certificates.get("optimality", {})}
    speed = min(ds_s, ipm_s, landed_s if np.isfinite(landed_s) else np.inf) / cuts_s
    tradeoff = ", ".join(f"{k}={v:.6g}" for k, v in kw.items())
    return res, (f"| {name} | {tradeoff} | {belief.n_scenarios} | {n_var} | {cuts_s:.3f} | "
            f"{landed_s:.3f} | {ds_s:.3f} | {ipm_s:.3f} | {nox_s:.3f} | {unit_s:.3f}{unit_note} | "
            f"{unit_rel:.1e} | {speed:.1f} | {rel:.1e} | "
            f"{d.get('rounds', '-')} | {d.get('working_units', '-')}/{d.get('units', '-')} | "
            f"{d.get('cuts', '-')} | {res.solver.split(':')[0]} |")


def landed_case(kind: str, size: int, K: int, kw: dict) -> dict:
    """The default route on one case ("tabular": n_x = size; "compas"), timed end to end
    after a small warm-up solve (for --landed: run in a fresh process on either tree's
    package)."""
    fd.optimize_policy(*make_tabular_problem(20, 2, 3, 2, random_state=1), fd.Independence(),
                       epsilon=0.01)
    problem, belief, crits, blind = tabular_case(size, K) if kind == "tabular" else (
        compas_case(K))
    t0 = time.perf_counter()
    res = fd.optimize_policy(problem, belief, crits, group_blind=blind, **kw)
    return {"seconds": time.perf_counter() - t0, "value": float(res.objective),
            "solver": res.solver.split(":")[0]}


def landed_main(args, sizes, ks) -> None:
    """The default route of each case on the landed tree and this one."""
    out = Path(args.out) if args.out != str(OUT) else OUT.with_name("beliefs_vs_landed.txt")
    repeats = 1 if args.quick else args.repeats
    todo = [(f"independence {n_x} x 4 x 5, K = {K}", ("tabular", n_x, K), kw)
            for n_x in sizes for K in ks
            for kw in [{"epsilon": e} for e in args.epsilon] + [{"lam": x} for x in args.lams]]
    todo += [(f"COMPAS balance, K = {K}", ("compas", 0, K), {"lam": lam / (1 + lam)})
             for K in args.compas for lam in (0.5, 1.0)]
    table = Table(out, "Beliefs: the default route against the landed version",
                  "bench_beliefs.py", args.landed,
                  ["optimize_policy end to end (the belief built first, untimed) in a fresh "
                   f"process after a small warm-up; {runs(repeats, 'the objectives')}; note: "
                   "the route each tree's default took (OptimizeResult.solver)"])
    with landed_tree(args.landed) as old:
        for label, (kind, size, K), kw in todo:
            got = compare(old, "bench_beliefs", (kind, size, K, kw), repeats,
                          timeout=args.timeout)
            tradeoff = ", ".join(f"{k}={v:.6g}" for k, v in kw.items())
            table.add(f"{label}, {tradeoff}", got, key="solver")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--sizes", type=int, nargs="*", default=None)
    parser.add_argument("--scenarios", type=int, nargs="+", default=None)
    parser.add_argument("--compas", type=int, nargs="*", default=[])
    parser.add_argument("--epsilon", type=float, nargs="*", default=[0.05])
    parser.add_argument("--lams", type=float, nargs="*", default=[0.5])
    parser.add_argument("--time-limit", type=float, default=120.0)
    parser.add_argument("--landed-max", type=int, default=30_000)
    parser.add_argument("--match-lam", action="store_true",
                        help="after each lam, the constraint form at the deviation the "
                             "penalty's optimum reached (penalty and constraint alike)")
    parser.add_argument("--out", default=str(OUT))
    add_arguments(parser, "beliefs_vs_landed.txt")
    args = parser.parse_args()
    sizes = args.sizes if args.sizes is not None else ([100] if args.quick else [300, 1000])
    ks = args.scenarios or ([8] if args.quick else [32])
    if args.landed:
        landed_main(args, sizes, ks)
        return
    lines = [
        f"# {Path(__file__).name}: beliefs, the scenario-cut solver beside the whole program",
        f"# command: python benchmarks/{Path(__file__).name} {shlex.join(sys.argv[1:])}",
        f"# date: {datetime.date.today()}, {platform.machine()}, python "
        f"{platform.python_version()}; one process, cases in turn; raw limit "
        f"{args.time_limit:g} s (inf: not finished); landed = solver=HiGHS's method by size, "
        "crossed over (skipped: nan)",
        "",
        "| case | trade-off | K | variables | default s | landed s | raw ds s | raw ipm s | "
        "HiGHS ipm, no crossover s | unit-ipm s | unit-ipm rel diff | speed-up | rel diff | "
        "rounds | free units | cuts | solver |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    print("\n".join(lines), flush=True)
    cases = [(f"independence {n_x} x 4 x 5", lambda n_x=n_x, K=K: tabular_case(n_x, K),
              [{"epsilon": e} for e in args.epsilon] + [{"lam": lam} for lam in args.lams])
             for n_x in sizes for K in ks]
    cases += [("COMPAS balance", lambda K=K: compas_case(K),
               [{"lam": lam / (1 + lam)} for lam in (0.5, 1.0)]) for K in args.compas]
    for name, make, tradeoffs in cases:
        problem, belief, crits, blind = make()
        for kw in tradeoffs:
            res, line = run_case(name, problem, belief, crits, blind, kw, args)
            print(line, flush=True)
            lines.append(line)
            if args.match_lam and "lam" in kw:  # the same deviation as a constraint
                eps = {"epsilon": max(res.deviations.values())}
                _, line = run_case(name + " (lam's deviation)", problem, belief, crits,
                                   blind, eps, args)
                print(line, flush=True)
                lines.append(line)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
