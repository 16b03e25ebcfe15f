"""What the displays share: matplotlib imported on first draw, label encoding, the groups
of ``sensitive_features``, and asking an estimator for its probabilities.

Nothing here imports matplotlib or scikit-learn at module level: ``import
fairdecide.plot`` stays as light as ``import fairdecide``.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from fairdecide._common.validation import check_choice
from fairdecide.exceptions import FairdecideError
from fairdecide.labels import Labels

PROB_TOL = 1e-6


def pyplot() -> Any:
    """``matplotlib.pyplot``, imported on first use with an error saying how to get it."""
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise ImportError(
            f"fairdecide's displays draw with matplotlib, which is not installed ({exc}); "
            'install it with: pip install "fairdecide[plot]"') from None
    return plt


def axes(ax: Any) -> tuple[Any, Any]:
    """``(ax, figure)``: the given Axes, or a new figure's single Axes when ``ax`` is None."""
    if ax is None:
        figure, ax = pyplot().subplots()
        return ax, figure
    from matplotlib.axes import Axes

    if not isinstance(ax, Axes):
        raise FairdecideError(
            f"ax must be a matplotlib Axes or None (a new figure), got {type(ax).__name__}")
    return ax, ax.figure


def as_vector(value: Any, name: str) -> np.ndarray:
    """A 1-d array of labels (a list, array, Series or one-column DataFrame)."""
    if value is None:
        raise FairdecideError(f"{name} is required; pass one label per row")
    if isinstance(value, pd.DataFrame):
        if value.shape[1] != 1:
            raise FairdecideError(
                f"{name} must be one column, got a DataFrame with {value.shape[1]} columns; "
                "combine several columns into one label per row first")
        value = value.iloc[:, 0]
    arr = np.asarray(value)
    if arr.ndim != 1:
        raise FairdecideError(f"{name} must be one-dimensional, got shape {arr.shape}")
    if len(arr) == 0:
        raise FairdecideError(f"{name} is empty; the display needs at least one row")
    missing = pd.isna(arr)
    if np.any(missing):
        raise FairdecideError(
            f"{name} has a missing value at row {int(np.argmax(missing))}; remove or label "
            "those rows first")
    return arr


def encode(value: Any, name: str, labels: Sequence[Any] | None = None,
           labels_name: str = "labels") -> tuple[np.ndarray, tuple]:
    """Integer codes of a vector of labels and the labels, in the given order or sorted.

    Labels that are not in ``labels`` raise an error naming both arguments.
    """
    arr = as_vector(value, name)
    if labels is None:
        return Labels.factorize(arr, name)
    labels = check_labels(labels, labels_name)
    codes = Labels.trusted(labels).encode(
        arr, name, what="the label", among=labels_name,
        hint=f"add it to {labels_name} or leave {labels_name} as None")
    return codes, labels


def check_labels(labels: Any, name: str, n: int | None = None) -> tuple:
    """Distinct labels as a tuple of plain Python values, ``n`` of them if given."""
    if isinstance(labels, str) or not isinstance(labels, Sequence | np.ndarray | pd.Index):
        raise FairdecideError(f"{name} must be a sequence of labels, got {labels!r}")
    out = Labels(labels, name)
    if n is not None and len(out) != n:
        raise FairdecideError(f"{name} has {len(out)} labels but there are {n} columns")
    return out


def check_lengths(**arrays: np.ndarray | None) -> int:
    """The common length of the given arrays (None skipped); an error names them all."""
    lengths = {k: len(v) for k, v in arrays.items() if v is not None}
    if len(set(lengths.values())) > 1:
        desc = ", ".join(f"{k} has {n} rows" for k, n in lengths.items())
        raise FairdecideError(f"the inputs must have one entry per row: {desc}")
    return next(iter(lengths.values()))


def as_finite(value: Any, name: str) -> np.ndarray:
    """A float array with no NaN or infinite entries."""
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError) as exc:
        raise FairdecideError(f"{name} must be numeric; could not convert it: {exc}") from None
    if not np.all(np.isfinite(arr)):
        bad = tuple(int(i) for i in np.argwhere(~np.isfinite(arr))[0])
        raise FairdecideError(
            f"{name} contains NaN or infinite values (first at index {bad}); a display "
            "needs a number in every entry")
    return arr


def response(estimator: Any, X: Any, method: str, sensitive_features: Any,
             pass_sensitive_features: bool | str) -> np.ndarray:
    """``estimator.<method>(X[, sensitive_features=...])``.

    ``pass_sensitive_features="auto"`` passes them exactly when the method has a
    parameter named ``sensitive_features`` (fairdecide's estimators do; a plain
    scikit-learn classifier does not).
    """
    func = getattr(estimator, method, None)
    if not callable(func):
        raise FairdecideError(
            f"estimator {type(estimator).__name__} has no {method} method; choose "
            "response_method to match it, or use from_predictions")
    if isinstance(pass_sensitive_features, str):
        check_choice(pass_sensitive_features, "pass_sensitive_features", ["auto"])
        pass_sensitive_features = _accepts(func, "sensitive_features")
    elif not isinstance(pass_sensitive_features, bool | np.bool_):
        raise FairdecideError(
            "pass_sensitive_features must be True, False or 'auto', got "
            f"{pass_sensitive_features!r}")
    if pass_sensitive_features:
        return np.asarray(func(X, sensitive_features=sensitive_features))
    return np.asarray(func(X))


def _accepts(func: Any, name: str) -> bool:
    try:
        params = inspect.signature(func).parameters
    except (TypeError, ValueError):
        return False
    return name in params


def policy_rows(action_proba: Any, action_labels: Sequence[Any] | None
                 ) -> tuple[np.ndarray, tuple]:
    """Rows of the simplex, shape (n, n_actions), and the action labels."""
    if action_proba is None:
        raise FairdecideError("action_proba is required: one policy row (or action) per row")
    raw = np.asarray(action_proba)
    if raw.ndim == 1:
        if raw.dtype.kind == "f" and np.all(np.isfinite(raw)) and np.any(raw != np.round(raw)):
            raise FairdecideError(
                "action_proba is one-dimensional, so it is read as the actions decided, but "
                "it holds fractions; for the probability p of one action pass the two "
                "columns np.column_stack([1 - p, p])")
        codes, labels = encode(raw, "action_proba", action_labels, "action_labels")
        return np.eye(len(labels))[codes], labels
    pi = as_finite(raw, "action_proba")
    if pi.ndim != 2 or pi.shape[1] < 2 or len(pi) == 0:
        raise FairdecideError(
            "action_proba must have shape (n, n_actions >= 2) (a policy row per person) or "
            f"(n,) (the actions decided); got shape {pi.shape}")
    bad = np.any(pi < -PROB_TOL, axis=1) | (np.abs(pi.sum(axis=1) - 1.0) > PROB_TOL)
    if np.any(bad):
        i = int(np.argmax(bad))
        raise FairdecideError(
            f"action_proba row {i} is not on the simplex ({pi[i].tolist()}, sum "
            f"{pi[i].sum():.6g}): each row must be non-negative and sum to one")
    pi = pi.clip(min=0.0)
    pi /= pi.sum(axis=1, keepdims=True)
    labels = (tuple(range(pi.shape[1])) if action_labels is None
              else check_labels(action_labels, "action_labels", pi.shape[1]))
    return pi, labels
