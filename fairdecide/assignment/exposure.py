"""Fairness criteria of a stochastic ranking: exposure, shares of the top, smoothness.

A ranking policy is a matrix P (n candidates x k positions; notation of
:mod:`fairdecide.assignment._setup`). Candidate i's exposure is Exposure_i =
sum_j v_j P_ij, the expected attention its positions receive (Singh & Joachims, "Fairness
of exposure in rankings", KDD 2018). Every criterion here is a small frozen object with an
exact ``deviation`` computed from P, and writes its linear rows into the ranking program
(:func:`fairdecide.optimize_ranking`), which bounds each deviation by a tolerance.

- :class:`ExposureParity`: the groups' average exposures are equal (demographic parity of
  exposure);
- :class:`MeritExposure`: each group's exposure is proportional to its merit (their
  disparate-treatment criterion);
- :class:`TopShare`: a group holds at least a given number (or share) of the first K
  places in expectation, for K = ``top`` or every K up to it (FA*IR's condition, Zehlike
  et al. 2017, asked in expectation);
and, in :mod:`fairdecide.assignment.smoothness`, :class:`RankingLipschitz`: candidates of
similar merit get similar rows.

These three read P only through the group-position counts C_gj (the expected number of
group g's members among the first j places): one coupling row per position and group.
The first two read it only through the candidates' exposures e = P v (``reads_exposure``),
which the exposure program of :mod:`fairdecide.assignment._exposure_lp` solves over.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from fairdecide._common.validation import as_float_array, as_int, as_real, check_instance, plain
from fairdecide.assignment._criterion import RankingCriterion, Rows
from fairdecide.assignment._setup import RankingSetup
from fairdecide.exceptions import FairdecideError

__all__ = ["ExposureParity", "MeritExposure", "TopShare"]


def _spread_rows(setup: RankingSetup, scale: np.ndarray) -> Rows:
    """top - bot <= epsilon with bot <= scale_g T_g <= top for every group, over the
    groups' total exposures T (G columns) and aux variables top, bot: the largest gap
    between the groups' scaled exposures."""
    G = setup.n_groups
    D = sp.diags(scale)
    ones = np.ones((G, 1))
    A = sp.vstack([sp.hstack([D, -ones, 0 * ones]), sp.hstack([-D, 0 * ones, ones]),
                   sp.hstack([sp.csr_matrix((1, G)), sp.csr_matrix([[1.0, -1.0]])])])
    return Rows(A.tocsr(), np.zeros(2 * G + 1), np.r_[np.zeros(2 * G), 1.0], n_aux=2)


def _spread(values: np.ndarray) -> float:
    return float(values.max() - values.min())


@dataclass(frozen=True)
class ExposureParity(RankingCriterion):
    """Demographic parity of exposure: every group's members get the same average exposure.

    With Exposure(g) = (1 / n_g) sum_{i in g} sum_j v_j P_ij::

        F = max_g Exposure(g) - min_g Exposure(g).

    Parameters
    ----------
    name : str, optional
        Label in results (default "exposure parity").

    Examples
    --------
    >>> import numpy as np
    >>> from fairdecide.assignment import ExposureParity
    >>> P = np.eye(3)  # candidates 0, 1, 2 in that order; v = 1, 1/log2(3), 1/2
    >>> round(ExposureParity().deviation(P, [3, 2, 1], ["a", "a", "b"]), 4)  # (1 + .6309) / 2 - .5
    0.3155
    """

    name: str | None = None
    default_name = "exposure parity"

    def __post_init__(self) -> None:
        if self.name is not None:
            check_instance(self.name, "name", str, "a string (the label in results) or None")

    reads_exposure = True

    def _exposure_deviation(self, e: np.ndarray, setup: RankingSetup) -> float:
        return _spread(setup.group_exposure(e))

    def exposure_rows(self, setup: RankingSetup) -> Rows:
        return _spread_rows(setup, 1.0 / setup.sizes)


@dataclass(frozen=True)
class MeritExposure(RankingCriterion):
    """Exposure proportional to merit (disparate treatment, Singh & Joachims 2018).

    With Exposure(g) as in :class:`ExposureParity` and Merit(g) = (1 / n_g) sum_{i in g}
    u_i > 0::

        F = max_g Exposure(g) / Merit(g) - min_g Exposure(g) / Merit(g).

    Parameters
    ----------
    name : str, optional
        Label in results (default "merit exposure").

    Examples
    --------
    >>> import numpy as np
    >>> from fairdecide.assignment import MeritExposure
    >>> P = np.eye(2)  # exposure per merit: a 1 / 2, b 0.6309 / 1
    >>> round(MeritExposure().deviation(P, [2.0, 1.0], ["a", "b"]), 4)
    0.1309
    """

    name: str | None = None
    default_name = "merit exposure"

    def __post_init__(self) -> None:
        if self.name is not None:
            check_instance(self.name, "name", str, "a string (the label in results) or None")

    def check(self, setup: RankingSetup, epsilon: float = 0.0) -> None:
        m = setup.group_merit()
        if np.any(m <= 0):
            g = int(np.argmax(m <= 0))
            raise FairdecideError(
                f"MeritExposure divides by each group's average merit, and group "
                f"{setup.labels[g]!r} has average merit {m[g]:.4g} <= 0: shift the merits "
                "to be positive (e.g. relevance probabilities) or use ExposureParity")

    reads_exposure = True

    def _exposure_deviation(self, e: np.ndarray, setup: RankingSetup) -> float:
        return _spread(setup.group_exposure(e) / setup.group_merit())

    def exposure_rows(self, setup: RankingSetup) -> Rows:
        return _spread_rows(setup, 1.0 / (setup.sizes * setup.group_merit()))


