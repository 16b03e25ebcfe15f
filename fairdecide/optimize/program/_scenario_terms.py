"""The criteria's deviations as pieces the scenario-cut solver can cut on.

A linear group criterion writes its deviation in a scenario as a weighted sum (or max)
of absolute values |D_r m + d_r| of the scenario's group marginal m
(:meth:`~fairdecide.optimize.program.assembly.CriterionBlock.add_abs_epigraph`). :func:`record`
has each criterion write its rows into a recording block, for every scenario, and keeps
them as one sparse matrix over the K marginals; a criterion that writes any other row is
not suited (:class:`NotSuited`). :meth:`Terms.cuts` gives the pieces a marginal violates
and their cuts, each exact where it was taken.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from fairdecide.criteria.base import Criterion

__all__ = ["NotSuited", "Terms", "record"]


class NotSuited(Exception):
    """A criterion writes rows this solver cannot turn into cuts."""


@dataclass
class Terms:
    """One criterion's deviation in every scenario: rows D (over all K marginals), d,
    weights, each row's scenario, and how rows combine ("sum" or "max")."""

    D: sp.csr_matrix
    d: np.ndarray
    weight: np.ndarray
    scenario: np.ndarray
    kind: str
    cut_tol: float

    def cuts(self, m: np.ndarray, bound: np.ndarray) -> tuple[np.ndarray, sp.csr_matrix,
                                                              np.ndarray]:
        """The rows whose piece at m exceeds its bound (s_r for a sum, f_ck for a max,
        given per row), and each one's cut: bound >= g . m' + h, exact at m."""
        r = self.D @ m.reshape(-1) + self.d
        scale = np.ones_like(r) if self.kind == "sum" else self.weight
        value = scale * np.abs(r)
        bad = np.flatnonzero(value > bound + self.cut_tol * np.maximum(1.0, value))
        sign = scale[bad] * np.where(r[bad] >= 0, 1.0, -1.0)
        g = sp.diags(sign) @ self.D[bad]
        return bad, sp.csr_matrix(g), sign * self.d[bad]


class _Recorder:
    """A program block that records a criterion's absolute-value rows for one scenario
    (what :class:`~fairdecide.optimize.program.assembly.CriterionBlock` would write)."""

    def __init__(self, prog: Any, k: int, point: np.ndarray) -> None:
        self.problem, self.units = prog.problem, prog.units
        self.unit_weights, self.unit_outcomes = prog.unit_w[k], prog.unit_p_y[k]
        self.n_groups, self.f = prog.n_z, 0
        self.m_cols = np.arange(prog.n_m)
        self.marginal = (prog.B[k] @ point.reshape(-1)).reshape(prog.n_z, prog.n_a, prog.n_y)
        self.pi_cols = None
        self.free_of_unit = prog.free_of_unit
        self.point = point
        self.pieces: list[tuple[Any, np.ndarray, np.ndarray, np.ndarray, str]] = []

    def add_abs_epigraph(self, D: Any, d: np.ndarray, cols: np.ndarray, weight: np.ndarray,
                         kind: str = "sum") -> None:
        self.pieces.append((D, np.asarray(d, float), np.asarray(cols),
                            np.asarray(weight, float), kind))

    def _other(self, *args: Any, **kwargs: Any) -> None:
        raise NotSuited("a criterion writes rows other than absolute values of the marginal")

    new_vars = add_ub_dense = add_eq_dense = add_kl = _other


def record(criteria: list[Criterion], prog: Any, cut_tol: float) -> list[Terms]:
    """Each criterion's rows in every scenario (of the PolicyProgram ``prog``), or
    NotSuited; a piece is cut off where it exceeds its bound by ``cut_tol`` (relative)."""
    point, K, n_m = prog.uniform(), prog.K, prog.n_m
    out = []
    for crit in criteria:
        rows, cols, vals, d, weight, scen, kinds = [], [], [], [], [], [], set()
        n = 0
        for k in range(K):
            rec = _Recorder(prog, k, point)
            crit.add_rows(rec, "exact")
            if sum(p[4] == "sum" for p in rec.pieces) > 1:
                raise NotSuited("a criterion writes several sums for one deviation")
            for D, dk, c, w, kind in rec.pieces:
                kinds.add(kind)
                coo = sp.coo_matrix(D)
                rows.append(coo.row + n)
                cols.append(k * n_m + c[coo.col])
                vals.append(coo.data)
                d.append(dk)
                weight.append(w)
                scen.append(np.full(len(dk), k))
                n += len(dk)
        if len(kinds) > 1:
            raise NotSuited("a criterion mixes sums and maxima")
        D = sp.csr_matrix((_cat(vals), (_cat(rows, int), _cat(cols, int))), shape=(n, K * n_m))
        out.append(Terms(D, _cat(d), _cat(weight), _cat(scen, int), kinds.pop() if kinds
                         else "sum", cut_tol))
    return out


def _cat(parts: list[np.ndarray], dtype: Any = float) -> np.ndarray:
    return np.concatenate(parts).astype(dtype) if parts else np.zeros(0, dtype)
