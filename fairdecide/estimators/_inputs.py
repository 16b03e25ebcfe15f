"""What the estimators read from X: the features, the groups (a named column of X or the
``sensitive_features`` metadata), and for tabular policies the cells of discretised
features."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd
from sklearn.utils.validation import validate_data

from fairdecide._common.validation import as_bool
from fairdecide.exceptions import FairdecideError
from fairdecide.labels import Labels, as_object_vector

__all__ = ["Cells", "fit_groups", "group_column", "predict_groups", "split_features"]


def group_column(column: str | None, sensitive_feature: str | None, stacklevel: int = 2
                 ) -> str | None:
    """The name of the column of X holding the group: ``column`` (``group_column=``), or
    ``sensitive_feature``, its old name, kept one release with a DeprecationWarning
    (``stacklevel`` as :func:`warnings.warn`'s, counted from the caller)."""
    if sensitive_feature is None:
        return column
    if column is not None:
        raise FairdecideError(
            f"group_column={column!r} and sensitive_feature={sensitive_feature!r} both name "
            "the group's column: sensitive_feature is group_column's old name; give "
            "group_column only")
    warnings.warn(
        "sensitive_feature is deprecated and will be removed in the next release: use "
        f"group_column={sensitive_feature!r} (the column of X holding the group); the "
        "sensitive_features= metadata of fit, predict and score stays", DeprecationWarning,
        stacklevel=stacklevel + 1)
    return sensitive_feature


def split_features(estimator: Any, X: Any, sensitive_features: Any, *, reset: bool,
                   y: Any = "no_validation") -> tuple[np.ndarray, Any, Any]:
    """The checked numeric features, the raw sensitive values (or None) and the checked
    y (when given: at fit time, where a missing y is an error).

    With ``estimator.group_column`` set (or its deprecated old name
    ``sensitive_feature``: a warning at fit time), X must be a DataFrame holding that
    column; it is taken out of X (it is the group, not a feature) and
    ``sensitive_features`` must not be given as well.
    """
    if reset:  # fit: named and warned about once, where the estimator is fitted
        column = group_column(estimator.group_column, estimator.sensitive_feature, 3)
    else:
        column = estimator.group_column or estimator.sensitive_feature
    if column is not None:
        if not isinstance(X, pd.DataFrame):
            raise FairdecideError(
                f"group_column={column!r} names a column of X, so X must be a pandas "
                f"DataFrame, got {type(X).__name__}; or pass sensitive_features= instead")
        if column not in X.columns:
            raise FairdecideError(
                f"group_column={column!r} is not a column of X; it has {list(X.columns)}")
        if sensitive_features is not None:
            raise FairdecideError(
                f"the groups were given twice: as the column {column!r} of X "
                "(group_column) and as sensitive_features; give one")
        sensitive_features = X[column].to_numpy(dtype=object)
        X = X.drop(columns=[column])
    try:
        # C order: the policy search amplifies rounding, and a matrix product's rounding
        # depends on the layout; the same numbers then give the same policy. Sparse X as
        # scikit-learn's linear models take it (OneHotEncoder's default output)
        if isinstance(y, str) and y == "no_validation":
            Xc, yc = validate_data(estimator, X, reset=reset, order="C",
                                   accept_sparse=["csr"]), None
        else:
            Xc, yc = validate_data(estimator, X, y, reset=reset, order="C",
                                   accept_sparse=["csr"])
    except (ValueError, TypeError) as exc:  # scikit-learn's message, naming the argument
        if isinstance(exc, TypeError):
            raise  # scikit-learn's own TypeError (objects in X), as its checks expect
        raise FairdecideError(f"invalid X or y: {exc}" if reset else f"invalid X: {exc}"
                              ) from exc
    return _dense_unless_scored(estimator, Xc), sensitive_features, yc


#: The most entries a sparse X may have to be made dense for a family that reads the
#: features itself (400 MB of float64).
DENSE_LIMIT = 50_000_000


#: The estimators' ``policy`` values: "auto" and the families it chooses between.
POLICIES = ("auto", "score", "softmax", "tabular")


def family_of(estimator: Any, prediction: bool = True) -> str:
    """The policy family an estimator fits. ``policy="auto"`` is the score family for a
    prediction problem whose policy reads the group, else the softmax family: a rule
    over the bins of a score without the group cannot tell the groups apart (Adult,
    demographic parity <= 0.01: test accuracy 0.762 against the group-blind softmax
    family's 0.825, benchmarks/results/estimators.txt), and the score family is for
    prediction problems only."""
    policy = estimator.policy
    if not isinstance(policy, str) or policy not in POLICIES:
        raise FairdecideError(f"policy must be one of {POLICIES}, got {policy!r}")
    if policy != "auto":
        return policy
    blind = as_bool(estimator.group_blind, "group_blind")
    return "score" if prediction and not blind else "softmax"


def _dense_unless_scored(estimator: Any, X: Any) -> Any:
    """Sparse X stays sparse for the score family (only its scorer reads it); the
    softmax and tabular families read the features themselves, densely: made dense up
    to DENSE_LIMIT entries, an error beyond."""
    from scipy.sparse import issparse

    if not issparse(X) or family_of(estimator, estimator._prediction) == "score":
        return X
    if X.shape[0] * X.shape[1] > DENSE_LIMIT:
        raise FairdecideError(
            f"X is sparse with {X.shape[0]:,} x {X.shape[1]:,} entries; "
            f"policy={family_of(estimator, estimator._prediction)!r} reads the features "
            f"densely and this would take "
            f"{X.shape[0] * X.shape[1] * 8 / 1e9:.1f} GB: use policy='score' (only its "
            "scorer reads X, sparse as it is), or fewer features")
    return np.ascontiguousarray(X.toarray())


def _raw_groups(values: Any, n: int) -> np.ndarray:
    if isinstance(values, pd.DataFrame) and values.shape[1] == 1:
        values = values.iloc[:, 0]
    arr = np.asarray(values, dtype=object)
    if arr.ndim == 2:  # several sensitive columns: their combinations are the groups
        rows = [tuple(r) for r in arr]
        arr = np.empty(len(rows), dtype=object)
        arr[:] = rows
    if arr.ndim != 1 or len(arr) != n:
        raise FairdecideError(
            f"sensitive_features must hold one group per row of X ({n}), got shape "
            f"{np.shape(values)}")
    return arr


def fit_groups(values: Any, n: int, criteria: Any) -> tuple[np.ndarray, tuple]:
    """Group codes and labels of the training rows (one group when none are given: then
    any ``criteria`` are vacuous, with a warning)."""
    if values is None:
        if criteria is not None and not (isinstance(criteria, list | tuple) and not criteria):
            warnings.warn(
                "no sensitive features were given to fit: every row is in one group and "
                "the fairness criteria hold trivially. Pass sensitive_features= (with "
                "metadata routing in a Pipeline: set_fit_request(sensitive_features=True)) "
                "or set group_column to a column of X", UserWarning, stacklevel=3)
        return np.zeros(n, dtype=np.intp), ("all",)
    return Labels.factorize(_raw_groups(values, n), "sensitive_features")


def predict_groups(values: Any, n: int, labels: tuple, needed: bool) -> np.ndarray | None:
    """Group codes of new rows, or None when the policy does not read the group.

    An unknown group is an error when the policy reads the group: no decision rule was
    learned for it (refit with the group in the training data)."""
    if not needed:
        if values is not None:
            _raw_groups(values, n)  # still checked for length
        return None
    if values is None:
        if len(labels) == 1:
            return np.zeros(n, dtype=np.intp)
        raise FairdecideError(
            "this policy reads the group: give sensitive_features (or the "
            "group_column of X) at predict time too; fit with "
            "group_blind=True for a policy that does not need it")
    return Labels.trusted(labels).encode(
        _raw_groups(values, n), "sensitive_features", what="the group",
        among="the groups in the training data",
        hint="the policy has no rule for it. Refit with it, or use group_blind=True")


class Cells:
    """Discretised features: each column cut into at most ``n_bins`` quantile bins (kept
    as is when it has that few distinct values); a cell is the tuple of bins. With
    ``ordered`` (scores) a column of few values is cut midway between them instead, so
    a new value between two seen ones (a mean of the fold fits' scores) finds its bin."""

    def __init__(self, n_bins: int, ordered: bool = False) -> None:
        self.n_bins = n_bins
        self.ordered = ordered

    def fit(self, X: np.ndarray) -> Cells:
        self.edges_: list[np.ndarray | None] = []
        self.values_: list[np.ndarray | None] = []
        for col in X.T:
            distinct = np.unique(col)
            if len(distinct) <= self.n_bins and self.ordered:
                self.values_.append(None)
                self.edges_.append((distinct[:-1] + distinct[1:]) / 2)
            elif len(distinct) <= self.n_bins:
                self.values_.append(distinct)
                self.edges_.append(None)
            else:
                qs = np.quantile(col, np.linspace(0, 1, self.n_bins + 1)[1:-1])
                self.values_.append(None)
                self.edges_.append(np.unique(qs))
        _, self.labels_ = Labels.factorize(self._keys(X), "the cells of X")
        return self

    def _keys(self, X: np.ndarray) -> list[tuple]:
        cols = []
        for j, col in enumerate(X.T):
            if self.edges_[j] is None:
                vals = self.values_[j]
                pos = np.searchsorted(vals, col).clip(0, len(vals) - 1)
                cols.append(np.where(vals[pos] == col, pos, -1))
            else:
                cols.append(np.searchsorted(self.edges_[j], col, side="right"))
        return list(zip(*[c.tolist() for c in cols], strict=True)) if cols else [()] * len(X)

    def codes(self, X: np.ndarray, warn: bool) -> np.ndarray:
        """Cell codes of rows; -1 for a combination never seen in training (with a
        warning when ``warn``)."""
        codes = self.labels_.lookup(as_object_vector(self._keys(X)))
        unseen = int((codes < 0).sum())
        if unseen and warn:
            warnings.warn(
                f"{unseen} of {len(codes)} rows fall in a cell of the discretised features "
                "never seen in training; they get their group's average decision rule "
                "P(a | z) of the fitted policy", UserWarning, stacklevel=4)
        return codes
