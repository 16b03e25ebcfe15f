"""Lipschitz fairness at scale, part one: the exact all-pairs certificate.

Issue 11's benchmark will time the constraint-generation LP on Adult; this first part
times what certifies its answer: the largest violation max_{i<j} D_TV(pi_i, pi_j) -
L d(x_i, x_j) over all n (n - 1) / 2 pairs, and every pair above 0, by the blocked search
of ``fairdecide.criteria._pairs`` (a matrix-product screen with exact recomputation of
every candidate). The anchor, in the same run where it fits in memory, is the direct
computation: scipy's cdist for all distances and the full TV matrix.

Data: Adult's training features (numerics standardised, categoricals one-hot: 100
columns), the first n rows; the rows of a smooth policy, a logistic function of one
standardised feature with slope 0.5 (so L = 0.25 certifies it: TV <= 0.25 |x - x'|),
certified at L = 0.25 (no pair violates) and, up to n = 3000, at L = 0.02 (most pairs
do, and all are listed).

Usage::

    FAIRDECIDE_DATA=/work/shared/data python benchmarks/bench_lipschitz.py
    FAIRDECIDE_DATA=/work/shared/data python benchmarks/bench_lipschitz.py --part certificate
    FAIRDECIDE_DATA=/work/shared/data python benchmarks/bench_lipschitz.py --quick
    FAIRDECIDE_DATA=/work/shared/data python benchmarks/bench_lipschitz.py \
        --constants 0.2 --landed 6c20bcb

The LP part (the default) times ``optimize_policy`` by constraint generation on Adult, and
the all-pairs LP where it fits. With ``--landed REV`` constraint generation also runs on
the package as it was at git revision REV (a temporary worktree first on PYTHONPATH), in
the same run: the route landed before a change, beside it.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import resource
import shlex
import subprocess
import sys
import time
import tracemalloc
import warnings
from pathlib import Path

import numpy as np
from scipy.spatial.distance import cdist

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _landed import landed_tree
from bench_estimators import preprocess
from bench_fairlearn import adult_frame, git_state, nproc

from fairdecide.criteria._pairs import violated_pairs

ROOT = Path(__file__).resolve().parents[1]
DIRECT_LIMIT = 10_000  # the direct matrices need 2 n^2 floats: 1.6 GB at 10,000


def measure(fn):
    tracemalloc.start()
    t0 = time.perf_counter()
    out = fn()
    secs = time.perf_counter() - t0
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    return out, secs, peak


def direct(P, X, L):
    tv = 0.5 * np.abs(P[:, None, 0] - P[None, :, 0]) * 2  # two actions: TV = |p1 - p1'|
    v = tv - L * cdist(X, X)
    iu = np.triu_indices(len(P), 1)
    vals = v[iu]
    return float(vals.max()), int((vals > 0).sum())


def started() -> dict:
    """The command as typed (with the data folder), the start time and the load."""
    command = "python " + " ".join(shlex.quote(a) for a in sys.argv)
    if os.environ.get("FAIRDECIDE_DATA"):
        command = f"FAIRDECIDE_DATA={os.environ['FAIRDECIDE_DATA']} {command}"
    return {"command": command, "started": datetime.datetime.now().astimezone(),
            "load": os.getloadavg()[0]}


def preamble(title: str, run: dict) -> list[str]:
    """The results file's head: title, command, date, machine, versions."""
    return [
        title, "",
        f"command: {run['command']}",
        f"date:    {run['started']:%Y-%m-%d %H:%M %Z}",
        f"machine: nproc = {nproc()}, {platform.machine()}, {platform.system()}; "
        f"1-min load average {run['load']:.1f} at start, {os.getloadavg()[0]:.1f} at end",
        f"versions: python {platform.python_version()}, numpy {np.__version__}",
        f"          {git_state()}",
    ]


