"""Divergences between a group's conditional distribution and the pooled one.

Each function takes arrays ``p_group`` and ``p_pool`` of shape (n_blocks, n_values)
(one row per compared pair of distributions) and returns one number per block; the
criterion then aggregates blocks with weights (sum for "tv" and "kl", max for "max").
"""

from __future__ import annotations

import numpy as np

__all__ = ["MEASURES", "block_divergence"]

MEASURES = ("tv", "kl", "max")


def block_divergence(p_group: np.ndarray, p_pool: np.ndarray, measure: str) -> np.ndarray:
    """Divergence of each row of ``p_group`` from the same row of ``p_pool``.

    - ``"tv"``: the L1 distance sum_t |p_group[t] - p_pool[t]| (twice total variation).
    - ``"kl"``: KL(p_group || p_pool) = sum_t p_group[t] log(p_group[t] / p_pool[t]),
      with 0 log 0 = 0.
    - ``"max"``: max_t |p_group[t] - p_pool[t]|.
    """
    diff = np.abs(p_group - p_pool)
    if measure == "tv":
        return diff.sum(axis=-1)
    if measure == "max":
        return diff.max(axis=-1, initial=0.0)
    if measure == "kl":
        with np.errstate(divide="ignore", invalid="ignore"):
            terms = np.where(p_group > 0, p_group * np.log(p_group / p_pool), 0.0)
        return terms.sum(axis=-1)
    raise ValueError(f"unknown measure {measure!r}")
