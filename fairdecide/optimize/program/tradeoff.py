"""The book's fairness-utility trade-offs as small frozen objects.

Each trade-off knows its exact objective (to minimise, from per-scenario utilities U_k
and deviations F_ck), when a policy is feasible, what verification checks, how to
describe itself, and how to write its objective and constraints into a program
(:class:`fairdecide.optimize.program.assembly.Assembly`). Aggregation over a belief's scenarios
(mean or worst case, CVaR for chance constraints) is part of each.
"""

from __future__ import annotations

import abc
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from fairdecide._common.validation import as_number, plain
from fairdecide.exceptions import FairdecideError
from fairdecide.uncertainty.beliefs import Belief, cvar

if TYPE_CHECKING:
    from fairdecide.optimize.program.assembly import Assembly

__all__ = [
    "FairnessConstraint",
    "MaxUtility",
    "MinViolation",
    "Mixture",
    "Tradeoff",
    "UtilityConstraint",
    "tolerances",
]

#: What a fairness tolerance may be, as every door's error message says it.
TOLERANCE = ">= 0 (inf for no bound): one number, or a list of them, one per criterion"


def tolerances(epsilon: Any, n_criteria: int | None = None, also: str = ""
               ) -> tuple[float, ...]:
    """``epsilon`` as one tolerance per criterion: the one check of a fairness tolerance,
    whichever door it came through (``optimize_policy(epsilon=...)``,
    :class:`FairnessConstraint`, the estimators' ``epsilon``).

    A number >= 0 (``inf``: no bound) is every criterion's tolerance (repeated
    ``n_criteria`` times; None: kept as one); a sequence holds one per criterion
    (``n_criteria`` of them, or one). Anything else (a negative or NaN entry, a string,
    a nested or empty sequence, a count that fits no criteria) raises one error naming
    ``epsilon``, the value as the caller wrote it and what is allowed (``also``: the
    door's other choices, such as the estimators' "'auto'").

    Examples
    --------
    >>> tolerances(0.05, 2)
    (0.05, 0.05)
    >>> tolerances(-1)
    Traceback (most recent call last):
    ...
    fairdecide.exceptions.FairdecideError: epsilon must be >= 0 (inf for no bound): one \
number, or a list of them, one per criterion; got -1
    """
    shown = ([plain(e) for e in epsilon] if isinstance(epsilon, np.ndarray) and epsilon.ndim
             else type(epsilon)(plain(e) for e in epsilon)
             if isinstance(epsilon, list | tuple) else plain(epsilon))

    def refuse(why: str = "") -> FairdecideError:
        return FairdecideError(f"epsilon must be {TOLERANCE}{also}; got {shown!r}{why}")

    one = not isinstance(epsilon, list | tuple | np.ndarray) or np.ndim(epsilon) == 0
    items = [plain(epsilon)] if one else list(epsilon)
    if not items:
        raise refuse(" (an empty list)")
    out = []
    for i, e in enumerate(items):
        where = "" if one else f" (entry {i}, {plain(e)!r}, "
        if isinstance(e, str | bytes | bool | np.bool_) or not np.isscalar(e):
            raise refuse(where and where + "is not a number)")
        try:
            value = float(e)
        except (TypeError, ValueError):
            raise refuse(where and where + "is not a number)") from None
        if np.isnan(value) or value < 0:
            raise refuse(where and where + ("is NaN)" if np.isnan(value) else
                                            "is negative)"))
        out.append(value)
    if n_criteria is not None and len(out) == 1:
        out *= n_criteria
    if n_criteria is not None and len(out) != n_criteria:
        raise FairdecideError(
            f"epsilon must be one number, or one per criterion ({n_criteria} "
            f"{'criterion' if n_criteria == 1 else 'criteria'} here); got {shown!r} "
            f"({len(out)} numbers)")
    return tuple(out)


def aggregated_deviations(F: np.ndarray, belief: Belief, chance_delta: float | None
                          ) -> np.ndarray:
    """Each criterion's deviation as a tolerance bounds it: the belief's mean or worst
    case over scenarios, or their CVaR_{1-delta} with a chance constraint."""
    if chance_delta is not None:
        return np.array([cvar(f, belief.weights, chance_delta) for f in F])
    return np.array([belief.combine_deviation(f) for f in F])


