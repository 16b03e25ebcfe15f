"""The utility and the decision problem of an audited table, from what a person types:
a utility written as JSON (text, ``@file.json`` or a mapping) over the data's labels,
matched as text, and the kind of problem; or what is missing to make one."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from fairdecide.data.logged import LoggedData
from fairdecide.exceptions import FairdecideError
from fairdecide.problem import DecisionProblem

__all__ = ["make_problem", "parse_utility"]


def _load_spec(spec: Any) -> Mapping:
    if isinstance(spec, str):
        text = spec
        if spec.startswith("@"):
            try:
                text = Path(spec[1:]).read_text()
            except OSError as exc:
                raise FairdecideError(f"utility file {spec[1:]!r} cannot be read: {exc}") \
                    from None
        try:
            spec = json.loads(text)
        except json.JSONDecodeError as exc:
            raise FairdecideError(
                f"utility is not valid JSON ({exc.msg} at character {exc.pos}); write it as "
                '{"ACTION": {"OUTCOME": VALUE, ...}, ...}') from None
    if not isinstance(spec, Mapping):
        raise FairdecideError(
            'utility must be a mapping {"ACTION": {"OUTCOME": VALUE}}, got '
            f"{type(spec).__name__}")
    return spec


def parse_utility(spec: Any, action_labels: Sequence[Any], outcome_labels: Sequence[Any]
                  ) -> np.ndarray:
    """The utility matrix U[a, y] from ``{"ACTION": {"OUTCOME": VALUE}}``.

    Labels are matched as text, so ``"1"`` names the value 1 of a numeric column.
    ``spec`` may be JSON text, ``"@file.json"`` or a mapping. Without a spec, when the
    actions are the outcomes (a prediction of them), the utility is accuracy.

    Examples
    --------
    >>> from fairdecide.report import parse_utility
    >>> parse_utility('{"High": {"0": -1, "1": 1}, "Low": {"0": 1, "1": -1}}',
    ...               ["High", "Low"], [0, 1])
    array([[-1.,  1.],
           [ 1., -1.]])
    """
    acts = [str(a) for a in action_labels]
    outs = [str(y) for y in outcome_labels]
    if spec is None:
        if acts == outs:
            return np.eye(len(acts))
        raise FairdecideError(
            f"the actions {acts} are not the outcomes {outs}, so accuracy is not a utility "
            'here: give one, e.g. --utility \'{"' + acts[0] + '": {"' + outs[0]
            + '": 1, ...}, ...}\' with a value for every action and outcome')
    spec = _load_spec(spec)
    U = np.full((len(acts), len(outs)), np.nan)
    for a, row in spec.items():
        if str(a) not in acts:
            raise FairdecideError(f"utility names the action {a!r}, which is not a value of "
                                  f"the action column; its values are {acts}")
        if not isinstance(row, Mapping):
            raise FairdecideError(f"utility[{a!r}] must map outcomes to values, got {row!r}")
        for y, value in row.items():
            if str(y) not in outs:
                raise FairdecideError(f"utility[{a!r}] names the outcome {y!r}, which is not "
                                      f"a value of the outcome column; its values are {outs}")
            if isinstance(value, bool) or not isinstance(value, int | float) \
                    or not np.isfinite(value):
                raise FairdecideError(
                    f"utility[{a!r}][{y!r}] must be a finite number, got {value!r}")
            U[acts.index(str(a)), outs.index(str(y))] = float(value)
    missing = [(acts[i], outs[j]) for i, j in np.argwhere(np.isnan(U))]
    unnamed = [outs[j] for j in range(len(outs)) if np.isnan(U[:, j]).all()] + [
        acts[i] for i in range(len(acts)) if np.isnan(U[i]).all()]
    if missing:
        hint = (f"; the data hold {unnamed}, which the utility never names: if a value "
                "is a typo in the data, correct those rows (or declare the expected "
                "values with outcome_labels / --outcome-labels and action_labels / "
                "--action-labels, which name them)" if unnamed else "")
        raise FairdecideError(f"utility has no value for (action, outcome) {missing}; give "
                              f"one for every pair{hint}")
    return U


def make_problem(data: LoggedData, utility: Any, kind: str | None
                 ) -> tuple[DecisionProblem | None, list[str]]:
    """The decision problem of the audited data, or what is missing to make one.

    The problem holds the data's labels, the utility, and whether the outcome may depend
    on the decision (``kind``: "prediction" or "intervention"). When the actions are the
    outcomes (a prediction of them), the defaults apply: accuracy and "prediction".
    Otherwise each of ``utility`` and ``kind`` must be given; without one of them the
    problem is None and ``missing`` names what to give (the fairness parts of the report
    need neither). A ``utility`` or ``kind`` that is given is checked either way.

    Returns
    -------
    (DecisionProblem or None, list of str)
        The problem and ``[]``, or None and the missing arguments among
        ``["utility", "kind"]``.
    """
    acts, outs = data.action_labels, data.outcome_labels
    same = [str(a) for a in acts] == [str(y) for y in outs]
    if kind is not None and kind not in ("prediction", "intervention"):
        raise FairdecideError(f"kind must be 'prediction' or 'intervention', got {kind!r}")
    U = parse_utility(utility, acts, outs) if utility is not None or same else None
    missing = [arg for arg, value in (("utility", utility), ("kind", kind))
               if value is None and not same]
    if missing:
        return None, missing
    return DecisionProblem(U, outcome_depends_on_action=(kind or "prediction")
                           == "intervention", action_labels=acts, outcome_labels=outs), []
