"""The documentation's code runs, and the site's pages stay complete.

- The ```python blocks of each user guide, docs/how_to_add_a_criterion.md,
  docs/optimization.md, docs/evaluation.md and docs/uncertainty.md run
  verbatim, in order, in one namespace per page (later blocks use earlier names), as
  README.md's do (tests/test_readme.py). A block fails its page's test by raising.
- The criterion of how_to_add_a_criterion.md is under fifty lines of code.
- Every result file in benchmarks/results/ (.txt, .md) is included by docs/benchmarks.md,
  every benchmark script is listed there, and every public subpackage has an API page.

The Sphinx build itself (docs/build.sh, warnings as errors) runs in CI, not here.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
import sys
import types
from pathlib import Path

import numpy as np
import pytest

import fairdecide

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
RUN_PAGES = [
    "guides/fit_a_fair_policy.md",
    "guides/decide_under_uncertainty.md",
    "guides/evaluate_historical_decisions.md",
    "guides/scikit_learn.md",
    "guides/decide_for_many.md",
    "guides/rank_and_select.md",
    "guides/match_people_to_places.md",
    "how_to_add_a_criterion.md",
    "optimization.md",
    "evaluation.md",
    "uncertainty.md",
]

_FENCE = re.compile(r"^```python[ \t]*\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)


def python_blocks(page: Path) -> list[tuple[int, str]]:
    """(first code line number, source) of each ```python block of ``page``."""
    text = page.read_text(encoding="utf-8")
    return [(text.count("\n", 0, m.start(1)) + 1, m.group(1)) for m in _FENCE.finditer(text)]


def run_page(path: Path) -> dict:
    """Run the page's ```python blocks in order in one namespace; return the namespace."""
    import sklearn

    blocks = python_blocks(path)
    assert blocks, f"no ```python blocks in {path}"
    # A real module, so that dataclasses defined on the page can find their module.
    module = types.ModuleType("fairdecide_docs_page")
    sys.modules[module.__name__] = module
    try:
        for line, source in blocks:
            # Pad with blank lines so tracebacks give the page's own line numbers.
            exec(compile("\n" * (line - 1) + source, str(path), "exec"), module.__dict__)
    finally:
        del sys.modules[module.__name__]
        sklearn.set_config(enable_metadata_routing=False)
    return module.__dict__


@pytest.mark.parametrize("page", RUN_PAGES)
def test_page_code_runs(page: str) -> None:
    run_page(DOCS / page)


def test_new_criterion_gives_the_optimum_of_an_lp_written_here(capsys) -> None:
    """The four-fifths rule of how_to_add_a_criterion.md: its deviation is the page's
    formula, the optimum under it is that of the LP written here from the world's arrays,
    and the release rates the page prints are those of that optimum."""
    from scipy.optimize import linprog

    from tests.reference import policy_rows, world_arrays

    page = run_page(DOCS / "how_to_add_a_criterion.md")
    out = capsys.readouterr().out
    problem, world, rule = page["problem"], page["world"], page["rule"]
    best, fair = page["best"], page["fair"]
    w, z, p_y = world_arrays(world, problem)
    n_u, n_a, n_z = len(w), problem.n_actions, world.n_groups
    p_z = np.array([w[z == g].sum() for g in range(n_z)])

    def rates(rows):  # P(a* = release | z)
        return np.array([w[z == g] @ rows[z == g, 1] for g in range(n_z)]) / p_z

    def four_fifths(rows):  # F = max(0, max_{z != z'} 0.8 P(a* | z') - P(a* | z))
        r = rates(rows)
        return max(0.0, max(0.8 * r[j] - r[i] for i in range(n_z) for j in range(n_z)
                            if i != j))

    rng = np.random.default_rng(0)
    for rows in [policy_rows(best.policy, world), *rng.dirichlet([1, 1], size=(3, n_u))]:
        assert rule.deviation(fd_policy(rows, world), world, problem) == pytest.approx(
            four_fifths(rows), abs=1e-12)
    assert four_fifths(policy_rows(best.policy, world)) > 0.01  # the rule binds

    # max sum_u w_u sum_a pi(a | u) E[U | a, u] over rows on the simplex with
    # 0.8 P(a* | z') - P(a* | z) <= 0 for every ordered pair of groups
    gain = w[:, None] * np.einsum("uay,ay->ua", p_y, problem.utility)
    A_eq = np.kron(np.eye(n_u), np.ones(n_a))
    rate_row = np.zeros((n_z, n_u * n_a))
    for g in range(n_z):
        rate_row[g, np.flatnonzero(z == g) * n_a + 1] = w[z == g] / p_z[g]
    A_ub = [0.8 * rate_row[j] - rate_row[i] for i in range(n_z) for j in range(n_z)
            if i != j]
    lp = linprog(-gain.reshape(-1), A_ub=np.array(A_ub), b_ub=np.zeros(len(A_ub)),
                 A_eq=A_eq, b_eq=np.ones(n_u), bounds=(0, 1), method="highs")
    assert lp.status == 0
    assert fair.utility == pytest.approx(-lp.fun, abs=1e-9)
    rows = policy_rows(fair.policy, world)
    assert four_fifths(rows) <= 1e-9
    assert fair.deviations[rule.label] == pytest.approx(four_fifths(rows), abs=1e-9)
    # the rates the page prints, group by group
    printed = dict(zip(world.group_labels, np.round(rates(rows), 4), strict=True))
    assert repr({g: float(r) for g, r in printed.items()}) in out
    # and the page's claim: the criterion is under fifty lines
    criterion = next(src for _, src in python_blocks(DOCS / "how_to_add_a_criterion.md")
                     if "class FourFifths" in src)
    assert len([line for line in criterion.splitlines() if line.strip()]) < 50


def fd_policy(rows, world):
    """A TabularPolicy of the world's cells (x-major rows)."""
    return fairdecide.TabularPolicy(rows.reshape(world.n_x, world.n_z, -1))


