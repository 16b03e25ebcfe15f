"""An independent reference model for the linear fairness programs, used by the tests.

Written directly over the policy table with dense rows and no marginal variables (the
library uses sparse rows over auxiliary marginals), so agreement checks the formulation
as well as the solver plumbing.

Below it, a policy's utility and group deviations written from their formulas over the
world's own arrays (:func:`assert_recomputed` compares them with a result's): the check
to use instead of ``res.verification.passed``, which is True whenever a result exists.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
import pytest
from scipy.optimize import brentq, linprog


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


# ---------------------------------------------------------------------------------------
# The reference optimum of a belief, with capacity rows and Lipschitz pairs.
#
# Written from the book's formulas over each scenario's own arrays (world_arrays above),
# with none of the library's programs: one dense LP over the policy rows pi[u, a] of the
# units (a TabularWorld's cells x-major, a SampleWorld's individuals), per scenario k an
# epigraph variable F_ck >= the deviation of criterion c (>= every piece of its sum or
# max), and the belief's aggregate (weighted mean, or worst case: least utility, largest
# deviation) written with one more epigraph variable where it is a min or a max. What
# each deviation is follows fairdecide/criteria (conditional.py, capacity.py,
# lipschitz.py) and the trade-offs fairdecide/optimize/program/tradeoff.py:
#
# - epsilon: max agg_k U_k  s.t.  agg_k F_ck <= eps_c for every criterion c
#   (mean: sum_k w_k F_ck; worst: F_ck <= eps_c in every scenario);
# - lam: max agg_k [(1 - lam) U_k - lam sum_c F_ck]  (worst: the least scenario value,
#   not the least utility minus the largest deviation);
# - utility_slack: min agg_k sum_c F_ck  s.t.  agg_k U_k >= U* - slack, U* = max agg_k U_k
#   (worst: the largest scenario total).
#
# Every epigraph variable only ever enters the objective or a constraint in the
# direction that pushes it down, so the LP's optimum is the trade-off's; the optimum's
# own values are recomputed by hand (utility_by_hand, deviation_by_hand and the two
# functions below) and must give the LP's objective back (a check of this reference).

#: The reference LP's HiGHS feasibility tolerances (scipy's default is 1e-7): ten times
#: tighter than the library's FEASIBILITY_TOL (1e-9), so the reference's own error is
#: small beside every tolerance a test derives from the library's constants.
REFERENCE_TOL = 1e-10


def capacity_by_hand(problem, world, rows, cap):
    """A Capacity's deviation: the largest excess of a bounded share over its bound,
    max(0, s - at_most, at_least - s), the share s = P(a in A) (or every group's
    P(a in A | z), per_group) = sum over units (of the group) of w[u] sum_{a in A} pi(a | u)
    over their total weight (groups of no weight have no share)."""
    w, z, _ = world_arrays(world, problem)
    labels = list(problem.action_labels)
    chosen = rows[:, [labels.index(a) for a in cap.actions]].sum(axis=1)
    sets = ([z == g for g in range(world.n_groups)] if cap.per_group
            else [np.ones(len(w), dtype=bool)])
    excess = [0.0]
    for members in sets:
        mass = w[members].sum()
        if mass <= 1e-12:
            continue
        share = float(w[members] @ chosen[members]) / mass
        if cap.at_most is not None:
            excess.append(share - cap.at_most)
        if cap.at_least is not None:
            excess.append(cap.at_least - share)
    return float(max(excess))


def pair_distances_by_hand(crit, X, pairs):
    """d(x_i, x_j) of a Lipschitz criterion's metric ("euclidean" or "weighted")."""
    diff = X[pairs[:, 0]] - X[pairs[:, 1]]
    if crit.metric == "euclidean":
        return np.sqrt((diff ** 2).sum(axis=1))
    if crit.metric == "weighted":
        return np.sqrt((np.asarray(crit.weights, float) * diff ** 2).sum(axis=1))
    raise NotImplementedError(f"the reference has no metric {crit.metric!r}")


