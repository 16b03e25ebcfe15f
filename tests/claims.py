"""The checker behind tests/test_claims.py: measured figures in Markdown pages and the
row or line of the results files they cite (the convention is in that file's docstring
and in docs/benchmarks.md, "Quoting a measurement").

**A results file** is read as tables (pipe tables, tables aligned with spaces as pandas
prints them, CSV files) and its other lines of text. A table's row is named by its
labels, the words of its text columns (a parenthesis in a label explains it rather than
names it), and by its keys, its index and leading numeric columns before the first one
of measurements (a single digit is no key); a number in a row by its column's header. A
line of text is a row of one label, its words.

**A figure's words** are those of its clause (a sentence, or a part of one between
semicolons) around it, split where naming changes hands (",", ";", ":", "and",
"against", "than", ...): its own piece, the pieces before it back to one that holds
another number, the pieces after it while they continue a list, and a parenthesis right
after it; not the word after another number ("7 rounds"), nor, inside a parenthesis,
what follows it (a parenthesis names what stands before it). A figure that names
something inherits, for the rows, the words of the figures before it in its clause ("for
separation, scenario maximin broke epsilon in 63.0%, Bayes in 80.8%"), unless it is "of
the others". A figure in a page's table is named by its row's cells without numbers, and
by its column's header if it is the first number of its cell.

**Reading a figure** from a table: for each labelled column, the labels that share the
most words with the figure's own (else its inherited ones), at least two or a third of
the label (three for a line of text), less a label holding all the words of another
chosen one (it names more than the figure says); if the figure names only what all the
column's labels share, the label with nothing more. Then the key its clause quotes: the
first that follows it (up to a relative clause or the end of its parenthesis), else the
nearest before it. Then the columns whose headers share the most of its words that did
not name the row. Every table of its sources is read so (tables do not exclude each
other); what the words do not name is not narrowed. The ends of a range ("0.3400-0.5113")
are read from any row and column of the sources, a percentage from any column (it is
often a share or a change printed elsewhere in the row).
"""

from __future__ import annotations

import bisect
import dataclasses
import functools
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

# ---------------------------------------------------------------------- numbers in text
_NUM = r"(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?"
_UNIT = (r"(%|x(?![\w-])|×|times\b|-fold\b|ms\b|µs\b|us\b|s\b|min\b|minutes?\b|seconds?\b"
         r"|hours?\b|h\b|KB\b|kB\b|MB\b|GB\b|KiB\b|MiB\b|GiB\b)")
#: A figure with a unit: "5.4 s", "1,226 MB", "4.8 times", "12.4%", "0.12-0.14 s".
FIGURE = re.compile(r"(?<![\w.,^$])" + _NUM + r"(?:\s?(?:to|-|–|/)\s?" + _NUM + r")?"
                    + r"\s?" + _UNIT)
#: A count of a count: "19 of 20", "0/500".
FRACTION = re.compile(r"(?<![\w.,/^$=-])(\d{1,3}(?:,\d{3})+|\d+)\s?(?:/|\bof\b)\s?"
                      r"(\d{1,3}(?:,\d{3})+|\d+)(?![\w.,/]?\d)")
#: A unitless measurement: a number with decimals ("0.5246", "-0.0115", "0.3400-0.5113"),
#: a number of thousands ("7,214") or a count of something ("141 conditionals").
PLAIN = re.compile(r"(?<![\w.,^$/=])[+-]?(?:(\d+)(\.\d+)(?:\s?(?:to|-|–)\s?[+-]?(\d+)(\.\d+))?"
                   r"|(\d{1,3}(?:,\d{3})+)(?:\s?(?:to|-|–)\s?(\d{1,3}(?:,\d{3})+))?"
                   r"|(\d{2,})(?=\s[A-Za-z]))(?![\w.]*\d)")
#: A percentage that names a nominal level, not a measurement.
LEVEL = re.compile(r"(?<![\w.])(?:80|90|95|99)%(?=(?:[\s-]+(?:Wilson|Clopper-Pearson|"
                   r"confidence|credible|bootstrap|posterior|normal|two-sided))*[\s-]+"
                   r"(?:interval|intervals|CI|level|band|quantile|set))"
                   r"|(?<=\bat )(?:80|90|95|99)%")
#: Numbers that are not measurements: an assignment ("K = 128"), a reference ("issue
#: 42", "Example 13"), a year, a version, an inline code span.
NOT_A_FIGURE = re.compile(
    r"`[^`]*`|=\s*[+-]?[\d.,]+(?:e[-+]?\d+)?|\b(?:[Ii]ssues?|[Ii]tems?|[Ff]indings?|[Ee]xamples?|"
    r"[Tt]ables?|[Ff]igures?|[Ss]ections?|steps?|rounds?|PR|#)\s+\d+(?:,\s*\d+)*"
    r"|\b(?:19|20)\d\d\b(?!,\d)|\d+\.\d+\.\d+|\b\d+(?:\.\d+)?e[-+]?\d+\b|\w+_\d+|\d+-[A-Za-z]\w*")
