"""How close the gradient route's linear-softmax optimum comes to the exact tabular one.

A softmax policy over the one-hot (x, z) cell can represent every interior tabular
policy, so its optimum approaches the LP optimum (or successive linearisation's local
optimum) from below. This script solves the same problems both ways in one run and
reports utilities, or the error when the gradient search finds no feasible policy.

Usage::

    python benchmarks/bench_softmax_vs_lp.py [--out FILE]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

import fairdecide as fd
from fairdecide.datasets import make_bail_problem, make_tabular_problem


def one_hot_cells(world: fd.TabularWorld, additive: bool = False) -> fd.SampleWorld:
    """The cells as weighted individuals: features the one-hot (x, z) cell, or the
    one-hot x alone (the group then enters through include_z: additive logits)."""
    xs, zs = np.meshgrid(np.arange(world.n_x), np.arange(world.n_z), indexing="ij")
    xs, zs = xs.ravel(), zs.ravel()
    X = np.eye(world.n_x)[xs] if additive else np.eye(world.n_x * world.n_z)[
        xs * world.n_z + zs]
    return fd.SampleWorld(X, zs, world.p_y[xs, zs], weights=world.p_xz[xs, zs])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="benchmarks/results/softmax_vs_lp.txt")
    args = parser.parse_args()
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
    lines = ["Linear-softmax (gradient route) against the tabular optimum, one run", "",
             "command: python benchmarks/bench_softmax_vs_lp.py",
             f"date:    {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}", "",
             "Features: the one-hot (x, z) cell (fit_intercept=False, l2=0), or the one-hot",
             "x with include_z=True (additive logits); random_state=0, max_iter=500.", "",
             f"{'problem':<22} {'criterion':<26} {'eps':>5} {'starts':>6} "
             f"{'tabular U':>10} {'softmax U':>10} {'seconds':>8}  softmax status"]
    for name, (problem, world), crit, eps, additive, starts in cases:
        lp = fd.optimize_policy(problem, world, crit, epsilon=eps)
        family = (fd.LinearSoftmaxPolicy(include_z=True, l2=0.0) if additive
                  else fd.LinearSoftmaxPolicy(fit_intercept=False, l2=0.0))
        t0 = time.perf_counter()
        try:
            res = fd.optimize_policy(problem, one_hot_cells(world, additive), crit,
                                     epsilon=eps, policy=family, random_state=0,
                                     n_restarts=starts, max_iter=500)
            got, status = f"{res.utility:10.5f}", res.status
        except fd.InfeasibleToleranceError as exc:
            got = f"{'-':>10}"
            status = "infeasible: smallest reached " + ", ".join(
                f"{k} {v:.4f}" for k, v in exc.smallest.items())
        seconds = time.perf_counter() - t0
        label = f"{crit.label} ({crit.measure})"
        lines.append(f"{name:<22} {label:<26} {eps:>5g} {starts:>6} {lp.utility:10.5f} "
                     f"{got} {seconds:8.1f}  {status}")
        print(lines[-1], flush=True)
    text = "\n".join(lines)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(text + "\n")


if __name__ == "__main__":
    main()
