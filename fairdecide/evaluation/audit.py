"""Fairness of logged decisions and of candidate policies, estimated from logs.

The group marginal P(z, a, y) of a policy is estimated from logged rows:

- the logged (historical) policy itself: the empirical frequencies of (z, a, y);
- a candidate policy in a prediction problem (y does not depend on a): exactly
  reweighted, P(z, a, y) = mean_i 1[z_i = z, y_i = y] pi(a | x_i), no propensities needed;
- a candidate policy in an intervention: by importance weighting,
  P(z, a, y) = mean_i 1[z_i = z, a_i = a, y_i = y] pi(a_i | x_i) / p_i.

Each criterion's deviation is then computed from the estimated marginal, with a
bootstrap interval (rows resampled). For the logged decisions, :func:`audit` adds the
posterior of each deviation under a Dirichlet model of P(z, a, y) and a Bayesian test of
the conditional independence each criterion states: the marginal likelihood of the
unrestricted model P(z, c, t) against the model P(c) P(z | c) P(t | c), both with
Dirichlet priors (the book's appendix on testing conditional independence).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy.special import gammaln

from fairdecide._validation import check_random_state
from fairdecide.criteria.base import Criterion, resolve_names
from fairdecide.criteria.conditional import ConditionalIndependence
from fairdecide.criteria.presets import Independence, Separation, Sufficiency
from fairdecide.data import BanditData, LoggedData
from fairdecide.evaluation.offpolicy import _prepare
from fairdecide.exceptions import FairdecideError
from fairdecide.problem import DecisionProblem
from fairdecide.table import DecisionTable

__all__ = ["DeviationEstimate", "audit", "estimate_deviation", "log_marginal_likelihoods"]


@dataclass(frozen=True)
class DeviationEstimate:
    """A criterion's deviation estimated from logs, with a bootstrap interval."""

    criterion: str
    value: float
    low: float
    high: float
    level: float
    draws: np.ndarray = field(repr=False)


def _marginal_counts(z: np.ndarray, a: np.ndarray, y: np.ndarray, n_z: int, n_a: int,
                     n_y: int, weights: np.ndarray | None = None) -> np.ndarray:
    M = np.zeros((n_z, n_a, n_y))
    np.add.at(M, (z, a, y), 1.0 if weights is None else weights)
    return M


def _check(data: Any, problem: DecisionProblem, need_actions: bool) -> None:
    if not isinstance(data, LoggedData | BanditData):
        raise FairdecideError(
            f"data must be LoggedData or BanditData, got {type(data).__name__}")
    if not isinstance(problem, DecisionProblem):
        raise FairdecideError(
            f"problem must be a DecisionProblem, got {type(problem).__name__}")
    if need_actions and data.a is None:
        raise FairdecideError("the logged actions (a) are needed here")
    if isinstance(data, LoggedData):
        sizes = np.bincount(data.z, minlength=data.n_z)
        if np.any(sizes == 0):
            names = [data.group_labels[i] for i in np.flatnonzero(sizes == 0)]
            raise FairdecideError(
                f"group(s) {names} have no rows: their fairness cannot be estimated; drop "
                "them from group_labels")


@dataclass(frozen=True)
class _Rows:
    """What the marginal estimate needs per row: group, logged action, outcome, the
    candidate's action probabilities and the logging propensities (or None)."""

    z: np.ndarray
    a: np.ndarray | None
    y: np.ndarray
    target: np.ndarray | None
    propensity: np.ndarray | None
    n_z: int


def _rows_of(data: Any, problem: DecisionProblem, policy: Any, logging_model: Any,
             random_state: Any) -> _Rows:
    if isinstance(data, LoggedData):
        a = data.action_codes(problem)
        y, z, n_z, prop = data.outcome_codes(problem), data.z, data.n_z, data.propensity
    else:
        a, y, z, n_z, prop = data.a, data.y, data.z, int(data.z.max()) + 1, data.propensity
    if policy is None:
        return _Rows(z, a, y, None, None, n_z)
    estimator = "ips" if problem.outcome_depends_on_action else "full"
    if problem.outcome_depends_on_action and prop is None and logging_model is None:
        raise FairdecideError(
            "estimating a candidate policy's fairness in an intervention needs the logging "
            "propensities (propensity=...) or a logging_model to estimate them")
    inputs, _, _ = _prepare(data, policy, problem, estimator, None, logging_model, 5,
                            random_state)
    return _Rows(z, a, y, inputs.target, inputs.propensity, n_z)