CITE = re.compile(r"benchmarks/results/(?:[\w.+-]+/)*[\w+-]+\.[\w.]*\w")
#: A results file named without its folder (``matching.txt``, after a first full mention).
BARE = re.compile(r"(?<![\w/.-])([\w+-]+\.(?:txt|csv))\b")
NUMBER = re.compile(r"(?<![\d.])(\d+(?:,\d{3})*)(\.\d+)?([eE][-+]?\d+)?(\s?" + _UNIT + ")?")
SOURCE_FRACTION = re.compile(r"(?<![\d.])(\d+)\s?/\s?(\d+)(?![\d.])")
RATIO_UNITS = {"x", "×", "times", "-fold"}
#: How a figure in this unit may be printed in a results file: the value times each.
SCALES = {"%": (1.0, 100.0), "s": (1.0, 60.0, 1e-3), "seconds": (1.0, 60.0, 1e-3),
          "min": (1.0, 1 / 60), "minute": (1.0, 1 / 60), "minutes": (1.0, 1 / 60),
          "ms": (1.0, 1000.0), "µs": (1.0, 1e6), "us": (1.0, 1e6),
          "h": (1.0, 1 / 3600), "hour": (1.0, 1 / 3600), "hours": (1.0, 1 / 3600)}
_TIME_UNITS = {"s", "ms", "µs", "us", "min", "minute", "minutes", "second", "seconds", "h",
               "hour", "hours", "sec"}
_MEMORY_UNITS = {"KB", "kB", "MB", "GB", "KiB", "MiB", "GiB"}
#: A column header naming a time or a memory size: "seconds", "fit s", "time_s", "MB".
_HEADER = {"time": re.compile(r"(?:^|[\s_(/])(?:s|sec|secs|seconds|ms|min|minutes|time|wall)"
                              r"(?:$|[\s_)/,.])", re.IGNORECASE),
           "memory": re.compile(r"(?:^|[\s_(])(?:MB|GB|KB|MiB|GiB|memory|rss)(?:$|[\s_)])")}

# ------------------------------------------------------------------------------- words
_WORD = re.compile(r"[A-Za-z][A-Za-z'+-]*[A-Za-z+]|[A-Za-z]")
STOP = frozenset(
    "a an the of in on at to for by with and or but is are was were be been it its this "
    "that these those as from than then so do does did has have had not no nor s same "
    "each every all any both more most less least much many some only also about into "
    "over under up down out one two three four five which who whose what when where here "
    "there their they them we our you your he she his her i e g ie eg vs via per cent "
    "against beside within without while".split())


def _norm(word: str) -> str:
    """A word as it is compared: lower case, no possessive or plural, its first six
    letters ("certified" and "certificate", "estimate" and "estimated" alike)."""
    w = word.lower().strip("'-")
    w = w[:-2] if w.endswith("'s") else w
    if w.endswith("ies") and len(w) > 4:
        w = w[:-3] + "y"
    elif w.endswith("s") and len(w) > 3 and not w.endswith(("ss", "us", "is")):
        w = w[:-1]
    return w[:6]


def words(text: str) -> list[str]:
    """The content words of a text, normalised (:func:`_norm`), in order, a hyphenated
    word also as its parts ("per-group": per-gro, group); numbers and common words left
    out."""
    return list(_words(text))


@functools.cache
def _words(text: str) -> tuple[str, ...]:
    out = []
    for m in _WORD.finditer(text):
        parts = m.group().split("-")
        for w in map(_norm, [m.group()] + (parts if len(parts) > 1 else [])):
            if (w and w not in STOP and len(w) > 1) or w in {"y", "k", "n", "t"}:
                out.append(w)
    return tuple(out)


# ------------------------------------------------------------------------ results files
class Cell(NamedTuple):
    """A number of a results file: its value, what it measures ("time", "memory" or
    None), whether it is a measurement (printed with decimals or a unit, not a bare
    count), the words that name it (its column's header and, in a text column, its
    cell's words; none on a line of text), for a count printed "a/b" its denominator,
    and whether it is one of its row's keys."""

    value: float
    family: str | None
    measured: bool
    words: frozenset
    of: float | None = None
    key: bool = False
    denominator: bool = False  # the b of a count printed "a/b"


@dataclass
class Row:
    """A table's row or a line of text: its labels (one word set per text column, or the
    line's words), its keys (leading numeric columns) and its numbers."""

    labels: tuple
    keys: tuple
    cells: list


@dataclass
class Table:
    rows: list = field(default_factory=list)
    prose: bool = False  # lines of text: a line is named by three of its words or more
    _every: list | None = None
    _options: dict = field(default_factory=dict)

    def every(self) -> list[frozenset]:
        """For each labelled column, the words all its labels share."""
        if self._every is None:
            n = len(self.rows[0].labels) if self.rows else 0
            self._every = [frozenset.intersection(*(r.labels[j] for r in self.rows))
                           for j in range(n)]
        return self._every

    def options(self, j: int) -> list[frozenset]:
        """The labels of column ``j`` less the words they all share, in a fixed order."""
        if j not in self._options:
            every = self.every()[j]
            self._options[j] = sorted({r.labels[j] - every for r in self.rows}, key=sorted)
        return self._options[j]


def _family(unit: str | None) -> str | None:
    if unit in _TIME_UNITS:
        return "time"
    return "memory" if unit in _MEMORY_UNITS else None


def _header_family(cell: str) -> str | None:
    return next((f for f, rx in _HEADER.items() if rx.search(cell.strip())), None)