def lipschitz_pairs(crit, n):
    """The pairs a Lipschitz criterion covers: every i < j (pairs None or "all"), or its
    own list."""
    if crit.pairs is None or isinstance(crit.pairs, str):
        return np.stack(np.triu_indices(n, 1), axis=1)
    return np.asarray(crit.pairs, dtype=int)


def lipschitz_by_hand(problem, world, rows, crit):
    """A Lipschitz criterion's deviation: max(0, max over its pairs of
    D_TV(pi_i, pi_j) - L d(x_i, x_j)), D_TV half the L1 distance."""
    X = np.asarray(world.X, dtype=float)
    pairs = lipschitz_pairs(crit, len(X))
    if not len(pairs):
        return 0.0
    tv = np.abs(rows[pairs[:, 0]] - rows[pairs[:, 1]]).sum(axis=1) / 2
    return float(max(0.0, (tv - crit.constant * pair_distances_by_hand(crit, X, pairs)).max()))


def criterion_by_hand(problem, world, rows, crit):
    """Any criterion the reference LP writes, measured on the policy rows by hand."""
    kind = type(crit).__name__
    if kind == "Capacity":
        return capacity_by_hand(problem, world, rows, crit)
    if kind == "Lipschitz":
        return lipschitz_by_hand(problem, world, rows, crit)
    return deviation_by_hand(marginal_by_hand(problem, world, rows), crit, problem)


def _abs_rows(problem, world, crit):
    """Rows g over vec(pi) (unit-major) with g @ vec(pi) = w(z, c) (P(a | c, z) - P(a | c))
    for each compared (c, z, a) (or P(a | c, z) - P(a | c, z') for z < z', pairwise), for
    a criterion on the action given nothing or the outcome of a prediction problem:
    linear in pi, since the conditioning masses P(c, z) do not depend on it."""
    if crit.target != "action" or crit.given not in (None, "outcome"):
        raise NotImplementedError(f"the reference LP has no rows for {crit!r}")
    w, z, p_y = world_arrays(world, problem)
    n_u, n_a = len(w), problem.n_actions
    if crit.given is None:
        masses = [w]
    else:
        if problem.outcome_depends_on_action:
            raise NotImplementedError("separation is not linear when y depends on a")
        ys = range(problem.n_outcomes)
        if crit.given_values is not None:
            ys = [list(problem.outcome_labels).index(v) for v in crit.given_values]
        masses = [w * p_y[:, 0, y] for y in ys]       # P(u, y), the same for every action
    groups = range(world.n_groups)
    rows = []
    for m in masses:  # one conditioning value c: m[u] = P(u, c)
        total = m.sum()
        if total <= 1e-12:
            continue
        mass = {g: m[z == g].sum() for g in groups}
        cond = {g: np.where(z == g, m, 0.0) / mass[g] for g in groups if mass[g] > 1e-12}
        pairs = ([(g, h) for g in cond for h in cond if g < h]
                 if crit.reference == "pairwise" else [(g, None) for g in cond])
        for g, h in pairs:
            other = m / total if h is None else cond[h]
            weight = mass[g] / total if crit.weighting == "group" else 1.0
            for a in range(n_a):
                row = np.zeros((n_u, n_a))
                row[:, a] = weight * (cond[g] - other)
                rows.append(row.reshape(-1))
    return np.array(rows).reshape(-1, n_u * n_a)


