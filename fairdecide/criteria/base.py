"""The Criterion protocol: what a fairness criterion declares and supplies.

A criterion declares its :class:`Capabilities` for a problem (what it reads, whether it
is linear in the policy, what it can give each optimisation route), computes its exact
deviation from a decision table, and, for the program routes, writes its rows into a
program block (:meth:`Criterion.add_rows`). The optimiser picks a route from these
declarations; it never inspects a criterion's class.

Adding a criterion is one new class with these methods (see docs/architecture.md and
``tests/test_criterion_contract.py``, which defines one outside the package).
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol

import numpy as np

from fairdecide._common.validation import canonical, check_choice
from fairdecide.exceptions import FairdecideError
from fairdecide.worlds.table import decision_table

if TYPE_CHECKING:
    from fairdecide.criteria.terms import MarginalTerms
    from fairdecide.policies.base import Policy
    from fairdecide.problem import DecisionProblem
    from fairdecide.worlds.table import DecisionTable
    from fairdecide.worlds.world import World

__all__ = ["ByCriterion", "Capabilities", "Criterion", "CutSearch", "Expansion",
           "ProgramBlock", "SameInEveryWorld", "SetCriterion", "resolve_names",
           "short_name"]

#: How a criterion's rows are written: exactly (the criterion is linear), as a
#: first-order expansion at the block's point, or exactly with the conditioning masses
#: held at the point (the exact correction step of successive linearisation).
Expansion = Literal["exact", "first-order", "fixed-mass"]


@dataclass(frozen=True)
class Capabilities:
    """What a criterion is and supplies, for one problem.

    Attributes
    ----------
    reads : {"marginal", "rows"}
        "marginal": the deviation is a function of the group marginal P(z, a, y);
        "rows": of the policy rows and the units (individual fairness).
    linear : bool
        The deviation is convex in the policy and exactly representable in the program
        (a linear program, or an exponential-cone program when ``cone``).
    program : bool
        :meth:`Criterion.add_rows` writes rows: exactly when ``linear``, as first-order
        and fixed-mass expansions otherwise (successive linearisation).
    cone : bool
        The rows need an exponential-cone solver (KL measures).
    gradient : bool
        The criterion supplies a gradient (the gradient route, for parametric policies).
    cuts : bool
        Its rows are a family too large to write at once (one per pair of units, for
        Lipschitz fairness): a program carries only some of them, generated where the
        current policy violates them, and the final policy is certified against all
        (the constraint-generation route). The criterion supplies
        :meth:`Criterion.initial_cuts`, :meth:`Criterion.violated_cuts` and
        :meth:`Criterion.with_cuts`.
    parametric : bool
        For parametric policies it imposes smooth constraints on the parameters
        (:meth:`Criterion.parameter_constraints`) that certify it, instead of gradient
        terms of the group marginal (Lipschitz: a bound on the weight differences).
    outcome_free : bool
        The deviation never reads the outcome y (independence, capacities, Lipschitz):
        it is the same in every world with the same population, so a decision over a
        :class:`~fairdecide.uncertainty.confidence.ConfidenceSet` with the population given
        certifies it exactly.
    """

    reads: Literal["marginal", "rows"] = "marginal"
    linear: bool = True
    program: bool = True
    cone: bool = False
    gradient: bool = False
    cuts: bool = False
    parametric: bool = False
    outcome_free: bool = False

    def __post_init__(self) -> None:
        check_choice(self.reads, "reads", ("marginal", "rows"))
        for name in ("linear", "program", "cone", "gradient", "cuts", "parametric"):
            if not isinstance(getattr(self, name), bool):
                raise FairdecideError(
                    f"{name} must be True or False, got {getattr(self, name)!r}")


@dataclass(frozen=True)
class CutSearch:
    """Cuts a policy violates by more than a threshold, and its exact largest violation
    over the members examined (``checked``; the whole family unless the search was
    restricted to the units that changed). ``pending`` marks units that may have
    violated cuts not returned (a search returns only each unit's most violated)."""

    cuts: np.ndarray
    max_violation: float
    checked: int
    pending: np.ndarray | None = None
    #: what ``checked`` counts, for the certificate's words
    what: str = "pairs"


class ProgramBlock(Protocol):
    """What a criterion sees of the program for one scenario, and writes into it
    (implemented by :class:`fairdecide.optimize.program.assembly.CriterionBlock`).

    Attributes: ``problem``; ``units`` (the scenario's units), ``unit_weights`` (n_u,),
    ``unit_outcomes`` (n_u, n_a, n_y), ``n_groups``; ``f`` (the deviation variable to
    bound); ``m_cols`` (columns of the group marginal P(z, a, y), z-major) and
    ``marginal`` (its value at the expansion point); ``pi_cols`` (n_free, n_a) and
    ``free_of_unit`` (n_u,) (the free policy columns and which row each unit uses) and
    ``point`` (the free rows at the expansion point).
    """

    problem: DecisionProblem
    units: Any
    unit_weights: np.ndarray
    unit_outcomes: np.ndarray
    n_groups: int
    f: int
    m_cols: np.ndarray
    marginal: np.ndarray
    pi_cols: np.ndarray
    free_of_unit: np.ndarray
    point: np.ndarray

    def new_vars(self, count: int, low: float = 0.0, high: float = np.inf) -> np.ndarray:
        """New variables; returns their columns."""

    def kept_vars(self, count: int, low: float = 0.0, high: float = np.inf
                  ) -> tuple[np.ndarray, bool]:
        """The criterion's own variables for this block, kept across the rounds of
        constraint generation: created on the first call (True), the same columns when
        cuts are appended later (False)."""

    def ball_minimum(self, cols: np.ndarray, vals: np.ndarray, center: np.ndarray,
                     radius: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """For B L1 balls (within the simplex) of n children each, the child i the
        expression vals[b, i] . x[cols[b, i]] (shapes (B, n, w)): columns and
        coefficients (B, m) of an expression at most min_{q in ball b} q . child_b, equal
        to it at the program's best (the ball's dual rows are written)."""

    def add_ub_dense(self, mat: Any, cols: np.ndarray, rhs: np.ndarray) -> None:
        """Rows mat @ x[cols] <= rhs."""

    def add_eq_dense(self, mat: Any, cols: np.ndarray, rhs: np.ndarray) -> None:
        """Rows mat @ x[cols] == rhs."""

    def add_abs_epigraph(self, D: Any, d: np.ndarray, cols: np.ndarray, weight: np.ndarray,
                         kind: str = "sum") -> None:
        """f >= sum (or max) of weight_r |D_r x[cols] + d_r|."""

    def add_kl(self, cols: np.ndarray, A_group: np.ndarray, b_group: np.ndarray,
               A_pool: np.ndarray, b_pool: np.ndarray, weight: np.ndarray) -> None:
        """f >= sum_r weight_r KL(A_group x + b_group || A_pool x + b_pool)_r."""


class Criterion(abc.ABC):
    """A fairness criterion: a deviation F(pi) >= 0 computed from the decision table."""

    @property
    @abc.abstractmethod
    def label(self) -> str:
        """Name used in results and tables: the criterion with its measure and reference
        where it has several (``"separation, largest pairwise gap"``), in the form
        ``"<short name>, <measure>"`` (:func:`short_name` reads the first part back)."""

    @property
    def short_label(self) -> str:
        """The name without its measure (``"separation"``): what results accept as a
        lookup where it is unambiguous (:class:`ByCriterion`)."""
        return short_name(self.label)

    @property
    def measure_words(self) -> str:
        """What the deviation measures, in words, for sentences such as "separation at
        most 0.05 as <measure_words>" (:meth:`tolerance_text`)."""
        return "its deviation"

    def tolerance_text(self, bound: float, word: str = "at most") -> str:
        """How a tolerance or a bound of this criterion reads, in the one convention of
        every output: ``"separation at most 0.05 as the largest gap between two groups'
        rates of an action given the outcome"``."""
        return f"{self.short_label} {word} {bound:.4g} as {self.measure_words}"

    @abc.abstractmethod
    def capabilities(self, problem: DecisionProblem) -> Capabilities:
        """What the criterion reads and supplies for ``problem``."""

    @abc.abstractmethod
    def deviation_from_table(self, table: DecisionTable, problem: DecisionProblem) -> float:
        """The exact deviation F of the policy whose decision table is ``table``."""

    def add_rows(self, block: ProgramBlock, how: Expansion) -> None:
        """Write the rows bounding this criterion's deviation variable ``block.f`` (see
        :class:`ProgramBlock`)."""
        raise FairdecideError(f"criterion {self.label!r} supplies no program rows")

    def gradient_terms(self, M: np.ndarray, problem: DecisionProblem) -> MarginalTerms:
        """The deviation at the group marginal ``M`` as smooth terms and their Jacobian
        (:class:`~fairdecide.criteria.terms.MarginalTerms`), for the gradient route
        (criteria that declare ``Capabilities.gradient``)."""
        raise FairdecideError(f"criterion {self.label!r} supplies no gradient terms")

    def initial_cuts(self, units: Any) -> np.ndarray:
        """The cuts a first program carries (criteria that declare ``Capabilities.cuts``)."""
        raise FairdecideError(f"criterion {self.label!r} generates no cuts")

    def violated_cuts(self, rows: np.ndarray, units: Any, threshold: float,
                      per_unit: int, touching: np.ndarray | None = None) -> CutSearch:
        """Cuts the policy rows ``rows`` (one per unit) violate by more than
        ``threshold`` (at most ``per_unit`` per unit, the most violated), with the exact
        largest violation; only cuts involving the units ``touching`` (a boolean mask)
        when given."""
        raise FairdecideError(f"criterion {self.label!r} generates no cuts")

    def with_cuts(self, cuts: np.ndarray) -> Criterion:
        """The criterion restricted to ``cuts``: its rows and deviation cover only them."""
        raise FairdecideError(f"criterion {self.label!r} generates no cuts")

    def parameter_constraints(self, family: Any) -> Any:
        """For a parametric family (its member for the units), a function theta ->
        (g, dg/dtheta) of constraints g(theta) >= 0 that certify the criterion
        (criteria that declare ``Capabilities.parametric``)."""
        raise FairdecideError(f"criterion {self.label!r} constrains no parameters")

    def parameter_certificate(self, policy: Any) -> dict[str, Any]:
        """What certifies the criterion for the parametric ``policy`` found."""
        raise FairdecideError(f"criterion {self.label!r} constrains no parameters")

    def is_linear(self, problem: DecisionProblem) -> bool:
        """Whether the deviation is convex in the policy for ``problem``."""
        return self.capabilities(problem).linear

    def deviation(self, policy: Policy, world: World, problem: DecisionProblem) -> float:
        """The deviation F of ``policy`` in ``world``, from the decision table."""
        return self.deviation_from_table(decision_table(problem, world, policy), problem)

    def over_set(self, confidence: Any, problem: DecisionProblem) -> SetCriterion | None:
        """This criterion over every world of a
        :class:`~fairdecide.uncertainty.confidence.ConfidenceSet`: a
        :class:`SetCriterion`, which states its bound over the set for a given policy
        (:meth:`SetCriterion.bound`) and, where its capabilities say ``program``, holds
        that bound inside a program; None where nothing over the set is known. By
        default a criterion that does not read the outcome is the same in every world
        of a set with the population given (:class:`SameInEveryWorld`)."""
        caps = self.capabilities(problem)
        return (SameInEveryWorld(self, confidence, problem)
                if caps.outcome_free and not caps.cuts and confidence.population_given
                else None)


@dataclass(frozen=True, eq=False)
class SetCriterion(Criterion):
    """A criterion over every world of a confidence set (:meth:`Criterion.over_set`):
    its deviation variable in a program bounds the criterion over the whole set, and
    :meth:`bound` states that bound for a given policy, recomputed from the policy alone
    (what a guarantee certifies, and what verifies the program's). It bounds ``base``
    over ``confidence`` for ``problem``, and is named and worded as ``base`` is."""

    base: Criterion
    confidence: Any
    problem: Any

    @property
    def label(self) -> str:
        return self.base.label

    @property
    def measure_words(self) -> str:
        return self.base.measure_words

    @abc.abstractmethod
    def bound(self, policy: Policy) -> float:
        """An upper bound of the policy's deviation in every world of the set."""

    @property
    def exact(self) -> bool:
        """Whether :meth:`bound` is the exact worst case over the set (else an upper
        bound of it)."""
        return False


@dataclass(frozen=True, eq=False)
class SameInEveryWorld(SetCriterion):
    """A criterion whose deviation is the same in every world of a set (it does not read
    the outcome, and the set's population is given): in a program it is itself, and its
    bound is its deviation at the set's centre, exactly."""

    @property
    def exact(self) -> bool:
        return True

    def capabilities(self, problem: DecisionProblem) -> Capabilities:
        return self.base.capabilities(problem)

    def deviation_from_table(self, table: DecisionTable, problem: DecisionProblem) -> float:
        return self.base.deviation_from_table(table, problem)

    def add_rows(self, block: ProgramBlock, how: Expansion) -> None:
        self.base.add_rows(block, how)

    def bound(self, policy: Policy) -> float:
        return self.base.deviation(policy, self.confidence.center, self.problem)


#: The criteria that have a name, by name: each preset registers itself (:func:`named`)
#: when fairdecide.criteria is imported, which importing this module does first.
NAMED: dict[str, Callable[[], Criterion]] = {}


def named(name: str) -> Callable[[Callable[..., Criterion]], Callable[..., Criterion]]:
    """Register a criterion factory, callable without arguments, under ``name`` (what
    :func:`as_criteria` accepts in place of the criterion)."""

    def register(factory: Callable[..., Criterion]) -> Callable[..., Criterion]:
        NAMED[name] = factory
        return factory

    return register


def as_criteria(criteria: Any, name: str = "criteria", *, kind: type | None = None,
                what: str = "a fairness criterion such as Independence()"
                ) -> list[Criterion]:
    """The criteria every entry point accepts, as a checked list: None (none), a
    criterion, a name of one ("independence", "separation", "sufficiency"), or a
    sequence of criteria and names. ``kind``: the class every criterion must be an
    instance of (``what`` says so in the error), for entry points that take only some.

    Examples
    --------
    >>> from fairdecide.criteria.base import as_criteria
    >>> [c.label for c in as_criteria(["independence", "separation"])]
    ['independence, TV summed vs pooled', 'separation, TV summed vs pooled']
    """
    if criteria is None:
        return []
    items = [criteria] if isinstance(criteria, str | Criterion) else criteria
    try:
        items = list(items)
    except TypeError:
        raise FairdecideError(
            f"{name} must be a criterion, a criterion name {sorted(NAMED)} or a sequence "
            f"of them, got {type(criteria).__name__}") from None
    out = []
    for i, c in enumerate(items):
        if isinstance(c, str):
            key = canonical(c, list(NAMED))  # in any case, as every string option
            if key is None:
                raise FairdecideError(
                    f"{name}[{i}] is the unknown criterion name {c!r}; use one of "
                    f"{sorted(NAMED)} or a criterion object")
            c = NAMED[key]()
        if not isinstance(c, kind or Criterion):
            raise FairdecideError(f"{name}[{i}] must be {what}, got {type(c).__name__}")
        out.append(c)
    return out


def resolve_names(criteria: Sequence[Criterion]) -> list[str]:
    """Unique names for a list of criteria, the one function every output names them by
    (results, guarantees, frontiers, reports, the command line): each criterion's
    :attr:`~Criterion.label`, which names its measure and reference, with a suffix
    ``#2``, ``#3`` only where the same criterion is given twice.

    Examples
    --------
    >>> import fairdecide as fd
    >>> resolve_names([fd.Separation(), fd.Separation(measure="max", reference="pairwise")])
    ['separation, TV summed vs pooled', 'separation, largest pairwise gap']
    """
    names: list[str] = []
    for c in as_criteria(criteria):
        base = c.label
        name, k = base, 2
        while name in names:
            name, k = f"{base}#{k}", k + 1
        names.append(name)
    return names


def short_name(name: str) -> str:
    """The criterion's short name in a full one: ``"separation, largest pairwise gap"``
    and ``"separation, TV summed vs pooled#2"`` give ``"separation"``."""
    return name.split(", ", 1)[0].split("#", 1)[0]


class ByCriterion(dict):
    """Values keyed by the criteria's full names (:func:`resolve_names`), which also
    answers to a criterion's short name where exactly one key has it, and to the
    criterion itself: ``res.deviations["separation"]`` is the one separation's deviation,
    and a KeyError naming the full names where two separations were asked for.

    Examples
    --------
    >>> d = ByCriterion({"separation, TV summed vs pooled": 0.05,
    ...                  "separation, largest pairwise gap": 0.025,
    ...                  "independence, TV summed vs pooled": 0.01})
    >>> d["independence"], "separation, largest pairwise gap" in d
    (0.01, True)
    >>> d["separation"]  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    KeyError: "'separation' names 2 criteria here: ...; use the full name"
    """

    def _key(self, key: Any) -> Any:
        if isinstance(key, Criterion):
            key = key.label
        if not isinstance(key, str) or dict.__contains__(self, key):
            return key
        found = [k for k in self if isinstance(k, str) and short_name(k) == key]
        if len(found) > 1:
            raise KeyError(f"{key!r} names {len(found)} criteria here: "
                           f"{', '.join(map(repr, found))}; use the full name")
        return found[0] if found else key

    def __getitem__(self, key: Any) -> Any:
        return dict.__getitem__(self, self._key(key))

    def __contains__(self, key: Any) -> bool:
        try:
            return dict.__contains__(self, self._key(key))
        except KeyError:
            return False

    def get(self, key: Any, default: Any = None) -> Any:
        return self[key] if key in self else default
