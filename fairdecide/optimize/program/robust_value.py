"""The worst expected utility over a confidence set, as linear rows of the program.

For a :class:`~fairdecide.uncertainty.confidence.ConfidenceSet` the value of free rows pi is

    V(pi) = min_{P in B_0} sum_u P_u g_u(pi),
    g_u(pi) = sum_{c of u} min_{theta_c in B_c} sum_{a in c} pi_ua U_a . theta_c,

B_c the region of conditional c (:mod:`fairdecide.uncertainty.regions`). Each inner
minimum is a linear program over the region, whose dual the region writes
(:meth:`~fairdecide.uncertainty.regions.OutcomeRegions.dual`; for an L1 ball
{theta in the simplex, ||theta - theta_hat_c||_1 <= r_c} it is

    max_{mu, s, lam}  mu + theta_hat . s - r lam   s.t.  mu + s_j <= w_j,  |s_j| <= lam),

so maximising V over pi is one linear program in pi and the duals' variables: the
dual's constraints are rows, its objective is the value (the epigraph of the book's
maximin, without enumerating the set's vertices). In an intervention each conditional is one
(unit, action) pair and w = pi_ua U_a: the minimum is pi_ua times a number
(:func:`~fairdecide.uncertainty.balls.worst_in_ball`), a price on the policy column and no
rows.
Optimistic (the book's twin, max over the set), each action's best over its ball prices
its column: exact in an intervention, an upper bound of the policy's best value in a
prediction problem (the actions of a unit share its ball), whose gap the result reports.
The population's balls are the L1 ball's dual twice more (:func:`~fairdecide.uncertainty.
regions.ball_duals`): over the
cells of each group (P(x | z)), then over the groups (P(z)); a given population weighs
the values by P(x | z) and P(z) and writes no rows.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fairdecide.uncertainty.regions import ball_duals

__all__ = ["robust_utility"]


def robust_utility(asm: Any) -> tuple[np.ndarray, np.ndarray]:
    """Write the dual rows of the set's worst value into ``asm`` and return the columns
    and coefficients whose sum is that value (maximised by the trade-off)."""
    prog = asm.prog
    cs, U = prog.confidence, prog.problem.utility
    n_x, n_z, n_a, n_y = cs.center.n_x, cs.center.n_z, prog.n_a, prog.n_y
    pi = asm.pi_cols[prog.free_of_unit]  # (n_u, n_a): each unit's policy columns
    # each unit's worst value g_u as a linear expression (columns, coefficients)
    if cs.optimistic or cs.center.outcome_depends_on_action:
        # pi_ua times the extreme of U_a over the ball it reads (see as_optimistic)
        g_cols, g_vals = pi, cs.action_values(prog.problem, best=cs.optimistic)
    else:  # a region over the outcomes, child j = sum_a U[a, j] pi_ua
        if cs.pooled:  # the groups of a cell share its region and (group-blind) its
            # policy columns: one dual per cell serves them all
            regions = cs.outcomes.pick((slice(None), 0))
            own = pi.reshape(n_x, n_z, n_a)[:, 0]
        else:
            regions, own = cs.outcomes, pi
        g_cols, g_vals = regions.dual(asm, np.repeat(own[:, None, :], n_y, axis=1),
                                      np.broadcast_to(U.T, (len(own), n_y, n_a)))
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
