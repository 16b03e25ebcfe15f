"""The checker behind tests/test_claims.py: measured figures in Markdown pages and the
results files they cite (the convention is in that file's docstring and in
docs/benchmarks.md, "Quoting a measurement")."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

_NUM = r"(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?"
_UNIT = (r"(%|x(?![\w-])|×|times\b|-fold\b|ms\b|µs\b|us\b|s\b|min\b|minutes?\b|seconds?\b"
         r"|hours?\b|h\b|KB\b|kB\b|MB\b|GB\b|KiB\b|MiB\b|GiB\b)")
FIGURE = re.compile(r"(?<![\w.,^$])" + _NUM + r"(?:\s?(?:to|-|–|/)\s?" + _NUM + r")?"
                    + r"\s?" + _UNIT)
#: A percentage that names a nominal level, not a measurement.
LEVEL = re.compile(r"(?<![\w.])(?:80|90|95|99)%(?=(?:[\s-]+(?:Wilson|Clopper-Pearson|"
                   r"confidence|credible|bootstrap|posterior|normal|two-sided))*[\s-]+"
                   r"(?:interval|intervals|CI|level|band|quantile|set))"
                   r"|(?<=\bat )(?:80|90|95|99)%")
CITE = re.compile(r"benchmarks/results/(?:[\w.+-]+/)*[\w+-]+\.[\w.]*\w")
#: A results file named without its folder (``matching.txt``, after a first full mention).
BARE = re.compile(r"(?<![\w/.-])([\w+-]+\.(?:txt|csv))\b")
NUMBER = re.compile(r"(?<![\d.])(\d+(?:,\d{3})*)(\.\d+)?([eE][-+]?\d+)?(\s?" + _UNIT + ")?")
RATIO_UNITS = {"x", "×", "times", "-fold"}
#: How a figure in this unit may be printed in a results file: the value times each.
SCALES = {"%": (1.0, 100.0), "s": (1.0, 60.0, 1e-3), "seconds": (1.0, 60.0, 1e-3),
          "min": (1.0, 1 / 60), "minute": (1.0, 1 / 60), "minutes": (1.0, 1 / 60),
          "ms": (1.0, 1000.0), "µs": (1.0, 1e6), "us": (1.0, 1e6),
          "h": (1.0, 1 / 3600), "hour": (1.0, 1 / 3600), "hours": (1.0, 1 / 3600)}


@dataclass(frozen=True)
class Block:
    """A paragraph, list or table of a page: its first line, text and section."""

    page: str
    line: int
    text: str
    section: int


@dataclass(frozen=True)
class Figure:
    page: str
    line: int
    text: str
    value: float
    decimals: int
    unit: str


def blocks(page: Path, root: Path) -> list[Block]:
    """The page's prose split at blank lines, headings and code fences (skipped)."""
    out: list[Block] = []
    cur: list[str] = []
    start, section, fence = 0, 0, False
    name = page.relative_to(root).as_posix()

    def flush() -> None:
        if cur:
            out.append(Block(name, start, " ".join(cur), section))
            cur.clear()

    for k, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
        stripped = line.strip()
        if stripped.startswith(("```", "~~~")):
            flush()
            fence = not fence
            continue
        if fence:
            continue
        if not stripped or stripped.startswith("#"):
            flush()
            section += stripped.startswith("#")
            continue
        if not cur:
            start = k
        cur.append(stripped)
    flush()
    return out


def figures(block: Block) -> list[Figure]:
    """The figures of a block, outside nominal levels."""
    levels = [m.span() for m in LEVEL.finditer(block.text)]
    out = []
    for m in FIGURE.finditer(block.text):
        if any(a <= m.start() < b for a, b in levels):
            continue
        unit = m.group(5)
        if unit in ("x", "×") and re.match(r"\s*\d", block.text[m.end():]):
            continue  # "500 x 20" is a size
        for whole, frac in ((m.group(1), m.group(2)), (m.group(3), m.group(4))):
            if whole is not None:
                out.append(Figure(block.page, block.line, m.group(0),
                                  float(whole.replace(",", "") + (frac or "")),
                                  len(frac) - 1 if frac else 0, unit))
    return out