@dataclass(frozen=True)
class Tradeoff(abc.ABC):
    """One trade-off between expected utility U and the deviations F.

    A trade-off that bounds the deviations by tolerances (``bounds_deviations``) has the
    fields ``epsilon`` (one tolerance per criterion) and ``chance_delta``.
    """

    #: Short name used in messages ("the epsilon program failed ...").
    kind: ClassVar[str] = ""
    #: Whether the trade-off bounds the deviations by tolerances (then an infeasible
    #: program is diagnosed by the smallest achievable deviations).
    bounds_deviations: ClassVar[bool] = False
    #: The CVaR level of a chance constraint (a field of the trade-offs that have one).
    chance_delta = None
    #: How many criteria the trade-off needs: None for any number >= 1, 0 for none.
    n_criteria: ClassVar[int | None] = None

    @abc.abstractmethod
    def describe(self, names: Sequence[str]) -> str:
        """A readable statement of the trade-off."""

    @abc.abstractmethod
    def merit(self, U: np.ndarray, F: np.ndarray, belief: Belief) -> float:
        """The exact objective to minimise, from utilities (K,) and deviations (C, K)."""

    def feasible(self, U: np.ndarray, F: np.ndarray, belief: Belief, tol: float,
                 utility_tol: float) -> bool:
        """Whether the constraints hold: :meth:`violation` within :meth:`violation_tol`."""
        return self.violation(U, F, belief) <= self.violation_tol(tol, utility_tol)

    def excesses(self, U: np.ndarray, F: np.ndarray, belief: Belief, names: Sequence[str],
                 tol: float, utility_tol: float) -> dict[str, tuple[float, float]]:
        """The constraint checks verification reports, each as (how far the recomputed
        value lies past its bound, the allowance): it passes within the allowance."""
        return {}

    def objective(self, U: np.ndarray, F: np.ndarray, belief: Belief) -> float:
        """The objective as reported to users (a value to maximise, or the deviation
        minimised)."""
        return -self.merit(U, F, belief)

    def describe_belief(self) -> str:
        """What the trade-off adds to the description of a belief's aggregation."""
        return ""

    @property
    def needs_utility_optimum(self) -> bool:
        """Whether the trade-off is stated relative to the best utility U*."""
        return False

    def with_utility_optimum(self, u_star: float) -> Tradeoff:
        """The trade-off once U* is known."""
        return self

    @property
    def tight_deviations(self) -> bool:
        """Whether the program's deviation variables equal the deviations at the optimum
        (they are penalised), so the solver's values can be checked against them."""
        return False

    @abc.abstractmethod
    def write(self, asm: Assembly) -> None:
        """Write the objective and constraints into the program being assembled."""

    # What the routes that do not write a program (the gradient route) ask of a
    # trade-off, so that none of them dispatches on its class.
    def deviation_bounds(self, n: int) -> tuple[float, ...]:
        """Each criterion's bound on its aggregated deviation (inf: unbounded)."""
        return (np.inf,) * n

    @property
    def utility_floor(self) -> float | None:
        """The floor on the aggregated utility, if the trade-off sets one."""
        return None

    def value_weights(self) -> tuple[float, float, float]:
        """(wu, wf, sign): the per-scenario value V_k = wu U_k + wf sum_c F_ck that the
        trade-off aggregates, and the sign that makes sign x aggregate(V) a value to
        minimise. Default: U, maximised."""
        return 1.0, 0.0, -1.0

    @property
    def penalises_deviations(self) -> bool:
        """Whether the deviations enter the objective only (never a constraint)."""
        return False

    def violation(self, U: np.ndarray, F: np.ndarray, belief: Belief) -> float:
        """How far exact values miss the trade-off's constraints (0 when they hold)."""
        return 0.0

    def violation_tol(self, tol: float, utility_tol: float) -> float:
        """The tolerance :meth:`violation` is held to."""
        return tol

    def tightened(self, miss: float) -> Tradeoff:
        """The trade-off with its constraints tightened by twice ``miss``."""
        return self

    def relaxed(self, deviations: np.ndarray, share: float) -> Tradeoff | None:
        """The constraints moved toward the aggregated ``deviations`` of a start, by
        ``share`` of the way (a continuation stage); None when nothing is bounded."""
        return None


