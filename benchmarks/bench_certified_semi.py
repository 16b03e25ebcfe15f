"""The certified decision on the COMPAS semi-synthetic truth of the Bayesian-fairness
experiment: how many rows before it beats the constant policy (issue 42, item 6), and its
coverage on a real-sized problem (item 5).

Truth: the posterior-mean world of all 7,214 COMPAS rows (the papers' factorisation,
Dirichlet 0.5; ``bayesian_fairness.semi_synthetic_experiment``'s truth), 141 cells x 12
groups, policies group-blind, utility = accuracy. Each replicate draws ``n`` rows from
the truth; every policy's true value is computed exactly on the truth.

Part A (``--science``; lambda = 0, value only): per n, the mean true value of
- certified, pooled: ``ConfidenceSet.from_data(..., pooled=True)`` (one Clopper-Pearson
  interval per cell, P(y | x), which is all a group-blind policy's value reads), the
  population estimated, or given (the truth's P(x, z): the people to be decided about
  are known, their outcomes not);
- certified, per group: ``ConfidenceSet.from_data(...)`` (P(y | x, z) per cell and
  group), the population estimated;
- held-out (issue 53): ``optimize_held_out(problem, data, group_blind=True)``, the best
  group-blind policy on 40% of the rows, its value bounded on the other 60%;
- scenario maximin, Bayes (32 posterior draws) and plug-in, as the experiment fits them
  (``bayesian_fairness.fit_policies``), the constant (majority) policy and the oracle
  (optimal on the truth);
and, for the certified ones, the mean certified value, how often the true value was
below it, and how often the certified value itself was above the constant policy's true
value (the data certify beating the constant).

Part B (``--coverage``): ``--replicates`` data sets of ``--rows`` rows; the largest
rate gap between groups (Fairlearn's demographic parity difference) within epsilon 0.1
as the criterion; the certified policy (pooled, population estimated) on every data set,
today's three treatments (scenario maximin, Bayes, plug-in; Dirichlet 0.5 posterior, 32
draws) on the first ``--today`` of them; how often the true value is below the claimed
value and the true gap above 0.1, with Clopper-Pearson 95% intervals.

Usage::

    FAIRDECIDE_DATA=... python benchmarks/bench_certified_semi.py --science
    FAIRDECIDE_DATA=... python benchmarks/bench_certified_semi.py --coverage
    FAIRDECIDE_DATA=... python benchmarks/bench_certified_semi.py --quick --out /tmp/s.txt
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from _provenance import provenance
from bench_certified import interval

import fairdecide as fd
from fairdecide.datasets import sample_logged_data
from fairdecide.experiments import bayesian_fairness as bf

RESULTS = Path(__file__).parent / "results"
DELTA, EPSILON, K = 0.1, 0.1, 32
PARITY = fd.Independence(measure="max", reference="pairwise")


def certified(data, problem, truth, crit=None, *, pooled=True, given=False):
    cs = fd.ConfidenceSet.from_data(data, problem, delta=DELTA, pooled=pooled,
                                    population=truth if given else None)
    kw = {"epsilon": EPSILON} if crit is not None else {}
    res = fd.optimize_policy(problem, cs, crit, group_blind=True, **kw)
    return res.policy, res.guarantee.value


def today(name, data, problem, crit, seed):
    """Today's treatments of theta under ``crit`` (the experiment's posterior)."""
    post = fd.DirichletPosterior(bf.PRIOR, bf.FACTORIZATION, allow_empty_groups=True).fit(
        data, problem)
    world = {"plug-in": lambda: fd.Belief.plug_in(post.mean_world()),
             "Bayes": lambda: fd.Belief.from_posterior(post, K, random_state=seed),
             "scenario maximin": lambda: fd.Belief.highest_density_draws(post, DELTA, K,
                                                                  random_state=seed)}[name]()
    res = fd.optimize_policy(problem, world, crit, epsilon=EPSILON, group_blind=True)
    return res.policy, res.utility


def claims(r: dict, runs: int) -> str:
    """The table cells after the mean true value: mean certified value, true below
    certified, true above the constant's, certified above the constant's true value
    ("-" where the treatment certifies nothing)."""
    has = bool(r["cert"])
    cert = f"{np.mean(r['cert']):.4f}" if has else "-"
    below = f"{r['below']}/{runs}" if has else "-"
    cbeat = f"{r['cbeat']}/{runs}" if has else "-"
    return f"{cert} | {below} | {r['beat']}/{runs} | {cbeat}"


def science(data, problem, truth, sizes, runs, only=None):
    oracle = fd.optimize_policy(problem, truth, group_blind=True).utility
    names = ("certified, pooled, population estimated", "certified, pooled, population given",
             "certified, per group, population estimated", "held-out, group-blind",
             "scenario maximin", "Bayes",
             "plug-in", "constant")
    if only:  # a subset of the treatments (and the constant policy they are read against)
        names = tuple(m for m in names if m in only or m == "constant")
    lines = [f"# oracle (optimal on the truth): {oracle:.4f}", "",
             "| n | treatment | mean true value | mean certified value | true below certified "
             "| true value above constant's | certified value above constant's true value |",
             "|---|---|---|---|---|---|---|"]
    for n in sizes:
        rec = {m: {"true": [], "cert": [], "below": 0, "beat": 0, "cbeat": 0} for m in names}
        for run in range(runs):
            train = sample_logged_data(problem, truth, n, random_state=7919 * run + n)
            today = [m for m in ("plug-in", "Bayes", "maximin") if
                     ("scenario maximin" if m == "maximin" else m) in names]
            fits = bf.fit_policies(train, problem, 0.0, n_scenarios=K, random_state=run,
                                   methods=(*today, "constant"))
            const = fd.expected_utility(problem, truth, fits["constant"].policy)
            for m in names:
                if m.startswith("certified"):
                    policy, cert = certified(train, problem, truth,
                                             pooled="pooled" in m, given=m.endswith("given"))
                elif m.startswith("held-out"):
                    res = fd.optimize_held_out(problem, train, delta=DELTA, group_blind=True,
                                               random_state=run)
                    policy, cert = res.policy, res.guarantee.value
                else:
                    policy, cert = fits["maximin" if m == "scenario maximin" else m].policy, None
                v = fd.expected_utility(problem, truth, policy)
                r = rec[m]
                r["true"].append(v)
                r["beat"] += v > const + 1e-9
                if cert is not None:
                    r["cert"].append(cert)
                    r["below"] += v < cert - 1e-9
                    r["cbeat"] += cert > const + 1e-9
        for m in names:
            r = rec[m]
            lines.append(f"| {n} | {m} | {np.mean(r['true']):.4f} | {claims(r, runs)} |")
        print("\n".join(lines[-len(names):]), flush=True)
    return lines


SEPARATION = fd.Separation(measure="max", reference="pairwise")


def balance_bound_factor(problem) -> int:
    """Balance F = sum_y sum_z P(z | y) sum_a |P(a | y, z) - P(a | y)| is at most
    n_y n_a G, G the largest pairwise separation gap: each |P(a | y, z) - P(a | y)| is a
    P(z' | y)-mean of gaps between z and the other groups."""
    return problem.n_outcomes * problem.n_actions


def science_balance(data, problem, truth, sizes, runs, lambdas):
    """lambda > 0: T = U - lambda F, F = balance. The certified policy maximises its
    certified T, min U - lambda k max G over the set (per cell and group, population
    estimated; k = balance_bound_factor), a lower bound of its true T with probability
    1 - delta; beside the experiment's treatments and the constant policy (F = 0)."""
    k = balance_bound_factor(problem)
    names = ("certified", "scenario maximin", "Bayes", "plug-in", "constant")
    lines = [f"# balance <= {k} x the largest pairwise separation gap (certified over the "
             "set); certified T = certified value - lambda x that bound", "",
             "| lambda | n | treatment | mean true T | mean certified T | true T below "
             "certified | true T above constant's | certified T above constant's true T |",
             "|---|---|---|---|---|---|---|---|"]
    for lam_papers in lambdas:
        lam = bf.lam_of(lam_papers)
        oracle = bf.objective_value(fd.optimize_policy(
            problem, truth, bf.balance(), lam=lam, group_blind=True).policy, truth, problem,
            lam)[0]
        lines.append(f"| {lam_papers:g} | - | oracle | {oracle:.4f} | - | - | - | - |")
        mix = k * lam_papers / (1 + k * lam_papers)  # (1 - mix) U - mix G ~ U - k lambda G
        for n in sizes:
            rec = {m: {"T": [], "cert": [], "below": 0, "beat": 0, "cbeat": 0}
                   for m in names}
            for run in range(runs):
                train = sample_logged_data(problem, truth, n, random_state=7919 * run + n)
                fits = bf.fit_policies(train, problem, lam, n_scenarios=K, random_state=run,
                                       methods=("plug-in", "Bayes", "maximin", "constant"))
                cs = fd.ConfidenceSet.from_data(train, problem, delta=DELTA)
                res = fd.optimize_policy(problem, cs, SEPARATION, lam=mix, group_blind=True)
                const_T = bf.objective_value(fits["constant"].policy, truth, problem, lam)[0]
                for m in names:
                    policy = res.policy if m == "certified" else fits[
                        "maximin" if m == "scenario maximin" else m].policy
                    T = bf.objective_value(policy, truth, problem, lam)[0]
                    r = rec[m]
                    r["T"].append(T)
                    r["beat"] += T > const_T + 1e-9
                    if m in ("certified", "constant"):
                        g = fd.certify_policy(problem, cs, policy, SEPARATION)
                        cert = g.value - lam_papers * k * g.deviations["separation"]
                        r["cert"].append(cert)
                        r["below"] += T < cert - 1e-9
                        r["cbeat"] += cert > const_T + 1e-9
            for m in names:
                r = rec[m]
                lines.append(f"| {lam_papers:g} | {n} | {m} | {np.mean(r['T']):.4f} | "
                             f"{claims(r, runs)} |")
            print("\n".join(lines[-len(names):]), flush=True)
    return lines


def coverage(data, problem, truth, rows, reps, n_today):
    names = ("certified, pooled, population estimated", "scenario maximin", "Bayes",
             "plug-in")
    rec = {m: {"below": 0, "unfair": 0, "n": 0, "true": [], "claimed": [], "s": []}
           for m in names}
    for i in range(reps):
        train = sample_logged_data(problem, truth, rows, random_state=5000 + i)
        for m in names if i < n_today else names[:1]:
            t0 = time.perf_counter()
            policy, claimed = (certified(train, problem, truth, PARITY) if m.startswith(
                "certified") else today(m, train, problem, PARITY, i))
            r = rec[m]
            r["s"].append(time.perf_counter() - t0)
            v = fd.expected_utility(problem, truth, policy)
            r["n"] += 1
            r["below"] += v < claimed - 1e-9
            r["unfair"] += PARITY.deviation(policy, truth, problem) > EPSILON + 1e-9
            r["true"].append(v)
            r["claimed"].append(claimed)
    lines = ["| treatment | true value below claimed | true gap > epsilon | mean true value "
             "| mean claimed value | median fit s |", "|---|---|---|---|---|---|"]
    for m, r in rec.items():
        lines.append(f"| {m} | {interval(r['below'], r['n'])} | "
                     f"{interval(r['unfair'], r['n'])} | {np.mean(r['true']):.4f} | "
                     f"{np.mean(r['claimed']):.4f} | {np.median(r['s']):.3f} |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--science", action="store_true")
    parser.add_argument("--coverage", action="store_true")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--sizes", type=int, nargs="+",
                        default=[1000, 3000, 6000, 30000, 100000, 300000])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--only", nargs="+", default=None, metavar="TREATMENT",
                        help="--science: only these treatments (e.g. 'held-out, "
                        "group-blind'), beside the constant policy")
    parser.add_argument("--rows", type=int, default=6000)
    parser.add_argument("--replicates", type=int, default=500)
    parser.add_argument("--today", type=int, default=100)
    parser.add_argument("--balance", action="store_true",
                        help="lambda > 0 (--lambdas): the certified T beside the others")
    parser.add_argument("--lambdas", type=float, nargs="+", default=[0.5, 1.0])
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    if args.quick:
        args.science, args.coverage, args.balance = True, True, True
        args.sizes, args.runs, args.replicates, args.today = [3000], 2, 4, 2
    data, problem = bf.compas_data()
    truth = fd.DirichletPosterior(bf.PRIOR, bf.FACTORIZATION).fit(data, problem).mean_world()
    head = (f"# truth: the posterior-mean world of {data} (Dirichlet {bf.PRIOR}, the papers' "
            f"factorisation); group-blind policies; delta {DELTA}; K = {K}")
    if args.science:
        lines = provenance("Certified decisions on the COMPAS semi-synthetic truth: rows to "
                           "beat the constant policy (lambda = 0)", "bench_certified_semi.py")
        lines += [head, f"# {args.runs} data sets per n (the same for every treatment)"]
        lines += science(data, problem, truth, args.sizes, args.runs, args.only)
        out = args.out or RESULTS / ("certified_semi_science.txt" if not args.only else
                                     "certified_semi_held_out.txt")
        out.write_text("\n".join(lines) + "\n")
    if args.balance:
        lines = provenance("Certified decisions on the COMPAS semi-synthetic truth with "
                           "balance (lambda > 0)", "bench_certified_semi.py")
        lines += [head, f"# {args.runs} data sets per n (the same for every treatment)"]
        lines += science_balance(data, problem, truth, args.sizes, args.runs, args.lambdas)
        out = args.out or RESULTS / "certified_semi_balance.txt"
        if args.quick:
            out = out.with_name(out.stem + "_balance" + out.suffix)
        out.write_text("\n".join(lines) + "\n")
    if args.coverage:
        lines = provenance("Coverage of the certified decision on the COMPAS semi-synthetic "
                           "truth", "bench_certified_semi.py")
        lines += [head, f"# {args.rows} rows per data set; {args.replicates} data sets for "
                  f"the certified policy, the first {args.today} for today's treatments; "
                  f"largest rate gap within {EPSILON}; Clopper-Pearson 95% intervals", ""]
        lines += coverage(data, problem, truth, args.rows, args.replicates, args.today)
        print("\n".join(lines), flush=True)
        out = args.out or RESULTS / "certified_semi_coverage.txt"
        if args.quick:
            out = out.with_name(out.stem + "_coverage" + out.suffix)
        out.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
