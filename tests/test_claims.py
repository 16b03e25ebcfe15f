"""Every measured figure quoted in README.md and docs/ is tied to the row or line of the
committed results file it comes from.

The convention (docs/benchmarks.md, "Quoting a measurement"; the checker is
tests/claims.py, whose docstring says how a figure's words name a row):

- A **figure** is a number with a unit of time (s, ms, µs, min, minutes, seconds, h,
  hours) or memory (KB, MB, GB, KiB, MiB, GiB), a ratio (x, ×, times, -fold) or a
  percentage, in prose, lists or tables; code blocks are not read. "A to B s" and
  "A-B s" are two figures. In a paragraph that cites results (or inherits them), a
  number without a unit is a figure too when it has decimals ("0.5246"), thousands
  ("7,214"), counts something ("141 conditionals") or is a count of a count ("19 of
  20", "19/20"); an assignment ("K = 128"), a reference ("issue 42"), a year, a version
  or a code span is not.
- Its **sources** are the results files named in its paragraph (or list, or table), as
  ``benchmarks/results/NAME`` or, once that has appeared, ``NAME``; a paragraph that
  names none takes those of the nearest one above it in the same section.
- The figure must be **in the row or line of a source that its words name**: the row
  whose labels (and keys: "at 6,000 rows") its clause names, in the column whose header
  it names (what its words do not name is not narrowed, so a figure whose clause names
  nothing of a file may be read from any of its rows); the ends of a range from any row.
  It is read as printed there or rounded to its decimals (5.4 s is 5.35 to 5.45 in the
  file; "124,000" to its last non-zero digit). A time or a size of one significant digit
  ("2 s") is read only from the file's times or sizes (printed with their unit, or in a
  column whose header names it), as a single digit matches almost any file; longer ones
  from any number printed with decimals. A percentage is read from a percentage, a share
  (7.1% from 0.071) or a ratio's change (4.7% from 1.047); minutes and milliseconds also
  from seconds; "a of b" from a cell a/b or its complement. A ratio may instead be the
  quotient of two numbers of its own clause ("55 s against 12 s, 4.6 times"; no source
  needed), a percentage a share or change of two of them, and a number without a unit
  their difference or quotient, or that of two numbers of the row it names.
- Every named results file must exist.
- A figure with no source fails unless it is a nominal level (90%, 95% or 99% of an
  interval, a confidence or credible set, "at 95%") or listed in :data:`NOT_MEASURED`
  with the reason it is not a measurement (a target, a parameter, a count of a
  program's rows, a run by hand the text says is one). A figure whose words cannot name
  its row (a pair or list whose words stand before or after all of them, words that name
  another column) is listed in :data:`ANY_ROW` and read from any row of its sources. An
  entry of either list that no longer matches anything fails too, so they stay short.

The checker is tested on small fixtures: changing a quoted figure (to a number found
nowhere, or in another row or column of the file), or deleting the results file it
cites, makes it fail.
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
    ("docs/benchmarks.md", "The goal of 0.5 s for lam 0.5", "issue 54's target"),
    ("docs/benchmarks.md", "under 0.5 s a solve", "issue 54's target"),
    ("docs/benchmarks.md", "lam 0.5 under 0.5 s", "issue 54's target"),
    ("docs/benchmarks.md", "Every case within 1e-8 of", "a bound, the rows' own"
     " differences are the measurements"),
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
    # numbers without a unit (read since issue 51): parameters, targets, counts of a
    # program's rows, an example's printed output, and runs by hand the text says are
    ("docs/benchmarks.md", "item 6: 10,000 under 10 s", "issue 41's target"),
    ("docs/benchmarks.md", "(one per 150 training rows, 20 to 200; before, one per 600, 20 "
     "to 100)", "the bins' parameters"),
    ("docs/benchmarks.md", "Every one of fairdecide's 720 fits",
     "a count of the run's fits (3 data sets x 2 criteria x 6 tolerances x 5 seeds x 4 "
     "families)"),
    ("docs/estimators.md", "about 450 of the held-out rows", "a count of the data"),
    ("docs/benchmarks.md", "3.0 million nonzeros", "a count of the program's nonzeros"),
    ("docs/benchmarks.md", "eleven solves of about 0.03 s each",
     "a time per solve worked out from the rows"),
    ("docs/benchmarks.md", "from 2,000 policy columns", "the chain's threshold"),
    ("docs/benchmarks.md", "(results at ab950f7) it took 4.3-6.0 s and 12 of 150 fits",
     "a run at ab950f7, before the change, whose results file was replaced"),
    ("docs/estimators.md", "0 of 300 samples", "a simulation of tests/test_guarantee.py"),
    ("docs/estimators.md", "9000 of the 31655 training rows", "the example's parameters"),
    ("docs/estimators.md", "(0.056, bootstrap sd 0.019)",
     "printed by examples/fair_classifier_gridsearch_adult.py, which the page runs"),
    ("docs/estimators.md", "3075 defendants to learn from and 3075 to evaluate on",
     "the example's split"),
    ("docs/estimators.md", "0.0032 [0.0000, 0.1256]",
     "printed by examples/bail_policy_compas.py, which the page runs"),
    ("docs/guides/match_people_to_places.md", "took 158,577 columns",
     "a run by hand (issue 41), as the text says"),
    ("docs/lipschitz.md", "issue 24's 100,000 people", "issue 24's target"),
    ("docs/lipschitz.md", "(about 185,000 iterations over nine warm rounds; the final program "
     "alone, solved cold, about 78,000, counted by hand)",
     "counted by hand, as the text says"),
    ("docs/optimization.md", "freed 22,368 units at 100,000 x 12 x 5 (6e6 variables) whose "
     "re-solve took 35,890 simplex iterations (counted by hand",
     "counted by hand, as the text says"),
    ("docs/optimization.md", "has 2,593 coupling rows", "a count of the program's rows "
     "(32 scenarios x 81 group marginals + 1)"),
    ("docs/optimization.md", "from 100 bins", "the structured solver's parameter"),
    ("docs/optimization.md", "at most 2,000 free columns", "the route's threshold"),
    ("docs/optimization.md", "672 rows instead of 1,312", "counts of the term matrix's rows"),
    ("docs/optimization.md", "in a run by hand the crossover took 137,520 simplex iterations",
     "a run by hand, as the text says"),
    ("docs/optimization.md", "a 419 x 609 scenario-cut master took 387,259 dual simplex "
     "iterations from its warm basis (in a run by hand)", "a run by hand, as the text says"),
    ("docs/uncertainty.md", "141 conditionals instead of 1,692",
     "counts of the set's conditionals (141 cells, x 12 groups), printed by "
     "examples/certified_compas.py"),
    ("docs/uncertainty.md", "0.5246 pooled, against 0.5000 per cell and group",
     "printed by examples/certified_compas.py, which the paragraph names"),
    ("docs/uncertainty.md", "any of the 360 certified fits",
     "a count of the table's certified rows (6 sizes x 3 sets x 20 data sets)"),
    ("docs/uncertainty.md", "(below 90%: the bootstrap's", "the band's nominal level"),
    ("docs/benchmarks.md", "program on COMPAS, 141 cells x 12", "the data's size (parameters)"),
    ("docs/lipschitz.md", "3,000 | not run (4.5 million pairs)", "the pairs of 3,000 people, "
     "n (n - 1) / 2, not a measurement"),
    ("docs/lipschitz.md", "rows of Adult, 1.02 billion pairs", "n (n - 1) / 2 of 45,222 rows"),
    ("docs/lipschitz.md", "(ten passes over 450 million pairs", "n (n - 1) / 2 of 30,000 rows"),
    ("docs/optimization.md", "solve that fails or 200 rounds without", "the route's limit"),
    ("docs/optimization.md", "its basis. Once 100 units have", "the master's parameter"),
    ("docs/optimization.md", "objective once 100 units have", "the master's parameter"),
    ("docs/optimization.md", "the blocks halve (320 to 160 rows", "counts of a program's rows"),
    ("docs/optimization.md", "solved alone (at 300 x 4 x 5 cells", "the case's size"),
    ("docs/optimization.md", "hundred of 20,000-200,000)", "sizes of the cases, not measurements"),
]

#: (page, a phrase of the page, why): figures inside the phrase are read from any row or
#: line of their sources, because their words cannot name theirs (each figure is still
#: read from the files the paragraph cites). A phrase found nowhere fails the test.
#: Why entries are listed (most: enumerations and comparisons the words cannot split).
_LIST = "a pair or a list of figures whose words stand before or after all of them"
_OTHER = "its words name another row or column of the table than the figure's own"
ANY_ROW: list[tuple[str, str, str]] = [
    ("docs/audit.md", "On the 7,214 rows of COMPAS", "the data's size, printed in a line "
     "of the file that its words do not name"),
    ("docs/benchmarks.md", "over unit blocks, 3.958 to 4.220 s and 5.377", _LIST),
    ("docs/benchmarks.md", "4.634 s, of which 1.03 s in the scenario", _OTHER),
    ("docs/benchmarks.md", "against 4.240 s, 0.25 s of it in the", _OTHER),
    ("docs/benchmarks.md", "two groups and 0.070 s with three", _LIST),
    ("docs/benchmarks.md", "target: 10 s), and 0.29 s and 0.56 s", _LIST),
    ("docs/benchmarks.md", "1000 and 9.8 s and 29 s at 2000 (not", _LIST),
    ("docs/benchmarks.md", "2000 x 50 against 0.313 s for the program", _OTHER),
    ("docs/benchmarks.md", "at the price of 222 to 5051 blocking", _LIST),
    ("docs/benchmarks.md", "1000 x 50) for 2.7% to 7.1% of", _LIST),
    ("docs/benchmarks.md", "pair, before, took 8.884 s at 500 x 20", _OTHER),
    ("docs/benchmarks.md", "one thread: 40 to 597 columns. The", _LIST),
    ("docs/benchmarks.md", "uses, took at most 1.04 s on the program", _OTHER),
    ("docs/benchmarks.md", "(2000 x 50) and 3.14 s on the program", _OTHER),
    ("docs/benchmarks.md", "crossed over took 0.98 s and 0.89 s", _LIST),
    ("docs/benchmarks.md", "could not finish in 64 minutes, run to completion", _OTHER),
    ("docs/benchmarks.md", "standard errors 96-98.5% of the time", _LIST),
    ("docs/benchmarks.md", "intervals held it in 8.5% and 36% of resamples)", _LIST),
    ("docs/benchmarks.md", "machine: search 121 s against 186", _OTHER),
    ("docs/benchmarks.md", "and median 2.7 s, at most 3.8 s, at K = 2048", _LIST),
    ("docs/guides/rank_and_select.md", "and 9.8 s and 29 s at 2000", _LIST),
    ("docs/estimators.md", "softmax family's 3.48 s on average", _OTHER),
    ("docs/estimators.md", "accuracy 0.762 against 0.825 on Adult under", _LIST),
    ("docs/evaluation.md", "the RMSE by up to 12% (by nothing", _OTHER),
    ("docs/guides/match_people_to_places.md", "solving a program: 0.154 s at 2000 x", _OTHER),
    ("docs/guides/match_people_to_places.md", "acceptance, with 5051 and 222 blocking", _LIST),
    ("docs/guides/match_people_to_places.md", "acceptance and 10 to 130 blocking pairs",
     _LIST),
    ("docs/guides/match_people_to_places.md", "with the gap took 0.016 s at 100 x 10",
     _LIST),
    ("docs/individuals.md", "with epigraphs, 3.5 s smoothed (utility", _LIST),
    ("docs/individuals.md", "fairdecide's test accuracy 0.6603 exceeds ThresholdOptimizer's",
     _OTHER),
    ("docs/lipschitz.md", "| 1,000 | 6.5 s, 1226 MB |", _OTHER),
    ("docs/optimization.md", "before), lam 1 in 2.6 s against 209 s, objectives", _LIST),
    ("docs/optimization.md", "an answer after 1,209 s at lam 1", _OTHER),
    ("docs/optimization.md", "per tolerance, 23.0 s against 22.6", _OTHER),
    ("docs/smoothness.md", "over 7 rounds and 13.06 s over 9 in", _LIST),
]


def doc_pages(root: Path) -> list[Path]:
    return [root / "README.md", *sorted((root / "docs").rglob("*.md"))]


def test_every_quoted_figure_is_in_the_results_file_it_cites():
    problems = check(ROOT, doc_pages(ROOT), NOT_MEASURED, ANY_ROW)
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


# ------------------------------------------------------------- the row a figure names
ROWS_PAGE = """# Sets

