"""A Lipschitz program in three forms, one run: the row form, its dual, its folded dual.

The program constraint generation grows (``fairdecide/optimize/engine/generation.py``):
the first n Adult people, two actions (accept, reject), utility = accuracy, and pair
rows D_TV(pi_i, pi_j) <= L d(x_i, x_j), written as the criterion writes them for two
actions (pi_ia - pi_ja <= L d_ij for each action a), beside one simplex per person. Two
sets of pairs: each person's k nearest neighbours closer than 1 / L (generation's first
program), and every pair generation's last program carries (recorded from a run of
``optimize_policy``). Each program is handed cold, in one process, to:

- HiGHS's dual simplex on the row form (``HighsModel``, a basis row per pair row: the
  route before the dual form);
- ``DualForm`` unfolded (a dual row per policy column);
- ``DualForm`` folded (pi_i0 = 1 - pi_i1: a dual row per person, the default).

The optima must agree. With ``--landed REV`` the script instead runs each form on each
program (the pairs found once, here, and handed to both trees through a file, so both
solve the same program), and ``optimize_policy`` end to end with ``Lipschitz`` (its
constraint generation, the public route these forms serve), in fresh processes on the
package at git revision REV and on this one, alternating, into
lipschitz_dual_form_vs_landed.txt. The forms are the engine's (``HighsModel``,
``DualForm``: not public names, but the same signatures in both trees here).

Usage::

    FAIRDECIDE_DATA=/work/shared/data python benchmarks/bench_dual_form.py
    FAIRDECIDE_DATA=/work/shared/data python benchmarks/bench_dual_form.py --quick
    FAIRDECIDE_DATA=/work/shared/data python benchmarks/bench_dual_form.py --landed 79b1da6
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import ClassVar

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _landed import Table, add_arguments, compare, landed_tree, runs
from bench_lipschitz import ROOT, adult_world, preamble, started

import fairdecide as fd
from fairdecide.criteria._pairs import PairMetric, nearest_pairs
from fairdecide.optimize.engine import highs_model
from fairdecide.optimize.engine.dual_form import DualForm
from fairdecide.optimize.engine.highs_model import HighsModel

OUT = ROOT / "benchmarks" / "results" / "lipschitz_dual_form.txt"


class _Recording(fd.Lipschitz):
    """Lipschitz, remembering every pool of pairs constraint generation gives it."""

    pools: ClassVar[list[np.ndarray]] = []

    def with_cuts(self, cuts: np.ndarray) -> fd.Lipschitz:
        _Recording.pools.append(np.asarray(cuts))
        return super().with_cuts(cuts)


def pair_sets(world, L: float, k: int) -> dict[str, np.ndarray]:
    """The nearest neighbours, and the pairs of generation's last program."""
    X = np.asarray(world.X, dtype=float)
    _Recording.pools.clear()
    fd.optimize_policy(fd.DecisionProblem.classification(2), world,
                       _Recording(constant=L), epsilon=0.0)
    return {f"{k} nearest neighbours": nearest_pairs(X, k, PairMetric(),
                                                      max_distance=1.0 / L),
            "generation's last program": np.unique(np.concatenate(_Recording.pools),
                                                   axis=0)}


def program(world, L: float, pairs: np.ndarray):
    """(c, lb, ub, A_ub, b_ub, A_eq, b_eq) of the pair program over columns
    pi_00, pi_01, pi_10, ... (person-major), and how many pairs bind at most."""
    X, P = np.asarray(world.X, dtype=float), np.asarray(world.p_y, dtype=float)
    n = len(X)
    i, j = pairs[:, 0], pairs[:, 1]
    b = L * np.linalg.norm(X[i] - X[j], axis=1)
    i, j, b = i[b < 1], j[b < 1], b[b < 1]  # D_TV <= 1: the others never bind
    m, r = len(i), np.arange(len(i))
    A_ub = sp.csr_matrix(
        (np.r_[np.ones(m), -np.ones(m), np.ones(m), -np.ones(m)],
         (np.r_[r, r, m + r, m + r], np.r_[2 * i, 2 * j, 2 * i + 1, 2 * j + 1])),
        shape=(2 * m, 2 * n))
    A_eq = sp.csr_matrix((np.ones(2 * n), (np.repeat(np.arange(n), 2), np.arange(2 * n))),
                         shape=(n, 2 * n))
    # accept (action 1) is right with P(y = 1), reject with P(y = 0): min -accuracy
    c = -(P / n).reshape(-1)
    return c, np.zeros(2 * n), np.ones(2 * n), A_ub, np.r_[b, b], A_eq, np.ones(n), m


def timed(model) -> tuple[float, bool]:
    """Seconds of one cold solve of a built model (HighsModel or DualForm), and whether
    it is optimal."""
    t0 = time.perf_counter()
    ok, _ = model.solve()
    return time.perf_counter() - t0, ok


FORMS = ("row form, dual simplex", "dual, unfolded", "dual, folded")


def solve_form(world, L: float, pairs: np.ndarray, form: str):
    """The built model of ``form`` for the pair program (unsolved), and the program's
    number of pairs."""
    c, lb, ub, A_ub, b_ub, A_eq, b_eq, m = program(world, L, pairs)
    n = len(lb) // 2
    # HiGHS's dual simplex as either tree's wrapper takes it (--landed): the option set
    # the solving chain gives a model, or the name a tree landed before took
    method = getattr(highs_model, "DUAL_SIMPLEX", "highs-ds")
    if form == FORMS[0]:
        model = HighsModel.from_rows(c, lb, ub, A_ub, b_ub, A_eq, b_eq)
        model.set_method(method)
        return model, m
    fold = None if form == FORMS[1] else np.arange(2 * n).reshape(n, 2)
    eq, rhs = (A_eq, b_eq) if fold is None else (A_eq[n:], b_eq[n:])
    given = {"method": method} if hasattr(highs_model, "DUAL_SIMPLEX") else {}
    return DualForm(c, lb, ub, A_ub, b_ub, eq, rhs, fold=fold, **given), m


