"""The exposure program of a fair ranking: over the expohedron, by column generation.

When every criterion reads P only through the candidates' exposures e = P v
(``reads_exposure``: :class:`ExposureParity`, :class:`MeritExposure`), the program is over
e alone. Its feasible set is the expohedron: the permutahedron of the position weights
v (padded with zeros to n when k < n), whose vertices are the deterministic rankings
(Kletti et al., WSDM 2022). Both the utility sum_i u_i e_i and the criteria's rows over
the groups' totals T_g = sum_{i in g} e_i are linear in e, so the program is

    max sum_r w_r U_r   s.t.  sum_r w_r = 1,  w >= 0,
                             A (sum_r w_r T_r) + A_aux z <= b + epsilon,

over the weights w_r of rankings r (U_r, T_r their utility and group totals): a
Dantzig-Wolfe master over the expohedron's vertices. Only the rankings that may enter are
generated. Given the master's row duals y (y_0 on the first row, y_c on the criteria's),
a ranking's reduced cost is -U_r - y_0 - lambda . T_r with lambda = A^T y_c (G numbers),
and the ranking that minimises it maximises sum_i (u_i + lambda_{g(i)}) e_i over the
expohedron: sort the candidates by u_i + lambda_{g(i)} and give the j-th the j-th weight
(the greedy vertex; ties by merit). When no ranking has a negative reduced cost (below
REDUCED_COST_TOL of the utility's scale, or the best one is already in the master, its
reduced cost HiGHS's round-off), the master's optimum is the program's: exact, because
pricing is an exact linear maximisation over the whole expohedron.

Feasibility first (phase one): a slack s relaxes every tolerance row (A T + A_aux z - s
<= b + epsilon, the rows with a tolerance), min s by the same generation from the sort
and each group ranked first; s > 0 at its optimum means no ranking meets the
tolerances. ``phase_one=True`` drops epsilon instead, and its s is the smallest
tolerance common to all criteria.

The master's basic optimum puts positive weight on linearly independent columns
(1, A T_r), which span at most G dimensions (sum_g T_g = sum_j v_j), so the answer is a
lottery over at most G rankings, G the number of groups (<= n), without a separate
decomposition: each ranking is one sort, and the whole program costs one O(n log n) sort
per generated ranking.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from fairdecide.assignment._ranking_lp import Solved
from fairdecide.assignment._setup import RankingSetup
from fairdecide.assignment.lottery import RankingLottery
from fairdecide.optimize.engine.chain import Case, highs_method
from fairdecide.optimize.engine.highs_model import HighsModel
from fairdecide.optimize.engine.rounds import MAX_ROUNDS, Rounds

#: A ranking enters the master when its reduced cost is below -REDUCED_COST_TOL times
#: the utility's scale max(1, max|u| sum v): a hundred times inside the master loops'
#: certificate (optimize/engine/rounds.GAP), because the feasibility stage decides
#: feasibility from the master's slack at its end (0 to 1e-12). The loop's round limit,
#: progress reports and certificate (stats["certificate"]: the Lagrangian gap, minus the
#: best reduced cost, within the one stopping rule's bound) are the master loops'.
REDUCED_COST_TOL = 1e-11
#: Weights below this (relative) are the master's round-off, not rankings of the lottery.
WEIGHT_TOL = 1e-13


def _vertex(setup: RankingSetup, v: np.ndarray, key: np.ndarray) -> tuple:
    """The greedy vertex of the expohedron for the score ``key``: candidates sorted by
    key (ties by merit, then index), the j-th given v_j. (order, U, T)."""
    order = np.lexsort((np.arange(setup.n), -setup.merits, -key))
    e = np.empty(setup.n)
    e[order] = v
    return order, float(setup.merits @ e), np.bincount(setup.codes, e, setup.n_groups)


def _stack(setup: RankingSetup, criteria: list) -> tuple:
    """The criteria's rows over T and their aux variables: (A_T, A_aux, b, eps_rows),
    the tolerance of row r being eps_rows[r] * epsilon_c of its criterion."""
    G = setup.n_groups
    built = [c.exposure_rows(setup) for c in criteria]
    AT = [sp.csr_matrix(r.A)[:, :G] for r in built]
    Aaux = sp.block_diag([sp.csr_matrix(r.A)[:, G:] for r in built], format="csr") \
        if built else sp.csr_matrix((0, 0))
    AT = sp.vstack(AT).tocsr() if built else sp.csr_matrix((0, G))
    return AT, Aaux, built


def solve_exposure(setup: RankingSetup, criteria: list, epsilon: np.ndarray,
                   phase_one: bool = False) -> Solved:
    """The program over the expohedron by column generation (see the module)."""
    n, G = setup.n, setup.n_groups
    v = np.r_[setup.positions, np.zeros(n - setup.k)]
    AT, Aaux, built = _stack(setup, criteria)
    R, n_aux = AT.shape[0], Aaux.shape[1]
    b = np.concatenate([r.b for r in built]) if built else np.zeros(0)
    tol_rows = np.concatenate([r.eps for r in built]) if built else np.zeros(0)
    eps_rows = np.concatenate([e * r.eps for r, e in zip(built, epsilon, strict=True)]) \
        if built else np.zeros(0)
    hi = b if phase_one else b + eps_rows
    # columns: s, aux; then the rankings' weights. rows: sum w = 1, the criteria's rows.
    A0 = sp.vstack([sp.csr_matrix((1, 1 + n_aux)),
                    sp.hstack([sp.csr_matrix(-tol_rows[:, None]), Aaux])]).tocsr()
    model = HighsModel(np.r_[1.0, np.zeros(n_aux)], np.r_[0.0, np.full(n_aux, -np.inf)],
                       np.full(1 + n_aux, np.inf), A0, np.r_[1.0, np.full(R, -np.inf)],
                       np.r_[1.0, hi])
    model.set_method(highs_method(Case("master")))
    scale = max(1.0, float(np.abs(setup.merits).max() * v.sum()))
    orders, U, T, seen = [], [], [], set()

    def known(order: np.ndarray) -> bool:
        """Already in the master: its reduced cost is HiGHS's round-off, not progress."""
        return hash(order.astype(np.int64).tobytes()) in seen

    def add(order: np.ndarray, u: float, t: np.ndarray, cost: float) -> None:
        seen.add(hash(order.astype(np.int64).tobytes()))
        col = sp.csc_matrix(np.r_[1.0, AT @ t][:, None])
        model.add_cols(col, [cost], [0.0], [np.inf])
        orders.append(order.astype(np.int32 if n < 2**31 else np.int64))
        U.append(u)
        T.append(t)

    first = [setup.merits.copy()] + [setup.merits + 2 * scale * (setup.codes == g)
                                     for g in range(G)]
    for key in first:
        order, u, t = _vertex(setup, v, key)
        add(order, u, t, 0.0)
    stage, done = "feasibility", False
    # about 30 rankings a group enter before the master is optimal (316 at ten groups
    # of 10,000 candidates): the loops' round limit, raised with the groups
    rounds = Rounds("exposure generation", max_rounds=max(MAX_ROUNDS, 100 * G))
    optimal, status = False, "not solved"
    while not done and rounds.stop_reason() is None:
        optimal, status = model.solve()
        if not optimal:
            break
        y = model.row_duals()
        lam = AT.T @ y[1:] if R else np.zeros(G)
        if stage == "feasibility":
            s = float(model.values()[0])
            if s <= 1e-12 and not phase_one:  # feasible: maximise the utility
                stage = "utility"
                model.set_col_bounds(np.array([0]), np.array([0.0]), np.array([0.0]))
                model.set_costs(np.r_[0, 1 + n_aux + np.arange(len(U))],
                                np.r_[0.0, -np.asarray(U)])
                continue
            order, u, t = _vertex(setup, v, lam[setup.codes])
            reduced, cost, tol = -y[0] - lam @ t, 0.0, max(1.0, float(v.sum()))
        else:
            order, u, t = _vertex(setup, v, setup.merits + lam[setup.codes])
            reduced, cost, tol = -u - y[0] - lam @ t, -u, scale
        # the master is over the simplex of rankings' weights: its objective less the
        # best ranking's reduced cost bounds the program's optimum (Lagrange)
        rounds.next(model.objective, gap=max(0.0, -reduced), rankings=len(U))
        done = reduced >= -REDUCED_COST_TOL * tol or known(order)
        if not done:
            add(order, u, t, cost)
    stats = {"n_variables": 1 + n_aux + len(U), "n_constraints": 1 + R,
             "rankings_generated": len(U), "generation_rounds": rounds.count,
             "solve_seconds": model.seconds}
    if rounds.certificate is not None:
        stats["certificate"] = rounds.certificate.as_dict()
    if not optimal:
        return Solved(None, np.nan, False, status, stats)
    if not done:
        return Solved(None, np.nan, False, f"generation {rounds.stop_reason()}", stats)
    x = model.values()
    slack = float(x[0])
    if stage == "feasibility" and not phase_one:
        return Solved(None, np.nan, False, "infeasible", stats, slack=slack)
    w = np.clip(x[1 + n_aux:], 0.0, None)
    keep = w > WEIGHT_TOL * w.sum()
    w = w[keep] / w[keep].sum()
    lottery = RankingLottery(w, np.stack(orders)[keep], setup.positions, setup.tie_classes())
    return Solved(None, float(w @ np.asarray(U)[keep]), True, status, stats,
                  slack=slack if phase_one else None, lottery=lottery)
