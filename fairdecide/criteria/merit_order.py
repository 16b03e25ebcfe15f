"""Meritocratic order: within a group, more merit never means a worse chance.

The book's meritocracy asks that of two candidates the better one is not treated worse.
For a stochastic policy over actions ordered from least to most favoured,
a_1 < a_2 < ... < a_K, "not worse" is first-order stochastic dominance: for every k,

    P(a >= a_k | i) <= P(a >= a_k | j)    whenever merit(i) < merit(j), i and j in one group.

:class:`MeritOrder` measures a policy by its largest violation of these inequalities and
writes them as rows of the optimisation program. Ranking is by the units' merit within
each group only: across groups the fairness criteria themselves ask for different
thresholds. The score family of the estimators uses it to keep each group's rule
monotone in the score (a threshold, randomised in at most one bin where the optimum
needs it), which keeps the program from fitting the noise of the bins' outcome rates.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp

from fairdecide._common.validation import as_float_array, as_labels, check_instance
from fairdecide.criteria.base import Capabilities, Criterion, Expansion, ProgramBlock
from fairdecide.exceptions import FairdecideError

if TYPE_CHECKING:
    from fairdecide.data.units import Units
    from fairdecide.problem import DecisionProblem
    from fairdecide.worlds.table import DecisionTable

__all__ = ["MeritOrder"]


@dataclass(frozen=True)
class MeritOrder(Criterion):
    """Within each group, a unit of higher merit is at least as likely as one of lower
    merit to receive each set of better actions.

    With the actions ordered from least to most favoured and merit m of each cell::

        F = max(0, max_{z, i, j, k} [P(a >= a_k | i) - P(a >= a_k | j)])

    over units i, j of group z on neighbouring merit levels (m(i) < m(j), no level of
    the group between them) and k = 2, ..., K: the largest reversal between neighbours.
    F = 0 means each group's rule is monotone in merit (the inequality then holds for
    every ordered pair); for two actions it is a threshold on merit, randomised where
    the optimum needs it. Linear in the policy rows.

    Parameters
    ----------
    merit : array-like of shape (n_cells,), optional
        The merit of each cell of the world (a score, or its bin's rank). Default: the
        cell codes, in the world's cell order.
    actions : list, optional
        The actions (labels) from least to most favoured. Default: the problem's order.
    name : str, optional
        Label in results (default "merit order").

    Examples
    --------
    >>> import numpy as np
    >>> from fairdecide import MeritOrder, TabularPolicy
    >>> from fairdecide.datasets import make_tabular_problem
    >>> problem, world = make_tabular_problem(n_x=3, n_z=2, random_state=0)
    >>> rising = TabularPolicy(np.array([[[.9, .1]] * 2, [[.5, .5]] * 2, [[.2, .8]] * 2]))
    >>> MeritOrder().deviation(rising, world, problem)
    0.0
    >>> MeritOrder(merit=[2, 1, 0]).deviation(rising, world, problem)  # reversed merit
    0.4
    """

    merit: tuple | None = None
    actions: tuple | None = None
    name: str | None = None

    def __post_init__(self) -> None:
        if self.merit is not None:
            m = as_float_array(self.merit, "merit", ndim=1)
            if m.size == 0:
                raise FairdecideError("merit must hold one value per cell, got none")
            object.__setattr__(self, "merit", tuple(m.tolist()))
        if self.actions is not None:
            object.__setattr__(self, "actions", as_labels(
                self.actions, "actions", "action label", non_empty=True))
        if self.name is not None:
            check_instance(self.name, "name", str, "a string (the label in results) or None")

    @property
    def label(self) -> str:
        return self.name or "merit order"

    def capabilities(self, problem: DecisionProblem) -> Capabilities:
        """Reads the policy rows and the units' cells; linear."""
        return Capabilities(reads="rows", linear=True, program=True)

    # ------------------------------------------------------------------ structure
    def _favoured_sets(self, problem: DecisionProblem) -> np.ndarray:
        """0/1 rows, one per k = 2..K: the actions at least as favoured as a_k."""
        order = (np.arange(problem.n_actions) if self.actions is None
                 else problem.action_codes(self.actions, name="actions"))
        if len(set(order.tolist())) != len(order):
            raise FairdecideError(f"actions must not repeat an action, got {self.actions!r}")
        sets = np.zeros((len(order) - 1, problem.n_actions))
        for k in range(1, len(order)):
            sets[k - 1, order[k:]] = 1.0
        return sets

    def pairs(self, units: Units) -> np.ndarray:
        """Pairs (i, j) of units of one group with merit(i) < merit(j) on consecutive
        merit levels of that group, shape (n_pairs, 2)."""
        if units.cell is None:
            raise FairdecideError(
                "MeritOrder reads each unit's cell (a tabular world or the estimators' "
                "score bins); these units have none")
        merit = (np.arange(units.n_cells, dtype=float) if self.merit is None
                 else np.asarray(self.merit))
        if len(merit) != units.n_cells:
            raise FairdecideError(
                f"merit has {len(merit)} values but the world has {units.n_cells} cells")
        m = merit[units.cell]
        out = []
        for g in range(units.n_groups):
            members = np.flatnonzero(units.group == g)
            levels = np.unique(m[members])
            for lo, hi in itertools.pairwise(levels):
                i, j = members[m[members] == lo], members[m[members] == hi]
                out.append(np.stack(np.meshgrid(i, j, indexing="ij"), -1).reshape(-1, 2))
        return np.concatenate(out) if out else np.zeros((0, 2), dtype=int)

    # ------------------------------------------------------------------ measuring
    def deviation_from_table(self, table: DecisionTable, problem: DecisionProblem) -> float:
        """The largest violation over the pairs, from the table's policy rows."""
        if table.rows is None or table.units is None:
            raise FairdecideError(
                "MeritOrder reads the policy rows and the units' cells; this decision "
                "table has neither (a table built from a group marginal)")
        pairs = self.pairs(table.units)
        if not len(pairs):
            return 0.0
        upper = table.rows @ self._favoured_sets(problem).T  # P(a >= a_k | u)
        return max(0.0, float((upper[pairs[:, 0]] - upper[pairs[:, 1]]).max()))

    # ------------------------------------------------------------------ program rows
    def add_rows(self, block: ProgramBlock, how: Expansion) -> None:
        """Rows sum_{a >= a_k} (pi_ia - pi_ja) - f <= 0 for each pair and k, over the
        block's free policy columns (pairs sharing a free row are left out)."""
        pairs = self.pairs(block.units)
        fi, fj = block.free_of_unit[pairs[:, 0]], block.free_of_unit[pairs[:, 1]]
        keep = fi != fj
        fi, fj = fi[keep], fj[keep]
        if not len(fi):
            return
        sets = self._favoured_sets(block.problem)
        n_free = block.pi_cols.shape[0]
        S = sp.csr_matrix(sets)
        # row (p, k): sets[k] on row fi[p], -sets[k] on row fj[p], -1 on f
        pick_i = sp.csr_matrix((np.ones(len(fi)), (np.arange(len(fi)), fi)),
                               shape=(len(fi), n_free))
        pick_j = sp.csr_matrix((np.ones(len(fj)), (np.arange(len(fj)), fj)),
                               shape=(len(fj), n_free))
        A = sp.kron(pick_i - pick_j, S, format="csr")
        A = sp.hstack([A, -np.ones((A.shape[0], 1))], format="csr")
        block.add_ub_dense(A, np.append(block.pi_cols.reshape(-1), block.f),
                           np.zeros(A.shape[0]))

    def __repr__(self) -> str:
        merit = "None" if self.merit is None else f"<{len(self.merit)} values>"
        named = "" if self.name is None else f", name={self.name!r}"
        return f"MeritOrder(merit={merit}, actions={self.actions!r}{named})"

