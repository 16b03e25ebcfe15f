"""Escaping the prose ``|`` of plain-text docstrings for reST (used by docs/conf.py).

Kept apart from conf.py, which imports docutils, so the test suite can check it without
the docs extra installed."""

from __future__ import annotations

import re

_VERBATIM = re.compile(r"(``.*?``|:math:`[^`]*`|`[^`]*`_?)")


def escape_pipes(lines: list[str]) -> list[str]:
    """``lines`` of a plain-text docstring with each prose ``|`` escaped for reST."""
    out: list[str] = []
    block_indent: int | None = None  # indent of the line opening a literal block
    in_doctest = False
    for line in lines:
        stripped = line.lstrip()
        indent = len(line) - len(stripped)
        if block_indent is not None:
            if not stripped or indent > block_indent:
                out.append(line)
                continue
            block_indent = None
        if in_doctest:
            if stripped:
                out.append(line)
                continue
            in_doctest = False
        if stripped.startswith(">>>"):
            in_doctest = True
            out.append(line)
            continue
        table_or_line_block = stripped.startswith(("| ", "+-", "+=")) or stripped == "|"
        if table_or_line_block or stripped.startswith(".. ") or "|" not in line:
            out.append(line)
        else:
            parts = _VERBATIM.split(line)
            out.append("".join(part if i % 2 else part.replace("|", r"\|")
                               for i, part in enumerate(parts)))
        if stripped.startswith(".. ") or stripped.endswith("::"):
            block_indent = indent
    return out
