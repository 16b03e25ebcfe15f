"""How many rows a guarantee needs: by simulation from the fitted world
(:func:`rows_needed`), so that a user learns whether to collect more data before deciding.

The held-out route (:func:`~fairdecide.optimize_held_out`) always returns a certified
policy, but with too few rows it shrinks its candidate towards the best constant rule
(``alpha`` < 1) and keeps little of what the candidate could gain. The rows at which the
guarantee reaches the epsilon asked are those at which the candidate itself is
certified, alpha = 1. :func:`rows_needed` draws data sets of growing sizes from the
maximum-likelihood world of the data at hand (treated as the truth), runs the route on
each, and reports the smallest size at which alpha = 1 in at least half of them, with the
value the route keeps there (true in the fitted world, and certified).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from fairdecide._common.tables import result_table
from fairdecide._common.validation import as_int, as_real, check_instance, check_random_state
from fairdecide.data.logged import LoggedData
from fairdecide.datasets.synthetic import sample_logged_data
from fairdecide.exceptions import PriceWarning
from fairdecide.optimize.held_out import optimize_held_out
from fairdecide.problem import DecisionProblem
from fairdecide.worlds.table import expected_utility
from fairdecide.worlds.world import TabularWorld

__all__ = ["RowsNeeded", "rows_needed"]

#: Halvings of the last doubling of the grid (in log scale): the estimate's resolution
#: is a factor 2 ** (1 / 2 ** REFINE) of rows.
REFINE = 3


@dataclass(frozen=True)
class RowsNeeded:
    """The rows a held-out guarantee needs, estimated by simulation (:func:`rows_needed`).

    Attributes
    ----------
    rows : int or None
        The smallest number of rows at which alpha = 1 (the candidate certified at
        epsilon) in at least half of the simulated data sets; None when no size tried
        reached it (``table`` shows how far each got).
    value, certified : float or None
        At ``rows``: the route's mean true value in the fitted world, and its mean
        certified value.
    utility : str
        The utility by what it is.
    table : DataFrame
        One row per size simulated: ``rows``, ``share_alpha_1`` (of the simulations),
        ``mean_alpha``, ``value`` and ``certified`` (means).
    n_sims : int
        Simulated data sets per size.
    """

    rows: int | None
    value: float | None
    certified: float | None
    utility: str
    table: Any
    n_sims: int

    def sentence(self) -> str:
        """The estimate in words."""
        if self.rows is None:
            return (f"Up to {int(self.table['rows'].max()):,} rows the candidate was not "
                    f"certified at epsilon in half of {self.n_sims} simulated data sets (the "
                    "route shrinks it towards the constant rule): collect far more data, or "
                    "ask a larger epsilon or delta.")
        return (f"With about {self.rows:,} rows the candidate would be certified at epsilon "
                f"without shrinking (in half of {self.n_sims} data sets simulated from the "
                f"fitted world), keeping a {self.utility} of about {self.value:.4g} "
                f"(certified {self.certified:.4g}).")


def rows_needed(
    problem: DecisionProblem,
    data: LoggedData,
    criteria: Any,
    *,
    epsilon: float | list[float],
    delta: float = 0.1,
    safety_fraction: float = 0.6,
    group_blind: bool = False,
    n_sims: int = 20,
    max_rows: int | None = None,
    world: TabularWorld | None = None,
    random_state: Any = None,
) -> RowsNeeded:
    """Estimate the rows at which :func:`~fairdecide.optimize_held_out` certifies its
    candidate at ``epsilon`` without shrinking it, and the value it keeps there, by
    simulation from the maximum-likelihood world of ``data``.

    Sizes data.n / 4, data.n / 2, data.n, 2 data.n, ... up to ``max_rows`` (default
    256 data.n) are tried, ``n_sims`` data sets each, until alpha = 1 in at least half;
    the last doubling is then halved ``REFINE`` times (in log scale). The estimate is as
    good as the fitted world is close to the truth; ``benchmarks/results/
    certified_routes.txt`` checks it against the same simulation from the true world.

    Parameters
    ----------
    problem, data, criteria, epsilon, delta, safety_fraction, group_blind
        As for :func:`~fairdecide.optimize_held_out`.
    n_sims : int, default=20
        Simulated data sets per size.
    max_rows : int, optional
        The largest size tried (default 256 times the data's rows).
    world : TabularWorld, optional
        The world to simulate from instead of the data's maximum-likelihood one (a
        study's truth, to check the estimate against what it predicts).
    random_state : int or RandomState, optional

    Returns
    -------
    RowsNeeded

    Examples
    --------
    >>> import fairdecide as fd
    >>> from fairdecide.datasets import make_tabular_problem, sample_logged_data
    >>> problem, truth = make_tabular_problem(6, 2, random_state=0)
    >>> data = sample_logged_data(problem, truth, 2000, random_state=0)
    >>> need = fd.rows_needed(problem, data, fd.Independence(measure="max"),
    ...                       epsilon=0.05, n_sims=4, random_state=0)
    >>> bool(need.rows is None or need.rows > 0), list(need.table.columns)
    (True, ['rows', 'share_alpha_1', 'mean_alpha', 'value', 'certified'])
    """
    check_instance(problem, "problem", DecisionProblem, "a DecisionProblem")
    check_instance(data, "data", LoggedData, "LoggedData (one row per individual)")
    n_sims = as_int(n_sims, "n_sims", minimum=1)
    top = 256 * data.n if max_rows is None else as_int(max_rows, "max_rows", minimum=8)
    as_real(delta, "delta", 0, 1, low_open=True, high_open=True)
    rng = check_random_state(random_state)
    if world is None:
        world = TabularWorld.from_data(data, problem)
    check_instance(world, "world", TabularWorld, "a TabularWorld")
    seen: dict[int, dict[str, float]] = {}

    def at(n: int) -> dict[str, float]:
        if n not in seen:
            alphas, values, certs = [], [], []
            for _ in range(n_sims):
                sim = sample_logged_data(problem, world, n, random_state=rng)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", PriceWarning)
                    res = optimize_held_out(problem, sim, criteria, epsilon=epsilon,
                                            delta=delta, safety_fraction=safety_fraction,
                                            group_blind=group_blind, random_state=rng)
                alphas.append(res.stats["held_out"]["alpha"])
                values.append(expected_utility(problem, world, res.policy))
                certs.append(res.guarantee.value)
            a = np.array(alphas)
            seen[n] = {"rows": n, "share_alpha_1": float(np.mean(a >= 1.0)),
                       "mean_alpha": float(a.mean()), "value": float(np.mean(values)),
                       "certified": float(np.mean(certs))}
        return seen[n]

    def enough(n: int) -> bool:
        return at(n)["share_alpha_1"] >= 0.5

    n, below, found = max(data.n // 4, 8), None, None
    while n <= top:
        if enough(n):
            found = n
            break
        below, n = n, 2 * n
    if found is not None and below is not None:
        lo, hi = below, found
        for _ in range(REFINE):
            mid = int(np.rint(np.sqrt(lo * hi)))
            if mid in (lo, hi):
                break
            lo, hi = (lo, mid) if enough(mid) else (mid, hi)
        found = hi
    table = result_table(sorted(seen.values(), key=lambda r: r["rows"]))
    if found is None:
        return RowsNeeded(None, None, None, problem.utility_name, table, n_sims)
    row = seen[found]
    return RowsNeeded(found, row["value"], row["certified"], problem.utility_name, table,
                      n_sims)
