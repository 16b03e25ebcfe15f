"""A certified decision from a held-out test: fit a candidate on part of the rows, bound
its own group rates and value on the rest, and shrink it towards the best constant rule
just enough for the bound to meet epsilon (:func:`optimize_held_out`).

The set route (:meth:`~fairdecide.ConfidenceSet.from_data`, then
:func:`~fairdecide.optimize_policy`) certifies a policy over every world of a set of
per-conditional intervals: every cell's error may point the same way at once, so the
bound of a group rate grows with the number of cells. A fixed policy's rate, estimated
on rows it was not fitted on, averages its cells' errors instead: its interval shrinks
with the rows of the group, not of the cell. This route spends the data that way.

**The route.** The rows are split at random within each group into a candidate part and
a safety part (``safety_fraction`` of each group; :func:`~fairdecide.evaluation.held_out.
safety_split`).

1. *Candidate selection*, on the candidate part only: the maximum-likelihood world of
   those rows; the best constant rule there, c (one action for everyone); and candidate
   policies pi_t optimised at tolerances t epsilon, t in ``CANDIDATE_SHARES``. For each,
   the test's bound is predicted as its deviation plus the width the bound is predicted
   to have on the safety part (:func:`~fairdecide.evaluation.held_out.predicted_widths`,
   with the margin the estimators use), hence its predicted shrinkage alpha_t and value
   alpha_t U(pi_t) + (1 - alpha_t) U(c); the candidate with the best predicted value is
   kept (Thomas et al. 2019: select the candidate by the test it will face).
2. *The safety test*, on the safety part: every criterion's deviation of pi is bounded
   from its own rates (:func:`~fairdecide.evaluation.certify.bound_rows`: Hoeffding's
   relative-entropy intervals of each group's conditional and of each pair's difference,
   the group weights from all rows' labels), B_k(pi); the values of pi and of c get
   one-sided lower bounds (:func:`~fairdecide.evaluation.held_out.value_lower_bound`).
   All m + 2 statements hold at once with probability at least 1 - delta (each at
   delta / (m + 2)).
3. *Shrinkage*. The policy returned is pi_alpha = alpha pi + (1 - alpha) c with

       alpha = min(1, min_k epsilon_k / B_k(pi)).

   A constant rule's conditionals are the same in every group, so each group rate of
   pi_alpha is alpha times pi's plus a constant: every difference of groups' rates, and
   so every deviation (TV or max, pairwise or pooled), is alpha times pi's, in the
   population as on the rows. On the event where the m intervals hold,
   deviation_k(pi_alpha) = alpha deviation_k(pi) <= alpha B_k(pi) <= epsilon_k, for
   every alpha at once, so choosing alpha from the safety rows keeps the guarantee; and
   U(pi_alpha) = alpha U(pi) + (1 - alpha) U(c) >= alpha L(pi) + (1 - alpha) L(c).

The route never fails: with too few rows alpha is small and the policy is near the
constant rule, its fairness and value still certified; ``result.stats["held_out"]``
says how far it was shrunk. Independence and separation (TV or max, either reference)
in a prediction problem (the outcome does not depend on the action).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fairdecide._common.validation import as_bool, as_real, check_instance, check_random_state
from fairdecide.criteria.base import ByCriterion, Criterion, resolve_names
from fairdecide.data.logged import LoggedData
from fairdecide.evaluation._bounds import deviation_bound, n_statements
from fairdecide.evaluation.certify import certifiable
from fairdecide.evaluation.held_out import (
    PASS_QUANTILE,
    held_out_levels,
    predicted_widths,
    safety_split,
    value_lower_bound,
)
from fairdecide.exceptions import FairdecideError
from fairdecide.optimize.api import optimize_policy
from fairdecide.optimize.guarantee import Guarantee
from fairdecide.optimize.price import Price, warn_below_constant
from fairdecide.optimize.program.tradeoff import tolerances
from fairdecide.optimize.result import OptimizeResult, Verification
from fairdecide.policies.tabular import TabularPolicy
from fairdecide.problem import DecisionProblem
from fairdecide.uncertainty.kinds import HELD_OUT
from fairdecide.worlds.table import expected_utility, row_counts
from fairdecide.worlds.world import TabularWorld

__all__ = ["CANDIDATE_SHARES", "optimize_held_out"]

#: The candidates' tolerances, as shares of epsilon: from the fairest (0) to epsilon.
CANDIDATE_SHARES = tuple(np.linspace(0.0, 1.0, 11))
#: Value statements of the safety test: the candidate's and the constant rule's.
N_VALUES = 2


def optimize_held_out(
    problem: DecisionProblem,
    data: LoggedData,
    criteria: Criterion | list[Criterion] | None = None,
    *,
    epsilon: float | list[float] | None = None,
    delta: float = 0.1,
    safety_fraction: float = 0.6,
    group_blind: bool = False,
    random_state: Any = None,
) -> OptimizeResult:
    """A policy whose fairness and value are certified by a held-out test (see the
    module): fitted on part of ``data``, bounded on the rest, shrunk towards the best
    constant rule just enough that every criterion's bound meets its epsilon.

    With probability at least 1 - delta over the data, for the returned policy pi_alpha,

        deviation_k(pi_alpha) <= alpha B_k(pi) <= epsilon_k  for every criterion k,
        U(pi_alpha) >= alpha L(pi) + (1 - alpha) L(c)  (``result.guarantee.value``),

    pi the candidate, c the best constant rule, B_k and L upper and lower confidence
    bounds from the safety rows, alpha = min(1, min_k epsilon_k / B_k(pi)).

    Parameters
    ----------
    problem : DecisionProblem
        A prediction problem (the outcome does not depend on the action).
    data : LoggedData
        Rows drawn at random from the population the policy will decide about.
    criteria : Criterion or list of Criterion, optional
        Independence and separation (any ConditionalIndependence of the action given
        nothing or the outcome), measure "tv" or "max", either reference. None: the
        best policy at the candidate rows' estimate, its value certified (alpha = 1).
    epsilon : float or list of float
        Each criterion's tolerance, >= 0 (a number applies to all); needed with
        criteria.
    delta : float in (0, 1), default=0.1
        The probability that some statement of the guarantee fails.
    safety_fraction : float in (0, 1), default=0.6
        The share of each group's rows kept for the safety test. 0.6 kept the most
        value in ``benchmarks/results/certified_routes.txt`` (0.4 beside it): the
        candidate needs fewer rows than the bound that shrinks it.
    group_blind : bool, default=False
        Whether the candidate may read the group.
    random_state : int or RandomState, optional
        The split.

    Returns
    -------
    OptimizeResult
        ``policy`` (pi_alpha over the data's cells and groups); ``utility`` and
        ``deviations`` at the estimate (the maximum-likelihood world of all rows, like a
        result over a confidence set); ``guarantee`` (kind "held-out test": ``value``,
        ``deviations`` the certified bounds, ``price`` the candidate and the constant
        rule beside it); ``stats["held_out"]``: the split's sizes and ``safety_rows``
        (indices into ``data``), the ``candidate`` policy and its tolerance (as a share
        of epsilon), ``alpha``, the candidate's bounds, the two-sided intervals'
        ``level``, its held-out ``candidate_deviations``, ``rows_for_epsilon`` (rows /
        alpha^2: where its bound would meet epsilon if it shrank as 1 / sqrt(rows); None
        when alpha is 0 or 1; :func:`~fairdecide.rows_needed` simulates it) and every
        candidate's prediction.

    Examples
    --------
    >>> import fairdecide as fd
    >>> from fairdecide.datasets import make_tabular_problem, sample_logged_data
    >>> problem, truth = make_tabular_problem(10, 2, random_state=0)
    >>> data = sample_logged_data(problem, truth, 20000, random_state=0)
    >>> parity = fd.Independence(measure="max", reference="pairwise")
    >>> res = fd.optimize_held_out(problem, data, parity, epsilon=0.05, random_state=0)
    >>> g = res.guarantee
    >>> g.kind.name, bool(g.deviations[parity.label] <= 0.05)
    ('held-out test', True)
    >>> alpha = res.stats["held_out"]["alpha"]
    >>> bool(0 < alpha <= 1), bool(g.value <= fd.expected_utility(problem, truth, res.policy))
    (True, True)
    """
    check_instance(problem, "problem", DecisionProblem, "a DecisionProblem")
    check_instance(data, "data", LoggedData, "LoggedData (one row per individual)")
    if problem.outcome_depends_on_action:
        raise FairdecideError(
            "optimize_held_out bounds a policy's value from the outcomes of held-out rows, "
            "which in an intervention (the outcome depends on the action) were observed "
            "under the logged actions only: use a confidence set (ConfidenceSet.from_data, "
            "then optimize_policy)")
    crits = [] if criteria is None else certifiable(criteria)
    names = resolve_names(crits)
    if crits and epsilon is None:
        raise FairdecideError(
            "epsilon: give each criterion's tolerance (a number applies to all); the route "
            "certifies a policy whose deviations are within it")
    if not crits and epsilon is not None:
        raise FairdecideError(
            f"epsilon={epsilon!r} was given without criteria: name the criteria it bounds, "
            "or drop epsilon")
    eps = np.array(tolerances(epsilon, len(crits)) if crits else [], dtype=float)
    delta = as_real(delta, "delta", 0, 1, low_open=True, high_open=True)
    fraction = as_real(safety_fraction, "safety_fraction", 0, 1, low_open=True,
                       high_open=True)
    group_blind = as_bool(group_blind, "group_blind")
    rng = check_random_state(random_state)
    n_z = data.n_z
    z, y = data.z, data.outcome_codes(problem)
    if n_z < 2:
        raise FairdecideError(
            f"data has {n_z} group: a held-out test of group fairness needs at least two")
    cand, safe = safety_split(z, fraction, rng)
    if len(cand) == 0 or len(safe) == 0:
        raise FairdecideError(
            f"data has {data.n} rows: too few to split into a candidate and a safety part; "
            "give more rows")
    two_sided, one_sided = held_out_levels(crits, problem, n_z, delta, N_VALUES)

    # 1. candidate selection: the candidate rows only (and the groups' sizes)
    world = TabularWorld.from_data(data.subset(cand), problem)
    constant, c_action = _best_constant(problem, world)
    widths = np.array(predicted_widths(crits, problem, z, y, cand, safe, n_z, two_sided))
    margin = 1.0 + PASS_QUANTILE / np.sqrt(2 * two_sided * (1 - fraction))
    u_const = expected_utility(problem, world, constant)
    candidates = []
    for share in CANDIDATE_SHARES if crits else (0.0,):
        at = np.where(np.isinf(eps), np.inf, share * np.where(np.isinf(eps), 0.0, eps))
        tol = {"epsilon": list(at)} if crits else {}
        res = optimize_policy(problem, world, crits or None, group_blind=group_blind, **tol)
        dev = np.array([res.deviations[n] for n in names])
        predicted = dev + widths * margin
        alpha = _alpha(eps, predicted)
        candidates.append({"share": share, "policy": res.policy, "stats": res.stats,
                           "utility": res.utility,
                           "alpha": alpha,
                           "value": alpha * res.utility + (1 - alpha) * u_const})
    best = max(candidates, key=lambda c: c["value"])
    pi = _fill_unseen(best["policy"], world, c_action)

    # 2. the safety test: the candidate's own rates and values on the safety rows
    units = data.subset(safe).units()
    rows, y_s, z_s = pi.proba(units), y[safe], z[safe]
    labels = np.zeros((n_z, problem.n_outcomes))
    np.add.at(labels, (z, y), 1.0)
    counts = row_counts(z_s, rows, y_s, n_z, problem.n_outcomes)
    bounds = np.array([deviation_bound(c, problem, counts, labels, two_sided) for c in crits])
    U = problem.utility
    lo, hi = float(U.min()), float(U.max())
    lcb_pi = value_lower_bound(np.einsum("ia,ai->i", rows, U[:, y_s]), lo, hi, one_sided)
    lcb_c = value_lower_bound(U[c_action, y_s], lo, hi, one_sided)

    # 3. shrinkage towards the constant rule
    alpha = _alpha(eps, bounds)
    seen = np.array([c.deviation_from_marginal(counts / len(safe), problem) for c in crits])
    # were the whole bound to shrink as 1 / sqrt(rows) (its width, and the candidate's
    # own deviation, mostly noise at the small tolerance it is fitted at), it would meet
    # epsilon at rows / alpha^2; fd.rows_needed simulates it
    more = int(np.ceil(data.n / alpha ** 2)) if 0 < alpha < 1 else None
    policy = TabularPolicy(alpha * pi.table + (1 - alpha) * constant.table,
                           x_labels=pi.x_labels, group_labels=pi.group_labels)
    certified = ByCriterion({n: float(alpha * b) for n, b in zip(names, bounds, strict=True)})
    value = alpha * lcb_pi + (1 - alpha) * lcb_c

    # at the estimate: all rows' maximum-likelihood world (what a set's centre would be)
    center = TabularWorld.from_data(data, problem)
    u_est = float(expected_utility(problem, center, policy))
    devs = ByCriterion({n: float(c.deviation(policy, center, problem))
                        for n, c in zip(names, crits, strict=True)})
    words = {n: c.measure_words for c, n in zip(crits, names, strict=True)}
    c_words = f"always {problem.action_labels[c_action]!r}"
    plug = ", ".join(c.tolerance_text(float(e if np.isinf(e) else best["share"] * e))
                     for c, e in zip(crits, eps, strict=True)) or "no fairness criterion"
    price = Price(problem.utility_name, u_est, value, c_words,
                  float(expected_utility(problem, center, constant)), lcb_c,
                  f"the candidate, fitted on the candidate rows with {plug}, not shrunk",
                  float(expected_utility(problem, center, pi)), lcb_pi,
                  ByCriterion({n: float(b) for n, b in zip(names, bounds, strict=True)}),
                  narrower="more rows (a larger safety part) or a larger delta")
    method = (f"a held-out test on {len(safe):,} of {data.n:,} rows (Hoeffding's "
              f"relative-entropy bounds, {n_statements(crits, problem, n_z) + N_VALUES} "
              "statements, union bound); " + (
                  "the candidate not shrunk" if alpha >= 1 else
                  f"the candidate shrunk towards {c_words} by alpha = {alpha:.4g}"))
    notes = () if more is None else (
        f"The candidate itself was certified only at {1 / alpha:.3g} times epsilon: were "
        f"the bound to shrink as 1 / sqrt(rows), it would be certified unshrunk at about "
        f"{more:,} rows (fd.rows_needed estimates it by simulation from the fitted "
        "world).",)
    guarantee = Guarantee(1.0 - delta, float(value), certified, method, {}, HELD_OUT,
                          "worst", 0.0, words, exact={n: False for n in names},
                          utility=problem.utility_name, price=price, notes=notes)
    warn_below_constant(price, stacklevel=2)
    checks = {
        "every certified bound is at most its epsilon": bool(np.all(
            alpha * bounds <= eps + 1e-12)),
        "the shrunk policy's deviations at the estimate are alpha times the candidate's":
            bool(np.allclose([devs[n] for n in names],
                             [alpha * c.deviation(pi, center, problem) for c in crits],
                             atol=1e-9)),
    }
    # the chosen candidate's program (its sizes and times), and the route's own record
    stats = {**best["stats"], "held_out": {
        "n_candidate": len(cand), "n_safety": len(safe), "alpha": float(alpha),
        "candidate": pi, "safety_rows": safe, "level": two_sided,
        "candidate_deviations": ByCriterion({n: float(d) for n, d in zip(names, seen,
                                                                         strict=True)}),
        "rows_for_epsilon": more,
        "candidate_share": float(best["share"]),
        "candidate_bounds": ByCriterion({n: float(b) for n, b in zip(names, bounds,
                                                                     strict=True)}),
        "candidate_value_bound": lcb_pi, "constant": c_words, "constant_value_bound": lcb_c,
        "predicted_widths": ByCriterion({n: float(w) for n, w in zip(names, widths,
                                                                     strict=True)}),
        "candidates": [{k: v for k, v in c.items() if k not in ("policy", "stats")}
                       for c in candidates]}}
    verification = Verification(u_est, devs, None, 0.0, checks, 1e-9)
    trade = ", ".join(c.tolerance_text(float(e)) for c, e in zip(crits, eps, strict=True))
    return OptimizeResult(policy, u_est, devs, -u_est, "optimal",
                          f"held-out test: max utility{' s.t. ' + trade if trade else ''}",
                          "held-out test",
                          stats, verification, guarantee)


def _alpha(eps: np.ndarray, bounds: np.ndarray) -> float:
    """min(1, min_k epsilon_k / B_k): the largest share of the candidate whose bounds all
    meet their tolerances."""
    with np.errstate(divide="ignore"):
        ratio = np.where(bounds > 0, eps / np.maximum(bounds, 1e-300), np.inf)
    return float(min(1.0, ratio.min(initial=np.inf)))


def _best_constant(problem: DecisionProblem, world: TabularWorld
                   ) -> tuple[TabularPolicy, int]:
    """The constant rule with the highest value in ``world``, and its action."""
    rules = [TabularPolicy.for_world(world, np.eye(problem.n_actions)[a])
             for a in range(problem.n_actions)]
    values = [expected_utility(problem, world, r) for r in rules]
    a = int(np.argmax(values))
    return rules[a], a


def _fill_unseen(policy: TabularPolicy, world: TabularWorld, action: int) -> TabularPolicy:
    """The candidate with the constant rule in the cells the candidate rows never saw
    (their P(x, z) is 0 there, so the program left them free): a choice of the candidate
    rows alone."""
    table = policy.table.copy()
    unseen = world.p_xz <= 0
    table[unseen] = np.eye(table.shape[2])[action]
    return TabularPolicy(table, x_labels=policy.x_labels, group_labels=policy.group_labels)