_PLAIN_NUMBER = re.compile(r"\s*-?(\d+)(\.\d+)?\s*")
_DIGIT = re.compile(r"\d")


def _cells(text: str, column: str | None, names: frozenset, key: bool = False
           ) -> list[Cell]:
    """The numbers of a piece of a results file, ``names`` the words that name them."""
    plain = _PLAIN_NUMBER.fullmatch(text)
    if plain:  # most cells of a table: one number
        return [Cell(float(plain.group(1) + (plain.group(2) or "")), column,
                     bool(plain.group(2)), names, None, key)]
    if not _DIGIT.search(text):
        return []
    out = []
    fracs = {m.start(1): float(m.group(2)) for m in SOURCE_FRACTION.finditer(text)}
    below = {m.start(2) for m in SOURCE_FRACTION.finditer(text)}
    for m in NUMBER.finditer(text):
        value = float(m.group(1).replace(",", "") + (m.group(2) or "") + (m.group(3) or ""))
        out.append(Cell(value, _family(m.group(5)) or column,
                        bool(m.group(2) or m.group(3) or m.group(4)), names,
                        fracs.get(m.start(1)), key, m.start(1) in below))
    return out


def _is_header(line: str, after: list[str]) -> bool:
    """A line of column names over a table aligned with spaces: two or more cells
    (separated by two spaces or more), no number with decimals, and one within the next
    two lines (a ruler or a line of index names between them)."""
    if len(re.findall(r"\S+(?: \S+)*", line)) < 2 or re.search(r"\d\.\d", line):
        return False
    below = [a for a in after if not re.fullmatch(r"\s*[-=]{10,}[-=\s+]*", a)]
    return any(re.search(r"\d\.\d", a) for a in below)


_LETTERS = re.compile(r"[A-Za-z]{2,}")
_NOT_WORDS = re.compile(r"(?i)\b(?:nan|inf|e[-+]?\d+)\b")
_TWO_DECIMALS = re.compile(r"\d\.\d\d")
_KEY = re.compile(r"\s*(?:-|\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?(?:e[-+]?\d+)?)?\s*")
_NAME_FIRST = re.compile(r"\s*[A-Za-z]")


@functools.cache
def _has_words(cell: str) -> bool:
    """Whether a cell holds words (not only numbers, "nan", "inf" or exponents)."""
    return bool(_LETTERS.search(cell)) and bool(_LETTERS.search(_NOT_WORDS.sub("", cell)))


def _outside(label: str) -> str:
    """A label less its parentheses (they explain it: "misspecified (a group effect the
    model does not see)"), unless that leaves nothing."""
    out = re.sub(r"\([^()]*\)", " ", label)
    return out if out.strip() else label


def _table(header: list[str], body: list[list[str]], n_index: int = 0) -> Table:
    """A table from its header cells and its rows' cells: text columns are labels; the
    numeric index columns (the first ``n_index``) and those before the first column with
    a number of two decimals or more are keys."""
    n = len(header)
    body = [r + [""] * (n - len(r)) for r in body]
    text_cols = [j for j in range(n) if any(_has_words(r[j]) for r in body)]
    label_cols = [j for j in text_cols  # a name in every row, not numbers with a note
                  if all(_NAME_FIRST.match(r[j]) for r in body if r[j].strip())]
    first_measure = next((j for j in range(n_index, n) if j not in text_cols and any(
        _TWO_DECIMALS.search(r[j]) for r in body)), n)
    key_cols = [j for j in range(first_measure) if j not in text_cols and all(
        _KEY.fullmatch(r[j]) for r in body)]  # a plain number ("-" where it has none)
    names = [frozenset(words(h.replace("_", " "))) for h in header]
    fams = [_header_family(h.replace("_", " ")) for h in header]
    table = Table()
    for r in body:
        cells = []
        for j in range(n):
            cells += _cells(r[j], fams[j], names[j] | frozenset(words(r[j]))
                            if j in text_cols else names[j], j in key_cols)
        keys = []
        for j in key_cols:
            m = NUMBER.search(r[j])
            keys.append(float(m.group(1).replace(",", "") + (m.group(2) or "")
                              + (m.group(3) or "")) if m else None)
        table.rows.append(Row(tuple(frozenset(words(_outside(r[j]))) | names[j]
                                    for j in label_cols), tuple(keys), cells))
    return table


_TOKEN = re.compile(r"[^\s\d(][^\s]*(?: [^\s\d][^\s]*)*|\S+")


_RULER = re.compile(r"\s*[-=]{10,}[-=\s+]*")


def _header_columns(header: str, data: list[str]) -> list[tuple[int, int]]:
    """The columns of a table aligned with spaces, from its header's words: two
    neighbouring words name one column unless some position between them is blank in
    every data line; a word with nothing under it joins the next one ("pairs in LP")."""
    found = [(m.start(), m.end()) for m in re.finditer(r"\S+", header)]
    if not found:
        return []

    def blank(p: int) -> bool:
        return all(p >= len(line) or line[p] == " " for line in data)

    def filled(a: int, b: int) -> bool:
        return any(line[a:b].strip() for line in data)

    cols = [list(found[0])]
    for a, b in found[1:]:
        if any(blank(p) for p in range(cols[-1][1], a)) and filled(cols[-1][0], cols[-1][1]):
            cols.append([a, b])
        else:
            cols[-1][1] = b
    return [(a, b) for a, b in cols]


