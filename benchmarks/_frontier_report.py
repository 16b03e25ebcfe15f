"""What bench_frontier.py reports from its CSV (one row per data set, constraint,
method, seed and tolerance): means and standard errors over seeds, hypervolumes,
dominance within one standard error, and the figure of the frontiers.

The definitions are in bench_frontier.py's docstring.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

CONSTRAINTS = ("DP", "EO")
DATASETS = ("Adult", "COMPAS", "German")


def summarise(df: pd.DataFrame, methods: Sequence[str]) -> pd.DataFrame:
    """Mean test accuracy and violation over seeds, their standard errors (0 for one
    seed), mean fit time and the fits' statuses, per (data, constraint, method, tol), in
    the order of DATASETS, CONSTRAINTS and ``methods``."""
    df = df.assign(status=df["status"].fillna("").astype(str))
    stats = df.groupby(["data", "constraint", "method", "tol"]).agg(
        acc=("accuracy", "mean"), acc_se=("accuracy", "sem"),
        viol=("violation", "mean"), viol_se=("violation", "sem"),
        seconds=("seconds", "mean"), n=("seed", "size"),
        status=("status", lambda s: ", ".join(
            f"{k} {v}" for k, v in s.value_counts().items() if k))).reset_index()
    stats = stats.fillna({"acc_se": 0.0, "viol_se": 0.0})
    order = {name: i for i, name in enumerate([*DATASETS, *CONSTRAINTS, *methods])}
    return stats.sort_values(["data", "constraint", "method", "tol"],
                             key=lambda col: col.map(order) if col.name != "tol" else col,
                             kind="stable").reset_index(drop=True)


def hypervolume(points: np.ndarray, ref: tuple[float, float]) -> float:
    """Area dominated by (violation, accuracy) points (lower violation, higher accuracy
    better) and bounded by ``ref`` = (largest violation, lowest accuracy).

    Sweeping the points by violation, the area between violation v_k and the next point's
    (or ref[0]) is the best accuracy reached so far above ref[1]: a staircase.
    """
    pts = sorted((v, a) for v, a in points if v <= ref[0] and a >= ref[1])
    area, best = 0.0, ref[1]
    for k, (v, a) in enumerate(pts):
        best = max(best, a)
        nxt = pts[k + 1][0] if k + 1 < len(pts) else ref[0]
        area += (nxt - v) * (best - ref[1])
    return area


def dominates(a: pd.Series, b: pd.Series) -> bool:
    """Mean point ``a`` weakly dominates mean point ``b`` within one standard error:
    accuracy not lower, violation not higher, each by more than the larger of the two
    points' standard errors."""
    return bool(a.acc >= b.acc - max(a.acc_se, b.acc_se)
                and a.viol <= b.viol + max(a.viol_se, b.viol_se))


def baseline(family: str) -> str:
    """The error-parity run on the family's own scorer."""
    return "error-parity (HGB)" if family.endswith("(HGB)") else "error-parity"


