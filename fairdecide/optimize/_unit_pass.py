"""One pass over the units of :func:`~fairdecide.optimize.optimize_distributed`, per
partition: what each unit reads (group, weight, outcome probabilities), its action of
least reduced cost under the master's duals, the blocks' marginals, the policy of a
mixture of vertices, and the map over a pandas or Dask table's partitions."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from fairdecide._dask import is_dask_frame
from fairdecide.exceptions import FairdecideError
from fairdecide.problem import DecisionProblem

#: Each partition's units are split into this many row ranges; a block is a range's
#: units of one group, and has its own convexity row in the master. More blocks: more
#: columns per pass but far fewer passes (a single block tails off for thousands).
BLOCKS_PER_PARTITION = 16


def outcome_columns(problem: DecisionProblem) -> list[str]:
    """The names of the outcome-probability columns the units table must have:
    ``p_<y>`` (prediction) or ``p_<a>_<y>`` (intervention), by code.

    Examples
    --------
    >>> import fairdecide as fd
    >>> from fairdecide.optimize import outcome_columns
    >>> outcome_columns(fd.DecisionProblem.classification(2))
    ['p_0', 'p_1']
    """
    if not isinstance(problem, DecisionProblem):
        raise FairdecideError(f"problem must be a DecisionProblem, got {problem!r:.60}")
    if problem.outcome_depends_on_action:
        return [f"p_{a}_{y}" for a in range(problem.n_actions)
                for y in range(problem.n_outcomes)]
    return [f"p_{y}" for y in range(problem.n_outcomes)]


def _arrays(part: pd.DataFrame, problem: DecisionProblem, group: str, weight: str
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(z, w, p) of a partition; p of shape (n, n_a, n_y) for both kinds."""
    z = part[group].to_numpy(dtype=np.int64)
    w = part[weight].to_numpy(dtype=float)
    p = part[outcome_columns(problem)].to_numpy(dtype=float)
    n_a, n_y = problem.n_actions, problem.n_outcomes
    p = p.reshape(len(z), n_a, n_y) if problem.outcome_depends_on_action else \
        np.broadcast_to(p[:, None, :], (len(z), n_a, n_y))
    return z, w, p


def _choice(z: np.ndarray, w: np.ndarray, p: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """Each unit's action of least reduced cost under marginal duals Y[z, a, y]."""
    score = w[:, None] * np.einsum("uay,uay->ua", p, Y[z])
    return np.argmin(score, axis=1)


def _marginal_of(z: np.ndarray, w: np.ndarray, p: np.ndarray, rows: np.ndarray,
                 n_z: int) -> np.ndarray:
    """sum_u w_u rows_ua p_u(y | a) into M[z, a, y], flattened."""
    contrib = (w[:, None, None] * rows[:, :, None] * p).reshape(len(z), -1)
    n_ay = contrib.shape[1]
    out = np.zeros((n_z, n_ay))
    np.add.at(out, z, contrib)
    return out.reshape(-1)


def _blocks(n: int, z: np.ndarray, n_z: int) -> np.ndarray:
    """Block of each unit of a partition: its row range times n_z plus its group."""
    rng_id = (np.arange(n) * BLOCKS_PER_PARTITION) // max(n, 1)
    return rng_id * n_z + z


def _vertex_part(part: pd.DataFrame, problem: DecisionProblem, group: str, weight: str,
                 Y: np.ndarray, n_z: int) -> np.ndarray:
    """Each block's contribution g_b (n_blocks, n_m) of its least-reduced-cost vertex."""
    z, w, p = _arrays(part, problem, group, weight)
    n_b = BLOCKS_PER_PARTITION * n_z
    n_ay = problem.n_actions * problem.n_outcomes
    out = np.zeros((n_b, n_z, n_ay))
    if len(z):
        a = _choice(z, w, p, Y)
        contrib = (w[:, None, None] * np.eye(problem.n_actions)[a][:, :, None] * p)
        b = _blocks(len(z), z, n_z)
        np.add.at(out, (b, z), contrib.reshape(len(z), n_ay))
    return out.reshape(n_b, -1)


def _mixture_rows(z: np.ndarray, w: np.ndarray, p: np.ndarray, duals: list,
                  lam: np.ndarray, n_z: int, n_a: int) -> np.ndarray:
    """pi of a partition's units: lam[block, k] over the vertices chosen under duals[k]."""
    b = _blocks(len(z), z, n_z)
    rows = np.zeros((len(z), n_a))
    for k, Y in enumerate(duals):
        weight_k = lam[b, k]
        if np.any(weight_k > 0):
            rows[np.arange(len(z)), _choice(z, w, p, Y)] += weight_k
    return rows


def _mixture_part(part: pd.DataFrame, problem: DecisionProblem, group: str, weight: str,
                  duals: list, lam: np.ndarray, n_z: int) -> np.ndarray:
    z, w, p = _arrays(part, problem, group, weight)
    if len(z) == 0:
        return np.zeros(n_z * problem.n_actions * problem.n_outcomes)
    rows = _mixture_rows(z, w, p, duals, lam, n_z, problem.n_actions)
    return _marginal_of(z, w, p, rows, n_z)


def _masses(part: pd.DataFrame, problem: DecisionProblem, group: str, weight: str
            ) -> np.ndarray:
    """[total weight, units per group (64), sum w p(y | a) per (z < 64, a, y)]."""
    z, w, p = _arrays(part, problem, group, weight)
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
    return np.bincount(_blocks(len(z), z, n_z), minlength=BLOCKS_PER_PARTITION * n_z)


def _map_parts(units: Any, fn: Any, *args: Any, per_part: list | None = None) -> list:
    """fn(partition, *args) for each partition, in order, on the workers for Dask (a
    pandas DataFrame is one partition); with ``per_part``, fn(partition, per_part[i],
    *args) for partition i."""
    dask_frame = is_dask_frame(units)
    parts = units.to_delayed() if dask_frame else [units]
    extra = [()] * len(parts) if per_part is None else [(x,) for x in per_part]
    if len(extra) != len(parts):
        raise FairdecideError("per_part must have one entry per partition")
    if dask_frame:
        import dask

        return list(dask.compute(*[dask.delayed(fn)(d, *x, *args)
                                   for d, x in zip(parts, extra, strict=True)]))
    return [fn(d, *x, *args) for d, x in zip(parts, extra, strict=True)]


def _mixture_part_with(part: pd.DataFrame, lam: np.ndarray, problem: DecisionProblem,
                       group: str, weight: str, duals: list, n_z: int) -> np.ndarray:
    return _mixture_part(part, problem, group, weight, duals, lam, n_z)
