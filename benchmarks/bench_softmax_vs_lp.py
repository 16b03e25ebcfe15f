"""How close the gradient route's linear-softmax optimum comes to the exact tabular one.

A softmax policy over the one-hot (x, z) cell can represent every interior tabular
policy, so its optimum approaches the LP optimum (or successive linearisation's local
optimum) from below. This script solves the same problems both ways in one run and
reports utilities, or the error when the gradient search finds no feasible policy.

With ``--landed REV`` the softmax solve of each case (the figure the table times) runs
instead in fresh processes on the package at git revision REV and on this one,
alternating (``--repeats`` times), into softmax_vs_lp_vs_landed.txt: median seconds, the
ratio this / landed and whether the values agree (the objective; for a tolerance the
search cannot meet, the smallest deviation it reached).

Usage::

    python benchmarks/bench_softmax_vs_lp.py [--out FILE]
    python benchmarks/bench_softmax_vs_lp.py --landed 79b1da6 --repeats 3
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from _landed import Table, add_arguments, compare, landed_tree, runs

import fairdecide as fd
from fairdecide.datasets import make_bail_problem, make_tabular_problem

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "softmax_vs_lp.txt"


def one_hot_cells(world: fd.TabularWorld, additive: bool = False) -> fd.SampleWorld:
    """The cells as weighted individuals: features the one-hot (x, z) cell, or the
    one-hot x alone (the group then enters through include_z: additive logits)."""
    xs, zs = np.meshgrid(np.arange(world.n_x), np.arange(world.n_z), indexing="ij")
    xs, zs = xs.ravel(), zs.ravel()
    X = np.eye(world.n_x)[xs] if additive else np.eye(world.n_x * world.n_z)[
        xs * world.n_z + zs]
    return fd.SampleWorld(X, zs, world.p_y[xs, zs], weights=world.p_xz[xs, zs])


def cases() -> list[tuple]:
    """(problem name, (problem, world), criterion, epsilon, additive, starts) of each case."""
    tab = make_tabular_problem(4, 2, 2, 2, random_state=1)
    bail = make_bail_problem()
    cases = [("4-cell prediction", tab, crit, eps, False, 3)
             for crit, eps in [(fd.Independence(), 0.0), (fd.Independence(), 0.05),
                               (fd.Separation(), 0.0), (fd.Independence(measure="max"), 0.05),
                               (fd.Independence(measure="kl"), 0.05),
                               (fd.Sufficiency(), 0.0)]]
    cases += [("bail intervention", bail, crit, eps, False, 3)
              for crit, eps in [(fd.Independence(), 0.05), (fd.Separation(), 0.0),
                                (fd.Separation(), 0.01), (fd.Sufficiency(), 0.0)]]
    cases += [("bail, additive logits", bail, fd.Independence(), 0.05, True, r)
              for r in (3, 10)]
    return cases


def softmax(problem, world, crit, eps: float, additive: bool, starts: int):
    """The gradient route on the cells as individuals: its result, or the error."""
    family = (fd.LinearSoftmaxPolicy(include_z=True, l2=0.0) if additive
              else fd.LinearSoftmaxPolicy(fit_intercept=False, l2=0.0))
    try:
        return fd.optimize_policy(problem, one_hot_cells(world, additive), crit, epsilon=eps,
                                  policy=family, random_state=0, n_restarts=starts,
                                  max_iter=500)
    except fd.InfeasibleToleranceError as exc:
        return exc


def landed_case(i: int) -> dict:
    """The softmax solve of case i, timed after a small warm-up (for --landed: run in a
    fresh process on either tree's package); value: the objective, or the sum of the
    smallest deviations reached."""
    _, (problem, world), crit, eps, additive, starts = cases()[i]
    softmax(problem, world, fd.Independence(), 0.05, additive, 1)
    t0 = time.perf_counter()
    res = softmax(problem, world, crit, eps, additive, starts)
    seconds = time.perf_counter() - t0
    if isinstance(res, fd.InfeasibleToleranceError):
        return {"seconds": seconds, "value": float(sum(res.smallest.values())),
                "note": "infeasible"}
    return {"seconds": seconds, "value": float(res.objective), "note": res.status}


def landed_main(args) -> None:
    """The softmax solve of each case on the landed tree and this one."""
    out = Path(args.out) if args.out else OUT.with_name("softmax_vs_lp_vs_landed.txt")
    table = Table(out, "Linear-softmax (gradient route) solves against the landed version",
                  "bench_softmax_vs_lp.py", args.landed,
                  ["the softmax solve of each case (random_state=0, max_iter=500), in a "
                   "fresh process after a small warm-up; "
                   + runs(args.repeats, "the objectives")
                   + ", or the sum of the smallest deviations reached where the tolerance is "
                   "infeasible"])
    with landed_tree(args.landed) as old:
        for i, (name, _, crit, eps, _, starts) in enumerate(cases()):
            got = compare(old, "bench_softmax_vs_lp", (i,), args.repeats,
                          timeout=args.timeout)
            table.add(f"{name}, {crit.label} ({crit.measure}), eps {eps:g}, {starts} starts",
                      got, key="note")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=None, help=f"default: {OUT.relative_to(ROOT)}")
    add_arguments(parser, "softmax_vs_lp_vs_landed.txt")
    args = parser.parse_args()
    if args.landed:
        landed_main(args)
        return
    lines = ["Linear-softmax (gradient route) against the tabular optimum, one run", "",
             "command: python benchmarks/bench_softmax_vs_lp.py",
             f"date:    {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}", "",
             "Features: the one-hot (x, z) cell (fit_intercept=False, l2=0), or the one-hot",
             "x with include_z=True (additive logits); random_state=0, max_iter=500.", "",
             f"{'problem':<22} {'criterion':<26} {'eps':>5} {'starts':>6} "
             f"{'tabular U':>10} {'softmax U':>10} {'seconds':>8}  softmax status"]
    for name, (problem, world), crit, eps, additive, starts in cases():
        lp = fd.optimize_policy(problem, world, crit, epsilon=eps)
        t0 = time.perf_counter()
        res = softmax(problem, world, crit, eps, additive, starts)
        if isinstance(res, fd.InfeasibleToleranceError):
            got = f"{'-':>10}"
            status = "infeasible: smallest reached " + ", ".join(
                f"{k} {v:.4f}" for k, v in res.smallest.items())
        else:
            got, status = f"{res.utility:10.5f}", res.status
        seconds = time.perf_counter() - t0
        label = f"{crit.label} ({crit.measure})"
        lines.append(f"{name:<22} {label:<26} {eps:>5g} {starts:>6} {lp.utility:10.5f} "
                     f"{got} {seconds:8.1f}  {status}")
        print(lines[-1], flush=True)
    text = "\n".join(lines)
    out = Path(args.out) if args.out else OUT
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text + "\n")


if __name__ == "__main__":
    main()
