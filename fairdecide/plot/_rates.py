"""The arithmetic of group rates: conditionals of a group marginal, its bootstrap, the
tidy table.

Every rate :class:`~fairdecide.plot.GroupRatesDisplay` shows is a conditional of one
array, the group marginal

    M[z, a, y] = sum_{i in group z} pi(a | x_i) [y_i = y]      (rows of a sample)
    M[z, a, y] = P(z, a, y)                                   (a decision table)

so the sample estimates and the exact rates of an optimised policy share one code path:

    P(a | z)    = sum_y M[z, a, y] / sum_{a, y} M[z, a, y]
    P(a | y, z) = M[z, a, y] / sum_a M[z, a, y]
    P(y | a, z) = M[z, a, y] / sum_y M[z, a, y]
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from fairdecide._common.tables import result_table
from fairdecide.worlds.table import row_counts

KINDS = ("action", "action_given_outcome", "outcome_given_action")
YLABELS = {"action": "P(a | z)", "action_given_outcome": "P(a | y, z)",
           "outcome_given_action": "P(y | a, z)"}


def conditional_rates(M: np.ndarray, kind: str, tol: float = 0.0
                      ) -> tuple[np.ndarray, np.ndarray]:
    """Rates of ``kind`` and their denominators from M of shape (..., n_z, n_a, n_y).

    Returns ``(rate, denominator)`` of shape (..., n_z, n_a) for "action" and
    (..., n_z, n_a, n_y) otherwise; ``rate`` is NaN where the denominator is not above
    ``tol`` (the caller reports those cells as missing).
    """
    if kind == "action":
        num = M.sum(axis=-1)
        den = np.broadcast_to(num.sum(axis=-1, keepdims=True), num.shape)
    elif kind == "action_given_outcome":
        num = M
        den = np.broadcast_to(M.sum(axis=-2, keepdims=True), M.shape)
    else:
        num = M
        den = np.broadcast_to(M.sum(axis=-1, keepdims=True), M.shape)
    rate = np.full(num.shape, np.nan)
    np.divide(num, den, out=rate, where=den > tol)
    return rate, np.array(den)


def sample_marginal(pi: np.ndarray, y: np.ndarray, g: np.ndarray, n_groups: int,
                    n_outcomes: int) -> np.ndarray:
    """M[z, a, y] = sum over rows of group z of pi(a | x_i) [y_i = y] (sums, not means)."""
    return row_counts(g, pi, y, n_groups, n_outcomes)


def sample_counts(pi: np.ndarray, y: np.ndarray, g: np.ndarray, n_groups: int,
                  n_outcomes: int, kind: str) -> np.ndarray:
    """How many rows each rate rests on, in the shape of :func:`conditional_rates`:
    the group's rows (P(a | z)), its rows with outcome y (P(a | y, z)), or its rows with
    pi(a | x_i) > 0 (P(y | a, z))."""
    n_a = pi.shape[1]
    if kind == "action":
        return np.repeat(np.bincount(g, minlength=n_groups)[:, None], n_a, axis=1)
    if kind == "action_given_outcome":
        per = np.zeros((n_groups, n_outcomes), dtype=np.int64)
        np.add.at(per, (g, y), 1)
        return np.repeat(per[:, None, :], n_a, axis=1)
    per = np.zeros((n_groups, n_a), dtype=np.int64)
    for k in range(n_groups):
        per[k] = (pi[g == k] > 0).sum(axis=0)
    return np.repeat(per[:, :, None], n_outcomes, axis=2)


def bootstrap_marginals(pi: np.ndarray, y: np.ndarray, g: np.ndarray, n_groups: int,
                        n_outcomes: int, n_boot: int, rng: np.random.RandomState
                        ) -> np.ndarray:
    """``n_boot`` resampled group marginals, shape (n_boot, n_z, n_a, n_y).

    Each replicate draws, within every group separately, as many rows as the group has,
    uniformly with replacement: with c the number of times each of the group's rows was
    drawn, M_b[z] = c' F_z where F_z[i, (a, y)] = pi(a | x_i) [y_i = y]. Groups keep
    their sizes; outcomes within a group do not.
    """
    n_a = pi.shape[1]
    out = np.zeros((n_boot, n_groups, n_a * n_outcomes))
    onehot = np.eye(n_outcomes)[y]
    for k in range(n_groups):
        rows = np.flatnonzero(g == k)
        n_k = len(rows)
        F = (pi[rows][:, :, None] * onehot[rows][:, None, :]).reshape(n_k, -1)
        for b in range(n_boot):
            out[b, k] = np.bincount(rng.randint(0, n_k, n_k), minlength=n_k) @ F
    return out.reshape(n_boot, n_groups, n_a, n_outcomes)


def percentile_intervals(samples: np.ndarray, level: float
                         ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Percentile intervals over the first axis, skipping undefined (NaN) replicates.

    Returns ``(lower, upper, n_undefined)``; lower and upper are NaN where no replicate
    is defined.
    """
    q = [50.0 * (1.0 - level), 50.0 * (1.0 + level)]
    defined = np.isfinite(samples)
    n_undefined = (~defined).sum(axis=0)
    lower = np.full(samples.shape[1:], np.nan)
    upper = np.full(samples.shape[1:], np.nan)
    full = n_undefined == 0
    if np.any(full):
        lo, hi = np.percentile(samples[:, full], q, axis=0)
        lower[full], upper[full] = lo, hi
    for idx in zip(*np.nonzero(~full & (n_undefined < len(samples))), strict=True):
        values = samples[(slice(None), *idx)]
        lower[idx], upper[idx] = np.percentile(values[np.isfinite(values)], q)
    return lower, upper, n_undefined


