"""Foreign objects as policies: fitted classifiers and callables.

The one place where objects that are not fairdecide policies are recognised: a
scikit-learn classifier over actions (``predict_proba``) or a callable
``f(X) -> (n, n_actions)``. Both read numeric features.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np

from fairdecide._common.validation import as_int, check_instance
from fairdecide.data.units import Units
from fairdecide.exceptions import FairdecideError
from fairdecide.policies.base import Policy
from fairdecide.problem import DecisionProblem

__all__ = ["CallablePolicy", "ClassifierPolicy", "as_policy"]


def _features(units: Units, what: str) -> np.ndarray:
    if units.features is None:
        raise FairdecideError(f"{what} reads numeric features, but these units have none")
    return units.features


def check_rows(probs: Any, n: int, n_actions: int) -> np.ndarray:
    """Action probabilities of shape (n, n_actions) on the simplex, clipped at zero."""
    probs = np.asarray(probs, dtype=float)
    if probs.shape != (n, n_actions):
        raise FairdecideError(
            f"the policy gave probabilities of shape {probs.shape}; expected "
            f"({n}, {n_actions}) (one column per action of the problem)")
    if not np.all(np.isfinite(probs)) or np.any(probs < -1e-9) or not np.allclose(
            probs.sum(axis=1), 1.0, atol=1e-6):
        raise FairdecideError("the policy's action probabilities must be rows on the simplex")
    return np.clip(probs, 0.0, None)


class ClassifierPolicy(Policy):
    """A fitted classifier over actions; its ``classes_`` are the problem's action labels
    or action codes."""

    reads: ClassVar[frozenset[str]] = frozenset({"features"})

    def __init__(self, classifier: Any, problem: DecisionProblem) -> None:
        self.classifier = classifier
        self._n_actions = problem.n_actions
        classes = list(getattr(classifier, "classes_", ()))
        try:  # classes are the problem's action labels ...
            self.columns = problem.action_codes(classes, name="the classifier's classes_")
        except FairdecideError:  # ... or action codes
            cols = []
            for c in classes:
                try:
                    code = int(c)
                except (TypeError, ValueError):
                    code = -1
                if not 0 <= code < problem.n_actions:
                    raise FairdecideError(
                        f"the classifier's class {c!r} is neither an action label of the "
                        f"problem {list(problem.action_labels)} nor an action code "
                        f"0..{problem.n_actions - 1}") from None
                cols.append(code)
            self.columns = np.asarray(cols, dtype=int)

    @property
    def n_actions(self) -> int:
        return self._n_actions

    def proba(self, units: Units) -> np.ndarray:
        X = _features(units, "a classifier policy")
        raw = np.asarray(self.classifier.predict_proba(X), dtype=float)
        if raw.ndim != 2 or raw.shape[1] != len(self.columns):
            raise FairdecideError(
                f"predict_proba gave shape {raw.shape}; expected one column per class "
                f"({len(self.columns)})")
        probs = np.zeros((len(X), self.n_actions))
        probs[:, self.columns] = raw
        return check_rows(probs, len(X), self.n_actions)


class CallablePolicy(Policy):
    """``f(X) -> (n, n_actions)`` action probabilities of numeric features."""

    reads: ClassVar[frozenset[str]] = frozenset({"features"})

    def __init__(self, function: Callable[[np.ndarray], Any], n_actions: int) -> None:
        if not callable(function):
            raise FairdecideError(
                "function must be callable, f(X) -> (n, n_actions); got "
                f"{type(function).__name__}")
        self.function = function
        self._n_actions = as_int(n_actions, "n_actions", minimum=2)

    @property
    def n_actions(self) -> int:
        return self._n_actions

    def proba(self, units: Units) -> np.ndarray:
        X = _features(units, "a callable policy")
        return check_rows(self.function(X), len(X), self.n_actions)


def as_policy(obj: Any, problem: DecisionProblem) -> Policy:
    """``obj`` as a Policy: a fairdecide policy as is, a classifier with ``predict_proba``
    or a callable wrapped."""
    check_instance(problem, "problem", DecisionProblem, "a DecisionProblem")
    if isinstance(obj, Policy):
        return obj
    if callable(getattr(obj, "predict_proba", None)):
        return ClassifierPolicy(obj, problem)
    if callable(obj):
        return CallablePolicy(obj, problem.n_actions)
    raise FairdecideError(
        "policy must be a TabularPolicy, a fitted classifier with predict_proba, or a "
        f"callable returning action probabilities; got {type(obj).__name__}")
