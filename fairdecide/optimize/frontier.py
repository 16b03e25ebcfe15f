"""Pareto frontiers of utility against fairness."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from fairdecide._common.tables import result_table
from fairdecide._common.validation import as_int, as_number
from fairdecide.criteria.base import Criterion
from fairdecide.exceptions import FairdecideError
from fairdecide.optimize.api import optimize_policy
from fairdecide.optimize.routes.units import is_units_table
from fairdecide.optimize.routes.warm_frontier import warm_frontier
from fairdecide.problem import DecisionProblem
from fairdecide.uncertainty.beliefs import Belief
from fairdecide.uncertainty.confidence import ConfidenceSet
from fairdecide.worlds.world import World

__all__ = ["pareto_frontier"]


def pareto_frontier(
    problem: DecisionProblem,
    world: World | Belief,
    criterion: Criterion,
    epsilons: Sequence[float] | None = None,
    *,
    n_points: int = 11,
    **kwargs: Any,
) -> pd.DataFrame:
    """The best utility at each fairness tolerance: max U subject to F <= epsilon.

    Parameters
    ----------
    problem, world, criterion
        As for :func:`optimize_policy` (one criterion).
    epsilons : sequence of float, optional
        Tolerances. Default: ``n_points`` evenly spaced from 0 to the deviation of the
        unconstrained optimum (beyond which the constraint no longer binds).
    **kwargs
        Passed to :func:`optimize_policy` (``group_blind``, ``solver``, ...).

    Returns
    -------
    DataFrame
        Columns ``epsilon``, ``utility``, ``deviation``, ``status`` and ``solver``, one
        row per tolerance; ``frame.attrs["criterion"]`` names the deviation with its
        measure and reference. Utility is non-decreasing in epsilon for convex criteria.
        Over a :class:`~fairdecide.uncertainty.confidence.ConfidenceSet` epsilon bounds the
        deviation over every world of the set (held inside each program, as by
        :func:`optimize_policy`): ``utility`` and ``deviation`` are at the set's centre,
        and the columns ``certified value`` (the maximised worst value, non-decreasing)
        and ``certified deviation`` (at most epsilon) follow; the default tolerances
        then run up to the unconstrained policy's certified deviation.

    Notes
    -----
    When the tolerances are one exact linear program whose HiGHS method is the dual
    simplex (linear criteria; small programs, two actions or ``solver="highs-ds"``), the
    program is built once and re-solved warm: the
    tolerances are visited from the largest down, each by the dual simplex from the
    last optimum's basis (:mod:`fairdecide.optimize.routes.warm_frontier`; ``solver`` says
    "warm from epsilon ..."). Every point is verified on its decision tables, as by
    :func:`optimize_policy`, which solves each tolerance otherwise.

    Examples
    --------
    >>> from fairdecide import Independence
    >>> from fairdecide.datasets import make_bail_problem
    >>> from fairdecide.optimize import pareto_frontier
    >>> problem, world = make_bail_problem()
    >>> front = pareto_frontier(problem, world, Independence(), n_points=3)
    >>> bool(front["utility"].is_monotonic_increasing)
    True
    """
    if not isinstance(criterion, Criterion):
        raise FairdecideError(
            f"criterion must be one fairness criterion, got {type(criterion).__name__}")
    over_set = isinstance(world, ConfidenceSet)
    if epsilons is None:
        n_points = as_int(n_points, "n_points", minimum=2)
        free = optimize_policy(problem, world, criterion, lam=0.0, **kwargs)
        # over a set, epsilon bounds the deviation over every world of the set
        top = (free.guarantee.deviations if over_set else free.deviations)[criterion.label]
        epsilons = np.linspace(0.0, top, int(n_points))
    else:
        items = epsilons if isinstance(epsilons, list | tuple | np.ndarray) else None
        if items is None or len(items) == 0:
            raise FairdecideError(
                f"epsilons must be a non-empty sequence of tolerances, got {epsilons!r}")
    for eps in epsilons:
        as_number(eps, "epsilons")
    # a units table (FrameWorld) has no in-memory program to re-solve warm; over a set
    # each point is a certified result with its price (optimize_policy's)
    found = None if is_units_table(world) or over_set else warm_frontier(
        problem, world, criterion, epsilons, kwargs)
    if found is None:
        found = [None] * len(epsilons)
    found = [res if res is not None else
             optimize_policy(problem, world, criterion, epsilon=float(eps), **kwargs)
             for eps, res in zip(epsilons, found, strict=True)]
    frame = result_table([_row(float(eps), res, criterion.label)
                          for eps, res in zip(epsilons, found, strict=True)])
    frame.attrs["criterion"] = criterion.label  # what "deviation" measures
    return frame


def _row(eps: float, res: Any, name: str) -> dict[str, Any]:
    """One tolerance's row; over a ConfidenceSet also what its guarantee certifies."""
    row = {"epsilon": eps, "utility": res.utility, "deviation": res.deviations[name],
           "status": res.status, "solver": res.solver}
    if res.guarantee is not None:
        row["certified value"] = res.guarantee.value
        if res.guarantee.deviations[name] is not None:
            row["certified deviation"] = res.guarantee.deviations[name]
    return row