def _cells(kind: str, n_a: int, n_y: int) -> list[tuple[int, int | None]]:
    """The (action, outcome) cells of one group in display order: actions within each
    outcome for P(a | y, z), outcomes within each action for P(y | a, z)."""
    if kind == "action":
        return [(a, None) for a in range(n_a)]
    if kind == "action_given_outcome":
        return [(a, y) for y in range(n_y) for a in range(n_a)]
    return [(a, y) for a in range(n_a) for y in range(n_y)]


def rates_frame(kind: str, rate: np.ndarray, lower: np.ndarray, upper: np.ndarray,
                n: np.ndarray | None, denominator: np.ndarray, empty: np.ndarray,
                group_labels: tuple, action_labels: tuple, outcome_labels: tuple,
                stacklevel: int = 4) -> pd.DataFrame:
    """The tidy table: one row per group and cell, with a warning naming the ``empty``
    cells (nothing to condition on), whose rate and interval are set to NaN.

    Columns: group, action, [outcome], rate, lower, upper, n, denominator. ``n`` is a
    nullable integer, missing (<NA>) for exact rates, which rest on no sample.
    """
    rows, missing = [], []
    for k, zl in enumerate(group_labels):
        for a, y in _cells(kind, len(action_labels), len(outcome_labels)):
            idx = (k, a) if y is None else (k, a, y)
            row = {"group": zl, "action": action_labels[a]}
            if y is not None:
                row["outcome"] = outcome_labels[y]
            gone = bool(empty[idx])
            row.update(rate=np.nan if gone else float(rate[idx]),
                       lower=np.nan if gone else float(lower[idx]),
                       upper=np.nan if gone else float(upper[idx]),
                       n=pd.NA if n is None else int(n[idx]),
                       denominator=float(denominator[idx]))
            rows.append(row)
            if gone:
                missing.append(_describe(row))
    frame = result_table(rows)
    frame["n"] = frame["n"].astype("Int64")
    if missing:
        warnings.warn(
            f"{len(missing)} rate(s) {YLABELS[kind]} have nothing to condition on "
            f"({'; '.join(missing)}): they are missing (NaN) in rates_ and plot draws "
            "'n/a' in their place", UserWarning, stacklevel=stacklevel)
    return frame


def warn_undefined_replicates(kind: str, n_undefined: np.ndarray, n_boot: int,
                              frame_cells: list[str], stacklevel: int = 4) -> None:
    """Warn when some bootstrap resamples left a cell with nothing to condition on."""
    flat = n_undefined.reshape(-1)
    hit = [f"{cell} ({int(m)} of {n_boot})" for cell, m in zip(frame_cells, flat, strict=True)
           if 0 < m]
    if hit:
        warnings.warn(
            f"in some bootstrap resamples a rate {YLABELS[kind]} had no data to condition on "
            f"and was left out of its interval: {'; '.join(hit)}. Such intervals are "
            "conditional on the cell being observed; with so few rows, read them with care",
            UserWarning, stacklevel=stacklevel)


def cell_names(kind: str, group_labels: tuple, action_labels: tuple,
               outcome_labels: tuple) -> list[str]:
    """Readable names of the cells, in the order of the arrays of :func:`conditional_rates`
    (group, action[, outcome]), for messages."""
    names = []
    for zl in group_labels:
        for al in action_labels:
            if kind == "action":
                names.append(f"group {zl!r}, action {al!r}")
                continue
            names.extend(f"group {zl!r}, action {al!r}, outcome {yl!r}"
                         for yl in outcome_labels)
    return names


def _describe(row: dict) -> str:
    parts = [f"group {row['group']!r}", f"action {row['action']!r}"]
    if "outcome" in row:
        parts.append(f"outcome {row['outcome']!r}")
    return ", ".join(parts)
