"""The result of :func:`~fairdecide.optimize_matching`, verified from its matrices, and its
sampler of whole matchings."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from fairdecide._common.validation import as_int, check_random_state
from fairdecide.assignment._seats import seat_layout, split_into_seats, stability_rows
from fairdecide.assignment.birkhoff import birkhoff_decomposition, complete_doubly_stochastic
from fairdecide.assignment.stable import blocking_pairs
from fairdecide.exceptions import VerificationError

__all__ = ["MatchingResult"]

#: How far a recomputed sum, rate or stability row may miss its bound (solver round-off).
TOL = 1e-6


def _rates(X: np.ndarray, codes: np.ndarray, n_groups: int) -> np.ndarray:
    """r[g, j] = (1 / n_g) sum_{i in g} X_ij."""
    size = np.bincount(codes, minlength=n_groups).astype(float)
    out = np.zeros((n_groups, X.shape[1]))
    np.add.at(out, codes, X)
    return out / size[:, None]


@dataclass(frozen=True, eq=False)
class MatchingResult:
    """A randomised matching: X[i, j] = P(candidate i gets programme j).

    Attributes
    ----------
    market : MatchingMarket
    X : ndarray of shape (n, m)
    seats : ndarray of shape (n, sum q)
        X split over the programmes' seats (the stable-matching program's own split under
        stability, else each programme's candidates in priority order cut at whole seats):
        the doubly-substochastic matrix the sampler decomposes.
    utility_matrix : ndarray of shape (n, m)
    utility : float
        Expected total utility sum_ij u_ij X_ij, recomputed from X.
    deviations : dict
        Recomputed group criteria: "rate_gap" (largest difference between two groups'
        matched rates), "programme_gap" (largest over programmes of the difference of
        two groups' rates), "min_share" (smallest share of each named group in an
        intake, over programmes with an intake); only those with more than one group.
    stability_violation : float
        max over acceptable (candidate, seat) pairs of 1 - row(i, k), at least 0: the
        stable-matching rows recomputed from ``seats``. A deficit d is a lower bound on
        the probability that the pair blocks a matching drawn with these marginals.
    deferred_acceptance : ndarray of int, shape (n,)
        The candidate-optimal stable matching, the baseline.
    stability, status, seconds
        Whether the stability rows were imposed, the solver's status word, seconds.
    method : str
        How it was solved: "dual simplex" (HiGHS's, over X's entries) without the
        stability rows; "dual simplex over the rotations of the stable matchings" with
        them (:mod:`fairdecide.assignment._rotations`); "deferred acceptance (no
        program: ...)" where that matching is the optimum
        (stability, no group criterion, a utility that follows the candidates'
        preferences: :func:`~fairdecide.assignment.matching_lp.follows_preferences`).
    """

    market: Any
    X: np.ndarray
    seats: np.ndarray
    utility_matrix: np.ndarray
    utility: float
    deviations: dict
    stability_violation: float
    deferred_acceptance: np.ndarray
    stability: bool
    status: str
    seconds: float
    bounds: dict = field(repr=False)
    group_labels: tuple = field(repr=False, default=())
    method: str = field(repr=False, default="dual simplex")

    @property
    def expected_utilities(self) -> np.ndarray:
        """Each candidate's expected utility sum_j u_ij X_ij."""
        return (self.X * self.utility_matrix).sum(axis=1)

    @property
    def deferred_acceptance_utilities(self) -> np.ndarray:
        da = self.deferred_acceptance
        n = len(da)
        return np.where(da >= 0, self.utility_matrix[np.arange(n), np.maximum(da, 0)], 0.0)

    @property
    def deferred_acceptance_utility(self) -> float:
        return float(self.deferred_acceptance_utilities.sum())

    def comparison(self, tol: float = 1e-9) -> dict[str, float]:
        """Against deferred acceptance: utilities, how many candidates are better and
        worse off in expectation, and the blocking pairs of the deferred-acceptance
        matching (none: it is stable)."""
        diff = self.expected_utilities - self.deferred_acceptance_utilities
        return {"utility": self.utility,
                "deferred_acceptance_utility": self.deferred_acceptance_utility,
                "better_off": int(np.sum(diff > tol)), "worse_off": int(np.sum(diff < -tol)),
                "deferred_acceptance_blocking_pairs": len(
                    blocking_pairs(self.market, self.deferred_acceptance))}

    @cached_property
    def _lottery(self) -> Any:
        """The lottery ``sample`` draws from, as a function (size, rng) -> each draw's
        programme per candidate: the threshold lottery (stable draws) or the
        Birkhoff-von Neumann one over the completed seat matrix."""
        if self.stability and self.stability_violation <= TOL:
            return _ThresholdLottery(self.market, self.seats).sample

        n, S = self.seats.shape
        seat_programme = np.r_[seat_layout(self.market.capacities)[0], -1]
        lottery = birkhoff_decomposition(complete_doubly_stochastic(self.seats))

        def draw(size: int, rng: np.random.RandomState) -> np.ndarray:
            perms = lottery.sample(size, rng)[:, :n]  # a padding column: unmatched
            return seat_programme[np.minimum(perms, S)]

        return draw

    def sample(self, size: int = 1, random_state: Any = None) -> np.ndarray:
        """Whole matchings whose marginals are X; no programme over capacity in any draw.

        Under exact stability each draw is a stable matching: one U ~ Uniform[0, 1) per
        draw, and each candidate takes the seat whose interval holds U when her seat
        probabilities are laid end to end in her order of preference (Teo and
        Sethuraman, 1998; every point of the stable-matching polytope is such a lottery
        of stable matchings). Otherwise the seat matrix is completed to a
        doubly-stochastic matrix and decomposed (Birkhoff-von Neumann), and a
        permutation is drawn with its weight.

        Returns
        -------
        ndarray of int, shape (size, n)
            Each draw's programme per candidate, -1 for unmatched.
        """
        size = as_int(size, "size", minimum=1)
        rng = check_random_state(random_state)
        n, S = self.seats.shape
        if S == 0:  # no places at all
            return np.full((size, n), -1, dtype=np.int64)
        return self._lottery(size, rng)

    def summary(self) -> str:
        comp = self.comparison()
        lines = [
            f"fair matching: {self.market.n_candidates} candidates, "
            f"{self.market.n_programmes} programmes, {int(self.market.capacities.sum())} "
            f"places ({self.status}, {self.method}, {self.seconds:.2f} s)",
            f"  expected utility {self.utility:.6g} (deferred acceptance "
            f"{comp['deferred_acceptance_utility']:.6g}); better off "
            f"{comp['better_off']}, worse off {comp['worse_off']}",
            f"  expected matched {self.X.sum():.6g}; stability rows "
            f"{'imposed' if self.stability else 'not imposed'}, largest violation "
            f"{self.stability_violation:.3g}",
        ]
        for name, value in self.deviations.items():
            bound = self.bounds.get(name)
            if isinstance(value, dict):
                text = ", ".join(f"{g}: {v:.4g} (>= {bound[g]:.4g})" for g, v in value.items())
                lines.append(f"  {name}: {text}")
            else:
                lines.append(f"  {name}: {value:.4g}"
                             + (f" (<= {bound:.4g})" if bound is not None else ""))
        return "\n".join(lines)

    def __repr__(self) -> str:
        return (f"MatchingResult(utility={self.utility:.6g}, "
                f"stability_violation={self.stability_violation:.3g}, status={self.status!r})")


