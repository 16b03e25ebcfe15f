"""The certificates of the one-shot solvers (the interior point over unit blocks and cvxpy)
can fail: a point short of the optimum is not certified, and its gap bounds how far it is
from an optimum computed independently."""

from __future__ import annotations

import numpy as np

from fairdecide import Belief, Independence
from fairdecide.datasets import make_bail_problem
from fairdecide.optimize.engine import chain, solvers, unit_ipm
from fairdecide.optimize.engine.highs_model import DUAL_SIMPLEX
from fairdecide.optimize.engine.rounds import GAP
from fairdecide.optimize.engine.tasks import SolveResult
from fairdecide.optimize.program.policy_program import PolicyProgram
from fairdecide.optimize.program.tradeoff import Mixture
from tests.test_unit_ipm import _program


def _highs_optimum(program):
    res = chain.solve_program(program, "highs-ds")
    assert res.ok
    return res.objective


def test_an_interior_point_stopped_early_is_not_certified(monkeypatch):
    _, _, program = _program(12, 3, 3, 4, False, Mixture(0.3), seed=2)
    optimum = _highs_optimum(program)
    done = chain.solve_program(program, "unit-ipm")
    assert done.certificate.certified
    assert done.objective - done.certificate.gap <= optimum + 1e-9
    monkeypatch.setattr(unit_ipm, "TOL", 1e-3)  # stop far from the optimum
    early = chain.solve_program(program, "unit-ipm")
    cert = early.certificate
    assert early.solver.startswith("unit interior point")
    assert early.objective - optimum > 1e3 * GAP  # it did stop short
    assert not cert.certified and cert.gap > cert.bound
    # the gap bounds the distance to the optimum (up to the point's own infeasibility)
    assert early.objective - optimum <= cert.gap + 1e-3


def test_a_cone_solution_is_certified_by_its_tangent_relaxation():
    """A KL program solved by Clarabel: the certificate's lower bound is below the
    optimum; the same program's certificate at another trade-off's solution (a feasible
    point, since lam changes only the objective) shows the gap of that point."""
    problem, world = make_bail_problem()
    pp = PolicyProgram(problem, Belief.plug_in(world), group_blind=False)
    crit = [Independence(measure="kl")]
    prog, other = pp.build(crit, Mixture(0.3)), pp.build(crit, Mixture(0.9))
    res = chain.solve_program(prog, "CLARABEL")
    assert res.certificate.certified and res.certificate.gap <= res.certificate.bound
    x_other = chain.solve_program(other, "CLARABEL").x
    assert np.allclose(other.A_ub.toarray(), prog.A_ub.toarray())
    worse = SolveResult(x_other, float(prog.c @ x_other), True, "optimal", "Clarabel",
                        0.0)
    cert = solvers._relaxation_certificate(worse, prog, None, DUAL_SIMPLEX).certificate
    shortfall = worse.objective - res.objective
    assert shortfall > 1e-4  # the other trade-off's point is far from this optimum
    assert not cert.certified
    # the relaxation's bound is below the optimum: the gap is at least the shortfall
    assert cert.gap >= shortfall - 2 * res.certificate.bound
    assert cert.max_violation <= solvers.CONE_TOL
