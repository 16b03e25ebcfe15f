"""A confidence set pooled over the groups of a cell (``pooled=True``, issue 42): the
certified optimum against an independent LP built from scipy's exact binomial intervals on
the pooled counts, its coverage of a truth whose outcome depends on the group, and the
inputs it refuses."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import fairdecide as fd
from fairdecide.datasets import sample_logged_data
from tests.reference import interval_maximin, set_population_min, set_worst_value


def _truth(seed: int, n_x: int = 4, n_z: int = 3) -> tuple[fd.DecisionProblem, fd.TabularWorld]:
    """A prediction world whose P(y | x, z) differs by group (so pooling matters)."""
    rng = np.random.RandomState(seed)
    p_xz = rng.dirichlet(np.ones(n_x * n_z)).reshape(n_x, n_z)
    p1 = rng.uniform(0.05, 0.95, size=(n_x, n_z))
    world = fd.TabularWorld(p_xz, np.stack([1 - p1, p1], axis=-1))
    return fd.DecisionProblem.classification(2), world


def _pooled_intervals(data: fd.LoggedData, n_x: int, delta: float):
    """scipy's exact (Clopper-Pearson) interval of P(y = 1 | x) from all the cell's rows,
    each at level 1 - delta / (cells with data): the union bound over the cells."""
    n = np.bincount(data.x, minlength=n_x)
    k = np.bincount(data.x, weights=data.y, minlength=n_x).astype(int)
    d = delta / np.count_nonzero(n)
    lo, hi = np.zeros(n_x), np.ones(n_x)
    for x in np.flatnonzero(n):
        ci = stats.binomtest(k[x], n[x]).proportion_ci(1 - d, method="exact")
        lo[x], hi[x] = ci.low, ci.high
    return lo, hi


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_pooled_certified_optimum_equals_the_lp_over_scipys_pooled_intervals(seed):
    problem, truth = _truth(seed)
    data = sample_logged_data(problem, truth, 300, random_state=seed)
    cs = fd.ConfidenceSet.from_data(data, problem, delta=0.1, population=truth,
                                    pooled=True)
    res = fd.optimize_policy(problem, cs, group_blind=True)
    lo, hi = _pooled_intervals(data, truth.n_x, 0.1)
    expected = interval_maximin(problem.utility, truth.p_xz.sum(axis=1), lo, hi)
    assert res.guarantee.value == pytest.approx(expected, abs=1e-7)
    assert res.utility != pytest.approx(res.guarantee.value)  # the centre's, not the worst
    # narrower than the set per (cell, group): the same data certify more
    per_group = fd.optimize_policy(problem, fd.ConfidenceSet.from_data(
        data, problem, delta=0.1, population=truth), group_blind=True)
    assert res.guarantee.value > per_group.guarantee.value


def test_the_pooled_set_covers_a_group_dependent_truth():
    # P(y | x) of the truth is the P(z | x)-weighted mean of its groups' conditionals; the
    # set must hold it (and the population) in at least 1 - delta of the data sets
    problem, truth = _truth(5)
    w = truth.p_xz / truth.p_xz.sum(axis=1, keepdims=True)
    true_p1 = (w * truth.p_y[..., 1]).sum(axis=1)
    reps, held, held_scipy = 200, 0, 0
    for i in range(reps):
        data = sample_logged_data(problem, truth, 150, random_state=100 + i)
        cs = fd.ConfidenceSet.from_data(data, problem, delta=0.2, pooled=True)
        held += cs.contains(truth)
        lo, hi = _pooled_intervals(data, truth.n_x, 0.2 / 2)  # less than the set's share
        held_scipy += bool(np.all((lo <= true_p1) & (true_p1 <= hi)))
    # 0.8 is the floor; a 99.9% binomial interval's lower end at p = 0.8 over 200 sets
    floor = stats.binom.ppf(0.001, reps, 0.8)
    assert held >= floor and held_scipy >= floor


def test_a_pooled_set_refuses_what_it_cannot_certify():
    problem, truth = _truth(1)
    data = sample_logged_data(problem, truth, 200, random_state=3)
    cs = fd.ConfidenceSet.from_data(data, problem, pooled=True)
    with pytest.raises(fd.FairdecideError, match="group_blind=True"):
        fd.optimize_policy(problem, cs)
    with pytest.raises(fd.FairdecideError, match="reads the outcome"):
        fd.optimize_policy(problem, cs, fd.Separation(measure="max", reference="pairwise"),
                           epsilon=0.1, group_blind=True)
    table = np.zeros((truth.n_x, truth.n_z, 2))
    table[..., 0] = 1.0
    table[0, 0] = [0.0, 1.0]  # treats group 0 of cell 0 apart
    with pytest.raises(fd.FairdecideError, match="group-blind policies only"):
        cs.worst_value(fd.TabularPolicy(table), problem)
    with pytest.raises(fd.FairdecideError, match="pooled"):
        fd.ConfidenceSet.from_data(data, problem, pooled="yes")
    # an outcome-free criterion is certified, over the estimated populations too
    res = fd.optimize_policy(problem, cs, fd.Independence(measure="max",
                                                          reference="pairwise"),
                             epsilon=0.2, group_blind=True)
    (bound,) = res.guarantee.deviations.values()
    assert bound <= 0.2 + 1e-7
    # the population estimated: each cell's pooled ball, then the groups' P(x | z) and
    # P(z) at their worst, one LP per ball
    assert res.guarantee.value == pytest.approx(set_worst_value(cs, res.policy, problem),
                                                abs=1e-8)


def test_a_pooled_intervention_takes_each_cells_best_worst_action():
    # P(y | a, x) pooled over the groups: each (cell, action) interval from all its rows
    rng = np.random.RandomState(7)
    n = 600
    x, z, a = rng.randint(0, 3, n), rng.randint(0, 2, n), rng.randint(0, 2, n)
    y = (rng.uniform(size=n) < 0.2 + 0.2 * x * a + 0.1 * z).astype(int)
    problem = fd.DecisionProblem(utility=[[0.0, 0.0], [-1.0, 2.0]],
                                 outcome_depends_on_action=True)
    data = fd.LoggedData(x=x, z=z, y=y, a=a, propensity=np.full(n, 0.5))
    cs = fd.ConfidenceSet.from_data(data, problem, delta=0.1, pooled=True)
    res = fd.optimize_policy(problem, cs, group_blind=True)
    counts = np.zeros((3, 2, 2))  # (x, a, y)
    np.add.at(counts, (x, a, y), 1)
    n_c = counts.sum(axis=-1)
    d = 0.1 / (np.count_nonzero(n_c) + 1 + 2)  # the cells' intervals, P(z), each P(x | z)
    U = problem.utility
    worst = np.zeros((3, 2))
    for xi, ai in np.ndindex(3, 2):
        ci = stats.binomtest(int(counts[xi, ai, 1]), int(n_c[xi, ai])).proportion_ci(
            1 - d, method="exact")
        worst[xi, ai] = min(U[ai, 0] + (U[ai, 1] - U[ai, 0]) * p for p in (ci.low, ci.high))
    # the population is estimated: the worst population (one LP per ball) weighs each
    # cell's best action
    best = np.repeat(worst.max(axis=1)[:, None], 2, axis=1)  # (x, z)
    assert res.guarantee.value == pytest.approx(set_population_min(cs, best), abs=1e-7)
