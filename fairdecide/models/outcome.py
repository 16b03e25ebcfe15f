"""Outcome and logging models from scikit-learn: fitted, cross-fitted and per action.

The off-policy estimators need P(y | x, a) (outcome models) and pi_0(a | x) (logging
models) out of fold; these helpers fit any scikit-learn classifier (default: logistic
regression) and return class probabilities over the problem's full numbering.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import KFold

from fairdecide.exceptions import FairdecideError
from fairdecide.problem import DecisionProblem
from fairdecide.units import Units
from fairdecide.world import World

if TYPE_CHECKING:
    from fairdecide.data import BanditData

__all__ = ["cross_fit_proba", "default_classifier", "fit_predict", "outcome_values"]


def default_classifier() -> Any:
    """Logistic regression, the default outcome and logging model."""
    return LogisticRegression(max_iter=1000)


def fit_predict(model: Any, X: np.ndarray, y: np.ndarray, X_new: np.ndarray,
                 n_classes: int, sample_weight: np.ndarray | None = None) -> np.ndarray:
    """Class probabilities (len(X_new), n_classes) of ``model`` fitted on X -> y (a point
    mass when y has one class)."""
    out = np.zeros((len(X_new), n_classes))
    classes = np.unique(y)
    if len(classes) == 1:
        out[:, classes[0]] = 1.0
        return out
    fit_args = {} if sample_weight is None else {"sample_weight": sample_weight}
    fitted = clone(model).fit(X, y, **fit_args)
    out[:, fitted.classes_] = fitted.predict_proba(X_new)
    return out


def cross_fit_proba(model: Any, X: np.ndarray, target: np.ndarray, n_classes: int,
                     n_folds: int, rng: np.random.RandomState,
                     fit_rows: np.ndarray | None = None) -> np.ndarray:
    """Out-of-fold class probabilities (n, n_classes) of ``model`` fitted on X -> target,
    for every row; only the training rows in ``fit_rows`` (a mask) are fitted on."""
    out = np.zeros((len(target), n_classes))
    folds = KFold(n_folds, shuffle=True, random_state=rng.randint(2**31 - 1))
    for train, test in folds.split(X):
        if fit_rows is not None:
            train = train[fit_rows[train]]
        out[test] = fit_predict(model, X[train], target[train], X[test], n_classes)
    return out


def outcome_values(outcome_model: Any, units: Units, bandit: BanditData,
                   problem: DecisionProblem, n_folds: int, rng: np.random.RandomState
                   ) -> np.ndarray:
    """q(x_i, a) = sum_y P(y | x_i, a) U(a, y), shape (n, n_actions), cross-fitted; a
    known World (``outcome_model``) gives P(y | a, .) of the ``units`` directly."""
    U = problem.utility
    n_a, n_y = problem.n_actions, problem.n_outcomes
    if isinstance(outcome_model, World):
        return np.einsum("nay,ay->na", outcome_model.outcome_proba(units, problem), U)
    model = default_classifier() if outcome_model is None else outcome_model
    if not problem.outcome_depends_on_action:
        p = cross_fit_proba(model, bandit.X, bandit.y, n_y, n_folds, rng)
        return p @ U.T
    q = np.zeros((bandit.n, n_a))
    for a in range(n_a):
        rows = bandit.a == a
        if rows.sum() < n_folds:
            raise FairdecideError(
                f"action {problem.action_labels[a]!r} was logged {int(rows.sum())} times: too "
                "few to fit its outcome model; use estimator='ips' or 'snips'")
        # Fit on the rows that took action a, predict for everyone (out of fold).
        p = cross_fit_proba(model, bandit.X, bandit.y, n_y, n_folds, rng, fit_rows=rows)
        q[:, a] = p @ U[a]
    return q
