"""Labels and codes: the one place where a variable's values become integer codes.

Every variable fairdecide reads from data (the feature cell x, the group z, the action a,
the outcome y) is held as integer codes into its labels. :class:`Labels` is those labels,
in code order, and the two conversions every entry point needs:

- :meth:`Labels.factorize`: values -> (codes, labels), the labels found (sorted when they
  can be) or given;
- :meth:`Labels.encode`: values -> codes into labels already known (a problem's actions,
  a fitted estimator's groups), and :meth:`Labels.map_to`: these labels -> codes into
  another numbering (a policy's or a world's).

Both are one vectorised pass over pandas' hash tables (``pandas.factorize``,
``Index.get_indexer``), whatever the container (list, numpy array, pandas Series of any
dtype: object, category, string, pyarrow strings, numbers). Values match as a Python
dict matches keys (``1``, ``1.0``, ``True`` and ``numpy.int64(1)`` are one label), and
text matches a label that is not text by its text form when that is unambiguous: Dask
stores object columns as strings, so the outcome ``0`` of a pandas frame arrives as
``"0"`` from the Dask frame made of it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from fairdecide._common.validation import plain
from fairdecide.exceptions import FairdecideError, SuspiciousLabelWarning

__all__ = ["Labels"]


def as_object_vector(values: Any) -> np.ndarray:
    """A 1-d object array; tuples stay whole (numpy would otherwise make a 2-d array)."""
    if isinstance(values, np.ndarray):
        return values.astype(object, copy=False) if values.ndim == 1 else values
    if isinstance(values, pd.Series | pd.Index):
        return values.to_numpy(dtype=object)
    items = list(values)
    return np.fromiter(items, dtype=object, count=len(items))


def one_dimensional(values: Any, name: str) -> np.ndarray:
    """:func:`as_object_vector`, one-dimensional, with an error naming ``name``."""
    if isinstance(values, str | bytes) or not hasattr(values, "__iter__") or (
            isinstance(values, np.ndarray) and values.ndim == 0):
        raise FairdecideError(
            f"{name} must be a one-dimensional sequence (list, array or Series), got "
            f"{type(values).__name__}")
    try:
        arr = as_object_vector(values)
    except TypeError as exc:
        raise FairdecideError(f"{name} must be a one-dimensional sequence: {exc}") from None
    if arr.ndim != 1:
        raise FairdecideError(f"{name} must be one-dimensional, got shape {arr.shape}")
    return arr


def label_column(labels: tuple, codes: np.ndarray) -> np.ndarray:
    """The labels of ``codes`` as a column of the labels' common type (bool, int, float,
    or str; object if they have none): numeric columns stay numeric in a Dask frame,
    which stores object columns as strings."""
    for kind in (bool, int, float, str):
        if labels and all(type(v) is kind for v in labels):
            return np.asarray(labels, dtype=object if kind is str else kind)[codes]
    return as_object_vector(labels)[codes]


def _unhashable_row(arr: np.ndarray) -> int:
    for i, v in enumerate(arr):
        try:
            hash(v)
        except TypeError:
            return i
    return -1


class Labels(tuple):
    """The distinct labels of one variable, in code order.

    A tuple (it compares, prints, hashes and pickles as one) of plain Python values:
    numpy scalars become Python numbers, and every label is hashable and not missing.

    Parameters
    ----------
    labels : iterable
        The labels, code 0 first.
    name : str
        What they label, for error messages.

    Examples
    --------
    >>> from fairdecide.labels import Labels
    >>> codes, labels = Labels.factorize(["hi", "lo", "hi"], "x")
    >>> labels, codes
    (('hi', 'lo'), array([0, 1, 0]))
    >>> labels.encode(["lo", "lo"], "new x")
    array([1, 1])
    >>> Labels([0, 1]).encode(["1", "0"], "y")     # text from a Dask string column
    array([1, 0])
    >>> Labels(["lo", "hi"]).map_to(labels, "cell", "policy")
    array([1, 0])
    """

    __slots__ = ()

    def __new__(cls, labels: Iterable[Any], name: str = "labels") -> Labels:
        if isinstance(labels, str | bytes):
            raise FairdecideError(f"{name} must be a sequence of labels, got {labels!r}")
        try:
            out = tuple(plain(v) for v in labels)
        except TypeError:
            raise FairdecideError(
                f"{name} must be a sequence of labels, got {type(labels).__name__}") from None
        try:
            distinct = len(set(out)) == len(out)
        except TypeError:
            raise FairdecideError(
                f"{name} must be hashable labels (numbers, strings or tuples), got "
                f"{list(out)!r:.200}") from None
        if not distinct:
            raise FairdecideError(f"{name} must be distinct, got {list(out)}")
        return tuple.__new__(cls, out)

    @classmethod
    def trusted(cls, labels: Iterable[Any]) -> Labels:
        """Labels already checked (plain, hashable, distinct): no checks are repeated."""
        return tuple.__new__(cls, labels)

    def to_index(self) -> pd.Index:
        """The labels as a pandas Index (object dtype; tuples stay whole)."""
        return pd.Index(as_object_vector(self), dtype=object, tupleize_cols=False)

    @classmethod
    def factorize(cls, values: Any, name: str, labels: Sequence[Any] | None = None
                  ) -> tuple[np.ndarray, Labels]:
        """Integer codes of ``values`` and their labels.

        Without ``labels``, the labels are the distinct values, sorted when they can be
        (values of mixed types keep the order they first appear in). With ``labels``,
        every value must be among them (:meth:`encode`).

        Missing, infinite and unhashable values raise an error naming ``name`` and the
        first row at fault.
        """
        arr = one_dimensional(values, name)
        missing = np.asarray(pd.isna(arr), dtype=bool)
        if missing.any():
            raise FairdecideError(
                f"{name} has {int(missing.sum())} missing values (first at row "
                f"{int(np.argmax(missing))}); drop or impute them first")
        if labels is not None:
            known = cls(labels, f"labels given for {name}")
            return known.encode(arr, name, among="the labels given"), known
        try:
            codes, uniques = pd.factorize(arr)
        except TypeError:
            row = _unhashable_row(arr)
            raise FairdecideError(
                f"{name} has an unhashable value {arr[row]!r} at row {row}; labels must be "
                "hashable (numbers, strings or tuples)") from None
        found = [plain(v) for v in uniques]
        bad = [i for i, v in enumerate(found) if isinstance(v, float) and not np.isfinite(v)]
        if bad:
            row = int(np.argmax(codes == bad[0]))
            raise FairdecideError(f"{name} has an infinite value at row {row}; drop or recode it")
        try:
            order = sorted(range(len(found)), key=found.__getitem__)
        except TypeError:  # labels of mixed types: the order they first appear in
            order = list(range(len(found)))
        rank = np.empty(len(found), dtype=np.intp)
        rank[order] = np.arange(len(found))
        return rank[codes], cls.trusted(found[i] for i in order)

    def encode(self, values: Any, name: str, *, what: str = "value",
               among: str = "its labels", hint: str | None = None, index: Any = None
               ) -> np.ndarray:
        """Codes of ``values`` among these labels.

        A value that is not a label raises "``name`` contains ``what`` v (rows i, j) that
        is not among ``among`` [labels]", followed by ``hint`` (what to do about it); the
        rows are positions, or labels of ``index`` (a DataFrame's index) when given.
        """
        arr = one_dimensional(values, name)
        codes = self.lookup(arr)
        if np.any(codes < 0):
            rows = np.flatnonzero(codes < 0)
            value = plain(arr[rows[0]])
            same = [int(i) for i in rows if _same_label(arr[i], value)]
            others = len(rows) - len(same)
            raise FairdecideError(
                f"{name} contains {what} {value!r} ({rows_text(same, index)}) that is not among "
                f"{among} {list(self)}"
                + (f", and {others} other row(s) hold other unknown values" if others else "")
                + (f"; {hint}" if hint else ""))
        return codes

    def map_to(self, other: Sequence[Any], what: str, owner: str, plural: str | None = None
               ) -> np.ndarray:
        """For each of these labels, its code in ``other`` (the labels of an ``owner``:
        a policy, a world, whose ``plural`` they are); labels ``other`` lacks raise an
        error listing them."""
        codes = Labels.trusted(other).lookup(as_object_vector(self))
        if np.any(codes < 0):
            missing = [lab for lab, c in zip(self, codes, strict=True) if c < 0]
            raise FairdecideError(
                f"the {owner} has no row for the {what} label(s) {missing[:5]!r}"
                f"{' ...' if len(missing) > 5 else ''} of the data or world it is applied "
                f"to; its {plural or what + ' labels'} are {list(other)[:10]!r}"
                f"{' ...' if len(other) > 10 else ''}")
        return codes

    def lookup(self, values: Any) -> np.ndarray:
        """Codes of the values, -1 for a value that is no label (matched by value, then
        text by its text form: see the module)."""
        arr = as_object_vector(values)
        try:
            codes = self.to_index().get_indexer(arr).astype(np.intp)
        except TypeError:  # an unhashable value among them: that one is no label
            position = {lab: i for i, lab in enumerate(self)}
            codes = np.array([_position(position, v) for v in arr], dtype=np.intp)
        lost = codes < 0
        if lost.any() and not all(isinstance(v, str) for v in self):
            text = [str(v) for v in self]
            if len(set(text)) == len(text):
                values = arr[lost]
                is_text = np.array([isinstance(v, str) for v in values], dtype=bool)
                if is_text.any():
                    found = pd.Index(text, dtype=object).get_indexer(values[is_text])
                    sub = codes[lost]
                    sub[is_text] = found
                    codes[lost] = sub
        return codes


def rows_text(rows: Sequence[int], index: Any = None, shown: int = 5) -> str:
    """``"row 3"``, or ``"rows 3, 8, 12"``, or ``"rows 3, 8, ... (40 rows)"``: where a
    value occurs, for an error or a warning. With ``index`` (a DataFrame's index), the
    rows are named by their index labels: ``"index 17"``, ``"index 17, 30"``."""
    count = len(rows)
    if index is None:
        word, names = ("row", "rows"), [str(int(r)) for r in rows[:shown]]
    else:
        word, names = ("index", "index"), [repr(plain(index[int(r)])) for r in rows[:shown]]
    if count == 1:
        return f"{word[0]} {names[0]}"
    return f"{word[1]} {', '.join(names)}" + (f", ... ({count} rows)" if count > shown
                                               else "")


def _same_label(value: Any, label: Any) -> bool:
    try:
        return bool(plain(value) == label)
    except (TypeError, ValueError):
        return False


#: A label held by at most this share of the n rows, max(1, RARE_LABEL_SHARE * n), is
#: rare; a rare label is suspect (:func:`suspect_labels`) when its form departs, as a
#: typo's does, from a label held by at least RARE_LABEL_RATIO times as many rows.
RARE_LABEL_SHARE = 0.001
#: See :data:`RARE_LABEL_SHARE`: how many times as many rows a label must hold to be one
#: a rare label is compared with (a frequent label).
RARE_LABEL_RATIO = 10

_TOKENS = re.compile(r"[^\W\d_]+|\d+|[\W_]+")


@dataclass(frozen=True)
class SuspectLabel:
    """A rare label whose form looks like a typo (:func:`suspect_labels`).

    Attributes
    ----------
    label
        The label.
    code : int
        Its code (position among the labels).
    count : int
        The rows holding it (rounded, when rows carry weights).
    reason : str
        What about its form looks like a typo, e.g. "text where every frequent value is a
        number", "one letter away from 'Medium'".
    """

    label: Any
    code: int
    count: int
    reason: str


def _number(text: str) -> float | None:
    """The finite number a text spells (``" 1.0"`` -> 1.0), or None."""
    try:
        value = float(text)
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None


def _kind(label: Any) -> str | None:
    """The form of a label: "a truth value", "a number" (numbers and text spelling one),
    "text", or None (tuples and other labels, which the form rules leave alone)."""
    if isinstance(label, bool):
        return "a truth value"
    if isinstance(label, int | float):
        return "a number"
    if isinstance(label, str):
        return "a number" if _number(label) is not None else "text"
    return None


def _spelling(label: Any, kind: str | None) -> tuple:
    """What stays of a label when case, spacing and number format are ignored: two labels
    with the same spelling are one value written two ways."""
    if kind == "a number":
        return ("number", float(label) if not isinstance(label, str) else _number(label))
    return ("text", "".join(str(label).split()).casefold())


def _tokens(label: str) -> tuple[str, ...]:
    """Runs of letters, of digits, and of anything else, in lower case."""
    return tuple(_TOKENS.findall(" ".join(label.split()).casefold()))


def _one_edit(a: str, b: str) -> bool:
    """Whether ``b`` is ``a`` with one letter changed, added, dropped, or two neighbouring
    letters swapped."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i, (p, q) in enumerate(zip(a, b, strict=True)) if p != q]
        return len(diff) == 1 or (len(diff) == 2 and diff[1] == diff[0] + 1
                                  and a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]])
    short, long = (a, b) if len(a) < len(b) else (b, a)
    return any(long[:i] + long[i + 1:] == short for i in range(len(long)))