class _ThresholdLottery:
    """Each candidate's seats in her order of preference, laid end to end on [0, 1]."""

    def __init__(self, market: Any, seats: np.ndarray) -> None:
        prog, no, _ = seat_layout(market.capacities)
        Q = int(market.capacities.max(initial=0)) + 1
        i, k = np.nonzero(seats > 1e-12)
        key = market.candidate_rank[i, prog[k]] * Q + no[k]
        order = np.lexsort((key, i))
        i, k = i[order], k[order]
        mass = seats[i, k]
        total = np.bincount(i, weights=mass, minlength=seats.shape[0])
        ends = np.cumsum(mass) - np.repeat(np.cumsum(total) - total,
                                           np.bincount(i, minlength=seats.shape[0]))
        full = total > 0.5  # a matched candidate's intervals end exactly at 1
        ends = np.where(full[i], ends / np.where(full, total, 1.0)[i], ends)
        self.i, self.prog_of = i, prog[k]
        self.comp = i + np.minimum(ends, 1.0)
        self.n, self.capacities = seats.shape[0], market.capacities

    def sample(self, size: int, rng: np.random.RandomState) -> np.ndarray:
        out = np.empty((size, self.n), dtype=np.int64)
        if not len(self.comp):  # nobody is matched in any stable matching
            out[:] = -1
            return out
        todo = np.arange(size)
        for _ in range(100):  # a redraw only where round-off overfills a programme
            u = rng.random_sample(len(todo))
            vals = np.arange(self.n)[None, :] + u[:, None]
            idx = np.searchsorted(self.comp, vals, side="right")
            ok = idx < len(self.comp)
            idx = np.minimum(idx, len(self.comp) - 1)
            ok &= self.i[idx] == np.arange(self.n)[None, :]
            draw = np.where(ok, self.prog_of[idx], -1)
            counts = np.zeros((len(todo), len(self.capacities)), dtype=np.int64)
            rows = np.repeat(np.arange(len(todo)), self.n)
            flat = draw.ravel()
            np.add.at(counts, (rows[flat >= 0], flat[flat >= 0]), 1)
            good = np.all(counts <= self.capacities, axis=1)
            out[todo[good]] = draw[good]
            todo = todo[~good]
            if not len(todo):
                return out
        raise VerificationError("the threshold sampler overfilled a programme 100 times: "
                                "the seat matrix is not a stable fractional matching")