@dataclass(frozen=True)
class MaxUtility(Tradeoff):
    """Maximise expected utility (no fairness term)."""

    kind: ClassVar[str] = "utility"
    n_criteria: ClassVar[int | None] = 0

    def describe(self, names: Sequence[str]) -> str:
        return "maximise expected utility (no fairness criterion)"

    def merit(self, U: np.ndarray, F: np.ndarray, belief: Belief) -> float:
        return -belief.combine(U)

    def write(self, asm: Assembly) -> None:
        asm.maximize(asm.scenario_utility)


@dataclass(frozen=True)
class Mixture(Tradeoff):
    """Maximise (1 - lam) U - lam F."""

    kind: ClassVar[str] = "mixture"

    lam: float = 0.0

    def __post_init__(self) -> None:
        if not 0.0 <= as_number(self.lam, "lam") <= 1.0:
            raise FairdecideError(f"lam must lie in [0, 1], got {self.lam!r}")
        object.__setattr__(self, "lam", float(self.lam))

    @property
    def tight_deviations(self) -> bool:
        return self.lam > 0

    @property
    def penalises_deviations(self) -> bool:
        return True

    def value_weights(self) -> tuple[float, float, float]:
        return 1.0 - self.lam, -self.lam, -1.0

    def describe(self, names: Sequence[str]) -> str:
        return f"maximise (1 - lam) U - lam F with lam = {self.lam:g}"

    def merit(self, U: np.ndarray, F: np.ndarray, belief: Belief) -> float:
        return -belief.combine((1 - self.lam) * U - self.lam * F.sum(axis=0))

    def write(self, asm: Assembly) -> None:
        def value(k: int) -> tuple[np.ndarray, np.ndarray]:
            cols, vals = asm.scenario_utility(k, 1.0 - self.lam)
            dev = asm.F[:, k]
            return np.append(cols, dev), np.append(vals, np.full(len(dev), -self.lam))

        asm.maximize(value)


@dataclass(frozen=True)
class FairnessConstraint(Tradeoff):
    """Maximise U subject to F_c <= epsilon_c (mean, worst case or CVaR over scenarios)."""

    kind: ClassVar[str] = "epsilon"
    bounds_deviations: ClassVar[bool] = True

    epsilon: float | tuple[float, ...] = ()
    chance_delta: float | None = None

    def __post_init__(self) -> None:
        eps = tolerances(self.epsilon)
        _check_delta(self.chance_delta)
        object.__setattr__(self, "epsilon", eps)

    def describe(self, names: Sequence[str]) -> str:
        tol = ", ".join(f"{n} <= {e:g}" for n, e in zip(names, self.epsilon, strict=True))
        return f"maximise U subject to {tol}"

    def describe_belief(self) -> str:
        if self.chance_delta is None:
            return ""
        return f"; CVaR_{1 - self.chance_delta:g} of each deviation"

    def merit(self, U: np.ndarray, F: np.ndarray, belief: Belief) -> float:
        return -belief.combine(U)

    def deviation_bounds(self, n: int) -> tuple[float, ...]:
        return self.epsilon

    def violation(self, U: np.ndarray, F: np.ndarray, belief: Belief) -> float:
        agg = aggregated_deviations(F, belief, self.chance_delta)
        eps = np.asarray(self.epsilon)
        over = np.where(np.isinf(eps), 0.0, agg - eps)  # inf: no bound, whatever agg is
        return float(np.max(np.maximum(over, 0.0), initial=0.0))

    def tightened(self, miss: float) -> Tradeoff:
        return replace(self, epsilon=tuple(max(0.0, e - 2 * miss) for e in self.epsilon))

    def relaxed(self, deviations: np.ndarray, share: float) -> Tradeoff | None:
        return replace(self, epsilon=tuple(
            e + share * max(0.0, a - e) if np.isfinite(e) else e
            for e, a in zip(self.epsilon, deviations, strict=True)))

    def excesses(self, U: np.ndarray, F: np.ndarray, belief: Belief, names: Sequence[str],
                 tol: float, utility_tol: float) -> dict[str, tuple[float, float]]:
        agg = aggregated_deviations(F, belief, self.chance_delta)
        word = "" if self.chance_delta is None else "CVaR of "
        return {f"{word}{n} <= epsilon": (float(agg[c] - e) if np.isfinite(e) else -np.inf,
                                          tol)  # inf: no bound, whatever the deviation
                for c, (n, e) in enumerate(zip(names, self.epsilon, strict=True))}

    def write(self, asm: Assembly) -> None:
        asm.maximize(asm.scenario_utility)
        for c, eps in enumerate(self.epsilon):
            if np.isfinite(eps):
                asm.bound_deviation(c, eps, self.chance_delta)


