"""optimize_policy: the book's three fairness-utility trade-offs over tabular policies."""

from __future__ import annotations

import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from fairdecide.beliefs import Belief, cvar
from fairdecide.criteria.base import ConditionalIndependence, resolve_names
from fairdecide.exceptions import FairdecideError, InfeasibleToleranceError, SolverError
from fairdecide.optimize.program import (
    SCIPY_METHODS,
    PolicyProgram,
    SolveResult,
    solve_program,
)
from fairdecide.optimize.result import OptimizeResult
from fairdecide.optimize.verify import verify_solution
from fairdecide.policies import TabularPolicy
from fairdecide.problem import DecisionProblem
from fairdecide.world import TabularWorld

__all__ = ["optimize_policy"]

# Successive linearisation stops when the objective improved by less than STALL_GAIN
# (relative) over the last STALL_WINDOW steps.
STALL_WINDOW = 20
STALL_GAIN = 1e-6


@dataclass(frozen=True)
class _Spec:
    """The trade-off being solved, validated."""

    mode: str  # utility | mixture | epsilon | slack
    lam: float = 0.0
    epsilon: tuple[float, ...] = ()
    slack: float = 0.0

    def describe(self, names: list[str]) -> str:
        if self.mode == "utility":
            return "maximise expected utility (no fairness criterion)"
        if self.mode == "mixture":
            return f"maximise (1 - lam) U - lam F with lam = {self.lam:g}"
        if self.mode == "epsilon":
            tol = ", ".join(f"{n} <= {e:g}" for n, e in zip(names, self.epsilon, strict=True))
            return f"maximise U subject to {tol}"
        return f"minimise F subject to U >= U* - {self.slack:g}"


def _as_criteria(criteria: Any) -> list[ConditionalIndependence]:
    if criteria is None:
        return []
    if isinstance(criteria, ConditionalIndependence):
        return [criteria]
    try:
        items = list(criteria)
    except TypeError:
        raise FairdecideError(
            f"criteria must be a criterion or a sequence of them, got {type(criteria).__name__}"
        ) from None
    for i, c in enumerate(items):
        if not isinstance(c, ConditionalIndependence):
            raise FairdecideError(
                f"criteria[{i}] must be a fairness criterion such as Independence(), "
                f"got {type(c).__name__}"
            )
    return items


def _spec(n_crit: int, lam: Any, epsilon: Any, utility_slack: Any) -> _Spec:
    given = [k for k, v in (("lam", lam), ("epsilon", epsilon), ("utility_slack", utility_slack))
             if v is not None]
    if n_crit == 0:
        if given:
            raise FairdecideError(f"{given[0]} needs at least one fairness criterion")
        return _Spec("utility")
    if len(given) != 1:
        raise FairdecideError(
            "give exactly one trade-off: lam (mixture (1-lam) U - lam F), epsilon "
            "(max U s.t. F <= epsilon) or utility_slack (min F s.t. U >= U* - slack); "
            f"got {given or 'none'}"
        )
    if lam is not None:
        lam_f = float(lam)
        if not 0.0 <= lam_f <= 1.0:
            raise FairdecideError(f"lam must lie in [0, 1], got {lam!r}")
        return _Spec("mixture", lam=lam_f)
    if epsilon is not None:
        eps = np.atleast_1d(np.asarray(epsilon, dtype=float))
        if eps.size == 1:
            eps = np.repeat(eps, n_crit)
        if eps.shape != (n_crit,):
            raise FairdecideError(
                f"epsilon must be a number or one per criterion ({n_crit}), got {epsilon!r}"
            )
        if np.any(~np.isfinite(eps) & ~np.isposinf(eps)) or np.any(eps < 0):
            raise FairdecideError(f"epsilon must be >= 0 (inf allowed), got {epsilon!r}")
        return _Spec("epsilon", epsilon=tuple(float(e) for e in eps))
    s = float(utility_slack)
    if not np.isfinite(s) or s < 0:
        raise FairdecideError(f"utility_slack must be a finite number >= 0, got {utility_slack!r}")
    return _Spec("slack", slack=s)