class _LP:
    """A dense LP being written: variables (pi first, lower bound 0 unless said), rows
    A_ub x <= b_ub and A_eq x = b_eq as lists of (columns, values, rhs)."""

    def __init__(self, n_pi):
        self.lb = [0.0] * n_pi
        self.ub_rows, self.eq_rows = [], []

    def new(self, count=1, lb=0.0):
        start = len(self.lb)
        self.lb += [lb] * count
        return np.arange(start, start + count)

    def ub(self, cols, vals, rhs):
        self.ub_rows.append((np.asarray(cols), np.asarray(vals, float), float(rhs)))
        return len(self.ub_rows) - 1

    def eq(self, cols, vals, rhs):
        self.eq_rows.append((np.asarray(cols), np.asarray(vals, float), float(rhs)))

    def _matrix(self, rows):
        import scipy.sparse as sp

        if not rows:
            return None, None
        r = np.concatenate([np.full(len(c), i) for i, (c, _, _) in enumerate(rows)])
        A = sp.csr_matrix((np.concatenate([v for _, v, _ in rows]),
                           (r, np.concatenate([c for c, _, _ in rows]))),
                          shape=(len(rows), len(self.lb)))
        return A, np.array([b for _, _, b in rows])

    def solve(self, objective):
        """Minimise objective (a dict column -> cost): the solution, its objective, the
        inequality rows' duals d objective / d b_ub (<= 0) and the L1 norm of all duals
        (how much the objective can move per unit of every row's right side)."""
        c = np.zeros(len(self.lb))
        for col, val in objective.items():
            c[col] += val
        A_ub, b_ub = self._matrix(self.ub_rows)
        A_eq, b_eq = self._matrix(self.eq_rows)
        res = linprog(c, A_ub=A_ub, b_ub=b_ub, A_eq=A_eq, b_eq=b_eq,
                      bounds=[(lb, None) for lb in self.lb], method="highs-ds",
                      options={"primal_feasibility_tolerance": REFERENCE_TOL,
                               "dual_feasibility_tolerance": REFERENCE_TOL})
        assert res.status == 0, res.message
        duals = sum(float(np.abs(part.marginals).sum()) for part in (res.ineqlin, res.eqlin)
                    if part is not None and part.marginals is not None and
                    len(part.marginals))
        ub_duals = res.ineqlin.marginals if A_ub is not None else np.zeros(0)
        return res.x, float(c @ res.x), np.asarray(ub_duals), duals


def _deviation_var(lp, problem, world, crit):
    """A variable F >= the criterion's deviation at pi in this scenario (equal to it when
    pushed down): >= the sum of |g_r pi| (tv), each |g_r pi| (max), each capacity excess
    and 0, or each Lipschitz pair's D_TV - L d and 0."""
    n_a = problem.n_actions
    F = lp.new()[0]
    kind = type(crit).__name__
    if kind == "Capacity":
        w, z, _ = world_arrays(world, problem)
        labels = list(problem.action_labels)
        codes = [labels.index(a) for a in crit.actions]
        sets = ([z == g for g in range(world.n_groups)] if crit.per_group
                else [np.ones(len(w), dtype=bool)])
        for members in sets:
            mass = w[members].sum()
            if mass <= 1e-12:
                continue
            units = np.flatnonzero(members)
            cols = (units[:, None] * n_a + np.array(codes)[None, :]).reshape(-1)
            share = np.repeat(w[units] / mass, len(codes))
            if crit.at_most is not None:   # s - at_most <= F
                lp.ub(np.append(cols, F), np.append(share, -1.0), crit.at_most)
            if crit.at_least is not None:  # at_least - s <= F
                lp.ub(np.append(cols, F), np.append(-share, -1.0), -crit.at_least)
        return F
    if kind == "Lipschitz":
        X = np.asarray(world.X, dtype=float)
        pairs = lipschitz_pairs(crit, len(X))
        d = pair_distances_by_hand(crit, X, pairs)
        for (i, j), dij in zip(pairs, d, strict=True):
            t = lp.new(n_a)  # t_a >= |pi_ia - pi_ja|
            for a in range(n_a):
                for s in (1.0, -1.0):
                    lp.ub([i * n_a + a, j * n_a + a, t[a]], [s, -s, -1.0], 0.0)
            # sum_a t_a / 2 - L d_ij <= F
            lp.ub(np.append(t, F), np.append(np.full(n_a, 0.5), -1.0), crit.constant * dij)
        return F
    G = _abs_rows(problem, world, crit)
    cols = np.arange(G.shape[1])
    if crit.measure == "max":
        for g in G:
            for s in (1.0, -1.0):
                lp.ub(np.append(cols, F), np.append(s * g, -1.0), 0.0)
        return F
    if crit.measure != "tv":
        raise NotImplementedError(f"the reference LP has no measure {crit.measure!r}")
    t = lp.new(len(G))
    for g, tr in zip(G, t, strict=True):
        for s in (1.0, -1.0):
            lp.ub(np.append(cols, tr), np.append(s * g, -1.0), 0.0)
    lp.ub(np.append(t, F), np.append(np.ones(len(t)), -1.0), 0.0)
    return F


