"""The region around each outcome conditional of a confidence set: one interface, several
geometries.

A :class:`~fairdecide.uncertainty.confidence.ConfidenceSet` holds the truth's outcome
conditionals P(y | [a,] x, z) in a product of regions, one per conditional, each within
the simplex. Everything the library asks of them goes through :class:`OutcomeRegions`:

- :meth:`~OutcomeRegions.worst`: the minimiser of a linear cost in each region, in
  closed form (a policy's worst value; the verification's recomputation);
- :meth:`~OutcomeRegions.dual`: the same minimum as linear rows of a program, the
  region's LP dual (the maximin program writes it, no vertex enumerated);
- :meth:`~OutcomeRegions.ends`: each outcome's probability range in its region (the
  exact adversaries of a group's rate read it: separation, sufficiency);
- :meth:`~OutcomeRegions.contains`, :meth:`~OutcomeRegions.pick` (the regions of some
  conditionals), :meth:`~OutcomeRegions.spans` (for a set's description).

The geometries: :class:`L1Balls` (Weissman's bound; a Clopper-Pearson interval of two
outcomes is the ball around its midpoint) and :class:`Boxes` (an interval per outcome,
intersected with the simplex: exact binomial intervals, simultaneous over the outcomes).
A new geometry is one class here and the constructor that builds it.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass
from typing import Any

import numpy as np

from fairdecide._common.validation import as_float_array, check_distribution
from fairdecide.exceptions import FairdecideError
from fairdecide.uncertainty.balls import worst_in_ball

__all__ = ["Boxes", "L1Balls", "OutcomeRegions", "ball_duals", "box_duals"]

Columns = tuple[np.ndarray, np.ndarray]


def ball_duals(asm: Any, cols: np.ndarray, vals: np.ndarray, center: np.ndarray,
               radius: np.ndarray) -> Columns:
    """The minimum over B L1 balls of center . theta-weighted children, as dual rows.

    Ball b has n children, child i the linear expression vals[b, i] . x[cols[b, i]]
    (``cols``, ``vals`` of shape (B, n, w)). The minimum of c . theta over {theta in the
    simplex, ||theta - h||_1 <= r} is the LP whose dual is max mu + h . s - r lam subject
    to mu + s_i <= c_i and |s_i| <= lam. Writes those rows into ``asm`` (anything with
    ``new_vars`` and ``ub.add``: a program's assembly) and returns the columns and
    coefficients (B, n + 2) of mu_b + h_b . s_b - r_b lam_b, which is at most
    min_{q in ball b} q . child_b for every feasible (mu, s, lam) and equal to it at the
    best. Balls of radius 0 write nothing: their minimum is h_b . child_b, returned as
    (B, n w)."""
    B, n, w = cols.shape
    if not np.any(radius > 0):
        return cols.reshape(B, n * w), (center[:, :, None] * vals).reshape(B, n * w)
    asm.wrote_duals = True
    mu = asm.new_vars(B, -np.inf)
    s = asm.new_vars(B * n, -np.inf)
    lam = asm.new_vars(B)
    rows = np.arange(B * n)
    asm.ub.add(np.repeat(rows, 2 + w),
               np.column_stack([np.repeat(mu, n), s, cols.reshape(B * n, w)]).reshape(-1),
               np.column_stack([np.ones((B * n, 2)), -vals.reshape(B * n, w)]).reshape(-1),
               np.zeros(B * n))
    for sign in (1.0, -1.0):
        asm.ub.add(np.repeat(rows, 2), np.column_stack([s, np.repeat(lam, n)]).reshape(-1),
                   np.tile([sign, -1.0], B * n), np.zeros(B * n))
    return (np.column_stack([mu, s.reshape(B, n), lam]),
            np.column_stack([np.ones(B), center, -radius]))


def box_duals(asm: Any, cols: np.ndarray, vals: np.ndarray, lo: np.ndarray,
              hi: np.ndarray) -> Columns:
    """The minimum over B boxes within the simplex, {theta : lo <= theta <= hi, sum theta
    = 1}, of theta-weighted children (as :func:`ball_duals`): its dual is max mu + lo .
    alpha - hi . beta subject to mu + alpha_i - beta_i <= c_i, alpha, beta >= 0.
    Returns the columns and coefficients (B, 1 + 2n) of mu_b + lo_b . alpha_b - hi_b .
    beta_b."""
    B, n, w = cols.shape
    asm.wrote_duals = True
    mu = asm.new_vars(B, -np.inf)
    alpha = asm.new_vars(B * n)
    beta = asm.new_vars(B * n)
    rows = np.arange(B * n)
    asm.ub.add(np.repeat(rows, 3 + w),
               np.column_stack([np.repeat(mu, n), alpha, beta,
                                cols.reshape(B * n, w)]).reshape(-1),
               np.column_stack([np.ones(B * n), np.ones(B * n), -np.ones(B * n),
                                -vals.reshape(B * n, w)]).reshape(-1),
               np.zeros(B * n))
    return (np.column_stack([mu, alpha.reshape(B, n), beta.reshape(B, n)]),
            np.column_stack([np.ones(B), lo, -hi]))


class OutcomeRegions(abc.ABC):
    """A region around each of a world's outcome conditionals (see the module): arrays
    of shape ``shape`` + (n_outcomes,), one region per conditional."""

    @property
    @abc.abstractmethod
    def shape(self) -> tuple[int, ...]:
        """The conditionals' shape (the world's ``p_y.shape[:-1]``)."""

    @abc.abstractmethod
    def worst(self, cost: np.ndarray) -> np.ndarray:
        """argmin of cost . theta over each region (cost broadcast to the regions'
        shape + (n_outcomes,)), in closed form."""

    @abc.abstractmethod
    def dual(self, asm: Any, cols: np.ndarray, vals: np.ndarray) -> Columns:
        """The minimum over each region (flattened to B = prod(shape) regions) of theta
        . child, child j = vals[b, j] . x[cols[b, j]], as dual rows written into ``asm``:
        the columns and coefficients (B, m) of an expression at most that minimum, equal
        to it at the program's best."""

    @abc.abstractmethod
    def ends(self) -> tuple[np.ndarray, np.ndarray]:
        """Each outcome's smallest and largest probability in its region (shape +
        (n_outcomes,) each): the region's projection onto one outcome."""

    @abc.abstractmethod
    def contains(self, p_y: np.ndarray, slack: float = 1e-12) -> bool:
        """Whether every conditional of ``p_y`` lies in its region."""

    @abc.abstractmethod
    def pick(self, index: Any) -> OutcomeRegions:
        """The regions of the conditionals ``index`` selects (numpy indexing on the
        conditionals' axes)."""

    @abc.abstractmethod
    def spans(self) -> tuple[float, float]:
        """The smallest and largest size of a region (an L1 radius, or a box's widest
        side), for the set's description."""

    @property
    @abc.abstractmethod
    def words(self) -> str:
        """What the regions are, in a few words ("L1 balls", "boxes")."""

    def shared_by_groups(self) -> bool:
        """Whether every group of a cell has the same region (axis 1 of the
        conditionals): a set pooled over the groups."""
        same = self.pick((slice(None), slice(0, 1)))
        return all(np.array_equal(np.broadcast_to(a, b.shape), b)
                   for a, b in zip(same._arrays(), self._arrays(), strict=True))

    @abc.abstractmethod
    def _arrays(self) -> tuple[np.ndarray, ...]:
        """The arrays that define the regions."""