def numbers(text: str) -> list[float]:
    return [float(m.group(1).replace(",", "") + (m.group(2) or "") + (m.group(3) or ""))
            for m in NUMBER.finditer(text)]


_TIME_UNITS = {"s", "ms", "µs", "us", "min", "minute", "minutes", "second", "seconds", "h",
               "hour", "hours", "sec"}
_MEMORY_UNITS = {"KB", "kB", "MB", "GB", "KiB", "MiB", "GiB"}
#: A column header naming a time or a memory size: "seconds", "fit s", "time_s", "MB".
_HEADER = {"time": re.compile(r"(?:^|[\s_(/])(?:s|sec|secs|seconds|ms|min|minutes|time|wall)"
                              r"(?:$|[\s_)/,.])", re.IGNORECASE),
           "memory": re.compile(r"(?:^|[\s_(])(?:MB|GB|KB|MiB|GiB|memory|rss)(?:$|[\s_)])")}


def _family(unit: str | None) -> str | None:
    if unit in _TIME_UNITS:
        return "time"
    return "memory" if unit in _MEMORY_UNITS else None


def _header_family(cell: str) -> str | None:
    return next((f for f, rx in _HEADER.items() if rx.search(cell.strip())), None)


def _is_header(line: str, after: list[str]) -> bool:
    """A line of column names over a table aligned with spaces: two or more cells
    (separated by two spaces or more), no number with decimals, and one within the next
    two lines (a ruler or a line of index names between them)."""
    if len(re.findall(r"\S+(?: \S+)*", line)) < 2 or re.search(r"\d\.\d", line):
        return False
    below = [a for a in after if not re.fullmatch(r"\s*[-=]{10,}[-=\s+]*", a)]
    return any(re.search(r"\d\.\d", a) for a in below)


def typed_numbers(text: str, csv: bool = False) -> dict[str, list[float]]:
    """The numbers of a results file by what they measure: "time" and "memory" (printed
    with such a unit, or in a column whose header names one: a pipe table, a table
    aligned with spaces, a CSV file), "measured" (any number printed with decimals or a
    unit: not a bare count) and "all"."""
    out: dict[str, list[float]] = {"time": [], "memory": [], "measured": [], "all": []}

    def add(m: re.Match, column: str | None) -> None:
        value = float(m.group(1).replace(",", "") + (m.group(2) or "") + (m.group(3) or ""))
        out["all"].append(value)
        if m.group(2) or m.group(3) or m.group(4):
            out["measured"].append(value)
        family = _family(m.group(5)) or column
        if family:
            out[family].append(value)

    lines = text.splitlines()
    columns: list[str | None] = []  # pipe or CSV: family of each column
    ruled: list[tuple[int, int, str | None]] = []  # aligned table: header cells' spans
    for k, line in enumerate(lines):
        if csv:
            cells = line.split(",")
            if k == 0:
                columns = [_header_family(c.replace("_", " ")) for c in cells]
                continue
            for cell, fam in zip(cells, columns, strict=False):
                for m in NUMBER.finditer(cell):
                    add(m, fam)
            continue
        if line.startswith("|"):
            cells = line.strip().strip("|").split("|")
            nxt = lines[k + 1] if k + 1 < len(lines) else ""
            if re.fullmatch(r"\|[\s:|-]+\|?\s*", nxt):
                columns = [_header_family(c) for c in cells]
                continue
            for cell, fam in zip(cells, columns, strict=False):
                for m in NUMBER.finditer(cell):
                    add(m, fam)
            continue
        columns = []
        if re.fullmatch(r"\s*[-=]{10,}[-=\s+]*", line):
            continue  # a ruler under a header
        if not line.strip():
            ruled = []
            continue
        if _is_header(line, lines[k + 1:k + 3]):
            ruled = [(c.start(), c.end(), _header_family(c.group()))
                     for c in re.finditer(r"\S+(?: \S+)*", line)]
            continue
        for m in NUMBER.finditer(line):
            fam = next((f for a, b, f in ruled if a < m.end() and m.start() < b), None)
            add(m, fam)
    return out


