"""README.md's python code blocks run verbatim, in order, in one shared namespace.

Later blocks use names defined by earlier ones (``problem``, ``world``, ``data``, ...),
so block ``i`` is run only after blocks ``0 .. i-1``; running a single block's test on
its own (``-k``) runs the blocks before it first. A block fails its test by raising;
what it prints is left to pytest's capture. Bash blocks are not run.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"

_FENCE = re.compile(r"^```python[ \t]*\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)


def _python_blocks() -> list[tuple[int, str]]:
    """(first code line number in README.md, source) of each ```python block, in order."""
    text = README.read_text(encoding="utf-8")
    return [
        (text.count("\n", 0, m.start(1)) + 1, m.group(1)) for m in _FENCE.finditer(text)
    ]


BLOCKS = _python_blocks()

# The shared namespace, and how far the blocks have run in it (blocks run in file order).
_namespace: dict[str, Any] = {"__name__": "__readme__"}
_progress: dict[str, int | None] = {"ran": 0, "failed": None}


def _run_block(index: int) -> None:
    line, source = BLOCKS[index]
    # Pad with blank lines so tracebacks give README.md's own line numbers.
    code = compile("\n" * (line - 1) + source, str(README), "exec")
    exec(code, _namespace)


def test_readme_has_python_blocks() -> None:
    assert BLOCKS, f"no ```python blocks found in {README}"


@pytest.mark.parametrize(
    "index", range(len(BLOCKS)), ids=[f"line{line}" for line, _ in BLOCKS]
)
def test_readme_block_runs(index: int) -> None:
    failed = _progress["failed"]
    if failed is not None and failed < index:
        pytest.fail(f"README block at line {BLOCKS[failed][0]} failed; later blocks need "
                    "its names")
    while _progress["ran"] <= index:
        current = _progress["ran"]
        try:
            _run_block(current)
        except BaseException:
            _progress["failed"] = current
            raise
        _progress["ran"] = current + 1


def test_readme_command_line_options_exist(capsys) -> None:
    """Every ``--option`` the README names is one the ``fairdecide`` command accepts."""
    from fairdecide.cli import main

    assert main(["--help"]) == 0 and main(["demo", "--help"]) == 0
    assert main(["audit", "--help"]) == 0
    known = set(re.findall(r"(--[a-z][a-z-]*)", capsys.readouterr().out))
    named = set(re.findall(r"`[^`]*?(--[a-z][a-z-]*)", README.read_text(encoding="utf-8")))
    assert {"--data-home", "--version", "--show", "--epsilon"} <= named
    assert named <= known, f"README names options the CLI lacks: {named - known}"