@dataclass(frozen=True, eq=False)
class L1Balls(OutcomeRegions):
    """The L1 ball of radius ``radius`` around ``center`` within the simplex, one per
    conditional: {theta : ||theta - center||_1 <= radius}. ``center`` (shape +
    (n_outcomes,)) are distributions; ``radius`` (shape) at most 2 (the simplex)."""

    center: np.ndarray
    radius: np.ndarray

    def __post_init__(self) -> None:
        hat = check_distribution(as_float_array(self.center, "ball_center"), "ball_center",
                                 axes=(-1,))
        r = as_float_array(self.radius, "radius")
        if r.shape != hat.shape[:-1] or np.any(r < 0):
            raise FairdecideError(
                f"radius must be non-negative, one per outcome conditional, shape "
                f"{hat.shape[:-1]}; got shape {r.shape}")
        object.__setattr__(self, "center", hat)
        object.__setattr__(self, "radius", np.minimum(r, 2.0))

    @property
    def shape(self) -> tuple[int, ...]:
        return self.radius.shape

    @property
    def words(self) -> str:
        return "L1 balls"

    def worst(self, cost: np.ndarray) -> np.ndarray:
        """Mass min(r / 2, 1 - c_j*) moved to the cheapest outcome j* from the dearest
        (:func:`~fairdecide.uncertainty.balls.worst_in_ball`)."""
        return worst_in_ball(cost, self.center, self.radius)

    def dual(self, asm: Any, cols: np.ndarray, vals: np.ndarray) -> Columns:
        n_y = self.center.shape[-1]
        return ball_duals(asm, cols, vals, self.center.reshape(-1, n_y),
                          self.radius.reshape(-1))

    def ends(self) -> tuple[np.ndarray, np.ndarray]:
        """[c_j - r / 2, c_j + r / 2] within [0, 1]: exact, the other outcomes absorb the
        change."""
        half = self.radius[..., None] / 2.0
        return np.clip(self.center - half, 0.0, 1.0), np.clip(self.center + half, 0.0, 1.0)

    def contains(self, p_y: np.ndarray, slack: float = 1e-12) -> bool:
        return bool(np.all(np.abs(p_y - self.center).sum(axis=-1) <= self.radius + slack))

    def pick(self, index: Any) -> L1Balls:
        return L1Balls(self.center[index], self.radius[index])

    def spans(self) -> tuple[float, float]:
        return float(self.radius.min(initial=0.0)), float(self.radius.max(initial=0.0))

    def _arrays(self) -> tuple[np.ndarray, ...]:
        return self.center, self.radius


