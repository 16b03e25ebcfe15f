r"""Differentially private release of contingency tables, and noise-aware replicates.

Neighbouring data sets differ by adding or removing one row (one logged decision). A row
falls in exactly one cell of a contingency table such as n(z, a, y), so the table's L1
sensitivity is 1 and adding independent noise to every cell with

- the Laplace mechanism, density :math:`f(e) = \exp(-|e|/b) / (2b)`, :math:`b = 1/\varepsilon`,
  variance :math:`2 b^2`; or
- the two-sided geometric mechanism (the discrete Laplace), pmf
  :math:`P(e = k) = \frac{1-\alpha}{1+\alpha} \alpha^{|k|}` for integers :math:`k`,
  :math:`\alpha = e^{-\varepsilon}`, variance :math:`2\alpha / (1-\alpha)^2`,

releases the whole table with pure :math:`\varepsilon`-differential privacy. The geometric
mechanism keeps counts integers; both have the same privacy guarantee.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from fairdecide._validation import as_float_array, as_int, as_real, check_random_state
from fairdecide.exceptions import FairdecideError

__all__ = ["MECHANISMS", "NoisyCounts", "noise_variance", "release_counts",
           "replicate_releases"]

MECHANISMS = ("geometric", "laplace")
Mechanism = Literal["geometric", "laplace"]

# Below this epsilon the geometric noise (scale about 1/epsilon) no longer fits in int64.
_MIN_GEOMETRIC_EPSILON = 1e-12


def _check_mechanism(mechanism: Any) -> str:
    if not isinstance(mechanism, str) or mechanism not in MECHANISMS:
        raise FairdecideError(
            f"mechanism must be one of {list(MECHANISMS)}, got {mechanism!r}")
    return mechanism


def _check_epsilon(epsilon: Any, mechanism: str, name: str = "epsilon") -> float:
    eps = as_real(epsilon, name, 0, None, low_open=True)
    if mechanism == "geometric" and eps < _MIN_GEOMETRIC_EPSILON:
        raise FairdecideError(
            f"{name} = {eps:g} is too small for the geometric mechanism (its noise would "
            f"overflow 64-bit integers); use {name} >= {_MIN_GEOMETRIC_EPSILON:g}")
    return eps


def noise_variance(epsilon: float, mechanism: str) -> float:
    r"""The variance of one cell's noise: :math:`2/\varepsilon^2` (Laplace) or
    :math:`2\alpha/(1-\alpha)^2` with :math:`\alpha = e^{-\varepsilon}` (geometric).

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
        return 2.0 / eps**2
    one_minus_alpha = -math.expm1(-eps)
    return 2.0 * math.exp(-eps) / one_minus_alpha**2


def _geometric_pmf(k: np.ndarray, epsilon: float) -> np.ndarray:
    """Exact pmf of the two-sided geometric noise at the integers ``k``."""
    alpha = math.exp(-epsilon)
    return (-math.expm1(-epsilon)) / (1.0 + alpha) * alpha ** np.abs(np.asarray(k))


def _noise(shape: tuple[int, ...], epsilon: float, mechanism: str,
           rng: np.random.RandomState) -> np.ndarray:
    if mechanism == "laplace":
        return rng.laplace(0.0, 1.0 / epsilon, size=shape)
    # The difference of two iid geometric variables (support 1, 2, ...) with success
    # probability 1 - alpha is two-sided geometric with parameter alpha.
    p = -math.expm1(-epsilon)
    return rng.geometric(p, size=shape).astype(np.int64) - rng.geometric(p, size=shape)


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
        :math:`b = 1/\varepsilon`: the Laplace scale, and for the geometric mechanism the
        equivalent scale (:math:`\alpha = e^{-1/b}`).
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


def release_counts(counts: Any, epsilon: float, mechanism: Mechanism = "geometric",
                   random_state: Any = None) -> NoisyCounts:
    r"""Release a contingency table with epsilon-differential privacy.

    Every cell receives independent noise, :math:`\tilde n_c = n_c + e_c`, calibrated to
    sensitivity 1: adding or removing one row changes one cell by 1, so the release is
    pure :math:`\varepsilon`-DP for add/remove-one-row neighbours. Release each table of
    a report once, with its share of the budget (:class:`PrivacyBudget`).

    Parameters
    ----------
    counts : array-like of non-negative integers, any shape
        The true counts, one cell per combination of the table's variables (every
        combination, including empty ones: which cells exist must not depend on the data).
    epsilon : float
        The privacy loss of this release, finite and > 0.
    mechanism : {"geometric", "laplace"}, default "geometric"
        Two-sided geometric noise (integer output, :math:`\alpha = e^{-\varepsilon}`) or
        Laplace noise with scale :math:`b = 1/\varepsilon`.
    random_state : None, int or numpy.random.RandomState
        The source of noise. Use None (fresh entropy) for a real release: a fixed seed
        makes the noise reproducible by anyone who knows it.

    Returns
    -------
    NoisyCounts
        The raw release (may be negative), its epsilon, mechanism, scale and per-cell
        noise variance.

    Examples
    --------
    >>> noisy = release_counts([[30, 5], [12, 0]], epsilon=1.0, random_state=0)
    >>> noisy.values
    array([[30,  5],
           [12, -2]])
    >>> noisy.estimate().min() >= 0
    np.True_
    >>> round(noisy.noise_variance, 3)
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
            f"counts must be non-negative; cell {tuple(bad)} is {table[tuple(bad)]:g}")
    if not np.all(table == np.round(table)):
        bad = np.argwhere(table != np.round(table))[0]
        raise FairdecideError(
            f"counts must be whole numbers (sensitivity 1 assumes each row adds 1 to one "
            f"cell); cell {tuple(bad)} is {table[tuple(bad)]:g}")
    rng = check_random_state(random_state)
    noise = _noise(table.shape, eps, mechanism, rng)
    values = table.astype(np.int64) + noise if mechanism == "geometric" else table + noise
    return NoisyCounts(values, eps, mechanism)


def replicate_releases(noisy: NoisyCounts, n_draws: int, random_state: Any = None
                       ) -> np.ndarray:
    r"""Noise-aware bootstrap replicates of a released table.

    Each replicate redraws the table from :math:`\mathrm{Multinomial}(\hat N, \hat p)`,
    with :math:`\hat p` the clipped estimate normalised and :math:`\hat N` its rounded
    total, adds fresh noise of the same mechanism and epsilon, and clips at 0, so the
    spread of any statistic across replicates reflects both sampling and the privacy
    noise. This is post-processing of the release: it costs no privacy budget.

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

    Returns
    -------
    ndarray of shape (n_draws, \*noisy.shape), float
        Non-negative replicate tables.

    Examples
    --------
    >>> noisy = release_counts([[40, 10], [25, 25]], epsilon=0.5, random_state=0)
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
    tables += _noise(tables.shape, noisy.epsilon, noisy.mechanism, rng)
    np.clip(tables, 0.0, None, out=tables)
    return tables.reshape((n_draws, *noisy.shape))
