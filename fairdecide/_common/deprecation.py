"""One release of grace for a renamed public name, a renamed keyword or a new argument
order: the old spelling keeps working and warns with a :class:`DeprecationWarning` that
names the new one (the vocabulary is docs/concepts.md's table).

- A renamed keyword stays in the signature for the release with the default
  :data:`DEPRECATED` (as scikit-learn keeps a deprecated parameter), and
  :func:`renamed` reads it: the signature shows both, the test of the vocabulary knows the
  old one by its default, and no wrapper stands between the caller and the function (a
  wrapper would shift every warning the function gives to the wrapper's line).
- The old positional order is recognised in the function's body by where the anchor
  (the :class:`~fairdecide.DecisionProblem`) landed: :func:`old_order` puts the values
  back in the new order and warns with the new call.
- A renamed function or class keeps its old name as :func:`deprecated_function`, or
  through a module's ``__getattr__`` (:func:`deprecated_attribute`).
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from fairdecide.exceptions import FairdecideError

__all__ = ["DEPRECATED", "deprecated_attribute", "deprecated_function", "old_order",
           "renamed", "warn_deprecated"]


class _Deprecated:
    """The default of a deprecated keyword: "not given"."""

    _instance: _Deprecated | None = None

    def __new__(cls) -> _Deprecated:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "<deprecated>"

    def __reduce__(self) -> str:
        return "DEPRECATED"


#: The default of a keyword kept for one release under its old name.
DEPRECATED: Any = _Deprecated()


def warn_deprecated(old: str, new: str, stacklevel: int = 3) -> None:
    """Warn that ``old`` is deprecated, naming ``new``; ``stacklevel`` counts from the
    caller of this function (3: the caller of the public function that calls it)."""
    warnings.warn(f"{old} is deprecated and will be removed in the next release; use "
                  f"{new}", DeprecationWarning, stacklevel=stacklevel)


def renamed(where: str, old: str, old_value: Any, new: str, new_value: Any,
            new_default: Any = None) -> Any:
    """The value of keyword ``new``, given either as ``new`` or as its deprecated name
    ``old`` (which warns). Both given is an error naming them.

    ``where`` is the public name as a caller writes it (``"optimize_ranking"``);
    ``new_default`` is ``new``'s default, to tell "both given" from "old given"."""
    if old_value is DEPRECATED:
        return new_value
    if not (new_value is new_default
            or (type(new_value) is type(new_default) and isinstance(new_value, str | int | float)
                and new_value == new_default)):
        raise FairdecideError(
            f"{where}: give {new}= only; {old}= is its deprecated name, and both were given")
    warn_deprecated(f"{where}({old}=...)", f"{where}({new}=...)", stacklevel=4)
    return old_value


def old_order(where: str, values: Sequence[Any], names: Sequence[str],
              old_names: Sequence[str], anchor: type) -> tuple[Any, ...]:
    """``values``, bound to the parameters ``names`` in the new order, put back in that
    order if the caller used the old positional order ``old_names``.

    The old order is recognised by the anchor type (the DecisionProblem): it is not in
    the first place, but where the old order had it. The values are then read by their
    old names, with a DeprecationWarning giving both calls. A call in the new order, or
    by keyword, is returned as it is."""
    values = tuple(values)
    k = list(old_names).index(names[0])
    if isinstance(values[0], anchor) or not isinstance(values[k], anchor):
        return values
    by_old = dict(zip(old_names, values, strict=True))
    warn_deprecated(f"{where}({', '.join(old_names)})",
                    f"{where}({', '.join(names)}): the problem first, then the world or "
                    "data, the policy and the criteria", stacklevel=4)
    return tuple(by_old[n] for n in names)


def deprecated_function(func: Callable, old: str, new: str) -> Callable:
    """``func`` under its old name ``old``: it warns, naming ``new``, then calls it."""

    @functools.wraps(func)
    def old_name(*args: Any, **kwargs: Any) -> Any:
        warn_deprecated(old, new)
        return func(*args, **kwargs)

    old_name.__name__ = old.rsplit(".", 1)[-1].split("(")[0]
    old_name.__qualname__ = old_name.__name__
    old_name.__doc__ = f"Deprecated: use {new} (this name warns, then calls it)."
    return old_name


def deprecated_attribute(module: str, renames: Mapping[str, tuple[str, Callable[[], Any]]]
                         ) -> Callable[[str], Any]:
    """A module's ``__getattr__`` for renamed names: ``renames[old] = (new, get)``, where
    ``get()`` returns the object under its new name (imported when asked)."""

    def __getattr__(name: str) -> Any:
        if name in renames:
            new, get = renames[name]
            warn_deprecated(f"{module}.{name}", f"{module}.{new}")
            return get()
        raise AttributeError(f"module {module!r} has no attribute {name!r}")

    return __getattr__
