"""The labels of a table's columns: declared (given, or a categorical column's
categories), checked against every value, or found with a warning for one that looks like
a typo; and back from codes to columns (``to_frame``). Shared by LoggedData, LoggedCounts
(pandas or Dask frames) and the audit report's reader."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from fairdecide._common.dask import is_dask_frame
from fairdecide._common.validation import plain
from fairdecide.exceptions import FairdecideError
from fairdecide.labels import (
    Labels,
    label_column,
    suspect_sentences,
    warn_rare_labels,
)

__all__ = ["checked_labels", "declared_labels", "label_columns"]


def label_columns(data: Any) -> dict[str, np.ndarray]:
    """The columns x, z, (a,) y (and propensity) of LoggedData or a LoggedCounts' atoms,
    as labels (:func:`~fairdecide.labels.label_column`: numbers stay numbers)."""
    cols = {"x": label_column(data.x_labels, data.x),
            "z": label_column(data.group_labels, data.z)}
    if data.a is not None:
        cols["a"] = label_column(data.action_labels, data.a)
    cols["y"] = label_column(data.outcome_labels, data.y)
    if data.propensity is not None:
        cols["propensity"] = data.propensity
    return cols


def checked_labels(df: Any, col: str, what: str, given: Sequence[Any] | None,
                   weights: np.ndarray | None = None, suspects: list | None = None
                   ) -> Labels:
    """The labels of column ``col`` (the ``what`` column: "outcome" or "action") of a
    pandas frame (or a table of atoms with ``weights``): ``given`` ones, checked against
    every value (an error names a value outside them and its rows), else the categories
    a categorical column declares, else the values found, with a warning for any that
    looks like a typo (:func:`~fairdecide.labels.warn_rare_labels`). With ``suspects``
    (a list), those are appended to it instead, as (SuspectLabel, sentence, labels) for
    the caller to decide (the audit stops on them)."""
    name = f"{what} column {col!r}"
    if given is not None:
        labels = Labels(given, f"{what}_labels")
        if weights is None:
            labels.encode(df[col], name, among=f"{what}_labels", index=df.index)
            return labels
        unknown = labels.lookup(df[col]) < 0
        if unknown.any():
            value = plain(df[col].iloc[int(np.argmax(unknown))])
            n = round(float(weights[unknown].sum()))
            raise FairdecideError(
                f"{name} holds values outside {what}_labels {list(labels)} in {n} "
                f"row{'s' if n > 1 else ''}, e.g. {value!r}")
        return labels
    declared = declared_labels(df, col)
    if declared is not None:
        return Labels(declared, f"the categories of {name}")
    codes, labels = Labels.factorize(df[col], name)
    index = None if weights is not None else df.index
    if suspects is not None:
        suspects += [(s, text, labels) for s, text in
                     suspect_sentences(codes, labels, name, weights, index)]
    else:
        warn_rare_labels(codes, labels, name, f"{what}_labels", weights, stacklevel=4,
                         index=index)
    return labels


def declared_labels(df: Any, col: str) -> list | None:
    """The categories a categorical column of a pandas or Dask frame declares (None for
    other columns, and for a Dask column whose categories are unknown)."""
    column = df[col]
    if not isinstance(column.dtype, pd.CategoricalDtype):
        return None
    if is_dask_frame(df) and not column.cat.known:
        return None
    return list(column.cat.categories)
