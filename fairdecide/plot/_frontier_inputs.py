"""What a ParetoFrontierDisplay is given, checked: frontier tables, error-bar columns,
optimisation results and the criterion to read from them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from fairdecide._common.tables import result_table
from fairdecide.criteria.base import short_name
from fairdecide.exceptions import FairdecideError
from fairdecide.plot._common import as_finite

# Optional columns of a frontier or of added points: half-widths of error bars.
ERROR_COLUMNS = ("deviation_se", "utility_se")


def check_frontier(frame: Any, name: str) -> pd.DataFrame:
    """A frontier table with finite ``deviation`` and ``utility``, sorted by deviation."""
    if not isinstance(frame, pd.DataFrame):
        raise FairdecideError(
            f"{name} must be a DataFrame as pareto_frontier returns, got "
            f"{type(frame).__name__}")
    missing = [c for c in ("deviation", "utility") if c not in frame.columns]
    if missing:
        raise FairdecideError(
            f"{name} has no column(s) {missing}; a frontier needs 'deviation' and "
            f"'utility' (it has {list(frame.columns)})")
    if len(frame) == 0:
        raise FairdecideError(f"{name} has no rows; a frontier needs at least one point")
    for col in ("deviation", "utility"):
        as_finite(frame[col].to_numpy(), f"{name}[{col!r}]")
    order = ["epsilon"] if "epsilon" in frame.columns else []
    order += ["deviation", "utility"]
    order += [c for c in frame.columns if c not in order]
    out = frame[order].astype({"deviation": float, "utility": float})
    out = out.sort_values("deviation", kind="stable").reset_index(drop=True)
    return result_table(check_errors(out, name))


def check_errors(frame: pd.DataFrame, name: str) -> pd.DataFrame:
    """``frame`` with its error-bar columns (if any) finite and non-negative."""
    for col in ERROR_COLUMNS:
        if col in frame.columns:
            se = as_finite(frame[col].to_numpy(), f"{name}[{col!r}]")
            if np.any(se < 0):
                raise FairdecideError(
                    f"{name}[{col!r}] holds half-widths of error bars, which cannot be "
                    f"negative (got {se.min():g})")
    return frame


def check_results(results: Any, name: str) -> list[Any]:
    """Results with a numeric ``utility`` and a ``deviations`` mapping."""
    if isinstance(results, str | bytes) or not isinstance(results, Sequence):
        raise FairdecideError(
            f"{name} must be a list of OptimizeResult, got {type(results).__name__}")
    if len(results) == 0:
        raise FairdecideError(f"{name} is empty; pass at least one OptimizeResult")
    for i, r in enumerate(results):
        if not isinstance(getattr(r, "deviations", None), Mapping) or not hasattr(r, "utility"):
            raise FairdecideError(
                f"{name}[{i}] must be an OptimizeResult (with utility and deviations), got "
                f"{type(r).__name__}")
        as_finite(r.utility, f"{name}[{i}].utility")
    return list(results)


def pick_criterion(criterion: str | None, deviations: list[Mapping], name: str) -> str:
    """The criterion label to plot: the given one (present in every result) or the only
    one the results have."""
    labels = sorted({k for d in deviations for k in d})
    if criterion is None:
        if len(labels) != 1:
            raise FairdecideError(
                f"{name} hold deviations of {labels}; choose one with criterion=")
        return labels[0]
    for i, d in enumerate(deviations):
        if criterion not in d:
            raise FairdecideError(
                f"criterion {criterion!r} is not among the deviations of {name} "
                f"(result {i} has {sorted(d)})")
    for i, d in enumerate(deviations):
        as_finite(d[criterion], f"the {criterion!r} deviation of result {i}")
    full = [k for k in labels if k == criterion or short_name(k) == criterion]
    return full[0] if len(full) == 1 else criterion  # the name with its measure
