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

This solver never writes the marginals. Each unit's first action is eliminated
(pi_u0 = 1 - sum of the others: u >= 0, sum u <= 1), each term gets t_r >= |e_r| with
e = G u + h, and Mehrotra's predictor-corrector runs on

    min q . u + rho . t   s.t.   t - e >= 0,  t + e >= 0,  1 - E u >= 0,  u >= 0.

The terms' variables eliminate exactly (each t_r sits in its own two rows), so each step
factors one dense matrix over the policy's free columns,

    M = G' Theta G + E' D_w E + Z / U,   Theta_r = 4 d1_r d2_r / (d1_r + d2_r),

formed by blocks of terms (BLAS syrk) and factored by Cholesky: 0.03 s at 49,152 x 141.
The factorisation is numpy's, not scipy's: each loads its own OpenBLAS with its own
thread pool, and alternating the two on 2 cores made a 141 x 141 Cholesky take 19 ms
instead of 0.06 ms (COMPAS K = 2048 end to end: 5.4 s against 3.4 s).

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
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from fairdecide.optimize.engine.chain import TERM_MAX_ENTRIES, TERMS_PER_COLUMN
from fairdecide.optimize.engine.rounds import Certificate, Rounds
from fairdecide.optimize.engine.scenario_cuts import ScenarioRun
from fairdecide.optimize.program._scenario_terms import NotSuited, Terms, record

__all__ = ["TermProblem", "solve_term_ipm", "solve_terms", "term_problem"]

logger = logging.getLogger(__name__)

#: The interior point stops at this relative primal-dual gap with residuals below
#: RESIDUAL_TOL (they stay near rounding, 1e-13, at COMPAS K = 2048), or once
#: mu falls below MU_MIN: the certificate is then computed exactly (Lagrange's bound).
TOL, RESIDUAL_TOL, MU_MIN = 1e-10, 1e-9, 1e-16
MAX_ITER = 100
#: Terms per block when forming M (a syrk each; 8,192 x 141 measured fastest here,
#: 0.029 s a step at 49,152 terms against 0.05 s for 2,048).
BLOCK = 8192
STEP = 0.9995


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


def term_problem(prog: Any, tradeoff: Any, criteria: list, asked: bool = False
                 ) -> tuple[TermProblem, list[Terms]] | str:
    """The program of ``prog`` (a PolicyProgram whose case the chain's term-ipm
    declaration takes) in the policy's space, or why not, when its terms do not suit the
    solver: terms other than sums of absolute values, a dense term matrix of more than
    ``TERM_MAX_ENTRIES`` numbers, or (unless ``asked``) fewer than ``TERMS_PER_COLUMN``
    terms per free policy column (the chain's thresholds, measured only here)."""
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
    if R * n > TERM_MAX_ENTRIES:
        return f"a dense term matrix of {R * n:.3g} numbers (> {TERM_MAX_ENTRIES:.3g})"
    if not (asked or R >= TERMS_PER_COLUMN * n):
        return (f"{R} terms over {n} free policy columns (fewer than {TERMS_PER_COLUMN} "
                "per column)")
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
    #: the largest primal or dual residual at the last iterate
    residual: float


@dataclass
class _Point:
    """An iterate: u and t, the slacks s1 = t - e, s2 = t + e, w = 1 - E u, and the
    duals y1, y2 (term rows), zw (unit rows), z (u >= 0)."""

    u: np.ndarray
    t: np.ndarray
    s1: np.ndarray
    s2: np.ndarray
    w: np.ndarray
    y1: np.ndarray
    y2: np.ndarray
    zw: np.ndarray
    z: np.ndarray

    PRIMAL = ("u", "t", "s1", "s2", "w")

    def pairs(self) -> list[tuple[np.ndarray, np.ndarray]]:
        return [(self.s1, self.y1), (self.s2, self.y2), (self.w, self.zw), (self.u, self.z)]

    def moved(self, d: _Point, ap: float, ad: float) -> _Point:
        return _Point(**{f: getattr(self, f) + (ap if f in self.PRIMAL else ad)
                         * getattr(d, f) for f in self.__dataclass_fields__})


def _longest(x: np.ndarray, dx: np.ndarray) -> float:
    neg = dx < 0
    return min(1.0, float(np.min(-x[neg] / dx[neg]))) if neg.any() else 1.0


def _steps(x: _Point, d: _Point) -> tuple[float, float]:
    """The longest primal and dual steps along ``d`` that keep x's pairs positive."""
    return (min(_longest(a, da) for a, da in [(x.s1, d.s1), (x.s2, d.s2), (x.w, d.w),
                                               (x.u, d.u)]),
            min(_longest(a, da) for a, da in [(x.y1, d.y1), (x.y2, d.y2), (x.zw, d.zw),
                                               (x.z, d.z)]))


