"""Reading the audited table: the file, its columns, the utility and the problem.

Everything here turns what a person types (a file name, column names, a utility written
as JSON) into a :class:`~fairdecide.data.logged.LoggedData` and a
:class:`~fairdecide.problem.DecisionProblem`, or stops with an error that says what is
wrong and what to do. What was changed on the way (rows dropped for missing values,
numeric features binned) is returned as plain sentences for the report.
"""

from __future__ import annotations

import difflib
import itertools
import shlex
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from fairdecide._common.validation import as_bool, as_int
from fairdecide.data.columns import checked_labels
from fairdecide.data.logged import LoggedData
from fairdecide.exceptions import FairdecideError, SuspiciousLabelError
from fairdecide.labels import Labels

__all__ = ["prepare_data", "read_table"]

_PARQUET = (".parquet", ".pq")


def read_table(path: str | Path) -> pd.DataFrame:
    """Read a CSV (optionally gzip-compressed) or Parquet file into a DataFrame.

    Parameters
    ----------
    path : str or Path
        ``.parquet``/``.pq`` files are read as Parquet (needs pyarrow: the ``parquet``
        extra); anything else as comma-separated text with a header row
        (``.gz``/``.zip``/``.bz2``/``.xz`` decompressed).

    Raises
    ------
    FairdecideError
        The file does not exist, is not a table (no header and rows, binary content,
        a ragged layout), or is empty.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from fairdecide.report import read_table
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "log.csv"
    >>> _ = path.write_text("race,flag,recid\\nA,1,0\\nB,0,0\\n")
    >>> read_table(path).shape
    (2, 3)
    """
    if not isinstance(path, str | Path):
        raise FairdecideError(f"path must be a file name, got {type(path).__name__}")
    path = Path(path)
    if not path.is_file():
        raise FairdecideError(f"{str(path)!r} is not a file; give the path of a CSV or "
                              "Parquet table of logged decisions")
    if path.suffix.lower() in _PARQUET:
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            raise FairdecideError(
                "reading Parquet needs pyarrow: pip install 'fairdecide[parquet]'") from None
        try:
            df = pd.read_parquet(path)
        except Exception as exc:  # pyarrow raises its own error types
            raise FairdecideError(
                f"{str(path)!r} could not be read as Parquet ({type(exc).__name__}: "
                f"{exc}); is it a Parquet file?") from None
    else:
        try:
            df = pd.read_csv(path, low_memory=False)
        except (UnicodeDecodeError, pd.errors.ParserError, pd.errors.EmptyDataError,
                EOFError, OSError, ValueError) as exc:
            raise FairdecideError(
                f"{str(path)!r} is not a readable table ({type(exc).__name__}: "
                f"{' '.join(str(exc).split())[:200]}); give a CSV file with a header row "
                "(or a .parquet file)") from None
    if df.shape[0] == 0 or df.shape[1] == 0:
        raise FairdecideError(f"{str(path)!r} holds no rows of data")
    return df


def _check_column(df: pd.DataFrame, col: Any, arg: str) -> str:
    if not isinstance(col, str):
        raise FairdecideError(f"{arg} must be a column name, got {col!r}")
    if col not in df.columns:
        names = [str(c) for c in df.columns]
        close = difflib.get_close_matches(col, names, n=3)
        hint = f"; did you mean {close}?" if close else ""
        shown = names if len(names) <= 30 else [*names[:30], "..."]
        raise FairdecideError(
            f"{arg}={col!r} is not a column of the table{hint} It has {shown}")
    return col


def _bin_numeric(values: pd.Series, max_levels: int) -> tuple[pd.Series, str | None]:
    """Quantile bins of a numeric column with more than ``max_levels`` distinct values."""
    if not pd.api.types.is_numeric_dtype(values) or pd.api.types.is_bool_dtype(values):
        return values, None
    if values.nunique() <= max_levels:
        return values, None
    edges = np.unique(np.quantile(values.to_numpy(dtype=float),
                                  np.linspace(0, 1, max_levels + 1)))
    cut = pd.cut(values, edges, include_lowest=True, duplicates="drop")
    labels = cut.astype(str)
    return labels, (f"the numeric feature {values.name!r} has {values.nunique()} distinct "
                    f"values and was cut into {cut.cat.categories.size} quantile bins")


