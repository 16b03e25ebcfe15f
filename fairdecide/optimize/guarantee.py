"""What a decision optimised over a confidence set is guaranteed, checked independently.

:func:`certify_over_set` recomputes the returned policy's worst value over the set in
closed form (:meth:`~fairdecide.uncertainty.confidence.ConfidenceSet.worst_value`, not the
program's dual rows), checks that it is the optimum the program reported, and states
the guarantee: with probability at least 1 - delta over the data, the policy's true
expected utility is at least that value, and each criterion's true deviation is at most
its bound over every world of the set (the bound of the criterion that
:meth:`~fairdecide.criteria.Criterion.over_set` returns, recomputed from the policy).
Every criterion of such a program was held over the whole set inside it, never at the
centre only: each bound is checked against the program's own, and against epsilon.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fairdecide.criteria.base import ByCriterion, short_name
from fairdecide.criteria.over_set import CERTIFIABLE
from fairdecide.exceptions import FairdecideError, VerificationError
from fairdecide.uncertainty.kinds import DATA, ReadsKind, SetKind

__all__ = ["Guarantee", "certify_over_set", "deviation_bounds", "set_criteria"]


@dataclass(frozen=True)
class Guarantee(ReadsKind):
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
    kind : SetKind
        What the set is (:class:`~fairdecide.uncertainty.kinds.SetKind`): what ``level``
        means (a coverage over data sets, a posterior probability, a bootstrap
        approximation: ``credible`` and ``approximate`` read it).
    reading : {"worst", "best", "estimate"}
        "best": the set was read optimistically (``ConfidenceSet.as_optimistic``, and
        ``optimistic``): ``value`` is then the policy's best value over the set, a bound
        from above, not a guarantee. "estimate": the policy maximised its value at the
        set's centre with the criteria held over the whole set
        (``ConfidenceSet.as_estimate``); ``value`` is still its worst value over the set.
    gap : float
        Optimistic: how much more the trade-off's objective of any policy could reach
        over the set than this one's (0 where the program is exact).
    words : dict[str, str]
        What each criterion's deviation measures, in words (for :meth:`sentences`).
    exact : dict[str, bool]
        Whether each bound is the exact worst case over the set (else an upper bound of
        it).
    utility : str
        The utility by what it is ("accuracy" in a classification).
    notes : tuple of str
        Further sentences of the route that certified it (a held-out test: the rows at
        which its candidate would be certified without shrinking).
    price : Price or None
        What the guarantee costs (:class:`~fairdecide.optimize.price.Price`): beside the
        certified value, the policy's estimated value, the best constant rule's and the
        plug-in policy's estimated and certified values.
    """

    level: float
    value: float
    deviations: dict[str, float | None]
    method: str
    uncertified: dict[str, str] = field(default_factory=dict)
    kind: SetKind = DATA
    reading: str = "worst"
    gap: float = 0.0
    words: dict[str, str] = field(default_factory=dict)
    exact: dict[str, bool] = field(default_factory=dict)
    price: Any = None
    utility: str = "expected utility"
    notes: tuple = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "deviations", ByCriterion(self.deviations))
        object.__setattr__(self, "uncertified", ByCriterion(self.uncertified))

    @property
    def optimistic(self) -> bool:
        """The set was read optimistically (``reading == "best"``)."""
        return self.reading == "best"

    def sentences(self) -> list[str]:
        """The guarantee in words a non-specialist can read."""
        if self.optimistic:
            lines = [f"In the most favourable world of a {self.kind.name} that holds the "
                     f"truth with probability {self.kind.probability(self.level)} "
                     f"({self.method}), this policy's {self.utility} would be "
                     f"{self.value:.4g}: the optimistic twin of the maximin, a value to "
                     "collect data with, not a guarantee; no policy's objective over the "
                     f"set exceeds this one's by more than {self.gap:.3g}."]
        else:
            lines = [self.kind.sentence(self.level, self.value, self.utility, self.method)]
        if self.reading == "estimate":
            at = "" if self.price is None else f" ({self.price.estimated:.4g})"
            lines.append(f"The policy was chosen for its {self.utility} at the estimate"
                         f"{at}, a figure without a guarantee, with its fairness held over "
                         f"the whole set; the certified {self.utility} is the worst case "
                         "above.")
        for name, bound in self.deviations.items():
            what = f" as {self.words[name]}" if name in self.words else ""
            if bound is not None and self.kind.source == "held-out":
                lines.append(f"With the same probability its true {short_name(name)} is at "
                             f"most {bound:.4g}{what} ({name}; an upper confidence bound "
                             "from the held-out rows).")
            elif bound is not None:
                how = "" if name not in self.exact else (
                    "; its exact worst case over the set" if self.exact[name] else
                    "; an upper bound of its worst case over the set")
                lines.append(f"In every world of that set, so also in the true one with that "
                             f"probability, its {short_name(name)} is at most {bound:.4g}"
                             f"{what} ({name}{how}).")
            else:
                lines.append(f"Its {name} is NOT certified: {self.uncertified[name]}.")
        if self.price is not None:
            lines.extend(self.price.sentences())
        lines.extend(self.notes)
        return lines