class _Newton:
    """The Newton system at one iterate: its residuals on construction, then (once the
    caller knows it must step) :meth:`factor` eliminates the terms' variables and
    factors M (see the module); :meth:`direction` solves it for a complementarity
    target."""

    def __init__(self, tp: TermProblem, x: _Point, unit: np.ndarray) -> None:
        G, h = tp.G, tp.h
        self.tp, self.x, self.unit = tp, x, unit
        e = G @ x.u + h
        self.ra, self.rb = x.t - e - x.s1, x.t + e - x.s2
        self.rw = 1.0 - self.E(x.u) - x.w
        self.rd = tp.q + G.T @ (x.y1 - x.y2) + x.zw[unit] - x.z
        self.re = tp.rho - x.y1 - x.y2
        self.d1, self.d2, self.dw = x.y1 / x.s1, x.y2 / x.s2, x.zw / x.w
        self.W = self.d1 + self.d2

    def residual(self) -> float:
        """The largest primal or dual residual."""
        return max(float(np.abs(r).max(initial=0.0))
                   for r in (self.ra, self.rb, self.rw, self.rd, self.re))

    def factor(self) -> None:
        """Form M and factor it by Cholesky (LinAlgError when it cannot be)."""
        tp, x, G = self.tp, self.x, self.tp.G
        sq = np.sqrt(4.0 * self.d1 * self.d2 / self.W)
        n, k = G.shape[1], tp.n_a - 1
        M = np.zeros((n, n))
        for i in range(0, G.shape[0], BLOCK):
            A = G[i:i + BLOCK] * sq[i:i + BLOCK, None]
            M += A.T @ A            # numpy hands A.T @ A to BLAS's syrk
        first = np.arange(tp.n_units) * k
        for a in range(k):          # E' D_w E: a dense block per unit
            for b in range(k):
                M[first + a, first + b] += self.dw
        M[np.diag_indices(n)] += x.z / x.u
        try:
            self.L = np.linalg.cholesky(M)
        except np.linalg.LinAlgError:
            # rounding made M indefinite: a shift on its diagonal, only then (a
            # shift scaled by M's largest entry, which spans many orders near the
            # end, leaves the stationarity rows a residual the bound pays)
            M[np.diag_indices(n)] += 1e-14 * max(1.0, float(np.abs(M).max()))
            self.L = np.linalg.cholesky(M)

    def E(self, v: np.ndarray) -> np.ndarray:
        return _per_unit(v, self.unit, self.tp.n_units)

    def direction(self, f1: np.ndarray, f2: np.ndarray, fw: np.ndarray, fz: np.ndarray
                  ) -> _Point:
        """The step to the complementarity targets s1 y1 = f1 + ..., etc. (right-hand
        sides of the linearised products)."""
        x, G = self.x, self.tp.G
        d1, d2, W = self.d1, self.d2, self.W
        a = (f1 / x.s1 + f2 / x.s2 - d1 * self.ra - d2 * self.rb - self.re) / W
        c2 = f1 / x.s1 - f2 / x.s2 - d1 * self.ra + d2 * self.rb - (d1 - d2) * a
        rhs = (-self.rd - G.T @ c2 - (fw / x.w - self.dw * self.rw)[self.unit]
               + fz / x.u)
        du = np.linalg.solve(self.L.T, np.linalg.solve(self.L, rhs))
        Gdu = G @ du
        dt = a + (d1 - d2) / W * Gdu
        ds1, ds2 = dt - Gdu + self.ra, dt + Gdu + self.rb
        dw = -self.E(du) + self.rw
        return _Point(du, dt, ds1, ds2, dw, (f1 - x.y1 * ds1) / x.s1,
                      (f2 - x.y2 * ds2) / x.s2, (fw - x.zw * dw) / x.w, (fz - x.z * du) / x.u)


def _per_unit(v: np.ndarray, unit: np.ndarray, n_units: int) -> np.ndarray:
    """Per unit, the sum of its free columns' entries of ``v`` (E v)."""
    return np.bincount(unit, weights=v, minlength=n_units)