def prepare_data(
    df: pd.DataFrame, *, group: str, action: str, outcome: str,
    features: Sequence[str] | None = None, groups: Sequence[Any] | None = None,
    bins: Mapping[str, Sequence[float]] | None = None, max_levels: int = 8,
    public_cells: bool = False, outcome_labels: Sequence[Any] | None = None,
    action_labels: Sequence[Any] | None = None, accept_rare_labels: bool = False,
) -> tuple[LoggedData, list[str]]:
    """The audited columns of ``df`` as LoggedData, with notes on what was changed.

    Rows with a missing value in a used column are dropped (and counted in a note);
    numeric features with more than ``max_levels`` distinct values are cut into quantile
    bins (noted). Without features the cells are the groups alone.

    Parameters
    ----------
    df : DataFrame
    group, action, outcome : str
        Column names: the sensitive attribute, the logged decision, the outcome.
    features : list of str, optional
        Discrete (or binned numeric) columns the decisions may depend on.
    groups : list, optional
        Keep only the rows of these groups (values of the group column, matched as text);
        each must have rows.
    bins : dict, optional
        Bin edges chosen by the user for numeric features, ``{column: [e0, e1, ...]}``:
        intervals [e_k, e_k+1) (``inf`` allowed as the last edge); a value outside them
        is an error. Such features are not binned again.
    max_levels : int, default=8
        Other numeric features with more distinct values are cut into quantile bins,
        >= 2.
    public_cells : bool, default=False
        For a private release: the cells are every combination of the features' values
        (not only those that occur, whose presence would disclose rows), numeric features
        with more than ``max_levels`` values are an error (quantile bins would disclose
        the data), and notes give no counts. A value that looks like a typo stops the
        audit all the same (the error is the data holder's to read, not part of the
        release; a typo's own label would be).
    outcome_labels, action_labels : list, optional
        The values the outcome and action columns may take, matched as text (``"1"``
        names the value 1 of a numeric column); any other value is an error naming it and
        its rows (the frame's index). Without them (and without categorical columns,
        whose categories declare them), a rare value whose form looks like a typo of a
        frequent one (:func:`~fairdecide.labels.suspect_labels`: a lone ``"yes"`` among
        0s and 1s) raises a :class:`~fairdecide.exceptions.SuspiciousLabelError` naming
        the column, the value and its rows.
    accept_rare_labels : bool, default=False
        Keep such values as values of their own instead (a note says so).

    Returns
    -------
    (LoggedData, list of str)

    Raises
    ------
    SuspiciousLabelError
        A value of the outcome or action column looks like a typo (see above).

    Examples
    --------
    >>> import pandas as pd
    >>> from fairdecide.report import prepare_data
    >>> df = pd.DataFrame({"race": ["A", "B", "A", "B"], "flag": [1, 0, 1, 1],
    ...                    "recid": [1, 0, None, 1]})
    >>> data, notes = prepare_data(df, group="race", action="flag", outcome="recid")
    >>> data.n, notes
    (3, ['1 of 4 rows (25.0%) were left out for a missing value (recid: 1 row)'])
    """
    if not isinstance(df, pd.DataFrame):
        raise FairdecideError(f"df must be a pandas DataFrame, got {type(df).__name__}")
    max_levels = as_int(max_levels, "max_levels", minimum=2)
    if features is None:
        features = []
    elif isinstance(features, str):
        features = [features]
    elif not isinstance(features, Sequence | pd.Index | np.ndarray):
        raise FairdecideError(
            f"features must be a column name or a list of them, got {features!r}")
    features = list(features)
    accept_rare_labels = as_bool(accept_rare_labels, "accept_rare_labels")
    used = {"group": group, "action": action, "outcome": outcome}
    for arg, col in used.items():
        _check_column(df, col, arg)
    for col in features:
        _check_column(df, col, "features")
    columns = [group, action, outcome, *features]
    if len(set(columns)) != len(columns):
        raise FairdecideError(
            f"the group, action, outcome and feature columns must differ, got {columns}")
    notes = []
    frame = df[columns].dropna()
    if len(frame) < len(df):
        notes.append(_left_out(df[columns], len(df) - len(frame), public_cells))
    if len(frame) == 0:
        raise FairdecideError(f"no row has values in all of the columns {columns}")
    if groups is not None:
        frame = _keep_groups(frame, group, groups)
    for arg, col in (("group", group), ("action", action), ("outcome", outcome)):
        if frame[col].nunique() < 2:
            raise FairdecideError(
                f"{arg} column {col!r} takes a single value ({frame[col].iloc[0]!r}) in the "
                "rows used; an audit compares at least two")
    frame = frame.copy()
    bins = _check_bins(bins, features)
    for col in features:
        if col in bins:
            frame[col] = _cut(frame[col], bins[col])
            continue
        binned, note = _bin_numeric(frame[col], max_levels)
        if note and public_cells:
            raise FairdecideError(
                f"the numeric feature {col!r} has more than {max_levels} values; with "
                "privacy, cut it into bins chosen without looking at the data first (bins "
                "from its quantiles would disclose them), or raise max_levels")
        frame[col] = binned
        if note:
            notes.append(note)
    suspects: list = []
    labels = {what: _column_labels(frame, col, what, given, suspects)
              for what, col, given in (("outcome", outcome, outcome_labels),
                                       ("action", action, action_labels))}
    if suspects and not accept_rare_labels:
        raise _suspicious(suspects)
    notes += [f"{s.label!r} of the {name} was kept as a value of its own, as asked, "
              f"although it looks like a typo ({s.reason})" if public_cells else
              f"{sentence}; it was kept as a value of its own, as asked"
              for s, sentence, _, _, name in suspects]
    if features and public_cells:
        values = [sorted(frame[c].unique().tolist(), key=str) for c in features]
        cells = list(itertools.product(*values)) if len(features) > 1 else values[0]
        if len(cells) > 100_000:
            raise FairdecideError(
                f"the features {features} make {len(cells)} cells; use fewer or coarser "
                "features")
        x = (frame[features[0]].to_numpy(dtype=object) if len(features) == 1 else
             _tuples(frame[features]))
        data = LoggedData(x=x, z=frame[group].to_numpy(), y=frame[outcome].to_numpy(),
                          a=frame[action].to_numpy(), x_labels=cells,
                          outcome_labels=labels["outcome"], action_labels=labels["action"])
    elif features:
        data = LoggedData.from_frame(frame, features=features, group=group,
                                     action=action, outcome=outcome,
                                     outcome_labels=labels["outcome"],
                                     action_labels=labels["action"])
    else:
        data = LoggedData(x=np.full(len(frame), "all", dtype=object), z=frame[group].to_numpy(),
                          y=frame[outcome].to_numpy(), a=frame[action].to_numpy(),
                          x_labels=["all"], outcome_labels=labels["outcome"],
                          action_labels=labels["action"])
    return data, notes


