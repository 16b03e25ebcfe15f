"""The methods a route asks of a trade-off instead of dispatching on its class: each is
checked against the trade-off's exact objective (merit) and feasibility, which the
verifier uses, on random utilities and deviations of random beliefs."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import fairdecide as fd
from fairdecide.datasets import make_tabular_problem
from fairdecide.optimize.program.tradeoff import (
    FairnessConstraint,
    MaxUtility,
    Mixture,
    UtilityConstraint,
)

_, WORLD = make_tabular_problem(3, 2, 2, random_state=0)


def _belief(K: int, aggregate: str, rng: np.random.Generator) -> fd.Belief:
    return fd.Belief([WORLD] * K, weights=rng.dirichlet(np.ones(K)), aggregate=aggregate)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), K=st.integers(1, 5), C=st.integers(1, 3),
       aggregate=st.sampled_from(["mean", "worst"]), lam=st.floats(0, 1),
       tol=st.floats(0, 0.1))
def test_methods_agree_with_merit_and_feasibility(seed, K, C, aggregate, lam, tol):
    rng = np.random.default_rng(seed)
    belief = _belief(K, aggregate, rng)
    U, F = rng.normal(size=K), rng.uniform(0, 0.3, size=(C, K))
    eps = tuple(rng.uniform(0, 0.3, C))
    floor = float(rng.normal())
    for tr in (MaxUtility(), Mixture(lam), FairnessConstraint(eps),
               UtilityConstraint(0.1, utility_min=floor), UtilityConstraint()):
        # the gradient route's objective: sign x combine(V) with V_k = wu U_k + wf F_k
        wu, wf, sign = tr.value_weights()
        V = wu * U + wf * F.sum(axis=0)
        # the worst case of a value to minimise is its largest, of one to maximise its
        # smallest: combine() takes the smallest, so a minimised V is combined negated
        value = sign * belief.combine(V) if sign < 0 else -belief.combine(-V)
        assert np.isclose(value, tr.merit(U, F, belief), atol=1e-12)
        # feasibility, from violation and violation_tol, against the constraints
        # written out here: each aggregated deviation within epsilon + tol, the
        # aggregated utility above the floor - utility_tol
        utility_tol = tol / 2
        agg = np.array([belief.combine_deviation(f) for f in F])
        want = {FairnessConstraint: bool(np.all(agg <= np.asarray(eps) + tol)),
                UtilityConstraint: tr.utility_floor is None or bool(
                    belief.combine(U) >= floor - utility_tol)}.get(type(tr), True)
        assert tr.feasible(U, F, belief, tol, utility_tol) == want
        # the bounds and the floor are the trade-off's own
        bounds = tr.deviation_bounds(C)
        assert len(bounds) == C
        assert (np.isfinite(bounds).any()) == tr.bounds_deviations
        assert tr.utility_floor == (floor if tr == UtilityConstraint(0.1, utility_min=floor)
                                    else None)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), C=st.integers(1, 3), share=st.floats(0, 1),
       miss=st.floats(0, 0.2))
def test_tightening_and_relaxing_move_the_constraints(seed, C, share, miss):
    rng = np.random.default_rng(seed)
    eps = tuple(rng.uniform(0, 0.3, C))
    agg = rng.uniform(0, 0.5, C)
    tr = FairnessConstraint(eps)
    relaxed = tr.relaxed(agg, share).epsilon
    # moved toward the start's deviations by `share` of the gap, never below epsilon
    np.testing.assert_allclose(relaxed, np.asarray(eps) + share * np.maximum(agg - eps, 0))
    assert all(r >= e for r, e in zip(relaxed, eps, strict=True))
    np.testing.assert_allclose(tr.tightened(miss).epsilon,
                               np.maximum(np.asarray(eps) - 2 * miss, 0))
    floor = UtilityConstraint(0.1, utility_min=0.5)
    assert floor.tightened(miss).utility_floor == 0.5 + 2 * miss
    # trade-offs with nothing to relax or tighten
    for other in (Mixture(0.3), MaxUtility(), UtilityConstraint()):
        assert other.relaxed(agg, share) is None and other.tightened(miss) == other
