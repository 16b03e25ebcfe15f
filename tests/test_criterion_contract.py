"""The criterion contract: every criterion, built in or defined by a user outside the
package, goes through the same checks.

- its label, capabilities and (for dataclass criteria) equality and ``replace``;
- its deviation is a finite non-negative number, the same whether computed from the
  policy or from the decision table;
- its program rows reproduce its exact deviation: with the policy fixed, minimising the
  deviation variable gives the deviation (every expansion it is used with);
- optimising with a binding tolerance returns a verified policy that meets it.

``StratumParity`` below is a criterion written outside the package (conditional
statistical parity within strata of the cells): it reads the policy rows and the units'
cells, not the group marginal, and plugs into the optimiser with no change to it.
"""

from __future__ import annotations

import dataclasses
import itertools
from dataclasses import dataclass

import numpy as np
import pytest
import scipy.sparse as sp

from fairdecide import (
    Belief,
    Capabilities,
    Capacity,
    ConditionalIndependence,
    Criterion,
    Independence,
    MeritOrder,
    Separation,
    Sufficiency,
    TabularPolicy,
    decision_table,
    optimize_policy,
)
from fairdecide.datasets import make_bail_problem, make_tabular_problem
from fairdecide.optimize.engine.chain import solve_program
from fairdecide.optimize.program.policy_program import PolicyProgram
from fairdecide.optimize.program.tradeoff import UtilityConstraint
from tests.reference import (
    assert_recomputed,
    deviation_by_hand,
    marginal_by_hand,
    policy_rows,
    world_arrays,
)


@dataclass(frozen=True)
class StratumParity(Criterion):
    """Conditional statistical parity within strata of x:
    F = sum_s sum_z sum_a |P(a | s, z) - P(a | s)| over strata s of the cells, leaving
    out (s, z) of zero mass. Linear in the policy: the masses P(s, z) do not depend on it.
    """

    strata: tuple[int, ...]  # stratum of each cell

    @property
    def label(self) -> str:
        return "stratum parity"

    def capabilities(self, problem):
        return Capabilities(reads="rows", linear=True, program=True)

    def _masses(self, units, weights):
        s = np.asarray(self.strata)[units.cell]
        n_s = max(self.strata) + 1
        W_sz = np.zeros((n_s, units.n_groups))
        np.add.at(W_sz, (s, units.group), weights)
        return s, W_sz, W_sz.sum(axis=1)

    def deviation_from_table(self, table, problem):
        units = table.units
        mass = table.joint.sum(axis=2)  # w[u] pi(a | u)
        s, W_sz, W_s = self._masses(units, mass.sum(axis=1))
        n_s, n_z = W_sz.shape
        N = np.zeros((n_s, n_z, problem.n_actions))
        np.add.at(N, (s, units.group), mass)
        total = 0.0
        for k in range(n_s):
            for z in range(n_z):
                if W_sz[k, z] > 1e-12:
                    total += np.abs(N[k, z] / W_sz[k, z] - N[k].sum(0) / W_s[k]).sum()
        return float(total)

    def add_rows(self, block, how):
        units, w = block.units, block.unit_weights
        s, W_sz, W_s = self._masses(units, w)
        n_a = block.problem.n_actions
        rows, cols, vals = [], [], []
        r = 0
        for k, z in zip(*np.nonzero(W_sz > 1e-12), strict=True):
            in_s = np.flatnonzero(s == k)
            in_sz = in_s[units.group[in_s] == z]
            for a in range(n_a):
                for u in in_sz:
                    rows.append(r)
                    cols.append(block.free_of_unit[u] * n_a + a)
                    vals.append(w[u] / W_sz[k, z])
                for u in in_s:
                    rows.append(r)
                    cols.append(block.free_of_unit[u] * n_a + a)
                    vals.append(-w[u] / W_s[k])
                r += 1
        D = sp.csr_matrix((vals, (rows, cols)), shape=(r, block.pi_cols.size))
        block.add_abs_epigraph(D, np.zeros(r), block.pi_cols.reshape(-1), np.ones(r), "sum")