def check_result(*, market: Any, X: np.ndarray, seats: np.ndarray | None,
                 utility_matrix: np.ndarray, groups: np.ndarray, group_labels: tuple,
                 rate_gap: float | None, programme_gap: float | None, min_share: dict,
                 stability: bool, da: np.ndarray, objective: float, status: str,
                 seconds: float, method: str = "dual simplex") -> MatchingResult:
    """Recompute every constraint and the utility from X (and the seat matrix) and build
    the result; a bound missed by more than TOL raises VerificationError."""
    def fail(what: str) -> None:
        raise VerificationError(f"the matching program's answer fails its check: {what}")

    if np.any(X[~market.acceptable] > TOL):
        fail("mass on a pair that is not mutually acceptable")
    if np.any(X.sum(axis=1) > 1 + TOL):
        fail(f"a candidate matched with total probability {X.sum(axis=1).max():.9g} > 1")
    over = X.sum(axis=0) - market.capacities
    if np.any(over > TOL):
        fail(f"programme {int(np.argmax(over))} over its capacity by {over.max():.3g}")
    if seats is None:
        seats = split_into_seats(market, X)
    if np.any(seats.sum(axis=0) > 1 + TOL):
        fail("a seat filled with probability above one")
    rows = stability_rows(market, seats)
    deficit = np.where(np.isnan(rows), 0.0, np.maximum(0.0, 1.0 - np.nan_to_num(rows, nan=1)))
    violation = float(deficit.max(initial=0.0))
    if stability and violation > TOL:
        fail(f"a stable-matching row violated by {violation:.3g}")
    utility = float((X * utility_matrix).sum())
    scale = max(1.0, float(np.abs(utility_matrix).max(initial=0.0)) * len(X))
    if abs(utility - objective) > TOL * scale:
        fail(f"utility {utility:.12g} recomputed from X differs from the solver's "
             f"{objective:.12g}")
    deviations: dict[str, Any] = {}
    bounds: dict[str, Any] = {}
    G = len(group_labels)
    if G > 1:
        r = _rates(X, groups, G)
        deviations["rate_gap"] = float(np.ptp(r.sum(axis=1)))
        deviations["programme_gap"] = float(np.ptp(r, axis=0).max(initial=0.0))
        bounds = {"rate_gap": rate_gap, "programme_gap": programme_gap}
        for name, bound in (("rate_gap", rate_gap), ("programme_gap", programme_gap)):
            if bound is not None and deviations[name] > bound + TOL:
                fail(f"{name} {deviations[name]:.9g} > {bound}")
        if min_share:
            intake = X.sum(axis=0)
            shares = {}
            size = np.bincount(groups, minlength=G)
            for label, s in min_share.items():
                g = group_labels.index(label)
                got = r[g] * size[g]
                has = intake > TOL
                if np.any(got[has] < s * intake[has] - TOL):
                    fail(f"group {label!r} below its minimum share {s}")
                shares[label] = float((got[has] / intake[has]).min(initial=1.0))
            deviations["min_share"] = shares
            bounds["min_share"] = dict(min_share)
    for arr in (X, seats, utility_matrix):
        arr.setflags(write=False)
    return MatchingResult(
        market=market, X=X, seats=seats, utility_matrix=utility_matrix, utility=utility,
        deviations=deviations, stability_violation=violation, deferred_acceptance=da,
        stability=stability, status=status, seconds=seconds, bounds=bounds,
        group_labels=group_labels, method=method)
