"""One pass over the units of a :class:`~fairdecide.worlds.frame.FrameWorld` for the
distributed master (:mod:`fairdecide.optimize.engine.distributed_master`), per
partition: each block's marginal under its action of least reduced cost for the
master's duals."""

from __future__ import annotations

import numpy as np
import pandas as pd

from fairdecide.policies.mixture import least_cost_actions
from fairdecide.problem import DecisionProblem
from fairdecide.worlds.frame import BLOCKS_PER_PARTITION, frame_arrays, unit_blocks

__all__ = ["vertex_part"]


def vertex_part(part: pd.DataFrame, problem: DecisionProblem, group: str, weight: str,
                 Ys: np.ndarray, n_z: int) -> np.ndarray:
    """For each set of duals Ys[k] (n_z, n_a, n_y), each block's contribution g_b of its
    least-reduced-cost vertex: (k, n_blocks, n_m), the partition read once."""
    z, w, p = frame_arrays(part, problem, group, weight)
    n_b = BLOCKS_PER_PARTITION * n_z
    n_a, n_y = problem.n_actions, problem.n_outcomes
    size = n_b * n_z * n_a * n_y
    out = np.zeros((len(Ys), size))
    if not len(z):
        return out.reshape(len(Ys), n_b, -1)
    # unit u adds w_u P(y | a_u, u) at (block, z_u, a_u, y): one bincount per outcome
    # (np.add.at over the (n, n_a, n_y) contributions took most of a pass)
    cell = (unit_blocks(len(z), z, n_z) * n_z + z) * n_a
    rows = np.arange(len(z))
    for k, Y in enumerate(Ys):
        a = least_cost_actions(p, Y, z)
        at = (cell + a) * n_y
        chosen = p[rows, a] if problem.outcome_depends_on_action else p[:, 0]  # (n, n_y)
        for y in range(n_y):
            out[k] += np.bincount(at + y, weights=w * chosen[:, y], minlength=size)
    return out.reshape(len(Ys), n_b, -1)
