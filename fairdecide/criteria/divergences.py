"""Divergences between a group's conditional distribution and the pooled one.

Each function takes arrays ``p_group`` and ``p_pool`` of shape (n_blocks, n_values)
(one row per compared pair of distributions) and returns one number per block; the
criterion then aggregates blocks with weights (sum for "tv" and "kl", max for "max").
"""

from __future__ import annotations

import numpy as np

from fairdecide._common.validation import as_choice, as_float_array
from fairdecide.exceptions import FairdecideError

__all__ = ["MEASURES", "block_divergence"]

MEASURES = ("tv", "kl", "max")


def block_divergence(p_group: np.ndarray, p_pool: np.ndarray, measure: str) -> np.ndarray:
    """Divergence of each row of ``p_group`` from the same row of ``p_pool``.

    - ``"tv"``: the L1 distance sum_t |p_group[t] - p_pool[t]| (twice total variation).
    - ``"kl"``: KL(p_group || p_pool) = sum_t p_group[t] log(p_group[t] / p_pool[t]),
      with 0 log 0 = 0; infinite (an error) where p_pool is 0 and p_group is not.
    - ``"max"``: max_t |p_group[t] - p_pool[t]|.

    Examples
    --------
    >>> from fairdecide.criteria import block_divergence
    >>> block_divergence([[0.2, 0.8], [0.5, 0.5]], [0.5, 0.5], "tv")
    array([0.6, 0. ])
    """
    measure = as_choice(measure, "measure", MEASURES)
    p = as_float_array(p_group, "p_group", ndim=(1, 2))
    q = as_float_array(p_pool, "p_pool", ndim=(1, 2))
    for name, arr in (("p_group", p), ("p_pool", q)):
        if arr.size == 0 or np.any(arr < 0) or np.any(arr > 1):
            raise FairdecideError(f"{name} must hold probabilities in [0, 1], got {arr!r}")
    if q.shape not in (p.shape, p.shape[-1:]):
        raise FairdecideError(
            f"p_pool must have the shape of p_group {p.shape} or of one row "
            f"{p.shape[-1:]}, got {q.shape}")
    if measure == "kl" and np.any((p > 0) & (q == 0)):
        raise FairdecideError(
            "KL(p_group || p_pool) is infinite: p_pool is 0 where p_group is positive")
    return _block_divergence(p, q, measure)


def _block_divergence(p_group: np.ndarray, p_pool: np.ndarray, measure: str) -> np.ndarray:
    """:func:`block_divergence` on clean arrays (no checks), for the criteria."""
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
