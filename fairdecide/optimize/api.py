"""optimize_policy: validate, choose a route, solve, verify, return a result."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from fairdecide._common.deprecation import warn_deprecated
from fairdecide.criteria.base import Criterion, as_criteria
from fairdecide.criteria.capacity import Capacity
from fairdecide.optimize.price import priced
from fairdecide.optimize.program.shorthand import with_capacity
from fairdecide.optimize.program.tradeoff import Tradeoff
from fairdecide.optimize.progress import Progress, reporting
from fairdecide.optimize.result import OptimizeResult
from fairdecide.optimize.routes.router import choose_route
from fairdecide.optimize.routes.setup import finish, open_session
from fairdecide.policies.base import ParametricPolicy
from fairdecide.problem import DecisionProblem
from fairdecide.uncertainty.beliefs import Belief
from fairdecide.worlds.frame import FrameWorld
from fairdecide.worlds.world import World

__all__ = ["optimize_policy"]


def optimize_policy(
    problem: DecisionProblem,
    world: World | Belief,
    criteria: Criterion | Sequence[Criterion] | None = None,
    *,
    lam: float | None = None,
    epsilon: float | Sequence[float] | None = None,
    utility_slack: float | None = None,
    tradeoff: Tradeoff | None = None,
    group_blind: bool = False,
    chance_delta: float | None = None,
    solver: str | None = None,
    tol: float = 1e-6,
    max_iter: int = 200,
    policy: ParametricPolicy | type[ParametricPolicy] | None = None,
    n_restarts: int | None = None,
    random_state: Any = None,
    progress: Callable[[Progress], Any] | bool | None = None,
    capacity: Capacity | Sequence[Capacity] | None = None,
) -> OptimizeResult:
    """Find the best tabular policy under one of the book's fairness trade-offs.

    With F the sum of the criteria's deviations and U the expected utility, exactly one of

    - ``lam``: maximise (1 - lam) U - lam F (mixture);
    - ``epsilon``: maximise U subject to F_k <= epsilon_k for every criterion
      (a number applies to all; ``inf`` switches one off);
    - ``utility_slack``: minimise F subject to U >= U* - utility_slack, where U* is the
      best utility without fairness constraints;

    is solved. Without criteria, the utility-maximising policy is returned. The keywords
    are shorthand for the trade-off objects of :mod:`fairdecide.optimize`, which
    ``tradeoff`` takes directly.

    Parameters
    ----------
    problem : DecisionProblem
    world : World (e.g. TabularWorld) or Belief
        The world, or a belief over worlds: a weighted set of scenarios aggregated by
        their mean (Bayesian: every term, fairness included, is the mean over scenarios
        of that scenario's value) or their worst case (maximin). Both stay one LP,
        through epigraph variables. A :class:`~fairdecide.worlds.frame.FrameWorld` (a pandas
        or Dask table of units) is solved by the distributed master
        (:mod:`fairdecide.optimize.distributed`), which refuses the settings it cannot honour.
    criteria : criterion or sequence of criteria, optional
    lam, epsilon, utility_slack : see above
    tradeoff : Mixture, FairnessConstraint, UtilityConstraint or MaxUtility, optional
        The trade-off as an object instead of a keyword: ``Mixture(lam)``,
        ``FairnessConstraint((eps_1, ..., eps_C), chance_delta)`` (one tolerance, or one
        per criterion), ``UtilityConstraint(slack)`` (``UtilityConstraint()``: the
        smallest achievable deviation) or ``MaxUtility()`` (no criteria).
    group_blind : bool, default=False
        Restrict to policies that ignore the group: pi(a | x, z) = pi(a | x).
    chance_delta : float in (0, 1), optional
        With ``epsilon`` and a belief: bound the conditional value at risk
        CVaR_{1-delta} of each deviation across scenarios (the mean of its worst delta
        share) by epsilon. This convex relaxation implies the chance constraint
        P(F > epsilon) <= delta under the belief.
    solver : str, optional
        None: the solving chain's default (:mod:`fairdecide.optimize.engine.chain`, which
        records its choice and why in ``result.solver_choice`` and says it in
        ``result.explain()``): for a belief the term interior point (``lam`` over many
        scenarios) or the scenario cuts (``epsilon``), then on the whole program the
        structured solver (large tabular programs), the interior point over unit blocks
        (large beliefs), or HiGHS by size. A name asks for one: "highs" (HiGHS on the
        whole program, its method by size), "highs-ds", "highs-ipm" (with crossover),
        "highs-ipm-no-crossover", "structured", "scenarios", "term-ipm", "unit-ipm",
        "CLARABEL" (Clarabel on the program's cones, the default for KL terms); any
        other installed cvxpy solver ("SCS") goes through cvxpy. Names are
        read case-insensitively ("HIGHS" is HiGHS itself, not cvxpy's); an asked solver
        that does not take the program (or hands it back) says why in
        ``result.solver_choice``, the default chain solves it, and a
        :class:`~fairdecide.exceptions.SolverFallbackWarning` names the solver asked,
        why, and the solver that took the program. KL measures need an exponential-cone
        solver and go to Clarabel.
    tol : float, default=1e-6
        Verification tolerance, at most 0.01: every returned policy's utility and
        deviations are recomputed from its decision table; a tolerance violated by more
        than ``tol`` is an error, not a silent return.
    max_iter : int, default=200
        Most linearisation steps for criteria that are not linear in the policy; with a
        parametric ``policy``, most solver iterations per start; with a FrameWorld, most
        passes over the units.
    policy : LinearSoftmaxPolicy (or another ParametricPolicy), or its class, optional
        The policy family. Default: the world's free family (one row per cell, or per
        individual of a :class:`~fairdecide.SampleWorld`), solved exactly as above. A
        parametric family (features of a SampleWorld; it decides for people never seen)
        is optimised by the gradient route (Notes).
    n_restarts : int, default=3
        Parametric policies only: starts of the local search (theta = 0, or the given
        coefficients, then random ones).
    random_state : int, RandomState or None
        Parametric policies only: seeds the random starts.
    progress : callable or True, optional
        Called with a :class:`~fairdecide.optimize.progress.Progress` (round, objective,
        gap, seconds) after every round of the long loops: scenario cuts, the structured
        solver's sifting, constraint generation. True shows the last round on one line
        of standard error (:class:`~fairdecide.optimize.progress.ProgressBar`). Every
        round is also logged at DEBUG to ``fairdecide.optimize.progress``; one-shot
        solves report nothing.

    capacity : Capacity or sequence of Capacity, optional
        Budgets on the share of people given an action (overall or per group), held
        exactly (tolerance 0, one linear row each) whatever the fairness trade-off: they
        join the criteria as ``FairnessConstraint`` rows with epsilon 0, and are reported
        among the deviations. With ``epsilon`` or no criteria; a trade-off that weighs or
        minimises deviations (``lam``, ``utility_slack``) would trade a budget off, and is
        refused. For k places among the n people of a fixed population,
        ``Capacity(action, at_most=k / n)``; :func:`~fairdecide.sample_cohort` then draws
        cohorts of exactly k.

    Returns
    -------
    OptimizeResult

    Raises
    ------
    InfeasibleToleranceError
        If no policy meets ``epsilon``; the message states the smallest deviation found.
        A tolerance the solver finds infeasible only within its own tolerances (every
        smallest deviation within ``tol / 4`` of its epsilon, e.g. epsilon = 0 for a
        deviation whose minimum is 0) is solved at max(epsilon, smallest) + tol / 4
        instead, so the policy meets epsilon within ``tol`` (``stats["epsilon_solved"]``).
    SolverError, VerificationError

    Notes
    -----
    Route. Each criterion declares its capabilities for the problem
    (:class:`~fairdecide.criteria.Capabilities`); the first registered route that takes
    them solves (:mod:`fairdecide.optimize.routes.router`): the exact program when every
    criterion is linear, successive linearisation otherwise.

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
    minimising the violation. The best end point is returned. With a belief of several
    scenarios every scenario's expansion enters each program, and the exact objective
    and constraints (Bayes mean, worst case, CVaR) are those of the belief.

    Parametric policies (:mod:`fairdecide.optimize.routes.gradient`). Utility and each deviation
    are functions of the group marginals M_k(theta), with analytic gradients through the
    family's Jacobian. TV and max deviations enter through epigraph variables (exact, no
    smoothing); the program in (theta, epigraph) is solved by SQP (SLSQP), or L-BFGS when
    there is no constraint or epigraph, from several starts. Every end point is
    evaluated from its decision tables; the best feasible one is returned ("locally
    optimal", or "stopped at max_iter" if its search did not converge), and a tolerance
    no start meets is an error naming the smallest deviation reached.

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

    The same trade-off as an object:

    >>> from fairdecide.optimize import FairnessConstraint
    >>> same = optimize_policy(problem, world, Independence(),
    ...                        tradeoff=FairnessConstraint((0.0,)))
    >>> abs(same.utility - fair.utility) < 1e-9
    True
    """
    criteria, tradeoff_args = with_capacity(
        criteria, capacity, (lam, epsilon, utility_slack, chance_delta, tradeoff))
    with reporting(progress):
        return _optimize(problem, world, criteria, tradeoff_args, group_blind, solver, tol,
                         max_iter, policy, n_restarts, random_state)


def optimize_distributed(
    problem: DecisionProblem, units: Any, criteria: Sequence[Criterion] | None = None, *,
    epsilon: Any = None, lam: float | None = None, utility_slack: float | None = None,
    tradeoff: Tradeoff | None = None, group: str = "z", weight: str = "w",
    tol: float = 1e-6, max_iter: int = 200, progress: Any = None,
) -> OptimizeResult:
    """Deprecated: ``optimize_policy(problem, FrameWorld(units, problem, group=group,
    weight=weight), criteria, ...)`` is the one door (this one warns, then calls it).

    The optimal policy of a population given as a (Dask) table of units. Every argument
    is validated, and the result verified, by :func:`~fairdecide.optimize_policy`, which
    solves a :class:`~fairdecide.worlds.frame.FrameWorld` with the distributed master, so
    the two doors gave the same numbers; only the door that takes every world stays.

    Parameters
    ----------
    problem : DecisionProblem
    units : pandas or Dask DataFrame
        One row per unit: ``group`` (integer group code 0..n_z-1), ``weight`` (the
        unit's probability mass; normalised to sum to one) and the outcome
        probabilities :func:`outcome_columns`. On Dask, persist it first
        (``units.persist()``): every round reads it.
    criteria : list of Criterion, optional
        Criteria of the group marginal linear in the policy for this problem
        (independence; separation in prediction problems; capacities), as their
        capabilities say. None: the utility-maximising policy.
    epsilon, lam, utility_slack, tradeoff, tol, progress
        As for :func:`~fairdecide.optimize_policy`.
    group, weight : str, default "z" and "w"
        Column names, as for :class:`~fairdecide.worlds.frame.FrameWorld`.
    max_iter : int, default=200
        Passes over the units after which the master, not yet certified, raises
        :class:`~fairdecide.exceptions.SolverError` (optimize_policy's ``max_iter``).

    Returns
    -------
    OptimizeResult
        Verified as :func:`~fairdecide.optimize_policy`'s results are. ``policy`` is a
        :class:`~fairdecide.policies.mixture.VertexMixturePolicy` (its
        ``frame_proba(partition, index)`` gives the rows of one partition of ``units``);
        ``certificates["optimality"]`` holds the certified duality ``gap`` and the
        ``rounds`` (passes over the units); ``stats["distributed"]`` the master's
        ``columns``, the ``blocks`` and ``partitions``.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> import fairdecide as fd
    >>> rng = np.random.RandomState(0)
    >>> z = rng.randint(0, 2, 500)
    >>> p1 = 1 / (1 + np.exp(-rng.normal(size=500) - z))
    >>> units = pd.DataFrame({"z": z, "w": 1.0, "p_0": 1 - p1, "p_1": p1})
    >>> problem = fd.DecisionProblem.classification(2)
    >>> res = fd.optimize_policy(problem, fd.FrameWorld(units, problem),
    ...                          [fd.Independence()], epsilon=0.02)
    >>> cert = res.certificates["optimality"]
    >>> res.deviations["independence"] <= 0.02 + 1e-9, cert["gap"] <= cert["bound"]
    (True, True)
    >>> res.policy.frame_proba(units).shape
    (500, 2)
    """
    warn_deprecated("fairdecide.optimize.optimize_distributed(problem, units, ...)",
                    "fairdecide.optimize_policy(problem, fairdecide.FrameWorld(units, "
                    f"problem, group={group!r}, weight={weight!r}), ...)")
    return optimize_policy(problem, FrameWorld(units, problem, group, weight), criteria,
                           epsilon=epsilon, lam=lam, utility_slack=utility_slack,
                           tradeoff=tradeoff, tol=tol, max_iter=max_iter, progress=progress)


def _optimize(problem: Any, world: Any, criteria: Any, tradeoff_args: tuple,
              group_blind: Any, solver: Any, tol: Any, max_iter: Any, policy: Any,
              n_restarts: Any, random_state: Any) -> OptimizeResult:
    session = open_session(problem, world, criteria, tradeoff_args, group_blind, solver,
                           tol, max_iter, policy, n_restarts, random_state)
    found = choose_route(session.capabilities, session.kind).solve(session)
    result = finish(session, found)
    if session.confidence is None:
        return result
    # the guarantee with its price
    return _priced(result, session, found.tradeoff, problem, world, criteria,
                   tradeoff_args, solver, tol, max_iter)


def _priced(result: OptimizeResult, session: Any, tradeoff: Any, problem: Any,
            confidence: Any, criteria: Any, tradeoff_args: tuple, solver: Any, tol: Any,
            max_iter: Any) -> OptimizeResult:
    """A result over a confidence set with its guarantee's price: the plug-in policy is
    the same trade-off solved at the set's centre (:mod:`fairdecide.optimize.price`);
    ``tradeoff`` is the one the route solved (its utility floor set)."""
    group_blind = session.prog.group_blind

    def plug_in() -> Any:
        return _optimize(problem, confidence.center, criteria, tradeoff_args, group_blind,
                         solver, tol, max_iter, None, None, None).policy

    crits = as_criteria(criteria)
    trade = ({"epsilon": list(tradeoff.epsilon)} if tradeoff.bounds_deviations
             else {} if not crits else {"tradeoff": tradeoff})
    guarantee = priced(result.guarantee, result.policy, confidence, problem,
                       session.criteria, session.names, plug_in, crits, trade, group_blind,
                       stacklevel=5)
    return replace(result, guarantee=guarantee)


