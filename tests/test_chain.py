"""The solving chain (fairdecide.optimize.engine.chain): one chooser, every declared solver
chosen where its declaration says, names read in one place.

Each case builds a real optimisation whose shape the declaration names, checks which
solver the chooser put first and why, and checks the value against HiGHS's dual simplex
on the same program (another solver, exact to 1e-9 here), so a solver chosen for a case
it mishandles fails the test as well as a wrong choice does.
"""

from __future__ import annotations

import inspect
import re
import warnings
from contextlib import nullcontext
from dataclasses import replace
from unittest import mock

import numpy as np
import pytest

import fairdecide as fd
from fairdecide import Belief, Independence, Separation, optimize_policy, pareto_frontier
from fairdecide.datasets import make_bail_problem, make_tabular_problem
from fairdecide.exceptions import SolverError, SolverFallbackWarning
from fairdecide.optimize.engine import cases, chain, highs_model, rounds, unit_ipm
from fairdecide.optimize.engine.chain import SOLVERS, Case, choose, resolve_solver
from tests.test_structured import make_belief

# HiGHS's dual simplex returns a vertex exact to its feasibility tolerance (FEASIBILITY_TOL,
# 1e-9); the interior points stop at a relative gap of IPM_GAP_TOL or unit_ipm.TOL, and the
# certified loops at rounds.GAP of the objective; the verification tolerance optimize_policy
# holds every result to is 1e-6. AGREE is a hundred times the largest of the solvers' own.
AGREE = 100 * max(highs_model.FEASIBILITY_TOL, highs_model.IPM_GAP_TOL, unit_ipm.TOL,
                  rounds.GAP)


def _belief(n_x, n_z, n_a, K, seed=0, aggregate="mean"):
    rng = np.random.RandomState(seed)
    problem, world = make_tabular_problem(n_x, n_z, n_a, 2, random_state=rng)
    return problem, Belief(make_belief(problem, world, K, rng), aggregate=aggregate)


def _small_simplex_rule():
    """HiGHS's size rule lowered so that small programs take the interior point by size
    (the declared threshold, SIMPLEX_MAX_COLUMNS["policy"])."""
    return mock.patch.dict(cases.SIMPLEX_MAX_COLUMNS, {"policy": 0})


