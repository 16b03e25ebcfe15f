"""The gradient route: parametric policies (linear-softmax) under the book's trade-offs.

Method. Utility and every criterion are functions of the scenarios' group marginals
M_k(theta) (:mod:`fairdecide.optimize.parametric`). A criterion supplies its deviation
as smooth terms r(M) combined by a sum of absolute values (TV), a maximum of absolute
values (max) or a plain sum (KL) (:mod:`fairdecide.criteria.terms`). The optimiser
writes |r_i| and the max through epigraph variables (t_i >= r_i, t_i >= -r_i), the
worst case over scenarios through one more (sigma <= V_k for every k), and solves the
resulting smooth program in (theta, t, sigma) by sequential quadratic programming
(SciPy's SLSQP) with analytic gradients. Nothing is smoothed, so the deviation the
search bounds is the exact one; SQP meets the constraints to machine precision at
convergence, where an augmented Lagrangian would need a final repair. Without
epigraph variables or constraints (utility alone, KL mixtures, mean over scenarios) it
runs L-BFGS. The family's penalty (``LinearSoftmaxPolicy(l2=...)``) is added to the
objective.

Every end point is evaluated exactly from its decision tables; starts (theta = 0, or the
policy's own coefficients, then random ones under ``random_state``) are compared on that
exact objective. An end point that misses a tolerance by a little is re-solved with the
tolerance tightened by twice the miss; if no start meets the tolerances, the error names
the smallest deviation each criterion reached. The problem is not convex in theta: the
result is a local optimum.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import Any, ClassVar

import numpy as np
from scipy.optimize import minimize
from threadpoolctl import threadpool_limits

from fairdecide._validation import check_random_state
from fairdecide.criteria.base import Capabilities
from fairdecide.exceptions import FairdecideError, InfeasibleToleranceError
from fairdecide.optimize.parametric import ParametricSession
from fairdecide.optimize.routes import Route, RouteResult, register_route
from fairdecide.optimize.tradeoff import (
    FairnessConstraint,
    MaxUtility,
    Mixture,
    Tradeoff,
    UtilityConstraint,
    aggregated_deviations,
)

__all__ = ["GradientRoute", "best_utility"]


class _Program:
    """The smooth program of one trade-off in x = (theta, epigraph variables)."""

    def __init__(self, session: ParametricSession, tradeoff: Tradeoff, crit_index: list[int],
                 theta0: np.ndarray, mu: float | None = None) -> None:
        self.s, self.tr, self.ci, self.mu = session, tradeoff, crit_index, mu
        self.K = session.belief.n_scenarios
        self.b = session.belief.weights
        self.worst = session.belief.aggregate == "worst"
        self.n_theta = theta0.size
        self._key: bytes | None = None
        at = self._at(theta0, jacobians=False)
        # Epigraph layout: per (criterion, scenario) a slice of t (abs-sum) or one s.
        pos, self.slot = self.n_theta, {}
        for c in crit_index:
            for k in range(self.K):
                terms = at["terms"][c][k]
                how = terms.combine if mu is None else SMOOTHED.get(terms.combine, "sum")
                size = {"abs-sum": terms.values.size, "abs-max": 1}.get(how, 0)
                self.slot[c, k] = (how, slice(pos, pos + size), terms.values.size)
                pos += size
        self.sigma = pos if self.worst else None
        self.n_x = pos + (self.sigma is not None)
        self.x0 = np.zeros(self.n_x)
        self.x0[:self.n_theta] = theta0
        for (c, k), (how, sl, _) in self.slot.items():
            r = np.abs(at["terms"][c][k].values)
            if how == "abs-sum":
                self.x0[sl] = r
            elif how == "abs-max" and r.size:
                self.x0[sl] = r.max()
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
            U = np.einsum("kzay,ay->k", M, s.utility)
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
        lam = self.tr.lam if isinstance(self.tr, Mixture) else None
        wu = 0.0 if not self._maximises else (1.0 if lam is None else 1.0 - lam)
        wf = -lam if lam is not None else (0.0 if self._maximises else 1.0)
        V = wu * at["U"]
        gM = np.broadcast_to(wu * self.s.utility, M.shape).copy()
        for c in self.ci:
            for k in range(self.K):
                value, g = self._smooth(at, c, k)
                V[k] += wf * value
                gM[k] += wf * g.reshape(M.shape[1:])
        sign = -1.0 if self._maximises else 1.0
        pen, dpen = self.s.model.evaluator.penalty(theta)
        grad = sign * self.s.model.vjp(theta, self.b[:, None, None, None] * gM) + dpen
        return float(sign * self.b @ V) + pen, grad

    def _fhat(self, x: np.ndarray, c: int, k: int) -> tuple[float, np.ndarray]:
        """The bound on criterion c's deviation in scenario k, and its gradient in x."""
        how, sl, _ = self.slot[c, k]
        g = np.zeros(self.n_x)
        if how not in ("abs-sum", "abs-max"):
            at = self._at(x[:self.n_theta])
            value, gM = self._smooth(at, c, k)
            g[:self.n_theta] = gM @ at["J"][k]
            return value, g
        g[sl] = 1.0
        return float(x[sl].sum()), g

    def _smooth(self, at: dict[str, Any], c: int, k: int) -> tuple[float, np.ndarray]:
        """A deviation written without epigraph variables and its gradient in M: the sum
        of smooth terms (KL), or, with smoothing mu, sum_i sqrt(r_i^2 + mu^2) (>= the TV
        deviation, by at most n mu) or mu log sum_i exp(sqrt(r_i^2 + mu^2) / mu) (>= the
        max deviation, by at most mu (1 + log n))."""
        how, _, n_terms = self.slot[c, k]
        terms = at["terms"][c][k]
        if terms.values.size != n_terms:
            raise _ActiveSetChanged
        r, jac = terms.values, terms.jacobian
        if how == "sum":
            return float(r.sum()), jac.sum(axis=0)
        if r.size == 0:
            return 0.0, np.zeros(jac.shape[1])
        root = np.sqrt(r ** 2 + self.mu ** 2)
        if how == "smooth-sum":
            return float(root.sum()), (r / root) @ jac
        top = root.max()
        e = np.exp((root - top) / self.mu)
        value = top + self.mu * np.log(e.sum())
        return float(value), (e / e.sum() * r / root) @ jac

    @property
    def _maximises(self) -> bool:
        return not isinstance(self.tr, UtilityConstraint)

    def _values(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per-scenario values V_k the trade-off aggregates (to maximise for utility
        trade-offs, the total deviation to minimise for the slack one) and gradients."""
        at = self._at(x[:self.n_theta])
        V = np.zeros(self.K)
        G = np.zeros((self.K, self.n_x))
        lam = self.tr.lam if isinstance(self.tr, Mixture) else None
        for k in range(self.K):
            if self._maximises:
                wu = 1.0 if lam is None else 1.0 - lam
                V[k] = wu * at["U"][k]
                G[k, :self.n_theta] = wu * at["dU"][k]
            if lam is not None or not self._maximises:
                sign = -lam if lam is not None else 1.0
                for c in self.ci:
                    f, g = self._fhat(x, c, k)
                    V[k] += sign * f
                    G[k] += sign * g
        return V, G

    # ------------------------------------------------------------- program
    def objective(self, x: np.ndarray) -> tuple[float, np.ndarray]:
        pen, dpen = self.s.model.evaluator.penalty(x[:self.n_theta])
        g = np.zeros(self.n_x)
        g[:self.n_theta] = dpen
        if self.sigma is not None:
            sign = -1.0 if self._maximises else 1.0
            g[self.sigma] += sign
            return sign * x[self.sigma] + pen, g
        V, G = self._values(x)
        sign = -1.0 if self._maximises else 1.0
        return float(sign * self.b @ V) + pen, g + sign * self.b @ G

    def constraints(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """All constraints as c(x) >= 0 with their Jacobian."""
        rows, jac = [], []
        at = self._at(x[:self.n_theta])
        for (c, k), (how, sl, n_terms) in self.slot.items():
            if how not in ("abs-sum", "abs-max"):
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
            rows += [t - terms.values, t + terms.values]
            jac += [cover - dr, cover + dr]
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
        if isinstance(self.tr, FairnessConstraint):
            for c in self.ci:
                eps = self.tr.epsilon[c]
                if not np.isfinite(eps):
                    continue
                F = [self._fhat(x, c, k) for k in range(self.K)]
                if self.worst:
                    rows.append(np.array([eps - f for f, _ in F]))
                    jac.append(-np.array([g for _, g in F]))
                else:
                    rows.append(np.array([eps - sum(b * f for b, (f, _) in zip(
                        self.b, F, strict=True))]))
                    jac.append(-(self.b @ np.array([g for _, g in F]))[None])
        if isinstance(self.tr, UtilityConstraint) and self.tr.utility_min is not None:
            g = np.zeros((self.K, self.n_x))
            g[:, :self.n_theta] = at["dU"]
            if self.worst:
                rows.append(at["U"] - self.tr.utility_min)
                jac.append(g)
            else:
                rows.append(np.array([self.b @ at["U"] - self.tr.utility_min]))
                jac.append((self.b @ g)[None])
        if not rows:
            return np.zeros(0), np.zeros((0, self.n_x))
        return np.concatenate(rows), np.vstack(jac)

    def solve(self, max_iter: int) -> tuple[np.ndarray, bool, int, str]:
        """Run the solver from x0; the parameters reached, convergence, iterations and
        the method's name."""
        n_con = len(self.constraints(self.x0)[0])
        bounds = [(None, None)] * self.n_theta + [(0.0, None)] * (self.n_x - self.n_theta
                                                                   - (self.sigma is not None))
        if self.sigma is not None:
            bounds.append((None, None))
        if n_con == 0 and self.n_x == self.n_theta:
            res = minimize(self.smooth_objective, self.x0, jac=True, method="L-BFGS-B",
                           options={"maxiter": max_iter, "gtol": 1e-9, "ftol": 1e-12})
            return res.x[:self.n_theta], bool(res.success), int(res.nit), "L-BFGS"
        cons = [{"type": "ineq", "fun": lambda x: self.constraints(x)[0],
                 "jac": lambda x: self.constraints(x)[1]}] if n_con else []
        res = minimize(self.objective, self.x0, jac=True, method="SLSQP", bounds=bounds,
                       constraints=cons, options={"maxiter": max_iter, "ftol": 1e-10})
        return res.x[:self.n_theta], bool(res.success), int(res.nit), "SLSQP"


class _ActiveSetChanged(Exception):
    """A conditional's mass crossed zero during the search (its terms appeared or
    vanished); the start is abandoned."""


#: Above this many epigraph variables (scenarios x terms), deviations are smoothed
#: instead: SLSQP's dense subproblems grow with the cube of the variables.
EPIGRAPH_LIMIT = 64
SMOOTHED = {"abs-sum": "smooth-sum", "abs-max": "smooth-max"}


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
    terms = [session.criteria[c].gradient_terms(M, session.problem) for c in crit_index]
    if all(t.combine == "sum" for t in terms):
        return [None]
    if isinstance(tradeoff, Mixture) and session.belief.aggregate == "mean":
        return [1e-2, 1e-4, 1e-6]
    sizes = [t.values.size for t in terms]
    if session.belief.n_scenarios * sum(sizes) <= EPIGRAPH_LIMIT:
        return [None]
    if isinstance(tradeoff, FairnessConstraint):
        eps = [tradeoff.epsilon[c] for c in crit_index if np.isfinite(tradeoff.epsilon[c])]
        if eps and min(eps) == 0:
            return [None]
        scale = min(eps) if eps else 1.0
        return [0.01 * scale / (1 + np.log(max(sizes)) + max(sizes))]
    return [1e-5]


def _run(session: ParametricSession, tradeoff: Tradeoff, crit_index: list[int],
         theta0: np.ndarray) -> tuple[np.ndarray, bool, int]:
    t0 = time.perf_counter()
    ok, nit, method, theta = False, 0, session.solver_name, theta0
    try:
        stages = _smoothing(session, tradeoff, crit_index, theta0)
        session.stats["smoothing"] = stages[-1]
        for mu in stages:
            prog = _Program(session, tradeoff, crit_index, theta, mu)
            theta, ok, it, method = prog.solve(session.max_iter)
            nit += it
    except _ActiveSetChanged:
        theta, ok = theta0, False
    session.stats["solve_seconds"] += time.perf_counter() - t0
    session.stats["iterations"] += nit
    session.solver_name = method
    if not np.all(np.isfinite(theta)):
        return theta0, False, nit
    return theta, ok, nit


def _starts(session: ParametricSession) -> list[np.ndarray]:
    """theta = 0 (or the policy's own coefficients), then the utility optimum reached
    from it, then random starts N(0, 1 / n_inputs) under ``random_state``."""
    theta0 = session.template.parameters
    starts = [theta0]
    if session.n_restarts >= 2:
        if "utility_start" not in session.cache:
            session.cache["utility_start"] = _run(session, MaxUtility(), [], theta0)[0]
        starts.append(session.cache["utility_start"])
    rng = check_random_state(session.random_state)
    scale = 1.0 / np.sqrt(max(1, session.template.coef.shape[1]))
    return starts + [rng.normal(0.0, scale, theta0.size)
                     for _ in range(session.n_restarts - 2)]


def best_utility(session: ParametricSession) -> float:
    """U*: the best (mean or worst-case) utility the search finds in the family."""
    best = -np.inf
    for theta0 in _starts(session):
        theta, _, _ = _run(session, MaxUtility(), [], theta0)
        U, _ = session.evaluate(theta)
        best = max(best, session.belief.combine(U))
    return best


def _violation(session: ParametricSession, tradeoff: Tradeoff, U: np.ndarray, F: np.ndarray
               ) -> float:
    """How far the exact values miss the trade-off's constraints (0 if they hold)."""
    if isinstance(tradeoff, FairnessConstraint):
        agg = aggregated_deviations(F, session.belief, None)
        return float(np.max(np.maximum(agg - np.asarray(tradeoff.epsilon), 0.0), initial=0))
    if isinstance(tradeoff, UtilityConstraint) and tradeoff.utility_min is not None:
        return max(0.0, tradeoff.utility_min - session.belief.combine(U))
    return 0.0


def _tightened(tradeoff: Tradeoff, miss: float) -> Tradeoff:
    if isinstance(tradeoff, FairnessConstraint):
        return replace(tradeoff, epsilon=tuple(max(0.0, e - 2 * miss)
                                               for e in tradeoff.epsilon))
    return replace(tradeoff, utility_min=tradeoff.utility_min + 2 * miss)


@dataclass
class _EndPoint:
    theta: np.ndarray
    converged: bool
    merit: float
    miss: float
    feasible: bool


def _solve_from(session: ParametricSession, theta0: np.ndarray, continuation: bool
                ) -> _EndPoint:
    """One start: with ``continuation``, first the tolerances relaxed toward the start's
    own deviations (halfway, a fifth, a twentieth of the gap), then the trade-off itself;
    an end point that misses a constraint is re-solved with it tightened by twice the
    miss (at most twice)."""
    tr, every = session.tradeoff, list(range(len(session.criteria)))
    if continuation and isinstance(tr, FairnessConstraint):
        agg = aggregated_deviations(session.evaluate(theta0)[1], session.belief, None)
        for share in (0.5, 0.2, 0.05):
            eps = tuple(e + share * max(0.0, a - e) if np.isfinite(e) else e
                        for e, a in zip(tr.epsilon, agg, strict=True))
            theta0 = _run(session, replace(tr, epsilon=eps), every, theta0)[0]
    limit = session.utility_tol if isinstance(tr, UtilityConstraint) else session.tol
    target = tr
    for _ in range(3):
        theta, ok, _ = _run(session, target, every, theta0)
        U, F = session.evaluate(theta)
        miss = _violation(session, tr, U, F)
        if miss <= limit:
            break
        target, theta0 = _tightened(target, miss), theta
    return _EndPoint(theta, ok, tr.merit(U, F, session.belief), miss, miss <= limit)


def search(session: ParametricSession) -> RouteResult:
    """Multi-start search (the utility-optimum start with continuation in epsilon); if
    no start meets the constraints, a start from the least total deviation; the best
    exactly-feasible end point."""
    ends = [_solve_from(session, theta0, continuation=i == 1)
            for i, theta0 in enumerate(_starts(session))]
    if not any(e.feasible for e in ends) and isinstance(session.tradeoff, FairnessConstraint):
        every = list(range(len(session.criteria)))
        least = min(ends, key=lambda e: e.miss).theta
        for theta0 in (session.template.parameters, least):
            fair = _run(session, UtilityConstraint(), every, theta0)[0]
            U, F = session.evaluate(fair)
            miss = _violation(session, session.tradeoff, U, F)
            if miss <= session.tol:
                ends += [_EndPoint(fair, True, session.tradeoff.merit(U, F, session.belief),
                                   miss, True), _solve_from(session, fair, False)]
                break
    feasible = [e for e in ends if e.feasible]
    if not feasible:
        _raise_infeasible(session, min(ends, key=lambda e: e.miss).theta)
    best = min(feasible, key=lambda e: e.merit)
    session.stats["converged"] = best.converged
    status = "locally optimal" if best.converged else "stopped at max_iter (not converged)"
    return RouteResult(best.theta, 0.0, status)


def _raise_infeasible(session: ParametricSession, theta_least: np.ndarray) -> None:
    """The smallest deviation (or the best utility) the search reached, in the error."""
    tr, belief = session.tradeoff, session.belief
    if isinstance(tr, UtilityConstraint):
        U, _ = session.evaluate(theta_least)
        raise FairdecideError(
            f"utility_slack could not be met: the search reached utility "
            f"{belief.combine(U):.6g} against the floor U* - slack = {tr.utility_min:.6g}")
    smallest = {}
    for c, name in enumerate(session.names):
        reached = [aggregated_deviations(session.evaluate(theta_least)[1], belief, None)[c]]
        for theta0 in (session.template.parameters, theta_least):
            theta, _, _ = _run(session, UtilityConstraint(), [c], theta0)
            reached.append(aggregated_deviations(session.evaluate(theta)[1], belief,
                                                 None)[c])
        smallest[name] = float(min(reached))
    parts = ", ".join(f"{n} >= {v:.6g} (asked <= {tr.epsilon[session.names.index(n)]:g})"
                      for n, v in smallest.items())
    raise InfeasibleToleranceError(
        f"epsilon could not be met by this policy family: the smallest deviation the "
        f"gradient search reached is {parts}. It is a local search: raise epsilon to at "
        "least that value, add restarts (n_restarts), or give the policy more features",
        smallest)


class GradientRoute(Route):
    """Parametric policies by SQP / L-BFGS on the epigraph form (a local optimum)."""

    name: ClassVar[str] = "gradient"

    def refuses(self, capabilities: list[Capabilities], policy_kind: str) -> str | None:
        if policy_kind != "parametric":
            return "needs a parametric policy such as LinearSoftmaxPolicy"
        if not all(c.gradient and c.reads == "marginal" for c in capabilities):
            return ("needs every criterion to give its deviation as gradient terms of the "
                    "group marginal (Capabilities.gradient)")
        return None

    def solve(self, session: Any) -> RouteResult:
        # One BLAS thread: the route's products are skinny (people x inputs x a few
        # columns); with two threads on a busy two-core machine the workers spin, and
        # phi' s for 31,655 x 4 inputs took 67 ms against 0.4 ms with one (measured).
        with threadpool_limits(limits=1, user_api="blas"):
            return super().solve(session)

    def run(self, session: Any) -> RouteResult:
        return search(session)


register_route(GradientRoute())