def _column_labels(frame: pd.DataFrame, col: str, what: str, given: Any,
                   suspects: list) -> Labels:
    """The labels of the outcome or action column: ``given`` ones (text matched to the
    column's values) checked against every row, else a categorical column's categories,
    else those found; a found one that looks like a typo is appended to ``suspects`` as
    (SuspectLabel, sentence, labels, ``what``, the column's name in words)."""
    if given is not None:
        if isinstance(given, str) or not isinstance(given, Sequence):
            raise FairdecideError(f"{what}_labels must list the {what} values, got "
                                  f"{given!r}")
        found = {str(v): v for v in frame[col].unique()}
        given = [found.get(str(v), v) for v in given]
    mine: list = []
    labels = checked_labels(frame, col, what, given, suspects=mine)
    suspects += [(*s, what, f"{what} column {col!r}") for s in mine]
    return labels


def _left_out(used: pd.DataFrame, dropped: int, public_cells: bool) -> str:
    """The note on the rows left out for a missing value: how many, and in which columns
    (with privacy, neither: the counts would be released unprotected)."""
    if public_cells:
        return "rows with a missing value in a used column were left out"
    n = len(used)
    share = 100 * dropped / n
    pct = f"{share:.1f}%" if share >= 1 else f"{share:.2g}%"
    missing = used.isna().sum()
    where = ", ".join(f"{col}: {k} row{'s' if k != 1 else ''}"
                      for col, k in missing[missing > 0].items())
    return f"{dropped} of {n} rows ({pct}) were left out for a missing value ({where})"