def _aligned(lines: list[str], k: int, tables: list[Table], notes: list[str]) -> int:
    """The table aligned with spaces whose header is line ``k`` (as pandas prints one:
    index columns left of the header, named on the line below it, their repeated values
    left blank; lines of notes between its rows go to ``notes``); returns the line
    after it."""
    header = lines[k]
    k += 1
    while k < len(lines) and _RULER.fullmatch(lines[k]):
        k += 1  # a ruler under the header
    index_line = ""
    if k < len(lines) and lines[k].strip() and not re.search(r"\d", lines[k]):
        index_line = lines[k]  # the index columns' names
        k += 1
    data: list[str] = []
    while k < len(lines) and lines[k].strip():
        if not _RULER.fullmatch(lines[k]):
            data.append(lines[k])
        k += 1
    n_words = len(header.split())
    rows = [line for line in data  # not a line of notes between the rows
            if len(re.findall(r"(?<!\S)[-+]?\d[\d,.e+-]*(?!\S)", line)) * 2 >= n_words]
    notes.extend(line for line in data if line not in rows)
    data = rows or data
    spans = _header_columns(header, data)
    if not spans:
        return k
    first = spans[0][0]
    index = [(c.start(), c.end()) for c in re.finditer(r"\S+", index_line) if c.start() < first]
    names = [index_line[a:b] for a, b in index] + [header[a:b] for a, b in spans]
    body: list[list[str]] = []
    for row in data:
        cells = [""] * (len(index) + len(spans))
        for m in _TOKEN.finditer(row):
            if index and m.start() < first:
                j = min(range(len(index)), key=lambda j: abs(index[j][0] - m.start()))
            else:
                j = len(index) + min(range(len(spans)), key=lambda j: (
                    max(spans[j][0] - m.end(), m.start() - spans[j][1], 0),
                    abs(spans[j][1] - m.end())))
            cells[j] = (cells[j] + " " + m.group()).strip()
        for j in range(len(index)):  # a repeated index value is left blank
            if not cells[j] and body and not any(cells[:j]):
                cells[j] = body[-1][j]
        body.append(cells)
    tables.append(_table(names, body, len(index)))
    return k


def read_results(text: str, csv: bool = False) -> list[Table]:
    """A results file as tables (pipe, aligned with spaces, CSV) and one table of its
    other lines of text."""
    lines = text.splitlines()
    tables: list[Table] = []
    prose = Table(prose=True)
    if csv:
        rows = [line.split(",") for line in lines if line.strip()]
        return [_table(rows[0], rows[1:])] if rows else []
    k = 0
    while k < len(lines):
        line = lines[k]
        nxt = lines[k + 1] if k + 1 < len(lines) else ""
        if line.startswith("|") and re.fullmatch(r"\|[\s:|-]+\|?\s*", nxt):
            header = line.strip().strip("|").split("|")
            body = []
            k += 2
            while k < len(lines) and lines[k].startswith("|"):
                body.append(lines[k].strip().strip("|").split("|"))
                k += 1
            tables.append(_table(header, body))
            continue
        if line.strip() and _is_header(line, lines[k + 1:k + 3]):
            notes: list[str] = []
            k = _aligned(lines, k, tables, notes)
            prose.rows += [Row((frozenset(words(n)),), (), _cells(n, None, frozenset()))
                           for n in notes]
            continue
        if line.strip() and not re.fullmatch(r"\s*[-=#|]+\s*", line):
            prose.rows.append(Row((frozenset(words(line)),), (), _cells(line, None,
                                                                       frozenset())))
        k += 1
    return [*tables, prose] if prose.rows else tables


# --------------------------------------------------------------------------- the pages
@dataclass(frozen=True)
class Block:
    """A paragraph, list or table of a page: its first line, text, section and lines."""

    page: str
    line: int
    text: str
    section: int
    lines: tuple = ()


@dataclass(frozen=True)
class Figure:
    page: str
    line: int
    text: str
    value: float
    decimals: int
    unit: str | None
    start: int = 0
    end: int = 0
    of: float | None = None
    span: bool = False  # an end of a range ("0.3400-0.5113"): of several rows
    scale: float = 1.0  # "2.5 billion": the value is 2.5e9, rounded to 0.1e9


def blocks(page: Path, root: Path) -> list[Block]:
    """The page's prose split at blank lines, headings and code (fenced, or a paragraph
    indented by four spaces), which is skipped."""
    out: list[Block] = []
    cur: list[str] = []
    start, section, fence = 0, 0, False
    name = page.relative_to(root).as_posix()

    def flush() -> None:
        if cur:
            out.append(Block(name, start, " ".join(cur), section, tuple(cur)))
            cur.clear()

    for k, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
        stripped = line.strip()
        if stripped.startswith(("```", "~~~")):
            flush()
            fence = not fence
            continue
        if fence or (not cur and line.startswith("    ")
                     and not re.match(r"\s*(?:[-*+]|\d+\.)\s", line)):
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


def _value(whole: str, frac: str | None) -> tuple[float, int]:
    return float(whole.replace(",", "") + (frac or "")), len(frac) - 1 if frac else 0


