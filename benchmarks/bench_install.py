"""The core install's footprint: README's main-job command in a fresh venv, per commit.

For each commit (default: ``before`` = 79b1da6, where OpenDP was a core dependency, and
``after`` = HEAD), the committed tree is exported (``git archive``) to a temporary
folder and installed as README says, non-editable, into a fresh virtual environment::

    python3 -m venv VENV && VENV/bin/pip install CHECKOUT && VENV/bin/fairdecide demo

and the script records the venv's size (``du -sm``, MiB, after the install and before
the demo), the install's seconds (venv creation + pip), the demo's seconds (offline, on
the embedded synthetic problem: ``$FAIRDECIDE_DATA`` unset), the size of every installed
distribution (the files its RECORD lists, .libs folders included; largest first, with
the distributions that require it), and whether OpenDP is installed. Where it is not, a
private release (``fairdecide audit ... --dp-epsilon 1``) must stop with exit code 2 and
one line naming ``pip install 'fairdecide[privacy]'``: checked, on a small CSV.

The commits are measured in the same run, in alternating order over the repetitions;
pip's wheel cache is shared (warm after the first install), so the seconds are unpacking
and building fairdecide's wheel, not downloading.

Usage::

    python benchmarks/bench_install.py                     # before and after, 2 repetitions
    python benchmarks/bench_install.py --ref mid=abc1234   # add a commit (NAME=REV, repeatable)
    python benchmarks/bench_install.py --quick             # HEAD only, once (about 2 min)

Writes benchmarks/results/install.txt (or --out) and prints the same text. Exits 1 if a
demo or the private release's error fails, or if ``--max-mb`` is given and a venv exceeds it.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _provenance import provenance

ROOT = Path(__file__).resolve().parents[1]
BEFORE = "79b1da6"  # issue 40: pip install . made an 887 MB venv, OpenDP 265 MB of it
TARGET_MB = 650
HINT = "pip install 'fairdecide[privacy]'"

# Run by the venv's own python: every distribution's files (its RECORD) and requirements.
_DISTS = r"""
import importlib.metadata as md, json, os, re
out = []
for d in md.distributions():
    size = 0
    for f in d.files or ():
        p = d.locate_file(f)
        if os.path.isfile(p):
            size += os.path.getsize(p)
    reqs = [re.match(r"[A-Za-z0-9._-]+", r).group(0) for r in (d.requires or ())
            if "extra ==" not in r.replace("extra==", "extra ==")]
    out.append({"name": d.metadata["Name"], "version": d.version, "bytes": size,
                "requires": reqs})