For the largest gap scenario maximin missed its value in 12.4% and epsilon in 22.0%;
for separation, scenario maximin broke epsilon in 63.0%, Bayes in 80.8%; the certified
policies' mean true value was 0.3400-0.5113 (`benchmarks/results/sets.txt`).

At 6,000 rows the pooled policy's mean true value is 0.6038, above the constant's in
20 of 20 data sets, and in 19 of 20 at 3,000.
"""
ROWS_RESULTS = """# two tables
| criterion | treatment | value below claimed | deviation above epsilon | mean true value |
|---|---|---|---|---|
| largest gap | certified | 0/500 = 0.0% | 0/500 = 0.0% | 0.5113 |
| largest gap | scenario maximin | 62/500 = 12.4% | 110/500 = 22.0% | 0.6502 |
| largest gap | Bayes | 180/500 = 36.0% | 214/500 = 42.8% | 0.6650 |
| separation, largest gap given y | certified | 0/500 = 0.0% | 0/500 = 0.0% | 0.3400 |
| separation, largest gap given y | scenario maximin | 60/500 = 12.0% | 315/500 = 63.0% | 0.6282 |
| separation, largest gap given y | Bayes | 191/500 = 38.2% | 404/500 = 80.8% | 0.6479 |

| n | treatment | mean true value | above constant |
|---|---|---|---|
| 3000 | pooled | 0.5751 | 19/20 |
| 6000 | pooled | 0.6038 | 20/20 |
| 6000 | per group | 0.5000 | 0/20 |
"""


def _rows(tmp_path: Path, page: str = ROWS_PAGE, any_row=()) -> list[str]:
    (tmp_path / "docs").mkdir(exist_ok=True)
    (tmp_path / "docs" / "page.md").write_text(page)
    (tmp_path / "benchmarks" / "results").mkdir(parents=True, exist_ok=True)
    (tmp_path / "benchmarks" / "results" / "sets.txt").write_text(ROWS_RESULTS)
    return check(tmp_path, [tmp_path / "docs" / "page.md"], (), any_row)


def test_the_checker_reads_each_figure_from_the_row_its_words_name(tmp_path):
    """The labels a clause names ("scenario maximin" of "the largest gap", not of
    separation, whose label says more), the key it quotes ("at 6,000 rows"), the column
    ("epsilon"), labels an enumeration names once ("Bayes in 80.8%" of separation), and a
    range over several rows."""
    assert _rows(tmp_path) == []


@pytest.mark.parametrize(("old", "new"), [
    ("12.4%", "12.0%"),  # separation's row
    ("epsilon in 22.0%", "epsilon in 12.4%"),  # the value column of the same row
    ("Bayes in 80.8%", "Bayes in 42.8%"),  # the largest gap's row, not separation's
    ("is 0.6038", "is 0.5751"),  # the row at 3,000
    ("in\n20 of 20", "in\n17 of 20"),  # in no row
    ("19 of 20 at", "20 of 20 at"),  # the row at 6,000
    ("0.3400-0.5113", "0.3400-0.5131"),  # in no row at all
])
def test_the_checker_fails_a_figure_from_another_row_or_column(tmp_path, old, new):
    """Each of these numbers is in the file (but the last): the old checker, which read
    a figure from any number anywhere in its sources and no number without a unit,
    passed them all."""
    assert ROWS_PAGE.count(old) == 1
    problems = _rows(tmp_path, ROWS_PAGE.replace(old, new))
    assert len(problems) == 1 and "is not in the row of benchmarks/results/sets.txt" in (
        problems[0]), problems


def test_a_listed_phrase_is_read_from_any_row_and_a_stale_one_fails(tmp_path):
    page = ROWS_PAGE.replace("is 0.6038", "is 0.5751")
    assert _rows(tmp_path, page, [("docs/page.md", "value is 0.5751", "why")]) == []
    stale = _rows(tmp_path, any_row=[("docs/page.md", "value is 0.5751", "why")])
    assert stale == ["docs/page.md: ANY_ROW phrase 'value is 0.5751' matches nothing"]


def test_a_listed_phrase_skips_only_the_figures_inside_it(tmp_path):
    """A figure outside the phrase is still read, though the phrase holds the same text
    (b19dcbc skipped every "10 s" of a paragraph whose allowlisted phrase held one)."""
    page = FIXTURE_PAGE.replace("(`benchmarks/results/speed.txt`)",
                                "(`benchmarks/results/speed.txt`; target: 9.9 s)")
    listed = [("docs/page.md", "target: 9.9 s", "a target")]
    (tmp_path / "docs").mkdir()
    (tmp_path / "benchmarks" / "results").mkdir(parents=True)
    (tmp_path / "benchmarks" / "results" / "speed.txt").write_text(FIXTURE_RESULTS)
    (tmp_path / "docs" / "page.md").write_text(page)
    assert check(tmp_path, [tmp_path / "docs" / "page.md"], listed) == []
    (tmp_path / "docs" / "page.md").write_text(page.replace("took 5.4 s", "took 9.9 s"))
    problems = check(tmp_path, [tmp_path / "docs" / "page.md"], listed)
    # 9.9 s, and 4.8 times, no longer 26.1 / 5.4
    assert problems[0] == ("docs/page.md:3: 9.9 of '9.9 s' is not in the row of "
                           "benchmarks/results/speed.txt its words name"), problems
