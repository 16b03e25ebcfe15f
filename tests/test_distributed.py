"""The distributed solver (optimize_policy on a FrameWorld; optimize_distributed, its
deprecated shorthand): the master over vertex mixtures, priced unit by unit, against the
exact in-memory program and an LP written here on populations that fit, on pandas and on
a Dask LocalCluster; the settings it cannot honour refused by name."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fairdecide as fd
from fairdecide.datasets import make_bail_problem
from fairdecide.exceptions import FairdecideError, SolverError, VerificationError
from fairdecide.optimize import outcome_columns
from fairdecide.optimize.engine.rounds import GAP

from .reference import reference_solve

PRED = fd.DecisionProblem([[1.0, -1.0], [-0.5, 0.5]], outcome_depends_on_action=False)


def on_units(problem: fd.DecisionProblem, units, criteria, **kw) -> fd.OptimizeResult:
    """The optimal policy of a table of units, through the one door (optimize_distributed,
    deprecated, was its shorthand)."""
    return fd.optimize_policy(problem, fd.FrameWorld(units, problem), criteria, **kw)


def population(n: int, n_z: int, seed: int, problem: fd.DecisionProblem
               ) -> tuple[pd.DataFrame, np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.RandomState(seed)
    z = rng.randint(0, n_z, n)
    z[:n_z] = np.arange(n_z)  # every group has people
    w = rng.uniform(0.5, 2.0, n)
    if problem.outcome_depends_on_action:
        p = rng.dirichlet(np.ones(problem.n_outcomes), size=(n, problem.n_actions))
        flat = p.reshape(n, -1)
    else:
        p = rng.dirichlet(np.ones(problem.n_outcomes), size=n)
        flat = p
    cols = dict(zip(outcome_columns(problem), flat.T, strict=True))
    return pd.DataFrame({"z": z, "w": w, **cols}), z, w, p


def in_memory(problem, z, w, p, n_z, crit, **kw):
    """The exact program: a TabularWorld with one cell per person."""
    n = len(z)
    p_xz = np.zeros((n, n_z))
    p_xz[np.arange(n), z] = w / w.sum()
    p_y = np.repeat(p[:, None], n_z, axis=1)
    return fd.optimize_policy(problem, fd.TabularWorld(p_xz, p_y), crit, **kw)


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 10_000), n_z=st.integers(2, 4),
       crit=st.sampled_from(["independence", "separation"]),
       tradeoff=st.sampled_from([("epsilon", 0.0), ("epsilon", 0.03), ("lam", 0.3)]))
def test_same_optimum_as_the_exact_program(seed, n_z, crit, tradeoff):
    criterion = fd.Independence() if crit == "independence" else fd.Separation()
    units, z, w, p = population(400, n_z, seed, PRED)
    kw = {tradeoff[0]: tradeoff[1]}
    ref = in_memory(PRED, z, w, p, n_z, criterion, **kw)
    res = on_units(PRED, units, [criterion], **kw)
    assert isinstance(res, fd.OptimizeResult) and res.status == "optimal"
    assert res.objective == pytest.approx(ref.objective, abs=1e-8)
    assert res.utility == pytest.approx(ref.utility, abs=1e-6 if kw.get("lam") else 1e-8)
    # the policy, recomputed unit by unit here, gives the result's utility and deviation
    pi = res.policy.frame_proba(units)
    np.testing.assert_allclose(pi.sum(axis=1), 1.0, atol=1e-12)
    assert pi.min() >= 0
    M = np.zeros((n_z, 2, 2))
    np.add.at(M, z, (w / w.sum())[:, None, None] * pi[:, :, None] * p[:, None, :])
    assert np.einsum("zay,ay->", M, PRED.utility) == pytest.approx(res.utility, abs=1e-12)
    dev = criterion.deviation_from_table(fd.DecisionTable.from_marginal(M), PRED)
    assert dev == pytest.approx(res.deviations[criterion.label], abs=1e-12)
    if "epsilon" in kw:
        assert dev <= kw["epsilon"] + 1e-9


@pytest.mark.parametrize("kw", [
    {"utility_slack": 0.01}, {"tradeoff": fd.optimize.UtilityConstraint(0.01)},
    {"tradeoff": fd.optimize.Mixture(0.3)},
    {"tradeoff": fd.optimize.FairnessConstraint((0.02,))}])
def test_every_tradeoff_as_object_or_shorthand_gives_the_exact_optimum(kw):
    """tradeoff= objects and utility_slack (whose U* comes from one pass over the
    units) reach the in-memory program's optimum, solved by HiGHS."""
    units, z, w, p = population(300, 3, 11, PRED)
    ref = in_memory(PRED, z, w, p, 3, fd.Independence(), solver="highs", **kw)
    res = on_units(PRED, units, [fd.Independence()], **kw)
    assert res.tradeoff == ref.tradeoff
    assert res.objective == pytest.approx(ref.objective, abs=1e-8)
    assert res.utility == pytest.approx(ref.utility, abs=1e-6)


