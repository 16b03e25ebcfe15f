"""Capacity: the expected share of people given an action, bounded.

Most decisions about people are made under a budget: a university admits k students, a
court has so many places. :class:`Capacity` bounds the share of people who receive a
set of actions A, overall or within every group,

    at_least <= P(a in A) = sum_{x, z} P(x, z) sum_{a in A} pi(a | x, z) <= at_most,

as a criterion whose deviation is the largest excess over the bounds. Given as
``optimize_policy(..., capacity=...)`` (or among the criteria with ``epsilon=0`` for
it), the capacity is met in expectation (exactly, as one linear row of the program);
:func:`fairdecide.policies.sample_cohort` then turns the fractional selection of a fixed
population into cohorts of exactly k people with the same inclusion probabilities.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp

from fairdecide._common.validation import as_bool, as_labels, as_real, check_instance, plain
from fairdecide.criteria.base import (
    Capabilities,
    Criterion,
    Expansion,
    ProgramBlock,
    SameInEveryWorld,
    SetCriterion,
)
from fairdecide.criteria.terms import MarginalTerms
from fairdecide.exceptions import FairdecideError

if TYPE_CHECKING:
    from fairdecide.problem import DecisionProblem
    from fairdecide.worlds.table import DecisionTable

__all__ = ["Capacity"]

#: Groups of smaller mass have no share to bound (as the conditional criteria skip them).
MASS_TOL = 1e-12


def _is_count(value: Any) -> bool:
    """A number above 1 (a count of places given where a share is asked for)."""
    try:
        return not isinstance(value, bool) and float(value) > 1 and np.isfinite(
            float(value))
    except (TypeError, ValueError):
        return False


@dataclass(frozen=True)
class Capacity(Criterion):
    """The share of people given the actions ``actions``, bounded above and/or below.

    With A the set of actions, the share is s = P(a in A) = sum_{z, a in A, y}
    P(z, a, y) (overall), or s_z = P(a in A | z) for every group z of positive mass
    (``per_group=True``). The deviation is the largest excess over the bounds::

        F = max(0, max_s (s - at_most), max_s (at_least - s))

    over the bounded shares: F = 0 iff every share is within [at_least, at_most]. It is
    linear in the policy (the group masses P(z) do not depend on it), so ``epsilon=0``
    makes the capacity a hard constraint of the exact program, and a positive epsilon
    lets the share exceed the bound by at most epsilon. The share does not depend on the
    outcome model: the scenarios of a belief differ in it only when their weights of the
    units P(x, z) differ; a belief's ``"worst"`` aggregate bounds every scenario's
    excess, ``"mean"`` their mean (with epsilon = 0 both hold every scenario).

    Bounds are shares in [0, 1]. For a count, k places among the n people of a fixed
    population (a :class:`~fairdecide.SampleWorld` of equal weights), use
    ``at_most=k / n``; the optimal policy then gives each person a selection probability
    p_i with sum_i p_i <= k, and :func:`~fairdecide.policies.sample_cohort` draws
    cohorts of exactly k with those probabilities.

    Parameters
    ----------
    actions : label or list of labels
        The action (or set of actions) whose share is bounded, by label
        (``problem.action_labels``).
    at_most, at_least : float in [0, 1], optional
        The bounds on the share; at least one is needed, and at_least <= at_most.
    per_group : bool, default=False
        Bound every group's share P(a in A | z) instead of the overall one.
    name : str, optional
        Label in results (default ``"capacity[<actions>]"``).

    Examples
    --------
    Grant at most 30% of loans, with no fairness criterion: the best policy grants to
    the 30% of people where granting gains most (gain 1 - 4 P(default)): the high band
    of group A (25% of the people, gain 0.8), then half of the high band of group B
    (10%, gain 0.6):

    >>> import numpy as np
    >>> import fairdecide as fd
    >>> problem = fd.DecisionProblem(np.array([[0.0, 0.0], [1.0, -3.0]]),
    ...                              action_labels=("refuse", "grant"))
    >>> world = fd.TabularWorld(np.array([[0.1, 0.2], [0.2, 0.15], [0.25, 0.1]]),
    ...                         np.array([[[.6, .4], [.55, .45]], [[.8, .2], [.75, .25]],
    ...                                   [[.95, .05], [.9, .1]]]))
    >>> cap = fd.Capacity("grant", at_most=0.3)
    >>> res = fd.optimize_policy(problem, world, cap, epsilon=0.0)
    >>> res.policy.table[2, :, 1].round(6).tolist(), round(res.deviations["capacity[grant]"], 9)
    ([1.0, 0.5], 0.0)
    >>> cap.deviation(fd.TabularPolicy.constant(3, 2, [0.5, 0.5]), world, problem)
    0.2
    """

    actions: object
    at_most: float | None = None
    at_least: float | None = None
    per_group: bool = False
    name: str | None = None

    def __post_init__(self) -> None:
        one = isinstance(self.actions, str | bytes | int | float | np.generic) or (
            isinstance(self.actions, np.ndarray) and self.actions.ndim == 0)
        actions = ((plain(self.actions),) if one else
                   as_labels(self.actions, "actions", "action label", non_empty=True))
        if len(set(actions)) != len(actions):
            raise FairdecideError(f"actions must not repeat an action, got {actions!r}")
        object.__setattr__(self, "actions", actions)
        for bound in ("at_most", "at_least"):
            value = getattr(self, bound)
            if value is None:
                continue
            if _is_count(value):
                raise FairdecideError(
                    f"{bound} is a share of the people, in [0, 1], got {value!r}; for "
                    f"{value!r} places among n people, use {bound}={value!r} / n")
            object.__setattr__(self, bound, as_real(
                value, f"{bound} (a share of the people; k places among n: k / n)", 0.0,
                1.0))
        if self.at_most is None and self.at_least is None:
            raise FairdecideError(
                "Capacity needs at_most or at_least (a share in [0, 1]; for k places "
                "among n people, at_most=k / n)")
        if (self.at_most is not None and self.at_least is not None
                and self.at_least > self.at_most):
            raise FairdecideError(
                f"at_least ({self.at_least}) must not exceed at_most ({self.at_most})")
        object.__setattr__(self, "per_group", as_bool(self.per_group, "per_group"))
        if self.name is not None:
            check_instance(self.name, "name", str, "a string (the label in results) or None")

    @property
    def label(self) -> str:
        """Name used in results and tables."""
        if self.name:
            return self.name
        return ("capacity[" + ",".join(map(str, self.actions)) + "]"
                + (" per group" if self.per_group else ""))

    def capabilities(self, problem: DecisionProblem) -> Capabilities:
        """Reads the group marginal (not its outcomes); linear for every problem; gives
        gradient terms."""
        return Capabilities(reads="marginal", linear=True, program=True, gradient=True,
                            outcome_free=True)

    # ------------------------------------------------------------------ structure
    def share_rows(self, M: np.ndarray, problem: DecisionProblem) -> np.ndarray:
        """The bounded shares as rows over the flattened group marginal: ``A @ m`` with
        m = vec P(z, a, y) (z-major) gives the overall share (one row) or each group's
        share (one row per group of positive mass), shape (n_shares, n_z * n_a * n_y).
        Exact for every policy: the masses divided by do not depend on it."""
        M = np.asarray(M, dtype=float)
        codes = problem.action_codes(list(self.actions), name="actions")
        in_a = np.zeros(M.shape[1])
        in_a[codes] = 1.0
        mass = M.sum(axis=(1, 2))
        pattern = np.broadcast_to(in_a[:, None], M.shape[1:]).reshape(-1)
        n_z, size = M.shape[0], pattern.size
        if not self.per_group:
            total = mass.sum()
            if total <= MASS_TOL:
                return np.zeros((0, n_z * size))
            return np.tile(pattern, n_z)[None, :] / total
        groups = np.flatnonzero(mass > MASS_TOL)
        A = np.zeros((len(groups), n_z, size))
        A[np.arange(len(groups)), groups] = pattern[None, :] / mass[groups, None]
        return A.reshape(len(groups), -1)

    def _excess_rows(self, M: np.ndarray, problem: DecisionProblem
                     ) -> tuple[np.ndarray, np.ndarray]:
        """Rows E and offsets e with E m + e = the excesses (s - at_most, at_least - s)
        over the bounded shares."""
        A = self.share_rows(M, problem)
        E, e = [], []
        if self.at_most is not None:
            E.append(A)
            e.append(np.full(len(A), -self.at_most))
        if self.at_least is not None:
            E.append(-A)
            e.append(np.full(len(A), self.at_least))
        return np.vstack(E), np.concatenate(e)

    # ------------------------------------------------------------------ measuring
    def deviation_from_marginal(self, M: np.ndarray, problem: DecisionProblem) -> float:
        """F from a group marginal P(z, a, y)."""
        M = np.asarray(M, dtype=float)
        E, e = self._excess_rows(M, problem)
        excess = E @ M.reshape(-1) + e
        return float(max(0.0, excess.max())) if excess.size else 0.0

    def deviation_from_table(self, table: DecisionTable, problem: DecisionProblem) -> float:
        """F from a decision table (through its group marginal)."""
        return self.deviation_from_marginal(table.group_marginal(), problem)

    # ------------------------------------------------------------------ optimisation
    def add_rows(self, block: ProgramBlock, how: Expansion) -> None:
        """Rows E m + e - f <= 0 over the scenario's group marginal: exact for every
        expansion (``block.f`` >= 0, so f >= the largest excess and 0)."""
        E, e = self._excess_rows(block.marginal, block.problem)
        if not len(E):
            return
        block.add_ub_dense(np.hstack([E, -np.ones((len(E), 1))]),
                           np.append(block.m_cols, block.f), -e)

    # ------------------------------------------------------------------ over a set
    def over_set(self, confidence: Any, problem: DecisionProblem) -> SetCriterion:
        """Held over every population of a confidence set: the same in every world with
        the population given (:class:`~fairdecide.criteria.base.SameInEveryWorld`), else
        :class:`SetCapacity`."""
        return (SameInEveryWorld(self, confidence, problem) if confidence.population_given
                else SetCapacity(self, confidence, problem))

    def gradient_terms(self, M: np.ndarray, problem: DecisionProblem) -> MarginalTerms:
        """The excesses r = E m + e, combined as F = max(0, max_i r_i) ("hinge-max")."""
        M = np.asarray(M, dtype=float)
        E, e = self._excess_rows(M, problem)
        return MarginalTerms("hinge-max", E @ M.reshape(-1) + e, E)

    def __repr__(self) -> str:
        bounds = "".join(f", {b}={getattr(self, b)!r}" for b in ("at_most", "at_least")
                         if getattr(self, b) is not None)
        group = ", per_group=True" if self.per_group else ""
        named = "" if self.name is None else f", name={self.name!r}"
        return f"Capacity(actions={self.actions!r}{bounds}{group}{named})"


@dataclass(frozen=True, eq=False)
class SetCapacity(SetCriterion):
    """A :class:`Capacity` held over every population of a confidence set inside the
    program: f >= (largest share) - at_most and f >= at_least - (smallest share), each
    share's extreme over the set written by the duals of its balls (each group's
    P(x | z); the overall share nests the ball of P(z) over them), exact at the best.
    Built by ``capacity.over_set(confidence_set, problem)``."""

    base: Capacity

    def capabilities(self, problem: DecisionProblem) -> Capabilities:
        return Capabilities(reads="rows", linear=True, program=True, outcome_free=True)

    def deviation_from_table(self, table: DecisionTable, problem: DecisionProblem) -> float:
        """The excess in the table's own world (the set's centre, in a result)."""
        return self.base.deviation_from_table(table, problem)

    @property
    def exact(self) -> bool:
        return True

    def bound(self, policy: Any) -> float:
        """The largest excess over every population of the set (exact): each group's
        share at its extremes over its ball of P(x | z), the overall share over the
        nested balls (:meth:`~fairdecide.uncertainty.confidence.ConfidenceSet.population_min`)."""
        cs, base = self.confidence, self.base
        center = cs.center
        rows = policy.proba(center.units())
        share = rows[:, self.problem.action_codes(list(base.actions), name="actions")].sum(
            axis=1).reshape(center.n_x, center.n_z)
        lo_z, lo = cs.population_min(share)
        hi_z, hi = (-v for v in cs.population_min(-share))
        if base.per_group:
            keep = center.p_z > MASS_TOL
            lo, hi = lo_z[keep], hi_z[keep]
        excess = [np.max(hi) - base.at_most] if base.at_most is not None else []
        excess += [base.at_least - np.min(lo)] if base.at_least is not None else []
        return float(max(0.0, *excess))

    def add_rows(self, block: ProgramBlock, how: Expansion) -> None:
        """For each bound share and side, one row over the dual of its balls."""
        cs, problem = self.confidence, self.problem
        n_x, n_z = cs.center.n_x, cs.center.n_z
        codes = problem.action_codes(list(self.base.actions), name="actions")
        pi = block.pi_cols[block.free_of_unit].reshape(n_x, n_z, -1)[:, :, codes]
        children = pi.transpose(1, 0, 2)  # ball z, child x: sum over the actions in A
        center, radius = cs.center.p_x_given_z.T, cs.cell_radius
        keep = np.flatnonzero(cs.center.p_z > MASS_TOL)
        for sign, bound in ((-1.0, self.base.at_most), (1.0, self.base.at_least)):
            if bound is None:
                continue
            # sign * share >= its minimum >= the dual's value d: with the largest share
            # (sign -1) f >= -d - at_most, with the smallest (sign 1) f >= at_least - d
            cols, vals = block.ball_minimum(children, np.full(children.shape, sign),
                                            center, radius)
            if self.base.per_group:
                cols, vals = cols[keep], vals[keep]
            else:
                cols, vals = block.ball_minimum(cols[None], vals[None], cs.center.p_z[None],
                                                np.array([cs.group_radius]))
            k, width = cols.shape
            mat = sp.csr_matrix((np.column_stack([-vals, -np.ones(k)]).reshape(-1),
                                 (np.repeat(np.arange(k), width + 1),
                                  np.arange(k * (width + 1)))), shape=(k, k * (width + 1)))
            block.add_ub_dense(mat, np.column_stack([cols, np.full(k, block.f)]).reshape(-1),
                               np.full(k, -sign * bound))
