"""The audit report on COMPAS: wall time of ``fairdecide audit`` as a person runs it, beside
Fairlearn's MetricFrame computing group rates with bootstrap intervals, in the same run.

Cases (each a fresh process, imports included, alternated over ``--repeats`` rounds):

- ``fairdecide audit``: the command of docs/audit.md on compas-scores-two-years.csv.gz
  (race, score_text, two_year_recid, three features; HTML and JSON written);
- the same with ``--dp-epsilon 1`` (every count from the geometric mechanism);
- the anchor: Fairlearn ``MetricFrame`` by race of the selection rate of each score
  level, and of the true- and false-positive rates of "High", with ``n_boot=300``
  bootstrap intervals: a part of what the audit computes (its rates), not all of it.

Target (issue 13): the audit writes both files in under a minute. With ``--screenshot
PNG`` the COMPAS report is also opened in headless Chromium (tests/browser.py) and the
top of the page saved as a PNG for the docs.

Usage::

    FAIRDECIDE_DATA=../shared/data python benchmarks/bench_audit.py \\
        --out benchmarks/results/audit_compas.txt \\
        --screenshot docs/images/compas_audit_report.png
    python benchmarks/bench_audit.py --quick --out /tmp/audit.txt   # CI: one round
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
UTILITY = '{"High": {"0": -1, "1": 1}, "Medium": {"0": 0, "1": 0}, "Low": {"0": 1, "1": -1}}'

FAIRLEARN = r'''
import sys
import numpy as np, pandas as pd
from fairlearn.metrics import MetricFrame, selection_rate, true_positive_rate, false_positive_rate
df = pd.read_csv(sys.argv[1], low_memory=False)
metrics = {f"P({s})": (lambda yt, yp, s=s: selection_rate(yt, yp == s, pos_label=True))
           for s in ("High", "Medium", "Low")}
metrics["TPR(High)"] = lambda yt, yp: true_positive_rate(yt, (yp == "High").astype(int))
metrics["FPR(High)"] = lambda yt, yp: false_positive_rate(yt, (yp == "High").astype(int))
mf = MetricFrame(metrics=metrics, y_true=df["two_year_recid"], y_pred=df["score_text"],
                 sensitive_features=df["race"], n_boot=300, ci_quantiles=[0.025, 0.975],
                 random_state=0)
print(mf.by_group.round(3).to_string())
'''


def find_compas() -> Path | None:
    for folder in (os.environ.get("FAIRDECIDE_DATA"), ROOT.parent / "shared" / "data"):
        if folder:
            hits = sorted(Path(folder).glob("compas-scores-two-years.csv*"))
            if hits:
                return hits[0]
    return None


def audit_command(data: Path, out: Path, extra: list[str]) -> list[str]:
    return [sys.executable, "-m", "fairdecide", "audit", str(data), "--group", "race",
            "--action", "score_text", "--outcome", "two_year_recid", "--kind",
            "prediction", "--utility", UTILITY, "--features", "age_cat", "c_charge_degree",
            "priors_count", "--bins", "priors_count=0,1,2,4,8,inf", "--html",
            str(out / "report.html"), "--json", str(out / "report.json"), "--quiet", *extra]


def timed(cmd: list[str]) -> tuple[float, str]:
    t0 = time.perf_counter()
    run = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    seconds = time.perf_counter() - t0
    if run.returncode:
        raise SystemExit(f"{cmd[:4]} failed:\n{run.stderr}")
    return seconds, run.stdout


def screenshot(html: Path, png: Path) -> str:
    """The top of the rendered page, scaled to 960 pixels wide, as a small PNG."""
    sys.path.insert(0, str(ROOT))
    from PIL import Image

    from tests.browser import render_in_chromium

    with tempfile.TemporaryDirectory() as tmp:
        rendered = render_in_chromium(html, Path(tmp) / "full.png")
        image = Image.open(rendered.screenshot).convert("RGB")
        top = image.crop((0, 0, image.width, min(image.height, 2700)))
        small = top.resize((960, round(top.height * 960 / top.width)), Image.LANCZOS)
        small.quantize(colors=128).save(png, optimize=True)
    return (f"screenshot: {png.name}, page {image.width} x {image.height} px, "
            f"{rendered.n_tables} tables, {rendered.n_figures} figures, "
            f"{len(rendered.console_errors)} console errors, "
            f"{len(rendered.network_requests)} network requests")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="one round (CI)")
    parser.add_argument("--screenshot", type=Path, default=None)
    args = parser.parse_args()
    data = find_compas()
    if data is None:
        raise SystemExit("COMPAS not found: set FAIRDECIDE_DATA to the folder holding "
                         "compas-scores-two-years.csv.gz")
    repeats = 1 if args.quick else args.repeats
    tmp = Path(tempfile.mkdtemp())
    cases = {"fairdecide audit": audit_command(data, tmp, []),
             "fairdecide audit --dp-epsilon 1": audit_command(data, tmp,
                                                              ["--dp-epsilon", "1", "--html",
                                                               str(tmp / "dp.html"),
                                                               "--json",
                                                               str(tmp / "dp.json")]),
             "Fairlearn MetricFrame (rates, n_boot=300)": [sys.executable, "-c", FAIRLEARN,
                                                           str(data)]}
    times: dict[str, list[float]] = {k: [] for k in cases}
    outputs = {}
    for _ in range(repeats):  # alternate, so a busy moment hits every case alike
        for name, cmd in cases.items():
            seconds, outputs[name] = timed(cmd)
            times[name].append(seconds)
    anchor = min(times["Fairlearn MetricFrame (rates, n_boot=300)"])
    lines = [f"# bench_audit.py{' --quick' if args.quick else ''}: {data.name}, "
             f"{repeats} alternated rounds, wall time of a fresh process (imports "
             f"included); Python {platform.python_version()}, {os.cpu_count()} cores", "",
             "| case | best s | median s | / anchor |", "|---|---|---|---|"]
    for name, ts in times.items():
        lines.append(f"| {name} | {min(ts):.2f} | {statistics.median(ts):.2f} | "
                     f"{min(ts) / anchor:.1f}x |")
    sizes = {p.name: p.stat().st_size for p in (tmp / "report.html", tmp / "report.json")}
    lines += ["", f"files written: {sizes} (bytes)", "", "summary printed by the audit:",
              "", outputs["fairdecide audit"].strip()]
    if args.screenshot:
        lines += ["", screenshot(tmp / "report.html", args.screenshot)]
    text = "\n".join(lines) + "\n"
    args.out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
