"""Logged decisions as sufficient statistics: counts of each distinct (x, z, a, y[, p]).

Tabular estimates depend on a row only through its cell, group, action, outcome and
(known) propensity, so rows with the same ones are interchangeable: an **atom**. A
:class:`LoggedCounts` holds one entry per atom and its number of rows, which is all that
:func:`~fairdecide.TabularWorld.from_data`, :class:`~fairdecide.DirichletPosterior`,
:func:`~fairdecide.evaluation.audit`, :func:`~fairdecide.evaluation.estimate_deviation`
and :func:`~fairdecide.evaluation.evaluate_policy` need on tabular data. It is built

- from rows in memory (:meth:`LoggedCounts.from_data`), or
- from a pandas or a **Dask** DataFrame by :meth:`LoggedCounts.from_frame`: on Dask the
  counting runs on the workers (one pass over the data, a tree reduction of the counts),
  and only the atom table reaches the client, so a log of any number of rows needs the
  memory of its distinct atoms.

The atoms are in one canonical order, so the two routes give identical objects (and
identical results) on the same rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from fairdecide._common.dask import count_atoms, is_dask_frame
from fairdecide._common.validation import as_propensity
from fairdecide.data.columns import checked_labels, declared_labels, label_columns
from fairdecide.data.logged import LoggedData
from fairdecide.exceptions import FairdecideError
from fairdecide.labels import Labels, as_object_vector
from fairdecide.problem import DecisionProblem

__all__ = ["LoggedCounts", "count_table"]

#: Distinct atoms allowed per (x, z, a, y) cell before known propensities are judged to
#: vary within cells (then they are row-level data, not sufficient statistics).
MAX_PROPENSITIES_PER_CELL = 8


class LoggedCounts:
    """Counts of distinct logged rows (atoms): the sufficient statistics of tabular logs.

    Parameters
    ----------
    x, z, y : array-like of int, shape (J,)
        Codes of each atom's cell, group and outcome (into the labels).
    counts : array-like of shape (J,)
        Number of rows of each atom, positive integers.
    a : array-like of int, shape (J,), optional
        Logged action codes.
    propensity : array-like of shape (J,), optional
        The known logging propensity of each atom's rows, in (0, 1].
    x_labels, group_labels, outcome_labels, action_labels : sequence
        The label of each code.

    Attributes
    ----------
    n : int
        Number of rows (the sum of the counts).
    weights : ndarray of shape (J,)
        The counts, as floats: the frequency weight of each atom.

    Examples
    --------
    >>> import pandas as pd
    >>> from fairdecide import LoggedCounts
    >>> df = pd.DataFrame({"x": ["lo", "hi", "hi", "hi"], "z": ["f", "m", "m", "f"],
    ...                    "a": [0, 1, 1, 0], "y": [0, 1, 1, 1]})
    >>> logs = LoggedCounts.from_frame(df, features=["x"], group="z", action="a",
    ...                                outcome="y")
    >>> logs.n, len(logs.weights)
    (4, 3)
    """

    def __init__(self, x: Any, z: Any, y: Any, counts: Any, a: Any = None, *,
                 propensity: Any = None, x_labels: Sequence[Any],
                 group_labels: Sequence[Any], outcome_labels: Sequence[Any],
                 action_labels: Sequence[Any] | None = None) -> None:
        try:
            c = np.asarray(counts, dtype=float)
        except (TypeError, ValueError):
            raise FairdecideError(f"counts must be numbers, got {counts!r:.60}") from None
        if c.ndim != 1 or len(c) == 0 or not np.all(np.isfinite(c)) or np.any(c < 1) \
                or np.any(c != np.round(c)):
            raise FairdecideError("counts must be a non-empty vector of positive integers")
        self.x_labels, self.group_labels = tuple(x_labels), tuple(group_labels)
        self.outcome_labels = tuple(outcome_labels)
        self.action_labels = None if action_labels is None else tuple(action_labels)
        codes = {}
        for name, v, labels in (("x", x, self.x_labels), ("z", z, self.group_labels),
                                ("y", y, self.outcome_labels), ("a", a, self.action_labels)):
            if v is None:
                codes[name] = None
                continue
            arr = np.asarray(v) if not isinstance(v, str) else np.asarray([v])
            if arr.shape != c.shape or arr.dtype.kind not in "iu" or np.any(arr < 0) \
                    or np.any(arr >= len(labels or ())):
                raise FairdecideError(f"{name} must hold {len(c)} codes into its labels")
            codes[name] = arr.astype(np.intp)
        if (a is None) != (self.action_labels is None):
            raise FairdecideError("give the action codes a and action_labels together")
        if propensity is not None and a is None:
            raise FairdecideError("propensity was given without the logged actions a")
        self.x, self.z, self.y, self.a = codes["x"], codes["z"], codes["y"], codes["a"]
        self.propensity = None if propensity is None else as_propensity(propensity)
        if self.propensity is not None and self.propensity.shape != c.shape:
            raise FairdecideError(f"propensity must have shape ({len(c)},)")
        self.weights = c

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_data(cls, data: LoggedData) -> LoggedCounts:
        """The atoms of logged rows in memory: how often each distinct (x, z, a, y,
        propensity) occurs, with the rows' labels."""
        if not isinstance(data, LoggedData):
            raise FairdecideError(f"data must be LoggedData, got {type(data).__name__}")
        return cls.canonical(data.x, data.z, data.y, np.ones(data.n), data.a,
                             data.propensity, data.x_labels, data.group_labels,
                             data.outcome_labels, data.action_labels)

    @classmethod
    def from_frame(cls, df: Any, *, features: Sequence[str], group: str, outcome: str,
                   action: str | None = None, propensity: str | None = None,
                   outcome_labels: Sequence[Any] | None = None,
                   action_labels: Sequence[Any] | None = None) -> LoggedCounts:
        """Count a pandas or Dask DataFrame by column names (see
        :meth:`LoggedData.from_frame <fairdecide.LoggedData.from_frame>`, whose
        ``outcome_labels`` and ``action_labels`` declare the expected values here too;
        without them a rare value whose form looks like a typo of a frequent one raises a
        :class:`~fairdecide.exceptions.SuspiciousLabelWarning`).

        On a Dask DataFrame (``pip install 'fairdecide[dask]'``) the rows are counted on
        the workers in one pass, with the missing values of every used column; the
        client receives only the table of distinct atoms. The labels are the sorted
        distinct values found (several features: the sorted combinations that occur),
        as for LoggedData, so both routes number the cells alike.
        """
        if isinstance(features, str):
            features = [features]
        if not isinstance(features, Sequence) or not features:
            raise FairdecideError(
                f"features must name at least one column, got {features!r}")
        named = [("features", f) for f in features] + [("group", group),
                                                        ("outcome", outcome)]
        named += [(k, col) for k, col in (("action", action), ("propensity", propensity))
                  if col is not None]
        if not (isinstance(df, pd.DataFrame) or is_dask_frame(df)):
            raise FairdecideError(
                f"df must be a pandas or Dask DataFrame, got {type(df).__name__}")
        for arg, col in named:
            if not isinstance(col, str) or col not in df.columns:
                raise FairdecideError(f"{arg}={col!r} is not a column of the DataFrame; it "
                                      f"has {list(df.columns)}")
        cols = [col for _, col in named]
        table, missing = count_atoms(df, cols)
        for col in cols:
            if missing[col]:
                raise FairdecideError(f"column {col!r} has {missing[col]} missing values; "
                                      "drop or impute them first")
        if not len(table):
            raise FairdecideError("the DataFrame has no rows: there is nothing to count")
        declared = {group: declared_labels(df, group)}
        rows = table["_n_rows_"].to_numpy(dtype=float)
        for what, col, given in (("outcome", outcome, outcome_labels),
                                 ("action", action, action_labels)):
            if col is None:
                if given is not None:
                    raise FairdecideError(f"{what}_labels were given without an {what} "
                                          "column")
                continue
            categories = declared_labels(df, col) if given is None else None
            declared[col] = (categories if categories is not None else
                             checked_labels(table, col, what, given, rows))
        return cls._from_table(table, features, group, outcome, action, propensity,
                               declared)

    @classmethod
    def _from_table(cls, table: pd.DataFrame, features: list, group: str, outcome: str,
                    action: str | None, propensity: str | None,
                    declared: dict[str, Any] | None = None) -> LoggedCounts:
        """From a table of distinct rows of the used columns and their ``_n_rows_``
        (``declared``: the labels a categorical column declares, by column)."""
        declared = declared or {}
        if len(features) == 1:
            xv = table[features[0]]
        else:
            xv = as_object_vector(table[features].itertuples(index=False, name=None))
        x, x_labels = Labels.factorize(xv, "x")
        z, g_labels = Labels.factorize(table[group], "z", declared.get(group))
        y, y_labels = Labels.factorize(table[outcome], "y", declared.get(outcome))
        a = a_labels = p = None
        if action is not None:
            a, a_labels = Labels.factorize(table[action], "a", declared.get(action))
        if propensity is not None:
            p = table[propensity].to_numpy(dtype=float)
        return cls.canonical(x, z, y, table["_n_rows_"].to_numpy(), a, p, x_labels, g_labels,
                             y_labels, a_labels)

    @classmethod
    def canonical(cls, x: np.ndarray, z: np.ndarray, y: np.ndarray, counts: np.ndarray,
                  a: np.ndarray | None, p: np.ndarray | None, x_labels: Any,
                  group_labels: Any, outcome_labels: Any, action_labels: Any
                  ) -> LoggedCounts:
        """Merge equal atoms and sort them (x, z, a, y, p): one order for every route."""
        a0 = np.zeros_like(x) if a is None else a
        p0 = np.zeros(len(x)) if p is None else p
        keys = np.stack([x, z, a0, y]).astype(np.int64)
        order = np.lexsort((p0, keys[3], keys[2], keys[1], keys[0]))
        keys, p0, counts = keys[:, order], p0[order], np.asarray(counts, float)[order]
        new = np.ones(len(order), dtype=bool)
        new[1:] = np.any(keys[:, 1:] != keys[:, :-1], axis=0) | (p0[1:] != p0[:-1])
        start = np.flatnonzero(new)
        merged = np.add.reduceat(counts, start)
        keys, p0 = keys[:, start], p0[start]
        cells = np.unique(keys, axis=1).shape[1]
        if p is not None and len(start) > MAX_PROPENSITIES_PER_CELL * cells:
            raise FairdecideError(
                f"the propensities take {len(start)} distinct values over {cells} (x, z, a, "
                "y) cells: they vary within cells, so their counts are not sufficient "
                "statistics. Round them (e.g. to 4 decimals), or leave propensity out and "
                "let the estimators use the cells' action frequencies")
        return cls(keys[0], keys[1], keys[3], merged, None if a is None else keys[2],
                   propensity=None if p is None else p0, x_labels=x_labels,
                   group_labels=group_labels, outcome_labels=outcome_labels,
                   action_labels=action_labels)

    # ------------------------------------------------------------------ what LoggedData has
    @property
    def n(self) -> int:
        """Number of rows."""
        return round(float(self.weights.sum()))

    # The label accessors read only the labels and the codes, which atoms have as rows do
    # (codes of atoms instead of rows): LoggedData's own serve both.
    n_x = LoggedData.n_x
    n_z = LoggedData.n_z
    outcome_codes = LoggedData.outcome_codes
    action_codes = LoggedData.action_codes
    units = LoggedData.units

    def subset(self, atoms: Any) -> LoggedCounts:
        """The atoms selected by an index array or boolean mask, same labels."""
        idx = np.arange(len(self.weights))[atoms]
        if len(idx) == 0:
            raise FairdecideError("subset selected no atoms")
        return LoggedCounts(
            self.x[idx], self.z[idx], self.y[idx], self.weights[idx],
            None if self.a is None else self.a[idx],
            propensity=None if self.propensity is None else self.propensity[idx],
            x_labels=self.x_labels, group_labels=self.group_labels,
            outcome_labels=self.outcome_labels, action_labels=self.action_labels)

    def to_frame(self) -> pd.DataFrame:
        """The atoms as a DataFrame of labels with their ``count``."""
        cols = label_columns(self)
        cols["count"] = self.weights.astype(np.int64)
        return pd.DataFrame(cols)

    def __repr__(self) -> str:
        return (f"LoggedCounts(n={self.n}, atoms={len(self.weights)}, cells={self.n_x}, "
                f"groups={self.n_z})")


