"""A lottery over deterministic rankings: a few rankings and the probability of each.

A stochastic ranking can be acted on only by drawing one deterministic ranking. Under
criteria that read only the candidates' exposures e_i = sum_j v_j P_ij, the exposure
program of :func:`fairdecide.optimize_ranking` (``formulation="exposure"``) returns its
answer directly as such a lottery: rankings pi_1..pi_m with weights w_r > 0 summing to
one, whose mean exposure is

    e_i = sum_r w_r v_{pi_r(i)}       (v_j = 0 past the k shown positions),

a point of the expohedron, the permutahedron of the position weights (Kletti et al.,
"Introducing the Expohedron for Efficient Pareto-optimal Fairness-Utility Amortizations
in Repeated Rankings", WSDM 2022). The marginal matrix P_ij = sum_r w_r [pi_r(i) = j]
is built only when asked (:meth:`RankingLottery.matrix`): at n = 10,000 a dense n x n
matrix takes 800 MB, the lottery m * n integers.

Interchangeable candidates (``ties``: the same merit and the same group) are treated
alike: each ranking stands for the uniform mixture over the orders of each tie class
among the places its members hold in it, so every member of a class gets the class's
mean exposure and row, and :meth:`RankingLottery.sample` shuffles them. Utility and every
group's total exposure are those of the rankings as listed (a class lies in one group
and shares one merit).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from fairdecide._common.validation import as_int, check_random_state
from fairdecide.assignment._setup import average_over

__all__ = ["RankingLottery"]


@dataclass(frozen=True, eq=False)
class RankingLottery:
    """Rankings and their probabilities: ranking r is drawn with probability weights[r].

    Attributes
    ----------
    weights : ndarray of shape (m,)
        Positive, summing to one.
    rankings : ndarray of int, shape (m, n)
        ``rankings[r, j]`` is the candidate at position j of ranking r (every candidate
        once; positions j >= k are not shown).
    positions : ndarray of shape (k,)
        The position weights v_j.
    ties : ndarray of int, shape (n,), optional
        Each candidate's tie class (candidates of one class are interchangeable); None:
        every candidate its own.

    Examples
    --------
    Two candidates, each first half of the time:

    >>> import numpy as np
    >>> from fairdecide.assignment import RankingLottery
    >>> lot = RankingLottery(np.array([0.5, 0.5]), np.array([[0, 1], [1, 0]]),
    ...                      np.array([1.0, 0.5]))
    >>> lot.exposure().tolist(), lot.matrix().tolist()
    ([0.75, 0.75], [[0.5, 0.5], [0.5, 0.5]])
    >>> lot.sample(3, random_state=0).shape
    (3, 2)
    """

    weights: np.ndarray
    rankings: np.ndarray
    positions: np.ndarray
    ties: np.ndarray | None = None

    @property
    def n(self) -> int:
        return int(self.rankings.shape[1])

    @property
    def k(self) -> int:
        return len(self.positions)

    @property
    def n_rankings(self) -> int:
        return len(self.weights)

    def places(self) -> np.ndarray:
        """``places()[r, i]``: the position of candidate i in ranking r, shape (m, n)."""
        out = np.empty_like(self.rankings)
        np.put_along_axis(out, self.rankings,
                          np.broadcast_to(np.arange(self.n), self.rankings.shape), axis=1)
        return out

    def exposure(self) -> np.ndarray:
        """The mean exposure e_i = sum_r w_r v_{pi_r(i)} (a tie class's mean for each of
        its members), shape (n,)."""
        v = np.r_[self.positions, np.zeros(self.n - self.k)]
        return self._alike(self.weights @ v[self.places()])

    def matrix(self) -> np.ndarray:
        """The marginals P_ij = sum_r w_r [candidate i at position j] (a tie class's mean
        row for each of its members), shape (n, k), dense (n * k floats)."""
        P = np.zeros((self.n, self.k))
        cols = np.broadcast_to(np.arange(self.k), (self.n_rankings, self.k))
        np.add.at(P, (self.rankings[:, :self.k], cols),
                  np.broadcast_to(self.weights[:, None], cols.shape))
        return self._alike(P)

    def selection_probability(self, top_k: int | None = None) -> np.ndarray:
        """P(candidate i among the first ``top_k`` places), shape (n,); default k."""
        t = self.k if top_k is None else as_int(top_k, "top_k", minimum=1, maximum=self.k)
        return np.clip(self._alike(np.bincount(self.rankings[:, :t].ravel(),
                                               np.repeat(self.weights, t), self.n)),
                       0.0, 1.0)

    def _alike(self, x: np.ndarray) -> np.ndarray:
        """``x`` (one entry or row per candidate) averaged over each tie class."""
        return average_over(self.ties, x)

    def sample(self, size: int = 1, random_state: Any = None) -> np.ndarray:
        """Draw ``size`` rankings, ranking r with probability weights[r].

        Returns
        -------
        ndarray of int, shape (size, k)
            Row s: the candidate shown at each of the k positions.
        """
        size = as_int(size, "size", minimum=1)
        rng = check_random_state(random_state)
        pick = rng.choice(self.n_rankings, size=size, p=self.weights)
        drawn = self.rankings[pick].astype(np.intp)
        if self.ties is not None:  # each tie class shuffled among its places
            for row in drawn:
                cls = self.ties[row]
                places = np.lexsort((np.arange(self.n), cls))
                row[places] = row[np.lexsort((rng.random_sample(self.n), cls))]
        return drawn[:, : self.k]

    def summary(self) -> str:
        """How many rankings and their largest weight."""
        return (f"lottery over {self.n_rankings} rankings of {self.n} candidates "
                f"(k = {self.k} shown), largest weight {self.weights.max():.4g}")

    def __repr__(self) -> str:
        return (f"RankingLottery(n={self.n}, k={self.k}, "
                f"n_rankings={self.n_rankings})")