def test_interventions_with_independence():
    problem, _ = make_bail_problem()
    units, z, w, p = population(600, 3, 1, problem)
    for kw in ({"epsilon": 0.02}, {"lam": 0.5}):
        ref = in_memory(problem, z, w, p, 3, fd.Independence(), **kw)
        res = on_units(problem, units, [fd.Independence()], **kw)
        assert res.objective == pytest.approx(ref.objective, abs=1e-8)


@pytest.mark.slow  # 4-12 s: runs with CI's slow tests
def test_dask_local_cluster_gives_the_same_optimum():
    import dask.dataframe as dd
    from dask.distributed import Client, LocalCluster

    units, *_ = population(5000, 2, 3, PRED)
    local = on_units(PRED, units, [fd.Separation()], epsilon=0.02)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=":0") as cluster, Client(cluster):
        dask_units = dd.from_pandas(units, npartitions=3).persist()
        # the front door on Dask (the local solve went through the shorthand)
        res = fd.optimize_policy(PRED, fd.FrameWorld(dask_units, PRED), fd.Separation(),
                                 epsilon=0.02)
        parts = [d.compute() for d in dask_units.to_delayed()]
    assert res.utility == pytest.approx(local.utility, abs=1e-10)
    assert res.stats["distributed"]["partitions"] == 3
    pi = np.vstack([res.policy.frame_proba(part, i) for i, part in enumerate(parts)])
    np.testing.assert_allclose(pi.sum(axis=1), 1.0, atol=1e-12)
    # the rows of the collected units give the utility the workers' pass verified
    whole = pd.concat(parts)
    p1 = whole["p_1"].to_numpy()
    wn = whole["w"].to_numpy() / whole["w"].sum()
    u = np.sum(wn[:, None] * pi * (np.outer(1 - p1, PRED.utility[:, 0])
                                   + np.outer(p1, PRED.utility[:, 1])))
    assert u == pytest.approx(res.utility, abs=1e-12)


def test_bad_input_is_named():
    units, *_ = population(50, 2, 0, PRED)
    with pytest.raises(FairdecideError, match="linear in"):
        on_units(PRED, units, [fd.Sufficiency()], epsilon=0.1)
    with pytest.raises(FairdecideError, match=r"lacks the columns \['p_1'\]"):
        on_units(PRED, units.drop(columns="p_1"), [fd.Independence()],
                             epsilon=0.1)
    with pytest.raises(FairdecideError, match="finite"):
        on_units(PRED, units.assign(w=np.nan), [fd.Independence()],
                             epsilon=0.1)
    with pytest.raises(FairdecideError, match="at least two"):
        on_units(PRED, units.assign(z=0), [fd.Independence()], epsilon=0.1)
    with pytest.raises(FairdecideError, match="exactly one trade-off"):
        on_units(PRED, units, [fd.Independence()])
    with pytest.raises(FairdecideError, match="units must be"):
        on_units(PRED, units.to_numpy(), [fd.Independence()], epsilon=0.1)
    with pytest.raises(FairdecideError, match="epsilon needs at least one fairness criterion"):
        on_units(PRED, units, [], epsilon=0.1)
    with pytest.raises(FairdecideError, match="tradeoff must be a trade-off object"):
        on_units(PRED, units, [fd.Independence()], tradeoff="epsilon")
    with pytest.raises(FairdecideError, match="max_iter must be a positive integer"):
        on_units(PRED, units, [fd.Independence()], epsilon=0.1, max_iter=0)


def test_the_mixture_policy_names_bad_input():
    units, *_ = population(60, 2, 0, PRED)
    res = on_units(PRED, units, [fd.Independence()], epsilon=0.02)
    pol = res.policy
    with pytest.raises(FairdecideError, match="index must be below"):
        pol.frame_proba(units, 1)
    with pytest.raises(FairdecideError, match="block"):
        pol.proba(fd.Units(group=[0, 1], n_groups=2))
    with pytest.raises(FairdecideError, match="of one shape"):
        fd.policies.VertexMixturePolicy([np.zeros((2, 2, 2))], np.ones((3, 2)))
    with pytest.raises(FairdecideError, match="not made on a units table"):
        fd.policies.VertexMixturePolicy([np.zeros((2, 2, 2))], np.ones((3, 1))
                                        ).frame_proba(units)


