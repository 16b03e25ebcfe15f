"""The lines a results file opens with: what it is, the command that wrote it, and when,
where and at which commit it ran."""

from __future__ import annotations

import datetime
import os
import platform
import shlex
import subprocess
import sys
from pathlib import Path


def provenance(title: str, script: str, extra: str = "") -> list[str]:
    """``# title``, ``# command: python benchmarks/<script> <args>`` and ``# date: ...;
    machine: nproc, arch, python; commit: <short sha>`` followed by ``extra`` (if any)."""
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True, cwd=Path(__file__).parent).stdout.strip()
    except OSError:
        commit = ""
    return [
        f"# {title}",
        f"# command: python {shlex.join([f'benchmarks/{script}', *sys.argv[1:]])}",
        f"# date: {datetime.datetime.now():%Y-%m-%d %H:%M}; machine: nproc {os.cpu_count()}, "
        f"{platform.machine()}, python {platform.python_version()}; commit: "
        f"{commit or 'unknown'}{extra}",
    ]
