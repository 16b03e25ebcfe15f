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

Intervals of values: the logged decisions' value, and any policy's in a prediction
problem, are linear in the table, V = sum W C / sum C, and get the delta-method interval
of :func:`linear_value` (from the raw, unclipped release when private, so neither the
estimate nor its variance is biased by clipping); a policy's value in an intervention
gets the percentile interval of the replicate tables.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fairdecide.data.counts import count_table
from fairdecide.data.logged import LoggedData
from fairdecide.problem import DecisionProblem
from fairdecide.worlds.table import marginal_utility, scenario_marginals

__all__ = [
    "cell_table",
    "group_table",
    "linear_value",
    "policy_marginal",
    "policy_value",
    "resample_tables",
    "unsupported_mass",
    "value_weights",
]


def cell_table(data: LoggedData, problem: DecisionProblem) -> np.ndarray:
    """C[x, z, a, y] = n(x, z, a, y) in the problem's numbering of actions and outcomes."""
    return count_table(data, problem)


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
    M = C.sum(axis=0) / C.sum() if pi is None else policy_marginal(C, pi, problem)
    return float(marginal_utility(M, problem.utility))


def policy_marginal(C: np.ndarray, pi: np.ndarray, problem: DecisionProblem
                    ) -> np.ndarray:
    """The group marginal P(z, a, y) of policy ``pi`` estimated from the cell table
    (exact reweighting in prediction problems, the cell model in interventions)."""
    N = C.sum()
    if not problem.outcome_depends_on_action:
        # P(x, z) P(y | x, z) is the table's P(x, z, y), given whole as the outcome part
        return scenario_marginals(np.ones((1, *C.shape[:2])), pi, C.sum(axis=2)[None] / N)[0]
    p, _ = _outcome_model(C)
    return scenario_marginals(C.sum(axis=(2, 3))[None] / N, pi, p[None])[0]


def unsupported_mass(C: np.ndarray, pi: np.ndarray) -> float:
    """The share of decisions, under ``pi``, of an action its cell never logged: where the
    value of an intervention rests on the back-off, not on data (0 in prediction
    problems would be the same count; it is reported for interventions)."""
    n_xza = C.sum(axis=-1)
    n_xz = n_xza.sum(axis=-1)
    return float(np.sum(n_xz[..., None] * pi * (n_xza == 0)) / C.sum())


def value_weights(pi: np.ndarray | None, problem: DecisionProblem, shape: tuple
                  ) -> np.ndarray | None:
    """W[x, z, a, y] with V = sum W C / sum C, when the value is linear in the cell table:
    U(a, y) for the logged decisions, sum_a' pi(a' | x, z) U(a', y) for a policy in a
    prediction problem; None for a policy in an intervention (the cell model is not)."""
    U = problem.utility
    if pi is None:
        return np.broadcast_to(U, shape)
    if problem.outcome_depends_on_action:
        return None
    return np.broadcast_to(np.einsum("xza,ay->xzy", pi, U)[:, :, None, :], shape)


def linear_value(W: np.ndarray, C: np.ndarray, noise_var: float, level: float
                 ) -> tuple[float, float, float]:
    """V = sum W C / sum C and its normal interval from a cell table of exact counts
    (``noise_var`` 0) or raw noisy counts (each cell's noise variance ``noise_var``):

        Var(V) = sum_c (n_c + noise_var) (W_c - V)^2 / N^2

    (the delta method: rows resampled, plus independent noise in every cell; n_c is the
    clipped count). With exact counts this is the usual interval of a mean over rows,
    with the sample variance (N (N - 1) in the denominator), as ``evaluate_policy``
    computes it: the logged decisions' interval is the same number through both."""
    from scipy.stats import norm

    N = float(C.sum())
    value = float((W * C).sum() / N)
    exact = noise_var == 0 and N > 1
    var = float(((np.clip(C, 0, None) + noise_var) * (W - value) ** 2).sum()) / (
        N * (N - 1) if exact else N ** 2)
    half = norm.ppf((1 + level) / 2) * np.sqrt(var)
    return value, value - half, value + half


def replicate_values(tables: np.ndarray, fn: Any) -> np.ndarray:
    """``fn`` applied to each replicate table."""
    return np.array([fn(T) for T in tables])
