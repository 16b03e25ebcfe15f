"""Exposure-parity rankings at 10,000 candidates, and the lottery's size (issue 41, item 6).

Issue 41 asks for "exposure parity at 10,000 candidates under 10 s, with a lottery of at
most n permutations", against the expohedron of Kletti et al. (WSDM 2022), whose
Caratheodory construction gives at most n rankings in O(n^2 log n), and against today's
route: the program over the counts (``formulation="counts"``) and the Birkhoff-von
Neumann decomposition of its matrix (``RankingResult.decomposition``).

Instances: n candidates x n positions, DCG weights 1/log2(1 + j); two groups (40%
protected, merits u ~ U(0, 1), the protected ones' scaled by 0.7, as in
bench_ranking.py) and three groups (30% and 30% scaled by 0.7 and 0.85);
``ExposureParity()`` at epsilon a quarter of the sort's exposure gap (binding at every
n; the sort's gap shrinks as n grows, DCG's weights flattening). In the same run, for
each n:

- "exposure": ``fd.optimize_ranking`` with the default chain, which picks the program
  over the expohedron; its answer is the lottery (seconds end to end, verification
  included; the dense matrix is not built);
- "counts + Birkhoff": ``formulation="counts"``, then ``res.decomposition``; skipped
  above ``--today-max`` (the largest size it ran is in the table with its seconds).

The script recomputes, from each lottery's rankings and weights (by its own loop), the
mean exposure, the groups' exposure gap and the utility; it stops if a gap exceeds
epsilon by 1e-9, if the lottery's utility misses the solver's by 1e-9 (relative), or if
the two routes' utilities differ by more than 1e-9 (relative). Seconds: median and
fastest of ``--repeats``, one thread.

Usage: python benchmarks/bench_ranking_exposure.py [--quick] [--sizes N ...]
[--today-max N] [--repeats R] [--out FILE]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
from _provenance import provenance
from bench_ranking import timed
from threadpoolctl import threadpool_limits

import fairdecide as fd

OUT = Path(__file__).parent / "results" / "ranking_exposure.txt"
#: epsilon = EPS_SHARE x the sort's gap between the groups' mean exposures
EPS_SHARE = 0.25


def candidates(n: int, n_groups: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    if n_groups == 2:
        g = (rng.permutation(n) < round(0.4 * n)).astype(int)  # 1: protected, 40%
        scale = np.where(g == 1, 0.7, 1.0)
    else:
        r = rng.permutation(n)
        g = np.where(r < round(0.3 * n), 1, np.where(r < round(0.6 * n), 2, 0))
        scale = np.array([1.0, 0.7, 0.85])[g]
    return rng.random(n) * scale, g


def dcg(k: int) -> np.ndarray:
    return 1.0 / np.log2(2.0 + np.arange(k))


def lottery_figures(weights: np.ndarray, rankings: np.ndarray, u: np.ndarray,
                    g: np.ndarray) -> dict:
    """Mean exposure from the rankings (row r: candidate at each position), by a loop;
    the groups' gap and the utility from it; the weights' sum."""
    n = len(u)
    v = np.r_[dcg(rankings.shape[1]), np.zeros(n - rankings.shape[1])]
    e = np.zeros(n)
    for w, order in zip(weights, rankings, strict=True):
        assert len(np.unique(order)) == n, "a ranking is not a permutation"
        e[order] += w * v[: len(order)]
    means = [e[g == c].mean() for c in np.unique(g)]
    return {"gap": max(means) - min(means), "utility": float(u @ e),
            "weight_sum": float(weights.sum())}


def row(n, G, eps, route, med, fast, size, fig, extra="") -> str:
    return (f"| {n} | {G} | {eps:.6f} | {route} | {med:.3f} | {fast:.3f} | {size} | "
            f"{fig['utility']:.9f} | {fig['gap']:.9f} | {extra} |")


def epsilon(u: np.ndarray, g: np.ndarray) -> float:
    """EPS_SHARE times the sort's gap between the groups' mean exposures."""
    e = np.empty(len(u))
    e[np.argsort(-u, kind="stable")] = dcg(len(u))
    means = [e[g == c].mean() for c in np.unique(g)]
    return EPS_SHARE * (max(means) - min(means))


def case(n: int, G: int, repeats: int, today: bool) -> list[str]:
    u, g = candidates(n, G)
    crit = fd.ExposureParity()
    EPS = epsilon(u, g)
    lines = []
    res, med, fast = timed(lambda: fd.optimize_ranking(u, g, crit, epsilon=EPS), repeats)
    assert res.formulation == "exposure" and "matrix" not in vars(res)
    lot = res.lottery
    fig = lottery_figures(lot.weights, lot.rankings, u, g)
    scale = max(1.0, abs(res.utility))
    assert fig["gap"] <= EPS + 1e-9, fig
    assert abs(fig["utility"] - res.utility) <= 1e-9 * scale, (fig, res.utility)
    assert abs(fig["weight_sum"] - 1) <= 1e-12
    st = res.stats
    lines.append(row(n, G, EPS, "exposure (expohedron, default)", med, fast, lot.n_rankings,
                     fig,
                     f"{st['rankings_generated']} rankings generated"))
    if not today:
        return lines
    res_c, med_c, fast_c = timed(lambda: fd.optimize_ranking(u, g, crit, epsilon=EPS,
                                                              formulation="counts"), repeats)

    def decompose():
        object.__getattribute__(res_c, "__dict__").pop("decomposition", None)
        return res_c.decomposition

    dec, med_b, fast_b = timed(decompose, 1)
    rankings = np.argsort(dec.permutations, axis=1)  # candidate at each position
    fig_c = lottery_figures(dec.weights, rankings, u, g)
    assert fig_c["gap"] <= EPS + 1e-6, fig_c
    assert abs(fig_c["utility"] - res.utility) <= 1e-9 * scale, (fig_c, res.utility)
    assert abs(res_c.utility - res.utility) <= 1e-9 * scale, (res_c.utility, res.utility)
    lines.append(row(n, G, EPS, "counts LP (today)", med_c, fast_c, "", fig_c,
                     f"{res_c.stats['cut_rounds']} cut rounds"))
    lines.append(row(n, G, EPS, "counts LP + Birkhoff (today)", med_c + med_b,
                     fast_c + fast_b,
                     len(dec.weights), fig_c, f"Birkhoff alone {med_b:.3f} s (one run)"))
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="n = 200 and 1000")
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 2000, 10_000, 100_000])
    parser.add_argument("--today-max", type=int, default=2000,
                        help="largest n solved by today's route too")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    sizes = [200, 1000] if args.quick else args.sizes
    today_max = 200 if args.quick else args.today_max
    repeats = 1 if args.quick else args.repeats
    lines = [
        *provenance("Exposure-parity rankings by the expohedron program beside today's "
                    "counts LP + Birkhoff (issue 41, item 6)", "bench_ranking_exposure.py"),
        f"# n candidates x n positions, DCG weights, ExposureParity at epsilon = {EPS_SHARE} x "
        "the sort's exposure gap; G groups (2: 40% protected, merits x0.7; 3: 30% x0.7, "
        "30% x0.85)",
        f"# seconds: end to end (verification included), median and fastest of {repeats}, "
        "one thread; Birkhoff: one run, added to the LP's seconds",
        "# lottery: rankings with positive weight; utility and exposure gap recomputed here "
        "from each lottery's rankings and weights; the routes' utilities agree to 1e-9 "
        "(relative), every gap <= epsilon",
        f"# today's route skipped above n = {today_max} (its seconds at the largest size "
        "run are in the table)",
        "",
        "| n | groups | epsilon | route | median s | fastest s | lottery size | utility | "
        "exposure gap | notes |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    print("\n".join(lines), flush=True)
    with threadpool_limits(limits=1):
        fd.optimize_ranking(*candidates(50, 2), fd.ExposureParity(), epsilon=0.01)  # warm-up
        for n in sizes:
            for G in (2, 3):
                new = case(n, G, repeats, n <= today_max)
                print("\n".join(new), flush=True)
                lines.extend(new)
                args.out.parent.mkdir(parents=True, exist_ok=True)
                args.out.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