BAIL, BAIL_WORLD = make_bail_problem()
PRED, PRED_WORLD = make_tabular_problem(4, 3, 3, 2, random_state=5)
INTERV, INTERV_WORLD = make_tabular_problem(3, 2, 2, 2, outcome_depends_on_action=True,
                                            random_state=2)

def _per_cell(crit):
    """Criteria holding one value per cell of a four-cell world."""
    return isinstance(crit, StratumParity) or (isinstance(crit, MeritOrder)
                                                and crit.merit is not None)


CRITERIA = [
    Independence(), Independence(measure="max"), Independence(measure="kl"),
    Independence(weighting="group"), Separation(), Separation(weighting="group"),
    Separation(measure="max", outcomes=[1]), Sufficiency(), Sufficiency(weighting="group"),
    Independence(measure="max", reference="pairwise"), Separation(reference="pairwise"),
    Sufficiency(measure="max", reference="pairwise"), MeritOrder(),
    MeritOrder(merit=(2.0, 0.5, 1.0, 0.0)), StratumParity((0, 0, 1, 1)),
    Capacity(1, at_most=0.1), Capacity(0, at_least=0.3, per_group=True),
    Capacity([1], at_most=0.2, at_least=0.05, per_group=True),
]
CASES = [(c, p, w) for c in CRITERIA for p, w in ((PRED, PRED_WORLD), (INTERV, INTERV_WORLD))
         if not (_per_cell(c) and w.n_x != 4)
         ] + [(StratumParity((0, 0, 1)), INTERV, INTERV_WORLD)]
IDS = [f"{c!r}-{'intervention' if p.outcome_depends_on_action else 'prediction'}"
       for c, p, _ in CASES]


def stratum_parity_by_hand(strata):
    """StratumParity's deviation written from the world's arrays, for assert_recomputed:
    sum_s sum_z sum_a |P(a | s, z) - P(a | s)| with P(a | s, z) the P(x, z)-weighted mean
    of pi(a | x, z) over the cells x of stratum s."""
    def deviation(problem, world, rows):
        n_x, n_z = world.p_xz.shape
        pi = rows.reshape(n_x, n_z, -1)
        total = 0.0
        for k in set(strata):
            cells = [x for x in range(n_x) if strata[x] == k]
            w = world.p_xz[cells]  # (cells, z)
            pooled = np.einsum("xz,xza->a", w, pi[cells]) / w.sum()
            for g in range(n_z):
                if w[:, g].sum() > 1e-12:
                    group = w[:, g] @ pi[cells, g] / w[:, g].sum()
                    total += np.abs(group - pooled).sum()
        return total
    return deviation


def utility_parity_by_hand(problem, world, rows):
    """examples/custom_criterion.py's UtilityParity, sum_z |E[U | z] - E[U]|, from the
    marginal P(z, a, y) computed by hand."""
    M = marginal_by_hand(problem, world, rows)
    by_group = np.einsum("zay,ay->z", M, problem.utility) / M.sum(axis=(1, 2))
    return float(np.abs(by_group - np.einsum("zay,ay->", M, problem.utility)).sum())


def merit_order_by_hand(merit):
    """MeritOrder's deviation written from its definition: in each group, between cells
    on neighbouring merit levels (merit(i) < merit(j), no level between them),
    max(0, max P(a >= k | i) - P(a >= k | j)), the actions in the problem's order."""
    def deviation(problem, world, rows):
        n_x, n_z = world.p_xz.shape
        pi = rows.reshape(n_x, n_z, -1)
        m = np.arange(n_x) if merit is None else np.asarray(merit)
        levels = sorted(set(m.tolist()))
        worst = 0.0
        for z in range(n_z):
            for lo, hi in itertools.pairwise(levels):
                for i in np.flatnonzero(m == lo):
                    for j in np.flatnonzero(m == hi):
                        for k in range(1, problem.n_actions):
                            worst = max(worst, pi[i, z, k:].sum() - pi[j, z, k:].sum())
        return worst
    return deviation


