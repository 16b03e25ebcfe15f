"""An independent reference model for the linear fairness programs, used by the tests.

Written directly over the policy table with dense rows and no marginal variables (the
library uses sparse rows over auxiliary marginals), so agreement checks the formulation
as well as the solver plumbing.

Below it, a policy's utility and group deviations written from their formulas over the
world's own arrays (:func:`assert_recomputed` compares them with a result's): the check
to use instead of ``res.verification.passed``, which is True whenever a result exists.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import linprog


def _index(n_x, n_z, n_a):
    return np.arange(n_x * n_z * n_a).reshape(n_x, n_z, n_a)


def comparison_rows(problem, world, kind, outcomes=None, pairwise=False):
    """Coefficient rows g (one per compared (c, z, a)) with g @ vec(pi) = P(a|c,z) - P(a|c)
    or, ``pairwise``, one per (c, z < z2, a) with g @ vec(pi) = P(a|c,z) - P(a|c,z2)."""
    n_x, n_z = world.p_xz.shape
    n_a = problem.n_actions
    idx = _index(n_x, n_z, n_a)
    rows = []
    if kind == "independence":
        weights = [world.p_xz]
    else:  # separation in a prediction problem: weights P(x, z, y) for each y
        ys = range(problem.n_outcomes) if outcomes is None else outcomes
        weights = [world.p_xz * world.p_y[:, :, y] for y in ys]
    for w in weights:
        tot = w.sum()
        if pairwise:
            for z in range(n_z):
                for z2 in range(z + 1, n_z):
                    for a in range(n_a):
                        g = np.zeros(idx.size)
                        g[idx[:, z, a]] += w[:, z] / w[:, z].sum()
                        g[idx[:, z2, a]] -= w[:, z2] / w[:, z2].sum()
                        rows.append(g)
            continue
        for z in range(n_z):
            wz = w[:, z].sum()
            if wz <= 0:
                continue
            for a in range(n_a):
                g = np.zeros(idx.size)
                g[idx[:, z, a]] += w[:, z] / wz
                for z2 in range(n_z):
                    g[idx[:, z2, a]] -= w[:, z2] / tot
                rows.append(g)
    return np.array(rows)


def utility_coefficients(problem, world):
    p_y = world.outcome_table(problem.n_actions)
    return np.einsum("xz,xzay,ay->xza", world.p_xz, p_y, problem.utility).reshape(-1)


def reference_solve(problem, world, kind=None, *, measure="tv", epsilon=None, lam=None,
                    slack=None, blind=False, outcomes=None, pairwise=False, pi_rows=()):
    """Optimal value of the trade-off: returns (utility, deviation) of the optimum.
    ``pi_rows``: more constraints g @ vec(pi) <= b, as pairs (g, b) over the policy
    table pi[x, z, a] (x-major), held in every trade-off (e.g. a capacity row)."""
    n_x, n_z = world.p_xz.shape
    n_a = problem.n_actions
    n_pi = n_x * n_z * n_a
    u = utility_coefficients(problem, world)
    G = (comparison_rows(problem, world, kind, outcomes, pairwise) if kind
         else np.zeros((0, n_pi)))
    n_t = len(G) if measure == "tv" else (1 if kind else 0)
    n = n_pi + n_t
    idx = _index(n_x, n_z, n_a)
    A_eq, b_eq = [], []
    for x in range(n_x):
        for z in range(n_z):
            row = np.zeros(n)
            row[idx[x, z]] = 1
            A_eq.append(row)
            b_eq.append(1.0)
            if blind and z > 0:
                for a in range(n_a):
                    row = np.zeros(n)
                    row[idx[x, z, a]] = 1
                    row[idx[x, 0, a]] = -1
                    A_eq.append(row)
                    b_eq.append(0.0)
    A_ub, b_ub = [], []
    for g, b in pi_rows:
        A_ub.append(np.concatenate([g, np.zeros(n_t)]))
        b_ub.append(float(b))
    for k, g in enumerate(G):
        t = n_pi + (k if measure == "tv" else 0)
        for sign in (1, -1):
            row = np.zeros(n)
            row[:n_pi] = sign * g
            row[t] = -1
            A_ub.append(row)
            b_ub.append(0.0)
    F = np.zeros(n)
    F[n_pi:] = 1.0
    U = np.zeros(n)
    U[:n_pi] = u

    def run(c, extra_ub=(), extra_b=()):
        res = linprog(c, A_ub=np.array(list(A_ub) + list(extra_ub)) if A_ub or extra_ub
                      else None,
                      b_ub=np.array(list(b_ub) + list(extra_b)) if A_ub or extra_b else None,
                      A_eq=np.array(A_eq), b_eq=np.array(b_eq), bounds=(0, None),
                      method="highs")
        assert res.status == 0, res.message
        return res.x

    if kind is None:
        x = run(-U)
    elif epsilon is not None:
        x = run(-U, [F], [epsilon])
    elif lam is not None:
        x = run(-(1 - lam) * U + lam * F)
    else:
        best = U @ run(-U)
        x = run(F, [-U], [-(best - slack)])
    return float(U @ x), float(F @ x)


def assert_between_chords(price, utility, u_star, eps, h=1e-3):
    """A tolerance price p at eps is a supergradient of the concave frontier U*: it lies
    between the slopes of the chords to eps + h and eps - h, each U* (``u_star(e)``, a
    float) solved on its own to 1e-9 (hence the slack 4e-9 / h)."""
    slack = 4e-9 / h
    assert (u_star(eps + h) - utility) / h <= price + slack
    assert price <= (utility - u_star(eps - h)) / h + slack


# ---------------------------------------------------------------------------------------
# Utility and group deviations of a policy, written from the world's own arrays.
#
# The library recomputes every optimised policy's utility and deviations from its
# decision table (optimize/verify.py) and raises when they disagree with the solver, so
# ``res.verification.passed`` is True whenever a result is returned: asserting it tests
# nothing. These functions compute the same numbers here, from the formulas, with none
# of the library's tables, marginals or criteria code, for tests to compare against.


def world_arrays(world, problem):
    """(w[u], z[u], P(y | a, u)) of the world's units from its public arrays: a
    TabularWorld's cells (x, z) in x-major order with weight P(x, z), or a SampleWorld's
    individuals with their weights. The outcome table has shape (n_u, n_a, n_y) (repeated
    over actions in a prediction problem)."""
    n_a = problem.n_actions
    if hasattr(world, "p_xz"):
        n_x, n_z = world.p_xz.shape
        w = world.p_xz.reshape(-1)
        z = np.tile(np.arange(n_z), n_x)
        p_y = world.p_y.reshape(n_x * n_z, *world.p_y.shape[2:])
    else:
        w, z, p_y = world.weights, world.z, world.p_y
    if p_y.ndim == 2:  # the outcome does not depend on the action
        p_y = np.repeat(p_y[:, None, :], n_a, axis=1)
    return np.asarray(w, dtype=float), np.asarray(z), p_y


def policy_rows(policy, world):
    """pi(a | u) of shape (n_u, n_a): a TabularPolicy's or IndividualPolicy's table as
    stored, any other policy through its public ``proba``."""
    table = getattr(policy, "table", None)
    if isinstance(table, np.ndarray):
        return table.reshape(-1, table.shape[-1])
    return np.asarray(policy.proba(world.units()))


def utility_by_hand(problem, world, rows):
    """E[U] = sum_{u, a, y} w[u] pi(a | u) P(y | a, u) U(a, y)."""
    w, _, p_y = world_arrays(world, problem)
    return float(np.einsum("u,ua,uay,ay->", w, rows, p_y, problem.utility))


def marginal_by_hand(problem, world, rows):
    """P(z, a, y) = sum over the units u of group z of w[u] pi(a | u) P(y | a, u)."""
    w, z, p_y = world_arrays(world, problem)
    J = w[:, None, None] * rows[:, :, None] * p_y
    M = np.zeros((world.n_groups, *J.shape[1:]))
    for g in range(world.n_groups):
        M[g] = J[z == g].sum(axis=0)
    return M


def deviation_by_hand(M, crit, problem, tol=1e-12):
    """The deviation of a conditional-independence criterion from P(z, a, y), written
    from its definition: for each conditioning value c (one, if unconditional) and each
    group z with P(c, z) > 0, the divergence between P(t | c, z) and P(t | c), weighted
    by 1 or P(z | c), summed (tv, kl) or maximised (max)."""
    n_z = M.shape[0]
    # P(z, c, t) as a table over (group, conditioning value, target value)
    if crit.given is None:
        target = M.sum(axis=2) if crit.target == "action" else M.sum(axis=1)
        N = target[:, None, :]
    elif crit.given == "outcome":
        N = np.stack([M[:, :, y] for y in range(M.shape[2])], axis=1)  # (z, y, a)
    else:
        N = np.stack([M[:, a, :] for a in range(M.shape[1])], axis=1)  # (z, a, y)
    values = range(N.shape[1])
    if crit.given_values is not None:
        labels = list(problem.outcome_labels if crit.given == "outcome"
                      else problem.action_labels)
        values = [labels.index(v) for v in crit.given_values]
    terms = []
    pairwise = getattr(crit, "reference", "pooled") == "pairwise"
    for c in values:
        pooled = N[:, c, :].sum(axis=0)
        if pooled.sum() <= tol:
            continue
        if pairwise:  # every two groups with mass, unweighted
            has = [g for g in range(n_z) if N[g, c, :].sum() > tol]
            for i, g in enumerate(has):
                for h in has[i + 1:]:
                    gap = np.abs(N[g, c, :] / N[g, c, :].sum() - N[h, c, :] / N[h, c, :].sum())
                    terms.append(gap.sum() if crit.measure == "tv" else gap.max())
            continue
        p_pool = pooled / pooled.sum()
        for g in range(n_z):
            mass = N[g, c, :].sum()
            if mass <= tol:
                continue
            p_group = N[g, c, :] / mass
            weight = mass / pooled.sum() if crit.weighting == "group" else 1.0
            if crit.measure == "tv":
                div = np.abs(p_group - p_pool).sum()
            elif crit.measure == "max":
                div = np.abs(p_group - p_pool).max()
            else:
                pos = p_group > 0
                div = float(np.sum(p_group[pos] * np.log(p_group[pos] / p_pool[pos])))
            terms.append(weight * div)
    if not terms:
        return 0.0
    return float(max(terms) if crit.measure == "max" else sum(terms))


def assert_recomputed(res, problem, world, criteria=(), *, epsilon=None, by_hand=None,
                      atol=1e-8):
    """Recompute a result's utility and deviations by hand (above) and compare.

    ``world`` is a world or a Belief (its scenarios aggregated by its weights, or by the
    worst case: minimum utility, maximum deviation). ``criteria``: the criteria optimised
    (conditional-independence ones are computed by :func:`deviation_by_hand`; others
    need ``by_hand[label] = f(problem, world, rows)``), compared with the reported
    deviation when the result reports one. With ``epsilon`` (a number, or one per
    criterion), each recomputed deviation must be within it. Checks the policy
    rows are on the simplex. Returns the recomputed (utility, {label: deviation}).
    """
    criteria = [criteria] if not isinstance(criteria, list | tuple) else list(criteria)
    worlds = list(getattr(world, "worlds", [world]))
    weights = np.asarray(getattr(world, "weights", None) if len(worlds) > 1 else [1.0])
    worst = getattr(world, "aggregate", "mean") == "worst"
    rows = policy_rows(res.policy, worlds[0])
    assert rows.min() >= -1e-9 and np.allclose(rows.sum(axis=1), 1.0, atol=1e-9)
    U_k = np.array([utility_by_hand(problem, w, rows) for w in worlds])
    utility = float(U_k.min() if worst else weights @ U_k)
    assert res.utility == pytest.approx(utility, abs=atol), (res.utility, utility)
    deviations = {}
    eps = [epsilon] * len(criteria) if np.ndim(epsilon) == 0 else list(epsilon)
    for crit, e in zip(criteria, eps, strict=True):
        if by_hand and crit.label in by_hand:
            F_k = np.array([by_hand[crit.label](problem, w, rows) for w in worlds])
        else:
            F_k = np.array([deviation_by_hand(marginal_by_hand(problem, w, rows), crit,
                                              problem) for w in worlds])
        F = float(F_k.max() if worst else weights @ F_k)
        deviations[crit.label] = F
        if crit.label in res.deviations:  # criteria only measured here are not reported
            assert res.deviations[crit.label] == pytest.approx(F, abs=atol), (crit.label, F)
        if e is not None:
            assert F <= e + 1e-6, (crit.label, F, e)
    return utility, deviations