@dataclass
class ReferenceOptimum:
    """The trade-off's optimum: its objective as ``OptimizeResult.objective`` reports it
    (the aggregated utility, or value (1 - lam) U - lam F, maximised; the aggregated
    total deviation, minimised, under utility_slack), the optimal policy rows and their
    aggregated utility and deviations recomputed by hand, ``dual_norm``: the L1 norm of
    the LP's duals, and ``binding``: for each criterion bounded by epsilon (its label)
    and for the utility floor of utility_slack ("utility"), (bound, price) with price the
    largest dual of its rows (one, or one per scenario in the worst case). A positive
    price makes the bound hold with equality at every optimum: a policy whose objective
    is within g of the optimum has its aggregated value within g / price of the bound."""

    objective: float
    rows: np.ndarray
    utility: float
    deviations: dict
    dual_norm: float
    maximised: bool
    binding: dict


def reference_optimum(problem, world, criteria=(), *, epsilon=None, lam=None, slack=None,
                      blind=False):
    """The optimum of a trade-off over a world or a Belief (its ``worlds``, ``weights``
    and ``aggregate``), for conditional-independence criteria linear in pi (measures tv
    and max, pooled or pairwise, uniform or group weights), Capacity and Lipschitz
    (pairs of a SampleWorld's individuals): see the comment above. ``epsilon`` is a
    number or one per criterion (inf: unbounded); capacities given to
    ``optimize_policy(capacity=...)`` are criteria here with epsilon 0. ``blind``: a
    TabularWorld's pi(a | x, z) = pi(a | x, 0). Without criteria: max agg_k U_k."""
    criteria = list(criteria) if isinstance(criteria, list | tuple) else [criteria]
    worlds = list(getattr(world, "worlds", [world]))
    weights = np.asarray(getattr(world, "weights", None) if len(worlds) > 1 else [1.0],
                         dtype=float)
    worst = getattr(world, "aggregate", "mean") == "worst"
    n_a = problem.n_actions
    w0, _, _ = world_arrays(worlds[0], problem)
    n_u = len(w0)
    if slack is not None:
        u_star = reference_optimum(problem, world, blind=blind).objective

    lp = _LP(n_u * n_a)
    for u in range(n_u):  # each unit's row on the simplex
        lp.eq(np.arange(u * n_a, (u + 1) * n_a), np.ones(n_a), 1.0)
    if blind:
        n_x, n_z = worlds[0].p_xz.shape
        for x in range(n_x):
            for zz in range(1, n_z):
                for a in range(n_a):
                    lp.eq([(x * n_z + zz) * n_a + a, x * n_z * n_a + a], [1.0, -1.0], 0.0)
    util, F = [], []  # per scenario: utility coefficients over pi; deviation variables
    for wk in worlds:
        w, _, p_y = world_arrays(wk, problem)
        util.append((w[:, None] * np.einsum("uay,ay->ua", p_y, problem.utility)).reshape(-1))
        F.append([_deviation_var(lp, problem, wk, c) for c in criteria])
    F = np.array(F, dtype=int).reshape(len(worlds), len(criteria))    # (K, C)
    pi_cols = np.arange(n_u * n_a)

    def scenario_value(k, wu, wf):
        """Columns and costs of wu U_k + wf sum_c F_ck."""
        return (np.concatenate([pi_cols, F[k]]),
                np.concatenate([wu * util[k], np.full(len(criteria), wf)]))

    def aggregate_max(wu, wf):
        """The objective (to minimise) -agg_k(wu U_k + wf sum_c F_ck), agg the mean or the
        least scenario (an epigraph s <= every scenario's value)."""
        cost = {}
        if worst:
            s = lp.new(lb=None)[0]
            for k in range(len(worlds)):
                cols, vals = scenario_value(k, wu, wf)
                lp.ub(np.append(cols, s), np.append(-vals, 1.0), 0.0)
            cost[s] = -1.0
            return cost
        for k, wt in enumerate(weights):
            for col, val in zip(*scenario_value(k, wu, wf), strict=True):
                cost[col] = cost.get(col, 0.0) - wt * val
        return cost

    maximised = True
    bound_rows = {}  # name -> (bound, its rows)
    if lam is not None:
        cost = aggregate_max(1.0 - lam, -lam)
    elif slack is not None:  # min agg sum_c F_ck = -agg(-sum_c F_ck) (worst: the largest)
        maximised = False
        cost = aggregate_max(0.0, -1.0)
        floor = u_star - slack
        if worst:
            bound_rows["utility"] = (floor, [lp.ub(pi_cols, -util[k], -floor)
                                             for k in range(len(worlds))])
        else:
            bound_rows["utility"] = (floor, [lp.ub(pi_cols, -(weights @ np.array(util)),
                                                   -floor)])
    else:
        cost = aggregate_max(1.0, 0.0)
        eps = ([] if not criteria else [epsilon] * len(criteria) if np.ndim(epsilon) == 0
               else list(epsilon))
        for c, e in enumerate(eps):
            if not np.isfinite(e):
                continue
            if worst:
                bound_rows[criteria[c].label] = (e, [lp.ub([F[k, c]], [1.0], e)
                                                     for k in range(len(worlds))])
            else:
                bound_rows[criteria[c].label] = (e, [lp.ub(F[:, c], weights, e)])
    x, value, ub_duals, dual_norm = lp.solve(cost)
    binding = {name: (bound, float(np.abs(ub_duals[rows]).max()))
               for name, (bound, rows) in bound_rows.items()}
    rows = x[: n_u * n_a].reshape(n_u, n_a)
    U_k = np.array([utility_by_hand(problem, wk, rows) for wk in worlds])
    F_k = np.array([[criterion_by_hand(problem, wk, rows, c) for c in criteria]
                    for wk in worlds]).reshape(len(worlds), len(criteria))
    agg_u = U_k.min() if worst else weights @ U_k
    agg_f = F_k.max(axis=0) if worst else weights @ F_k
    objective = value if not maximised else -value
    # the reference checks itself: the optimum's values by hand give its objective back
    if lam is not None:
        V = (1 - lam) * U_k - lam * F_k.sum(axis=1)
        by_hand = V.min() if worst else weights @ V
    elif slack is not None:
        total = F_k.sum(axis=1)
        by_hand = total.max() if worst else weights @ total
        assert agg_u >= u_star - slack - 1e-8, (agg_u, u_star, slack)
    else:
        by_hand = agg_u
        if criteria:
            assert np.all(agg_f <= np.asarray(eps) + 1e-8), (agg_f, eps)
    assert abs(by_hand - objective) <= 1e-8 * max(1.0, abs(objective)), (by_hand, objective)
    return ReferenceOptimum(float(objective), rows, float(agg_u),
                            {c.label: float(f) for c, f in zip(criteria, agg_f, strict=True)},
                            dual_norm, maximised, binding)


