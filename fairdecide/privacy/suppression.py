"""Small-cell suppression: the disclosure control of a report released without noise.

A minimum-frequency (threshold) rule hides every count from 1 to ``threshold - 1``: a
cell with few people can identify them, or reveal the outcome of someone known to be in
it. Zero cells are shown; a rate whose numerator or denominator is suppressed must be
hidden too (:func:`suppress_small_cells` gives the mask, the report applies it).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fairdecide._common.validation import as_float_array, as_int, index_text
from fairdecide.exceptions import FairdecideError

__all__ = ["SMALL_CELL_THRESHOLD", "suppress_small_cells"]

#: Default minimum cell size: counts from 1 to 9 are suppressed (see docs/privacy.md).
SMALL_CELL_THRESHOLD: int = 10


def suppress_small_cells(counts: Any, threshold: int = SMALL_CELL_THRESHOLD) -> np.ndarray:
    """Which cells of a table of true counts must be hidden: ``0 < count < threshold``.

    Parameters
    ----------
    counts : array-like of non-negative numbers, any shape
        True (not noisy) counts. Noisy counts from :func:`release_counts` need no
        suppression: differential privacy already protects them.
    threshold : int, default SMALL_CELL_THRESHOLD (10)
        The smallest count shown, >= 1; ``threshold = 1`` suppresses nothing.

    Returns
    -------
    ndarray of bool, the shape of ``counts``
        True where the cell must be suppressed. Zero cells are not suppressed (a zero is
        not about anyone; but see the limitations in docs/privacy.md).

    Notes
    -----
    This is primary suppression only. If the report also prints margins (group totals),
    a single suppressed cell in a row can be recovered by subtraction; either suppress a
    second cell of that row (secondary suppression) or do not print the margin.

    Examples
    --------
    >>> suppress_small_cells([[0, 3, 12], [9, 10, 250]])
    array([[False,  True, False],
           [ True, False, False]])
    """
    table = as_float_array(counts, "counts")
    if np.any(table < 0):
        bad = np.argwhere(table < 0)[0]
        raise FairdecideError(
            f"counts must be non-negative; cell {index_text(bad)} is {table[tuple(bad)]:g}")
    threshold = as_int(threshold, "threshold", minimum=1)
    return (table > 0) & (table < threshold)
