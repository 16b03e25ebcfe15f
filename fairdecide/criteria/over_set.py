"""Group criteria certified over a confidence set: every group's rate at its extremes over
the set's worlds, and the deviation bounded from them inside the program.

Over a :class:`~fairdecide.uncertainty.confidence.ConfidenceSet` a group's conditional rate
P(t | c, z) of a fixed policy ranges over an interval [lo, hi] (:func:`set_ranges`):

- independence, P(a | z) = sum_x P(x | z) pi(a | x, z): linear in the group's P(x | z),
  so lo and hi are the minimum and maximum over its L1 ball, in closed form
  (:func:`~fairdecide.uncertainty.balls.worst_in_ball`), and in a program their duals (exact);
- separation in a prediction problem, P(a | y, z) = sum_x p_x t_x pi / sum_x p_x t_x with
  t_x = P(y | x, z) in the interval its ball allows for outcome y: the exact adversaries
  of :mod:`fairdecide.criteria.worst_rates`, and in a program cuts, one linear row per
  worst world found (the constraint-generation loop);
- sufficiency, P(y | a, z) = sum_x p_x pi_a t_xy / sum_x p_x pi_a: for a fixed policy the
  same adversaries (each t at the end that favours the extreme); not linear in the
  policy, so certified only for a given policy (:func:`~fairdecide.certify_policy`).

The group weights P(z | c) range too (each group's mass of c at its extremes, then the
groups' shares over the ball of P(z), exactly), and the deviation is bounded from the
ranges by :mod:`fairdecide.criteria.bounds`: exact for the largest pairwise gap (two
groups' rates share no parameter), an upper bound for the other measures.
:class:`SetConditional` writes that bound into the program as rows over variables that
bound each rate, so epsilon holds on the bound over the whole set, not at its centre.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp

from fairdecide.criteria.base import (
    Capabilities,
    CutSearch,
    Expansion,
    ProgramBlock,
    SameInEveryWorld,
    SetCriterion,
)
from fairdecide.criteria.bounds import bound_from_gaps, gaps_from_ranges, write_bound_rows
from fairdecide.criteria.worst_rates import (
    MASS_TOL,
    extreme_rates,
    extreme_rates_over_population,
    population_code,
    population_vertex,
)
from fairdecide.uncertainty.balls import worst_in_ball

if TYPE_CHECKING:
    from fairdecide.data.units import Units
    from fairdecide.problem import DecisionProblem
    from fairdecide.worlds.table import DecisionTable

__all__ = [
    "CERTIFIABLE",
    "SetConditional",
    "SetRanges",
    "extreme_rates",
    "extreme_rates_over_population",
    "group_weights",
    "population_code",
    "population_vertex",
    "set_criterion",
    "set_ranges",
]

#: What a program over a set certifies, for error messages and the docs.
CERTIFIABLE = ("independence (measure 'tv' or 'max', either reference, any weighting), "
               "separation in a prediction problem over a set that is not pooled (measure "
               "'tv' or 'max', either reference, any weighting), and Capacity; a given "
               "policy's sufficiency is bounded by certify_policy")


@dataclass(frozen=True)
class SetRanges:
    """One policy's group conditionals over every world of a set.

    ``lo``, ``hi`` (n_z, n_c, n_t): the smallest and largest P(t | c, z); ``w_low``,
    ``w_high`` (n_z, n_c): the ranges of the group weights P(z | c); ``can`` (n_z, n_c):
    whether P(c, z) can be positive (a conditional of an impossible event is left out);
    ``lo_code``, ``hi_code`` (n_z, n_c, n_t, n_x): the worst worlds of separation's rates
    as cut codes (cell at the upper end of its interval, plus 2 times its population
    code), None for the other criteria."""

    lo: np.ndarray
    hi: np.ndarray
    w_low: np.ndarray
    w_high: np.ndarray
    can: np.ndarray
    lo_code: np.ndarray | None = None
    hi_code: np.ndarray | None = None

    def bound(self, crit: Any, problem: DecisionProblem) -> float:
        """The bound of ``crit``'s deviation over the set (:mod:`~fairdecide.criteria.bounds`)."""
        both = self.can[:, None] & self.can[None, :]  # (n_z, n_z, n_c)
        gap = np.where(both[..., None], gaps_from_ranges(self.lo, self.hi), 0.0)
        return bound_from_gaps(crit, problem, gap, np.where(self.can, self.w_low, 0.0),
                               np.where(self.can, self.w_high, 0.0))


