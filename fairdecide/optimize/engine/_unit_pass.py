"""One pass over the units of :func:`~fairdecide.optimize.optimize_distributed`, per
partition: the masses the master starts from, the blocks' sizes, and each block's
marginal under its action of least reduced cost for the master's duals."""

from __future__ import annotations

import numpy as np
import pandas as pd

from fairdecide.exceptions import FairdecideError
from fairdecide.frame_world import BLOCKS_PER_PARTITION, frame_arrays, unit_blocks
from fairdecide.policies.mixture import least_cost_actions
from fairdecide.problem import DecisionProblem


def _vertex_part(part: pd.DataFrame, problem: DecisionProblem, group: str, weight: str,
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


def _masses(part: pd.DataFrame, problem: DecisionProblem, group: str, weight: str
            ) -> np.ndarray:
    """[total weight, units per group (64), sum w p(y | a) per (z < 64, a, y)]."""
    z, w, p = frame_arrays(part, problem, group, weight)
    n_a, n_y = problem.n_actions, problem.n_outcomes
    if len(z) and (z.min() < 0 or z.max() >= 64):
        raise FairdecideError("group codes must be integers from 0 to 63")
    if not (np.all(np.isfinite(w)) and np.all(w >= 0) and np.all(np.isfinite(p))):
        raise FairdecideError("weights and outcome probabilities must be finite, weights "
                              ">= 0")
    out = np.zeros((64, n_a, n_y))
    np.add.at(out, z, w[:, None, None] * p)
    per_group = np.bincount(z, minlength=64).astype(float)
    return np.concatenate([[float(w.sum())], per_group, out.reshape(-1)])


def _block_sizes(part: pd.DataFrame, group: str, n_z: int) -> np.ndarray:
    z = part[group].to_numpy(dtype=np.int64)
    return np.bincount(unit_blocks(len(z), z, n_z), minlength=BLOCKS_PER_PARTITION * n_z)
