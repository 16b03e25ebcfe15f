"""The package as it was at a git revision, checked out beside this one (a temporary
git worktree) for a benchmark's ``--landed REV``: the route landed before a change, run
in the same run as the change."""

from __future__ import annotations

import contextlib
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

TREE = Path(__file__).resolve().parents[1]


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