def certificate_part(args) -> None:
    run = started()
    X, _, _ = adult_frame()
    A = preprocess(X).fit_transform(X)
    sizes = [1000, 3000] if args.quick else [1000, 3000, 10_000, 30_000]
    lines = []
    head = (f"{'n':>6} {'L':>5} {'pairs':>12} {'max violation':>14} {'violated':>10} "
            f"{'search s':>9} {'peak MB':>8} {'direct s':>9} {'direct MB':>9} {'agree':>6}")
    for n in sizes:
        F = A[:n]
        x0 = (F[:, -5] - F[:, -5].mean()) / F[:, -5].std()  # a standardised numeric
        p1 = 1 / (1 + np.exp(-0.5 * x0))
        P = np.c_[1 - p1, p1]
        # at L = 0.02 most pairs violate: their list alone would take 24 bytes a pair
        for L in (0.25, 0.02) if n <= 3000 else (0.25,):
            found, secs, peak = measure(lambda F=F, P=P, L=L: violated_pairs(P, F, L))
            row = (f"{n:>6} {L:>5} {found.pairs_checked:>12,} {found.max_violation:>14.6f} "
                   f"{len(found.pairs):>10,} {secs:>9.2f} {peak:>8.0f}")
            if n <= DIRECT_LIMIT:
                (best, count), dsecs, dpeak = measure(lambda F=F, P=P, L=L: direct(P, F, L))
                agree = abs(best - found.max_violation) < 1e-9 and count == len(found.pairs)
                row += f" {dsecs:>9.2f} {dpeak:>9.0f} {'yes' if agree else 'NO':>6}"
            else:
                row += f" {'-':>9} {'-':>9} {'-':>6}"
            print(row, flush=True)
            lines.append(row)
    text = "\n".join([
        *preamble("Lipschitz certificate: the exact all-pairs search against the direct "
                  "computation", run),
        f"data: Adult features, first n rows, {A.shape[1]} columns; policy "
        "p(a=1 | x) = logistic(0.5 x_k), x_k a standardised numeric",
        "",
        head, "-" * len(head), *lines, "",
        "pairs: n (n - 1) / 2, all examined; violated: pairs with TV - L d > 0; search s /",
        "peak MB: the blocked search (tracemalloc peak of Python allocations); direct: cdist",
        "and the full TV matrix (only up to n = 10,000: 2 n^2 floats); agree: same maximum",
        "(1e-9) and the same number of violated pairs.",
    ]) + "\n"
    print(text)
    Path(args.out).write_text(text)


# ---------------------------------------------------------------------- part two: the LP
LP_SIZES = (1000, 3000, 10_000, 30_000)
FULL_LIMIT = 1000  # all pairs in one program: 500k pairs, 1M rows at n = 1000


#: Beyond Adult's rows, people drawn from them (with replacement, seed 0) with this
#: noise on each standardised numeric feature, so that no two are the same person
JITTER = 0.1


def adult_world(n: int):
    """The first n Adult rows as a SampleWorld: payoffs from a logistic regression
    fitted on every row, features as the distance sees them, z = sex. Beyond its
    45,222 rows, every row and then rows drawn from them with replacement (seed 0),
    their standardised numeric features moved by N(0, JITTER^2) noise, payoffs from
    the same regression."""
    from sklearn.linear_model import LogisticRegression

    import fairdecide as fd

    X, y, z = adult_frame()
    pre = preprocess(X)
    A = pre.fit_transform(X)
    clf = LogisticRegression(max_iter=2000).fit(A, np.asarray(y))
    z = np.asarray(z)
    if n > len(A):
        rng = np.random.default_rng(0)
        more = rng.integers(len(A), size=n - len(A))
        extra = A[more].copy()
        numeric = pre.output_indices_["num"]
        extra[:, numeric] += JITTER * rng.standard_normal((len(more), numeric.stop
                                                            - numeric.start))
        A, z = np.vstack([A, extra]), np.concatenate([z, z[more]])
    world = fd.SampleWorld(A[:n], z[:n], clf.predict_proba(A[:n]))
    return fd.DecisionProblem.classification(2), world