@dataclass(frozen=True)
class UtilityConstraint(Tradeoff):
    """Minimise the total deviation subject to U >= U* - slack (``utility_min`` is set
    once U* is known). Without ``slack``: no floor, the smallest achievable deviation."""

    kind: ClassVar[str] = "slack"

    slack: float | None = None
    utility_min: float | None = None
    chance_delta: float | None = None

    def __post_init__(self) -> None:
        if self.slack is not None and not (np.isfinite(as_number(self.slack, "slack"))
                                           and self.slack >= 0):
            raise FairdecideError(f"slack must be a finite number >= 0, got {self.slack!r}")
        _check_delta(self.chance_delta)

    @property
    def tight_deviations(self) -> bool:
        return True

    @property
    def needs_utility_optimum(self) -> bool:
        return self.utility_min is None and self.slack is not None

    @property
    def utility_floor(self) -> float | None:
        return self.utility_min

    def value_weights(self) -> tuple[float, float, float]:
        return 0.0, 1.0, 1.0  # the total deviation, minimised

    def violation(self, U: np.ndarray, F: np.ndarray, belief: Belief) -> float:
        if self.utility_min is None:
            return 0.0
        return max(0.0, self.utility_min - belief.combine(U))

    def violation_tol(self, tol: float, utility_tol: float) -> float:
        return utility_tol

    def tightened(self, miss: float) -> Tradeoff:
        if self.utility_min is None:
            return self
        return replace(self, utility_min=self.utility_min + 2 * miss)

    def with_utility_optimum(self, u_star: float) -> Tradeoff:
        return replace(self, utility_min=u_star - self.slack)

    def describe(self, names: Sequence[str]) -> str:
        if self.slack is None:
            return "minimise F"
        return f"minimise F subject to U >= U* - {self.slack:g}"

    def merit(self, U: np.ndarray, F: np.ndarray, belief: Belief) -> float:
        if self.chance_delta is not None:
            return float(aggregated_deviations(F, belief, self.chance_delta).sum())
        return -belief.combine(-F.sum(axis=0))  # mean, or worst (largest) total

    def objective(self, U: np.ndarray, F: np.ndarray, belief: Belief) -> float:
        return self.merit(U, F, belief)

    def excesses(self, U: np.ndarray, F: np.ndarray, belief: Belief, names: Sequence[str],
                 tol: float, utility_tol: float) -> dict[str, tuple[float, float]]:
        if self.utility_min is None:
            return {}
        return {"utility >= U* - slack":
                (float(self.utility_min - belief.combine(U)), utility_tol)}

    def write(self, asm: Assembly) -> None:
        if self.chance_delta is not None:
            asm.minimize_cvar_sum(self.chance_delta)
        else:
            asm.maximize(lambda k: (asm.F[:, k], -np.ones(asm.F.shape[0])))
        if self.utility_min is not None and np.isfinite(self.utility_min):
            asm.utility_floor(self.utility_min)


@dataclass(frozen=True)
class MinViolation(Tradeoff):
    """Minimise the total violation sum_c max(0, F_c - epsilon_c): the feasibility phase
    of successive linearisation."""

    kind: ClassVar[str] = "violation"

    epsilon: tuple[float, ...] = ()
    chance_delta: float | None = None
    utility_weight: float = 0.0

    def describe(self, names: Sequence[str]) -> str:
        return "minimise the violation of the fairness tolerances"

    def merit(self, U: np.ndarray, F: np.ndarray, belief: Belief) -> float:
        agg = aggregated_deviations(F, belief, self.chance_delta)
        viol = float(np.maximum(agg - np.asarray(self.epsilon), 0).sum())
        if self.utility_weight:
            return viol - self.utility_weight * belief.combine(U)
        return viol

    def objective(self, U: np.ndarray, F: np.ndarray, belief: Belief) -> float:
        return self.merit(U, F, belief)

    def write(self, asm: Assembly) -> None:
        asm.minimize_violation(self.epsilon, self.chance_delta)
        if self.utility_weight:
            asm.maximize(lambda k: asm.scenario_utility(k, self.utility_weight))


def _check_delta(delta: float | None) -> None:
    if delta is not None and not 0.0 < as_number(delta, "chance_delta") < 1.0:
        raise FairdecideError(f"chance_delta must lie in (0, 1), got {delta!r}")