def landed_case(n: int, L: float, form: str, pairs_file: str = "") -> dict:
    """One form on the pairs in ``pairs_file``, or (form "optimize_policy") the public
    route end to end, timed after a small warm-up (for --landed: run in a fresh process
    on either tree's package)."""
    warnings.simplefilter("ignore", FutureWarning)
    _, world = adult_world(n)
    rng = np.random.default_rng(0)  # the warm-up: 200 people, two features
    q = rng.uniform(size=200)
    fd.optimize_policy(fd.DecisionProblem.classification(2),
                       fd.SampleWorld(rng.normal(size=(200, 2)), np.arange(200) % 2,
                                      np.c_[1 - q, q]), fd.Lipschitz(constant=L), epsilon=0.0)
    if form == "optimize_policy":
        t0 = time.perf_counter()
        res = fd.optimize_policy(fd.DecisionProblem.classification(2), world,
                                 fd.Lipschitz(constant=L), epsilon=0.0)
        return {"seconds": time.perf_counter() - t0, "value": float(res.objective),
                "solver": res.solver}
    model, _ = solve_form(world, L, np.load(pairs_file), form)
    secs, ok = timed(model)
    if not ok:
        raise SystemExit(f"{form}: not optimal")
    return {"seconds": secs, "value": float(model.objective),
            "solver": f"{model.iterations:,} iterations"}


def landed_main(args, n: int) -> None:
    """Each form on each program, and the public route, on the landed tree and this one."""
    out = (Path(args.out) if args.out != str(OUT)
           else OUT.with_name("lipschitz_dual_form_vs_landed.txt"))
    repeats = 1 if args.quick else args.repeats
    _, world = adult_world(n)
    table = Table(out, "A Lipschitz program in three forms, and its public route, against "
                  "the landed version", "bench_dual_form.py", args.landed,
                  [f"the first {n:,} Adult people, L = {args.constant:g}; pairs found once by "
                   "this tree and handed to both; each form solved cold in a fresh process "
                   f"after a small warm-up; {runs(repeats, 'the objectives')}; note: HiGHS's "
                   "iterations, or the route",
                   f"FAIRDECIDE_DATA={os.environ.get('FAIRDECIDE_DATA', '')}"])
    with landed_tree(args.landed) as old, tempfile.TemporaryDirectory() as tmp:
        for i, (label, pairs) in enumerate(
                pair_sets(world, args.constant, args.neighbours).items()):
            np.save(f"{tmp}/{i}.npy", pairs)
            m = program(world, args.constant, pairs)[-1]
            for form in FORMS:
                got = compare(old, "bench_dual_form",
                              (n, args.constant, form, f"{tmp}/{i}.npy"), repeats,
                              timeout=args.timeout)
                table.add(f"{label} ({m:,}), {form}", got, key="solver")
        got = compare(old, "bench_dual_form", (n, args.constant, "optimize_policy"), repeats,
                      timeout=args.timeout)
        table.add("optimize_policy(Lipschitz) end to end", got, key="solver")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--constant", type=float, default=0.2)
    parser.add_argument("--neighbours", type=int, default=12)
    parser.add_argument("--quick", action="store_true", help="n = 1000")
    parser.add_argument("--out", default=str(OUT))
    add_arguments(parser, "lipschitz_dual_form_vs_landed.txt")
    args = parser.parse_args()
    n = 1000 if args.quick else args.n
    if args.landed:
        landed_main(args, n)
        return
    run = started()
    _, world = adult_world(n)
    head = (f"{'pairs':<34} {'form':<24} {'seconds':>8} {'basis rows':>10} "
            f"{'iterations':>10} {'objective':>16} {'rel diff':>9}")
    lines = [head, "-" * len(head)]
    for label, pairs in pair_sets(world, args.constant, args.neighbours).items():
        rows = []
        for name in FORMS:
            model, m = solve_form(world, args.constant, pairs, name)
            secs, ok = timed(model)
            rows.append((name, secs, ok, model.iterations, model.objective,
                         getattr(model, "model", model).n_rows))
        best = rows[0][4]
        label = f"{label} ({m:,})"
        for name, secs, ok, it, obj, basis in rows:
            lines.append(f"{label:<34} {name:<24} {secs:>8.2f} {basis:>10,} {it:>10,} "
                         f"{obj:>16.12f} {abs(obj - best) / max(1.0, abs(best)):>9.1e}"
                         + ("" if ok else "  not optimal"))
            print(lines[-1], flush=True)
            label = ""
    text = "\n".join([
        *preamble("A Lipschitz program in three forms: the row form, its dual, its folded "
                  "dual", run),
        f"problem: the first {n:,} Adult people, two actions, max accuracy s.t. "
        f"D_TV(pi_i, pi_j) <= {args.constant:g} d(x_i, x_j)",
        "over the pairs of each row (their number in brackets), beside a simplex per person",
        "", *lines, "",
        "seconds: HiGHS from a cold start, one process, the forms in turn; basis rows: the",
        "rows of the model HiGHS factors (the row form: the program's rows; the duals: the",
        "program's columns, folded or not); rel diff: |objective - the row form's| /",
        "max(1, |the row form's|)",
    ]) + "\n"
    print(text)
    Path(args.out).write_text(text)


if __name__ == "__main__":
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        main()