def _start(tp: TermProblem, unit: np.ndarray) -> _Point:
    """The uniform policy, t above |e|, y at the middle of its box, z and zw from the
    stationarity residual (so that it starts near zero)."""
    G, h, rho, q, k = tp.G, tp.h, tp.rho, tp.q, tp.n_a - 1
    u = np.full(G.shape[1], 1.0 / tp.n_a)
    e = G @ u + h
    t = np.abs(e) + max(float(np.abs(e).mean()), 1e-8)
    floor = 1e-8 * max(1.0, float(rho.max(initial=0.0)))
    y1 = np.maximum(rho / 2, floor)
    y2 = y1.copy()
    g = q + G.T @ (y1 - y2)
    shift = 1e-2 * max(1e-8, float(np.abs(g).max()))
    zw = np.maximum(-np.minimum(g.reshape(tp.n_units, k).min(axis=1), 0.0), 0.0) + shift
    w = 1.0 - _per_unit(u, unit, tp.n_units)
    return _Point(u, t, t - e, t + e, w, y1, y2, zw, np.maximum(g + zw[unit], shift))


def solve_terms(tp: TermProblem, time_limit: float | None = None) -> TermRun:
    """Mehrotra's predictor-corrector on ``tp`` (see the module)."""
    t0 = time.perf_counter()
    unit = np.repeat(np.arange(tp.n_units), tp.n_a - 1)
    x = _start(tp, unit)
    n_pairs = 2 * len(tp.h) + len(x.u) + tp.n_units
    converged, it, resid = False, 0, np.inf
    while it < MAX_ITER:
        it += 1
        nt = _Newton(tp, x, unit)
        mu = sum(a @ b for a, b in x.pairs()) / n_pairs
        primal = tp.q @ x.u + tp.rho @ x.t
        dual = tp.h @ (x.y1 - x.y2) - x.zw.sum()
        scale = max(1.0, abs(primal))
        resid = nt.residual()
        if resid <= RESIDUAL_TOL * scale and (abs(primal - dual) <= TOL * scale
                                              or mu <= MU_MIN * scale):
            converged = True
            break
        if time_limit is not None and time.perf_counter() - t0 > time_limit:
            break
        try:            # factored only when a step is taken
            nt.factor()
        except np.linalg.LinAlgError:
            break
        aff = nt.direction(*(-a * b for a, b in x.pairs()))
        ap, ad = _steps(x, aff)
        mu_aff = sum((a + ap * da) @ (b + ad * db) for (a, b), (da, db)
                     in zip(x.pairs(), aff.pairs(), strict=True)) / n_pairs
        target = (mu_aff / mu) ** 3 * mu
        d = nt.direction(*(target - a * b - da * db for (a, b), (da, db)
                           in zip(x.pairs(), aff.pairs(), strict=True)))
        ap, ad = _steps(x, d)
        x = x.moved(d, STEP * ap, STEP * ad)
    y = x.y1 - x.y2
    pi_free = tp.policy(x.u)[:, 1:].ravel()
    return TermRun(pi_free, y, tp.value(pi_free), tp.lower_bound(y), it, converged, resid)


def certify(run: TermRun, seconds_from: float) -> Certificate:
    """The run's certificate under the master loop's rule (one round)."""
    rounds = Rounds("term interior point")
    rounds.t0 = seconds_from
    rounds.next(run.objective, max(run.objective - run.lower, 0.0),
                iterations=run.iterations)
    return rounds.certificate


def solve_term_ipm(prog: Any, belief: Any, tradeoff: Any, criteria: list, asked: bool = False,
                   time_limit: float | None = None) -> ScenarioRun | str:
    """Solve ``tradeoff`` over ``criteria`` for ``belief`` (its program ``prog``) in the
    policy's space (see the module); why not, when its terms do not suit the solver
    (:func:`term_problem`) or it is not certified (the caller then solves the whole
    program)."""
    t0 = time.perf_counter()
    found = term_problem(prog, tradeoff, criteria, asked)
    if isinstance(found, str):
        return found
    tp, terms = found
    run = solve_terms(tp, time_limit)
    certificate = certify(run, t0)
    if not certificate.certified:
        logger.info("the term interior point hands the program back after %d steps "
                    "(gap %.3g)", run.iterations, certificate.gap)
        return (f"not certified after {run.iterations} steps (gap {certificate.gap:.3g}, "
                f"bound {certificate.bound:.3g})")
    pi = tp.policy(run.u)
    ms = prog.marginals(pi.reshape(-1))
    U = prog.utilities(ms)
    F = np.array([np.bincount(t.scenario, weights=t.weight * np.abs(t.D @ ms.reshape(-1)
                                                                     + t.d),
                              minlength=prog.K) for t in terms])
    details = {"terms": len(tp.h), "columns": tp.G.shape[1], "iterations": run.iterations,
               "residual": run.residual, "seconds": time.perf_counter() - t0}
    return ScenarioRun(pi, U, F, float(tradeoff.merit(U, F, belief)), details,
                       certificate)