#: A path under one of the repository's folders, as pages and docstrings write it
#: (``benchmarks/results/lp_scaling.txt``, ``tests/test_chain.py``); ``{a,b}`` and ``*``
#: name several files.
_REPO_PATH = re.compile(r"(?<![\w./-])((?:benchmarks|tests|examples|docs|fairdecide)/"
                        r"[\w./*{},-]*[\w*}])")
#: A Markdown file by name (``optimization.md``, ``../theory.md``, ``README.md``).
_MD_NAME = re.compile(r"(?<![\w./-])([\w./-]*\w\.md)(?![\w])")
#: Paths that name no file of this repository, each with the reason.
_NOT_OURS = {
    ("benchmarks/bench_ranking.py", "tests/test_fair.py"): "fairsearchcore-python's test file",
}


def _expand(path: str) -> list[str]:
    """``a/{b,c}.txt`` as ``a/b.txt`` and ``a/c.txt``; none for a path built in code
    (``benchmarks/{name}``, an f-string's field, is not a name)."""
    m = re.search(r"\{([^{}]*)\}", path)
    if m is None:
        return [] if "{" in path or "}" in path else [path]
    if not re.fullmatch(r"[\w.-]+(,[\w.-]+)+", m.group(1)):
        return []
    return [q for alt in m.group(1).split(",")
            for q in _expand(path[:m.start()] + alt + path[m.end():])]


def test_every_file_cited_by_name_is_in_the_repository() -> None:
    """Issue 51: every file README.md, a page of docs/, or a docstring or comment of the
    package, the benchmarks or the examples names (a page, a results file, a script, a
    test) exists in the repository, so a claim never rests on a file a reader cannot
    open. A path may be a prefix (a script's --out stem) or a pattern; NAME is a
    placeholder."""
    sources = [ROOT / "README.md", *sorted(DOCS.rglob("*.md")),
               *(f for folder in ("fairdecide", "benchmarks", "examples")
                 for f in sorted((ROOT / folder).rglob("*.py")))]
    names = {f.name for f in ROOT.rglob("*.md") if ".venv" not in f.parts}
    missing = []
    for src in sources:
        where = src.relative_to(ROOT).as_posix()
        text = src.read_text(encoding="utf-8")
        for match in _REPO_PATH.finditer(text):
            for path in _expand(match.group(1).rstrip(".")):
                if "NAME" in path or (where, path) in _NOT_OURS:
                    continue
                if not (any(ROOT.glob(path)) or any(ROOT.glob(path + "*"))):
                    missing.append(f"{where}: {path}")
        for match in _MD_NAME.finditer(text):
            name = match.group(1)
            found = ((src.parent / name).exists() or (ROOT / name).exists()
                     if "/" in name else name in names)
            if not found:
                missing.append(f"{where}: {name}")
    assert not missing, f"files cited by name that are not in the repository: {missing}"


def test_benchmark_results_and_scripts_are_on_the_benchmarks_page() -> None:
    page = (DOCS / "benchmarks.md").read_text(encoding="utf-8")
    results = ROOT / "benchmarks" / "results"
    for f in sorted([*results.glob("*.txt"), *results.glob("*.md")]):
        assert f"{{literalinclude}} ../benchmarks/results/{f.name}" in page, (
            f"docs/benchmarks.md does not include {f.name}")
    for script in sorted((ROOT / "benchmarks").glob("bench_*.py")):
        assert f"`{script.name}`" in page, f"docs/benchmarks.md does not list {script.name}"


def test_every_public_subpackage_has_an_api_page() -> None:
    api = DOCS / "api"
    index = (api / "index.rst").read_text(encoding="utf-8")
    for info in pkgutil.iter_modules(fairdecide.__path__):
        if not info.ispkg or info.name.startswith("_"):
            continue
        module = importlib.import_module(f"fairdecide.{info.name}")
        if not getattr(module, "__all__", None) or info.name == "experiments":
            continue
        page = api / f"{info.name}.rst"
        assert page.is_file(), f"fairdecide.{info.name} has no page docs/api/{page.name}"
        assert f".. fairdecide-api:: fairdecide.{info.name}" in page.read_text("utf-8")
        assert re.search(rf"^   {info.name}$", index, re.MULTILINE), (
            f"docs/api/index.rst does not list {info.name}")


def test_escape_pipes_keeps_literals() -> None:
    sys.path.insert(0, str(DOCS / "_ext"))
    try:
        from pipes_escape import escape_pipes
    finally:
        sys.path.remove(str(DOCS / "_ext"))
    lines = ["F = sum_z |P(a | z) - P(a)|, ``a | b`` and :math:`|x|`", "",
             ">>> print('|x|')", "|x|", "", "Example::", "", "    |y|"]
    out = escape_pipes(lines)
    assert out[0] == r"F = sum_z \|P(a \| z) - P(a)\|, ``a | b`` and :math:`|x|`"
    assert out[2:5] == lines[2:5] and out[7] == lines[7]
