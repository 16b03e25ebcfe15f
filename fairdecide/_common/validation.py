"""Private input checks shared by the public constructors.

Public functions call these so that bad input fails early with an error naming the
argument; private helpers downstream then work on clean arrays.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from fairdecide.exceptions import FairdecideError

PROB_ATOL = 1e-8


def as_float_array(value: Any, name: str, ndim: int | Sequence[int] | None = None) -> np.ndarray:
    """Convert to a finite float array, checking its number of dimensions."""
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError) as exc:
        raise FairdecideError(f"{name} must be numeric; could not convert it: {exc}") from None
    if ndim is not None:
        allowed = (ndim,) if isinstance(ndim, int) else tuple(ndim)
        if arr.ndim not in allowed:
            raise FairdecideError(
                f"{name} must have {' or '.join(map(str, allowed))} dimensions, "
                f"got shape {arr.shape}"
            )
    if not np.all(np.isfinite(arr)):
        bad = ~np.isfinite(arr)
        raise FairdecideError(
            f"{name} contains NaN or infinite values ({int(bad.sum())}, the first at index "
            f"{index_text(np.argwhere(bad)[0])}); remove or impute them first"
        )
    return arr


def index_text(index: Any) -> str:
    """An array index as a person reads it: ``3`` for one axis, ``(3, 0)`` for more (not
    numpy's ``(np.int64(3),)``)."""
    idx = tuple(int(i) for i in np.atleast_1d(index))
    return str(idx[0]) if len(idx) == 1 else str(idx)


def check_distribution(arr: np.ndarray, name: str, axes: tuple[int, ...]) -> np.ndarray:
    """Check that ``arr`` is non-negative and sums to one over ``axes``; return a clean copy."""
    if np.any(arr < -PROB_ATOL):
        bad = np.argwhere(arr < -PROB_ATOL)[0]
        raise FairdecideError(
            f"{name} has a negative probability {arr[tuple(bad)]:.3g} at index "
            f"{index_text(bad)}"
        )
    sums = arr.sum(axis=axes)
    bad = np.abs(sums - 1.0) > 1e-6
    if np.any(bad):
        where = np.argwhere(bad)[0]
        raise FairdecideError(
            f"{name} must sum to one over axes {axes}; the sum at index {index_text(where)} "
            f"is {np.asarray(sums)[tuple(where)]:.6g}"
        )
    out = np.clip(arr, 0.0, None)
    return out / out.sum(axis=axes, keepdims=True)


def as_code_array(value: Any, name: str, n_codes: int, what: str) -> np.ndarray:
    """Convert to a 1-d integer code array with values in ``range(n_codes)``."""
    arr = np.asarray(value)
    if arr.ndim == 0:
        arr = arr.reshape(1)
    if arr.ndim != 1:
        raise FairdecideError(f"{name} must be one-dimensional, got shape {arr.shape}")
    if arr.dtype.kind == "f":
        if not np.all(np.isfinite(arr)):
            raise FairdecideError(f"{name} contains NaN or infinite values")
        if not np.all(arr == np.round(arr)):
            raise FairdecideError(f"{name} must hold integer codes, got non-integer values")
    elif arr.dtype.kind not in "iub":
        raise FairdecideError(
            f"{name} must hold integer codes of {what}s, got dtype {arr.dtype}; "
            "encode labels first (for example with LoggedData)"
        )
    codes = arr.astype(np.intp)
    if codes.size and (codes.min() < 0 or codes.max() >= n_codes):
        bad = codes[(codes < 0) | (codes >= n_codes)][0]
        raise FairdecideError(
            f"{name} has unknown {what} code {bad}; valid codes are 0..{n_codes - 1}"
        )
    return codes


def check_same_length(**arrays: np.ndarray | None) -> int:
    """Check that all given (non-None) arrays have the same length; return it."""
    lengths = {k: len(v) for k, v in arrays.items() if v is not None}
    if len(set(lengths.values())) > 1:
        desc = ", ".join(f"{k} has {n}" for k, n in lengths.items())
        raise FairdecideError(f"arrays must have the same length: {desc}")
    return next(iter(lengths.values())) if lengths else 0


def check_random_state(seed: Any) -> np.random.RandomState:
    """A RandomState from None (numpy's global one), an integer or a RandomState.

    The same contract (and the same streams) as scikit-learn's helper, without importing
    scikit-learn at start-up.
    """
    if seed is None or seed is np.random:
        return np.random.mtrand._rand
    if isinstance(seed, np.random.RandomState):
        return seed
    if isinstance(seed, int | np.integer) and not isinstance(seed, bool):
        if not 0 <= seed < 2**32:
            raise FairdecideError(
                f"random_state must be an integer in [0, 2**32 - 1], got {seed}")
        return np.random.RandomState(int(seed))
    raise FairdecideError(
        f"random_state must be None, an integer or a numpy RandomState, got {seed!r}")


def _is_real_scalar(value: Any) -> bool:
    return (isinstance(value, int | float | np.integer | np.floating)
            and not isinstance(value, bool))


def as_int(value: Any, name: str, minimum: int | None = None,
           maximum: int | None = None) -> int:
    """An integer argument (a whole float such as 3.0 is accepted); anything else, or a
    value outside [minimum, maximum], raises an error naming ``name``."""
    if not _is_real_scalar(value):
        raise FairdecideError(
            f"{name} must be an integer, got {type(value).__name__} {value!r}")
    if not np.isfinite(value) or float(value) != int(value):
        raise FairdecideError(f"{name} must be a whole number, got {value!r}")
    out = int(value)
    if minimum is not None and out < minimum:
        kind = {0: "a non-negative integer", 1: "a positive integer"}.get(
            minimum, f"an integer >= {minimum}")
        raise FairdecideError(f"{name} must be {kind}, got {out}")
    if maximum is not None and out > maximum:
        raise FairdecideError(f"{name} must be <= {maximum}, got {out}")
    return out


def as_real(value: Any, name: str, low: float | None = None, high: float | None = None,
            low_open: bool = False, high_open: bool = False) -> float:
    """A finite real scalar argument within the given bounds (open or closed); strings,
    lists, booleans, NaN and infinities raise an error naming ``name``."""
    if not _is_real_scalar(value):
        raise FairdecideError(
            f"{name} must be a real number, got {type(value).__name__} {value!r}")
    out = float(value)
    lo = "(" if low_open or low is None else "["
    hi = ")" if high_open or high is None else "]"
    where = f"{lo}{'-inf' if low is None else low}, {'inf' if high is None else high}{hi}"
    bad = not np.isfinite(out)
    if low is not None:
        bad |= out <= low if low_open else out < low
    if high is not None:
        bad |= out >= high if high_open else out > high
    if bad:
        raise FairdecideError(f"{name} must be a finite number in {where}, got {value!r}")
    return out


def as_number(value: Any, name: str) -> float:
    """A real scalar argument that may be infinite (a tolerance switched off) but not NaN;
    strings, booleans and arrays raise an error naming ``name``."""
    if isinstance(value, str | bytes | bool) or not np.isscalar(value):
        raise FairdecideError(
            f"{name} must be a number, got {type(value).__name__} {value!r}")
    try:
        out = float(value)
    except (TypeError, ValueError):
        raise FairdecideError(f"{name} must be a number, got {value!r}") from None
    if np.isnan(out):
        raise FairdecideError(f"{name} must be a number, got NaN")
    return out


def check_instance(value: Any, name: str, kind: type | tuple[type, ...], what: str) -> Any:
    """``value`` if it is a ``kind``; otherwise an error naming ``name`` and what was
    expected (``what``, e.g. "a DecisionProblem") instead of an AttributeError later."""
    if not isinstance(value, kind):
        raise FairdecideError(f"{name} must be {what}, got {type(value).__name__}")
    return value


def as_propensity(value: Any, name: str = "propensity") -> np.ndarray:
    """Logged propensities: a 1-d array in (0, 1], each large enough that its importance
    weight 1/p is a normal float (p >= ~2.2e-308): a subnormal propensity makes 1/p
    infinite and every importance-weighted estimate meaningless."""
    p = as_float_array(value, name, ndim=1)
    bad = (p <= 0) | (p > 1)
    if np.any(bad):
        row = int(np.argmax(bad))
        raise FairdecideError(
            f"{name} must lie in (0, 1]; row {row} has {p[row]:.4g}. A zero propensity "
            "means the logged action could not have been taken")
    tiny = p < np.finfo(float).tiny
    if np.any(tiny):
        row = int(np.argmax(tiny))
        raise FairdecideError(
            f"{name} at row {row} is {p[row]:.3g}, below the smallest normal float "
            f"({np.finfo(float).tiny:.3g}): its importance weight 1/p overflows. Check how "
            "the propensities were computed (e.g. a product of many small probabilities "
            "should be kept in logs)")
    return p


def as_bool(value: Any, name: str) -> bool:
    """A True/False flag; strings such as "no" (which Python would take as True) and
    numbers raise an error naming ``name``."""
    if not isinstance(value, bool | np.bool_):
        raise FairdecideError(
            f"{name} must be True or False, got {type(value).__name__} {value!r}")
    return bool(value)


def check_choice(value: Any, name: str, choices: Sequence[Any]) -> Any:
    """``value`` if it is one of ``choices`` (strings, or None where None is allowed);
    anything else (a list, an array, another type) raises an error naming ``name`` and
    listing the choices, instead of a TypeError or an ambiguous truth value from ``in``."""
    if not (value is None or isinstance(value, str)) or value not in choices:
        raise FairdecideError(
            f"{name} must be one of {', '.join(map(repr, choices))}; got {value!r}")
    return value


def canonical(value: Any, choices: Sequence[Any]) -> Any:
    """The choice ``value`` names, read case-insensitively ("TV" is "tv"; a choice that
    is not a string, such as None, only as itself), or None if it names none. The one
    way a string option of the library is read, so that an option's spelling never
    depends on where it is given."""
    if isinstance(value, str):
        folded = value.casefold()
        return next((c for c in choices if isinstance(c, str) and c.casefold() == folded),
                    None)
    return next((c for c in choices if c is value), None)


def as_choice(value: Any, name: str, choices: Sequence[Any]) -> Any:
    """The canonical choice ``value`` names (:func:`canonical`: "Max" is "max"), so that
    equality and repr stay canonical; anything else raises :func:`check_choice`'s error
    naming ``name`` and listing the choices.

    Examples
    --------
    >>> as_choice("TV", "measure", ("tv", "kl", "max"))
    'tv'
    """
    found = canonical(value, choices)
    # no match: None where it is a choice, the error otherwise
    return check_choice(value, name, choices) if found is None else found


def as_labels(value: Any, name: str, what: str = "label", non_empty: bool = False
              ) -> tuple:
    """A sequence of labels (list, tuple, range, 1-d array, pandas Index or Series) as a
    tuple of plain, hashable Python values (numpy scalars unwrapped). A single label (a
    number, a string, a 0-d array), a set, a mapping or nested sequences raise an error
    naming ``name``; for a single label it says to pass ``[label]``. A string is refused
    rather than split into characters. ``non_empty``: an empty sequence is an error too."""
    flat = isinstance(value, list | tuple | range) or (
        isinstance(value, np.ndarray) and value.ndim == 1) or _is_pandas_1d(value)
    if not flat:
        one = isinstance(value, str | bytes | int | float | np.generic) or (
            isinstance(value, np.ndarray) and value.ndim == 0)
        hint = (f"; for one {what}, pass a list of one: {name}=[{plain(value)!r}]"
                if one else "")
        raise FairdecideError(
            f"{name} must be a list of {what}s, got {type(value).__name__} {value!r}{hint}")
    out = tuple(plain(v) for v in value)
    for v in out:
        try:
            hash(v)
        except TypeError:
            raise FairdecideError(
                f"{name} must be a flat list of {what}s; it holds {type(v).__name__} "
                f"{v!r}") from None
    if non_empty and not out:
        raise FairdecideError(f"{name} must not be empty (None means no restriction)")
    return out


def plain(value: Any) -> Any:
    """A numpy scalar (or 0-d array) as the Python scalar it holds; anything else
    unchanged (labels are kept as plain Python values: :mod:`fairdecide.labels`)."""
    if isinstance(value, np.generic | np.ndarray) and np.ndim(value) == 0:
        return value.item()
    return value


def _is_pandas_1d(value: Any) -> bool:
    import pandas as pd

    return isinstance(value, pd.Index | pd.Series)
