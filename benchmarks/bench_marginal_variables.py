"""The group marginal as variables beside the same program without them: nonzeros and
HiGHS's time.

fairdecide's program (:mod:`fairdecide.optimize.program.policy_program`) gives each
scenario's group marginal m = P(z, a, y) its own variables, defined by the equalities
m = B pi, and writes every fairness row over m: a row then touches a few marginal
columns instead of every policy column of a group. This script builds that program for
``make_tabular_problem(n_x, n_z, n_a, 2)`` (one world, independence or separation under
epsilon = 0.01, binding), and the same linear program with m substituted out (each row's
marginal columns replaced by their definition B pi: the program written naively, every
fairness row dense over its groups' policy columns), and solves both with
``scipy.optimize.linprog`` by HiGHS's interior point (``method="highs-ipm"``, with
crossover; ``--methods highs-ipm highs-ds`` adds the dual simplex), the forms alternating,
``--repeats`` times. The optima must agree to 1e-7 (relative); the table gives the
nonzeros, the medians and the ratios of the substituted program's to fairdecide's.

Usage::

    python benchmarks/bench_marginal_variables.py
    python benchmarks/bench_marginal_variables.py --quick
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from _provenance import provenance
from scipy.optimize import linprog

import fairdecide as fd
from fairdecide.datasets import make_tabular_problem
from fairdecide.optimize.program.policy_program import PolicyProgram
from fairdecide.optimize.program.tradeoff import FairnessConstraint

OUT = Path(__file__).parent / "results" / "marginal_variables.txt"
EPSILON = 0.01
NAMES = {"highs-ipm": "interior point", "highs-ds": "dual simplex"}


def substituted(prog):
    """The linear program of ``prog`` with its marginal columns m substituted out: each
    row (and the objective) over m rewritten over the policy columns through m's
    defining equalities m - B pi = 0 (the rows after the n_units simplex rows)."""
    m_cols = np.concatenate([np.arange(s.start, s.stop) for s in prog.m_slices])
    rest = np.setdiff1d(np.arange(prog.n_variables), m_cols)
    defining = np.arange(prog.n_units, prog.n_units + len(m_cols))
    A_eq = prog.A_eq.tocsr()
    D = A_eq[defining]
    assert (D[:, m_cols] != sp.identity(len(m_cols), format="csr")).nnz == 0
    D_rest = D[:, rest]  # m = -D_rest x_rest

    def over_rest(A):
        A = sp.csr_matrix(A)
        return (A[:, rest] - A[:, m_cols] @ D_rest).tocsr()

    keep = np.setdiff1d(np.arange(A_eq.shape[0]), defining)
    c = prog.c[rest] - D_rest.T @ prog.c[m_cols]
    return (c, over_rest(prog.A_ub), prog.b_ub, over_rest(A_eq[keep]), prog.b_eq[keep],
            list(zip(prog.lb[rest], prog.ub[rest], strict=True)))


def as_written(prog):
    """The linear program of ``prog`` as fairdecide builds it (KL-free)."""
    return (prog.c, prog.A_ub, prog.b_ub, prog.A_eq, prog.b_eq,
            list(zip(prog.lb, prog.ub, strict=True)))


def solve(lp, method: str) -> tuple[float, float]:
    c, A_ub, b_ub, A_eq, b_eq, bounds = lp
    t0 = time.perf_counter()
    res = linprog(c, A_ub=A_ub, b_ub=b_ub, A_eq=A_eq, b_eq=b_eq, bounds=bounds,
                  method=method)
    seconds = time.perf_counter() - t0
    assert res.status == 0, res.message
    return seconds, float(res.fun)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--methods", nargs="+", choices=list(NAMES), default=["highs-ipm"])
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    methods = args.methods
    warnings.simplefilter("ignore", FutureWarning)
    sizes = [(200, 2, 5)] if args.quick else [
        (1000, 2, 5), (1000, 4, 5), (5000, 2, 5), (5000, 4, 5), (10000, 2, 5)]
    repeats = 1 if args.quick else args.repeats
    lines = ["| criterion | cells x groups x actions | form | variables | nonzeros | "
             + " | ".join(f"{NAMES[m]} s" for m in methods) + " |",
             "|---|---|---|---|---|" + "---|" * len(methods)]
    for crit in (fd.Independence(), fd.Separation()):
        for n_x, n_z, n_a in sizes:
            problem, world = make_tabular_problem(n_x, n_z, n_a, 2, random_state=0)
            prog = PolicyProgram(problem, fd.Belief.plug_in(world), group_blind=False).build(
                [crit], FairnessConstraint((EPSILON,)))
            forms = {"marginal variables": as_written(prog), "substituted": substituted(prog)}
            times = {(f, m): [] for f in forms for m in methods}
            values = {}
            for _ in range(repeats):
                for f, lp in forms.items():
                    for m in methods:
                        t, values[f, m] = solve(lp, m)
                        times[f, m].append(t)
            best = values["marginal variables", methods[0]]
            for key, value in values.items():
                assert abs(value - best) <= 1e-7 * max(1.0, abs(best)), (key, value, best)
            med = {k: float(np.median(v)) for k, v in times.items()}
            size = f"{n_x} x {n_z} x {n_a}"
            for f, lp in forms.items():
                nnz = lp[1].nnz + lp[3].nnz
                lines.append(f"| {crit.label} | {size} | {f} | {len(lp[0])} | {nnz} | "
                             + " | ".join(f"{med[f, m]:.3f}" for m in methods) + " |")
                print(lines[-1], flush=True)
            sub, mar = forms["substituted"], forms["marginal variables"]
            ratio = (sub[1].nnz + sub[3].nnz) / (mar[1].nnz + mar[3].nnz)
            lines.append(
                f"| {crit.label} | {size} | substituted / marginal variables | | {ratio:.2f} | "
                + " | ".join(f"{med['substituted', m] / med['marginal variables', m]:.2f}"
                             for m in methods) + " |")
            print(lines[-1], flush=True)
    header = provenance("The group marginal as variables beside the same program without "
                        "them", "bench_marginal_variables.py")
    text = "\n".join([*header, "", *lines, "",
                      f"seconds: scipy.optimize.linprog (HiGHS) on the program alone, median "
                      f"of {repeats}, the two forms alternating in one process; epsilon = "
                      f"{EPSILON} (binding); the optima agree to 1e-7"]) + "\n"
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