def figures(block: Block) -> list[Figure]:
    """The figures of a block: with a unit (outside nominal levels), counts of counts,
    and unitless measurements; not numbers that are not figures (:data:`NOT_A_FIGURE`)."""
    text = block.text
    taken = [m.span() for m in LEVEL.finditer(text)] + [
        m.span() for m in NOT_A_FIGURE.finditer(text)]

    def free(a: int, b: int) -> bool:
        return not any(x < b and a < y for x, y in taken)

    out = []
    for m in FIGURE.finditer(text):
        if not free(*m.span()):
            continue
        unit = m.group(5)
        if unit in ("x", "×") and re.match(r"\s*\d", text[m.end():]):
            continue  # "500 x 20" is a size
        taken.append(m.span())
        span = m.group(3) is not None
        for whole, frac in ((m.group(1), m.group(2)), (m.group(3), m.group(4))):
            if whole is not None:
                out.append(Figure(block.page, block.line, m.group(0), *_value(whole, frac),
                                  unit, *m.span(), span=span and unit not in ("/",)))
    for m in FRACTION.finditer(text):
        if free(*m.span()):
            taken.append(m.span())
            out.append(Figure(block.page, block.line, m.group(0),
                              float(m.group(1).replace(",", "")), 0, None, *m.span(),
                              of=float(m.group(2).replace(",", ""))))
    for m in PLAIN.finditer(text):
        if not free(*m.span()):
            continue
        g = m.groups()
        span = g[2] is not None or g[5] is not None
        word = re.match(r"\s+(million|billion)\b", text[m.end():])
        scale = {"million": 1e6, "billion": 1e9}[word.group(1)] if word else 1.0
        for whole, frac in ((g[0], g[1]), (g[2], g[3]), (g[4], None), (g[5], None),
                            (g[6], None)):
            if whole is not None:
                value, decimals = _value(whole, frac)
                out.append(Figure(block.page, block.line, m.group(0), value * scale,
                                  decimals, None, *m.span(), span=span, scale=scale))
    return sorted(out, key=lambda f: f.start)


def numbers(text: str) -> list[float]:
    return [float(m.group(1).replace(",", "") + (m.group(2) or "") + (m.group(3) or ""))
            for m in NUMBER.finditer(text)]


# ---------------------------------------------------------------- what a figure names
_CLAUSE = re.compile(r"(?<=[.;!?])\s+(?=[A-Z(\[*-])|;\s*|\s+-\s+")
#: A number, or a word that counts ("none"): it takes the words of its piece of a clause.
_SPOT = re.compile(r"[+-]?\d[\d,]*(?:\.\d+)?|\bnone\b")


@dataclass(frozen=True)
class Context:
    """What names a figure: its own words, those of the figures before it in its clause
    (an enumeration names once what its items share: "scenario maximin broke epsilon in
    63.0%, Bayes in 80.8%"), the numbers of its clause (the keys it may quote, with
    their distances from it) and the numbers of its clause it may be computed from."""

    own: frozenset
    inherited: frozenset
    keys: dict
    clause: tuple = ()
    column: frozenset | None = None  # the words that name its column (default: own)


def _spots(text: str) -> list[tuple[int, int]]:
    """Where the numbers of a text stand (the boundaries of a figure's near words)."""
    return [m.span() for m in _SPOT.finditer(text)]


#: Where a clause's words change hands between the numbers they name: "1.231 s with the
#: population given, 1.562 s estimated"; "Bayes in 80.8% and plug-in in 93.8%".
_HANDOVER = re.compile(r",(?!\d)|;|:(?=\s*[A-Za-z])"
                       r"|\b(?:and|or|against|beside|than|while|but|vs|versus|then)\b")
#: Another number of the clause and the word that follows it ("7 rounds", "6,000 rows"):
#: that number's, not the figure's.
_OTHER = re.compile(r"[+-]?\d[\d,.]*(?:\s*(?:[a-zA-Z%×]+))?")


def context(block: Block, fig: Figure) -> Context:
    """The words that name ``fig`` in its clause: split at the words where naming
    changes hands (:data:`_HANDOVER`), the pieces on either side of it up to the first
    piece that holds another number (that number's), and a parenthesis right after it."""
    row = _table_row(block, fig)
    if row is not None:
        return row
    text = re.sub(r"`[^`]*`", lambda m: " " * len(m.group()), block.text)  # not words
    bounds = [0] + [m.end() for m in _CLAUSE.finditer(text)] + [len(text)]
    a = max(b for b in bounds if b <= fig.start)
    z = min((b for b in bounds if b >= fig.end), default=len(text))
    before = text[a:fig.start]
    after = text[fig.end:z]
    if _closes(after):  # in a parenthesis: it names what stands before it
        depth = 0
        for i, ch in enumerate(after):
            depth += (ch == "(") - (ch == ")")
            if depth < 0:
                after = after[:i]
                break
    own = re.match(r"\s*(?:[a-zA-Z%×]+\s*)?\(([^()]*)\)", after)
    named = words(own.group(1)) if own else []
    after = after[own.end():] if own else after
    pieces = _HANDOVER.split(after)
    for k, piece in enumerate(pieces):
        if k and (_SPOT.search(piece) or not words(pieces[0])):
            break  # the next number's, or the words after it name no list it continues
        named += words(_OTHER.sub(" ", piece))
    pieces = _HANDOVER.split(before)[::-1]
    for k, piece in enumerate(pieces):
        if _SPOT.search(piece):
            if not k:
                named += words(re.split(r"\d[\d,.]*\s*(?:[a-zA-Z%×]+)?", piece)[-1])
            break
        named += words(piece)
    return Context(frozenset(named), frozenset(), _keys(text, fig),
                   tuple(numbers(text[a:z])))


