"""A fitted policy and how it decides for new rows: one rule per family (the softmax
family's standardised features, the tabular family's cells, the score family's bins
of a score)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
from sklearn.preprocessing import StandardScaler

from fairdecide.criteria import Criterion
from fairdecide.estimators._inputs import Cells
from fairdecide.estimators._scores import FoldMean, nearest_seen, score_features
from fairdecide.worlds.world import World

__all__ = ["CellRule", "Fitted", "ScoreRule", "SoftmaxRule"]


@dataclass
class Fitted:
    """A fitted policy (``result``, an OptimizeResult) and how to apply it to new rows;
    ``criteria`` the user's (without the score family's "score order"), ``world`` the
    plug-in training world of an intervention (None in a prediction problem)."""

    #: the policy family it was fitted as
    family: ClassVar[str]

    result: Any
    criteria: list[Criterion] = field(default_factory=list)
    world: World | None = None

    @property
    def n_iter(self) -> int:
        """Solver iterations reported in the result's statistics (at least 1)."""
        stats = self.result.stats
        return max(1, int(stats.get("iterations") or stats.get("solver_iterations") or 0))

    @property
    def reads_group(self) -> bool:
        """Whether the policy reads the group of a row."""
        raise NotImplementedError

    def action_proba(self, X: np.ndarray, z: np.ndarray | None, warn: bool = True
                     ) -> np.ndarray:
        """pi(. | x, z) of new rows, shape (n, n_actions) (z codes, or None when the
        policy ignores them); ``warn``: about rows in cells never seen in training (not
        for the estimator's own rows: its training rows, its held-out safety rows)."""
        raise NotImplementedError


@dataclass
class SoftmaxRule(Fitted):
    """pi(a | x, z) = softmax(W phi(x, z)) on the features standardised by ``scaler``."""

    family: ClassVar[str] = "softmax"

    scaler: StandardScaler | None = None

    @property
    def reads_group(self) -> bool:
        return bool(self.result.policy.include_z)

    def action_proba(self, X: np.ndarray, z: np.ndarray | None, warn: bool = True
                     ) -> np.ndarray:
        return self.result.policy.action_proba(self.scaler.transform(X), z)


@dataclass
class CellRule(Fitted):
    """One row of the policy per cell of the discretised features and group; a cell
    never met with a group in training gets that group's average rule P(a | z)."""

    family: ClassVar[str] = "tabular"

    cells: Cells | None = None
    seen: np.ndarray | None = None       # (n_cells, n_groups): cell met in that group
    fallback: np.ndarray | None = None   # (n_groups, n_actions): P(a | z) of the policy

    @property
    def reads_group(self) -> bool:
        return not self.result.policy.is_group_blind

    def codes(self, X: np.ndarray, z: np.ndarray, warn: bool) -> np.ndarray:
        """The cells of rows (-1: a cell never seen in training), ``z`` their groups."""
        return self.cells.codes(X, warn=warn)

    def action_proba(self, X: np.ndarray, z: np.ndarray | None, warn: bool = True
                     ) -> np.ndarray:
        zc = np.zeros(X.shape[0], dtype=np.intp) if z is None else z  # X may be sparse
        cells = self.codes(X, zc, warn)
        known = cells >= 0
        known[known] = self.seen[cells[known], zc[known]]
        out = self.fallback[zc].copy()
        out[known] = self.result.policy.table[cells[known], zc[known]]
        return out


@dataclass
class ScoreRule(CellRule):
    """The cells are bins of ``scorer``'s score of a row; a bin a group never reached in
    training takes that group's nearest bin's rule (bins are ordered)."""

    family: ClassVar[str] = "score"

    scorer: FoldMean | None = None

    def codes(self, X: np.ndarray, z: np.ndarray, warn: bool) -> np.ndarray:
        cells = self.cells.codes(score_features(self.scorer(X)), warn=warn)
        met = cells >= 0
        cells[met] = nearest_seen(self.seen)[cells[met], z[met]]
        return cells