def _check_solver(solver: Any) -> None:
    if solver is None:
        return
    if not isinstance(solver, str):
        raise FairdecideError(f"solver must be a string such as 'highs', got {solver!r}")
    if solver.lower() in SCIPY_METHODS:
        return
    import cvxpy as cp

    if solver.upper() not in cp.installed_solvers():
        raise SolverError(
            f"solver {solver!r} is not usable here: use 'highs', 'highs-ds' or 'highs-ipm', "
            f"or one of the installed cvxpy solvers {cp.installed_solvers()}"
        )


def optimize_policy(
    problem: DecisionProblem,
    world: TabularWorld | Belief,
    criteria: ConditionalIndependence | Sequence[ConditionalIndependence] | None = None,
    *,
    lam: float | None = None,
    epsilon: float | Sequence[float] | None = None,
    utility_slack: float | None = None,
    group_blind: bool = False,
    chance_delta: float | None = None,
    solver: str | None = None,
    tol: float = 1e-6,
    max_iter: int = 200,
) -> OptimizeResult:
    """Find the best tabular policy under one of the book's fairness trade-offs.

    With F the sum of the criteria's deviations and U the expected utility, exactly one of

    - ``lam``: maximise (1 - lam) U - lam F (mixture);
    - ``epsilon``: maximise U subject to F_k <= epsilon_k for every criterion
      (a number applies to all; ``inf`` switches one off);
    - ``utility_slack``: minimise F subject to U >= U* - utility_slack, where U* is the
      best utility without fairness constraints;

    is solved. Without criteria, the utility-maximising policy is returned.

    Parameters
    ----------
    problem : DecisionProblem
    world : TabularWorld or Belief
        The world, or a belief over worlds: a weighted set of scenarios aggregated by
        their mean (Bayesian: every term, fairness included, is the mean over scenarios
        of that scenario's value) or their worst case (maximin). Both stay one LP,
        through epigraph variables.
    criteria : criterion or sequence of criteria, optional
    lam, epsilon, utility_slack : see above
    group_blind : bool, default=False
        Restrict to policies that ignore the group: pi(a | x, z) = pi(a | x).
    chance_delta : float in (0, 1), optional
        With ``epsilon`` and a belief: bound the conditional value at risk
        CVaR_{1-delta} of each deviation across scenarios (the mean of its worst delta
        share) by epsilon. This convex relaxation implies the chance constraint
        P(F > epsilon) <= delta under the belief.
    solver : str, optional
        None or "highs": HiGHS through scipy, dual simplex for small and interior point
        (with crossover) for large programs; "highs-ds"/"highs-ipm" force one; any other
        name (e.g. "CLARABEL", "SCS", "HIGHS") goes through cvxpy. KL measures need an
        exponential-cone solver and default to Clarabel.
    tol : float, default=1e-6
        Verification tolerance: every returned policy's utility and deviations are
        recomputed from its decision table; a tolerance violated by more than ``tol`` is an
        error, not a silent return.
    max_iter : int, default=200
        Most linearisation steps for criteria that are not linear in the policy.

    Returns
    -------
    OptimizeResult

    Raises
    ------
    InfeasibleToleranceError
        If no policy meets ``epsilon``; the message states the smallest deviation found.
    SolverError, VerificationError

    Notes
    -----
    Method. The utility, and every criterion whose conditioning probabilities P(c, z) do
    not depend on the policy (independence always; separation in prediction problems),
    are linear in pi, so the trade-off is one linear program (TV and max measures) or
    one exponential-cone program (KL): the result is globally optimal.

    Sufficiency, and separation when the outcome depends on the action, compare ratios of
    linear functions of pi and are not convex. They are solved by successive
    linearisation. At the current policy each conditional N / D is replaced by its
    first-order expansion and the resulting convex program is solved within a trust
    region |pi - pi_k| <= Delta (in the epsilon trade-off with the tolerance tightened by
    a margin that tracks the observed curvature error). The step is then corrected
    exactly: with the conditioning masses D = P(c, z) held fixed, every conditional is
    linear, so the best policy with the step's masses is one exact program (if none
    meets the tolerance, the masses are pulled back toward the current ones). A step is
    kept only if the exact objective, recomputed from the decision table, improves and
    the exact constraints hold. So every iterate is feasible and the objective improves
    monotonically; the search stops when no step improves the model, the trust region
    collapses, or the objective gained less than 1e-6 (relative) over 20 steps. The
    result is a local optimum, not a certified global one. Starts: the utility-optimal
    policy, the uniform policy, their average and the constant deterministic policies;
    a start that violates the tolerance is first moved into the feasible set by
    minimising the violation. The best end point is returned.

    Zero-mass conditionals. A pair (c, z) with P(c, z) = 0 is left out of the deviation
    (a conditional on an impossible event constrains nothing). With uniform weights this
    makes the deviation jump to zero when a group stops receiving an action that other
    groups receive, so sufficiency can be met "vacuously" by segregating groups across
    actions. ``weighting="group"`` weights each term by P(z | c), which vanishes with the
    mass: it removes the jump, but (nearly) segregating policies still drive that
    deviation continuously toward zero. The local search does not seek such policies; when
    only they would meet a tolerance, the error reports the smallest deviation found among
    the others, which is then not the true minimum.

    Examples
    --------
    >>> from fairdecide import Independence, optimize_policy
    >>> from fairdecide.datasets import make_bail_problem
    >>> problem, world = make_bail_problem()
    >>> best = optimize_policy(problem, world)
    >>> fair = optimize_policy(problem, world, Independence(), epsilon=0.0)
    >>> fair.deviations["independence"] < 1e-9, fair.utility <= best.utility
    (True, True)
    """
    if not isinstance(problem, DecisionProblem):
        raise FairdecideError(f"problem must be a DecisionProblem, got {type(problem).__name__}")
    if isinstance(world, TabularWorld):
        belief = Belief.plug_in(world)
    elif isinstance(world, Belief):
        belief = world
    else:
        raise FairdecideError(
            f"world must be a TabularWorld or a Belief, got {type(world).__name__}")
    for w in belief.worlds:
        w.check_problem(problem)
    crits = _as_criteria(criteria)
    names = resolve_names(crits)
    spec = _spec(len(crits), lam, epsilon, utility_slack)
    if chance_delta is not None:
        if spec.mode != "epsilon":
            raise FairdecideError("chance_delta applies to the epsilon trade-off only")
        if not 0.0 < float(chance_delta) < 1.0:
            raise FairdecideError(f"chance_delta must lie in (0, 1), got {chance_delta!r}")
        chance_delta = float(chance_delta)
    if belief.n_scenarios > 1 and not all(c.is_linear(problem) for c in crits):
        bad = [n for c, n in zip(crits, names, strict=True) if not c.is_linear(problem)]
        raise FairdecideError(
            f"criteria {bad} are not convex in the policy for this problem; with a belief of "
            "several scenarios only convex criteria are supported so far. Use a plug-in "
            "world, or separation in a prediction problem / independence")
    if not (np.isfinite(tol) and tol > 0):
        raise FairdecideError(f"tol must be a positive number, got {tol!r}")
    _check_solver(solver)
    t0 = time.perf_counter()
    prog = PolicyProgram(problem, belief.worlds, belief.weights, group_blind)
    runner = _Runner(prog, crits, names, spec, solver, tol, max_iter, belief, chance_delta)
    runner.stats["build_seconds"] = time.perf_counter() - t0
    return runner.run()


