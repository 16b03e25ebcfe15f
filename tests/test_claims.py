"""Every measured figure quoted in README.md and docs/ is tied to a committed results file.

The convention (docs/benchmarks.md, "Quoting a measurement"; the checker is
tests/claims.py):

- A **figure** is a number with a unit of time (s, ms, µs, min, minutes, seconds, h,
  hours) or memory (KB, MB, GB, KiB, MiB, GiB), a ratio (x, ×, times, -fold) or a
  percentage, in prose, lists or tables; code blocks are not read. "A to B s" and
  "A-B s" are two figures.
- Its **sources** are the results files named in its paragraph (or list, or table), as
  ``benchmarks/results/NAME`` or, once that has appeared, ``NAME``; a paragraph that
  names none takes those of the nearest one above it in the same section.
- The figure must be **in a source**, as printed there or rounded to its decimals (5.4 s
  is 5.35 to 5.45 in the file). A time or a size of one significant digit ("2 s") is
  read only from the file's times or sizes (printed with their unit, or in a column
  whose header names it), as a single digit matches almost any file; longer ones from
  any number printed with decimals. A percentage is read from a percentage, a share
  (7.1% from 0.071) or a ratio's change (4.7% from 1.047); minutes and milliseconds
  also from seconds. A ratio may instead be the quotient of two numbers of its own
  paragraph ("55 s against 12 s, 4.6 times"; no source needed), and a percentage a
  share or change of two of them.
- Every named results file must exist.
- A figure with no source fails unless it is a nominal level (90%, 95% or 99% of an
  interval, a confidence or credible set, "at 95%") or listed in :data:`NOT_MEASURED`
  with the reason it is not a measurement (a target, a parameter). An entry that no
  longer matches anything fails too, so the list stays short.

The checker is tested on a small fixture: changing a quoted figure, or deleting the
results file it cites, makes it fail.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.claims import check

ROOT = Path(__file__).resolve().parents[1]

#: (page, a phrase of the page holding the figures, why they are not measurements).
#: Figures inside the phrase are skipped; a phrase found nowhere fails the test.
NOT_MEASURED: list[tuple[str, str, str]] = [
    ("docs/benchmarks.md", "target: 1e6 under 5 s", "issue 26's target"),
    ("docs/benchmarks.md", "lam under 0.5 s and epsilon 0.01 under 1 s",
     "issue 41's target"),
    ("docs/benchmarks.md", "issue 41's 30,000 people under 60 s", "issue 41's target"),
    ("docs/benchmarks.md", "target: 1000 candidates x 1000 positions under 10 s",
     "issue 26's target"),
    ("docs/benchmarks.md", "RMSE, 95% coverage", "the nominal level of the intervals"),
    ("docs/benchmarks.md", 'a ratio such as "4.8 times" or "3x", a percentage',
     "the convention's examples"),
    ("docs/benchmarks.md", "(5.4 s from 5.43; 7.1% from 0.071", "the convention's examples"),
    ("docs/benchmarks.md", '("55 s against 12 s, 4.6 times")', "the convention's examples"),
    ("docs/benchmarks.md", "a parameter such as a 10% capacity", "the convention's examples"),
    ("docs/benchmarks.md", 'a one-digit time such as "2 s"', "the convention's examples"),
    ("docs/audit.md", "Note: 2 of 7214 rows (0.028%) were",
     "the words of the audit's note, quoted as an example"),
    ("docs/estimators.md", "the most probable 90% of the posterior draws",
     "the confidence set's level (delta = 0.1)"),
    ("docs/evaluation.md", "(ESS below 10% of n)", "the warning's threshold"),
    ("docs/evaluation.md", "warn when it exceeds 1%", "the warning's threshold"),
    ("docs/evaluation.md", 'warns "puts 33.5% of its probability',
     "the text of a warning on an illustrative candidate"),
    ("docs/guides/decide_for_many.md", "at most 30% of defendants held", "the example's capacity"),
    ("docs/guides/fit_a_fair_policy.md", "Offers to at most 10% of Adult's applicants",
     "the example's capacity"),
    ("docs/guides/fit_a_fair_policy.md", "holds at most 30% of COMPAS defendants",
     "the example's capacity"),
    ("docs/guides/rank_and_select.md", "issue 26's target: 10 s", "issue 26's target"),
    ("docs/benchmarks.md", "(issue 41's target: 10 s)", "issue 41's target"),
    ("docs/benchmarks.md", "(issue 41's targets: 60 s and 3 minutes)", "issue 41's targets"),
    ("docs/benchmarks.md", "the core install, target: at most 650 MiB", "issue 40's target"),
    ("docs/concepts.md", "The 2.5% and 97.5% quantiles of 1000 draws",
     "the quantile levels of a 95% interval"),
    ("docs/guides/evaluate_historical_decisions.md", "The judge's rule (release 60% at random)",
     "the example judge's release rate"),
]


def doc_pages(root: Path) -> list[Path]:
    return [root / "README.md", *sorted((root / "docs").rglob("*.md"))]


def test_every_quoted_figure_is_in_the_results_file_it_cites():
    problems = check(ROOT, doc_pages(ROOT), NOT_MEASURED)
    assert not problems, "\n".join(problems)


# ---------------------------------------------------------------------- the checker
FIXTURE_PAGE = """# Speed

