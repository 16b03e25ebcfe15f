"""Capacity-constrained fair selection of a fixed population (issue 26's speed target).

Issue 26 asks for "capacity-constrained fair selection of 1e6 people under 5 s". A
synthetic fixed population of n people (a :class:`~fairdecide.SampleWorld` of equal
weights), two groups (40% / 60%), one feature, P(y = 1 | x, z) from a logistic model
with a group shift, two actions (decline, offer; an offer gains 1 from y = 1 and loses
0.5 from y = 0), is solved by ``fd.optimize_policy`` (the default policy family: one row
per person) under

- **capacity + parity**: ``Capacity("offer", at_most=0.1)`` at epsilon 0 and
  ``Independence()`` at epsilon 0.01;
- **parity only** (the anchor): the same program without the capacity row, in the same
  run, so that the ratio shows what the coupling row costs.

Each solve is timed end to end (``optimize_policy``, its verification included) with
BLAS and OpenMP held at one thread (threadpoolctl); the two programs alternate, and the
median and fastest of ``--repeats`` solves are reported. The script then checks each result
itself, from the returned policy's rows and the people's groups alone: the offer share
(the mean of the offer probabilities), each group's share, independence's deviation
(pooled TV, sum_z sum_a |P(a | z) - P(a)|, which is 2 |s_0 - s_1| here) and the utility
(sum_i p_offer_i (1.5 P(y = 1 | i) - 0.5) / n), and compares the utility with the
optimum computed here from each group's sorted gains (``reference_utility``); a failed
check stops the run.

With ``--landed REV`` the script instead times each program (end to end, one thread)
on the package at git revision REV and on this one, each solve in a fresh process after
the same warm-up, alternating, ``--repeats`` times; it writes the medians, their ratio
this / landed and whether the objectives agree (relative 1e-6) to capacity_vs_landed.txt.

Usage::

    python benchmarks/bench_capacity.py [--quick] [--sizes N ...] [--out FILE]
    python benchmarks/bench_capacity.py --landed 79b1da6 --repeats 5
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from _landed import Table, add_arguments, compare, landed_tree, runs
from _provenance import provenance
from threadpoolctl import threadpool_limits

import fairdecide as fd

OUT = Path(__file__).parent / "results" / "capacity.txt"
SHARE, EPSILON = 0.1, 0.01
U = np.array([[0.0, 0.0], [-0.5, 1.0]])  # U[a, y]: rows decline, offer
TOL = 1e-6  # the checks' tolerance (the route verifies its own result to 1e-6)


def population(n: int, seed: int = 0) -> fd.SampleWorld:
    """n people: group 1 with probability 0.6, x ~ N(0.3 z, 1), P(y = 1) a logistic of
    x - 0.4 z - 0.8."""
    rng = np.random.default_rng(seed)
    z = (rng.random(n) < 0.6).astype(int)
    x = rng.normal(0.3 * z, 1.0)
    q = 1.0 / (1.0 + np.exp(-(1.5 * x - 0.4 * z - 0.8)))
    return fd.SampleWorld(x[:, None], z, np.c_[1 - q, q])


def reference_utility(world: fd.SampleWorld, capacity: bool) -> float:
    """The optimum, written here from the problem's structure (not the library's): a
    best policy offers within each group z to a share s_z of its people, those of
    largest gain g_i = 1.5 P(y = 1 | i) - 0.5, so U = G_0(s_0) + G_1(s_1) with G_z the
    (fractional) sum of group z's top s_z n_z gains over n, concave. Independence's
    pooled TV is 2 |s_0 - s_1|, the capacity w_0 s_0 + w_1 s_1 <= SHARE. For a given
    s_0 the best s_1 is group 1's unconstrained best share clipped to its feasible
    interval; the result is concave in s_0, maximised by ternary search."""
    gain = world.p_y @ (U[1] - U[0])
    w = np.array([np.mean(world.z == g) for g in (0, 1)])
    d = EPSILON / 2

    def top(g):
        sums = np.concatenate([[0.0], np.cumsum(np.sort(gain[world.z == g])[::-1])])
        m = len(sums) - 1

        def G(share):  # the top share * m gains, the last one in part, over n
            k = min(int(np.floor(share * m)), m - 1)
            return (sums[k] + (share * m - k) * (sums[k + 1] - sums[k])) / world.n
        return G, np.mean(gain[world.z == g] > 0)

    (G0, _), (G1, best1) = top(0), top(1)

    def f(s0):
        hi = min(1.0, s0 + d, (SHARE - w[0] * s0) / w[1] if capacity else 1.0)
        return G0(s0) + G1(min(max(best1, max(0.0, s0 - d)), hi))

    lo, hi = 0.0, min(1.0, SHARE + d * w[1]) if capacity else 1.0
    for _ in range(200):
        a, b = lo + (hi - lo) / 3, hi - (hi - lo) / 3
        lo, hi = (a, hi) if f(a) < f(b) else (lo, b)
    return f((lo + hi) / 2)


def check(res, world: fd.SampleWorld, capacity: bool) -> dict:
    """Recompute the shares, the deviation and the utility from the policy's rows."""
    p = np.asarray(res.policy.table, dtype=float)
    assert p.shape == (world.n, 2), p.shape
    offer = p[:, 1]
    shares = np.array([offer[world.z == g].mean() for g in (0, 1)])
    share = offer.mean()
    dev = 2 * abs(shares[0] - shares[1])
    utility = float(offer @ (world.p_y @ (U[1] - U[0])) / world.n)
    assert np.all(p >= -TOL) and np.allclose(p.sum(axis=1), 1.0, atol=TOL)
    assert dev <= EPSILON + TOL, dev
    if capacity:
        assert share <= SHARE + TOL, share
    assert abs(utility - res.utility) <= TOL, (utility, res.utility)
    ref = reference_utility(world, capacity)
    assert abs(utility - ref) <= TOL, (utility, ref)
    return {"reference": ref, "share": share, "shares": shares, "dev": dev, "utility": utility,
            "fractional": int(np.sum((offer > TOL) & (offer < 1 - TOL)))}