@dataclass(frozen=True, eq=False)
class Boxes(OutcomeRegions):
    """An interval [lo_j, hi_j] for every outcome, intersected with the simplex, one box
    per conditional (e.g. each outcome's exact binomial interval, simultaneous over the
    outcomes). ``lo`` and ``hi`` (shape + (n_outcomes,)) in [0, 1] with sum lo <= 1 <=
    sum hi, so that every box holds a distribution."""

    lo: np.ndarray
    hi: np.ndarray

    def __post_init__(self) -> None:
        lo, hi = as_float_array(self.lo, "lo"), as_float_array(self.hi, "hi")
        if lo.shape != hi.shape or np.any(lo < 0) or np.any(hi > 1) or np.any(lo > hi):
            raise FairdecideError("a box needs 0 <= lo <= hi <= 1 of one shape, got "
                                  f"shapes {lo.shape} and {hi.shape}")
        if np.any(lo.sum(axis=-1) > 1 + 1e-12) or np.any(hi.sum(axis=-1) < 1 - 1e-12):
            raise FairdecideError("every box must hold a distribution: sum lo <= 1 <= sum hi")
        object.__setattr__(self, "lo", lo)
        object.__setattr__(self, "hi", hi)

    @property
    def shape(self) -> tuple[int, ...]:
        return self.lo.shape[:-1]

    @property
    def words(self) -> str:
        return "boxes"

    def worst(self, cost: np.ndarray) -> np.ndarray:
        """Every outcome at its lower end, then the rest of the mass to the cheapest
        outcomes in turn, each up to its upper end."""
        shape = np.broadcast_shapes(np.shape(cost), self.lo.shape)
        c = np.broadcast_to(cost, shape).reshape(-1, shape[-1])
        lo = np.broadcast_to(self.lo, shape).reshape(-1, shape[-1])
        room = np.broadcast_to(self.hi, shape).reshape(-1, shape[-1]) - lo
        order = np.argsort(c, axis=1, kind="stable")
        rows = np.arange(len(c))[:, None]
        left = 1.0 - lo.sum(axis=1, keepdims=True)
        cap = room[rows, order]
        before = np.cumsum(cap, axis=1) - cap
        give = np.clip(left - before, 0.0, cap)
        theta = lo.copy()
        theta[rows, order] += give
        return theta.reshape(shape)

    def dual(self, asm: Any, cols: np.ndarray, vals: np.ndarray) -> Columns:
        n_y = self.lo.shape[-1]
        return box_duals(asm, cols, vals, self.lo.reshape(-1, n_y), self.hi.reshape(-1, n_y))

    def ends(self) -> tuple[np.ndarray, np.ndarray]:
        """[max(lo_j, 1 - sum of the others' hi), min(hi_j, 1 - sum of the others' lo)]:
        the box's sides where the simplex cuts them."""
        lo_rest = self.lo.sum(axis=-1, keepdims=True) - self.lo
        hi_rest = self.hi.sum(axis=-1, keepdims=True) - self.hi
        return np.maximum(self.lo, 1.0 - hi_rest), np.minimum(self.hi, 1.0 - lo_rest)

    def contains(self, p_y: np.ndarray, slack: float = 1e-12) -> bool:
        return bool(np.all(p_y >= self.lo - slack) and np.all(p_y <= self.hi + slack))

    def pick(self, index: Any) -> Boxes:
        return Boxes(self.lo[index], self.hi[index])

    def spans(self) -> tuple[float, float]:
        width = (self.hi - self.lo).max(axis=-1, initial=0.0)
        return float(width.min(initial=0.0)), float(width.max(initial=0.0))

    def _arrays(self) -> tuple[np.ndarray, ...]:
        return self.lo, self.hi
