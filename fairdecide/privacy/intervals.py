r"""Confidence intervals for a rate from true or differentially private counts.

Without noise the interval is Wilson's score interval. With noise it is the same score
interval with the privacy noise added to the variance (a Fieller-type inversion): a rate
p is inside the interval when

.. math::

    (\hat s - p\,\hat n)^2 \le z^2\,\hat n\,p(1-p)
        + c^2\,\big[(1-p)^2 v_s + p^2 v_f\big],

where :math:`\hat s = \max(\tilde s, 0)` and :math:`\hat f = \max(\tilde t - \tilde s, 0)`
are the clipped noisy successes and failures, :math:`\hat n = \hat s + \hat f`,
:math:`v_s, v_f` the variances of their noise, :math:`z` the normal quantile of the
level and :math:`c = \max(z, \ln(1/\alpha)/\sqrt 2)` the two-sided quantile of a Laplace
variable of unit variance (the noise has heavier tails than a normal one: at 95%
:math:`c = 2.12` rather than 1.96; at 90% :math:`c = z`). Under the true p the left-hand
side is a sum of a binomial deviation, of variance :math:`n p(1-p)`, and of the noise
:math:`(1-p) e_s - p e_f`, so the inequality is a test of p whose acceptance region is the
interval. With :math:`v_s = v_f = 0` it is exactly Wilson's interval. The inequality is a
quadratic :math:`A p^2 + B p + C \le 0`, solved in closed form and intersected with
[0, 1]; the interval always contains the estimate :math:`\hat s / \hat n`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.special import ndtri

from fairdecide._common.validation import as_float_array, as_real, index_text
from fairdecide.exceptions import FairdecideError

__all__ = ["RateInterval", "rate_interval"]

# Allowed excess of successes over totals in true (noise-free) counts: rounding only.
_COUNT_TOL = 1e-9


@dataclass(frozen=True)
class RateInterval:
    """Estimates and interval bounds of rates; unpacks as ``est, low, high``.

    Attributes
    ----------
    estimate, low, high : ndarray of float
        The estimated rate and the interval, all in [0, 1]; never NaN.
    defined : ndarray of bool
        False where the (clipped) denominator is zero, so the data say nothing about the
        rate. There ``estimate = 0.5``, ``low = 0`` and ``high = 1`` (the whole unit
        interval, centred): show such cells as "no data", not as 50%.
    level : float
        The confidence level.
    """

    estimate: np.ndarray
    low: np.ndarray
    high: np.ndarray
    defined: np.ndarray
    level: float

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter((self.estimate, self.low, self.high))

    @property
    def width(self) -> np.ndarray:
        """``high - low``."""
        return self.high - self.low


def _noise_pair(noise: Any, shape: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    if not isinstance(noise, tuple | list) or len(noise) != 2:
        raise FairdecideError(
            "noise must be None or a pair (var_successes, var_failures) of noise "
            f"variances (scalars or arrays), got {type(noise).__name__} {noise!r:.80}")
    out = []
    for part, what in zip(noise, ("var_successes", "var_failures"), strict=True):
        var = as_float_array(part, f"noise ({what})")
        if np.any(var < 0):
            raise FairdecideError(f"noise ({what}) must be non-negative variances")
        try:
            var = np.broadcast_to(var, shape)
        except ValueError:
            raise FairdecideError(
                f"noise ({what}) has shape {var.shape}, which does not match successes "
                f"and totals of shape {shape}") from None
        out.append(var)
    return out[0], out[1]


def rate_interval(successes: Any, totals: Any, level: float = 0.95,
                  noise: Any = None) -> RateInterval:
    r"""Estimate and confidence interval of the rate successes / totals, cell by cell.

    Without noise: Wilson's score interval, which has close to nominal coverage even for
    small totals. With noise (counts released by :func:`release_counts`): the score
    interval whose variance adds the privacy noise to the binomial variance (module
    docstring), covering at about the stated level for both the sampling and the noise.

    Parameters
    ----------
    successes, totals : array-like of the same shape
        Without noise, true counts with ``0 <= successes <= totals``. With noise, noisy
        released counts: ``successes`` the sum of the released cells of the numerator,
        ``totals`` the sum of the released cells of the denominator (numerator cells
        included), summed raw (unclipped): they may be negative or out of order.
    level : float, default 0.95
        The confidence level, in (0, 1).
    noise : None or pair (var_successes, var_failures)
        The noise variances of ``successes`` and of ``totals - successes`` (scalars or
        arrays broadcastable to the shape): the sum of
        :attr:`NoisyCounts.noise_variance` over the cells of each. ``None``: true counts.

    Returns
    -------
    RateInterval
        Unpacks as ``est, low, high`` (float arrays of the input's shape, in [0, 1],
        never NaN); ``.defined`` is False where the clipped denominator is zero, and there
        ``est, low, high = 0.5, 0, 1``.

    Examples
    --------
    >>> est, low, high = rate_interval([3, 40], [10, 100])
    >>> est
    array([0.3, 0.4])
    >>> np.round(low, 3), np.round(high, 3)
    (array([0.108, 0.309]), array([0.603, 0.498]))

    Noisy counts from a release with epsilon = 0.5 (noise variance 8 per cell):

    >>> res = rate_interval([3.2, 41.5], [9.1, 98.0], noise=(8.0, 8.0))
    >>> np.round(res.low, 3), np.round(res.high, 3)
    (array([0.  , 0.32]), array([1.   , 0.531]))
    >>> rate_interval(0, 0).defined
    array(False)
    """
    level = as_real(level, "level", 0, 1, low_open=True, high_open=True)
    s = as_float_array(successes, "successes")
    t = as_float_array(totals, "totals")
    if s.shape != t.shape:
        raise FairdecideError(
            f"successes and totals must have the same shape, got {s.shape} and {t.shape}")
    if noise is None:
        if np.any(s < 0) or np.any(t < 0):
            name = "successes" if np.any(s < 0) else "totals"
            raise FairdecideError(
                f"{name} must be non-negative counts; for noisy released counts pass "
                "noise=(var_successes, var_failures)")
        if np.any(s > t * (1 + _COUNT_TOL) + _COUNT_TOL):
            bad = np.argwhere(s > t * (1 + _COUNT_TOL) + _COUNT_TOL)[0]
            raise FairdecideError(
                f"successes exceeds totals at index {index_text(bad)} ({s[tuple(bad)]:g} > "
                f"{t[tuple(bad)]:g}); for noisy released counts pass noise=(...)")
        v_s = v_f = np.zeros(s.shape)
    else:
        v_s, v_f = _noise_pair(noise, s.shape)
    s_hat = np.clip(s, 0.0, None)
    f_hat = np.clip(t - s, 0.0, None)
    n_hat = s_hat + f_hat
    low, high = _score_bounds(s_hat, n_hat, v_s, v_f, level)
    defined = n_hat > 0
    est = np.divide(s_hat, n_hat, out=np.full(s.shape, 0.5), where=defined)
    low = np.where(defined, np.minimum(low, est), 0.0)
    high = np.where(defined, np.maximum(high, est), 1.0)
    return RateInterval(np.asarray(est), np.asarray(low), np.asarray(high),
                        np.asarray(defined), level)


def _score_bounds(s: np.ndarray, n: np.ndarray, v_s: np.ndarray, v_f: np.ndarray,
                  level: float) -> tuple[np.ndarray, np.ndarray]:
    """The smallest and largest p in [0, 1] with A p^2 + B p + C <= 0 (see the module)."""
    alpha = 1.0 - level
    z = float(ndtri(1.0 - alpha / 2))
    c = max(z, math.log(1.0 / alpha) / math.sqrt(2.0))
    z2, c2 = z * z, c * c
    a = n * n + z2 * n - c2 * (v_s + v_f)
    b = -2.0 * s * n - z2 * n + 2.0 * c2 * v_s
    cc = s * s - c2 * v_s
    # The set's extreme points are among 0, 1 and the real roots: keep those where the
    # quadratic is <= 0 (up to rounding) and take the smallest and the largest.
    disc = np.sqrt(np.clip(b * b - 4.0 * a * cc, 0.0, None))
    # Stable roots: q = -(b + sign(b) disc) / 2; roots q / a and cc / q.
    q = -0.5 * (b + np.where(b >= 0, 1.0, -1.0) * disc)
    r1 = np.divide(q, a, out=np.full(a.shape, -1.0), where=a != 0)
    r2 = np.divide(cc, q, out=np.full(a.shape, -1.0), where=q != 0)
    cand = np.stack([np.zeros(a.shape), np.ones(a.shape), r1, r2])
    value = (a * cand + b) * cand + cc
    tol = 1e-9 * (np.abs(a) + np.abs(b) + np.abs(cc)) + 1e-300
    ok = (cand >= 0.0) & (cand <= 1.0) & (value <= tol)
    low = np.where(ok, cand, np.inf).min(axis=0)
    high = np.where(ok, cand, -np.inf).max(axis=0)
    # The estimate s / n satisfies the inequality, so for n > 0 the set is never empty;
    # for n = 0 the caller replaces the bounds by [0, 1].
    empty = ~np.isfinite(low)
    return np.where(empty, 0.0, low), np.where(empty, 1.0, high)
