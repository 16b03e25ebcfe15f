"""Sets of individuals given as masks or indices, and their weights: what parity
(:mod:`fairdecide.smoothness.parity`) and the worst-case bias read."""

from __future__ import annotations

from typing import Any

import numpy as np

from fairdecide._common.validation import as_float_array
from fairdecide.exceptions import FairdecideError

__all__: list[str] = []


def index_set(value: Any, name: str, n: int) -> np.ndarray:
    """Indices of a set given as a boolean mask or an array of distinct indices."""
    try:
        arr = np.asarray(value)
    except ValueError as exc:  # ragged nested lists
        raise FairdecideError(f"{name} could not be read as an array: {exc}") from None
    if arr.ndim != 1:
        raise FairdecideError(f"{name} must be a boolean mask of length {n} or a 1-d array "
                              f"of indices, got shape {arr.shape}")
    if arr.dtype == bool and len(arr) != n:
        raise FairdecideError(f"{name} is a boolean mask of length {len(arr)}; it needs "
                              f"one entry per individual ({n})")
    if not (np.any(arr) if arr.dtype == bool else arr.size):
        raise FairdecideError(f"{name} is empty: give at least one individual")
    if arr.dtype == bool:
        return np.flatnonzero(arr)
    if arr.dtype.kind not in "iu":
        raise FairdecideError(f"{name} must be a boolean mask or integer indices, got "
                              f"dtype {arr.dtype}")
    idx = arr.astype(np.intp)
    bad = (idx < 0) | (idx >= n)
    if bad.any():
        raise FairdecideError(f"{name} has index {idx[bad][0]}, outside 0..{n - 1}")
    if len(np.unique(idx)) != len(idx):
        raise FairdecideError(f"{name} lists an individual more than once; give each once "
                              "(use weights to count someone twice)")
    return idx


def unit_weights(value: Any, name: str, n: int, s: np.ndarray, t: np.ndarray) -> np.ndarray:
    if value is None:
        return np.ones(n)
    w = as_float_array(value, name, ndim=1)
    if w.shape != (n,) or np.any(w < 0):
        raise FairdecideError(f"{name} must be {n} non-negative numbers (one per "
                              f"individual), got shape {w.shape}")
    for set_name, idx in (("S", s), ("T", t)):
        if w[idx].sum() <= 0:
            raise FairdecideError(f"{name} is zero on every member of {set_name}: its "
                                  "distribution is undefined; give them positive weight")
    return w

