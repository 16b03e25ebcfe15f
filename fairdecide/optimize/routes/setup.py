"""Setting up an optimisation and finishing it: the input validated once into a session
of the kind the world and policy family ask for (:func:`open_session`:
:func:`tabular_session` for the world's free policy, :func:`parametric_session` for a
parametric family, :func:`~fairdecide.optimize.routes.units.units_session` for a units
table), and a route's answer verified on the decision tables into an
:class:`~fairdecide.optimize.result.OptimizeResult` with what its solves found
(:func:`finish`). Used by :func:`~fairdecide.optimize_policy` and the warm frontier
alike."""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

import numpy as np

from fairdecide._common.validation import as_bool, as_int, check_random_state
from fairdecide.criteria.base import resolve_names
from fairdecide.exceptions import FairdecideError
from fairdecide.optimize.engine.chain import resolve_solver
from fairdecide.optimize.guarantee import certify_over_set, set_criteria
from fairdecide.optimize.program.policy_program import PolicyProgram
from fairdecide.optimize.program.tradeoff import Tradeoff
from fairdecide.optimize.result import OptimizeResult
from fairdecide.optimize.routes.base import RouteResult
from fairdecide.optimize.routes.parametric import ParametricSession, check_parametric_settings
from fairdecide.optimize.routes.session import Session, SessionBase, common_input
from fairdecide.optimize.routes.units import is_units_table, units_session
from fairdecide.optimize.verify import verify_solution
from fairdecide.policies.base import ParametricPolicy
from fairdecide.uncertainty.beliefs import Belief
from fairdecide.uncertainty.confidence import ConfidenceSet

__all__ = ["finish", "open_session", "parametric_session", "policy_family",
           "tabular_session"]


def finish(session: Any, found: RouteResult) -> OptimizeResult:
    """The route's policy verified on the belief's decision tables, as a result with
    what the route's solves found (its statistics and certificates, the solver)."""
    if found.tradeoff is not None:
        session = session.with_tradeoff(found.tradeoff)
    policy = session.policy_of(found.pi)
    verification = verify_solution(policy, session.belief, session.problem,
                                   session.criteria, session.names, session.tradeoff,
                                   found.solver_values, found.violation, session.tol,
                                   session.utility_tol, found.solver,
                                   over_set=session.confidence is not None)
    result = _result(session, found, policy, verification)
    if session.confidence is None:
        return result
    guarantee, objective = certify_over_set(session, policy, verification,
                                            found.solver_values)
    return replace(result, objective=objective, guarantee=guarantee)


def open_session(problem: Any, world: Any, criteria: Any, tradeoff_args: tuple,
                 group_blind: Any, solver: Any, tol: Any, max_iter: Any, policy: Any,
                 n_restarts: Any, random_state: Any) -> SessionBase:
    """The input validated into the session its world and policy family ask for: a
    units table's (a FrameWorld), a parametric family's (``policy``), or the world's
    free policy's."""
    if is_units_table(world):
        return units_session(problem, world, criteria, tradeoff_args, group_blind, solver,
                             tol, max_iter, policy, n_restarts, random_state)
    family = policy_family(policy)
    if family is not None:
        return parametric_session(problem, world, criteria, tradeoff_args, group_blind,
                                  solver, tol, max_iter, family, n_restarts, random_state)
    if n_restarts is not None or random_state is not None:
        raise FairdecideError(
            "n_restarts and random_state apply to parametric policies (policy=...); the "
            "tabular routes are deterministic")
    return tabular_session(problem, world, criteria, tradeoff_args, group_blind, solver,
                           tol, max_iter)


def tabular_session(problem: Any, world: Any, criteria: Any, tradeoff_args: tuple,
                    group_blind: Any, solver: Any, tol: Any, max_iter: Any) -> Session:
    """Validate the input and set up the optimisation."""
    belief, crits, tradeoff = common_input(problem, world, criteria, tradeoff_args, tol,
                                           max_iter)
    solver = resolve_solver(solver)
    confidence = world if isinstance(world, ConfidenceSet) else None
    group_blind = as_bool(group_blind, "group_blind")
    if confidence is not None:
        if confidence.pooled and not group_blind:
            raise FairdecideError(
                "group_blind: this ConfidenceSet pools the outcomes over the groups of a "
                "cell (pooled=True), which certifies group-blind policies only; pass "
                "group_blind=True, or build the set with pooled=False")
        crits = set_criteria(problem, crits, resolve_names(crits), confidence)
    t0 = time.perf_counter()
    prog = PolicyProgram(problem, belief, group_blind,
                         belief.worlds[0].free_policy(), confidence)
    session = Session(prog, crits, resolve_names(crits), tradeoff, belief, solver,
                      float(tol), int(max_iter))
    session.setup["build_seconds"] = time.perf_counter() - t0
    return session


def policy_family(policy: Any) -> ParametricPolicy | None:
    """The parametric family asked for, or None for the world's free family."""
    if policy is None:
        return None
    if isinstance(policy, type) and issubclass(policy, ParametricPolicy):
        return policy()
    if isinstance(policy, ParametricPolicy):
        return policy
    raise FairdecideError(
        "policy must be a parametric policy family such as LinearSoftmaxPolicy() (or the "
        f"class), or None for the world's free (tabular) family; got {policy!r}")


def parametric_session(problem: Any, world: Any, criteria: Any, tradeoff_args: tuple,
                       group_blind: Any, solver: Any, tol: Any, max_iter: Any,
                       family: ParametricPolicy, n_restarts: Any, random_state: Any
                       ) -> ParametricSession:
    if isinstance(world, ConfidenceSet):
        raise FairdecideError(
            "a ConfidenceSet is solved over the world's free (tabular) policy; drop policy= "
            "(a parametric family over a confidence set is not supported)")
    belief, crits, tradeoff = common_input(problem, world, criteria, tradeoff_args, tol,
                                           max_iter)
    check_parametric_settings(as_bool(group_blind, "group_blind"), solver, tradeoff.chance_delta,
                              family)
    restarts = 3 if n_restarts is None else as_int(n_restarts, "n_restarts", minimum=1)
    check_random_state(random_state)
    t0 = time.perf_counter()
    session = ParametricSession(problem, belief, family, crits, resolve_names(crits),
                                tradeoff, float(tol), int(max_iter), restarts, random_state)
    session.setup["build_seconds"] = time.perf_counter() - t0
    return session


def _result(session: Any, found: RouteResult, policy: Any, verification: Any
            ) -> OptimizeResult:
    """The result, with every number taken from the verification's recomputation, and
    what the route found: its statistics, after the session's setup's, and certificates
    (``stats["certificates"]``)."""
    v, names, belief = verification, session.names, session.belief
    F = np.array([v.scenario_deviations[n] for n in names]).reshape(len(names),
                                                                   belief.n_scenarios)
    stats = {**session.setup, **found.stats}
    if found.certificates:
        stats["certificates"] = dict(found.certificates)
    return OptimizeResult(
        policy=policy,
        utility=v.utility,
        deviations=v.deviations,
        objective=float(session.tradeoff.objective(v.scenario_utilities, F, belief)),
        status=found.status,
        tradeoff=_describe(session.tradeoff, names, belief),
        solver=found.solver,
        stats=stats,
        verification=v,
    )


def _describe(tradeoff: Tradeoff, names: list[str], belief: Belief) -> str:
    text = tradeoff.describe(names)
    if belief.n_scenarios == 1:
        return text
    return (f"{text} over {belief.label} ({belief.aggregate} of {belief.n_scenarios} "
            f"scenarios{tradeoff.describe_belief()})")
