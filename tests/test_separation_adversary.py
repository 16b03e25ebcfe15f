"""The separation adversary over a confidence set against brute force on random small
problems (issue 51, finding 8): ``extreme_rates`` (the population given, a box of
outcome probabilities) against every vertex of the box, ``extreme_rates_over_population``
(the population in an L1 ball) against every vertex of the ball and of the box, and the
separation bound ``certify_policy`` states against every vertex world of a tiny set
(tests/reference.py: the vertices are enumerated there, not by the library's code).

A rate sum_x c_x t_x v_x / sum_x c_x t_x is linear-fractional in t for fixed c and in c
for fixed t, so over a box (or a polytope) its extremes sit at vertices."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fairdecide as fd
from fairdecide.criteria.over_set import extreme_rates, extreme_rates_over_population
from fairdecide.datasets import make_tabular_problem, sample_logged_data
from tests.reference import (
    l1_ball_vertices,
    rates_by_brute_force,
    separation_over_set_by_brute_force,
)

SEP = fd.Separation(measure="max", reference="pairwise")


def _rows(rng, R: int, n: int) -> tuple[np.ndarray, ...]:
    """R random rows of n cells: values in [0, 1] (some exactly 0 or 1, some tied),
    weights with zeros, intervals [lo, hi] in [0, 1] with some lower ends at 0."""
    v = rng.choice([0.0, 1.0, 0.5, *rng.uniform(size=3)], size=(R, n))
    c = rng.uniform(size=(R, n)) * (rng.uniform(size=(R, n)) > 0.25)
    lo = np.where(rng.uniform(size=(R, n)) < 0.35, 0.0, rng.uniform(0, 0.7, size=(R, n)))
    hi = np.minimum(1.0, lo + rng.uniform(0, 0.6, size=(R, n)))
    return v, c, lo, hi


def _extreme(values: np.ndarray, largest: bool) -> float:
    """The largest (smallest) of the brute force's rates; -inf (inf) without any."""
    if not values.size:
        return -np.inf if largest else np.inf
    return float(values.max() if largest else values.min())


@settings(max_examples=60, deadline=None, derandomize=True)
@given(st.integers(1, 4), st.integers(1, 5), st.integers(0, 2**31 - 1), st.booleans())
def test_extreme_rates_are_the_best_vertex_of_every_rows_box(R, n, seed, largest):
    rng = np.random.RandomState(seed)
    v, c, lo, hi = _rows(rng, R, n)
    rate, at_hi = extreme_rates(v, c, lo, hi, largest)
    for k in range(R):
        want = _extreme(rates_by_brute_force(v[k], c[k][None], lo[k], hi[k]), largest)
        assert rate[k] == pytest.approx(want, abs=1e-12), (k, v[k], c[k], lo[k], hi[k])
        if np.isfinite(want):  # the stated vertex gives the stated rate
            q = c[k] * np.where(at_hi[k], hi[k], lo[k])
            assert q @ v[k] / q.sum() == pytest.approx(want, abs=1e-12)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(st.integers(1, 3), st.integers(1, 5), st.integers(0, 2**31 - 1),
       st.sampled_from([0.0, 0.05, 0.3, 1.0, 2.0]), st.booleans())
def test_extreme_rates_over_population_are_the_best_vertex_of_ball_and_box(
        R, n, seed, r, largest):
    rng = np.random.RandomState(seed)
    v, c, lo, hi = _rows(rng, R, n)
    h = c + 1e-3 * (c.sum(axis=1, keepdims=True) == 0)  # a row of zeros has no population
    h = h / h.sum(axis=1, keepdims=True)  # some cells of weight 0 at the centre
    radius = r * rng.uniform(0.5, 1.0, size=R)
    rate, _, _ = extreme_rates_over_population(v, h, radius, lo, hi, largest)
    for k in range(R):
        want = _extreme(rates_by_brute_force(v[k], l1_ball_vertices(h[k], radius[k]),
                                             lo[k], hi[k]), largest)
        assert rate[k] == pytest.approx(want, abs=1e-9), (k, v[k], h[k], radius[k],
                                                          lo[k], hi[k])


@settings(max_examples=12, deadline=None, derandomize=True)
@given(st.integers(2, 3), st.integers(2, 3), st.integers(2, 3), st.integers(0, 10_000),
       st.booleans())
def test_certify_policy_states_the_largest_separation_gap_of_any_world_of_the_set(
        n_x, n_z, n_a, seed, population_given):
    """A random policy's separation bound from ``certify_policy`` is the largest gap
    between two groups' rates given the outcome over every vertex world of the set."""
    problem, truth = make_tabular_problem(n_x, n_z, n_a, 2, random_state=seed)
    data = sample_logged_data(problem, truth, 60 * n_x * n_z, random_state=seed)
    cs = fd.ConfidenceSet.from_data(data, problem, delta=0.2,
                                    population=truth if population_given else None)
    rng = np.random.RandomState(seed)
    policy = fd.TabularPolicy(rng.dirichlet(np.ones(n_a) * 0.5, size=(n_x, n_z)))
    (bound,) = fd.certify_policy(problem, cs, policy, SEP).deviations.values()
    assert bound == pytest.approx(separation_over_set_by_brute_force(policy.table, cs),
                                  abs=1e-9)