def _word_slots(tokens: tuple[str, ...]) -> list[tuple]:
    """One key per word of at least three letters: the tokens with that word left blank.
    Two labels share a key when they differ in that word alone."""
    return [(len(tokens), j, tokens[:j], tokens[j + 1:]) for j, t in enumerate(tokens)
            if t.isalpha() and len(t) >= 3]


def suspect_labels(codes: np.ndarray, labels: Sequence[Any],
                   weights: np.ndarray | None = None) -> list[SuspectLabel]:
    """The rare labels whose form looks like a typo of a frequent one.

    A label held by c rows of n is **rare** when 0 < c <= max(1, RARE_LABEL_SHARE * n);
    a label held by at least RARE_LABEL_RATIO * c rows is **frequent** beside it. A rare
    label is suspect when its form departs from the frequent ones as a typo's does:

    - it is one of them written differently: the same text but for case and spacing
      (``"high "`` beside ``"High"``), or the same number (``"1.0"`` beside ``1``);
    - it is text where every frequent label is a number (``"yes"`` among 0s and 1s), or a
      number where every frequent label is text (or a truth value);
    - it differs from a frequent text label in one word alone (of at least three letters
      in the frequent label), by one letter changed, added, dropped, or two neighbouring
      letters swapped (``"Meduim"`` beside ``"Medium"``).

    A rare label of the same form as the others passes however rare it is: an item shown
    4 times among 80 items, a rare outcome of a binary variable, a category ``"C"`` beside
    ``"A"`` and ``"B"``, an id ``"R54"`` beside ``"R51"`` (digits and single letters name
    things; they are not misspelt). The callers check only labels that were found, not
    declared.

    Parameters
    ----------
    codes : ndarray of int
        The code of each row (or atom).
    labels : sequence
        The label of each code.
    weights : ndarray, optional
        The rows each entry stands for (atoms of counts).

    Returns
    -------
    list of SuspectLabel
        In code order.

    Examples
    --------
    >>> import numpy as np
    >>> from fairdecide.labels import suspect_labels
    >>> codes = np.array([0] * 4000 + [1] * 2999 + [2])
    >>> [(s.label, s.count, s.reason) for s in suspect_labels(codes, (0, 1, "yes"))]
    [('yes', 1, 'text where every frequent value is a number')]
    >>> suspect_labels(np.array([0] * 6999 + [1]), (0, 1))  # a rare outcome, not a typo
    []
    >>> codes = np.array([0] * 3000 + [1] * 4000 + [2] * 2)
    >>> [s.reason for s in suspect_labels(codes, ("High", "Low", "Hgih"))]
    ["one letter away from 'High'"]
    """
    counts = np.bincount(codes, weights=weights, minlength=len(labels)).astype(float)
    limit = max(1.0, RARE_LABEL_SHARE * float(counts.sum()))
    rare = np.flatnonzero((counts > 0) & (counts <= limit))
    if rare.size == 0:
        return []
    kinds = [_kind(lab) for lab in labels]
    spelling: dict[tuple, list[int]] = {}
    slots: dict[tuple, list[int]] = {}
    top: dict[str | None, float] = {}
    # only a label frequent beside the rarest rare one can be compared with any
    for k in np.flatnonzero(counts >= RARE_LABEL_RATIO * counts[rare].min()):
        lab, kind = labels[k], kinds[k]
        spelling.setdefault(_spelling(lab, kind), []).append(k)
        top[kind] = max(top.get(kind, 0.0), counts[k])
        if kind == "text":
            for key in _word_slots(_tokens(lab)):
                slots.setdefault(key, []).append(k)
    out = []
    for k in rare:
        c, kind, label = counts[k], kinds[k], labels[k]
        frequent = RARE_LABEL_RATIO * c
        reason = None
        same = [j for j in spelling.get(_spelling(label, kind), ())
                if j != k and counts[j] >= frequent]
        if same:
            reason = f"the value {labels[same[0]]!r} written differently"
        kinds_of_frequent = [q for q, m in top.items() if m >= frequent]
        if reason is None and kind in ("text", "a number") and kinds_of_frequent \
                and len(kinds_of_frequent) == 1 and kinds_of_frequent[0] not in (kind, None):
            reason = f"{kind} where every frequent value is {kinds_of_frequent[0]}"
        if reason is None and kind == "text":
            mine = _tokens(label)
            for key in {(len(mine), j, mine[:j], mine[j + 1:])
                        for j, t in enumerate(mine) if t.isalpha()}:
                close = [j for j in slots.get(key, ()) if counts[j] >= frequent
                         and _one_edit(mine[key[1]], _tokens(labels[j])[key[1]])]
                if close:
                    reason = f"one letter away from {labels[close[0]]!r}"
                    break
        if reason is not None:
            out.append(SuspectLabel(label, int(k), round(float(c)), reason))
    return out