def candidates(fig: Figure, found: dict[str, list[float]]) -> list[float]:
    """The numbers of the sources a figure may be read from: a ratio from any; a time or
    a size from those the file prints as one and, when the figure has two significant
    digits or more, from any printed with decimals (a one-digit figure such as "2 s"
    would match too much by chance); a percentage from any printed with decimals or a
    unit (a share, not a count)."""
    if fig.unit in RATIO_UNITS:
        return found.get("all", [])
    family = _family(fig.unit)
    if family is None:
        return found.get("measured", [])
    digits = len(f"{fig.value:.{fig.decimals}f}".replace(".", "").lstrip("0"))
    return found.get(family, []) + (found.get("measured", []) if digits >= 2 else [])


def _readings(fig: Figure, w: float) -> list[float]:
    """What a number w of a source may read as in the figure's unit: w itself, w in the
    unit's other scales (seconds as minutes, a share as a percentage) and, for a
    percentage, the change a ratio w stands for (1.047 or 0.953 as 4.7%)."""
    out = [w * scale for scale in SCALES.get(fig.unit, (1.0,))]
    if fig.unit == "%":
        out.append(abs(1.0 - w) * 100.0)
    return out


def rounds_to(fig: Figure, candidates: list[float]) -> bool:
    half = 0.5 * 10.0 ** -fig.decimals + 1e-9
    return any(abs(r - fig.value) <= half for w in candidates for r in _readings(fig, w))


def derived_from_two(fig: Figure, candidates: list[float]) -> bool:
    """A ratio as the quotient a / b, or a percentage as the change |a / b - 1|, of two
    numbers of the figure's own paragraph."""
    ratios = [a / b for a in candidates for b in candidates if a > 0 and b > 0 and a != b]
    return rounds_to(fig, ratios)


def check(root: Path, pages: list[Path], not_measured=()) -> list[str]:
    """Every problem found: a figure with no source, a figure not in its sources, a
    named results file that does not exist, an allowlist entry that matches nothing."""
    problems: list[str] = []
    used = set()
    cache: dict[str, dict[str, list[float]] | None] = {}

    def read(name: str) -> dict[str, list[float]] | None:
        if name not in cache:
            path = root / name
            cache[name] = typed_numbers(path.read_text(encoding="utf-8", errors="replace"),
                                        csv=path.suffix == ".csv") if path.is_file() else None
        return cache[name]

    for page in pages:
        sources: list[str] = []
        section = -1
        for block in blocks(page, root):
            cited = [c.rstrip(".") for c in CITE.findall(block.text)]
            cited += [f"benchmarks/results/{b}" for b in BARE.findall(block.text)
                      if (root / "benchmarks" / "results" / b).is_file()]
            if block.section != section:
                sources, section = [], block.section
            if cited:
                sources = cited
            for name in cited:
                if read(name) is None:
                    problems.append(f"{block.page}:{block.line}: {name} does not exist")
            skip = []
            for k, (pg, phrase, _) in enumerate(not_measured):
                if pg == block.page and phrase in block.text:
                    used.add(k)
                    at = block.text.index(phrase)
                    skip.append((at, at + len(phrase)))
            found: dict[str, list[float]] = {}
            for name in sources:
                for kind, vals in (read(name) or {}).items():
                    found.setdefault(kind, []).extend(vals)
            own = numbers(block.text)
            for fig in figures(block):
                if any(fig.text in block.text[a:b] for a, b in skip):
                    continue
                if fig.unit in RATIO_UNITS and derived_from_two(fig, own):
                    continue  # arithmetic on the paragraph's own numbers
                if not sources:
                    problems.append(f"{fig.page}:{fig.line}: {fig.text!r} cites no "
                                    "benchmarks/results file")
                elif not (rounds_to(fig, candidates(fig, found))
                          or (fig.unit == "%" and derived_from_two(fig, own))):
                    problems.append(f"{fig.page}:{fig.line}: {fig.value:g} of {fig.text!r} "
                                    f"is not in {', '.join(sources)}")
    for k, (pg, phrase, _) in enumerate(not_measured):
        if k not in used:
            problems.append(f"{pg}: NOT_MEASURED phrase {phrase!r} matches nothing")
    return problems