def run_case(n: int, L: float, how: str) -> dict:
    """One case in this process: build the world, solve, report."""
    import fairdecide as fd

    if how == "baseline":
        adult_world(n)
        return {"peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}
    problem, world = adult_world(n)
    crit = fd.Lipschitz(constant=L, pairs="all" if how == "all pairs" else None)
    if how == "generation, no dropping":  # this tree's route, its cuts never dropped
        from fairdecide.optimize.engine import generation

        generation.DROP_SLACK = np.inf
    if how == "generation, flow master":
        _flow_master(world, L)
    load = os.getloadavg()[0]
    t0, c0 = time.perf_counter(), time.process_time()
    res = fd.optimize_policy(problem, world, crit, epsilon=0.0)
    secs, cpu = time.perf_counter() - t0, time.process_time() - c0
    free = fd.optimize_policy(problem, world)
    cert = res.certificates.get("lipschitz", {})
    check = crit.certificate(res.policy.table, world.X)  # all pairs, for both routes
    return {"seconds": secs, "cpu_s": cpu, "load": load,
            "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "utility": res.utility, "unconstrained": free.utility,
            "rounds": cert.get("rounds", 1), "pairs_in_lp": cert.get(
                "cuts_in_program", n * (n - 1) // 2), "max_violation": check.max_violation,
            "pairs_checked": check.pairs_checked, "solve_s": res.stats["solve_seconds"],
            "search_s": cert.get("search_seconds", 0.0),
            "rows": res.stats.get("n_constraints", 0)}


def lp_part(args) -> None:
    run = started()
    sizes = LP_SIZES[:2] if args.quick else (args.sizes or LP_SIZES)
    head = (f"{'n':>6} {'L':>4} {'method':<24} {'seconds':>8} {'cpu s':>8} {'load':>5} "
            f"{'solve s':>8} "
            f"{'search s':>8} {'peak MB':>8} {'rounds':>6} {'pairs in LP':>12} "
            f"{'utility':>10} {'max violation':>14} {'vs full':>9}")
    lines = []

    def case(n, L, how, tree=None):
        env = None if tree is None else dict(os.environ, PYTHONPATH=str(tree))
        try:
            out = subprocess.run([sys.executable, __file__, "--case",
                                  json.dumps([n, L, how])], capture_output=True, text=True,
                                 check=False, env=env, timeout=args.timeout)
        except subprocess.TimeoutExpired:
            return None
        if out.returncode:
            raise SystemExit(f"case {n} {L} {how} failed:\n{out.stderr[-3000:]}")
        return json.loads(out.stdout.strip().splitlines()[-1])

    with landed_tree(args.landed) as landed:
        base = case(1000, 0.0, "baseline")
        for n in sizes:
            for L in (args.constants if n <= 10_000 and not args.quick
                      else args.constants[:1]):
                lines.extend(_lp_rows(case, n, L, args, landed))
    text = "\n".join([
        *preamble("Lipschitz fairness on Adult: the LP by constraint generation beside the "
                  "all-pairs LP", run),
        "problem: max accuracy s.t. D_TV(pi_i, pi_j) <= L ||x_i - x_j||_2 for all pairs of",
        "the first n Adult rows (numerics standardised, categoricals one-hot: 100",
        "columns); P(y | x) from a logistic regression on all 45,222 rows; beyond them,",
        f"rows drawn from Adult with replacement (seed 0), N(0, {JITTER}^2) noise on each",
        "standardised numeric feature",
        f"baseline: a process that only loads the data and fits the payoffs peaks at "
        f"{base['peak_mb']:.0f} MB",
        *([f"landed: constraint generation on the package at git revision {args.landed}, "
           "same run"] if args.landed else []),
        "",
        head, "-" * len(head), *lines, "",
        "seconds: optimize_policy end to end (nearest neighbours, every solve and search,",
        "verification), wall clock; cpu s: the process's CPU seconds over the same call",
        "(all its threads); load: the 1-min load average when the call began (2 cores,",
        "shared with other developers' jobs); solve s / search s: its HiGHS solves and",
        "pair searches; peak MB: the process's resident peak; pairs in LP: pairs whose",
        "rows the final program carries; max violation: the exact largest D_TV - L d over",
        "all n (n - 1) / 2 pairs of the returned policy (<= 0: certified L-Lipschitz);",
        "vs full: relative utility difference from the all-pairs LP, or where there is",
        "none from the landed tree's generation, or else from this tree's. generation,",
        "no dropping: this tree with",
        "DROP_SLACK = inf (its cuts never leave the program, as before); generation, flow",
        "master: a design, this tree's generation with each round's master solved from",
        "scratch by OR-Tools' min-cost flow (int64: costs rounded down, supplies rounded,",
        "at 1e-7) instead of HiGHS. Every case runs in its own process.",
    ]) + "\n"
    print(text)
    Path(args.out).write_text(text)


def _lp_rows(case, n: int, L: float, args, landed) -> list[str]:
    """The table's rows for one n and L: all pairs (where it fits), constraint
    generation, and generation on the landed tree."""
    lines = []
    full = case(n, L, "all pairs") if n <= args.full_limit else None
    # the landed tree first where it runs, then this tree's designs, in one run
    old = (case(n, L, "generation", landed)
           if landed is not None and n <= args.landed_limit else None)
    gen = case(n, L, "generation")
    keep = (case(n, L, "generation, no dropping")
            if n <= args.landed_limit and args.designs else None)
    flow = case(n, L, "generation, flow master") if args.designs else None
    anchor = full or old or gen  # designs beside today's route when nothing else runs
    for how, r in (("all pairs", full), ("generation, landed", old),
                   ("constraint generation", gen), ("generation, no dropping", keep),
                   ("generation, flow master", flow)):
        if r is None:
            if how == "constraint generation" or (how == "generation, flow master"
                                                   and args.designs):
                lines.append(f"{n:>6} {L:>4} {how:<24} did not finish within "
                             f"{args.timeout:.0f} s")
            continue
        rel = ("" if anchor is None or r is anchor else
               f"{abs(r['utility'] - anchor['utility']) / abs(anchor['utility']):.1e}")
        row = (f"{n:>6} {L:>4} {how:<24} {r['seconds']:>8.2f} {r['cpu_s']:>8.2f} "
               f"{r['load']:>5.2f} {r['solve_s']:>8.2f} "
               f"{r['search_s']:>8.2f} {r['peak_mb']:>8.0f} {r['rounds']:>6} "
               f"{r['pairs_in_lp']:>12,} {r['utility']:>10.6f} "
               f"{r['max_violation']:>14.2e} {rel:>9}")
        print(row, flush=True)
        lines.append(row)
    if gen is not None:
        lines.append(f"{'':>6} {'':>4} unconstrained utility {gen['unconstrained']:.6f}; "
                     f"{gen['pairs_checked']:,} pairs certified")
    return lines


# ---------------------------------------------------------------- part three: designs
def _flow_program(pairs: np.ndarray, bound: np.ndarray, g: np.ndarray):
    """The two-action program max g.p s.t. |p_i - p_j| <= bound_ij, 0 <= p <= 1, as the
    min-cost flow that is its dual: an arc each way per pair (cost bound), an arc from
    each person to a root (cost 1: p_i <= 1) and back (cost 0: p_i >= 0), supplies g."""
    n = len(g)
    i, j = pairs[:, 0], pairs[:, 1]
    tails = np.concatenate([i, j, np.arange(n), np.full(n, n)])
    heads = np.concatenate([j, i, np.full(n, n), np.arange(n)])
    costs = np.concatenate([bound, bound, np.ones(n), np.zeros(n)])
    return tails, heads, costs


def _highs_flow(pairs, bound, g):
    """The flow program by HiGHS's dual simplex, cold: (seconds, objective, p)."""
    import highspy
    import scipy.sparse as sp

    n = len(g)
    tails, heads, costs = _flow_program(pairs, bound, g)
    m = len(tails)
    keep = tails < n  # the root's row is implied by the others
    rows = np.concatenate([tails[keep], heads[heads < n]])
    cols = np.concatenate([np.flatnonzero(keep), np.flatnonzero(heads < n)])
    vals = np.concatenate([np.ones(keep.sum()), -np.ones((heads < n).sum())])
    A = sp.csc_matrix((vals, (rows, cols)), shape=(n, m))
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("solver", "simplex")
    h.setOptionValue("simplex_strategy", 1)
    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_ = m, n
    lp.col_cost_, lp.col_lower_, lp.col_upper_ = costs, np.zeros(m), np.full(m, np.inf)
    lp.row_lower_ = lp.row_upper_ = g
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_, lp.a_matrix_.index_, lp.a_matrix_.value_ = (
        A.indptr, A.indices, A.data)
    h.passModel(lp)
    t0 = time.perf_counter()
    h.run()
    secs = time.perf_counter() - t0
    # the rows' duals y (reduced costs c - A'y >= 0) are the potentials: p_i - p_j <= c
    return secs, float(h.getInfo().objective_function_value), np.asarray(
        h.getSolution().row_dual)


def _ortools_flow(pairs, bound, g, scale: float = 1e7):
    """The flow program by OR-Tools' min-cost flow (cost scaling on int64: costs
    rounded down and supplies rounded at ``scale``), cold; the potentials p read from
    the arcs that carry flow (tight: p_tail - p_head = cost), exactly in integers:
    (seconds, p, components of those arcs not reaching the root)."""
    # here, not at the top: OR-Tools is in the bench extra only, needed by --designs
    from ortools.graph.python import min_cost_flow
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import breadth_first_order, connected_components

    n = len(g)
    tails, heads, costs = _flow_program(pairs, bound, g)
    icost = np.floor(costs * scale).astype(np.int64)
    supply = np.round(g * n * scale).astype(np.int64)
    supplies = np.append(supply, -supply.sum())
    t0 = time.perf_counter()
    flow = min_cost_flow.SimpleMinCostFlow()
    flow.add_arcs_with_capacity_and_unit_cost(
        tails, heads, np.full(len(tails), int(np.abs(supply).sum())), icost)
    flow.set_nodes_supplies(np.arange(n + 1), supplies)
    status = flow.solve()
    assert status == flow.OPTIMAL, status
    f = flow.flows(np.arange(len(tails)))
    on = f > 0
    graph = csr_matrix((np.ones(on.sum()), (tails[on], heads[on])), shape=(n + 1, n + 1))
    loose = connected_components(graph, directed=False)[0] - 1
    order, pred = breadth_first_order(graph + graph.T, n, directed=False)
    arc = {(a, b): c for a, b, c in zip(tails[on].tolist(), heads[on].tolist(),
                                         icost[on].tolist(), strict=True)}
    pot = np.zeros(n + 1, dtype=np.int64)
    for v in order[1:].tolist():
        u = int(pred[v])
        pot[v] = pot[u] + arc[v, u] if (v, u) in arc else pot[u] - arc[u, v]
    secs = time.perf_counter() - t0
    assert np.all(pot[tails] - pot[heads] <= icost)  # feasible for the rounded costs
    return secs, pot[:n] / scale, loose


def _flow_master(world, L: float) -> None:
    """A design measured, not the package's: constraint generation of this tree with
    each round's master (two actions, accuracy, epsilon = 0) solved from scratch as a
    min-cost flow by OR-Tools (:func:`_ortools_flow`) in place of the warm HiGHS dual;
    the search, its certificate and the verification are the package's."""
    from fairdecide.criteria import _pairs
    from fairdecide.optimize.engine import generation
    from fairdecide.optimize.engine.tasks import SolveResult

    X = np.asarray(world.X, dtype=float)
    py = np.asarray(world.p_y, dtype=float)  # P(y | x), (n, 2)
    n = len(X)
    g, base = (py[:, 1] - py[:, 0]) / n, float(py[:, 0].mean())

    class FlowMaster:
        def __init__(self, program, method, n_free):
            self.program, self.model = program, self
            self.pairs = np.zeros((0, 2), dtype=np.int64)

        def add_cuts(self, prog, program, criteria, cuts, size):
            self.prog = prog
            self.pairs = np.concatenate([self.pairs, *cuts.values()])

        def drop_slack(self, margin):
            return {}

        def solve(self):
            bound = L * _pairs.pair_distances(X, self.pairs, _pairs.PairMetric())
            secs, p, _ = _ortools_flow(self.pairs, bound, g)
            x = np.zeros(self.program.n_variables)
            x[0:2 * n:2], x[1:2 * n:2] = 1 - p, p
            x[self.program.m_slices[0]] = self.prog.marginals(x[:2 * n].reshape(n, 2))[0]
            return SolveResult(x, -(base + float(g @ p)), True, "optimal",
                               "OR-Tools min-cost flow (a benchmark's design)", secs, 0)

    generation._WarmHighs = FlowMaster


def design_case(n: int, L: float, landed: str | None) -> dict:
    """In this process: today's master (this tree's generation with no cut dropped, its
    pairs kept) solved by HiGHS and by a min-cost flow, cold; and the final policy's
    all-pairs search by this tree's screen, the landed tree's, and a ball tree."""
    import importlib.util

    from sklearn.neighbors import BallTree

    import fairdecide as fd
    from fairdecide.criteria import _pairs
    from fairdecide.optimize.engine import generation, rounds

    problem, world = adult_world(n)
    generation.DROP_SLACK = np.inf
    seen = []
    unseen = rounds.unseen_cuts

    def keep(cuts, pool):
        new = unseen(cuts, pool)
        if not seen:
            seen.append(pool)
        seen.append(new)
        return new

    generation.unseen_cuts = keep
    res = fd.optimize_policy(problem, world, fd.Lipschitz(constant=L), epsilon=0.0)
    out = {"utility": res.utility}
    pairs = np.concatenate(seen)
    X = np.asarray(world.X, dtype=float)
    bound = L * _pairs.pair_distances(X, pairs, _pairs.PairMetric())
    py = np.asarray(world.p_y, dtype=float)  # P(y | x), (n, 2)
    g = (py[:, 1] - py[:, 0]) / n
    base = float(py[:, 0].mean())
    out["pairs"] = len(pairs)
    secs, _, p = _highs_flow(pairs, bound, g)
    out["highs"] = (secs, base + float(g @ p))
    secs, p, loose = _ortools_flow(pairs, bound, g)
    out["ortools"] = (secs, base + float(g @ p), int(loose))
    P = res.policy.table
    searches = [("this tree's screen", _pairs)]
    if landed is not None:
        spec = importlib.util.spec_from_file_location(
            "landed_pairs", Path(landed) / "fairdecide" / "criteria" / "_pairs.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules["landed_pairs"] = module
        spec.loader.exec_module(module)
        searches.append(("landed screen", module))
    for name, module in searches:
        t0 = time.perf_counter()
        found = module.violated_pairs(P, X, L, threshold=1e-7, per_unit=4)
        out[name] = (time.perf_counter() - t0, found.max_violation)
    # a neighbour index: person i's partners can violate only within
    # max(p_i - min p, max p - p_i) / L; counted for 1,000 people, scaled to n
    p1 = P[:, 1]
    radius = np.maximum(p1 - p1.min(), p1.max() - p1) / L
    t0 = time.perf_counter()
    tree = BallTree(X)
    counts = tree.query_radius(X[:1000], radius[:1000], count_only=True)
    out["ball tree"] = ((time.perf_counter() - t0) * n / 1000, float(counts.mean()))
    out["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


def designs_part(args) -> None:
    run = started()
    n, L = (args.sizes or [30_000])[0], args.constants[0]
    with landed_tree(args.landed) as landed:
        out = subprocess.run([sys.executable, __file__, "--design-case",
                              json.dumps([n, L, None if landed is None else str(landed)])],
                             capture_output=True, text=True, check=False)
    if out.returncode:
        raise SystemExit(f"design case failed:\n{out.stderr[-3000:]}")
    r = json.loads(out.stdout.strip().splitlines()[-1])
    u = r["utility"]
    rows = [
        f"master: the {r['pairs']:,} pairs today's generation ends with, two actions, cold",
        f"  HiGHS dual simplex on the flow program    {r['highs'][0]:8.2f} s   utility "
        f"{r['highs'][1]:.9f} (rel {abs(r['highs'][1] - u) / u:.1e})",
        f"  OR-Tools min-cost flow (int64, 1e7)       {r['ortools'][0]:8.2f} s   utility "
        f"{r['ortools'][1]:.9f} (rel {abs(r['ortools'][1] - u) / u:.1e}); "
        f"{r['ortools'][2]} loose components",
        "search: the final policy, all pairs, threshold 1e-7",
        *[f"  {name:<40} {r[name][0]:8.2f} s   max violation {r[name][1]:.2e}"
          for name in ("this tree's screen", "landed screen") if name in r],
        f"  ball tree, radius counts (1,000 people x n / 1,000) {r['ball tree'][0]:8.2f} s"
        f"   {r['ball tree'][1]:,.0f} partners within reach per person",
    ]
    text = "\n".join([
        *preamble("Lipschitz fairness on Adult: the master and the search by other designs",
                  run),
        f"n = {n:,}, L = {L}; route utility {u:.9f}; process peak {r['peak_mb']:.0f} MB",
        *([f"landed: {args.landed}"] if args.landed else []), "", *rows, "",
        "utility: of the master's policy (rel: from the route's). OR-Tools' costs are",
        "rounded down to 1e-7 (so its p is feasible) and supplies to 1e-7 of a person's",
        "weight; loose components: parts of its flow not reaching the root (their p would",
        "be chosen otherwise). The ball tree counts only (no violation computed).",
    ]) + "\n"
    print(text)
    Path(args.out).write_text(text)


def _need_ortools() -> None:
    """Stop with a clear message when OR-Tools (the min-cost flow the designs measure)
    is not installed; the rest of the benchmark does not need it."""
    import importlib.util

    if importlib.util.find_spec("ortools") is None:
        raise SystemExit("--designs and --part designs time OR-Tools' min-cost flow, which "
                         "is not installed: pip install 'fairdecide[bench]' (or ortools), "
                         "or run without them")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=("lp", "certificate", "designs"), default="lp")
    parser.add_argument("--quick", action="store_true",
                        help="n in {1000, 3000} and the first constant only")
    parser.add_argument("--constants", type=float, nargs="+", default=[0.2, 0.5])
    parser.add_argument("--sizes", type=int, nargs="+", help="n values (default: all)")
    parser.add_argument("--full-limit", type=int, default=FULL_LIMIT,
                        help="largest n for the all-pairs LP")
    parser.add_argument("--landed", default=None, metavar="REV",
                        help="also run constraint generation on the package at git "
                             "revision REV, in the same run")
    parser.add_argument("--landed-limit", type=int, default=30_000,
                        help="largest n run on the landed tree")
    parser.add_argument("--designs", action="store_true",
                        help="also this tree's generation without dropping slack cuts "
                             "(up to --landed-limit) and with a min-cost flow master")
    parser.add_argument("--timeout", type=float, default=None,
                        help="seconds after which a case is reported unfinished")
    parser.add_argument("--case", help=argparse.SUPPRESS)
    parser.add_argument("--design-case", help=argparse.SUPPRESS)
    parser.add_argument("--out")
    args = parser.parse_args()
    if args.case:
        n, L, how = json.loads(args.case)
        print(json.dumps(run_case(n, L, how)))
        return
    if args.design_case:
        print(json.dumps(design_case(*json.loads(args.design_case))))
        return
    if args.designs or args.part == "designs":
        _need_ortools()
    name = {"lp": "lipschitz_lp.txt", "certificate": "lipschitz.txt",
            "designs": "lipschitz_designs.txt"}[args.part]
    args.out = args.out or str(ROOT / "benchmarks" / "results" / name)
    {"lp": lp_part, "certificate": certificate_part, "designs": designs_part}[args.part](
        args)


if __name__ == "__main__":
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        main()
