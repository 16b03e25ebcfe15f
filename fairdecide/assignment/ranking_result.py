"""The result of :func:`fairdecide.optimize_ranking`: the matrix, its figures, and the
rankings it stands for."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from fairdecide._common.deprecation import warn_deprecated
from fairdecide._common.validation import as_bool, as_float_array, as_int, check_random_state
from fairdecide.assignment.birkhoff import birkhoff_decomposition, complete_doubly_stochastic
from fairdecide.assignment.lottery import RankingLottery
from fairdecide.exceptions import FairdecideError
from fairdecide.optimize.engine.rounds import describe
from fairdecide.smoothness.meritocracy import meritocracy

__all__ = ["RankingResult"]


@dataclass(frozen=True, eq=False)
class RankingResult:
    """A stochastic ranking: P (n candidates x k positions), verified.

    What is kept: the marginal matrix P (the "counts" and "matrix" programs), or the
    lottery over rankings whose marginals are P (the "exposure" program; P is then built
    from it on first access to ``matrix``, n * k floats, and ``exposure``,
    ``selection_probability`` and ``sample`` read the lottery without it).

    Attributes
    ----------
    matrix : ndarray of shape (n, k)
        P_ij, the probability that candidate i is at position j (built on first access
        from ``lottery`` when the program returned one).
    utility : float
        sum_ij u_i v_j P_ij, recomputed from the matrix (or the lottery's exposures).
    deviations : dict[str, float]
        Each criterion's deviation, recomputed from the matrix (or the lottery's
        exposures).
    epsilon : dict[str, float]
        Each criterion's tolerance.
    status : str
        The solver's status ("optimal").
    formulation : str
        The program solved, "counts", "matrix" or "exposure" (see
        :func:`~fairdecide.optimize_ranking`); why in ``stats["formulation_reason"]``.
    unconstrained_utility : float
        The utility of the sort by merit, the best ranking without criteria.
    merits : ndarray of shape (n,)
    group : ndarray of shape (n,)
        Each candidate's group, as codes into ``group_labels`` (``groups`` before; the
        old attribute warns).
    group_labels : tuple
    positions : ndarray of shape (k,)
        The position weights v_j.
    stats : dict
        Program size, seconds, cut rounds or rankings generated, the verification's
        errors (row and column sums or the lottery's weights, utility against the
        solver's), and why the formulation was chosen.
    marginals : ndarray of shape (n, k) or None
        P as the program returned it (None for the "exposure" program).
    lottery : RankingLottery or None
        The "exposure" program's answer: at most G rankings and their weights, whose
        mean exposure is the optimum's.
    """

    utility: float
    deviations: dict[str, float]
    epsilon: dict[str, float]
    status: str
    formulation: str
    unconstrained_utility: float
    merits: np.ndarray
    group: np.ndarray
    group_labels: tuple
    positions: np.ndarray
    stats: dict = field(default_factory=dict)
    marginals: np.ndarray | None = None
    lottery: RankingLottery | None = None

    def __post_init__(self) -> None:
        if (self.marginals is None) == (self.lottery is None):
            raise FairdecideError("a RankingResult holds exactly one of marginals (the "
                                  "matrix P) and lottery (rankings whose marginals are P)")

    @property
    def groups(self) -> np.ndarray:
        """Deprecated name of :attr:`group`."""
        warn_deprecated("RankingResult.groups", "RankingResult.group", stacklevel=3)
        return self.group

    @cached_property
    def matrix(self) -> np.ndarray:
        """P_ij, shape (n, k): the program's matrix, or the lottery's marginals."""
        return self.marginals if self.lottery is None else self.lottery.matrix()

    @property
    def n(self) -> int:
        return len(self.merits)

    @property
    def k(self) -> int:
        return len(self.positions)

    @cached_property
    def exposure(self) -> np.ndarray:
        """Each candidate's exposure sum_j v_j P_ij, shape (n,)."""
        if self.lottery is not None:
            return self.lottery.exposure()
        return self.matrix @ self.positions

    @property
    def group_exposure(self) -> dict:
        """Each group's average exposure per member."""
        e = np.bincount(self.group, self.exposure, len(self.group_labels))
        return dict(zip(self.group_labels, (e / np.bincount(self.group)).tolist(),
                        strict=True))

    @property
    def price(self) -> float:
        """Utility given up for the criteria: unconstrained_utility - utility."""
        return self.unconstrained_utility - self.utility

    def selection_probability(self, top_k: int | None = None) -> np.ndarray:
        """P(candidate i among the first ``top_k`` places), shape (n,); default k."""
        if self.lottery is not None:
            return self.lottery.selection_probability(top_k)
        t = self.k if top_k is None else as_int(top_k, "top_k", minimum=1, maximum=self.k)
        return np.clip(self.matrix[:, :t].sum(axis=1), 0.0, 1.0)

    @cached_property
    def decomposition(self) -> Any:
        """A distribution over deterministic rankings whose position probabilities are P:
        the program's lottery (the "exposure" program), else the Birkhoff-von Neumann
        decomposition of P (completed to a square doubly-stochastic matrix when k < n)."""
        if self.lottery is not None:
            return self.lottery

        # every position is filled: columns sum to exactly one (the solver's round-off,
        # up to tol, would otherwise become padding that leaves a sampled position empty)
        P = np.clip(self.matrix, 0.0, None)
        P = P / P.sum(axis=0, keepdims=True)
        return birkhoff_decomposition(P if self.k == self.n else
                                      complete_doubly_stochastic(P))

    def sample(self, size: int, random_state: Any = None) -> np.ndarray:
        """Rankings drawn from the decomposition: shape (size, k), the candidate shown
        at each position (each ranking a deterministic one, with probabilities P)."""
        if self.lottery is not None:
            return self.lottery.sample(size, random_state)
        size = as_int(size, "size", minimum=1)
        rs = check_random_state(random_state)
        perms = np.asarray(self.decomposition.sample(size, rs))[:, : self.n]
        out = np.full((size, self.k), -1, dtype=np.intp)
        r, i = np.nonzero(perms < self.k)
        out[r, perms[r, i]] = i
        if np.any(out < 0):
            raise FairdecideError("a sampled ranking left a position empty: the "
                                  "decomposition does not match the matrix")
        return out

    def meritocracy(self, worths: Any = None, *, top_k: int | None = None,
                    unconstrained: bool = False, tol: float = 1e-9) -> Any:
        """:func:`~fairdecide.smoothness.meritocracy` of the selection into the first
        ``top_k`` places (default k): rows [1 - p_i, p_i] with p_i = P(i among the first
        top_k), checked against ``worths`` (default the merits). ``unconstrained=True``
        checks the sort by merit instead, the ranking before the criteria."""
        v = self.merits if worths is None else as_float_array(worths, "worths", ndim=1)
        if len(v) != self.n:
            raise FairdecideError(f"worths has {len(v)} values for {self.n} candidates")
        if as_bool(unconstrained, "unconstrained"):
            t = self.k if top_k is None else as_int(top_k, "top_k", minimum=1,
                                                     maximum=self.k)
            p = np.zeros(self.n)
            p[np.argsort(-self.merits, kind="stable")[:t]] = 1.0
        else:
            p = self.selection_probability(top_k)
        return meritocracy(np.stack([1.0 - p, p], axis=1), v, tol=tol)

    def summary(self) -> str:
        """A readable report."""
        what = "ranking" if self.k == self.n else f"top-{self.k} selection"
        lines = [f"fairdecide fair {what} of {self.n} candidates",
                 f"  status        : {self.status} ({self.formulation} program)",
                 f"  utility       : {self.utility:.6g} (sort by merit: "
                 f"{self.unconstrained_utility:.6g}, price {self.price:.4g})"]
        for name, val in self.deviations.items():
            lines.append(f"  {name:<14}: {val:.6g} (epsilon {self.epsilon[name]:g})")
        exp = ", ".join(f"{g}: {e:.4g}" for g, e in self.group_exposure.items())
        lines.append(f"  exposure      : {exp}")
        if self.k < self.n:
            fair = self.meritocracy().n_violations
            sort = self.meritocracy(unconstrained=True).n_violations
            lines.append(f"  merit order   : {fair} pairs passed over by a less worthy "
                         f"candidate in expectation (sort: {sort})")
        st = self.stats
        if self.lottery is not None:
            lines.append(f"  lottery       : {self.lottery.n_rankings} rankings")
        lines.append(f"  program       : {st.get('n_variables', '?')} variables, "
                     f"{st.get('n_constraints', '?')} constraints, solved in "
                     f"{st.get('solve_seconds', float('nan')):.3f} s")
        cert = st.get("certificate")
        if cert is not None:  # the master loop's (optimize/engine/rounds.py)
            lines.append(f"  optimality    : {describe(cert)}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return (f"RankingResult(n={self.n}, k={self.k}, utility={self.utility:.6g}, "
                f"deviations={ {k: round(v, 6) for k, v in self.deviations.items()} })")
