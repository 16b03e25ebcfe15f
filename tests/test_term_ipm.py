"""The interior point in the policy's space for penalised beliefs
(fairdecide.optimize.engine.term_ipm): a hand-solved program, Lagrange's bound, optima
against HiGHS on the whole program, the certificate, and the programs it leaves alone."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fairdecide import Belief, Independence, Separation, optimize_policy
from fairdecide.datasets import make_tabular_problem
from fairdecide.exceptions import SolverFallbackWarning
from fairdecide.optimize.engine.term_ipm import TermProblem, solve_terms
from tests.test_structured import make_belief

#: HiGHS's vertex is exact to its feasibility tolerance (1e-9 relative to the
#: objective's scale) and the interior point's certified gap is at most 1e-9 (the master
#: loop's rule): the objectives agree to their sum.
REL = 2e-9


def _one_unit(q, g, h, rho):
    return TermProblem(np.array([q]), np.array([[g]]), np.array([h]), np.array([rho]),
                       0.0, 1, 2)


@pytest.mark.parametrize(("q", "g", "h", "rho", "want_u", "want"), [
    # min q u + rho |g u + h| on [0, 1]: piecewise linear, its minimum at 0, 1 or the
    # kink u = -h / g, written out by hand
    (-1.0, 1.0, -0.5, 3.0, 0.5, -0.5),     # the kink: slopes -4 then +2
    (-1.0, 1.0, -0.5, 0.5, 1.0, -0.75),    # the penalty too weak: u = 1, -1 + 0.25
    (1.0, 2.0, 1.0, 1.0, 0.0, 1.0),        # both pieces rise: u = 0, 0 + |1|
    (-2.0, -1.0, 0.25, 1.0, 1.0, -1.25),   # kink at 0.25, slope -1 after it: u = 1
])
def test_hand_solved_single_unit(q, g, h, rho, want_u, want):
    tp = _one_unit(q, g, h, rho)
    run = solve_terms(tp)
    assert run.converged
    assert run.u[0] == pytest.approx(want_u, abs=1e-7)
    assert run.objective == pytest.approx(want, abs=1e-9)
    assert run.lower <= want + 1e-12
    assert run.objective - run.lower <= 1e-9


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), n_units=st.integers(1, 5), n_a=st.integers(2, 4),
       R=st.integers(1, 30))
def test_lagrange_bound_is_below_every_policy(seed, n_units, n_a, R):
    """Weak duality, checked by brute force: L(y) <= the objective of any policy, for any
    prices y (clipped to their box), so the certificate's bound is a bound."""
    rng = np.random.default_rng(seed)
    n = n_units * (n_a - 1)
    tp = TermProblem(rng.normal(size=n), rng.normal(size=(R, n)), rng.normal(size=R),
                     rng.uniform(0, 2, R), float(rng.normal()), n_units, n_a)
    bound = tp.lower_bound(rng.normal(scale=3.0, size=R))
    for _ in range(20):
        pi = rng.dirichlet(np.ones(n_a), n_units)
        assert bound <= tp.value(pi[:, 1:].ravel()) + 1e-12
    run = solve_terms(tp)
    assert run.converged
    # the optimum is below every vertex policy (u at a simplex's corners), checked
    # exhaustively where there are few
    if n_a ** n_units <= 256:
        corners = np.array(np.meshgrid(*[np.arange(n_a)] * n_units)).reshape(n_units, -1).T
        best = min(tp.value(np.eye(n_a)[c][:, 1:].ravel()) for c in corners)
        assert run.objective <= best + 1e-9
    assert run.objective - run.lower <= 1e-9 * max(1.0, abs(run.objective))


