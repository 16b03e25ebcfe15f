"""Group sizes and rates P(a | z), P(a | y, z), P(y | a, z) from the group table, with
intervals, small cells suppressed or private noise accounted for.

Each rate is successes / total of counts of the group table G[z, a, y]. Its interval is
:func:`fairdecide.privacy.rate_interval`: a binomial interval for exact counts, widened by
the noise variance of the successes and of the failures (the other cells of the
denominator) for a private release. Without privacy, a rate is suppressed when its
successes, its failures or its total are from 1 to ``min_cell - 1`` people (each would
disclose a small cell); suppressed entries are NaN with ``suppressed`` True.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from fairdecide.problem import DecisionProblem

__all__ = ["group_sizes", "rate_tables"]

#: The three kinds of rates, by the name the report shows.
RATES = {"P(a | z)": "decision rates by group",
         "P(a | y, z)": "decision rates by group among people with the same outcome",
         "P(y | a, z)": "outcome rates by group among people given the same decision"}


def _small(n: np.ndarray, min_cell: int) -> np.ndarray:
    return (n > 0) & (n < min_cell)


def group_sizes(G: np.ndarray, groups: tuple, release: Any, min_cell: int) -> pd.DataFrame:
    """Rows per group (noisy for a private release), their share, and suppression."""
    n = G.sum(axis=(1, 2))
    suppressed = np.zeros(len(n), bool) if release is not None else _small(n, min_cell)
    return pd.DataFrame({"group": [str(g) for g in groups],
                         "n": np.where(suppressed, np.nan, n),
                         "share": np.where(suppressed, np.nan, n / n.sum()),
                         "suppressed": suppressed})


def _one(succ: np.ndarray, tot: np.ndarray, var_s: Any, var_f: Any, level: float,
         private: bool, min_cell: int) -> tuple[np.ndarray, ...]:
    from fairdecide.privacy import rate_interval

    if private:  # raw noisy sums: the interval clips and accounts for the noise itself
        res = rate_interval(succ, tot, level, noise=(var_s, var_f))
        suppressed = ~res.defined  # nothing left to divide by
        succ, tot = np.clip(succ, 0, None), np.clip(succ, 0, None) + np.clip(tot - succ, 0,
                                                                              None)
    else:
        res = rate_interval(succ, tot, level)
        suppressed = (_small(succ, min_cell) | _small(tot - succ, min_cell)
                      | (tot < min_cell))
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
    else:
        V = np.zeros(G.shape)
    n_z, n_a, n_y = G.shape
    acts = [str(a) for a in problem.action_labels]
    outs = [str(y) for y in problem.outcome_labels]
    zs = [str(g) for g in groups]
    out = {}
    # P(a | z): successes n(z, a) = sum_y; failures: the other actions' cells.
    s, vs = G.sum(axis=2), V.sum(axis=2)
    t = np.repeat(s.sum(axis=1, keepdims=True), n_a, axis=1)
    vt = np.repeat(vs.sum(axis=1, keepdims=True), n_a, axis=1)
    cols = _one(s, t, vs, vt - vs, level, private, min_cell)
    idx = np.indices((n_z, n_a)).reshape(2, -1)
    out["P(a | z)"] = _frame({"group": [zs[i] for i in idx[0]],
                              "action": [acts[i] for i in idx[1]]}, cols)
    # P(a | y, z): successes n(z, a, y); failures: other actions, same y.
    t = np.repeat(G.sum(axis=1, keepdims=True), n_a, axis=1)
    vt = np.repeat(V.sum(axis=1, keepdims=True), n_a, axis=1)
    cols = _one(G, t, V, vt - V, level, private, min_cell)
    idx = np.indices((n_z, n_a, n_y)).reshape(3, -1)
    out["P(a | y, z)"] = _frame({"group": [zs[i] for i in idx[0]],
                                 "outcome": [outs[i] for i in idx[2]],
                                 "action": [acts[i] for i in idx[1]]}, cols)
    # P(y | a, z): successes n(z, a, y); failures: other outcomes, same a.
    t = np.repeat(G.sum(axis=2, keepdims=True), n_y, axis=2)
    vt = np.repeat(V.sum(axis=2, keepdims=True), n_y, axis=2)
    cols = _one(G, t, V, vt - V, level, private, min_cell)
    out["P(y | a, z)"] = _frame({"group": [zs[i] for i in idx[0]],
                                 "action": [acts[i] for i in idx[1]],
                                 "outcome": [outs[i] for i in idx[2]]}, cols)
    return out


def _frame(keys: dict, cols: tuple) -> pd.DataFrame:
    names = ("count", "total", "rate", "low", "high", "suppressed")
    data = dict(keys)
    data.update({k: np.asarray(c).ravel() for k, c in zip(names, cols, strict=True)})
    return pd.DataFrame(data)