def panel_verdicts(part: pd.DataFrame, families: Sequence[str]) -> tuple[list[str], dict]:
    """The report lines of one (data set, constraint) under its table, and the verdicts
    of each fairdecide family the closing summary needs."""
    ref = (part["viol"].max(), part["acc"].min())
    hv = {m: hypervolume(q[["viol", "acc"]].to_numpy(), ref)
          for m, q in part.groupby("method", sort=False)}
    ranked = sorted(hv, key=lambda m: -hv[m])
    secs = part.groupby("method", sort=False)["seconds"].mean()
    lines = ["", f"hypervolume (reference: violation {ref[0]:.4f}, accuracy {ref[1]:.4f}): "
             + ", ".join(f"{m} {hv[m]:.2e}" for m in ranked),
             "mean fit s: " + ", ".join(f"{m} {s:.2f}" for m, s in secs.items())]
    verdicts = {}
    to = part[part.method == "ThresholdOptimizer"]
    gbm = part[part.method == "FairGBM"]
    for family in [f for f in families if f in hv]:
        fam = part[part.method == family].set_index("tol")
        verdict = {"rank": f"{ranked.index(family) + 1} of {len(ranked)}",
                   "largest": ranked[0]}
        lines.append(f"{family}:")
        ep = part[part.method == baseline(family)].set_index("tol")
        if len(ep):
            marks = {t: dominates(fam.loc[t], ep.loc[t]) for t in fam.index if t in ep.index}
            lines.append(f"  weakly dominates {baseline(family)} within one s.e., by t: "
                         + ", ".join(f"{t:g} {'yes' if ok else 'no'}" for t, ok in marks.items())
                         + f" ({sum(marks.values())} of {len(marks)})")
            verdict["ep"] = (f"{'yes' if all(marks.values()) else 'no'} "
                             f"({sum(marks.values())} of {len(marks)})")
        if len(to) and baseline(family) == "error-parity":  # ThresholdOptimizer is on the LR
            point = to.iloc[0]
            marks = {t: dominates(fam.loc[t], point) for t in fam.index}
            hits = [t for t, ok in marks.items() if ok]
            lines.append("  its point at t weakly dominates ThresholdOptimizer's within one "
                         "s.e.: " + ", ".join(f"{t:g} {'yes' if ok else 'no'}"
                                              for t, ok in marks.items())
                         + "; so the frontier does: "
                         + (f"yes (t = {hits[0]:g})" if hits else "no"))
            verdict["to"] = f"yes (t = {hits[0]:g})" if hits else "no"
        if len(gbm):
            covered = [any(dominates(f, g) for _, f in fam.iterrows())
                       for _, g in gbm.iterrows()]
            lines.append(f"  FairGBM's points weakly dominated by one of its points within one "
                         f"s.e.: {sum(covered)} of {len(covered)}")
            verdict["gbm"] = f"{sum(covered)} of {len(covered)}"
        verdicts[family] = verdict
    return lines, verdicts


def report(df: pd.DataFrame, header: list[str], methods: Sequence[str],
           families: Sequence[str]) -> list[str]:
    """The text report: ``header``, the fairdecide fits' statuses, one table and its
    verdicts per (data set, constraint), and a closing summary."""
    stats = summarise(df, methods)
    fam = df[df.method.isin(families)]
    statuses = fam.groupby("method")["status"].value_counts()
    lines = [*header, "# statuses of fairdecide's fits: " + "; ".join(
        f"{m}: {s} {n}" for (m, s), n in statuses.items()), ""]
    runs = df.groupby("run", sort=False)["method"].unique()
    if len(runs) > 1:
        lines[-1:-1] = [f"# rows from the run of {r}: {', '.join(ms)}" for r, ms in runs.items()]
    summary = []
    for (data, constraint), part in stats.groupby(["data", "constraint"], sort=False):
        lines += [f"## {data}, {constraint}", "",
                  "| method | t | test accuracy | test violation | fit s | status |",
                  "|---|---|---|---|---|---|"]
        lines += [f"| {r.method} | {r.tol:g} | {r.acc:.4f} ({r.acc_se:.4f}) | "
                  f"{r.viol:.4f} ({r.viol_se:.4f}) | {r.seconds:.2f} | {r.status} |"
                  for r in part.itertuples()]
        more, verdicts = panel_verdicts(part, families)
        lines += [*more, ""]
        summary += [f"| {data} | {constraint} | {f} | {v['rank']} ({v['largest']} first) | "
                    f"{v.get('ep', '-')} | {v.get('to', '-')} | {v.get('gbm', '-')} |"
                    for f, v in verdicts.items()]
    lines += ["## Summary", "",
              "| data | constraint | fairdecide family | its hypervolume's rank (largest) | "
              "weakly dominates error-parity on its scorer at every t (t where it does) | "
              "its frontier weakly dominates ThresholdOptimizer | FairGBM points it "
              "weakly dominates |", "|---|---|---|---|---|---|---|", *summary]
    return lines