The solver took 5.4 s at 500 x 20, 4.8 times less than before (26.1 s), and used
1,226 MB (`benchmarks/results/speed.txt`).

| size | seconds |
|---|---|
| 100 | 0.25 s |

## Other

A 95% confidence interval, at 90% too.
"""
FIXTURE_RESULTS = """# the solver on 2 cores
size  seconds  memory MB  deviation
 500     5.43     1226.4     1.7033
 100    0.247      310.0     0.0100
before: 26.1 s
"""


def _fixture(tmp_path: Path, page: str = FIXTURE_PAGE, results: str | None = FIXTURE_RESULTS):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "page.md").write_text(page)
    if results is not None:
        (tmp_path / "benchmarks" / "results").mkdir(parents=True)
        (tmp_path / "benchmarks" / "results" / "speed.txt").write_text(results)
    return check(tmp_path, [tmp_path / "docs" / "page.md"])


def test_the_checker_passes_figures_found_in_their_results_file(tmp_path):
    """5.4 s from 5.43, 1,226 MB from 1226.4, 0.25 s from 0.247 (the table inherits the
    paragraph's file), 4.8 times as 26.1 / 5.4, nominal levels skipped."""
    assert _fixture(tmp_path) == []


@pytest.mark.parametrize(("old", "new"), [("5.4 s", "5.7 s"), ("1,226 MB", "1,236 MB"),
                                          ("0.25 s", "0.21 s"), ("4.8 times", "3.8 times"),
                                          ("5.4 s", "2 s")])
def test_the_checker_fails_a_changed_figure(tmp_path, old, new):
    """Each changed figure fails; "2 s" too, though the file holds a 2 (cores) and a
    1.7033 (not a time): a one-digit time is read only from the file's times."""
    problems = _fixture(tmp_path, FIXTURE_PAGE.replace(old, new))
    assert any(repr(new) in p for p in problems), problems


def test_the_checker_fails_when_the_results_file_is_gone(tmp_path):
    problems = _fixture(tmp_path, results=None)
    assert "benchmarks/results/speed.txt does not exist" in problems[0]


def test_the_checker_fails_an_uncited_figure_unless_listed(tmp_path):
    page = FIXTURE_PAGE + "\nIt now takes 3 s.\n"
    problems = _fixture(tmp_path, page)
    assert problems == ["docs/page.md:14: '3 s' cites no benchmarks/results file"]
    listed = [("docs/page.md", "takes 3 s", "a target")]
    assert check(tmp_path, [tmp_path / "docs" / "page.md"], listed) == []
    stale = [("docs/page.md", "takes 4 s", "a target")]
    assert any("matches nothing" in p for p in check(
        tmp_path, [tmp_path / "docs" / "page.md"], stale))