def _policy_marginal(rows_data: _Rows, problem: DecisionProblem, rows: np.ndarray
                     ) -> np.ndarray:
    """Estimated P(z, a, y), as sums over ``rows`` (divide by len(rows))."""
    r = rows_data
    z, y = r.z[rows], r.y[rows]
    n_z, n_a, n_y = r.n_z, problem.n_actions, problem.n_outcomes
    if r.target is None:  # the logged decisions
        return _marginal_counts(z, r.a[rows], y, n_z, n_a, n_y)
    probs = r.target[rows]
    if not problem.outcome_depends_on_action:
        M = np.zeros((n_z, n_a, n_y))
        for a in range(n_a):
            np.add.at(M[:, a, :], (z, y), probs[:, a])
        return M
    a = r.a[rows]
    w = probs[np.arange(len(rows)), a] / r.propensity[rows]
    return _marginal_counts(z, a, y, n_z, n_a, n_y, w)


def estimate_deviation(
    data: LoggedData | BanditData, problem: DecisionProblem,
    criterion: Criterion, policy: Any = None, *, n_boot: int = 500,
    level: float = 0.95, logging_model: Any = None, random_state: Any = None,
) -> DeviationEstimate:
    """A criterion's deviation for the logged decisions (``policy=None``) or for a
    candidate policy (any policy :func:`evaluate_policy` takes), with a percentile
    bootstrap interval. In interventions without known propensities, pass a
    ``logging_model`` to estimate them (cross-fitted).

    The deviation is a sum of absolute differences, so its plug-in estimate is biased
    upward in small samples (noise never cancels inside |.|), most for importance-weighted
    estimates; the bootstrap interval inherits the bias and can under-cover when the true
    deviation is small.

    Examples
    --------
    >>> from fairdecide import Independence, TabularPolicy
    >>> from fairdecide.datasets import make_bail_problem, sample_logged_data
    >>> from fairdecide.evaluation import estimate_deviation
    >>> problem, world = make_bail_problem()
    >>> data = sample_logged_data(world, problem, 3000, random_state=0)
    >>> est = estimate_deviation(data, problem, Independence(), n_boot=100, random_state=0)
    >>> est.low <= est.value <= est.high  # the logging policy ignores the group
    True
    """
    _check(data, problem, need_actions=policy is None or problem.outcome_depends_on_action)
    _check_criterion(criterion, problem)
    if not 0 < level < 1:
        raise FairdecideError(f"level must lie in (0, 1), got {level!r}")
    if int(n_boot) != n_boot or n_boot < 10:
        raise FairdecideError(f"n_boot must be an integer >= 10, got {n_boot!r}")
    rng = check_random_state(random_state)
    rows_data = _rows_of(data, problem, policy, logging_model, rng.randint(2**31 - 1))
    n = len(rows_data.z)
    M = _policy_marginal(rows_data, problem, np.arange(n)) / n
    value = _deviation(criterion, M, problem)
    draws = np.empty(int(n_boot))
    for b in range(int(n_boot)):
        rows = rng.randint(0, n, size=n)
        draws[b] = _deviation(criterion, _policy_marginal(rows_data, problem, rows) / n,
                              problem)
    lo, hi = np.quantile(draws, [(1 - level) / 2, (1 + level) / 2])
    return DeviationEstimate(criterion.label, float(value), float(lo), float(hi), level, draws)


def _deviation(criterion: Any, M: np.ndarray, problem: DecisionProblem) -> float:
    """A criterion's deviation from an estimated group marginal P(z, a, y)."""
    return criterion.deviation_from_table(DecisionTable.from_marginal(M), problem)


def _check_criterion(criterion: Any, problem: DecisionProblem) -> None:
    if not isinstance(criterion, Criterion):
        raise FairdecideError(
            f"criterion must be a fairness criterion such as Independence(), got "
            f"{type(criterion).__name__}")
    if criterion.capabilities(problem).reads != "marginal":
        raise FairdecideError(
            f"criterion {criterion.label!r} reads policy rows and unit features; from logs "
            "only criteria of the group marginal P(z, a, y) can be estimated")


