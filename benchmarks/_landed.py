"""The package as it was at a git revision, checked out beside this one (a temporary
git worktree) for a benchmark's ``--landed REV``: the route landed before a change, run
in the same run as the change.

- :func:`landed_tree`: the worktree of a revision;
- :func:`fresh`: a small script run in a fresh process with a tree's package first on
  ``PYTHONPATH``, its last line of output read as JSON;
- :func:`call`: a function of a benchmark script of this folder run that way (the same
  problem for both trees: the script's own builders, on either tree's package);
- :func:`versus`: one case on the landed tree and this one, alternating, ``repeats`` times
  each: median seconds, the ratio this / landed and whether the values agree;
- :func:`compare`: :func:`versus` of a script's ``landed_case`` through :func:`call`;
- :func:`runs`: the sentence a table's notes say of how :func:`compare` ran its cases;
- :func:`table`, :class:`Table`: the ``<table>_vs_landed.txt`` file those rows make,
  with its provenance, written again after each row;
- :func:`add_arguments`: a script's ``--landed REV`` (and ``--repeats``).
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np

#: A case whose first run took longer than this (seconds) runs once per tree
#: (:func:`compare`); values agree within REL (:func:`agree`).
LONG, REL = 10.0, 1e-6

TREE = Path(__file__).resolve().parents[1]
BENCH = TREE / "benchmarks"

#: Runs ``function(*args)`` of a module of ``folder`` and prints its dict as JSON, with
#: the file of the fairdecide package it ran on (argv: folder, module, function, args).
CALL = r"""
import importlib, json, sys
sys.path.insert(0, sys.argv[1])
import fairdecide
out = getattr(importlib.import_module(sys.argv[2]), sys.argv[3])(*json.loads(sys.argv[4]))
print(json.dumps({**out, "package": fairdecide.__file__}))
"""


@contextlib.contextmanager
def landed_tree(rev: str | None) -> Iterator[Path | None]:
    """The worktree of ``rev`` (removed on exit, also after an error), or None."""
    if rev is None:
        yield None
        return
    path = Path(tempfile.mkdtemp()) / "landed"
    subprocess.run(["git", "-C", str(TREE), "worktree", "add", "--detach", str(path), rev],
                   check=True, capture_output=True)
    try:
        yield path
    finally:
        subprocess.run(["git", "-C", str(TREE), "worktree", "remove", "--force", str(path)],
                       check=True)


def fresh(tree: Path, code: str, *args: str, timeout: float | None = None) -> dict:
    """Run ``code`` in a fresh interpreter (``python -c code *args``, from a temporary
    folder) with the package at ``tree`` first on ``PYTHONPATH``; its last line of
    standard output, parsed as JSON. A failure stops the run with the end of its error;
    a run stopped after ``timeout`` seconds gives ``{"seconds": inf, "value": nan,
    "stopped": timeout}``."""
    env = dict(os.environ, PYTHONPATH=str(tree))
    try:
        out = subprocess.run([sys.executable, "-c", code, *map(str, args)], env=env,
                             cwd=tempfile.gettempdir(), capture_output=True, text=True,
                             timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"seconds": np.inf, "value": np.nan, "stopped": timeout}
    if out.returncode:
        raise SystemExit(f"{' '.join(map(str, args))} on {tree} failed:\n"
                         f"{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def call(tree: Path, module: str, function: str, *args, timeout: float | None = None
         ) -> dict:
    """``module.function(*args)`` (a script of benchmarks/, returning a dict of JSON
    values) in a fresh process on the package at ``tree``, checked to have imported that
    tree's package and not another one (or :func:`fresh`'s dict of a stopped run)."""
    got = fresh(tree, CALL, str(BENCH), module, function, json.dumps(args), timeout=timeout)
    if "stopped" in got:
        return got
    package = Path(got.pop("package")).resolve()
    if not package.is_relative_to(Path(tree).resolve()):
        raise SystemExit(f"{module}.{function} on {tree} imported {package}")
    return got


def agree(a: float, b: float, rel: float = 1e-6) -> bool:
    """|a - b| <= rel max(1, |b|)."""
    return bool(abs(a - b) <= rel * max(1.0, abs(b)))


def versus(old: Path, run, repeats: int, rel: float = REL, long: float = np.inf) -> dict:
    """``run(tree)`` (a fresh-process case returning at least ``seconds`` and ``value``)
    on the landed tree ``old`` and on this one, in turn, ``repeats`` times each (once
    only if the first run on either tree took more than ``long`` seconds): the median
    seconds of each, their ratio this / landed, whether the last values agree to ``rel``
    (:func:`agree`), the runs made per tree (``"repeats"``) and the last run of each
    (``"landed"``, ``"this"``). A run stopped by a timeout (:func:`fresh`) counts as
    infinitely long, and its values are not compared."""
    runs: dict[str, list[dict]] = {"landed": [], "this": []}
    for r in range(repeats):  # alternate, so that load falls on both alike
        if r == 1 and max(v[0]["seconds"] for v in runs.values()) > long:
            break
        for label, tree in (("landed", old), ("this", TREE)):
            runs[label].append(run(tree))
    med = {k: float(np.median([r["seconds"] for r in v])) for k, v in runs.items()}
    last = {k: v[-1] for k, v in runs.items()}
    stopped = any("stopped" in r for r in last.values())
    return {"landed_s": med["landed"], "this_s": med["this"],
            "ratio": med["this"] / med["landed"],
            "agree": None if stopped else agree(last["this"]["value"],
                                                 last["landed"]["value"], rel),
            "repeats": len(runs["this"]), **last}


def compare(old: Path, module: str, args: Sequence, repeats: int,
            long: float = LONG, timeout: float | None = None) -> dict:
    """:func:`versus` of ``module.landed_case(*args)`` run by :func:`call` (once per tree
    if a first run takes more than ``long`` seconds; a run stopped after ``timeout``)."""
    return versus(old, lambda tree: call(tree, module, "landed_case", *args,
                                         timeout=timeout), repeats, long=long)


def runs(repeats: int, values: str) -> str:
    """How :func:`compare` ran each case, for a table's notes: ``values`` names what
    was compared.

    Examples
    --------
    >>> runs(3, "the objectives")[-38:]
    'values: the objectives (relative 1e-6)'
    """
    rel = f"{REL:.0e}".replace("e-0", "e-")
    return (f"median of up to {repeats} runs per tree (1 if a first run took over {LONG:g} "
            f"s), the trees alternating; values: {values} (relative {rel})")


def add_arguments(parser, out_name: str, repeats: int | None = 3) -> None:
    """``--landed REV``, ``--timeout`` and (unless ``repeats`` is None: the script has its
    own) ``--repeats``, for a script whose comparison writes ``out_name``."""
    parser.add_argument("--landed", default=None, metavar="REV",
                        help="run instead each case on the package at git revision REV "
                             f"and on this one, in fresh processes, into {out_name}")
    parser.add_argument("--timeout", type=float, default=600.0,
                        help="with --landed: seconds after which a run is stopped (and "
                             "reported as longer)")
    if repeats is not None:
        parser.add_argument("--repeats", type=int, default=repeats,
                            help="with --landed: runs per tree (the median is reported)")


HEADER = ["| case | landed s | this s | this / landed | runs | values agree | note |",
          "|---|---|---|---|---|---|---|"]


def row(case: str, got: dict, note: str = "", key: str | None = None) -> str:
    """One line of the table from :func:`versus`'s dict; its note is ``note``, or with
    ``key`` each tree's last run's ``key``."""
    def said(run: dict) -> str:
        return (f"stopped after {run['stopped']:g} s" if "stopped" in run else run[key])

    def seconds(label: str) -> str:
        s = got[f"{label}_s"]
        return f"{s:.3f}" if np.isfinite(s) else f"> {got[label]['stopped']:g}"

    if key is not None:
        note = f"this: {said(got['this'])}; landed: {said(got['landed'])}"
    a, b = got["landed_s"], got["this_s"]
    ratio = (f"{b / a:.2f}" if np.isfinite(a) and np.isfinite(b) else
             f"> {got['this']['stopped'] / a:.2f}" if np.isfinite(a) else
             f"< {b / got['landed']['stopped']:.2f}" if np.isfinite(b) else "-")
    agree_ = ("yes" if got["agree"] else "- (a run stopped)" if got["agree"] is None else
              f"no ({got['landed']['value']:.10g} landed, {got['this']['value']:.10g} this)")
    return (f"| {case} | {seconds('landed')} | {seconds('this')} | {ratio} | "
            f"{got['repeats']} | {agree_} | {note} |")


def table(title: str, script: str, rev: str, notes: Sequence[str],
          rows: Sequence[str]) -> list[str]:
    """The lines of a ``*_vs_landed.txt`` file: provenance (the command, the landed
    revision), ``notes`` (each a ``#`` line), the table."""
    from _provenance import provenance

    return [*provenance(title, script, f"; landed: {rev}"), *(f"# {n}" for n in notes), "",
            *HEADER, *rows]


class Table:
    """The ``*_vs_landed.txt`` file at ``out``: :func:`table`'s lines, written again with
    each row added (a long run that stops keeps what it measured)."""

    def __init__(self, out: Path, title: str, script: str, rev: str,
                 notes: Sequence[str]) -> None:
        self.out, self.rows = Path(out), []
        self.head = (title, script, rev, notes)
        print("\n".join(table(*self.head, [])), flush=True)

    def add(self, case: str, got: dict, note: str = "", key: str | None = None) -> None:
        """:func:`row` of ``got``, printed and written."""
        self.rows.append(row(case, got, note, key))
        print(self.rows[-1], flush=True)
        self.out.parent.mkdir(parents=True, exist_ok=True)
        self.out.write_text("\n".join(table(*self.head, self.rows)) + "\n")