def count_table(data: LoggedData | LoggedCounts, problem: DecisionProblem,
                actions: bool = True, weights: np.ndarray | None = None) -> np.ndarray:
    """The counts n(x, z, a, y) of logged rows (or of a LoggedCounts' atoms, weighted by
    their counts) in the problem's numbering of actions and outcomes, shape (n_x, n_z,
    n_actions, n_outcomes); n(x, z, y), shape (n_x, n_z, n_outcomes), with
    ``actions=False``; ``weights`` (one per row, checked by the caller) weigh the rows
    instead (the estimators' ``sample_weight``). The one count table of logged data: the
    maximum-likelihood world and the audit report read it.

    Examples
    --------
    >>> from fairdecide import DecisionProblem, LoggedData
    >>> from fairdecide.data.counts import count_table
    >>> data = LoggedData(x=[0, 0, 1], z=["f", "m", "m"], a=[1, 1, 0], y=[1, 0, 0])
    >>> count_table(data, DecisionProblem.classification(2))[0, 1]
    array([[0., 0.],
           [1., 0.]])
    """
    y = data.outcome_codes(problem)
    w = weights if weights is not None else 1.0 if data.weights is None else data.weights
    if not actions:
        out = np.zeros((data.n_x, data.n_z, problem.n_outcomes))
        np.add.at(out, (data.x, data.z, y), w)
        return out
    a = data.action_codes(problem)
    if a is None:
        raise FairdecideError(
            "the problem's outcome depends on the action (or the count table is by "
            "action), so the data needs actions (a); for a prediction problem pass "
            "outcome_depends_on_action=False")
    out = np.zeros((data.n_x, data.n_z, problem.n_actions, problem.n_outcomes))
    np.add.at(out, (data.x, data.z, a, y), w)
    return out
