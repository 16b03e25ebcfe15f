"""Separation certified over a confidence set whose population is estimated (issue 42,
item 2): the adversary's extreme rates against an independent linear-fractional program
(Charnes-Cooper, scipy's linprog), the population codes, and the optimised policy's
certified bound against that LP over every pair of groups."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

import fairdecide as fd
from fairdecide.criteria.over_set import (
    extreme_rates_over_population,
    population_code,
    population_vertex,
)
from fairdecide.datasets import make_tabular_problem, sample_logged_data
from fairdecide.uncertainty.balls import worst_in_ball
from tests.reference import set_worst_value

SEP = fd.Separation(measure="max", reference="pairwise")


def ratio_lp(v, h, r, lo, hi, largest: bool) -> float:
    """max (min) of sum q v / sum q over q_x = p_x t_x, i.e. lo_x p_x <= q_x <= hi_x p_x,
    p in the simplex and ||p - h||_1 <= r; Charnes-Cooper: scale by s = 1 / sum q, so
    (q, p, d, s) >= 0 with sum q = 1, sum p = s, |p - s h| <= d, sum d <= s r."""
    n = len(v)
    # variables: q (n), p (n), d (n), s (1)
    nv = 3 * n + 1
    c = np.zeros(nv)
    c[:n] = -v if largest else v
    A_ub = []
    for x in range(n):
        row = np.zeros(nv)  # lo p - q <= 0
        row[n + x], row[x] = lo[x], -1.0
        A_ub.append(row)
        row = np.zeros(nv)  # q - hi p <= 0
        row[x], row[n + x] = 1.0, -hi[x]
        A_ub.append(row)
        for sign in (1.0, -1.0):  # sign (p - s h) - d <= 0
            row = np.zeros(nv)
            row[n + x], row[3 * n], row[2 * n + x] = sign, -sign * h[x], -1.0
            A_ub.append(row)
    row = np.zeros(nv)  # sum d - s r <= 0
    row[2 * n:3 * n], row[3 * n] = 1.0, -r
    A_ub.append(row)
    A_eq = np.zeros((2, nv))
    A_eq[0, :n] = 1.0
    A_eq[1, n:2 * n], A_eq[1, 3 * n] = 1.0, -1.0
    res = linprog(c, np.array(A_ub), np.zeros(len(A_ub)), A_eq, [1.0, 0.0],
                  bounds=[(0, None)] * nv, method="highs",
                  options={"primal_feasibility_tolerance": 1e-10,
                           "dual_feasibility_tolerance": 1e-10})
    assert res.status == 0, res.message
    return -res.fun if largest else res.fun


@settings(max_examples=80, deadline=None)
@given(st.integers(2, 6), st.integers(0, 10_000), st.floats(0.0, 2.0), st.booleans())
def test_the_adversary_is_the_linear_fractional_programs_optimum(n, seed, r, largest):
    rng = np.random.RandomState(seed)
    v = rng.uniform(size=n)
    h = rng.dirichlet(np.ones(n))
    lo = np.where(rng.uniform(size=n) < 0.3, 0.0, rng.uniform(0.05, 0.6, size=n))
    hi = np.minimum(1.0, lo + rng.uniform(0.01, 0.5, size=n))
    rate, at_hi, code = extreme_rates_over_population(v[None], h[None], np.array([r]),
                                                      lo[None], hi[None], largest)
    assert rate[0] == pytest.approx(ratio_lp(v, h, r, lo, hi, largest), abs=1e-7)
    # the stored world gives the stated rate
    p = population_vertex(h[None], np.array([r]), code)[0]
    t = np.where(at_hi[0], hi, lo)
    assert p.min() >= -1e-12 and abs(p.sum() - 1) <= 1e-12
    assert np.abs(p - h).sum() <= r + 1e-12
    assert (p * t * v).sum() / (p * t).sum() == pytest.approx(rate[0], abs=1e-9)


def test_a_world_without_mass_at_the_optimum_is_not_taken_for_the_worst():
    # at lam = R* = 1 cell 0 (v = 0, lower end 0) ties with cell 1: moving all of the
    # population to cell 0 leaves no mass, and no rate; the worst rate is still 1
    rate, at_hi, code = extreme_rates_over_population(
        np.array([[0.0, 1.0]]), np.array([[0.5, 0.5]]), np.array([2.0]),
        np.array([[0.0, 0.2]]), np.array([[0.3, 0.6]]), True)
    assert rate[0] == pytest.approx(1.0)
    p = population_vertex(np.array([[0.5, 0.5]]), np.array([2.0]), code)[0]
    t = np.where(at_hi[0], [0.3, 0.6], [0.0, 0.2])
    assert (p * t).sum() > 0 and (p * t)[1] / (p * t).sum() == pytest.approx(1.0)
    assert rate[0] == pytest.approx(ratio_lp(np.array([0.0, 1.0]), np.array([0.5, 0.5]), 2.0,
                                             np.array([0.0, 0.2]), np.array([0.3, 0.6]),
                                             True), abs=1e-7)


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 6), st.integers(0, 10_000), st.floats(0.0, 2.5))
def test_population_codes_rebuild_the_balls_vertex(n, seed, r):
    rng = np.random.RandomState(seed)
    h = rng.dirichlet(np.ones(n) * 0.7)
    p = worst_in_ball(rng.normal(size=n), h, np.array(r))
    back = population_vertex(h[None], np.array([r]), population_code(h[None], p[None]))
    assert np.allclose(back[0], p, atol=1e-12)


def _lp_gap(policy, cs) -> float:
    """The largest separation gap over the set, pair by pair, from ratio_lp."""
    center = cs.center
    n_x, n_z = center.n_x, center.n_z
    rows = policy.proba(center.units()).reshape(n_x, n_z, -1)
    p1 = cs.ball_center[..., 1]
    lo1, hi1 = np.clip(p1 - cs.radius / 2, 0, 1), np.clip(p1 + cs.radius / 2, 0, 1)
    ends = {1: (lo1, hi1), 0: (1 - hi1, 1 - lo1)}
    h, rz = center.p_x_given_z, cs.cell_radius
    worst = 0.0
    for y, a in itertools.product((0, 1), range(rows.shape[2])):
        lo, hi = ends[y]
        top = [ratio_lp(rows[:, z, a], h[:, z], rz[z], lo[:, z], hi[:, z], True)
               for z in range(n_z)]
        low = [ratio_lp(rows[:, z, a], h[:, z], rz[z], lo[:, z], hi[:, z], False)
               for z in range(n_z)]
        worst = max(worst, max(top[i] - low[j] for i in range(n_z) for j in range(n_z)
                               if i != j))
    return worst


@pytest.mark.parametrize("seed", [0, 1])
def test_separation_with_an_estimated_population_is_certified_as_the_lp_finds(seed):
    problem, truth = make_tabular_problem(4, 2, 2, 2, random_state=seed)
    data = sample_logged_data(problem, truth, 3000, random_state=seed)
    cs = fd.ConfidenceSet.from_data(data, problem, delta=0.2)
    assert not cs.population_given
    res = fd.optimize_policy(problem, cs, SEP, epsilon=0.3)
    bound = res.guarantee.deviations["separation"]
    assert bound == pytest.approx(_lp_gap(res.policy, cs), abs=1e-6)
    assert bound <= 0.3 + 1e-6
    # the value is certified over the same set: its worst there, one LP per ball
    assert res.guarantee.value == pytest.approx(set_worst_value(cs, res.policy, problem),
                                                abs=1e-8)
    # the given population's set is a subset: it certifies at least as much value
    given = fd.optimize_policy(problem, fd.ConfidenceSet.from_data(
        data, problem, delta=0.2, population=truth), SEP, epsilon=0.3)
    assert given.guarantee.value >= res.guarantee.value - 1e-9


def test_the_worst_world_rebuilds_from_its_codes_where_a_cell_receives_mass():
    # a cell without mass at the centre (h = 0) that the worst population fills: its
    # outcome end is part of the world (b19dcbc dropped it, and a cut rebuilt from the
    # codes had no mass: HiGHS failed on COMPAS separation with the population estimated)
    v, h, r = np.array([[1.0, 0.2, 0.0]]), np.array([[0.0, 0.5, 0.5]]), np.array([0.6])
    lo, hi = np.array([[0.1, 0.1, 0.1]]), np.array([[0.9, 0.9, 0.9]])
    rate, at_hi, code = extreme_rates_over_population(v, h, r, lo, hi, True)
    assert code[0, 0] == 3 and at_hi[0, 0]  # the empty cell receives mass, at its upper end
    p = population_vertex(h, r, code)
    t = np.where(at_hi, hi, lo)
    assert (p * t * v).sum() / (p * t).sum() == pytest.approx(rate[0], abs=1e-12)
