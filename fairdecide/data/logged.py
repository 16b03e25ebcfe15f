"""Logged data: discrete features x, group z, action a and outcome y of individuals."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from fairdecide._common.dask import is_dask_frame
from fairdecide._common.validation import (
    as_code_array,
    as_float_array,
    as_propensity,
    check_same_length,
)
from fairdecide.data.columns import checked_labels, declared_labels, label_columns
from fairdecide.data.units import Units
from fairdecide.exceptions import FairdecideError
from fairdecide.labels import (
    Labels,
    as_object_vector,
    one_dimensional,
    rows_text,
    warn_rare_labels,
)
from fairdecide.problem import DecisionProblem

__all__ = ["BanditData", "LoggedData"]


class LoggedData:
    """Discrete logged data: one row per individual.

    Parameters
    ----------
    x : array-like of shape (n,)
        Feature cell of each individual (any hashable labels; several discrete features
        are combined into one cell by :meth:`from_frame`).
    z : array-like of shape (n,)
        Group (the sensitive attribute) of each individual.
    y : array-like of shape (n,)
        Outcome observed for each individual.
    a : array-like of shape (n,), optional
        Action taken. May be omitted in prediction problems, where the action is the
        prediction and is not part of the data.
    propensity : array-like of shape (n,), optional
        Probability with which the logged action was taken, if known. Must lie in (0, 1].
    x_labels, group_labels, action_labels, outcome_labels : sequence, optional
        The full list of values of each variable, in code order. Default: the sorted
        distinct observed values. Give them to keep values that were never observed, and
        to **declare the expected values**: any other value is then an error naming it
        and its rows. Without ``outcome_labels`` (``action_labels``), a rare outcome
        (action) whose form looks like a typo of a frequent one, such as one ``"yes"``
        among thousands of 0s and 1s, raises a
        :class:`~fairdecide.exceptions.SuspiciousLabelWarning` naming its rows
        (:func:`~fairdecide.labels.suspect_labels` gives the rule; a rare value of the
        same form as the others, such as an item chosen 4 times among 80, passes).

    Attributes
    ----------
    x, z, y, a : ndarray of int
        Integer codes (``a`` is None when no actions were given).
    x_labels, group_labels, action_labels, outcome_labels : tuple
        The label of each code.

    Examples
    --------
    >>> from fairdecide import LoggedData
    >>> data = LoggedData(x=["lo", "hi", "hi"], z=["f", "m", "f"], y=[0, 1, 1])
    >>> data.n, data.n_x, data.n_z
    (3, 2, 2)
    >>> data.x_labels, data.x
    (('hi', 'lo'), array([1, 0, 0]))

    Declared labels turn a typo into an error:

    >>> LoggedData(x=[0, 0], z=["f", "m"], y=[0, "yes"], outcome_labels=[0, 1])
    Traceback (most recent call last):
    ...
    fairdecide.exceptions.FairdecideError: y contains value 'yes' (row 1) that is not ...
    """

    def __init__(
        self,
        x: Any,
        z: Any,
        y: Any,
        a: Any = None,
        *,
        propensity: Any = None,
        x_labels: Sequence[Any] | None = None,
        group_labels: Sequence[Any] | None = None,
        action_labels: Sequence[Any] | None = None,
        outcome_labels: Sequence[Any] | None = None,
    ) -> None:
        arrays = {"x": x, "z": z, "y": y, "a": a, "propensity": propensity}
        lens = {k: one_dimensional(v, k) for k, v in arrays.items() if v is not None}
        n = check_same_length(**lens)
        if n == 0:
            raise FairdecideError("LoggedData needs at least one row; x, z and y are empty")
        self.x, self.x_labels = Labels.factorize(lens["x"], "x", x_labels)
        self.z, self.group_labels = Labels.factorize(lens["z"], "z", group_labels)
        self.y, self.outcome_labels = Labels.factorize(lens["y"], "y", outcome_labels)
        if a is None:
            self.a, self.action_labels = None, None
        else:
            self.a, self.action_labels = Labels.factorize(lens["a"], "a", action_labels)
        if outcome_labels is None:  # labels found, not declared: catch a lone typo
            warn_rare_labels(self.y, self.outcome_labels, "y", "outcome_labels")
        if a is not None and action_labels is None:
            warn_rare_labels(self.a, self.action_labels, "a", "action_labels")
        if propensity is not None and a is None:
            raise FairdecideError(
                "propensity was given without the logged actions a: a propensity is the "
                "probability of the logged action, so give a as well")
        self.propensity = None if propensity is None else as_propensity(propensity)

    @classmethod
    def from_frame(
        cls,
        df: pd.DataFrame,
        *,
        features: Sequence[str],
        group: str,
        outcome: str,
        action: str | None = None,
        propensity: str | None = None,
        outcome_labels: Sequence[Any] | None = None,
        action_labels: Sequence[Any] | None = None,
    ) -> LoggedData:
        """Build from a pandas DataFrame by column names.

        Several ``features`` columns become one cell index whose labels are the tuples
        of observed value combinations (a single feature keeps its plain values).
        Categorical columns keep their declared categories for groups, actions and
        outcomes.

        ``outcome_labels`` and ``action_labels`` declare the values the outcome and
        action columns may take (in code order): any other value is an error naming the
        column, the value and its rows. Without them (and without categorical columns),
        a rare value whose form looks like a typo of a frequent one raises a
        :class:`~fairdecide.exceptions.SuspiciousLabelWarning` naming the column and
        the rows.

        Examples
        --------
        >>> import pandas as pd
        >>> df = pd.DataFrame({"age": ["<25", "<25", ">45"], "prior": [0, 2, 0],
        ...                    "sex": ["F", "M", "M"], "recid": [0, 1, 0]})
        >>> data = LoggedData.from_frame(df, features=["age", "prior"], group="sex",
        ...                              outcome="recid")
        >>> data.x_labels
        (('<25', 0), ('<25', 2), ('>45', 0))
        >>> df["recid"] = df["recid"].astype(object).where(df.index != 2, "yes")
        >>> LoggedData.from_frame(df, features=["age"], group="sex", outcome="recid",
        ...                       outcome_labels=[0, 1])
        Traceback (most recent call last):
        ...
        fairdecide.exceptions.FairdecideError: outcome column 'recid' contains value 'yes' ...
        """
        if is_dask_frame(df):
            raise FairdecideError(
                "df is a Dask DataFrame: LoggedData holds every row in memory. Count it on "
                "the workers with LoggedCounts.from_frame(df, features=..., group=..., "
                "outcome=...), which every tabular estimate accepts, or call df.compute() "
                "first")
        if not isinstance(df, pd.DataFrame):
            raise FairdecideError(f"df must be a pandas DataFrame, got {type(df).__name__}")
        if isinstance(features, str):
            features = [features]
        elif not isinstance(features, Sequence | pd.Index | np.ndarray):
            raise FairdecideError(
                f"features must be a column name or a list of them, got {features!r}")
        features = list(features)
        if not features:
            raise FairdecideError("features must name at least one column")
        named = [("features", f) for f in features] + [("group", group), ("outcome", outcome)]
        named += [(k, c) for k, c in (("action", action), ("propensity", propensity))
                  if c is not None]
        for arg, col in named:
            try:
                known = col in df.columns
            except TypeError:
                known = False
            if not known:
                raise FairdecideError(
                    f"{arg}={col!r} is not a column of the DataFrame; it has "
                    f"{list(df.columns)}")
        wanted = [c for _, c in named]
        for col in wanted:
            n_na = int(df[col].isna().sum())
            if n_na:
                raise FairdecideError(
                    f"column {col!r} has {n_na} missing values; drop or impute them first"
                )
        if len(features) == 1:
            x = df[features[0]].to_numpy(dtype=object)
        else:
            x = as_object_vector(df[features].itertuples(index=False, name=None))

        labels = {"outcome": checked_labels(df, outcome, "outcome", outcome_labels)}
        if action is not None:
            labels["action"] = checked_labels(df, action, "action", action_labels)
        elif action_labels is not None:
            raise FairdecideError("action_labels were given without an action column")
        return cls(
            x=x,
            z=df[group],
            y=df[outcome],
            a=None if action is None else df[action],
            propensity=None if propensity is None else df[propensity].to_numpy(),
            group_labels=declared_labels(df, group),
            outcome_labels=labels["outcome"],
            action_labels=labels.get("action"),
        )

    @property
    def n(self) -> int:
        """Number of rows."""
        return len(self.x)

    #: Rows carry no frequency weights (a LoggedCounts' atoms do).
    weights = None

    @property
    def n_x(self) -> int:
        """Number of feature cells."""
        return len(self.x_labels)

    @property
    def n_z(self) -> int:
        """Number of groups."""
        return len(self.group_labels)

    def outcome_codes(self, problem: DecisionProblem) -> np.ndarray:
        """Outcome codes in the problem's numbering (matched through labels); an outcome
        the problem does not know is an error naming it and its rows."""
        return problem_codes(self, self.y, self.outcome_labels, problem.outcome_labels,
                             "outcome")

    def action_codes(self, problem: DecisionProblem) -> np.ndarray | None:
        """Action codes in the problem's numbering (matched through labels), or None; an
        action the problem does not know is an error naming it and its rows."""
        if self.a is None:
            return None
        return problem_codes(self, self.a, self.action_labels, problem.action_labels,
                             "action")

    def units(self) -> Units:
        """The logged individuals as units: their cell and group codes."""
        return Units(group=self.z, n_groups=self.n_z, cell=self.x, n_cells=self.n_x,
                     cell_labels=self.x_labels, group_labels=self.group_labels)

    def subset(self, rows: Any) -> LoggedData:
        """The data restricted to ``rows`` (an index array or boolean mask), same labels."""
        mask = np.asarray(rows)
        if mask.dtype == bool and mask.shape != (self.n,):
            raise FairdecideError(
                f"rows is a boolean mask of shape {mask.shape}, but the data has {self.n} "
                "rows: give one True/False per row, or an array of row indices")
        try:
            idx = np.arange(self.n)[rows]
        except IndexError as exc:
            raise FairdecideError(
                f"rows must index the data's {self.n} rows (indices in [-{self.n}, "
                f"{self.n}) or a boolean mask): {exc}") from None
        new = object.__new__(LoggedData)
        new.__dict__.update(self.__dict__)
        for name in ("x", "z", "y", "a", "propensity"):
            val = getattr(self, name)
            setattr(new, name, None if val is None else val[idx])
        if new.n == 0:
            raise FairdecideError("subset selected no rows")
        return new

    def to_frame(self) -> pd.DataFrame:
        """The data as a DataFrame of labels: a column of integers (or floats, or
        booleans, or strings) where every label is one, else of objects; numeric columns
        stay numeric in Dask, which stores object columns as strings."""
        return pd.DataFrame(label_columns(self))

    def __repr__(self) -> str:
        acts = "none" if self.a is None else len(self.action_labels)
        return (
            f"LoggedData(n={self.n}, cells={self.n_x}, groups={self.n_z}, "
            f"actions={acts}, outcomes={len(self.outcome_labels)})"
        )


def problem_codes(data: Any, codes: np.ndarray, labels: Sequence[Any],
                  known: Labels, what: str) -> np.ndarray:
    """``codes`` into the data's ``labels`` as codes into a problem's ``known`` labels of
    ``what`` ("outcome" or "action"); a label the problem lacks raises an error naming
    it and the rows (the atoms and their row counts, for counts) that hold it."""
    table = known.lookup(as_object_vector(labels))
    if np.all(table >= 0):
        return table[codes]
    bad = int(np.flatnonzero(table < 0)[0])
    where = np.flatnonzero(codes == bad)
    if data.weights is None:
        place = rows_text(where)
    else:
        n = round(float(data.weights[where].sum()))
        place = f"{n} row{'s' if n > 1 else ''}; atom {', '.join(map(str, where[:5]))}"
    others = [lab for lab, t in zip(labels, table, strict=True) if t < 0][1:]
    letter = {"outcome": "y", "action": "a"}[what]
    raise FairdecideError(
        f"the data's {what}s ({letter}) contain the unknown {what} {labels[bad]!r} "
        f"({place}), not among the problem's {what}s {list(known)}"
        + (f" (nor are {others[:5]!r})" if others else "")
        + f"; correct those rows, or pass {what}_labels to DecisionProblem to match the "
        "data")


@dataclass(frozen=True)
class BanditData:
    """Logged decisions with continuous (or any numeric) features.

    Attributes
    ----------
    X : ndarray of shape (n, n_features)
        What the policies see (include the group column if they may use it).
    z : ndarray of int, shape (n,)
        Group codes.
    a : ndarray of int, shape (n,)
        Logged action codes (the problem's numbering).
    y : ndarray of int, shape (n,)
        Outcome codes (the problem's numbering).
    propensity : ndarray of shape (n,), optional
        pi_0(a_i | x_i), if the logging probabilities are known.
    """

    X: np.ndarray
    z: np.ndarray
    a: np.ndarray
    y: np.ndarray
    propensity: np.ndarray | None = None

    def __post_init__(self) -> None:
        X = as_float_array(self.X, "X", ndim=(1, 2))
        if X.ndim == 1:
            X = X[:, None]
        big = np.iinfo(np.intp).max
        z = as_code_array(self.z, "z", big, "group")
        a = as_code_array(self.a, "a", big, "action")
        y = as_code_array(self.y, "y", big, "outcome")
        p = None if self.propensity is None else as_propensity(self.propensity)
        n = check_same_length(X=X, z=z, a=a, y=y, propensity=p)
        if n == 0:
            raise FairdecideError("BanditData needs at least one row")
        for name, val in (("X", X), ("z", z), ("a", a), ("y", y), ("propensity", p)):
            object.__setattr__(self, name, val)

    @property
    def n(self) -> int:
        """Number of rows."""
        return len(self.a)

    def units(self) -> Units:
        """The logged individuals as units: their groups and numeric features."""
        return Units(group=self.z, n_groups=int(self.z.max()) + 1, features=self.X)

    @classmethod
    def from_logged(cls, data: LoggedData, problem: DecisionProblem,
                    actions_required: bool = True) -> BanditData:
        """Tabular LoggedData as features: one-hot cell and one-hot group. Without logged
        actions (allowed only when ``actions_required`` is False, for full-information
        estimates in prediction problems) the action codes are placeholders (zeros)."""
        a = data.action_codes(problem)
        if a is None:
            if actions_required:
                raise FairdecideError("off-policy evaluation needs the logged actions (a)")
            a = np.zeros(data.n, dtype=int)
        X = np.hstack([np.eye(data.n_x)[data.x], np.eye(data.n_z)[data.z]])
        return cls(X, data.z, a, data.outcome_codes(problem), data.propensity)
