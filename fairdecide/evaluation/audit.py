"""Fairness audit of logged decisions: deviations, their posteriors and Bayesian tests.

For the logged decisions, :func:`audit` gives each criterion's bias-corrected deviation
with its bootstrap interval (:func:`estimate_deviation`), the posterior of the deviation
under a Dirichlet model of P(z, a, y), and a Bayesian test of the conditional
independence each criterion states: the marginal likelihood of the unrestricted model
P(z, c, t) against the model P(c) P(z | c) P(t | c), both with Dirichlet priors (the
book's appendix on testing conditional independence). Everything is a function of the
counts n(z, a, y), so the audit's cost does not grow with the number of rows beyond
counting them.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy.special import gammaln

from fairdecide._common.defaults import N_DRAWS
from fairdecide._common.tables import result_table
from fairdecide._common.validation import (
    as_float_array,
    as_int,
    as_real,
    check_instance,
    check_random_state,
)
from fairdecide.criteria.base import as_criteria, resolve_names
from fairdecide.criteria.conditional import ConditionalIndependence
from fairdecide.criteria.presets import Independence, Separation, Sufficiency
from fairdecide.data.counts import LoggedCounts
from fairdecide.data.logged import BanditData, LoggedData
from fairdecide.evaluation.deviation import (
    DeviationEstimate,
    check_inputs,
    corrected_interval,
    deviation_of,
    estimate_deviation,
    marginal_atoms,
)
from fairdecide.evaluation.logged import LOGGED
from fairdecide.exceptions import FairdecideError
from fairdecide.problem import DecisionProblem

__all__ = ["DeviationEstimate", "audit", "audit_table", "estimate_deviation",
           "log_marginal_likelihoods"]


def _log_ml(counts: np.ndarray, alpha: float) -> float:
    """Dirichlet-multinomial log marginal likelihood of ``counts`` (one distribution)."""
    c = np.asarray(counts, dtype=float).ravel()
    k = len(c)
    return float(gammaln(k * alpha) - gammaln(k * alpha + c.sum())
                 + np.sum(gammaln(alpha + c) - gammaln(alpha)))


def log_marginal_likelihoods(N: np.ndarray, alpha: float = 1.0) -> tuple[float, float]:
    """Log marginal likelihoods of counts N[z, c, t] under the unrestricted model P(z, c, t)
    and under conditional independence P(c) P(z | c) P(t | c), Dirichlet(alpha) priors on
    every distribution. Returns (independent, dependent).

    Parameters
    ----------
    N : array-like of shape (n_z, n_c, n_t)
        Finite, non-negative counts.
    alpha : float, default=1.0
        Dirichlet concentration, > 0.

    Examples
    --------
    >>> import numpy as np
    >>> from fairdecide.evaluation import log_marginal_likelihoods
    >>> ind, dep = log_marginal_likelihoods(np.full((2, 2, 2), 25.0))
    >>> bool(ind > dep)  # balanced counts favour independence
    True
    """
    N = as_float_array(N, "N", ndim=3)
    if np.any(N < 0):
        raise FairdecideError(f"N must hold counts >= 0, got a minimum of {N.min():.4g}")
    alpha = as_real(alpha, "alpha", low=0, low_open=True)
    dep = _log_ml(N, alpha)
    ind = _log_ml(N.sum(axis=(0, 2)), alpha)
    for c in range(N.shape[1]):
        ind += _log_ml(N[:, c, :].sum(axis=1), alpha) + _log_ml(N[:, c, :].sum(axis=0), alpha)
    if not (np.isfinite(ind) and np.isfinite(dep)):
        raise FairdecideError(
            f"the log marginal likelihoods are not finite ({ind!r}, {dep!r}): counts or "
            f"alpha ({alpha!r}) too extreme")
    return ind, dep


def _check_criteria(criteria: Any) -> list:
    """The audit's criteria (default: the three presets): conditional-independence
    criteria only, since the audit tests the independence statement each makes."""
    if criteria is None:
        return [Independence(), Separation(), Sufficiency()]
    crits = as_criteria(criteria, kind=ConditionalIndependence, what=(
        "a conditional-independence criterion (Independence, Separation, Sufficiency or "
        "ConditionalIndependence): the audit tests the independence statement each makes"))
    if not crits:
        raise FairdecideError("criteria is empty: give at least one criterion, or None for "
                              "independence, separation and sufficiency")
    return crits


def audit(
    data: LoggedData, problem: DecisionProblem | None = None,
    criteria: Sequence[ConditionalIndependence] | None = None, *, n_boot: int = 500,
    n_draws: int = N_DRAWS, prior: float = 1.0, level: float = 0.95,
    random_state: Any = None,
) -> pd.DataFrame:
    """Fairness audit of the logged decisions.

    For each criterion (default: independence, separation and sufficiency): the
    bias-corrected deviation of the empirical P(z, a, y) with its bootstrap interval
    (the union of the percentile and basic intervals, see :func:`estimate_deviation`: the
    plug-in is biased upward, and ``plug_in`` reports it uncorrected), the posterior
    mean and credible interval of the deviation under Dirichlet(counts + prior) on
    P(z, a, y), and a Bayesian test of the criterion's conditional independence: the log
    Bayes factor of independence against dependence and the posterior probability of
    independence (even prior odds).

    Everything is a function of the counts n(z, a, y): the bootstrap draws multinomial
    counts (exactly the row bootstrap), the posterior Dirichlet draws, so the cost does
    not grow with the number of rows beyond counting them (about a second for the
    defaults and three criteria).

    Parameters
    ----------
    data : LoggedData, LoggedCounts or BanditData
        With logged actions.
    problem : DecisionProblem, optional
        Only its labels are read (how the data's actions and outcomes are numbered): the
        audit needs no utility, and its numbers do not depend on whether the outcome
        could depend on the decision. Default: the data's own labels (the codes
        ``0 .. max`` for BanditData).
    criteria : list of ConditionalIndependence, optional
    n_boot : int, default=500
        Bootstrap replicates, >= 10.
    n_draws : int, default=1000
        Posterior draws, >= 10 (the package's one default,
        :data:`fairdecide._common.defaults.N_DRAWS`).
    prior : float, default=1.0
        Dirichlet concentration of the posterior and of the tests, > 0.
    level : float, default=0.95
        Level of the intervals, in (0, 1).

    Returns
    -------
    DataFrame
        One row per criterion: ``criterion``, ``deviation``, ``low``, ``high``,
        ``plug_in``, ``posterior_mean``, ``posterior_low``, ``posterior_high``,
        ``log_bayes_factor``, ``p_independent``.

    Examples
    --------
    >>> from fairdecide.datasets import make_bail_problem, sample_logged_data
    >>> from fairdecide.evaluation import audit
    >>> problem, world = make_bail_problem()
    >>> data = sample_logged_data(problem, world, 3000, random_state=0)
    >>> table = audit(data, problem, n_boot=50, n_draws=200, random_state=0)
    >>> list(table["criterion"])
    ['independence, TV summed vs pooled', 'separation, TV summed vs pooled',
     'sufficiency, TV summed vs pooled']

    No utility is needed: without a problem the data's labels are used, and the table is
    the same.

    >>> same = audit(data, n_boot=50, n_draws=200, random_state=0)
    >>> same.equals(table)
    True
    """
    if problem is None:
        problem = labels_problem(data)
    check_inputs(data, problem, need_actions=True)
    prior = as_real(prior, "prior", low=0, low_open=True)
    level = as_real(level, "level", 0, 1, low_open=True, high_open=True)
    n_boot = as_int(n_boot, "n_boot", minimum=10)
    n_draws = as_int(n_draws, "n_draws", minimum=10)
    crits = _check_criteria(criteria)
    rng = check_random_state(random_state)
    atoms = marginal_atoms(data, problem, LOGGED, None, None)
    counts = atoms.marginal() * atoms.n
    boot = atoms.bootstrap(n_boot, rng)
    groups = getattr(data, "group_labels", None) or tuple(range(counts.shape[0]))
    return audit_table(counts, boot, problem, crits, n_draws=n_draws, prior=prior,
                       level=level, random_state=rng, group_labels=groups)


def labels_problem(data: Any) -> DecisionProblem:
    """A DecisionProblem holding only the labels of logged data, for what reads nothing
    else: counts n(z, a, y), rates, deviations and tests of the logged decisions.

    Its utility is zeros and it is a prediction problem: neither is ever read there (no
    value is computed from it), and both are stated only because DecisionProblem needs
    them. Never evaluate a policy's value with it.

    Examples
    --------
    >>> from fairdecide import LoggedData
    >>> from fairdecide.evaluation.audit import labels_problem
    >>> data = LoggedData(x=[0, 0, 0], z=["f", "m", "m"], a=["flag", "pass", "flag"],
    ...                   y=[1, 0, 0])
    >>> labels_problem(data)
    DecisionProblem(prediction, actions=['flag', 'pass'], outcomes=[0, 1])
    """
    check_instance(data, "data", (LoggedData, LoggedCounts, BanditData),
                   "LoggedData, LoggedCounts or BanditData")
    if data.a is None:
        raise FairdecideError("the logged actions (a) are needed here")
    if isinstance(data, BanditData):  # codes in the problem's numbering
        acts, outs = range(int(data.a.max()) + 1), range(int(data.y.max()) + 1)
    else:
        acts, outs = data.action_labels, data.outcome_labels
    if len(acts) < 2:
        raise FairdecideError(
            f"data have a single logged action ({acts[0]!r}); give problem= with "
            "every action the decision maker could take, so the audit knows the others")
    return DecisionProblem(np.zeros((len(acts), len(outs))), outcome_depends_on_action=False,
                           action_labels=tuple(acts), outcome_labels=tuple(outs))


def audit_table(
    counts: np.ndarray, draws: np.ndarray, problem: DecisionProblem,
    criteria: Sequence[ConditionalIndependence] | None = None, *, n_draws: int = N_DRAWS,
    prior: float = 1.0, level: float = 0.95, random_state: Any = None,
    group_labels: Sequence[Any] | None = None,
) -> pd.DataFrame:
    """The audit of :func:`audit` from a count table n(z, a, y) and replicates of it.

    ``draws`` are replicate group marginals P*(z, a, y) (each summing to one) whose spread
    gives the deviation's interval: multinomial resamples of ``counts`` (the row
    bootstrap, as :func:`audit` draws them), or replicates of a noisy (differentially
    private) release that also carry the added noise. ``counts`` may be real-valued
    (post-processed noisy counts).

    Examples
    --------
    >>> import numpy as np
    >>> from fairdecide import DecisionProblem
    >>> from fairdecide.evaluation.audit import audit_table
    >>> counts = np.array([[[40., 10.], [10., 40.]], [[45., 5.], [20., 30.]]])
    >>> rng = np.random.RandomState(0)
    >>> draws = rng.multinomial(200, (counts / 200).ravel(), size=100).reshape(
    ...     -1, 2, 2, 2) / 200
    >>> table = audit_table(counts, draws, DecisionProblem.classification(2),
    ...                     n_draws=100, random_state=0)
    >>> list(table["criterion"])
    ['independence, TV summed vs pooled', 'separation, TV summed vs pooled',
     'sufficiency, TV summed vs pooled']
    """
    counts = as_float_array(counts, "counts", ndim=3)
    if np.any(counts < 0) or counts.sum() <= 0:
        raise FairdecideError("counts must be >= 0 with a positive total")
    draws = as_float_array(draws, "draws", ndim=4)
    if draws.shape[1:] != counts.shape or len(draws) < 10:
        raise FairdecideError(
            f"draws must have shape (>= 10, {', '.join(map(str, counts.shape))}), got "
            f"{draws.shape}")
    prior = as_real(prior, "prior", low=0, low_open=True)
    level = as_real(level, "level", 0, 1, low_open=True, high_open=True)
    n_draws = as_int(n_draws, "n_draws", minimum=10)
    crits = _check_criteria(criteria)
    names = resolve_names(crits)
    rng = check_random_state(random_state)
    n = counts.sum()
    post = rng.dirichlet(counts.ravel() + prior, size=n_draws).reshape(
        -1, *counts.shape)
    groups = tuple(group_labels) if group_labels is not None else tuple(
        range(counts.shape[0]))
    q = [(1 - level) / 2, (1 + level) / 2]
    rows = []
    for crit, name in zip(crits, names, strict=True):
        plug_in = deviation_of(crit, counts / n, problem)
        devs_boot = np.array([deviation_of(crit, m, problem) for m in draws])
        value, low, high = corrected_interval(plug_in, devs_boot, level)
        devs = np.array([deviation_of(crit, m, problem) for m in post])
        N = crit.reshape_marginal(counts)
        codes = crit._given_codes(problem)
        if codes is not None:  # test only the conditioning values the criterion compares
            N = N[:, codes, :]
        _warn_empty_strata(crit, name, N, codes, problem, groups, prior)
        ind, dep = log_marginal_likelihoods(N, prior)
        log_bf = ind - dep
        rows.append({
            "criterion": name, "deviation": value, "low": low, "high": high,
            "plug_in": plug_in,
            "posterior_mean": float(devs.mean()),
            "posterior_low": float(np.quantile(devs, q[0])),
            "posterior_high": float(np.quantile(devs, q[1])),
            "log_bayes_factor": float(log_bf),
            "p_independent": float(1.0 / (1.0 + np.exp(-np.clip(log_bf, -700, 700)))),
        })
    return result_table(rows)


def _warn_empty_strata(crit: ConditionalIndependence, name: str, N: np.ndarray,
                       codes: Any, problem: DecisionProblem, groups: tuple, prior: float
                       ) -> None:
    """Warn when a (group, conditioning value) stratum has no logged rows while the value
    occurs in other groups: its conditional is then the prior's in every posterior draw,
    so the posterior columns can disagree with the bootstrap ones."""
    if crit.given is None:
        return
    size = N.sum(axis=2)
    empty = (size == 0) & (size.sum(axis=0, keepdims=True) > 0)
    if not empty.any():
        return
    values = list(problem.outcome_labels if crit.given == "outcome" else problem.action_labels)
    if codes is not None:
        values = [values[c] for c in codes]
    g, c = np.argwhere(empty)[0]
    warnings.warn(
        f"{name}: {int(empty.sum())} (group, {crit.given}) strata have no logged rows, "
        f"e.g. group {groups[g]!r} with {crit.given} {values[c]!r}; in the posterior "
        f"columns their conditional comes from the Dirichlet({prior:g}) prior alone, so "
        "the posterior deviation can be far from the bootstrap estimate. Trust the "
        "bootstrap columns there", stacklevel=4)

