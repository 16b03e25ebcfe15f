"""The dense block of a penalised belief (issue 24): what solves it fastest, side by side.

COMPAS 141 x 12 (group-blind, two actions), a Dirichlet posterior of K scenarios, balance
penalised with lam (lambda / (1 + lambda) in the book's T = U - lambda F). Each scenario
adds 24 absolute values of its group marginal: at K = 2048 there are 49,152 terms over
141 policy columns. Measured in one run on the same belief:

- **default**: ``optimize_policy`` as it routes now (the term interior point,
  :mod:`fairdecide.optimize.engine.term_ipm`), end to end, verified;
- **whole program, HiGHS**: ``optimize_policy(..., solver="highs")``, the route landed
  before (HiGHS's dual simplex on the program with every marginal written out);
- **dual LP, HiGHS ds**: the same optimum as an LP over the policy's columns only, its
  dual (one row per policy column, one boxed column per term) solved by HiGHS's dual
  simplex, written here (not a route): what a general solver does with the reduction.

Usage: python benchmarks/bench_dense_block.py [--quick] [--scenarios K ...] [--out FILE]
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
import scipy.sparse as sp

import fairdecide as fd
from fairdecide.optimize.engine import term_ipm
from fairdecide.optimize.engine.highs_model import DUAL_SIMPLEX, HighsModel
from fairdecide.optimize.engine.term_ipm import term_problem

OUT = Path(__file__).parent / "results" / "dense_block.txt"


def compas_belief(K: int):
    from fairdecide.experiments import bayesian_fairness as bf

    data, problem = bf.compas_data()
    post = fd.DirichletPosterior(bf.PRIOR, bf.FACTORIZATION,
                                 allow_empty_groups=True).fit(data, problem)
    return problem, fd.Belief.from_posterior(post, K, random_state=0), bf.balance()


class _Caught(Exception):
    """Stops optimize_policy once the session's reduced program is caught (its own
    class, so that a real Ctrl-C is never swallowed)."""


def reduced(problem, belief, crit, lam):
    """The session's program in the policy's space (the term interior point's input),
    caught where the solving chain's term interior point would solve it."""
    caught = {}
    original = term_ipm.solve_term_ipm

    def catch(prog, belief, tradeoff, criteria, *args, **kwargs):
        caught["tp"] = term_problem(prog, tradeoff, criteria)
        raise _Caught

    term_ipm.solve_term_ipm = catch
    try:
        fd.optimize_policy(problem, belief, crit, lam=lam, group_blind=True)
    except _Caught:
        pass
    finally:
        term_ipm.solve_term_ipm = original
    return caught["tp"][0]


def dual_lp(tp) -> tuple[float, float]:
    """min const + q.u + rho.|G u + h| over u in [0, 1] (two actions) by its dual:
    max const + h.y - sum_x max(0, -(q + G^T y)_x) over |y| <= rho, as an LP for HiGHS's
    dual simplex; (seconds, optimum as the program's minimum, nan if HiGHS stopped
    without one)."""
    t0 = time.perf_counter()
    G, h, rho, q = tp.G, tp.h, tp.rho, tp.q
    R, n = G.shape
    # min -h.y + sum s   s.t.  s_x + (G^T y)_x >= -q_x,  s >= 0,  -rho <= y <= rho
    A = sp.hstack([sp.identity(n), sp.csr_matrix(G.T)]).tocsr()
    model = HighsModel.from_rows(np.concatenate([np.ones(n), -h]),
                                 np.concatenate([np.zeros(n), -rho]),
                                 np.concatenate([np.full(n, np.inf), rho]),
                                 -A, q, sp.csr_matrix((0, n + R)), np.zeros(0))
    model.set_method(DUAL_SIMPLEX)
    ok, status = model.solve()
    if not ok:      # reported in the table, not raised: the other columns still stand
        print(f"# HiGHS on the dual LP stopped: {status}", flush=True)
        return time.perf_counter() - t0, np.nan
    return time.perf_counter() - t0, tp.const - model.objective


def run(K: int, lam_book: float, skip_whole: bool) -> str:
    problem, belief, crit = compas_belief(K)
    lam = lam_book / (1 + lam_book)
    t0 = time.perf_counter()
    res = fd.optimize_policy(problem, belief, crit, lam=lam, group_blind=True)
    t_default = time.perf_counter() - t0
    cert = res.certificates.get("optimality", {})
    if skip_whole:
        t_whole, v_whole = np.nan, np.nan
    else:
        t0 = time.perf_counter()
        whole = fd.optimize_policy(problem, belief, crit, lam=lam, group_blind=True,
                                   solver="highs")
        t_whole, v_whole = time.perf_counter() - t0, whole.objective
    tp = reduced(problem, belief, crit, lam)
    t_dual, v_dual = dual_lp(tp)
    rel = abs(res.objective - v_whole) / max(1.0, abs(v_whole))
    rel_dual = abs(res.objective + v_dual) / max(1.0, abs(v_dual))
    return (f"| {K} | {lam_book:g} | {len(tp.h)} | {t_default:.2f} | {t_whole:.2f} | "
            f"{t_dual:.2f} | {t_whole / t_default:.1f} | {res.objective:.12f} | {rel:.1e} | "
            f"{rel_dual:.1e} | {cert.get('gap', float('nan')):.1e} | {res.solver} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="K = 64 only")
    parser.add_argument("--scenarios", type=int, nargs="+", default=[2048])
    parser.add_argument("--lambdas", type=float, nargs="+", default=[0.5, 1.0],
                        help="the book's weights lambda of T = U - lambda F (each solved as "
                        "lam = lambda / (1 + lambda), the library's lam)")
    parser.add_argument("--skip-whole-above", type=int, default=10**9,
                        help="skip HiGHS on the whole program above this K")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    scenarios = [64] if args.quick else args.scenarios
    lines = [
        "# The dense block of a penalised belief: COMPAS 141 x 12, group-blind, balance",
        f"# {datetime.date.today()}, {platform.processor() or platform.machine()}, "
        f"python {platform.python_version()}; one run, seconds end to end",
        f"# command: python {shlex.join(['benchmarks/bench_dense_block.py', *sys.argv[1:]])}",
        "# default = optimize_policy's route now (term interior point); whole = "
        "solver='highs' (HiGHS dual simplex on the whole program, the route landed before);",
        "# dual LP = HiGHS dual simplex on the reduced program's dual (built here); rel = "
        "|objective - whole's| / max(1, |whole's|), nan where HiGHS stopped without an "
        "optimum; gap = the default's certified gap",
        "",
        "| K | lambda | terms | default s | whole HiGHS s | dual LP s | whole / default | "
        "objective | rel whole | rel dual LP | gap | default solver |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    print("\n".join(lines), flush=True)
    for K in scenarios:
        for papers_lambda in args.lambdas:
            line = run(K, papers_lambda, K > args.skip_whole_above)
            print(line, flush=True)
            lines.append(line)
            # written after every case: a long run that stops keeps what it measured
            args.out.parent.mkdir(parents=True, exist_ok=True)
            args.out.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