def contexts(block: Block, figs: list[Figure]) -> list[Context]:
    """The context of each figure of a block (in order): one that names something
    inherits the words of the figures before it in its clause ("Bayes in 80.8%"); one
    that names nothing ("2.6 s and 4.7 s") differs from them in what it does not say."""
    text = block.text
    bounds = [0] + [m.end() for m in _CLAUSE.finditer(text)] + [len(text)]
    out: list[Context] = []
    for k, fig in enumerate(figs):
        ctx = context(block, fig)
        a = max(b for b in bounds if b <= fig.start)
        if k and figs[k - 1].start >= a and ctx.own and not block.text.startswith("|"):
            prev = out[-1]
            ctx = dataclasses.replace(ctx, inherited=prev.own | prev.inherited)
        out.append(ctx)
    return out


def _closes(text: str) -> bool:
    """Whether ``text`` closes a parenthesis it did not open."""
    depth = 0
    for ch in text:
        depth += (ch == "(") - (ch == ")")
        if depth < 0:
            return True
    return False


#: Where a list's items part: the keys of a row stay within their item ("3.7 s against
#: 3.5 s at 1e6 units and 20.9 s against 21.5 s at 1e7").
_ITEM = re.compile(r",(?!\d)|:(?=\s*[A-Za-z])|\b(?:and|or|while|but|then|which|where)\b")


def _keys(text: str, fig: Figure) -> dict:
    """The numbers of the figure's clause that may be keys of its row, each with its
    distance from it: those of its item of a list (between the separators around it),
    else those before the item; not one that follows the end of a parenthesis the
    figure stands in (it names what precedes it)."""
    bounds = [0] + [m.end() for m in _CLAUSE.finditer(text)] + [len(text)]
    a = max(b for b in bounds if b <= fig.start)
    z = min((b for b in bounds if b >= fig.end), default=len(text))
    cuts = [m.start() for m in _ITEM.finditer(text, a, z)]
    ga = max((c for c in cuts if c < fig.start), default=a)
    gz = min((c for c in cuts if c >= fig.end), default=z)
    inside: dict[float, int] = {}
    before: dict[float, int] = {}
    for m in NUMBER.finditer(text, a, gz):
        if m.group(5) not in (None, "x", "×"):
            continue  # a time or a size: a measurement, no key (a size "1000 x 4" is one)
        value = float(m.group(1).replace(",", "") + (m.group(2) or "") + (m.group(3) or ""))
        if value < 10 and value == int(value):
            continue  # "2 cores", "3 rankings": a digit is no key
        if m.start() >= fig.end and _closes(text[fig.end:m.start()]):
            continue
        d = m.start() - fig.end if m.start() >= fig.end else fig.start - m.end()
        into = inside if m.start() >= ga else before
        into[value] = min(into.get(value, d), d)
    return inside or before


def _table_row(block: Block, fig: Figure) -> Context | None:
    """A figure in a table of the page: named by its row's cells without numbers and, if
    it is the first number of its cell, its column's header; its row's numbers (and its
    header's: "| K = 32 |") are the keys it may quote."""
    if not block.lines or not block.lines[0].startswith("|"):
        return None
    pos = 0
    for k, line in enumerate(block.lines):
        if pos <= fig.start < pos + len(line):
            cells = line.strip().strip("|").split("|")
            at = fig.start - pos - (len(line) - len(line.lstrip().lstrip("|")))
            j, acc = 0, 0
            for j, c in enumerate(cells):  # noqa: B007 - the column of the figure
                if acc + len(c) >= at:
                    break
                acc += len(c) + 1
            head = block.lines[0].strip().strip("|").split("|") if k >= 2 else []
            own = {w for c in cells if not re.search(r"\d", c) for w in words(c)}
            keys = dict.fromkeys(numbers(line), 1)
            first = re.search(r"[+-]?\d", cells[j]) if j < len(cells) else None
            column: set = set()
            if j < len(head) and first and first.start() >= at - acc - 1:
                column.update(words(head[j]))  # "(se; runs)" after a figure: not named
                keys.update(dict.fromkeys(numbers(head[j]), 0))  # "| K = 32 |"
            return Context(frozenset(own), frozenset(), keys, tuple(numbers(line)),
                           frozenset(column))
        pos += len(line) + 1
    return None


def _score(names: frozenset, ctx: Context, inherited: bool = False) -> float:
    return float(len(names & (ctx.inherited if inherited else ctx.own)))


#: Words that say a figure is of other rows than the figures before it ("0.6282-0.6665
#: for the others"): its row labels do not inherit their words.
OTHERS = frozenset({"other", "rest", "remaining"})


