"""Setting up an optimisation and finishing it: the input validated once into a session
(:func:`tabular_session` for the world's free policy, :func:`parametric_session` for a
parametric family), and a route's answer verified on the decision tables into an
:class:`~fairdecide.optimize.result.OptimizeResult` (:func:`finish`). Used by
:func:`~fairdecide.optimize_policy` and the warm frontier alike."""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

import numpy as np

from fairdecide._common.validation import (
    as_bool,
    as_int,
    as_real,
    check_instance,
    check_random_state,
)
from fairdecide.criteria.base import as_criteria, resolve_names
from fairdecide.exceptions import FairdecideError
from fairdecide.optimize.engine.chain import resolve_solver
from fairdecide.optimize.guarantee import certify_over_set, set_criteria
from fairdecide.optimize.program.policy_program import PolicyProgram
from fairdecide.optimize.program.shorthand import make_tradeoff
from fairdecide.optimize.program.tradeoff import Tradeoff
from fairdecide.optimize.result import OptimizeResult
from fairdecide.optimize.routes.base import RouteResult
from fairdecide.optimize.routes.parametric import ParametricSession, check_parametric_settings
from fairdecide.optimize.routes.session import Session
from fairdecide.optimize.verify import verify_solution
from fairdecide.policies.base import ParametricPolicy
from fairdecide.problem import DecisionProblem
from fairdecide.uncertainty.beliefs import Belief
from fairdecide.uncertainty.confidence import ConfidenceSet
from fairdecide.worlds.world import World

__all__ = ["as_belief", "check_settings", "common_input", "finish", "parametric_session",
           "policy_family", "tabular_session"]


def finish(session: Any, found: RouteResult) -> OptimizeResult:
    """The route's policy verified on the belief's decision tables, as a result."""
    policy = session.policy_of(found.pi)
    verification = verify_solution(policy, session.belief, session.problem,
                                   session.criteria, session.names, session.tradeoff,
                                   found.solver_values, found.violation, session.tol,
                                   session.utility_tol, session.solver_name,
                                   over_set=session.confidence is not None)
    if session.confidence is None:
        return _result(session, found.status, policy, verification)
    guarantee, objective = certify_over_set(session, policy, verification,
                                            found.solver_values)
    return replace(_result(session, found.status, policy, verification),
                   objective=objective, guarantee=guarantee)


def common_input(problem: Any, world: Any, criteria: Any, tradeoff_args: tuple, tol: Any,
                 max_iter: Any) -> tuple[Belief, list, Tradeoff]:
    """What every kind of session validates alike: the world as a belief, the criteria,
    the trade-off, ``tol`` and ``max_iter``."""
    belief = as_belief(problem, world)
    crits = as_criteria(criteria)
    tradeoff = make_tradeoff(len(crits), *tradeoff_args)
    check_settings(tol, max_iter)
    return belief, crits, tradeoff


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
    session.stats["build_seconds"] = time.perf_counter() - t0
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
    session.stats["build_seconds"] = time.perf_counter() - t0
    return session


def _result(session: Session, status: str, policy: Any, verification: Any
            ) -> OptimizeResult:
    """The result, with every number taken from the verification's recomputation."""
    v, names, belief = verification, session.names, session.belief
    F = np.array([v.scenario_deviations[n] for n in names]).reshape(len(names),
                                                                   belief.n_scenarios)
    return OptimizeResult(
        policy=policy,
        utility=v.utility,
        deviations=v.deviations,
        objective=float(session.tradeoff.objective(v.scenario_utilities, F, belief)),
        status=status,
        tradeoff=_describe(session.tradeoff, names, belief),
        solver=session.solver_name,
        stats=session.stats,
        verification=v,
    )


def as_belief(problem: Any, world: Any) -> Belief:
    check_instance(problem, "problem", DecisionProblem, "a DecisionProblem")
    if isinstance(world, World):
        belief = Belief.plug_in(world)
    elif isinstance(world, Belief):
        belief = world
    elif isinstance(world, ConfidenceSet):  # the program takes the set; tables its centre
        belief = Belief.plug_in(world.center, label="the confidence set's centre")
    else:
        raise FairdecideError(
            f"world must be a World such as TabularWorld, a Belief or a ConfidenceSet; got "
            f"{type(world).__name__}")
    for w in belief.worlds:
        w.check_problem(problem)
    return belief


def check_settings(tol: Any, max_iter: Any) -> None:
    try:
        as_real(tol, "tol", low=0, low_open=True)
    except FairdecideError:
        raise FairdecideError(f"tol must be a positive number, got {tol!r}") from None
    if tol > 1e-2:
        raise FairdecideError(
            f"tol must be at most 0.01, got {tol!r}: it is how far a verified utility or "
            "deviation may miss its bound, so a larger tol would pass constraints that do "
            "not hold")
    as_int(max_iter, "max_iter", minimum=1)


def _describe(tradeoff: Tradeoff, names: list[str], belief: Belief) -> str:
    text = tradeoff.describe(names)
    if belief.n_scenarios == 1:
        return text
    return (f"{text} over {belief.label} ({belief.aggregate} of {belief.n_scenarios} "
            f"scenarios{tradeoff.describe_belief()})")
