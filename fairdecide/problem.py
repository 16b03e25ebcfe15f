"""The decision problem: actions, outcomes and the utility of each pair."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from fairdecide._common.validation import as_bool, as_float_array, as_int
from fairdecide.exceptions import FairdecideError
from fairdecide.labels import Labels

__all__ = ["DecisionProblem"]


def _labels(given: Sequence[Any] | None, n: int, name: str) -> Labels:
    if given is None:
        return Labels.trusted(range(n))
    labels = Labels(given, name)
    if len(labels) != n:
        raise FairdecideError(f"{name} has {len(labels)} labels but utility implies {n}")
    return labels


@dataclass(frozen=True, eq=False)
class DecisionProblem:
    """What the decision maker can do, what can happen, and what it is worth.

    Parameters
    ----------
    utility : array-like of shape (n_actions, n_outcomes)
        ``utility[a, y]`` is the decision maker's utility U(a, y) of taking action ``a``
        when the outcome is ``y``.
    outcome_depends_on_action : bool, default=True
        True for interventions (bail, loans: the outcome follows the action), False for
        prediction problems, where the outcome y is drawn independently of the action
        and the action is a prediction of it.
    action_labels, outcome_labels : sequence, optional
        Names of the actions and outcomes, in code order. Default ``0, 1, ...``. Data are
        matched to the problem through these labels.

    Examples
    --------
    The book's bail example: release (a = 1) is worth 1, a crime (y = 1) costs 1.

    >>> from fairdecide import DecisionProblem
    >>> bail = DecisionProblem([[0, -1], [1, 0]], outcome_labels=["no crime", "crime"],
    ...                        action_labels=["detain", "release"])
    >>> bail.n_actions, bail.n_outcomes
    (2, 2)
    >>> accuracy = DecisionProblem.classification(2)
    >>> accuracy.utility
    array([[1., 0.],
           [0., 1.]])
    """

    utility: np.ndarray
    outcome_depends_on_action: bool = True
    action_labels: tuple[Any, ...] | None = None
    outcome_labels: tuple[Any, ...] | None = None

    def __post_init__(self) -> None:
        u = as_float_array(self.utility, "utility", ndim=2)
        if u.shape[0] < 2 or u.shape[1] < 1:
            raise FairdecideError(
                f"utility must have shape (n_actions >= 2, n_outcomes >= 1), got {u.shape}"
            )
        u = u.copy()
        u.flags.writeable = False
        object.__setattr__(self, "utility", u)
        object.__setattr__(self, "outcome_depends_on_action",
                           as_bool(self.outcome_depends_on_action, "outcome_depends_on_action"))
        a_lab = _labels(self.action_labels, u.shape[0], "action_labels")
        y_lab = _labels(self.outcome_labels, u.shape[1], "outcome_labels")
        object.__setattr__(self, "action_labels", a_lab)
        object.__setattr__(self, "outcome_labels", y_lab)

    @classmethod
    def classification(
        cls, n_classes: int = 2, labels: Sequence[Any] | None = None
    ) -> DecisionProblem:
        """Prediction problem with accuracy as utility: U(a, y) = 1 if a == y else 0."""
        n_classes = as_int(n_classes, "n_classes", minimum=2)
        return cls(
            np.eye(n_classes),
            outcome_depends_on_action=False,
            action_labels=labels,
            outcome_labels=labels,
        )

    @property
    def utility_name(self) -> str:
        """The utility by what it is: "accuracy" for a prediction problem whose utility
        is 1 for the action equal to the outcome and 0 otherwise (the actions are the
        classes), else "expected utility"."""
        U = self.utility
        if (not self.outcome_depends_on_action and U.shape[0] == U.shape[1]
                and np.array_equal(U, np.eye(U.shape[0]))):
            return "accuracy"
        return "expected utility"

    @property
    def n_actions(self) -> int:
        """Number of actions."""
        return self.utility.shape[0]

    @property
    def n_outcomes(self) -> int:
        """Number of outcomes."""
        return self.utility.shape[1]

    def action_codes(self, labels: Sequence[Any], name: str = "actions") -> np.ndarray:
        """Map action labels to codes, raising on labels the problem does not know."""
        return self.action_labels.encode(
            labels, name, what="unknown action", among="the problem's actions",
            hint="pass action_labels to DecisionProblem to match the data")

    def outcome_codes(self, labels: Sequence[Any], name: str = "outcomes") -> np.ndarray:
        """Map outcome labels to codes, raising on labels the problem does not know."""
        return self.outcome_labels.encode(
            labels, name, what="unknown outcome", among="the problem's outcomes",
            hint="pass outcome_labels to DecisionProblem to match the data")

    def __repr__(self) -> str:
        kind = "intervention" if self.outcome_depends_on_action else "prediction"
        return (
            f"DecisionProblem({kind}, actions={list(self.action_labels)}, "
            f"outcomes={list(self.outcome_labels)})"
        )