def _lipschitz_world(n=12, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    z = np.arange(n) % 2
    p = 1 / (1 + np.exp(-3 * X[:, 0] - z))
    return fd.DecisionProblem.classification(2), fd.SampleWorld(X, z, np.c_[1 - p, p])


# (solver chosen first by the default chain, how to build the case, kwargs)
def _cases():
    bail = make_bail_problem()
    return {
        "term-ipm": (lambda: _belief(5, 2, 2, 64), [Independence()], {"lam": 0.5}),
        "scenarios": (lambda: _belief(8, 2, 3, 4), [Independence()], {"epsilon": 0.05}),
        "CLARABEL": (lambda: bail, [Independence(measure="kl")], {"lam": 0.3}),
        "structured": (lambda: make_tabular_problem(1500, 2, 2, 2, random_state=0),
                       [Independence()], {"epsilon": 0.01}),
        "unit-ipm": (lambda: _belief(10, 2, 3, 3), [Separation()], {"lam": 0.3}),
        "highs-ds": (lambda: bail, [Independence()], {"epsilon": 0.05}),
        "highs-ipm": (lambda: make_tabular_problem(20, 2, 3, 2, random_state=1),
                      [Independence()], {"epsilon": 0.02}),
        "highs-dual-warm": (_lipschitz_world, [fd.Lipschitz(constant=0.5)],
                            {"epsilon": 0.0}),
        "distributed": (_units_world, [Independence()], {"epsilon": 0.02}),
    }


def _units_world():
    """A FrameWorld of 50 units (a pandas table)."""
    import pandas as pd

    rng = np.random.RandomState(4)
    z, w, p = np.arange(50) % 2, rng.uniform(0.5, 2.0, 50), rng.uniform(0.1, 0.9, 50)
    from fairdecide.optimize.distributed import outcome_columns

    problem = fd.DecisionProblem([[1.0, -1.0], [-0.5, 0.5]], outcome_depends_on_action=False)
    units = pd.DataFrame({"z": z, "w": w, **dict(zip(outcome_columns(problem), [1 - p, p],
                                                      strict=True))})
    return problem, fd.FrameWorld(units, problem)


@pytest.mark.parametrize("name", list(_cases()))
def test_the_default_chain_picks_each_solver_where_its_declaration_says(name):
    build, crits, kw = _cases()[name]
    problem, world = build()
    with _small_simplex_rule() if name in ("unit-ipm", "highs-ipm") else nullcontext():
        res = optimize_policy(problem, world, crits, **kw)
    choice = res.solver_choice
    assert choice["order"][0] == name, choice
    assert choice["reason"].startswith(("the default chain", "a units table"))
    # every solver declares the certificate it leaves (SOLVERS[...].certifies)
    cert = res.certificates["optimality"]
    assert cert["certified"] and 0.0 <= cert["gap"] <= cert["bound"], cert
    if name == "highs-dual-warm":
        assert "warm dual simplex" in res.solver
        return  # constraint generation: its value is tested against an all-pairs LP
    if name == "distributed":
        assert choice["reason"].startswith("a units table")
        return  # its value is tested against an independent LP in test_distributed
    if name == "CLARABEL":  # an exponential cone: HiGHS cannot take it; Clarabel's own
        assert choice["passed_over"]["highs-ds"].startswith("KL terms")
        return  # accuracy is tested in test_optimize_known
    ref = optimize_policy(problem, world, crits, solver="highs-ds", **kw)
    assert ref.solver_choice["order"] == ["highs-ds"]
    assert res.objective == pytest.approx(ref.objective, abs=AGREE * max(1, abs(ref.objective)))


def test_every_declared_solver_is_exercised_by_a_case():
    # the stages of one optimize_policy call (the others: test_every_stage_...)
    call = {s.name for s in SOLVERS if s.stage in ("belief", "program", "cuts", "units")}
    assert call - {"highs-ipm-no-crossover", "each round"} == set(_cases())
    # the remaining one takes a large belief the unit interior point hands back
    # (tests/test_interior_point.py::test_a_handed_back_belief_takes_the_interior_point);
    # here by its declaration: first after unit-ipm for a large belief
    case = Case("program", n_scenarios=4, n_actions=3, n_policy_columns=9000,
                n_variables=40_000, n_units=3000, unit_simplices=True, coupling_rows=5000)
    assert choose(case, None).order == ["unit-ipm", "highs-ipm-no-crossover"]


@pytest.mark.parametrize("name", ["term-ipm", "scenarios", "structured", "unit-ipm"])
def test_a_solver_asked_for_a_case_it_does_not_take_says_so(name):
    problem, world = make_bail_problem()  # one world, no unit blocks for ... (see below)
    if name == "structured" or name == "unit-ipm":
        from fairdecide.optimize.engine.chain import solve_program
        from fairdecide.optimize.program.policy_program import PolicyProgram
        from fairdecide.optimize.program.tradeoff import FairnessConstraint

        prog = PolicyProgram(problem, Belief.plug_in(world), group_blind=False)
        p = prog.build([Independence()], FairnessConstraint((0.05,)))
        p.n_units = 0
        with pytest.warns(SolverFallbackWarning, match=fallback_text(
                name, "it does not take no unit blocks", "highs-ds")):
            res = solve_program(p, name.upper())  # any case
        assert res.choice["passed_over"][name] == "asked for, but it does not take no unit blocks"
        assert res.solver.startswith("HiGHS")
        return
    with pytest.warns(SolverFallbackWarning, match=fallback_text(
            name, "it does not take a single world (one scenario)", "highs-ds")):
        res = optimize_policy(problem, world, Independence(), epsilon=0.05, solver=name)
    choice = res.solver_choice
    assert choice["belief_stage"]["passed_over"][name] == (
        "asked for, but it does not take a single world (one scenario)")


def fallback_text(asked, why, solved_by):
    """The start of a SolverFallbackWarning, as a pattern: the solver asked, why it did
    not solve the program, and the solver that took it."""
    return "^" + re.escape(f"solver={asked!r} did not solve this program: {why}. "
                           f"{solved_by} took it instead")


def _fallback_cases():
    """(what to optimise, the solver asked, why it does not take the program, the solver
    that takes it): at each stage of the chain."""
    one = make_bail_problem()
    belief = _belief(4, 2, 2, 3)
    eps = {"epsilon": 0.05}
    return {
        # belief stage: a belief solver refused a single world, and a belief's trade-off
        "one world": (one, [Independence()], eps, "term-ipm",
                      "it does not take a single world (one scenario)", "highs-ds"),
        "belief, epsilon": (belief, [Independence()], eps, "term-ipm",
                            "it does not take a trade-off that bounds deviations (it "
                            "takes a penalty: lam)", "highs-ds"),
        # successive linearisation's programs (a ratio criterion)
        "linearised": (belief, [fd.Sufficiency()], {"epsilon": 0.2}, "scenarios",
                       "it does not take criteria other than linear ones of the group "
                       "marginal", "highs-ds"),
        # program stage: a confidence set's dual rows, KL terms
        "confidence set": ((one[0], fd.ConfidenceSet.from_data(fd.datasets.sample_logged_data(
            one[0], one[1], 300, random_state=0), one[0], delta=0.1)), [Independence()],
            {"epsilon": 0.1}, "unit-ipm", "it does not take a confidence set's dual rows "
            "(per unit, not coupling rows)", "highs-ds"),
        "KL": (one, [Independence(measure="kl")], eps, "highs-ds",
               "it does not take KL terms, which need an exponential-cone solver",
               "CLARABEL"),
        # constraint generation's rounds (cuts)
        "cuts": (_lipschitz_world(), [fd.Lipschitz(constant=1.0)], {"lam": 0.5}, "scenarios",
                 "it does not take a single world (one scenario)", "highs-ds"),
    }


@pytest.mark.parametrize("case", list(_fallback_cases()))
def test_an_asked_solver_that_does_not_take_the_program_warns(case):
    """Issue 51: an asked solver that does not take a program, whatever the stage or
    route, is a SolverFallbackWarning naming the solver asked, why (its declaration's
    words, as result.explain() keeps them) and the solver that took the program; the
    result is that solver's (the value of the default chain)."""
    (problem, world), crits, kw, asked, why, solved_by = _fallback_cases()[case]
    with pytest.warns(SolverFallbackWarning) as caught:
        res = optimize_policy(problem, world, crits, solver=asked, **kw)
    notes = {str(w.message) for w in caught if w.category is SolverFallbackWarning}
    assert any(re.match(fallback_text(asked, why, solved_by), n) for n in notes), notes
    if case != "linearised":  # (its programs are the default's; a second run is slow)
        default = optimize_policy(problem, world, crits, **kw)
        assert res.objective == pytest.approx(default.objective, abs=AGREE)


def test_a_solver_that_hands_the_program_back_warns():
    problem, world = make_bail_problem()
    with mock.patch.object(unit_ipm, "analyse", lambda prog: "kept out by the test"), \
            pytest.warns(SolverFallbackWarning, match=fallback_text(
                "unit-ipm", "it handed the program back (kept out by the test)",
                "highs-ds")):
        res = optimize_policy(problem, world, Independence(), epsilon=0.05,
                              solver="unit-ipm")
    assert res.solver_choice["handed_back"] == {"unit-ipm": "kept out by the test"}


@pytest.mark.parametrize(("world", "kw", "asked"), [
    ("belief", {"lam": 0.5}, "term-ipm"), ("belief", {"epsilon": 0.05}, "scenarios"),
    ("one", {"epsilon": 0.05}, "unit-ipm"), ("one", {"epsilon": 0.05}, "structured"),
    ("one", {"epsilon": 0.05}, "HIGHS"), ("one", {"epsilon": 0.05}, "CLARABEL"),
    ("one", {"epsilon": 0.05}, None), ("belief", {"epsilon": 0.05}, None),
])
def test_a_solver_that_takes_the_program_does_not_warn(world, kw, asked):
    problem, w = make_bail_problem() if world == "one" else _belief(4, 2, 2, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("error", SolverFallbackWarning)
        res = optimize_policy(problem, w, Independence(), solver=asked, **kw)
    assert res.solver_choice["reason"].startswith(
        f"solver={asked!r} asked for" if asked not in (None, "HIGHS")
        else ("solver='highs'", "the default chain"))


def test_names_are_read_case_insensitively_and_unknown_names_have_one_error():
    assert resolve_solver("HIGHS") == resolve_solver("highs") == "highs"
    assert resolve_solver("Structured") == "structured"
    assert resolve_solver("UNIT-IPM") == "unit-ipm"
    assert resolve_solver("clarabel") == "CLARABEL"
    for bad in ("simplex", "highs_ds", "", "distributed", "highs-dual-warm"):
        with pytest.raises(SolverError, match="is not usable here: use None"):
            resolve_solver(bad)
    problem, world = make_bail_problem()
    with pytest.raises(SolverError, match="'highs-ipm-no-crossover'"):
        optimize_policy(problem, world, solver="nonsense")


def test_highs_in_any_case_is_the_native_highs_as_documented():
    """Finding: api.py documented that "HIGHS" goes through cvxpy while the solver sent it
    to native HiGHS. It is native HiGHS in any case, and the docstring says so."""
    problem, world = make_bail_problem()
    res = optimize_policy(problem, world, Independence(), epsilon=0.05, solver="HIGHS")
    assert res.solver == "HiGHS (highs-ds)"
    assert res.solver_choice["reason"].startswith("solver='highs' asked for")
    doc = inspect.getdoc(optimize_policy)
    assert '"HIGHS") goes through cvxpy' not in doc
    assert "case-insensitively" in doc


def test_the_warm_frontier_keeps_its_warm_start_for_any_spelling_of_highs():
    """Finding: the warm frontier compared the solver name case-sensitively after
    lower-casing it, so solver="HIGHS" silently lost the warm start."""
    from tests.test_optimize_known import PROBLEM, WORLD

    eps = [2.0, 0.0, 1.0, 0.3]
    for spelling in ("highs", "HIGHS", "HiGHS-DS"):
        front = pareto_frontier(PROBLEM, WORLD, Independence(), eps, solver=spelling)
        assert front["solver"].str.contains("warm from epsilon").sum() == len(eps) - 1
        np.testing.assert_allclose(front["utility"],
                                   [0.55 + 0.1 * min(e, 2.0) for e in eps], atol=1e-9)


def test_explain_names_the_solver_and_why():
    problem, world = make_tabular_problem(1500, 2, 2, 2, random_state=0)
    res = optimize_policy(problem, world, Independence(), epsilon=0.01)
    text = res.explain()
    assert text.startswith("Solved by structured")
    assert "the first solver of the default chain" in text
    assert "certified optimality" in text
    assert "recomputed from the policy's decision table" in text
    assert "chosen by     : the default chain: structured" in res.summary()


def test_the_thresholds_are_the_declarations():
    """The size rules live in the chain's declarations: the structured solver's minimum
    size moves the choice."""
    problem, world = make_tabular_problem(1500, 2, 2, 2, random_state=0)
    with mock.patch.object(cases, "STRUCTURED_MIN_COLUMNS", 10**9):
        res = optimize_policy(problem, world, Independence(), epsilon=0.01)
    assert res.solver_choice["order"][0] == "highs-ds"
    assert "policy columns (< 1000000000)" in res.solver_choice["passed_over"]["structured"]


def test_the_docs_table_names_every_declared_solver():
    from pathlib import Path

    text = (Path(__file__).parents[1] / "docs" / "optimization.md").read_text()
    rows = [line for line in text.splitlines() if line.startswith("| `")]
    for s in SOLVERS:
        row = next((r for r in rows if r.startswith(f"| `{s.name}`")
                    and f"| {s.stage} |" in r), None)
        assert row is not None, (s.name, s.stage)
        assert row.endswith(f"| {s.certifies} |"), (s.name, row)
    for threshold in ("TERM_MAX_COLUMNS", "TERMS_PER_COLUMN", "TERM_MAX_ENTRIES",
                      "STRUCTURED_MIN_COLUMNS", "STRUCTURED_MAX_ROWS_PER_UNIT"):
        assert hasattr(cases, threshold) and f"`{threshold}`" in text


@pytest.mark.parametrize("solver", ["highs-ds", "highs-ipm", "highs-ipm-no-crossover"])
def test_whole_program_solvers_leave_a_certificate_that_can_fail(solver):
    """HiGHS on the whole program reports a certificate like the master loops: the
    Lagrangian gap over the unit simplices at its reduced costs, computed from the
    solution. Certified at HiGHS's optimum; not for a policy moved off it."""
    from fairdecide.optimize.engine import solvers
    from fairdecide.optimize.engine.highs_model import HighsModel
    from fairdecide.optimize.engine.tasks import SolveResult
    from fairdecide.optimize.program.policy_program import PolicyProgram
    from fairdecide.optimize.program.tradeoff import FairnessConstraint

    problem, world = make_tabular_problem(30, 2, 3, 2, random_state=5)
    prog = PolicyProgram(problem, Belief.plug_in(world), group_blind=False)
    program = prog.build([Separation()], FairnessConstraint((0.02,)))
    res = chain.solve_program(program, solver)
    cert = res.certificate
    assert cert is not None and cert.certified and 0 <= cert.gap <= cert.bound
    # the same certificate for a policy that puts every unit on its worst action
    model = HighsModel.from_program(program)
    model.set_method(highs_model.DUAL_SIMPLEX)
    assert model.solve()[0]
    N, n_a = program.n_units, program.n_actions
    d = model.reduced_costs()[:N * n_a].reshape(N, n_a)
    x = model.values().copy()
    x[:N * n_a] = np.eye(n_a)[d.argmax(axis=1)].reshape(-1)
    moved = SolveResult(x, model.objective, True, "optimal", "moved", 0.0)
    bad = solvers._with_certificate(moved, program, model, 0.0).certificate
    gap_by_hand = float((d.max(axis=1) - d.min(axis=1)).sum())
    assert bad.gap == pytest.approx(gap_by_hand) and not bad.certified
    res = optimize_policy(problem, world, Separation(), epsilon=0.02, solver=solver)
    assert res.certificates["optimality"]["certified"]


def test_the_cut_loops_certificate_reports_violation_beyond_the_bound():
    """Found by helper 5: constraint generation's optimality certificate reported the
    criterion's deviation as ``max_violation`` (0.05 at epsilon 0.05), where its
    docstring says the violation of rows outside the master; the criterion's own
    certificate keeps the deviation."""
    from fairdecide.optimize.engine.generation import CUT_TOL_SHARE

    problem, world = _lipschitz_world(30, seed=3)
    res = optimize_policy(problem, world, fd.Lipschitz(constant=0.2), epsilon=0.05)
    lip, opt = res.certificates["lipschitz"], res.certificates["optimality"]
    assert lip["certified"] and opt["certified"]
    dev = res.deviations["lipschitz"]
    assert lip["max_violation"] == pytest.approx(dev, abs=1e-9)  # the deviation itself
    assert dev > 0.01  # the tolerance binds, so the two differ
    assert 0.0 <= opt["max_violation"] <= CUT_TOL_SHARE * 1e-6


def test_a_local_optimum_claims_no_certificate_of_optimality():
    """A criterion that is not convex is solved by successive linearisation: each step's
    program may be certified, the result is not, and explain() says so."""
    problem, world = make_tabular_problem(6, 2, 2, 2, random_state=0)
    res = optimize_policy(problem, world, fd.Sufficiency(), epsilon=0.05)
    assert res.status == "locally optimal"
    assert "optimality" not in res.certificates
    text = res.explain()
    assert "local optimum" in text and "certified optimality" not in text


def test_no_certificate_is_left_over_from_an_earlier_program():
    """utility_slack solves the utility optimum first (HiGHS, certified), then the KL
    program (Clarabel): the result's certificate is the second program's, whose
    objective is the deviation, not the first's (minus the utility)."""
    problem, world = make_bail_problem()
    res = optimize_policy(problem, world, Independence(measure="kl"), utility_slack=0.05)
    assert res.solver.startswith("Clarabel")
    cert = res.certificates["optimality"]
    assert cert["solver"] == "Clarabel"
    assert cert["objective"] == pytest.approx(res.deviations["independence"], abs=1e-7)


def _methods(monkeypatch):
    """Every HiGHS method a model is set to, in order (read by a wrapper around
    HighsModel.set_method)."""
    seen = []
    real = highs_model.HighsModel.set_method

    def spy(self, method):
        seen.append(dict(method))
        return real(self, method)

    monkeypatch.setattr(highs_model.HighsModel, "set_method", spy)
    return seen


def test_a_rankings_programs_take_their_method_from_the_chain(monkeypatch):
    """Issue 52, item 3: a fair ranking's whole program takes HiGHS's method by the
    chain's size rule (its interior point above SIMPLEX_MAX_COLUMNS["ranking matrix"]
    columns), and its cut loop's master the method the chain declares for a master kept
    warm: the declarations move the methods, and the optimum stays."""
    u = np.linspace(1.0, 0.1, 12)
    g = np.array(["a", "b"] * 6)
    crit, eps = fd.ExposureParity(), 0.02
    seen = _methods(monkeypatch)
    small = fd.optimize_ranking(u, g, crit, epsilon=eps, k=6, formulation="matrix")
    assert seen == [dict(highs_model.DUAL_SIMPLEX)]  # 12 x 6 + 12: by size
    seen.clear()
    with mock.patch.dict(cases.SIMPLEX_MAX_COLUMNS, {"ranking matrix": 0}):
        large = fd.optimize_ranking(u, g, crit, epsilon=eps, k=6, formulation="matrix")
    assert seen == [dict(highs_model.INTERIOR_POINT)]
    assert large.utility == pytest.approx(small.utility, abs=1e-8)
    seen.clear()
    counts = fd.optimize_ranking(u, g, crit, epsilon=eps, k=6, formulation="counts")
    assert seen == [dict(highs_model.DUAL_SIMPLEX)]
    master = chain._BY_STAGE["master", "highs-ds"]
    monkeypatch.setitem(chain._BY_STAGE, ("master", "highs-ds"),
                        replace(master, method=highs_model.INTERIOR_POINT))
    seen.clear()
    again = fd.optimize_ranking(u, g, crit, epsilon=eps, k=6, formulation="counts")
    assert seen == [dict(highs_model.INTERIOR_POINT)]
    assert again.utility == pytest.approx(counts.utility, abs=1e-8)
    assert counts.utility == pytest.approx(small.utility, abs=1e-8)


def test_a_belief_solver_that_hands_the_program_back_says_why():
    """An asked belief-stage solver that hands the belief back at run time (here the
    term interior point, its dense term matrix over the declared limit) is named in the
    SolverFallbackWarning with its reason, not only as a solver of beliefs (b19dcbc
    said "it solves a belief before its program is written")."""
    problem, belief = _belief(5, 2, 2, 64)
    why = (r"it handed the program back \(a dense term matrix of [0-9.e+]+ numbers "
           r"\(> 0\)\)")
    with mock.patch.object(cases, "TERM_MAX_ENTRIES", 0), pytest.warns(
            SolverFallbackWarning, match=rf"^solver='term-ipm' did not solve this program: "
            rf"{why}\. highs-ds took it instead"):
        res = optimize_policy(problem, belief, Independence(), lam=0.5, solver="term-ipm")
    assert res.solver_choice["belief_stage"]["handed_back"]["term-ipm"].startswith(
        "a dense term matrix")
    default = optimize_policy(problem, belief, Independence(), lam=0.5)
    assert res.objective == pytest.approx(default.objective, abs=AGREE)