def plot_frontiers(df: pd.DataFrame, paths: Sequence[Path], methods: Sequence[str],
                   single: set[str]) -> None:
    """One panel per (data set, constraint): each method's mean frontier over seeds
    (test violation, test accuracy) with one-s.e. error bars, ``single`` methods as
    points; one colour per method across panels; saved to every path."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from fairdecide.plot import ParetoFrontierDisplay

    stats = summarise(df, methods)
    datasets = [d for d in DATASETS if d in set(stats["data"])]
    cycle = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    colours = {m: cycle[i % len(cycle)] for i, m in enumerate(methods)}
    fig, axes = plt.subplots(len(datasets), 2, figsize=(11, 3.6 * len(datasets) + 0.6),
                             squeeze=False)
    handles: dict = {}
    for (data, constraint), part in stats.groupby(["data", "constraint"], sort=False):
        ax = axes[datasets.index(data), CONSTRAINTS.index(constraint)]
        frames = {m: pd.DataFrame({"deviation": q.viol, "utility": q.acc,
                                   "deviation_se": q.viol_se, "utility_se": q.acc_se})
                  for m, q in part.groupby("method", sort=False)}
        curves = {m: f for m, f in frames.items() if m not in single} or frames
        points = {m: f for m, f in frames.items() if m not in curves}
        ax.set_prop_cycle(color=[colours[m] for m in [*curves, *points]])
        display = ParetoFrontierDisplay.from_frontier(curves)
        for m, f in points.items():
            display.add_points(f.utility, f.deviation, label=m, marker="*",
                               utility_se=f.utility_se, deviation_se=f.deviation_se)
        display.plot(ax=ax, markersize=3, linewidth=1)
        ax.set(title=f"{data}, {constraint}", xlabel=f"test {constraint} difference",
               ylabel="test accuracy")
        ax.get_legend().remove()
        drawn, names = ax.get_legend_handles_labels()
        handles.update(zip(names, drawn, strict=True))
    labels = [m for m in methods if m in handles]
    fig.legend([handles[m] for m in labels], labels, loc="lower center", ncol=len(labels),
               fontsize="small", frameon=False)
    fig.suptitle("Accuracy against violation on the test parts: mean over seeds, "
                 "bars one standard error")
    fig.tight_layout(rect=(0, 0.6 / fig.get_figheight(), 1, 1))
    for path in paths:
        path.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(path, dpi=110)
    plt.close(fig)


def comparison(before: pd.DataFrame, after: pd.DataFrame, methods: Sequence[str],
               header: Sequence[str]) -> list[str]:
    """The points of ``methods`` in two runs (two CSVs of the same grid), side by side:
    mean test accuracy and violation before and after, their changes, and whether the
    point lost more than one standard error, in accuracy (after < before - se) or in
    violation (after > before + se), se the larger of the two runs' standard errors
    over seeds; then the count of such points per method."""
    old, new = summarise(before, methods), summarise(after, methods)
    keys = ["data", "constraint", "method", "tol"]
    both = old.merge(new, on=keys, suffixes=("_b", "_a"))
    both = both[both["method"].isin(methods)]
    acc_se = np.maximum(both["acc_se_b"], both["acc_se_a"])
    viol_se = np.maximum(both["viol_se_b"], both["viol_se_a"])
    both["acc_lost"] = both["acc_a"] < both["acc_b"] - acc_se
    both["viol_lost"] = both["viol_a"] > both["viol_b"] + viol_se
    lines = [*header, "",
             "| data | constraint | method | t | accuracy before | after | change | "
             "> 1 se lower | violation before | after | change | > 1 se higher |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in both.itertuples():
        lines.append(
            f"| {r.data} | {r.constraint} | {r.method} | {r.tol:g} | {r.acc_b:.4f} "
            f"({max(r.acc_se_b, r.acc_se_a):.4f}) | {r.acc_a:.4f} | {r.acc_a - r.acc_b:+.4f} "
            f"| {'yes' if r.acc_lost else ''} | {r.viol_b:.4f} "
            f"({max(r.viol_se_b, r.viol_se_a):.4f}) | {r.viol_a:.4f} | "
            f"{r.viol_a - r.viol_b:+.4f} | {'yes' if r.viol_lost else ''} |")
    lines += ["", "points lower in accuracy / higher in violation by more than one standard "
              "error (the larger of the two runs'), of all points:"]
    for m in methods:
        sub = both[both["method"] == m]
        if len(sub):
            lines.append(f"- {m}: {int(sub['acc_lost'].sum())} / "
                         f"{int(sub['viol_lost'].sum())} of {len(sub)}")
    return lines