def _corrupt_pass(monkeypatch, change):
    """Make the verification pass (FrameWorld.decision_table, partition by partition)
    return change(M) instead of the marginal it summed."""
    import fairdecide.worlds.frame as fw

    real = fw._part_table

    def corrupted(part, index, policy, problem, *args):
        out = real(part, index, policy, problem, *args)
        M = out[:-1].reshape(-1, problem.n_actions, problem.n_outcomes).copy()
        return np.append(change(M).reshape(-1), out[-1])

    monkeypatch.setattr(fw, "_part_table", corrupted)


@pytest.mark.parametrize("kw", [{"epsilon": 0.02}, {"lam": 0.3}])
def test_a_policy_whose_recomputation_disagrees_raises(monkeypatch, kw):
    """The verification pass recomputes M from the units; a pass that disagrees with the
    master (here: every unit's mass moved to action 0, which breaks the utility check and,
    under epsilon, is still fair) raises instead of returning a result."""
    units, _, w, p = population(300, 2, 5, PRED)
    good = on_units(PRED, units, [fd.Independence()], **kw)
    # uncorrupted, the utility is sum_i (w_i / sum w) sum_{a,y} pi(a | i) p(y | i) U(a, y)
    pi = good.policy.frame_proba(units)
    by_hand = np.einsum("i,ia,iy,ay->", w / w.sum(), pi, p, PRED.utility)
    assert good.utility == pytest.approx(by_hand, abs=1e-9)
    assert good.policy.frame_proba(units)[:, 1].sum() > 0.05 * len(units)

    def all_to_action_0(M):
        out = np.zeros_like(M)
        out[:, 0] = M.sum(axis=1)
        return out

    _corrupt_pass(monkeypatch, all_to_action_0)
    with pytest.raises(VerificationError, match="utility"):
        on_units(PRED, units, [fd.Independence()], **kw)


def test_a_broken_tolerance_raises(monkeypatch):
    """Under epsilon, a recomputed deviation above the tolerance fails the trade-off's own
    check (the same check optimize_policy makes)."""
    units, z, *_ = population(300, 2, 6, PRED)
    good = on_units(PRED, units, [fd.Independence()], epsilon=0.02)
    assert good.policy.frame_proba(units)[z == 0, 0].sum() > 0.05 * len(units)

    def unfair(M):
        M[0, 1] += M[0, 0]  # group 0: every unit's mass to action 1
        M[0, 0] = 0.0
        return M

    _corrupt_pass(monkeypatch, unfair)
    with pytest.raises(VerificationError, match="independence, TV summed vs pooled <= epsilon"):
        on_units(PRED, units, [fd.Independence()], epsilon=0.02)


def test_rows_off_the_simplex_fail_verification(monkeypatch):
    """The pass reports how far the policy's rows are off the simplex; verification
    checks it as it checks every optimised policy's rows."""
    import fairdecide.policies.mixture as mixture

    units, *_ = population(200, 2, 7, PRED)
    real = mixture.VertexMixturePolicy.proba
    monkeypatch.setattr(mixture.VertexMixturePolicy, "proba",
                        lambda self, u: 1.01 * real(self, u))
    with pytest.raises(VerificationError, match="simplex"):
        on_units(PRED, units, [fd.Independence()], epsilon=0.02)


# ---------------------------------------------------------------- the front door
def by_reference(z, w, p, n_z, kind, **kw):
    """(utility, deviation) of the optimum from tests/reference.py's LP (dense rows over a
    policy table with one cell per person, written without the library's program)."""
    n = len(z)
    p_xz = np.zeros((n, n_z))
    p_xz[np.arange(n), z] = w / w.sum()
    world = fd.TabularWorld(p_xz, np.repeat(p[:, None], n_z, axis=1))
    return reference_solve(PRED, world, kind, **kw)


# the master stops when its duality gap is at most GAP max(1, |objective|); the reference
# LP is solved to HiGHS's tolerances (1e-9 relative on these sizes)
AGREE = 10 * GAP


@pytest.mark.parametrize(("kind", "kw", "ref_kw"), [
    (None, {}, {}),
    ("independence", {"epsilon": 0.03}, {"epsilon": 0.03}),
    ("separation", {"lam": 0.3}, {"lam": 0.3}),
    ("independence", {"utility_slack": 0.01}, {"slack": 0.01})])