def capacity_by_hand(crit):
    """Capacity's deviation from the world's arrays: the shares sum_u w[u] sum_{a in A}
    pi(a | u) (overall, or within each group over the group's weight) and the largest
    excess over [at_least, at_most], or 0."""
    def deviation(problem, world, rows):
        w, z, _ = world_arrays(world, problem)
        chosen = rows[:, list(crit.actions)].sum(axis=1)  # labels are the codes here
        parts = [z == g for g in range(world.n_groups)] if crit.per_group else [z == z]
        excess = [0.0]
        for members in parts:
            share = w[members] @ chosen[members] / w[members].sum()
            if crit.at_most is not None:
                excess.append(share - crit.at_most)
            if crit.at_least is not None:
                excess.append(crit.at_least - share)
        return max(excess)
    return deviation


def by_hand(crit):
    """``by_hand`` for assert_recomputed: a user criterion's deviation written here."""
    if isinstance(crit, Capacity):
        return {crit.label: capacity_by_hand(crit)}
    if isinstance(crit, MeritOrder):
        return {crit.label: merit_order_by_hand(crit.merit)}
    if isinstance(crit, StratumParity):
        return {crit.label: stratum_parity_by_hand(crit.strata)}
    if crit.label == "utility parity":
        return {crit.label: utility_parity_by_hand}
    return None


def random_policy(world, problem, seed):
    rng = np.random.default_rng(seed)
    return TabularPolicy(rng.dirichlet(np.ones(problem.n_actions), size=(world.n_x, world.n_z)))


@pytest.mark.parametrize(("crit", "problem", "world"), CASES, ids=IDS)
def test_description(crit, problem, world):
    assert isinstance(crit.label, str) and crit.label
    caps = crit.capabilities(problem)
    assert isinstance(caps, Capabilities) and caps.reads in ("marginal", "rows")
    assert crit.is_linear(problem) == caps.linear
    assert dataclasses.replace(crit) == crit
    assert hash(crit) == hash(dataclasses.replace(crit))


@pytest.mark.parametrize(("crit", "problem", "world"), CASES, ids=IDS)
def test_deviation_is_finite_non_negative_and_read_from_the_table(crit, problem, world):
    for seed in range(3):
        pi = random_policy(world, problem, seed)
        dev = crit.deviation(pi, world, problem)
        assert np.isfinite(dev) and dev >= 0
        assert dev == crit.deviation_from_table(decision_table(problem, world, pi), problem)
        # and it is the criterion's formula, computed here from the world's arrays
        rows, hand = policy_rows(pi, world), by_hand(crit)
        want = (hand[crit.label](problem, world, rows) if hand else
                deviation_by_hand(marginal_by_hand(problem, world, rows), crit, problem))
        assert dev == pytest.approx(want, abs=1e-10)


@pytest.mark.parametrize(("crit", "problem", "world"), CASES, ids=IDS)
def test_program_rows_reproduce_the_deviation(crit, problem, world):
    """With the policy fixed, the smallest value of the deviation variable the rows allow
    is the exact deviation, for every expansion the optimiser uses."""
    caps = crit.capabilities(problem)
    prog = PolicyProgram(problem, Belief.plug_in(world), group_blind=False)
    pi = random_policy(world, problem, 7)
    free = pi.table.reshape(-1, problem.n_actions)  # x-major cells = free rows
    exact = crit.deviation(pi, world, problem)
    for how in ("exact",) if caps.linear else ("first-order", "fixed-mass"):
        program = prog.build([crit], UtilityConstraint(), point=free, how=how)
        program.lb[: prog.n_pi] = program.ub[: prog.n_pi] = free.reshape(-1)
        res = solve_program(program)
        assert res.ok, res.status
        assert res.objective == pytest.approx(exact, abs=1e-5 if caps.cone else 1e-7), how


@pytest.mark.parametrize(("crit", "problem", "world"), CASES, ids=IDS)
def test_optimised_policy_meets_a_binding_tolerance(crit, problem, world):
    free = optimize_policy(problem, world)
    # the free optimum's deviation, computed by hand from the world's arrays (its
    # reported utility and deviation must be those)
    _, top = assert_recomputed(free, problem, world, crit, by_hand=by_hand(crit))
    eps = 0.5 * top[crit.label]
    assert eps > 1e-3  # binding: the free optimum is unfair
    res = optimize_policy(problem, world, crit, epsilon=eps)
    # utility and deviation recomputed by hand; the deviation within eps
    assert_recomputed(res, problem, world, crit, epsilon=eps, by_hand=by_hand(crit))
    assert res.utility <= free.utility + 1e-9