print(json.dumps(out))
"""


def _norm(name: str) -> str:
    return name.lower().replace("_", "-").replace(".", "-")


def export(rev: str, into: Path) -> str:
    """The committed tree at ``rev`` in ``into``; returns its short sha."""
    sha = subprocess.run(["git", "rev-parse", "--short", rev], cwd=ROOT, check=True,
                         capture_output=True, text=True).stdout.strip()
    into.mkdir(parents=True)
    archive = subprocess.run(["git", "archive", "--format=tar", sha], cwd=ROOT, check=True,
                             capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return sha


def du_mb(path: Path) -> int:
    return int(subprocess.run(["du", "-sm", str(path)], check=True, capture_output=True,
                              text=True).stdout.split()[0])


def private_release_error(venv: Path, work: Path) -> str:
    """'ok' if a private release without OpenDP stops with exit 2 and one line naming
    the extra, else what happened instead."""
    data = work / "log.csv"
    rng = random.Random(0)
    with data.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["z", "a", "y"])
        for _ in range(200):
            w.writerow([rng.choice("fm"), rng.randint(0, 1), rng.randint(0, 1)])
    run = subprocess.run([str(venv / "bin" / "fairdecide"), "audit", str(data), "--group", "z",
                          "--action", "a", "--outcome", "y", "--dp-epsilon", "1", "--quiet"],
                         capture_output=True, text=True)
    lines = run.stderr.strip().splitlines()
    if run.returncode == 2 and len(lines) == 1 and HINT in lines[0]:
        return "ok"
    return f"exit {run.returncode}, stderr {run.stderr.strip()[-300:]!r}"


def measure(checkout: Path, work: Path) -> dict:
    """One install + demo of ``checkout`` in a fresh venv under ``work``."""
    venv = work / "venv"
    env = {k: v for k, v in os.environ.items() if k not in ("FAIRDECIDE_DATA", "VIRTUAL_ENV")}
    t0 = time.perf_counter()
    subprocess.run(["python3", "-m", "venv", str(venv)], check=True, env=env)
    pip = subprocess.run([str(venv / "bin" / "pip"), "install", str(checkout)], env=env,
                         capture_output=True, text=True)
    install_s = time.perf_counter() - t0
    if pip.returncode != 0:
        raise SystemExit(f"pip install {checkout} failed:\n{pip.stderr[-2000:]}")
    size = du_mb(venv)
    t0 = time.perf_counter()
    demo = subprocess.run([str(venv / "bin" / "fairdecide"), "demo"], env=env, cwd=work,
                          capture_output=True, text=True)
    demo_s = time.perf_counter() - t0
    dists = json.loads(subprocess.run([str(venv / "bin" / "python"), "-c", _DISTS],
                                      check=True, capture_output=True, text=True).stdout)
    has_opendp = any(_norm(d["name"]) == "opendp" for d in dists)
    return {"mb": size, "install_s": install_s, "demo_s": demo_s,
            "demo_ok": demo.returncode == 0 and "Synthetic bail problem" in demo.stdout,
            "demo_err": demo.stderr[-500:], "dists": dists, "opendp": has_opendp,
            "private": "opendp installed" if has_opendp else private_release_error(venv, work)}


def report(refs: dict[str, str], runs: dict[str, list[dict]]) -> list[str]:
    names = list(refs)
    w = max(22, *(len(f"{n} ({refs[n]})") + 2 for n in names))
    cw = max(12, *(len(n) + 2 for n in names))
    head = "".join(f"{f'{n} ({refs[n]})':>{w}}" for n in names)
    lines = [f"{'':34s}{head}"]

    def row(label: str, cell) -> None:
        lines.append(f"{label:34s}" + "".join(f"{cell(n):>{w}}" for n in names))

    def secs(key: str):
        def cell(n: str) -> str:
            v = [r[key] for r in runs[n]]
            return f"{statistics.median(v):.1f}" + (
                f" ({min(v):.0f}-{max(v):.0f})" if len(v) > 1 else "")
        return cell

    row("venv size, du -sm (MiB)", lambda n: " / ".join(str(r["mb"]) for r in runs[n]))
    row(f"  target <= {TARGET_MB} MiB", lambda n: "met" if max(r["mb"] for r in runs[n])
        <= TARGET_MB else "NOT met")
    row("install s (venv + pip), median", secs("install_s"))
    row("fairdecide demo s, median", secs("demo_s"))
    row("demo ran", lambda n: "yes" if all(r["demo_ok"] for r in runs[n]) else "FAILED")
    row("distributions installed", lambda n: str(len(runs[n][0]["dists"])))
    row("OpenDP installed", lambda n: "yes" if runs[n][0]["opendp"] else "no")
    row("--dp-epsilon without it: exit 2,", lambda n: "-" if runs[n][0]["opendp"]
        else runs[n][0]["private"][:w - 2])
    lines.append("  one line naming the extra")
    lines.append("")
    # every distribution, largest first, with who requires it (in the last ref's venv,
    # else the first one that has it)
    sizes: dict[str, dict[str, float]] = {}
    info: dict[str, tuple[str, str]] = {}
    required_by: dict[str, set[str]] = {}
    for n in names:
        for d in runs[n][0]["dists"]:
            key = _norm(d["name"])
            sizes.setdefault(key, {})[n] = d["bytes"] / 2**20
            info[key] = (d["name"], d["version"])
            for r in d["requires"]:
                required_by.setdefault(_norm(r), set()).add(d["name"])
    lines.append("installed distributions, MiB (files in each RECORD), largest first:")
    lines.append(f"{'distribution':22s}{'version':>12s}" + "".join(f"{n:>{cw}s}" for n in names)
                 + "  required by (in any of the venvs)")
    for key in sorted(sizes, key=lambda k: -max(sizes[k].values())):
        name, version = info[key]
        by = ", ".join(sorted(required_by.get(key, ()))) or "-"
        lines.append(f"{name:22s}{version:>12s}" + "".join(
            f"{sizes[key][n]:{cw}.1f}" if n in sizes[key] else f"{'-':>{cw}s}" for n in names)
            + f"  {by}")
    lines.append(f"{'sum':34s}" + "".join(
        f"{sum(s.get(n, 0) for s in sizes.values()):{cw}.1f}" for n in names)
        + "  (du counts disk blocks, the RECORDs bytes)")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ref", action="append", default=None, metavar="NAME=REV",
                        help=f"a commit to measure (default before={BEFORE} after=HEAD)")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--quick", action="store_true", help="HEAD only, once")
    parser.add_argument("--max-mb", type=int, default=None,
                        help="exit 1 if a venv is larger (MiB)")
    parser.add_argument("--out", default=str(Path(__file__).parent / "results" /
                                             "install.txt"))
    args = parser.parse_args()
    specs = ["after=HEAD"] if args.quick else (args.ref or [f"before={BEFORE}", "after=HEAD"])
    repeats = 1 if args.quick else args.repeats
    with tempfile.TemporaryDirectory(prefix="bench_install_") as tmp:
        refs, checkouts = {}, {}
        for spec in specs:
            name, _, rev = spec.partition("=")
            refs[name] = export(rev or name, Path(tmp) / f"src_{name}")
            checkouts[name] = Path(tmp) / f"src_{name}"
        runs: dict[str, list[dict]] = {n: [] for n in refs}
        for i in range(repeats):
            order = list(refs) if i % 2 == 0 else list(reversed(refs))
            for n in order:
                work = Path(tmp) / f"run_{n}_{i}"
                work.mkdir()
                runs[n].append(measure(checkouts[n], work))
                print(f"# {n} #{i + 1}: {runs[n][-1]['mb']} MiB, "
                      f"{runs[n][-1]['install_s']:.0f} s install", file=sys.stderr)
                subprocess.run(["rm", "-rf", str(work / "venv")], check=True)
    lines = provenance("Core install footprint: README's main-job command in a fresh venv",
                       "bench_install.py")
    lines.append(f"# {repeats} repetition(s) per commit, alternating order; pip's wheel cache "
                 "warm; python3 " + subprocess.run(["python3", "--version"],
                                                   capture_output=True, text=True
                                                   ).stdout.split()[-1])
    lines += report(refs, runs)
    text = "\n".join(lines)
    print(text)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(text + "\n")
    failed = [n for n in refs for r in runs[n]
              if not r["demo_ok"] or r["private"] not in ("ok", "opendp installed")
              or (args.max_mb is not None and r["mb"] > args.max_mb)]
    if failed:
        for n in refs:
            for r in runs[n]:
                if not r["demo_ok"]:
                    print(f"{n}: the demo failed: {r['demo_err']}", file=sys.stderr)
        raise SystemExit(f"failed: {sorted(set(failed))}")


if __name__ == "__main__":
    main()
