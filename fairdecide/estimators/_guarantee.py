"""The estimators' ``guarantee``: a policy fitted on part of the rows and certified on
the rest (a held-out safety test, as Seldonian algorithms do), or no policy at all.

With delta = ``guarantee``, the rows are split at random within each group into a
candidate part and a safety part (``safety_fraction`` of each group). The policy is
fitted on the candidate part at a tolerance tightened by the width the bound is predicted
to have on the safety part (below); then every criterion's deviation is bounded on the
safety rows (:func:`fairdecide.evaluation.certify_held_out`'s bound, the group weights
P(z | c) from all rows' labels). The policy is returned only if every bound is at most
epsilon; otherwise :class:`~fairdecide.NotCertifiedError`.

Why the guarantee holds (:mod:`fairdecide.evaluation.held_out`). Given the groups of all
rows (which alone decide the split),
the candidate rows and the safety rows are independent samples; the policy depends on the
candidate rows only (and on the groups' sizes), so within each (group, outcome) cell its
values pi(a | x_i, z_i) on the safety rows are independent draws with mean the
population's P(a | c, z). The group weights are shares of labels, a property of the
population alone. Every interval then holds with its probability, and all of them at
once with probability at least 1 - delta. The split is stratified by group only: one
stratified on the outcome too would fix each group's mix of outcomes in the safety part,
and its P(a | z) would no longer be a mean of independent draws.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import clone

from fairdecide._common.validation import as_real, check_random_state
from fairdecide.estimators._fitting import fit_policy, tradeoff
from fairdecide.estimators._rules import Fitted
from fairdecide.evaluation._bounds import level
from fairdecide.evaluation.certify import HeldOutGuarantee, bound_rows, certifiable
from fairdecide.evaluation.held_out import PASS_QUANTILE, predicted_widths, safety_split
from fairdecide.exceptions import FairdecideError, NotCertifiedError
from fairdecide.problem import DecisionProblem

__all__ = ["fit_guaranteed"]

def _settings(est: Any, sample_weight: Any) -> tuple[list, float, float, float]:
    crits = certifiable(est.criteria)
    delta = as_real(est.guarantee, "guarantee", 0, 1, low_open=True, high_open=True)
    fraction = as_real(est.safety_fraction, "safety_fraction", 0, 1, low_open=True,
                       high_open=True)
    trade = tradeoff(est, crits)
    if set(trade) != {"epsilon"} or isinstance(trade["epsilon"], list | tuple):
        raise FairdecideError(
            f"guarantee={est.guarantee} certifies a tolerance: give one epsilon (a number) "
            f"and leave lam and utility_slack None, got {trade}")
    epsilon = as_real(trade["epsilon"], "epsilon", low=0.0)
    if sample_weight is not None:
        raise FairdecideError(
            "sample_weight is not supported with guarantee: the safety test's bound is for "
            "rows drawn at random from the population; repeat rows instead")
    return crits, delta, fraction, epsilon


def fit_guaranteed(est: Any, problem: DecisionProblem, X: Any, z: np.ndarray,
                   n_groups: int, y: np.ndarray, sample_weight: Any
                   ) -> tuple[Fitted, HeldOutGuarantee]:
    """Fit on the candidate part at the tightened tolerance and certify on the safety
    part (module docstring); raise NotCertifiedError when the certificate fails."""
    crits, delta, fraction, epsilon = _settings(est, sample_weight)
    rng = check_random_state(est.random_state)
    cand, safe = safety_split(z, fraction, rng)
    at = level(crits, problem, n_groups, delta)
    widths = predicted_widths(crits, problem, z, y, cand, safe, n_groups, at)
    if epsilon <= max(widths):
        raise NotCertifiedError(
            f"no policy certified: epsilon = {epsilon:.4g} leaves no room for the safety "
            f"test's bound, whose width on {len(safe)} safety rows is predicted to be "
            f"{max(widths):.4g} (delta = {delta:.4g}); raise epsilon above that, give more "
            "rows, or raise guarantee (delta)", {}, max(widths))
    margin = 1.0 + PASS_QUANTILE / np.sqrt(2 * at * (1 - fraction))
    tight = [max(epsilon - w * margin, 0.0) for w in widths]
    candidate = clone(est).set_params(
        epsilon=tight[0] if len(tight) == 1 else tight, guarantee=None)
    rule = fit_policy(candidate, problem, X[cand], z[cand], n_groups, y[cand], None, None)
    # safety rows in cells the candidate rows missed: no warning (the estimator's own rows)
    rows = rule.action_proba(X[safe], z[safe] if rule.reads_group else None, warn=False)
    labels = np.zeros((n_groups, problem.n_outcomes))
    np.add.at(labels, (z, y), 1.0)
    cert = bound_rows(crits, problem, rows, y[safe], z[safe], n_groups, delta, epsilon,
                      labels=labels)
    if not cert.certified:
        worst = max(cert.bounds, key=cert.bounds.get)
        raise NotCertifiedError(
            f"no policy certified: on {cert.n_rows} safety rows the upper confidence bound "
            f"of {worst} reached {cert.bounds[worst]:.4g} > epsilon = {epsilon:.4g} (delta "
            f"= {delta:.4g}; held-out deviation {cert.deviations[worst]:.4g}); this policy "
            f"would pass with epsilon >= {cert.smallest_epsilon:.4g}. Raise epsilon, give "
            "more rows or raise guarantee (delta)", cert.bounds, cert.smallest_epsilon, cert)
    return rule, cert
