"""Sufficient statistics of discrete logged data and the (smoothed) maximum-likelihood world."""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from fairdecide._common.validation import as_real, check_instance
from fairdecide.data.counts import LoggedCounts, count_table
from fairdecide.data.logged import LoggedData
from fairdecide.exceptions import FairdecideError
from fairdecide.problem import DecisionProblem

__all__ = ["TabularCounts"]


def check_data(data: LoggedData, problem: DecisionProblem, allow_empty_groups: bool) -> None:
    """Raise unless ``data`` is LoggedData with rows in every group (or empty groups are
    allowed) and ``problem`` a DecisionProblem."""
    if not isinstance(data, LoggedData | LoggedCounts):
        raise FairdecideError(
            f"data must be LoggedData or LoggedCounts, got {type(data).__name__}")
    check_instance(problem, "problem", DecisionProblem, "a DecisionProblem")
    if not allow_empty_groups:
        seen = np.bincount(data.z, minlength=data.n_z)
        if np.any(seen == 0):
            names = [data.group_labels[i] for i in np.flatnonzero(seen == 0)]
            raise FairdecideError(
                f"group(s) {names} have no rows in the data; remove them from group_labels, "
                "supply data for them, or (for a posterior) pass allow_empty_groups=True to "
                "let the prior alone speak for them")


def _warn_unseen_actions(actions: list) -> None:
    warnings.warn(
        f"actions {actions} never appear in the data; their outcome distribution is set to "
        "uniform. Estimates of their consequences are guesses",
        stacklevel=4,
    )


@dataclass(frozen=True)
class TabularCounts:
    """Counts n(x, z) and n(x, z, [a,] y) of logged data, matched to a problem.

    Attributes
    ----------
    n_xz : ndarray of shape (n_x, n_z)
    n_y : ndarray of shape (n_x, n_z, n_actions, n_outcomes) or (n_x, n_z, n_outcomes)
        With an action axis when the problem's outcome depends on the action.
    """

    n_xz: np.ndarray
    n_y: np.ndarray
    x_labels: tuple
    group_labels: tuple
    action_labels: tuple

    @classmethod
    def from_data(cls, data: LoggedData, problem: DecisionProblem,
                  allow_empty_groups: bool = False, weights: np.ndarray | None = None
                  ) -> TabularCounts:
        """Count ``data`` in the problem's numbering of actions and outcomes (each row
        weighted by ``weights`` when given). A group without rows is an error unless
        ``allow_empty_groups``."""
        check_data(data, problem, allow_empty_groups)
        counts = count_table(data, problem, actions=problem.outcome_depends_on_action,
                             weights=weights)
        n_xz = counts.reshape(data.n_x, data.n_z, -1).sum(axis=2)
        return cls(n_xz, counts, data.x_labels, data.group_labels, problem.action_labels)

    def mle_parameters(self, smoothing: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
        """P(x, z) and P(y | [a,] x, z) of the maximum-likelihood world with additive
        smoothing (see TabularWorld.from_data)."""
        alpha = as_real(smoothing, "smoothing", low=0)
        if not np.isfinite(alpha) or alpha < 0:
            raise FairdecideError(f"smoothing must be a finite number >= 0, got {smoothing!r}")
        p_xz = (self.n_xz + alpha) / (self.n_xz.sum() + alpha * self.n_xz.size)
        counts = self.n_y + alpha
        totals = counts.sum(axis=-1, keepdims=True)
        # Back-off for cells never seen: pooled frequencies (of the action, if any).
        pooled = self.n_y.sum(axis=(0, 1))
        pooled_tot = pooled.sum(axis=-1, keepdims=True)
        n_out = self.n_y.shape[-1]
        unseen_act = np.flatnonzero(pooled_tot.reshape(-1) == 0) if pooled.ndim == 2 else []
        if len(unseen_act):
            _warn_unseen_actions([self.action_labels[i] for i in unseen_act])
        with np.errstate(invalid="ignore", divide="ignore"):
            backoff = np.where(pooled_tot > 0, pooled / pooled_tot, 1.0 / n_out)
            p_y = np.where(totals > 0, counts / np.where(totals > 0, totals, 1.0), backoff)
        return p_xz, p_y
