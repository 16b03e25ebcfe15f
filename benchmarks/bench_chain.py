"""The solving chain against the version landed before it: one case per declared solver,
end to end through ``optimize_policy`` (public API only), in fresh processes, the landed
tree and this one alternating in the same run.

Each case is the shape the chain's declaration names for its solver
(fairdecide/optimize/engine/chain.py; tests/test_chain.py builds the same shapes small):
a penalised belief over many scenarios (term-ipm; and COMPAS group-blind at K = 2048,
lam 0.5, term-ipm-compas: 49,152 terms over 141 columns; it needs the COMPAS file,
FAIRDECIDE_DATA or a download), a belief under epsilon (scenarios),
a large single world (structured), a large belief (unit-ipm), a small world (highs-ds),
Lipschitz pairs (constraint generation, warm HiGHS), and a warm Pareto frontier. The
figure is the median of ``--repeats`` fresh-process runs after one warm-up solve in each
process, and the ratio this / landed; the objectives must agree to 1e-7 (relative).

Usage::

    python benchmarks/bench_chain.py --landed 24323fd          # the committed table
    python benchmarks/bench_chain.py --landed 24323fd --quick  # small cases, 1 repeat
"""

from __future__ import annotations

import argparse
from pathlib import Path

from _landed import fresh, landed_tree, versus
from _provenance import provenance

OUT = Path(__file__).parent / "results" / "chain.txt"

#: One case on the package first on PYTHONPATH: build, warm up, time, print JSON.
ONE_CASE = r"""
import json, sys, time
import numpy as np
import fairdecide as fd
from fairdecide.datasets import make_tabular_problem
name, scale = sys.argv[1], float(sys.argv[2])

def belief(n_x, n_z, n_a, K, seed=0):
    rng = np.random.RandomState(seed)
    problem, world = make_tabular_problem(n_x, n_z, n_a, 2, random_state=rng)
    worlds = []
    for _ in range(K):
        p_xz = world.p_xz * rng.uniform(0.5, 1.5, world.p_xz.shape)
        p_y = rng.dirichlet(np.ones(problem.n_outcomes), world.p_y.shape[:-1])
        worlds.append(fd.TabularWorld(p_xz / p_xz.sum(), 0.5 * world.p_y + 0.5 * p_y))
    return problem, fd.Belief(worlds)

def lipschitz(n, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    z = np.arange(n) % 2
    p = 1 / (1 + np.exp(-3 * X[:, 0] - z))
    return fd.DecisionProblem.classification(2), fd.SampleWorld(X, z, np.c_[1 - p, p])

def s(n):
    return max(4, int(n * scale))

def compas(K):
    from fairdecide.experiments import bayesian_fairness as bf
    data, problem = bf.compas_data()
    post = fd.DirichletPosterior(bf.PRIOR, bf.FACTORIZATION,
                                 allow_empty_groups=True).fit(data, problem)
    return problem, fd.Belief.from_posterior(post, K, random_state=0), bf.balance()

def case(name):
    if name == "term-ipm":
        return lambda: fd.optimize_policy(*belief(s(30), 2, 2, 256), fd.Independence(),
                                          lam=0.5)
    if name == "term-ipm-compas":
        c_problem, c_belief, c_balance = compas(s(2048))
        return lambda: fd.optimize_policy(c_problem, c_belief, c_balance, lam=0.5,
                                          group_blind=True)
    if name == "scenarios":
        return lambda: fd.optimize_policy(*belief(s(300), 4, 5, 32), fd.Independence(),
                                          epsilon=0.05)
    if name == "structured":
        return lambda: fd.optimize_policy(
            *make_tabular_problem(s(20000), 4, 5, 2, random_state=0), fd.Independence(),
            epsilon=0.01)
    if name == "unit-ipm":
        return lambda: fd.optimize_policy(*belief(s(300), 4, 5, 32), fd.Independence(),
                                          epsilon=0.01)
    if name == "highs-ds":
        return lambda: fd.optimize_policy(
            *make_tabular_problem(s(200), 2, 3, 2, random_state=0), fd.Separation(),
            epsilon=0.01)
    if name == "lipschitz":
        return lambda: fd.optimize_policy(*lipschitz(s(400)), fd.Lipschitz(constant=0.5),
                                          epsilon=0.0)
    if name == "frontier":
        return lambda: fd.pareto_frontier(
            *make_tabular_problem(s(200), 2, 3, 2, random_state=0), fd.Independence(),
            n_points=11)
    raise SystemExit(f"unknown case {name}")

warm = make_tabular_problem(20, 2, 3, 2, random_state=1)
fd.optimize_policy(*warm, fd.Independence(), epsilon=0.01)
run = case(name)
t0 = time.perf_counter()
res = run()
seconds = time.perf_counter() - t0
if hasattr(res, "objective"):
    value, solver = float(res.objective), res.solver
else:  # a frontier: the sum of its utilities
    value, solver = float(res["utility"].sum()), str(res["solver"].iloc[-1])
print(json.dumps({"seconds": seconds, "value": value, "solver": solver}))
"""

CASES = ["term-ipm", "term-ipm-compas", "scenarios", "structured", "unit-ipm", "highs-ds",
         "lipschitz", "frontier"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--landed", required=True, metavar="REV")
    parser.add_argument("--quick", action="store_true", help="cases at 1/10 size, 1 repeat")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--cases", nargs="+", default=CASES)
    parser.add_argument("--out", default=str(OUT))
    args = parser.parse_args()
    scale, repeats = (0.1, 1) if args.quick else (1.0, args.repeats)
    lines = [*provenance("The solving chain against the landed version, one case per solver",
                         "bench_chain.py", f"; landed: {args.landed}"),
             "", "| case | landed median s | this median s | this / landed | values agree "
             "| this solver |", "|---|---|---|---|---|---|"]
    with landed_tree(args.landed) as old:
        for name in args.cases:
            got = versus(old, lambda tree, name=name: fresh(tree, ONE_CASE, name, scale),
                         repeats, rel=1e-7)
            a, b = got["landed_s"], got["this_s"]
            lines.append(f"| {name} | {a:.3f} | {b:.3f} | {b / a:.2f} | {got['agree']} | "
                         f"{got['this']['solver'][:70]} |")
            print(lines[-1], flush=True)
            if not got["agree"]:
                raise SystemExit(f"{name}: values differ: {got['landed']['value']} landed, "
                                 f"{got['this']['value']} this")
    Path(args.out).write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
