r"""Differentially private release of contingency tables, and noise-aware replicates.

Neighbouring data sets differ by adding or removing one row (one logged decision). A row
falls in exactly one cell of a contingency table such as n(z, a, y), so the table's L1
sensitivity is :math:`\Delta_1 = 1`, and adding independent noise of scale
:math:`b = \Delta_1/\varepsilon = 1/\varepsilon` to every cell with

- the two-sided geometric mechanism (the discrete Laplace, the default), pmf
  :math:`P(e = k) = \frac{1-\alpha}{1+\alpha} \alpha^{|k|}` for integers :math:`k`,
  :math:`\alpha = e^{-1/b} = e^{-\varepsilon}`, variance :math:`2\alpha / (1-\alpha)^2`; or
- the Laplace mechanism, density :math:`f(e) = \exp(-|e|/b) / (2b)`, variance
  :math:`2 b^2`,

releases the whole table with pure :math:`\varepsilon`-differential privacy (the privacy
loss is :math:`\Delta_1 / b = \varepsilon`).

The noise is drawn by OpenDP (``opendp.measurements.make_laplace``), never by numpy:

- geometric: ``make_laplace`` on ``vector_domain(atom_domain(T="i64"))`` with
  ``l1_distance(T="i64")`` and ``scale = b``, OpenDP's exact discrete Laplace sampler
  (Canonne, Kamath and Steinke 2020), whose pmf is the one above with
  :math:`\alpha = e^{-1/\text{scale}}`;
- Laplace: ``make_laplace`` on ``vector_domain(atom_domain(T="f64", nan=False))`` with
  ``l1_distance(T="f64")`` and ``scale = b``, which OpenDP samples as a discrete Laplace
  on a grid of :math:`2^k` (the finest by default) and rounds, so the low bits of a
  released value do not leak the count as textbook floating-point Laplace noise does
  (Mironov 2012). Its variance is :math:`2b^2` to floating-point precision.

Both sample from OpenDP's cryptographically secure generator, which cannot be seeded:
``random_state`` never reaches the privacy noise. ``scale`` is :math:`1/\varepsilon`,
raised by the few units in the last place needed for OpenDP's own (conservatively
rounded) privacy map to certify ``map(1) <= epsilon``; the release is checked against
that map, so the report's accounting (:class:`~fairdecide.privacy.PrivacyBudget`) holds
as stated. OpenDP is imported, and its ``"contrib"`` features enabled, at the first
release, not at ``import fairdecide``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from fairdecide._common.validation import (
    as_float_array,
    as_int,
    as_real,
    check_random_state,
    index_text,
)
from fairdecide.exceptions import FairdecideError
from fairdecide.privacy._opendp import SAMPLERS, opendp_release

__all__ = ["MECHANISMS", "NoisyCounts", "noise_variance", "release_counts",
           "replicate_releases"]

MECHANISMS = ("geometric", "laplace")
Mechanism = Literal["geometric", "laplace"]

# Below this epsilon the noise (scale 1/epsilon) would exceed 1e12 per cell: beyond int64
# for the geometric mechanism, and beyond any use for either.
_MIN_EPSILON = 1e-12
# Counts up to here are exact in float64 and stay far from OpenDP's saturating i64 sums.
_MAX_COUNT = 2**53


def _check_mechanism(mechanism: Any) -> str:
    if not isinstance(mechanism, str) or mechanism not in MECHANISMS:
        raise FairdecideError(
            f"mechanism must be one of {list(MECHANISMS)}, got {mechanism!r}")
    return mechanism


def _check_epsilon(epsilon: Any, mechanism: str, name: str = "epsilon") -> float:
    eps = as_real(epsilon, name, 0, None, low_open=True)
    if eps < _MIN_EPSILON:
        raise FairdecideError(
            f"{name} = {eps:g} is too small: the noise's scale 1/{name} would exceed "
            f"1e12 per cell (and overflow 64-bit integers under the geometric mechanism); "
            f"use {name} >= {_MIN_EPSILON:g}")
    return eps


def noise_variance(epsilon: float, mechanism: str) -> float:
    r"""The variance of one cell's noise at scale :math:`b = 1/\varepsilon`: :math:`2b^2`
    (Laplace) or :math:`2\alpha/(1-\alpha)^2` with :math:`\alpha = e^{-1/b} =
    e^{-\varepsilon}` (geometric, the discrete Laplace OpenDP samples at scale b).

    Examples
    --------
    >>> noise_variance(1.0, "laplace")
    2.0
    >>> round(noise_variance(1.0, "geometric"), 4)
    1.8413
    """
    mechanism = _check_mechanism(mechanism)
    eps = _check_epsilon(epsilon, mechanism)
    if mechanism == "laplace":
        return 2.0 * (1.0 / eps) ** 2
    one_minus_alpha = -math.expm1(-eps)
    return 2.0 * math.exp(-eps) / one_minus_alpha**2


def _geometric_pmf(k: np.ndarray, epsilon: float) -> np.ndarray:
    """Exact pmf of the two-sided geometric noise at the integers ``k``."""
    alpha = math.exp(-epsilon)
    return (-math.expm1(-epsilon)) / (1.0 + alpha) * alpha ** np.abs(np.asarray(k))


def _simulated_noise(shape: tuple[int, ...], epsilon: float, mechanism: str,
                     rng: np.random.RandomState) -> np.ndarray:
    r"""Draws from the release's noise distribution, for the replicates only.

    The replicates simulate the noise to measure its effect on a statistic; they release
    nothing (post-processing), so they use a seeded numpy stream and stay reproducible.
    With :math:`E_1, E_2` iid standard exponential and :math:`b = 1/\varepsilon`,
    :math:`b(E_1 - E_2)` has the Laplace density of scale :math:`b`, and
    :math:`\lfloor bE_1 \rfloor - \lfloor bE_2 \rfloor` the two-sided geometric pmf with
    :math:`\alpha = e^{-1/b}` (:math:`P(\lfloor bE \rfloor \ge k) = e^{-k/b}`).
    """
    b = 1.0 / epsilon
    e1, e2 = rng.standard_exponential(shape), rng.standard_exponential(shape)
    if mechanism == "geometric":
        return np.floor(b * e1) - np.floor(b * e2)
    return b * (e1 - e2)


@dataclass(frozen=True)
class NoisyCounts:
    r"""A differentially private release of a table of counts.

    Build it with :func:`release_counts`. ``values`` is the raw release
    :math:`\tilde n = n + e`, not clipped: a cell may be negative, and sums of raw cells
    are unbiased. :meth:`estimate` gives non-negative counts for display.

    Parameters
    ----------
    values : ndarray
        The released counts, any shape; integers for the geometric mechanism.
    epsilon : float
        The privacy loss of this release (its share of the report's budget).
    mechanism : {"geometric", "laplace"}
        The noise added to every cell.

    Attributes
    ----------
    scale : float
        :math:`b = 1/\varepsilon`: the ``scale`` of OpenDP's ``make_laplace`` for both
        mechanisms (for the geometric one :math:`\alpha = e^{-1/b}`). The release itself
        used the nearest float at or above it that OpenDP certifies at ``epsilon``
        (within a few units in the last place; see the module docstring).
    noise_variance : float
        The variance of every cell's noise: :math:`2b^2` (Laplace),
        :math:`2\alpha/(1-\alpha)^2` (geometric).
    """

    values: np.ndarray
    epsilon: float
    mechanism: Mechanism
    scale: float = field(init=False)
    noise_variance: float = field(init=False)

    def __post_init__(self) -> None:
        mechanism = _check_mechanism(self.mechanism)
        eps = _check_epsilon(self.epsilon, mechanism)
        values = as_float_array(self.values, "values")
        if values.size == 0:
            raise FairdecideError("values is empty: a release has at least one cell")
        if mechanism == "geometric":
            if not np.all(values == np.round(values)):
                raise FairdecideError(
                    "values of a geometric release must be integers; got non-integer "
                    "values (was it released with the Laplace mechanism?)")
            values = np.asarray(self.values).astype(np.int64)
        values = np.array(values)  # an own, read-only copy
        values.flags.writeable = False
        object.__setattr__(self, "values", values)
        object.__setattr__(self, "epsilon", eps)
        object.__setattr__(self, "scale", 1.0 / eps)
        object.__setattr__(self, "noise_variance", noise_variance(eps, mechanism))

    @property
    def shape(self) -> tuple[int, ...]:
        """The shape of the released table."""
        return self.values.shape

    def estimate(self) -> np.ndarray:
        r"""Non-negative counts, :math:`\max(\tilde n, 0)` cell by cell (float array).

        Post-processing of the release. Clipping removes impossible negative counts but
        biases small cells upwards (by up to :math:`b/2` for a true zero); sum the raw
        ``values`` when an unbiased total is needed.
        """
        return np.clip(self.values.astype(float), 0.0, None)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready record of the release (values as nested lists)."""
        return {
            "mechanism": self.mechanism,
            "epsilon": self.epsilon,
            "scale": self.scale,
            "noise_variance": self.noise_variance,
            "sensitivity": 1,
            "neighbours": "add or remove one row",
            "sampler": SAMPLERS[self.mechanism],
            "shape": list(self.shape),
            "values": self.values.tolist(),
        }

    @classmethod
    def from_dict(cls, record: dict[str, Any]) -> NoisyCounts:
        """Rebuild a release from :meth:`to_dict`'s record."""
        if not isinstance(record, dict):
            raise FairdecideError(
                f"record must be a dict from NoisyCounts.to_dict, got {type(record).__name__}")
        missing = {"values", "epsilon", "mechanism"} - set(record)
        if missing:
            raise FairdecideError(f"record lacks the keys {sorted(missing)}")
        values = as_float_array(record["values"], "record['values']")
        if "shape" in record:
            try:
                values = values.reshape(record["shape"])
            except (TypeError, ValueError):
                raise FairdecideError(
                    f"record['shape'] {record['shape']!r} does not fit the "
                    f"{values.size} values of record['values']") from None
        return cls(values, record["epsilon"], record["mechanism"])


def release_counts(counts: Any, epsilon: float, mechanism: Mechanism = "geometric"
                   ) -> NoisyCounts:
    r"""Release a contingency table with epsilon-differential privacy, through OpenDP.

    Every cell receives independent noise, :math:`\tilde n_c = n_c + e_c`, calibrated to
    sensitivity 1: adding or removing one row changes one cell by 1, so the release is
    pure :math:`\varepsilon`-DP for add/remove-one-row neighbours. Release each table of
    a report once, with its share of the budget (:class:`PrivacyBudget`).

    The noise comes from OpenDP's ``make_laplace`` with ``scale``
    :math:`b = \Delta_1/\varepsilon = 1/\varepsilon` over the vector of cells (L1
    distance, :math:`\Delta_1 = 1`), whose privacy map is
    :math:`\Delta_1 / b = \varepsilon`: on 64-bit integers for the geometric mechanism
    (the exact discrete Laplace, :math:`P(e = k) \propto e^{-|k|/b}`), on floats for the
    Laplace mechanism. Its generator is cryptographically secure and cannot be seeded,
    so no argument seeds the noise (a known seed would let anyone remove it); seed
    :func:`replicate_releases` instead.

    Parameters
    ----------
    counts : array-like of non-negative integers, any shape
        The true counts, one cell per combination of the table's variables (every
        combination, including empty ones: which cells exist must not depend on the
        data), at most 2**53.
    epsilon : float
        The privacy loss of this release, finite and > 0.
    mechanism : {"geometric", "laplace"}, default "geometric"
        Two-sided geometric noise (the discrete Laplace, integer output,
        :math:`\alpha = e^{-1/b} = e^{-\varepsilon}`) or Laplace noise (real output), both
        of scale :math:`b = 1/\varepsilon`.

    Returns
    -------
    NoisyCounts
        The raw release (may be negative), its epsilon, mechanism, scale and per-cell
        noise variance.

    Examples
    --------
    >>> noisy = release_counts([[30, 5], [12, 0]], epsilon=1.0)
    >>> noisy.values.shape, noisy.values.dtype
    ((2, 2), dtype('int64'))
    >>> bool(noisy.estimate().min() >= 0)
    True
    >>> round(noisy.noise_variance, 3)  # 2 e^{-1} / (1 - e^{-1})^2
    1.841
    """
    mechanism = _check_mechanism(mechanism)
    eps = _check_epsilon(epsilon, mechanism)
    table = as_float_array(counts, "counts")
    if table.size == 0:
        raise FairdecideError("counts is empty: pass the full table of cells")
    if np.any(table < 0):
        bad = np.argwhere(table < 0)[0]
        raise FairdecideError(
            f"counts must be non-negative; cell {index_text(bad)} is {table[tuple(bad)]:g}")
    if not np.all(table == np.round(table)):
        bad = np.argwhere(table != np.round(table))[0]
        raise FairdecideError(
            f"counts must be whole numbers (sensitivity 1 assumes each row adds 1 to one "
            f"cell); cell {index_text(bad)} is {table[tuple(bad)]:g}")
    if np.any(table > _MAX_COUNT):
        bad = np.argwhere(table > _MAX_COUNT)[0]
        raise FairdecideError(
            f"counts must be at most 2**53; cell {index_text(bad)} is {table[tuple(bad)]:g}")
    return NoisyCounts(opendp_release(table, eps, mechanism), eps, mechanism)


def replicate_releases(noisy: NoisyCounts, n_draws: int, random_state: Any = None
                       ) -> np.ndarray:
    r"""Noise-aware bootstrap replicates of a released table.

    Each replicate redraws the table from :math:`\mathrm{Multinomial}(\hat N, \hat p)`,
    with :math:`\hat p` the clipped estimate normalised and :math:`\hat N` its rounded
    total, adds fresh noise of the same mechanism and epsilon, and clips at 0, so the
    spread of any statistic across replicates reflects both sampling and the privacy
    noise. This is post-processing of the release: it costs no privacy budget, and it
    releases nothing, so its noise is simulated from ``random_state`` (numpy, exact in
    distribution) rather than drawn by OpenDP, and the replicates are reproducible.

    The replicates are centred on the (clipped, slightly upward-biased) estimate rather
    than on the truth, so use their spread (a standard error, or the basic bootstrap
    :math:`2\hat\theta - q_{1-\alpha/2}, 2\hat\theta - q_{\alpha/2}`) rather than raw
    percentiles when a statistic is sensitive to small cells.

    Parameters
    ----------
    noisy : NoisyCounts
        A release from :func:`release_counts`.
    n_draws : int
        The number of replicates, >= 1.
    random_state : None, int or numpy.random.RandomState
        The redrawn tables and their simulated noise (never the release's noise).

    Returns
    -------
    ndarray of shape (n_draws, \*noisy.shape), float
        Non-negative replicate tables.

    Examples
    --------
    >>> noisy = release_counts([[40, 10], [25, 25]], epsilon=0.5)
    >>> draws = replicate_releases(noisy, 1000, random_state=1)
    >>> draws.shape
    (1000, 2, 2)
    >>> rate = draws[:, :, 1] / draws.sum(axis=2)  # P(a = 1 | z) in each replicate
    >>> bool(0.03 < (rate[:, 1] - rate[:, 0]).std() < 0.2)
    True
    """
    if not isinstance(noisy, NoisyCounts):
        raise FairdecideError(
            f"noisy must be a NoisyCounts from release_counts, got {type(noisy).__name__}")
    n_draws = as_int(n_draws, "n_draws", minimum=1)
    rng = check_random_state(random_state)
    est = noisy.estimate().ravel()
    total = float(est.sum())
    n_hat = round(total)
    p_hat = est / total if total > 0 else np.full(est.size, 1.0 / est.size)
    tables = rng.multinomial(n_hat, p_hat, size=n_draws).astype(float)
    tables += _simulated_noise(tables.shape, noisy.epsilon, noisy.mechanism, rng)
    np.clip(tables, 0.0, None, out=tables)
    return tables.reshape((n_draws, *noisy.shape))
