"""Calibration by group: is a predicted probability equally trustworthy in every group?"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from fairdecide._common.tables import result_table
from fairdecide._common.validation import as_int
from fairdecide.exceptions import FairdecideError
from fairdecide.plot._common import (
    as_finite,
    axes,
    check_choice,
    check_lengths,
    encode,
    response,
)

__all__ = ["GroupCalibrationDisplay"]


class GroupCalibrationDisplay:
    """Reliability curves of a binary outcome's predicted probability, one per group.

    The predictions p_i are cut into ``n_bins`` bins, separately within each group; each
    non-empty bin B of group z gives the point

        (mean_{i in B} p_i,  mean_{i in B} [y_i = pos_label]),

    which lies on the diagonal when the predictions are calibrated within the group.
    Sufficiency (calibration within groups) asks for the same curve in every group.

    Parameters
    ----------
    curves : DataFrame
        Columns ``group``, ``mean_predicted``, ``fraction_positive`` (and optionally
        ``n``), one row per non-empty bin.
    pos_label : object, optional
        The positive outcome, for the record.

    Attributes
    ----------
    curves_ : DataFrame
        ``group``, ``mean_predicted``, ``fraction_positive`` and ``n`` (rows in the bin),
        one row per non-empty bin of each group, in order of the bins. Empty bins have
        no row (and no point).
    pos_label : object
    ax_, figure_ : matplotlib Axes and Figure
        Set by :meth:`plot`, as are the following.
    lines_ : dict of group label to Line2D
    diagonal_ : Line2D
        The line of perfect calibration.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from fairdecide.plot import GroupCalibrationDisplay
    >>> y = [0, 1, 0, 1, 1, 0]
    >>> p = [0.1, 0.9, 0.2, 0.6, 0.8, 0.7]
    >>> z = ["a", "a", "a", "b", "b", "b"]
    >>> display = GroupCalibrationDisplay.from_predictions(y, p, z, n_bins=2).plot()
    >>> display.curves_
      group  mean_predicted  fraction_positive  n
    0     a        0.150000           0.000000  2
    1     a        0.900000           1.000000  1
    2     b        0.700000           0.666667  3
    >>> display.ax_.get_xlabel(), display.ax_.get_ylabel()
    ('mean predicted probability', 'observed frequency')
    >>> matplotlib.pyplot.close(display.figure_)
    """

    def __init__(self, curves: pd.DataFrame, *, pos_label: Any = None) -> None:
        if not isinstance(curves, pd.DataFrame):
            raise FairdecideError(f"curves must be a DataFrame, got {type(curves).__name__}")
        need = ["group", "mean_predicted", "fraction_positive"]
        missing = [c for c in need if c not in curves.columns]
        if missing:
            raise FairdecideError(f"curves has no column(s) {missing}; it needs {need}")
        if len(curves) == 0:
            raise FairdecideError("curves has no rows; there is nothing to display")
        self.curves_ = curves
        self.pos_label = pos_label

    @classmethod
    def from_predictions(cls, y: Any, proba: Any, sensitive_features: Any, *,
                         n_bins: int = 10, strategy: str = "uniform",
                         pos_label: Any = None) -> GroupCalibrationDisplay:
        """Calibration curves by group from predicted probabilities.

        Parameters
        ----------
        y : array-like of shape (n,)
            Observed binary outcomes.
        proba : array-like of shape (n,) or (n, 2)
            Predicted probability of ``pos_label``; or two columns in the order of the
            sorted labels of ``y`` (scikit-learn's ``predict_proba`` order), of which the
            column of ``pos_label`` is used.
        sensitive_features : array-like of shape (n,)
            Group label of each row.
        n_bins : int, default=10
            Bins per group.
        strategy : {"uniform", "quantile"}, default="uniform"
            Equal-width bins on [0, 1], or bins at the quantiles of the group's
            predictions (about equally many rows each).
        pos_label : object, optional
            The positive outcome. Default: 1 (or True) when the labels of ``y`` are
            0/1, -1/1 or booleans; other labels need it.

        Returns
        -------
        GroupCalibrationDisplay
        """
        n_bins = as_int(n_bins, "n_bins", minimum=1)
        strategy = check_choice(strategy, "strategy", ["uniform", "quantile"])
        g, group_labels = encode(sensitive_features, "sensitive_features")
        y_codes, classes = encode(y, "y")
        if len(classes) > 2:
            raise FairdecideError(
                f"y has {len(classes)} labels {list(classes)}; calibration by group needs a "
                "binary outcome (recode y as positive / not positive)")
        pos_label = _positive(classes, pos_label)
        p = _positive_column(proba, classes, pos_label)
        check_lengths(y=y_codes, proba=p, sensitive_features=g)
        hit = np.array([c == pos_label for c in classes], dtype=float)[y_codes]
        frames = []
        for k, group in enumerate(group_labels):
            rows = g == k
            mean_p, frac, n = _bins(hit[rows], p[rows], n_bins, strategy)
            frames.append(pd.DataFrame({"group": [group] * len(n), "mean_predicted": mean_p,
                                        "fraction_positive": frac, "n": n}))
        return cls(result_table(pd.concat(frames, ignore_index=True)), pos_label=pos_label)

    @classmethod
    def from_estimator(cls, estimator: Any, X: Any, y: Any, *, sensitive_features: Any,
                       n_bins: int = 10, strategy: str = "uniform", pos_label: Any = None,
                       pass_sensitive_features: bool | str = "auto"
                       ) -> GroupCalibrationDisplay:
        """Calibration curves by group of a fitted binary classifier's ``predict_proba``.

        Parameters
        ----------
        estimator : fitted classifier with ``predict_proba`` and two ``classes_``
        X : array-like
        y : array-like of shape (n,)
        sensitive_features : array-like of shape (n,)
        n_bins, strategy
            As for :meth:`from_predictions`.
        pos_label : object, optional
            Default ``estimator.classes_[1]``.
        pass_sensitive_features : bool or "auto", default="auto"
            Whether ``predict_proba`` is called with ``sensitive_features=``; "auto" does
            so when it has a parameter of that name.

        Returns
        -------
        GroupCalibrationDisplay
        """
        classes = getattr(estimator, "classes_", None)
        if classes is None or len(classes) != 2:
            raise FairdecideError(
                "estimator must be a fitted binary classifier (two classes_), got "
                f"{type(estimator).__name__} with classes_ {classes!r}")
        classes = [c.item() if isinstance(c, np.generic) else c for c in classes]
        if pos_label is None:
            pos_label = classes[1]
        elif pos_label not in classes:
            raise FairdecideError(
                f"pos_label {pos_label!r} is not one of the estimator's classes_ {classes}")
        proba = response(estimator, X, "predict_proba", sensitive_features,
                         pass_sensitive_features)
        proba = as_finite(proba, "estimator.predict_proba(X)")
        if proba.ndim != 2 or proba.shape[1] != 2:
            raise FairdecideError(
                f"estimator.predict_proba(X) has shape {proba.shape}; expected (n, 2)")
        return cls.from_predictions(y, proba[:, classes.index(pos_label)],
                                    sensitive_features, n_bins=n_bins, strategy=strategy,
                                    pos_label=pos_label)

    def plot(self, ax: Any = None, **kwargs: Any) -> GroupCalibrationDisplay:
        """Draw one reliability curve per group and the diagonal.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Where to draw; default a new figure.
        **kwargs
            Passed to ``Axes.plot`` for every group's line.

        Returns
        -------
        self
        """
        self.ax_, self.figure_ = axes(ax)
        (self.diagonal_,) = self.ax_.plot([0, 1], [0, 1], linestyle=":", color="0.4",
                                          label="perfectly calibrated")
        self.lines_ = {}
        for k, group in enumerate(dict.fromkeys(self.curves_["group"])):
            sub = self.curves_[self.curves_["group"] == group]
            style = {"marker": "s", "color": f"C{k}", "label": str(group), **kwargs}
            (self.lines_[group],) = self.ax_.plot(sub["mean_predicted"].to_numpy(),
                                                  sub["fraction_positive"].to_numpy(),
                                                  **style)
        self.ax_.set_xlabel("mean predicted probability")
        self.ax_.set_ylabel("observed frequency")
        self.ax_.set_xlim(-0.02, 1.02)
        self.ax_.set_ylim(-0.02, 1.02)
        self.ax_.legend(title="group")
        return self


def _positive(classes: tuple, pos_label: Any) -> Any:
    """The positive label: the given one, or 1 / True for 0/1, -1/1 and boolean labels."""
    if pos_label is None:
        if not (set(classes) <= {0, 1} or set(classes) <= {-1, 1}):
            raise FairdecideError(
                f"the labels of y are {list(classes)}; say which is the positive outcome "
                "with pos_label=")
        return True if any(isinstance(c, bool) for c in classes) else 1
    if pos_label not in classes and len(classes) == 2:
        raise FairdecideError(
            f"pos_label {pos_label!r} is not one of the labels of y {list(classes)}")
    return pos_label


def _positive_column(proba: Any, classes: tuple, pos_label: Any) -> np.ndarray:
    """The predicted probability of ``pos_label``: a 1-d ``proba``, or its column in the
    order of the sorted labels."""
    p = as_finite(proba, "proba")
    if p.ndim == 2 and p.shape[1] == 2:
        order = sorted(set(classes) | {pos_label})
        if len(order) != 2:
            raise FairdecideError(
                "proba has two columns but y has one label, so which column is "
                f"{pos_label!r} is unknown; pass the positive column proba[:, j]")
        p = p[:, order.index(pos_label)]
    if p.ndim != 1:
        raise FairdecideError(
            f"proba must have shape (n,) or (n, 2) (the positive outcome's probability), "
            f"got shape {p.shape}")
    if np.any((p < 0) | (p > 1)):
        i = int(np.argmax((p < 0) | (p > 1)))
        raise FairdecideError(
            f"proba must hold probabilities in [0, 1]; row {i} has {p[i]:.6g}")
    return p


def _bins(hit: np.ndarray, p: np.ndarray, n_bins: int, strategy: str
          ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean prediction, fraction positive and size of each non-empty bin, in bin order.

    Bin edges are ``linspace(0, 1, n_bins + 1)`` or the group's quantiles; a prediction
    p falls in bin ``searchsorted(inner_edges, p)`` (left-closed inner edges), the binning
    of :func:`sklearn.calibration.calibration_curve`.
    """
    if strategy == "quantile":
        edges = np.percentile(p, np.linspace(0, 100, n_bins + 1))
    else:
        edges = np.linspace(0.0, 1.0, n_bins + 1)
    ids = np.searchsorted(edges[1:-1], p)
    n = np.bincount(ids, minlength=n_bins)
    sum_p = np.bincount(ids, weights=p, minlength=n_bins)
    sum_y = np.bincount(ids, weights=hit, minlength=n_bins)
    keep = n > 0
    return sum_p[keep] / n[keep], sum_y[keep] / n[keep], n[keep]