def test_presets_are_conditional_independence_criteria():
    assert Separation(outcomes=[1]) == ConditionalIndependence(
        "action", "outcome", given_values=[1])
    assert Independence() == ConditionalIndependence("action")
    assert Sufficiency(actions=["release"]) == ConditionalIndependence(
        "outcome", "action", given_values=("release",))
    assert dataclasses.replace(Separation(), measure="max") == Separation(measure="max")
    assert repr(Separation(outcomes=[1])) == (
        "Separation(measure='tv', weighting='uniform', outcomes=(1,))")
    assert repr(Independence(name="dp")) == (
        "Independence(measure='tv', weighting='uniform', name='dp')")


def test_user_criterion_with_one_stratum_is_independence():
    """One stratum: P(a | s, z) = P(a | z), so stratum parity is independence."""
    problem, world = PRED, PRED_WORLD
    one = StratumParity((0, 0, 0, 0))
    for eps in (0.0, 0.05):
        mine = optimize_policy(problem, world, one, epsilon=eps)
        ref = optimize_policy(problem, world, Independence(), epsilon=eps)
        assert mine.utility == pytest.approx(ref.utility, abs=1e-8)
        assert mine.status == "optimal"


def test_user_criterion_with_one_cell_per_stratum_is_group_blindness():
    """One cell per stratum at epsilon 0: P(a | x, z) = P(a | x), the group-blind optimum."""
    problem, world = PRED, PRED_WORLD
    mine = optimize_policy(problem, world, StratumParity((0, 1, 2, 3)), epsilon=0.0)
    blind = optimize_policy(problem, world, group_blind=True)
    assert mine.utility == pytest.approx(blind.utility, abs=1e-8)
    assert mine.policy.is_group_blind


def test_user_criterion_in_a_belief_and_the_mixture():
    problem, world = BAIL, BAIL_WORLD
    crit = StratumParity((0, 0, 1, 1, 1))
    other = make_bail_problem()[1]
    belief = Belief((world, other))
    res = optimize_policy(problem, belief, crit, lam=0.5)
    # the mean utility and deviation over the scenarios, recomputed by hand, and the
    # mixture's objective 0.5 U - 0.5 F from them
    u, f = assert_recomputed(res, problem, belief, crit, by_hand=by_hand(crit))
    assert res.objective == pytest.approx(0.5 * u - 0.5 * f["stratum parity"], abs=1e-8)


def test_a_criterion_without_program_rows_is_refused_clearly():
    @dataclass(frozen=True)
    class Opaque(Criterion):
        label = "opaque"

        def capabilities(self, problem):
            return Capabilities(linear=False, program=False)

        def deviation_from_table(self, table, problem):
            return 0.0

    from fairdecide import FairdecideError

    with pytest.raises(FairdecideError, match="no optimisation route takes"):
        optimize_policy(BAIL, BAIL_WORLD, Opaque(), epsilon=0.1)


def _example_module():
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "examples" / "custom_criterion.py"
    spec = importlib.util.spec_from_file_location("custom_criterion_example", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_examples_criterion_meets_the_contract(capsys):
    """examples/custom_criterion.py runs, and its criterion passes the contract."""
    example = _example_module()
    example.main()
    assert "utility parity <= 0.0" in capsys.readouterr().out
    crit = example.UtilityParity()
    for problem, world in ((BAIL, BAIL_WORLD), (PRED, PRED_WORLD), (INTERV, INTERV_WORLD)):
        test_description(crit, problem, world)
        test_deviation_is_finite_non_negative_and_read_from_the_table(crit, problem, world)
        test_program_rows_reproduce_the_deviation(crit, problem, world)
        test_optimised_policy_meets_a_binding_tolerance(crit, problem, world)
