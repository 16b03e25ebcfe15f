"""The report's statistics as functions of count tables.

Every number of the audit report is a function of one of two contingency tables:

- G[z, a, y] = n(z, a, y), the group table: rates, criteria deviations, tests;
- C[x, z, a, y] = n(x, z, a, y), the cell table: the fair alternative and the
  off-policy values.

So the same code serves the exact counts and a differentially private release of them
(post-processing), and every interval comes from replicate tables: multinomial
resamples of the counts (exactly the row bootstrap) or replicate releases that also
carry the privacy noise (:func:`fairdecide.privacy.replicate_releases`).

Values of a tabular policy pi[x, z, a] from a cell table with N = sum C:

- prediction (y does not depend on a): V = sum_{x,z,y} n(x, z, y) / N
  sum_a pi(a | x, z) U(a, y), exactly the mean over rows of the policy's expected
  utility (the "full" estimator of :func:`~fairdecide.evaluation.evaluate_policy`);
- intervention: the direct method with the saturated cell model,
  V = sum_{x,z} n(x, z) / N sum_a pi(a | x, z) sum_y P(y | a, x, z) U(a, y), with
  P(y | a, x, z) the frequencies of the cell, backed off to those of (z, a) pooled over
  cells, then of a, where the cell never logged the action; the policy's probability
  mass on such unlogged (x, z, a) is reported as ``unsupported`` (weak overlap).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fairdecide.data import LoggedData
from fairdecide.problem import DecisionProblem

__all__ = ["cell_table", "group_table", "policy_marginal", "policy_value",
           "resample_tables", "unsupported_mass"]


def cell_table(data: LoggedData, problem: DecisionProblem) -> np.ndarray:
    """C[x, z, a, y] = n(x, z, a, y) in the problem's numbering of actions and outcomes."""
    C = np.zeros((data.n_x, data.n_z, problem.n_actions, problem.n_outcomes))
    np.add.at(C, (data.x, data.z, data.action_codes(problem), data.outcome_codes(problem)),
              1.0)
    return C


def group_table(data: LoggedData, problem: DecisionProblem) -> np.ndarray:
    """G[z, a, y] = n(z, a, y)."""
    return cell_table(data, problem).sum(axis=0)


def resample_tables(table: np.ndarray, n_draws: int, rng: np.random.RandomState
                    ) -> np.ndarray:
    """``n_draws`` multinomial resamples of a count table (the row bootstrap, exactly)."""
    n = round(float(table.sum()))
    p = table.ravel() / table.sum()
    return rng.multinomial(n, p, size=n_draws).reshape(n_draws, *table.shape).astype(float)


def _outcome_model(C: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """P(y | a, x, z) of the cell table with back-off, and n(x, z, a)."""
    n_xza = C.sum(axis=-1)
    pooled_z = C.sum(axis=0, keepdims=True)  # (1, z, a, y)
    pooled = C.sum(axis=(0, 1), keepdims=True)  # (1, 1, a, y)
    n_y = C.shape[-1]

    def freq(T: np.ndarray) -> np.ndarray:
        tot = T.sum(axis=-1, keepdims=True)
        return np.divide(T, tot, out=np.full(T.shape, 1.0 / n_y), where=tot > 0)

    has = lambda T: T.sum(axis=-1, keepdims=True) > 0  # noqa: E731
    p = np.where(has(C), freq(C), np.where(has(pooled_z), freq(pooled_z), freq(pooled)))
    return p, n_xza


def policy_value(C: np.ndarray, pi: np.ndarray, problem: DecisionProblem) -> float:
    """The value of policy ``pi[x, z, a]`` from the cell table ``C[x, z, a, y]`` (see the
    module docstring); the logged policy's value when ``pi`` is None."""
    U = problem.utility
    N = C.sum()
    if pi is None:
        return float(np.einsum("xzay,ay->", C, U) / N)
    if not problem.outcome_depends_on_action:
        n_xzy = C.sum(axis=2)
        return float(np.einsum("xzy,xza,ay->", n_xzy, pi, U) / N)
    p, _ = _outcome_model(C)
    n_xz = C.sum(axis=(2, 3))
    return float(np.einsum("xz,xza,xzay,ay->", n_xz, pi, p, U) / N)


def policy_marginal(C: np.ndarray, pi: np.ndarray, problem: DecisionProblem
                    ) -> np.ndarray:
    """The group marginal P(z, a, y) of policy ``pi`` estimated from the cell table
    (exact reweighting in prediction problems, the cell model in interventions)."""
    N = C.sum()
    if not problem.outcome_depends_on_action:
        return np.einsum("xzy,xza->zay", C.sum(axis=2), pi) / N
    p, _ = _outcome_model(C)
    return np.einsum("xz,xza,xzay->zay", C.sum(axis=(2, 3)), pi, p) / N


def unsupported_mass(C: np.ndarray, pi: np.ndarray) -> float:
    """The share of decisions, under ``pi``, of an action its cell never logged: where the
    value of an intervention rests on the back-off, not on data (0 in prediction
    problems would be the same count; it is reported for interventions)."""
    n_xza = C.sum(axis=-1)
    n_xz = n_xza.sum(axis=-1)
    return float(np.sum(n_xz[..., None] * pi * (n_xza == 0)) / C.sum())


def percentile(values: np.ndarray, level: float) -> tuple[float, float]:
    """The equal-tailed percentile interval of replicate values."""
    lo, hi = np.quantile(values, [(1 - level) / 2, (1 + level) / 2])
    return float(lo), float(hi)


def replicate_values(tables: np.ndarray, fn: Any) -> np.ndarray:
    """``fn`` applied to each replicate table."""
    return np.array([fn(T) for T in tables])
