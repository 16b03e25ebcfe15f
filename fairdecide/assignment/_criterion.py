"""The base of the ranking criteria: an exact deviation from the matrix, and linear rows.

A criterion writes rows ``A x <= b + epsilon * eps`` over the variables of the space it
reads (the cumulative group-position counts C, or the matrix P itself) and its own
auxiliary variables; :mod:`fairdecide.assignment._ranking_lp` places them in a program.
A criterion that reads P only through the groups' total exposures T_g = sum_{i in g}
sum_j v_j P_ij declares it (``reads_exposure``) and writes its rows over T
(``exposure_rows``); its rows over C follow (T_g = sum_j w_j C_gj), and the exposure
program of :mod:`fairdecide.assignment._exposure_lp` takes it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from fairdecide._common.deprecation import DEPRECATED, renamed
from fairdecide._common.validation import as_float_array
from fairdecide.assignment._setup import RankingSetup, dcg_weights, ranking_setup
from fairdecide.exceptions import FairdecideError


@dataclass(frozen=True)
class Rows:
    """Rows ``A x <= b + epsilon * eps`` over [space, aux] variables, where the space is
    the cumulative counts C (G*k, ``C[g*k + j]``) or the matrix P (n*k, row-major)."""

    A: Any
    b: np.ndarray
    eps: np.ndarray
    n_aux: int = 0


class RankingCriterion:
    """Shared behaviour of the ranking criteria: ``deviation`` from user input."""

    #: "counts": rows over C; "matrix": rows over P (only the whole program takes them)
    space = "counts"
    #: True: P is read only through the candidates' exposures e = P v, and the rows are
    #: over the groups' totals T_g = sum_{i in g} e_i (``exposure_rows``)
    reads_exposure = False

    @property
    def label(self) -> str:
        return self.name or self.default_name

    def deviation(self, P: Any, merits: Any, group: Any = None, positions: Any = None, *,
                  groups: Any = DEPRECATED) -> float:
        """The criterion's deviation of the ranking policy P (n x k), recomputed exactly.

        ``group`` is each candidate's group label (required; ``groups=`` is its deprecated
        name). ``positions`` (the weights v_j) default to DCG's 1/log2(1 + j) over P's k
        columns.
        """
        group = renamed(f"{type(self).__name__}.deviation", "groups", groups, "group",
                        group)
        M = as_float_array(P, "P", ndim=2)
        setup = ranking_setup(merits, group, dcg_weights(M.shape[1]) if positions is None
                              else positions)
        if M.shape != (setup.n, setup.k):
            raise FairdecideError(f"P must have shape (n candidates, k positions) = "
                                  f"{(setup.n, setup.k)}, got {M.shape}")
        rows, cols = M.sum(axis=1), M.sum(axis=0)
        if M.min() < -1e-8 or rows.max() > 1 + 1e-6 or np.abs(cols - 1).max() > 1e-6:
            raise FairdecideError(
                "P must be a ranking policy: entries >= 0, each row summing to at most 1 "
                "(exactly 1 when k = n) and each column to 1; got smallest entry "
                f"{M.min():.3g}, largest row sum {rows.max():.6g}, column sums in "
                f"[{cols.min():.6g}, {cols.max():.6g}]")
        self.check(setup, np.inf)  # any target has a deviation; only misfits raise
        return self._deviation(M, setup)

    def check(self, setup: RankingSetup, epsilon: float = 0.0) -> None:
        """Raise if the criterion does not fit these candidates, or asks more than any
        ranking can give even with its tolerance ``epsilon``."""

    def _deviation(self, P: np.ndarray, setup: RankingSetup) -> float:
        """The deviation of the matrix P: from its exposures P v where the criterion
        reads only those (``reads_exposure``)."""
        if not self.reads_exposure:
            raise NotImplementedError
        return self._exposure_deviation(P @ setup.positions, setup)

    def _exposure_deviation(self, e: np.ndarray, setup: RankingSetup) -> float:
        """The deviation from the candidates' exposures e (n,) (``reads_exposure``)."""
        raise NotImplementedError

    def exposure_rows(self, setup: RankingSetup) -> Rows:
        """Rows over the groups' total exposures T (G columns) and the aux variables
        (``reads_exposure``)."""
        raise NotImplementedError

    def rows(self, setup: RankingSetup) -> Rows:
        """Rows over C: those over T composed with T_g = sum_j w_j C_gj."""
        if not self.reads_exposure:
            raise NotImplementedError
        r = self.exposure_rows(setup)
        A = sp.csr_matrix(r.A)
        G = setup.n_groups
        to_counts = sp.kron(sp.identity(G), sp.csr_matrix(setup.steps[None, :]))
        A = sp.hstack([A[:, :G] @ to_counts, A[:, G:]]).tocsr()
        return Rows(A, r.b, r.eps, r.n_aux)
