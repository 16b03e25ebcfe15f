"""What a fixed policy's independence reads, over a confidence set's populations:
the exact ranges of P(a | z), P(a) and P(z) (:class:`PopulationBounds`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from fairdecide.balls import worst_in_ball

__all__ = ["PopulationBounds", "population_bounds"]


@dataclass(frozen=True)
class PopulationBounds:
    """Exact ranges over a confidence set's populations of what a fixed policy's
    independence reads: ``lo`` <= P(a | z) <= ``hi`` (n_z, n_a), ``action_lo`` <= P(a) <=
    ``action_hi`` (n_a,) and P(z) <= ``group_hi`` (n_z,). Each is the optimum of one
    linear function over the product of balls (a bound on both ends at once is not
    implied: P(a | z) and P(a) share parameters)."""

    lo: np.ndarray
    hi: np.ndarray
    action_lo: np.ndarray
    action_hi: np.ndarray
    group_hi: np.ndarray


def population_bounds(cs: Any, policy: Any) -> PopulationBounds:
    """The exact ranges of P(a | z), P(a) and P(z) over ``cs``'s populations for
    ``policy`` (:meth:`ConfidenceSet.population_bounds
    <fairdecide.confidence.ConfidenceSet.population_bounds>`)."""
    rows = policy.proba(cs.center.units())
    n_x, n_z = cs.center.n_x, cs.center.n_z
    pi = rows.reshape(n_x, n_z, -1).transpose(2, 0, 1)  # (n_a, n_x, n_z)
    lo = np.array([cs.population_min(p)[0] for p in pi]).T  # (n_z, n_a)
    hi = -np.array([cs.population_min(-p)[0] for p in pi]).T
    p_z, r0 = cs.center.p_z, np.asarray(cs.group_radius)
    a_lo = np.array([worst_in_ball(c, p_z, r0) @ c for c in lo.T])
    a_hi = np.array([-(worst_in_ball(-c, p_z, r0) @ -c) for c in hi.T])
    return PopulationBounds(lo, hi, a_lo, a_hi, np.minimum(1.0, p_z + r0 / 2))