def _log_ml(counts: np.ndarray, alpha: float) -> float:
    """Dirichlet-multinomial log marginal likelihood of ``counts`` (one distribution)."""
    c = np.asarray(counts, dtype=float).ravel()
    k = len(c)
    return float(gammaln(k * alpha) - gammaln(k * alpha + c.sum())
                 + np.sum(gammaln(alpha + c) - gammaln(alpha)))


def log_marginal_likelihoods(N: np.ndarray, alpha: float = 1.0) -> tuple[float, float]:
    """Log marginal likelihoods of counts N[z, c, t] under the unrestricted model P(z, c, t)
    and under conditional independence P(c) P(z | c) P(t | c), Dirichlet(alpha) priors on
    every distribution. Returns (independent, dependent)."""
    dep = _log_ml(N, alpha)
    ind = _log_ml(N.sum(axis=(0, 2)), alpha)
    for c in range(N.shape[1]):
        ind += _log_ml(N[:, c, :].sum(axis=1), alpha) + _log_ml(N[:, c, :].sum(axis=0), alpha)
    return ind, dep


def audit(
    data: LoggedData, problem: DecisionProblem,
    criteria: Sequence[ConditionalIndependence] | None = None, *, n_boot: int = 500,
    n_posterior: int = 2000, prior: float = 1.0, level: float = 0.95,
    random_state: Any = None,
) -> pd.DataFrame:
    """Fairness audit of the logged decisions.

    For each criterion (default: independence, separation and sufficiency): the
    deviation of the empirical P(z, a, y) with a bootstrap interval, the posterior mean and
    credible interval of the deviation under Dirichlet(counts + prior) on P(z, a, y), and
    a Bayesian test of the criterion's conditional independence: the log Bayes factor of
    independence against dependence and the posterior probability of independence (even
    prior odds).

    Returns
    -------
    DataFrame
        One row per criterion: ``criterion``, ``deviation``, ``low``, ``high``,
        ``posterior_mean``, ``posterior_low``, ``posterior_high``,
        ``log_bayes_factor``, ``p_independent``.

    Examples
    --------
    >>> from fairdecide.datasets import make_bail_problem, sample_logged_data
    >>> from fairdecide.evaluation import audit
    >>> problem, world = make_bail_problem()
    >>> data = sample_logged_data(world, problem, 3000, random_state=0)
    >>> table = audit(data, problem, n_boot=50, n_posterior=200, random_state=0)
    >>> list(table["criterion"])
    ['independence', 'separation', 'sufficiency']
    """
    _check(data, problem, need_actions=True)
    if not prior > 0:
        raise FairdecideError(f"prior must be > 0, got {prior!r}")
    crits = list(criteria) if criteria is not None else [Independence(), Separation(),
                                                        Sufficiency()]
    for i, crit in enumerate(crits):
        if not isinstance(crit, ConditionalIndependence):
            raise FairdecideError(
                f"criteria[{i}] must be a conditional-independence criterion (Independence, "
                "Separation, Sufficiency or ConditionalIndependence): the audit tests the "
                "independence statement each makes")
    names = resolve_names(crits)
    rng = check_random_state(random_state)
    counts = _policy_marginal(_rows_of(data, problem, None, None, None), problem,
                              np.arange(data.n))
    post = rng.dirichlet(counts.ravel() + prior, size=int(n_posterior)).reshape(
        -1, *counts.shape)
    q = [(1 - level) / 2, (1 + level) / 2]
    rows = []
    for crit, name in zip(crits, names, strict=True):
        est = estimate_deviation(data, problem, crit, n_boot=n_boot, level=level,
                                 random_state=rng.randint(2**31 - 1))
        devs = np.array([_deviation(crit, m, problem) for m in post])
        N = crit.reshape_marginal(counts)
        codes = crit._given_codes(problem)
        if codes is not None:  # test only the conditioning values the criterion compares
            N = N[:, codes, :]
        ind, dep = log_marginal_likelihoods(N, prior)
        log_bf = ind - dep
        rows.append({
            "criterion": name, "deviation": est.value, "low": est.low, "high": est.high,
            "posterior_mean": float(devs.mean()),
            "posterior_low": float(np.quantile(devs, q[0])),
            "posterior_high": float(np.quantile(devs, q[1])),
            "log_bayes_factor": float(log_bf),
            "p_independent": float(1.0 / (1.0 + np.exp(-np.clip(log_bf, -700, 700)))),
        })
    return pd.DataFrame(rows)
