"""The smooth program one start of the gradient route solves (see
:mod:`fairdecide.optimize.routes.gradient` for the method).

For a trade-off over a parametric family, :class:`_Program` states the objective and the
constraints in x = (theta, epigraph variables) with analytic gradients: utilities and
deviations through the group marginals M_k(theta) and their Jacobians, |r|, max |r| and
max(0, max r) through epigraph variables (or smoothed, see :func:`_smoothing`), the worst case over
scenarios through one more variable. :func:`_run` solves it by SLSQP or L-BFGS.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
from scipy.optimize import minimize

from fairdecide.optimize.program.tradeoff import (
    Tradeoff,
)
from fairdecide.optimize.routes.parametric import ParametricSession
from fairdecide.optimize.routes.session import Tally
from fairdecide.worlds.table import marginal_utility

__all__ = ["EPIGRAPH_LIMIT", "FEASIBILITY_TOL", "run_program"]

#: SLSQP's accuracy: the largest sum of constraint violations it accepts at convergence
#: (objective changes are compared with the session's ``objective_tol``, see
#: :meth:`_Program.solve`).
FEASIBILITY_TOL = 1e-10


class _Program:
    """The smooth program of one trade-off in x = (theta, epigraph variables)."""

    def __init__(self, session: ParametricSession, tradeoff: Tradeoff, crit_index: list[int],
                 theta0: np.ndarray, mu: float | None = None) -> None:
        caps = session.capabilities
        self.s, self.tr, self.mu = session, tradeoff, mu
        self.ci = [c for c in crit_index if not caps[c].parametric]
        # criteria certified by smooth constraints on theta (Lipschitz: the W-norm bound)
        self.param = [session.criteria[c].parameter_constraints(session.template)
                      for c in crit_index if caps[c].parametric]
        self.K = session.belief.n_scenarios
        self.b = session.belief.weights
        self.worst = session.belief.aggregate == "worst"
        self.n_theta = theta0.size
        self._key: bytes | None = None
        at = self._at(theta0, jacobians=False)
        # Epigraph layout: per (criterion, scenario) a slice of t (abs-sum) or one s
        # (abs-max, hinge-max).
        pos, self.slot = self.n_theta, {}
        for c in self.ci:
            for k in range(self.K):
                terms = at["terms"][c][k]
                how = terms.combine if mu is None else SMOOTHED.get(terms.combine, "sum")
                size = {"abs-sum": terms.values.size, "abs-max": 1, "hinge-max": 1
                        }.get(how, 0)
                self.slot[c, k] = (how, slice(pos, pos + size), terms.values.size)
                pos += size
        self.sigma = pos if self.worst else None
        self.n_x = pos + (self.sigma is not None)
        self.x0 = np.zeros(self.n_x)
        self.x0[:self.n_theta] = theta0
        for (c, k), (how, sl, _) in self.slot.items():
            values = at["terms"][c][k].values
            r = np.abs(values)
            if how == "abs-sum":
                self.x0[sl] = r
            elif how == "abs-max" and r.size:
                self.x0[sl] = r.max()
            elif how == "hinge-max" and r.size:
                self.x0[sl] = max(0.0, values.max())
        if self.sigma is not None:
            V, _ = self._values(self.x0)
            self.x0[self.sigma] = V.min() if self._maximises else V.max()

    # ------------------------------------------------------------- model at theta
    def _at(self, theta: np.ndarray, jacobians: bool = True) -> dict[str, Any]:
        """Marginals, utilities, criterion terms (and the Jacobians dM/dtheta, with the
        utility gradients, unless ``jacobians`` is False) at ``theta``, cached."""
        key = theta.tobytes()
        if key != self._key:
            model, s = self.s.model, self.s
            M = model.marginals(theta)
            terms = {c: [s.criteria[c].gradient_terms(M[k], s.problem) for k in range(self.K)]
                     for c in self.ci}
            U = marginal_utility(M, s.utility)
            self._cache = {"M": M, "terms": terms, "U": U}
            self._key = key
        if jacobians and "J" not in self._cache:
            J = self.s.model.jacobians(theta)
            self._cache["J"] = J
            self._cache["dU"] = np.einsum("m,kmt->kt",
                                          np.tile(self.s.utility.ravel(), self.s.model.n_z), J)
        return self._cache

    def smooth_objective(self, theta: np.ndarray) -> tuple[float, np.ndarray]:
        """The objective when no epigraph or constraint is needed (mean over scenarios,
        only smooth "sum" terms), with its gradient by one vector-Jacobian product."""
        at = self._at(theta, jacobians=False)
        M = at["M"]
        wu, wf, sign = self._weights
        V = wu * at["U"]
        gM = np.broadcast_to(wu * self.s.utility, M.shape).copy()
        for c in self.ci:
            for k in range(self.K):
                value, g = self._smooth(at, c, k)
                V[k] += wf * value
                gM[k] += wf * g.reshape(M.shape[1:])
        pen, dpen = self.s.model.evaluator.penalty(theta)
        grad = sign * self.s.model.vjp(theta, self.b[:, None, None, None] * gM) + dpen
        return float(sign * self.b @ V) + pen, grad

    def _fhat(self, x: np.ndarray, c: int, k: int) -> tuple[float, np.ndarray]:
        """The bound on criterion c's deviation in scenario k, and its gradient in x."""
        how, sl, _ = self.slot[c, k]
        g = np.zeros(self.n_x)
        if how not in EPIGRAPHS:
            at = self._at(x[:self.n_theta])
            value, gM = self._smooth(at, c, k)
            g[:self.n_theta] = gM @ at["J"][k]
            return value, g
        g[sl] = 1.0
        return float(x[sl].sum()), g

    def _smooth(self, at: dict[str, Any], c: int, k: int) -> tuple[float, np.ndarray]:
        """A deviation written without epigraph variables and its gradient in M: the sum
        of smooth terms (KL), or, with smoothing mu, sum_i sqrt(r_i^2 + mu^2) (>= the TV
        deviation, by at most n mu), mu log sum_i exp(sqrt(r_i^2 + mu^2) / mu) (>= the
        max deviation, by at most mu (1 + log n)) or mu log(1 + sum_i exp(r_i / mu))
        (>= max(0, max_i r_i), by at most mu log(n + 1))."""
        how, _, n_terms = self.slot[c, k]
        terms = at["terms"][c][k]
        if terms.values.size != n_terms:
            raise _ActiveSetChanged
        r, jac = terms.values, terms.jacobian
        if how == "sum":
            return float(r.sum()), jac.sum(axis=0)
        if r.size == 0:
            return 0.0, np.zeros(jac.shape[1])
        if how == "smooth-hinge":  # log-sum-exp over (0, r_1, ..., r_n)
            top = max(0.0, float(r.max()))
            e = np.exp((r - top) / self.mu)
            total = e.sum() + np.exp(-top / self.mu)
            return top + self.mu * float(np.log(total)), (e / total) @ jac
        root = np.sqrt(r ** 2 + self.mu ** 2)
        if how == "smooth-sum":
            return float(root.sum()), (r / root) @ jac
        top = root.max()
        e = np.exp((root - top) / self.mu)
        value = top + self.mu * np.log(e.sum())
        return float(value), (e / e.sum() * r / root) @ jac

    @property
    def _maximises(self) -> bool:
        return self._weights[2] < 0

    @property
    def _weights(self) -> tuple[float, float, float]:
        """V_k = wu U_k + wf sum_c F_ck, and the sign that makes the aggregate of V a
        value to minimise (:meth:`Tradeoff.value_weights`): the mixture (1 - lam) U -
        lam F, U alone (epsilon, utility), or the total deviation F (slack, minimised)."""
        return self.tr.value_weights()

    def _values(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per-scenario values V_k the trade-off aggregates (to maximise for utility
        trade-offs, the total deviation to minimise for the slack one) and gradients."""
        at = self._at(x[:self.n_theta])
        wu, wf, _ = self._weights
        V = wu * at["U"]
        G = np.zeros((self.K, self.n_x))
        G[:, :self.n_theta] = wu * at["dU"]
        if wf:
            for k in range(self.K):
                for c in self.ci:
                    f, g = self._fhat(x, c, k)
                    V[k] += wf * f
                    G[k] += wf * g
        return V, G

    # ------------------------------------------------------------- program
    def objective(self, x: np.ndarray) -> tuple[float, np.ndarray]:
        pen, dpen = self.s.model.evaluator.penalty(x[:self.n_theta])
        g = np.zeros(self.n_x)
        g[:self.n_theta] = dpen
        sign = self._weights[2]
        if self.sigma is not None:
            g[self.sigma] += sign
            return sign * x[self.sigma] + pen, g
        V, G = self._values(x)
        return float(sign * self.b @ V) + pen, g + sign * self.b @ G

    def constraints(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """All constraints as c(x) >= 0 with their Jacobian; the parametric criteria's
        rows (:attr:`n_exact` of them) come last."""
        rows, jac = [], []
        at = self._at(x[:self.n_theta])
        for (c, k), (how, sl, n_terms) in self.slot.items():
            if how not in EPIGRAPHS:
                continue
            terms = at["terms"][c][k]
            if terms.values.size != n_terms:
                raise _ActiveSetChanged
            dr = np.zeros((n_terms, self.n_x))
            dr[:, :self.n_theta] = terms.jacobian @ at["J"][k]
            cover = np.zeros((n_terms, self.n_x))
            if how == "abs-sum":
                cover[np.arange(n_terms), np.arange(sl.start, sl.stop)] = 1.0
                t = x[sl]
            else:
                cover[:, sl.start] = 1.0
                t = np.full(n_terms, x[sl.start])
            rows.append(t - terms.values)
            jac.append(cover - dr)
            if how != "hinge-max":  # |r|: t >= -r too (hinge-max: t >= 0, a bound)
                rows.append(t + terms.values)
                jac.append(cover + dr)
        if self.sigma is not None:
            V, G = self._values(x)
            e = np.zeros(self.n_x)
            e[self.sigma] = 1.0
            if self._maximises:
                rows.append(V - x[self.sigma])
                jac.append(G - e)
            else:
                rows.append(x[self.sigma] - V)
                jac.append(e - G)
        bounds = self.tr.deviation_bounds(len(self.s.criteria))
        for c in self.ci:
            eps = bounds[c]
            if not np.isfinite(eps):  # every bound of a trade-off that sets none
                continue
            F = [self._fhat(x, c, k) for k in range(self.K)]
            if self.worst:
                rows.append(np.array([eps - f for f, _ in F]))
                jac.append(-np.array([g for _, g in F]))
            else:
                rows.append(np.array([eps - sum(b * f for b, (f, _) in zip(
                    self.b, F, strict=True))]))
                jac.append(-(self.b @ np.array([g for _, g in F]))[None])
        floor = self.tr.utility_floor
        if floor is not None:
            g = np.zeros((self.K, self.n_x))
            g[:, :self.n_theta] = at["dU"]
            if self.worst:
                rows.append(at["U"] - floor)
                jac.append(g)
            else:
                rows.append(np.array([self.b @ at["U"] - floor]))
                jac.append((self.b @ g)[None])
        # last: the rows held exactly (see solve)
        for constraint in self.param:
            value, grad = constraint(x[:self.n_theta])
            rows.append(value)
            jac.append(np.hstack([grad, np.zeros((len(value), self.n_x - self.n_theta))]))
        if not rows:
            return np.zeros(0), np.zeros((0, self.n_x))
        return np.concatenate(rows), np.vstack(jac)

    @property
    def n_exact(self) -> int:
        """Constraint rows a certificate reads directly (a parametric criterion's bound
        on theta), held to FEASIBILITY_TOL; the route verifies the others exactly."""
        return sum(len(constraint(self.x0[:self.n_theta])[0]) for constraint in self.param)

    def solve(self, max_iter: int, objective_tol: float | None = None,
              verified_tol: float | None = None) -> tuple[np.ndarray, bool, int, str]:
        """Run the solver from x0; the parameters reached, convergence, iterations and
        the method's name.

        SLSQP has one accuracy, ``acc``, for two tests: the objective's change (and the
        predicted decrease |g' d| + sum_j |lambda_j c_j|) and the sum of constraint
        violations. Here they are decoupled by scaling, with acc = FEASIBILITY_TOL: the
        program is solved in y = x / c with the objective divided by c^2, c^2 =
        objective_tol / FEASIBILITY_TOL, so objective changes are compared with
        ``objective_tol``; the rows the route verifies on the decision table (and
        re-solves tightened if missed: deviations, epigraphs, utility floors) are
        divided by ``verified_tol`` / FEASIBILITY_TOL, so their violations are compared
        with ``verified_tol``; the last :attr:`n_exact` rows stay at FEASIBILITY_TOL
        (what a certificate such as Lipschitz's weight bound needs). None leaves a test
        at FEASIBILITY_TOL. From the identity start of SLSQP's quasi-Newton matrix the
        iterates are the unscaled ones (steps, multipliers and the merit function scale
        together): only the stopping tests change.
        """
        n_con = len(self.constraints(self.x0)[0])
        bounds = [(None, None)] * self.n_theta + [(0.0, None)] * (self.n_x - self.n_theta
                                                                   - (self.sigma is not None))
        if self.sigma is not None:
            bounds.append((None, None))
        if n_con == 0 and self.n_x == self.n_theta:
            res = minimize(self.smooth_objective, self.x0, jac=True, method="L-BFGS-B",
                           options={"maxiter": max_iter, "gtol": 1e-9, "ftol": 1e-12})
            return res.x[:self.n_theta], bool(res.success), int(res.nit), "L-BFGS"
        c = np.sqrt(max(objective_tol or 0.0, FEASIBILITY_TOL) / FEASIBILITY_TOL)
        row = np.full(n_con, FEASIBILITY_TOL / max(verified_tol or 0.0, FEASIBILITY_TOL))
        row[n_con - self.n_exact:] = 1.0

        def objective(y: np.ndarray) -> tuple[float, np.ndarray]:
            f, g = self.objective(c * y)
            return f / c ** 2, g / c

        cons = [{"type": "ineq", "fun": lambda y: row * self.constraints(c * y)[0],
                 "jac": lambda y: (c * row)[:, None] * self.constraints(c * y)[1]}
                ] if n_con else []
        res = minimize(objective, self.x0 / c, jac=True, method="SLSQP", bounds=bounds,
                       constraints=cons, options={"maxiter": max_iter,
                                                  "ftol": FEASIBILITY_TOL})
        return c * res.x[:self.n_theta], bool(res.success), int(res.nit), "SLSQP"


class _ActiveSetChanged(Exception):
    """A conditional's mass crossed zero during the search (its terms appeared or
    vanished); the start is abandoned."""


#: Above this many epigraph variables (scenarios x terms), deviations are smoothed
#: instead: SLSQP's dense subproblems grow with the cube of the variables.
EPIGRAPH_LIMIT = 64
SMOOTHED = {"abs-sum": "smooth-sum", "abs-max": "smooth-max", "hinge-max": "smooth-hinge"}
#: The combinations written through epigraph variables when not smoothed.
EPIGRAPHS = ("abs-sum", "abs-max", "hinge-max")


def _smoothing(session: ParametricSession, tradeoff: Tradeoff, crit_index: list[int],
               theta0: np.ndarray) -> list[float | None]:
    """The smoothing stages of one search (None: exact epigraph form).

    The mixture under the mean is smoothed, so L-BFGS runs (with continuation mu = 1e-2,
    1e-4, 1e-6, each stage warm-starting the next). Other trade-offs keep the exact
    epigraph form unless it needs more than EPIGRAPH_LIMIT variables; they are then
    smoothed once, conservatively (the smoothed deviation is an upper bound), with mu a
    hundredth of the smallest tolerance per term, so a bound met when smoothed holds
    exactly, at most 1% tighter than asked. A zero tolerance is never smoothed."""
    M = session.model.marginals(theta0)[0]
    terms = [session.criteria[c].gradient_terms(M, session.problem) for c in crit_index
             if not session.capabilities[c].parametric]
    if all(t.combine == "sum" for t in terms):
        return [None]
    if tradeoff.penalises_deviations and session.belief.aggregate == "mean":
        return [1e-2, 1e-4, 1e-6]
    sizes = [t.values.size for t in terms]
    if session.belief.n_scenarios * sum(sizes) <= EPIGRAPH_LIMIT:
        return [None]
    if tradeoff.bounds_deviations:
        bounds = tradeoff.deviation_bounds(len(session.criteria))
        eps = [bounds[c] for c in crit_index if np.isfinite(bounds[c])
               and not session.capabilities[c].parametric]
        if eps and min(eps) == 0:
            return [None]
        scale = min(eps) if eps else 1.0
        return [0.01 * scale / (1 + np.log(max(sizes)) + max(sizes))]
    return [1e-5]


def run_program(session: ParametricSession, tally: Tally, tradeoff: Tradeoff,
                crit_index: list[int], theta0: np.ndarray) -> tuple[np.ndarray, bool, int]:
    """One local search of ``tradeoff`` over the criteria ``crit_index`` from
    ``theta0``: (theta, converged, iterations); its seconds, iterations, smoothing and
    method counted in the route's ``tally``."""
    t0 = time.perf_counter()
    ok, nit, method, theta = False, 0, tally.solver, theta0
    try:
        stages = _smoothing(session, tradeoff, crit_index, theta0)
        tally.stats["smoothing"] = stages[-1]
        for mu in stages:
            prog = _Program(session, tradeoff, crit_index, theta, mu)
            theta, ok, it, method = prog.solve(session.max_iter, session.objective_tol,
                                                session.verified_tol)
            nit += it
    except _ActiveSetChanged:
        theta, ok = theta0, False
    tally.stats["solve_seconds"] += time.perf_counter() - t0
    tally.stats["iterations"] += nit
    tally.solver = method
    if not np.all(np.isfinite(theta)):
        return theta0, False, nit
    return theta, ok, nit