def interval_maximin(U, weights, lo, hi) -> float:
    """max over pi(a | u) of sum_u w_u min_{p in [lo_u, hi_u]} sum_a pi_a E_p U(a, y), two
    outcomes, p = P(y = 1 | u): the worst case sits at an end of each interval, so the
    epigraph t_u is at most the value at both ends (one LP, written from the formula)."""
    U = np.asarray(U, dtype=float)
    n, n_a = len(weights), U.shape[0]
    n_v = n * n_a + n  # pi, then t
    c = np.zeros(n_v)
    c[n * n_a:] = -np.asarray(weights, dtype=float)
    rows = []
    for u in range(n):
        for p in (lo[u], hi[u]):
            row = np.zeros(n_v)
            row[u * n_a:(u + 1) * n_a] = -(U @ np.array([1 - p, p]))
            row[n * n_a + u] = 1.0
            rows.append(row)
    A_eq = np.zeros((n, n_v))
    for u in range(n):
        A_eq[u, u * n_a:(u + 1) * n_a] = 1.0
    res = linprog(c, np.array(rows), np.zeros(len(rows)), A_eq, np.ones(n),
                  bounds=[(0, 1)] * (n * n_a) + [(None, None)] * n, method="highs")
    assert res.status == 0, res.message
    return -float(res.fun)