def test_both_doors_give_the_reference_optimum(kind, kw, ref_kw):
    """optimize_policy on a FrameWorld and optimize_distributed (deprecated: it warns) on
    its units give the same utility and deviations, and they are the optimum of an LP
    written independently."""
    units, z, w, p = population(60, 2, 21, PRED)
    crit = {None: [], "independence": [fd.Independence()],
            "separation": [fd.Separation()]}[kind]
    world = fd.FrameWorld(units, PRED)
    front = fd.optimize_policy(PRED, world, crit, **kw)
    with pytest.warns(DeprecationWarning, match=r"use fairdecide\.optimize_policy\(problem, "
                      r"fairdecide\.FrameWorld\(units, problem, group='z', weight='w'\)"):
        side = fd.optimize.optimize_distributed(PRED, units, crit, **kw)
    tol = front.verification.tol
    assert side.utility == pytest.approx(front.utility, abs=tol)
    assert side.deviations.keys() == front.deviations.keys()
    for name, dev in front.deviations.items():
        assert side.deviations[name] == pytest.approx(dev, abs=tol)
    want_u, want_f = by_reference(z, w, p, 2, kind, **ref_kw)
    if "lam" in kw:
        lam = kw["lam"]
        assert front.objective == pytest.approx((1 - lam) * want_u - lam * want_f, abs=AGREE)
    else:
        assert front.utility == pytest.approx(want_u, abs=AGREE)
    if "utility_slack" in kw:
        assert front.deviations["independence"] == pytest.approx(want_f, abs=AGREE)
    # the result's policy is the world's free kind, and its rows give the utility
    assert isinstance(front.policy, world.free_policy())
    pi = front.policy.frame_proba(units)
    wn = w / w.sum()
    assert np.einsum("i,ia,iy,ay->", wn, pi, p, PRED.utility) == pytest.approx(
        front.utility, abs=1e-12)


def test_tol_is_checked_once_with_optimize_policys_default():
    """tol is validated as optimize_policy validates it (optimize_distributed, deprecated,
    passed a NaN on unchecked), and both doors default to optimize_policy's 1e-6."""
    import inspect

    units, *_ = population(40, 2, 2, PRED)
    for bad in (np.nan, -1e-6, 0.5, "1e-6"):
        with pytest.raises(FairdecideError, match="tol must be"):
            with pytest.warns(DeprecationWarning, match="optimize_distributed"):
                fd.optimize.optimize_distributed(PRED, units, [fd.Independence()],
                                                 epsilon=0.1, tol=bad)
        with pytest.raises(FairdecideError, match="tol must be"):
            fd.optimize_policy(PRED, fd.FrameWorld(units, PRED), fd.Independence(),
                               epsilon=0.1, tol=bad)
    default = inspect.signature(fd.optimize_policy).parameters["tol"].default
    assert inspect.signature(fd.optimize.optimize_distributed).parameters[
        "tol"].default == default
    with pytest.warns(DeprecationWarning, match="optimize_distributed"):
        res = fd.optimize.optimize_distributed(PRED, units, [fd.Independence()], epsilon=0.1)
    assert res.verification.tol == default == 1e-6


@pytest.mark.parametrize(("kw", "says"), [
    ({"group_blind": True}, "group_blind"),
    ({"chance_delta": 0.1}, "chance_delta"),
    ({"tradeoff": fd.optimize.FairnessConstraint((0.05,), chance_delta=0.1),
      "epsilon": None}, "chance_delta"),
    ({"policy": fd.LinearSoftmaxPolicy()}, "policy"),
    ({"solver": "highs"}, "solver"),
    ({"solver": "CLARABEL"}, "solver"),
    ({"n_restarts": 2}, "n_restarts"),
    ({"random_state": 0}, "random_state"),
    ({"criteria": [fd.Sufficiency()]}, "criteria"),
    ({"group_blind": "yes"}, "group_blind")])
def test_settings_the_master_cannot_honour_are_refused_by_name(kw, says):
    units, *_ = population(40, 2, 3, PRED)
    args = {"criteria": [fd.Independence()], "epsilon": 0.05, **kw}
    with pytest.raises(FairdecideError, match=says):
        fd.optimize_policy(PRED, fd.FrameWorld(units, PRED), **args)


