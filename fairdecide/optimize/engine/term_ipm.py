"""A penalised belief over few policy columns: an interior point in the policy's space.

A belief's penalty trade-off (``lam``, the mean over scenarios) minimises

    q . pi + sum_r rho_r |g_r . pi + h_r|,   pi in the unit simplices,

where q prices the policy by the scenarios' mean utility and each term r is one absolute
value of one scenario's deviation, F_ck = sum_r weight_r |D_r m_k + d_r| with the group
marginal m_k = B_k pi (:mod:`fairdecide.optimize.program._scenario_terms`), so that
g_r = D_r B_k and rho_r = lam w_k weight_r >= 0. When the terms far outnumber the
policy's columns (COMPAS: 141 cells x 2 actions, 2048 scenarios, 49,152 terms) the whole
program's coupling rows are a dense block that HiGHS crosses row by row (188 s and
209 s at K = 2048, lam 0.5 and 1; benchmarks/results/dense_block.txt), and its dual,
with one row per policy column, is still priced over every term at every simplex step
(5.9 s at lam 0.5; at lam 1 HiGHS stopped without an optimum after 1,209 s).

This route never writes the marginals. Each unit's first action is eliminated
(pi_u0 = 1 - sum of the others, u the rest), the marginals substituted (e = G u + h, G
dense, terms x free columns), and each term is one row G u - p + n = -h with p, n >= 0 at
cost rho (the absolute value p + n). The unit interior point
(:func:`fairdecide.optimize.engine.unit_ipm.mehrotra`, the same loop and tolerances as
the whole program's) solves that program with its normal equations in the policy's
space (:class:`~fairdecide.optimize.engine._normal_columns.ColumnNormal`): one dense
matrix over the free columns a step, 141 x 141 at COMPAS K = 2048.

**Certificate.** At the end any y with |y_r| <= rho_r bounds the optimum from below
(Lagrange): L(y) = h . y + const + sum_u min_a (q + G^T y)_ua over the simplices. The
gap between the exact objective of the returned policy and L at the interior point's
duals (clipped to the box) is reported in ``result.certificates["optimality"]``; the loop
is certified when it is at most the master loop's rule
(:mod:`fairdecide.optimize.engine.rounds`). Otherwise the program goes to HiGHS.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from fairdecide._common.threads import one_blas_thread
from fairdecide.optimize.engine._normal_columns import ColumnNormal
from fairdecide.optimize.engine.rounds import Certificate, Rounds
from fairdecide.optimize.engine.tasks import HandBack, SolveResult
from fairdecide.optimize.engine.unit_ipm import mehrotra
from fairdecide.optimize.program._scenario_terms import NotSuited, Terms, record

__all__ = ["TermProblem", "solve_term_ipm", "solve_terms", "term_problem"]

logger = logging.getLogger(__name__)

@dataclass
class TermProblem:
    """min const + q . u + rho . |G u + h| over u >= 0, sum_a u_xa <= 1 per unit (the
    units' first actions eliminated); ``n_a`` actions per unit."""

    q: np.ndarray
    G: np.ndarray
    h: np.ndarray
    rho: np.ndarray
    const: float
    n_units: int
    n_a: int

    def policy(self, u: np.ndarray) -> np.ndarray:
        """The policy rows (n_units, n_a) of the free columns ``u``."""
        u = np.clip(u.reshape(self.n_units, self.n_a - 1), 0.0, None)
        over = u.sum(axis=1)
        u = u / np.maximum(over, 1.0)[:, None]
        return np.column_stack([np.clip(1.0 - u.sum(axis=1), 0.0, None), u])

    def value(self, u: np.ndarray) -> float:
        return float(self.const + self.q @ u + self.rho @ np.abs(self.G @ u + self.h))

    def lower_bound(self, y: np.ndarray) -> float:
        """Lagrange's bound at term prices y (clipped to |y| <= rho): the least over the
        simplices of const + q . u + y . (G u + h)."""
        y = np.clip(y, -self.rho, self.rho)
        d = (self.q + self.G.T @ y).reshape(self.n_units, self.n_a - 1)
        return float(self.const + self.h @ y + np.minimum(d.min(axis=1), 0.0).sum())


#: The chain's size rule for the terms, measured here: (terms, free policy columns) ->
#: why the solver does not take them, or None
#: (:func:`fairdecide.optimize.engine.chain.term_sizes`).
SizeRule = Callable[[int, int], "str | None"]


def term_problem(prog: Any, tradeoff: Any, criteria: list, sizes: SizeRule | None = None
                 ) -> tuple[TermProblem, list[Terms]] | str:
    """The program of ``prog`` (a PolicyProgram whose case the chain's term-ipm
    declaration takes) in the policy's space, or why not, when its terms do not suit the
    solver: terms other than sums of absolute values, or sizes the chain's rule
    ``sizes`` refuses (measured here, before the dense term matrix is formed)."""
    wu, wf, sign = tradeoff.value_weights()
    if sign * wf < 0:
        return "a trade-off that rewards deviations"
    n_a, N = prog.n_a, prog.n_free
    n = N * (n_a - 1)
    try:
        terms = record(criteria, prog, 0.0)
    except NotSuited as exc:
        return f"criteria it cannot record as terms ({exc})"
    if any(t.kind != "sum" for t in terms):
        return "a criterion whose deviation is a maximum, not a sum, of terms"
    R = sum(len(t.d) for t in terms)
    why = None if sizes is None else sizes(R, n)
    if why is not None:
        return why
    B = prog.B_stacked                                           # (K n_m, N n_a)
    w = prog.weights
    q_full = sign * wu * prog.mean_utility_prices()
    D = sp.vstack([t.D for t in terms], format="csr")              # (R, K n_m)
    rho = np.concatenate([sign * wf * w[t.scenario] * t.weight for t in terms])
    T, first = _first_action_eliminated(N, n_a)
    # G = D B T, dense; B T first (sparse, n columns), then D times its dense form: a
    # sparse-times-dense product in C, instead of a sparse product whose result is dense
    G = np.ascontiguousarray(D @ (B @ T).toarray())
    h = np.concatenate([t.d for t in terms]) + D @ (B @ first)
    return TermProblem(T.T @ q_full, G, h, rho, float(q_full @ first), N, n_a), terms


def _first_action_eliminated(N: int, n_a: int) -> tuple[sp.csc_matrix, np.ndarray]:
    """pi = T u + first: pi_x0 = 1 - sum_a>0 u_xa, pi_xa = u_xa (a > 0); T is
    (N n_a, N (n_a - 1)) and ``first`` the indicator of the units' first actions."""
    cols = np.arange(N * (n_a - 1))
    unit = cols // (n_a - 1)
    rest = unit * n_a + cols % (n_a - 1) + 1
    T = sp.csc_matrix((np.concatenate([np.ones(len(cols)), -np.ones(len(cols))]),
                       (np.concatenate([rest, unit * n_a]), np.concatenate([cols, cols]))),
                      shape=(N * n_a, len(cols)))
    first = np.zeros(N * n_a)
    first[np.arange(N) * n_a] = 1.0
    return T, first


@dataclass
class TermRun:
    u: np.ndarray
    y: np.ndarray
    objective: float
    lower: float
    iterations: int
    converged: bool
    #: the larger relative primal or dual residual at the last iterate
    residual: float


def solve_terms(tp: TermProblem, time_limit: float | None = None) -> TermRun:
    """The unit interior point (:func:`fairdecide.optimize.engine.unit_ipm.mehrotra`) on
    ``tp`` written with one row per term, G u - p + n = -h (p, n >= 0 at cost rho: the
    absolute value p + n), its normal equations in the policy's space
    (:class:`~fairdecide.optimize.engine._normal_columns.ColumnNormal`); the returned
    policy, its exact objective and Lagrange's bound at the rows' duals."""
    N, n_a, R = tp.n_units, tp.n_a, len(tp.h)
    H = sp.hstack([-sp.identity(R), sp.identity(R)], format="csr")
    c_pi = np.column_stack([np.zeros(N), tp.q.reshape(N, n_a - 1)]).ravel()
    c = np.concatenate([c_pi, tp.rho, tp.rho])
    scale = max(float(np.abs(c).max(initial=0.0)), 1e-300)
    b = np.concatenate([np.ones(N), -tp.h])
    with one_blas_thread():
        run = mehrotra(ColumnNormal(N, n_a, tp.G, H), b, c / scale, time_limit)
    info = run.info
    if run.x is None:
        u, y = np.full(N * (n_a - 1), 1.0 / n_a), np.zeros(R)
    else:
        u = tp.policy(run.x[:N * n_a].reshape(N, n_a)[:, 1:].ravel())[:, 1:].ravel()
        y = -run.y[N:] * scale          # the term prices: Lagrange's y on |G u + h|
    residual = max(info.get("primal_residual", np.inf), info.get("dual_residual", np.inf))
    return TermRun(u, y, tp.value(u), tp.lower_bound(y), info.get("iterations", 0),
                   run.status == "optimal", residual)


def certify(run: TermRun, seconds_from: float) -> Certificate:
    """The run's certificate under the master loop's rule (one round)."""
    rounds = Rounds("term interior point")
    rounds.t0 = seconds_from
    rounds.next(run.objective, max(run.objective - run.lower, 0.0),
                iterations=run.iterations)
    return rounds.certificate


def solve_term_ipm(prog: Any, belief: Any, tradeoff: Any, criteria: list,
                   sizes: SizeRule | None = None, time_limit: float | None = None
                   ) -> SolveResult | HandBack:
    """Solve ``tradeoff`` over ``criteria`` for ``belief`` (its program ``prog``) in the
    policy's space (see the module); a hand-back when its terms do not suit the solver
    (:func:`term_problem`, under the chain's size rule ``sizes``) or it is not certified
    (the chain then solves the whole program)."""
    t0 = time.perf_counter()
    found = term_problem(prog, tradeoff, criteria, sizes)
    if isinstance(found, str):
        return HandBack(found)
    tp, terms = found
    run = solve_terms(tp, time_limit)
    certificate = certify(run, t0)
    if not certificate.certified:
        logger.info("the term interior point hands the program back after %d steps "
                    "(gap %.3g)", run.iterations, certificate.gap)
        return HandBack(f"not certified after {run.iterations} steps (gap "
                        f"{certificate.gap:.3g}, bound {certificate.bound:.3g})")
    pi = tp.policy(run.u)
    ms = prog.marginals(pi.reshape(-1))
    U = prog.utilities(ms)
    F = np.array([np.bincount(t.scenario, weights=t.weight * np.abs(t.D @ ms.reshape(-1)
                                                                     + t.d),
                              minlength=prog.K) for t in terms])
    d = {"terms": len(tp.h), "columns": tp.G.shape[1], "iterations": run.iterations,
         "residual": run.residual, "seconds": time.perf_counter() - t0}
    return SolveResult(None, float(tradeoff.merit(U, F, belief)), True, "optimal",
                       f"term interior point: {d['terms']} terms over {d['columns']} "
                       f"policy columns, {d['iterations']} steps", d["seconds"],
                       d["iterations"], {"term_ipm": d}, certificate=certificate, pi=pi,
                       utility=U, f=F)