# ------------------------------------------------------------ worst cases over a set
#: HiGHS's default feasibility tolerance (1e-7) would let the reference LP move more
#: mass than a ball of radius 1e-7 holds
TIGHT = {"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10}


def ball_min(c, h, r) -> float:
    """min c . theta over the simplex and ||theta - h||_1 <= r, as an LP in (theta, t)
    with |theta - h| <= t and sum t <= r."""
    c, h = np.asarray(c, dtype=float), np.asarray(h, dtype=float)
    m = len(c)
    eye = np.eye(m)
    A_ub = np.block([[eye, -eye], [-eye, -eye], [np.zeros((1, m)), np.ones((1, m))]])
    b_ub = np.concatenate([h, -h, [r]])
    A_eq = np.concatenate([np.ones(m), np.zeros(m)])[None]
    res = linprog(np.concatenate([c, np.zeros(m)]), A_ub, b_ub, A_eq, [1.0],
                  bounds=[(0, None)] * (2 * m), method="highs", options=TIGHT)
    assert res.status == 0, res.message
    return float(res.fun)


def set_unit_worst(cs, rows, problem) -> np.ndarray:
    """Each unit's least expected utility g[x, z] over the outcome balls of a
    ``ConfidenceSet`` for policy rows pi(a | x, z) (shape (n_x * n_z, n_a), unit x-major),
    one LP per ball: a prediction problem's one ball per unit priced by the policy's mix
    sum_a pi_a U[a]; an intervention's one ball per (unit, action), read by its action."""
    n_x, n_z = cs.center.p_xz.shape
    U = problem.utility
    hat = cs.ball_center.reshape(n_x * n_z, -1, U.shape[1])
    r = cs.radius.reshape(n_x * n_z, -1)
    if hat.shape[1] == 1:  # prediction: one conditional per unit
        g = [ball_min(rows[u] @ U, hat[u, 0], r[u, 0]) for u in range(len(rows))]
    else:
        g = [sum(rows[u, a] * ball_min(U[a], hat[u, a], r[u, a]) for a in range(len(U)))
             for u in range(len(rows))]
    return np.array(g).reshape(n_x, n_z)


def set_population_min(cs, g) -> float:
    """min over the populations of a ``ConfidenceSet`` of sum_{x,z} P(x, z) g[x, z]: each
    group's P(x | z) at its worst in its ball, then P(z) in its ball (the balls are a
    product and the weights non-negative, so the nested minimum is the joint one)."""
    p_xz = cs.center.p_xz
    p_z = p_xz.sum(axis=0)
    per_group = [ball_min(g[:, z], p_xz[:, z] / p_z[z], cs.cell_radius[z])
                 for z in range(p_xz.shape[1])]
    return ball_min(np.array(per_group), p_z, cs.group_radius)


def set_worst_value(cs, policy, problem) -> float:
    """min over every world of a ``ConfidenceSet`` of a ``TabularPolicy``'s expected
    utility, by
    linear programs over each ball (:func:`set_unit_worst`, :func:`set_population_min`):
    independent of ``ConfidenceSet.worst_value``'s closed form."""
    rows = np.asarray(policy.table, dtype=float).reshape(-1, problem.n_actions)  # x-major
    return set_population_min(cs, set_unit_worst(cs, rows, problem))


# ------------------------------------------------------ the separation adversary by brute force
def box_vertices(lo, hi) -> np.ndarray:
    """Every vertex of the box [lo, hi] (n,): shape (2^n, n)."""
    lo, hi = np.asarray(lo, dtype=float), np.asarray(hi, dtype=float)
    ends = np.array(list(itertools.product((0, 1), repeat=len(lo))), dtype=bool)
    return np.where(ends, hi, lo)


def l1_ball_vertices(h, r) -> np.ndarray:
    """Points of {p in the simplex : ||p - h||_1 <= r} that include all its vertices:
    for each receiving cell j and each order of the others, the mass m = min(r / 2,
    1 - h_j) moved to j from the others in that order, each emptied before the next
    (the maximiser of a generic linear function; every vertex maximises one), and h."""
    h = np.asarray(h, dtype=float)
    out = [h]
    for j in range(len(h)):
        m = min(r / 2.0, 1.0 - h[j])
        for order in itertools.permutations([i for i in range(len(h)) if i != j]):
            p = h.copy()
            p[j] += m
            left = m
            for i in order:
                take = min(left, p[i])
                p[i] -= take
                left -= take
            out.append(p)
    return np.array(out)


def rates_by_brute_force(v, weights, lo, hi) -> np.ndarray:
    """sum_x p_x t_x v_x / sum_x p_x t_x for every population p in ``weights`` (k, n)
    and every vertex t of the box [lo, hi], over the worlds with mass (> 1e-12): a
    linear-fractional function of t for fixed p and of p for fixed t, so its extremes
    over the box and over the polytope whose vertices ``weights`` holds are among these."""
    t = box_vertices(lo, hi)  # (2^n, n)
    q = weights[:, None, :] * t[None, :, :]  # (k, 2^n, n)
    mass = q.sum(axis=-1)
    return (q @ np.asarray(v, dtype=float))[mass > 1e-12] / mass[mass > 1e-12]


def separation_over_set_by_brute_force(table, cs) -> float:
    """The largest gap max_{y, a, z != z'} P(a | y, z) - P(a | y, z') of a tabular policy
    (n_x, n_z, n_a) over every world of a two-outcome ``ConfidenceSet`` of a prediction
    problem: each group's P(x | z) at the vertices of its L1 ball (its estimate when the
    population is given) and its cells' P(y = 1 | x, z) at the ends of their intervals.
    The groups share no parameter, so the largest gap pairs one group's largest rate with
    another's smallest."""
    p1 = cs.ball_center[..., 1]
    lo1, hi1 = np.clip(p1 - cs.radius / 2, 0, 1), np.clip(p1 + cs.radius / 2, 0, 1)
    _, n_z, n_a = table.shape
    cond = cs.center.p_xz / cs.center.p_xz.sum(axis=0)
    worst = 0.0
    for y, a in itertools.product((0, 1), range(n_a)):
        lo, hi = (lo1, hi1) if y == 1 else (1 - hi1, 1 - lo1)
        rates = [rates_by_brute_force(table[:, z, a], l1_ball_vertices(cond[:, z],
                                                                       cs.cell_radius[z]),
                                      lo[:, z], hi[:, z]) for z in range(n_z)]
        for z, z2 in itertools.permutations(range(n_z), 2):
            if rates[z].size and rates[z2].size:
                worst = max(worst, rates[z].max() - rates[z2].min())
    return worst


def bernoulli_kl(p: float, q: float) -> float:
    """kl(p, q) = p log(p / q) + (1 - p) log((1 - p) / (1 - q)), with 0 log 0 = 0."""
    out = 0.0
    if p > 0:
        out += p * np.log(p / q)
    if p < 1:
        out += (1 - p) * np.log((1 - p) / (1 - q))
    return out


def kl_interval_by_roots(p: float, n: int, level: float) -> tuple[float, float]:
    """The kl interval {q : n kl(p, q) <= level}, from scipy's root finder on the closed
    form (independently of fairdecide's bisection)."""
    f = lambda q: n * bernoulli_kl(p, q) - level  # noqa: E731
    eps = 1e-15
    high = 1.0 if p >= 1 or f(1 - eps) <= 0 else brentq(f, p, 1 - eps, xtol=1e-15)
    low = 0.0 if p <= 0 or f(eps) <= 0 else brentq(f, eps, p, xtol=1e-15)
    return low, high