@dataclass(frozen=True)
class TopShare(RankingCriterion):
    """A group holds at least m_K of the first K places in expectation.

    With N_g(K) = sum_{i in g} sum_{j <= K} P_ij, the expected number of the group's
    members among the first K places, and m_K = ``at_least`` * K or ``minimum[K - 1]``::

        F = max_K max(0, m_K - N_g(K))

    over K = ``top`` only, or every K = 1..``top`` (``every_prefix``, FA*IR's
    condition). F is in candidates (expected places short of the minimum).

    Parameters
    ----------
    group : label
        The (protected) group.
    at_least : float in [0, 1], optional
        The share p: m_K = p K.
    minimum : array-like of shape (K,), optional
        The minimum count m_K for K = 1..len(minimum) instead (e.g. FA*IR's table of
        minimum protected candidates); ``top`` is then its length.
    top : int, optional
        The last prefix K checked (default: every position of the ranking).
    every_prefix : bool, default=True
        Check every K = 1..top, or K = top only (a cohort's share).
    name : str, optional
        Label in results (default "top share <group>", or "top-<top> share <group>"
        without ``every_prefix``).

    Examples
    --------
    >>> import numpy as np
    >>> from fairdecide.assignment import TopShare
    >>> P = np.eye(4)                      # groups in rank order: a, a, b, b
    >>> TopShare("b", at_least=0.5).deviation(P, [4, 3, 2, 1], ["a", "a", "b", "b"])
    1.0
    >>> TopShare("b", at_least=0.5, top=4, every_prefix=False).deviation(
    ...     P, [4, 3, 2, 1], ["a", "a", "b", "b"])
    0.0
    """

    group: Any = None
    at_least: float | None = None
    minimum: Any = None
    top: int | None = None
    every_prefix: bool = True
    name: str | None = None

    def __post_init__(self) -> None:
        try:
            hash(self.group)
        except TypeError:
            raise FairdecideError(f"group must be one group label, got {self.group!r}"
                                  ) from None
        if self.group is None:
            raise FairdecideError("group must be the label of the group that holds the "
                                  "places, got None")
        object.__setattr__(self, "group", plain(self.group))
        if (self.at_least is None) == (self.minimum is None):
            raise FairdecideError("give exactly one of at_least (a share p in [0, 1]) and "
                                  "minimum (a count for each prefix K = 1, 2, ...)")
        if self.at_least is not None:
            object.__setattr__(self, "at_least",
                               as_real(self.at_least, "at_least", low=0.0, high=1.0))
        else:
            m = as_float_array(self.minimum, "minimum", ndim=1)
            if not len(m) or np.any(m < 0) or np.any(m > np.arange(1, len(m) + 1)):
                raise FairdecideError("minimum must hold, for K = 1..len(minimum), a count "
                                      "0 <= m_K <= K")
            if self.top is not None and as_int(self.top, "top", minimum=1) != len(m):
                raise FairdecideError(f"top = {self.top} but minimum has {len(m)} counts: "
                                      "give one of them, or both of the same length")
            object.__setattr__(self, "minimum", tuple(m.tolist()))
        if self.top is not None:
            object.__setattr__(self, "top", as_int(self.top, "top", minimum=1))
        if not isinstance(self.every_prefix, bool | np.bool_):
            raise FairdecideError(f"every_prefix must be True or False, got "
                                  f"{self.every_prefix!r}")
        if self.name is not None:
            check_instance(self.name, "name", str, "a string (the label in results) or None")

    @property
    def default_name(self) -> str:
        if self.every_prefix:
            return f"top share {self.group}"
        return f"top-{self.top or 'k'} share {self.group}"

    def targets(self, setup: RankingSetup) -> tuple[np.ndarray, np.ndarray]:
        """(prefix lengths K, minimum counts m_K) checked on these candidates."""
        top = (len(self.minimum) if self.minimum is not None else
               setup.k if self.top is None else self.top)
        if top > setup.k:
            raise FairdecideError(f"TopShare checks the first {top} places but the ranking "
                                  f"has only k = {setup.k} positions")
        K = np.arange(1, top + 1) if self.every_prefix else np.array([top])
        m = (self.at_least * K if self.minimum is None
             else np.asarray(self.minimum)[K - 1])
        return K, m

    def code(self, setup: RankingSetup) -> int:
        return int(setup.labels.encode([self.group], "TopShare's group", what="group",
                                       among="the groups")[0])

    def check(self, setup: RankingSetup, epsilon: float = 0.0) -> None:
        K, m = self.targets(setup)
        n_g = int(setup.sizes[self.code(setup)])
        short = m - epsilon > np.minimum(K, n_g) + 1e-12
        if short.any():
            at = int(np.argmax(short))
            raise FairdecideError(
                f"TopShare asks group {self.group!r} (n = {n_g} candidates) for {m[at]:.4g} "
                f"of the first {K[at]} places, more than it can hold within epsilon "
                f"{epsilon:g}: lower at_least or minimum to at most min(K, {n_g}) + epsilon")

    def _deviation(self, P: np.ndarray, setup: RankingSetup) -> float:
        K, m = self.targets(setup)
        got = np.cumsum(P[setup.codes == self.code(setup)].sum(axis=0))[K - 1]
        return float(max(0.0, np.max(m - got)))

    def rows(self, setup: RankingSetup) -> Rows:
        """-C_{g,K} <= -m_K + epsilon."""
        K, m = self.targets(setup)
        cols = self.code(setup) * setup.k + K - 1
        A = sp.csr_matrix((-np.ones(len(K)), (np.arange(len(K)), cols)),
                          shape=(len(K), setup.n_groups * setup.k))
        return Rows(A, -m.astype(float), np.ones(len(K)))
