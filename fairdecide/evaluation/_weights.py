"""Importance weights and weighted spreads, computed so that huge values cannot overflow.

Shared by the off-policy estimators (:mod:`fairdecide.evaluation.ope`) and the deviation
estimates from logs; ``c`` is always the optional frequency weight of each entry (the
atoms of a LoggedCounts).
"""

from __future__ import annotations

import numpy as np

from fairdecide.exceptions import FairdecideError

__all__ = ["check_weights"]


def check_weights(w: np.ndarray, propensity: np.ndarray) -> None:
    """Raise unless every importance weight is a finite number (a weight overflows when
    a propensity is far below the candidate's probability, e.g. 1e-320)."""
    if not np.all(np.isfinite(w)):
        bad = int(np.argmax(~np.isfinite(w)))
        raise FairdecideError(
            f"importance weights overflow: row {bad} has propensity {propensity[bad]!r}, "
            f"so its weight pi(a | x) / p is not a finite number (the smallest propensity "
            f"is {float(np.min(propensity)):.3g}). Such propensities say the logged action "
            "was all but impossible: check them, drop those rows, clip the weights "
            "(e.g. InverseProbability(clip=...)) or use a model-based estimator")


def _effective_sample_size(w: np.ndarray, c: np.ndarray | None = None) -> float:
    """(sum w)^2 / sum w^2 over rows (``c``: frequency weights of the entries), computed
    on w / max(w) so that huge weights cannot overflow."""
    top = float(w.max()) if len(w) else 0.0
    if not top > 0:
        return 0.0
    u = w / top
    if c is None:
        return float(u.sum() ** 2 / np.sum(u**2))
    return float((c @ u) ** 2 / (c @ u**2))


def _robust_std(psi: np.ndarray, c: np.ndarray | None = None) -> float:
    """Sample standard deviation of ``psi`` over rows (ddof=1; ``c``: frequency weights
    of the entries), scaled first so that squares of huge values cannot overflow."""
    top = float(np.max(np.abs(psi)))
    if not np.isfinite(top):
        return float("nan")
    if top == 0:
        return 0.0
    if c is None:
        return float(np.std(psi / top, ddof=1) * top)
    u = psi / top
    n = c.sum()
    m = (c @ u) / n
    return float(np.sqrt((c @ (u - m) ** 2) / (n - 1)) * top)
