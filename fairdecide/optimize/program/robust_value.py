"""The worst expected utility over a confidence set, as linear rows of the program.

For a :class:`~fairdecide.uncertainty.confidence.ConfidenceSet` the value of free rows pi is

    V(pi) = min_{P in B_0} sum_u P_u g_u(pi),
    g_u(pi) = sum_{c of u} min_{theta_c in B_c} sum_{a in c} pi_ua U_a . theta_c,

B_c = {theta in the simplex, ||theta - theta_hat_c||_1 <= r_c}. Each inner minimum is
the linear program min w . theta s.t. 1 . theta = 1, |theta - theta_hat| <= t,
1 . t <= r, theta, t >= 0, whose dual is

    max_{mu, s, lam}  mu + theta_hat . s - r lam   s.t.  mu + s_j <= w_j,  |s_j| <= lam,

so maximising V over pi is one linear program in (pi, mu, s, lam): the dual's
constraints are rows, its objective is the value (the epigraph of the book's maximin,
without enumerating the set's vertices). In an intervention each conditional is one
(unit, action) pair and w = pi_ua U_a: the minimum is pi_ua times a number
(:func:`~fairdecide.uncertainty.balls.worst_in_ball`), a price on the policy column and no
rows.
Optimistic (the book's twin, max over the set), each action's best over its ball prices
its column: exact in an intervention, an upper bound of the policy's best value in a
prediction problem (the actions of a unit share its ball), whose gap the result reports.
The population's balls are the same dual twice more (:func:`ball_duals`): over the
cells of each group (P(x | z)), then over the groups (P(z)); a given population weighs
the values by P(x | z) and P(z) and writes no rows.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["ball_duals", "robust_utility"]


def ball_duals(asm: Any, cols: np.ndarray, vals: np.ndarray, center: np.ndarray,
               radius: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The minimum over B balls of center . theta-weighted children, as dual rows.

    Ball b has n children, child i the linear expression vals[b, i] . x[cols[b, i]]
    (``cols``, ``vals`` of shape (B, n, w)). Writes mu_b + s_bi - child_bi <= 0 and
    |s_bi| <= lam_b, and returns the columns and coefficients (B, n + 2) of
    mu_b + center_b . s_b - radius_b lam_b, which is at most min_{q in ball b} q . child_b
    for every feasible (mu, s, lam) and equal to it at the best. Balls of radius 0 write
    nothing: their minimum is center_b . child_b, returned as (B, n w)."""
    B, n, w = cols.shape
    if not np.any(radius > 0):
        return cols.reshape(B, n * w), (center[:, :, None] * vals).reshape(B, n * w)
    asm.wrote_duals = True
    mu = asm.new_vars(B, -np.inf)
    s = asm.new_vars(B * n, -np.inf)
    lam = asm.new_vars(B)
    rows = np.arange(B * n)
    asm.ub.add(np.repeat(rows, 2 + w),
               np.column_stack([np.repeat(mu, n), s, cols.reshape(B * n, w)]).reshape(-1),
               np.column_stack([np.ones((B * n, 2)), -vals.reshape(B * n, w)]).reshape(-1),
               np.zeros(B * n))
    for sign in (1.0, -1.0):
        asm.ub.add(np.repeat(rows, 2), np.column_stack([s, np.repeat(lam, n)]).reshape(-1),
                   np.tile([sign, -1.0], B * n), np.zeros(B * n))
    return (np.column_stack([mu, s.reshape(B, n), lam]),
            np.column_stack([np.ones(B), center, -radius]))


def robust_utility(asm: Any) -> tuple[np.ndarray, np.ndarray]:
    """Write the dual rows of the set's worst value into ``asm`` and return the columns
    and coefficients whose sum is that value (maximised by the trade-off)."""
    prog = asm.prog
    cs, U = prog.confidence, prog.problem.utility
    n_x, n_z, n_a, n_y = cs.center.n_x, cs.center.n_z, prog.n_a, prog.n_y
    n_u = n_x * n_z
    pi = asm.pi_cols[prog.free_of_unit]  # (n_u, n_a): each unit's policy columns
    # each unit's worst value g_u as a linear expression (columns, coefficients)
    if cs.optimistic or cs.center.outcome_depends_on_action:
        # pi_ua times the extreme of U_a over the ball it reads (see as_optimistic)
        g_cols, g_vals = pi, cs.action_values(prog.problem, best=cs.optimistic)
    else:  # a ball over the outcomes, child j = sum_a U[a, j] pi_ua
        if cs.pooled:  # the groups of a cell share its ball and (group-blind) its policy
            # columns: one dual per cell serves them all
            hat, r = cs.ball_center[:, 0], cs.radius[:, 0]
            own = pi.reshape(n_x, n_z, n_a)[:, 0]
        else:
            hat, r, own = cs.ball_center.reshape(n_u, n_y), cs.radius.reshape(n_u), pi
        g_cols, g_vals = ball_duals(asm, np.repeat(own[:, None, :], n_y, axis=1),
                                    np.broadcast_to(U.T, (len(own), n_y, n_a)), hat, r)
        if cs.pooled:
            g_cols, g_vals = (np.repeat(g, n_z, axis=0) for g in (g_cols, g_vals))
    # the population: each group's P(x | z), then P(z) (units are x-major)
    w = g_cols.shape[1]
    by_group = (g_cols.reshape(n_x, n_z, w).transpose(1, 0, 2),
                g_vals.reshape(n_x, n_z, w).transpose(1, 0, 2))
    h_cols, h_vals = ball_duals(asm, *by_group, cs.center.p_x_given_z.T, cs.cell_radius)
    v_cols, v_vals = ball_duals(asm, h_cols[None], h_vals[None], cs.center.p_z[None],
                                np.array([cs.group_radius]))
    return v_cols.reshape(-1), v_vals.reshape(-1)