def test_residuals_stay_at_rounding_to_the_end():
    """Near the end Z / X and the kinks' 1 / P span many orders. Taken duals first, the
    rounding error of a kinked term's dual was multiplied into the primal step (a
    one-unit program stalled at a primal residual of 1e-4, test_hand_solved above);
    taken policy first, every run here converges with the loop's relative residuals
    (TOL = 1e-10) at rounding: median 3e-13 on these problems, tested against 1e-11,
    and every run certifies."""
    residuals = []
    for seed in range(100, 112):
        rng = np.random.default_rng(seed)
        n_units, n_a, R = 70, 3, 3000
        n = n_units * (n_a - 1)
        G = rng.normal(size=(R, n)) * rng.uniform(0, 1, n) ** 3
        tp = TermProblem(0.1 * rng.normal(size=n), G, 0.1 * rng.normal(size=R),
                         rng.uniform(0, 1e-3, R), 0.0, n_units, n_a)
        run = solve_terms(tp)
        assert run.converged
        assert run.objective - run.lower <= 1e-9 * max(1.0, abs(run.objective))
        residuals.append(run.residual)
    assert np.median(residuals) <= 1e-11


def _belief(n_x, n_z, n_a, K, seed, aggregate="mean"):
    problem, world = make_tabular_problem(n_x, n_z, n_a, 2, random_state=seed)
    worlds = make_belief(problem, world, K, np.random.default_rng(seed))
    return problem, Belief(worlds, aggregate=aggregate)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 1000), n_x=st.integers(2, 8), n_z=st.integers(2, 3),
       n_a=st.integers(2, 3), K=st.integers(2, 12), lam=st.sampled_from([0.05, 0.3, 0.7]),
       blind=st.booleans(), criterion=st.sampled_from(["independence", "separation"]))
def test_optimum_equals_highs_on_the_whole_program(seed, n_x, n_z, n_a, K, lam, blind,
                                                   criterion):
    """Random penalised beliefs: the term interior point's optimum is HiGHS's dual
    simplex optimum on the program with every marginal written out."""
    problem, belief = _belief(n_x, n_z, n_a, K, seed)
    crit = Independence() if criterion == "independence" else Separation()
    ours = optimize_policy(problem, belief, crit, lam=lam, group_blind=blind,
                           solver="term-ipm")
    theirs = optimize_policy(problem, belief, crit, lam=lam, group_blind=blind,
                             solver="highs-ds")
    assert ours.solver.startswith("term interior point")
    assert abs(ours.objective - theirs.objective) <= REL * max(1.0, abs(theirs.objective))
    cert = ours.certificates["optimality"]
    assert cert["solver"] == "term interior point" and cert["certified"]
    # the certificate's bound is below the independent optimum (minimisation units)
    assert cert["objective"] - cert["gap"] <= -theirs.objective + 1e-12


def test_chosen_by_default_when_terms_far_outnumber_columns():
    """A group-blind policy over few cells and many scenarios: the default route is the
    term interior point, with the optimum HiGHS finds on the whole program."""
    problem, belief = _belief(4, 3, 2, 64, seed=3)
    res = optimize_policy(problem, belief, Separation(), lam=0.4, group_blind=True)
    ref = optimize_policy(problem, belief, Separation(), lam=0.4, group_blind=True,
                          solver="highs-ds")
    assert res.solver.startswith("term interior point")
    assert abs(res.objective - ref.objective) <= REL * max(1.0, abs(ref.objective))
    assert res.stats["term_ipm"]["terms"] >= 8 * res.stats["term_ipm"]["columns"]


@pytest.mark.parametrize(("aggregate", "kwargs"), [
    ("mean", {"epsilon": 0.05}),          # a constraint, not a penalty
    ("worst", {"lam": 0.4}),              # not linear in the scenarios
])
def test_leaves_other_programs_to_the_other_routes(aggregate, kwargs):
    problem, belief = _belief(4, 3, 2, 64, seed=3, aggregate=aggregate)
    why = ("a trade-off that bounds deviations (it takes a penalty: lam)"
           if "epsilon" in kwargs else "the worst case over scenarios (it takes their mean)")
    with pytest.warns(SolverFallbackWarning, match=re.escape(
            f"solver='term-ipm' did not solve this program: it does not take {why}.")):
        res = optimize_policy(problem, belief, Separation(), group_blind=True, **kwargs,
                              solver="term-ipm")
    ref = optimize_policy(problem, belief, Separation(), group_blind=True, **kwargs,
                          solver="highs-ds")
    assert not res.solver.startswith("term interior point")
    assert abs(res.objective - ref.objective) <= REL * max(1.0, abs(ref.objective))
