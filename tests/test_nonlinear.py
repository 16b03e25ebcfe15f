"""Criteria that are not convex in the policy: sufficiency, and separation when the
outcome depends on the action. Checked against brute force over a grid of policies."""

import functools

import numpy as np
import pytest

from fairdecide import (
    DecisionProblem,
    Independence,
    InfeasibleToleranceError,
    Separation,
    Sufficiency,
    TabularPolicy,
    optimize_policy,
)
from fairdecide.datasets import make_bail_problem, make_tabular_problem
from tests.reference import assert_recomputed

GRID = np.linspace(0, 1, 21)



@functools.cache
def grid_policies(n_cells):
    """All policies of two actions with P(a = 1 | cell) on GRID: shape (G, n_cells, 2),
    in itertools.product order. Built once per n_cells and read-only: building the
    194,481 policies of four cells took about 0.4 s, most of each brute_force call."""
    q = np.stack(np.meshgrid(*[GRID] * n_cells, indexing="ij"), axis=-1).reshape(-1, n_cells)
    pis = np.stack([1 - q, q], axis=-1)
    pis.setflags(write=False)
    return pis


def brute_force(problem, world, kind, weighting="uniform", measure="tv"):
    """Utility and deviation (TV, or KL with ``measure="kl"``: sum_t p log(p / p_pool),
    0 log 0 = 0) of every grid policy, computed independently (vectorised).

    Policies under which some group never meets a conditioning value that other groups
    meet (P(c, z) = 0 < P(c)) get F = inf: the criterion holds vacuously for them (a
    conditional on an event of probability zero constrains nothing), a discontinuity
    that a local method does not seek out (see the Sufficiency docstring)."""
    n_x, n_z = world.p_xz.shape
    pis = grid_policies(n_x * n_z).reshape(-1, n_x, n_z, 2)
    p_y = world.outcome_table(2)
    J = np.einsum("xz,gxza,xzay->gzay", world.p_xz, pis, p_y)
    U = np.einsum("gzay,ay->g", J, problem.utility)
    N = J if kind == "sufficiency" else np.swapaxes(J, -1, -2)  # (g, z, c, t)
    D = N.sum(-1)
    Np = N.sum(1)
    Dp = Np.sum(-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        pg = N / D[..., None]
        pp = Np / Dp[..., None]
        if measure == "kl":
            term = np.where(pg > 0, pg * np.log(pg / pp[:, None]), 0.0).sum(-1)
        else:
            term = np.abs(pg - pp[:, None]).sum(-1)
    active = (D > 1e-12) & (Dp[:, None] > 1e-12)
    if weighting == "group":
        with np.errstate(invalid="ignore", divide="ignore"):
            term = term * D / Dp[:, None]
    F = np.where(active, term, 0.0).sum(axis=(1, 2))
    if weighting == "group":
        return U, F  # continuous: the weight P(z | c) vanishes with the mass
    vacuous = (D <= 1e-12) & (Dp[:, None] > 1e-12)
    F[vacuous.any(axis=(1, 2))] = np.inf
    return U, F


def cases():
    out = []
    for seed in range(4):
        problem, world = make_tabular_problem(2, 2, 2, 2, outcome_depends_on_action=True,
                                              random_state=seed)
        out.append((f"intervention-{seed}", problem, world))
    for seed in range(2):
        problem, world = make_tabular_problem(2, 2, 2, 2, random_state=10 + seed)
        out.append((f"prediction-{seed}", problem, world))
    return out


IDS = [c[0] for c in cases()]


def params(names, default):
    """The cases called ``names`` as pytest params; those not in ``default`` are slow."""
    return [pytest.param(*c, id=c[0], marks=() if c[0] in default else pytest.mark.slow)
            for c in cases() if c[0] in names]


# The default run keeps one intervention and one prediction case: between them they reach
# every branch of test_epsilon_beats_grid (infeasible, vacuously feasible, beating the
# grid) for both criteria and both weightings, and intervention-0 is the mixture's and the
# slack's. The other seeds repeat the same paths on other worlds and run in the slow set
# (about 25 s of a default run of 150-170 s).
EPSILON_CASES = params(IDS, ("intervention-0", "prediction-0"))
GRID_CASES = params(IDS[:3], ("intervention-0",))

_BRUTE = {}


def cached_brute_force(name, problem, world, kind, weighting="uniform", measure="tv"):
    """brute_force of the case called ``name`` in cases(), computed once per (case, kind,
    weighting, measure): the epsilon, lam and slack tests share the same grids."""
    key = (name, kind, weighting, measure)
    if key not in _BRUTE:
        U, F = brute_force(problem, world, kind, weighting, measure)
        U.setflags(write=False)
        F.setflags(write=False)
        _BRUTE[key] = U, F
    return _BRUTE[key]


@pytest.mark.parametrize(("name", "problem", "world"), EPSILON_CASES)
@pytest.mark.parametrize("kind", ["sufficiency", "separation"])
@pytest.mark.parametrize("weighting", ["uniform", "group"])
@pytest.mark.parametrize("eps", [0.05, 0.2])
def test_epsilon_beats_grid(name, problem, world, kind, weighting, eps):
    make = Sufficiency if kind == "sufficiency" else Separation
    crit = make(weighting=weighting)
    U, F = cached_brute_force(name, problem, world, kind, weighting)
    try:
        res = optimize_policy(problem, world, crit, epsilon=eps)
    except InfeasibleToleranceError as exc:
        # Allowed only when no non-vacuous grid policy is feasible, and the reported
        # smallest deviation must be at least as low as the grid's.
        assert not np.any(F <= eps)
        assert exc.smallest[crit.label] <= F.min() + 1e-6
        return
    # utility and deviation recomputed from P(x, z), pi and P(y | a, x, z) by hand;
    # the deviation within eps
    assert_recomputed(res, problem, world, crit, epsilon=eps)
    if np.any(F <= eps):
        # A local method: it must at least match the best feasible policy on a 0.05 grid.
        assert res.utility >= U[F <= eps].max() - 1e-6
    else:
        # Only policies that meet the criterion vacuously (some group never receives an
        # action others receive) are feasible; the result must be one of those.
        J = np.einsum("xz,xza,xzay->zay", world.p_xz, res.policy.table,
                      world.outcome_table(2))
        mass = J.sum(-1) if kind == "sufficiency" else J.sum(1)
        assert np.any((mass <= 1e-9) & (mass.sum(0) > 1e-9))


@pytest.mark.parametrize(("name", "problem", "world"), GRID_CASES)
@pytest.mark.parametrize("lam", [0.1, 0.5])
def test_mixture_beats_grid(name, problem, world, lam):
    U, F = cached_brute_force(name, problem, world, "sufficiency")
    best_grid = ((1 - lam) * U - lam * F).max()
    res = optimize_policy(problem, world, Sufficiency(), lam=lam)
    assert res.objective >= best_grid - 1e-6
    assert res.objective == pytest.approx(
        (1 - lam) * res.utility - lam * res.deviations["sufficiency"])


@pytest.mark.parametrize(("name", "problem", "world"),
                         params(IDS, ("intervention-0", "prediction-0")))
@pytest.mark.parametrize(("kw", "weighting"), [({"epsilon": 0.3}, "uniform"),
                                               ({"epsilon": 0.05}, "group"),
                                               ({"lam": 0.2}, "uniform")])
def test_kl_sufficiency_beats_grid(name, problem, world, kw, weighting):
    """Sufficiency with KL, by successive linearisation over Clarabel's programs (written
    directly, not through cvxpy): the local optimum it returns is verified (utility and
    KL recomputed by hand), says it is a local optimum, and is at least as good as the
    best policy of a 0.05 grid by the KL computed here."""
    crit = Sufficiency(measure="kl", weighting=weighting)
    U, F = cached_brute_force(name, problem, world, "sufficiency", weighting, "kl")
    res = optimize_policy(problem, world, crit, **kw)
    assert res.status == "locally optimal"
    assert_recomputed(res, problem, world, crit, epsilon=kw.get("epsilon"))
    if "lam" in kw:
        lam = kw["lam"]
        assert res.objective >= ((1 - lam) * U - lam * F).max() - 1e-6
    else:
        assert res.utility >= U[F <= kw["epsilon"]].max() - 1e-6


@pytest.mark.parametrize(("name", "problem", "world"), GRID_CASES)
def test_slack_beats_grid(name, problem, world):
    U, F = cached_brute_force(name, problem, world, "separation")
    slack = 0.02
    free = optimize_policy(problem, world).utility
    best_grid = F[U >= free - slack].min()
    res = optimize_policy(problem, world, Separation(), utility_slack=slack)
    assert res.utility >= free - slack - 1e-9
    assert res.deviations["separation"] <= best_grid + 1e-6


def test_bail_example_separation_and_sufficiency():
    problem, world = make_bail_problem()
    free = optimize_policy(problem, world)
    for crit in (Separation(), Sufficiency(), Separation(weighting="group")):
        res = optimize_policy(problem, world, crit, epsilon=0.05)
        assert res.deviations[crit.label] <= 0.05 + 1e-6
        assert res.utility <= free.utility + 1e-9
        assert res.status == "locally optimal"
        # Independent recomputation agrees with the reported numbers.
        assert crit.deviation(res.policy, world, problem) == pytest.approx(
            res.deviations[crit.label])


def test_sufficiency_infeasible_epsilon_reports_smallest():
    # Two cells that are each pure (y = x) and two groups in different cells: calibration
    # can only hold if every action pools the same outcome mix in both groups.
    problem = DecisionProblem.classification(2)
    from fairdecide import TabularWorld

    world = TabularWorld([[0.4, 0.1], [0.1, 0.4]],
                         [[[0.9, 0.1], [0.6, 0.4]], [[0.3, 0.7], [0.05, 0.95]]])
    _U, F = brute_force(problem, world, "sufficiency")
    with pytest.raises(InfeasibleToleranceError, match="smallest achievable deviation") as info:
        optimize_policy(problem, world, Sufficiency(), epsilon=1e-4)
    smallest = info.value.smallest["sufficiency"]
    assert smallest > 1e-4
    # The reported minimum is achievable (a local search): not below the grid's minimum
    # by more than the grid can resolve, and no worse than what the grid finds.
    assert smallest <= F.min() + 1e-6
    ok = optimize_policy(problem, world, Sufficiency(), epsilon=smallest + 1e-3)
    assert ok.deviations["sufficiency"] <= smallest + 1e-3 + 1e-6


def test_mixed_linear_and_nonlinear_criteria():
    problem, world = make_bail_problem()
    res = optimize_policy(problem, world, [Independence(), Sufficiency()], epsilon=[0.1, 0.2])
    assert res.deviations["independence"] <= 0.1 + 1e-6
    assert res.deviations["sufficiency"] <= 0.2 + 1e-6


def test_intervention_separation_is_exact_for_constant_deterministic_policy():
    problem, world = make_tabular_problem(3, 2, 3, 2, outcome_depends_on_action=True,
                                          random_state=4)
    for a in range(3):
        always = TabularPolicy.constant(3, 2, np.eye(3)[a])
        assert Separation().deviation(always, world, problem) == pytest.approx(0.0)
        assert Independence().deviation(always, world, problem) == pytest.approx(0.0)
    # Every constant deterministic policy meets separation (and independence) exactly,
    # so the best one's utility, computed here independently, bounds both optima below.
    best_constant = max(
        float(np.einsum("xz,xzy,y->", world.p_xz, world.p_y[:, :, a], problem.utility[a]))
        for a in range(3))
    res = optimize_policy(problem, world, Separation(), epsilon=0.0)
    assert res.deviations["separation"] <= 1e-6
    assert res.utility >= best_constant - 1e-9
    ind = optimize_policy(problem, world, Independence(), epsilon=0.0)
    assert ind.deviations["independence"] <= 1e-6
    assert ind.utility >= best_constant - 1e-9


def test_an_infinite_tolerance_switches_a_criterion_off_in_the_local_search():
    """epsilon=[inf, x] with a non-convex criterion: the violation phase skips the
    switched-off tolerance (it once wrote an infinite right-hand side into the LP)."""
    problem, world = make_tabular_problem(4, 2, 2, 2, outcome_depends_on_action=True,
                                          random_state=3)
    both = optimize_policy(problem, world, [Independence(), Separation()],
                           epsilon=[np.inf, 0.02])
    alone = optimize_policy(problem, world, Separation(), epsilon=0.02)
    assert both.deviations["separation"] <= 0.02 + 1e-6
    assert both.utility == pytest.approx(alone.utility, abs=1e-6)
