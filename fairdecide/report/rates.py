"""Group sizes and rates P(a | z), P(a | y, z), P(y | a, z) from the group table, with
intervals, small cells suppressed or private noise accounted for.

Each rate is successes / total of counts of the group table G[z, a, y]. Its interval is
:func:`fairdecide.privacy.rate_interval`: a binomial interval for exact counts, widened by
the noise variance of the successes and of the failures (the other cells of the
denominator) for a private release.

Without privacy, a group with any small count (from 1 to ``min_cell - 1`` people: a cell
n(z, a, y), or a margin n(z, a), n(z, y)) has **all** its rates suppressed in all three
tables. Hiding only the rates that rest on the small count is not enough: the group's
other published counts give it back by subtraction (n(z, a) minus the other outcomes'
n(z, a, y')). Suppressed entries are NaN with ``suppressed`` True.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from fairdecide.privacy import rate_interval
from fairdecide.problem import DecisionProblem

__all__ = ["group_sizes", "rate_tables", "small_groups"]

#: The three kinds of rates, by the name the report shows.
RATES = {"P(a | z)": "decision rates by group",
         "P(a | y, z)": "decision rates by group among people with the same outcome",
         "P(y | a, z)": "outcome rates by group among people given the same decision"}


def _small(n: np.ndarray, min_cell: int) -> np.ndarray:
    return (n > 0) & (n < min_cell)


def group_sizes(G: np.ndarray, groups: tuple, release: Any, min_cell: int) -> pd.DataFrame:
    """Rows per group, their share, and suppression. For a private release the sizes are
    the sums of the raw (unclipped) noisy cells, which are unbiased (the clipped cells
    are biased upward), clipped at 0 for display, with the noise's standard deviation
    (column ``noise_sd``, only then)."""
    if release is not None:
        raw = np.asarray(release.values, dtype=float)
        n = np.clip(raw.sum(axis=(1, 2)), 0.0, None)
        sd = np.sqrt(release.noise_variance * raw[0].size) * np.ones(len(n))
        suppressed = np.zeros(len(n), bool)
    else:
        n = G.sum(axis=(1, 2))
        sd = np.zeros(len(n))
        suppressed = _small(n, min_cell)
    share = n / n.sum() if n.sum() > 0 else np.full(len(n), 1.0 / len(n))
    table = pd.DataFrame({"group": [str(g) for g in groups],
                          "n": np.where(suppressed, np.nan, n),
                          "noise_sd": sd,
                          "share": np.where(suppressed, np.nan, share),
                          "suppressed": suppressed})
    return table if release is not None else table.drop(columns="noise_sd")


def small_groups(G: np.ndarray, min_cell: int) -> np.ndarray:
    """Groups with a small cell n(z, a, y) or margin n(z, a), n(z, y), n(z)."""
    hit = _small(G, min_cell).any(axis=(1, 2))
    hit |= _small(G.sum(axis=2), min_cell).any(axis=1)
    hit |= _small(G.sum(axis=1), min_cell).any(axis=1)
    return hit | _small(G.sum(axis=(1, 2)), min_cell)


def _one(succ: np.ndarray, tot: np.ndarray, var_s: Any, var_f: Any, level: float,
         private: bool, hidden: np.ndarray) -> tuple[np.ndarray, ...]:
    if private:  # raw noisy sums: the interval clips and accounts for the noise itself
        res = rate_interval(succ, tot, level, noise=(var_s, var_f))
        suppressed = ~res.defined  # nothing left to divide by
        succ, tot = np.clip(succ, 0, None), np.clip(succ, 0, None) + np.clip(tot - succ, 0,
                                                                              None)
    else:
        res = rate_interval(succ, tot, level)
        # hidden: per group; broadcast over the table's other axes
        suppressed = np.broadcast_to(hidden.reshape(-1, *[1] * (succ.ndim - 1)),
                                     succ.shape) | ~res.defined
    out = [np.where(suppressed, np.nan, v) for v in (succ, tot, *res)]
    return (*out, suppressed)


def rate_tables(G: np.ndarray, problem: DecisionProblem, groups: tuple, level: float,
                release: Any, min_cell: int) -> dict[str, pd.DataFrame]:
    """The three rate tables, tidy: one row per group and value (and condition).

    ``G`` is the group table of exact counts, or None with a private ``release`` of it
    (its raw noisy cells are summed and the noise variances with them). Columns:
    ``group``, the condition (``outcome`` for P(a | y, z), ``action`` for P(y | a, z)),
    the value (``action`` or ``outcome``), ``count``, ``total``, ``rate``, ``low``,
    ``high``, ``suppressed``.
    """
    private = release is not None
    if private:
        G = np.asarray(release.values, dtype=float)
        V = np.broadcast_to(np.asarray(release.noise_variance, dtype=float), G.shape)
        hidden = np.zeros(G.shape[0], bool)
    else:
        V = np.zeros(G.shape)
        hidden = small_groups(G, min_cell)
    n_z, n_a, n_y = G.shape
    acts = [str(a) for a in problem.action_labels]
    outs = [str(y) for y in problem.outcome_labels]
    zs = [str(g) for g in groups]
    out = {}
    # P(a | z): successes n(z, a) = sum_y; failures: the other actions' cells.
    s, vs = G.sum(axis=2), V.sum(axis=2)
    t = np.repeat(s.sum(axis=1, keepdims=True), n_a, axis=1)
    vt = np.repeat(vs.sum(axis=1, keepdims=True), n_a, axis=1)
    cols = _one(s, t, vs, vt - vs, level, private, hidden)
    idx = np.indices((n_z, n_a)).reshape(2, -1)
    out["P(a | z)"] = _frame({"group": [zs[i] for i in idx[0]],
                              "action": [acts[i] for i in idx[1]]}, cols)
    # P(a | y, z): successes n(z, a, y); failures: other actions, same y.
    t = np.repeat(G.sum(axis=1, keepdims=True), n_a, axis=1)
    vt = np.repeat(V.sum(axis=1, keepdims=True), n_a, axis=1)
    cols = _one(G, t, V, vt - V, level, private, hidden)
    idx = np.indices((n_z, n_a, n_y)).reshape(3, -1)
    out["P(a | y, z)"] = _frame({"group": [zs[i] for i in idx[0]],
                                 "outcome": [outs[i] for i in idx[2]],
                                 "action": [acts[i] for i in idx[1]]}, cols)
    # P(y | a, z): successes n(z, a, y); failures: other outcomes, same a.
    t = np.repeat(G.sum(axis=2, keepdims=True), n_y, axis=2)
    vt = np.repeat(V.sum(axis=2, keepdims=True), n_y, axis=2)
    cols = _one(G, t, V, vt - V, level, private, hidden)
    out["P(y | a, z)"] = _frame({"group": [zs[i] for i in idx[0]],
                                 "action": [acts[i] for i in idx[1]],
                                 "outcome": [outs[i] for i in idx[2]]}, cols)
    return out


def _frame(keys: dict, cols: tuple) -> pd.DataFrame:
    names = ("count", "total", "rate", "low", "high", "suppressed")
    data = dict(keys)
    data.update({k: np.asarray(c).ravel() for k, c in zip(names, cols, strict=True)})
    return pd.DataFrame(data)
