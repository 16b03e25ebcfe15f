"""The gradient route's stopping tests: objective changes against a tolerance relative to
the utility's scale (only for a penalised family), violations of verified rows against
a share of ``tol``, and a certificate's rows (Lipschitz weight bounds) held exactly.

Known answers: the scaling that decouples SLSQP's tests leaves its iterates unchanged
(the same program solved without it); the tolerances follow the family and the utility;
a penalised search still reaches the LP's optimum on the bail intervention; the rows
held exactly are the criterion's own weight bound.
"""

from __future__ import annotations

import numpy as np
import pytest

import fairdecide as fd
from fairdecide.datasets import make_bail_problem
from fairdecide.optimize.program.tradeoff import FairnessConstraint
from fairdecide.optimize.routes.gradient_program import FEASIBILITY_TOL, _Program
from fairdecide.optimize.routes.parametric import ParametricSession


def _sample_world(n=300, seed=0):
    rng = np.random.RandomState(seed)
    z = rng.randint(0, 2, n)
    X = rng.normal(size=(n, 2)) + 0.7 * z[:, None]
    p1 = 1 / (1 + np.exp(-(X @ np.array([1.0, -0.5]))))
    return fd.SampleWorld(X, z, np.c_[1 - p1, p1])


@pytest.mark.parametrize("crits", [[fd.Independence()],
                                   [fd.Lipschitz(constant=0.3), fd.Independence()]],
                         ids=["independence", "with-lipschitz"])
def test_the_scaled_program_takes_the_unscaled_steps(crits):
    """Dividing the objective by c^2 in y = x / c, and the verified rows by a constant,
    changes only SLSQP's stopping tests: five iterations (before any test can stop it)
    end where the unscaled program's five end."""
    problem, world = fd.DecisionProblem.classification(2), _sample_world()
    tradeoff = FairnessConstraint(tuple(0.0 if isinstance(c, fd.Lipschitz) else 0.02
                                        for c in crits))
    session = ParametricSession(problem, fd.Belief([world]), fd.LinearSoftmaxPolicy(),
                                crits, [f"c{i}" for i in range(len(crits))], tradeoff,
                                1e-6, 5, 1, 0)
    theta0 = np.random.RandomState(1).normal(0, 0.5, session.template.parameters.size)
    prog = _Program(session, tradeoff, list(range(len(crits))), theta0)
    plain, ok, nit, _ = prog.solve(5)
    scaled, ok_scaled, nit_scaled, _ = prog.solve(5, objective_tol=1e-6, verified_tol=1e-7)
    assert nit == nit_scaled == 5 and not ok and not ok_scaled
    np.testing.assert_allclose(scaled, plain, rtol=1e-7, atol=1e-9)


def test_the_tolerances_follow_the_family_and_the_utility_scale():
    world = _sample_world()
    kw = dict(epsilon=0.05, random_state=0, n_restarts=1, tol=1e-5)
    for scale in (1.0, 10.0):
        problem = fd.DecisionProblem(scale * np.eye(2))
        res = fd.optimize_policy(problem, world, fd.Independence(),
                                 policy=fd.LinearSoftmaxPolicy(l2=1e-5), **kw)
        assert res.stats["objective_tol"] == pytest.approx(1e-7 * scale, rel=1e-12)
    # without a ridge the optimum may lie at infinity: objective changes stop nothing
    bare = fd.optimize_policy(fd.DecisionProblem.classification(2), world, fd.Independence(),
                              policy=fd.LinearSoftmaxPolicy(l2=0.0), **kw)
    assert bare.stats["objective_tol"] is None
    assert fd.LinearSoftmaxPolicy(l2=1e-5).penalised
    assert not fd.LinearSoftmaxPolicy(l2=0.0).penalised


def test_a_penalised_search_reaches_the_lp_optimum_on_the_bail_intervention():
    """Cells one-hot and the group additive (tests/test_gradient_route.py): with a ridge
    the search stops on objective changes below 1e-7 and still ends within the ridge's
    cost of the exact LP optimum (0.4168; measured 0.41648, as with 1e-10)."""
    problem, world = make_bail_problem()
    xs, zs = np.meshgrid(np.arange(world.n_x), np.arange(world.n_z), indexing="ij")
    xs, zs = xs.ravel(), zs.ravel()
    additive = fd.SampleWorld(np.eye(world.n_x)[xs], zs, world.p_y[xs, zs],
                              weights=world.p_xz[xs, zs])
    lp = fd.optimize_policy(problem, world, fd.Independence(), epsilon=0.05)
    res = fd.optimize_policy(problem, additive, fd.Independence(), epsilon=0.05,
                             policy=fd.LinearSoftmaxPolicy(include_z=True, l2=1e-5),
                             random_state=0, n_restarts=10)
    assert res.status == "locally optimal"
    assert res.stats["objective_tol"] == pytest.approx(1e-7 * np.abs(problem.utility).max())
    # the deviation recomputed by hand: F = sum_z sum_a |P(a | z) - P(a)|
    pi = res.policy.proba(additive.units())
    w = additive.unit_weights()
    rates = np.array([(w[zs == g] @ pi[zs == g]) / w[zs == g].sum() for g in (0, 1)])
    overall = w @ pi / w.sum()
    assert np.abs(rates - overall).sum() <= 0.05 + 1e-6
    assert lp.utility - 1e-3 <= res.utility <= lp.utility + 1e-6


def test_the_exact_rows_are_the_lipschitz_weight_bound():
    problem, world = fd.DecisionProblem.classification(2), _sample_world()
    crits = [fd.Independence(), fd.Lipschitz(constant=0.3)]
    tradeoff = FairnessConstraint((0.05, 0.0))
    session = ParametricSession(problem, fd.Belief([world]), fd.LinearSoftmaxPolicy(),
                                crits, ["i", "l"], tradeoff, 1e-6, 50, 1, 0)
    theta = np.random.RandomState(2).normal(size=session.template.parameters.size)
    prog = _Program(session, tradeoff, [0, 1], theta)
    bound = crits[1].parameter_constraints(session.template)(theta)[0]
    assert prog.n_exact == len(bound) > 0
    np.testing.assert_array_equal(prog.constraints(prog.x0)[0][-prog.n_exact:], bound)
    # and a converged search meets them to FEASIBILITY_TOL: the certificate holds
    res = fd.optimize_policy(problem, world, [crits[0], fd.Lipschitz(constant=0.3,
                                                                      name="l")],
                             epsilon=[0.05, 0.0],
                             policy=fd.LinearSoftmaxPolicy(l2=1e-5), random_state=0,
                             n_restarts=1)
    assert res.status == "locally optimal"
    cert = res.certificates["l"]
    assert cert["certified"] and cert["lipschitz_bound"] <= 0.3 + FEASIBILITY_TOL
