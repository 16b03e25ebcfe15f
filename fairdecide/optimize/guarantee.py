"""What a decision optimised over a confidence set is guaranteed, checked independently.

:func:`certify_over_set` recomputes the returned policy's worst value over the set in
closed form (:meth:`~fairdecide.confidence.ConfidenceSet.worst_value`, not the
program's dual rows), checks that it is the optimum the program reported, and states
the guarantee: with probability at least 1 - delta over the data, the policy's true
expected utility is at least that value, and each deviation that does not read the
outcome is at most its value at the estimate when the population is given (it is the
same in every world of the set), or at most the bound the criterion states over the
set's populations (:meth:`~fairdecide.criteria.Criterion.deviation_over_populations`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fairdecide.exceptions import FairdecideError, VerificationError

__all__ = ["Guarantee", "certify_over_set", "certify_policy", "set_criteria"]


@dataclass(frozen=True)
class Guarantee:
    """What holds for the policy with probability at least ``level`` over the data.

    Attributes
    ----------
    level : float
        1 - delta: the confidence set holds the true world at least this often.
    value : float
        Certified lower bound of the policy's true expected utility (its worst value
        over the set).
    deviations : dict[str, float or None]
        Certified upper bound of each criterion's true deviation; None where the set
        does not certify it (``uncertified`` says why).
    method : str
        How the set was built.
    uncertified : dict[str, str]
        For each deviation without a bound, why.
    optimistic : bool
        The set was read optimistically (``ConfidenceSet.as_optimistic``): ``value`` is
        then the policy's best value over the set, a bound from above, not a guarantee.
    gap : float
        Optimistic: how much more the trade-off's objective of any policy could reach
        over the set than this one's (0 where the program is exact).
    credible : bool
        The set is a posterior credible region: ``level`` is a posterior probability.
    approximate : bool
        The set's level is an approximation (a bootstrap band), not a bound.
    """

    level: float
    value: float
    deviations: dict[str, float | None]
    method: str
    uncertified: dict[str, str] = field(default_factory=dict)
    optimistic: bool = False
    gap: float = 0.0
    credible: bool = False
    approximate: bool = False

    def sentences(self) -> list[str]:
        """The guarantee in words a non-specialist can read."""
        pct = f"{100 * self.level:.3g}%"
        if self.optimistic:
            lines = [f"In the most favourable world of a confidence set that holds the "
                     f"truth with probability at least {pct} ({self.method}), this "
                     f"policy's expected utility would be {self.value:.4g}: the optimistic "
                     "twin of the maximin, a value to collect data with, not a guarantee; "
                     f"no policy's objective over the set exceeds this one's by more than "
                     f"{self.gap:.3g}."]
        elif self.credible:
            lines = [f"Under the posterior, with probability about {pct}, this policy's "
                     f"expected utility is at least {self.value:.4g} (its worst case over "
                     f"a credible region: {self.method}; a Bayesian statement, not a "
                     "coverage over data sets)."]
        elif self.approximate:
            lines = [f"With probability about {pct} over the data (a bootstrap "
                     "approximation, not a bound), this policy's true expected utility is "
                     f"at least {self.value:.4g} (its worst case over {self.method})."]
        else:
            lines = [f"With probability at least {pct} over the data, this policy's true "
                     f"expected utility is at least {self.value:.4g} (its worst case over "
                     f"a confidence set: {self.method})."]
        for name, bound in self.deviations.items():
            if bound is not None:
                lines.append(f"Its {name} deviation is at most {bound:.4g} in every world of "
                             "that set, so also in the true one with that probability.")
            else:
                lines.append(f"Its {name} deviation is NOT certified: "
                             f"{self.uncertified[name]}.")
        return lines


def set_criteria(problem: Any, criteria: list, names: list[str], confidence: Any
                 ) -> list:
    """Each criterion as the program over ``confidence`` takes it
    (:meth:`~fairdecide.criteria.Criterion.over_set`); refuses those a set cannot
    certify yet."""
    out = []
    for crit, name in zip(criteria, names, strict=True):
        if confidence.pooled and not crit.capabilities(problem).outcome_free:
            raise FairdecideError(
                f"criterion {name!r} reads the outcome in each group, which a set pooled "
                "over the groups (pooled=True) does not bound: build the set with "
                "pooled=False")
        over = crit.over_set(confidence, problem)
        if over is None:
            raise FairdecideError(
                f"criterion {name!r} cannot be certified over this ConfidenceSet yet: "
                "criteria that do not read the outcome (Independence, Capacity) are, and "
                "separation as the largest pairwise gap (Separation(measure='max', "
                "reference='pairwise')) with two outcomes in a prediction problem; for "
                "others optimise over a Belief "
                "(Belief.confidence_set: the worst of posterior draws, not a guarantee)")
        out.append(over)
    return out


def certify_over_set(session: Any, policy: Any, verification: Any,
                     solver_values: dict | None) -> tuple[Guarantee, float]:
    """The guarantee of ``policy`` over the session's confidence set, and the
    trade-off's objective at its worst value; raises if the program's optimum is not
    the closed-form worst value."""
    cs, tradeoff, belief = session.prog.confidence, session.tradeoff, session.belief
    value = cs.value(policy, session.problem)
    F = np.array([verification.scenario_deviations[n] for n in session.names]
                 ).reshape(len(session.names), 1)
    merit = tradeoff.merit(np.array([value]), F, belief)
    checks = verification.checks
    gap = 0.0
    if solver_values is not None and "objective" in solver_values:
        # optimistic in a prediction problem, the program's optimum bounds the best
        # objective from below (the merit is minimised): the policy's own is above it
        gap = merit - float(solver_values["objective"])
        loose = cs.optimistic and not cs.center.outcome_depends_on_action
        checks["value over the set matches the program's optimum"] = bool(
            -session.utility_tol <= gap if loose else abs(gap) <= session.utility_tol)
        gap = max(gap, 0.0) if loose else 0.0
    floor = getattr(tradeoff, "utility_min", None)
    if floor is not None:
        checks["worst value over the set meets the utility floor"] = bool(
            value >= floor - session.utility_tol)
    failed = [k for k, ok in checks.items() if not ok]
    if failed:
        raise VerificationError(
            f"the policy optimised over the confidence set failed verification "
            f"({'; '.join(failed)}): value over the set {value:.9g}; try solver='highs'")
    bounds, why = deviation_bounds(cs, policy, session.criteria, session.names,
                                   verification.deviations)
    if solver_values is not None and session.names:
        f = np.asarray(solver_values["f"], dtype=float).reshape(len(session.names), -1)
        for c, (crit, name) in enumerate(zip(session.criteria, session.names, strict=True)):
            # the program bounded it over the whole set (not only stated afterwards)? The
            # dual rows of the largest rate gap do, and so do a criterion's own cuts (its
            # adversary searches the whole set: separation)
            held = (cs.population_given or session.prog.over_populations(crit)
                    or crit.capabilities(session.problem).cuts)
            if held and bounds[name] > f[c, 0] + session.tol:
                raise VerificationError(
                    f"{name}: its worst case over the set, {bounds[name]:.9g}, exceeds the "
                    f"program's bound {f[c, 0]:.9g}; try solver='highs'")
    guarantee = Guarantee(cs.level, value, bounds, cs.method, why, cs.optimistic, gap,
                          cs.credible, cs.approximate)
    return guarantee, tradeoff.objective(np.array([value]), F, belief)


def deviation_bounds(cs: Any, policy: Any, criteria: list, names: list[str],
                     at_center: dict) -> tuple[dict[str, float | None], dict[str, str]]:
    """Each criterion's certified bound over ``cs`` for ``policy`` (criteria as
    :func:`set_criteria` returns them; ``at_center`` their deviations at the centre), and
    why a bound is missing."""
    bounds: dict[str, float | None] = {}
    why: dict[str, str] = {}
    for crit, name in zip(criteria, names, strict=True):
        bounds[name] = crit.certified_over(cs, policy, float(at_center[name]))
        if bounds[name] is None:
            why[name] = ("it depends on the population P(x, z), which the set estimates, "
                         "and this criterion states no bound over it. Pass population= "
                         "(a known P(x, z)) to ConfidenceSet.from_data to certify it")
    return bounds, why


def certify_policy(policy: Any, confidence: Any, problem: Any, criteria: Any = None
                   ) -> Guarantee:
    """What a given policy is guaranteed over a confidence set: any policy, not only
    the maximin one (a deployed rule, a plug-in or Bayes policy, a hand-written one).

    With probability at least 1 - delta over the data (the set's level), the policy's
    true expected utility is at least min over the set of V(pi, theta) (closed form,
    :meth:`~fairdecide.confidence.ConfidenceSet.worst_value`), and each criterion's
    true deviation is at most its bound over the set, where the set certifies the
    criterion (:meth:`~fairdecide.criteria.Criterion.over_set`); a criterion it does
    not certify has no bound, and ``uncertified`` says why.

    Parameters
    ----------
    policy : Policy
        A policy over the set's cells and groups (group-blind for a ``pooled`` set).
    confidence : ConfidenceSet
    problem : DecisionProblem
    criteria : Criterion or sequence of Criterion, optional

    Returns
    -------
    Guarantee
        Read optimistically if the set is (``ConfidenceSet.as_optimistic``).

    Examples
    --------
    >>> import numpy as np
    >>> import fairdecide as fd
    >>> problem = fd.DecisionProblem.classification(2)
    >>> data = fd.LoggedData(x=[0, 0, 1, 1] * 50, z=[0, 1, 0, 1] * 50,
    ...                      y=[0, 1, 1, 1] * 50)
    >>> cs = fd.ConfidenceSet.from_data(data, problem, delta=0.1)
    >>> always_1 = fd.TabularPolicy.constant(2, 2, [0.0, 1.0])
    >>> g = fd.certify_policy(always_1, cs, problem, fd.Independence())
    >>> round(g.value, 4) == round(cs.worst_value(always_1, problem), 4), g.deviations
    (True, {'independence': 0.0})
    """
    from fairdecide._validation import check_instance
    from fairdecide.confidence import ConfidenceSet
    from fairdecide.criteria.base import as_criteria, resolve_names
    from fairdecide.policies.base import Policy
    from fairdecide.problem import DecisionProblem

    check_instance(confidence, "confidence", ConfidenceSet, "a ConfidenceSet")
    check_instance(problem, "problem", DecisionProblem, "a DecisionProblem")
    check_instance(policy, "policy", Policy, "a Policy over the set's cells and groups")
    crits = as_criteria(criteria)
    names = resolve_names(crits)
    value = confidence.value(policy, problem)
    over, kept, why = [], [], {}
    for crit, name in zip(crits, names, strict=True):
        try:
            over.append(set_criteria(problem, [crit], [name], confidence)[0])
            kept.append(name)
        except FairdecideError as err:  # not certifiable: said, not raised
            why[name] = str(err)
    at_center = {n: c.deviation(policy, confidence.center, problem)
                 for c, n in zip(crits, names, strict=True) if n in kept}
    bounds, missing = deviation_bounds(confidence, policy, over, kept, at_center)
    bounds.update({n: None for n in why})
    return Guarantee(confidence.level, value, bounds, confidence.method, {**missing, **why},
                     confidence.optimistic, 0.0, confidence.credible, confidence.approximate)