def outcome_boxes(cs: Any) -> tuple[np.ndarray, np.ndarray]:
    """The interval of every outcome probability the set allows, (lo, hi) of the shape
    of the centre's P(y | [a,] x, z): each conditional's region projected onto one
    outcome (:meth:`~fairdecide.uncertainty.regions.OutcomeRegions.ends`; a rate given
    one outcome reads only that outcome's probability, so its extremes over these
    intervals are its extremes over the set)."""
    return cs.outcomes.ends()


def _ratio_extremes(v_hi: np.ndarray, v_lo: np.ndarray, c: np.ndarray, lo: np.ndarray,
                    hi: np.ndarray, r: np.ndarray | None) -> tuple[np.ndarray, ...]:
    """Per row, the largest of sum c t v_hi / sum c t and the smallest of sum c t v_lo /
    sum c t over t in [lo, hi] and, when radii ``r`` are given, c in its L1 ball; with
    the worlds as cut codes. Rows whose mass can vanish everywhere give (-inf, inf)."""
    if r is None:
        top, top_at = extreme_rates(v_hi, c, lo, hi, True)
        low, low_at = extreme_rates(v_lo, c, lo, hi, False)
        return top, low, top_at.astype(np.int64), low_at.astype(np.int64)
    top, t_at, t_code = extreme_rates_over_population(v_hi, c, r, lo, hi, True)
    low, l_at, l_code = extreme_rates_over_population(v_lo, c, r, lo, hi, False)
    return top, low, t_at + 2 * t_code, l_at + 2 * l_code