def set_criteria(problem: Any, criteria: list, names: list[str], confidence: Any
                 ) -> list:
    """Each criterion over ``confidence`` (:meth:`~fairdecide.criteria.Criterion.over_set`)
    as a program holds it, on its bound over the whole set; refuses those a program over
    the set cannot hold, naming the forms it can."""
    out = []
    for crit, name in zip(criteria, names, strict=True):
        over = over_set(crit, name, problem, confidence)
        if over is None or not over.capabilities(problem).program:
            raise FairdecideError(
                f"criterion {name!r} cannot be certified over this ConfidenceSet: a "
                f"program over a set holds epsilon on a bound over every world of the set, "
                f"and certifies {CERTIFIABLE}. For other criteria optimise over a Belief "
                "(Belief.highest_density_draws: the worst of posterior draws, not a guarantee)")
        out.append(over)
    return out


def over_set(crit: Any, name: str, problem: Any, confidence: Any) -> Any:
    """``crit`` over ``confidence`` (None where no bound is known); refuses a criterion
    that reads each group's outcomes over a set pooled over the groups."""
    if confidence.pooled and not crit.capabilities(problem).outcome_free:
        raise FairdecideError(
            f"criterion {name!r} reads the outcome in each group, which a set pooled "
            "over the groups (pooled=True) does not bound: build the set with "
            "pooled=False")
    return crit.over_set(confidence, problem)


def deviation_bounds(policy: Any, criteria: list, names: list[str]
                     ) -> tuple[ByCriterion, ByCriterion]:
    """Each criterion's certified bound over its set for ``policy`` (``criteria`` as
    :meth:`~fairdecide.criteria.Criterion.over_set` returns them, None where it
    returned none), and why a bound is missing."""
    bounds, why = ByCriterion(), ByCriterion()
    for crit, name in zip(criteria, names, strict=True):
        bounds[name] = None if crit is None else float(crit.bound(policy))
        if crit is None:
            why[name] = ("no bound over the set is known for it (KL measures; separation "
                         "in an intervention; a criterion defined outside the package that "
                         "states none)")
    return bounds, why


def certify_over_set(session: Any, policy: Any, verification: Any,
                     solver_values: dict | None) -> tuple[Guarantee, float]:
    """The guarantee of ``policy`` over the session's confidence set, and the
    trade-off's objective at its certified values; raises if the program's optimum is
    not the closed-form worst value, or a criterion's bound over the set exceeds the
    program's bound or its tolerance."""
    cs, tradeoff, belief = session.prog.confidence, session.tradeoff, session.belief
    names, problem = session.names, session.problem
    value = cs.value(policy, problem)  # what the guarantee states
    maximised = cs.objective_value(policy, problem)  # what the program maximised
    bounds, why = deviation_bounds(policy, session.criteria, names)
    # the trade-off over the set reads the certified bounds (what the program bounds)
    F = np.array([bounds[n] if bounds[n] is not None else
                  verification.deviations[n] for n in names]).reshape(len(names), 1)
    merit = tradeoff.merit(np.array([maximised]), F, belief)
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
        checks["value over the set meets the utility floor"] = bool(
            maximised >= floor - session.utility_tol)
    failed = [k for k, ok in checks.items() if not ok]
    if failed:
        raise VerificationError(
            f"the policy optimised over the confidence set failed verification "
            f"({'; '.join(failed)}): value over the set {value:.9g}; try solver='highs'")
    eps = tradeoff.deviation_bounds(len(names)) if tradeoff.bounds_deviations else None
    f = (None if solver_values is None or not names else
         np.asarray(solver_values["f"], dtype=float).reshape(len(names), -1)[:, 0])
    for c, name in enumerate(names):
        if bounds[name] is None:
            raise VerificationError(f"{name}: no bound over the set, though the program "
                                    "held it over the set")
        if f is not None and bounds[name] > f[c] + session.tol:
            raise VerificationError(
                f"{name}: its worst case over the set, {bounds[name]:.9g}, exceeds the "
                f"program's bound {f[c]:.9g}; try solver='highs'")
        if eps is not None and bounds[name] > eps[c] + session.tol:
            raise VerificationError(
                f"{name}: its bound over the set, {bounds[name]:.9g}, exceeds epsilon "
                f"{eps[c]:g}; try solver='highs'")
    words = {n: c.measure_words for c, n in zip(session.criteria, names, strict=True)}
    exact = {n: c.exact for c, n in zip(session.criteria, names, strict=True)}
    guarantee = Guarantee(cs.level, value, bounds, cs.method, why, cs.kind, cs.reading,
                          gap, words, exact=exact, utility=problem.utility_name)
    return guarantee, tradeoff.objective(np.array([maximised]), F, belief)
