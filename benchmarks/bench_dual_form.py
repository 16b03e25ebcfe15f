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

The optima must agree. Usage::

    FAIRDECIDE_DATA=/work/shared/data python benchmarks/bench_dual_form.py
    FAIRDECIDE_DATA=/work/shared/data python benchmarks/bench_dual_form.py --quick
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path
from typing import ClassVar

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_lipschitz import ROOT, adult_world, preamble, started

import fairdecide as fd
from fairdecide.criteria._pairs import PairMetric, nearest_pairs
from fairdecide.optimize.engine.dual_form import DualForm
from fairdecide.optimize.engine.highs_model import HighsModel


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--constant", type=float, default=0.2)
    parser.add_argument("--neighbours", type=int, default=12)
    parser.add_argument("--quick", action="store_true", help="n = 1000")
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results"
                                             / "lipschitz_dual_form.txt"))
    args = parser.parse_args()
    n = 1000 if args.quick else args.n
    run = started()
    _, world = adult_world(n)
    head = (f"{'pairs':<34} {'form':<24} {'seconds':>8} {'basis rows':>10} "
            f"{'iterations':>10} {'objective':>16} {'rel diff':>9}")
    lines = [head, "-" * len(head)]
    for label, pairs in pair_sets(world, args.constant, args.neighbours).items():
        c, lb, ub, A_ub, b_ub, A_eq, b_eq, m = program(world, args.constant, pairs)
        model = HighsModel.from_rows(c, lb, ub, A_ub, b_ub, A_eq, b_eq)
        model.set_method("highs-ds")
        secs, ok = timed(model)
        rows = [("row form, dual simplex", secs, ok, model.iterations, model.objective,
                 model.n_rows)]
        for name, fold in (("dual, unfolded", None),
                           ("dual, folded", np.arange(2 * n).reshape(n, 2))):
            eq, rhs = (A_eq, b_eq) if fold is None else (A_eq[n:], b_eq[n:])
            form = DualForm(c, lb, ub, A_ub, b_ub, eq, rhs, fold=fold)
            secs, ok = timed(form)
            rows.append((name, secs, ok, form.iterations, form.objective,
                         form.model.n_rows))
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
