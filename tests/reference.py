"""An independent reference model for the linear fairness programs, used by the tests.

Written directly over the policy table with dense rows and no marginal variables (the
library uses sparse rows over auxiliary marginals), so agreement checks the formulation
as well as the solver plumbing.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import linprog


def _index(n_x, n_z, n_a):
    return np.arange(n_x * n_z * n_a).reshape(n_x, n_z, n_a)


def comparison_rows(problem, world, kind, outcomes=None):
    """Coefficient rows g (one per compared (c, z, a)) with g @ vec(pi) = P(a|c,z) - P(a|c)."""
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
                    slack=None, blind=False, outcomes=None):
    """Optimal value of the trade-off: returns (utility, deviation) of the optimum."""
    n_x, n_z = world.p_xz.shape
    n_a = problem.n_actions
    n_pi = n_x * n_z * n_a
    u = utility_coefficients(problem, world)
    G = comparison_rows(problem, world, kind, outcomes) if kind else np.zeros((0, n_pi))
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