def rare_labels(codes: np.ndarray, labels: Sequence[Any],
                weights: np.ndarray | None = None) -> list[tuple[Any, int]]:
    """The labels :func:`suspect_labels` finds, with their row counts.

    Examples
    --------
    >>> import numpy as np
    >>> from fairdecide.labels import rare_labels
    >>> rare_labels(np.array([0] * 4000 + [1] * 2999 + [2]), (0, 1, "yes"))
    [('yes', 1)]
    """
    return [(s.label, s.count) for s in suspect_labels(codes, labels, weights)]


def suspect_sentences(codes: np.ndarray, labels: Sequence[Any], name: str,
                      weights: np.ndarray | None = None, index: Any = None,
                      counted: bool = True) -> list[tuple[SuspectLabel, str]]:
    """Each label of ``name`` that :func:`suspect_labels` finds, with the sentence that
    names it, its rows (``index``: a DataFrame's index, whose labels then name them; with
    ``weights``, the atoms of the counts) and the frequent labels beside it, e.g.
    "outcome column 'recid' has the value 'yes' in only 1 row (index 4017) beside 0 (3890
    rows), 1 (3323 rows): text where every frequent value is a number, most likely a
    typo". Without ``counted`` (a private release), no count and no row is named."""
    suspects = suspect_labels(codes, labels, weights)
    if not suspects:
        return []
    counts = np.bincount(codes, weights=weights, minlength=len(labels))
    odd = {s.code for s in suspects}
    order = sorted((k for k in range(len(labels)) if k not in odd), key=lambda k: -counts[k])
    common = ", ".join(f"{labels[k]!r} ({round(float(counts[k]))} rows)" for k in order[:3])
    out = []
    for s in suspects:
        if not counted:
            out.append((s, f"{name} has a rare value, {s.label!r}: {s.reason}, most likely "
                           "a typo"))
            continue
        where = np.flatnonzero(codes == s.code)
        if weights is None:
            place = rows_text(where, index)
        else:
            place = f"atom {', '.join(str(int(i)) for i in where[:5])} of the counts"
        out.append((s, f"{name} has the value {s.label!r} in only {s.count} row"
                       f"{'s' if s.count != 1 else ''} ({place}) beside {common}: "
                       f"{s.reason}, most likely a typo"))
    return out


def warn_rare_labels(codes: np.ndarray, labels: Sequence[Any], name: str, argument: str,
                     weights: np.ndarray | None = None, stacklevel: int = 3,
                     index: Any = None) -> list[str]:
    """Warn (:class:`~fairdecide.exceptions.SuspiciousLabelWarning`) about each label of
    ``name`` that :func:`suspect_labels` finds, naming its rows and how to declare the
    expected labels (``argument``, e.g. ``outcome_labels``); returns the messages.
    ``weights``: the rows each entry stands for (atoms of counts, named as atoms);
    ``index``: a DataFrame's index, whose labels then name the rows."""
    import warnings

    messages = []
    for _, sentence in suspect_sentences(codes, labels, name, weights, index):
        text = (f"{sentence}. Correct or drop those rows, or declare the expected values "
                f"({argument}=...): any other value is then an error, and this warning "
                "goes away")
        messages.append(text)
        warnings.warn(text, SuspiciousLabelWarning, stacklevel=stacklevel)
    return messages


def _position(position: dict, value: Any) -> int:
    """``value``'s code in a label-to-code dict, -1 if it is none (or unhashable)."""
    try:
        return position.get(value, -1)
    except TypeError:
        return -1