PROBLEM = fd.DecisionProblem(U, action_labels=("decline", "offer"))
CASES = [("capacity + parity", [fd.Capacity("offer", at_most=SHARE), fd.Independence()],
          [0.0, EPSILON]),
         ("parity only", [fd.Independence()], [EPSILON])]


def run(n: int, repeats: int) -> list[str]:
    world = population(n)
    times: dict[str, list[float]] = {name: [] for name, _, _ in CASES}
    results = {}
    for r in range(repeats):  # the two programs alternate, the first one by turns
        for name, criteria, eps in (CASES if r % 2 == 0 else CASES[::-1]):
            t0 = time.perf_counter()
            results[name] = fd.optimize_policy(PROBLEM, world, criteria, epsilon=eps)
            times[name].append(time.perf_counter() - t0)
    secs = {name: float(np.median(t)) for name, t in times.items()}
    lines = []
    for name, _, _ in CASES:
        res = results[name]
        got = check(res, world, capacity=name != "parity only")
        lines.append(
            f"| {n:.0e} | {name} | {secs[name]:.2f} | {min(times[name]):.2f} | {res.status} | "
            f"{res.solver} | {got['utility']:.6f} | {got['reference']:.6f} | "
            f"{got['share']:.6f} | {got['shares'][0]:.6f} | "
            f"{got['shares'][1]:.6f} | {got['dev']:.6f} | {got['fractional']} |")
    ratio = secs["capacity + parity"] / secs["parity only"]
    lines.append(f"| {n:.0e} | ratio capacity / anchor (medians) | {ratio:.2f} |"
                 + " |" * 10)
    return lines


def landed_case(n: int, name: str) -> dict:
    """One program of CASES at size n, timed end to end after the warm-up solve, on one
    thread (for --landed: run in a fresh process on either tree's package)."""
    criteria, eps = next((c, e) for label, c, e in CASES if label == name)
    world = population(n)
    with threadpool_limits(limits=1):
        fd.optimize_policy(PROBLEM, population(1000), criteria, epsilon=eps)
        t0 = time.perf_counter()
        res = fd.optimize_policy(PROBLEM, world, criteria, epsilon=eps)
        seconds = time.perf_counter() - t0
    check(res, world, capacity=name != "parity only")
    return {"seconds": seconds, "value": float(res.objective), "solver": res.solver}


def landed_main(args, sizes: list[int]) -> None:
    """Each program at each size on the landed tree and this one (capacity_vs_landed)."""
    out = args.out if args.out != OUT else OUT.with_name("capacity_vs_landed.txt")
    repeats = 1 if args.quick else args.repeats
    table = Table(out, "Capacity-constrained fair selection against the landed version",
                  "bench_capacity.py", args.landed,
                  [f"optimize_policy end to end, one thread, in a fresh process after a warm-up "
                   f"solve at n = 1000; {runs(repeats, 'the objectives')}; every result checked "
                   "against reference_utility"])
    with landed_tree(args.landed) as old:
        for n in sizes:
            for name, _, _ in CASES:
                got = compare(old, "bench_capacity", (n, name), repeats, timeout=args.timeout)
                table.add(f"n = {n:.0e}, {name}", got, key="solver")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="n = 1e4 and 1e5 only")
    parser.add_argument("--sizes", type=float, nargs="+", default=[1e4, 1e5, 1e6])
    parser.add_argument("--repeats", type=int, default=3,
                        help="solves of each program per size (median and fastest shown)")
    parser.add_argument("--out", type=Path, default=OUT)
    add_arguments(parser, "capacity_vs_landed.txt", repeats=None)
    args = parser.parse_args()
    sizes = [10_000, 100_000] if args.quick else [int(s) for s in args.sizes]
    if args.landed:
        landed_main(args, sizes)
        return
    lines = [
        *provenance("Capacity-constrained fair selection of a fixed population (issue 26)",
                    "bench_capacity.py"),
        f"# SampleWorld of n people, 2 groups, actions decline/offer; capacity + parity = "
        f"Capacity('offer', at_most={SHARE}) at epsilon 0 and Independence() at {EPSILON}; "
        "parity only = the anchor without the capacity row, same run",
        f"# seconds: optimize_policy end to end (verification included), median (and fastest) "
        f"of {args.repeats} solves alternating with the other program, after one unreported "
        "warm-up solve at n = 1000; one thread (threadpoolctl)",
        "# every other column recomputed here from the last solve's policy rows (a failed "
        "check stops the run):",
        "# utility = sum_i p_offer_i gain_i / n; reference = the optimum computed here from "
        "each group's sorted gains (reference_utility), not by the library",
        "# share = mean offer probability, share z = group z's, independence = "
        "sum_z sum_a |P(a|z) - P(a)| = 2 |share 0 - share 1|, fractional = people with "
        "0 < p_offer < 1",
        "",
        "| n | program | median s | fastest s | status | solver | utility | reference | "
        "share | share 0 | "
        "share 1 | independence | fractional |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    print("\n".join(lines), flush=True)
    with threadpool_limits(limits=1):
        run(1000, 1)  # warm-up: first-call costs (imports, caches) are not the solve's
        for n in sizes:
            new = run(n, args.repeats)
            print("\n".join(new), flush=True)
            lines.extend(new)
            # written after every size: a long run that stops keeps what it measured
            args.out.parent.mkdir(parents=True, exist_ok=True)
            args.out.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