def _best(options: list[frozenset], ctx: Context, label: bool = False) -> set[int] | None:
    """The options (word sets) that name the figure: those that share the most words
    with its own; for a row's ``label``, else with those it inherits (not for a figure
    "of the others"), and less any label that contains all the words of another such
    one (it names more than the figure's words say). None if none is named."""
    for inherited in (False, True) if label else (False,):
        if inherited and ctx.own & OTHERS:
            return None
        scores = [_score(o, ctx, inherited) for o in options]
        top = max(scores, default=0.0)
        if top > 0:
            best = [i for i, s in enumerate(scores) if s >= top]
            if top < 2 and not any(3 * top >= len(options[i]) for i in best):
                return None  # one word of a long name: too little to tell rows apart
            if not label:
                return set(best)
            return {i for i in best if not any(options[j] < options[i] for j in best)}
    return None


def _naming(option: frozenset, ctx: Context) -> frozenset:
    """The figure's words that name ``option`` (its own, else those it inherits)."""
    return option & ctx.own or option & ctx.inherited


def _named_cells(table: Table, ctx: Context, one_row: bool = True,
                 one_column: bool = True) -> list[Cell]:
    """The cells of the rows and columns of a table that the figure's words name. The
    words that name its row do not also name its column; a row's keys stay among its
    cells."""
    rows = table.rows
    used: set = set()  # the figure's words that named its row
    for j, every in enumerate(table.every() if one_row else ()):
        # ``every``: the words all its labels share (the column's header, at least)
        options = (table.options(j) if rows is table.rows
                   else sorted({r.labels[j] - every for r in rows}, key=sorted))
        best = _best(options, ctx, label=True)
        if best is not None and table.prose and _score(options[min(best)], ctx) < 3:
            best = None  # a word or two of a line of text does not single it out
        if best is None and frozenset() in options and len(every & ctx.own) >= 2:
            best = {options.index(frozenset())}  # it names what all share, nothing more
        if best is not None and len(best) < len(options):
            chosen = {options[i] for i in best}
            used.update(*(_naming(o, ctx) for o in chosen))
            rows = [r for r in rows if r.labels[j] - every in chosen]
    n_keys = len(rows[0].keys) if rows and one_row else 0
    for j in range(n_keys):  # the nearest number of the clause that is one of its keys
        quoted = {k: ctx.keys[k] for k in {r.keys[j] for r in rows} if k in ctx.keys}
        if quoted:  # a row without this key ("-") is not told apart by it
            near = min(quoted.values())
            rows = [r for r in rows if r.keys[j] is None or quoted.get(r.keys[j]) == near]
    cells = [c for r in rows for c in r.cells]
    column = (ctx.own if ctx.column is None else ctx.column) - used
    if one_column and column:
        options = sorted({c.words for c in cells if not c.key}, key=sorted)
        best = _best(options, Context(column, frozenset(), ctx.keys, ctx.clause))
        if best is not None:
            chosen = {options[i] for i in best}
            cells = [c for c in cells if c.words in chosen or c.key]
    return cells


def named_cells(tables: list[Table], ctx: Context, one_row: bool = True,
                one_column: bool = True) -> list[Cell]:
    """The cells a figure may be read from: in every table of its sources, those of the
    rows and columns its words name (all of a table whose rows and columns they do not
    tell apart). Tables do not exclude each other: the words that tell a paragraph's
    sources apart are fewer than those that tell their rows apart."""
    return [c for t in tables if t.rows for c in _named_cells(t, ctx, one_row, one_column)]


# ------------------------------------------------------------------------- the check
def candidates(fig: Figure, cells: list[Cell]) -> list[float]:
    """The numbers a figure may be read from: a ratio or a count from any; a time or a
    size from those the file prints as one and, when the figure has two significant
    digits or more, from any printed with decimals (a one-digit figure such as "2 s"
    would match too much by chance); a percentage or a unitless measurement with
    decimals from any printed with decimals or a unit (a share, not a count)."""
    if fig.of is not None:
        return [c.value for c in cells]
    if fig.unit in RATIO_UNITS or (fig.unit is None and fig.decimals == 0):
        return [c.value for c in cells]
    family = _family(fig.unit)
    measured = [c.value for c in cells if c.measured]
    if family is None:
        return measured
    digits = len(f"{fig.value:.{fig.decimals}f}".replace(".", "").lstrip("0"))
    return [c.value for c in cells if c.family == family] + (measured if digits >= 2
                                                              else [])


def _half(fig: Figure) -> float:
    """Half a unit of the figure's last digit (a whole number ending in zeros,
    "124,000", is rounded to its last non-zero digit)."""
    if fig.scale != 1.0:
        return 0.5 * fig.scale * 10.0 ** -fig.decimals
    whole = f"{fig.value:.0f}" if fig.decimals == 0 else ""
    zeros = len(whole) - len(whole.rstrip("0")) if fig.value >= 1000 else 0
    return 0.5 * 10.0 ** (zeros - fig.decimals) + 1e-9


def _readings(fig: Figure) -> list[tuple[float, float]]:
    """The intervals of numbers w of a source that read as the figure: w itself, w in
    the unit's other scales (seconds as minutes, a share as a percentage) and, for a
    percentage, the change a ratio w stands for (1.047 or 0.953 as 4.7%)."""
    v, h = fig.value, _half(fig)
    out = [((v - h) / scale, (v + h) / scale) for scale in SCALES.get(fig.unit, (1.0,))]
    if fig.unit == "%":
        out += [(1 - (v + h) / 100, 1 - (v - h) / 100),
                (1 + (v - h) / 100, 1 + (v + h) / 100)]
    return out