class _Runner:
    """Carries one optimisation: the linear route or successive linearisation."""

    def __init__(self, prog: PolicyProgram, crits: list, names: list[str], spec: _Spec,
                 solver: str | None, tol: float, max_iter: int, belief: Belief,
                 chance_delta: float | None = None) -> None:
        self.prog, self.crits, self.names, self.spec = prog, crits, names, spec
        self.belief, self.chance_delta = belief, chance_delta
        self.solver, self.tol, self.max_iter = solver, tol, max_iter
        self.problem = prog.problem
        self.linear = all(c.is_linear(self.problem) for c in crits)
        self.stats: dict[str, Any] = {"solve_seconds": 0.0, "linearisation_steps": 0,
                                      "solver_iterations": 0}
        self.solver_name = "none"
        self.last_program = None
        self.utility_tol = tol * max(1.0, float(np.abs(self.problem.utility).max()))

    # ---------------------------------------------------------------- helpers
    def evaluate(self, pi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Utility (K,) and deviations (n_criteria, K) of free rows ``pi`` per scenario,
        from the exact group marginals."""
        ms = self.prog.marginals(pi)
        shape = (self.prog.n_z, self.prog.n_a, self.prog.n_y)
        F = np.array([[c.deviation_from_marginal(m.reshape(shape), self.problem) for m in ms]
                      for c in self.crits]).reshape(len(self.crits), len(ms))
        return self.prog.utilities(ms), F

    def constrained(self, F: np.ndarray) -> np.ndarray:
        """Each criterion's deviation as its tolerance bounds it: the belief's mean or worst
        case over scenarios, or their CVaR with a chance constraint."""
        if self.chance_delta is not None:
            return np.array([cvar(f, self.belief.weights, self.chance_delta) for f in F])
        return np.array([self.belief.combine_deviation(f) for f in F])

    def merit(self, U: np.ndarray, F: np.ndarray, mode: str, spec: dict) -> float:
        """The exact objective to minimise, from per-scenario values."""
        if mode == "violation":
            return float(np.maximum(self.constrained(F) - np.asarray(spec["epsilon"]), 0).sum())
        if mode == "slack":
            return -self.belief.combine(-F.sum(axis=0))  # mean, or worst (largest) total
        value = U if mode in ("utility", "epsilon") else (
            (1 - spec["lam"]) * U - spec["lam"] * F.sum(axis=0))
        return -self.belief.combine(value)

    def feasible(self, U: np.ndarray, F: np.ndarray, mode: str, spec: dict) -> bool:
        if mode == "epsilon":
            return bool(np.all(self.constrained(F) <= np.asarray(spec["epsilon"]) + self.tol))
        if mode == "slack" and spec.get("utility_min") is not None:
            return self.belief.combine(U) >= spec["utility_min"] - self.utility_tol
        return True

    def solve(self, mode: str, crits: list, pi_at: np.ndarray | None, spec: dict,
              trust: float | None = None, slice_at: bool = False) -> SolveResult:
        """Solve the program of ``mode`` linearised at ``pi_at``: within a trust region of
        radius ``trust``, or (``slice_at``) restricted to the policies with the same
        conditioning masses P(c, z) as ``pi_at``, where it is exact."""
        if pi_at is None:
            pi_at = np.full((self.prog.n_free, self.prog.n_a), 1.0 / self.prog.n_a)
            trust = None
        ms = self.prog.marginals(pi_at)
        lins, fixed = [], []
        for c in crits:
            exact = slice_at or c.is_linear(self.problem)
            row = [(c.measure, c.linearize(m, self.problem, self.prog.n_z, exact=exact))
                   for m in ms]
            lins.append(row)
            if slice_at and not c.is_linear(self.problem):
                fixed += [(k, lin) for k, (_, lin) in enumerate(row)]
        program = self.prog.build(
            lins, mode, aggregate=self.belief.aggregate, lam=spec.get("lam", 0.0),
            epsilon=spec.get("epsilon"), utility_min=spec.get("utility_min"),
            chance_delta=self.chance_delta if mode in ("epsilon", "slack") else None,
            trust=None if trust is None else (pi_at, trust), fix_mass=fixed,
        )
        self.last_program = program
        res = solve_program(program, self.solver)
        self.stats["solve_seconds"] += res.seconds
        self.stats["solver_iterations"] += res.iterations or 0
        self.stats.update(n_variables=program.n_variables, n_constraints=program.n_constraints,
                          nnz=program.nnz)
        self.solver_name = res.solver
        return res

    def fail(self, res: SolveResult, what: str) -> SolverError:
        return SolverError(
            f"{res.solver} failed on the {what} program: {res.status}. Try another solver, "
            "e.g. solver='highs-ipm' or solver='CLARABEL'"
        )

    # ---------------------------------------------------------------- main
    def run(self) -> OptimizeResult:
        spec = self.spec
        solver_values: dict[str, Any] | None = None
        if spec.mode == "slack":
            res_u = self.solve("utility", [], None, {})
            if not res_u.ok:
                raise self.fail(res_u, "utility")
            self.u_star = -res_u.objective
            sd = {"utility_min": self.u_star - spec.slack}
        else:
            sd = {"lam": spec.lam, "epsilon": list(spec.epsilon)}
        if self.linear:
            res = self.solve(spec.mode, self.crits, None, sd)
            if not res.ok:
                if spec.mode == "epsilon" and res.status.startswith("infeasible"):
                    self.raise_infeasible(None)
                raise self.fail(res, spec.mode)
            pi, viol = self.prog.clean(res.x)
            ms = np.stack([res.x[sl] for sl in self.last_program.m_slices])
            f = np.array([[res.x[i] for i in row] for row in self.last_program.f_index])
            solver_values = {"utility": self.prog.utilities(ms),
                             "f": f.reshape(len(self.crits), self.prog.K),
                             "objective": res.objective}
            status = "optimal"
        else:
            pi, viol, status = self.slp(spec.mode, sd)
        U, F = self.evaluate(pi)
        objective = self.merit(U, F, spec.mode, sd)
        objective = -objective if spec.mode in ("utility", "epsilon", "mixture") else objective
        table = self.prog.to_table(pi)
        policy = TabularPolicy(table)
        verification = verify_solution(
            policy, self.belief, self.problem, self.crits, self.names, spec, sd,
            solver_values, viol, self.tol, self.utility_tol, self.chance_delta,
        )
        return OptimizeResult(
            policy=policy,
            utility=verification.utility,
            deviations=verification.deviations,
            objective=float(objective),
            status=status,
            tradeoff=spec.describe(self.names) + (
                "" if self.belief.n_scenarios == 1 else
                f" over {self.belief.label} ({self.belief.aggregate} of "
                f"{self.belief.n_scenarios} scenarios"
                + ("" if self.chance_delta is None else
                   f"; CVaR_{1 - self.chance_delta:g} of each deviation") + ")"),
            solver=self.solver_name,
            stats=self.stats,
            verification=verification,
        )

    # ---------------------------------------------------------------- nonconvex route
    def candidates(self) -> list[np.ndarray]:
        """Starting policies: the utility optimum, the uniform policy, their average, and
        the constant deterministic policies (fallbacks that meet independence and
        separation exactly)."""
        res = self.solve("utility", [], None, {})
        if not res.ok:
            raise self.fail(res, "utility")
        best = self.prog.clean(res.x)[0]
        uniform = np.full((self.prog.n_free, self.prog.n_a), 1.0 / self.prog.n_a)
        eye = np.eye(self.prog.n_a)
        return [best, uniform, 0.5 * (best + uniform)] + [
            np.tile(eye[a], (self.prog.n_free, 1)) for a in range(self.prog.n_a)
        ]

    def slp(self, mode: str, sd: dict) -> tuple[np.ndarray, float, str]:
        """Multi-start successive linearisation; returns the best (pi, violation, status).

        Each start that violates the constraints is first moved into the feasible set by
        minimising the total violation; then the objective is improved from there.
        """
        best: tuple[float, np.ndarray, float, str] | None = None
        least_violation: tuple[float, np.ndarray] | None = None
        for start in self.candidates():
            pi, viol, status = start, 0.0, "locally optimal"
            U, F = self.evaluate(pi)
            if not self.feasible(U, F, mode, sd):
                if mode != "epsilon":
                    continue
                pi, viol, _ = self.local_search("violation", sd, pi)
                U, F = self.evaluate(pi)
                v = self.merit(U, F, "violation", sd)
                if least_violation is None or v < least_violation[0]:
                    least_violation = (v, pi)
                if not self.feasible(U, F, mode, sd):
                    continue
            pi, viol, status = self.local_search(mode, sd, pi)
            U, F = self.evaluate(pi)
            phi = self.merit(U, F, mode, sd)
            if best is None or phi < best[0] - 1e-12:
                best = (phi, pi, viol, status)
        if best is None:
            self.raise_infeasible(None if least_violation is None else least_violation[1])
        return best[1], best[2], best[3]

    def _better(self, a: np.ndarray, b: np.ndarray, mode: str, sd: dict) -> bool:
        """Whether policy ``a`` is feasible and at least as good as ``b`` (or ``b`` is not
        feasible)."""
        Ua, Fa = self.evaluate(a)
        if not self.feasible(Ua, Fa, mode, sd):
            return False
        Ub, Fb = self.evaluate(b)
        if not self.feasible(Ub, Fb, mode, sd):
            return True
        return self.merit(Ua, Fa, mode, sd) <= self.merit(Ub, Fb, mode, sd)

    def local_search(self, mode: str, sd: dict, start: np.ndarray
                     ) -> tuple[np.ndarray, float, str]:
        """Successive linearisation with a trust region from a start that satisfies the
        constraints of ``mode``; every accepted step keeps them and improves the exact
        objective."""
        pi = start
        U, F = self.evaluate(pi)
        phi = self.merit(U, F, mode, sd)
        radius, converged, viol = 0.5, False, 0.0
        # In the epsilon mode the linearised tolerance is tightened by a margin that
        # tracks the curvature error seen at the current radius, so steps land inside
        # the feasible set instead of zig-zagging along its curved boundary.
        eps = np.asarray(sd.get("epsilon") or [], dtype=float)
        margin = np.zeros(len(eps))
        history: list[float] = []
        for _ in range(self.max_iter):
            self.stats["linearisation_steps"] += 1
            history.append(phi)
            if len(history) > STALL_WINDOW and (
                history[-STALL_WINDOW - 1] - phi <= STALL_GAIN * (1.0 + abs(phi))
            ):
                converged = True  # stalled: no real progress over the last steps
                break
            step_sd = sd
            if mode == "epsilon" and margin.any():
                step_sd = {**sd, "epsilon": list(np.maximum(eps - margin, 0.0))}
            res = self.solve(mode, self.crits, pi, step_sd, trust=radius)
            predicted = phi - res.objective if res.ok else -np.inf
            if predicted <= 1e-10 * (1.0 + abs(phi)):
                if margin.any():
                    margin[:] = 0.0  # judge convergence on the untightened model
                    continue
                if res.ok:
                    converged = True
                    break
                radius *= 0.25
                if radius < 1e-7:
                    converged = True
                    break
                continue
            new, new_viol = self.prog.clean(res.x)
            used = radius
            if mode == "epsilon":
                F_step = self.constrained(self.evaluate(new)[1])
                overshoot = np.maximum(F_step - np.maximum(eps - margin, 0.0), 0.0)
            # Correction: the best policy with the step's conditioning masses, an exact LP.
            # If no policy with those masses meets the constraints, the masses are pulled
            # back toward the current ones (masses are linear in pi, so the slice at
            # pi + t (new - pi) has the masses D_k + t (D_new - D_k)).
            for t in (1.0, 0.5, 0.25, 0.125):
                probe = new if t == 1.0 else pi + t * (new - pi)
                cor = self.solve(mode, self.crits, probe, sd, slice_at=True)
                if cor.ok:
                    cand, cand_viol = self.prog.clean(cor.x)
                    if self._better(cand, new, mode, sd):
                        new, new_viol = cand, cand_viol
                    break
            U2, F2 = self.evaluate(new)
            phi2 = self.merit(U2, F2, mode, sd)
            actual = phi - phi2
            if self.feasible(U2, F2, mode, sd) and actual > 1e-12 * (1.0 + abs(phi)):
                # The exact correction restores feasibility, so any improving step is
                # kept; the radius grows when the model predicted well, shrinks when the
                # step gained less than a tenth of the prediction.
                pi, phi, viol = new, phi2, new_viol
                if actual >= 0.5 * predicted:
                    radius = min(1.0, 2.0 * radius)
                elif actual < 0.1 * predicted:
                    radius *= 0.5
            else:
                radius *= 0.25
            if mode == "epsilon":
                margin = 1.5 * overshoot * (radius / used) ** 2
            if radius < 1e-7:
                converged = True
                break
        if not converged:
            warnings.warn(
                f"successive linearisation stopped after max_iter={self.max_iter} steps "
                "before converging; the policy is feasible and verified but may not be "
                "locally optimal. Raise max_iter",
                stacklevel=5,
            )
        return pi, viol, "locally optimal" if converged else "feasible (not converged)"

    def raise_infeasible(self, pi_best: np.ndarray | None) -> None:
        """Raise InfeasibleToleranceError with each violated criterion's smallest deviation
        (exact for linear criteria; the best of a dedicated local search and the point of
        least violation, ``pi_best``, otherwise)."""
        smallest = {}
        eps = self.spec.epsilon
        F_best = None if pi_best is None else self.constrained(self.evaluate(pi_best)[1])
        for k, (crit, name) in enumerate(zip(self.crits, self.names, strict=True)):
            if crit.is_linear(self.problem):
                res = self.solve("slack", [crit], None, {"utility_min": None})
                if not res.ok:
                    raise self.fail(res, "minimum-deviation")
                low = float(res.objective)
            else:
                sub = _Runner(self.prog, [crit], [name], _Spec("slack"), self.solver,
                              self.tol, self.max_iter, self.belief)
                pi, _, _ = sub.slp("slack", {"utility_min": None})
                self.stats["linearisation_steps"] += sub.stats["linearisation_steps"]
                low = float(sub.constrained(sub.evaluate(pi)[1])[0])
                if F_best is not None:
                    low = min(low, float(F_best[k]))
            if low > eps[k] + self.tol or len(self.crits) == 1:
                smallest[name] = low
        if smallest:
            parts = ", ".join(f"{n} >= {v:.6g} (asked <= {eps[self.names.index(n)]:g})"
                              for n, v in smallest.items())
            local = any(not c.is_linear(self.problem) for c in self.crits)
            hint = (" (found by local search: the criterion is not convex, so the true "
                    "minimum may be lower; policies that meet a criterion only by (nearly) "
                    "never giving some group what others get are not sought)"
                    if local else "")
            if self.chance_delta is not None:
                hint += f" (as CVaR_{1 - self.chance_delta:g} over the belief's scenarios)"
            msg = (f"epsilon is infeasible: the smallest achievable deviation is {parts}"
                   f"{hint}. Raise epsilon to at least that value")
        else:
            smallest = {n: float("nan") for n in self.names}
            msg = ("epsilon is infeasible: each criterion can meet its tolerance alone, but "
                   "not all together; raise some of the tolerances")
        raise InfeasibleToleranceError(msg, smallest)
