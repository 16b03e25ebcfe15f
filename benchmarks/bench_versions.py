"""Time the same calls under two versions of the package, alternating, in one run.

Used to check that a redesign keeps timings within noise. Each round runs a fresh
process per version (A, then B, then B, then A, ...); a case's time is the median of a
few calls inside the process. Point the versions at source trees, for example the
commit before a change checked out beside the repository::

    git worktree add ../fairdecide-old <commit>
    python benchmarks/bench_versions.py ../fairdecide-old . --rounds 2

Cases: the doubly robust estimate (n = 1000, 10000), the 32-scenario Bayes LP of the
Bayesian-fairness experiment (needs COMPAS in $FAIRDECIDE_DATA; skipped otherwise),
three exact LPs and successive linearisation on the bail problem. Prints one line per
case and round with both times and the ratio B / A.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

CASES = r'''
import json, os, time, warnings
import numpy as np
import fairdecide as fd
from fairdecide.datasets import make_bail_problem, make_logged_bandit, make_tabular_problem
from fairdecide.evaluation import evaluate_policy

def median_time(f, k):
    ts = []
    for _ in range(k):
        t0 = time.perf_counter(); f(); ts.append(time.perf_counter() - t0)
    return float(np.median(ts))

out = {}
# These calls run under both versions: positional arguments of the earlier order
# (evaluate_policy(data, policy, problem), nearby_policy's seed) work in both, the newer
# with a DeprecationWarning (ignored here).
problem, _, truth = make_logged_bandit(10, random_state=0)
policy = truth.nearby_policy(0.4, 1)
for n in (1000, 10000):
    _, data, _ = make_logged_bandit(n, random_state=10_000, truth=truth)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out[f"dr n={n}"] = median_time(
            lambda: evaluate_policy(data, policy, problem, "dr", random_state=0), 5)
if os.environ.get("FAIRDECIDE_DATA"):
    from fairdecide.experiments import bayesian_fairness as bf
    data, prob = bf.compas_data(os.environ["FAIRDECIDE_DATA"], download=False)
    post = fd.DirichletPosterior(0.5, "papers", allow_empty_groups=True).fit(data, prob)
    belief = fd.Belief.from_posterior(post, 32, random_state=0)
    out["Bayes LP, 32 scenarios"] = median_time(lambda: fd.optimize_policy(
        prob, belief, bf.balance(), lam=0.5, group_blind=True), 3)
for kind, nx, nz, na in (("independence", 10000, 4, 2), ("separation", 1000, 4, 5),
                         ("independence", 10000, 2, 5)):
    p, w = make_tabular_problem(nx, nz, na, 2, random_state=0)
    crit = fd.Independence() if kind == "independence" else fd.Separation()
    out[f"{kind} {nx}x{nz}x{na}"] = median_time(
        lambda: fd.optimize_policy(p, w, crit, epsilon=0.01), 3)
p, w = make_bail_problem()
out["successive linearisation, bail separation"] = median_time(
    lambda: fd.optimize_policy(p, w, fd.Separation(), epsilon=0.05), 3)
print(json.dumps(out))
'''


def run(src: str) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(Path(src).resolve())}
    out = subprocess.run([sys.executable, "-c", CASES], env=env, capture_output=True,
                         text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("a", help="source tree of version A (the anchor)")
    parser.add_argument("b", help="source tree of version B")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--out", default=None, help="also write the lines to this file")
    args = parser.parse_args()
    lines = [f"A = {args.a}, B = {args.b}; median seconds per call, fresh process per "
             "version and round"]
    for r in range(args.rounds):
        first, second = (args.a, args.b) if r % 2 == 0 else (args.b, args.a)
        res = {first: run(first), second: run(second)}
        A, B = res[args.a], res[args.b]
        for case in A:
            lines.append(f"round {r + 1}  {case:44s} A {A[case]:8.4f}  B {B[case]:8.4f}  "
                         f"B/A {B[case] / A[case]:.2f}")
    text = "\n".join(lines)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n")


if __name__ == "__main__":
    main()