def rounds_to(fig: Figure, candidates) -> bool:
    """Whether a candidate reads as the figure, rounded to its decimals."""
    spans = _readings(fig)
    return any(lo <= w <= hi for w in candidates for lo, hi in spans)


def derived_from_two(fig: Figure, candidates) -> bool:
    """A ratio as the quotient a / b, or a percentage as the change |a / b - 1|, of two
    numbers (of the figure's own clause, or of the cells it names); a unitless
    measurement as the difference or quotient of two."""
    vals = sorted({abs(v) for v in candidates if v != 0})
    spans = _readings(fig)
    difference = fig.unit is None and fig.of is None

    def within(lo: float, hi: float, b: float) -> bool:
        k = bisect.bisect_left(vals, lo)
        return any(vals[i] <= hi and vals[i] != b for i in range(k, min(k + 2, len(vals))))

    return any(within(b * lo, b * hi, b) or (difference and within(b + lo, b + hi, b))
               for b in vals for lo, hi in spans)


def found(fig: Figure, cells: list[Cell]) -> bool:
    """Whether the figure is one of the named cells: a count of a count "a of b" from a
    cell a/b or its complement (b - a)/b, or from a and b among the cells (not a as
    another count's b)."""
    if fig.of is not None:
        return any(c.of == fig.of and fig.value in (c.value, fig.of - c.value)
                   for c in cells) or (
            any(c.value == fig.value and not c.denominator for c in cells)
            and any(c.value == fig.of for c in cells))
    return rounds_to(fig, candidates(fig, cells))


def _of_its_rows(fig: Figure, cells: list[Cell]) -> bool:
    """A number without a unit as the difference or quotient of two numbers of the few
    rows its words name (not of any two numbers of a file)."""
    values = {c.value for c in cells}
    return len(values) <= 200 and derived_from_two(fig, values)


def check(root: Path, pages: list[Path], not_measured=(), any_row=()) -> list[str]:
    """Every problem found: a figure with no source, a figure not in the row or line of
    its sources that its words name (anywhere in them, inside a phrase of ``any_row``),
    a named results file that does not exist, an allowlist entry that matches nothing."""
    problems: list[str] = []
    used = set()
    used_any = set()
    cache: dict[str, list[Table] | None] = {}

    def read(name: str) -> list[Table] | None:
        if name not in cache:
            path = root / name
            cache[name] = read_results(path.read_text(encoding="utf-8", errors="replace"),
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
                sources = list(dict.fromkeys(cited))
            for name in cited:
                if read(name) is None:
                    problems.append(f"{block.page}:{block.line}: {name} does not exist")
            skip = []
            for k, (pg, phrase, _) in enumerate(not_measured):
                if pg == block.page and phrase in block.text:
                    used.add(k)
                    at = block.text.index(phrase)
                    skip.append((at, at + len(phrase)))
            loose = []
            for k, (pg, phrase, _) in enumerate(any_row):
                if pg == block.page and phrase in block.text:
                    used_any.add(k)
                    at = block.text.index(phrase)
                    loose.append((at, at + len(phrase)))
            tables = [t for name in sources for t in (read(name) or [])]
            figs = figures(block)
            masked = block.text  # a phrase that is not a measurement names nothing
            for a, b in skip:
                masked = masked[:a] + " " * (b - a) + masked[b:]
            ctxs = contexts(dataclasses.replace(block, text=masked), figs)
            for fig, ctx in zip(figs, ctxs, strict=True):
                if any(a <= fig.start and fig.end <= b for a, b in skip):
                    continue
                if fig.unit is None and not sources:
                    continue  # a number of a page that quotes no measurement
                if fig.unit in RATIO_UNITS and derived_from_two(fig, ctx.clause):
                    continue  # arithmetic on the numbers of its clause
                if not sources:
                    problems.append(f"{fig.page}:{fig.line}: {fig.text!r} cites no "
                                    "benchmarks/results file")
                    continue
                # a range spans rows; a percentage is often a share or a change of a
                # ratio printed in another column
                anywhere = any(a <= fig.start and fig.end <= b for a, b in loose)
                loose_fig = fig.span or anywhere
                cells = named_cells(tables, ctx, one_row=not loose_fig,
                                    one_column=not loose_fig)
                if fig.unit == "%" and not found(fig, cells):  # a share or a ratio's
                    cells = [c for c in named_cells(tables, ctx, not loose_fig, False)
                             if c.value <= 2]  # change printed in another column
                if not (found(fig, cells) or (fig.unit in ("%", None) and fig.of is None
                                              and derived_from_two(fig, ctx.clause))
                        or (fig.unit is None and fig.of is None and not fig.span
                            and _of_its_rows(fig, named_cells(tables, ctx, True, False)))):
                    problems.append(f"{fig.page}:{fig.line}: {fig.value:g} of {fig.text!r} "
                                    f"is not in the row of {', '.join(sources)} its words "
                                    "name")
    for k, (pg, phrase, _) in enumerate(not_measured):
        if k not in used:
            problems.append(f"{pg}: NOT_MEASURED phrase {phrase!r} matches nothing")
    for k, (pg, phrase, _) in enumerate(any_row):
        if k not in used_any:
            problems.append(f"{pg}: ANY_ROW phrase {phrase!r} matches nothing")
    return problems