def _mass_ranges(u_lo: np.ndarray, u_hi: np.ndarray, p: np.ndarray, radius: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Each group's mass sum_x P(x | z) u_x of each conditioning value, at its extremes
    over the group's L1 ball of radius ``radius`` (n_z,) around ``p`` (n_x, n_z), the
    coefficients u at their lower ends ``u_lo`` for the minimum and upper ends ``u_hi``
    for the maximum (both (n_z, n_c, n_x)); returns (n_z, n_c) each."""
    n_z, n_c, n_x = u_lo.shape
    h = np.broadcast_to(p.T[:, None], (n_z, n_c, n_x))
    r = np.broadcast_to(radius[:, None], (n_z, n_c))
    low = np.einsum("zcx,zcx->zc", worst_in_ball(u_lo, h, r), u_lo)
    high = np.einsum("zcx,zcx->zc", worst_in_ball(-u_hi, h, r), u_hi)
    return low, high


def _weight_ranges(m_lo: np.ndarray, m_hi: np.ndarray, p_z: np.ndarray, r0: float
                   ) -> tuple[np.ndarray, np.ndarray]:
    """The ranges of P(z | c) = P(z) m_zc / sum_z' P(z') m_z'c, where each group's mass
    m_zc lies in [m_lo, m_hi] (n_z, n_c; the groups' masses share no parameter) and P(z)
    in the L1 ball of radius r0 around p_z: the share rises with m_zc and falls with the
    others' masses, so its extremes put them at opposite ends and then solve a
    linear-fractional program over the ball (:func:`extreme_rates_over_population`)."""
    n_z, n_c = m_lo.shape
    own = np.eye(n_z, dtype=bool)[:, None, :]  # row (z, c), cell z'
    t_min = np.where(own, m_lo[:, :, None], m_hi.T[None, :, :])  # (n_z, n_c, n_z)
    t_max = np.where(own, m_hi[:, :, None], m_lo.T[None, :, :])
    v = np.broadcast_to(own, t_min.shape).astype(float).reshape(-1, n_z)
    h = np.broadcast_to(p_z, v.shape)
    r = np.full(len(v), float(r0))
    low = extreme_rates_over_population(v, h, r, t_min.reshape(-1, n_z),
                                        t_min.reshape(-1, n_z), False)[0]
    high = extreme_rates_over_population(v, h, r, t_max.reshape(-1, n_z),
                                         t_max.reshape(-1, n_z), True)[0]
    low = np.where(np.isfinite(low), low, 0.0).reshape(n_z, n_c)
    high = np.where(np.isfinite(high), high, 1.0).reshape(n_z, n_c)
    return np.clip(low, 0.0, 1.0), np.clip(high, 0.0, 1.0)


def group_weights(crit: Any, cs: Any, problem: DecisionProblem,
                  rows: np.ndarray | None = None) -> tuple[np.ndarray, ...]:
    """The ranges over the set of the group weights P(z | c) the criterion's pooled
    reference mixes (n_z, n_c each), and whether P(c, z) can be positive: P(z) for
    independence; for separation, each group's outcome mass sum_x P(x | z) P(y | x, z)
    at its extremes, then the shares (neither reads the policy); for sufficiency each
    group's mass of an action under policy rows ``rows``."""
    center = cs.center
    n_x, n_z = center.n_x, center.n_z
    if crit.given is None:  # P(z | c) is P(z) itself
        m_lo = m_hi = np.ones((n_z, 1))
    elif crit.given == "outcome":
        t_lo, t_hi = (t.transpose(1, 2, 0) for t in outcome_boxes(cs))  # (n_z, n_y, n_x)
        m_lo, m_hi = _mass_ranges(t_lo, t_hi, center.p_x_given_z, cs.cell_radius)
    else:
        pa = rows.reshape(n_x, n_z, -1).transpose(1, 2, 0)  # (n_z, n_a, n_x)
        m_lo, m_hi = _mass_ranges(pa, pa, center.p_x_given_z, cs.cell_radius)
    w_low, w_high = _weight_ranges(m_lo, m_hi, center.p_z, cs.group_radius)
    return w_low, w_high, (m_hi > MASS_TOL) & (w_high > MASS_TOL)


def set_ranges(crit: Any, cs: Any, problem: DecisionProblem,
               rows: np.ndarray) -> SetRanges:
    """Each group's conditional of policy rows ``rows`` (n_units, n_actions) at its
    extremes over every world of ``cs``, and the group weights' ranges (see the module).
    For independence, and separation and sufficiency in a prediction problem;
    sufficiency in an intervention too (each action reads its own conditional)."""
    center = cs.center
    n_x, n_z, n_a = center.n_x, center.n_z, problem.n_actions
    pi = rows.reshape(n_x, n_z, n_a)
    p = center.p_x_given_z  # (n_x, n_z)
    r = cs.cell_radius if np.any(cs.cell_radius > 0) else None
    t_lo, t_hi = outcome_boxes(cs)  # (n_x, n_z, [n_a,] n_y)
    codes = crit.given == "outcome"
    if crit.given is None:  # rows (z, a): sum_x p pi / sum_x p
        shape = (n_z, 1, n_a)
        v = pi.transpose(1, 2, 0)[:, None]  # (n_z, 1, n_a, n_x)
        box_lo = box_hi = np.ones((*shape, n_x))
        v_hi = v_lo = v
    elif crit.given == "outcome":  # rows (z, y, a): sum p t_y pi / sum p t_y
        n_y = problem.n_outcomes
        shape = (n_z, n_y, n_a)
        v_hi = v_lo = np.broadcast_to(pi.transpose(1, 2, 0)[:, None], (*shape, n_x))
        box_lo = np.broadcast_to(t_lo.transpose(1, 2, 0)[:, :, None], (*shape, n_x))
        box_hi = np.broadcast_to(t_hi.transpose(1, 2, 0)[:, :, None], (*shape, n_x))
    else:  # sufficiency, rows (z, a, y): sum p pi_a t_y / sum p pi_a
        n_y = problem.n_outcomes
        shape = (n_z, n_a, n_y)
        lo_a = t_lo if t_lo.ndim == 4 else np.broadcast_to(t_lo[:, :, None], (n_x, n_z, n_a,
                                                                             n_y))
        hi_a = t_hi if t_hi.ndim == 4 else np.broadcast_to(t_hi[:, :, None], (n_x, n_z, n_a,
                                                                             n_y))
        v_hi, v_lo = (b.transpose(1, 2, 3, 0) for b in (hi_a, lo_a))
        box_lo = box_hi = np.broadcast_to(pi.transpose(1, 2, 0)[:, :, None], (*shape, n_x))
    rr = None if r is None else np.broadcast_to(r[:, None, None], shape).reshape(-1)
    c = np.broadcast_to(p.T[:, None, None], (*shape, n_x)).reshape(-1, n_x)
    top, low, top_code, low_code = _ratio_extremes(
        np.reshape(v_hi, (-1, n_x)), np.reshape(v_lo, (-1, n_x)), c,
        np.reshape(box_lo, (-1, n_x)), np.reshape(box_hi, (-1, n_x)), rr)
    hi = np.where(np.isfinite(top), top, 0.0).reshape(shape)
    lo = np.where(np.isfinite(low), low, 1.0).reshape(shape)
    w_low, w_high, can = group_weights(crit, cs, problem, rows)
    return SetRanges(np.minimum(lo, hi), hi, w_low, w_high, can,
                     low_code.reshape((*shape, n_x)) if codes else None,
                     top_code.reshape((*shape, n_x)) if codes else None)


def set_criterion(crit: Any, cs: Any, problem: DecisionProblem) -> SetCriterion | None:
    """``crit`` over every world of ``cs`` (see the module): the criterion itself, the
    same in every world, for independence with the population given; a
    :class:`SetConditional` for independence over an estimated population and for
    separation and sufficiency in a prediction problem (sufficiency, not linear in the
    policy, is bounded for a given policy only: no program rows), and for sufficiency in
    an intervention; None for what no bound is known of (KL; separation in an
    intervention; a criterion reading the outcome over a pooled set)."""
    kind = (crit.target, crit.given)
    if crit.measure == "kl" or kind not in (("action", None), ("action", "outcome"),
                                            ("outcome", "action")):
        return None
    if kind == ("action", None):
        return (SameInEveryWorld(crit, cs, problem) if cs.population_given
                else SetConditional(crit, cs, problem))
    if cs.pooled or (kind == ("action", "outcome") and cs.center.outcome_depends_on_action):
        return None
    return SetConditional(crit, cs, problem)


@dataclass(frozen=True, eq=False)
class SetConditional(SetCriterion):
    """A group criterion bounded over every world of a confidence set inside the
    program (see the module); built by ``criterion.over_set(confidence_set, problem)``.

    The program carries, for every group z, conditioning value c and target value t,
    variables hi >= P(t | c, z) and lo <= P(t | c, z) in every world of the set, and
    rows f >= the bound of the deviation from them (:func:`write_bound_rows`). For
    independence hi and lo are written exactly by the duals of each group's ball; for
    separation by cuts, integer rows (c, t, z, side, the cells' world codes), each the
    row of one world: sum_x k_x pi(t | x, z) <= hi (side 0) or >= lo (side 1) with
    k_x = p_x t_x / sum p t in that world."""

    base: Any  # the ConditionalIndependence bounded
    cuts: np.ndarray | None = None

    @property
    def by_cuts(self) -> bool:
        """Separation's rates are bounded by cuts; independence's by the balls' duals."""
        return self.base.given is not None

    @property
    def exact(self) -> bool:
        """The largest pairwise gap is exact (two groups' rates share no parameter)."""
        return (self.base.measure, self.base.reference) == ("max", "pairwise")

    @property
    def _shape(self) -> tuple[int, int, int]:
        n_z, n_a = self.confidence.center.n_z, self.problem.n_actions
        return (n_z, 1, n_a) if self.base.given is None else (
            n_z, self.problem.n_outcomes, n_a)

    def capabilities(self, problem: DecisionProblem) -> Capabilities:
        """Reads the policy rows; linear; separation's worlds are cuts. Sufficiency's
        conditionals are ratios in the policy: no program rows (a given policy's bound
        only)."""
        program = self.base.target == "action"
        return Capabilities(reads="rows", linear=program, program=program,
                            cuts=self.by_cuts and program)

    def deviation_from_table(self, table: DecisionTable, problem: DecisionProblem) -> float:
        """The deviation in the table's own world (the set's centre, in a result)."""
        return self.base.deviation_from_table(table, problem)

    def bound(self, policy: Any) -> float:
        """The bound over the set of the given policy's deviation (exact for the largest
        pairwise gap): its rates at their extremes, recomputed from the policy alone."""
        rows = policy.proba(self.confidence.center.units())
        return set_ranges(self.base, self.confidence, self.problem, rows).bound(
            self.base, self.problem)

    # ------------------------------------------------------------------ cuts
    def initial_cuts(self, units: Units) -> np.ndarray:
        return np.zeros((0, 4 + self.confidence.center.n_x), dtype=np.int64)

    def with_cuts(self, cuts: np.ndarray) -> SetConditional:
        return dataclasses.replace(self, cuts=np.asarray(cuts, dtype=np.int64))

    def violated_cuts(self, rows: np.ndarray, units: Units, threshold: float,
                      per_unit: int, touching: np.ndarray | None = None) -> CutSearch:
        """The exact bound over the set of the policy ``rows`` (``max_violation``) and,
        when it exceeds ``threshold``, the worst world of every rate bounded (the search
        is always over all of them: ``touching`` is ignored)."""
        ranges = set_ranges(self.base, self.confidence, self.problem, rows)
        bound = ranges.bound(self.base, self.problem)
        n_t = ranges.hi.shape[2]
        targets = [n_t - 1] if n_t == 2 else list(range(n_t))
        cuts = np.zeros((0, 4 + self.confidence.center.n_x), dtype=np.int64)
        if bound > threshold:
            z, c, t = np.nonzero(ranges.can[:, :, None] & np.isin(np.arange(n_t),
                                                                  targets)[None, None])
            one = np.ones_like(z)
            cuts = np.vstack([
                np.column_stack([c, t, z, 0 * one, ranges.hi_code[z, c, t]]),
                np.column_stack([c, t, z, one, ranges.lo_code[z, c, t]])])
        return CutSearch(cuts.astype(np.int64), bound, int(ranges.can.sum() * len(targets)),
                         what="group rates at their extremes over the set")

    # ------------------------------------------------------------------ rows
    def add_rows(self, block: ProgramBlock, how: Expansion) -> None:
        """The bound rows (once per program) and the rows that bound each rate: the
        balls' duals (independence) or this criterion's cuts (separation)."""
        n_z, n_c, n_t = self._shape
        size = n_z * n_c * n_t
        cols, fresh = block.kept_vars(2 * size, 0.0, 1.0)
        hi_cols = cols[:size].reshape(n_z, n_c, n_t)
        lo_cols = cols[size:].reshape(n_z, n_c, n_t)
        if fresh:  # the weights do not depend on the policy for these criteria
            w_low, w_high, can = group_weights(self.base, self.confidence, self.problem)
            write_bound_rows(block, self.base, hi_cols, lo_cols, w_low, w_high, can)
            if not self.by_cuts:
                self._dual_rows(block, hi_cols[:, 0], lo_cols[:, 0])
        if self.by_cuts and self.cuts is not None and len(self.cuts):
            self._cut_rows(block, hi_cols, lo_cols)

    def _dual_rows(self, block: ProgramBlock, hi_cols: np.ndarray, lo_cols: np.ndarray
                   ) -> None:
        """lo_za <= min and hi_za >= max over group z's ball of sum_x P(x | z) pi(a | x, z),
        through the ball's dual (exact at the best)."""
        cs = self.confidence
        n_x, n_z, n_a = cs.center.n_x, cs.center.n_z, self.problem.n_actions
        pi = block.pi_cols[block.free_of_unit].reshape(n_x, n_z, n_a)
        children = pi.transpose(1, 2, 0).reshape(n_z * n_a, n_x, 1)  # ball (z, a)
        center = np.repeat(cs.center.p_x_given_z.T, n_a, axis=0)
        radius = np.repeat(cs.cell_radius, n_a)
        for sign, bound_cols in ((1.0, lo_cols), (-1.0, hi_cols)):
            # sign * rate >= its minimum >= the dual's value: lo - value <= 0, or
            # -hi - value <= 0 (the value bounds -max from below)
            d_cols, d_vals = block.ball_minimum(children, np.full(children.shape, sign),
                                                center, radius)
            k, width = d_cols.shape
            mat = sp.csr_matrix(
                (np.column_stack([np.full(k, sign), -d_vals]).reshape(-1),
                 (np.repeat(np.arange(k), width + 1), np.arange(k * (width + 1)))),
                shape=(k, k * (width + 1)))
            own = bound_cols.reshape(-1)
            block.add_ub_dense(mat, np.column_stack([own, d_cols]).reshape(-1), np.zeros(k))

    def _cut_rows(self, block: ProgramBlock, hi_cols: np.ndarray, lo_cols: np.ndarray
                  ) -> None:
        """Each cut's row in its world (see the class)."""
        cs, cuts = self.confidence, self.cuts
        n_x, n_z = cs.center.n_x, cs.center.n_z
        c, t, z, side, code = cuts[:, 0], cuts[:, 1], cuts[:, 2], cuts[:, 3], cuts[:, 4:]
        t_lo, t_hi = outcome_boxes(cs)  # (n_x, n_z, n_y)
        prob = np.where(code % 2 == 1, t_hi[:, z, c].T, t_lo[:, z, c].T)  # (k, n_x)
        p = cs.center.p_x_given_z[:, z].T
        if np.any(cs.cell_radius > 0):
            p = population_vertex(p, cs.cell_radius[z], code // 2)
        mass = p * prob
        coef = mass / mass.sum(axis=1, keepdims=True)
        pi = block.pi_cols[block.free_of_unit]  # (n_u, n_a); unit of (x, z) is x n_z + z
        cols = pi[np.arange(n_x)[None, :] * n_z + z[:, None], t[:, None]]
        own = np.where(side == 0, hi_cols[z, c, t], lo_cols[z, c, t])
        sign = np.where(side == 0, 1.0, -1.0)  # side 0: k pi - hi <= 0; 1: lo - k pi <= 0
        k = len(cuts)
        mat = sp.csr_matrix(
            (np.column_stack([sign[:, None] * coef, -sign]).reshape(-1),
             (np.repeat(np.arange(k), n_x + 1), np.arange(k * (n_x + 1)))),
            shape=(k, k * (n_x + 1)))
        block.add_ub_dense(mat, np.column_stack([cols, own]).reshape(-1), np.zeros(k))
