"""Successive linearisation for criteria that are not convex in the policy.

At the current policy each conditional N / D is replaced by its first-order expansion
and the resulting convex program is solved within a trust region |pi - pi_k| <= Delta
(for tolerance constraints, with the tolerance tightened by a margin that tracks the
observed curvature error). The step is then corrected exactly: with the conditioning
masses held fixed every conditional is linear, so the best policy with the step's masses
is one exact program (if none meets the tolerance, the masses are pulled back toward
the current ones). A step is kept only if the exact objective, recomputed from the
decision tables of every scenario, improves and the exact constraints hold. Beliefs of
several scenarios are handled at once: every scenario's rows enter each program.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, replace

import numpy as np

from fairdecide.optimize.engine.chain import solve
from fairdecide.optimize.program.tradeoff import MinViolation, Tradeoff, aggregated_deviations
from fairdecide.optimize.routes.session import Session, Tally

__all__ = ["Found", "local_search", "successive_linearization"]

# The search stops when the objective improved by less than STALL_GAIN (relative) over
# the last STALL_WINDOW steps.
STALL_WINDOW = 20
STALL_GAIN = 1e-6
# The feasibility phase minimises the violation less UTILITY_WEIGHT times the utility
# (over the largest |utility| of an outcome and action): an exact penalty, so that it
# lands at a feasible point of high utility, not at whichever feasible point the first
# step program's solver returns (the pure violation has a whole face of minimisers; the
# search from an arbitrary point of it stopped at 0.394 where 0.714 was reachable).
UTILITY_WEIGHT = 0.1


@dataclass(frozen=True)
class Found:
    """The best end point (``pi`` None when no start could be made feasible, with the
    point of least violation found)."""

    pi: np.ndarray | None
    violation: float
    status: str
    least_violation: np.ndarray | None = None


def candidates(session: Session, tally: Tally) -> list[np.ndarray]:
    """Starting policies: the utility optimum, the uniform policy, their average, and the
    constant deterministic policies (fallbacks that meet independence and separation
    exactly)."""
    prog = session.prog
    best = session.utility_optimum(tally)
    uniform = prog.uniform()
    eye = np.eye(prog.n_a)
    return [best, uniform, 0.5 * (best + uniform)] + [
        np.tile(eye[a], (prog.n_free, 1)) for a in range(prog.n_a)
    ]


def successive_linearization(session: Session, tradeoff: Tradeoff, tally: Tally) -> Found:
    """Multi-start successive linearisation of ``tradeoff``; the best end point, its
    programs' solves counted in ``tally``.

    A start that violates the tolerances is first moved into the feasible set by
    minimising the total violation; then the objective is improved from there.
    """
    best: tuple[float, np.ndarray, float, str] | None = None
    least: tuple[float, np.ndarray] | None = None
    values = Values(session)
    starts = candidates(session, tally)
    pure = elastic = None
    for start in starts:
        pi = start
        if not tradeoff.feasible(*values(pi), session.belief, session.tol,
                                 session.utility_tol):
            if not tradeoff.bounds_deviations:
                continue
            if pure is None:
                scale = float(np.abs(session.prog.U_m).max(initial=0.0))
                pure = MinViolation(tradeoff.epsilon, tradeoff.chance_delta)
                elastic = replace(pure, utility_weight=UTILITY_WEIGHT / max(scale, 1e-12))
            pi, _, _, _ = local_search(session, elastic, pi, tally, values)
            if best is None and not tradeoff.feasible(*values(pi), session.belief,
                                                      session.tol, session.utility_tol):
                # the penalty was too weak here and no start is feasible yet: the
                # violation alone, from where it ended
                pi, _, _, _ = local_search(session, pure, pi, tally, values)
            U, F = values(pi)
            v = pure.merit(U, F, session.belief)
            if least is None or v < least[0]:
                least = (v, pi)
            if not tradeoff.feasible(U, F, session.belief, session.tol, session.utility_tol):
                continue
        pi, phi, viol, status = local_search(session, tradeoff, pi, tally, values)
        if best is None or phi < best[0] - 1e-12:
            best = (phi, pi, viol, status)
    if best is None:
        return Found(None, 0.0, "infeasible", None if least is None else least[1])
    return Found(best[1], best[2], best[3])


def _better(session: Session, a: np.ndarray, b: np.ndarray, tradeoff: Tradeoff,
            values: Values) -> bool:
    """Whether policy ``a`` is feasible and at least as good as ``b`` (or ``b`` is not
    feasible); ``values`` evaluates a policy (:class:`Values`)."""
    Ua, Fa = values(a)
    if not tradeoff.feasible(Ua, Fa, session.belief, session.tol, session.utility_tol):
        return False
    Ub, Fb = values(b)
    if not tradeoff.feasible(Ub, Fb, session.belief, session.tol, session.utility_tol):
        return True
    return tradeoff.merit(Ua, Fa, session.belief) <= tradeoff.merit(Ub, Fb, session.belief)


class Values:
    """Policies' exact utilities and deviations (:meth:`Session.evaluate`, from their
    decision tables), the last ``KEEP`` policies' kept: a step read its first-order
    point's values up to three times (its overshoot, the correction's comparison, its
    merit), and a start was read for its feasibility and again for its merit."""

    KEEP = 4

    def __init__(self, session: Session) -> None:
        self.session, self.got = session, {}

    def __call__(self, pi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        key = np.asarray(pi).tobytes()
        if key not in self.got:
            if len(self.got) >= self.KEEP:
                del self.got[next(iter(self.got))]
            self.got[key] = self.session.evaluate(pi)
        return self.got[key]


def local_search(session: Session, tradeoff: Tradeoff, start: np.ndarray, tally: Tally,
                 values: Values | None = None) -> tuple[np.ndarray, float, float, str]:
    """Successive linearisation with a trust region from a start that satisfies the
    constraints of ``tradeoff``; every accepted step keeps them and improves the exact
    objective. Returns (free rows, their exact objective, raw simplex violation, status).
    ``values``: the policies' values evaluated so far (:class:`Values`)."""
    prog, crits = session.prog, session.criteria
    values = Values(session) if values is None else values
    pi = start
    phi = tradeoff.merit(*values(pi), session.belief)
    radius, converged, viol = 0.5, False, 0.0
    # With tolerances the linearised tolerance is tightened by a margin that tracks the
    # curvature error seen at the current radius, so steps land inside the feasible set
    # instead of zig-zagging along its curved boundary.
    tightens = tradeoff.bounds_deviations
    eps = np.asarray(tradeoff.epsilon if tightens else (), dtype=float)
    margin = np.zeros(len(eps))
    history: list[float] = []
    for _ in range(session.max_iter):
        tally.stats["linearisation_steps"] += 1
        history.append(phi)
        if len(history) > STALL_WINDOW and (
            history[-STALL_WINDOW - 1] - phi <= STALL_GAIN * (1.0 + abs(phi))
        ):
            converged = True  # stalled: no real progress over the last steps
            break
        step = tradeoff
        if tightens and margin.any():
            step = replace(tradeoff, epsilon=tuple(np.maximum(eps - margin, 0.0)))
        # the steps' programs are models: their certificates are not the result's
        res = tally.add(solve(session.task(step, crits, point=pi, trust=radius,
                                           how="first-order", certify=False)))
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
        new, new_viol = prog.clean(res.x)
        used, moved = radius, float(np.abs(new - pi).max(initial=0.0))
        if tightens:
            F_step = aggregated_deviations(values(new)[1], session.belief,
                                           tradeoff.chance_delta)
            overshoot = np.maximum(F_step - np.maximum(eps - margin, 0.0), 0.0)
        # Correction: the best policy with the step's conditioning masses, an exact
        # program. If no policy with those masses meets the constraints, the masses are
        # pulled back toward the current ones (masses are linear in pi, so the slice at
        # pi + t (new - pi) has the masses D_k + t (D_new - D_k)).
        for t in (1.0, 0.5, 0.25, 0.125):
            probe = new if t == 1.0 else pi + t * (new - pi)
            cor = tally.add(solve(session.task(tradeoff, crits, point=probe,
                                               how="fixed-mass", certify=False)))
            if cor.ok:
                cand, cand_viol = prog.clean(cor.x)
                if _better(session, cand, new, tradeoff, values):
                    new, new_viol = cand, cand_viol
                break
        U2, F2 = values(new)
        phi2 = tradeoff.merit(U2, F2, session.belief)
        actual = phi - phi2
        feasible = tradeoff.feasible(U2, F2, session.belief, session.tol, session.utility_tol)
        if feasible and actual > 1e-12 * (1.0 + abs(phi)):
            # The exact correction restores feasibility, so any improving step is kept;
            # the radius grows when the model predicted well, shrinks when the step
            # gained less than a tenth of the prediction.
            pi, phi, viol = new, phi2, new_viol
            if actual >= 0.5 * predicted:
                radius = min(1.0, 2.0 * radius)
            elif actual < 0.1 * predicted:
                radius *= 0.5
        else:
            # a quarter of the step the model took, which can be far inside the region:
            # where the model's gain is an error of the model at pi itself (a mass near
            # zero, whose conditionals the step's program writes with 1 / mass), a
            # quarter of the radius took up to 11 failed steps to stop
            radius = 0.25 * min(radius, moved)
        if tightens:
            margin = 1.5 * overshoot * (radius / used) ** 2
        if radius < 1e-7:
            converged = True
            break
    if not converged:
        warnings.warn(
            f"successive linearisation stopped after max_iter={session.max_iter} steps "
            "before converging; the policy is feasible and verified but may not be "
            "locally optimal. Raise max_iter",
            stacklevel=5,
        )
    return pi, phi, viol, "locally optimal" if converged else "feasible (not converged)"
