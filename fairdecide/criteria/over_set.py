"""Separation certified over a confidence set: the worst world found exactly, as cuts.

Separation as the largest gap between two groups' rates given the outcome,

    F(pi, theta) = max_{y, a, z != z'} P(a | y, z) - P(a | y, z'),
    P(a | y, z) = sum_x w_xz t_x pi(a | x, z) / sum_x w_xz t_x,   t_x = P(y | x, z),

reads the outcome through a ratio, so its worst case over a
:class:`~fairdecide.confidence.ConfidenceSet` is not one linear program. With the
population given (w fixed) and two outcomes, each t_x lies in an interval (the set's
Clopper-Pearson interval of the cell, or its mirror for y = 0), the groups' intervals are
disjoint parameters, and for a fixed policy the largest (smallest) rate of a group is a
linear-fractional program over a box: its optimum puts the cells whose pi(a | x, z)
exceeds the optimal ratio at their upper ends and the others at their lower ends, so the
exact adversary sorts the cells and scans the n + 1 thresholds (:func:`extreme_rates`).

With the population estimated, each group's P(x | z) = p also lies in an L1 ball around
its estimate, and the rate sum_x p_x t_x v_x / sum_x p_x t_x is bilinear in (p, t). Its
largest value R* is the root of h(lam) = max_{p, t} sum_x p_x t_x (v_x - lam), which is
exact in closed form: t_x at its upper end where v_x > lam, else at its lower end, then p
the ball's vertex that moves mass to the largest coefficient (:func:`worst_in_ball`).
Dinkelbach's iteration lam <- R(p, t) climbs to R* in a few steps
(:func:`extreme_rates_over_population`); the population vertex is stored in the cut as
integers (each cell unchanged, emptied, partly taken or receiving, which with the ball
determines p: :func:`population_vertex`).

For a fixed world the gap is linear in pi, so the constraint over the whole set is one
linear row per vertex world: :class:`SetSeparation` declares them as cuts, and the
constraint-generation route (:mod:`fairdecide.optimize.engine.generation`) adds the worst
world's rows while the current policy violates them; its last search, over every
(y, a, z, z'), is the exact worst case over the set and certifies the result.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp

from fairdecide.balls import worst_in_ball
from fairdecide.criteria.base import Capabilities, Criterion, CutSearch, Expansion, ProgramBlock
from fairdecide.criteria.divergences import rate_gap_bound

if TYPE_CHECKING:
    from fairdecide.problem import DecisionProblem
    from fairdecide.table import DecisionTable
    from fairdecide.units import Units

__all__ = ["SetSeparation", "extreme_rates", "extreme_rates_over_population",
           "independence_over_populations", "population_vertex", "set_separation"]

#: A group whose outcome mass can fall to this in some world of the set has no rate there.
MASS_TOL = 1e-12


def extreme_rates(v: np.ndarray, c: np.ndarray, lo: np.ndarray, hi: np.ndarray,
                  largest: bool) -> tuple[np.ndarray, np.ndarray]:
    """max (or min) over t in the box [lo, hi] of sum c t v / sum c t, for each row
    (arrays of shape (R, n), c >= 0), and the optimal t's pattern (True: at hi). Rows
    whose mass sum c t can reach zero are optimised over the t that keep it positive.

    Examples
    --------
    >>> rate, at_hi = extreme_rates(np.array([[1.0, 0.0]]), np.ones((1, 2)),
    ...                             np.full((1, 2), 0.2), np.full((1, 2), 0.6), True)
    >>> float(rate[0]), at_hi.tolist()
    (0.75, [[True, False]])
    """
    R, n = v.shape
    order = np.argsort(-v if largest else v, axis=1, kind="stable")
    rows = np.arange(R)[:, None]
    vs, cs, los, his = v[rows, order], c[rows, order], lo[rows, order], hi[rows, order]
    zero = np.zeros((R, 1))
    # top k cells at hi, the rest at lo, for k = 0..n
    num = (np.hstack([zero, np.cumsum(cs * his * vs, axis=1)])
           + np.hstack([np.cumsum((cs * los * vs)[:, ::-1], axis=1)[:, ::-1], zero]))
    den = (np.hstack([zero, np.cumsum(cs * his, axis=1)])
           + np.hstack([np.cumsum((cs * los)[:, ::-1], axis=1)[:, ::-1], zero]))
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = np.where(den > MASS_TOL, num / np.where(den > 0, den, 1.0), np.nan)
    ratio = np.where(np.isnan(ratio), -np.inf if largest else np.inf, ratio)
    k = np.argmax(ratio, axis=1) if largest else np.argmin(ratio, axis=1)
    at_hi = np.zeros((R, n), dtype=bool)
    at_hi[rows, order] = np.arange(n)[None, :] < k[:, None]
    return ratio[np.arange(R), k], at_hi & (c > 0)


def population_code(h: np.ndarray, p: np.ndarray) -> np.ndarray:
    """The vertex ``p`` of an L1 ball around ``h`` that :func:`worst_in_ball` returns,
    as integers per cell: 0 unchanged, 1 emptied, 2 partly taken, 3 receiving."""
    code = np.zeros(p.shape, dtype=np.int64)
    code[(p <= 0) & (h > 0)] = 1
    code[(p > 0) & (p < h)] = 2
    code[p > h] = 3
    return code


def population_vertex(h: np.ndarray, r: np.ndarray, code: np.ndarray) -> np.ndarray:
    """The population of :func:`population_code`'s ``code`` in the ball of radius ``r``
    (R,) around ``h`` (R, n): the receiving cell gains m = min(r / 2, 1 - h_j), the
    emptied cells lose all, the partly taken one the rest of m.

    Examples
    --------
    >>> h = np.array([[0.5, 0.2, 0.3]])
    >>> p = worst_in_ball(np.array([1.0, 0.0, 2.0]), h, np.array(0.4))
    >>> np.allclose(population_vertex(h, np.array([0.4]), population_code(h, p)), p)
    True
    """
    recv = code == 3
    m = np.where(recv.any(axis=1), np.minimum(r / 2.0, 1.0 - (h * recv).sum(axis=1)), 0.0)
    emptied = code == 1
    rest = m - (h * emptied).sum(axis=1)
    p = np.where(emptied, 0.0, h) + recv * m[:, None]
    return np.where(code == 2, h - rest[:, None], p)


def extreme_rates_over_population(v: np.ndarray, h: np.ndarray, r: np.ndarray,
                                  lo: np.ndarray, hi: np.ndarray, largest: bool,
                                  max_steps: int = 200
                                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """max (min) over p in the L1 ball of radius r (R,) around h (R, n), within the
    simplex, and t in the box [lo, hi] of sum p t v / sum p t, per row (v in [0, 1]);
    returns the rate, the pattern of t (True: at hi) and the population's
    :func:`population_code`. Dinkelbach's iteration (see the module).

    Examples
    --------
    >>> rate, at_hi, code = extreme_rates_over_population(
    ...     np.array([[1.0, 0.0]]), np.array([[0.5, 0.5]]), np.array([0.2]),
    ...     np.full((1, 2), 0.2), np.full((1, 2), 0.6), True)
    >>> round(float(rate[0]), 4), at_hi.tolist(), code.tolist()
    (0.8182, [[True, False]], [[3, 2]])
    """
    if not largest:  # min of R = 1 - max of the rate of 1 - v
        rate, at_hi, code = extreme_rates_over_population(1.0 - v, h, r, lo, hi, True,
                                                          max_steps)
        return 1.0 - rate, at_hi, code
    # the best world found so far, from the centre's population (a rate with mass)
    best, best_at = extreme_rates(v, h, lo, hi, True)
    best_p = h.copy()
    lam = np.where(np.isfinite(best), best, 0.0)
    for _ in range(max_steps):
        at_hi = v > lam[:, None]
        t = np.where(at_hi, hi, lo)
        p = worst_in_ball(-t * (v - lam[:, None]), h, r)
        num, den = (p * t * v).sum(axis=1), (p * t).sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            new = np.where(den > MASS_TOL, num / np.where(den > 0, den, 1.0), -np.inf)
        # a world without mass (a tie at the optimum) has no rate: keep the best with one
        up = new > best + 1e-15
        if not np.any(up):
            break
        best, best_at, best_p = (np.where(up, new, best), np.where(up[:, None], at_hi, best_at),
                                 np.where(up[:, None], p, best_p))
        lam = np.where(np.isfinite(best), best, 0.0)
    else:  # pragma: no cover - Dinkelbach's steps are finite here
        raise RuntimeError("the separation adversary did not converge")
    return best, best_at & (h > 0), population_code(h, best_p)


@dataclass(frozen=True, eq=False)
class SetSeparation(Criterion):
    """A separation criterion (``measure="max", reference="pairwise"``) bounded over
    every world of a confidence set with a given population and two outcomes (see the
    module); built by ``criterion.over_set(confidence_set, problem)``, not by users.

    Cuts are integer rows (y, a, z, z', z's cells, z''s cells), each cell coded 1 at
    the upper end of its outcome interval (else 0) plus 2 times its population code
    (:func:`population_code`; 0 with the population given): the row
    P(a | y, z) - P(a | y, z') <= f in that world."""

    base: Criterion
    weight: np.ndarray  # (n_x, n_z): P(x | z) at the centre
    lo: np.ndarray  # (2, n_x, n_z): the ends of P(y | x, z) for y = 0, 1
    hi: np.ndarray
    cuts: np.ndarray | None = None
    radius: np.ndarray | None = None  # (n_z,): the L1 radius of each P(x | z)

    @property
    def label(self) -> str:
        return self.base.label

    @property
    def population_moves(self) -> bool:
        """Whether the groups' P(x | z) lie in balls (the population estimated)."""
        return self.radius is not None and bool(np.any(self.radius > 0))

    def capabilities(self, problem: DecisionProblem) -> Capabilities:
        """Reads the policy rows; linear for a fixed world; its worlds are cuts."""
        return Capabilities(reads="rows", linear=True, program=True, cuts=True)

    def deviation_from_table(self, table: DecisionTable, problem: DecisionProblem) -> float:
        """The separation of the table's own world (the set's centre, in a result)."""
        return self.base.deviation_from_table(table, problem)

    # ------------------------------------------------------------------ the adversary
    def _extremes(self, rows: np.ndarray) -> tuple[np.ndarray, ...]:
        """Largest and smallest P(a | y, z) over the set, shape (2, n_a, n_z), and their
        patterns (2, n_a, n_z, n_x)."""
        n_x, n_z = self.weight.shape
        n_a = rows.shape[1]
        pi = rows.reshape(n_x, n_z, n_a).transpose(2, 1, 0)  # (n_a, n_z, n_x)
        shape = (2, n_a, n_z, n_x)
        v = np.broadcast_to(pi[None], shape).reshape(-1, n_x)
        c = np.broadcast_to(self.weight.T[None, None], shape).reshape(-1, n_x)
        lo = np.broadcast_to(self.lo.transpose(0, 2, 1)[:, None], shape).reshape(-1, n_x)
        hi = np.broadcast_to(self.hi.transpose(0, 2, 1)[:, None], shape).reshape(-1, n_x)
        if not self.population_moves:
            top, top_at = extreme_rates(v, c, lo, hi, True)
            low, low_at = extreme_rates(v, c, lo, hi, False)
            top_at, low_at = top_at.astype(np.int64), low_at.astype(np.int64)
        else:
            r = np.broadcast_to(self.radius[None, None], shape[:3]).reshape(-1)
            top, t_at, t_code = extreme_rates_over_population(v, c, r, lo, hi, True)
            low, l_at, l_code = extreme_rates_over_population(v, c, r, lo, hi, False)
            top_at, low_at = t_at + 2 * t_code, l_at + 2 * l_code
        return (top.reshape(shape[:3]), low.reshape(shape[:3]), top_at.reshape(shape),
                low_at.reshape(shape))

    def worst(self, rows: np.ndarray) -> float:
        """The exact largest separation gap over every world of the set (the search of
        :meth:`violated_cuts`, no cut asked for)."""
        return self.violated_cuts(rows, None, np.inf, 0).max_violation

    def initial_cuts(self, units: Units) -> np.ndarray:
        return np.zeros((0, 4 + 2 * self.weight.shape[0]), dtype=np.int64)

    def violated_cuts(self, rows: np.ndarray, units: Units, threshold: float,
                      per_unit: int, touching: np.ndarray | None = None) -> CutSearch:
        """Every (y, a, z, z') whose worst world's gap exceeds ``threshold``, with that
        world; the search is always over all of them (``touching`` is ignored)."""
        top, low, top_at, low_at = self._extremes(rows)
        n_z = top.shape[2]
        gaps = top[:, :, :, None] - low[:, :, None, :]  # (y, a, z, z')
        gaps[:, :, np.arange(n_z), np.arange(n_z)] = -np.inf
        gaps = np.where(np.isfinite(gaps), gaps, -np.inf)
        y, a, z, z2 = np.nonzero(gaps > threshold)
        cuts = np.column_stack([y, a, z, z2, top_at[y, a, z], low_at[y, a, z2]])
        finite = gaps[np.isfinite(gaps)]
        worst = float(finite.max()) if finite.size else 0.0
        return CutSearch(cuts.astype(np.int64), max(0.0, worst), int(np.isfinite(gaps).sum()))

    def with_cuts(self, cuts: np.ndarray) -> SetSeparation:
        return dataclasses.replace(self, cuts=np.asarray(cuts, dtype=np.int64))

    def add_rows(self, block: ProgramBlock, how: Expansion) -> None:
        """Each cut's row sum_x c_x pi(a | x, z) - sum_x c'_x pi(a | x, z') - f <= 0,
        c_x = w_xz t_x / sum w t in the cut's world."""
        cuts = self.cuts if self.cuts is not None else self.initial_cuts(None)
        if not len(cuts):
            return
        n_x, n_z = self.weight.shape
        y, a, z, z2 = cuts[:, 0], cuts[:, 1], cuts[:, 2], cuts[:, 3]
        rates = []
        for g, at in ((z, cuts[:, 4:4 + n_x]), (z2, cuts[:, 4 + n_x:])):
            t = np.where(at % 2 == 1, self.hi[y][np.arange(len(y)), :, g],
                         self.lo[y][np.arange(len(y)), :, g])
            p = self.weight[:, g].T
            if self.population_moves:
                p = population_vertex(p, self.radius[g], at // 2)
            c = p * t
            rates.append(c / c.sum(axis=1, keepdims=True))
        units = np.arange(n_x)[None, :] * n_z  # unit of (x, z) is x * n_z + z
        pi_cols = block.pi_cols[block.free_of_unit]  # (n_u, n_a)
        cols = np.hstack([pi_cols[units + z[:, None], a[:, None]],
                          pi_cols[units + z2[:, None], a[:, None]]])
        vals = np.hstack([rates[0], -rates[1]])
        k = len(cuts)
        mat = sp.csr_matrix((np.append(vals.reshape(-1), -np.ones(k)),
                             (np.append(np.repeat(np.arange(k), 2 * n_x), np.arange(k)),
                              np.append(np.arange(2 * n_x * k), 2 * n_x * k + np.arange(k)))),
                            shape=(k, 2 * n_x * k + k))
        block.add_ub_dense(mat, np.append(cols.reshape(-1), np.full(k, block.f)),
                           np.zeros(k))

    def certified_over(self, confidence: Any, policy: Any, at_center: float) -> float:
        return self.worst(policy.proba(confidence.center.units()))


def set_separation(base: Criterion, confidence: Any, problem: DecisionProblem
                   ) -> SetSeparation | None:
    """``base`` bounded over ``confidence`` when it is a separation as the largest
    pairwise gap and the set is of the kind the adversary solves exactly (a prediction
    problem, two outcomes; the population given or in its balls); None otherwise."""
    center = confidence.center
    if ((base.target, base.given, base.measure, base.reference, base.given_values) != (
            "action", "outcome", "max", "pairwise", None)
            or center.outcome_depends_on_action or problem.n_outcomes != 2):
        return None
    p1 = confidence.ball_center[..., 1]
    lo1 = np.clip(p1 - confidence.radius / 2, 0.0, 1.0)
    hi1 = np.clip(p1 + confidence.radius / 2, 0.0, 1.0)
    return SetSeparation(base, center.p_x_given_z, np.stack([1 - hi1, lo1]),
                         np.stack([1 - lo1, hi1]), radius=confidence.cell_radius)


def independence_over_populations(crit: Any, bounds: Any) -> float | None:
    """An upper bound of an independence criterion ("tv", "max"; ``crit`` a
    :class:`~fairdecide.criteria.ConditionalIndependence`) over every population of a
    confidence set, from the exact ranges ``bounds`` of the policy's rates: exact for
    ``measure="max", reference="pairwise"`` (two groups' rates share no parameter), an
    upper bound otherwise; None for other criteria and "kl"."""
    if crit.target != "action" or crit.given is not None or crit.measure == "kl":
        return None
    if crit.reference == "pairwise":
        zi, zj = np.triu_indices(len(bounds.lo), 1)
        return rate_gap_bound(bounds.lo[zi], bounds.hi[zi], bounds.lo[zj], bounds.hi[zj],
                              np.ones(len(zi)), crit.measure, crit.measure == "max")
    weight = bounds.group_hi if crit.weighting == "group" else np.ones(len(bounds.lo))
    return rate_gap_bound(bounds.lo, bounds.hi, bounds.action_lo[None],
                          bounds.action_hi[None], weight, crit.measure,
                          crit.measure == "max")