def test_a_belief_over_units_tables_is_refused():
    units, *_ = population(40, 2, 4, PRED)
    world = fd.FrameWorld(units, PRED)
    with pytest.raises(FairdecideError, match="world: a belief of 2 scenarios"):
        fd.optimize_policy(PRED, fd.Belief([world, world]), fd.Independence(), epsilon=0.1)
    # a belief of the one world is that world
    one = fd.optimize_policy(PRED, fd.Belief.plug_in(world), fd.Independence(), epsilon=0.1)
    assert one.utility == fd.optimize_policy(PRED, world, fd.Independence(),
                                             epsilon=0.1).utility


def test_max_iter_bounds_the_passes_over_the_units():
    units, *_ = population(300, 3, 5, PRED)
    res = fd.optimize_policy(PRED, fd.FrameWorld(units, PRED), fd.Separation(),
                             epsilon=0.01)
    rounds = res.certificates["optimality"]["rounds"]
    assert rounds >= 2
    again = fd.optimize_policy(PRED, fd.FrameWorld(units, PRED), fd.Separation(),
                               epsilon=0.01, max_iter=rounds)
    assert again.utility == res.utility
    with pytest.raises(SolverError, match="raise max_iter"):
        fd.optimize_policy(PRED, fd.FrameWorld(units, PRED), fd.Separation(),
                           epsilon=0.01, max_iter=rounds - 1)


def test_capacity_is_held_on_a_units_table():
    """A capacity row (linear in the group marginal) joins the master; the share given
    action 1 is recomputed here from the policy's rows."""
    units, _, w, _ = population(200, 3, 8, PRED)
    res = fd.optimize_policy(PRED, fd.FrameWorld(units, PRED), fd.Independence(),
                             epsilon=0.05, capacity=fd.Capacity(1, at_most=0.3))
    pi = res.policy.frame_proba(units)
    share = float((w / w.sum()) @ pi[:, 1])
    assert share <= 0.3 + res.verification.tol
    free = fd.optimize_policy(PRED, fd.FrameWorld(units, PRED), fd.Independence(),
                              epsilon=0.05)
    assert float((w / w.sum()) @ free.policy.frame_proba(units)[:, 1]) > 0.3 + 1e-3


def test_the_frame_world_names_bad_units():
    units, *_ = population(30, 2, 9, PRED)
    with pytest.raises(FairdecideError, match="group must name a column"):
        fd.FrameWorld(units, PRED, group="g")
    with pytest.raises(FairdecideError, match="weight must name a column"):
        fd.FrameWorld(units, PRED, weight=["w"])
    with pytest.raises(FairdecideError, match=r"group: .* integer group codes"):
        fd.FrameWorld(units.assign(z=units["z"] + 0.5), PRED)
    with pytest.raises(FairdecideError, match=r"weight: .* numeric"):
        fd.FrameWorld(units.assign(w="1"), PRED)
    with pytest.raises(FairdecideError, match=r"group: .* from 0 to 63"):
        fd.FrameWorld(units.assign(z=units["z"] - 1), PRED)
    with pytest.raises(FairdecideError, match=r"weight: .* positive sum"):
        fd.FrameWorld(units.assign(w=0.0), PRED)
    with pytest.raises(FairdecideError, match="summing to one"):  # p_0 + p_1 = 1.1
        fd.FrameWorld(units.assign(p_1=units["p_1"] + 0.1), PRED)
    with pytest.raises(FairdecideError, match="problem must be"):
        fd.FrameWorld(units, "PRED")
    three = fd.DecisionProblem([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]],
                               outcome_depends_on_action=False)
    with pytest.raises(FairdecideError, match="3 actions; this FrameWorld was built for 2"):
        fd.optimize_policy(three, fd.FrameWorld(units, PRED), fd.Independence(),
                           epsilon=0.1)


def test_pareto_frontier_of_a_units_table_is_the_in_memory_one():
    """pareto_frontier solves each tolerance through optimize_policy on a FrameWorld (the
    warm in-memory model does not apply) and finds the exact program's frontier."""
    units, z, w, p = population(120, 2, 12, PRED)
    eps = [0.1, 0.03, 0.0]
    front = fd.pareto_frontier(PRED, fd.FrameWorld(units, PRED), fd.Independence(), eps)
    assert set(front["solver"]) == {"distributed (Dantzig-Wolfe over 1 partition(s))"}
    for e, u in zip(eps, front["utility"], strict=True):
        want, _ = by_reference(z, w, p, 2, "independence", epsilon=e)
        assert u == pytest.approx(want, abs=AGREE)
