"""optimize_distributed: the master over vertex mixtures, priced unit by unit, against the
exact in-memory program on populations that fit, on pandas and on a Dask LocalCluster."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fairdecide as fd
from fairdecide.datasets import make_bail_problem
from fairdecide.exceptions import FairdecideError, VerificationError
from fairdecide.optimize import optimize_distributed, outcome_columns

PRED = fd.DecisionProblem([[1.0, -1.0], [-0.5, 0.5]], outcome_depends_on_action=False)


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
    res = optimize_distributed(PRED, units, [criterion], **kw)
    assert res.verified
    assert res.objective == pytest.approx(ref.objective, abs=1e-8)
    assert res.utility == pytest.approx(ref.utility, abs=1e-6 if kw.get("lam") else 1e-8)
    # the policy, recomputed unit by unit, gives the verified marginal
    pi = res.action_proba(units)
    np.testing.assert_allclose(pi.sum(axis=1), 1.0, atol=1e-12)
    M = np.zeros((n_z, 2, 2))
    np.add.at(M, z, (w / w.sum())[:, None, None] * pi[:, :, None] * p[:, None, :])
    np.testing.assert_allclose(M, res.marginal, atol=1e-12)
    dev = criterion.deviation_from_table(fd.DecisionTable.from_marginal(M), PRED)
    if "epsilon" in kw:
        assert dev <= kw["epsilon"] + 1e-9


def test_interventions_with_independence():
    problem, _ = make_bail_problem()
    units, z, w, p = population(600, 3, 1, problem)
    for kw in ({"epsilon": 0.02}, {"lam": 0.5}):
        ref = in_memory(problem, z, w, p, 3, fd.Independence(), **kw)
        res = optimize_distributed(problem, units, [fd.Independence()], **kw)
        assert res.verified and res.objective == pytest.approx(ref.objective, abs=1e-8)


def test_dask_local_cluster_gives_the_same_optimum():
    import dask.dataframe as dd
    from dask.distributed import Client, LocalCluster

    units, *_ = population(5000, 2, 3, PRED)
    local = optimize_distributed(PRED, units, [fd.Separation()], epsilon=0.02)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=":0") as cluster, Client(cluster):
        dask_units = dd.from_pandas(units, npartitions=3).persist()
        res = optimize_distributed(PRED, dask_units, [fd.Separation()], epsilon=0.02)
        parts = [d.compute() for d in dask_units.to_delayed()]
    assert res.verified
    assert res.utility == pytest.approx(local.utility, abs=1e-10)
    pi = np.vstack([res.action_proba(part, i) for i, part in enumerate(parts)])
    np.testing.assert_allclose(pi.sum(axis=1), 1.0, atol=1e-12)


def test_bad_input_is_named():
    units, *_ = population(50, 2, 0, PRED)
    with pytest.raises(FairdecideError, match="linear in"):
        optimize_distributed(PRED, units, [fd.Sufficiency()], epsilon=0.1)
    with pytest.raises(FairdecideError, match=r"lacks the columns \['p_1'\]"):
        optimize_distributed(PRED, units.drop(columns="p_1"), [fd.Independence()],
                             epsilon=0.1)
    with pytest.raises(FairdecideError, match="finite"):
        optimize_distributed(PRED, units.assign(w=np.nan), [fd.Independence()],
                             epsilon=0.1)
    with pytest.raises(FairdecideError, match="at least two"):
        optimize_distributed(PRED, units.assign(z=0), [fd.Independence()], epsilon=0.1)
    with pytest.raises(FairdecideError, match="exactly one trade-off"):
        optimize_distributed(PRED, units, [fd.Independence()])
    with pytest.raises(FairdecideError, match="units must be"):
        optimize_distributed(PRED, units.to_numpy(), [fd.Independence()], epsilon=0.1)


@pytest.mark.parametrize("kw", [{"epsilon": 0.02}, {"lam": 0.3}])
def test_a_policy_whose_recomputation_disagrees_raises(monkeypatch, kw):
    """The verification pass recomputes M from the units; a pass that disagrees with the
    master (here: every unit's mass moved to action 0, which breaks the utility check and,
    under epsilon, is still fair) raises instead of returning a result marked unverified."""
    import fairdecide.optimize.distributed as dist

    units, *_ = population(300, 2, 5, PRED)
    good = optimize_distributed(PRED, units, [fd.Independence()], **kw)
    assert good.verification.checks["solver utility matches recomputation"]
    assert good.marginal[:, 1].sum() > 0.05  # moving it to action 0 changes the utility

    real = dist._mixture_part_with

    def all_to_action_0(part, lam, problem, *args):
        M = real(part, lam, problem, *args).reshape(-1, problem.n_actions,
                                                    problem.n_outcomes)
        out = np.zeros_like(M)
        out[:, 0] = M.sum(axis=1)
        return out.reshape(-1)

    monkeypatch.setattr(dist, "_mixture_part_with", all_to_action_0)
    with pytest.raises(VerificationError, match="utility"):
        optimize_distributed(PRED, units, [fd.Independence()], **kw)


def test_a_broken_tolerance_raises(monkeypatch):
    """Under epsilon, a recomputed deviation above the tolerance fails the trade-off's own
    check (the same check optimize_policy makes)."""
    import fairdecide.optimize.distributed as dist

    units, *_ = population(300, 2, 6, PRED)
    good = optimize_distributed(PRED, units, [fd.Independence()], epsilon=0.02)
    assert good.marginal[0, 0].sum() > 0.05  # moving it to action 1 is unfair
    real = dist._mixture_part_with

    def unfair(part, lam, problem, *args):
        M = real(part, lam, problem, *args).reshape(-1, problem.n_actions,
                                                    problem.n_outcomes).copy()
        M[0, 1] += M[0, 0]  # group 0: every unit's mass to action 1
        M[0, 0] = 0.0
        return M.reshape(-1)

    monkeypatch.setattr(dist, "_mixture_part_with", unfair)
    with pytest.raises(VerificationError, match="independence <= epsilon"):
        optimize_distributed(PRED, units, [fd.Independence()], epsilon=0.02)