def _declared(labels: Labels, option: str, command_line: bool) -> str:
    """How to declare ``labels`` on one door: ``outcome_labels=[0, 1, 'yes']`` or
    ``--outcome-labels 0,1,yes`` (every value when there are few; else a description)."""
    if len(labels) > 12:
        name = f"--{option.replace('_', '-')}" if command_line else f"{option}="
        return f"{name} listing all {len(labels)} values"
    if command_line:
        return f"--{option.replace('_', '-')} {shlex.quote(','.join(map(str, labels)))}"
    return f"{option}={list(labels)!r}"


def _suspicious(suspects: list) -> SuspiciousLabelError:
    """The error that stops the audit on values that look like typos: each one with its
    rows, then both ways on, in Python's words (the command line's in ``command_line``)."""
    found = "; ".join(sentence for _, sentence, _, _, _ in suspects)
    columns = {f"{what}_labels": labels for _, _, labels, what, _ in suspects}
    one = len(suspects) == 1
    real = (f"if {suspects[0][0].label!r} is a real value" if one else
            "if they are real values")

    def ways(command_line: bool) -> str:
        declare = " and ".join(_declared(labels, option, command_line)
                               for option, labels in columns.items())
        accept = "--accept-rare-labels" if command_line else "accept_rare_labels=True"
        rows = ("that row" if suspects[0][0].count == 1 else "those rows") if one else \
            "the rows named"
        return (f"{found}. Correct or drop {rows}; or, {real}, declare every value "
                f"({declare}) or pass {accept}")

    return SuspiciousLabelError(
        ways(False), [{"column": name, "value": s.label, "rows": s.count,
                       "reason": s.reason} for s, _, _, _, name in suspects], ways(True))


def _check_bins(bins: Any, features: list) -> dict:
    if bins is None:
        return {}
    if not isinstance(bins, Mapping):
        raise FairdecideError(f"bins must map feature columns to edges, got {bins!r}")
    out = {}
    for col, edges in bins.items():
        if col not in features:
            raise FairdecideError(f"bins names {col!r}, which is not one of the features "
                                  f"{features}")
        try:
            e = np.asarray(edges, dtype=float)
        except (TypeError, ValueError):
            raise FairdecideError(f"bins[{col!r}] must be numbers, got {edges!r}") from None
        if e.ndim != 1 or len(e) < 2 or np.isnan(e).any() or np.any(np.diff(e) <= 0):
            raise FairdecideError(f"bins[{col!r}] must be at least two increasing edges, "
                                  f"got {list(edges)!r}")
        out[col] = e
    return out


def _cut(values: pd.Series, edges: np.ndarray) -> pd.Series:
    if not pd.api.types.is_numeric_dtype(values):
        raise FairdecideError(f"bins were given for {values.name!r}, which is not numeric")
    v = values.to_numpy(dtype=float)
    k = np.searchsorted(edges, v, side="right") - 1
    outside = (k < 0) | (k >= len(edges) - 1)
    if outside.any():
        raise FairdecideError(
            f"{values.name!r} has the value {v[outside][0]:g}, outside the bins "
            f"[{edges[0]:g}, {edges[-1]:g}); widen the first or last edge (inf is allowed)")
    labels = np.array([f"[{a:g}, {b:g})" for a, b in itertools.pairwise(edges)],
                      dtype=object)
    return pd.Series(labels[k], index=values.index, name=values.name)


def _keep_groups(frame: pd.DataFrame, group: str, groups: Any) -> pd.DataFrame:
    if isinstance(groups, str) or not isinstance(groups, Sequence) or len(groups) < 2:
        raise FairdecideError(f"groups must list at least two values of the group column "
                              f"{group!r}, got {groups!r}")
    text = frame[group].astype(str)
    seen = sorted(text.unique())
    for g in groups:
        if str(g) not in seen:
            raise FairdecideError(f"groups names {g!r}, which is not a value of the group "
                                  f"column {group!r} (in rows with all values); its values "
                                  f"are {seen}")
    return frame[text.isin([str(g) for g in groups])]


def _tuples(frame: pd.DataFrame) -> np.ndarray:
    out = np.empty(len(frame), dtype=object)
    out[:] = list(frame.itertuples(index=False, name=None))
    return out
